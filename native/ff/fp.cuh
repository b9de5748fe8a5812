// Fp: the BLS12-381 base field (381-bit p), 12 x 32-bit limbs, Montgomery
// form with R = 2^384 (blst's blst_fp layout).
#pragma once

#include "mont.cuh"

namespace cuzk {

struct fp_params {
    static constexpr int N = 12;
    __host__ __device__ static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe,
                                    0xf6b0f624, 0x6730d2a0, 0xf38512bf, 0x64774b84,
                                    0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
        return m[i];
    }
    __host__ __device__ static constexpr uint32_t one(int i) {
        constexpr uint32_t o[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b,
                                    0x53c758ba, 0x5f489857, 0x70525745, 0x77ce5853,
                                    0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
        return o[i];
    }
    static constexpr uint32_t m0 = 0xfffcfffd;
};

using fp_t = mont_t<fp_params>;

}  // namespace cuzk

// Fr: the BLS12-381 scalar field (255-bit r), 8 x 32-bit limbs, Montgomery
// form with R = 2^256 (blst's blst_fr / blstrs::Scalar layout).
#pragma once

#include "mont.cuh"

namespace cuzk {

struct fr_params {
    static constexpr int N = 8;
    __host__ __device__ static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                   0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
        return m[i];
    }
    // R mod r
    __host__ __device__ static constexpr uint32_t one(int i) {
        constexpr uint32_t o[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                   0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
        return o[i];
    }
    static constexpr uint32_t m0 = 0xffffffff;
};

using fr_t = mont_t<fr_params>;

// Constants of blstrs::Scalar (ff::PrimeField), Montgomery form.
struct fr_consts {
    // ROOT_OF_UNITY: a primitive 2^32-th root of unity (= 7^((r-1)/2^32)).
    __host__ __device__ static constexpr uint32_t root_of_unity(int i) {
        constexpr uint32_t w[8] = {0x5f0e466a, 0xb9b58d8c, 0x1819d7ec, 0x5b1b4c80,
                                   0x52a31e64, 0x0af53ae3, 0x19e9b27b, 0x5bf3adda};
        return w[i];
    }
    static constexpr int two_adicity = 32;
    // MULTIPLICATIVE_GENERATOR = 7, the coset generator of bellperson's H.
    __host__ __device__ static constexpr uint32_t generator(int i) {
        constexpr uint32_t g[8] = {0xfffffff1, 0x0000000e, 0x00189c0f, 0x17e363d3,
                                   0x6f8457b0, 0xff9c5787, 0x8fc5a8c4, 0x35133220};
        return g[i];
    }
};

__device__ __forceinline__ fr_t fr_root_of_unity() {
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.v[i] = fr_consts::root_of_unity(i);
    return r;
}

__device__ __forceinline__ fr_t fr_generator() {
    fr_t r;
#pragma unroll
    for (int i = 0; i < 8; i++) r.v[i] = fr_consts::generator(i);
    return r;
}

// One Fr as two 16-byte accesses (an fr_t is 32-byte aligned in every
// buffer the kernels use): load_fr, ldg_fr through the read-only cache for
// data no kernel writes while it runs, store_fr.
__device__ __forceinline__ fr_t load_fr(const fr_t *p) {
    const uint4 *q = reinterpret_cast<const uint4 *>(p);
    uint4 a = q[0], b = q[1];
    fr_t r;
    r.v[0] = a.x, r.v[1] = a.y, r.v[2] = a.z, r.v[3] = a.w;
    r.v[4] = b.x, r.v[5] = b.y, r.v[6] = b.z, r.v[7] = b.w;
    return r;
}

__device__ __forceinline__ fr_t ldg_fr(const fr_t *p) {
    const uint4 *q = reinterpret_cast<const uint4 *>(p);
    uint4 a = __ldg(q), b = __ldg(q + 1);
    fr_t r;
    r.v[0] = a.x, r.v[1] = a.y, r.v[2] = a.z, r.v[3] = a.w;
    r.v[4] = b.x, r.v[5] = b.y, r.v[6] = b.z, r.v[7] = b.w;
    return r;
}

__device__ __forceinline__ void store_fr(fr_t *p, const fr_t &v) {
    uint4 *q = reinterpret_cast<uint4 *>(p);
    q[0] = make_uint4(v.v[0], v.v[1], v.v[2], v.v[3]);
    q[1] = make_uint4(v.v[4], v.v[5], v.v[6], v.v[7]);
}

}  // namespace cuzk

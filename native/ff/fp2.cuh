// Fp2 = Fp[u] / (u^2 + 1), stored c0 then c1 (blst's blst_fp2 layout).
#pragma once

#include "fp.cuh"

namespace cuzk {

struct fp2_t {
    fp_t c0, c1;

    __device__ __forceinline__ friend fp2_t operator+(const fp2_t &a, const fp2_t &b) {
        return {a.c0 + b.c0, a.c1 + b.c1};
    }
    __device__ __forceinline__ friend fp2_t operator-(const fp2_t &a, const fp2_t &b) {
        return {a.c0 - b.c0, a.c1 - b.c1};
    }
    __device__ __forceinline__ fp2_t operator-() const { return {-c0, -c1}; }

    // Karatsuba: 3 base multiplications.
    __device__ __forceinline__ friend fp2_t operator*(const fp2_t &a, const fp2_t &b) {
        fp_t t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
        fp_t t2 = (a.c0 + a.c1) * (b.c0 + b.c1);
        return {t0 - t1, t2 - t0 - t1};
    }

    // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u
    __device__ __forceinline__ fp2_t sqr() const {
        fp_t t = c0 * c1;
        return {(c0 + c1) * (c0 - c1), t + t};
    }
};

}  // namespace cuzk

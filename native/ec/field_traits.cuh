// What the curve code needs from a field beyond +, -, *, sqr: zero/one
// constants, a zero test, a * b - c * d and an inverse, for Fp and Fp2
// alike, and which group's points have coordinates in it (G1 over Fp, G2
// over Fp2), for the tuning that differs between the two. Added here (not in native/ff/) so the field files stay as the
// NTT work left them.
#pragma once

#include "../ff/fp.cuh"
#include "../ff/fp2.cuh"

namespace cuzk {

template <class F> struct field_traits;

template <> struct field_traits<fp_t> {
    static constexpr bool G1 = true;  // BLS12-381 G1 lives over Fp
    __device__ __forceinline__ static fp_t zero() { return fp_t::zero(); }
    __device__ __forceinline__ static fp_t one() { return fp_t::one(); }
    __device__ __forceinline__ static bool is_zero(const fp_t &a) { return a.is_zero(); }
    __device__ __forceinline__ static fp_t mul_sub(const fp_t &a, const fp_t &b, const fp_t &c, const fp_t &d) {
        return fp_t::mul_sub(a, b, c, d);
    }
    // Fermat: slow, used only to make affine bench/test points.
    __device__ static fp_t inverse(const fp_t &a) { return a.inverse(); }
};

template <> struct field_traits<fp2_t> {
    static constexpr bool G1 = false;  // G2 lives over Fp2
    __device__ __forceinline__ static fp2_t zero() { return {fp_t::zero(), fp_t::zero()}; }
    __device__ __forceinline__ static fp2_t one() { return {fp_t::one(), fp_t::zero()}; }
    __device__ __forceinline__ static bool is_zero(const fp2_t &a) { return a.c0.is_zero() && a.c1.is_zero(); }
    __device__ __forceinline__ static fp2_t mul_sub(const fp2_t &a, const fp2_t &b, const fp2_t &c,
                                                    const fp2_t &d) {
        return a * b - c * d;
    }
    // 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2), since u^2 = -1.
    __device__ static fp2_t inverse(const fp2_t &a) {
        fp_t t = (a.c0.sqr() + a.c1.sqr()).inverse();
        return {a.c0 * t, -(a.c1 * t)};
    }
};

// True for G1 points' coordinate field, false for G2's.
template <class F> constexpr bool is_g1 = field_traits<F>::G1;

}  // namespace cuzk

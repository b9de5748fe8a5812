// Points of a short Weierstrass curve y^2 = x^3 + b (a = 0) over F (Fp for
// G1, Fp2 for G2) in the three forms the MSM uses:
//
//   affine_t   {x, y}: blst's blst_p1_affine / blst_p2_affine bytes (96 /
//              192), what blstrs' G1Affine / G2Affine are; the point at
//              infinity is x = y = 0, as blst stores it.
//   jacobian_t {X, Y, Z}: blst's blst_p1 / blst_p2 (x = X/Z^2, y = Y/Z^3,
//              infinity Z = 0), what blstrs' G1Projective / G2Projective are:
//              results cross the FFI in this form.
//   xyzz_t     {X, Y, ZZ, ZZZ}: x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; infinity
//              ZZ = 0. Mixed additions cost 8M + 2S with no inversion,
//              which is why buckets accumulate in it (in Fp 6M + 2S plus
//              one a b - c d, field_traits' mul_sub).
//
// Formulas: hyperelliptic.org EFD, "xyzz" for a = 0 (madd-2008-s,
// add-2008-s, dbl-2008-s-1, mdbl-2008-s-1), with the equal-point and
// opposite-point cases handled explicitly (the formulas divide by zero
// there). The point operations are calls by default: each is tens of
// field operations, and one shared copy keeps kernels small (instruction
// cache, compile time). The *_inl forms are the same code inlined, for hot
// kernels that bound their registers.
#pragma once

#include "field_traits.cuh"

namespace cuzk {

template <class F>
struct affine_t {
    F x, y;

    __device__ __forceinline__ bool is_inf() const {
        return field_traits<F>::is_zero(x) && field_traits<F>::is_zero(y);
    }
    __device__ __forceinline__ affine_t neg() const { return {x, -y}; }
};

template <class F>
struct jacobian_t {
    F X, Y, Z;
};

template <class F>
struct xyzz_t {
    F X, Y, ZZ, ZZZ;
    using T = field_traits<F>;

    // All-zero bytes are the point at infinity, so cudaMemset(0) clears.
    __device__ __forceinline__ static xyzz_t inf() { return {T::zero(), T::zero(), T::zero(), T::zero()}; }
    __device__ __forceinline__ bool is_inf() const { return T::is_zero(ZZ); }

    __device__ __forceinline__ static xyzz_t from_affine(const affine_t<F> &p) {
        if (p.is_inf()) return inf();
        return {p.x, p.y, T::one(), T::one()};
    }

    // 2 * (x, y) for an affine point (mdbl-2008-s-1).
    __device__ __forceinline__ static xyzz_t dbl_affine_inl(const affine_t<F> &p) {
        F U = p.y + p.y;
        F V = U.sqr();
        F W = U * V;
        F S = p.x * V;
        F x2 = p.x.sqr();
        F M = x2 + x2 + x2;
        F X3 = M.sqr() - (S + S);
        F Y3 = T::mul_sub(M, S - X3, W, p.y);
        return {X3, Y3, V, W};
    }

    // this = 2 * this (dbl-2008-s-1). y = 0 has no point of order 2 in the
    // prime-order groups, and would give ZZ = 0 (infinity) anyway.
    __device__ __forceinline__ void dbl_inl() {
        if (is_inf()) return;
        F U = Y + Y;
        F V = U.sqr();
        F W = U * V;
        F S = X * V;
        F x2 = X.sqr();
        F M = x2 + x2 + x2;
        F X3 = M.sqr() - (S + S);
        Y = T::mul_sub(M, S - X3, W, Y);
        X = X3;
        ZZ = ZZ * V;
        ZZZ = ZZZ * W;
    }

    // this += q for affine q (madd-2008-s).
    __device__ __forceinline__ void add_inl(const affine_t<F> &q) {
        if (q.is_inf()) return;
        if (is_inf()) {
            *this = {q.x, q.y, T::one(), T::one()};
            return;
        }
        F U2 = q.x * ZZ;
        F S2 = q.y * ZZZ;
        F P = U2 - X;
        F R = S2 - Y;
        if (T::is_zero(P)) {
            // Same x: the same point (double it) or its negation (sum is 0).
            *this = T::is_zero(R) ? dbl_affine_inl(q) : inf();
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = X * PP;
        F X3 = R.sqr() - PPP - (Q + Q);
        Y = T::mul_sub(R, Q - X3, Y, PPP);
        X = X3;
        ZZ = ZZ * PP;
        ZZZ = ZZZ * PPP;
    }

    // this += q (add-2008-s).
    __device__ __forceinline__ void add_inl(const xyzz_t &q) {
        if (q.is_inf()) return;
        if (is_inf()) {
            *this = q;
            return;
        }
        F U1 = X * q.ZZ;
        F U2 = q.X * ZZ;
        F S1 = Y * q.ZZZ;
        F S2 = q.Y * ZZZ;
        F P = U2 - U1;
        F R = S2 - S1;
        if (T::is_zero(P)) {
            if (T::is_zero(R))
                dbl_inl();
            else
                *this = inf();
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = U1 * PP;
        F X3 = R.sqr() - PPP - (Q + Q);
        Y = T::mul_sub(R, Q - X3, S1, PPP);
        X = X3;
        ZZ = ZZ * q.ZZ * PP;
        ZZZ = ZZZ * q.ZZZ * PPP;
    }

    // The same operations as calls (*_inl are the inlined bodies, for
    // kernels that bound their registers: a call's registers are its own).
    __device__ __noinline__ static xyzz_t dbl_affine(const affine_t<F> &p) { return dbl_affine_inl(p); }
    __device__ __noinline__ void dbl() { dbl_inl(); }
    __device__ __noinline__ void add(const affine_t<F> &q) { add_inl(q); }
    __device__ __noinline__ void add(const xyzz_t &q) { add_inl(q); }

    // this += q, inlined or as a call (kernels pick with a template flag).
    template <bool INL, class Q>
    __device__ __forceinline__ void add_as(const Q &q) {
        if constexpr (INL)
            add_inl(q);
        else
            add(q);
    }

    // k * this for a small k (bucket-segment offsets), double-and-add.
    __device__ __noinline__ xyzz_t mul_small(uint32_t k) const {
        xyzz_t r = inf();
        for (int bit = 31; bit >= 0; bit--) {
            r.dbl();
            if ((k >> bit) & 1) r.add(*this);
        }
        return r;
    }

    // Jacobian with Z = ZZZ: with ZZ = z^2, ZZZ = z^3, x = X/ZZ, y = Y/ZZZ,
    // X_j = x ZZZ^2 = X ZZ^2 and Y_j = y ZZZ^3 = Y ZZZ^2. No inversion.
    __device__ __forceinline__ jacobian_t<F> to_jacobian() const {
        if (is_inf()) return {T::zero(), T::zero(), T::zero()};
        return {X * ZZ.sqr(), Y * ZZZ.sqr(), ZZZ};
    }

    // One inversion of ZZ * ZZZ gives both 1/ZZ and 1/ZZZ. Slow (Fermat):
    // for generating test and bench points only.
    __device__ affine_t<F> to_affine() const {
        if (is_inf()) return {T::zero(), T::zero()};
        F t = T::inverse(ZZ * ZZZ);
        return {X * (t * ZZZ), Y * (t * ZZ)};
    }
};

}  // namespace cuzk

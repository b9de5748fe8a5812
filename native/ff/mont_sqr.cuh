// Montgomery squaring a^2 R^-1 mod m with fewer products than a * a: the
// cross products a_i a_j (i < j) once (N(N-1)/2), doubled, plus the N
// diagonal squares, then a Montgomery reduction of the 2N-word square
// (N^2, mont_redc.cuh): for N = 12, 222 products against the
// multiplication's 288.
//
// Written over the carry-chain instructions of carry_ops.cuh, so that a
// CPU test checks this exact sequence against blst
// (cuzk_test_fp_sqr_emulated).
//
// Every product is a lo/hi pair on adjacent words of one carry chain, which
// ptxas turns into one wide multiply-add (see mont.cuh). Chains never lose
// a carry: each ends in a word that is known to have room (comments below).
#pragma once

#include "mont_redc.cuh"

namespace cuzk {

// r = a^2 R^-1 mod m for a < m (N words, little-endian), P as in mont.cuh.
template <class P, class Ops>
__host__ __device__ __forceinline__ void mont_sqr_words(Ops &o, const uint32_t *a, uint32_t *r) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "even limb count");

    // 1. Cross products. a_i a_j goes to words i + j (lo) and i + j + 1 (hi)
    // of E when i + j is even, of O when odd: within one row i the pairs of
    // one array are adjacent and disjoint, so each row is two chains. A
    // chain's carry goes into the word after its top, which is either
    // untouched or holds only an earlier row's carry (<= 1): rows before i
    // reach at most word i + N, and only with such a carry.
    uint32_t E[2 * N], O[2 * N];
#pragma unroll
    for (int k = 0; k < 2 * N; k++) E[k] = O[k] = 0;
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
#pragma unroll
        for (int first = i + 1; first <= i + 2 && first < N; first++) {
            uint32_t *X = ((i + first) & 1) ? O : E;
            int p = i + first;
            X[p] = o.mad_lo_cc(a[i], a[first], X[p]);
            X[p + 1] = o.madc_hi_cc(a[i], a[first], X[p + 1]);
#pragma unroll
            for (int j = first + 2; j < N; j += 2) {
                p = i + j;
                X[p] = o.madc_lo_cc(a[i], a[j], X[p]);
                X[p + 1] = o.madc_hi_cc(a[i], a[j], X[p + 1]);
            }
            X[p + 2] = o.addc(X[p + 2], 0);  // p + 2 <= i + N + 1 <= 2N - 1
        }
    }

    // 2. Their sum, doubled (the cross sum is below a^2 / 2 < 2^(64N - 1),
    // so neither step overflows 2N words), plus the diagonal a_i^2 at word
    // 2i: T = a^2.
    uint32_t T[2 * N];
    T[0] = o.add_cc(E[0], O[0]);
#pragma unroll
    for (int k = 1; k < 2 * N - 1; k++) T[k] = o.addc_cc(E[k], O[k]);
    T[2 * N - 1] = o.addc(E[2 * N - 1], O[2 * N - 1]);
#pragma unroll
    for (int k = 2 * N - 1; k > 0; k--) T[k] = Ops::shl1(T[k - 1], T[k]);
    T[0] <<= 1;
    T[0] = o.mad_lo_cc(a[0], a[0], T[0]);
    T[1] = o.madc_hi_cc(a[0], a[0], T[1]);
#pragma unroll
    for (int i = 1; i < N - 1; i++) {
        T[2 * i] = o.madc_lo_cc(a[i], a[i], T[2 * i]);
        T[2 * i + 1] = o.madc_hi_cc(a[i], a[i], T[2 * i + 1]);
    }
    T[2 * N - 2] = o.madc_lo_cc(a[N - 1], a[N - 1], T[2 * N - 2]);
    T[2 * N - 1] = o.madc_hi(a[N - 1], a[N - 1], T[2 * N - 1]);

    // 3. Montgomery reduction of the low half: U = (T_lo + Q m) / R <= m.
    uint32_t U[N];
    mont_redc_words<P>(o, T, U);

    // 4. a^2 R^-1 = T_hi + U (mod m), with T_hi < m^2 / R < m / 8 and U <= m:
    // below 2m, so one conditional subtraction.
    uint32_t s[N];
    s[0] = o.add_cc(U[0], T[N]);
#pragma unroll
    for (int k = 1; k < N - 1; k++) s[k] = o.addc_cc(U[k], T[N + k]);
    s[N - 1] = o.addc(U[N - 1], T[2 * N - 1]);
    uint32_t d[N];
    d[0] = o.sub_cc(s[0], P::mod(0));
#pragma unroll
    for (int k = 1; k < N; k++) d[k] = o.subc_cc(s[k], P::mod(k));
    const uint32_t borrow = o.subc(0, 0);  // all ones when s < m
#pragma unroll
    for (int k = 0; k < N; k++) r[k] = borrow ? s[k] : d[k];
}

}  // namespace cuzk

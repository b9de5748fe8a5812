// Montgomery's reduction alone, u = t R^-1 mod m, over the carry-chain
// instructions of carry_ops.cuh: the second half of the Fp squaring
// (mont_sqr.cuh), and on its own the conversion of a Montgomery-form value
// to its integer (mont_t::from_mont: the MSM's scalars).
//
// Every product is a lo/hi pair on adjacent words of one carry chain, which
// ptxas turns into one wide multiply-add (see mont.cuh). Chains never lose
// a carry: each ends in a word that is known to have room.
#pragma once

#include "carry_ops.cuh"

namespace cuzk {

// Rows of Montgomery's reduction (mont_redc_words below).
// al[j], al[j + 1] += q m_j for even j, one chain; its carry out (weight N)
// is left in the carry flag for the offset array's top word.
template <class P, class Ops>
__host__ __device__ __forceinline__ void redc_aligned(Ops &o, uint32_t *al, uint32_t q) {
    constexpr int N = P::N;
    al[0] = o.mad_lo_cc(q, P::mod(0), al[0]);  // 0 by the choice of q
    al[1] = o.madc_hi_cc(q, P::mod(0), al[1]);
#pragma unroll
    for (int j = 2; j < N; j += 2) {
        al[j] = o.madc_lo_cc(q, P::mod(j), al[j]);
        al[j + 1] = o.madc_hi_cc(q, P::mod(j), al[j + 1]);
    }
}

// One row after the first: `al` is aligned; `st` was the aligned array of
// the row before, whose word 0 is 0 now and whose word k has weight k - 1.
// Its word 1 goes into al[0], and the rest becomes the offset array, moved
// down two words (pairs stay aligned) in the same chain that adds q m_j
// for odd j. Neither chain carries out of its top word: st's chain stays
// below 2^(32 N - 1) + 2^(32 (N - 2)) + 1 for m < 2^(32 N - 1), so al's
// carry out (at most 1, weight N) fits in st[N - 1].
template <class P, class Ops>
__host__ __device__ __forceinline__ void redc_row(Ops &o, uint32_t *al, uint32_t *st) {
    constexpr int N = P::N;
    const uint32_t q = (al[0] + st[1]) * P::m0;
    al[0] = o.add_cc(al[0], st[1]);
#pragma unroll
    for (int j = 0; j < N - 2; j += 2) {
        st[j] = o.madc_lo_cc(q, P::mod(j + 1), st[j + 2]);
        st[j + 1] = o.madc_hi_cc(q, P::mod(j + 1), st[j + 3]);
    }
    st[N - 2] = o.madc_lo_cc(q, P::mod(N - 1), 0);
    st[N - 1] = o.madc_hi(q, P::mod(N - 1), 0);
    redc_aligned<P>(o, al, q);
    st[N - 1] = o.addc(st[N - 1], 0);
}

// U = (t + Q m) / R, i.e. t R^-1 mod m, for t < R (N words): Montgomery's
// reduction alone. U <= m; U = m needs t to be a non-zero multiple of m
// (t = 0 gives 0), so for t < m, e.g. any reduced Montgomery value, U < m
// and u is fully reduced; the squaring reduces its own sum. Row by row
// as the multiplication does it (mont.cuh): two arrays, the aligned one
// (word k has weight k) and the offset one (word k has weight k + 1),
// whose roles swap every row, so that every product pair lands on an
// even-aligned register pair, which a wide multiply-add needs. (Shifting
// both arrays down one word per row instead made ptxas move ~240 words per
// Fp squaring to realign the pairs, a third of them as IMAD.MOV on the
// multiply pipe: G1 MSMs 5 % slower.)
// Needs m < 2^(32 N - 1) and N even.
template <class P, class Ops>
__host__ __device__ __forceinline__ void mont_redc_words(Ops &o, const uint32_t *t, uint32_t *u) {
    constexpr int N = P::N;
    static_assert(N % 2 == 0, "even limb count");
    uint32_t X[N], Y[N];  // X starts aligned (t), Y offset (empty)
#pragma unroll
    for (int k = 0; k < N; k++) X[k] = t[k];
    {
        // Row 0: Y has nothing yet, so its pairs are bare products.
        const uint32_t q = X[0] * P::m0;
        Y[0] = o.mad_lo_cc(q, P::mod(1), 0);
        Y[1] = o.madc_hi_cc(q, P::mod(1), 0);
#pragma unroll
        for (int j = 2; j < N - 2; j += 2) {
            Y[j] = o.madc_lo_cc(q, P::mod(j + 1), 0);
            Y[j + 1] = o.madc_hi_cc(q, P::mod(j + 1), 0);
        }
        Y[N - 2] = o.madc_lo_cc(q, P::mod(N - 1), 0);
        Y[N - 1] = o.madc_hi(q, P::mod(N - 1), 0);
        redc_aligned<P>(o, X, q);
        Y[N - 1] = o.addc(Y[N - 1], 0);
    }
#pragma unroll
    for (int row = 1; row < N - 1; row += 2) {  // rows 1 to N - 2
        redc_row<P>(o, Y, X);
        redc_row<P>(o, X, Y);
    }
    redc_row<P>(o, Y, X);  // row N - 1
    // After the last row (Y aligned) Y[0] is 0 and the quotient by R is
    // X[k] + Y[k + 1]: X was the offset array.
    u[0] = o.add_cc(X[0], Y[1]);
#pragma unroll
    for (int k = 1; k < N - 1; k++) u[k] = o.addc_cc(X[k], Y[k + 1]);
    u[N - 1] = o.addc(X[N - 1], 0);
}

}  // namespace cuzk

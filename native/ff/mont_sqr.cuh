// Montgomery squaring a^2 R^-1 mod m with fewer products than a * a: the
// cross products a_i a_j (i < j) once (N(N-1)/2), doubled, plus the N
// diagonal squares, then a Montgomery reduction of the 2N-word square
// (N^2): for N = 12, 222 products against the multiplication's 288.
//
// Written once over an instruction set `Ops` (the PTX carry-chain
// instructions): on the device `ptx_ops` emits them, on the host
// `emulated_ops` computes them with an explicit carry flag. The host form
// lets a CPU test check every carry of this exact instruction sequence
// against blst (cuzk_test_fp_sqr_emulated); the device form is the same
// sequence.
//
// Every product is a lo/hi pair on adjacent words of one carry chain, which
// ptxas turns into one wide multiply-add (see mont.cuh). Chains never lose
// a carry: each ends in a word that is known to have room (comments below).
#pragma once

#include <cstdint>

namespace cuzk {

// Host code only in practice; __host__ __device__ so that nvcc's device pass
// accepts mont_sqr_words instantiated with it.
#define CUZK_HD __host__ __device__ __forceinline__
struct emulated_ops {
    uint32_t cc = 0;
    CUZK_HD static uint32_t lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
    CUZK_HD static uint32_t hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
    CUZK_HD uint32_t sum(uint32_t x, uint32_t y, uint32_t cin, bool set) {
        uint64_t t = (uint64_t)x + y + cin;
        if (set) cc = (uint32_t)(t >> 32);
        return (uint32_t)t;
    }
    CUZK_HD uint32_t diff(uint32_t x, uint32_t y, uint32_t bin, bool set) {
        uint64_t t = (uint64_t)x - y - bin;
        if (set) cc = (uint32_t)(t >> 63);  // borrow
        return (uint32_t)t;
    }
    CUZK_HD uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return sum(lo(a, b), c, 0, true); }
    CUZK_HD uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return sum(lo(a, b), c, cc, true); }
    CUZK_HD uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return sum(hi(a, b), c, cc, true); }
    CUZK_HD uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { return sum(hi(a, b), c, cc, false); }
    CUZK_HD uint32_t add_cc(uint32_t a, uint32_t b) { return sum(a, b, 0, true); }
    CUZK_HD uint32_t addc_cc(uint32_t a, uint32_t b) { return sum(a, b, cc, true); }
    CUZK_HD uint32_t addc(uint32_t a, uint32_t b) { return sum(a, b, cc, false); }
    CUZK_HD uint32_t sub_cc(uint32_t a, uint32_t b) { return diff(a, b, 0, true); }
    CUZK_HD uint32_t subc_cc(uint32_t a, uint32_t b) { return diff(a, b, cc, true); }
    CUZK_HD uint32_t subc(uint32_t a, uint32_t b) { return diff(a, b, cc, false); }
    CUZK_HD static uint32_t shl1(uint32_t lo_word, uint32_t hi_word) { return (hi_word << 1) | (lo_word >> 31); }
};
#undef CUZK_HD

#ifdef __CUDACC__
struct ptx_ops {
#define CUZK_OP3(name, ins)                                                                   \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) {            \
        uint32_t d;                                                                           \
        asm volatile(ins " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));              \
        return d;                                                                             \
    }
#define CUZK_OP2(name, ins)                                                                   \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {                        \
        uint32_t d;                                                                           \
        asm volatile(ins " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));                          \
        return d;                                                                             \
    }
    CUZK_OP3(mad_lo_cc, "mad.lo.cc.u32")
    CUZK_OP3(madc_lo_cc, "madc.lo.cc.u32")
    CUZK_OP3(madc_hi_cc, "madc.hi.cc.u32")
    CUZK_OP3(madc_hi, "madc.hi.u32")
    CUZK_OP2(add_cc, "add.cc.u32")
    CUZK_OP2(addc_cc, "addc.cc.u32")
    CUZK_OP2(addc, "addc.u32")
    CUZK_OP2(sub_cc, "sub.cc.u32")
    CUZK_OP2(subc_cc, "subc.cc.u32")
    CUZK_OP2(subc, "subc.u32")
#undef CUZK_OP3
#undef CUZK_OP2
    __device__ __forceinline__ static uint32_t shl1(uint32_t lo_word, uint32_t hi_word) {
        return __funnelshift_l(lo_word, hi_word, 1);
    }
};
#endif

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

    // 3. Montgomery reduction of the low half, U = (T_lo + Q m) / R <= m,
    // kept as A + B (both arrays word k = weight k). Per row: q from the
    // true low word A[0] + B[0]; B[0] folds into A[0] and its carry starts
    // B's chain at word 1; q m_j for even j adds to A (pairs j, j + 1), for
    // odd j to B (pairs j, j + 1); then both shift down a word. U stays
    // below 2^(32 (N + 1)) before the shift and 2^(32 N) after it, so A's
    // carry fits in A[N] and B's chain ends in B[N] with no carry out.
    uint32_t A[N + 1], B[N + 1];
#pragma unroll
    for (int k = 0; k < N; k++) A[k] = T[k], B[k] = 0;
    A[N] = B[N] = 0;
#pragma unroll
    for (int row = 0; row < N; row++) {
        const uint32_t q = (A[0] + B[0]) * P::m0;
        A[0] = o.add_cc(A[0], B[0]);
        B[1] = o.madc_lo_cc(q, P::mod(1), B[1]);
        B[2] = o.madc_hi_cc(q, P::mod(1), B[2]);
#pragma unroll
        for (int j = 3; j < N - 1; j += 2) {
            B[j] = o.madc_lo_cc(q, P::mod(j), B[j]);
            B[j + 1] = o.madc_hi_cc(q, P::mod(j), B[j + 1]);
        }
        B[N - 1] = o.madc_lo_cc(q, P::mod(N - 1), B[N - 1]);
        B[N] = o.madc_hi(q, P::mod(N - 1), B[N]);
        A[0] = o.mad_lo_cc(q, P::mod(0), A[0]);  // 0 by the choice of q
        A[1] = o.madc_hi_cc(q, P::mod(0), A[1]);
#pragma unroll
        for (int j = 2; j < N; j += 2) {
            A[j] = o.madc_lo_cc(q, P::mod(j), A[j]);
            A[j + 1] = o.madc_hi_cc(q, P::mod(j), A[j + 1]);
        }
        A[N] = o.addc(A[N], 0);
#pragma unroll
        for (int k = 0; k < N; k++) A[k] = A[k + 1], B[k] = B[k + 1];
        A[N] = B[N] = 0;
    }

    // 4. a^2 R^-1 = T_hi + U (mod m), with T_hi < m^2 / R < m / 8 and U <= m:
    // below 2m, so one conditional subtraction.
    uint32_t s[N];
    s[0] = o.add_cc(A[0], B[0]);
#pragma unroll
    for (int k = 1; k < N - 1; k++) s[k] = o.addc_cc(A[k], B[k]);
    s[N - 1] = o.addc(A[N - 1], B[N - 1]);
    s[0] = o.add_cc(s[0], T[N]);
#pragma unroll
    for (int k = 1; k < N - 1; k++) s[k] = o.addc_cc(s[k], T[N + k]);
    s[N - 1] = o.addc(s[N - 1], T[2 * N - 1]);
    uint32_t d[N];
    d[0] = o.sub_cc(s[0], P::mod(0));
#pragma unroll
    for (int k = 1; k < N; k++) d[k] = o.subc_cc(s[k], P::mod(k));
    const uint32_t borrow = o.subc(0, 0);  // all ones when s < m
#pragma unroll
    for (int k = 0; k < N; k++) r[k] = borrow ? s[k] : d[k];
}

}  // namespace cuzk

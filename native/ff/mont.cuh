// Montgomery arithmetic modulo an odd prime of N 32-bit limbs, on the device.
//
// Values are fully reduced (< modulus) and stored little-endian, limb 0 least
// significant: the same bytes as blst's Montgomery form (its 64-bit limbs
// split in two), so host buffers of blst/blstrs values are used unconverted.
//
// Carry chains are inline PTX (add.cc/addc, mad.lo.cc/madc.hi.cc): the carry
// flag is not visible from C++, and without it each limb needs compares.
// Requires 2 * modulus < 2^(32 N) (true for BLS12-381's r and p), so sums of
// two reduced values never overflow N limbs.
#pragma once

#include <cstdint>

#include "mont_sqr.cuh"

namespace cuzk {

// P: static constexpr int N; __host__ __device__ static constexpr uint32_t
// mod(int i), one(i) (R mod m); static constexpr uint32_t m0 = -m^-1 mod 2^32.
// Multiplication variants (see row()): MUL_FUSED does q * m as multiply-add
// chains, MUL_SPLIT (Fr-style moduli only) as wide multiplies plus add chains.
enum mont_mul_variant { MUL_FUSED = 0, MUL_SPLIT = 1 };
#ifndef CUZK_MONT_MUL_DEFAULT
#define CUZK_MONT_MUL_DEFAULT MUL_FUSED
#endif
constexpr int MUL_DEFAULT = CUZK_MONT_MUL_DEFAULT;

template <class P>
struct mont_t {
    static constexpr int N = P::N;
    uint32_t v[N];

    __device__ __forceinline__ static mont_t zero() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }

    __device__ __forceinline__ static mont_t one() {
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }

    __device__ __forceinline__ bool is_zero() const {
        uint32_t acc = 0;
#pragma unroll
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }

    // t - m if t >= m, else t, for t < 2m.
    __device__ __forceinline__ static void reduce_once(uint32_t (&t)[N]) {
        uint32_t s[N], borrow;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(s[0]) : "r"(t[0]), "r"(P::mod(0)));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(s[i]) : "r"(t[i]), "r"(P::mod(i)));
        asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));  // 0xffffffff when t < m
#pragma unroll
        for (int i = 0; i < N; i++) t[i] = borrow ? t[i] : s[i];
    }

    __device__ __forceinline__ friend mont_t operator+(const mont_t &a, const mont_t &b) {
        mont_t r;
        asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
        for (int i = 1; i < N - 1; i++)
            asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(a.v[i]), "r"(b.v[i]));
        asm volatile("addc.u32 %0, %1, %2;" : "=r"(r.v[N - 1]) : "r"(a.v[N - 1]), "r"(b.v[N - 1]));
        reduce_once(r.v);
        return r;
    }

    __device__ __forceinline__ friend mont_t operator-(const mont_t &a, const mont_t &b) {
        mont_t r;
        uint32_t borrow;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
        for (int i = 1; i < N; i++)
            asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(a.v[i]), "r"(b.v[i]));
        asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
        // On borrow add the modulus back (masked, branch-free).
        asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(r.v[0]) : "r"(P::mod(0) & borrow));
#pragma unroll
        for (int i = 1; i < N - 1; i++)
            asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(r.v[i]) : "r"(P::mod(i) & borrow));
        asm volatile("addc.u32 %0, %0, %1;" : "+r"(r.v[N - 1]) : "r"(P::mod(N - 1) & borrow));
        return r;
    }

    __device__ __forceinline__ mont_t operator-() const { return zero() - *this; }

    __device__ __forceinline__ mont_t &operator+=(const mont_t &b) { return *this = *this + b; }
    __device__ __forceinline__ mont_t &operator-=(const mont_t &b) { return *this = *this - b; }
    __device__ __forceinline__ mont_t &operator*=(const mont_t &b) { return *this = *this * b; }

    // a * b * R^-1 mod m: CIOS (one row of a * b[i], one row of q * m, shift
    // out a limb, per limb of b) with the accumulator split in two arrays,
    // the products of even limbs of a (and m) in `even` (word j has weight
    // 2^32j) and of odd limbs in `odd` (word j has weight 2^32(j+1)). Then the
    // low and high halves of each product are adjacent words of one carry
    // chain, which ptxas turns into wide multiply-adds instead of a
    // multiply plus an add for every half. After each row the arrays swap
    // roles (the shift by one limb). Needs m < 2^(32N - 1), so the total
    // stays below 2^(32(N+1)) and neither array's chain carries out of its
    // top word (no carry is lost where a chain ends).
    __device__ __forceinline__ static void mul_pairs(uint32_t *acc, const uint32_t *a, uint32_t bi) {
#pragma unroll
        for (int j = 0; j < N; j += 2)
            asm volatile("mul.lo.u32 %0, %2, %3; mul.hi.u32 %1, %2, %3;"
                         : "=r"(acc[j]), "=r"(acc[j + 1])
                         : "r"(a[j]), "r"(bi));
    }

    // acc[j], acc[j + 1] = a[j] * bi for even j < COUNT, each product one
    // 64-bit multiply (ptxas keeps mul.lo/mul.hi of constants apart).
    template <int COUNT>
    __device__ __forceinline__ static void mul_wide_pairs(uint32_t *acc, const uint32_t *a, uint32_t bi) {
#pragma unroll
        for (int j = 0; j < COUNT; j += 2)
            asm("{.reg .b64 t; mul.wide.u32 t, %2, %3; mov.b64 {%0, %1}, t;}"
                : "=r"(acc[j]), "=r"(acc[j + 1])
                : "r"(a[j]), "r"(bi));
    }

    // acc += (a[0], a[2], ...) * bi as adjacent lo/hi pairs; leaves the carry
    // out of acc[N-1] in the carry flag.
    __device__ __forceinline__ static void mad_pairs(uint32_t *acc, const uint32_t *a, uint32_t bi) {
        asm volatile("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                     : "+r"(acc[0]), "+r"(acc[1])
                     : "r"(a[0]), "r"(bi));
#pragma unroll
        for (int j = 2; j < N; j += 2)
            asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                         : "+r"(acc[j]), "+r"(acc[j + 1])
                         : "r"(a[j]), "r"(bi));
    }

    // acc = (acc >> 2 words) + (a[0], a[2], ...) * bi + carry flag.
    __device__ __forceinline__ static void mad_pairs_shift(uint32_t *acc, const uint32_t *a, uint32_t bi) {
#pragma unroll
        for (int j = 0; j < N - 2; j += 2)
            asm volatile("madc.lo.cc.u32 %0, %2, %3, %4; madc.hi.cc.u32 %1, %2, %3, %5;"
                         : "=r"(acc[j]), "=r"(acc[j + 1])
                         : "r"(a[j]), "r"(bi), "r"(acc[j + 2]), "r"(acc[j + 3]));
        asm volatile("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;"
                     : "=r"(acc[N - 2]), "=r"(acc[N - 1])
                     : "r"(a[N - 2]), "r"(bi));
    }

    // acc += (a[2], a[4], ...) * bi as pairs into acc[2..], continuing the
    // carry chain already started on acc[0..1].
    __device__ __forceinline__ static void madc_pairs_from_2(uint32_t *acc, const uint32_t *a, uint32_t bi) {
#pragma unroll
        for (int j = 2; j < N; j += 2)
            asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;"
                         : "+r"(acc[j]), "+r"(acc[j + 1])
                         : "r"(a[j]), "r"(bi));
    }

    // Moduli whose limbs 0 and 1 are 1 and 2^32 - 1 (Fr's r) need no
    // multiplications for them: q * 1 = q, and q * (2^32 - 1) has low word
    // -q and high word q - (q != 0).
    static constexpr bool low_limbs_cheap = P::mod(0) == 1 && P::mod(1) == 0xffffffffu;

    // One row: (even, odd) += a * bi, then += q * m with q zeroing even[0].
    // `even` is the aligned array of this row; `odd` the offset one.
    // With c (mul_sub), the row adds c * di too: at that point `even` is
    // aligned and `odd` offset, as after a first row's products, so the
    // pairs go in the same way (the caller's bound keeps odd's chain from
    // carrying out of its top word).
    template <int V>
    __device__ __forceinline__ static void row(uint32_t *even, uint32_t *odd, const uint32_t *a, uint32_t bi,
                                               const uint32_t *m, bool first, const uint32_t *c = nullptr,
                                               uint32_t di = 0) {
        if (first) {
            mul_pairs(odd, a + 1, bi);
            mul_pairs(even, a, bi);
        } else {
            // odd held the previous row's aligned words shifted by one limb:
            // its word 1 now has weight 0.
            asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(even[0]) : "r"(odd[1]));
            mad_pairs_shift(odd, a + 1, bi);
            mad_pairs(even, a, bi);
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(odd[N - 1]));
        }
        if (c) {
            mad_pairs(odd, c + 1, di);
            mad_pairs(even, c, di);
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(odd[N - 1]));
        }
        const uint32_t q = even[0] * P::m0;
        if constexpr (low_limbs_cheap && V == MUL_SPLIT) {
            // The q * m products as separate wide multiplies (one IMAD.WIDE
            // each), then plain add chains: ptxas never fuses q * m's
            // mad.lo/madc.hi pairs, and the unfused form costs an IMAD plus
            // an IMAD.HI per product on the multiply pipe, where the adds
            // here go to the integer ALU pipe.
            uint32_t po[N], pe[N];
            mul_wide_pairs<N - 2>(po + 2, m + 3, q);
            mul_wide_pairs<N - 2>(pe + 2, m + 2, q);
            uint32_t neg_q, q_hi;
            asm volatile("sub.cc.u32 %0, %2, %3; subc.u32 %1, %3, %2;" : "=r"(neg_q), "=r"(q_hi) : "r"(0u), "r"(q));
            asm volatile("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, %3;"
                         : "+r"(odd[0]), "+r"(odd[1])
                         : "r"(neg_q), "r"(q_hi));
#pragma unroll
            for (int j = 2; j < N; j++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(odd[j]) : "r"(po[j]));
            asm volatile("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, %3;"
                         : "+r"(even[0]), "+r"(even[1])
                         : "r"(q), "r"(0u));
#pragma unroll
            for (int j = 2; j < N; j++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(even[j]) : "r"(pe[j]));
        } else if constexpr (low_limbs_cheap) {
            uint32_t neg_q, q_hi;
            asm volatile("sub.cc.u32 %0, %2, %3; subc.u32 %1, %3, %2;" : "=r"(neg_q), "=r"(q_hi) : "r"(0u), "r"(q));
            asm volatile("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, %3;"
                         : "+r"(odd[0]), "+r"(odd[1])
                         : "r"(neg_q), "r"(q_hi));
            madc_pairs_from_2(odd, m + 1, q);
            asm volatile("add.cc.u32 %0, %0, %2; addc.cc.u32 %1, %1, %3;"
                         : "+r"(even[0]), "+r"(even[1])
                         : "r"(q), "r"(0u));
            madc_pairs_from_2(even, m, q);
        } else {
            mad_pairs(odd, m + 1, q);
            mad_pairs(even, m, q);
        }
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(odd[N - 1]));
    }

    // Fp (12 limbs) multiplies out of line: a point addition is ~10 of
    // them, ~370 instructions each, and inlined at every site the hot loops
    // outgrow the instruction cache (ncu on the G1 accumulation: a quarter
    // of all cycles stalled on instruction fetch). One shared copy keeps
    // the loops in the cache, which matters most for G2 (Fp2 operations
    // are three Fp multiplications each). Fr (the NTT's field, 8 limbs,
    // short loops) stays inline.
    __device__ __forceinline__ friend mont_t operator*(const mont_t &a, const mont_t &b) {
        if constexpr (N == 12) return mul_outlined(a, b);
        return mul<MUL_DEFAULT>(a, b);
    }

    // Operands by value: they arrive in registers. By reference they go
    // through the stack (the caller stores them, the callee loads them).
    __device__ __noinline__ static mont_t mul_outlined(mont_t a, mont_t b) {
        return mul<MUL_DEFAULT>(a, b);
    }

    // a * b with a chosen variant (MUL_FUSED or MUL_SPLIT; same result).
    template <int V>
    __device__ __forceinline__ static mont_t mul(const mont_t &a, const mont_t &b) {
        return mul_plus<V>(a, b, nullptr, nullptr);
    }

    // a * b + c * d (c, d null: a * b) times R^-1, reduced. Each row adds
    // below (2 + [c]) m 2^32 to what the last shift left below (2 + [c]) m,
    // so the sum stays below 2^(32 (N + 1)) as the rows need when
    // 3 m < 2^(32 N); the result, (a b + c d + Q m) / R, is below
    // m (2 m / R + 1) < 2 m for m < R / 2: one conditional subtraction.
    template <int V>
    __device__ __forceinline__ static mont_t mul_plus(const mont_t &a, const mont_t &b, const uint32_t *c,
                                                      const uint32_t *d) {
        static_assert(N % 2 == 0, "even limb count");
        uint32_t m[N];
#pragma unroll
        for (int i = 0; i < N; i++) m[i] = P::mod(i);
        uint32_t even[N], odd[N];
#pragma unroll
        for (int i = 0; i < N; i += 2) {
            row<V>(even, odd, a.v, b.v[i], m, i == 0, c, d ? d[i] : 0);
            row<V>(odd, even, a.v, b.v[i + 1], m, false, c, d ? d[i + 1] : 0);
        }
        // After the last row `odd` is aligned with odd[0] == 0: the result is
        // odd / 2^32 + even, i.e. even[j] + odd[j + 1].
        mont_t r;
        asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(even[0]), "r"(odd[1]));
#pragma unroll
        for (int i = 1; i < N - 1; i++)
            asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(even[i]), "r"(odd[i + 1]));
        asm volatile("addc.u32 %0, %1, 0;" : "=r"(r.v[N - 1]) : "r"(even[N - 1]));
        reduce_once(r.v);
        return r;
    }

    // Fp squares out of line with the dedicated squaring (mont_sqr.cuh: 222
    // products instead of 288; G1 MSMs ~1 % faster, the G1 point addition
    // has 2 squarings to 8 multiplications); Fr squares as a
    // multiplication.
    __device__ __forceinline__ mont_t sqr() const {
        if constexpr (N == 12) return sqr_outlined(*this);
        return *this * *this;
    }

    __device__ __noinline__ static mont_t sqr_outlined(mont_t a) {
        mont_t r;
        ptx_ops o;
        mont_sqr_words<P>(o, a.v, r.v);
        return r;
    }

    // The integer of a Montgomery-form value, this R^-1 (< m): Montgomery's
    // reduction alone (mont_redc.cuh), half the products of a
    // multiplication by the integer 1 (the MSM converts every scalar once
    // per sort group with it).
    __device__ __forceinline__ mont_t from_mont() const {
        mont_t r;
        ptx_ops o;
        mont_redc_words<P>(o, v, r.v);
        return r;
    }

    // a * b - c * d as a * b + (m - c) * d (m - c in [1, m]) with one
    // reduction, mul_plus: for Fp 432 products where two multiplications
    // take 576. Inline: as a call its four operands (48 registers) push
    // it past the G1 accumulation's register bound, and it spills. Moduli
    // without mul_plus's headroom (Fr): two multiplications.
    __device__ __forceinline__ static mont_t mul_sub(const mont_t &a, const mont_t &b, const mont_t &c,
                                                     const mont_t &d) {
        if constexpr (P::mod(N - 1) < 0x55555555u) {  // 3 m < 2^(32 N)
            uint32_t nc[N];
            asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(nc[0]) : "r"(P::mod(0)), "r"(c.v[0]));
#pragma unroll
            for (int i = 1; i < N - 1; i++)
                asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(nc[i]) : "r"(P::mod(i)), "r"(c.v[i]));
            asm volatile("subc.u32 %0, %1, %2;" : "=r"(nc[N - 1]) : "r"(P::mod(N - 1)), "r"(c.v[N - 1]));
            return mul_plus<MUL_FUSED>(a, b, nc, d.v);
        } else {
            return a * b - c * d;
        }
    }

    // this^e for a little-endian exponent of `limbs` 32-bit words.
    __device__ mont_t pow(const uint32_t *e, int limbs) const {
        mont_t r = one(), base = *this;
        for (int i = 0; i < limbs; i++) {
            uint32_t w = e[i];
            for (int bit = 0; bit < 32; bit++) {
                if (w & 1) r *= base;
                base = base.sqr();
                w >>= 1;
            }
        }
        return r;
    }

    __device__ mont_t pow(uint64_t e) const {
        uint32_t w[2] = {(uint32_t)e, (uint32_t)(e >> 32)};
        return pow(w, 2);
    }

    // this^-1 = this^(m - 2) (Fermat); 0 maps to 0. Slow: setup only.
    __device__ mont_t inverse() const {
        uint32_t e[N];
        uint32_t borrow = 2;
        for (int i = 0; i < N; i++) {
            uint32_t m = P::mod(i);
            e[i] = m - borrow;
            borrow = (m < borrow) ? 1 : 0;
        }
        return pow(e, N);
    }
};

}  // namespace cuzk

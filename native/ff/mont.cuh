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

namespace cuzk {

// P: static constexpr int N; __host__ __device__ static constexpr uint32_t
// mod(int i), one(i) (R mod m); static constexpr uint32_t m0 = -m^-1 mod 2^32.
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

    // a * b * R^-1 mod m: CIOS (coarsely integrated operand scanning), one
    // row of a * b[i] then one row of q * m per limb, shifting a limb out.
    __device__ __forceinline__ friend mont_t operator*(const mont_t &a, const mont_t &b) {
        uint32_t t[N + 2];
#pragma unroll
        for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
        for (int i = 0; i < N; i++) {
            const uint32_t bi = b.v[i];
            // t += a * bi: low halves into t[0..N-1], high halves into t[1..N]
            asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
            for (int j = 1; j < N; j++)
                asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a.v[j]), "r"(bi));
            asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
            asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a.v[0]), "r"(bi));
#pragma unroll
            for (int j = 1; j < N; j++)
                asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a.v[j]), "r"(bi));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));

            // t += q * m with q chosen so that t[0] becomes 0
            const uint32_t q = t[0] * P::m0;
            asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(q), "r"(P::mod(0)));
#pragma unroll
            for (int j = 1; j < N; j++)
                asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(q), "r"(P::mod(j)));
            asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
            asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(q), "r"(P::mod(0)));
#pragma unroll
            for (int j = 1; j < N; j++)
                asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(q), "r"(P::mod(j)));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));

            // divide by 2^32: t[0] is 0
#pragma unroll
            for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
            t[N + 1] = 0;
        }
        // t < 2m < 2^(32N), so t[N] == 0 here.
        mont_t r;
#pragma unroll
        for (int i = 0; i < N; i++) r.v[i] = t[i];
        reduce_once(r.v);
        return r;
    }

    __device__ __forceinline__ mont_t sqr() const { return *this * *this; }

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

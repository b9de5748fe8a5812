// Fp (BLS12-381 base field) multiplication on the FP64 pipe: a measured
// experiment, not used by the MSM or the NTT. On the H200 it runs at
// 0.72-0.74x the integer multiplication's throughput alone and 0.85-0.90x
// beside it (docs/BENCHMARKS.md, "The FP64 lever, measured"); it stays
// with its test and bench (native/ff/fp_mul_chains.cu) as the base for
// any later try.
//
// Why: the MSM accumulation and the NTT are bound by the integer multiply
// pipe (IMAD.WIDE: 4 cycles per warp instruction on sm_90), while the FP64
// pipe (DFMA: 2 cycles per warp instruction on the H100/H200) sits idle. A
// DFMA multiplies 53-bit significands exactly when the sum is arranged so
// that rounding drops only known bits, so 48-bit limbs give 96-bit limb
// products from two DFMAs (the technique of Emmart, Zheng, Weems, "Faster
// Modular Exponentiation Using Double Precision Floating Point Arithmetic
// on the GPU", ARITH 2018).
//
// Layout: 8 limbs of 48 bits (384 bits), each limb an exact integer held
// in a double, value fully reduced (< p), Montgomery form with R = 2^384,
// the same R as fp_t (mont.cuh), so a value converts between the two
// layouts bit for bit and mixed code can use either multiplication.
//
// Product split, round to nearest, for integers |x y| < 2^99:
//   t = fma(x, y, C_HI)          C_HI = 3 * 2^99: t in [2^100, 2^101), ulp 2^48
//                                t = C_HI + hi 2^48, hi = round(x y / 2^48)
//   u = fma(x, y, C_HL - t)      C_HL = C_HI + C_LO, C_LO = 3 * 2^51: exact,
//                                u = C_LO + lo, lo = x y - hi 2^48 in [-2^47, 2^47]
// and the integers come from the bit patterns: bits(t) = bits(C_HI) + hi,
// bits(u) = bits(C_LO) + lo (same exponent, the mantissa moves by hi, lo).
// Column sums add raw bit patterns in 64-bit integers (wrapping) and
// subtract the known offsets (a compile-time count of each) once; the true
// sums are far inside the int64 range.
//
// Montgomery reduction per limb i: q = (col_i * n') mod 2^48 (on the
// integer pipe), so col_i + q p_0 = 0 mod 2^48; the result
// (a b + Q p) / R < p/8 + p for a, b < p (p < R/8): one conditional
// subtraction of p reduces it fully.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace cuzk {

__host__ __device__ __forceinline__ uint64_t f64_bits(double x) {
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
#endif
}

__host__ __device__ __forceinline__ double f64_of_bits(uint64_t u) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double x;
    std::memcpy(&x, &u, 8);
    return x;
#endif
}

// Correctly rounded x y + z (round to nearest even) on both sides, so the
// host emulation computes the device's bits.
__host__ __device__ __forceinline__ double f64_fma(double x, double y, double z) {
#ifdef __CUDA_ARCH__
    return __fma_rn(x, y, z);
#else
    return std::fma(x, y, z);
#endif
}

// fma(x, y, 2^100) rounded toward zero, for integers 0 <= x, y < 2^48:
// 2^100 + floor(x y / 2^48) 2^48 (the host computes it in 128 bits).
__host__ __device__ __forceinline__ double f64_hi_rz(double x, double y) {
    constexpr double TWO100 = 1267650600228229401496703205376.0;
#ifdef __CUDA_ARCH__
    return __fma_rz(x, y, TWO100);
#else
    const unsigned __int128 p = (unsigned __int128)(uint64_t)x * (uint64_t)y;
    return TWO100 + double(uint64_t(p >> 48)) * 281474976710656.0;
#endif
}

struct fp_f64_t {
    static constexpr int N = 8;
    static constexpr uint64_t MASK = (uint64_t(1) << 48) - 1;
    static constexpr double C_HI = 1901475900342344102245054808064.0;  // 3 * 2^99
    static constexpr double C_LO = 6755399441055744.0;                 // 3 * 2^51
    static constexpr double C_HL = 1901475900342350857644495863808.0;  // C_HI + C_LO
    static constexpr double TWO52 = 4503599627370496.0;
    static constexpr uint64_t K_HI = 0x4638000000000000ull;  // bits(C_HI)
    static constexpr uint64_t K_LO = 0x4338000000000000ull;  // bits(C_LO)
    static constexpr uint64_t K_52 = 0x4330000000000000ull;  // bits(2^52)
    static constexpr uint64_t K_100 = 0x4630000000000000ull;  // bits(2^100)
    static constexpr double C_RZ = 1267650600228229401496703205376.0 + 4503599627370496.0;  // 2^100 + 2^52
    static constexpr uint64_t P0_GAP = 0x5555;  // p_0 = 2^48 - 0x5555
    static constexpr uint64_t NP = 0xfffcfffcfffdull;  // -p^-1 mod 2^48

    __host__ __device__ static constexpr uint64_t mod(int i) {
        constexpr uint64_t m[8] = {0xffffffffaaabull, 0xb153ffffb9feull, 0xf6241eabfffeull, 0x6730d2a0f6b0ull,
                                   0x4b84f38512bfull, 0x434bacd76477ull, 0xe69a4b1ba7b6ull, 0x1a0111ea397full};
        return m[i];
    }

    double v[N];

    // An integer in [0, 2^48) as a double: its bits under 2^52's exponent,
    // minus 2^52 (exact; no conversion instruction).
    __host__ __device__ __forceinline__ static double of_limb(uint64_t x) { return f64_of_bits(K_52 | x) - TWO52; }

    // From fp_t's 12 32-bit limbs (the same Montgomery value).
    __host__ __device__ __forceinline__ static fp_f64_t of_words(const uint32_t *w) {
        fp_f64_t r;
#pragma unroll
        for (int k = 0; k < N; k += 2) {
            const int j = 3 * (k / 2);  // limbs k, k+1 are words j..j+2
            const uint64_t lo = uint64_t(w[j]) | (uint64_t(w[j + 1] & 0xffff) << 32);
            const uint64_t hi = uint64_t(w[j + 1] >> 16) | (uint64_t(w[j + 2]) << 16);
            r.v[k] = of_limb(lo);
            r.v[k + 1] = of_limb(hi);
        }
        return r;
    }

    __host__ __device__ __forceinline__ void to_words(uint32_t *w) const {
#pragma unroll
        for (int k = 0; k < N; k += 2) {
            const int j = 3 * (k / 2);
            const uint64_t lo = f64_bits(v[k] + TWO52) & MASK;
            const uint64_t hi = f64_bits(v[k + 1] + TWO52) & MASK;
            w[j] = uint32_t(lo);
            w[j + 1] = uint32_t(lo >> 32) | uint32_t(hi << 16);
            w[j + 2] = uint32_t(hi >> 16);
        }
    }

    // col[k] += lo(x y) and col[k + 1] += hi(x y), as raw bit patterns
    // (their offsets were subtracted up front).
    __host__ __device__ __forceinline__ static void split_into(uint64_t *col, int k, double x, double y) {
        const double t = f64_fma(x, y, C_HI);
        const double u = f64_fma(x, y, C_HL - t);
        col[k] += f64_bits(u);
        col[k + 1] += f64_bits(t);
    }

    // Number of limb pairs (i, j) in [0, N)^2 with i + j = k.
    __host__ __device__ static constexpr int pairs(int k) { return k < 0 || k > 2 * N - 2 ? 0 : (k < N ? k + 1 : 2 * N - 1 - k); }
    // Rows i in [0, N) whose q p_j lands in column k with j in [lo, hi].
    __host__ __device__ static constexpr int rows(int k, int lo, int hi) {
        int n = 0;
        for (int i = 0; i < N; i++) n += (k - i >= lo && k - i <= hi) ? 1 : 0;
        return n;
    }

    // The raw patterns' offsets in column k: a b's splits (round to
    // nearest) and q p_j's for j >= 1 (toward zero; j = 1 low half and
    // j = 0 are integers, see mul).
    __host__ __device__ static constexpr uint64_t offset(int k) {
        return uint64_t(pairs(k)) * K_LO + uint64_t(pairs(k - 1)) * K_HI + uint64_t(rows(k, 2, N - 1)) * K_52 +
               uint64_t(rows(k - 1, 1, N - 1)) * K_100;
    }

    // a b R^-1 mod p, fully reduced.
    __host__ __device__ __forceinline__ static fp_f64_t mul(const fp_f64_t &a, const fp_f64_t &b) {
        uint64_t col[2 * N];
#pragma unroll
        for (int k = 0; k < 2 * N; k++) col[k] = 0 - offset(k);
#pragma unroll
        for (int i = 0; i < N; i++)
#pragma unroll
            for (int j = 0; j < N; j++) split_into(col, i + j, a.v[i], b.v[j]);
        // The reduction's serial path (q, the carry, the next column's low
        // half) runs on the integer pipe, idle here: q p_0 = q 2^48 -
        // q 0x5555 gives the carry in 64 bits, and q p_1's low half is a
        // 64-bit product masked. The rest of each row goes to the FP64 pipe,
        // split toward zero so its halves agree with those integers.
#pragma unroll
        for (int i = 0; i < N; i++) {
            // col[i] is complete here (row i adds nothing to it but the
            // carry below); the offsets are multiples of 2^48.
            const uint64_t c = col[i] & MASK;
            const uint64_t q = (c * NP) & MASK;
            const double qd = of_limb(q);
            col[i + 1] += uint64_t(int64_t(col[i]) >> 48) + q + uint64_t(int64_t(c - q * P0_GAP) >> 48) +
                          ((q * mod(1)) & MASK);
            col[i + 2] += f64_bits(f64_hi_rz(qd, double(mod(1))));
#pragma unroll
            for (int j = 2; j < N; j++) {
                const double t = f64_hi_rz(qd, double(mod(j)));
                const double u = f64_fma(qd, double(mod(j)), C_RZ - t);
                col[i + j] += f64_bits(u);
                col[i + j + 1] += f64_bits(t);
            }
        }
        // Result limbs col[N..2N-1] with signed carries, value below
        // (p^2 + R p) / R < 2p: subtract p unless that borrows.
        uint64_t r[N], d[N];
        int64_t borrow = 0;
#pragma unroll
        for (int k = 0; k < N; k++) {
            r[k] = col[N + k] & MASK;
            if (k + 1 < N) col[N + k + 1] += uint64_t(int64_t(col[N + k]) >> 48);
            const int64_t t = int64_t(r[k]) - int64_t(mod(k)) + borrow;
            d[k] = uint64_t(t) & MASK;
            borrow = t >> 48;  // 0 or -1
        }
#pragma unroll
        for (int k = 0; k < N; k++) r[k] = borrow ? r[k] : d[k];
        fp_f64_t out;
#pragma unroll
        for (int k = 0; k < N; k++) out.v[k] = of_limb(r[k]);
        return out;
    }
};

}  // namespace cuzk

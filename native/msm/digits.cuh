// Scalars to signed window digits, as sort keys.
//
// Scalars arrive as blstrs::Scalar (Montgomery form, a R mod r); one
// multiplication by the plain integer 1 gives the canonical a (a R * 1 *
// R^-1). With c-bit windows and nwin * c >= 256, digit w of a is
//   d = bits[w c, w c + c) + carry;  d > 2^(c-1) ? (d - 2^c, carry 1) : (d, 0)
// so |d| <= 2^(c-1): 2^(c-1) buckets per window instead of 2^c - 1, and a
// negative digit adds the negated point (free in affine: -y). The top window
// never carries out, since a < 2^255 leaves it at most c - 1 bits.
//
// Entry (w, i), for the windows w0 <= w < w1 of one sort group, is key
// (w - w0) B + |d| - 1 (B = 2^(c-1) buckets per window) and value
// i | sign << 31; zero digits get no entry.
#pragma once

#include "../ff/fr.cuh"

namespace cuzk {

struct window_plan {
    uint32_t c;        // window bits
    uint32_t nwin;     // windows, nwin * c >= 256
    uint32_t buckets;  // per window: 2^(c-1)
};

// Bits [lo, lo + c) of a 256-bit little-endian value, c <= 32.
__device__ __forceinline__ uint32_t window_bits(const uint32_t (&a)[8], uint32_t lo, uint32_t c) {
    uint32_t limb = lo / 32, shift = lo % 32;
    uint64_t w = limb < 8 ? a[limb] : 0;
    if (limb + 1 < 8) w |= (uint64_t)a[limb + 1] << 32;
    return (uint32_t)(w >> shift) & (c == 32 ? 0xffffffffu : ((1u << c) - 1));
}

// The signed digits of a canonical scalar, window by window.
struct digit_walk {
    const uint32_t (&a)[8];
    uint32_t c, half, full, carry = 0;
    __device__ digit_walk(const fr_t &x, uint32_t c_) : a(x.v), c(c_), half(1u << (c_ - 1)), full(1u << c_) {}
    // Digit of window w (windows in increasing order): |d| and its sign.
    __device__ __forceinline__ uint32_t next(uint32_t w, uint32_t &sign) {
        uint32_t d = window_bits(a, w * c, c) + carry;
        sign = d > half;
        carry = sign;
        return sign ? full - d : d;  // |d - 2^c| when negative
    }
};

// Entries for the non-zero digits only, appended at positions taken from
// *count (one atomic per warp): the zero digits of 0/1-heavy witnesses
// (most of a Filecoin circuit's) never reach the sort. The order of the
// entries does not matter, since they are sorted by key next and bucket
// sums do not depend on the order of their terms. *count must be 0 first.
__global__ void scalars_to_digits(const fr_t *scalars, uint64_t m, window_plan plan, uint32_t w0, uint32_t w1,
                                  uint32_t *keys, uint32_t *vals, unsigned long long *count) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = i < m;  // every lane stays for the warp's shuffles
    fr_t plain_one = fr_t::zero();
    plain_one.v[0] = 1;
    const fr_t a = live ? scalars[i] * plain_one : fr_t::zero();  // canonical

    // Pass 1: this lane's non-zero digits; the warp's total and this lane's
    // offset in it (inclusive scan), one atomicAdd for the warp.
    uint32_t mine = 0, sign;
    {
        digit_walk dw(a, plan.c);
        for (uint32_t w = 0; w < w1; w++) {  // from 0: the carries
            const bool nz = dw.next(w, sign) != 0;
            mine += w >= w0 && nz;
        }
    }
    const uint32_t lane = threadIdx.x & 31;
    uint32_t scan = mine;
    for (uint32_t o = 1; o < 32; o <<= 1) {
        const uint32_t v = __shfl_up_sync(0xffffffffu, scan, o);
        if (lane >= o) scan += v;
    }
    const uint32_t total = __shfl_sync(0xffffffffu, scan, 31);
    unsigned long long base = 0;
    if (lane == 31 && total) base = atomicAdd(count, (unsigned long long)total);
    base = __shfl_sync(0xffffffffu, base, 31);
    if (!mine) return;

    // Pass 2: write them.
    uint64_t at = base + scan - mine;
    digit_walk dw(a, plan.c);
    for (uint32_t w = 0; w < w1; w++) {
        const uint32_t d = dw.next(w, sign);
        if (d == 0 || w < w0) continue;
        keys[at] = (w - w0) * plan.buckets + d - 1;
        vals[at] = (uint32_t)i | (sign << 31);
        at++;
    }
}

}  // namespace cuzk

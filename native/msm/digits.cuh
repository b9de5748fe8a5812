// Scalars to signed window digits, as sort keys.
//
// Scalars arrive as blstrs::Scalar (Montgomery form, a R mod r); one
// Montgomery reduction gives the canonical a (a R * R^-1). With c-bit
// windows and nwin * c >= 256, digit w of a is
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
// (most of a Filecoin circuit's) never reach the sort. A warp writes its
// entries window by window, each window's as one contiguous run (ballot
// and popcount give a lane its place), so every store instruction is
// coalesced; lane-by-lane runs wrote 32 scattered words per instruction.
// The order of the entries does not matter, since they are sorted by key
// next and bucket sums do not depend on the order of their terms. *count
// must be 0 first. Entries past `cap` (the plan's bound, never reached) are
// counted but not written; the caller checks the count.
__global__ void scalars_to_digits(const fr_t *scalars, uint64_t m, window_plan plan, uint32_t w0, uint32_t w1,
                                  uint32_t *keys, uint32_t *vals, uint64_t cap, unsigned long long *count) {
    constexpr uint32_t ALL = 0xffffffffu;
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    // Every lane stays for the warp's ballots; past m a lane has the
    // scalar 0, whose digits are all 0.
    const fr_t a = i < m ? scalars[i].from_mont() : fr_t::zero();  // canonical

    // Pass 1: the warp's non-zero digits in windows w0..w1 (walked from 0
    // for the carries), then one atomicAdd for the warp.
    uint32_t total = 0, sign;
    {
        digit_walk dw(a, plan.c);
        for (uint32_t w = 0; w < w1; w++) {
            const bool nz = dw.next(w, sign) != 0;
            if (w >= w0) total += __popc(__ballot_sync(ALL, nz));  // w is warp-uniform
        }
    }
    const uint32_t lane = threadIdx.x & 31;
    unsigned long long base = 0;
    if (lane == 0 && total) base = atomicAdd(count, (unsigned long long)total);
    base = __shfl_sync(ALL, base, 0);
    if (total == 0) return;  // the whole warp

    // Pass 2: window by window, the lanes with a digit write one run.
    const uint32_t below = (1u << lane) - 1;
    uint64_t at = base;
    digit_walk dw(a, plan.c);
    for (uint32_t w = 0; w < w1; w++) {
        const uint32_t d = dw.next(w, sign);
        if (w < w0) continue;
        const uint32_t nz = __ballot_sync(ALL, d != 0);
        const uint64_t pos = at + __popc(nz & below);
        if (d != 0 && pos < cap) {
            keys[pos] = (w - w0) * plan.buckets + d - 1;
            vals[pos] = (uint32_t)i | (sign << 31);
        }
        at += __popc(nz);
    }
}

}  // namespace cuzk

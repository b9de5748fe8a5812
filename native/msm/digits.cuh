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
// Entry (w, i) is keys[w m + i] = w B + |d| - 1 (B = 2^(c-1) buckets per
// window) and vals[w m + i] = i | sign << 31; a zero digit gets the key
// nwin B, which sorts after every bucket and is dropped.
#pragma once

#include "../ff/fr.cuh"

namespace cuzk {

struct window_plan {
    uint32_t c;        // window bits
    uint32_t nwin;     // windows, nwin * c >= 256
    uint32_t buckets;  // per window: 2^(c-1)
    uint32_t sentinel; // nwin * buckets: the key of a zero digit
    uint32_t key_bits; // bits the radix sort looks at
};

// Bits [lo, lo + c) of a 256-bit little-endian value, c <= 32.
__device__ __forceinline__ uint32_t window_bits(const uint32_t (&a)[8], uint32_t lo, uint32_t c) {
    uint32_t limb = lo / 32, shift = lo % 32;
    uint64_t w = limb < 8 ? a[limb] : 0;
    if (limb + 1 < 8) w |= (uint64_t)a[limb + 1] << 32;
    return (uint32_t)(w >> shift) & (c == 32 ? 0xffffffffu : ((1u << c) - 1));
}

__global__ void scalars_to_digits(const fr_t *scalars, uint64_t m, window_plan plan, uint32_t *keys,
                                  uint32_t *vals) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    fr_t plain_one = fr_t::zero();
    plain_one.v[0] = 1;
    fr_t a = scalars[i] * plain_one;  // canonical
    const uint32_t c = plan.c, half = 1u << (c - 1), full = 1u << c;
    uint32_t carry = 0;
    for (uint32_t w = 0; w < plan.nwin; w++) {
        uint32_t d = window_bits(a.v, w * c, c) + carry;
        uint32_t sign = 0;
        if (d > half) {
            d = full - d;  // |d - 2^c|
            sign = 1;
            carry = 1;
        } else {
            carry = 0;
        }
        uint64_t at = (uint64_t)w * m + i;
        keys[at] = d == 0 ? plan.sentinel : w * plan.buckets + d - 1;
        vals[at] = (uint32_t)i | (sign << 31);
    }
}

// count = the position of the first sentinel key in sorted keys (the number
// of non-zero digits); count must hold e beforehand.
__global__ void count_valid(const uint32_t *keys, uint64_t e, uint32_t sentinel, uint64_t *count) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= e) return;
    bool here = keys[i] == sentinel;
    bool before = i > 0 && keys[i - 1] == sentinel;
    if (here && !before) *count = i;
}

}  // namespace cuzk

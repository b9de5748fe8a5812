// The per-device NTT context: twiddle and coset tables in device memory,
// built once on the device from blstrs' constants and read-only afterwards.
//
// Any power w^e of a root of unity of order up to 2^28 (and of g, the coset
// generator) with e < 2^28 is the product of two table entries:
// lo[e & (2^14 - 1)] * hi[e >> 14]. Domains of size N = 2^L use
// omega_N = omega_2^28 ^ (2^(28 - L)), which is exactly blstrs'
// ROOT_OF_UNITY squared (32 - L) times.
#pragma once

#include "../ff/fr.cuh"

namespace cuzk {

constexpr int NTT_MAX_LOG = 28;
constexpr int TABLE_LOG = 14;                     // lo/hi split of a 28-bit exponent
constexpr uint32_t TABLE_SIZE = 1u << TABLE_LOG;
constexpr int INNER_LOG = 10;                     // largest radix-2 block done in shared memory
constexpr uint32_t INNER_SIZE = 1u << (INNER_LOG - 1);  // powers of omega_1024 below 512
constexpr int MID_LOG = 19;                       // direct table of omega_2^19's powers
constexpr uint32_t MID_SIZE = 1u << MID_LOG;

enum direction { FORWARD = 0, INVERSE = 1 };

struct ntt_tables {
    const fr_t *root_lo[2];  // omega_2^28^i        (INVERSE: omega^-i)
    const fr_t *root_hi[2];  // omega_2^28^(i<<14)
    const fr_t *inner[2];    // omega_1024^i, i < 512
    const fr_t *mid[2];      // omega_2^19^i, i < 2^19: w^e in one read when 2^(28-19) divides e
    const fr_t *coset_lo[2]; // g^i                 (INVERSE: g^-i)
    const fr_t *coset_hi[2]; // g^(i<<14)
    const fr_t *inv_n;       // inv_n[L] = 2^-L, L = 0..28
    const fr_t *z_inv;       // z_inv[L] = (g^(2^L) - 1)^-1, the vanishing polynomial's inverse on the coset
    const fr_t *z_inv_n1;    // z_inv[L] / 2^L    (the six-transform H term, see h_term.cu)
    const fr_t *z_inv_n3;    // z_inv[L] / 2^3L
};

}  // namespace cuzk

struct cuzk_ntt_context {
    int device;
    void *memory;  // one allocation holding every table
    cuzk::ntt_tables tables;
};

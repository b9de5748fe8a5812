// NTT kernels. A transform of size N = 2^L is a few passes; each pass does
// up to 10 radix-2 stages (the index bits [lo, lo + k)) on tiles of 1024
// elements held in shared memory:
//
// DIF pass (natural in, bit-reversed out; high bits first): for every column
// r < 2^lo, y[t] = x[r + t 2^lo] gets a 2^k-point DIF, then each output
// y[t] *= w_M^(r * bitrev_k(t)), M = 2^(lo + k).
// DIT pass (the transpose; low bits first): pre-multiply by the same factors,
// then a 2^k-point DIT.
// The pass with lo = 0 has no outer factors; there an element-wise scale
// (1/N, coset powers) is fused in instead.
#pragma once

#include "context.cuh"
#include "transform.cuh"

namespace cuzk {

constexpr int TILE_LOG = INNER_LOG;
constexpr uint32_t TILE = 1u << TILE_LOG;


struct pass_args {
    fr_t *x;
    int log_n, lo, k, logc;  // tile = 2^k rows x 2^logc adjacent columns
    const fr_t *root_lo, *root_hi, *inner, *mid;
    int scale;  // only when lo == 0
    const fr_t *scale_lo, *scale_hi, *scale_c;
    const fr_t *pre_mul;  // when set: x[i] *= pre_mul[i] as the pass loads x (first pass of a transform)
};

// Fr multiplication with the variant the kernels were instantiated for.
template <int MV>
__device__ __forceinline__ fr_t fmul(const fr_t &a, const fr_t &b) {
    return fr_t::mul<MV>(a, b);
}

// base^e for e < 2^28 from the lo/hi tables.
template <int MV>
__device__ __forceinline__ fr_t table_pow(const fr_t *lo, const fr_t *hi, uint32_t e) {
    const uint32_t l = e & (TABLE_SIZE - 1), h = e >> TABLE_LOG;
    if (h == 0) return ldg_fr(lo + l);
    if (l == 0) return ldg_fr(hi + h);
    return fmul<MV>(ldg_fr(lo + l), ldg_fr(hi + h));
}

__device__ __forceinline__ uint32_t bitrev(uint32_t x, int bits) { return __brev(x) >> (32 - bits); }

// Shared memory as structure of arrays (word w of element e at sm[w][e]):
// consecutive threads touch consecutive words, no bank conflicts.
__device__ __forceinline__ fr_t sm_load(const uint32_t (*sm)[TILE], uint32_t e) {
    fr_t r;
#pragma unroll
    for (int w = 0; w < 8; w++) r.v[w] = sm[w][e];
    return r;
}

__device__ __forceinline__ void sm_store(uint32_t (*sm)[TILE], uint32_t e, const fr_t &v) {
#pragma unroll
    for (int w = 0; w < 8; w++) sm[w][e] = v.v[w];
}

// The factor element (column r, row t, global index i) is multiplied by,
// or false when it is 1.
template <int MV>
__device__ __forceinline__ bool outer_factor(const pass_args &p, uint32_t r, uint32_t t, uint32_t i, fr_t &f) {
    if (p.lo > 0) {
        const uint32_t e = (r * bitrev(t, p.k)) << (NTT_MAX_LOG - p.lo - p.k);
        if (e == 0) return false;
        if (p.lo + p.k <= MID_LOG)  // e is a multiple of 2^(28 - 19): one read, no multiplication
            f = ldg_fr(p.mid + (e >> (NTT_MAX_LOG - MID_LOG)));
        else
            f = table_pow<MV>(p.root_lo, p.root_hi, e);
        return true;
    }
    switch (p.scale) {
        case SCALE_CONST: f = ldg_fr(p.scale_c); return true;
        case SCALE_COSET: f = table_pow<MV>(p.scale_lo, p.scale_hi, bitrev(i, p.log_n)); return true;
        case SCALE_COSET_CONST:
            f = fmul<MV>(table_pow<MV>(p.scale_lo, p.scale_hi, bitrev(i, p.log_n)), ldg_fr(p.scale_c));
            return true;
        default: return false;
    }
}

// Element e of a block's tile (row e >> logc, column e & cmask), with the
// pass's pre-multiplication and, for DIT, its outer twiddle applied.
template <bool DIT, int MV>
__device__ __forceinline__ fr_t load_tile_element(const pass_args &p, uint64_t base, uint64_t col0, uint32_t e,
                                                  int logc, uint32_t cmask) {
    const uint32_t t = e >> logc, c = e & cmask;
    const uint64_t i = base + ((uint64_t)t << p.lo) + c;
    fr_t v = load_fr(p.x + i);
    if (p.pre_mul) v = fmul<MV>(v, ldg_fr(p.pre_mul + i));
    if (DIT) {
        fr_t f;
        if (outer_factor<MV>(p, (uint32_t)col0 + c, t, (uint32_t)i, f)) v = fmul<MV>(v, f);
    }
    return v;
}

// The store of element e, with (DIF) the pass's outer twiddle applied.
template <bool DIT, int MV>
__device__ __forceinline__ void store_tile_element(const pass_args &p, uint64_t base, uint64_t col0, uint32_t e,
                                                   int logc, uint32_t cmask, fr_t v) {
    const uint32_t t = e >> logc, c = e & cmask;
    const uint64_t i = base + ((uint64_t)t << p.lo) + c;
    if (!DIT) {
        fr_t f;
        if (outer_factor<MV>(p, (uint32_t)col0 + c, t, (uint32_t)i, f)) v = fmul<MV>(v, f);
    }
    store_fr(p.x + i, v);
}

template <bool DIT, int MV>
__global__ void __launch_bounds__(TILE / 2, 2) ntt_pass_kernel(const pass_args p) {
    __shared__ uint32_t sm[8][TILE];
    const int k = p.k, logc = p.logc;
    const uint32_t tile = 1u << (k + logc), cmask = (1u << logc) - 1;
    const int col_groups_log = p.lo - logc;  // column groups per block of rows
    const uint64_t b = blockIdx.x;
    const uint64_t col0 = (b & ((1ull << col_groups_log) - 1)) << logc;
    const uint64_t base = ((b >> col_groups_log) << (p.lo + k)) + col0;

    for (uint32_t e = threadIdx.x; e < tile; e += blockDim.x)
        sm_store(sm, e, load_tile_element<DIT, MV>(p, base, col0, e, logc, cmask));
    __syncthreads();

#pragma unroll 1
    for (int step = 0; step < k; step++) {
        const int s = DIT ? step : k - 1 - step;  // butterfly span 2^s rows
        for (uint32_t bi = threadIdx.x; bi < tile / 2; bi += blockDim.x) {
            const uint32_t c = bi & cmask, q = bi >> logc;
            const uint32_t j = q & ((1u << s) - 1);
            const uint32_t row0 = ((q >> s) << (s + 1)) + j;
            const uint32_t e0 = (row0 << logc) | c, e1 = ((row0 + (1u << s)) << logc) | c;
            fr_t u = sm_load(sm, e0), v = sm_load(sm, e1);
            if (DIT) {
                if (s > 0) v = fmul<MV>(v, ldg_fr(p.inner + (j << (INNER_LOG - 1 - s))));
                sm_store(sm, e0, u + v);
                sm_store(sm, e1, u - v);
            } else {
                fr_t d = u - v;
                if (s > 0) d = fmul<MV>(d, ldg_fr(p.inner + (j << (INNER_LOG - 1 - s))));
                sm_store(sm, e0, u + v);
                sm_store(sm, e1, d);
            }
        }
        __syncthreads();
    }

    for (uint32_t e = threadIdx.x; e < tile; e += blockDim.x)
        store_tile_element<DIT, MV>(p, base, col0, e, logc, cmask, sm_load(sm, e));
}

// The same pass for full 1024-element tiles (log_n >= 10) with a quarter as
// many threads: each thread keeps two butterflies of a stage in flight (two
// independent multiplications for the scheduler to interleave) and moves
// elements through shared memory as two 16-byte words (4 shared-memory
// instructions per element instead of 16).
constexpr uint32_t ILP_THREADS = TILE / 4;
// Blocks per SM the ILP kernel's registers are budgeted for (transform.cu).
constexpr int ILP_BLOCKS_PER_SM = 3;

__device__ __forceinline__ fr_t sm4_load(const uint4 (*sm)[TILE], uint32_t e) {
    const uint4 a = sm[0][e], b = sm[1][e];
    fr_t r;
    r.v[0] = a.x, r.v[1] = a.y, r.v[2] = a.z, r.v[3] = a.w;
    r.v[4] = b.x, r.v[5] = b.y, r.v[6] = b.z, r.v[7] = b.w;
    return r;
}

__device__ __forceinline__ void sm4_store(uint4 (*sm)[TILE], uint32_t e, const fr_t &v) {
    sm[0][e] = make_uint4(v.v[0], v.v[1], v.v[2], v.v[3]);
    sm[1][e] = make_uint4(v.v[4], v.v[5], v.v[6], v.v[7]);
}

// The span-1 stage alone (an odd stage count leaves it out of the pairs):
// butterflies of adjacent rows, whose twiddle is w^0 = 1, two per thread.
__device__ __forceinline__ void ilp_span1_stage(uint4 (*sm)[TILE], int logc, uint32_t cmask) {
    uint32_t e0[2], e1[2];
    fr_t x0[2], x1[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const uint32_t bi = threadIdx.x + h * ILP_THREADS;
        const uint32_t c = bi & cmask, row0 = (bi >> logc) << 1;
        e0[h] = (row0 << logc) | c;
        e1[h] = ((row0 + 1) << logc) | c;
        x0[h] = sm4_load(sm, e0[h]);
        x1[h] = sm4_load(sm, e1[h]);
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        sm4_store(sm, e0[h], x0[h] + x1[h]);
        sm4_store(sm, e1[h], x0[h] - x1[h]);
    }
    __syncthreads();
}

// Two radix-2 stages at once, spans 2^m and 2^(m + 1) (DIT in that order,
// DIF the other way round): each thread takes the four rows of one radix-4
// group, j + {0, 1, 2, 3} 2^m within a block of 2^(m + 2) rows, so an
// element crosses shared memory and a barrier once per two stages. The
// same butterflies as two radix-2 stages of two per thread, with two
// multiplications in flight in each stage.
template <bool DIT, int MV>
__device__ __forceinline__ void ilp_stage_pair(uint4 (*sm)[TILE], const pass_args &p, int m, int logc,
                                               uint32_t cmask) {
    const uint32_t g = threadIdx.x;  // one group per thread: TILE / 4 of them
    const uint32_t c = g & cmask, q = g >> logc;
    const uint32_t j = q & ((1u << m) - 1);
    const uint32_t row0 = ((q >> m) << (m + 2)) + j;
    uint32_t e[4];
    fr_t x[4];
#pragma unroll
    for (int r = 0; r < 4; r++) {
        e[r] = ((row0 + ((uint32_t)r << m)) << logc) | c;
        x[r] = sm4_load(sm, e[r]);
    }
    // The span-2^m stage pairs rows (0, 1) and (2, 3), both at position j;
    // the span-2^(m + 1) stage (0, 2) at j and (1, 3) at j + 2^m.
    auto lower_twiddle = [&]() {
        if (m > 0) {
            const fr_t w = ldg_fr(p.inner + (j << (INNER_LOG - 1 - m)));
            x[1] = fmul<MV>(x[1], w);
            x[3] = fmul<MV>(x[3], w);
        }
    };
    auto upper_twiddle = [&]() {
        const fr_t wa = ldg_fr(p.inner + (j << (INNER_LOG - 2 - m)));
        const fr_t wb = ldg_fr(p.inner + ((j + (1u << m)) << (INNER_LOG - 2 - m)));
        x[2] = fmul<MV>(x[2], wa);
        x[3] = fmul<MV>(x[3], wb);
    };
    auto butterflies = [&](int a0, int a1, int b0, int b1) {
        const fr_t sa = x[a0] + x[a1], da = x[a0] - x[a1];
        const fr_t sb = x[b0] + x[b1], db = x[b0] - x[b1];
        x[a0] = sa, x[a1] = da, x[b0] = sb, x[b1] = db;
    };
    if (DIT) {
        lower_twiddle();
        butterflies(0, 1, 2, 3);
        upper_twiddle();
        butterflies(0, 2, 1, 3);
    } else {
        butterflies(0, 2, 1, 3);
        upper_twiddle();
        butterflies(0, 1, 2, 3);
        lower_twiddle();
    }
#pragma unroll
    for (int r = 0; r < 4; r++) sm4_store(sm, e[r], x[r]);
    __syncthreads();
}

// MIN_BLOCKS: blocks per SM the registers are budgeted for (3: 80
// registers, no spills; 4: 64 registers, a few spilled words).
template <bool DIT, int MV, int MIN_BLOCKS>
__global__ void __launch_bounds__(ILP_THREADS, MIN_BLOCKS) ntt_pass_ilp_kernel(const pass_args p) {
    __shared__ uint4 sm[2][TILE];
    const int k = p.k, logc = p.logc;  // k + logc == TILE_LOG
    const uint32_t cmask = (1u << logc) - 1;
    const int col_groups_log = p.lo - logc;
    const uint64_t b = blockIdx.x;
    const uint64_t col0 = (b & ((1ull << col_groups_log) - 1)) << logc;
    const uint64_t base = ((b >> col_groups_log) << (p.lo + k)) + col0;

#pragma unroll
    for (uint32_t u = 0; u < TILE / ILP_THREADS; u++) {
        const uint32_t e = threadIdx.x + u * ILP_THREADS;
        sm4_store(sm, e, load_tile_element<DIT, MV>(p, base, col0, e, logc, cmask));
    }
    __syncthreads();

    // Stages in pairs; an odd k leaves the span-1 stage (no multiplication)
    // alone: first for DIT, last for DIF.
    if (DIT) {
        int s = k & 1;
        if (s) ilp_span1_stage(sm, logc, cmask);
#pragma unroll 1
        for (; s < k; s += 2) ilp_stage_pair<DIT, MV>(sm, p, s, logc, cmask);
    } else {
#pragma unroll 1
        for (int s = k - 1; s >= 1; s -= 2) ilp_stage_pair<DIT, MV>(sm, p, s - 1, logc, cmask);
        if (k & 1) ilp_span1_stage(sm, logc, cmask);
    }

#pragma unroll
    for (uint32_t u = 0; u < TILE / ILP_THREADS; u++) {
        const uint32_t e = threadIdx.x + u * ILP_THREADS;
        store_tile_element<DIT, MV>(p, base, col0, e, logc, cmask, sm4_load(sm, e));
    }
}

// In-place bit-reversal permutation of 2^log_n elements, element by element
// (small sizes). With `sub`, x[i] - sub[i] is what gets permuted.
__global__ void bitrev_permute_kernel(fr_t *x, int log_n, const fr_t *sub) {
    const uint32_t n = 1u << log_n;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t j = bitrev(i, log_n);
        if (i < j) {
            fr_t a = load_fr(x + i), b = load_fr(x + j);
            if (sub) a = a - load_fr(sub + i), b = b - load_fr(sub + j);
            store_fr(x + i, b);
            store_fr(x + j, a);
        } else if (i == j && sub) {
            store_fr(x + i, load_fr(x + i) - load_fr(sub + i));
        }
    }
}

// In-place bit-reversal permutation in tiles, for log_n >= 2 BITREV_B: an
// index is (h, m, l) with h and l of BITREV_B bits each; its image is
// (rev l, rev m, rev h). A block takes the 2^(2B)-element tiles of m and
// rev m (every h, l), reading and writing runs of 2^B adjacent elements,
// and swaps them with the permutation inside each tile done in shared
// memory. Blocks with m > rev m have nothing to do.
constexpr int BITREV_B = 4;
constexpr uint32_t BITREV_SIDE = 1u << BITREV_B, BITREV_TILE = BITREV_SIDE * BITREV_SIDE;

__global__ void __launch_bounds__(BITREV_TILE) bitrev_tiles_kernel(fr_t *x, int log_n, const fr_t *sub) {
    __shared__ uint32_t sm[2][8][BITREV_TILE];
    const int mid = log_n - 2 * BITREV_B;
    const uint32_t m1 = blockIdx.x, m2 = mid ? bitrev(m1, mid) : 0;
    if (m1 > m2) return;
    const uint32_t t = threadIdx.x, hi = t >> BITREV_B, lo = t & (BITREV_SIDE - 1);
    const int hs = log_n - BITREV_B;
    const int tiles = (m1 == m2) ? 1 : 2;
    for (int k = 0; k < tiles; k++) {
        const uint32_t mk = k ? m2 : m1;
        const uint64_t at = ((uint64_t)hi << hs) | ((uint64_t)mk << BITREV_B) | lo;
        fr_t v = load_fr(x + at);
        if (sub) v = v - load_fr(sub + at);
#pragma unroll
        for (int w = 0; w < 8; w++) sm[k][w][t] = v.v[w];
    }
    __syncthreads();
    // Output (H = hi, M = m[k], Lo = lo) takes input (rev Lo, rev M, rev H),
    // which sits in the tile of rev M = the other m.
    const uint32_t src = (bitrev(lo, BITREV_B) << BITREV_B) | bitrev(hi, BITREV_B);
    for (int k = 0; k < tiles; k++) {
        const int from = (tiles == 2) ? 1 - k : 0;
        fr_t v;
#pragma unroll
        for (int w = 0; w < 8; w++) v.v[w] = sm[from][w][src];
        const uint32_t mk = k ? m2 : m1;
        store_fr(x + (((uint64_t)hi << hs) | ((uint64_t)mk << BITREV_B) | lo), v);
    }
}

}  // namespace cuzk

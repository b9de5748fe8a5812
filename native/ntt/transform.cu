// Plans the passes of a transform and launches the kernels of kernels.cuh.
#include "../error.cuh"
#include "kernels.cuh"
#include "transform.cuh"

namespace cuzk {

namespace {

// Splits log_n index bits into passes of at most TILE_LOG bits, the pass at
// lo = 0 first in this list and as large as possible (its tile has one
// column); the others near-equal in size, each with lo >= TILE_LOG so that
// their 2^(TILE_LOG - k) adjacent columns exist.
int plan_passes(int log_n, int lo[], int k[]) {
    if (log_n <= TILE_LOG) {
        lo[0] = 0, k[0] = log_n;
        return 1;
    }
    int count = 1, rest = log_n - TILE_LOG, at = TILE_LOG;
    lo[0] = 0, k[0] = TILE_LOG;
    const int more = (rest + TILE_LOG - 1) / TILE_LOG;
    for (int i = 0; i < more; i++) {
        const int bits = rest / (more - i);  // spread the remainder evenly
        lo[count] = at, k[count] = bits;
        at += bits, rest -= bits, count++;
    }
    return count;
}

// Pass kernels: the classic one (one butterfly per thread and stage, any
// tile) and, for full tiles, the ILP one (kernels.cuh) at 3 blocks per SM:
// two multiplications in flight per thread hide the carry chains' latency
// that one butterfly per thread leaves exposed, and 4 blocks per SM (fewer
// registers, a few spills) is no faster (docs/CUDA.md, the NTT).
template <bool DIT>
void launch_pass(const pass_args &p, cudaStream_t stream) {
    const uint32_t tile_log = p.k + p.logc;
    const uint32_t blocks = 1u << (p.log_n - tile_log);
    if (tile_log < (uint32_t)TILE_LOG)
        ntt_pass_kernel<DIT, MUL_DEFAULT><<<blocks, 1u << (tile_log - 1), 0, stream>>>(p);
    else
        ntt_pass_ilp_kernel<DIT, MUL_DEFAULT, ILP_BLOCKS_PER_SM><<<blocks, ILP_THREADS, 0, stream>>>(p);
}

}  // namespace

int32_t enqueue_stages(const ntt_tables &t, direction dir, bool dit, fr_t *x, int log_n, scale_spec scale,
                       cudaStream_t stream, cuzk_error *err, const fr_t *pre_mul) {
    int lo[4], k[4];
    const int passes = plan_passes(log_n, lo, k);
    for (int n = 0; n < passes; n++) {
        const int i = dit ? n : passes - 1 - n;  // DIT from low bits up, DIF from high bits down
        pass_args p;
        p.x = x;
        p.log_n = log_n;
        p.lo = lo[i];
        p.k = k[i];
        p.logc = (lo[i] == 0) ? 0 : TILE_LOG - k[i];
        p.root_lo = t.root_lo[dir];
        p.root_hi = t.root_hi[dir];
        p.inner = t.inner[dir];
        p.mid = t.mid[dir];
        p.scale = (lo[i] == 0) ? scale.mode : SCALE_NONE;
        p.scale_lo = scale.lo;
        p.scale_hi = scale.hi;
        p.scale_c = scale.c;
        p.pre_mul = (n == 0) ? pre_mul : nullptr;
        if (dit)
            launch_pass<true>(p, stream);
        else
            launch_pass<false>(p, stream);
        CUZK_LAUNCHED();
    }
    return CUZK_OK;
}

int32_t enqueue_bitrev(fr_t *x, int log_n, cudaStream_t stream, cuzk_error *err, const fr_t *sub) {
    if (log_n >= 2 * BITREV_B + 4) {
        bitrev_tiles_kernel<<<1u << (log_n - 2 * BITREV_B), BITREV_TILE, 0, stream>>>(x, log_n, sub);
        CUZK_LAUNCHED();
        return CUZK_OK;
    }
    const uint32_t n = 1u << log_n;
    const uint32_t threads = n < 256 ? n : 256;
    const uint32_t blocks = (n + threads - 1) / threads;
    bitrev_permute_kernel<<<blocks, threads, 0, stream>>>(x, log_n, sub);
    CUZK_LAUNCHED();
    return CUZK_OK;
}

int32_t enqueue_transform(const ntt_tables &t, fr_t *x, int log_n, cuzk_ntt_kind kind, cudaStream_t stream,
                          cuzk_error *err) {
    const scale_spec none{SCALE_NONE, nullptr, nullptr, nullptr};
    const fr_t *inv_n = t.inv_n + log_n;
    switch (kind) {
        case CUZK_NTT_FORWARD:
            CUZK_TRY(enqueue_stages(t, FORWARD, false, x, log_n, none, stream, err));
            return enqueue_bitrev(x, log_n, stream, err);
        case CUZK_NTT_INVERSE:
            CUZK_TRY(enqueue_stages(t, INVERSE, false, x, log_n, {SCALE_CONST, nullptr, nullptr, inv_n}, stream,
                                    err));
            return enqueue_bitrev(x, log_n, stream, err);
        case CUZK_NTT_COSET_FORWARD:
            // After the permutation, position i holds a_bitrev(i): scale it by g^bitrev(i).
            CUZK_TRY(enqueue_bitrev(x, log_n, stream, err));
            return enqueue_stages(t, FORWARD, true, x, log_n,
                                  {SCALE_COSET, t.coset_lo[FORWARD], t.coset_hi[FORWARD], nullptr}, stream, err);
        case CUZK_NTT_COSET_INVERSE:
            // DIF output position i is coefficient bitrev(i): scale by g^-bitrev(i) / N.
            CUZK_TRY(enqueue_stages(t, INVERSE, false, x, log_n,
                                    {SCALE_COSET_CONST, t.coset_lo[INVERSE], t.coset_hi[INVERSE], inv_n}, stream,
                                    err));
            return enqueue_bitrev(x, log_n, stream, err);
    }
    return set_error(err, CUZK_ERR_INVALID_ARGUMENT, "unknown NTT kind %d", (int)kind);
}

}  // namespace cuzk

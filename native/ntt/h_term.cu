// cuzk_h_term: the H polynomial of Groth16 from a, b, c in host memory, as
// bellperson 0.27's execute_fft computes it, with uploads overlapped.
//
// Per input x (own stream): upload, zero-pad, then
//   DIF with inverse roots, output scaled by g^bitrev(i) / N  -> coefficients
//     (bit-reversed order) already multiplied by the coset powers g^j
//   DIT with forward roots                                    -> values on the coset, natural order
// then on stream 0, once b and c are done:
//   a = (a b - c) / (g^N - 1)
//   DIF with inverse roots, output scaled by g^-bitrev(i) / N, bit-reversal
//                                                              -> h, natural order
// Stream x's compute overlaps stream x+1's upload.
#include "../error.cuh"
#include "transform.cuh"

namespace {

// Streams and events of one call, released on every path.
struct h_streams {
    cudaStream_t s[3] = {nullptr, nullptr, nullptr};
    cudaEvent_t done[3] = {nullptr, nullptr, nullptr};
    ~h_streams() {
        for (auto e : done)
            if (e) cudaEventDestroy(e);
        for (auto x : s)
            if (x) cudaStreamDestroy(x);
    }
};

}  // namespace

using namespace cuzk;

extern "C" int32_t cuzk_h_term(const cuzk_ntt_context *ctx, const void *a, const void *b, const void *c,
                               uint64_t n, uint32_t log_n, void *d_a, void *d_b, void *d_c, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(ctx && a && b && c && d_a && d_b && d_c, "null argument");
    CUZK_REQUIRE(log_n >= 1 && log_n <= CUZK_NTT_MAX_LOG, "log_n %u outside 1..%d", log_n, CUZK_NTT_MAX_LOG);
    const uint64_t N = 1ull << log_n;
    CUZK_REQUIRE(n <= N, "n = %llu exceeds the domain 2^%u", (unsigned long long)n, log_n);
    CUZK_CUDA(cudaSetDevice(ctx->device));

    const ntt_tables &t = ctx->tables;
    const void *host[3] = {a, b, c};
    fr_t *dev[3] = {static_cast<fr_t *>(d_a), static_cast<fr_t *>(d_b), static_cast<fr_t *>(d_c)};
    const fr_t *inv_n = t.inv_n + log_n;

    h_streams hs;
    for (int x = 0; x < 3; x++) {
        CUZK_CUDA(cudaStreamCreateWithFlags(&hs.s[x], cudaStreamNonBlocking));
        CUZK_CUDA(cudaEventCreateWithFlags(&hs.done[x], cudaEventDisableTiming));
    }

    for (int x = 0; x < 3; x++) {
        cudaStream_t s = hs.s[x];
        CUZK_CUDA(cudaMemcpyAsync(dev[x], host[x], n * sizeof(fr_t), cudaMemcpyHostToDevice, s));
        if (n < N) CUZK_CUDA(cudaMemsetAsync(dev[x] + n, 0, (N - n) * sizeof(fr_t), s));
        CUZK_TRY(enqueue_stages(t, INVERSE, false, dev[x], (int)log_n,
                                {SCALE_COSET_CONST, t.coset_lo[FORWARD], t.coset_hi[FORWARD], inv_n}, s, err));
        CUZK_TRY(enqueue_stages(t, FORWARD, true, dev[x], (int)log_n, {SCALE_NONE, nullptr, nullptr, nullptr}, s,
                                err));
        CUZK_CUDA(cudaEventRecord(hs.done[x], s));
    }

    cudaStream_t s0 = hs.s[0];
    CUZK_CUDA(cudaStreamWaitEvent(s0, hs.done[1], 0));
    CUZK_CUDA(cudaStreamWaitEvent(s0, hs.done[2], 0));
    CUZK_TRY(enqueue_h_pointwise(t, dev[0], dev[1], dev[2], (int)log_n, s0, err));
    CUZK_TRY(enqueue_stages(t, INVERSE, false, dev[0], (int)log_n,
                            {SCALE_COSET_CONST, t.coset_lo[INVERSE], t.coset_hi[INVERSE], inv_n}, s0, err));
    CUZK_TRY(enqueue_bitrev(dev[0], (int)log_n, s0, err));
    CUZK_CUDA(cudaStreamSynchronize(s0));
    return ok(err);
    CUZK_ENTRY_END
}

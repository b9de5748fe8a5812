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
//
// cuzk_h_stage / cuzk_h_compute split the same work for pre-staging: the
// uploads (under a GPU's mem lock, say) apart from the compute (under its
// compute lock), each enqueued on a caller's stream.
#include "../device/handles.cuh"
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

namespace {

int32_t check_args(const cuzk_ntt_context *ctx, uint32_t log_n, const void *d_a, const void *d_b, const void *d_c,
                   cuzk_error *err) {
    CUZK_REQUIRE(ctx && d_a && d_b && d_c, "null argument");
    CUZK_REQUIRE(log_n >= 1 && log_n <= CUZK_NTT_MAX_LOG, "log_n %u outside 1..%d", log_n, CUZK_NTT_MAX_LOG);
    return CUZK_OK;
}

// Upload n elements and zero the rest of the 2^log_n.
int32_t enqueue_upload(fr_t *dev, const void *host, uint64_t n, uint32_t log_n, cudaStream_t s, cuzk_error *err) {
    const uint64_t N = 1ull << log_n;
    CUZK_CUDA(cudaMemcpyAsync(dev, host, n * sizeof(fr_t), cudaMemcpyHostToDevice, s));
    if (n < N) CUZK_CUDA(cudaMemsetAsync(dev + n, 0, (N - n) * sizeof(fr_t), s));
    return CUZK_OK;
}

// Values on the domain -> values on the coset (see the top of this file).
int32_t enqueue_to_coset(const ntt_tables &t, fr_t *x, uint32_t log_n, cudaStream_t s, cuzk_error *err) {
    CUZK_TRY(enqueue_stages(t, INVERSE, false, x, (int)log_n,
                            {SCALE_COSET_CONST, t.coset_lo[FORWARD], t.coset_hi[FORWARD], t.inv_n + log_n}, s, err));
    return enqueue_stages(t, FORWARD, true, x, (int)log_n, {SCALE_NONE, nullptr, nullptr, nullptr}, s, err);
}

// a = (a b - c) / Z on the coset, then back to coefficients in natural order.
int32_t enqueue_quotient(const ntt_tables &t, fr_t *a, const fr_t *b, const fr_t *c, uint32_t log_n, cudaStream_t s,
                         cuzk_error *err) {
    CUZK_TRY(enqueue_h_pointwise(t, a, b, c, (int)log_n, s, err));
    CUZK_TRY(enqueue_stages(t, INVERSE, false, a, (int)log_n,
                            {SCALE_COSET_CONST, t.coset_lo[INVERSE], t.coset_hi[INVERSE], t.inv_n + log_n}, s, err));
    return enqueue_bitrev(a, (int)log_n, s, err);
}

}  // namespace

extern "C" int32_t cuzk_h_term(const cuzk_ntt_context *ctx, const void *a, const void *b, const void *c,
                               uint64_t n, uint32_t log_n, void *d_a, void *d_b, void *d_c, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_TRY(check_args(ctx, log_n, d_a, d_b, d_c, err));
    CUZK_REQUIRE(a && b && c, "null host input");
    CUZK_REQUIRE(n <= (1ull << log_n), "n = %llu exceeds the domain 2^%u", (unsigned long long)n, log_n);
    CUZK_CUDA(cudaSetDevice(ctx->device));

    const ntt_tables &t = ctx->tables;
    const void *host[3] = {a, b, c};
    fr_t *dev[3] = {static_cast<fr_t *>(d_a), static_cast<fr_t *>(d_b), static_cast<fr_t *>(d_c)};

    h_streams hs;
    for (int x = 0; x < 3; x++) {
        CUZK_CUDA(cudaStreamCreateWithFlags(&hs.s[x], cudaStreamNonBlocking));
        CUZK_CUDA(cudaEventCreateWithFlags(&hs.done[x], cudaEventDisableTiming));
    }
    for (int x = 0; x < 3; x++) {
        CUZK_TRY(enqueue_upload(dev[x], host[x], n, log_n, hs.s[x], err));
        CUZK_TRY(enqueue_to_coset(t, dev[x], log_n, hs.s[x], err));
        CUZK_CUDA(cudaEventRecord(hs.done[x], hs.s[x]));
    }
    cudaStream_t s0 = hs.s[0];
    CUZK_CUDA(cudaStreamWaitEvent(s0, hs.done[1], 0));
    CUZK_CUDA(cudaStreamWaitEvent(s0, hs.done[2], 0));
    CUZK_TRY(enqueue_quotient(t, dev[0], dev[1], dev[2], log_n, s0, err));
    CUZK_CUDA(cudaStreamSynchronize(s0));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_h_stage(const cuzk_ntt_context *ctx, cuzk_stream *stream, const void *a, const void *b,
                                const void *c, uint64_t n, uint32_t log_n, void *d_a, void *d_b, void *d_c,
                                cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_TRY(check_args(ctx, log_n, d_a, d_b, d_c, err));
    CUZK_REQUIRE(stream && a && b && c, "null argument");
    CUZK_REQUIRE(stream->device == ctx->device, "stream on device %d, context on %d", stream->device, ctx->device);
    CUZK_REQUIRE(n <= (1ull << log_n), "n = %llu exceeds the domain 2^%u", (unsigned long long)n, log_n);
    CUZK_CUDA(cudaSetDevice(ctx->device));
    const void *host[3] = {a, b, c};
    void *dev[3] = {d_a, d_b, d_c};
    for (int x = 0; x < 3; x++)
        CUZK_TRY(enqueue_upload(static_cast<fr_t *>(dev[x]), host[x], n, log_n, stream->stream, err));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_h_compute(const cuzk_ntt_context *ctx, cuzk_stream *stream, uint32_t log_n, void *d_a,
                                  void *d_b, void *d_c, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_TRY(check_args(ctx, log_n, d_a, d_b, d_c, err));
    CUZK_REQUIRE(stream, "stream is null");
    CUZK_REQUIRE(stream->device == ctx->device, "stream on device %d, context on %d", stream->device, ctx->device);
    CUZK_CUDA(cudaSetDevice(ctx->device));
    const ntt_tables &t = ctx->tables;
    fr_t *dev[3] = {static_cast<fr_t *>(d_a), static_cast<fr_t *>(d_b), static_cast<fr_t *>(d_c)};
    for (int x = 0; x < 3; x++) CUZK_TRY(enqueue_to_coset(t, dev[x], log_n, stream->stream, err));
    CUZK_TRY(enqueue_quotient(t, dev[0], dev[1], dev[2], log_n, stream->stream, err));
    return ok(err);
    CUZK_ENTRY_END
}

// cuzk_h_term: the H polynomial of Groth16 from a, b, c in host memory, as
// bellperson 0.27's execute_fft computes it (bit for bit), with uploads
// overlapped.
//
// Six transforms (see enqueue_scaled_coset and below):
//   a, b: DIF with inverse roots, output scaled by g^bitrev(i) (coset
//         coefficients times N, bit-reversed), DIT with forward roots
//         -> N A, N B on the coset, natural order
//   c:    DIF with inverse roots, output scaled by z / N -> z ifft(c), bit-reversed
//   a = DIF_inv(a b) scaled by g^-bitrev(i) z / N^3 (the product fused into
//       the first pass), then one bit reversal that subtracts c on the way.
// The uploads run one after the other (a, b, c), each input's transforms
// on its own stream as soon as it is in, so the transforms of a and b
// overlap the uploads of b and c, and after c is in only its one
// transform and the final bit reversal remain.
//
// cuzk_h_stage / cuzk_h_compute split the same work for pre-staging: the
// uploads (under a GPU's mem lock, say) apart from the compute (under its
// compute lock), each enqueued on a caller's stream.
#include "../device/handles.cuh"
#include "../device/streams.cuh"
#include "../device/upload.cuh"
#include "../error.cuh"
#include "transform.cuh"

namespace {

// Streams and events of one call, released on every path.
struct h_streams {
    cudaStream_t s[3] = {nullptr, nullptr, nullptr};
    cudaEvent_t done[3] = {nullptr, nullptr, nullptr};
    cudaEvent_t uploaded[3] = {nullptr, nullptr, nullptr};
    ~h_streams() {
        for (auto e : done)
            if (e) cudaEventDestroy(e);
        for (auto e : uploaded)
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
    CUZK_TRY(upload_to_device(dev, host, n * sizeof(fr_t), s, err));
    if (n < N) CUZK_CUDA(cudaMemsetAsync(dev + n, 0, (N - n) * sizeof(fr_t), s));
    return CUZK_OK;
}

// The six-transform H term. With A, B, C the values of a, b, c's
// polynomials on the coset, bellperson computes
//   h = icoset((A B - C) z),  z = 1 / (g^N - 1) (one scalar on the whole coset)
//     = z icoset(A B) - z icoset(C),  and icoset(C) = ifft(c) exactly,
// so c needs one inverse transform instead of three, and the final inverse
// transform of A B need not wait for c. The 1/N of the inverse transforms
// of a and b is folded into the final constant: A' = N A, B' = N B, and
//   h (bit-reversed) = DIF_inv(A' B') g^-j z / N^3 - DIF_inv(c) z / N,
// then one bit reversal that also does the subtraction.

// x = N X on the coset, natural order.
int32_t enqueue_scaled_coset(const ntt_tables &t, fr_t *x, uint32_t log_n, cudaStream_t s, cuzk_error *err) {
    CUZK_TRY(enqueue_stages(t, INVERSE, false, x, (int)log_n,
                            {SCALE_COSET, t.coset_lo[FORWARD], t.coset_hi[FORWARD], nullptr}, s, err));
    return enqueue_stages(t, FORWARD, true, x, (int)log_n, {SCALE_NONE, nullptr, nullptr, nullptr}, s, err);
}

// c = ifft(c) z in bit-reversed order.
int32_t enqueue_c_coefficients(const ntt_tables &t, fr_t *c, uint32_t log_n, cudaStream_t s, cuzk_error *err) {
    return enqueue_stages(t, INVERSE, false, c, (int)log_n, {SCALE_CONST, nullptr, nullptr, t.z_inv_n1 + log_n}, s,
                          err);
}

// a = icoset(a b / N^2) z in bit-reversed order (a, b from enqueue_scaled_coset).
int32_t enqueue_ab_part(const ntt_tables &t, fr_t *a, const fr_t *b, uint32_t log_n, cudaStream_t s,
                        cuzk_error *err) {
    return enqueue_stages(t, INVERSE, false, a, (int)log_n,
                          {SCALE_COSET_CONST, t.coset_lo[INVERSE], t.coset_hi[INVERSE], t.z_inv_n3 + log_n}, s,
                          err, b);
}

// h = a - c in natural order.
int32_t enqueue_h_finish(fr_t *a, const fr_t *c, uint32_t log_n, cudaStream_t s, cuzk_error *err) {
    return enqueue_bitrev(a, (int)log_n, s, err, c);
}

// The a b part into a, from a and b as given (b is scratch after).
int32_t enqueue_h_ab(const ntt_tables &t, fr_t *a, fr_t *b, uint32_t log_n, cudaStream_t s, cuzk_error *err) {
    CUZK_TRY(enqueue_scaled_coset(t, a, log_n, s, err));
    CUZK_TRY(enqueue_scaled_coset(t, b, log_n, s, err));
    return enqueue_ab_part(t, a, b, log_n, s, err);
}

// h into h (which holds the a b part), from c as given (scratch after).
int32_t enqueue_h_c(const ntt_tables &t, fr_t *h, fr_t *c, uint32_t log_n, cudaStream_t s, cuzk_error *err) {
    CUZK_TRY(enqueue_c_coefficients(t, c, log_n, s, err));
    return enqueue_h_finish(h, c, log_n, s, err);
}

int32_t check_stream(const cuzk_ntt_context *ctx, const cuzk_stream *stream, cuzk_error *err) {
    CUZK_REQUIRE(stream, "stream is null");
    CUZK_REQUIRE(stream->device == ctx->device, "stream on device %d, context on %d", stream->device, ctx->device);
    return CUZK_OK;
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
        CUZK_CUDA(cuzk::stream_create(&hs.s[x]));
        CUZK_CUDA(cudaEventCreateWithFlags(&hs.done[x], cudaEventDisableTiming));
        CUZK_CUDA(cudaEventCreateWithFlags(&hs.uploaded[x], cudaEventDisableTiming));
    }
    // Uploads one after the other (a, b, c: c needs the least work once it
    // is in); each input's transforms on its own stream as soon as it is
    // in; A B's inverse transform waits only for b.
    for (int x = 0; x < 3; x++) {
        if (x > 0) CUZK_CUDA(cudaStreamWaitEvent(hs.s[x], hs.uploaded[x - 1], 0));
        CUZK_TRY(enqueue_upload(dev[x], host[x], n, log_n, hs.s[x], err));
        CUZK_CUDA(cudaEventRecord(hs.uploaded[x], hs.s[x]));
        if (x < 2)
            CUZK_TRY(enqueue_scaled_coset(t, dev[x], log_n, hs.s[x], err));
        else
            CUZK_TRY(enqueue_c_coefficients(t, dev[x], log_n, hs.s[x], err));
        CUZK_CUDA(cudaEventRecord(hs.done[x], hs.s[x]));
    }
    cudaStream_t s0 = hs.s[0];
    CUZK_CUDA(cudaStreamWaitEvent(s0, hs.done[1], 0));
    CUZK_TRY(enqueue_ab_part(t, dev[0], dev[1], log_n, s0, err));
    CUZK_CUDA(cudaStreamWaitEvent(s0, hs.done[2], 0));
    CUZK_TRY(enqueue_h_finish(dev[0], dev[2], log_n, s0, err));
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
    CUZK_TRY(check_stream(ctx, stream, err));
    CUZK_CUDA(cudaSetDevice(ctx->device));
    fr_t *a = static_cast<fr_t *>(d_a), *b = static_cast<fr_t *>(d_b), *c = static_cast<fr_t *>(d_c);
    CUZK_TRY(enqueue_h_ab(ctx->tables, a, b, log_n, stream->stream, err));
    CUZK_TRY(enqueue_h_c(ctx->tables, a, c, log_n, stream->stream, err));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_h_compute_ab(const cuzk_ntt_context *ctx, cuzk_stream *stream, uint32_t log_n, void *d_a,
                                     void *d_b, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_TRY(check_args(ctx, log_n, d_a, d_b, d_b, err));
    CUZK_TRY(check_stream(ctx, stream, err));
    CUZK_REQUIRE(d_a != d_b, "a and b must be distinct buffers");
    CUZK_CUDA(cudaSetDevice(ctx->device));
    CUZK_TRY(enqueue_h_ab(ctx->tables, static_cast<fr_t *>(d_a), static_cast<fr_t *>(d_b), log_n, stream->stream, err));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_h_compute_c(const cuzk_ntt_context *ctx, cuzk_stream *stream, uint32_t log_n, void *d_h,
                                    void *d_c, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_TRY(check_args(ctx, log_n, d_h, d_c, d_c, err));
    CUZK_TRY(check_stream(ctx, stream, err));
    CUZK_REQUIRE(d_h != d_c, "h and c must be distinct buffers");
    CUZK_CUDA(cudaSetDevice(ctx->device));
    CUZK_TRY(enqueue_h_c(ctx->tables, static_cast<fr_t *>(d_h), static_cast<fr_t *>(d_c), log_n, stream->stream, err));
    return ok(err);
    CUZK_ENTRY_END
}

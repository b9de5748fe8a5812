// cuzk_ntt: one natural-order transform on device memory, on a stream.
#include "../device/handles.cuh"
#include "../error.cuh"
#include "transform.cuh"

extern "C" int32_t cuzk_ntt(const cuzk_ntt_context *ctx, cuzk_stream *stream, void *data, uint32_t log_n,
                            cuzk_ntt_kind kind, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(ctx && stream && data, "null argument");
    CUZK_REQUIRE(log_n >= 1 && log_n <= CUZK_NTT_MAX_LOG, "log_n %u outside 1..%d", log_n, CUZK_NTT_MAX_LOG);
    CUZK_REQUIRE(ctx->device == stream->device, "context on device %d, stream on %d", ctx->device, stream->device);
    CUZK_REQUIRE(((uintptr_t)data & 15) == 0, "data not 16-byte aligned");
    CUZK_CUDA(cudaSetDevice(ctx->device));
    CUZK_TRY(cuzk::enqueue_transform(ctx->tables, static_cast<cuzk::fr_t *>(data), (int)log_n, kind,
                                     stream->stream, err));
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

// The device layer of cuzk.h: enumeration, device and pinned memory,
// streams, copies and events. Thin and checked; no device-wide syncs except
// where CUDA implies them (cudaMalloc / cudaFree).
#include <cstring>

#include "../error.cuh"
#include "handles.cuh"
#include "streams.cuh"
#include "upload.cuh"

using cuzk::ok;

extern "C" int32_t cuzk_built_with_cuda(void) { return 1; }

extern "C" int32_t cuzk_device_count(int32_t *count, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(count, "count is null");
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    // No driver or no device is not an error here: it is a machine with 0 GPUs.
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
        cudaGetLastError();
        n = 0;
    } else if (e != cudaSuccess) {
        return cuzk::cuda_error(err, e, "cudaGetDeviceCount", __FILE__, __LINE__);
    }
    *count = n;
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_device_free_memory(int32_t ordinal, uint64_t *free_bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(free_bytes, "free_bytes is null");
    CUZK_CUDA(cudaSetDevice(ordinal));
    size_t free_b = 0, total_b = 0;
    CUZK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    *free_bytes = free_b;
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_device_get_info(int32_t ordinal, cuzk_device_info *out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(out, "out is null");
    cudaDeviceProp prop;
    CUZK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
    CUZK_CUDA(cudaSetDevice(ordinal));
    size_t free_b = 0, total_b = 0;
    CUZK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    memset(out, 0, sizeof(*out));
    strncpy(out->name, prop.name, sizeof(out->name) - 1);
    out->total_mem_bytes = total_b;
    out->free_mem_bytes = free_b;
    out->l2_bytes = (uint64_t)prop.l2CacheSize;
    out->sm_count = prop.multiProcessorCount;
    out->cc_major = prop.major;
    out->cc_minor = prop.minor;
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_device_alloc(int32_t ordinal, size_t bytes, void **out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(out, "out is null");
    *out = nullptr;
    CUZK_CUDA(cudaSetDevice(ordinal));
    CUZK_CUDA(cuzk::device_malloc(out, bytes ? bytes : 1));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_device_free(int32_t ordinal, void *ptr, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    if (!ptr) return ok(err);
    CUZK_CUDA(cudaSetDevice(ordinal));
    CUZK_CUDA(cudaFree(ptr));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_pinned_alloc(size_t bytes, void **out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(out, "out is null");
    *out = nullptr;
    CUZK_CUDA(cudaHostAlloc(out, bytes ? bytes : 1, cudaHostAllocPortable));
    cuzk::note_pinned(*out, bytes);
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_host_register(void *ptr, size_t bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(ptr && bytes, "null or empty host range");
    CUZK_CUDA(cudaHostRegister(ptr, bytes, cudaHostRegisterPortable));
    cuzk::note_pinned(ptr, bytes);
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_host_unregister(void *ptr, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(ptr, "null host pointer");
    CUZK_CUDA(cudaHostUnregister(ptr));
    cuzk::note_unpinned(ptr);
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_pinned_free(void *ptr, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    if (!ptr) return ok(err);
    CUZK_CUDA(cudaFreeHost(ptr));
    cuzk::note_unpinned(ptr);
    return ok(err);
    CUZK_ENTRY_END
}

bool &cuzk::urgent_streams() {
    thread_local bool on = false;
    return on;
}

extern "C" int32_t cuzk_thread_urgent_streams(int32_t on) {
    bool &flag = cuzk::urgent_streams();
    const int32_t was = flag ? 1 : 0;
    flag = on != 0;
    return was;
}

extern "C" int32_t cuzk_stream_create(int32_t ordinal, cuzk_stream **out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(out, "out is null");
    *out = nullptr;
    CUZK_CUDA(cudaSetDevice(ordinal));
    cudaStream_t s;
    CUZK_CUDA(cuzk::stream_create(&s));
    *out = new cuzk_stream{ordinal, s};
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_stream_priority(const cuzk_stream *stream, int32_t *priority, int32_t *greatest,
                                        cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stream && priority && greatest, "null argument");
    CUZK_CUDA(cudaSetDevice(stream->device));
    int own = 0, least = 0, most = 0;
    CUZK_CUDA(cudaStreamGetPriority(stream->stream, &own));
    CUZK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &most));
    *priority = own;
    *greatest = most;
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_stream_destroy(cuzk_stream *stream, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    if (!stream) return ok(err);
    CUZK_CUDA(cudaSetDevice(stream->device));
    cudaError_t e = cudaStreamDestroy(stream->stream);
    delete stream;
    CUZK_CUDA(e);
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_stream_synchronize(cuzk_stream *stream, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stream, "stream is null");
    CUZK_CUDA(cudaSetDevice(stream->device));
    CUZK_CUDA(cudaStreamSynchronize(stream->stream));
    return ok(err);
    CUZK_ENTRY_END
}

static int32_t copy(cuzk_stream *stream, void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                    cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stream, "stream is null");
    CUZK_REQUIRE(bytes == 0 || (dst && src), "null copy pointer");
    if (bytes == 0) return ok(err);
    CUZK_CUDA(cudaSetDevice(stream->device));
    if (kind == cudaMemcpyHostToDevice)
        CUZK_TRY(cuzk::upload_to_device(dst, src, bytes, stream->stream, err));
    else
        CUZK_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream->stream));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_copy_to_device(cuzk_stream *stream, void *dst, const void *src, size_t bytes,
                                       cuzk_error *err) {
    return copy(stream, dst, src, bytes, cudaMemcpyHostToDevice, err);
}

extern "C" int32_t cuzk_copy_to_host(cuzk_stream *stream, void *dst, const void *src, size_t bytes,
                                     cuzk_error *err) {
    return copy(stream, dst, src, bytes, cudaMemcpyDeviceToHost, err);
}

extern "C" int32_t cuzk_copy_device_to_device(cuzk_stream *stream, void *dst, const void *src, size_t bytes,
                                              cuzk_error *err) {
    return copy(stream, dst, src, bytes, cudaMemcpyDeviceToDevice, err);
}

extern "C" int32_t cuzk_memset_device(cuzk_stream *stream, void *dst, int32_t value, size_t bytes,
                                      cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stream, "stream is null");
    if (bytes == 0) return ok(err);
    CUZK_REQUIRE(dst, "dst is null");
    CUZK_CUDA(cudaSetDevice(stream->device));
    CUZK_CUDA(cudaMemsetAsync(dst, value, bytes, stream->stream));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_event_create(int32_t ordinal, cuzk_event **out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(out, "out is null");
    *out = nullptr;
    CUZK_CUDA(cudaSetDevice(ordinal));
    cudaEvent_t e;
    CUZK_CUDA(cudaEventCreate(&e));
    *out = new cuzk_event{ordinal, e};
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_event_destroy(cuzk_event *event, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    if (!event) return ok(err);
    CUZK_CUDA(cudaSetDevice(event->device));
    cudaError_t e = cudaEventDestroy(event->event);
    delete event;
    CUZK_CUDA(e);
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_event_record(cuzk_event *event, cuzk_stream *stream, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(event && stream, "null event or stream");
    CUZK_REQUIRE(event->device == stream->device, "event and stream on different devices");
    CUZK_CUDA(cudaSetDevice(stream->device));
    CUZK_CUDA(cudaEventRecord(event->event, stream->stream));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_event_synchronize(cuzk_event *event, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(event, "event is null");
    CUZK_CUDA(cudaSetDevice(event->device));
    CUZK_CUDA(cudaEventSynchronize(event->event));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_stream_wait_event(cuzk_stream *stream, cuzk_event *event, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(event && stream, "null event or stream");
    CUZK_CUDA(cudaSetDevice(stream->device));
    CUZK_CUDA(cudaStreamWaitEvent(stream->stream, event->event, 0));
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_event_elapsed_ms(cuzk_event *start, cuzk_event *end, float *ms, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(start && end && ms, "null argument");
    CUZK_CUDA(cudaSetDevice(start->device));
    CUZK_CUDA(cudaEventElapsedTime(ms, start->event, end->event));
    return ok(err);
    CUZK_ENTRY_END
}

// Density compaction on the device: the scalars of the variables a query
// uses (A, B_G1, B_G2 read only the variables that appear in them), moved
// together so they line up with the query's dense point list. The witness
// is uploaded once per circuit and every query compacts it here, instead of
// the host compacting and uploading each query's scalars again.
//
// Only the bitmap goes up (n / 8 bytes). Each word's rank (the set bits in
// the words before it) is an exclusive scan of the words' popcounts; then
// element i of word w goes to rank[w] + the popcount of the bits below it.
#include <cub/device/device_scan.cuh>

#include "../device/handles.cuh"
#include "../device/upload.cuh"
#include "../error.cuh"

namespace {

struct fr_bytes {
    uint4 lo, hi;  // 32 bytes: one Fr
};

// Word w of the bitmap with the bits at or past n cleared.
__host__ __device__ __forceinline__ uint64_t word_below(const uint64_t *bits, uint64_t w, uint64_t n) {
    const uint64_t v = bits[w];
    const uint64_t end = n - 64 * w;  // bits of this word below n
    return end >= 64 ? v : v & ((1ull << end) - 1);
}

__global__ void word_counts(const uint64_t *bits, uint64_t words, uint64_t n, uint32_t *counts) {
    for (uint64_t w = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; w < words;
         w += (uint64_t)gridDim.x * blockDim.x)
        counts[w] = __popcll(word_below(bits, w, n));
}

__global__ void compact_kernel(const fr_bytes *src, uint64_t n, const uint64_t *bits, const uint32_t *rank,
                               fr_bytes *dst) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t word = bits[i >> 6];
        const uint32_t bit = i & 63;
        if ((word >> bit) & 1) dst[rank[i >> 6] + __popcll(word & ((1ull << bit) - 1))] = src[i];
    }
}

uint32_t grid_for(uint64_t n) {
    const uint64_t blocks = (n + 255) / 256;
    return (uint32_t)(blocks < (1u << 20) ? blocks : (1u << 20));
}

// The compaction with device scratch `tmp`: the scan's space (scan_bytes, a
// multiple of 256), then the bitmap, counts and ranks. The set bits are
// counted on the device (the last rank plus the last count: the host's
// popcount is a libgcc call per word without -mpopcnt, ~10 ms at 2^27), and
// a short destination is an error before anything is written.
int32_t compact(cudaStream_t s, const void *src, uint64_t n, const uint64_t *bits, void *dst, uint64_t capacity,
                char *tmp, size_t scan_bytes, uint64_t *count, cuzk_error *err) {
    const uint64_t words = (n + 63) / 64;
    void *scan_tmp = tmp;  // first: the allocation's own (256-byte) alignment
    uint64_t *d_bits = (uint64_t *)(tmp + scan_bytes);
    uint32_t *counts = (uint32_t *)(d_bits + words), *ranks = counts + words;
    CUZK_TRY(cuzk::upload_to_device(d_bits, bits, words * sizeof(uint64_t), s, err));
    word_counts<<<grid_for(words), 256, 0, s>>>(d_bits, words, n, counts);
    CUZK_LAUNCHED();
    CUZK_CUDA(cub::DeviceScan::ExclusiveSum(scan_tmp, scan_bytes, counts, ranks, (int64_t)words, s));
    uint32_t last[2];  // rank and count of the last word (n < 2^32: no overflow)
    CUZK_CUDA(cudaMemcpyAsync(&last[0], ranks + words - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
    CUZK_CUDA(cudaMemcpyAsync(&last[1], counts + words - 1, sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
    CUZK_CUDA(cudaStreamSynchronize(s));
    const uint64_t total = (uint64_t)last[0] + last[1];
    CUZK_REQUIRE(total <= capacity, "density compaction: %llu set bits but room for %llu", (unsigned long long)total,
                 (unsigned long long)capacity);
    compact_kernel<<<grid_for(n), 256, 0, s>>>((const fr_bytes *)src, n, d_bits, ranks, (fr_bytes *)dst);
    CUZK_LAUNCHED();
    *count = total;
    return CUZK_OK;
}

// The scan's space for `words` counts, rounded up to 256 bytes so the bitmap
// after it stays aligned.
cudaError_t scan_bytes_for(uint64_t words, size_t *bytes) {
    *bytes = 0;
    const cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, *bytes, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                                        (int64_t)words, (cudaStream_t)0);
    *bytes = (*bytes + 255) & ~(size_t)255;
    return e;
}

// Scratch for n elements: the scan's space, the bitmap, counts and ranks, and
// 255 bytes of slack to align the caller's pointer.
cudaError_t scratch_bytes_for(uint64_t n, size_t *scan_bytes, uint64_t *bytes) {
    const uint64_t words = (n + 63) / 64;
    const cudaError_t e = scan_bytes_for(words, scan_bytes);
    *bytes = *scan_bytes + words * (sizeof(uint64_t) + 2 * sizeof(uint32_t)) + 255;
    return e;
}

}  // namespace

extern "C" int32_t cuzk_compact_fr_scratch_bytes(uint64_t n, uint64_t *bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(bytes, "bytes is null");
    CUZK_REQUIRE(n < (1ull << 32), "density compaction of %llu elements (at most 2^32 - 1)", (unsigned long long)n);
    size_t scan_bytes = 0;
    CUZK_CUDA(scratch_bytes_for(n, &scan_bytes, bytes));
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

// The scratch comes from the caller: a stream-ordered allocation here would
// take a 32 MiB block from the driver's pool behind every memory plan's back.
extern "C" int32_t cuzk_compact_fr(cuzk_stream *stream, const void *d_src, uint64_t n, const uint64_t *bits,
                                   void *d_dst, uint64_t dst_capacity, void *d_tmp, uint64_t tmp_bytes,
                                   uint64_t *count, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stream && count, "stream or count is null");
    CUZK_REQUIRE(n == 0 || (d_src && bits && d_dst && d_tmp), "null source, bitmap, destination or scratch");
    CUZK_REQUIRE(n < (1ull << 32), "density compaction of %llu elements (at most 2^32 - 1)", (unsigned long long)n);
    *count = 0;
    if (n == 0) return cuzk::ok(err);
    CUZK_CUDA(cudaSetDevice(stream->device));
    size_t scan_bytes = 0;
    uint64_t need = 0;
    CUZK_CUDA(scratch_bytes_for(n, &scan_bytes, &need));
    CUZK_REQUIRE(tmp_bytes >= need, "density compaction of %llu elements: %llu bytes of scratch, %llu needed",
                 (unsigned long long)n, (unsigned long long)tmp_bytes, (unsigned long long)need);
    char *tmp = (char *)(((uintptr_t)d_tmp + 255) & ~(uintptr_t)255);
    uint64_t total = 0;
    CUZK_TRY(compact(stream->stream, d_src, n, bits, d_dst, dst_capacity, tmp, scan_bytes, &total, err));
    *count = total;
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

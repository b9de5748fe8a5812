// Density compaction on the device: the scalars of the variables a query
// uses (A, B_G1, B_G2 read only the variables that appear in them), moved
// together so they line up with the query's dense point list. The witness
// is uploaded once per circuit and every query compacts it here, instead of
// the host compacting and uploading each query's scalars again.
//
// A word's rank (set bits in the words before it) comes from a prefix sum
// on the host (n / 64 words: a few milliseconds at 2^27); on the device
// element i of word w goes to rank[w] + popcount of the bits below it.
#include <vector>

#include "../device/handles.cuh"
#include "../device/upload.cuh"
#include "../error.cuh"

namespace {

struct fr_bytes {
    uint4 lo, hi;  // 32 bytes: one Fr
};

__global__ void compact_kernel(const fr_bytes *src, uint64_t n, const uint64_t *bits, const uint64_t *rank,
                               fr_bytes *dst) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t word = bits[i >> 6];
        const uint32_t bit = i & 63;
        if ((word >> bit) & 1) dst[rank[i >> 6] + __popcll(word & ((1ull << bit) - 1))] = src[i];
    }
}

}  // namespace

extern "C" int32_t cuzk_compact_fr(cuzk_stream *stream, const void *d_src, uint64_t n, const uint64_t *bits,
                                   void *d_dst, uint64_t dst_capacity, uint64_t *count, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stream && count, "stream or count is null");
    CUZK_REQUIRE(n == 0 || (d_src && bits && d_dst), "null source, bitmap or destination");
    *count = 0;
    if (n == 0) return cuzk::ok(err);
    const uint64_t words = (n + 63) / 64;
    // Both tables go up in one upload: the bitmap (bits past n cleared),
    // then each word's rank.
    std::vector<uint64_t> table(2 * words);
    uint64_t total = 0;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t v = bits[w];
        if (w == words - 1 && n % 64) v &= (1ull << (n % 64)) - 1;
        table[w] = v;
        table[words + w] = total;
        total += __builtin_popcountll(v);
    }
    CUZK_REQUIRE(total <= dst_capacity, "density compaction: %llu set bits but room for %llu",
                 (unsigned long long)total, (unsigned long long)dst_capacity);
    CUZK_CUDA(cudaSetDevice(stream->device));
    cudaStream_t s = stream->stream;
    uint64_t *d_table = nullptr;
    CUZK_CUDA(cudaMallocAsync((void **)&d_table, table.size() * sizeof(uint64_t), s));
    int32_t rc = cuzk::upload_to_device(d_table, table.data(), table.size() * sizeof(uint64_t), s, err);
    if (rc == CUZK_OK) {
        const uint64_t blocks = (n + 255) / 256;
        compact_kernel<<<(uint32_t)(blocks < (1u << 20) ? blocks : (1u << 20)), 256, 0, s>>>(
            (const fr_bytes *)d_src, n, d_table, d_table + words, (fr_bytes *)d_dst);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) rc = cuzk::cuda_error(err, e, "compact_kernel launch", __FILE__, __LINE__);
    }
    // Stream-ordered: freed once the kernel is done.
    cudaError_t fe = cudaFreeAsync(d_table, s);
    if (rc != CUZK_OK) return rc;
    if (fe != cudaSuccess) return cuzk::cuda_error(err, fe, "cudaFreeAsync", __FILE__, __LINE__);
    *count = total;
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

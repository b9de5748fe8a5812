// Sparse matrix-vector products on the device for a pre-compiled
// constraint system (cuzk-core's pce module): a = A·z, b = B·z, c = C·z,
// z = inputs ‖ aux, each matrix in compressed sparse rows (row_ptr, cols,
// coeff_idx) over one table of distinct coefficients.
//
// The matrices and the table are uploaded once per circuit (one
// allocation) and stay resident; each proof then uploads only z (the
// witness it has anyway) and gets a, b, c in device buffers, where the H
// term's transforms read them, instead of computing them on the host and
// uploading three vectors of one Fr per constraint.
//
// A card without room for the matrices beside a proof's working set
// evaluates them from host memory instead (cuzk_spmv_evaluate_streamed):
// one matrix at a time, in row chunks copied into a device staging area
// whose two halves alternate, so that one chunk's copy overlaps the
// previous chunk's products. Page-locked matrices move at PCIe speed.
//
// One thread per row: most rows are short (two or three entries on
// Filecoin circuits), so a thread's sequential walk over its entries costs
// less than a warp's reduction would. A few are long (a PoRep partition's
// bit-packing rows: hundreds of entries, most with a multiplication), and
// a warp waits for its longest row: the warp takes each of its rows longer
// than LONG_ROW together, every lane a stride of the entries, then sums
// the lanes. Coefficient 0 (1) and 1 (−1) of the table are additions,
// which most entries are; any other is one multiplication. The field
// operations give fully reduced values, so the bytes equal the CPU SpMV's
// (pce/spmv.rs) whatever the order of the terms.
#include "../device/handles.cuh"
#include "../device/streams.cuh"
#include "../device/upload.cuh"
#include "../error.cuh"
#include "../ff/fr.cuh"

#include <algorithm>

using cuzk::fr_t;

struct cuzk_spmv {
    int device;
    uint64_t rows, num_vars, num_coeffs;
    uint64_t nnz[3];
    char *base;  // the one allocation holding everything below
    uint64_t bytes;
    const uint32_t *row_ptr[3], *cols[3], *coeff_idx[3];
    const fr_t *coeffs;
};

namespace {

constexpr uint32_t COEFF_ONE = 0, COEFF_MINUS_ONE = 1;
constexpr uint64_t ALIGN = 256;

uint64_t aligned(uint64_t bytes) { return (bytes + ALIGN - 1) & ~(ALIGN - 1); }

// The allocation's size: per matrix its row pointers, columns and
// coefficient indices, then the table; each part 256-byte aligned.
uint64_t layout_bytes(uint64_t rows, const uint64_t nnz[3], uint64_t num_coeffs) {
    uint64_t total = 0;
    for (int m = 0; m < 3; m++) total += aligned(4 * (rows + 1)) + 2 * aligned(4 * nnz[m]);
    return total + aligned(sizeof(fr_t) * num_coeffs);
}

// Rows longer than this are summed by the whole warp.
constexpr uint32_t LONG_ROW = 32;
constexpr unsigned FULL_WARP = 0xffffffffu;

// acc += entry k of a row (its coefficient times its column's z).
__device__ __forceinline__ void add_entry(fr_t &acc, const uint32_t *__restrict__ cols,
                                          const uint32_t *__restrict__ coeff_idx, const fr_t *__restrict__ coeffs,
                                          const fr_t *__restrict__ z, uint32_t k) {
    const fr_t v = cuzk::ldg_fr(z + __ldg(cols + k));
    const uint32_t ci = __ldg(coeff_idx + k);
    if (ci == COEFF_ONE)
        acc += v;
    else if (ci == COEFF_MINUS_ONE)
        acc -= v;
    else
        acc += v * cuzk::ldg_fr(coeffs + ci);
}

// The sum of x over the warp's lanes, in every lane.
__device__ __forceinline__ fr_t warp_sum(fr_t x) {
    for (int lanes = 16; lanes > 0; lanes >>= 1) {
        fr_t y;
#pragma unroll
        for (int j = 0; j < 8; j++) y.v[j] = __shfl_xor_sync(FULL_WARP, x.v[j], lanes);
        x += y;
    }
    return x;
}

// out[r] = row r of the matrix times z for r < rows; 0 for rows <= r < len
// (the H term's zero padding). The row pointers are offsets into cols and
// coeff_idx plus `base` (0 for a whole matrix; a chunk's first offset for a
// chunk of rows whose entries start at cols[0]). Each warp takes 32
// consecutive rows at a time (blocks of a multiple of 32 threads): lane i
// walks row i if it is short; the long ones are walked by all lanes.
__global__ void spmv_kernel(const uint32_t *__restrict__ row_ptr, const uint32_t *__restrict__ cols,
                            const uint32_t *__restrict__ coeff_idx, const fr_t *__restrict__ coeffs,
                            const fr_t *__restrict__ z, uint32_t base, uint64_t rows, fr_t *__restrict__ out,
                            uint64_t len) {
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    // r0 is the same in every lane of a warp: the loop and the shuffles
    // inside it are warp-uniform.
    for (uint64_t r0 = blockIdx.x * (uint64_t)blockDim.x + (threadIdx.x - lane); r0 < len; r0 += stride) {
        const uint64_t r = r0 + lane;
        uint32_t begin = 0, end = 0;
        if (r < rows) {
            begin = __ldg(row_ptr + r) - base;
            end = __ldg(row_ptr + r + 1) - base;
        }
        const bool long_row = end - begin > LONG_ROW;
        fr_t acc = fr_t::zero();
        if (!long_row)
            for (uint32_t k = begin; k < end; k++) add_entry(acc, cols, coeff_idx, coeffs, z, k);
        for (uint32_t longs = __ballot_sync(FULL_WARP, long_row); longs; longs &= longs - 1) {
            const int owner = __ffs(longs) - 1;
            const uint32_t b = __shfl_sync(FULL_WARP, begin, owner), e = __shfl_sync(FULL_WARP, end, owner);
            fr_t part = fr_t::zero();
            for (uint32_t k = b + lane; k < e; k += 32) add_entry(part, cols, coeff_idx, coeffs, z, k);
            part = warp_sum(part);
            if ((int)lane == owner) acc = part;
        }
        if (r < len) cuzk::store_fr(out + r, acc);
    }
}

uint32_t grid_for(uint64_t n, int sms) {
    const uint64_t blocks = (n + 255) / 256, cap = (uint64_t)sms * 64;
    return (uint32_t)(blocks < cap ? (blocks ? blocks : 1) : cap);
}

// Staging bytes a chunk of `rows` rows with `nnz` entries takes: its row
// pointers (rows + 1), columns and coefficient indices, each aligned.
uint64_t chunk_bytes(uint64_t rows, uint64_t nnz) { return aligned(4 * (rows + 1)) + 2 * aligned(4 * nnz); }

// The copy stream and the events of one streamed evaluation, released on
// every way out (the device finishes what was enqueued with them first).
struct streamed_resources {
    cudaStream_t copy = nullptr;
    cudaEvent_t copied[2] = {nullptr, nullptr}, consumed[2] = {nullptr, nullptr};
    ~streamed_resources() {
        for (auto e : copied)
            if (e) cudaEventDestroy(e);
        for (auto e : consumed)
            if (e) cudaEventDestroy(e);
        if (copy) cudaStreamDestroy(copy);
    }
};

}  // namespace

extern "C" int32_t cuzk_spmv_device_bytes(uint64_t rows, const uint64_t *nnz, uint64_t num_coeffs, uint64_t *bytes,
                                          cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(nnz && bytes, "nnz or bytes is null");
    *bytes = layout_bytes(rows, nnz, num_coeffs);
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_spmv_create(int32_t ordinal, const cuzk_spmv_matrix *matrices, uint64_t rows,
                                    uint64_t num_vars, const void *coeffs, uint64_t num_coeffs, cuzk_spmv **out,
                                    cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(matrices && coeffs && out, "null matrices, coefficients or out");
    *out = nullptr;
    CUZK_REQUIRE(num_coeffs >= 2, "the coefficient table has %llu entries (1 and -1 come first)",
                 (unsigned long long)num_coeffs);
    CUZK_REQUIRE(rows < (1ull << 32) && num_vars < (1ull << 32), "%llu rows, %llu variables: at most 2^32 - 1 each",
                 (unsigned long long)rows, (unsigned long long)num_vars);
    uint64_t nnz[3];
    for (int m = 0; m < 3; m++) {
        const cuzk_spmv_matrix &x = matrices[m];
        CUZK_REQUIRE(x.row_ptr && (x.nnz == 0 || (x.cols && x.coeff_idx)), "matrix %d: null arrays", m);
        CUZK_REQUIRE(x.nnz < (1ull << 32), "matrix %d: %llu entries (at most 2^32 - 1)", m,
                     (unsigned long long)x.nnz);
        nnz[m] = x.nnz;
    }
    CUZK_CUDA(cudaSetDevice(ordinal));
    cuzk_spmv h{};
    h.device = ordinal;
    h.rows = rows, h.num_vars = num_vars, h.num_coeffs = num_coeffs;
    h.bytes = layout_bytes(rows, nnz, num_coeffs);
    CUZK_CUDA(cuzk::device_malloc(&h.base, h.bytes));
    // Freed on every way out but success.
    struct guard {
        char *p;
        ~guard() {
            if (p) cudaFree(p);
        }
    } g{h.base};
    cudaStream_t s = nullptr;
    CUZK_CUDA(cuzk::stream_create(&s));
    struct stream_guard {
        cudaStream_t s;
        ~stream_guard() { cudaStreamDestroy(s); }
    } sg{s};
    char *p = h.base;
    auto put = [&](uint64_t bytes) -> char * {
        char *at = p;
        p += aligned(bytes);
        return at;
    };
    for (int m = 0; m < 3; m++) {
        const cuzk_spmv_matrix &x = matrices[m];
        h.nnz[m] = nnz[m];
        char *rp = put(4 * (rows + 1)), *cl = put(4 * nnz[m]), *ci = put(4 * nnz[m]);
        CUZK_TRY(cuzk::upload_to_device(rp, x.row_ptr, 4 * (rows + 1), s, err));
        if (nnz[m]) {
            CUZK_TRY(cuzk::upload_to_device(cl, x.cols, 4 * nnz[m], s, err));
            CUZK_TRY(cuzk::upload_to_device(ci, x.coeff_idx, 4 * nnz[m], s, err));
        }
        h.row_ptr[m] = (const uint32_t *)rp, h.cols[m] = (const uint32_t *)cl, h.coeff_idx[m] = (const uint32_t *)ci;
    }
    char *tc = put(sizeof(fr_t) * num_coeffs);
    CUZK_TRY(cuzk::upload_to_device(tc, coeffs, sizeof(fr_t) * num_coeffs, s, err));
    h.coeffs = (const fr_t *)tc;
    CUZK_CUDA(cudaStreamSynchronize(s));
    *out = new cuzk_spmv(h);
    g.p = nullptr;
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_spmv_destroy(cuzk_spmv *h, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    if (!h) return cuzk::ok(err);
    CUZK_CUDA(cudaSetDevice(h->device));
    const cudaError_t e = cudaFree(h->base);
    delete h;
    CUZK_CUDA(e);
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_spmv_bytes(const cuzk_spmv *h, uint64_t *bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(h && bytes, "null handle or bytes");
    *bytes = h->bytes;
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_spmv_evaluate(const cuzk_spmv *h, cuzk_stream *stream, const void *d_z, uint64_t z_len,
                                      void *d_a, void *d_b, void *d_c, uint64_t out_len, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(h && stream, "null handle or stream");
    CUZK_REQUIRE(stream->device == h->device, "stream on device %d, matrices on device %d", stream->device, h->device);
    CUZK_REQUIRE(z_len == h->num_vars, "z has %llu elements, the matrices %llu columns", (unsigned long long)z_len,
                 (unsigned long long)h->num_vars);
    CUZK_REQUIRE(out_len >= h->rows, "outputs of %llu elements for %llu rows", (unsigned long long)out_len,
                 (unsigned long long)h->rows);
    CUZK_REQUIRE(d_a && d_b && d_c && (d_z || z_len == 0), "null z or output");
    CUZK_REQUIRE(d_a != d_b && d_b != d_c && d_a != d_c, "the outputs must be distinct buffers");
    if (out_len == 0) return cuzk::ok(err);
    CUZK_CUDA(cudaSetDevice(h->device));
    int sms = 0;
    CUZK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, h->device));
    void *outs[3] = {d_a, d_b, d_c};
    for (int m = 0; m < 3; m++) {
        spmv_kernel<<<grid_for(out_len, sms), 256, 0, stream->stream>>>(h->row_ptr[m], h->cols[m], h->coeff_idx[m],
                                                                       h->coeffs, (const fr_t *)d_z, 0, h->rows,
                                                                       (fr_t *)outs[m], out_len);
        CUZK_LAUNCHED();
    }
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_spmv_streamed_staging_min(const cuzk_spmv_matrix *m, uint64_t rows, uint64_t *bytes,
                                                  cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(m && m->row_ptr && bytes, "null matrix or bytes");
    uint64_t longest = 0;
    for (uint64_t r = 0; r < rows; r++) longest = std::max<uint64_t>(longest, m->row_ptr[r + 1] - m->row_ptr[r]);
    *bytes = 2 * chunk_bytes(1, longest);
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_spmv_evaluate_streamed(cuzk_stream *stream, const cuzk_spmv_matrix *m, uint64_t rows,
                                               const void *d_coeffs, const void *d_z, void *d_out, uint64_t out_len,
                                               void *d_staging, uint64_t staging_bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stream && m && m->row_ptr && d_coeffs && d_out && d_staging, "null argument");
    CUZK_REQUIRE(m->nnz == 0 || (m->cols && m->coeff_idx && d_z), "matrix with entries but null arrays or z");
    CUZK_REQUIRE(rows < (1ull << 32) && m->nnz < (1ull << 32), "%llu rows, %llu entries: at most 2^32 - 1 each",
                 (unsigned long long)rows, (unsigned long long)m->nnz);
    CUZK_REQUIRE(out_len >= rows, "an output of %llu elements for %llu rows", (unsigned long long)out_len,
                 (unsigned long long)rows);
    CUZK_REQUIRE((uintptr_t)d_staging % ALIGN == 0, "the staging area is not %llu-byte aligned",
                 (unsigned long long)ALIGN);
    if (out_len == 0) return cuzk::ok(err);
    CUZK_CUDA(cudaSetDevice(stream->device));
    int sms = 0;
    CUZK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, stream->device));
    const uint32_t *rp = m->row_ptr;
    const uint64_t half = (staging_bytes / 2) & ~(ALIGN - 1);
    fr_t *out = static_cast<fr_t *>(d_out);
    streamed_resources res;
    CUZK_CUDA(cuzk::stream_create(&res.copy));
    for (int h = 0; h < 2; h++) {
        CUZK_CUDA(cudaEventCreateWithFlags(&res.copied[h], cudaEventDisableTiming));
        CUZK_CUDA(cudaEventCreateWithFlags(&res.consumed[h], cudaEventDisableTiming));
        // The first copies into the staging wait for whatever `stream` did
        // with it before.
        CUZK_CUDA(cudaEventRecord(res.consumed[h], stream->stream));
    }
    uint64_t r0 = 0;
    for (int i = 0; r0 < rows; i++) {
        const uint64_t first = rp[r0];
        auto fits = [&](uint64_t r1) { return chunk_bytes(r1 - r0, rp[r1] - first) <= half; };
        CUZK_REQUIRE(fits(r0 + 1), "row %llu has %u entries: more than half of %llu staging bytes hold",
                     (unsigned long long)r0, rp[r0 + 1] - rp[r0], (unsigned long long)staging_bytes);
        // The most rows from r0 on that fit half of the staging.
        uint64_t lo = r0 + 1, hi = rows;
        while (lo < hi) {
            const uint64_t mid = lo + (hi - lo + 1) / 2;
            if (fits(mid))
                lo = mid;
            else
                hi = mid - 1;
        }
        const uint64_t r1 = lo, n = r1 - r0, nnz = rp[r1] - first;
        const int h = i & 1;
        char *at = static_cast<char *>(d_staging) + h * half;
        char *d_rp = at, *d_cols = at + aligned(4 * (n + 1)), *d_idx = d_cols + aligned(4 * nnz);
        // Half h is free once the products of the chunk before last are done.
        CUZK_CUDA(cudaStreamWaitEvent(res.copy, res.consumed[h], 0));
        CUZK_TRY(cuzk::upload_to_device(d_rp, rp + r0, 4 * (n + 1), res.copy, err));
        if (nnz) {
            CUZK_TRY(cuzk::upload_to_device(d_cols, m->cols + first, 4 * nnz, res.copy, err));
            CUZK_TRY(cuzk::upload_to_device(d_idx, m->coeff_idx + first, 4 * nnz, res.copy, err));
        }
        CUZK_CUDA(cudaEventRecord(res.copied[h], res.copy));
        CUZK_CUDA(cudaStreamWaitEvent(stream->stream, res.copied[h], 0));
        spmv_kernel<<<grid_for(n, sms), 256, 0, stream->stream>>>(
            (const uint32_t *)d_rp, (const uint32_t *)d_cols, (const uint32_t *)d_idx, (const fr_t *)d_coeffs,
            (const fr_t *)d_z, (uint32_t)first, n, out + r0, n);
        CUZK_LAUNCHED();
        CUZK_CUDA(cudaEventRecord(res.consumed[h], stream->stream));
        r0 = r1;
    }
    if (out_len > rows) CUZK_CUDA(cudaMemsetAsync(out + rows, 0, (out_len - rows) * sizeof(fr_t), stream->stream));
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

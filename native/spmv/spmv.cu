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
// One thread per row: rows are short (a handful of entries on Filecoin
// circuits), so a thread's sequential walk over its entries costs less than
// a warp's reduction would. Coefficient 0 (1) and 1 (−1) of the table are
// additions, which most entries are; any other is one multiplication. The
// field operations give fully reduced values, so the bytes equal the CPU
// SpMV's (pce/spmv.rs) whatever the order of the terms.
#include "../device/handles.cuh"
#include "../device/upload.cuh"
#include "../error.cuh"
#include "../ff/fr.cuh"

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

// out[r] = row r of the matrix times z for r < rows; 0 for rows <= r < len
// (the H term's zero padding).
__global__ void spmv_kernel(const uint32_t *__restrict__ row_ptr, const uint32_t *__restrict__ cols,
                            const uint32_t *__restrict__ coeff_idx, const fr_t *__restrict__ coeffs,
                            const fr_t *__restrict__ z, uint64_t rows, fr_t *__restrict__ out, uint64_t len) {
    for (uint64_t r = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; r < len;
         r += (uint64_t)gridDim.x * blockDim.x) {
        fr_t acc = fr_t::zero();
        if (r < rows) {
            const uint32_t end = __ldg(row_ptr + r + 1);
            for (uint32_t k = __ldg(row_ptr + r); k < end; k++) {
                const fr_t v = cuzk::ldg_fr(z + __ldg(cols + k));
                const uint32_t ci = __ldg(coeff_idx + k);
                if (ci == COEFF_ONE)
                    acc += v;
                else if (ci == COEFF_MINUS_ONE)
                    acc -= v;
                else
                    acc += v * cuzk::ldg_fr(coeffs + ci);
            }
        }
        cuzk::store_fr(out + r, acc);
    }
}

uint32_t grid_for(uint64_t n, int sms) {
    const uint64_t blocks = (n + 255) / 256, cap = (uint64_t)sms * 64;
    return (uint32_t)(blocks < cap ? (blocks ? blocks : 1) : cap);
}

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
    CUZK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
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
                                                                       h->coeffs, (const fr_t *)d_z, h->rows,
                                                                       (fr_t *)outs[m], out_len);
        CUZK_LAUNCHED();
    }
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

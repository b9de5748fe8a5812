// Test and bench entry for the two Fp multiplications (fp_t on the integer
// pipe, fp_f64_t on the FP64 pipe, mont_f64.cuh): every thread runs
// `int_chains` + `f64_chains` independent chains x <- x * y of `iters`
// dependent multiplications, so one launch measures either multiplication's
// throughput alone or both side by side (whether the two pipes overlap),
// and the chains' ends check the FP64 one against the integer one.
#include "../error.cuh"
#include "fp.cuh"
#include "mont_f64.cuh"

namespace {

using namespace cuzk;

// Out of line, as the MSM calls fp_t's multiplication.
__device__ __noinline__ fp_f64_t mul_f64_outlined(fp_f64_t a, fp_f64_t b) { return fp_f64_t::mul(a, b); }

// Chain c starts at a[(i + c) mod n] and multiplies by b[i]; its end goes to
// out[c n + i], integer chains first.
template <int NI, int NF>
__device__ __forceinline__ void chains(const fp_t *a, const fp_t *b, fp_t *out, uint32_t iters, uint64_t n) {
    const uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const fp_t y = b[i];
    const fp_f64_t yf = fp_f64_t::of_words(y.v);
    fp_t xi[NI > 0 ? NI : 1];
    fp_f64_t xf[NF > 0 ? NF : 1];
#pragma unroll
    for (int c = 0; c < NI; c++) xi[c] = a[(i + c) % n];
#pragma unroll
    for (int c = 0; c < NF; c++) xf[c] = fp_f64_t::of_words(a[(i + NI + c) % n].v);
    for (uint32_t it = 0; it < iters; it++) {
#pragma unroll
        for (int c = 0; c < NI; c++) xi[c] = xi[c] * y;
#pragma unroll
        for (int c = 0; c < NF; c++) xf[c] = mul_f64_outlined(xf[c], yf);
    }
#pragma unroll
    for (int c = 0; c < NI; c++) out[c * n + i] = xi[c];
#pragma unroll
    for (int c = 0; c < NF; c++) xf[c].to_words(out[(NI + c) * n + i].v);
}

template <int NI, int NF>
__global__ void chains_kernel(const fp_t *a, const fp_t *b, fp_t *out, uint32_t iters, uint64_t n) {
    chains<NI, NF>(a, b, out, iters, n);
}

// The same bounded to 128 registers per thread (4 blocks of 128 per SM),
// as the MSM's first accumulation pass is: how much occupancy is worth.
template <int NI, int NF>
__global__ void __launch_bounds__(128, 4)
    chains_kernel_bounded(const fp_t *a, const fp_t *b, fp_t *out, uint32_t iters, uint64_t n) {
    chains<NI, NF>(a, b, out, iters, n);
}

template <int NI, int NF>
void launch(const fp_t *a, const fp_t *b, fp_t *out, uint32_t iters, uint64_t n, uint32_t threads, bool bounded) {
    const unsigned blocks = (unsigned)((n + threads - 1) / threads);
    if (bounded)
        chains_kernel_bounded<NI, NF><<<blocks, threads>>>(a, b, out, iters, n);
    else
        chains_kernel<NI, NF><<<blocks, threads>>>(a, b, out, iters, n);
}

}  // namespace

extern "C" int32_t cuzk_test_fp_mul_chains(int32_t ordinal, uint32_t int_chains, uint32_t f64_chains,
                                           const void *a, const void *b, void *out, uint64_t n, uint32_t iters,
                                           uint32_t threads, uint32_t bounded, float *ms, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(a && b && out && ms, "null buffer");
    CUZK_REQUIRE(int_chains <= 2 && f64_chains <= 2 && int_chains + f64_chains > 0,
                 "chains: 0-2 of each kind, at least one (got %u integer, %u FP64)", int_chains, f64_chains);
    CUZK_REQUIRE(threads > 0 && threads <= 1024, "threads per block %u not in 1..1024", threads);
    CUZK_REQUIRE(!bounded || threads <= 128, "the bounded kernels take at most 128 threads per block, not %u", threads);
    CUZK_REQUIRE(n > 0, "no elements");
    const uint64_t chains = int_chains + f64_chains, bytes = n * sizeof(fp_t);
    CUZK_CUDA(cudaSetDevice(ordinal));
    fp_t *d = nullptr;
    CUZK_CUDA(cudaMalloc(&d, (2 + chains) * bytes));
    cudaEvent_t ev[2] = {nullptr, nullptr};
    int32_t rc = [&]() -> int32_t {
        CUZK_CUDA(cudaMemcpy(d, a, bytes, cudaMemcpyHostToDevice));
        CUZK_CUDA(cudaMemcpy(d + n, b, bytes, cudaMemcpyHostToDevice));
        CUZK_CUDA(cudaEventCreate(&ev[0]));
        CUZK_CUDA(cudaEventCreate(&ev[1]));
        CUZK_CUDA(cudaEventRecord(ev[0]));
        fp_t *o = d + 2 * n;
        switch (int_chains * 3 + f64_chains) {
            case 1: launch<0, 1>(d, d + n, o, iters, n, threads, bounded != 0); break;
            case 2: launch<0, 2>(d, d + n, o, iters, n, threads, bounded != 0); break;
            case 3: launch<1, 0>(d, d + n, o, iters, n, threads, bounded != 0); break;
            case 4: launch<1, 1>(d, d + n, o, iters, n, threads, bounded != 0); break;
            case 5: launch<1, 2>(d, d + n, o, iters, n, threads, bounded != 0); break;
            case 6: launch<2, 0>(d, d + n, o, iters, n, threads, bounded != 0); break;
            case 7: launch<2, 1>(d, d + n, o, iters, n, threads, bounded != 0); break;
            case 8: launch<2, 2>(d, d + n, o, iters, n, threads, bounded != 0); break;
        }
        CUZK_LAUNCHED();
        CUZK_CUDA(cudaEventRecord(ev[1]));
        CUZK_CUDA(cudaEventSynchronize(ev[1]));
        CUZK_CUDA(cudaEventElapsedTime(ms, ev[0], ev[1]));
        CUZK_CUDA(cudaMemcpy(out, o, chains * bytes, cudaMemcpyDeviceToHost));
        return CUZK_OK;
    }();
    for (cudaEvent_t e : ev)
        if (e) cudaEventDestroy(e);
    cudaError_t e = cudaFree(d);
    if (rc != CUZK_OK) return rc;
    CUZK_CUDA(e);
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_test_fp_mul_f64_emulated(const void *a, const void *b, void *out, uint64_t n,
                                                 cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(a && b && out, "null buffer");
    const uint32_t *x = static_cast<const uint32_t *>(a), *y = static_cast<const uint32_t *>(b);
    uint32_t *r = static_cast<uint32_t *>(out);
    for (uint64_t i = 0; i < n; i++)
        fp_f64_t::mul(fp_f64_t::of_words(x + 12 * i), fp_f64_t::of_words(y + 12 * i)).to_words(r + 12 * i);
    return ok(err);
    CUZK_ENTRY_END
}

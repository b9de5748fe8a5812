// From buckets to the MSM result.
//
// Window w's sum is sum_j (j + 1) B_j over its buckets. S threads per window
// each take L consecutive buckets [s L, s L + L) and run the classic running
// sum from the top (running += B_j; acc += running), which yields
// sum_j (j - s L + 1) B_j; adding (s L) * (sum of the slice) corrects the
// offset. Then one block per window sums its S slices, and one thread
// combines the windows by Horner's rule: acc = 2^c acc + W_w, top down.
#pragma once

#include "../ec/point.cuh"

namespace cuzk {

template <class F>
__global__ void bucket_slices(const xyzz_t<F> *buckets, uint32_t buckets_per_window, uint32_t nwin,
                              uint32_t slices, xyzz_t<F> *out) {
    uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= nwin * slices) return;
    uint32_t w = tid / slices, s = tid % slices;
    uint32_t len = buckets_per_window / slices;
    const xyzz_t<F> *b = buckets + (uint64_t)w * buckets_per_window + (uint64_t)s * len;
    xyzz_t<F> running = xyzz_t<F>::inf(), acc = xyzz_t<F>::inf();
    for (uint32_t j = len; j-- > 0;) {
        running.add(b[j]);
        acc.add(running);
    }
    if (s > 0) acc.add(running.mul_small(s * len));
    out[tid] = acc;
}

// out[g] = sum of in[g * per, g * per + per); one block per group.
template <class F>
__global__ void sum_groups(const xyzz_t<F> *in, uint32_t per, xyzz_t<F> *out) {
    extern __shared__ unsigned char shared_raw[];
    xyzz_t<F> *sh = reinterpret_cast<xyzz_t<F> *>(shared_raw);
    const xyzz_t<F> *g = in + (uint64_t)blockIdx.x * per;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (uint32_t i = threadIdx.x; i < per; i += blockDim.x) acc.add(g[i]);
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (uint32_t half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            xyzz_t<F> a = sh[threadIdx.x];
            a.add(sh[threadIdx.x + half]);
            sh[threadIdx.x] = a;
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}

// The window sums themselves as blst's Jacobian, one thread each (the
// caller combines them: CUZK_MSM_WINDOW_SUMS).
template <class F>
__global__ void windows_to_jacobian(const xyzz_t<F> *windows, uint32_t nwin, jacobian_t<F> *out) {
    const uint32_t w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w < nwin) out[w] = windows[w].to_jacobian();
}

// One thread: result = sum_w 2^(c w) windows[w], as blst's Jacobian.
template <class F>
__global__ void combine_windows(const xyzz_t<F> *windows, uint32_t nwin, uint32_t c, jacobian_t<F> *out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    xyzz_t<F> acc = windows[nwin - 1];
    for (uint32_t w = nwin - 1; w-- > 0;) {
        for (uint32_t i = 0; i < c; i++) acc.dbl();
        acc.add(windows[w]);
    }
    *out = acc.to_jacobian();
}

}  // namespace cuzk

// The Pippenger driver (host side), one template for G1 and G2:
//
//   per chunk of at most `chunk` points (bounded VRAM; buckets persist, so
//   chunking changes nothing in the result):
//     upload points and scalars unless they are already on the device
//     scalars_to_digits   an entry (key, point index | sign) per non-zero
//                         digit, compacted (0/1 scalars: 0 or 1 entries)
//     radix sort by key   (CUB, the CUDA toolkit's own; all windows at once)
//     accumulate_runs     equal slices of entries, then the partial slots
//   bucket_slices, sum_groups, combine_windows  -> blst Jacobian point
//
// Every CUDA call is checked; device memory is released on every path.
#pragma once

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>

#include "../error.cuh"
#include "../ec/point.cuh"
#include "accumulate.cuh"
#include "digits.cuh"
#include "reduce.cuh"

namespace cuzk {

// Device memory owned by one MSM call.
class msm_buffer {
   public:
    msm_buffer() = default;
    msm_buffer(const msm_buffer &) = delete;
    msm_buffer &operator=(const msm_buffer &) = delete;
    ~msm_buffer() {
        if (ptr_) cudaFree(ptr_);
    }
    int32_t alloc(size_t bytes, cuzk_error *err) {
        CUZK_CUDA(cudaMalloc(&ptr_, bytes ? bytes : 1));
        return CUZK_OK;
    }
    template <class T>
    T *as() const {
        return static_cast<T *>(ptr_);
    }

   private:
    void *ptr_ = nullptr;
};

struct msm_stream {
    cudaStream_t s = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    ~msm_stream() {
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        if (s) cudaStreamDestroy(s);
    }
};

// Window size from n: minimise nwin (n + 2^c), the additions into buckets
// plus about two additions per bucket to reduce them (c <= 20 keeps the
// buckets of a G2 MSM under 3 GB).
inline window_plan plan_windows(uint64_t n, uint32_t forced_c) {
    uint32_t best_c = 4;
    double best = INFINITY;
    for (uint32_t c = 4; c <= 20; c++) {
        uint32_t nwin = (256 + c - 1) / c;
        double cost = (double)nwin * ((double)n + (double)(1u << c));
        if (cost < best) best = cost, best_c = c;
    }
    window_plan p;
    p.c = forced_c ? forced_c : best_c;
    p.nwin = (256 + p.c - 1) / p.c;
    p.buckets = 1u << (p.c - 1);
    p.sentinel = p.nwin * p.buckets;
    p.key_bits = 32 - __builtin_clz(p.sentinel);
    return p;
}

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

template <class F>
int32_t pippenger(int32_t ordinal, const affine_t<F> *points, bool points_on_device, const fr_t *scalars,
                  bool scalars_on_device, uint64_t n, const cuzk_msm_options *opts, jacobian_t<F> *out,
                  cuzk_msm_stats *stats, cuzk_error *err) {
    using xyzz = xyzz_t<F>;
    const uint32_t forced_c = opts ? opts->window_bits : 0;
    CUZK_REQUIRE(forced_c == 0 || (forced_c >= 2 && forced_c <= 24), "window_bits %u outside 2..24", forced_c);
    CUZK_REQUIRE(n < (1ull << 31), "n = %llu: at most 2^31 - 1 points", (unsigned long long)n);
    CUZK_REQUIRE(out && (n == 0 || (points && scalars)), "null argument");
    const window_plan plan = plan_windows(n, forced_c);
    if (stats) *stats = cuzk_msm_stats{0.0f, plan.c, 0};
    if (n == 0) {
        memset(out, 0, sizeof(*out));  // the identity (Z = 0)
        return ok(err);
    }

    CUZK_CUDA(cudaSetDevice(ordinal));
    int sms = 0;
    CUZK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));

    // Chunk: at most 2^29 sort entries (8 GiB of keys and values, double
    // buffered) unless the caller asks for smaller chunks.
    uint64_t chunk = std::max<uint64_t>(1, (1ull << 29) / plan.nwin);
    if (opts && opts->max_chunk_points) chunk = std::min<uint64_t>(chunk, opts->max_chunk_points);
    chunk = std::min(chunk, n);
    const uint64_t max_e = chunk * plan.nwin;

    // Threads of the first accumulation pass: enough to fill every SM.
    constexpr int BLOCK = 128;
    int blocks_per_sm = 0;
    CUZK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks_per_sm, accumulate_runs<F, point_entries<F>>, BLOCK, 0));
    const uint64_t t_target = (uint64_t)sms * std::max(blocks_per_sm, 1) * BLOCK;

    msm_stream st;
    CUZK_CUDA(cudaStreamCreateWithFlags(&st.s, cudaStreamNonBlocking));
    CUZK_CUDA(cudaEventCreate(&st.start));
    CUZK_CUDA(cudaEventCreate(&st.stop));
    cudaStream_t s = st.s;

    msm_buffer d_points, d_scalars, keys[2], vals[2], sort_tmp, d_count, buckets, part_keys[2], part_sums[2],
        slices, windows, d_out;
    if (!points_on_device) CUZK_TRY(d_points.alloc(chunk * sizeof(affine_t<F>), err));
    if (!scalars_on_device) CUZK_TRY(d_scalars.alloc(chunk * sizeof(fr_t), err));
    for (int i = 0; i < 2; i++) {
        CUZK_TRY(keys[i].alloc(max_e * 4, err));
        CUZK_TRY(vals[i].alloc(max_e * 4, err));
        CUZK_TRY(part_keys[i].alloc(2 * t_target * 4, err));
        CUZK_TRY(part_sums[i].alloc(2 * t_target * sizeof(xyzz), err));
    }
    size_t tmp_bytes = 0;
    CUZK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, keys[0].as<uint32_t>(), keys[1].as<uint32_t>(),
                                              vals[0].as<uint32_t>(), vals[1].as<uint32_t>(), (int64_t)max_e, 0,
                                              (int)plan.key_bits, s));
    CUZK_TRY(sort_tmp.alloc(tmp_bytes, err));
    CUZK_TRY(d_count.alloc(sizeof(uint64_t), err));
    const uint64_t nbuckets = (uint64_t)plan.nwin * plan.buckets;
    CUZK_TRY(buckets.alloc(nbuckets * sizeof(xyzz), err));
    CUZK_TRY(d_out.alloc(sizeof(jacobian_t<F>), err));

    CUZK_CUDA(cudaEventRecord(st.start, s));
    CUZK_CUDA(cudaMemsetAsync(buckets.as<void>(), 0, nbuckets * sizeof(xyzz), s));  // all infinity

    uint32_t chunks = 0;
    for (uint64_t off = 0; off < n; off += chunk, chunks++) {
        const uint64_t m = std::min(chunk, n - off);
        const affine_t<F> *pts = points + off;
        const fr_t *scl = scalars + off;
        if (!points_on_device) {
            CUZK_CUDA(cudaMemcpyAsync(d_points.as<void>(), pts, m * sizeof(affine_t<F>), cudaMemcpyHostToDevice, s));
            pts = d_points.as<affine_t<F>>();
        }
        if (!scalars_on_device) {
            CUZK_CUDA(cudaMemcpyAsync(d_scalars.as<void>(), scl, m * sizeof(fr_t), cudaMemcpyHostToDevice, s));
            scl = d_scalars.as<fr_t>();
        }
        // Non-zero digits only (0/1 scalars give 0 or 1 entries), then the
        // sort of just those.
        CUZK_CUDA(cudaMemsetAsync(d_count.as<void>(), 0, sizeof(uint64_t), s));
        scalars_to_digits<<<(unsigned)ceil_div(m, 256), 256, 0, s>>>(
            scl, m, plan, keys[0].as<uint32_t>(), vals[0].as<uint32_t>(), d_count.as<unsigned long long>());
        CUZK_LAUNCHED();
        uint64_t valid = 0;
        CUZK_CUDA(cudaMemcpyAsync(&valid, d_count.as<void>(), sizeof(valid), cudaMemcpyDeviceToHost, s));
        CUZK_CUDA(cudaStreamSynchronize(s));
        if (valid == 0) continue;
        CUZK_CUDA(cub::DeviceRadixSort::SortPairs(sort_tmp.as<void>(), tmp_bytes, keys[0].as<uint32_t>(),
                                                  keys[1].as<uint32_t>(), vals[0].as<uint32_t>(),
                                                  vals[1].as<uint32_t>(), (int64_t)valid, 0, (int)plan.key_bits, s));

        // First pass over the sorted entries, then the partial slots.
        uint64_t k = std::max<uint64_t>(1, ceil_div(valid, t_target));
        uint64_t threads = ceil_div(valid, k);
        accumulate_runs<F, point_entries<F>><<<(unsigned)ceil_div(threads, BLOCK), BLOCK, 0, s>>>(
            keys[1].as<uint32_t>(), point_entries<F>{vals[1].as<uint32_t>(), pts}, valid, k, threads,
            buckets.as<xyzz>(), part_keys[0].as<uint32_t>(), part_sums[0].as<xyzz>());
        CUZK_LAUNCHED();
        int cur = 0;
        while (threads > 1) {
            const uint64_t pe = 2 * threads;
            k = 8;
            threads = ceil_div(pe, k);
            accumulate_runs<F, partial_entries<F>><<<(unsigned)ceil_div(threads, BLOCK), BLOCK, 0, s>>>(
                part_keys[cur].as<uint32_t>(), partial_entries<F>{part_sums[cur].as<xyzz>()}, pe, k, threads,
                buckets.as<xyzz>(), part_keys[cur ^ 1].as<uint32_t>(), part_sums[cur ^ 1].as<xyzz>());
            CUZK_LAUNCHED();
            cur ^= 1;
        }
    }

    // Buckets -> windows -> result.
    const uint64_t t_red = (uint64_t)sms * 256;
    uint32_t nslices = 1;
    while (nslices * 2 <= plan.buckets && (uint64_t)plan.nwin * nslices * 2 <= t_red) nslices *= 2;
    CUZK_TRY(slices.alloc((uint64_t)plan.nwin * nslices * sizeof(xyzz), err));
    CUZK_TRY(windows.alloc(plan.nwin * sizeof(xyzz), err));
    const uint32_t total = plan.nwin * nslices;
    bucket_slices<F><<<(total + 63) / 64, 64, 0, s>>>(buckets.as<xyzz>(), plan.buckets, plan.nwin, nslices,
                                                      slices.as<xyzz>());
    CUZK_LAUNCHED();
    constexpr int SUM_THREADS = 64;
    sum_groups<F><<<plan.nwin, SUM_THREADS, SUM_THREADS * sizeof(xyzz), s>>>(slices.as<xyzz>(), nslices,
                                                                            windows.as<xyzz>());
    CUZK_LAUNCHED();
    combine_windows<F><<<1, 1, 0, s>>>(windows.as<xyzz>(), plan.nwin, plan.c, d_out.as<jacobian_t<F>>());
    CUZK_LAUNCHED();
    CUZK_CUDA(cudaEventRecord(st.stop, s));
    CUZK_CUDA(cudaMemcpyAsync(out, d_out.as<void>(), sizeof(*out), cudaMemcpyDeviceToHost, s));
    CUZK_CUDA(cudaStreamSynchronize(s));
    if (stats) {
        CUZK_CUDA(cudaEventElapsedTime(&stats->device_ms, st.start, st.stop));
        stats->chunks = chunks;
    }
    return ok(err);
}

}  // namespace cuzk

// The Pippenger driver (host side), one template for G1 and G2:
//
//   per chunk of at most `chunk` points (bounded VRAM; buckets persist, so
//   chunking changes nothing in the result):
//     points and scalars not on the device come through chunk_stager.cuh
//     (two staging buffers when chunked: the next chunk uploads meanwhile)
//     per group of windows (at most 2^29 sort entries):
//       scalars_to_digits   an entry (key, point index | sign) per non-zero
//                           digit, compacted (0/1 scalars: 0 or 1 entries)
//       radix sort by key   (CUB, the CUDA toolkit's own)
//       accumulate_runs     equal slices of entries, then the partial slots
//   bucket_slices, sum_groups, combine_windows  -> blst Jacobian point
//   (or, with window_sums, each window's sum: the caller combines them)
//
// The first chunk stores each bucket's sum (every bucket has one writer),
// later chunks add to it: an addition at the end of each run stalls the
// other 31 threads of a warp, which with short runs (large windows) cost
// as much as the accumulation itself.
//
// A batch is `sets` MSMs over the same points (one SRS query, the
// circuits of a batch): each set has its own buckets, and each chunk of
// points is uploaded once and then run against every set's scalars, so a
// host-resident SRS crosses PCIe once per batch instead of once per
// circuit.
//
// Every CUDA call is checked; device memory is released on every path.
#pragma once

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "../ec/point.cuh"
#include "../error.cuh"
#include "accumulate.cuh"
#include "buffer.cuh"
#include "chunk_stager.cuh"
#include "digits.cuh"
#include "reduce.cuh"

namespace cuzk {

struct msm_stream {
    cudaStream_t s = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    cudaEvent_t phase[4] = {nullptr, nullptr, nullptr, nullptr};  // per-phase timing
    ~msm_stream() {
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        for (cudaEvent_t e : phase)
            if (e) cudaEventDestroy(e);
        if (s) cudaStreamDestroy(s);
    }
};

inline int32_t add_elapsed(float &total, cudaEvent_t a, cudaEvent_t b, cuzk_error *err) {
    float ms = 0;
    CUZK_CUDA(cudaEventElapsedTime(&ms, a, b));
    total += ms;
    return CUZK_OK;
}

// The first accumulation pass (over SRS points: nearly all of an MSM's
// additions) with its register bound: MIN_BLOCKS blocks of ACC_BLOCK
// threads per SM, point operations inlined when MIN_BLOCKS > 1. G1 runs
// with 4, G2 with 2 (the best of 1-4 and 1-3 measured, docs/BENCHMARKS.md;
// 5 and more cannot build: the out-of-line Fp multiplication needs 100
// registers). CUZK_MSM_ACC_MIN_BLOCKS / CUZK_MSM_G2_ACC_MIN_BLOCKS = 1
// pick the unbounded call-based build, for benchmarks.
template <class F>
struct first_pass {
    void (*kernel)(const uint32_t *, point_entries<F>, uint64_t, uint64_t, uint64_t, xyzz_t<F> *, bool,
                   uint32_t *, xyzz_t<F> *);
    uint32_t min_blocks;
};

template <class F, int B>
constexpr first_pass<F> first_pass_of() {
    return {accumulate_runs<F, point_entries<F>, B>, B};
}

template <class F>
inline first_pass<F> pick_first_pass() {
    constexpr bool g1 = sizeof(F) == 48;
    const char *v = getenv(g1 ? "CUZK_MSM_ACC_MIN_BLOCKS" : "CUZK_MSM_G2_ACC_MIN_BLOCKS");
    if (v && atoi(v) == 1) return first_pass_of<F, 1>();
    return first_pass_of<F, g1 ? 4 : 2>();
}

// Window size from n and the number of chunks: minimise
// nwin (n + 2^c (1 + 4 (chunks - 1))), the additions into buckets plus about
// two additions per bucket to reduce them, plus, for every chunk after the
// first, one addition into each bucket from global memory (which also
// stalls its warp: measured ~4x the rest). c <= 20 keeps the buckets of a
// G2 MSM under 3 GB.
inline window_plan plan_windows(uint64_t n, uint64_t chunks, uint32_t forced_c) {
    uint32_t best_c = 4;
    double best = INFINITY;
    const double per_bucket = 1.0 + 4.0 * (double)(chunks > 0 ? chunks - 1 : 0);
    for (uint32_t c = 4; c <= 20; c++) {
        uint32_t nwin = (256 + c - 1) / c;
        double cost = (double)nwin * ((double)n + per_bucket * (double)(1u << c));
        if (cost < best) best = cost, best_c = c;
    }
    window_plan p;
    p.c = forced_c ? forced_c : best_c;
    p.nwin = (256 + p.c - 1) / p.c;
    p.buckets = 1u << (p.c - 1);
    return p;
}

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Everything one MSM call decides before it runs: windows, chunks, groups
// of windows, the first pass's thread count, and the device memory.
struct msm_plan {
    window_plan win;
    uint64_t chunk;       // points per chunk
    uint64_t chunks;      // ceil(n / chunk)
    uint32_t stages;      // staging buffers for host inputs (2 when chunked)
    uint32_t group_wins;  // windows per sort group
    uint64_t max_e;       // sort entries per group: chunk * group_wins
    uint32_t group_key_bits;
    uint64_t t_target;    // threads of the first accumulation pass
    uint32_t nslices;     // bucket-reduction slices per window
    uint32_t sets;        // scalar sets over the same points (a batch)
    // Bytes of each device buffer pippenger() allocates (keys, values and
    // the partial slots are double buffered; staging `stages` times;
    // staging_scalars is one set's, buckets and out cover every set).
    // (out holds every window of every set, for window_sums.)
    size_t staging_points, staging_scalars, keys, part_keys, part_sums, sort_tmp, buckets, slices, windows, out;

    // Their sum, each rounded up to the 2 MiB granularity in which the
    // device hands out memory (the count is 8 bytes).
    size_t device_bytes() const {
        auto r = [](size_t b) { return (b + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1); };
        return stages * (r(staging_points) + r(sets * staging_scalars)) + 4 * r(keys) + 2 * r(part_keys) + 2 * r(part_sums) +
               r(sort_tmp) + r(sizeof(uint64_t)) + r(buckets) + r(slices) + r(windows) + r(out);
    }
};

constexpr uint64_t MAX_SORT_ENTRIES = 1ull << 29;  // 8 GiB of keys and values, double buffered
constexpr uint32_t MAX_SETS = 1024;                 // scalar sets in one batch (a sanity bound)

// The bucket-reduction split: S slices per window (a power of two), about
// REDUCE_THREADS_PER_SM threads per SM in all. Point additions are chains
// of dependent multiplications, so more threads hide latency, while each
// slice adds an offset correction (~64 point operations) to its 2 L
// additions. CUZK_MSM_REDUCE_THREADS_PER_SM overrides it (benchmarks).
constexpr uint32_t REDUCE_THREADS_PER_SM = 256;

inline uint32_t reduce_slices(const window_plan &w, int sms) {
    uint64_t per_sm = REDUCE_THREADS_PER_SM;
    if (const char *v = getenv("CUZK_MSM_REDUCE_THREADS_PER_SM")) per_sm = std::max(1, atoi(v));
    const uint64_t t_red = (uint64_t)sms * per_sm;
    uint32_t nslices = 1;
    while (nslices * 2 <= w.buckets && (uint64_t)w.nwin * nslices * 2 <= t_red) nslices *= 2;
    return nslices;
}

template <class F>
int32_t make_plan(int32_t ordinal, uint64_t n, uint32_t sets, bool points_on_device, bool scalars_on_device,
                  const cuzk_msm_options *opts, msm_plan &p, cuzk_error *err) {
    using xyzz = xyzz_t<F>;
    const uint32_t forced_c = opts ? opts->window_bits : 0;
    CUZK_REQUIRE(forced_c == 0 || (forced_c >= 2 && forced_c <= 24), "window_bits %u outside 2..24", forced_c);
    CUZK_REQUIRE(n < (1ull << 31), "n = %llu: at most 2^31 - 1 points", (unsigned long long)n);
    CUZK_REQUIRE(sets >= 1 && sets <= MAX_SETS, "%u scalar sets: 1..%u per batch", sets, MAX_SETS);
    p = msm_plan{};
    p.sets = sets;
    if (n == 0) {
        p.win = plan_windows(0, 1, forced_c);  // reported in the stats
        return CUZK_OK;
    }

    int sms = 0;
    CUZK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
    const uint64_t max_sort = opts && opts->max_sort_entries ? opts->max_sort_entries : MAX_SORT_ENTRIES;
    p.chunk = std::min<uint64_t>(n, max_sort);
    if (opts && opts->max_chunk_points) p.chunk = std::min<uint64_t>(p.chunk, opts->max_chunk_points);
    p.chunks = ceil_div(n, p.chunk);
    p.win = plan_windows(n, p.chunks, forced_c);
    // Host inputs in several chunks: two staging buffers, so chunk k + 1
    // uploads while chunk k computes.
    p.stages = p.chunks > 1 ? 2 : 1;
    p.group_wins = (uint32_t)std::min<uint64_t>(p.win.nwin, std::max<uint64_t>(1, max_sort / p.chunk));
    p.max_e = p.chunk * p.group_wins;
    p.group_key_bits = 32 - __builtin_clz(p.group_wins * p.win.buckets);

    int blocks_per_sm = 0;
    CUZK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, pick_first_pass<F>().kernel, ACC_BLOCK, 0));
    p.t_target = (uint64_t)sms * std::max(blocks_per_sm, 1) * ACC_BLOCK;

    CUZK_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, p.sort_tmp, (uint32_t *)nullptr, (uint32_t *)nullptr,
                                              (uint32_t *)nullptr, (uint32_t *)nullptr, (int64_t)p.max_e, 0,
                                              (int)p.group_key_bits, (cudaStream_t)0));
    p.nslices = reduce_slices(p.win, sms);
    p.staging_points = points_on_device ? 0 : p.chunk * sizeof(affine_t<F>);
    p.staging_scalars = scalars_on_device ? 0 : p.chunk * sizeof(fr_t);
    p.keys = p.max_e * sizeof(uint32_t);
    p.part_keys = 2 * p.t_target * sizeof(uint32_t);
    p.part_sums = 2 * p.t_target * sizeof(xyzz);
    p.buckets = (uint64_t)sets * p.win.nwin * p.win.buckets * sizeof(xyzz);
    p.slices = (uint64_t)p.win.nwin * p.nslices * sizeof(xyzz);
    p.windows = p.win.nwin * sizeof(xyzz);
    p.out = (uint64_t)sets * p.win.nwin * sizeof(jacobian_t<F>);
    return CUZK_OK;
}

// out[j] = sum_i scalars[j][i] points[i] for each of the `sets` scalar
// arrays (all on the device or all on the host); with window_sums,
// out[j nwin + w] = window w's sum W_w, where out[j] = sum_w 2^(c w) W_w.
template <class F>
int32_t pippenger(int32_t ordinal, const affine_t<F> *points, bool points_on_device, const fr_t *const *scalars,
                  uint32_t sets, bool scalars_on_device, uint64_t n, const cuzk_msm_options *opts, bool window_sums,
                  jacobian_t<F> *out, cuzk_msm_stats *stats, cuzk_error *err) {
    using xyzz = xyzz_t<F>;
    CUZK_REQUIRE(out && (n == 0 || (points && scalars)), "null argument");
    for (uint32_t j = 0; n > 0 && j < sets; j++) CUZK_REQUIRE(scalars[j], "null scalars of set %u", j);
    CUZK_CUDA(cudaSetDevice(ordinal));
    msm_plan plan;
    CUZK_TRY(make_plan<F>(ordinal, n, sets, points_on_device, scalars_on_device, opts, plan, err));
    const window_plan &win = plan.win;
    if (stats) {
        *stats = cuzk_msm_stats{0.0f, win.c, 0};
        stats->windows = win.nwin;
    }
    const uint64_t outs = (uint64_t)sets * (window_sums ? win.nwin : 1);
    if (n == 0) {
        memset(out, 0, outs * sizeof(*out));  // the identity (Z = 0)
        return ok(err);
    }
    const first_pass<F> pass1 = pick_first_pass<F>();
    constexpr int BLOCK = ACC_BLOCK;

    msm_stream st;
    CUZK_CUDA(cudaStreamCreateWithFlags(&st.s, cudaStreamNonBlocking));
    CUZK_CUDA(cudaEventCreate(&st.start));
    CUZK_CUDA(cudaEventCreate(&st.stop));
    for (cudaEvent_t &e : st.phase) CUZK_CUDA(cudaEventCreate(&e));
    float phase_ms[4] = {0, 0, 0, 0};  // digits, sort, accumulate, reduce
    cudaStream_t s = st.s;

    msm_buffer keys[2], vals[2], sort_tmp, d_count, buckets, part_keys[2], part_sums[2], slices, windows, d_out;
    chunk_stager<F> stager(points, points_on_device, scalars, sets, scalars_on_device, n, plan.chunk);
    CUZK_TRY(stager.init(ordinal, plan.stages, plan.staging_points, plan.staging_scalars, err));
    for (int i = 0; i < 2; i++) {
        CUZK_TRY(keys[i].alloc(plan.keys, err));
        CUZK_TRY(vals[i].alloc(plan.keys, err));
        CUZK_TRY(part_keys[i].alloc(plan.part_keys, err));
        CUZK_TRY(part_sums[i].alloc(plan.part_sums, err));
    }
    size_t tmp_bytes = plan.sort_tmp;
    CUZK_TRY(sort_tmp.alloc(tmp_bytes, err));
    CUZK_TRY(d_count.alloc(sizeof(uint64_t), err));
    CUZK_TRY(buckets.alloc(plan.buckets, err));
    CUZK_TRY(d_out.alloc(plan.out, err));

    CUZK_CUDA(cudaEventRecord(st.start, s));
    CUZK_CUDA(cudaMemsetAsync(buckets.as<void>(), 0, plan.buckets, s));  // all infinity

    uint32_t chunks = 0;
    CUZK_TRY(stager.upload(0, err));
    for (uint64_t off = 0; off < n; off += plan.chunk, chunks++) {
        const uint64_t m = std::min(plan.chunk, n - off);
        const bool store = off == 0;  // first chunk: one writer per bucket, no addition
        // The next chunk's inputs go up on another thread while this one runs.
        CUZK_TRY(stager.start_next(chunks, s, err));
        const affine_t<F> *pts = stager.points_of(chunks);
        for (uint32_t set = 0; set < sets; set++)
        for (uint32_t w0 = 0; w0 < win.nwin; w0 += plan.group_wins) {
            const fr_t *scl = stager.scalars_of(chunks, set);
            const uint32_t w1 = std::min(win.nwin, w0 + plan.group_wins);
            // Non-zero digits only (0/1 scalars give 0 or 1 entries), then
            // the sort of just those.
            CUZK_CUDA(cudaEventRecord(st.phase[0], s));
            CUZK_CUDA(cudaMemsetAsync(d_count.as<void>(), 0, sizeof(uint64_t), s));
            scalars_to_digits<<<(unsigned)ceil_div(m, 256), 256, 0, s>>>(scl, m, win, w0, w1, keys[0].as<uint32_t>(),
                                                                         vals[0].as<uint32_t>(),
                                                                         d_count.as<unsigned long long>());
            CUZK_LAUNCHED();
            uint64_t valid = 0;
            CUZK_CUDA(cudaMemcpyAsync(&valid, d_count.as<void>(), sizeof(valid), cudaMemcpyDeviceToHost, s));
            CUZK_CUDA(cudaEventRecord(st.phase[1], s));
            CUZK_CUDA(cudaStreamSynchronize(s));
            CUZK_TRY(add_elapsed(phase_ms[0], st.phase[0], st.phase[1], err));
            if (valid == 0) continue;
            CUZK_CUDA(cub::DeviceRadixSort::SortPairs(sort_tmp.as<void>(), tmp_bytes, keys[0].as<uint32_t>(),
                                                      keys[1].as<uint32_t>(), vals[0].as<uint32_t>(),
                                                      vals[1].as<uint32_t>(), (int64_t)valid, 0,
                                                      (int)plan.group_key_bits, s));
            CUZK_CUDA(cudaEventRecord(st.phase[2], s));

            // First pass over the sorted entries, then the partial slots.
            // Keys count from window w0's first bucket (of this set's).
            xyzz *group_buckets = buckets.as<xyzz>() + ((uint64_t)set * win.nwin + w0) * win.buckets;
            uint64_t k = std::max<uint64_t>(1, ceil_div(valid, plan.t_target));
            uint64_t threads = ceil_div(valid, k);
            pass1.kernel<<<(unsigned)ceil_div(threads, BLOCK), BLOCK, 0, s>>>(
                keys[1].as<uint32_t>(), point_entries<F>{vals[1].as<uint32_t>(), pts}, valid, k, threads,
                group_buckets, store, part_keys[0].as<uint32_t>(), part_sums[0].as<xyzz>());
            CUZK_LAUNCHED();
            int cur = 0;
            while (threads > 1) {
                const uint64_t pe = 2 * threads;
                k = 8;
                threads = ceil_div(pe, k);
                accumulate_runs<F, partial_entries<F>, 1><<<(unsigned)ceil_div(threads, BLOCK), BLOCK, 0, s>>>(
                    part_keys[cur].as<uint32_t>(), partial_entries<F>{part_sums[cur].as<xyzz>()}, pe, k, threads,
                    group_buckets, store, part_keys[cur ^ 1].as<uint32_t>(), part_sums[cur ^ 1].as<xyzz>());
                CUZK_LAUNCHED();
                cur ^= 1;
            }
            CUZK_CUDA(cudaEventRecord(st.phase[3], s));
            CUZK_CUDA(cudaEventSynchronize(st.phase[3]));
            CUZK_TRY(add_elapsed(phase_ms[1], st.phase[1], st.phase[2], err));
            CUZK_TRY(add_elapsed(phase_ms[2], st.phase[2], st.phase[3], err));
        }
        CUZK_TRY(stager.finish(chunks, s, err));
    }

    // Buckets -> windows -> result.
    CUZK_CUDA(cudaEventRecord(st.phase[0], s));
    const uint32_t nslices = plan.nslices;
    CUZK_TRY(slices.alloc(plan.slices, err));
    CUZK_TRY(windows.alloc(plan.windows, err));
    const uint32_t total = win.nwin * nslices;
    for (uint32_t set = 0; set < sets; set++) {
        bucket_slices<F><<<(total + 63) / 64, 64, 0, s>>>(buckets.as<xyzz>() + (uint64_t)set * win.nwin * win.buckets,
                                                          win.buckets, win.nwin, nslices, slices.as<xyzz>());
        CUZK_LAUNCHED();
        constexpr int SUM_THREADS = 64;
        sum_groups<F><<<win.nwin, SUM_THREADS, SUM_THREADS * sizeof(xyzz), s>>>(slices.as<xyzz>(), nslices,
                                                                               windows.as<xyzz>());
        CUZK_LAUNCHED();
        if (window_sums)
            windows_to_jacobian<F><<<1, win.nwin, 0, s>>>(windows.as<xyzz>(), win.nwin,
                                                          d_out.as<jacobian_t<F>>() + (uint64_t)set * win.nwin);
        else
            combine_windows<F><<<1, 1, 0, s>>>(windows.as<xyzz>(), win.nwin, win.c, d_out.as<jacobian_t<F>>() + set);
        CUZK_LAUNCHED();
    }
    CUZK_CUDA(cudaEventRecord(st.stop, s));
    CUZK_CUDA(cudaMemcpyAsync(out, d_out.as<void>(), outs * sizeof(*out), cudaMemcpyDeviceToHost, s));
    CUZK_CUDA(cudaStreamSynchronize(s));
    CUZK_TRY(add_elapsed(phase_ms[3], st.phase[0], st.stop, err));
    if (stats) {
        CUZK_CUDA(cudaEventElapsedTime(&stats->device_ms, st.start, st.stop));
        stats->chunks = chunks;
        stats->digits_ms = phase_ms[0];
        stats->sort_ms = phase_ms[1];
        stats->accumulate_ms = phase_ms[2];
        stats->reduce_ms = phase_ms[3];
        stats->accumulate_min_blocks = pass1.min_blocks;
    }
    return ok(err);
}

// Device bytes one pippenger() call allocates (engines reserve this from
// their VRAM budget first).
template <class F>
int32_t workspace_bytes(int32_t ordinal, uint64_t n, uint32_t sets, bool points_on_device, bool scalars_on_device,
                        const cuzk_msm_options *opts, uint64_t *bytes, cuzk_error *err) {
    CUZK_REQUIRE(bytes, "null argument");
    CUZK_CUDA(cudaSetDevice(ordinal));
    msm_plan plan;
    CUZK_TRY(make_plan<F>(ordinal, n, sets, points_on_device, scalars_on_device, opts, plan, err));
    *bytes = n == 0 ? 0 : plan.device_bytes();
    return ok(err);
}

}  // namespace cuzk

// The Pippenger driver (host side), one template for G1 and G2:
//
//   device scalars in one chunk: count_scalar_kinds (profile.cuh) first,
//   and the windows and sort groups are planned for what they are
//   per chunk of at most `chunk` points (bounded VRAM; buckets persist, so
//   chunking changes nothing in the result):
//     points and scalars not on the device come through chunk_stager.cuh
//     (two staging buffers when chunked: the next chunk uploads meanwhile)
//     per group of windows (at most 2^29 sort entries):
//       scalars_to_digits   an entry (key, point index | sign) per non-zero
//                           digit, compacted (0/1 scalars: 0 or 1 entries)
//       radix sort by key   (CUB, the CUDA toolkit's own; sort.cu)
//       accumulate_runs     equal slices of entries, then the partial slots
//   bucket_slices, sum_groups, combine_windows  -> blst Jacobian point
//   (or, with window_sums, each window's sum: the caller combines them)
//
// The first chunk stores each bucket's sum (every bucket has one writer);
// in later chunks a complete run starts from its bucket's sum and stores
// the result (accumulate.cuh): an addition at the end of each run stalls
// the other 31 threads of a warp, which with short runs (large windows or
// small chunks) cost as much as the accumulation itself.
//
// A batch is `sets` MSMs over the same points (one SRS query, the
// circuits of a batch): each set has its own buckets, and each chunk of
// points is uploaded once and then run against every set's scalars, so a
// host-resident SRS crosses PCIe once per batch instead of once per
// circuit.
//
// Every CUDA call is checked; device memory is released on every path.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "../device/streams.cuh"
#include "../ec/point.cuh"
#include "../error.cuh"
#include "accumulate.cuh"
#include "buffer.cuh"
#include "chunk_stager.cuh"
#include "digits.cuh"
#include "plan.cuh"
#include "profile.cuh"
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
    msm_stream st;
    CUZK_CUDA(cuzk::stream_create(&st.s));
    CUZK_CUDA(cudaEventCreate(&st.start));
    CUZK_CUDA(cudaEventCreate(&st.stop));
    for (cudaEvent_t &e : st.phase) CUZK_CUDA(cudaEventCreate(&e));
    float phase_ms[4] = {0, 0, 0, 0};  // digits, sort, accumulate, reduce
    cudaStream_t s = st.s;

    // Device memory: the caller's workspace, or this call's own. The count
    // word (and the scalar profile's counts) come first, in the 2 MiB that
    // msm_plan::device_bytes gives them.
    msm_arena arena{nullptr, 0}, *ar = nullptr;
    if (opts && opts->workspace) {
        arena = {static_cast<char *>(opts->workspace), (size_t)opts->workspace_bytes};
        ar = &arena;
    }
    msm_buffer d_count;
    if (n > 0)
        CUZK_TRY(d_count.alloc(std::max<size_t>(sizeof(uint64_t), 2 * sizeof(unsigned long long) * sets), err, ar));

    msm_plan plan;
    CUZK_TRY(make_plan<F>(ordinal, n, sets, points_on_device, scalars_on_device, opts, nullptr, plan, err));
    // Device scalars in one chunk: one pass counts their 0s and 1s (~1 ms
    // at 2^27), and the plan follows what they are, unless that would take
    // more device memory than the plan for arbitrary scalars (which
    // workspace_bytes reports).
    float profile_ms = 0;
    if (scalars_on_device && n >= PROFILE_FROM_N && plan.chunks == 1) {
        int sms = 0;
        CUZK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
        scalar_profile prof;
        CUZK_CUDA(cudaEventRecord(st.phase[0], s));
        CUZK_TRY(profile_scalars(scalars, sets, n, sms, d_count.as<unsigned long long>(), s, prof, err));
        CUZK_CUDA(cudaEventRecord(st.phase[1], s));
        CUZK_CUDA(cudaEventSynchronize(st.phase[1]));
        CUZK_TRY(add_elapsed(profile_ms, st.phase[0], st.phase[1], err));
        msm_plan profiled;
        CUZK_TRY(make_plan<F>(ordinal, n, sets, points_on_device, scalars_on_device, opts, &prof, profiled, err));
        if (profiled.device_bytes() <= plan.device_bytes()) plan = profiled;
    }
    CUZK_REQUIRE(!ar || n == 0 || opts->workspace_bytes >= plan.device_bytes(),
                 "MSM workspace of %llu bytes: this MSM needs %llu", (unsigned long long)opts->workspace_bytes,
                 (unsigned long long)plan.device_bytes());
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

    msm_buffer keys[2], vals[2], sort_tmp, buckets, part_keys[2], part_sums[2], slices, windows, d_out;
    chunk_stager<F> stager(points, points_on_device, scalars, sets, scalars_on_device, n, plan.chunk);
    CUZK_TRY(stager.init(ordinal, plan.stages, plan.staging_points, plan.staging_scalars, ar, err));
    for (int i = 0; i < 2; i++) {
        CUZK_TRY(keys[i].alloc(plan.keys, err, ar));
        CUZK_TRY(vals[i].alloc(plan.keys, err, ar));
        CUZK_TRY(part_keys[i].alloc(plan.part_keys, err, ar));
        CUZK_TRY(part_sums[i].alloc(plan.part_sums, err, ar));
    }
    size_t tmp_bytes = plan.sort_tmp;
    CUZK_TRY(sort_tmp.alloc(tmp_bytes, err, ar));
    CUZK_TRY(buckets.alloc(plan.buckets, err, ar));
    CUZK_TRY(d_out.alloc(plan.out, err, ar));
    // The reduction's buffers too, before the clock starts: a cudaMalloc
    // between the accumulation and the reduction would wait for the device
    // to drain, milliseconds in the middle of the MSM.
    CUZK_TRY(slices.alloc(plan.slices, err, ar));
    CUZK_TRY(windows.alloc(plan.windows, err, ar));

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
                                                                         vals[0].as<uint32_t>(), plan.max_e,
                                                                         d_count.as<unsigned long long>());
            CUZK_LAUNCHED();
            uint64_t valid = 0;
            CUZK_CUDA(cudaMemcpyAsync(&valid, d_count.as<void>(), sizeof(valid), cudaMemcpyDeviceToHost, s));
            CUZK_CUDA(cudaEventRecord(st.phase[1], s));
            CUZK_CUDA(cudaStreamSynchronize(s));
            CUZK_TRY(add_elapsed(phase_ms[0], st.phase[0], st.phase[1], err));
            CUZK_REQUIRE(valid <= plan.max_e, "internal: %llu sort entries for a plan of %llu",
                         (unsigned long long)valid, (unsigned long long)plan.max_e);
            if (valid == 0) continue;
            CUZK_CUDA(sort_pairs(sort_tmp.as<void>(), tmp_bytes, keys[0].as<uint32_t>(), keys[1].as<uint32_t>(),
                                 vals[0].as<uint32_t>(), vals[1].as<uint32_t>(), (int)valid, (int)plan.group_key_bits,
                                 s));
            CUZK_CUDA(cudaEventRecord(st.phase[2], s));

            // First pass over the sorted entries, then the partial slots.
            // Keys count from window w0's first bucket (of this set's).
            xyzz *group_buckets = buckets.as<xyzz>() + ((uint64_t)set * win.nwin + w0) * win.buckets;
            uint64_t k = std::max<uint64_t>(1, ceil_div(valid, plan.t_target));
            uint64_t threads = ceil_div(valid, k);
            pass1.kernel<<<(unsigned)ceil_div(threads, BLOCK), BLOCK, 0, s>>>(
                keys[1].as<uint32_t>(), point_entries<F>{vals[1].as<uint32_t>(), pts}, valid, k, threads,
                group_buckets, store, !store, part_keys[0].as<uint32_t>(), part_sums[0].as<xyzz>());
            CUZK_LAUNCHED();
            int cur = 0;
            while (threads > 1) {
                const uint64_t pe = 2 * threads;
                k = 8;
                threads = ceil_div(pe, k);
                accumulate_runs<F, partial_entries<F>, 1><<<(unsigned)ceil_div(threads, BLOCK), BLOCK, 0, s>>>(
                    part_keys[cur].as<uint32_t>(), partial_entries<F>{part_sums[cur].as<xyzz>()}, pe, k, threads,
                    group_buckets, store, false, part_keys[cur ^ 1].as<uint32_t>(), part_sums[cur ^ 1].as<xyzz>());
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
        stats->device_ms += profile_ms;
        stats->chunks = chunks;
        stats->digits_ms = phase_ms[0] + profile_ms;
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
    CUZK_TRY(make_plan<F>(ordinal, n, sets, points_on_device, scalars_on_device, opts, nullptr, plan, err));
    *bytes = n == 0 ? 0 : plan.device_bytes();
    return ok(err);
}

}  // namespace cuzk

// The plan of one MSM call, made before it runs (and by workspace_bytes,
// which reports its device memory): window size, chunks of points, groups
// of windows per sort, the first pass's thread count, and every buffer's
// bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "../ec/point.cuh"
#include "../error.cuh"
#include "accumulate.cuh"
#include "buffer.cuh"
#include "digits.cuh"
#include "profile.cuh"
#include "sort.cuh"

namespace cuzk {

// Window size from the scalars and the number of chunks: minimise
// E(nwin) + K nwin 2^(c-1), the additions into buckets (E: the profile's
// entry bound, n nwin for arbitrary scalars) plus the cost of each bucket
// in the reduction. K = 4 additions' worth, since reducing a bucket costs
// about three times what adding an entry to one does (H200 figures in
// docs/CUDA.md), plus about one more for every chunk after the first (each
// complete run starts from its bucket's sum: a load and one mixed
// addition). Mostly-0/1 scalars make E small, so smaller windows win (a G2
// MSM of 2^24 mostly-0/1 scalars picks c = 16, about 1.5x faster than c =
// 20). c <= 20 keeps the buckets of a G2 MSM under 3 GB, and larger windows
// are slower for random scalars at 2^26. Up to max_c = 22 for one G1 set in
// one chunk: 12 windows instead of 13, which the model takes from ~7.3e7
// random scalars on (G1 2^27: ~3 % faster at c = 22 than at 20); G1's
// buckets are then 4.8 GB, too much to multiply by sets or to keep per
// chunk under a VRAM limit.
inline window_plan plan_windows(const scalar_profile &prof, uint64_t chunks, uint32_t forced_c, uint32_t max_c = 20) {
    uint32_t best_c = 4;
    double best = INFINITY;
    const double per_bucket = 4.0 + 1.0 * (double)(chunks > 0 ? chunks - 1 : 0);
    for (uint32_t c = 4; c <= max_c; c++) {
        uint32_t nwin = (256 + c - 1) / c;
        double cost = (double)prof.entries(nwin) + per_bucket * (double)nwin * (double)(1u << (c - 1));
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
    // device hands out memory (the count word and the scalar profile's
    // counts, at most 16 KiB, take one granule).
    size_t device_bytes() const {
        auto r = round_to_granule;
        return stages * (r(staging_points) + r(sets * staging_scalars)) + 4 * r(keys) + 2 * r(part_keys) + 2 * r(part_sums) +
               r(sort_tmp) + r(sizeof(uint64_t)) + r(buckets) + r(slices) + r(windows) + r(out);
    }
};

constexpr uint64_t MAX_SORT_ENTRIES = 1ull << 29;  // 8 GiB of keys and values, double buffered
constexpr uint32_t MAX_SETS = 1024;                 // scalar sets in one batch (a sanity bound)
constexpr uint64_t PROFILE_FROM_N = 1ull << 14;    // smaller MSMs plan for arbitrary scalars

// The bucket-reduction split: S slices per window (a power of two), about
// REDUCE_THREADS_PER_SM threads per SM in all. Point additions are chains
// of dependent multiplications, so more threads hide latency, while each
// slice adds an offset correction (~64 point operations) to its 2 L
// additions.
constexpr uint32_t REDUCE_THREADS_PER_SM = 256;

inline uint32_t reduce_slices(const window_plan &w, int sms) {
    const uint64_t t_red = (uint64_t)sms * REDUCE_THREADS_PER_SM;
    uint32_t nslices = 1;
    while (nslices * 2 <= w.buckets && (uint64_t)w.nwin * nslices * 2 <= t_red) nslices *= 2;
    return nslices;
}

// `profile`: what the scalars are (profile_scalars), for a single chunk;
// null plans for arbitrary scalars, which bounds every profiled plan.
template <class F>
int32_t make_plan(int32_t ordinal, uint64_t n, uint32_t sets, bool points_on_device, bool scalars_on_device,
                  const cuzk_msm_options *opts, const scalar_profile *profile, msm_plan &p, cuzk_error *err) {
    using xyzz = xyzz_t<F>;
    const uint32_t forced_c = opts ? opts->window_bits : 0;
    CUZK_REQUIRE(forced_c == 0 || (forced_c >= 2 && forced_c <= 24), "window_bits %u outside 2..24", forced_c);
    const uint32_t cap_c = opts ? opts->max_window_bits : 0;
    CUZK_REQUIRE(cap_c == 0 || (cap_c >= 4 && cap_c <= 24), "max_window_bits %u outside 4..24", cap_c);
    CUZK_REQUIRE(n < (1ull << 31), "n = %llu: at most 2^31 - 1 points", (unsigned long long)n);
    CUZK_REQUIRE(sets >= 1 && sets <= MAX_SETS, "%u scalar sets: 1..%u per batch", sets, MAX_SETS);
    p = msm_plan{};
    p.sets = sets;
    if (n == 0) {
        p.win = plan_windows(scalar_profile::dense(0), 1, forced_c);  // reported in the stats
        return CUZK_OK;
    }

    int sms = 0;
    CUZK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal));
    // Sort groups stay below 2^31 entries: the sort then counts in 32 bits,
    // and CUB's sm_90 onesweep takes 23 pairs per thread instead of 17.
    const uint64_t max_sort = std::min<uint64_t>(
        opts && opts->max_sort_entries ? opts->max_sort_entries : MAX_SORT_ENTRIES, INT32_MAX);
    p.chunk = std::min<uint64_t>(n, max_sort);
    if (opts && opts->max_chunk_points) p.chunk = std::min<uint64_t>(p.chunk, opts->max_chunk_points);
    p.chunks = ceil_div(n, p.chunk);
    CUZK_REQUIRE(!profile || p.chunks == 1, "a scalar profile plans a single chunk");
    // Windows up to 22 bits only for one G1 set in one chunk (see
    // plan_windows: G2's or several sets' buckets would not fit), and never
    // above the caller's bound.
    const uint32_t max_c = is_g1<F> && p.chunks == 1 && sets == 1 ? 22 : 20;
    p.win = plan_windows(profile ? *profile : scalar_profile::dense(n), p.chunks, forced_c,
                         cap_c ? std::min(cap_c, max_c) : max_c);
    const scalar_profile prof = profile ? *profile : scalar_profile::dense(p.chunk);  // per chunk
    // Host inputs in several chunks: two staging buffers, so chunk k + 1
    // uploads while chunk k computes.
    p.stages = p.chunks > 1 ? 2 : 1;
    // Windows per sort group: as many as the sort space takes, each bounded
    // by the profile (at most chunk entries per window without one).
    p.group_wins = 1;
    auto fits = [&](uint64_t g) { return std::min(p.chunk * g, prof.entries(g)) <= max_sort; };
    while (p.group_wins < p.win.nwin && fits(p.group_wins + 1)) p.group_wins++;
    p.max_e = std::max<uint64_t>(1, std::min(p.chunk * p.group_wins, prof.entries(p.group_wins)));
    p.group_key_bits = 32 - __builtin_clz(p.group_wins * p.win.buckets);

    int blocks_per_sm = 0;
    CUZK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, pick_first_pass<F>().kernel, ACC_BLOCK, 0));
    p.t_target = (uint64_t)sms * std::max(blocks_per_sm, 1) * ACC_BLOCK;

    CUZK_CUDA(sort_pairs(nullptr, p.sort_tmp, nullptr, nullptr, nullptr, nullptr, (int)p.max_e, (int)p.group_key_bits,
                         (cudaStream_t)0));
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

}  // namespace cuzk

// Bucket accumulation: after the sort, entries of one bucket are adjacent.
// Each thread takes an equal slice of K entries (not one bucket: bucket
// sizes are as uneven as the scalars, e.g. every scalar 1 lands in one
// bucket) and adds runs of equal keys in XYZZ. A run wholly inside the
// slice is the bucket's complete sum for this chunk and is added to the
// bucket by that thread alone. A run that continues into a neighbouring
// slice goes to one of the thread's two partial slots (2t: its first run,
// 2t+1: its last run), with its key; the slots, in order, are again sorted
// by key, and the same kernel reduces them with fewer threads until one
// thread is left, whose runs are all complete.
//
// Chunks after the first (`resume`): a complete run of the first pass
// starts from its bucket's sum so far and replaces it. Adding a finished
// run into its bucket instead costs a full XYZZ addition on one lane while
// the warp's other 31 wait, at every run end; with chunks of a few million
// points a bucket's run is ~20 entries, so that tripled the pass. Starting
// from the bucket costs one mixed addition in step with the other lanes,
// plus a load. Runs that reach the slice's edges start from infinity and go
// through the slots, which add to their buckets as before.
#pragma once

#include "../ec/point.cuh"

namespace cuzk {

// Entry i's point: from the affine SRS slice (first pass) or a partial sum.
template <class F>
struct point_entries {
    static constexpr bool FIRST_PASS = true;
    const uint32_t *vals;
    const affine_t<F> *points;
    template <bool INL>
    __device__ __forceinline__ void add_to(xyzz_t<F> &acc, uint64_t i) const {
        uint32_t v = vals[i];
        affine_t<F> p = points[v & 0x7fffffffu];
        if (v >> 31) p = p.neg();
        acc.template add_as<INL>(p);
    }
};

template <class F>
struct partial_entries {
    static constexpr bool FIRST_PASS = false;
    const xyzz_t<F> *sums;
    template <bool INL>
    __device__ __forceinline__ void add_to(xyzz_t<F> &acc, uint64_t i) const {
        acc.template add_as<INL>(sums[i]);
    }
};

// Threads per block of accumulate_runs.
constexpr int ACC_BLOCK = 128;

// Threads t < ceil(e / k); slot keys and sums out_keys/out_sums[2t, 2t+1].
// A complete run's sum is stored to its bucket when `store` (the bucket
// holds nothing yet and this run is its only writer) or `resume` (the run
// started from the bucket's sum), else added.
// MIN_BLOCKS bounds the registers (__launch_bounds__) so that more warps
// share an SM: the field multiplications are carry chains, one dependent
// instruction after another, and need other warps to hide their latency.
// A bound needs the point operations inlined (a call keeps its own
// register count), so MIN_BLOCKS > 1 inlines them.
template <class F, class Entries, int MIN_BLOCKS>
__global__ void __launch_bounds__(ACC_BLOCK, MIN_BLOCKS)
    accumulate_runs(const uint32_t *keys, Entries entries, uint64_t e, uint64_t k, uint64_t threads,
                    xyzz_t<F> *buckets, bool store, bool resume, uint32_t *out_keys, xyzz_t<F> *out_sums) {
    constexpr bool INL = MIN_BLOCKS > 1;
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    const uint64_t begin = t * k, end = min(begin + k, e);
    // A complete run of a resumed pass ends with the bucket's whole sum:
    // stored even when it is infinity (P in one chunk, -P in the next).
    // Otherwise infinity is skipped: a slot pass sees each thread's unused
    // slots as runs of infinity under keys whose sums are already stored.
    // The first pass always stores (store or resume). G1's first pass
    // leaves the read-add-write into global memory out of its loop: the
    // smaller loop body is a little faster there, while G2's larger point
    // operations run faster with it in (docs/CUDA.md, accumulation).
    constexpr bool ADDS = !(Entries::FIRST_PASS && is_g1<F>);
    auto to_bucket = [&](uint32_t key, const xyzz_t<F> &sum) {
        if (resume)
            buckets[key] = sum;
        else if (sum.is_inf())
            return;
        else if (store || !ADDS)
            buckets[key] = sum;
        else
            buckets[key].template add_as<INL>(sum);
    };
    // Keys are sorted, so a run goes right exactly when its key is the
    // next slice's first.
    const bool right = end < e;
    const uint32_t right_key = right ? keys[end] : 0;
    auto start = [&](uint32_t key, bool from_left) {
        return resume && !from_left && !(right && key == right_key) ? buckets[key] : xyzz_t<F>::inf();
    };

    uint32_t cur = keys[begin];
    out_keys[2 * t] = cur;
    bool shared = begin > 0 && keys[begin - 1] == cur;  // run came from the left
    bool first_run = true, slot0_written = false;
    xyzz_t<F> acc = start(cur, shared);

    for (uint64_t i = begin; i < end; i++) {
        uint32_t key = keys[i];
        if (key != cur) {
            if (shared) {  // only the first run can come from the left
                out_sums[2 * t] = acc;
                slot0_written = true;
            } else {
                to_bucket(cur, acc);
            }
            acc = start(key, false);
            cur = key;
            shared = false;
            first_run = false;
        }
        entries.template add_to<INL>(acc, i);
    }
    const bool goes_right = right && right_key == cur;
    // The last run: to slot 0 if it is also the first and not complete, to
    // slot 1 if it continues to the right, else to its bucket.
    const bool to_slot0 = first_run && (shared || goes_right);
    const bool to_slot1 = !first_run && goes_right;
    if (!to_slot0 && !to_slot1) to_bucket(cur, acc);
    if (to_slot0) out_sums[2 * t] = acc;
    else if (!slot0_written) out_sums[2 * t] = xyzz_t<F>::inf();
    out_keys[2 * t + 1] = cur;
    out_sums[2 * t + 1] = to_slot1 ? acc : xyzz_t<F>::inf();
}

// The first accumulation pass (over SRS points: nearly all of an MSM's
// additions) with its register bound: MIN_BLOCKS blocks of ACC_BLOCK
// threads per SM, point operations inlined when MIN_BLOCKS > 1. G1 runs
// with 4, G2 with 2: the fastest of 1-4 and 1-3 on the H200 (docs/CUDA.md);
// 5 and more cannot build, since the out-of-line Fp multiplication needs
// 100 registers.
constexpr int G1_ACC_MIN_BLOCKS = 4;
constexpr int G2_ACC_MIN_BLOCKS = 2;

template <class F>
struct first_pass {
    void (*kernel)(const uint32_t *, point_entries<F>, uint64_t, uint64_t, uint64_t, xyzz_t<F> *, bool, bool,
                   uint32_t *, xyzz_t<F> *);
    uint32_t min_blocks;
};

template <class F, int B>
constexpr first_pass<F> first_pass_of() {
    return {accumulate_runs<F, point_entries<F>, B>, B};
}

template <class F>
constexpr first_pass<F> pick_first_pass() {
    return first_pass_of<F, is_g1<F> ? G1_ACC_MIN_BLOCKS : G2_ACC_MIN_BLOCKS>();
}

}  // namespace cuzk

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
#pragma once

#include "../ec/point.cuh"

namespace cuzk {

// Entry i's point: from the affine SRS slice (first pass) or a partial sum.
template <class F>
struct point_entries {
    const uint32_t *vals;
    const affine_t<F> *points;
    __device__ __forceinline__ void add_to(xyzz_t<F> &acc, uint64_t i) const {
        uint32_t v = vals[i];
        affine_t<F> p = points[v & 0x7fffffffu];
        acc.add((v >> 31) ? p.neg() : p);
    }
};

template <class F>
struct partial_entries {
    const xyzz_t<F> *sums;
    __device__ __forceinline__ void add_to(xyzz_t<F> &acc, uint64_t i) const { acc.add(sums[i]); }
};

// Threads t < ceil(e / k); slot keys and sums out_keys/out_sums[2t, 2t+1].
template <class F, class Entries>
__global__ void accumulate_runs(const uint32_t *keys, Entries entries, uint64_t e, uint64_t k,
                                uint64_t threads, xyzz_t<F> *buckets, uint32_t *out_keys,
                                xyzz_t<F> *out_sums) {
    uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    const uint64_t begin = t * k, end = min(begin + k, e);

    xyzz_t<F> acc = xyzz_t<F>::inf();
    uint32_t cur = keys[begin];
    const uint32_t first_key = cur;
    bool shared = begin > 0 && keys[begin - 1] == cur;  // run came from the left
    bool first_run = true;
    xyzz_t<F> first_slot = xyzz_t<F>::inf();

    for (uint64_t i = begin; i < end; i++) {
        uint32_t key = keys[i];
        if (key != cur) {
            if (shared)
                first_slot = acc;  // only the first run can come from the left
            else if (!acc.is_inf())
                buckets[cur].add(acc);
            acc = xyzz_t<F>::inf();
            cur = key;
            shared = false;
            first_run = false;
        }
        entries.add_to(acc, i);
    }
    const bool goes_right = end < e && keys[end] == cur;
    xyzz_t<F> last_slot = xyzz_t<F>::inf();
    if (first_run) {
        if (shared || goes_right)
            first_slot = acc;
        else if (!acc.is_inf())
            buckets[cur].add(acc);
    } else {
        if (goes_right)
            last_slot = acc;
        else if (!acc.is_inf())
            buckets[cur].add(acc);
    }
    out_keys[2 * t] = first_key;
    out_sums[2 * t] = first_slot;
    out_keys[2 * t + 1] = cur;
    out_sums[2 * t + 1] = last_slot;
}

}  // namespace cuzk

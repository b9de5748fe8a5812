// How many scalars are 1 and how many are neither 0 nor 1: with those, the
// sort entries of windows [w0, w1) are at most ones + others (w1 - w0) (a 1
// is one digit in window 0, a 0 none), which lets the planner size windows
// and sort space for what the scalars are. Filecoin witnesses are mostly
// 0/1, and for them smaller windows win: fewer buckets to reduce for a few
// more entries.
#pragma once

#include <algorithm>
#include <vector>

#include "../error.cuh"
#include "../ff/fr.cuh"

namespace cuzk {

struct scalar_profile {
    uint64_t ones, others;  // the rest are 0
    static scalar_profile dense(uint64_t n) { return {0, n}; }
    // At most this many non-zero digits in `windows` windows of one scalar set.
    uint64_t entries(uint64_t windows) const { return ones + others * windows; }
};

// counts[0] += scalars equal to 1, counts[1] += scalars neither 0 nor 1, by
// their Montgomery bytes (1 is R mod r). A non-canonical encoding of 0 or 1
// counts as "other", which keeps the bound an upper bound. Grid-stride; one
// atomic per warp.
__global__ void count_scalar_kinds(const fr_t *scalars, uint64_t m, unsigned long long *counts) {
    uint32_t ones = 0, others = 0;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += stride) {
        const fr_t s = scalars[i];
        bool zero = true, one = true;
#pragma unroll
        for (int k = 0; k < fr_t::N; k++) {
            zero &= s.v[k] == 0;
            one &= s.v[k] == fr_params::one(k);
        }
        ones += one;
        others += !zero && !one;
    }
    ones = __reduce_add_sync(0xffffffffu, ones);
    others = __reduce_add_sync(0xffffffffu, others);
    if ((threadIdx.x & 31) == 0) {
        if (ones) atomicAdd(&counts[0], (unsigned long long)ones);
        if (others) atomicAdd(&counts[1], (unsigned long long)others);
    }
}

// The profile of `sets` device scalar arrays of n each: the largest count of
// each kind over the sets (one plan serves them all). counts: device
// scratch of 2 sets words. Synchronizes s.
inline int32_t profile_scalars(const fr_t *const *scalars, uint32_t sets, uint64_t n, int sms,
                               unsigned long long *counts, cudaStream_t s, scalar_profile &out, cuzk_error *err) {
    CUZK_CUDA(cudaMemsetAsync(counts, 0, 2 * sizeof(unsigned long long) * sets, s));
    const unsigned blocks = (unsigned)std::min<uint64_t>((uint64_t)sms * 8, (n + 255) / 256);
    for (uint32_t j = 0; j < sets; j++) {
        count_scalar_kinds<<<blocks, 256, 0, s>>>(scalars[j], n, counts + 2 * j);
        CUZK_LAUNCHED();
    }
    std::vector<unsigned long long> host(2 * (size_t)sets);
    CUZK_CUDA(cudaMemcpyAsync(host.data(), counts, host.size() * sizeof(host[0]), cudaMemcpyDeviceToHost, s));
    CUZK_CUDA(cudaStreamSynchronize(s));
    out = {0, 0};
    for (uint32_t j = 0; j < sets; j++) {
        out.ones = std::max<uint64_t>(out.ones, host[2 * j]);
        out.others = std::max<uint64_t>(out.others, host[2 * j + 1]);
    }
    return CUZK_OK;
}

}  // namespace cuzk

#pragma once
#ifndef RANKALG
#define RANKALG cub::RADIX_RANK_MATCH_EARLY_COUNTS_ANY
#endif
#ifndef THREADS
#define THREADS 128
#endif
#ifndef ITEMS
#define ITEMS 23
#endif
#include <cub/device/device_radix_sort.cuh>
namespace cuzk {
template <int BITS>
struct sort_policy_hub {
    using base = cub::detail::radix::policy_hub<uint32_t, uint32_t, int>;
    struct Policy900 : cub::ChainedPolicy<900, Policy900, typename base::Policy800>,
                       base::template OnesweepSmallKeyTunedPolicy<cub::detail::radix::sm90_small_key_tuning<4, 4, 4>> {
        static constexpr int ONESWEEP_RADIX_BITS = BITS;
        using HistogramPolicy = cub::AgentRadixSortHistogramPolicy<128, 16, 1, uint32_t, BITS>;
        using ExclusiveSumPolicy = cub::AgentRadixSortExclusiveSumPolicy<256, BITS>;
        using OnesweepPolicy = cub::AgentRadixSortOnesweepPolicy<THREADS, ITEMS, uint32_t, 1, RANKALG,
                                                                 cub::BLOCK_SCAN_RAKING_MEMOIZE, cub::RADIX_SORT_STORE_DIRECT, BITS>;
    };
    using MaxPolicy = Policy900;
};
template <int BITS>
cudaError_t sort_pairs(void *tmp, size_t &tmp_bytes, const uint32_t *kin, uint32_t *kout, const uint32_t *vin, uint32_t *vout, int n, int bits, cudaStream_t s) {
    cub::DoubleBuffer<uint32_t> k(const_cast<uint32_t *>(kin), kout), v(const_cast<uint32_t *>(vin), vout);
    return cub::DispatchRadixSort<cub::SortOrder::Ascending, uint32_t, uint32_t, int, cub::detail::identity_decomposer_t, sort_policy_hub<BITS>>::Dispatch(tmp, tmp_bytes, k, v, n, 0, bits, false, s);
}
}

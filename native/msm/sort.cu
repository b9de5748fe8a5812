// See sort.cuh: built as a library of its own, without --device-c.
#include "sort.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace cuzk {

cudaError_t sort_pairs(void *tmp, size_t &tmp_bytes, const uint32_t *keys_in, uint32_t *keys_out,
                       const uint32_t *vals_in, uint32_t *vals_out, int n, int end_bit, cudaStream_t s) {
    return cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit, s);
}

}  // namespace cuzk

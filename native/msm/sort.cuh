// The sort of the MSM's (bucket key, point) pairs: CUB's onesweep radix
// sort, in a translation unit of its own (sort.cu). cc builds several CUDA
// files as relocatable device code and a lone file as a whole program;
// there the onesweep kernel gets 80 registers instead of 95, two blocks of
// 384 threads per SM instead of one (cuzk-sys/build.rs, STANDALONE).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cuzk {

// Pairs sorted by the key bits [0, end_bit): keys_in/vals_in to
// keys_out/vals_out, equal keys in their input order. With tmp = null only
// tmp_bytes is set (CUB's temporary storage for n pairs).
cudaError_t sort_pairs(void *tmp, size_t &tmp_bytes, const uint32_t *keys_in, uint32_t *keys_out,
                       const uint32_t *vals_in, uint32_t *vals_out, int n, int end_bit, cudaStream_t s);

}  // namespace cuzk

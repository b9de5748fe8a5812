// Host-to-device copies that reach PCIe speed from pageable memory.
//
// cudaMemcpyAsync from pageable (ordinary malloc'd) memory is staged by the
// driver through a small pinned buffer on one thread: about 3-5 GB/s on
// the H200 host, where pinned memory moves about 55 GB/s. Proving inputs
// (a, b, c, the witness, a host-resident SRS) are pageable Rust vectors, so
// every upload goes through upload_to_device: pinned sources are copied
// directly; pageable ones by several host threads into a per-device ring
// of pinned slots, each slot's DMA overlapping the next memcpy.
#pragma once

#include <cuda_runtime.h>
#include <cstddef>
#include <cstdint>

#include "../cuzk.h"

namespace cuzk {

// Copies `bytes` from host `src` to device `dst` (the current device),
// ordered on `s` like cudaMemcpyAsync: later work on `s` sees the data, and
// `src` may be reused when this returns (the DMA may still be running).
int32_t upload_to_device(void *dst, const void *src, size_t bytes, cudaStream_t s, cuzk_error *err);

}  // namespace cuzk

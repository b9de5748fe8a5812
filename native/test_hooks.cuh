// The hooks behind cuzk.h's fault injection and pinned-memory count
// (native/device/fault_hook.cu), compiled in with cuzk-sys's `testing`
// feature (CUZK_TESTING). Without it they are empty inlines: the product
// has no fault hook and keeps no count.
#pragma once

#include <cuda_runtime.h>
#include <cstddef>

namespace cuzk {

// cuzk_test_fault_site's values.
enum fault_site { FAULT_DEVICE_ALLOC = 0, FAULT_LAUNCH = 1 };
constexpr int FAULT_SITES = 2;

#ifdef CUZK_TESTING
// The error an armed fault injects at this event of `site`, else cudaSuccess.
cudaError_t injected_fault(fault_site site);
// `bytes` of host memory at `ptr` page-locked (pinned) or released again.
void note_pinned(const void *ptr, size_t bytes);
void note_unpinned(const void *ptr);
#else
inline cudaError_t injected_fault(fault_site) { return cudaSuccess; }
inline void note_pinned(const void *, size_t) {}
inline void note_unpinned(const void *) {}
#endif

// cudaMalloc, failing instead where a test injects a fault.
inline cudaError_t device_malloc(void **ptr, size_t bytes) {
    cudaError_t e = injected_fault(FAULT_DEVICE_ALLOC);
    return e != cudaSuccess ? e : cudaMalloc(ptr, bytes);
}
template <class T>
inline cudaError_t device_malloc(T **ptr, size_t bytes) {
    return device_malloc(reinterpret_cast<void **>(ptr), bytes);
}

}  // namespace cuzk

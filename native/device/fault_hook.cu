// Fault injection and the pinned-memory count for tests (cuzk.h's "tests
// only: fault injection"), in the library with cuzk-sys's `testing`
// feature only; test_hooks.cuh calls into it from every device
// allocation, launch check and page-locking of native/.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "../error.cuh"

namespace cuzk {
namespace {

struct armed_fault {
    // Events of the site still to pass before the fault; < 0: disarmed.
    std::atomic<int64_t> countdown{-1};
    std::atomic<int32_t> error{0};
    std::atomic<uint64_t> injected{0};
};

armed_fault faults[FAULT_SITES];

std::mutex pinned_mtx;
std::unordered_map<const void *, size_t> pinned;  // live page-locked ranges
uint64_t pinned_total = 0;

}  // namespace

cudaError_t injected_fault(fault_site site) {
    armed_fault &f = faults[site];
    if (f.countdown.load(std::memory_order_acquire) < 0) return cudaSuccess;
    if (f.countdown.fetch_sub(1, std::memory_order_acq_rel) != 0) return cudaSuccess;
    f.injected.fetch_add(1);
    // The kernels launched so far end before the error is reported, as
    // they would have where a kernel failed: the caller frees buffers
    // they may still be using.
    if (site == FAULT_LAUNCH) cudaDeviceSynchronize();
    return static_cast<cudaError_t>(f.error.load());
}

void note_pinned(const void *ptr, size_t bytes) {
    std::lock_guard<std::mutex> g(pinned_mtx);
    pinned[ptr] = bytes;
    pinned_total += bytes;
}

void note_unpinned(const void *ptr) {
    std::lock_guard<std::mutex> g(pinned_mtx);
    auto it = pinned.find(ptr);
    if (it == pinned.end()) return;
    pinned_total -= it->second;
    pinned.erase(it);
}

}  // namespace cuzk

using namespace cuzk;

extern "C" int32_t cuzk_test_inject_fault(cuzk_test_fault_site site, uint64_t nth, int32_t cuda_error,
                                          cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE((int)site >= 0 && (int)site < FAULT_SITES, "unknown fault site %d", (int)site);
    CUZK_REQUIRE(nth < (1ull << 62), "nth %llu too large", (unsigned long long)nth);
    armed_fault &f = faults[site];
    f.countdown.store(-1, std::memory_order_release);
    if (cuda_error != 0) {
        f.error.store(cuda_error);
        f.countdown.store((int64_t)nth, std::memory_order_release);
    }
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_test_faults_injected(cuzk_test_fault_site site, uint64_t *count, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE((int)site >= 0 && (int)site < FAULT_SITES, "unknown fault site %d", (int)site);
    CUZK_REQUIRE(count, "count is null");
    *count = faults[site].injected.load();
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_test_pinned_bytes(uint64_t *bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(bytes, "bytes is null");
    std::lock_guard<std::mutex> g(pinned_mtx);
    *bytes = pinned_total;
    return ok(err);
    CUZK_ENTRY_END
}

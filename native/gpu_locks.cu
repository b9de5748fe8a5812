// The per-GPU lock object: mem (VRAM allocation, pre-staging uploads) and
// compute (kernel execution), so that one worker can pre-stage while another
// computes on the same GPU. Owned by Rust through an opaque pointer.
#include <mutex>

#include "error.cuh"

struct cuzk_gpu_locks {
    int ordinal;
    std::mutex mem;
    std::mutex compute;
};

extern "C" int32_t cuzk_gpu_locks_create(int32_t ordinal, cuzk_gpu_locks **out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(out, "out is null");
    CUZK_REQUIRE(ordinal >= 0, "negative GPU ordinal %d", ordinal);
    *out = new cuzk_gpu_locks();
    (*out)->ordinal = ordinal;
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_gpu_locks_destroy(cuzk_gpu_locks *locks, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    delete locks;
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_gpu_locks_ordinal(const cuzk_gpu_locks *locks) { return locks->ordinal; }

// std::mutex::lock throws only on system errors (EDEADLK and the like);
// they become an error code, never an exception across the ABI.
extern "C" int32_t cuzk_gpu_locks_lock_mem(cuzk_gpu_locks *locks, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    locks->mem.lock();
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_gpu_locks_lock_compute(cuzk_gpu_locks *locks, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    locks->compute.lock();
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

// std::mutex::unlock does not throw.
extern "C" void cuzk_gpu_locks_unlock_mem(cuzk_gpu_locks *locks) { locks->mem.unlock(); }
extern "C" void cuzk_gpu_locks_unlock_compute(cuzk_gpu_locks *locks) { locks->compute.unlock(); }

// Device memory of one MSM call: its own (freed on every path, RAII), or a
// slice of a workspace the caller owns (cuzk_msm_options::workspace), which
// saves a cudaMalloc and cudaFree of up to ~10 GB per call (~6 ms on the
// H200, most of it in cudaFree).
#pragma once

#include <cuda_runtime.h>

#include "../error.cuh"

namespace cuzk {

// The allocation granularity that msm_plan::device_bytes rounds each buffer
// to, so that a workspace of device_bytes holds every slice.
inline size_t round_to_granule(size_t bytes) {
    constexpr size_t G = 2u << 20;
    return (bytes + G - 1) & ~(G - 1);
}

// A caller's workspace, handed out front to back.
struct msm_arena {
    char *next;
    size_t left;
    int32_t take(size_t bytes, void *&p, cuzk_error *err) {
        const size_t r = round_to_granule(bytes);
        CUZK_REQUIRE(r <= left, "MSM workspace too small: %zu more bytes needed, %zu left", r, left);
        p = next;
        next += r;
        left -= r;
        return CUZK_OK;
    }
};

class msm_buffer {
   public:
    msm_buffer() = default;
    msm_buffer(const msm_buffer &) = delete;
    msm_buffer &operator=(const msm_buffer &) = delete;
    ~msm_buffer() {
        if (ptr_ && owned_) cudaFree(ptr_);
    }
    // From `arena` when given, else cudaMalloc.
    int32_t alloc(size_t bytes, cuzk_error *err, msm_arena *arena = nullptr) {
        if (arena) {
            owned_ = false;
            return arena->take(bytes, ptr_, err);
        }
        CUZK_CUDA(device_malloc(&ptr_, bytes ? bytes : 1));
        return CUZK_OK;
    }
    template <class T>
    T *as() const {
        return static_cast<T *>(ptr_);
    }

   private:
    void *ptr_ = nullptr;
    bool owned_ = true;
};

}  // namespace cuzk

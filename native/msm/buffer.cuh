// Device memory owned by one MSM call, freed on every path (RAII).
#pragma once

#include <cuda_runtime.h>

#include "../error.cuh"

namespace cuzk {

// Device memory owned by one MSM call.
class msm_buffer {
   public:
    msm_buffer() = default;
    msm_buffer(const msm_buffer &) = delete;
    msm_buffer &operator=(const msm_buffer &) = delete;
    ~msm_buffer() {
        if (ptr_) cudaFree(ptr_);
    }
    int32_t alloc(size_t bytes, cuzk_error *err) {
        CUZK_CUDA(cudaMalloc(&ptr_, bytes ? bytes : 1));
        return CUZK_OK;
    }
    template <class T>
    T *as() const {
        return static_cast<T *>(ptr_);
    }

   private:
    void *ptr_ = nullptr;
};

}  // namespace cuzk

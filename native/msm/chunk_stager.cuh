// Host inputs of a chunked MSM, staged to the device: see chunk_stager.
#pragma once

#include <algorithm>
#include <thread>

#include "../device/streams.cuh"
#include "../device/upload.cuh"
#include "../ec/point.cuh"
#include "../ff/fr.cuh"
#include "../error.cuh"
#include "buffer.cuh"

namespace cuzk {

// Host-resident points or scalars reach the device chunk by chunk through
// `stages` staging buffers; with two, chunk k + 1 uploads on its own stream
// and thread while chunk k computes (stream s waits for its upload event;
// a buffer is refilled only after the kernels that read it are done).
// Device-resident inputs are used in place. A batch has `sets` scalar
// arrays over the same points: a chunk's points go up once, with the same
// range of every set's scalars (one staging buffer holds them side by side).
template <class F>
class chunk_stager {
   public:
    chunk_stager(const affine_t<F> *points, bool points_on_device, const fr_t *const *scalars, uint32_t sets,
                 bool scalars_on_device, uint64_t n, uint64_t chunk)
        : points_(points), scalars_(scalars), sets_(sets), points_dev_(points_on_device),
          scalars_dev_(scalars_on_device), n_(n), chunk_(chunk) {}
    chunk_stager(const chunk_stager &) = delete;
    chunk_stager &operator=(const chunk_stager &) = delete;
    ~chunk_stager() {
        if (worker_.joinable()) worker_.join();
        for (stage &st : stages_) {
            if (st.uploaded) cudaEventDestroy(st.uploaded);
            if (st.consumed) cudaEventDestroy(st.consumed);
        }
        if (up_) cudaStreamDestroy(up_);
    }

    // stages: 1 for a single chunk, 2 when chunked; the bytes of one
    // stage's points and of one set's scalars (0 for an input on the device).
    // Buffers from `arena` when given (the caller's workspace).
    int32_t init(int32_t ordinal, uint32_t stages, size_t points_bytes, size_t scalars_bytes, msm_arena *arena,
                 cuzk_error *err) {
        CUZK_REQUIRE(stages == 2 || chunk_ >= n_, "chunked MSM input staged through %u buffer(s)", stages);
        ordinal_ = ordinal;
        nstages_ = (points_dev_ && scalars_dev_) ? 0 : stages;
        if (nstages_ == 0) return CUZK_OK;
        CUZK_CUDA(cuzk::stream_create(&up_));
        for (uint32_t i = 0; i < nstages_; i++) {
            stage &st = stages_[i];
            if (!points_dev_) CUZK_TRY(st.points.alloc(points_bytes, err, arena));
            if (!scalars_dev_) CUZK_TRY(st.scalars.alloc(sets_ * scalars_bytes, err, arena));
            CUZK_CUDA(cudaEventCreateWithFlags(&st.uploaded, cudaEventDisableTiming));
            CUZK_CUDA(cudaEventCreateWithFlags(&st.consumed, cudaEventDisableTiming));
        }
        return CUZK_OK;
    }

    // Enqueues chunk k's uploads on the upload stream (this thread).
    int32_t upload(uint64_t k, cuzk_error *err) {
        if (nstages_ == 0) return CUZK_OK;
        stage &st = stages_[k % nstages_];
        const uint64_t off = k * chunk_, m = std::min(chunk_, n_ - off);
        CUZK_CUDA(cudaSetDevice(ordinal_));
        CUZK_CUDA(cudaStreamWaitEvent(up_, st.consumed, 0));  // its last reader is done
        if (!points_dev_)
            CUZK_TRY(upload_to_device(st.points.template as<void>(), points_ + off, m * sizeof(affine_t<F>), up_, err));
        if (!scalars_dev_)
            for (uint32_t j = 0; j < sets_; j++)
                CUZK_TRY(upload_to_device(st.scalars.template as<fr_t>() + j * chunk_, scalars_[j] + off,
                                          m * sizeof(fr_t), up_, err));
        CUZK_CUDA(cudaEventRecord(st.uploaded, up_));
        return CUZK_OK;
    }

    // Stream s waits for chunk k's data; chunk k + 1 (if any: then there
    // are two stages) starts uploading on a worker thread.
    int32_t start_next(uint64_t k, cudaStream_t s, cuzk_error *err) {
        if (nstages_ == 0) return CUZK_OK;
        CUZK_CUDA(cudaStreamWaitEvent(s, stages_[k % nstages_].uploaded, 0));
        if ((k + 1) * chunk_ < n_) {
            worker_err_ = cuzk_error{};
            worker_rc_ = CUZK_OK;
            worker_ = std::thread([this, k] { worker_rc_ = upload(k + 1, &worker_err_); });
        }
        return CUZK_OK;
    }

    // After chunk k's kernels are enqueued on s: its stage may be refilled
    // once they finish; the next chunk's upload has been enqueued.
    int32_t finish(uint64_t k, cudaStream_t s, cuzk_error *err) {
        if (nstages_ == 0) return CUZK_OK;
        CUZK_CUDA(cudaEventRecord(stages_[k % nstages_].consumed, s));
        if (worker_.joinable()) {
            worker_.join();
            if (worker_rc_ != CUZK_OK) {
                if (err) *err = worker_err_;
                return worker_rc_;
            }
        }
        return CUZK_OK;
    }

    const affine_t<F> *points_of(uint64_t k) const {
        return points_dev_ ? points_ + k * chunk_ : stages_[k % nstages_].points.template as<affine_t<F>>();
    }
    // Set j's scalars of chunk k.
    const fr_t *scalars_of(uint64_t k, uint32_t j) const {
        return scalars_dev_ ? scalars_[j] + k * chunk_ : stages_[k % nstages_].scalars.template as<fr_t>() + j * chunk_;
    }

   private:
    struct stage {
        msm_buffer points, scalars;
        cudaEvent_t uploaded = nullptr, consumed = nullptr;
    };
    const affine_t<F> *points_;
    const fr_t *const *scalars_;
    uint32_t sets_;
    bool points_dev_, scalars_dev_;
    uint64_t n_, chunk_;
    int32_t ordinal_ = 0;
    uint32_t nstages_ = 0;
    stage stages_[2];
    cudaStream_t up_ = nullptr;
    std::thread worker_;
    int32_t worker_rc_ = CUZK_OK;
    cuzk_error worker_err_{};
};

}  // namespace cuzk

// upload_to_device (upload.cuh): pageable sources through a ring of pinned
// slots filled by several threads.
//
// Each device has a pool of THREADS x 2 slots of SLOT bytes (pinned with
// cudaHostAlloc the first time a pageable upload reaches it, kept for the
// life of the process: 128 MiB per device). Thread j copies chunks j,
// j + THREADS, ... alternating its two slots; before refilling a slot it
// waits for the event recorded after that slot's DMA. One upload holds the
// pool at a time (PCIe is shared anyway).
#include "upload.cuh"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "../error.cuh"

namespace cuzk {
namespace {

constexpr int THREADS = 8;
constexpr size_t SLOT = 8u << 20;
// Below this a pageable copy goes straight to the driver.
constexpr size_t DIRECT_BELOW = 4u << 20;
// Below this a pageable copy does not wait for a busy pool.
constexpr size_t BYPASS_BELOW = 64u << 20;

struct slot {
    void *host = nullptr;
    cudaEvent_t done = nullptr;
};

struct pool {
    std::mutex busy;
    bool ready = false;
    slot slots[THREADS][2];
};

std::mutex pools_mtx;
std::vector<std::unique_ptr<pool>> pools;  // by device ordinal

pool *pool_for(int device) {
    std::lock_guard<std::mutex> g(pools_mtx);
    if ((int)pools.size() <= device) pools.resize(device + 1);
    if (!pools[device]) pools[device] = std::make_unique<pool>();
    return pools[device].get();
}

// Pins the slots (under p->busy). On failure the pool stays unready and
// uploads fall back to the driver's staging.
bool make_ready(pool *p) {
    if (p->ready) return true;
    for (auto &per_thread : p->slots)
        for (slot &sl : per_thread) {
            if (!sl.host) {
                if (cudaHostAlloc(&sl.host, SLOT, cudaHostAllocPortable) != cudaSuccess) {
                    sl.host = nullptr;
                    return false;
                }
                note_pinned(sl.host, SLOT);
            }
            if (!sl.done && cudaEventCreateWithFlags(&sl.done, cudaEventDisableTiming) != cudaSuccess) {
                sl.done = nullptr;
                return false;
            }
        }
    p->ready = true;
    return true;
}

bool is_pinned(const void *src) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, src) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky-free error of an unknown pointer
        return false;
    }
    return a.type == cudaMemoryTypeHost || a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

}  // namespace

int32_t upload_to_device(void *dst, const void *src, size_t bytes, cudaStream_t s, cuzk_error *err) {
    if (bytes == 0) return CUZK_OK;
    if (bytes < DIRECT_BELOW || is_pinned(src)) {
        CUZK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
        return CUZK_OK;
    }
    int device = 0;
    CUZK_CUDA(cudaGetDevice(&device));
    pool *p = pool_for(device);
    std::unique_lock<std::mutex> hold(p->busy, std::try_to_lock);
    if (!hold.owns_lock()) {
        // Another upload holds the pool (e.g. the next circuit's a, b, c,
        // hundreds of ms): a small copy goes through the driver instead of
        // waiting for it.
        if (bytes < BYPASS_BELOW) {
            CUZK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
            return CUZK_OK;
        }
        hold.lock();
    }
    if (!make_ready(p)) {
        cudaGetLastError();
        CUZK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
        return CUZK_OK;
    }

    const size_t chunks = (bytes + SLOT - 1) / SLOT;
    const int threads = (int)std::min<size_t>(THREADS, chunks);
    cudaError_t failed[THREADS];
    std::vector<std::thread> workers;
    auto work = [&](int j) {
        failed[j] = cudaSetDevice(device);
        int use = 0;
        for (size_t c = j; c < chunks && failed[j] == cudaSuccess; c += threads, use ^= 1) {
            slot &sl = p->slots[j][use];
            const size_t off = c * SLOT, len = std::min(SLOT, bytes - off);
            if ((failed[j] = cudaEventSynchronize(sl.done)) != cudaSuccess) break;
            memcpy(sl.host, static_cast<const char *>(src) + off, len);
            if ((failed[j] = cudaMemcpyAsync(static_cast<char *>(dst) + off, sl.host, len, cudaMemcpyHostToDevice,
                                             s)) != cudaSuccess)
                break;
            failed[j] = cudaEventRecord(sl.done, s);
        }
    };
    try {
        for (int j = 1; j < threads; j++) workers.emplace_back(work, j);
    } catch (...) {
        for (auto &w : workers) w.join();
        throw;  // std::system_error: the entry point turns it into an error
    }
    work(0);
    for (auto &w : workers) w.join();
    for (int j = 0; j < threads; j++)
        if (failed[j] != cudaSuccess) return cuda_error(err, failed[j], "pinned-staging upload", __FILE__, __LINE__);
    return CUZK_OK;
}

}  // namespace cuzk

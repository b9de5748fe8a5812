// The streams that native calls create for their work, and their priority.
//
// A thread that runs urgent work (a WinningPoSt computing beside a long
// partition, cuzk_thread_urgent_streams) creates its streams at the
// device's greatest priority: the block scheduler then dispatches that
// work's waiting blocks ahead of the other streams' as SMs free up, so the
// urgent proof waits for blocks to finish, not for the partition's
// kernels (an MSM's accumulation keeps every SM busy for ~0.1 s at a
// time). Every other stream has the default priority, the least. The
// setting is the calling thread's: calls that run on threads of their own
// (a native stager, the Rust prover's scoped threads) carry it over.
#pragma once

#include <cuda_runtime.h>

namespace cuzk {

// Whether the calling thread creates urgent streams (off at its start).
bool &urgent_streams();

// A stream non-blocking towards the legacy default stream, on the current
// device, at the calling thread's priority.
inline cudaError_t stream_create(cudaStream_t *s) {
    int priority = 0;
    if (urgent_streams()) {
        int least = 0, greatest = 0;
        cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
        if (e != cudaSuccess) return e;
        priority = greatest;
    }
    return cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, priority);
}

}  // namespace cuzk

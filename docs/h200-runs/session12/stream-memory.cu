// Probe for the next session (not run yet): does device memory grow beyond
// what cudaMalloc hands out when kernels with stack frames (local memory)
// run on two streams at once? Session 12 saw the bucket reduction on a
// second stream push gpu_partition's peak 2-34 MiB over its limit.
//
//   nvcc -arch=sm_90 -o /tmp/probe stream-memory.cu && /tmp/probe
//
// Prints the device memory in use (total - free) above the start after
// each step, and the most seen by a polling host thread while two kernels
// with different local-memory sizes overlap.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <thread>

static size_t used() {
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    return t - f;
}

// A dynamically indexed local array keeps BYTES of stack per thread.
template <int BYTES>
__global__ void with_stack(unsigned *out, unsigned spin) {
    volatile unsigned buf[BYTES / 4];
    for (int i = 0; i < BYTES / 4; i++) buf[i] = i * threadIdx.x;
    unsigned acc = 0;
    for (unsigned k = 0; k < spin; k++) acc += buf[(k * 7 + threadIdx.x) % (BYTES / 4)];
    if (out && acc == 0xffffffffu) *out = acc;
}

int main() {
    cudaSetDevice(0);
    cudaFree(0);
    const size_t base = used();
    auto report = [&](const char *what) { printf("%-60s +%8.2f MiB\n", what, (used() - base) / 1048576.0); };

    cudaStream_t a, b;
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    with_stack<256><<<1, 32, 0, a>>>(nullptr, 1);
    cudaDeviceSynchronize();
    report("one stream, a 256-byte-stack kernel");

    with_stack<1024><<<1, 32, 0, a>>>(nullptr, 1);
    cudaDeviceSynchronize();
    report("same stream, a 1 KiB-stack kernel");

    with_stack<256><<<1, 32, 0, a>>>(nullptr, 1);
    cudaDeviceSynchronize();
    report("same stream, 256 bytes again (does the pool shrink?)");

    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    with_stack<256><<<1, 32, 0, b>>>(nullptr, 1);
    cudaDeviceSynchronize();
    report("a second stream, 256 bytes");

    // Overlap: a long 256-byte kernel on a, a 1 KiB one on b, while a host
    // thread polls.
    std::atomic<bool> stop{false};
    std::atomic<size_t> peak{0};
    std::thread poll([&] {
        while (!stop) {
            size_t u = used();
            if (u > peak) peak = u;
        }
    });
    with_stack<256><<<132 * 8, 256, 0, a>>>(nullptr, 1u << 16);
    with_stack<1024><<<132 * 2, 256, 0, b>>>(nullptr, 1u << 14);
    cudaDeviceSynchronize();
    stop = true;
    poll.join();
    report("after two overlapping kernels");
    printf("%-60s +%8.2f MiB\n", "peak seen while they overlapped", (peak - base) / 1048576.0);

    size_t limit = 0;
    cudaDeviceGetLimit(&limit, cudaLimitStackSize);
    printf("cudaLimitStackSize now %zu bytes\n", limit);
    return 0;
}

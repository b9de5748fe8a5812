// Probe (session 14): what does a per-thread stack above the default 1 KiB
// cost in device memory, at once and per stream? With cudaLimitStackSize
// raised to 2688 bytes (the MSM's G2 reduction), gpu_partition's peak went
// 28 MiB over its planned bytes; so did a build whose kernels needed 1536.
//
//   nvcc -arch=sm_90 -o /tmp/stack-limit stack-limit.cu && /tmp/stack-limit [STACK_BYTES]
//
// Prints device memory in use above the start after each step; with no
// argument the limit is left at its default.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

static size_t used() {
    size_t f = 0, t = 0;
    cudaMemGetInfo(&f, &t);
    return t - f;
}

template <int BYTES>
__global__ void with_stack(unsigned *out, unsigned spin) {
    volatile unsigned buf[BYTES / 4];
    for (int i = 0; i < BYTES / 4; i++) buf[i] = i * threadIdx.x;
    unsigned acc = 0;
    for (unsigned k = 0; k < spin; k++) acc += buf[(k * 7 + threadIdx.x) % (BYTES / 4)];
    if (out && acc == 0xffffffffu) *out = acc;
}

int main(int argc, char **argv) {
    cudaSetDevice(0);
    cudaFree(0);
    const size_t base = used();
    auto report = [&](const char *what) {
        size_t lim = 0;
        cudaDeviceGetLimit(&lim, cudaLimitStackSize);
        printf("%-58s +%8.2f MiB  (stack limit %zu)\n", what, (used() - base) / 1048576.0, lim);
    };
    report("start");
    if (argc > 1) {
        cudaError_t e = cudaDeviceSetLimit(cudaLimitStackSize, (size_t)atol(argv[1]));
        printf("cudaDeviceSetLimit(%s): %s\n", argv[1], cudaGetErrorString(e));
        report("after cudaDeviceSetLimit");
    }
    cudaStream_t s[8];
    cudaStreamCreateWithFlags(&s[0], cudaStreamNonBlocking);
    with_stack<256><<<1, 32, 0, s[0]>>>(nullptr, 1);
    cudaDeviceSynchronize();
    report("stream 1, a 256-byte kernel");
    with_stack<2048><<<1, 32, 0, s[0]>>>(nullptr, 1);
    cudaDeviceSynchronize();
    report("stream 1, a 2 KiB kernel");
    with_stack<256><<<1, 32, 0, s[0]>>>(nullptr, 1);
    cudaDeviceSynchronize();
    report("stream 1, 256 bytes again");
    for (int i = 1; i < 8; i++) {
        cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking);
        with_stack<256><<<1, 32, 0, s[i]>>>(nullptr, 1);
        cudaDeviceSynchronize();
        char what[64];
        snprintf(what, sizeof what, "stream %d created, a 256-byte kernel on it", i + 1);
        report(what);
    }
    // Overlap on 4 streams while a host thread polls.
    std::atomic<bool> stop{false};
    std::atomic<size_t> peak{0};
    std::thread poll([&] {
        while (!stop) {
            size_t u = used();
            if (u > peak) peak = u;
        }
    });
    for (int i = 0; i < 4; i++) with_stack<256><<<132 * 2, 256, 0, s[i]>>>(nullptr, 1u << 15);
    with_stack<2048><<<132 * 2, 256, 0, s[4]>>>(nullptr, 1u << 13);
    cudaDeviceSynchronize();
    stop = true;
    poll.join();
    report("after 5 overlapping kernels");
    printf("%-58s +%8.2f MiB\n", "peak seen while they overlapped", (peak - base) / 1048576.0);
    for (int i = 0; i < 8; i++) cudaStreamDestroy(s[i]);
    cudaDeviceSynchronize();
    report("streams destroyed");
    return 0;
}

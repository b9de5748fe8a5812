// CUB's 8-bit onesweep on (key, value) pairs laid out as the MSM's digits kernel writes them,
// against uniform keys: does the MSM's key distribution explain its slower sort?
#include <cub/device/device_radix_sort.cuh>
#include <cstdio>
__device__ uint32_t mix(uint64_t x) { x *= 0x9E3779B97F4A7C15ull; x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 32; return (uint32_t)x; }
// kind 0: uniform 23-bit keys. kind 1: MSM layout: windows w0..w1 of 2^19 buckets, runs of 32 per window per warp;
// the window `top` (if < w1) has only 2^15 buckets.
__global__ void fill(uint32_t *k, uint32_t *v, uint64_t n, int kind, int nw, int top, int bits) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
    uint32_t r = mix(i + 12345);
    if (kind == 0) { k[i] = r & ((1u << bits) - 1); v[i] = (uint32_t)i; return; }
    uint64_t per_warp = 32ull * nw, warp = i / per_warp, off = i % per_warp;
    uint32_t w = (uint32_t)(off / 32), lane = (uint32_t)(off % 32);
    uint32_t bucket = w == (uint32_t)top ? (r & ((1u << 15) - 1)) : (r & ((1u << 19) - 1));
    k[i] = w * (1u << 19) + bucket; v[i] = (uint32_t)(warp * 32 + lane) | ((r >> 31) << 31);
}
// A multiply-bound kernel for ~`iters` rounds: the MSM's accumulation load before a sort.
__global__ void heat(uint64_t *out, int iters) {
    uint64_t x = threadIdx.x + 1, y = blockIdx.x + 3;
    for (int i = 0; i < iters; i++) { x = x * 0x9E3779B97F4A7C15ull + y; y = y * 0xBF58476D1CE4E5B9ull + x; }
    if (x == 42) out[0] = y;
}
int main() {
    setvbuf(stdout, nullptr, _IONBF, 0);
    struct C { int kind, nw, top; uint64_t n; const char *what; } cs[] = {
        {0, 8, -1, 8ull << 26, "uniform 23-bit, 8 x 2^26"}, {1, 8, -1, 8ull << 26, "MSM group 1: 8 windows"},
        {0, 5, -1, 5ull << 26, "uniform 23-bit, 5 x 2^26"}, {1, 5, 4, 5ull << 26, "MSM group 2: 5 windows, top 2^15 buckets"},
        {1, 5, -1, 5ull << 26, "MSM group 2 without the small top window"}};
    uint32_t *dk[2], *dv[2]; size_t cap = 8ull << 26;
    for (int j = 0; j < 2; j++) { cudaMalloc(&dk[j], cap * 4); cudaMalloc(&dv[j], cap * 4); }
    size_t tb = 0; cub::DeviceRadixSort::SortPairs(nullptr, tb, dk[0], dk[1], dv[0], dv[1], (int)cap, 0, 23);
    void *tmp; cudaMalloc(&tmp, tb);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (auto &c : cs) {
        fill<<<(unsigned)((c.n + 255) / 256), 256>>>(dk[0], dv[0], c.n, c.kind, c.nw, c.top, 23);
        float best = 1e9, hot = 1e9;
        for (int r = 0; r < 8; r++) {
            float heat_ms = 0;
            if (r >= 4) {  // after ~300 ms of multiply-bound work, as in the MSM
                cudaEventRecord(a); heat<<<132 * 16, 256>>>((uint64_t *)tmp, 1 << 19); cudaEventRecord(b); cudaEventSynchronize(b);
                cudaEventElapsedTime(&heat_ms, a, b);
            }
            cudaEventRecord(a);
            cub::DeviceRadixSort::SortPairs(tmp, tb, dk[0], dk[1], dv[0], dv[1], (int)c.n, 0, 23);
            cudaEventRecord(b); cudaEventSynchronize(b);
            float ms; cudaEventElapsedTime(&ms, a, b);
            if (r > 0 && r < 4 && ms < best) best = ms;
            if (r >= 4 && ms < hot) hot = ms;
            if (r == 4) printf("  (heat kernel %.1f ms)\n", heat_ms);
        }
        printf("%-45s n=%llu: %.2f ms idle before, %.2f ms right after the heat kernel (err %d)\n", c.what, (unsigned long long)c.n, best, hot, (int)cudaGetLastError());
    }
}

// Radix sort of (22-bit key, 32-bit value) pairs: CUB's default (8-bit digits) against 11-bit digits.
#include "sort.cuh"
#include <cstdio>
#include <vector>
template <class F>
float timeit(F f) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    f(); cudaDeviceSynchronize();
    float best = 1e9;
    for (int r = 0; r < 5; r++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); best = ms < best ? ms : best; }
    return best;
}
__global__ void fill(uint32_t *k, uint32_t *v, int n, int bits) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
    uint64_t x = (uint64_t)i * 0x9E3779B97F4A7C15ull; x ^= x >> 29; x *= 0xBF58476D1CE4E5B9ull; x ^= x >> 32;
    k[i] = (uint32_t)x & ((1u << bits) - 1); v[i] = i;
}
int main() {
    setvbuf(stdout, nullptr, _IONBF, 0);
    for (int bits : {22, 23}) for (long nl : {1000L, (1L << 20) + 3, 536870912L, 335544320L, 872415232L}) {
        int n = (int)nl;
        uint32_t *dk[2], *dv[2];
        for (int j = 0; j < 2; j++) { cudaMalloc(&dk[j], (size_t)n * 4); cudaMalloc(&dv[j], (size_t)n * 4); }
        fill<<<(n + 255) / 256, 256>>>(dk[0], dv[0], n, bits);
        size_t t8 = 0, t11 = 0;
        cub::DeviceRadixSort::SortPairs(nullptr, t8, dk[0], dk[1], dv[0], dv[1], n, 0, bits);
        cuzk::sort_pairs<RBITS>(nullptr, t11, dk[0], dk[1], dv[0], dv[1], n, bits, 0);
        void *tmp; cudaMalloc(&tmp, t8 > t11 ? t8 : t11);
        float ms8 = timeit([&] { cub::DeviceRadixSort::SortPairs(tmp, t8, dk[0], dk[1], dv[0], dv[1], n, 0, bits); });
        std::vector<uint32_t> ref(n), refv(n), k(n), v(n);
        cudaMemcpy(ref.data(), dk[1], (size_t)n * 4, cudaMemcpyDeviceToHost); cudaMemcpy(refv.data(), dv[1], (size_t)n * 4, cudaMemcpyDeviceToHost);
        cudaMemset(dk[1], 0, (size_t)n * 4); cudaMemset(dv[1], 0, (size_t)n * 4);
        cudaError_t e = cudaSuccess;
        float ms11 = timeit([&] { e = cuzk::sort_pairs<RBITS>(tmp, t11, dk[0], dk[1], dv[0], dv[1], n, bits, 0); });
        cudaError_t e2 = cudaDeviceSynchronize();
        cudaMemcpy(k.data(), dk[1], (size_t)n * 4, cudaMemcpyDeviceToHost); cudaMemcpy(v.data(), dv[1], (size_t)n * 4, cudaMemcpyDeviceToHost);
        bool same = k == ref && v == refv;
        printf("bits %d n %d: cub 8-bit %.2f ms (tmp %zu), %d-bit %.2f ms (tmp %zu), err %d/%d, identical %d\n", bits, n, ms8, t8, RBITS, ms11, t11, (int)e, (int)e2, same);
        cudaFree(tmp); for (int j = 0; j < 2; j++) { cudaFree(dk[j]); cudaFree(dv[j]); }
    }
}

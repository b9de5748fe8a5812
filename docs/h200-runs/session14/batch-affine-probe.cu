// Probe (session 14, for the next session's device time): is batch-affine
// point addition worth building into the MSM's accumulation on the H200?
//
// The accumulation adds SRS points (affine) into XYZZ buckets: ~10 Fp
// multiplications an addition (madd-2008-s). Adding two affine points needs
// 1/(x2 - x1); Montgomery's trick shares one inversion among K additions
// (3 multiplications each for the running products and their undoing), so
// an addition costs ~5 M + 1 S + inversion / K. This measures both, with
// our own Fp code, per addition:
//   xyzz   each thread adds K affine points into one XYZZ sum;
//   affine each thread adds K independent affine pairs with one inversion
//          (Fermat, ~570 multiplications), its running products in local
//          memory (K x 48 bytes a thread), the sums written out.
// It checks the affine sums of the first threads against XYZZ sums made
// affine. Build and run (from the repository root):
//   build/cuda/bin/nvcc -O3 -std=c++17 -I native -arch=sm_90 \
//       -L build/cuda/lib64 -o /tmp/ba docs/h200-runs/session14/batch-affine-probe.cu && /tmp/ba
// The real accumulation would also need log2(run length) passes over the
// entries and their stores; this is the ceiling of the gain, not the gain.
#include <cuda_runtime.h>

#include <cstdio>

#include "ec/curves.cuh"

using namespace cuzk;

#define CK(x)                                                                               \
    do {                                                                                    \
        cudaError_t e_ = (x);                                                               \
        if (e_ != cudaSuccess) {                                                            \
            printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));       \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

constexpr int NPTS = 1 << 16;  // distinct points: k G for k = 1..NPTS
constexpr int BLOCK = 128;

// The G1 generator (big-endian hex words as in the spec), in plain integers.
__device__ const uint32_t GX[12] = {0xdb22c6bb, 0xfb3af00a, 0xf97a1aef, 0x6c55e83f, 0x171bac58, 0xa14e3a3f,
                                    0x9774b905, 0xc3688c4f, 0x4fa9ac0f, 0x2695638c, 0x3197d794, 0x17f1d3a7};
__device__ const uint32_t GY[12] = {0x46c5e7e1, 0x0caa2329, 0xa2888ae4, 0xd03cc744, 0x2c04b3ed, 0x00db18cb,
                                    0xd5d00af6, 0xfcf5e095, 0x741d8ae4, 0xa09e30ed, 0xe3aaa0f1, 0x08b3f481};

// Plain integer -> Montgomery form: x R = mont_mul(x, R^2), R^2 by doubling R.
__device__ fp_t to_mont(const uint32_t *x) {
    fp_t rr = fp_t::one();
    for (int i = 0; i < 384; i++) rr = rr + rr;
    fp_t raw;
    for (int i = 0; i < 12; i++) raw.v[i] = x[i];
    return raw * rr;
}

// pts[i] = (i + 1) G, affine; ok[0] = 1 if G is on y^2 = x^3 + 4.
__global__ void make_points(g1_affine_t *pts, int *ok) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    g1_affine_t g{to_mont(GX), to_mont(GY)};
    if (i == 0) {
        fp_t four = fp_t::one() + fp_t::one() + fp_t::one() + fp_t::one();
        fp_t lhs = g.y.sqr(), rhs = g.x.sqr() * g.x + four;
        ok[0] = (lhs - rhs).is_zero();
    }
    if (i >= NPTS) return;
    g1_xyzz_t p = g1_xyzz_t::from_affine(g);
    pts[i] = p.mul_small((uint32_t)i + 1).to_affine();
}

__device__ __forceinline__ uint32_t pick(uint64_t t, int j, int salt) {
    return (uint32_t)((t * 2654435761u + (uint64_t)j * 40503u + (uint64_t)salt * 977u) % NPTS);
}

// Baseline: K mixed additions into one XYZZ sum per thread.
// Both kernels under the accumulation's register bound: 4 blocks of 128.
template <int K>
__global__ void __launch_bounds__(BLOCK, 4) xyzz_sums(const g1_affine_t *pts, g1_xyzz_t *out, uint64_t threads) {
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    g1_xyzz_t acc = g1_xyzz_t::from_affine(pts[pick(t, 0, 0)]);
    for (int j = 0; j < K; j++) acc.add_inl(pts[pick(t, j, 1)]);
    out[t] = acc;
}

// K independent affine additions a_j + b_j per thread, one inversion.
// a_j and b_j are distinct multiples of G (no doubling, no opposite pair),
// unless pick collides; the check counts any mismatch.
template <int K>
__global__ void __launch_bounds__(BLOCK, 4) affine_sums(const g1_affine_t *pts, g1_affine_t *out, uint64_t threads) {
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    fp_t pre[K];  // pre[j] = prod_{i <= j} (b_i.x - a_i.x)
    fp_t run = fp_t::one();
    for (int j = 0; j < K; j++) {
        const g1_affine_t a = pts[pick(t, j, 2)], b = pts[pick(t, j, 3)];
        run = run * (b.x - a.x);
        pre[j] = run;
    }
    fp_t inv = run.inverse();  // 1 / prod of all
    for (int j = K - 1; j >= 0; j--) {
        const g1_affine_t a = pts[pick(t, j, 2)], b = pts[pick(t, j, 3)];
        const fp_t d = b.x - a.x;
        const fp_t inv_d = j > 0 ? inv * pre[j - 1] : inv;  // 1 / d_j
        inv = inv * d;                                      // 1 / prod_{i < j}
        const fp_t lambda = (b.y - a.y) * inv_d;
        const fp_t x3 = lambda.sqr() - a.x - b.x;
        const fp_t y3 = lambda * (a.x - x3) - a.y;
        out[t * K + j] = {x3, y3};
    }
}

// For the first `threads` threads, a_j + b_j in XYZZ made affine against
// the batch result; counts mismatches (and pairs with equal x, skipped).
template <int K>
__global__ void check_affine(const g1_affine_t *pts, const g1_affine_t *out, uint64_t threads, int *bad) {
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    for (int j = 0; j < K; j++) {
        const g1_affine_t a = pts[pick(t, j, 2)], b = pts[pick(t, j, 3)];
        if ((a.x - b.x).is_zero()) {
            atomicAdd(bad + 1, 1);
            continue;
        }
        g1_xyzz_t s = g1_xyzz_t::from_affine(a);
        s.add_inl(b);
        const g1_affine_t want = s.to_affine();
        const g1_affine_t got = out[t * K + j];
        if (!(want.x - got.x).is_zero() || !(want.y - got.y).is_zero()) atomicAdd(bad, 1);
    }
}

// The least of 3 timed runs of `launch` (ms), after one untimed run (which
// also grows the local-memory pool); negative on a CUDA error.
template <class Launch>
float best_ms(Launch launch) {
    launch();
    if (cudaDeviceSynchronize() != cudaSuccess) return -1;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float best = 1e30f;
    for (int r = 0; r < 3; r++) {
        cudaEventRecord(a);
        launch();
        cudaEventRecord(b);
        if (cudaEventSynchronize(b) != cudaSuccess) return -1;
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        best = ms < best ? ms : best;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return best;
}

template <int K>
int run_affine(const g1_affine_t *pts, uint64_t threads, float xyzz_ns) {
    g1_affine_t *out;
    int *bad;
    CK(cudaMalloc(&out, threads * K * sizeof(g1_affine_t)));
    CK(cudaMalloc(&bad, 2 * sizeof(int)));
    CK(cudaMemset(bad, 0, 2 * sizeof(int)));
    const unsigned grid = (unsigned)((threads + BLOCK - 1) / BLOCK);
    const float best = best_ms([&] { affine_sums<K><<<grid, BLOCK>>>(pts, out, threads); });
    CK(best < 0 ? cudaGetLastError() : cudaSuccess);
    check_affine<K><<<4, BLOCK>>>(pts, out, 4 * BLOCK, bad);
    int h[2];
    CK(cudaMemcpy(h, bad, sizeof h, cudaMemcpyDeviceToHost));
    cudaFuncAttributes attr;
    cudaFuncGetAttributes(&attr, affine_sums<K>);
    const float ns = best * 1e6f / (float)(threads * K);
    printf("| affine, K = %3d | %8.3f | %6.3f | %5.2fx | %d regs, %zu B local | %d of %d wrong (%d equal-x skipped) |\n", K,
           best, ns, xyzz_ns / ns, attr.numRegs, attr.localSizeBytes, h[0], 4 * BLOCK * K, h[1]);
    cudaFree(out);
    cudaFree(bad);
    return h[0] != 0;
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    g1_affine_t *pts;
    int *ok;
    CK(cudaMalloc(&pts, NPTS * sizeof(g1_affine_t)));
    CK(cudaMalloc(&ok, sizeof(int)));
    make_points<<<NPTS / BLOCK, BLOCK>>>(pts, ok);
    CK(cudaDeviceSynchronize());
    int h_ok = 0;
    CK(cudaMemcpy(&h_ok, ok, sizeof h_ok, cudaMemcpyDeviceToHost));
    printf("generator on the curve: %s; %d SMs\n", h_ok ? "yes" : "NO (results meaningless)", sms);

    // Enough threads to fill the card several times over.
    const uint64_t threads = (uint64_t)sms * 2048 * 2;
    constexpr int KX = 64;
    g1_xyzz_t *xo;
    CK(cudaMalloc(&xo, threads * sizeof(g1_xyzz_t)));
    const unsigned grid = (unsigned)((threads + BLOCK - 1) / BLOCK);
    const float best = best_ms([&] { xyzz_sums<KX><<<grid, BLOCK>>>(pts, xo, threads); });
    CK(best < 0 ? cudaGetLastError() : cudaSuccess);
    cudaFuncAttributes attr;
    cudaFuncGetAttributes(&attr, xyzz_sums<KX>);
    const float xyzz_ns = best * 1e6f / (float)(threads * KX);
    printf("\n| kernel | ms | ns per addition | speed-up over XYZZ | registers, local memory | check |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    printf("| XYZZ mixed, K = %d | %8.3f | %6.3f | 1.00x | %d regs, %zu B local | |\n", KX, best, xyzz_ns,
           attr.numRegs, attr.localSizeBytes);
    int fails = 0;
    fails += run_affine<16>(pts, threads, xyzz_ns);
    fails += run_affine<32>(pts, threads, xyzz_ns);
    fails += run_affine<64>(pts, threads, xyzz_ns);
    fails += run_affine<128>(pts, threads, xyzz_ns);
    fails += run_affine<256>(pts, threads, xyzz_ns);
    printf("%s\n", fails ? "SOME AFFINE SUMS WRONG" : "affine sums match XYZZ on the checked threads");
    return fails != 0;
}

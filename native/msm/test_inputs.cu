// Bench and test inputs made on the device (2^26 random points on the host
// take minutes): `distinct` points k_i G for pseudo-random 64-bit k_i
// (double-and-add in XYZZ, one Fermat inversion each), tiled to n points,
// and n pseudo-random scalars below r (any value below r is a valid
// Montgomery form). Not for proving: only for timing and checks.
#include "../ec/curves.cuh"
#include "../error.cuh"

using namespace cuzk;

namespace {

__device__ __forceinline__ uint64_t splitmix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

template <class F>
__global__ void make_points(affine_t<F> gen, uint64_t seed, uint64_t distinct, affine_t<F> *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= distinct) return;
    uint64_t k = splitmix(seed ^ (i * 0x2545f4914f6cdd1dull)) | 1;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (int bit = 63; bit >= 0; bit--) {
        acc.dbl();
        if ((k >> bit) & 1) acc.add(gen);
    }
    out[i] = acc.to_affine();
}

template <class T>
__global__ void tile(T *buf, uint64_t distinct, uint64_t n) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || i < distinct) return;
    buf[i] = buf[i % distinct];
}

__global__ void make_scalars(uint64_t seed, uint64_t n, uint64_t *out) {
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t x = seed ^ (i * 0x9e3779b97f4a7c15ull);
    for (int l = 0; l < 4; l++) {
        x = splitmix(x);
        out[4 * i + l] = l == 3 ? (x & 0x3fffffffffffffffull) : x;  // < 2^254 < r
    }
}

template <class F>
int32_t make(int32_t ordinal, const void *generator, uint64_t seed, uint64_t n, uint64_t distinct, void *d_points,
             void *d_scalars, cuzk_error *err) {
    CUZK_REQUIRE(generator && (n == 0 || (d_points && d_scalars)), "null argument");
    CUZK_REQUIRE(distinct >= 1 && distinct <= n, "distinct must be in 1..n");
    CUZK_CUDA(cudaSetDevice(ordinal));
    affine_t<F> gen;
    memcpy(&gen, generator, sizeof(gen));
    auto *pts = static_cast<affine_t<F> *>(d_points);
    make_points<F><<<(unsigned)((distinct + 127) / 128), 128>>>(gen, seed, distinct, pts);
    CUZK_LAUNCHED();
    tile<affine_t<F>><<<(unsigned)((n + 255) / 256), 256>>>(pts, distinct, n);
    CUZK_LAUNCHED();
    make_scalars<<<(unsigned)((n + 255) / 256), 256>>>(seed * 31 + 7, n, static_cast<uint64_t *>(d_scalars));
    CUZK_LAUNCHED();
    CUZK_CUDA(cudaDeviceSynchronize());
    return ok(err);
}

}  // namespace

extern "C" int32_t cuzk_test_msm_inputs(int32_t ordinal, int32_t g2, const void *generator, uint64_t seed,
                                        uint64_t n, uint64_t distinct, void *d_points, void *d_scalars,
                                        cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    if (n == 0) return ok(err);
    return g2 ? make<fp2_t>(ordinal, generator, seed, n, distinct, d_points, d_scalars, err)
              : make<fp_t>(ordinal, generator, seed, n, distinct, d_points, d_scalars, err);
    CUZK_ENTRY_END
}

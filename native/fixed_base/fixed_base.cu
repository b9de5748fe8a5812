// Fixed-base scalar multiplication (cuzk.h: cuzk_fixed_base_g1 / _g2):
// out[i] = k_i * g for one base point g and many scalars, as parameter
// generation needs (every query point is the generator times a scalar).
//
// The caller passes the window table of cuzk-core's arith/fixed_base.rs:
// table[w * 2^c + d] = d * 2^(c w) * g (affine; entry d = 0 unused), so
// k * g is one mixed addition per non-zero c-bit window of k and no
// doubling. One thread per scalar: no thread waits on another, and the
// table (2^c * windows points, ~100 MiB for G1 at c = 16) is read through
// L2. Results leave as Jacobian points (blst_p1 / blst_p2); the host
// normalizes them in batches (one inversion per batch), cheaper there than
// one inversion per point here.
//
// Device memory is owned by msm_buffer (freed on every path); every CUDA
// call is checked; nothing throws across the C ABI.
#include "../ec/curves.cuh"
#include "../ff/fr.cuh"
#include "../error.cuh"
#include "../msm/buffer.cuh"

using namespace cuzk;

namespace {

// Bits [lo, lo + c) of a 256-bit little-endian integer, c <= 32.
__device__ __forceinline__ uint32_t bits_at(const uint32_t (&a)[8], uint32_t lo, uint32_t c) {
    const uint32_t limb = lo / 32, shift = lo % 32;
    uint64_t w = limb < 8 ? a[limb] : 0;
    if (limb + 1 < 8) w |= (uint64_t)a[limb + 1] << 32;
    return (uint32_t)(w >> shift) & ((1u << c) - 1);
}

template <class F>
__global__ void fixed_base_kernel(const affine_t<F> *table, uint32_t c, uint32_t windows, const fr_t *scalars,
                                  uint64_t n, jacobian_t<F> *out) {
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const fr_t k = scalars[i].from_mont();  // canonical
    xyzz_t<F> acc = xyzz_t<F>::inf();
    for (uint32_t w = 0; w < windows; w++) {
        const uint32_t d = bits_at(k.v, w * c, c);
        if (d) acc.add(table[((uint64_t)w << c) | d]);
    }
    out[i] = acc.to_jacobian();
}

template <class F>
int32_t fixed_base(int32_t ordinal, const void *table, uint32_t c, uint32_t windows, const void *scalars, uint64_t n,
                   void *out, cuzk_error *err) {
    CUZK_REQUIRE(table && scalars && out, "null argument");
    CUZK_REQUIRE(c >= 1 && c <= 24, "window width %u outside 1..24 bits", c);
    CUZK_REQUIRE((uint64_t)windows * c >= 255 && (uint64_t)(windows - 1) * c < 255,
                 "%u windows of %u bits do not cover a 255-bit scalar exactly", windows, c);
    if (n == 0) return cuzk::ok(err);
    CUZK_CUDA(cudaSetDevice(ordinal));
    const size_t table_bytes = ((size_t)windows << c) * sizeof(affine_t<F>);
    const size_t scalar_bytes = n * sizeof(fr_t), out_bytes = n * sizeof(jacobian_t<F>);
    msm_buffer d_table, d_scalars, d_out;  // owned cudaMalloc, freed on every path
    CUZK_TRY(d_table.alloc(table_bytes, err));
    CUZK_TRY(d_scalars.alloc(scalar_bytes, err));
    CUZK_TRY(d_out.alloc(out_bytes, err));
    CUZK_CUDA(cudaMemcpy(d_table.as<void>(), table, table_bytes, cudaMemcpyHostToDevice));
    CUZK_CUDA(cudaMemcpy(d_scalars.as<void>(), scalars, scalar_bytes, cudaMemcpyHostToDevice));
    constexpr uint32_t threads = 128;
    const uint64_t blocks = (n + threads - 1) / threads;
    CUZK_REQUIRE(blocks <= 0x7fffffffull, "%llu scalars exceed one launch", (unsigned long long)n);
    fixed_base_kernel<F><<<(uint32_t)blocks, threads>>>(d_table.as<affine_t<F>>(), c, windows,
                                                       d_scalars.as<fr_t>(), n, d_out.as<jacobian_t<F>>());
    CUZK_LAUNCHED();
    CUZK_CUDA(cudaMemcpy(out, d_out.as<void>(), out_bytes, cudaMemcpyDeviceToHost));
    return cuzk::ok(err);
}

}  // namespace

extern "C" int32_t cuzk_fixed_base_g1(int32_t ordinal, const void *table, uint32_t c, uint32_t windows,
                                      const void *scalars, uint64_t n, void *out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    return fixed_base<fp_t>(ordinal, table, c, windows, scalars, n, out, err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_fixed_base_g2(int32_t ordinal, const void *table, uint32_t c, uint32_t windows,
                                      const void *scalars, uint64_t n, void *out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    return fixed_base<fp2_t>(ordinal, table, c, windows, scalars, n, out, err);
    CUZK_ENTRY_END
}

// Builds the NTT context's tables on the device (see context.cuh).
#include "../error.cuh"
#include "context.cuh"

namespace cuzk {

namespace {

// Layout of the single table allocation, in elements.
enum table_id { ROOT_LO, ROOT_HI, INNER, COSET_LO, COSET_HI, MID, TABLE_KINDS };
__host__ __device__ constexpr uint32_t table_len(int id) {
    return id == INNER ? INNER_SIZE : id == MID ? MID_SIZE : TABLE_SIZE;
}
__host__ __device__ constexpr size_t table_offset(int dir, int id) {
    size_t off = 0;
    for (int d = 0; d <= dir; d++)
        for (int i = 0; i < TABLE_KINDS; i++) {
            if (d == dir && i == id) return off;
            off += table_len(i);
        }
    return off;
}
constexpr size_t TABLES_END = table_offset(1, TABLE_KINDS - 1) + table_len(TABLE_KINDS - 1);
constexpr size_t INV_N_OFFSET = TABLES_END;
constexpr size_t Z_INV_OFFSET = INV_N_OFFSET + NTT_MAX_LOG + 1;
constexpr size_t Z_INV_N1_OFFSET = Z_INV_OFFSET + NTT_MAX_LOG + 1;
constexpr size_t Z_INV_N3_OFFSET = Z_INV_N1_OFFSET + NTT_MAX_LOG + 1;
constexpr size_t BASES_OFFSET = Z_INV_N3_OFFSET + NTT_MAX_LOG + 1;  // omega_2^28, its inverse, g, g^-1
constexpr size_t TOTAL_ELEMENTS = BASES_OFFSET + 4;

// One thread: the bases and the per-size scalars. Slow (inversions), run once.
__global__ void setup_scalars_kernel(fr_t *mem) {
    fr_t w = fr_root_of_unity();
    for (int i = NTT_MAX_LOG; i < fr_consts::two_adicity; i++) w = w.sqr();  // 2^32-th -> 2^28-th root
    const fr_t g = fr_generator();
    fr_t *bases = mem + BASES_OFFSET;
    bases[0] = w;
    bases[1] = w.inverse();
    bases[2] = g;
    bases[3] = g.inverse();

    const fr_t inv2 = (fr_t::one() + fr_t::one()).inverse();
    fr_t inv_n = fr_t::one(), g_pow = g;  // g^(2^L)
    for (int L = 0; L <= NTT_MAX_LOG; L++) {
        mem[INV_N_OFFSET + L] = inv_n;
        const fr_t z_inv = (g_pow - fr_t::one()).inverse();
        mem[Z_INV_OFFSET + L] = z_inv;
        mem[Z_INV_N1_OFFSET + L] = z_inv * inv_n;
        mem[Z_INV_N3_OFFSET + L] = z_inv * inv_n * inv_n * inv_n;
        inv_n = inv_n * inv2;
        g_pow = g_pow.sqr();
    }
}

// Every table entry: base^(i << shift).
__global__ void setup_tables_kernel(fr_t *mem) {
    const uint32_t per_dir = (uint32_t)table_offset(1, 0);
    for (uint32_t x = blockIdx.x * blockDim.x + threadIdx.x; x < 2 * per_dir; x += gridDim.x * blockDim.x) {
        const int dir = x >= per_dir;
        uint32_t i = x - dir * per_dir;
        int id = 0;
        while (i >= table_len(id)) i -= table_len(id++);
        const fr_t *bases = mem + BASES_OFFSET;
        const fr_t root = bases[dir], gen = bases[2 + dir];
        fr_t v;
        switch (id) {
            case ROOT_LO: v = root.pow((uint64_t)i); break;
            case ROOT_HI: v = root.pow((uint64_t)i << TABLE_LOG); break;
            case INNER: v = root.pow((uint64_t)i << (NTT_MAX_LOG - INNER_LOG)); break;  // omega_1024^i
            case COSET_LO: v = gen.pow((uint64_t)i); break;
            case COSET_HI: v = gen.pow((uint64_t)i << TABLE_LOG); break;
            default: v = root.pow((uint64_t)i << (NTT_MAX_LOG - MID_LOG)); break;  // MID
        }
        mem[x] = v;
    }
}

}  // namespace

}  // namespace cuzk

using namespace cuzk;

extern "C" int32_t cuzk_ntt_context_create(int32_t ordinal, cuzk_ntt_context **out, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(out, "out is null");
    *out = nullptr;
    CUZK_CUDA(cudaSetDevice(ordinal));
    fr_t *mem = nullptr;
    CUZK_CUDA(device_malloc(&mem, TOTAL_ELEMENTS * sizeof(fr_t)));
    auto build = [&]() -> int32_t {
        setup_scalars_kernel<<<1, 1>>>(mem);
        CUZK_LAUNCHED();
        setup_tables_kernel<<<256, 256>>>(mem);
        CUZK_LAUNCHED();
        CUZK_CUDA(cudaDeviceSynchronize());  // once per device, at start
        return CUZK_OK;
    };
    if (int32_t rc = build(); rc != CUZK_OK) {
        cudaFree(mem);
        return rc;
    }
    auto *ctx = new cuzk_ntt_context;
    ctx->device = ordinal;
    ctx->memory = mem;
    for (int d = 0; d < 2; d++) {
        ctx->tables.root_lo[d] = mem + table_offset(d, ROOT_LO);
        ctx->tables.root_hi[d] = mem + table_offset(d, ROOT_HI);
        ctx->tables.inner[d] = mem + table_offset(d, INNER);
        ctx->tables.mid[d] = mem + table_offset(d, MID);
        ctx->tables.coset_lo[d] = mem + table_offset(d, COSET_LO);
        ctx->tables.coset_hi[d] = mem + table_offset(d, COSET_HI);
    }
    ctx->tables.inv_n = mem + INV_N_OFFSET;
    ctx->tables.z_inv = mem + Z_INV_OFFSET;
    ctx->tables.z_inv_n1 = mem + Z_INV_N1_OFFSET;
    ctx->tables.z_inv_n3 = mem + Z_INV_N3_OFFSET;
    *out = ctx;
    return ok(err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_ntt_context_destroy(cuzk_ntt_context *ctx, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    if (!ctx) return ok(err);
    CUZK_CUDA(cudaSetDevice(ctx->device));
    cudaError_t e = cudaFree(ctx->memory);
    delete ctx;
    CUZK_CUDA(e);
    return ok(err);
    CUZK_ENTRY_END
}

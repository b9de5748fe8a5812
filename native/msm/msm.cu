// The MSM entry points of cuzk.h (G1 and G2 share native/msm/pippenger.cuh).
// A single MSM is a batch of one scalar set.
#include "../ec/curves.cuh"
#include "pippenger.cuh"

using namespace cuzk;

template <class F>
static int32_t msm_entry(int32_t ordinal, const void *points, const void *const *scalars, uint32_t sets, uint64_t n,
                         uint32_t flags, const cuzk_msm_options *opts, void *out, cuzk_msm_stats *stats,
                         cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE((flags & ~(uint32_t)(CUZK_MSM_POINTS_ON_DEVICE | CUZK_MSM_SCALARS_ON_DEVICE |
                                      CUZK_MSM_WINDOW_SUMS)) == 0,
                 "unknown MSM flags 0x%x", flags);
    CUZK_REQUIRE(scalars, "null argument");
    return pippenger<F>(ordinal, static_cast<const affine_t<F> *>(points), flags & CUZK_MSM_POINTS_ON_DEVICE,
                        reinterpret_cast<const fr_t *const *>(scalars), sets, flags & CUZK_MSM_SCALARS_ON_DEVICE, n,
                        opts, flags & CUZK_MSM_WINDOW_SUMS, static_cast<jacobian_t<F> *>(out), stats, err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_msm_g1(int32_t ordinal, const void *points, const void *scalars, uint64_t n,
                               uint32_t flags, const cuzk_msm_options *opts, void *out, cuzk_msm_stats *stats,
                               cuzk_error *err) {
    return msm_entry<fp_t>(ordinal, points, &scalars, 1, n, flags, opts, out, stats, err);
}

extern "C" int32_t cuzk_msm_g2(int32_t ordinal, const void *points, const void *scalars, uint64_t n,
                               uint32_t flags, const cuzk_msm_options *opts, void *out, cuzk_msm_stats *stats,
                               cuzk_error *err) {
    return msm_entry<fp2_t>(ordinal, points, &scalars, 1, n, flags, opts, out, stats, err);
}

extern "C" int32_t cuzk_msm_g1_batch(int32_t ordinal, const void *points, const void *const *scalars, uint32_t sets,
                                     uint64_t n, uint32_t flags, const cuzk_msm_options *opts, void *out,
                                     cuzk_msm_stats *stats, cuzk_error *err) {
    return msm_entry<fp_t>(ordinal, points, scalars, sets, n, flags, opts, out, stats, err);
}

extern "C" int32_t cuzk_msm_g2_batch(int32_t ordinal, const void *points, const void *const *scalars, uint32_t sets,
                                     uint64_t n, uint32_t flags, const cuzk_msm_options *opts, void *out,
                                     cuzk_msm_stats *stats, cuzk_error *err) {
    return msm_entry<fp2_t>(ordinal, points, scalars, sets, n, flags, opts, out, stats, err);
}

template <class F>
static int32_t workspace_entry(int32_t ordinal, uint64_t n, uint32_t sets, uint32_t flags,
                               const cuzk_msm_options *opts, uint64_t *bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    return workspace_bytes<F>(ordinal, n, sets, flags & CUZK_MSM_POINTS_ON_DEVICE, flags & CUZK_MSM_SCALARS_ON_DEVICE,
                              opts, bytes, err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_msm_g1_workspace(int32_t ordinal, uint64_t n, uint32_t flags, const cuzk_msm_options *opts,
                                         uint64_t *bytes, cuzk_error *err) {
    return workspace_entry<fp_t>(ordinal, n, 1, flags, opts, bytes, err);
}

extern "C" int32_t cuzk_msm_g2_workspace(int32_t ordinal, uint64_t n, uint32_t flags, const cuzk_msm_options *opts,
                                         uint64_t *bytes, cuzk_error *err) {
    return workspace_entry<fp2_t>(ordinal, n, 1, flags, opts, bytes, err);
}

extern "C" int32_t cuzk_msm_g1_batch_workspace(int32_t ordinal, uint64_t n, uint32_t sets, uint32_t flags,
                                               const cuzk_msm_options *opts, uint64_t *bytes, cuzk_error *err) {
    return workspace_entry<fp_t>(ordinal, n, sets, flags, opts, bytes, err);
}

extern "C" int32_t cuzk_msm_g2_batch_workspace(int32_t ordinal, uint64_t n, uint32_t sets, uint32_t flags,
                                               const cuzk_msm_options *opts, uint64_t *bytes, cuzk_error *err) {
    return workspace_entry<fp2_t>(ordinal, n, sets, flags, opts, bytes, err);
}

// The largest local memory (stack) a thread of any MSM kernel of group F
// needs. cudaFuncGetAttributes loads the module, so this also makes sure
// the kernels exist for this device.
template <class F>
static cudaError_t max_local_bytes(size_t *bytes) {
    const void *kernels[] = {
        (const void *)count_scalar_kinds,
        (const void *)scalars_to_digits,
        (const void *)first_pass_of<F, 1>().kernel,
        (const void *)pick_first_pass<F>().kernel,
        (const void *)accumulate_runs<F, partial_entries<F>, 1>,
        (const void *)bucket_slices<F>,
        (const void *)sum_groups<F>,
        (const void *)windows_to_jacobian<F>,
        (const void *)combine_windows<F>,
    };
    for (const void *k : kernels) {
        cudaFuncAttributes a;
        const cudaError_t e = cudaFuncGetAttributes(&a, k);
        if (e != cudaSuccess) return e;
        *bytes = std::max(*bytes, a.localSizeBytes);
    }
    return cudaSuccess;
}

// The driver keeps one local-memory pool per device, sized for the stack
// limit times every thread the device can hold (264 MiB per KiB on an
// H200). A launch that needs more raises the limit and grows the pool, and
// the pool never shrinks; so the first G2 MSM would take ~430 MiB behind
// every memory plan's back. Raising the limit here, before anything is
// planned, makes the pool part of what the caller sees as used.
extern "C" int32_t cuzk_msm_reserve_local_memory(int32_t ordinal, uint64_t *stack_bytes, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(stack_bytes, "stack_bytes is null");
    CUZK_CUDA(cudaSetDevice(ordinal));
    size_t need = 0;
    CUZK_CUDA(max_local_bytes<fp_t>(&need));
    CUZK_CUDA(max_local_bytes<fp2_t>(&need));
    size_t limit = 0;
    CUZK_CUDA(cudaDeviceGetLimit(&limit, cudaLimitStackSize));
    if (need > limit) {
        CUZK_CUDA(cudaDeviceSetLimit(cudaLimitStackSize, need));
        CUZK_CUDA(cudaDeviceGetLimit(&limit, cudaLimitStackSize));
    }
    *stack_bytes = limit;
    return cuzk::ok(err);
    CUZK_ENTRY_END
}

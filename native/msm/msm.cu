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

// BLS12-381's two groups as the MSM sees them: G1 over Fp, G2 over Fp2.
// Sizes are asserted against blst's structs (blstrs' G1Affine etc. are
// #[repr(transparent)] over them).
#pragma once

#include "point.cuh"

namespace cuzk {

using g1_affine_t = affine_t<fp_t>;
using g1_jacobian_t = jacobian_t<fp_t>;
using g1_xyzz_t = xyzz_t<fp_t>;
using g2_affine_t = affine_t<fp2_t>;
using g2_jacobian_t = jacobian_t<fp2_t>;
using g2_xyzz_t = xyzz_t<fp2_t>;

static_assert(sizeof(g1_affine_t) == 96, "blst_p1_affine is 96 bytes");
static_assert(sizeof(g1_jacobian_t) == 144, "blst_p1 is 144 bytes");
static_assert(sizeof(g2_affine_t) == 192, "blst_p2_affine is 192 bytes");
static_assert(sizeof(g2_jacobian_t) == 288, "blst_p2 is 288 bytes");

}  // namespace cuzk

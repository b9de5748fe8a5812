// Host-side launchers of the NTT kernels (defined in transform.cu).
#pragma once

#include <cuda_runtime.h>

#include "../cuzk.h"
#include "context.cuh"

namespace cuzk {

// Element-wise factors fused into the pass with lo = 0.
enum scale_mode {
    SCALE_NONE = 0,
    SCALE_CONST = 1,       // * c
    SCALE_COSET = 2,       // * g^bitrev_L(i)  (tables passed in)
    SCALE_COSET_CONST = 3  // * g^bitrev_L(i) * c
};

// An element-wise factor fused into the pass with lo = 0 (see kernels.cuh).
struct scale_spec {
    int mode;  // scale_mode
    const fr_t *lo, *hi, *c;
};

// All radix-2 stages of a size-2^log_n transform with the `dir` roots:
// DIF (natural in, bit-reversed out, `scale` applied to the output) or
// DIT (bit-reversed in, natural out, `scale` applied to the input).
// With `pre_mul`, x[i] *= pre_mul[i] as the first pass loads x.
int32_t enqueue_stages(const ntt_tables &t, direction dir, bool dit, fr_t *x, int log_n, scale_spec scale,
                       cudaStream_t stream, cuzk_error *err, const fr_t *pre_mul = nullptr);

// In-place bit reversal; with `sub`, permutes x[i] - sub[i] instead.
int32_t enqueue_bitrev(fr_t *x, int log_n, cudaStream_t stream, cuzk_error *err, const fr_t *sub = nullptr);


// One natural-order transform of cuzk.h's cuzk_ntt_kind.
int32_t enqueue_transform(const ntt_tables &t, fr_t *x, int log_n, cuzk_ntt_kind kind, cudaStream_t stream,
                          cuzk_error *err);

}  // namespace cuzk

// Test-only entry point: runs one field operation element-wise on the device
// so Rust tests can compare millions of results against blst on the host.
#include <type_traits>

#include "../error.cuh"
#include "fp2.cuh"
#include "fr.cuh"

namespace {

using namespace cuzk;

template <class F>
__global__ void field_op_kernel(cuzk_test_op op, const F *a, const F *b, F *out, uint64_t n) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        F x = a[i], y = b[i], r;
        switch (op) {
            case CUZK_TEST_ADD: r = x + y; break;
            case CUZK_TEST_SUB: r = x - y; break;
            case CUZK_TEST_MUL: r = x * y; break;
            case CUZK_TEST_SQR: r = x.sqr(); break;
            case CUZK_TEST_NEG: r = -x; break;
            default: r = x; break;
        }
        out[i] = r;
    }
}

__global__ void fp_mul_sub_kernel(const fp_t *a, const fp_t *b, const fp_t *c, const fp_t *d, fp_t *out,
                                  uint64_t n) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = fp_t::mul_sub(a[i], b[i], c[i], d[i]);
}

__global__ void fr_inverse_kernel(const fr_t *a, fr_t *out, uint64_t n) {
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        out[i] = a[i].inverse();
}

// Uploads K host arrays of n elements, runs `launch(in, out)` over them
// (in[k]: device copies, out: n elements), and downloads out; the device
// memory is freed on every path.
template <class F, int K, class Launch>
int32_t on_device(int32_t ordinal, const void *const (&in)[K], void *out, uint64_t n, Launch launch, cuzk_error *err) {
    const size_t bytes = n * sizeof(F);
    CUZK_CUDA(cudaSetDevice(ordinal));
    F *d = nullptr;
    CUZK_CUDA(cudaMalloc(&d, (K + 1) * bytes));
    int32_t rc = [&]() -> int32_t {
        const F *dev_in[K];
        for (int k = 0; k < K; k++) {
            CUZK_CUDA(cudaMemcpy(d + k * n, in[k], bytes, cudaMemcpyHostToDevice));
            dev_in[k] = d + k * n;
        }
        launch(dev_in, d + K * n);
        CUZK_LAUNCHED();
        CUZK_CUDA(cudaMemcpy(out, d + K * n, bytes, cudaMemcpyDeviceToHost));
        return CUZK_OK;
    }();
    cudaError_t e = cudaFree(d);
    if (rc != CUZK_OK) return rc;
    CUZK_CUDA(e);
    return ok(err);
}

template <class F>
int32_t run(int32_t ordinal, cuzk_test_op op, const void *a, const void *b, void *out, uint64_t n, cuzk_error *err) {
    const void *const in[2] = {a, b};
    return on_device<F>(ordinal, in, out, n, [&](const F *const *x, F *r) {
        if constexpr (std::is_same<F, fr_t>::value) {
            if (op == CUZK_TEST_INV) {
                fr_inverse_kernel<<<1024, 128>>>(x[0], r, n);
                return;
            }
        }
        field_op_kernel<F><<<1024, 256>>>(op, x[0], x[1], r, n);
    }, err);
}

}  // namespace

extern "C" int32_t cuzk_test_field_op(int32_t ordinal, cuzk_test_field field, cuzk_test_op op, const void *a,
                                      const void *b, void *out, uint64_t n, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(a && b && out, "null buffer");
    CUZK_REQUIRE(op >= CUZK_TEST_ADD && op <= CUZK_TEST_INV, "unknown op %d", (int)op);
    CUZK_REQUIRE(op != CUZK_TEST_INV || field == CUZK_TEST_FR, "inverse is tested for Fr only");
    if (n == 0) return ok(err);
    switch (field) {
        case CUZK_TEST_FR: return run<fr_t>(ordinal, op, a, b, out, n, err);
        case CUZK_TEST_FP: return run<fp_t>(ordinal, op, a, b, out, n, err);
        case CUZK_TEST_FP2: return run<fp2_t>(ordinal, op, a, b, out, n, err);
    }
    return cuzk::set_error(err, CUZK_ERR_INVALID_ARGUMENT, "unknown field %d", (int)field);
    CUZK_ENTRY_END
}

// out[i] = seq(a[i]) for n values of N words, a word sequence of
// carry_ops.cuh run on the host (emulated_ops).
template <int N, class Seq>
static int32_t emulate_each(const void *a, void *out, uint64_t n, Seq seq, cuzk_error *err) {
    CUZK_REQUIRE(a && out, "null buffer");
    const uint32_t *in = static_cast<const uint32_t *>(a);
    uint32_t *res = static_cast<uint32_t *>(out);
    for (uint64_t i = 0; i < n; i++) {
        cuzk::emulated_ops o;
        seq(o, in + N * i, res + N * i);
    }
    return ok(err);
}

extern "C" int32_t cuzk_test_fp_sqr_emulated(const void *a, void *out, uint64_t n, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    return emulate_each<12>(a, out, n, cuzk::mont_sqr_words<cuzk::fp_params, cuzk::emulated_ops>, err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_test_fr_from_mont_emulated(const void *a, void *out, uint64_t n, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    return emulate_each<8>(a, out, n, cuzk::mont_redc_words<cuzk::fr_params, cuzk::emulated_ops>, err);
    CUZK_ENTRY_END
}

extern "C" int32_t cuzk_test_fp_mul_sub(int32_t ordinal, const void *a, const void *b, const void *c,
                                        const void *d, void *out, uint64_t n, cuzk_error *err) {
    CUZK_ENTRY_BEGIN
    CUZK_REQUIRE(a && b && c && d && out, "null buffer");
    if (n == 0) return ok(err);
    const void *const in[4] = {a, b, c, d};
    return on_device<fp_t>(ordinal, in, out, n, [&](const fp_t *const *x, fp_t *r) {
        fp_mul_sub_kernel<<<1024, 256>>>(x[0], x[1], x[2], x[3], r, n);
    }, err);
    CUZK_ENTRY_END
}

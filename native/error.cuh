// Turning CUDA failures and C++ exceptions into a cuzk_code plus a message,
// so that nothing throws or aborts across the C ABI (cuzk.h).
#pragma once

#include <cuda_runtime.h>
#include <cstdarg>
#include <cstdio>
#include <new>
#include <exception>

#include "cuzk.h"

namespace cuzk {

inline int32_t set_error(cuzk_error *err, int32_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

inline int32_t set_error(cuzk_error *err, int32_t code, const char *fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
        va_end(ap);
    }
    return code;
}

inline int32_t cuda_error(cuzk_error *err, cudaError_t e, const char *what, const char *file, int line) {
    int32_t code = (e == cudaErrorMemoryAllocation) ? CUZK_ERR_OUT_OF_MEMORY : CUZK_ERR_CUDA;
    return set_error(err, code, "%s failed: %s (%s, cudaError %d) at %s:%d", what, cudaGetErrorString(e),
                     cudaGetErrorName(e), (int)e, file, line);
}

inline int32_t ok(cuzk_error *err) {
    if (err) {
        err->code = CUZK_OK;
        err->message[0] = 0;
    }
    return CUZK_OK;
}

}  // namespace cuzk

// Return the error from the enclosing entry point when a CUDA call fails.
// Requires a `cuzk_error *err` in scope.
#define CUZK_CUDA(call)                                                         \
    do {                                                                        \
        cudaError_t e_ = (call);                                                \
        if (e_ != cudaSuccess) return cuzk::cuda_error(err, e_, #call, __FILE__, __LINE__); \
    } while (0)

// Same for a kernel launch just made.
#define CUZK_LAUNCHED() CUZK_CUDA(cudaGetLastError())

// Propagate a cuzk_code from a helper.
#define CUZK_TRY(expr)                   \
    do {                                 \
        int32_t c_ = (expr);             \
        if (c_ != CUZK_OK) return c_;    \
    } while (0)

#define CUZK_REQUIRE(cond, ...)                                                         \
    do {                                                                                \
        if (!(cond)) return cuzk::set_error(err, CUZK_ERR_INVALID_ARGUMENT, __VA_ARGS__); \
    } while (0)

// Body of every extern "C" function: no exception escapes.
#define CUZK_ENTRY_BEGIN try {
#define CUZK_ENTRY_END                                                              \
    }                                                                               \
    catch (const std::bad_alloc &) {                                                \
        return cuzk::set_error(err, CUZK_ERR_OUT_OF_MEMORY, "host allocation failed"); \
    }                                                                               \
    catch (const std::exception &e) {                                               \
        return cuzk::set_error(err, CUZK_ERR_INTERNAL, "exception: %s", e.what());   \
    }                                                                               \
    catch (...) {                                                                   \
        return cuzk::set_error(err, CUZK_ERR_INTERNAL, "unknown exception");         \
    }

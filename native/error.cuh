// Turning CUDA failures and C++ exceptions into a cuzk_code plus a message,
// so that nothing throws or aborts across the C ABI (cuzk.h).
#pragma once

#include <cuda_runtime.h>
#include <cstdarg>
#include <cstdio>
#include <new>
#include <exception>

#include "cuzk.h"
#include "test_hooks.cuh"

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

// Errors after which the device's context is unusable (CUDA's sticky
// errors: the context must be torn down) or the device or driver is gone:
// every later call on that device fails too. Any other error fails the
// call alone (a bad launch configuration or argument is our bug, not the
// card's).
inline bool device_lost(cudaError_t e) {
    switch (e) {
        case cudaErrorIllegalAddress:
        case cudaErrorLaunchFailure:
        case cudaErrorHardwareStackError:
        case cudaErrorIllegalInstruction:
        case cudaErrorMisalignedAddress:
        case cudaErrorInvalidAddressSpace:
        case cudaErrorInvalidPc:
        case cudaErrorAssert:
        case cudaErrorLaunchTimeout:
        case cudaErrorECCUncorrectable:
        case cudaErrorNvlinkUncorrectable:
        case cudaErrorContextIsDestroyed:
        case cudaErrorNoDevice:
        case cudaErrorDevicesUnavailable:
        case cudaErrorInitializationError:
        case cudaErrorInsufficientDriver:
        case cudaErrorCudartUnloading:
        case cudaErrorSystemNotReady:
        case cudaErrorUnknown:
            return true;
        default:
            return false;
    }
}

inline int32_t cuda_error(cuzk_error *err, cudaError_t e, const char *what, const char *file, int line) {
    int32_t code = e == cudaErrorMemoryAllocation ? CUZK_ERR_OUT_OF_MEMORY
                   : device_lost(e)              ? CUZK_ERR_DEVICE_LOST
                                                 : CUZK_ERR_CUDA;
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

// Same for a kernel launch just made (where a test may inject a fault).
#define CUZK_LAUNCHED()                                                                       \
    do {                                                                                      \
        cudaError_t f_ = cuzk::injected_fault(cuzk::FAULT_LAUNCH);                            \
        if (f_ != cudaSuccess) return cuzk::cuda_error(err, f_, "kernel launch", __FILE__, __LINE__); \
        CUZK_CUDA(cudaGetLastError());                                                        \
    } while (0)

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

// The carry-chain instructions that the Montgomery sequences of
// mont_redc.cuh and mont_sqr.cuh are written over (`Ops`): on the device
// `ptx_ops` emits them as inline PTX, on the host `emulated_ops` computes
// them with an explicit carry flag. The host form lets CPU tests check
// every carry of those exact instruction sequences against blst
// (cuzk_test_fp_sqr_emulated, cuzk_test_fr_from_mont_emulated); the device
// form is the same sequence.
#pragma once

#include <cstdint>

namespace cuzk {

// Host code only in practice; __host__ __device__ so that nvcc's device pass
// accepts mont_sqr_words instantiated with it.
#define CUZK_HD __host__ __device__ __forceinline__
struct emulated_ops {
    uint32_t cc = 0;
    CUZK_HD static uint32_t lo(uint32_t a, uint32_t b) { return (uint32_t)((uint64_t)a * b); }
    CUZK_HD static uint32_t hi(uint32_t a, uint32_t b) { return (uint32_t)(((uint64_t)a * b) >> 32); }
    CUZK_HD uint32_t sum(uint32_t x, uint32_t y, uint32_t cin, bool set) {
        uint64_t t = (uint64_t)x + y + cin;
        if (set) cc = (uint32_t)(t >> 32);
        return (uint32_t)t;
    }
    CUZK_HD uint32_t diff(uint32_t x, uint32_t y, uint32_t bin, bool set) {
        uint64_t t = (uint64_t)x - y - bin;
        if (set) cc = (uint32_t)(t >> 63);  // borrow
        return (uint32_t)t;
    }
    CUZK_HD uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return sum(lo(a, b), c, 0, true); }
    CUZK_HD uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return sum(lo(a, b), c, cc, true); }
    CUZK_HD uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return sum(hi(a, b), c, cc, true); }
    CUZK_HD uint32_t madc_hi(uint32_t a, uint32_t b, uint32_t c) { return sum(hi(a, b), c, cc, false); }
    CUZK_HD uint32_t add_cc(uint32_t a, uint32_t b) { return sum(a, b, 0, true); }
    CUZK_HD uint32_t addc_cc(uint32_t a, uint32_t b) { return sum(a, b, cc, true); }
    CUZK_HD uint32_t addc(uint32_t a, uint32_t b) { return sum(a, b, cc, false); }
    CUZK_HD uint32_t sub_cc(uint32_t a, uint32_t b) { return diff(a, b, 0, true); }
    CUZK_HD uint32_t subc_cc(uint32_t a, uint32_t b) { return diff(a, b, cc, true); }
    CUZK_HD uint32_t subc(uint32_t a, uint32_t b) { return diff(a, b, cc, false); }
    CUZK_HD static uint32_t shl1(uint32_t lo_word, uint32_t hi_word) { return (hi_word << 1) | (lo_word >> 31); }
};
#undef CUZK_HD

#ifdef __CUDACC__
struct ptx_ops {
#define CUZK_OP3(name, ins)                                                                   \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b, uint32_t c) {            \
        uint32_t d;                                                                           \
        asm volatile(ins " %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));              \
        return d;                                                                             \
    }
#define CUZK_OP2(name, ins)                                                                   \
    __device__ __forceinline__ uint32_t name(uint32_t a, uint32_t b) {                        \
        uint32_t d;                                                                           \
        asm volatile(ins " %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));                          \
        return d;                                                                             \
    }
    CUZK_OP3(mad_lo_cc, "mad.lo.cc.u32")
    CUZK_OP3(madc_lo_cc, "madc.lo.cc.u32")
    CUZK_OP3(madc_hi_cc, "madc.hi.cc.u32")
    CUZK_OP3(madc_hi, "madc.hi.u32")
    CUZK_OP2(add_cc, "add.cc.u32")
    CUZK_OP2(addc_cc, "addc.cc.u32")
    CUZK_OP2(addc, "addc.u32")
    CUZK_OP2(sub_cc, "sub.cc.u32")
    CUZK_OP2(subc_cc, "subc.cc.u32")
    CUZK_OP2(subc, "subc.u32")
#undef CUZK_OP3
#undef CUZK_OP2
    __device__ __forceinline__ static uint32_t shl1(uint32_t lo_word, uint32_t hi_word) {
        return __funnelshift_l(lo_word, hi_word, 1);
    }
};
#endif

}  // namespace cuzk

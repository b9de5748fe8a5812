/*
 * The CPU-only configuration of cuzk-sys (built when nvcc is absent, see
 * cuzk-sys/build.rs): the same C ABI, reporting zero devices and answering
 * every other call with CUZK_ERR_NO_CUDA. Never compiled together with the
 * .cu files.
 */
#include <stdio.h>
#include <string.h>

#include "cuzk.h"

static int32_t no_cuda(cuzk_error *err) {
    if (err) {
        err->code = CUZK_ERR_NO_CUDA;
        snprintf(err->message, sizeof(err->message),
                 "cuzk-sys was built without CUDA (no nvcc); run build/install-nvcc.sh and rebuild");
    }
    return CUZK_ERR_NO_CUDA;
}

int32_t cuzk_built_with_cuda(void) { return 0; }

int32_t cuzk_device_count(int32_t *count, cuzk_error *err) {
    if (count) *count = 0;
    if (err) err->code = CUZK_OK, err->message[0] = 0;
    return CUZK_OK;
}

int32_t cuzk_device_get_info(int32_t o, cuzk_device_info *i, cuzk_error *err) { (void)o, (void)i; return no_cuda(err); }
int32_t cuzk_device_alloc(int32_t o, size_t b, void **p, cuzk_error *err) { (void)o, (void)b, (void)p; return no_cuda(err); }
int32_t cuzk_device_free(int32_t o, void *p, cuzk_error *err) { (void)o, (void)p; return no_cuda(err); }
int32_t cuzk_pinned_alloc(size_t b, void **p, cuzk_error *err) { (void)b, (void)p; return no_cuda(err); }
int32_t cuzk_pinned_free(void *p, cuzk_error *err) { (void)p; return no_cuda(err); }
int32_t cuzk_thread_urgent_streams(int32_t on) {
    static _Thread_local int32_t urgent = 0;
    int32_t was = urgent;
    urgent = on != 0;
    return was;
}
int32_t cuzk_stream_create(int32_t o, cuzk_stream **s, cuzk_error *err) { (void)o, (void)s; return no_cuda(err); }
int32_t cuzk_stream_priority(const cuzk_stream *s, int32_t *p, int32_t *g, cuzk_error *err) { (void)s, (void)p, (void)g; return no_cuda(err); }
int32_t cuzk_stream_destroy(cuzk_stream *s, cuzk_error *err) { (void)s; return no_cuda(err); }
int32_t cuzk_stream_synchronize(cuzk_stream *s, cuzk_error *err) { (void)s; return no_cuda(err); }
int32_t cuzk_copy_to_device(cuzk_stream *s, void *d, const void *h, size_t b, cuzk_error *err) { (void)s, (void)d, (void)h, (void)b; return no_cuda(err); }
int32_t cuzk_copy_to_host(cuzk_stream *s, void *h, const void *d, size_t b, cuzk_error *err) { (void)s, (void)h, (void)d, (void)b; return no_cuda(err); }
int32_t cuzk_copy_device_to_device(cuzk_stream *s, void *d, const void *x, size_t b, cuzk_error *err) { (void)s, (void)d, (void)x, (void)b; return no_cuda(err); }
int32_t cuzk_memset_device(cuzk_stream *s, void *d, int32_t v, size_t b, cuzk_error *err) { (void)s, (void)d, (void)v, (void)b; return no_cuda(err); }
int32_t cuzk_event_create(int32_t o, cuzk_event **e, cuzk_error *err) { (void)o, (void)e; return no_cuda(err); }
int32_t cuzk_event_destroy(cuzk_event *e, cuzk_error *err) { (void)e; return no_cuda(err); }
int32_t cuzk_event_record(cuzk_event *e, cuzk_stream *s, cuzk_error *err) { (void)e, (void)s; return no_cuda(err); }
int32_t cuzk_event_synchronize(cuzk_event *e, cuzk_error *err) { (void)e; return no_cuda(err); }
int32_t cuzk_stream_wait_event(cuzk_stream *s, cuzk_event *e, cuzk_error *err) { (void)s, (void)e; return no_cuda(err); }
int32_t cuzk_event_elapsed_ms(cuzk_event *a, cuzk_event *b, float *ms, cuzk_error *err) { (void)a, (void)b, (void)ms; return no_cuda(err); }
int32_t cuzk_gpu_locks_create(int32_t o, cuzk_gpu_locks **l, cuzk_error *err) { (void)o, (void)l; return no_cuda(err); }
int32_t cuzk_gpu_locks_destroy(cuzk_gpu_locks *l, cuzk_error *err) { (void)l; return no_cuda(err); }
/* Unreachable: no lock object can be created in this configuration. */
int32_t cuzk_gpu_locks_ordinal(const cuzk_gpu_locks *l) { (void)l; return -1; }
int32_t cuzk_gpu_locks_lock_mem(cuzk_gpu_locks *l, cuzk_error *err) { (void)l; return no_cuda(err); }
void cuzk_gpu_locks_unlock_mem(cuzk_gpu_locks *l) { (void)l; }
int32_t cuzk_gpu_locks_lock_compute(cuzk_gpu_locks *l, cuzk_error *err) { (void)l; return no_cuda(err); }
void cuzk_gpu_locks_unlock_compute(cuzk_gpu_locks *l) { (void)l; }
int32_t cuzk_ntt_context_create(int32_t o, cuzk_ntt_context **c, cuzk_error *err) { (void)o, (void)c; return no_cuda(err); }
int32_t cuzk_ntt_context_destroy(cuzk_ntt_context *c, cuzk_error *err) { (void)c; return no_cuda(err); }
int32_t cuzk_ntt(const cuzk_ntt_context *c, cuzk_stream *s, void *d, uint32_t l, cuzk_ntt_kind k, cuzk_error *err) {
    (void)c, (void)s, (void)d, (void)l, (void)k;
    return no_cuda(err);
}
int32_t cuzk_h_term(const cuzk_ntt_context *ctx, const void *a, const void *b, const void *c, uint64_t n,
                    uint32_t l, void *da, void *db, void *dc, cuzk_error *err) {
    (void)ctx, (void)a, (void)b, (void)c, (void)n, (void)l, (void)da, (void)db, (void)dc;
    return no_cuda(err);
}
int32_t cuzk_h_stage(const cuzk_ntt_context *ctx, cuzk_stream *s, const void *a, const void *b, const void *c,
                     uint64_t n, uint32_t l, void *da, void *db, void *dc, cuzk_error *err) {
    (void)ctx, (void)s, (void)a, (void)b, (void)c, (void)n, (void)l, (void)da, (void)db, (void)dc;
    return no_cuda(err);
}
int32_t cuzk_h_compute(const cuzk_ntt_context *ctx, cuzk_stream *s, uint32_t l, void *da, void *db, void *dc,
                       cuzk_error *err) {
    (void)ctx, (void)s, (void)l, (void)da, (void)db, (void)dc;
    return no_cuda(err);
}
int32_t cuzk_h_compute_ab(const cuzk_ntt_context *ctx, cuzk_stream *s, uint32_t l, void *da, void *db, cuzk_error *err) {
    (void)ctx, (void)s, (void)l, (void)da, (void)db;
    return no_cuda(err);
}
int32_t cuzk_h_compute_c(const cuzk_ntt_context *ctx, cuzk_stream *s, uint32_t l, void *dh, void *dc, cuzk_error *err) {
    (void)ctx, (void)s, (void)l, (void)dh, (void)dc;
    return no_cuda(err);
}
int32_t cuzk_test_field_op(int32_t o, cuzk_test_field f, cuzk_test_op op, const void *a, const void *b, void *out,
                           uint64_t n, cuzk_error *err) {
    (void)o, (void)f, (void)op, (void)a, (void)b, (void)out, (void)n;
    return no_cuda(err);
}
int32_t cuzk_test_fp_sqr_emulated(const void *a, void *out, uint64_t n, cuzk_error *err) {
    (void)a, (void)out, (void)n;
    return no_cuda(err);
}
int32_t cuzk_test_fr_from_mont_emulated(const void *a, void *out, uint64_t n, cuzk_error *err) {
    (void)a, (void)out, (void)n;
    return no_cuda(err);
}
int32_t cuzk_test_fp_mul_sub(int32_t ordinal, const void *a, const void *b, const void *c, const void *d, void *out,
                             uint64_t n, cuzk_error *err) {
    (void)ordinal, (void)a, (void)b, (void)c, (void)d, (void)out, (void)n;
    return no_cuda(err);
}
int32_t cuzk_host_register(void *ptr, size_t bytes, cuzk_error *err) {
    (void)ptr, (void)bytes;
    return no_cuda(err);
}
int32_t cuzk_host_unregister(void *ptr, cuzk_error *err) {
    (void)ptr;
    return no_cuda(err);
}
int32_t cuzk_msm_g1(int32_t o, const void *p, const void *s, uint64_t n, uint32_t f, const cuzk_msm_options *op,
                    void *out, cuzk_msm_stats *st, cuzk_error *err) {
    (void)o, (void)p, (void)s, (void)n, (void)f, (void)op, (void)out, (void)st;
    return no_cuda(err);
}
int32_t cuzk_msm_g2(int32_t o, const void *p, const void *s, uint64_t n, uint32_t f, const cuzk_msm_options *op,
                    void *out, cuzk_msm_stats *st, cuzk_error *err) {
    (void)o, (void)p, (void)s, (void)n, (void)f, (void)op, (void)out, (void)st;
    return no_cuda(err);
}
int32_t cuzk_msm_g1_batch(int32_t o, const void *p, const void *const *s, uint32_t sets, uint64_t n, uint32_t f,
                          const cuzk_msm_options *op, void *out, cuzk_msm_stats *st, cuzk_error *err) {
    (void)o, (void)p, (void)s, (void)sets, (void)n, (void)f, (void)op, (void)out, (void)st;
    return no_cuda(err);
}
int32_t cuzk_msm_g2_batch(int32_t o, const void *p, const void *const *s, uint32_t sets, uint64_t n, uint32_t f,
                          const cuzk_msm_options *op, void *out, cuzk_msm_stats *st, cuzk_error *err) {
    (void)o, (void)p, (void)s, (void)sets, (void)n, (void)f, (void)op, (void)out, (void)st;
    return no_cuda(err);
}
int32_t cuzk_device_free_memory(int32_t o, uint64_t *f, cuzk_error *err) {
    (void)o, (void)f;
    return no_cuda(err);
}
int32_t cuzk_msm_g1_workspace(int32_t o, uint64_t n, uint32_t f, const cuzk_msm_options *op, uint64_t *b,
                              cuzk_error *err) {
    (void)o, (void)n, (void)f, (void)op, (void)b;
    return no_cuda(err);
}
int32_t cuzk_msm_g2_workspace(int32_t o, uint64_t n, uint32_t f, const cuzk_msm_options *op, uint64_t *b,
                              cuzk_error *err) {
    (void)o, (void)n, (void)f, (void)op, (void)b;
    return no_cuda(err);
}
int32_t cuzk_msm_g1_batch_workspace(int32_t o, uint64_t n, uint32_t sets, uint32_t f, const cuzk_msm_options *op,
                                    uint64_t *b, cuzk_error *err) {
    (void)o, (void)n, (void)sets, (void)f, (void)op, (void)b;
    return no_cuda(err);
}
int32_t cuzk_msm_g2_batch_workspace(int32_t o, uint64_t n, uint32_t sets, uint32_t f, const cuzk_msm_options *op,
                                    uint64_t *b, cuzk_error *err) {
    (void)o, (void)n, (void)sets, (void)f, (void)op, (void)b;
    return no_cuda(err);
}
int32_t cuzk_test_msm_inputs(int32_t o, int32_t g2, const void *g, uint64_t seed, uint64_t n, uint64_t d,
                             void *p, void *s, cuzk_error *err) {
    (void)o, (void)g2, (void)g, (void)seed, (void)n, (void)d, (void)p, (void)s;
    return no_cuda(err);
}
int32_t cuzk_msm_reserve_local_memory(int32_t ordinal, uint64_t *stack_bytes, cuzk_error *err) {
    (void)ordinal, (void)stack_bytes;
    return no_cuda(err);
}
int32_t cuzk_compact_fr(cuzk_stream *st, const void *src, uint64_t n, const uint64_t *bits, void *dst,
                        uint64_t cap, void *tmp, uint64_t tmp_bytes, uint64_t *count, cuzk_error *err) {
    (void)st, (void)src, (void)n, (void)bits, (void)dst, (void)cap, (void)tmp, (void)tmp_bytes, (void)count;
    return no_cuda(err);
}
int32_t cuzk_compact_fr_scratch_bytes(uint64_t n, uint64_t *bytes, cuzk_error *err) {
    (void)n, (void)bytes;
    return no_cuda(err);
}

int32_t cuzk_test_inject_fault(cuzk_test_fault_site s, uint64_t n, int32_t e, cuzk_error *err) {
    (void)s, (void)n, (void)e;
    return no_cuda(err);
}
int32_t cuzk_test_faults_injected(cuzk_test_fault_site s, uint64_t *c, cuzk_error *err) { (void)s, (void)c; return no_cuda(err); }
int32_t cuzk_test_pinned_bytes(uint64_t *b, cuzk_error *err) { (void)b; return no_cuda(err); }
int32_t cuzk_fixed_base_g1(int32_t o, const void *t, uint32_t c, uint32_t w, const void *k, uint64_t n, void *out, cuzk_error *err) { (void)o, (void)t, (void)c, (void)w, (void)k, (void)n, (void)out; return no_cuda(err); }
int32_t cuzk_fixed_base_g2(int32_t o, const void *t, uint32_t c, uint32_t w, const void *k, uint64_t n, void *out, cuzk_error *err) { (void)o, (void)t, (void)c, (void)w, (void)k, (void)n, (void)out; return no_cuda(err); }
int32_t cuzk_spmv_create(int32_t o, const cuzk_spmv_matrix *m, uint64_t r, uint64_t v, const void *c, uint64_t n,
                         cuzk_spmv **out, cuzk_error *err) {
    (void)o, (void)m, (void)r, (void)v, (void)c, (void)n, (void)out;
    return no_cuda(err);
}
int32_t cuzk_spmv_destroy(cuzk_spmv *h, cuzk_error *err) { (void)h; return no_cuda(err); }
int32_t cuzk_spmv_device_bytes(uint64_t r, const uint64_t *z, uint64_t n, uint64_t *b, cuzk_error *err) {
    (void)r, (void)z, (void)n, (void)b;
    return no_cuda(err);
}
int32_t cuzk_spmv_bytes(const cuzk_spmv *h, uint64_t *b, cuzk_error *err) { (void)h, (void)b; return no_cuda(err); }
int32_t cuzk_spmv_evaluate(const cuzk_spmv *h, cuzk_stream *s, const void *z, uint64_t zl, void *a, void *b, void *c,
                           uint64_t n, cuzk_error *err) {
    (void)h, (void)s, (void)z, (void)zl, (void)a, (void)b, (void)c, (void)n;
    return no_cuda(err);
}
int32_t cuzk_spmv_evaluate_streamed(cuzk_stream *s, const cuzk_spmv_matrix *m, uint64_t r, const void *k, const void *z,
                                    void *o, uint64_t ol, void *st, uint64_t sb, cuzk_error *err) {
    (void)s, (void)m, (void)r, (void)k, (void)z, (void)o, (void)ol, (void)st, (void)sb;
    return no_cuda(err);
}
int32_t cuzk_spmv_streamed_staging_min(const cuzk_spmv_matrix *m, uint64_t r, uint64_t *b, cuzk_error *err) {
    (void)m, (void)r, (void)b;
    return no_cuda(err);
}

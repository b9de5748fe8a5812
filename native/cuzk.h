/*
 * cuzk.h: the whole C ABI between cuzk's CUDA code (native/) and Rust
 * (cuzk-sys). Plain C, no C++ types, nothing thrown or aborted across it.
 *
 * Every function returns a cuzk_code (0 = success). When it is not 0 and
 * `err` is not NULL, `err` holds the same code and a message.
 *
 * Field elements cross this boundary in blst's Montgomery form, little-endian
 * 64-bit limbs: Fr = 4 x u64 (32 bytes, blstrs::Scalar), Fp = 6 x u64 (48
 * bytes), Fp2 = two Fp (c0 then c1).
 */
#ifndef CUZK_H
#define CUZK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cuzk_code {
    CUZK_OK = 0,
    CUZK_ERR_CUDA = 1,             /* a CUDA call failed; the device is still usable
                                      (invalid value, launch configuration, ...) */
    CUZK_ERR_INVALID_ARGUMENT = 2, /* bad size, null pointer, unknown enum */
    CUZK_ERR_OUT_OF_MEMORY = 3,    /* host or device allocation failed */
    CUZK_ERR_NO_CUDA = 4,          /* cuzk-sys was built without nvcc */
    CUZK_ERR_INTERNAL = 5,         /* an unexpected C++ exception */
    CUZK_ERR_DEVICE_LOST = 6       /* a CUDA error that leaves the device's context
                                      unusable (illegal address, launch failure,
                                      uncorrectable ECC, no device or driver):
                                      every later call on it fails too */
} cuzk_code;

typedef struct cuzk_error {
    int32_t code;
    char message[500];
} cuzk_error;

/* ---- build --------------------------------------------------------------- */

/* 1 when the library was compiled with CUDA, 0 for the CPU-only build. */
int32_t cuzk_built_with_cuda(void);

/* ---- devices (native/device/device.cu) ---------------------------------- */

typedef struct cuzk_device_info {
    char name[256];
    uint64_t total_mem_bytes;
    uint64_t free_mem_bytes; /* at the time of the call */
    uint64_t l2_bytes;
    int32_t sm_count;
    int32_t cc_major;
    int32_t cc_minor;
} cuzk_device_info;

/* Number of CUDA devices; 0 (and CUZK_OK) when there is no driver or device. */
int32_t cuzk_device_count(int32_t *count, cuzk_error *err);
int32_t cuzk_device_get_info(int32_t ordinal, cuzk_device_info *out, cuzk_error *err);
/* Free device memory now (cheap: for polling; cuzk_device_get_info also
 * reads the device's properties). */
int32_t cuzk_device_free_memory(int32_t ordinal, uint64_t *free_bytes, cuzk_error *err);

/* Device memory. Allocation synchronizes the device: do it outside hot paths. */
int32_t cuzk_device_alloc(int32_t ordinal, size_t bytes, void **out, cuzk_error *err);
int32_t cuzk_device_free(int32_t ordinal, void *ptr, cuzk_error *err);

/* Page-locked host memory. */
int32_t cuzk_pinned_alloc(size_t bytes, void **out, cuzk_error *err);
int32_t cuzk_pinned_free(void *ptr, cuzk_error *err);
/* Page-locks existing host memory (cudaHostRegister, portable to every
 * device), so uploads from it are direct DMA instead of staged copies. The
 * range must stay allocated until cuzk_host_unregister(ptr). */
int32_t cuzk_host_register(void *ptr, size_t bytes, cuzk_error *err);
int32_t cuzk_host_unregister(void *ptr, cuzk_error *err);

/* Urgent streams. While the calling thread has them on, every stream it
 * creates (cuzk_stream_create, and the streams that the MSM, the H term
 * and the SpMV create inside a call made on this thread) has the device's
 * greatest priority; otherwise the default, the least. The block scheduler
 * dispatches a higher-priority stream's waiting blocks first as SMs free
 * up, so urgent work beside a long computation waits for blocks to finish,
 * not for whole kernels. A thread starts with it off. Returns the previous
 * setting (0 or 1); never fails, and works without CUDA too. */
int32_t cuzk_thread_urgent_streams(int32_t on);

/* Streams (non-blocking w.r.t. the legacy default stream). */
typedef struct cuzk_stream cuzk_stream;
int32_t cuzk_stream_create(int32_t ordinal, cuzk_stream **out, cuzk_error *err);
/* A stream's priority and its device's greatest (lower numbers run first;
 * the default, 0, is the least). */
int32_t cuzk_stream_priority(const cuzk_stream *stream, int32_t *priority, int32_t *greatest, cuzk_error *err);
int32_t cuzk_stream_destroy(cuzk_stream *stream, cuzk_error *err);
int32_t cuzk_stream_synchronize(cuzk_stream *stream, cuzk_error *err);

/* Asynchronous copies and fills on a stream (host memory may be pageable;
 * then the copy is synchronous with respect to the host). */
int32_t cuzk_copy_to_device(cuzk_stream *stream, void *dst, const void *src, size_t bytes, cuzk_error *err);
int32_t cuzk_copy_to_host(cuzk_stream *stream, void *dst, const void *src, size_t bytes, cuzk_error *err);
int32_t cuzk_copy_device_to_device(cuzk_stream *stream, void *dst, const void *src, size_t bytes, cuzk_error *err);
int32_t cuzk_memset_device(cuzk_stream *stream, void *dst, int32_t value, size_t bytes, cuzk_error *err);

/* Events, for ordering streams and timing on the device. */
typedef struct cuzk_event cuzk_event;
int32_t cuzk_event_create(int32_t ordinal, cuzk_event **out, cuzk_error *err);
int32_t cuzk_event_destroy(cuzk_event *event, cuzk_error *err);
int32_t cuzk_event_record(cuzk_event *event, cuzk_stream *stream, cuzk_error *err);
int32_t cuzk_event_synchronize(cuzk_event *event, cuzk_error *err);
int32_t cuzk_stream_wait_event(cuzk_stream *stream, cuzk_event *event, cuzk_error *err);
/* Milliseconds between two recorded, completed events. */
int32_t cuzk_event_elapsed_ms(cuzk_event *start, cuzk_event *end, float *ms, cuzk_error *err);

/* ---- per-GPU locks (native/gpu_locks.cu) --------------------------------- */

/* Two mutexes per GPU: mem (VRAM allocation and pre-staging) and compute
 * (kernel execution). Unlock from the thread that locked. */
typedef struct cuzk_gpu_locks cuzk_gpu_locks;
int32_t cuzk_gpu_locks_create(int32_t ordinal, cuzk_gpu_locks **out, cuzk_error *err);
int32_t cuzk_gpu_locks_destroy(cuzk_gpu_locks *locks, cuzk_error *err);
int32_t cuzk_gpu_locks_ordinal(const cuzk_gpu_locks *locks);
int32_t cuzk_gpu_locks_lock_mem(cuzk_gpu_locks *locks, cuzk_error *err);
void cuzk_gpu_locks_unlock_mem(cuzk_gpu_locks *locks);
int32_t cuzk_gpu_locks_lock_compute(cuzk_gpu_locks *locks, cuzk_error *err);
void cuzk_gpu_locks_unlock_compute(cuzk_gpu_locks *locks);

/* ---- NTT over Fr (native/ntt/) ------------------------------------------- */

/* Domain of size N = 2^log_n, 1 <= log_n <= 28; omega = the 2^32-th root of
 * unity of blstrs::Scalar squared (32 - log_n) times; g = 7. All transforms
 * are in place, natural order in and out:
 *   FORWARD:        a_k = sum_j a_j omega^(jk)
 *   INVERSE:        a_k = N^-1 sum_j a_j omega^(-jk)
 *   COSET_FORWARD:  a_j *= g^j, then FORWARD
 *   COSET_INVERSE:  INVERSE, then a_j *= g^-j            */
typedef enum cuzk_ntt_kind {
    CUZK_NTT_FORWARD = 0,
    CUZK_NTT_INVERSE = 1,
    CUZK_NTT_COSET_FORWARD = 2,
    CUZK_NTT_COSET_INVERSE = 3
} cuzk_ntt_kind;

#define CUZK_NTT_MAX_LOG 28

/* Twiddle and coset tables for one device (about 34 MiB). Read-only after
 * creation: one context may serve any number of streams and threads. */
typedef struct cuzk_ntt_context cuzk_ntt_context;
int32_t cuzk_ntt_context_create(int32_t ordinal, cuzk_ntt_context **out, cuzk_error *err);
int32_t cuzk_ntt_context_destroy(cuzk_ntt_context *ctx, cuzk_error *err);

/* Enqueue one transform of 2^log_n Fr elements in device memory on `stream`. */
int32_t cuzk_ntt(const cuzk_ntt_context *ctx, cuzk_stream *stream, void *data, uint32_t log_n,
                 cuzk_ntt_kind kind, cuzk_error *err);

/* The H term of Groth16 (bellperson's execute_fft): a, b, c hold n Fr each in
 * host memory (pinned or pageable), n <= 2^log_n. d_a, d_b, d_c are device
 * buffers of 2^log_n Fr each. Computes, with N = 2^log_n:
 *   a, b, c zero-padded to N; INVERSE each; COSET_FORWARD each;
 *   h_i = (a_i b_i - c_i) / (g^N - 1); COSET_INVERSE h
 * and leaves h in d_a (its first N-1 elements are the coefficients; d_b and
 * d_c are scratch). Uploads overlap with compute on three internal streams.
 * Returns when h is complete. */
int32_t cuzk_h_term(const cuzk_ntt_context *ctx, const void *a, const void *b, const void *c,
                    uint64_t n, uint32_t log_n, void *d_a, void *d_b, void *d_c, cuzk_error *err);

/* The same H term in two steps, for pre-staging: cuzk_h_stage enqueues the
 * uploads (and zero padding) of a, b, c into d_a, d_b, d_c on `stream`
 * (host memory must stay valid until the stream reaches that point;
 * pageable memory makes the call itself wait); cuzk_h_compute enqueues the
 * whole computation on `stream`, leaving h in d_a as cuzk_h_term does.
 * Neither synchronizes the device or allocates. */
int32_t cuzk_h_stage(const cuzk_ntt_context *ctx, cuzk_stream *stream, const void *a, const void *b,
                     const void *c, uint64_t n, uint32_t log_n, void *d_a, void *d_b, void *d_c, cuzk_error *err);
int32_t cuzk_h_compute(const cuzk_ntt_context *ctx, cuzk_stream *stream, uint32_t log_n, void *d_a, void *d_b,
                       void *d_c, cuzk_error *err);

/* cuzk_h_compute in two halves, for a working set of two buffers (a, b, c
 * computed on the device one after the other, c into b's buffer once a b
 * is formed): cuzk_h_compute_ab enqueues the transforms of a (in d_a) and
 * b (in d_b) and their product's, leaving the a b part in d_a (d_b is then
 * free); cuzk_h_compute_c enqueues c's transform (in d_c) and leaves h in
 * d_h (the buffer cuzk_h_compute_ab left the a b part in). Both on
 * `stream`, buffers of 2^log_n Fr, no allocation, no synchronization. */
int32_t cuzk_h_compute_ab(const cuzk_ntt_context *ctx, cuzk_stream *stream, uint32_t log_n, void *d_a, void *d_b,
                          cuzk_error *err);
int32_t cuzk_h_compute_c(const cuzk_ntt_context *ctx, cuzk_stream *stream, uint32_t log_n, void *d_h, void *d_c,
                         cuzk_error *err);

/* ---- MSM over G1 and G2 (native/ec/, native/msm/) ------------------------ */

/* out = sum_i scalars[i] * points[i], Pippenger with signed windows.
 * points: n affine points in blst's layout (blst_p1_affine, 96 bytes, for
 *   G1; blst_p2_affine, 192 bytes, for G2: x then y, Montgomery Fp / Fp2);
 *   the point at infinity is all zero bytes, as blst stores it.
 * scalars: n Fr in blst's Montgomery form (blstrs::Scalar, 32 bytes); the
 *   device converts them to canonical integers.
 * Either array may be host memory (pinned or pageable, uploaded chunk by
 * chunk) or device memory (flags). n < 2^31.
 * out: blst_p1 (144 bytes, Jacobian) or blst_p2 (288 bytes); the identity
 *   has Z = 0. Returns when the result is on the host.
 * opts may be NULL: automatic window size, chunks of up to 2^29 points,
 * sorted in groups of windows of up to 2^29 entries. Results do not
 * depend on the options. stats may be NULL. */
typedef enum cuzk_msm_flags {
    CUZK_MSM_POINTS_ON_DEVICE = 1,
    CUZK_MSM_SCALARS_ON_DEVICE = 2,
    /* out receives, per scalar set, the stats->windows window sums W_w
     * (Jacobian, w = 0 first) instead of sum_w 2^(c w) W_w with c =
     * stats->window_bits: out must hold sets * CUZK_MSM_MAX_WINDOWS points.
     * That last step is ~240 dependent doublings, milliseconds for one GPU
     * thread and tens of microseconds on a CPU. */
    CUZK_MSM_WINDOW_SUMS = 4
} cuzk_msm_flags;

#define CUZK_MSM_MAX_WINDOWS 128 /* ceil(256 / c) for c >= 2 */

typedef struct cuzk_msm_options {
    uint32_t window_bits;      /* 0 = chosen from n; else 2..24 */
    uint64_t max_chunk_points; /* 0 = automatic; else points per chunk */
    uint64_t max_sort_entries; /* 0 = 2^29; else at most this many digits are
                                  sorted at once (windows go in groups) */
    void *workspace;           /* NULL = the call allocates and frees its own
                                  device memory; else device memory on this
                                  device that the call uses instead, of
                                  workspace_bytes, at least what
                                  cuzk_msm_*_workspace reports for the call
                                  (an error otherwise). Not shared by calls
                                  running at the same time. */
    uint64_t workspace_bytes;
    uint32_t max_window_bits;  /* 0 = the planner's own bound (22 bits for one
                                  G1 scalar set in one chunk, else 20); else
                                  4..24, the largest window the planner may
                                  choose (a VRAM budget that fits one chunk
                                  with 20-bit windows but not with 22-bit
                                  ones); ignored where window_bits is set */
} cuzk_msm_options;

typedef struct cuzk_msm_stats {
    float device_ms;      /* device time from the first upload to the result */
    uint32_t window_bits; /* the window size used */
    uint32_t chunks;      /* how many chunks the points were taken in */
    /* device time per phase, summed over chunks (events; the phases run in
     * sequence on one stream, so they add up to about device_ms less uploads) */
    float digits_ms;                /* scalars to signed digits */
    float sort_ms;                  /* radix sort of (bucket, point) entries */
    float accumulate_ms;            /* bucket accumulation */
    float reduce_ms;                /* buckets to windows to the result */
    uint32_t accumulate_min_blocks; /* register bound of the accumulation */
    uint32_t windows;               /* window count, ceil(256 / window_bits) */
} cuzk_msm_stats;

int32_t cuzk_msm_g1(int32_t ordinal, const void *points, const void *scalars, uint64_t n, uint32_t flags,
                    const cuzk_msm_options *opts, void *out, cuzk_msm_stats *stats, cuzk_error *err);
int32_t cuzk_msm_g2(int32_t ordinal, const void *points, const void *scalars, uint64_t n, uint32_t flags,
                    const cuzk_msm_options *opts, void *out, cuzk_msm_stats *stats, cuzk_error *err);

/* A batch: out[j] = sum_i scalars[j][i] * points[i] for j < sets (1..1024),
 * e.g. one SRS query against every circuit of a batch. Each chunk of host
 * points is uploaded once and run against every set, so a host-resident
 * SRS crosses PCIe once per batch. scalars: `sets` pointers, all on the
 * device or all on the host (flags); out: `sets` results. Each set has its
 * own buckets, so the workspace grows with `sets`. cuzk_msm_g1 / _g2 are
 * the batch of one. */
int32_t cuzk_msm_g1_batch(int32_t ordinal, const void *points, const void *const *scalars, uint32_t sets,
                          uint64_t n, uint32_t flags, const cuzk_msm_options *opts, void *out,
                          cuzk_msm_stats *stats, cuzk_error *err);
int32_t cuzk_msm_g2_batch(int32_t ordinal, const void *points, const void *const *scalars, uint32_t sets,
                          uint64_t n, uint32_t flags, const cuzk_msm_options *opts, void *out,
                          cuzk_msm_stats *stats, cuzk_error *err);

/* Device bytes that cuzk_msm_g1 / _g2 (_batch with `sets`) would allocate
 * for these arguments (the same plan: windows, chunks, sort space,
 * buckets, staging). */
int32_t cuzk_msm_g1_workspace(int32_t ordinal, uint64_t n, uint32_t flags, const cuzk_msm_options *opts,
                              uint64_t *bytes, cuzk_error *err);
int32_t cuzk_msm_g2_workspace(int32_t ordinal, uint64_t n, uint32_t flags, const cuzk_msm_options *opts,
                              uint64_t *bytes, cuzk_error *err);
int32_t cuzk_msm_g1_batch_workspace(int32_t ordinal, uint64_t n, uint32_t sets, uint32_t flags,
                                    const cuzk_msm_options *opts, uint64_t *bytes, cuzk_error *err);
int32_t cuzk_msm_g2_batch_workspace(int32_t ordinal, uint64_t n, uint32_t sets, uint32_t flags,
                                    const cuzk_msm_options *opts, uint64_t *bytes, cuzk_error *err);

/* Raises device `ordinal`'s per-thread stack limit to what the MSM kernels
 * need (their largest local frame), so the driver's local-memory pool (the
 * limit times every resident thread, never shrunk) grows now, not at the
 * first G2 MSM behind a memory plan's back. *stack_bytes: the limit after
 * the call. */
int32_t cuzk_msm_reserve_local_memory(int32_t ordinal, uint64_t *stack_bytes, cuzk_error *err);

/* Density compaction (native/msm/density.cu): dst[k] = src[i] for the k-th
 * set bit i < n of `bits`, in increasing order of i. bits: host memory,
 * ceil(n / 64) words, bit i at position i % 64 of word i / 64 (cuzk-core's
 * Density layout); bits at n and above are ignored. src, dst: device arrays
 * of Fr (32 bytes each) on the stream's device, not overlapping; dst holds
 * dst_capacity elements. tmp: device scratch of tmp_bytes, at least
 * cuzk_compact_fr_scratch_bytes(n), any alignment, overlapping neither; in
 * use until the stream passes the compaction. *count receives the number of
 * set bits (an error if it exceeds dst_capacity, before dst is written).
 * The bits are counted on the device: the call waits for `stream` once,
 * then enqueues the compaction on it; `bits` may be reused when the call
 * returns. No device memory is allocated. */
int32_t cuzk_compact_fr(cuzk_stream *stream, const void *d_src, uint64_t n, const uint64_t *bits, void *d_dst,
                        uint64_t dst_capacity, void *d_tmp, uint64_t tmp_bytes, uint64_t *count, cuzk_error *err);
/* The exact scratch bytes cuzk_compact_fr needs for n elements (no device
 * needed). */
int32_t cuzk_compact_fr_scratch_bytes(uint64_t n, uint64_t *bytes, cuzk_error *err);

/* Tests and benches only (native/msm/test_inputs.cu, in the library with
 * cuzk-sys's `testing` feature; the CPU-only build answers NO_CUDA): fills device buffers
 * with n valid points (multiples k_i * generator of `distinct` pseudo-random
 * k_i, repeated cyclically) and n pseudo-random scalars. generator: a host
 * affine point of G1 (g2 = 0) or G2 (g2 = 1). Synchronizes the device. */
int32_t cuzk_test_msm_inputs(int32_t ordinal, int32_t g2, const void *generator, uint64_t seed, uint64_t n,
                             uint64_t distinct, void *d_points, void *d_scalars, cuzk_error *err);

/* ---- sparse matrix-vector products for PCE (native/spmv/) --------------- */

/* One matrix of a pre-compiled constraint system in compressed sparse rows
 * (cuzk-core's pce::SparseMatrix), in host memory: row r's entries are
 * cols[row_ptr[r] .. row_ptr[r + 1]], entry k's coefficient is
 * coeffs[coeff_idx[k]]; row_ptr has rows + 1 elements, cols and coeff_idx
 * nnz each. */
typedef struct cuzk_spmv_matrix {
    const uint32_t *row_ptr;
    const uint32_t *cols;
    const uint32_t *coeff_idx;
    uint64_t nnz;
} cuzk_spmv_matrix;

/* A, B and C of one circuit resident on a device, with their coefficient
 * table (num_coeffs Fr, coeffs[0] = 1, coeffs[1] = -1: additions on the
 * device). Immutable once created: any number of streams may evaluate it. */
typedef struct cuzk_spmv cuzk_spmv;

/* Uploads matrices[0..3] (A, B, C, each of `rows` rows over num_vars
 * columns) and the table into one device allocation of
 * cuzk_spmv_device_bytes bytes; returns when the copies are done (host
 * memory may be reused). The caller must have checked every index: row_ptr
 * non-decreasing from 0 to nnz, cols < num_vars, coeff_idx < num_coeffs
 * (cuzk-sys's safe wrapper does). rows, num_vars, nnz < 2^32. */
int32_t cuzk_spmv_create(int32_t ordinal, const cuzk_spmv_matrix *matrices, uint64_t rows, uint64_t num_vars,
                         const void *coeffs, uint64_t num_coeffs, cuzk_spmv **out, cuzk_error *err);
int32_t cuzk_spmv_destroy(cuzk_spmv *spmv, cuzk_error *err);
/* Device bytes cuzk_spmv_create allocates for these sizes (nnz: 3 counts). */
int32_t cuzk_spmv_device_bytes(uint64_t rows, const uint64_t *nnz, uint64_t num_coeffs, uint64_t *bytes,
                               cuzk_error *err);
/* Device bytes held by a handle. */
int32_t cuzk_spmv_bytes(const cuzk_spmv *spmv, uint64_t *bytes, cuzk_error *err);

/* Enqueues on `stream`: d_a = A·z, d_b = B·z, d_c = C·z for the first
 * `rows` elements and zero for the rest up to out_len (>= rows; the H
 * term's zero padding). d_z: z_len (= num_vars) Fr on the device, inputs
 * then aux; d_a, d_b, d_c: three distinct device buffers of out_len Fr.
 * Results are fully reduced (the CPU SpMV's bytes). No allocation, no
 * synchronization. */
int32_t cuzk_spmv_evaluate(const cuzk_spmv *spmv, cuzk_stream *stream, const void *d_z, uint64_t z_len, void *d_a,
                           void *d_b, void *d_c, uint64_t out_len, cuzk_error *err);

/* For a card without room for the matrices beside a proof's working set:
 * enqueues on `stream` d_out = M·z for the first `rows` elements and zero
 * for the rest up to out_len (>= rows), M one matrix left in host memory
 * (page-locked for PCIe speed; it must stay valid and unchanged until the
 * stream has passed this work). M is copied in chunks of rows into the two
 * halves of d_staging (staging_bytes of device memory, 256-byte aligned;
 * at least cuzk_spmv_streamed_staging_min), each chunk's copy on an
 * internal stream overlapping the previous chunk's products. d_coeffs: the
 * coefficient table on the device (coeffs[0] = 1, coeffs[1] = -1); d_z:
 * the witness on the device. The caller must have checked every index, as
 * for cuzk_spmv_create. Results equal cuzk_spmv_evaluate's. Returns once
 * all is enqueued; pageable matrices are copied through pinned buffers
 * before it returns. */
int32_t cuzk_spmv_evaluate_streamed(cuzk_stream *stream, const cuzk_spmv_matrix *m, uint64_t rows,
                                    const void *d_coeffs, const void *d_z, void *d_out, uint64_t out_len,
                                    void *d_staging, uint64_t staging_bytes, cuzk_error *err);
/* The least staging cuzk_spmv_evaluate_streamed accepts for M: two chunks
 * of its longest row (reads every row pointer). */
int32_t cuzk_spmv_streamed_staging_min(const cuzk_spmv_matrix *m, uint64_t rows, uint64_t *bytes, cuzk_error *err);

/* ---- tests only: fault injection (native/device/fault_hook.cu) ----------- */

/* In the library only with cuzk-sys's `testing` feature (the CPU-only build
 * answers NO_CUDA). Faults that tests inject to see how the callers react:
 * the nth (0 = the next) event at `site` from now, on any device and
 * thread, fails once with `cuda_error` (a cudaError_t value, e.g. 2 =
 * cudaErrorMemoryAllocation, 9 = cudaErrorInvalidConfiguration, 700 =
 * cudaErrorIllegalAddress) as if CUDA had returned it, and is classed as
 * a real one would be. An allocation fault skips the allocation; a launch
 * fault waits for the device first, as a kernel that failed would have
 * finished. cuda_error = 0 disarms the site. */
typedef enum cuzk_test_fault_site {
    CUZK_TEST_FAULT_DEVICE_ALLOC = 0, /* every device allocation of native/ */
    CUZK_TEST_FAULT_LAUNCH = 1        /* every check after a kernel launch */
} cuzk_test_fault_site;
int32_t cuzk_test_inject_fault(cuzk_test_fault_site site, uint64_t nth, int32_t cuda_error, cuzk_error *err);
/* How many faults `site` has injected since the process started. */
int32_t cuzk_test_faults_injected(cuzk_test_fault_site site, uint64_t *count, cuzk_error *err);
/* Host bytes page-locked through native/ now (cuzk_pinned_alloc,
 * cuzk_host_register, the upload slots), for leak checks. */
int32_t cuzk_test_pinned_bytes(uint64_t *bytes, cuzk_error *err);

/* ---- tests only (native/ff/field_test.cu) -------------------------------- */

/* In the library only with cuzk-sys's `testing` feature. */

typedef enum cuzk_test_field { CUZK_TEST_FR = 0, CUZK_TEST_FP = 1, CUZK_TEST_FP2 = 2 } cuzk_test_field;
typedef enum cuzk_test_op {
    CUZK_TEST_ADD = 0,
    CUZK_TEST_SUB = 1,
    CUZK_TEST_MUL = 2,
    CUZK_TEST_SQR = 3,
    CUZK_TEST_NEG = 4,
    CUZK_TEST_INV = 5 /* Fr only */
} cuzk_test_op;

/* out[i] = op(a[i], b[i]) on the device for n elements of `field`; a, b, out
 * are host arrays in blst's Montgomery form. For testing the arithmetic. */
int32_t cuzk_test_field_op(int32_t ordinal, cuzk_test_field field, cuzk_test_op op, const void *a,
                           const void *b, void *out, uint64_t n, cuzk_error *err);

/* out[i] = a[i]^2 in Fp (blst's Montgomery form) by the device squaring's
 * instruction sequence (native/ff/mont_sqr.cuh) emulated on the host, so
 * its carries are checked without a GPU. */
int32_t cuzk_test_fp_sqr_emulated(const void *a, void *out, uint64_t n, cuzk_error *err);

/* out[i] = the canonical integer of a[i] in Fr (a[i] in blst's Montgomery
 * form, out[i] as 4 little-endian u64 limbs) by the device's Montgomery
 * reduction (native/ff/mont_redc.cuh, what the MSM's digits use) emulated
 * on the host. */
int32_t cuzk_test_fr_from_mont_emulated(const void *a, void *out, uint64_t n, cuzk_error *err);

/* out[i] = a[i] b[i] - c[i] d[i] in Fp (blst's Montgomery form) on the
 * device, by the point formulas' one-reduction sequence (mont.cuh's
 * mul_sub). */
int32_t cuzk_test_fp_mul_sub(int32_t ordinal, const void *a, const void *b, const void *c, const void *d, void *out,
                             uint64_t n, cuzk_error *err);

/* ---- fixed-base multiplication over G1 and G2 (native/fixed_base/) ------- */

/* out[i] = k_i * g for n scalars k (Fr, Montgomery form, on the host) and
 * one base point g given as its window table (on the host): `windows`
 * windows of c bits (1 <= c <= 24, windows * c >= 255 > (windows - 1) * c),
 * table[w * 2^c + d] = d * 2^(c w) * g as affine points (blst_p1_affine /
 * blst_p2_affine; entry d = 0 is not read), as cuzk-core's
 * arith/fixed_base.rs builds it. `out` (host) receives n Jacobian points
 * (blst_p1 / blst_p2). Synchronous; allocates and frees its device memory
 * (the table, the scalars and the results) on every path. */
int32_t cuzk_fixed_base_g1(int32_t ordinal, const void *table, uint32_t c, uint32_t windows, const void *scalars,
                           uint64_t n, void *out, cuzk_error *err);
int32_t cuzk_fixed_base_g2(int32_t ordinal, const void *table, uint32_t c, uint32_t windows, const void *scalars,
                           uint64_t n, void *out, cuzk_error *err);

#ifdef __cplusplus
}
#endif

#endif /* CUZK_H */

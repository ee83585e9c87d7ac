/* SPDX-License-Identifier: MIT */
/* CPU backend kernels (host pointers as memory handles) and the backend's private state. */
#ifndef LT_BACKEND_CPU_H
#define LT_BACKEND_CPU_H

#include "backend/backend.h"
#include "backend/cpu/cpu_isa.h"
#include "backend/cpu/cpu_pool.h"
#include "backend/cpu/cpu_scratch.h"

#include <pthread.h>

/* ctx->backend_state of a CPU context. The pool is created on first parallel use. */
typedef struct lt__cpu_state {
  pthread_mutex_t pool_lock;
  lt__cpu_pool *pool;
  int pool_threads;    /* threads the pool was built for (workers + caller) */
  int default_threads; /* LT_NUM_THREADS, else the number of online cores */
  lt__cpu_scratch scratch;
  const lt__cpu_isa *isa; /* chosen when the context opened (LT_CPU_ISA read then) */
  int gemm_forced;        /* LT_GEMM_ENGINE read when the context opened, else 0 (measure) */
} lt__cpu_state;

/* The CPU's GEMM engines (lt__gemm_step.engine). */
enum {
  LT__CPU_GEMM_AUTO = 0,
  LT__CPU_GEMM_PACKED = 1,
  LT__CPU_GEMM_OPENBLAS = 2,
  LT__CPU_GEMM_STREAM = 3,   /* small k (cpu_gemm_stream.c); packed where it does not apply */
  LT__CPU_GEMM_BF16_DOT = 4, /* packed, bf16 A and B on the dot-product kernels */
  LT__CPU_GEMM_SMALL = 5,    /* one small GEMM, unpacked (cpu_gemm_small.c); packed elsewhere */
  LT__CPU_GEMM_KDOT = 6      /* small C, long unit-stride k (cpu_gemm_kdot.c); packed elsewhere */
};

/* The instruction-set table of a CPU context: kernels, GEMM blocking, transposes. */
const lt__cpu_isa *lt__cpu_isa_of(const lt_context *ctx);

lt_status lt__cpu_map(lt_context *ctx, const lt__map_step *step);
lt_status lt__cpu_reduce(lt_context *ctx, const lt__reduce_step *step);
lt_status lt__cpu_gemm(lt_context *ctx, const lt__gemm_step *step);
/* Runs a GEMM step on `engine` (OpenBLAS only takes BLAS layouts; anything else runs packed). */
lt_status lt__cpu_gemm_run(lt_context *ctx, const lt__gemm_step *step, int engine);
/* Whether OpenBLAS takes the step's matrices as they are (false when built without it). */
bool lt__cpu_gemm_blas_ok(const lt__gemm_step *step);
/* The engine for a step: LT_GEMM_ENGINE if set, the only one that takes the step, else the
 * faster on the step's shape class, measured once per class and kept across processes
 * (cpu_gemm_choose.c, cpu_wisdom.h). */
int lt__cpu_gemm_engine(lt_context *ctx, const lt__gemm_step *step);
/* The backend's gemm_choose: lt__cpu_gemm_engine into step->engine, and its name. */
const char *lt__cpu_gemm_choose(lt_context *ctx, lt__gemm_step *step);
/* The backend's measured_caps: GEMM rates, copy and per-GEMM call costs, measured once and
 * kept across processes (cpu_caps.c, cpu_wisdom.h). */
const lt__backend_caps *lt__cpu_measured_caps(lt_context *ctx);
/* Whether the streaming engine takes the step (1 <= k <= LT__CAPS_SMALL_K, or deeper where A
 * is read by lines: cpu_gemm_stream.c; a unit stride in C, tile kernels on this ISA), and running
 * it: false when it does not take the step or its B buffer cannot be had (then nothing was
 * written). */
bool lt__cpu_gemm_stream_ok(lt_context *ctx, const lt__gemm_step *step);
bool lt__cpu_gemm_stream(lt_context *ctx, const lt__gemm_step *step);
/* The backend's gemm_line_max_k: the deepest k the streaming engine reads A by lines at. */
int64_t lt__cpu_gemm_line_max_k(lt_context *ctx, lt_dtype dtype);
/* Whether the small-GEMM engine takes the step (one GEMM of f32 or f64, m*n*k <= 2^21, no
 * scattered modes, a unit stride in C, kernels on this ISA), and running it: false when it does
 * not take the step or a copy of B cannot be had (then nothing was written). */
bool lt__cpu_gemm_small_ok(lt_context *ctx, const lt__gemm_step *step);
bool lt__cpu_gemm_small(lt_context *ctx, const lt__gemm_step *step);
/* Whether the small engine runs the step with no scratch: its B copy, if it needs one, fits on
 * the stack. */
bool lt__cpu_gemm_small_in_place(lt_context *ctx, const lt__gemm_step *step);
/* The end of a GEMM whose k was cut into `ranges` ranges, each multiplied into its own
 * partial C (m x n, column-major, range r at r * m * n elements, of the step's dtype F32 or
 * F64): C[roff[i] + coff[j]] = alpha * (sum of the partials in range order) + beta * C (beta
 * == 0: C is not read), summed in double so that the order is the only rounding choice, on up
 * to `threads` threads. */
void lt__cpu_gemm_sum_partials(lt_context *ctx, int threads, lt_dtype dtype, const void *partials,
                               int64_t ranges, int64_t m, int64_t n, const int64_t *roff,
                               const int64_t *coff, void *c, double alpha, double beta);
/* Whether the k-dot engine takes the step (one f32 or f64 GEMM, k the unit stride of A and B,
 * kernels on this ISA; unless forced, k >= 4096, m and n >= 2 and m * n <= 4096), and running
 * it: false when it does not take the step or its buffers cannot be had (then nothing was
 * written). */
bool lt__cpu_gemm_kdot_ok(lt_context *ctx, const lt__gemm_step *step);
bool lt__cpu_gemm_kdot(lt_context *ctx, const lt__gemm_step *step);
/* The backend's gemm_in_place: the chosen engine is OpenBLAS (its own buffers) or the small
 * engine in place. */
bool lt__cpu_gemm_in_place(lt_context *ctx, const lt__gemm_step *step);
/* LT_GEMM_ENGINE ("packed", "openblas", "stream", "small", "kdot"; anything else: measure) as an
 * engine, 0 to measure. */
int lt__cpu_gemm_engine_from_env(void);
/* GEMMs in a step's batch, and the element offsets of A, B and C for linear batch index b
 * (row-major over batch_shape); shared by the OpenBLAS and the packed paths. */
int64_t lt__cpu_gemm_batch_count(const lt__gemm_step *step);
void lt__cpu_gemm_batch_offsets(const lt__gemm_step *step, int64_t b, int64_t *oa, int64_t *ob,
                                int64_t *oc);
/* Whether plans should hand gemm matrices with no unit stride (true where the packed AVX-512
 * path runs; gemm still runs them on any CPU). */
bool lt__cpu_gemm_takes_any_strides(lt_context *ctx);
/* The backend's gemm_takes_16bit: yes on every CPU (packing converts f16 and bf16 to f32,
 * or to bf16 pairs for the dot-product kernels). */
bool lt__cpu_gemm_takes_16bit(lt_context *ctx);
/* The backend's gemm_stores_16bit: yes on every CPU (cpu_gemm_store16.c). */
bool lt__cpu_gemm_stores_16bit(lt_context *ctx);
/* Runs a GEMM step whose C is f16 / bf16 (c_dtype) with `engine` into f32 blocks, each rounded
 * into C once; LT_ERR_OUT_OF_MEMORY when the blocks or packing buffers cannot be had. */
lt_status lt__cpu_gemm_store16(lt_context *ctx, const lt__gemm_step *step, int engine);
lt_status lt__cpu_contract(lt_context *ctx, const lt__contract_step *step);
/* Index steps (cpu_index.c, cpu_sort.c). */
lt_status lt__cpu_sort(lt_context *ctx, const lt__sort_step *step);
extern const lt__index_ops lt__cpu_index_ops;
/* Row steps (cpu_rows.c) and random fills (cpu_random.c). */
lt_status lt__cpu_rows(lt_context *ctx, const lt__row_step *step);
lt_status lt__cpu_rng(lt_context *ctx, const lt__rng_step *step);

/* Threads the context uses: lt_context_set_num_threads, else LT_NUM_THREADS, else cores. */
int lt__cpu_threads(const lt_context *ctx);
/* Between these, lt__cpu_threads answers 1 on the calling thread (a pool task that calls an
 * engine itself: a nested job would run on this thread anyway, so the engine should take its
 * one-thread path). */
void lt__cpu_serial_enter(void);
void lt__cpu_serial_leave(void);
/* Runs fn over [0, n_tasks) on the context's threads; `work` (elements touched) decides how
 * many threads are worth waking. */
void lt__cpu_parallel(lt_context *ctx, int64_t n_tasks, int64_t work, lt__cpu_range_fn fn,
                      void *arg);
/* The same on at most max_threads threads (for jobs holding one buffer per thread). */
void lt__cpu_parallel_upto(lt_context *ctx, int max_threads, int64_t n_tasks, int64_t work,
                           lt__cpu_range_fn fn, void *arg);

#endif

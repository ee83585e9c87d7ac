/* SPDX-License-Identifier: MIT */
/* The CPU's cost figures for the lowering's model (lt__backend_caps), measured once per process
 * on the first plan that asks: the rate of a mid-sized GEMM on the faster engine, the shares of
 * it the packed engine (the one that takes any strides) and small-k GEMMs reach, and the time
 * per element of a transposing copy larger than the caches, all on the asking context's
 * threads. Each figure is rounded to a power of two: the model only compares plans
 * that differ by more than that, and the rounding keeps plans the same from run to run on a
 * machine whose load varies. */
#include "backend/cpu/cpu.h"
#include "core/object.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define GEMM_EXTENT 128
#define COPY_EXTENT 512

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double pow2_round(double x) { return exp2(round(log2(x))); }

/* Seconds of the fastest of three runs (after one untimed); < 0 when a run fails. */
static double best_of(lt_context *ctx, lt_status (*run)(lt_context *, const void *),
                      const void *step) {
  double best = -1.0;
  for (int r = 0; r < 4; r++) {
    double t0 = now_seconds();
    if (run(ctx, step) != LT_OK) return -1.0;
    double dt = now_seconds() - t0;
    if (r > 0 && (best < 0 || dt < best)) best = dt;
  }
  return best;
}

static lt_status run_gemm(lt_context *ctx, const void *step) { return lt__cpu_gemm(ctx, step); }
static lt_status run_map(lt_context *ctx, const void *step) { return lt__cpu_map(ctx, step); }

/* Rate of an m x n x k f32 GEMM on `engine` (0: the one the dispatch picks), < 0 on failure. */
static double gemm_rate(lt_context *ctx, int64_t m, int64_t n, int64_t k, int engine) {
  lt__gemm_step g = {.dtype = LT_F32, .m = m, .n = n, .k = k, .alpha = 1.0, .beta = 0.0};
  g.a.rs = k, g.b.rs = g.c.rs = n;
  g.a.cs = g.b.cs = g.c.cs = 1;
  float *mem = calloc((size_t)(m * k + k * n + m * n), sizeof(float));
  if (mem == NULL) return -1.0;
  g.a.mem = g.b.mem = g.c.mem = mem;
  g.b.offset = m * k, g.c.offset = m * k + k * n;
  g.engine = engine ? engine : lt__cpu_gemm_engine(ctx, &g);
  double t = best_of(ctx, run_gemm, &g);
  free(mem);
  return t > 0 ? 2.0 * (double)(m * n * k) / t : -1.0;
}

/* A share of the large-GEMM rate, in quarters (at least one): coarse, so that plans stay the
 * same from run to run on a loaded machine, fine enough to see one engine 25% behind. */
static double share_of(double rate, double of) {
  if (rate <= 0 || of <= 0) return 0.0;
  double q = round(4.0 * rate / of) / 4.0;
  return q < 0.25 ? 0.25 : q;
}

/* gemm_flops (the faster engine on a mid-sized GEMM) and the shares of the packed engine (the
 * one that takes any strides) and of small k, each engine timed on the same problems. */
static void gemm_rates(lt_context *ctx, lt__backend_caps *caps) {
  const int64_t n = GEMM_EXTENT, wide = 2 * GEMM_EXTENT, small_k = 24;
  double blas = gemm_rate(ctx, n, n, n, LT__CPU_GEMM_OPENBLAS);
  double packed = gemm_rate(ctx, n, n, n, LT__CPU_GEMM_PACKED);
  double blas_k = gemm_rate(ctx, wide, wide, small_k, LT__CPU_GEMM_OPENBLAS);
  /* At small k, the engine that takes any strides is the streaming one where it has kernels
   * (the step falls back to the packed one elsewhere). */
  double packed_k = gemm_rate(ctx, wide, wide, small_k, LT__CPU_GEMM_STREAM);
  double best = blas > packed ? blas : packed;
  if (best <= 0) return;
  caps->gemm_flops = pow2_round(best);
  caps->strided_gemm_share = share_of(packed, best);
  caps->small_k_gemm_share = share_of(blas_k > packed_k ? blas_k : packed_k, best);
  caps->strided_small_k_gemm_share = share_of(packed_k, best);
}

static double copy_seconds(lt_context *ctx) {
  const int64_t n = COPY_EXTENT;
  lt__map_step m = {.rank = 2, .shape = {n, n}, .n_in = 1, .compute = LT_F32};
  m.scalars[0] = 1.0;
  m.in[0].dtype = m.out.dtype = LT_F32;
  m.in[0].strides[0] = 1, m.in[0].strides[1] = n;
  m.out.strides[0] = n, m.out.strides[1] = 1;
  float *mem = calloc((size_t)(2 * n * n), sizeof(float));
  if (mem == NULL) return -1.0;
  m.in[0].mem = m.out.mem = mem;
  m.out.offset = n * n;
  double t = best_of(ctx, run_map, &m);
  free(mem);
  return t > 0 ? t / (double)(n * n) : -1.0;
}

static pthread_mutex_t measure_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool ready;
static lt__backend_caps measured;

const lt__backend_caps *lt__cpu_measured_caps(lt_context *ctx) {
  if (atomic_load_explicit(&ready, memory_order_acquire)) return &measured;
  pthread_mutex_lock(&measure_lock);
  if (!atomic_load_explicit(&ready, memory_order_relaxed)) {
    lt__backend_caps caps = ctx->backend->caps;
    gemm_rates(ctx, &caps);
    double copy = copy_seconds(ctx);
    if (copy > 0) caps.copy_seconds = pow2_round(copy);
    measured = caps;
    atomic_store_explicit(&ready, true, memory_order_release);
  }
  pthread_mutex_unlock(&measure_lock);
  return &measured;
}

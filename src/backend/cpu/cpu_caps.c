/* SPDX-License-Identifier: MIT */
/* The CPU's cost figures for the lowering's model (lt__backend_caps), measured on the first plan
 * that asks, unless the machine's wisdom file (cpu_wisdom.h) has them: the rate of a mid-sized
 * GEMM on the faster engine, the shares of it the packed engine (the one that takes any
 * strides) and small-k GEMMs reach, the time per element of a transposing copy, and the cost
 * per GEMM of a batched step beyond its flops, all on the asking context's threads. The file,
 * not rounding, keeps plans the same from run to run: a figure rounded to a grid jumps a whole
 * step when it lies near a boundary. (The per-GEMM cost replaced a fixed 2 us, 15-30x what a
 * batch of small GEMMs in one parallel region costs here, which priced abcd-dbea-ec's batch of
 * 6241 GEMMs 12 ms too dear and sent it, in some processes, to a plan 0.6x as fast.) */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_wisdom.h"
#include "core/object.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define GEMM_EXTENT 192
#define COPY_EXTENT 512
/* The large copy: 2 x 16 MiB of f32, past L2 and most of a server's L3 share. */
#define BIG_COPY_EXTENT 2048
/* Rounds of the measurement: every figure is timed once per round, in turn, and keeps its best,
 * so that a slow spell of the machine (another pool spinning, a worker thread just created)
 * slows all figures of one round alike instead of one figure of the whole measurement. */
#define ROUNDS 6
/* The per-GEMM overhead of a batched step is timed on this many tiny GEMMs. */
#define CALL_BATCH 256
#define CALL_EXTENT 8

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static lt_status run_gemm(lt_context *ctx, const void *step) { return lt__cpu_gemm(ctx, step); }
static lt_status run_map(lt_context *ctx, const void *step) { return lt__cpu_map(ctx, step); }

/* One timed figure: a step, how to run it, and the best seconds seen (< 0: none yet). */
typedef struct probe {
  lt__gemm_step gemm;
  lt__map_step map;
  bool is_map;
  double best;
} probe;

/* An m x n x k f32 GEMM on `engine` (0: the one the dispatch picks), `batch` times over in one
 * step; its operands share `mem` (their values do not matter). */
static void gemm_probe(lt_context *ctx, probe *p, float *mem, int64_t m, int64_t n, int64_t k,
                       int64_t batch, int engine) {
  lt__gemm_step g = {.dtype = LT_F32, .m = m, .n = n, .k = k, .alpha = 1.0, .beta = 0.0};
  g.a.rs = k, g.b.rs = g.c.rs = n;
  g.a.cs = g.b.cs = g.c.cs = 1;
  g.a.mem = g.b.mem = g.c.mem = mem;
  g.b.offset = batch * m * k, g.c.offset = batch * (m * k + k * n);
  if (batch > 1) {
    g.batch_rank = 1, g.batch_shape[0] = batch;
    g.a.batch_strides[0] = m * k, g.b.batch_strides[0] = k * n, g.c.batch_strides[0] = m * n;
  }
  g.engine = engine ? engine : lt__cpu_gemm_engine(ctx, &g);
  *p = (probe){.gemm = g, .best = -1.0};
}

static void copy_probe(probe *p, float *mem, int64_t n) {
  lt__map_step m = {.rank = 2, .shape = {n, n}, .n_in = 1, .compute = LT_F32};
  m.scalars[0] = 1.0;
  m.in[0].dtype = m.out.dtype = LT_F32;
  m.in[0].strides[0] = 1, m.in[0].strides[1] = n;
  m.out.strides[0] = n, m.out.strides[1] = 1;
  m.in[0].mem = m.out.mem = mem;
  m.out.offset = n * n;
  *p = (probe){.map = m, .is_map = true, .best = -1.0};
}

/* Runs every probe once per round (after one untimed run each), keeping each one's best;
 * false when a run fails. */
static bool measure(lt_context *ctx, probe *probes, int count) {
  for (int r = 0; r <= ROUNDS; r++)
    for (int i = 0; i < count; i++) {
      probe *p = &probes[i];
      double t0 = now_seconds();
      lt_status st = p->is_map ? run_map(ctx, &p->map) : run_gemm(ctx, &p->gemm);
      if (st != LT_OK) return false;
      double dt = now_seconds() - t0;
      if (r > 0 && (p->best < 0 || dt < p->best)) p->best = dt;
    }
  return true;
}

static double rate_of(const probe *p) {
  const lt__gemm_step *g = &p->gemm;
  return 2.0 * (double)(g->m * g->n * g->k) / p->best;
}

/* A share of the large-GEMM rate (at least 1/8). Shares and rates stay unrounded: a figure
 * rounded to a grid jumps by the grid's step when it lies near a boundary, which changed plans
 * between processes by up to 2x in modelled cost; unrounded, two processes differ only where
 * the plans' costs are within the measurement's noise of each other. */
static double share_of(double rate, double of) {
  if (rate <= 0 || of <= 0) return 0.0;
  double q = rate / of;
  return q < 0.125 ? 0.125 : q;
}

enum { BLAS, PACKED, BLAS_K, STREAM_K, COPY, BIG_COPY, CALLS, N_PROBES };

/* Fills caps from the probes: gemm_flops (the faster engine on a mid-sized GEMM), the shares of
 * the packed engine (the one that takes any strides) and of small k, the copy time per element
 * and the overhead per GEMM of a batched step (beyond its flops at the mid-sized rate). At small
 * k, the engine that takes any strides is the streaming one where it has kernels (the step
 * falls back to the packed one elsewhere). */
static void fill_caps(lt_context *ctx, lt__backend_caps *caps) {
  const int64_t n = GEMM_EXTENT, wide = 2 * GEMM_EXTENT, small_k = 24, e = CALL_EXTENT;
  size_t floats = (size_t)(3 * wide * wide);
  if (floats < (size_t)(2 * BIG_COPY_EXTENT * BIG_COPY_EXTENT))
    floats = 2 * BIG_COPY_EXTENT * BIG_COPY_EXTENT;
  if (floats < (size_t)(3 * CALL_BATCH * e * e)) floats = 3 * CALL_BATCH * e * e;
  float *mem = calloc(floats, sizeof(float));
  if (mem == NULL) return;
  probe p[N_PROBES];
  gemm_probe(ctx, &p[BLAS], mem, n, n, n, 1, LT__CPU_GEMM_OPENBLAS);
  gemm_probe(ctx, &p[PACKED], mem, n, n, n, 1, LT__CPU_GEMM_PACKED);
  gemm_probe(ctx, &p[BLAS_K], mem, wide, wide, small_k, 1, LT__CPU_GEMM_OPENBLAS);
  gemm_probe(ctx, &p[STREAM_K], mem, wide, wide, small_k, 1, LT__CPU_GEMM_STREAM);
  copy_probe(&p[COPY], mem, COPY_EXTENT);
  copy_probe(&p[BIG_COPY], mem, BIG_COPY_EXTENT);
  gemm_probe(ctx, &p[CALLS], mem, e, e, e, CALL_BATCH, 0);
  bool ok = measure(ctx, p, N_PROBES);
  free(mem);
  if (!ok) return;
  double blas = rate_of(&p[BLAS]), packed = rate_of(&p[PACKED]);
  double best = blas > packed ? blas : packed, blas_k = rate_of(&p[BLAS_K]);
  double packed_k = rate_of(&p[STREAM_K]);
  caps->gemm_flops = best;
  caps->strided_gemm_share = share_of(packed, best);
  caps->small_k_gemm_share = share_of(blas_k > packed_k ? blas_k : packed_k, best);
  caps->strided_small_k_gemm_share = share_of(packed_k, best);
  caps->copy_seconds = p[COPY].best / (double)(COPY_EXTENT * COPY_EXTENT);
  caps->big_copy_seconds = p[BIG_COPY].best / (double)(BIG_COPY_EXTENT * BIG_COPY_EXTENT);
  double calls = p[CALLS].best - 2.0 * (double)(CALL_BATCH * e * e * e) / best;
  double floor = 1e-8; /* a GEMM call is never free: keeps the batch term in the model */
  caps->call_seconds = calls / CALL_BATCH > floor ? calls / CALL_BATCH : floor;
}

static pthread_mutex_t measure_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool ready;
static lt__backend_caps measured;

const lt__backend_caps *lt__cpu_measured_caps(lt_context *ctx) {
  if (atomic_load_explicit(&ready, memory_order_acquire)) return &measured;
  pthread_mutex_lock(&measure_lock);
  if (!atomic_load_explicit(&ready, memory_order_relaxed)) {
    lt__backend_caps caps = ctx->backend->caps;
    if (!lt__cpu_wisdom_caps(ctx, &caps)) {
      fill_caps(ctx, &caps);
      if (caps.gemm_flops != ctx->backend->caps.gemm_flops) lt__cpu_wisdom_save_caps(ctx, &caps);
    }
    measured = caps;
    atomic_store_explicit(&ready, true, memory_order_release);
  }
  pthread_mutex_unlock(&measure_lock);
  return &measured;
}

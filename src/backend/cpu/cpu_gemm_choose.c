/* SPDX-License-Identifier: MIT */
/* Which engine runs a GEMM step, by measurement rather than by what either engine reports about
 * itself: OpenBLAS's speed depends on the kernels its build picks for this CPU (Debian's 0.3.21
 * runs some CPUs on old ones), ours on the ISA table, and which is faster differs by shape (our
 * kernels skip OpenBLAS's per-call costs on batches of small GEMMs). A step's shape class
 * (instruction set, dtype, batched or not, layouts, and m, n, k each in one of four size buckets)
 * is timed once per process on both engines, on a small problem of that class with the step's
 * layouts; every later step of the class takes the faster. Choices are kept across processes
 * (cpu_wisdom.h), so that a class runs on the same engine in every run on the machine. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_wisdom.h"
#include "core/object.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Calibration problems stay under this many flops per run (a few milliseconds at most, once
 * per class), the extents capped at CALIBRATION_EXTENT first. */
#define CALIBRATION_FLOPS (4.0 * 1024 * 1024)
#define CALIBRATION_EXTENT 160
#define BUCKETS 4

/* The engine chosen per class, 0 while unmeasured; racing threads may both measure, and the
 * later store wins (either answer was measured). */
static atomic_int chosen[3][3][2][2][2][2][2][BUCKETS][BUCKETS][BUCKETS];

static int bucket(int64_t x) { return x < 16 ? 0 : x < 64 ? 1 : x < 256 ? 2 : 3; }

/* bf16 steps: whether the dot-product kernels beat widening to f32 panels, per class. */
static atomic_int dot_chosen[2][BUCKETS][BUCKETS][BUCKETS];

static const char *engine_name(int engine) {
  return engine == LT__CPU_GEMM_OPENBLAS   ? "OpenBLAS"
         : engine == LT__CPU_GEMM_STREAM   ? "stream"
         : engine == LT__CPU_GEMM_SMALL    ? "small"
         : engine == LT__CPU_GEMM_KDOT     ? "k-dot"
         : engine == LT__CPU_GEMM_BF16_DOT ? "packed, bf16 dot products"
                                           : "packed";
}

int lt__cpu_gemm_engine_from_env(void) {
  const char *e = getenv("LT_GEMM_ENGINE");
  if (e && strcmp(e, "packed") == 0) return LT__CPU_GEMM_PACKED;
  if (e && strcmp(e, "openblas") == 0) return LT__CPU_GEMM_OPENBLAS;
  if (e && strcmp(e, "stream") == 0) return LT__CPU_GEMM_STREAM;
  if (e && strcmp(e, "small") == 0) return LT__CPU_GEMM_SMALL;
  if (e && strcmp(e, "kdot") == 0) return LT__CPU_GEMM_KDOT;
  /* packed, and bf16 steps on the dot-product kernels where the CPU has them (tests) */
  if (e && strcmp(e, "bf16dot") == 0) return LT__CPU_GEMM_BF16_DOT;
  return LT__CPU_GEMM_AUTO;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A dense copy of one matrix's layout: row-major when its columns are unit-stride. */
static void dense_layout(lt__matrix *x, bool row_major, int64_t rows, int64_t cols) {
  x->rs = row_major ? cols : 1;
  x->cs = row_major ? 1 : rows;
  x->batch_strides[0] = rows * cols;
  x->rows.n = x->cols.n = 0; /* a 16-bit step's matrices may have come scattered */
}

/* Best of two timed runs (after one untimed) of `engine` on a problem like s; < 0 when its
 * buffers cannot be had. */
static double time_engine(lt_context *ctx, const lt__gemm_step *s, int engine) {
  lt__gemm_step t = *s;
  t.engine = engine;
  int64_t nb = lt__cpu_gemm_batch_count(s) > 1 ? 2 * (int64_t)lt__cpu_threads(ctx) : 1;
  int64_t *dim[3] = {&t.m, &t.n, &t.k};
  for (int i = 0; i < 3; i++)
    if (*dim[i] > CALIBRATION_EXTENT) *dim[i] = CALIBRATION_EXTENT;
  while (2.0 * (double)(t.m * t.n * t.k * nb) > CALIBRATION_FLOPS) {
    int64_t *big = t.m >= t.n && t.m >= t.k ? &t.m : t.n >= t.k ? &t.n : &t.k;
    *big = (*big + 1) / 2;
  }
  t.batch_rank = 1;
  t.batch_shape[0] = nb;
  dense_layout(&t.a, s->a.cs == 1, t.m, t.k);
  dense_layout(&t.b, s->b.cs == 1, t.k, t.n);
  dense_layout(&t.c, s->c.cs == 1, t.m, t.n);
  size_t es = lt_dtype_size(s->dtype); /* >= that of 16-bit A and B */
  t.a.mem = calloc((size_t)(t.m * t.k * nb), es);
  t.b.mem = calloc((size_t)(t.k * t.n * nb), es);
  t.c.mem = calloc((size_t)(t.m * t.n * nb), es);
  t.a.offset = t.b.offset = t.c.offset = 0;
  t.alpha = 1.0, t.beta = 0.0;
  double best = -1.0;
  if (t.a.mem && t.b.mem && t.c.mem)
    for (int run = 0; run < 3; run++) {
      double t0 = now_seconds();
      if (lt__cpu_gemm_run(ctx, &t, engine) != LT_OK) break;
      double dt = now_seconds() - t0;
      if (run > 0 && (best < 0 || dt < best)) best = dt;
    }
  free(t.a.mem);
  free(t.b.mem);
  free(t.c.mem);
  return best;
}

/* The engine cached in *slot for this shape class, else the faster of `first` and `second`
 * on a problem like s (`second` on a tie; `first` when `second` cannot run), timed once and
 * cached. */
static int timed_choice(lt_context *ctx, const lt__gemm_step *s, int table, atomic_int *slot,
                        int first, int second) {
  int engine = atomic_load_explicit(slot, memory_order_relaxed);
  if (engine) return engine;
  atomic_int *base =
      table == LT__WISDOM_ENGINE ? &chosen[0][0][0][0][0][0][0][0][0][0] : &dot_chosen[0][0][0][0];
  long index = (long)(slot - base);
  engine = lt__cpu_wisdom_find_engine(ctx, table, index);
  if (engine != first && engine != second) { /* none recorded, or not one of these two */
    double t1 = time_engine(ctx, s, first), t2 = time_engine(ctx, s, second);
    engine = t1 >= 0 && (t2 < 0 || t1 < t2) ? first : second;
    lt__cpu_wisdom_save_engine(ctx, table, index, engine);
  }
  atomic_store_explicit(slot, engine, memory_order_relaxed);
  return engine;
}

/* f16 / bf16 A and B run packed, widened to f32 panels, or, for bf16 where the CPU has them
 * and the step allows (not `exact`), on the bf16 dot-product kernels when those are measured
 * faster: not a given, since some CPUs issue vdpbf16ps at a fraction of their FMA rate. */
static int engine_16bit(lt_context *ctx, const lt__gemm_step *s) {
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  if (lt__gemm_ab_dtype(s) != LT_BF16 || s->exact || !isa->gemm_blocking ||
      !isa->gemm_blocking(LT_BF16))
    return LT__CPU_GEMM_PACKED;
  const lt__cpu_state *st = ctx->backend_state;
  if (st->gemm_forced) /* LT_GEMM_ENGINE: bf16dot forces them, packed or openblas widens */
    return st->gemm_forced == LT__CPU_GEMM_BF16_DOT ? LT__CPU_GEMM_BF16_DOT : LT__CPU_GEMM_PACKED;
  atomic_int *slot =
      &dot_chosen[lt__cpu_gemm_batch_count(s) > 1][bucket(s->m)][bucket(s->n)][bucket(s->k)];
  return timed_choice(ctx, s, LT__WISDOM_DOT, slot, LT__CPU_GEMM_BF16_DOT, LT__CPU_GEMM_PACKED);
}

int lt__cpu_gemm_engine(lt_context *ctx, const lt__gemm_step *s) {
  if (lt__gemm_c_dtype(s) != s->dtype) { /* its GEMMs run into f32 blocks (cpu_gemm_store16.c) */
    lt__gemm_step f = *s;
    f.c_dtype = LT_DTYPE_INVALID;
    f.c.rs = s->c.cs == 1 ? s->n : 1, f.c.cs = s->c.cs == 1 ? 1 : s->m;
    return lt__cpu_gemm_engine(ctx, &f);
  }
  const lt__cpu_state *st = ctx->backend_state;
  if (lt__gemm_ab_dtype(s) != s->dtype) return engine_16bit(ctx, s);
  /* Our engine for the step: at small k the streaming one, which writes C once in place
   * (the packed one re-blocks for a k it does not have and updates tiles of an interleaved C
   * element by element); else, for one GEMM that fits in L1/L2, the small one, which packs
   * nothing that it can read in place (packing both operands costs as much as the arithmetic
   * there). */
  /* A small C beside a long k, k the unit stride of both operands: the k-dot engine, measured
   * faster there than the packed one (1.9x at 64 x 48 x 49152) and OpenBLAS (7x) on this class,
   * which a calibration problem (k <= 160) cannot represent. */
  if (st->gemm_forced == LT__CPU_GEMM_KDOT)
    return lt__cpu_gemm_kdot_ok(ctx, s) ? LT__CPU_GEMM_KDOT : LT__CPU_GEMM_PACKED;
  if (!st->gemm_forced && lt__cpu_gemm_kdot_ok(ctx, s)) return LT__CPU_GEMM_KDOT;
  if (st->gemm_forced == LT__CPU_GEMM_SMALL)
    return lt__cpu_gemm_small_ok(ctx, s) ? LT__CPU_GEMM_SMALL : LT__CPU_GEMM_PACKED;
  int ours = lt__cpu_gemm_stream_ok(ctx, s)  ? LT__CPU_GEMM_STREAM
             : lt__cpu_gemm_small_ok(ctx, s) ? LT__CPU_GEMM_SMALL
                                             : LT__CPU_GEMM_PACKED;
  if (st->gemm_forced == LT__CPU_GEMM_STREAM || st->gemm_forced == LT__CPU_GEMM_PACKED)
    return st->gemm_forced == ours ? ours : LT__CPU_GEMM_PACKED;
  if (!lt__cpu_gemm_blas_ok(s)) return ours;
  if (st->gemm_forced) return st->gemm_forced;
  /* A matrix-vector product is memory-bound: BLAS's gemv streams the matrix once. */
  if ((s->m == 1 || s->n == 1) && s->k > 0) return LT__CPU_GEMM_OPENBLAS;
  int isa = st->isa->simd == LT__CPU_SIMD_AVX512 ? 2 : st->isa->simd == LT__CPU_SIMD_AVX2;
  atomic_int *slot = &chosen[isa][ours == LT__CPU_GEMM_STREAM  ? 1
                                  : ours == LT__CPU_GEMM_SMALL ? 2
                                                               : 0][s->dtype == LT_F64]
                            [lt__cpu_gemm_batch_count(s) > 1][s->a.cs == 1][s->b.cs == 1]
                            [s->c.cs == 1][bucket(s->m)][bucket(s->n)][bucket(s->k)];
  return timed_choice(ctx, s, LT__WISDOM_ENGINE, slot, ours, LT__CPU_GEMM_OPENBLAS);
}

bool lt__cpu_gemm_in_place(lt_context *ctx, const lt__gemm_step *step) {
  if (lt__gemm_c_dtype(step) != step->dtype) return false; /* an f32 block of C in scratch */
  int engine = lt__cpu_gemm_engine(ctx, step);
  return engine == LT__CPU_GEMM_OPENBLAS ||
         (engine == LT__CPU_GEMM_SMALL && lt__cpu_gemm_small_in_place(ctx, step));
}

const char *lt__cpu_gemm_choose(lt_context *ctx, lt__gemm_step *step) {
  step->engine = lt__cpu_gemm_engine(ctx, step);
  return engine_name(step->engine);
}

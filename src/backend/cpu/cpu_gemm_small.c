/* SPDX-License-Identifier: MIT */
/* The small-GEMM driver (cpu_gemm_small.h). The step is turned (C^T = B^T A^T) so that C's rows
 * are unit-stride; B then needs unit-stride rows too, and only where it lacks them is it copied
 * (k x n, dense). A is never copied: the kernel broadcasts its elements through its strides.
 * Tasks are bands of MR rows of C across all of n, so B stays in L1/L2 for every band; below
 * SMALL_THREAD_FLOPS one thread does them all (waking a worker costs microseconds). */
#include "backend/cpu/cpu_gemm_small.h"
#include "backend/cpu/cpu.h"
#include "core/object.h"

#include <stdlib.h>

/* The engine takes one GEMM of at most this many multiply-adds (256^3 / 8: A, B and C of
 * f32 in L2 at the cap's square shape); LT_GEMM_ENGINE=small takes any size (the tests). */
#define SMALL_MAX_MNK ((int64_t)1 << 21)
/* Fewer flops than this run on the calling thread. Measured on this project's 2-core Sapphire
 * Rapids machine under load (plan execute, f32, medians): two threads lost or tied against one
 * at every size up to 128^3 (64^3: 3.7 vs 3.3 us; 96^3: 11.2 vs 10.8; 128^3: 25.9 vs 25.0), so
 * the engine's own size range runs on one thread; only forced larger problems split. */
#define SMALL_THREAD_FLOPS (2.0 * 128 * 128 * 128)
/* A B copy up to this size lives on the stack. */
#define SMALL_STACK_BYTES 16384

typedef struct small_gemm {
  const lt__gemm_small *ks;
  int64_t m, n, k;
  const char *a, *b;
  char *c;
  int64_t rs_a, cs_a, rs_b, rs_c;
  double alpha, beta;
} small_gemm;

static const lt__gemm_small *kernels_of(lt_context *ctx, lt_dtype dtype) {
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  return isa->gemm_small ? isa->gemm_small(dtype) : NULL;
}

static bool plain(const lt__matrix *x) { return x->rows.n == 0 && x->cols.n == 0; }

bool lt__cpu_gemm_small_ok(lt_context *ctx, const lt__gemm_step *s) {
  if (s->m < 1 || s->n < 1 || s->k < 0) return false;
  if (lt__gemm_ab_dtype(s) != s->dtype || !kernels_of(ctx, s->dtype)) return false;
  if (lt__cpu_gemm_batch_count(s) != 1) return false;
  if (!plain(&s->a) || !plain(&s->b) || !plain(&s->c)) return false;
  if (s->c.cs != 1 && s->c.rs != 1) return false;
  const lt__cpu_state *st = ctx->backend_state;
  if (st->gemm_forced == LT__CPU_GEMM_SMALL) return true;
  return s->m <= SMALL_MAX_MNK && s->n <= SMALL_MAX_MNK && s->k <= SMALL_MAX_MNK &&
         s->m * s->n * (s->k > 0 ? s->k : 1) <= SMALL_MAX_MNK;
}

static void band_task(void *arg, int64_t lo, int64_t hi) {
  const small_gemm *g = arg;
  const lt__gemm_small *ks = g->ks;
  int64_t es = (int64_t)ks->esize, w = (int64_t)ks->nv * ks->lanes;
  int64_t n_full = g->n / w * w;
  lt__small_kernel tail = g->n > n_full ? ks->part[(g->n - n_full - 1) / ks->lanes] : NULL;
  for (int64_t t = lo; t < hi; t++) {
    int64_t i0 = t * ks->mr;
    int m = (int)(g->m - i0 < ks->mr ? g->m - i0 : ks->mr);
    const char *a = g->a + i0 * g->rs_a * es;
    char *c = g->c + i0 * g->rs_c * es;
    for (int64_t j = 0; j < n_full; j += w)
      ks->full(g->k, a, g->rs_a, g->cs_a, m, g->b + j * es, g->rs_b, c + j * es, g->rs_c, (int)w,
               g->alpha, g->beta);
    if (tail)
      tail(g->k, a, g->rs_a, g->cs_a, m, g->b + n_full * es, g->rs_b, c + n_full * es, g->rs_c,
           (int)(g->n - n_full), g->alpha, g->beta);
  }
}

/* Copies B (k x n, element (p, j) at b[p*rs + j*cs]) into dst with rows of n. */
static void copy_rows(char *dst, const char *b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                      size_t es) {
  if (es == sizeof(float)) {
    const float *x = (const float *)b;
    float *y = (float *)dst;
    for (int64_t j = 0; j < n; j++)
      for (int64_t p = 0; p < k; p++)
        y[p * n + j] = x[p * rs + j * cs];
  } else {
    const double *x = (const double *)b;
    double *y = (double *)dst;
    for (int64_t j = 0; j < n; j++)
      for (int64_t p = 0; p < k; p++)
        y[p * n + j] = x[p * rs + j * cs];
  }
}

bool lt__cpu_gemm_small(lt_context *ctx, const lt__gemm_step *s) {
  if (!lt__cpu_gemm_small_ok(ctx, s)) return false;
  const lt__gemm_small *ks = kernels_of(ctx, s->dtype);
  int64_t es = (int64_t)ks->esize;
  const lt__matrix *a = &s->a, *b = &s->b;
  int64_t m = s->m, n = s->n, rs_a = a->rs, cs_a = a->cs, rs_b = b->rs, cs_b = b->cs;
  int64_t rs_c = s->c.rs;
  /* C's rows unit-stride; where both of C's strides are 1 (a single row or column), the
   * orientation in which B needs no copy. */
  bool turn = s->c.cs != 1 || (s->c.rs == 1 && b->cs != 1 && a->rs == 1);
  if (turn) {
    m = s->n, n = s->m;
    a = &s->b, b = &s->a;
    rs_a = s->b.cs, cs_a = s->b.rs, rs_b = s->a.cs, cs_b = s->a.rs;
    rs_c = s->c.cs;
  }
  small_gemm g = {ks,
                  m,
                  n,
                  s->k,
                  (const char *)a->mem + a->offset * es,
                  (const char *)b->mem + b->offset * es,
                  (char *)s->c.mem + s->c.offset * es,
                  rs_a,
                  cs_a,
                  rs_b,
                  rs_c,
                  s->alpha,
                  s->beta};
  _Alignas(64) char stack[SMALL_STACK_BYTES];
  char *copy = NULL;
  size_t got = 0;
  if (cs_b != 1 && n > 1 && s->k > 0) {
    size_t bytes = (size_t)(s->k * n * es);
    copy = bytes <= sizeof stack ? stack : lt__cpu_scratch_take(ctx, bytes, &got);
    if (copy == NULL) return false;
    copy_rows(copy, g.b, rs_b, cs_b, s->k, n, (size_t)es);
    g.b = copy, g.rs_b = n;
  }
  double flops = 2.0 * (double)m * (double)n * (double)s->k;
  int64_t bands = (m + ks->mr - 1) / ks->mr;
  /* lt__cpu_parallel wakes threads by `work`: none below the threshold, all above it. */
  int64_t work = flops < SMALL_THREAD_FLOPS ? 0 : INT64_MAX / 2;
  lt__cpu_parallel(ctx, bands, work, band_task, &g);
  if (copy != stack) lt__cpu_scratch_give(ctx, copy, got);
  return true;
}

/* SPDX-License-Identifier: MIT */
/* The small-GEMM driver (cpu_gemm_small.h). The step is turned (C^T = B^T A^T) so that C's rows
 * are unit-stride; B then needs unit-stride rows too, and only where it lacks them is it copied
 * (k x n, dense). A is never copied: the kernel broadcasts its elements through its strides.
 * Tasks are bands of MR rows of C across all of n, so B stays in L1/L2 for every band; below
 * SMALL_THREAD_FLOPS one thread does them all (waking a worker costs microseconds). Past the
 * size cap, one GEMM whose B is read in place and fits the kernels' mid_b_bytes still runs here,
 * on the context's threads (the MLP's 128x784 @ 784x256 layer and its weight gradient). A batch is
 * split by whole GEMMs, each task copying its B (where needed, at most SMALL_STACK_BYTES) on its
 * stack. */
#include "backend/cpu/cpu_gemm_small.h"
#include "backend/cpu/cpu.h"
#include "core/object.h"

#include <stdlib.h>

/* The engine takes GEMMs of at most this many multiply-adds each (256^3 / 8: A, B and C of
 * f32 in L2 at the cap's square shape); LT_GEMM_ENGINE=small takes any size (the tests). */
#define SMALL_MAX_MNK ((int64_t)1 << 21)
/* Fewer flops than this run on the calling thread. Measured on this project's 2-core Sapphire
 * Rapids machine under load (plan execute, f32, medians): two threads lost or tied against one
 * at every size up to 128^3 (64^3: 3.7 vs 3.3 us; 96^3: 11.2 vs 10.8; 128^3: 25.9 vs 25.0), so
 * the engine's own size range runs on one thread; only forced larger problems split. */
#define SMALL_THREAD_FLOPS (2.0 * 128 * 128 * 128)
/* A B copy up to this size lives on the stack. */
#define SMALL_STACK_BYTES 16384

/* The step turned (C^T = B^T A^T) where needed so that C's rows are unit-stride; strides in
 * elements. */
typedef struct small_gemm {
  const lt__gemm_small *ks;
  const lt__gemm_step *s;
  bool turn;
  int64_t m, n, k, bands;
  int64_t rs_a, cs_a, rs_b, cs_b, rs_c;
  const char *b_copy; /* one GEMM's B copied with unit-stride rows (rows of n), or NULL */
} small_gemm;

static small_gemm oriented(const lt__gemm_small *ks, const lt__gemm_step *s) {
  /* Where both of C's strides are 1 (a single row or column), the orientation in which B
   * needs no copy. */
  bool turn = s->c.cs != 1 || (s->c.rs == 1 && s->b.cs != 1 && s->a.rs == 1);
  small_gemm g = {ks,      s,       turn,    s->m,    s->n,    s->k, 0,
                  s->a.rs, s->a.cs, s->b.rs, s->b.cs, s->c.rs, NULL};
  if (turn) {
    g.m = s->n, g.n = s->m;
    g.rs_a = s->b.cs, g.cs_a = s->b.rs, g.rs_b = s->a.cs, g.cs_b = s->a.rs;
    g.rs_c = s->c.cs;
  }
  g.bands = (g.m + ks->mr - 1) / ks->mr;
  return g;
}

static bool needs_copy(const small_gemm *g) { return g->cs_b != 1 && g->n > 1 && g->k > 0; }

static const lt__gemm_small *kernels_of(lt_context *ctx, lt_dtype dtype) {
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  return isa->gemm_small ? isa->gemm_small(dtype) : NULL;
}

static bool plain(const lt__matrix *x) { return x->rows.n == 0 && x->cols.n == 0; }

/* One GEMM past SMALL_MAX_MNK whose B needs no copy and fits the kernels' mid_b_bytes (in L2):
 * the packed engine's packing of both operands and its meetings of the threads at every k
 * block then cost more than reading B from L2 band after band. */
static bool mid_range(const lt__gemm_small *ks, const lt__gemm_step *s) {
  if (ks->mid_b_bytes == 0 || lt__cpu_gemm_batch_count(s) != 1) return false;
  small_gemm g = oriented(ks, s);
  if (needs_copy(&g)) return false;
  int64_t cap = (int64_t)ks->mid_b_bytes;
  return g.k <= cap && g.n <= cap && g.k * g.n * (int64_t)ks->esize <= cap;
}

bool lt__cpu_gemm_small_ok(lt_context *ctx, const lt__gemm_step *s) {
  if (s->m < 1 || s->n < 1 || s->k < 0) return false;
  if (lt__gemm_ab_dtype(s) != s->dtype || !kernels_of(ctx, s->dtype)) return false;
  if (!plain(&s->a) || !plain(&s->b) || !plain(&s->c)) return false;
  if (s->c.cs != 1 && s->c.rs != 1) return false;
  /* In a batch, each GEMM's B copy lives on its task's stack. */
  if (lt__cpu_gemm_batch_count(s) > 1) {
    small_gemm g = oriented(kernels_of(ctx, s->dtype), s);
    if (needs_copy(&g) && g.k * g.n * (int64_t)lt_dtype_size(s->dtype) > SMALL_STACK_BYTES)
      return false;
  }
  const lt__cpu_state *st = ctx->backend_state;
  if (st->gemm_forced == LT__CPU_GEMM_SMALL) return true;
  if (s->m <= SMALL_MAX_MNK && s->n <= SMALL_MAX_MNK && s->k <= SMALL_MAX_MNK &&
      s->m * s->n * (s->k > 0 ? s->k : 1) <= SMALL_MAX_MNK)
    return true;
  return mid_range(kernels_of(ctx, s->dtype), s);
}

/* Bands [lo, hi) of MR rows of one GEMM (B's rows rs_b apart, unit-stride). */
static void run_bands(const small_gemm *g, const char *a, const char *b, int64_t rs_b, char *c,
                      int64_t lo, int64_t hi) {
  const lt__gemm_small *ks = g->ks;
  int64_t es = (int64_t)ks->esize, w = (int64_t)ks->nv * ks->lanes;
  int64_t n_full = g->n / w * w;
  lt__small_kernel tail = g->n > n_full ? ks->part[(g->n - n_full - 1) / ks->lanes] : NULL;
  for (int64_t t = lo; t < hi; t++) {
    int64_t i0 = t * ks->mr;
    int m = (int)(g->m - i0 < ks->mr ? g->m - i0 : ks->mr);
    const char *ai = a + i0 * g->rs_a * es;
    char *ci = c + i0 * g->rs_c * es;
    for (int64_t j = 0; j < n_full; j += w)
      ks->full(g->k, ai, g->rs_a, g->cs_a, m, b + j * es, rs_b, ci + j * es, g->rs_c, (int)w,
               g->s->alpha, g->s->beta);
    if (tail)
      tail(g->k, ai, g->rs_a, g->cs_a, m, b + n_full * es, rs_b, ci + n_full * es, g->rs_c,
           (int)(g->n - n_full), g->s->alpha, g->s->beta);
  }
}

/* A, B and C of GEMM `batch`, in the oriented view. */
static void operands(const small_gemm *g, int64_t batch, const char **a, const char **b, char **c) {
  const lt__gemm_step *s = g->s;
  int64_t oa, ob, oc, es = (int64_t)g->ks->esize;
  lt__cpu_gemm_batch_offsets(s, batch, &oa, &ob, &oc);
  const char *pa = (const char *)s->a.mem + oa * es, *pb = (const char *)s->b.mem + ob * es;
  *a = g->turn ? pb : pa;
  *b = g->turn ? pa : pb;
  *c = (char *)s->c.mem + oc * es;
}

static void copy_rows(char *dst, const char *b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                      size_t es);

/* One GEMM: bands of its rows. */
static void band_task(void *arg, int64_t lo, int64_t hi) {
  const small_gemm *g = arg;
  const char *a, *b;
  char *c;
  operands(g, 0, &a, &b, &c);
  if (g->b_copy) b = g->b_copy;
  run_bands(g, a, b, g->b_copy ? g->n : g->rs_b, c, lo, hi);
}

/* A batch: whole GEMMs [lo, hi), each with its B copy (where needed) on the stack. */
static void batch_task(void *arg, int64_t lo, int64_t hi) {
  const small_gemm *g = arg;
  _Alignas(64) char stack[SMALL_STACK_BYTES];
  for (int64_t t = lo; t < hi; t++) {
    const char *a, *b;
    char *c;
    operands(g, t, &a, &b, &c);
    int64_t rs_b = g->rs_b;
    if (needs_copy(g)) {
      copy_rows(stack, b, g->rs_b, g->cs_b, g->k, g->n, g->ks->esize);
      b = stack, rs_b = g->n;
    }
    run_bands(g, a, b, rs_b, c, 0, g->bands);
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

bool lt__cpu_gemm_small_in_place(lt_context *ctx, const lt__gemm_step *s) {
  if (!lt__cpu_gemm_small_ok(ctx, s)) return false; /* a batch's B copies: checked there */
  small_gemm g = oriented(kernels_of(ctx, s->dtype), s);
  return !needs_copy(&g) || g.k * g.n * (int64_t)g.ks->esize <= SMALL_STACK_BYTES;
}

bool lt__cpu_gemm_small(lt_context *ctx, const lt__gemm_step *s) {
  if (!lt__cpu_gemm_small_ok(ctx, s)) return false;
  small_gemm g = oriented(kernels_of(ctx, s->dtype), s);
  int64_t nb = lt__cpu_gemm_batch_count(s);
  double flops = 2.0 * (double)g.m * (double)g.n * (double)g.k * (double)nb;
  /* lt__cpu_parallel wakes threads by `work`: none below the threshold, all above it. */
  int64_t work = flops < SMALL_THREAD_FLOPS ? 0 : INT64_MAX / 2;
  if (nb > 1) {
    lt__cpu_parallel(ctx, nb, work, batch_task, &g);
    return true;
  }
  _Alignas(64) char stack[SMALL_STACK_BYTES];
  char *copy = NULL;
  size_t got = 0;
  if (needs_copy(&g)) {
    const char *a, *b;
    char *c;
    operands(&g, 0, &a, &b, &c);
    size_t bytes = (size_t)g.k * (size_t)g.n * g.ks->esize;
    copy = bytes <= sizeof stack ? stack : lt__cpu_scratch_take(ctx, bytes, &got);
    if (copy == NULL) return false;
    copy_rows(copy, b, g.rs_b, g.cs_b, g.k, g.n, g.ks->esize);
    g.b_copy = copy;
  }
  lt__cpu_parallel(ctx, g.bands, work, band_task, &g);
  if (copy != stack) lt__cpu_scratch_give(ctx, copy, got);
  return true;
}

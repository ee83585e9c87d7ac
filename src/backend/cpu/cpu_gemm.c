/* SPDX-License-Identifier: MIT */
/* Running a GEMM step on one of the CPU's engines: the packed kernels (cpu_gemm_packed.c), the
 * streaming small-k kernels (cpu_gemm_stream.c), the small-GEMM ones (cpu_gemm_small.c), or
 * OpenBLAS, single-threaded inside the context's pool (a batch split across threads, or each GEMM's
 * C split into blocks). Which engine runs a step is chosen by measurement (cpu_gemm_choose.c).
 * Built without OpenBLAS (LT_WITH_OPENBLAS=OFF), the packed kernels run every GEMM. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_gemm_packed.h"
#include "backend/cpu/cpu_isa.h"
#include "core/error.h"
#include "core/object.h"

#ifdef LT_HAVE_OPENBLAS
#include <cblas.h>
#endif
#include <pthread.h>
#include <stdlib.h>

/* Below this many flops per GEMM, OpenBLAS gains little from its own threads, so whole
 * batches are handed to threads instead. */
#define SPLIT_BATCH_MAX_FLOPS (2.0 * 256 * 256 * 256)
/* Below this many flops in total, starting threads costs more than it saves. */
#define SPLIT_BATCH_MIN_TOTAL_FLOPS (4.0e6)

int64_t lt__cpu_gemm_batch_count(const lt__gemm_step *s) {
  int64_t nb = 1;
  for (int d = 0; d < s->batch_rank; d++)
    nb *= s->batch_shape[d];
  return nb;
}

void lt__cpu_gemm_batch_offsets(const lt__gemm_step *s, int64_t b, int64_t *oa, int64_t *ob,
                                int64_t *oc) {
  *oa = s->a.offset, *ob = s->b.offset, *oc = s->c.offset;
  for (int d = s->batch_rank - 1; d >= 0; d--) {
    int64_t i = b % s->batch_shape[d];
    b /= s->batch_shape[d];
    *oa += i * s->a.batch_strides[d];
    *ob += i * s->b.batch_strides[d];
    *oc += i * s->c.batch_strides[d];
  }
}

#ifdef LT_HAVE_OPENBLAS
/* Row-major cblas view of a rows x cols matrix with strides (rs, cs), one of them 1. */
static void blas_view(int64_t rs, int64_t cs, int64_t cols, int64_t rows, bool *trans,
                      blasint *ld) {
  *trans = cs != 1;
  int64_t l = *trans ? cs : rs;
  int64_t need = *trans ? rows : cols;
  *ld = (blasint)(l < need ? (need > 1 ? need : 1) : l);
}

/* y = alpha * op(M) x + beta * y for a row-major M of rows x cols (leading dimension ld). */
static void blas_gemv(lt_dtype dtype, bool trans, int64_t rows, int64_t cols, double alpha,
                      const void *m, int64_t ld, const void *x, int64_t incx, double beta, void *y,
                      int64_t incy) {
  enum CBLAS_TRANSPOSE t = trans ? CblasTrans : CblasNoTrans;
  if (dtype == LT_F32)
    cblas_sgemv(CblasRowMajor, t, (blasint)rows, (blasint)cols, (float)alpha, m, (blasint)ld, x,
                (blasint)incx, (float)beta, y, (blasint)incy);
  else
    cblas_dgemv(CblasRowMajor, t, (blasint)rows, (blasint)cols, alpha, m, (blasint)ld, x,
                (blasint)incx, beta, y, (blasint)incy);
}

/* A product with one output row or column is a matrix-vector product: memory-bound, so BLAS's
 * gemv, which streams the matrix once, beats packing it for a GEMM kernel. The operands are
 * in gemm_one's row-major view: A (m x k) with column stride acs, B (k x n) with row stride
 * brs; false when a vector's stride is no BLAS increment. */
static bool gemv_one(const lt__gemm_step *s, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                     blasint lda, blasint ldb, int64_t acs, int64_t brs, const void *pa,
                     const void *pb, void *pc, int64_t ldc) {
  if (n == 1) { /* y[m] = op(A) x, x = B's column */
    int64_t incx = k == 1 ? 1 : brs, incy = m == 1 ? 1 : ldc;
    if (incx < 1 || incy < 1) return false;
    blas_gemv(s->dtype, ta, ta ? k : m, ta ? m : k, s->alpha, pa, lda, pb, incx, s->beta, pc, incy);
    return true;
  }
  if (m == 1) { /* y[n] = op(B)^T x, x = A's row */
    int64_t incx = k == 1 ? 1 : acs;
    if (incx < 1) return false;
    blas_gemv(s->dtype, !tb, tb ? n : k, tb ? k : n, s->alpha, pb, ldb, pa, incx, s->beta, pc, 1);
    return true;
  }
  return false;
}

static void gemm_one(const lt__gemm_step *s, int64_t oa, int64_t ob, int64_t oc) {
  /* C stored column-major (rs == 1): compute C^T = B^T A^T, which is row-major. */
  bool col = s->c.cs != 1;
  const lt__matrix *a = col ? &s->b : &s->a, *b = col ? &s->a : &s->b;
  int64_t m = col ? s->n : s->m, n = col ? s->m : s->n, k = s->k;
  int64_t ars = col ? a->cs : a->rs, acs = col ? a->rs : a->cs;
  int64_t brs = col ? b->cs : b->rs, bcs = col ? b->rs : b->cs;
  int64_t ldc = col ? s->c.cs : s->c.rs;
  if (ldc < n) ldc = n > 1 ? n : 1;
  bool ta, tb;
  blasint lda, ldb;
  blas_view(ars, acs, k, m, &ta, &lda);
  blas_view(brs, bcs, n, k, &tb, &ldb);
  int64_t es = (int64_t)lt_dtype_size(s->dtype);
  const char *pa = (const char *)a->mem + (col ? ob : oa) * es;
  const char *pb = (const char *)b->mem + (col ? oa : ob) * es;
  char *pc = (char *)s->c.mem + oc * es;
  /* k == 0 stays with gemm: gemv's quick return would skip y = beta * y. */
  if ((m == 1 || n == 1) && k > 0 &&
      gemv_one(s, m, n, k, ta, tb, lda, ldb, acs, brs, pa, pb, pc, ldc))
    return;
  enum CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
  if (s->dtype == LT_F32)
    cblas_sgemm(CblasRowMajor, opa, opb, (blasint)m, (blasint)n, (blasint)k, (float)s->alpha,
                (const float *)pa, lda, (const float *)pb, ldb, (float)s->beta, (float *)pc,
                (blasint)ldc);
  else
    cblas_dgemm(CblasRowMajor, opa, opb, (blasint)m, (blasint)n, (blasint)k, s->alpha,
                (const double *)pa, lda, (const double *)pb, ldb, s->beta, (double *)pc,
                (blasint)ldc);
}

static void gemm_range(const lt__gemm_step *s, int64_t first, int64_t last) {
  for (int64_t b = first; b < last; b++) {
    int64_t oa, ob, oc;
    lt__cpu_gemm_batch_offsets(s, b, &oa, &ob, &oc);
    gemm_one(s, oa, ob, oc);
  }
}

static void gemm_task(void *arg, int64_t first, int64_t last) { gemm_range(arg, first, last); }

/* OpenBLAS runs single-threaded while libtensor calls it, so that its own threads never wake
 * (after each threaded call they spin for ~0.1 s, taking a core from whatever runs next); the
 * context's pool parallelises instead. The thread count is process-wide: the first of
 * overlapping callers saves it, the last restores it. */
static pthread_mutex_t blas_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static int blas_users, blas_saved_threads;

static void blas_single_begin(void) {
  pthread_mutex_lock(&blas_threads_lock);
  if (blas_users++ == 0) {
    blas_saved_threads = openblas_get_num_threads();
    if (blas_saved_threads != 1) openblas_set_num_threads(1);
  }
  pthread_mutex_unlock(&blas_threads_lock);
}

static void blas_single_end(void) {
  pthread_mutex_lock(&blas_threads_lock);
  if (--blas_users == 0 && blas_saved_threads != 1) openblas_set_num_threads(blas_saved_threads);
  pthread_mutex_unlock(&blas_threads_lock);
}

/* A job of the pool: GEMM b of the batch, row or column block `part` of its C. */
typedef struct blas_split {
  const lt__gemm_step *s;
  int parts;
  bool by_rows;
} blas_split;

/* Block sizes are multiples of 16 rows or columns, so every block but the last keeps whole
 * register tiles of OpenBLAS's kernels. */
static void blas_split_task(void *arg, int64_t first, int64_t last) {
  const blas_split *sp = arg;
  for (int64_t t = first; t < last; t++) {
    lt__gemm_step sub = *sp->s;
    int64_t oa, ob, oc;
    lt__cpu_gemm_batch_offsets(sp->s, t / sp->parts, &oa, &ob, &oc);
    int64_t extent = sp->by_rows ? sub.m : sub.n;
    int64_t block = (extent + sp->parts - 1) / sp->parts;
    block = (block + 15) / 16 * 16;
    int64_t lo = (t % sp->parts) * block;
    if (lo >= extent) continue;
    int64_t len = extent - lo < block ? extent - lo : block;
    if (sp->by_rows) {
      sub.m = len, oa += lo * sub.a.rs, oc += lo * sub.c.rs;
    } else {
      sub.n = len, ob += lo * sub.b.cs, oc += lo * sub.c.cs;
    }
    gemm_one(&sub, oa, ob, oc);
  }
}

/* Runs a BLAS-layout step through OpenBLAS on the context's threads: whole GEMMs per thread
 * for batches of small ones, else each GEMM's C split into row or column blocks. */
static void gemm_openblas(lt_context *ctx, const lt__gemm_step *s, int64_t nb) {
  double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
  int threads = lt__cpu_threads(ctx);
  int64_t work = flops * (double)nb < 1e18 ? (int64_t)(flops * (double)nb) : (int64_t)1e18;
  blas_single_begin();
  if (threads <= 1 || flops * (double)nb < SPLIT_BATCH_MIN_TOTAL_FLOPS) {
    gemm_range(s, 0, nb);
  } else if (nb >= 2 && (flops < SPLIT_BATCH_MAX_FLOPS || nb >= 2 * (int64_t)threads)) {
    lt__cpu_parallel(ctx, nb, work, gemm_task, (void *)s);
  } else {
    blas_split sp = {.s = s, .parts = threads, .by_rows = s->m >= s->n};
    lt__cpu_parallel(ctx, nb * threads, work, blas_split_task, &sp);
  }
  blas_single_end();
}

/* OpenBLAS takes a matrix with one unit stride and a leading dimension covering the other. */
static bool blas_layout(const lt__matrix *x, int64_t rows, int64_t cols) {
  /* A leading dimension past blasint's range is for the packed path only (huge strides). */
  if (x->rs > INT32_MAX || x->cs > INT32_MAX || x->rows.n || x->cols.n) return false;
  return (x->cs == 1 && (x->rs >= cols || rows == 1)) ||
         (x->rs == 1 && (x->cs >= rows || cols == 1));
}

#endif /* LT_HAVE_OPENBLAS */

bool lt__cpu_gemm_takes_any_strides(lt_context *ctx) {
  return lt__cpu_isa_of(ctx)->gemm_blocking != NULL;
}

bool lt__cpu_gemm_takes_16bit(lt_context *ctx) {
  (void)ctx;
  return true;
}

bool lt__cpu_gemm_blas_ok(const lt__gemm_step *s) {
#ifdef LT_HAVE_OPENBLAS
  return lt__gemm_ab_dtype(s) == s->dtype && lt__gemm_c_dtype(s) == s->dtype &&
         blas_layout(&s->a, s->m, s->k) && blas_layout(&s->b, s->k, s->n) &&
         blas_layout(&s->c, s->m, s->n);
#else
  (void)s;
  return false;
#endif
}

/* A k-split GEMM's last step (cpu_gemm.h): columns [lo, hi) of C. */
typedef struct partials_job {
  lt_dtype dtype;
  const void *partials;
  int64_t ranges, m, n;
  const int64_t *roff, *coff;
  void *c;
  double alpha, beta;
} partials_job;

static void partials_task(void *arg, int64_t lo, int64_t hi) {
  const partials_job *job = arg;
  int64_t mn = job->m * job->n;
  bool f32 = job->dtype == LT_F32;
  for (int64_t j = lo; j < hi; j++)
    for (int64_t i = 0; i < job->m; i++) {
      double acc = 0.0;
      for (int64_t r = 0; r < job->ranges; r++) {
        int64_t at = r * mn + j * job->m + i;
        acc +=
            f32 ? (double)((const float *)job->partials)[at] : ((const double *)job->partials)[at];
      }
      int64_t o = job->roff[i] + job->coff[j];
      if (f32) {
        float *c = (float *)job->c + o;
        *c = (float)(job->alpha * acc + (job->beta != 0 ? job->beta * (double)*c : 0.0));
      } else {
        double *c = (double *)job->c + o;
        *c = job->alpha * acc + (job->beta != 0 ? job->beta * *c : 0.0);
      }
    }
}

void lt__cpu_gemm_sum_partials(lt_context *ctx, int threads, lt_dtype dtype, const void *partials,
                               int64_t ranges, int64_t m, int64_t n, const int64_t *roff,
                               const int64_t *coff, void *c, double alpha, double beta) {
  partials_job job = {dtype, partials, ranges, m, n, roff, coff, c, alpha, beta};
  lt__cpu_parallel_upto(ctx, threads, n, ranges * m * n, partials_task, &job);
}

lt_status lt__cpu_gemm_run(lt_context *ctx, const lt__gemm_step *s, int engine) {
  int64_t nb = lt__cpu_gemm_batch_count(s);
  if (nb == 0 || s->m == 0 || s->n == 0) return LT_OK;
  if (lt__gemm_c_dtype(s) != s->dtype) return lt__cpu_gemm_store16(ctx, s, engine);
  bool blas_ok = lt__cpu_gemm_blas_ok(s);
#ifdef LT_HAVE_OPENBLAS
  if (engine == LT__CPU_GEMM_OPENBLAS && blas_ok) {
    gemm_openblas(ctx, s, nb);
    return LT_OK;
  }
#endif
  if (engine == LT__CPU_GEMM_STREAM && lt__cpu_gemm_stream(ctx, s)) return LT_OK;
  if (engine == LT__CPU_GEMM_SMALL && lt__cpu_gemm_small(ctx, s)) return LT_OK;
  if (engine == LT__CPU_GEMM_KDOT && lt__cpu_gemm_kdot(ctx, s)) return LT_OK;
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  lt_dtype ab = lt__gemm_ab_dtype(s);
  /* bf16 A and B run on the dot-product kernels where that engine was chosen (never for an
   * `exact` step), else widened to f32 panels for the f32 kernels. */
  const lt__gemm_blocking *bk =
      isa->gemm_blocking && ab == LT_BF16 && !s->exact && engine == LT__CPU_GEMM_BF16_DOT
          ? isa->gemm_blocking(LT_BF16)
          : NULL;
  if (!bk && isa->gemm_blocking) bk = isa->gemm_blocking(s->dtype);
  if (lt__cpu_gemm_packed(ctx, s, bk ? bk : lt__gemm_blocking_portable(s->dtype))) return LT_OK;
#ifdef LT_HAVE_OPENBLAS
  if (blas_ok) { /* our packing buffers are out of memory: OpenBLAS needs none of its own */
    gemm_openblas(ctx, s, nb);
    return LT_OK;
  }
#else
  (void)blas_ok, (void)engine;
#endif
  /* The AVX-512 blocking wants larger buffers: the portable one may still fit. */
  LT_RETURN_IF(!bk || !lt__cpu_gemm_packed(ctx, s, lt__gemm_blocking_portable(s->dtype)),
               LT_ERR_OUT_OF_MEMORY, "gemm: out of memory for packing buffers");
  return LT_OK;
}

lt_status lt__cpu_gemm(lt_context *ctx, const lt__gemm_step *s) {
  return lt__cpu_gemm_run(ctx, s, s->engine ? s->engine : lt__cpu_gemm_engine(ctx, s));
}

/* Batched GEMM through OpenBLAS (cblas). A batch either runs as a loop of threaded GEMMs, or
 * is split across threads that each run single-threaded GEMMs, whichever the shape favours.
 * Built without OpenBLAS (LT_WITH_OPENBLAS=OFF), the packed kernels run every GEMM. */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_gemm_packed.h"
#include "backend/cpu/cpu_isa.h"
#include "core/error.h"
#include "core/object.h"

#ifdef LT_HAVE_OPENBLAS
#include <cblas.h>
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <strings.h>

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

/* Splits the batch across the context's persistent pool, each worker running single-threaded
 * GEMMs. The OpenBLAS thread count is process-wide, so it is restored afterwards. */
static void gemm_split_batches(lt_context *ctx, const lt__gemm_step *s, int64_t nb,
                               double total_flops) {
  int previous = openblas_get_num_threads();
  openblas_set_num_threads(1);
  int64_t work = total_flops < 1e18 ? (int64_t)total_flops : (int64_t)1e18;
  lt__cpu_parallel(ctx, nb, work, gemm_task, (void *)s);
  openblas_set_num_threads(previous);
}

/* OpenBLAS takes a matrix with one unit stride and a leading dimension covering the other. */
static bool blas_layout(const lt__matrix *x, int64_t rows, int64_t cols) {
  /* A leading dimension past blasint's range is for the packed path only (huge strides). */
  if (x->rs > INT32_MAX || x->cs > INT32_MAX) return false;
  return (x->cs == 1 && (x->rs >= cols || rows == 1)) ||
         (x->rs == 1 && (x->cs >= rows || cols == 1));
}

#endif /* LT_HAVE_OPENBLAS */

bool lt__cpu_gemm_takes_any_strides(lt_context *ctx) {
  return lt__cpu_isa_of(ctx)->gemm_blocking != NULL;
}

#ifdef LT_HAVE_OPENBLAS
/* Whether the OpenBLAS in use runs AVX-512 kernels of its own. OpenBLAS picks its kernels by
 * CPU model (or OPENBLAS_CORETYPE), and Debian's 0.3.21 takes CPUs newer than it knows for
 * Prescott (SSE3), a quarter of this library's kernels; on a core it does know, its kernels
 * and ours run large GEMMs at about the same speed. */
static bool openblas_runs_avx512(void) {
  static atomic_int known = -1; /* racing threads store the same answer */
  int v = atomic_load_explicit(&known, memory_order_relaxed);
  if (v < 0) {
    const char *core = openblas_get_corename();
    v = core && (strcasecmp(core, "SkylakeX") == 0 || strcasecmp(core, "Cooperlake") == 0 ||
                 strcasecmp(core, "SapphireRapids") == 0);
    atomic_store_explicit(&known, v, memory_order_relaxed);
  }
  return v != 0;
}

/* The packed kernels unless the step is a matrix-vector product in a BLAS layout (gemv), or
 * OpenBLAS has AVX-512 kernels too and the step is a few large BLAS-layout GEMMs (where it is
 * as fast); batches of small GEMMs and strided matrices are ours either way, as they avoid
 * OpenBLAS's per-call overhead and copies. */
static bool use_packed(const lt__cpu_isa *isa, const lt__gemm_step *s, int64_t nb, bool blas_ok,
                       int threads) {
  if (isa->gemm_blocking == NULL) return false;
  if (blas_ok && (s->m == 1 || s->n == 1) && s->k > 0) return false; /* gemv: see gemv_one */
  return !blas_ok || !openblas_runs_avx512() || nb >= 2 * (int64_t)threads;
}

#endif /* LT_HAVE_OPENBLAS */

lt_status lt__cpu_gemm(lt_context *ctx, const lt__gemm_step *s) {
  int64_t nb = lt__cpu_gemm_batch_count(s);
  if (nb == 0 || s->m == 0 || s->n == 0) return LT_OK;
#ifndef LT_HAVE_OPENBLAS
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  const lt__gemm_blocking *packed = isa->gemm_blocking ? isa->gemm_blocking(s->dtype) : NULL;
  if (packed && lt__cpu_gemm_packed(ctx, s, packed)) return LT_OK;
  LT_RETURN_IF(!lt__cpu_gemm_packed(ctx, s, lt__gemm_blocking_portable(s->dtype)),
               LT_ERR_OUT_OF_MEMORY, "gemm: out of memory for packing buffers");
  return LT_OK;
#else
  bool blas_ok = blas_layout(&s->a, s->m, s->k) && blas_layout(&s->b, s->k, s->n) &&
                 blas_layout(&s->c, s->m, s->n);
  const lt__cpu_isa *isa = lt__cpu_isa_of(ctx);
  const lt__gemm_blocking *bk =
      use_packed(isa, s, nb, blas_ok, lt__cpu_threads(ctx)) ? isa->gemm_blocking(s->dtype) : NULL;
  if (bk && lt__cpu_gemm_packed(ctx, s, bk)) return LT_OK;
  if (!blas_ok) {
    /* Planned for the AVX-512 path (or its packing buffers are out): the portable kernels. */
    LT_RETURN_IF(!lt__cpu_gemm_packed(ctx, s, lt__gemm_blocking_portable(s->dtype)),
                 LT_ERR_OUT_OF_MEMORY, "gemm: out of memory for packing buffers");
    return LT_OK;
  }
  double flops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
  int threads = lt__cpu_threads(ctx);
  if (nb >= 2 && threads > 1 && flops < SPLIT_BATCH_MAX_FLOPS &&
      flops * (double)nb >= SPLIT_BATCH_MIN_TOTAL_FLOPS)
    gemm_split_batches(ctx, s, nb, flops * (double)nb);
  else
    gemm_range(s, 0, nb);
  return LT_OK;
#endif
}

/* Batched GEMM through OpenBLAS (cblas), one call per batch index. */
#include "backend/cpu/cpu.h"

#include <cblas.h>

static void gemm_one(const lt__gemm_step *s, int64_t oa, int64_t ob, int64_t oc) {
  /* Row-major view of each matrix: rs is the leading dimension when cs == 1. */
  bool ta = s->a.cs != 1, tb = s->b.cs != 1;
  blasint lda = (blasint)(ta ? s->a.cs : s->a.rs), ldb = (blasint)(tb ? s->b.cs : s->b.rs);
  blasint ldc = (blasint)s->c.rs;
  if (lda < 1) lda = 1;
  if (ldb < 1) ldb = 1;
  if (ldc < 1) ldc = 1;
  if (s->dtype == LT_F32) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (blasint)s->m, (blasint)s->n, (blasint)s->k, (float)s->alpha,
                (const float *)s->a.mem + oa, lda, (const float *)s->b.mem + ob, ldb,
                (float)s->beta, (float *)s->c.mem + oc, ldc);
  } else {
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (blasint)s->m, (blasint)s->n, (blasint)s->k, s->alpha,
                (const double *)s->a.mem + oa, lda, (const double *)s->b.mem + ob, ldb, s->beta,
                (double *)s->c.mem + oc, ldc);
  }
}

lt_status lt__cpu_gemm(lt_context *ctx, const lt__gemm_step *s) {
  int64_t nb = 1;
  for (int d = 0; d < s->batch_rank; d++)
    nb *= s->batch_shape[d];
  for (int64_t b = 0; b < nb; b++) {
    int64_t oa = s->a.offset, ob = s->b.offset, oc = s->c.offset, rem = b;
    for (int d = s->batch_rank - 1; d >= 0; d--) {
      int64_t i = rem % s->batch_shape[d];
      rem /= s->batch_shape[d];
      oa += i * s->a.batch_strides[d];
      ob += i * s->b.batch_strides[d];
      oc += i * s->c.batch_strides[d];
    }
    gemm_one(s, oa, ob, oc);
  }
  return LT_OK;
}

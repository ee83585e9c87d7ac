/* CPU sort step (backend.h): each row's keys are loaded once (as double for floating dtypes,
 * exact int64 for integers), their positions merge-sorted (stable by construction), and the
 * first k written as values (raw bits, so nothing is rounded) or positions. Rows split across
 * threads; each chunk allocates its own buffers. */
#include "backend/cpu/cpu.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

typedef struct sort_job {
  lt_context *ctx;
  const lt__sort_step *s;
  atomic_int failed;
} sort_job;

/* Keys of one row and the order wanted. */
typedef struct keys {
  const double *f;  /* floating dtypes */
  const int64_t *i; /* integer dtypes */
  bool desc;
} keys;

/* True when element a must come strictly before element b: ascending with NaN greatest, or
 * the exact reverse, so that ties (and NaNs among themselves) keep their positions. */
static bool before(const keys *k, int64_t a, int64_t b) {
  if (k->desc) {
    int64_t t = a;
    a = b;
    b = t;
  }
  if (k->i) return k->i[a] < k->i[b];
  double x = k->f[a], y = k->f[b];
  return x < y || (!isnan(x) && isnan(y));
}

/* Bottom-up stable merge sort of perm[0..n) through tmp; returns the buffer holding the result. */
static int64_t *merge_sort(const keys *k, int64_t *perm, int64_t *tmp, int64_t n) {
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi)
        tmp[o++] = before(k, perm[j], perm[i]) ? perm[j++] : perm[i++];
      while (i < mid)
        tmp[o++] = perm[i++];
      while (j < hi)
        tmp[o++] = perm[j++];
    }
    int64_t *t = perm;
    perm = tmp;
    tmp = t;
  }
  return perm;
}

/* The first k of n in order, for k much smaller than n (topk): a sorted buffer that admits an
 * element only if it comes before the current last; equal elements go after those already in,
 * which keeps the order stable. Returns perm. */
static int64_t *partial_sort(const keys *k, int64_t *perm, int64_t n, int64_t want) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    if (m == want && !before(k, i, perm[m - 1])) continue;
    int64_t lo = 0, hi = m;
    while (lo < hi) { /* first position p with before(i, perm[p]) */
      int64_t mid = lo + (hi - lo) / 2;
      if (before(k, i, perm[mid]))
        hi = mid;
      else
        lo = mid + 1;
    }
    int64_t last = m < want ? m : want - 1;
    memmove(perm + lo + 1, perm + lo, (size_t)(last - lo) * sizeof *perm);
    perm[lo] = i;
    if (m < want) m++;
  }
  return perm;
}

static void sort_rows(void *arg, int64_t lo, int64_t hi) {
  sort_job *job = arg;
  const lt__sort_step *s = job->s;
  int64_t n = s->n;
  size_t es = lt_dtype_size(s->in.dtype);
  /* perm, tmp, keys: 8 bytes each per element. */
  char *buf = lt__host_calloc(job->ctx, (size_t)n * 3, 8);
  if (buf == NULL) {
    atomic_store(&job->failed, 1);
    return;
  }
  int64_t *perm0 = (int64_t *)buf, *tmp = perm0 + n;
  bool is_int = !lt__dtype_is_float(s->in.dtype);
  keys k = {.desc = s->descending};
  if (is_int)
    k.i = tmp + n;
  else
    k.f = (const double *)(tmp + n);
  for (int64_t r = lo; r < hi; r++) {
    int64_t oi = s->in.offset, oo = s->out.offset, rest = r;
    for (int d = s->rank - 1; d >= 0; d--) {
      int64_t i = rest % s->shape[d];
      rest /= s->shape[d];
      oi += i * s->in.strides[d];
      oo += i * s->out.strides[d];
    }
    for (int64_t i = 0; i < n; i++) {
      int64_t at = oi + i * s->in_axis_stride;
      if (is_int)
        ((int64_t *)(tmp + n))[i] = lt__load_index(s->in.mem, s->in.dtype, at);
      else
        ((double *)(tmp + n))[i] = lt__load_f64(s->in.mem, s->in.dtype, at);
      perm0[i] = i;
    }
    const int64_t *perm =
        s->k * 8 < n ? partial_sort(&k, perm0, n, s->k) : merge_sort(&k, perm0, tmp, n);
    for (int64_t i = 0; i < s->k; i++) {
      int64_t to = oo + i * s->out_axis_stride;
      if (s->indices) {
        ((int64_t *)s->out.mem)[to] = perm[i];
      } else {
        int64_t from = oi + perm[i] * s->in_axis_stride;
        memcpy((char *)s->out.mem + to * (int64_t)es, (const char *)s->in.mem + from * (int64_t)es,
               es);
      }
    }
  }
  lt__host_free(job->ctx, buf, (size_t)n * 3 * 8);
}

lt_status lt__cpu_sort(lt_context *ctx, const lt__sort_step *s) {
  int64_t rows = 1;
  for (int d = 0; d < s->rank; d++)
    rows *= s->shape[d];
  if (rows == 0 || s->k == 0) return LT_OK;
  sort_job job = {.ctx = ctx, .s = s};
  atomic_init(&job.failed, 0);
  /* Sorting costs about n log n per row: weigh the work so small sorts stay on one thread. */
  double logn = s->n > 1 ? log2((double)s->n) : 1.0;
  lt__cpu_parallel(ctx, rows, (int64_t)((double)(rows * s->n) * logn), sort_rows, &job);
  LT_RETURN_IF(atomic_load(&job.failed), LT_ERR_OUT_OF_MEMORY,
               "out of memory allocating sort buffers for rows of %lld elements", (long long)s->n);
  return LT_OK;
}

/* SPDX-License-Identifier: MIT */
/* CPU sort step (backend.h). Each row's elements become 64-bit keys whose unsigned order is the
 * wanted order (NaN greatest and -0.0 equal to 0.0 for floats, inverted for descending), so
 * every comparison is one integer compare. Full sorts of longer rows are an LSD radix sort of
 * (key, position) pairs, byte by byte (stable by construction; passes where every key shares
 * the byte are skipped); short rows and topk (k much smaller than n) keep a sorted insertion
 * buffer. The first k are written as values (raw bits, nothing rounded) or positions. Rows
 * split across threads; each chunk allocates its own buffers. */
#include "backend/cpu/cpu.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/object.h"

#include <math.h>
#include <stdatomic.h>
#include <string.h>

/* Rows shorter than this use the insertion buffer even for a full sort. */
#define RADIX_MIN 48

typedef struct sort_job {
  lt_context *ctx;
  const lt__sort_step *s;
  atomic_int failed;
} sort_job;

/* The order-preserving key of element `at` of the input. */
static uint64_t sort_key(const lt__sort_step *s, int64_t at) {
  uint64_t k;
  if (!lt__dtype_is_float(s->in.dtype)) { /* integers and bool: exact bits, signed flipped */
    k = lt__load_bits(s->in.mem, s->in.dtype, at);
    if (lt__dtype_is_signed_int(s->in.dtype)) k ^= (uint64_t)1 << 63;
  } else {
    double v = lt__load_f64(s->in.mem, s->in.dtype, at);
    if (isnan(v)) {
      k = UINT64_MAX;
    } else {
      if (v == 0) v = 0.0; /* -0.0 ties with 0.0, as NumPy compares them */
      memcpy(&k, &v, sizeof k);
      k = (k >> 63) ? ~k : k | ((uint64_t)1 << 63);
    }
  }
  return s->descending ? ~k : k;
}

/* The first `want` positions of keys[0..n) in key order, ties by position, into perm. */
static void insertion_first(const uint64_t *keys, int64_t *perm, int64_t n, int64_t want) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    if (m == want && keys[perm[m - 1]] <= keys[i]) continue;
    int64_t lo = 0, hi = m;
    while (lo < hi) { /* first position whose key exceeds keys[i]: after its equals */
      int64_t mid = lo + (hi - lo) / 2;
      if (keys[i] < keys[perm[mid]])
        hi = mid;
      else
        lo = mid + 1;
    }
    int64_t last = m < want ? m : want - 1;
    memmove(perm + lo + 1, perm + lo, (size_t)(last - lo) * sizeof *perm);
    perm[lo] = i;
    if (m < want) m++;
  }
}

/* Stable LSD radix sort of (keys, perm) pairs through (tk, tp); returns the sorted positions. */
static const int64_t *radix_sort(uint64_t *keys, int64_t *perm, uint64_t *tk, int64_t *tp,
                                 int64_t n) {
  for (int64_t i = 0; i < n; i++)
    perm[i] = i;
  for (int shift = 0; shift < 64; shift += 8) {
    int64_t count[257] = {0};
    for (int64_t i = 0; i < n; i++)
      count[((keys[i] >> shift) & 0xff) + 1]++;
    if (count[((keys[0] >> shift) & 0xff) + 1] == n) continue; /* one bucket: order unchanged */
    for (int b = 0; b < 256; b++)
      count[b + 1] += count[b];
    for (int64_t i = 0; i < n; i++) {
      int64_t to = count[(keys[i] >> shift) & 0xff]++;
      tk[to] = keys[i];
      tp[to] = perm[i];
    }
    uint64_t *k = keys;
    keys = tk;
    tk = k;
    int64_t *p = perm;
    perm = tp;
    tp = p;
  }
  return perm;
}

static void sort_rows(void *arg, int64_t lo, int64_t hi) {
  sort_job *job = arg;
  const lt__sort_step *s = job->s;
  int64_t n = s->n;
  size_t es = lt_dtype_size(s->in.dtype);
  /* keys, perm and their radix twins: 8 bytes each per element. */
  char *buf = lt__host_calloc(job->ctx, (size_t)n * 4, 8);
  if (buf == NULL) {
    atomic_store(&job->failed, 1);
    return;
  }
  uint64_t *keys = (uint64_t *)buf, *tk = keys + n;
  int64_t *perm = (int64_t *)(tk + n), *tp = perm + n;
  for (int64_t r = lo; r < hi; r++) {
    int64_t oi = s->in.offset, oo = s->out.offset, rest = r;
    for (int d = s->rank - 1; d >= 0; d--) {
      int64_t i = rest % s->shape[d];
      rest /= s->shape[d];
      oi += i * s->in.strides[d];
      oo += i * s->out.strides[d];
    }
    for (int64_t i = 0; i < n; i++)
      keys[i] = sort_key(s, oi + i * s->in_axis_stride);
    const int64_t *order = perm;
    if (s->k * 8 < n || n < RADIX_MIN)
      insertion_first(keys, perm, n, s->k);
    else
      order = radix_sort(keys, perm, tk, tp, n);
    for (int64_t i = 0; i < s->k; i++) {
      int64_t to = oo + i * s->out_axis_stride;
      if (s->indices) {
        ((int64_t *)s->out.mem)[to] = order[i];
      } else {
        int64_t from = oi + order[i] * s->in_axis_stride;
        memcpy((char *)s->out.mem + to * (int64_t)es, (const char *)s->in.mem + from * (int64_t)es,
               es);
      }
    }
  }
  lt__host_free(job->ctx, buf, (size_t)n * 4 * 8);
}

lt_status lt__cpu_sort(lt_context *ctx, const lt__sort_step *s) {
  int64_t rows = 1;
  for (int d = 0; d < s->rank; d++)
    rows *= s->shape[d];
  if (rows == 0 || s->k == 0) return LT_OK;
  sort_job job = {.ctx = ctx, .s = s};
  atomic_init(&job.failed, 0);
  /* About 8 passes over each row's keys: weigh the work so small sorts stay on one thread. */
  lt__cpu_parallel(ctx, rows, rows * s->n * 8, sort_rows, &job);
  LT_RETURN_IF(atomic_load(&job.failed), LT_ERR_OUT_OF_MEMORY,
               "out of memory allocating sort buffers for rows of %lld elements", (long long)s->n);
  return LT_OK;
}

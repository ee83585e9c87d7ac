/* SPDX-License-Identifier: MIT */
/* Row steps on the CPU: softmax, log_softmax, logsumexp, var/std and cumulative sum/product.
 * Rows are split across threads; each row is moved through a small buffer in the compute type
 * (the engine's converting loads and stores, so every storage dtype works) and processed by
 * the typed buffer kernels of cpu_rows.inc (cpu_vocab.h). A row that fits the buffer is read once;
 * longer rows stream through it chunk by chunk (softmax: max, sum, write; moments: chunk means and
 * squared deviations combined with Chan et al.'s update, which keeps 10^7-element f32 rows
 * accurate). */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_typed.h"
#include "backend/cpu/cpu_vocab.h"

#include <math.h>
#include <string.h>

#define ROW_BUF 4096

enum { IN = 0, OUT = 1 };

typedef struct row_job {
  const lt__row_step *s;
  const lt__cpu_kernels *k; /* loads and stores in the compute type */
  const lt__cpu_rows_kernels *rk;
  lt__cpu_nest kept, row;
  int64_t n_rows, row_len;
  bool whole; /* the op writes whole rows */
} row_job;

/* Moves row elements [pos, pos + n) of the row at kept offsets `base` between memory and buf. */
static void row_io(const row_job *j, int q, bool store, int64_t base, int64_t pos, int64_t n,
                   void *buf) {
  const lt__row_step *s = j->s;
  const lt__operand *op = q == IN ? &s->in : &s->out;
  const lt__cpu_nest *r = &j->row;
  char *b = buf;
  if (r->rank == 0) {
    if (store)
      j->k->store(op->mem, op->dtype, base, 0, b, 1);
    else
      j->k->load(b, op->mem, op->dtype, base, 0, 1);
    return;
  }
  int last = r->rank - 1;
  int64_t len = r->shape[last], inner = pos % len, stride = r->strides[q][last];
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, r, last, pos / len);
  while (n > 0) {
    int64_t run = len - inner < n ? len - inner : n;
    int64_t off = base + it.off[q] + inner * stride;
    if (store)
      j->k->store(op->mem, op->dtype, off, stride, b, run);
    else
      j->k->load(b, op->mem, op->dtype, off, stride, run);
    b += run * (int64_t)j->k->size;
    n -= run;
    inner = 0;
    lt__cpu_odometer_next(&it);
  }
}

static void store_scalar(const row_job *j, int64_t base, double v) {
  char buf[8];
  j->k->fill(buf, 1, v);
  j->k->store(j->s->out.mem, j->s->out.dtype, base, 0, buf, 1);
}

/* Sum of exp(src[i] - shift) over a chunk, the exponentials written to dst. Summed by the
 * engine's blocked reduction (vectorised, totals in double). */
static double expsum(const row_job *j, void *dst, const void *src, int64_t n, double shift) {
  j->rk->exp(dst, src, n, shift);
  return j->k->reduce(dst, n, LT__CPU_SUM, 0);
}

/* Where operand q's row is one run of stride 1 already in the compute type, its address (the
 * kernels then read or write it in place instead of moving it through a buffer), else NULL. */
static char *row_direct(const row_job *j, int q, int64_t base) {
  const lt__operand *op = q == IN ? &j->s->in : &j->s->out;
  if (op->dtype != j->s->compute || j->row.rank != 1 || j->row.strides[q][0] != 1) return NULL;
  return (char *)op->mem + (base + j->row.offset[q]) * (int64_t)j->k->size;
}

/* Softmax, log_softmax or logsumexp of one row (row_len >= 1). A row that fits the buffer is
 * read from memory once (the max pass; the others find it in cache); a longer one streams
 * through the buffer three times. */
static void softmax_row(const row_job *j, int64_t in, int64_t out, void *buf, void *tmp) {
  lt__row_op op = j->s->op;
  int64_t n = j->row_len;
  bool fits = n <= ROW_BUF;
  char *src = fits ? row_direct(j, IN, in) : NULL;
  char *dst = fits && op != LT__ROW_LOGSUMEXP ? row_direct(j, OUT, out) : NULL;
  if (fits && !src) {
    row_io(j, IN, false, in, 0, n, buf);
    src = buf;
  }
  double m = -INFINITY;
  for (int64_t p = 0; p < n; p += ROW_BUF) {
    int64_t c = n - p < ROW_BUF ? n - p : ROW_BUF;
    if (!fits) row_io(j, IN, false, in, p, c, buf);
    double cm = j->rk->max(fits ? src : buf, c);
    m = cm > m || cm != cm ? cm : m;
  }
  /* A +inf in the row makes softmax and log_softmax NaN throughout (exp(x - max) is 0 or NaN),
   * as in PyTorch; logsumexp stays +inf, and an all -inf row shifts by 0. */
  double shift = isinf(m) && (m < 0 || op == LT__ROW_LOGSUMEXP) ? 0.0 : m, sum = 0;
  /* A fitting softmax row keeps its exponentials in tmp for the scaling pass. */
  for (int64_t p = 0; p < n; p += ROW_BUF) {
    int64_t c = n - p < ROW_BUF ? n - p : ROW_BUF;
    if (!fits) row_io(j, IN, false, in, p, c, buf);
    sum += expsum(j, tmp, fits ? src : buf, c, shift);
  }
  if (op == LT__ROW_LOGSUMEXP) {
    store_scalar(j, out, shift + log(sum));
    return;
  }
  double lse = log(sum);
  for (int64_t p = 0; p < n; p += ROW_BUF) {
    int64_t c = n - p < ROW_BUF ? n - p : ROW_BUF;
    void *to = dst ? dst : buf;
    if (!fits) row_io(j, IN, false, in, p, c, buf);
    if (op == LT__ROW_SOFTMAX) {
      if (!fits) j->rk->exp(tmp, buf, c, shift);
      j->rk->scale(to, tmp, c, 1.0 / sum);
    } else {
      j->rk->shift(to, fits ? src : buf, c, shift, lse);
    }
    if (!dst) row_io(j, OUT, true, out, p, c, buf);
  }
}

static void moments_row(const row_job *j, int64_t in, int64_t out, void *buf) {
  int64_t n = j->row_len, count = 0;
  double mean = 0, m2 = 0;
  for (int64_t p = 0; p < n; p += ROW_BUF) {
    int64_t c = n - p < ROW_BUF ? n - p : ROW_BUF;
    row_io(j, IN, false, in, p, c, buf);
    double cm, cq;
    j->rk->moments(buf, c, &cm, &cq);
    int64_t total = count + c;
    if (count == 0) { /* the first chunk as it is: delta^2 * 0 was inf * 0 = NaN past 1e154 */
      mean = cm, m2 = cq, count = c;
      continue;
    }
    double delta = cm - mean;
    mean += delta * ((double)c / (double)total);
    m2 += cq + delta * delta * ((double)count * (double)c / (double)total);
    count = total;
  }
  double dof = (double)n - j->s->ddof;
  double var = (n == 0 ? NAN : m2) / (dof > 0 ? dof : 0.0);
  store_scalar(j, out, j->s->op == LT__ROW_STD ? sqrt(var) : var);
}

/* Inclusive running sum or product of 64-bit integer bits, continuing *carry: unsigned
 * arithmetic wraps modulo 2^64 as NumPy's integer cumsum does, and the bits are the same for
 * I64 and U64 compute. */
static void scan_int(void *xv, int64_t n, uint64_t *carry, bool prod) {
  uint64_t *x = xv, c = *carry;
  if (prod)
    for (int64_t i = 0; i < n; i++)
      x[i] = c = c * x[i];
  else
    for (int64_t i = 0; i < n; i++)
      x[i] = c = c + x[i];
  *carry = c;
}

/* A float row that is one stride-1 run in the compute type on both sides is scanned from the
 * input straight into the output; anything else moves through the buffer in chunks. */
static void scan_row(const row_job *j, int64_t in, int64_t out, void *buf) {
  bool prod = j->s->op == LT__ROW_CUMPROD, exact = lt__cpu_compute_is_int(j->s->compute);
  double carry = prod ? 1.0 : 0.0;
  uint64_t icarry = prod ? 1 : 0;
  char *src = exact ? NULL : row_direct(j, IN, in), *dst = src ? row_direct(j, OUT, out) : NULL;
  if (dst) {
    j->rk->scan(dst, src, j->row_len, &carry, prod);
    return;
  }
  for (int64_t p = 0; p < j->row_len; p += ROW_BUF) {
    int64_t c = j->row_len - p < ROW_BUF ? j->row_len - p : ROW_BUF;
    row_io(j, IN, false, in, p, c, buf);
    if (exact)
      scan_int(buf, c, &icarry, prod);
    else
      j->rk->scan(buf, buf, c, &carry, prod);
    row_io(j, OUT, true, out, p, c, buf);
  }
}

static void run_rows(void *arg, int64_t lo, int64_t hi) {
  const row_job *j = arg;
  _Alignas(64) double buf[ROW_BUF], tmp[ROW_BUF];
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &j->kept, j->kept.rank, lo);
  for (int64_t r = lo; r < hi; r++, lt__cpu_odometer_next(&it)) {
    int64_t in = it.off[IN], out = it.off[OUT];
    switch (j->s->op) {
    case LT__ROW_VAR:
    case LT__ROW_STD: moments_row(j, in, out, buf); break;
    case LT__ROW_CUMSUM:
    case LT__ROW_CUMPROD: scan_row(j, in, out, buf); break;
    default:
      if (j->row_len == 0) {
        if (!j->whole) store_scalar(j, out, -INFINITY); /* log(0) */
      } else {
        softmax_row(j, in, out, buf, tmp);
      }
    }
  }
}

lt_status lt__cpu_rows(lt_context *ctx, const lt__row_step *s) {
  row_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  j.k = lt__cpu_isa_of(ctx)->kernels(s->compute);
  const lt__cpu_vocab_kernels *vk = lt__cpu_vocab_kernels_for(ctx);
  j.rk = s->compute == LT_F64 ? vk->rows_f64 : vk->rows_f32;
  j.whole = s->op == LT__ROW_SOFTMAX || s->op == LT__ROW_LOG_SOFTMAX || s->op == LT__ROW_CUMSUM ||
            s->op == LT__ROW_CUMPROD;
  lt__cpu_nest_init(&j.kept, s->rank, s->shape, 2);
  if (s->rank) {
    memcpy(j.kept.strides[IN], s->in.strides, sizeof(int64_t) * (size_t)s->rank);
    memcpy(j.kept.strides[OUT], s->out.strides, sizeof(int64_t) * (size_t)s->rank);
  }
  j.kept.offset[IN] = s->in.offset;
  j.kept.offset[OUT] = s->out.offset;
  j.n_rows = lt__cpu_nest_numel(&j.kept);
  lt__cpu_nest_squeeze(&j.kept);
  lt__cpu_nest_fuse(&j.kept);
  lt__cpu_nest_init(&j.row, s->row_rank, s->row_shape, 2);
  if (s->row_rank) {
    memcpy(j.row.strides[IN], s->in_row_strides, sizeof(int64_t) * (size_t)s->row_rank);
    memcpy(j.row.strides[OUT], j.whole ? s->out_row_strides : s->in_row_strides,
           sizeof(int64_t) * (size_t)s->row_rank);
  }
  j.row_len = lt__cpu_nest_numel(&j.row);
  if (j.n_rows == 0 || (j.whole && j.row_len == 0)) return LT_OK;
  /* Element order matters only to scans: the others may walk the input in memory order. */
  lt__cpu_nest_squeeze(&j.row);
  if (s->op != LT__ROW_CUMSUM && s->op != LT__ROW_CUMPROD) {
    lt__cpu_nest_sort(&j.row, IN);
    lt__cpu_nest_fuse(&j.row);
  }
  if (!j.whole) memset(j.row.strides[OUT], 0, sizeof j.row.strides[OUT]);
  lt__cpu_parallel(ctx, j.n_rows, j.n_rows * (j.row_len + 1), run_rows, &j);
  return LT_OK;
}

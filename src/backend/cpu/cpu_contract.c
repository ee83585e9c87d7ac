/* SPDX-License-Identifier: MIT */
/* Direct strided contraction: tiny float problems (no packing, no BLAS call overhead), and every
 * integer contraction, which must not pass through a float GEMM (issue 18: exact above 2^53).
 * Outputs are split across threads; each output sums its products in one fixed order (the
 * contracted dims row-major), so the result does not depend on the thread count. The innermost
 * contracted dim is loaded a chunk at a time through the engine's converting loads into the
 * accumulation type: double for float compute (at least as accurate as f32/f64 ask), the 64-bit
 * two's complement bits for I64/U64 (wrapping, as NumPy's integer einsum and matmul). */
#include "backend/cpu/cpu.h"
#include "backend/cpu/cpu_nest.h"
#include "backend/cpu/cpu_typed.h"
#include "core/dtype.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { OUT = 0, C = 1, A = 2, B = 3 };

#define DOT_CHUNK 256 /* contracted values loaded at a time for one output */

typedef struct contract_job {
  const lt__contract_step *s;
  const lt__operand *c;
  const lt__cpu_kernels *k; /* loads and stores in the accumulation type */
  bool exact;
  lt__cpu_nest outer, red; /* red: A and B (as nest operands 0 and 1) over the contracted dims */
  int64_t n_red;
} contract_job;

/* acc += sum of a[i] * b[i] over n chunk values, in the accumulation type. */
static void dot_f64(const void *a, const void *b, int64_t n, void *acc) {
  const double *x = a, *y = b;
  double t = *(double *)acc;
  for (int64_t i = 0; i < n; i++)
    t += x[i] * y[i];
  *(double *)acc = t;
}

static void dot_int(const void *a, const void *b, int64_t n, void *acc) {
  const uint64_t *x = a, *y = b;
  uint64_t t = *(uint64_t *)acc;
  for (int64_t i = 0; i < n; i++)
    t += x[i] * y[i]; /* unsigned: wraps modulo 2^64, never signed-overflow UB */
  *(uint64_t *)acc = t;
}

/* The products of one output (A and B at offsets oa, ob) summed into *acc (8 bytes, zeroed). */
static void reduce_products(const contract_job *j, int64_t oa, int64_t ob, void *acc, uint64_t *xa,
                            uint64_t *xb) {
  const lt__contract_step *s = j->s;
  const lt__cpu_nest *r = &j->red;
  if (j->n_red == 0) return;
  int last = r->rank - 1;
  int64_t len = r->rank ? r->shape[last] : 1;
  int64_t sa = r->rank ? r->strides[0][last] : 0, sb = r->rank ? r->strides[1][last] : 0;
  int64_t rows = j->n_red / len;
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, r, r->rank ? last : 0, 0);
  for (int64_t row = 0; row < rows; row++, lt__cpu_odometer_next(&it)) {
    for (int64_t c0 = 0; c0 < len; c0 += DOT_CHUNK) {
      int64_t n = len - c0 < DOT_CHUNK ? len - c0 : DOT_CHUNK;
      j->k->load(xa, s->a.mem, s->a.dtype, oa + it.off[0] + c0 * sa, sa, n);
      j->k->load(xb, s->b.mem, s->b.dtype, ob + it.off[1] + c0 * sb, sb, n);
      (j->exact ? dot_int : dot_f64)(xa, xb, n, acc);
    }
  }
}

/* Rounded, saturated scalar in the integer compute type's bits. */
static uint64_t int_scalar(double v, lt_dtype compute) {
  return compute == LT_I64 ? (uint64_t)lt__f64_to_i64(nearbyint(v)) : lt__f64_to_u64(nearbyint(v));
}

static void run_outputs(void *arg, int64_t lo, int64_t hi) {
  const contract_job *j = arg;
  const lt__contract_step *s = j->s;
  /* The chunk buffers live here, once per range: per output they would dominate tiny sums. */
  _Alignas(64) uint64_t xa[DOT_CHUNK], xb[DOT_CHUNK];
  lt__cpu_odometer it;
  lt__cpu_odometer_seek(&it, &j->outer, j->outer.rank, lo);
  for (int64_t t = lo; t < hi; t++, lt__cpu_odometer_next(&it)) {
    union {
      double f;
      uint64_t u;
    } acc = {.u = 0}, cv;
    reduce_products(j, it.off[A], it.off[B], &acc, xa, xb);
    if (j->exact) {
      uint64_t v = s->alpha == 1.0 ? acc.u : acc.u * int_scalar(s->alpha, s->compute);
      if (s->beta != 0) {
        j->k->load(&cv, j->c->mem, j->c->dtype, it.off[C], 0, 1);
        v += cv.u * int_scalar(s->beta, s->compute);
      }
      j->k->store(s->out.mem, s->out.dtype, it.off[OUT], 0, &v, 1);
    } else {
      double v = s->alpha * acc.f;
      if (s->beta != 0) v += s->beta * lt__load_f64(j->c->mem, j->c->dtype, it.off[C]);
      lt__store_f64(s->out.mem, s->out.dtype, it.off[OUT],
                    s->compute == LT_F32 ? (double)(float)v : v);
    }
  }
}

/* ---- integer outputs a run at a time ----
 * Where the operands step through memory along the innermost output dim more closely than
 * along the innermost contracted one (C = A.B row-major: B's rows are contiguous, its columns
 * are not), a run of up to RUN outputs accumulates together, one contracted position at a
 * time: acc[t] += a[t] * b[t], both loaded along the output dim. Integer sums are exact in any
 * order, so this changes no bit of the result; float steps keep the fixed dot order above. */
#define RUN 256

static void finish_run(const contract_job *j, const int64_t *off, int64_t n, uint64_t *acc) {
  const lt__contract_step *s = j->s;
  int last = j->outer.rank - 1;
  if (s->alpha != 1.0) {
    uint64_t a = int_scalar(s->alpha, s->compute);
    for (int64_t t = 0; t < n; t++)
      acc[t] *= a;
  }
  if (s->beta != 0) {
    uint64_t b = int_scalar(s->beta, s->compute), cv[RUN];
    j->k->load(cv, j->c->mem, j->c->dtype, off[C], j->outer.strides[C][last], n);
    for (int64_t t = 0; t < n; t++)
      acc[t] += cv[t] * b;
  }
  j->k->store(s->out.mem, s->out.dtype, off[OUT], j->outer.strides[OUT][last], acc, n);
}

static void run_runs(void *arg, int64_t lo, int64_t hi) {
  const contract_job *j = arg;
  const lt__contract_step *s = j->s;
  const lt__cpu_nest *o = &j->outer, *r = &j->red;
  int last = o->rank - 1;
  int64_t len = o->shape[last], blocks = (len + RUN - 1) / RUN;
  int64_t sa = o->strides[A][last], sb = o->strides[B][last];
  _Alignas(64) uint64_t acc[RUN], xa[RUN], xb[RUN];
  for (int64_t task = lo; task < hi; task++) {
    lt__cpu_odometer it, red;
    lt__cpu_odometer_seek(&it, o, last, task / blocks);
    int64_t b0 = task % blocks * RUN, n = len - b0 < RUN ? len - b0 : RUN, off[4];
    for (int q = 0; q < 4; q++)
      off[q] = it.off[q] + b0 * o->strides[q][last];
    memset(acc, 0, sizeof(uint64_t) * (size_t)n);
    lt__cpu_odometer_seek(&red, r, r->rank, 0);
    for (int64_t p = 0; p < j->n_red; p++, lt__cpu_odometer_next(&red)) {
      j->k->load(xa, s->a.mem, s->a.dtype, off[A] + red.off[0], sa, n);
      j->k->load(xb, s->b.mem, s->b.dtype, off[B] + red.off[1], sb, n);
      for (int64_t t = 0; t < n; t++)
        acc[t] += xa[t] * xb[t];
    }
    finish_run(j, off, n, acc);
  }
}

/* Whether the runs walk memory more closely than the dot products would. */
static bool runs_pay(const contract_job *j) {
  const lt__cpu_nest *o = &j->outer, *r = &j->red;
  if (!j->exact || o->rank == 0 || o->shape[o->rank - 1] < 4 || j->n_red == 0) return false;
  int lo = o->rank - 1, lr = r->rank - 1;
  int64_t along_out = llabs(o->strides[A][lo]) + llabs(o->strides[B][lo]);
  int64_t along_red = lr < 0 ? 0 : llabs(r->strides[0][lr]) + llabs(r->strides[1][lr]);
  return lr >= 0 && along_out < along_red;
}

/* ---- tiny float problems: one serial walk ----
 * Below SERIAL_WORK products the set-up of the nests above (several KB of strides to clear and
 * sort) costs more than the sums: a 4x4 matmul's plan call went from 0.8 to 1.7 us. The same
 * products are summed in the same order as run_outputs, so the results are bit-identical. */
#define SERIAL_WORK 4096

/* Advances an odometer over dims [lo, hi) of shape; returns false when it wraps around. */
static bool serial_next(int lo, int hi, const int64_t *shape, int64_t *idx, int64_t *oa,
                        int64_t *ob, const int64_t *sa, const int64_t *sb) {
  for (int d = hi - 1; d >= lo; d--) {
    if (++idx[d] < shape[d]) {
      *oa += sa[d], *ob += sb[d];
      return true;
    }
    *oa -= (shape[d] - 1) * sa[d], *ob -= (shape[d] - 1) * sb[d];
    idx[d] = 0;
  }
  return false;
}

/* acc plus one contracted run, summed in double from the left exactly as the generic loop
 * below sums it (the running total is threaded through, not added at the end). */
static double dot_strided_f32(double acc, const float *a, int64_t sa, const float *b, int64_t sb,
                              int64_t n) {
  for (int64_t i = 0; i < n; i++)
    acc += (double)a[i * sa] * (double)b[i * sb];
  return acc;
}

static double dot_strided_f64(double acc, const double *a, int64_t sa, const double *b, int64_t sb,
                              int64_t n) {
  for (int64_t i = 0; i < n; i++)
    acc += a[i * sa] * b[i * sb];
  return acc;
}

/* The sum of one output's products; the caller has ruled out an empty contracted space. */
static double serial_products(const lt__contract_step *s, int64_t oa, int64_t ob) {
  int last = s->rank - 1;
  int64_t idx[LT_MAX_RANK];
  for (int d = s->out_rank; d < last; d++) /* serial_next walks [out_rank, last) */
    idx[d] = 0;
  double acc = 0.0;
  if (s->rank == s->out_rank)
    return lt__load_f64(s->a.mem, s->a.dtype, oa) * lt__load_f64(s->b.mem, s->b.dtype, ob);
  int64_t n = s->shape[last], sa = s->a.strides[last], sb = s->b.strides[last];
  /* The loaded values and their order are those of the generic loop below; typed loads only
   * spare a dtype switch per element, which was most of a 4x4 matmul's plan call. */
  lt_dtype same = s->a.dtype == s->b.dtype ? s->a.dtype : LT_BOOL;
  do {
    if (same == LT_F32)
      acc = dot_strided_f32(acc, (const float *)s->a.mem + oa, sa, (const float *)s->b.mem + ob, sb,
                            n);
    else if (same == LT_F64)
      acc = dot_strided_f64(acc, (const double *)s->a.mem + oa, sa, (const double *)s->b.mem + ob,
                            sb, n);
    else
      for (int64_t i = 0; i < n; i++)
        acc += lt__load_f64(s->a.mem, s->a.dtype, oa + i * sa) *
               lt__load_f64(s->b.mem, s->b.dtype, ob + i * sb);
  } while (serial_next(s->out_rank, last, s->shape, idx, &oa, &ob, s->a.strides, s->b.strides));
  return acc;
}

static void serial_float(const lt__contract_step *s) {
  const lt__operand *c = s->has_c ? &s->c : &s->out;
  int64_t idx[LT_MAX_RANK];
  for (int d = 0; d < s->out_rank; d++)
    idx[d] = 0;
  bool empty_sum = false;
  for (int d = s->out_rank; d < s->rank; d++)
    empty_sum |= s->shape[d] == 0;
  int64_t oa = s->a.offset, ob = s->b.offset, od = s->out.offset, oc = c->offset;
  while (true) {
    double v = empty_sum ? 0.0 : s->alpha * serial_products(s, oa, ob);
    if (s->beta != 0) v += s->beta * lt__load_f64(c->mem, c->dtype, oc);
    lt__store_f64(s->out.mem, s->out.dtype, od, s->compute == LT_F32 ? (double)(float)v : v);
    int d = s->out_rank - 1;
    for (; d >= 0; d--) {
      if (++idx[d] < s->shape[d]) {
        oa += s->a.strides[d], ob += s->b.strides[d];
        od += s->out.strides[d], oc += c->strides[d];
        break;
      }
      oa -= (s->shape[d] - 1) * s->a.strides[d], ob -= (s->shape[d] - 1) * s->b.strides[d];
      od -= (s->shape[d] - 1) * s->out.strides[d], oc -= (s->shape[d] - 1) * c->strides[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/* The number of outputs times (products + 1), or -1 when there is no output; saturates. */
static int64_t serial_work(const lt__contract_step *s) {
  int64_t outs = 1, red = 1;
  for (int d = 0; d < s->rank; d++) {
    if (s->shape[d] == 0) return d < s->out_rank ? -1 : 0;
    int64_t *n = d < s->out_rank ? &outs : &red;
    *n = *n > INT64_MAX / 2 / s->shape[d] ? INT64_MAX / 2 : *n * s->shape[d];
  }
  return red > INT64_MAX / 2 / outs ? INT64_MAX : outs * (red + 1);
}

lt_status lt__cpu_contract(lt_context *ctx, const lt__contract_step *s) {
  if (!lt__cpu_compute_is_int(s->compute)) {
    int64_t work = serial_work(s);
    if (work < 0) return LT_OK;
    if (work < SERIAL_WORK) {
      serial_float(s);
      return LT_OK;
    }
  }
  contract_job j;
  memset(&j, 0, sizeof j);
  j.s = s;
  j.c = s->has_c ? &s->c : &s->out;
  j.exact = lt__cpu_compute_is_int(s->compute);
  j.k = j.exact ? lt__cpu_kernels_int(s->compute) : lt__cpu_isa_of(ctx)->kernels(LT_F64);
  int r = s->out_rank;
  lt__cpu_nest_init(&j.outer, r, s->shape, 4);
  const lt__operand *ops[4] = {&s->out, j.c, &s->a, &s->b};
  for (int q = 0; q < 4; q++) {
    j.outer.offset[q] = q >= A ? 0 : ops[q]->offset;
    if (r) memcpy(j.outer.strides[q], ops[q]->strides, sizeof(int64_t) * (size_t)r);
  }
  int64_t n_out = lt__cpu_nest_numel(&j.outer);
  if (n_out == 0) return LT_OK;
  lt__cpu_nest_squeeze(&j.outer);
  lt__cpu_nest_init(&j.red, s->rank - r, s->shape + r, 2);
  for (int d = r; d < s->rank; d++)
    j.red.strides[0][d - r] = s->a.strides[d], j.red.strides[1][d - r] = s->b.strides[d];
  j.red.offset[0] = s->a.offset;
  j.red.offset[1] = s->b.offset;
  j.n_red = lt__cpu_nest_numel(&j.red);
  /* Dropping extent-1 dims keeps the order of the sum; float sums are never reordered. */
  lt__cpu_nest_squeeze(&j.red);
  if (j.exact) { /* integer sums are exact in any order: walk memory order, fused */
    lt__cpu_nest_sort(&j.red, 0);
    lt__cpu_nest_fuse(&j.red);
  }
  if (runs_pay(&j)) {
    int64_t len = j.outer.shape[j.outer.rank - 1];
    int64_t tasks = n_out / len * ((len + RUN - 1) / RUN);
    lt__cpu_parallel(ctx, tasks, n_out * (j.n_red + 1), run_runs, &j);
    return LT_OK;
  }
  lt__cpu_parallel(ctx, n_out, n_out * (j.n_red + 1), run_outputs, &j);
  return LT_OK;
}

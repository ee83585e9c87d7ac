/* SPDX-License-Identifier: MIT */
/* Fuzz target: operation plans over mode labels on random layouts. The bytes choose a binary
 * plan (add, sub, mul, min, max; inputs lacking modes or with extent 1 broadcast; alpha/beta)
 * or a reduction plan (sum, max, min, maxabs, sumsq over up to two modes; alpha, and beta * D
 * when beta != 0), operand dtypes, layouts (contiguous, transposed, stepped, negative,
 * broadcast) and values, and sometimes updates an input in place (D is A). Values and scalars
 * are small multiples of 1/4, so every result is exact in float32 and float64 whatever the
 * order of evaluation: it must equal the naive float64 reference bit for bit. */
#include "fuzz_input.h"
#include "fuzz_tensor.h"
#include "tensor.h"

#include <math.h>

#define MAX_D 3
#define MAX_RED 2
#define MAX_ELEMS 1024

typedef struct operand {
  int rank;
  int32_t modes[MAX_D + MAX_RED];
  int64_t shape[MAX_D + MAX_RED];
  bool collapsed[MAX_D + MAX_RED];
  double vals[MAX_ELEMS];
  lt_tensor *t;
} operand;

static const double scalars_set[5] = {1.0, -1.0, 0.5, 2.0, -0.25};

static double quarter(fuzz_input *in) {
  double v = (double)(fuzz_range(in, 0, 16) - 8) / 4.0;
  return v == 0.0 ? 0.75 : v;
}

static int64_t numel_of(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= shape[d];
  return n;
}

/* Value of operand o at the label assignment idx (labels index idx directly). */
static double value_at(const operand *o, const int64_t *idx) {
  int64_t lin = 0;
  for (int d = 0; d < o->rank; d++) {
    int64_t e = o->collapsed[d] ? 1 : o->shape[d];
    lin = lin * e + (o->collapsed[d] ? 0 : idx[o->modes[d]]);
  }
  return o->vals[lin];
}

/* An operand over a random subset (in random order) of labels [0, n_labels), the labels in
 * `required` always included; an extent-1 axis stands for broadcasting where allowed. */
static void decode_operand(fuzz_input *in, operand *o, int n_labels, int n_required,
                           const int64_t *extent, bool allow_broadcast) {
  int32_t order[MAX_D + MAX_RED];
  for (int l = 0; l < n_labels; l++)
    order[l] = l;
  for (int l = n_labels - 1; l > 0; l--) {
    int j = (int)fuzz_range(in, 0, l);
    int32_t t = order[l];
    order[l] = order[j];
    order[j] = t;
  }
  o->rank = 0;
  for (int k = 0; k < n_labels; k++) {
    int32_t l = order[k];
    if (l >= n_required && allow_broadcast && (fuzz_u8(in) & 3) == 0) continue; /* absent */
    o->modes[o->rank] = l;
    o->shape[o->rank] = extent[l];
    o->collapsed[o->rank] = false;
    o->rank++;
  }
}

static lt_tensor *build(lt_context *ctx, fuzz_input *in, operand *o, lt_dtype *dtype_out,
                        bool allow_broadcast) {
  int layout = (int)fuzz_range(in, 0, allow_broadcast ? 4 : 3);
  lt_dtype dtype = fuzz_u8(in) & 1 ? LT_F64 : LT_F32;
  int64_t base[MAX_D + MAX_RED];
  for (int d = 0; d < o->rank; d++) {
    o->collapsed[d] = layout == 4 && (fuzz_u8(in) & 1);
    base[d] = o->collapsed[d] ? 1 : o->shape[d];
  }
  int64_t n = numel_of(o->rank, base);
  for (int64_t k = 0; k < n; k++)
    o->vals[k] = quarter(in);
  *dtype_out = dtype;
  return fuzz_make_tensor(ctx, dtype, o->rank, o->shape, o->collapsed, o->vals, layout);
}

static double apply(lt_binary_op op, double a, double b) {
  switch (op) {
  case LT_BINARY_ADD: return a + b;
  case LT_BINARY_SUB: return a - b;
  case LT_BINARY_MUL: return a * b;
  case LT_BINARY_MIN: return a < b ? a : b;
  default: return a > b ? a : b;
  }
}

static void compare(const lt_tensor *d, const double *want, int64_t n, const char *what) {
  lt_tensor *c = NULL;
  FUZZ_ASSERT(lt_tensor_contiguous(d, LT_F64, &c) == LT_OK, "contiguous");
  double got[MAX_ELEMS];
  FUZZ_ASSERT(lt_tensor_to_host(c, got, sizeof(double) * (size_t)n) == LT_OK, "to_host");
  for (int64_t i = 0; i < n; i++)
    FUZZ_ASSERT(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])),
                "%s: element %lld is %.17g, want %.17g", what, (long long)i, got[i], want[i]);
  lt_tensor_destroy(c);
}

static void fuzz_binary(lt_context *ctx, fuzz_input *in, int rank_d, const int64_t *extent,
                        operand *ops) {
  static const lt_binary_op codes[5] = {LT_BINARY_ADD, LT_BINARY_SUB, LT_BINARY_MUL, LT_BINARY_MIN,
                                        LT_BINARY_MAX};
  lt_binary_op op = codes[fuzz_range(in, 0, 4)];
  operand *a = &ops[0], *b = &ops[1], *d = &ops[2];
  lt_dtype ta, tb, td;
  decode_operand(in, a, rank_d, 0, extent, true);
  decode_operand(in, b, rank_d, 0, extent, true);
  a->t = build(ctx, in, a, &ta, true);
  b->t = build(ctx, in, b, &tb, true);
  /* D: all labels in order; sometimes A itself (in place) when A's layout allows it. */
  bool in_place = (fuzz_u8(in) & 3) == 0 && a->rank == rank_d;
  for (int k = 0; in_place && k < rank_d; k++)
    in_place = a->modes[k] == k && !a->collapsed[k];
  d->rank = rank_d;
  for (int k = 0; k < rank_d; k++)
    d->modes[k] = k, d->shape[k] = extent[k];
  d->t = in_place ? a->t : build(ctx, in, d, &td, false);
  double alpha = scalars_set[fuzz_range(in, 0, 4)], beta = scalars_set[fuzz_range(in, 0, 4)];
  int64_t n = numel_of(rank_d, extent), idx[MAX_D];
  double want[MAX_ELEMS];
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i;
    for (int k = rank_d - 1; k >= 0; k--)
      idx[k] = rest % extent[k], rest /= extent[k];
    want[i] = apply(op, alpha * value_at(a, idx), beta * value_at(b, idx));
    if (lt_tensor_dtype(d->t) == LT_F32) want[i] = (float)want[i];
  }
  lt_plan *plan = NULL;
  lt_status st = lt_plan_binary(a->t, a->modes, b->t, b->modes, op, d->t, d->modes, NULL, &plan);
  FUZZ_ASSERT(st == LT_OK, "lt_plan_binary: %s", lt_status_string(st));
  const lt_tensor *ins[2] = {a->t, b->t};
  const double sc[2] = {alpha, beta};
  st = lt_plan_execute(plan, ins, 2, sc, 2, d->t);
  FUZZ_ASSERT(st == LT_OK, "execute binary (in place %d): %s", in_place, lt_status_string(st));
  compare(d->t, want, n, in_place ? "binary in place" : "binary");
  lt_plan_destroy(plan);
  if (in_place) d->t = NULL;
}

static void fuzz_reduction(lt_context *ctx, fuzz_input *in, int rank_d, int n_red,
                           const int64_t *extent, operand *ops) {
  static const lt_reduce_op codes[5] = {LT_REDUCE_SUM, LT_REDUCE_MAX, LT_REDUCE_MIN,
                                        LT_REDUCE_MAXABS, LT_REDUCE_SUMSQ};
  lt_reduce_op op = codes[fuzz_range(in, 0, 4)];
  operand *a = &ops[0], *d = &ops[2];
  int n_labels = rank_d + n_red;
  lt_dtype ta, td;
  /* A carries every label (reduced ones included); D the kept ones in order. Labels >= rank_d
   * are the reduced ones, so decode with all of them required. */
  decode_operand(in, a, n_labels, n_labels, extent, false);
  a->t = build(ctx, in, a, &ta, true);
  d->rank = rank_d;
  for (int k = 0; k < rank_d; k++)
    d->modes[k] = k, d->shape[k] = extent[k];
  d->t = build(ctx, in, d, &td, false);
  double alpha = scalars_set[fuzz_range(in, 0, 4)];
  double beta = fuzz_u8(in) & 1 ? 0.0 : scalars_set[fuzz_range(in, 0, 4)];
  int64_t n = numel_of(rank_d, extent), n_r = numel_of(n_red, extent + rank_d);
  int64_t idx[MAX_D + MAX_RED];
  double want[MAX_ELEMS];
  for (int64_t i = 0; i < n; i++) {
    int64_t rest = i;
    for (int k = rank_d - 1; k >= 0; k--)
      idx[k] = rest % extent[k], rest /= extent[k];
    double r = op == LT_REDUCE_MAX ? -INFINITY : op == LT_REDUCE_MIN ? INFINITY : 0.0;
    for (int64_t j = 0; j < n_r; j++) {
      int64_t rr = j;
      for (int k = n_labels - 1; k >= rank_d; k--)
        idx[k] = rr % extent[k], rr /= extent[k];
      double v = value_at(a, idx);
      switch (op) {
      case LT_REDUCE_SUM: r += v; break;
      case LT_REDUCE_MAX: r = v > r ? v : r; break;
      case LT_REDUCE_MIN: r = v < r ? v : r; break;
      case LT_REDUCE_MAXABS: r = fabs(v) > r ? fabs(v) : r; break;
      default: r += v * v; break;
      }
    }
    want[i] = alpha * r + (beta != 0.0 ? beta * d->vals[i] : 0.0);
    if (lt_tensor_dtype(d->t) == LT_F32) want[i] = (float)want[i];
  }
  lt_plan *plan = NULL;
  lt_status st = lt_plan_reduction(a->t, a->modes, NULL, NULL, op, d->t, d->modes, NULL, &plan);
  FUZZ_ASSERT(st == LT_OK, "lt_plan_reduction: %s", lt_status_string(st));
  const lt_tensor *ins[1] = {a->t};
  const double sc[2] = {alpha, beta};
  st = lt_plan_execute(plan, ins, 1, sc, 2, d->t);
  FUZZ_ASSERT(st == LT_OK, "execute reduction: %s", lt_status_string(st));
  compare(d->t, want, n, "reduction");
  lt_plan_destroy(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lt_context *ctx;
  if (ctx == NULL && lt_context_create(NULL, &ctx) != LT_OK) abort();
  fuzz_input in = {data, size, 0};
  int rank_d = (int)fuzz_range(&in, 0, MAX_D);
  int n_red = (int)fuzz_range(&in, 0, MAX_RED);
  int64_t extent[MAX_D + MAX_RED];
  for (int l = 0; l < rank_d + n_red; l++)
    extent[l] = fuzz_u8(&in) % 16 == 15 ? 0 : fuzz_range(&in, 1, 4);
  operand *ops = calloc(3, sizeof *ops);
  if (fuzz_u8(&in) & 1)
    fuzz_binary(ctx, &in, rank_d, extent, ops);
  else
    fuzz_reduction(ctx, &in, rank_d, n_red, extent, ops);
  for (int k = 0; k < 3; k++)
    lt_tensor_destroy(ops[k].t);
  free(ops);
  return 0;
}

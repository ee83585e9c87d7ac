/* SPDX-License-Identifier: MIT */
/* Fuzz target: end-to-end einsum. The bytes choose a valid random einsum (1-3 operands, up to
 * 5 labels of extent 0-3, repeated labels, explicit or implicit output), each operand's dtype
 * and layout (contiguous, transposed, stepped, negative strides, broadcast) and its values.
 * Values are quarter-integers in [-2, 2], so every product and sum is exact in float32 and
 * float64 whatever the summation order: the result must equal the naive float64 reference bit
 * for bit. The one-shot call, a plan with alpha/beta into a strided output, and the
 * integer-label entry point are all checked. */
#include "fuzz_input.h"
#include "fuzz_tensor.h"
#include "tensor.h"

#define MAX_OPS 3
#define MAX_LABELS 5
#define MAX_RANK 4

typedef struct operand {
  int rank;
  int labels[MAX_RANK];
  int64_t shape[MAX_RANK];
  bool collapsed[MAX_RANK]; /* broadcast from extent 1 */
  double vals[81];          /* over the base shape (collapsed axes have extent 1) */
  lt_tensor *t;
} operand;

typedef struct problem {
  int n_labels, n_ops, out_rank;
  int64_t extent[MAX_LABELS];
  int out_labels[MAX_LABELS];
  bool implicit;
  operand op[MAX_OPS];
  char expr[64];
} problem;

static int64_t numel_of(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    n *= shape[d];
  return n;
}

static double quarter(fuzz_input *in) {
  double v = (double)(fuzz_range(in, 0, 16) - 8) / 4.0;
  return v == 0.0 ? 0.75 : v;
}

static double operand_value(const operand *o, const int64_t *label_idx) {
  int64_t lin = 0;
  for (int d = 0; d < o->rank; d++) {
    int64_t e = o->collapsed[d] ? 1 : o->shape[d];
    lin = lin * e + (o->collapsed[d] ? 0 : label_idx[o->labels[d]]);
  }
  return o->vals[lin];
}

/* Naive reference: sum over every assignment of every label. */
static void reference(const problem *p, double *out) {
  int64_t out_shape[MAX_LABELS], n_out = 1;
  for (int k = 0; k < p->out_rank; k++)
    n_out *= out_shape[k] = p->extent[p->out_labels[k]];
  for (int64_t i = 0; i < n_out; i++)
    out[i] = 0.0;
  /* Only labels some operand uses exist (NumPy); the others must not multiply the sum. */
  int64_t ext[MAX_LABELS], idx[MAX_LABELS];
  for (int l = 0; l < p->n_labels; l++)
    ext[l] = 1;
  for (int i = 0; i < p->n_ops; i++)
    for (int d = 0; d < p->op[i].rank; d++)
      ext[p->op[i].labels[d]] = p->extent[p->op[i].labels[d]];
  int64_t total = numel_of(p->n_labels, ext);
  for (int64_t lin = 0; lin < total; lin++) {
    int64_t rest = lin;
    for (int l = p->n_labels - 1; l >= 0; l--) {
      idx[l] = rest % ext[l];
      rest /= ext[l];
    }
    double prod = 1.0;
    for (int i = 0; i < p->n_ops; i++)
      prod *= operand_value(&p->op[i], idx);
    int64_t o = 0;
    for (int k = 0; k < p->out_rank; k++)
      o = o * out_shape[k] + idx[p->out_labels[k]];
    out[o] += prod;
  }
}

static void decode_problem(problem *p, fuzz_input *in) {
  p->n_labels = (int)fuzz_range(in, 1, MAX_LABELS);
  for (int l = 0; l < p->n_labels; l++)
    p->extent[l] = fuzz_u8(in) % 16 == 15 ? 0 : fuzz_range(in, 1, 3);
  p->n_ops = (int)fuzz_range(in, 1, MAX_OPS);
  int count[MAX_LABELS] = {0};
  char *e = p->expr;
  for (int i = 0; i < p->n_ops; i++) {
    operand *o = &p->op[i];
    o->rank = (int)fuzz_range(in, 0, MAX_RANK);
    for (int d = 0; d < o->rank; d++) {
      o->labels[d] = (int)fuzz_range(in, 0, p->n_labels - 1);
      o->shape[d] = p->extent[o->labels[d]];
      count[o->labels[d]]++;
      *e++ = (char)('a' + o->labels[d]);
    }
    if (i + 1 < p->n_ops) *e++ = ',';
  }
  /* A label no operand uses does not exist: the reference must not sum over it. */
  for (int l = 0; l < p->n_labels; l++)
    if (count[l] == 0) p->extent[l] = 1;
  p->implicit = fuzz_u8(in) % 3 == 0;
  p->out_rank = 0;
  if (p->implicit) { /* NumPy: labels used exactly once, alphabetically */
    for (int l = 0; l < p->n_labels; l++)
      if (count[l] == 1) p->out_labels[p->out_rank++] = l;
  } else {
    bool used[MAX_LABELS] = {false};
    int want = (int)fuzz_range(in, 0, p->n_labels);
    for (int k = 0; k < want; k++) {
      int l = (int)fuzz_range(in, 0, p->n_labels - 1);
      if (count[l] == 0 || used[l]) continue;
      used[l] = true;
      p->out_labels[p->out_rank++] = l;
    }
    *e++ = '-';
    *e++ = '>';
    for (int k = 0; k < p->out_rank; k++)
      *e++ = (char)('a' + p->out_labels[k]);
  }
  *e = '\0';
}

/* Prints the operands' layouts, so that a failure can be reproduced by hand. */
static void describe(const problem *p) {
  fprintf(stderr, "einsum \"%s\" on %s:\n", p->expr,
          lt_context_device(lt_tensor_context(p->op[0].t)));
  for (int i = 0; i < p->n_ops; i++) {
    const lt_tensor *t = p->op[i].t;
    fprintf(stderr, "  operand %d: %s shape (", i, lt_dtype_name(lt_tensor_dtype(t)));
    for (int d = 0; d < lt_tensor_rank(t); d++)
      fprintf(stderr, "%lld,", (long long)lt_tensor_shape(t)[d]);
    fprintf(stderr, ") strides (");
    for (int d = 0; d < lt_tensor_rank(t); d++)
      fprintf(stderr, "%lld,", (long long)lt_tensor_strides(t)[d]);
    fprintf(stderr, ")\n");
  }
}

static void check_result(const problem *p, const lt_tensor *got, const double *want,
                         const char *how) {
  FUZZ_ASSERT(lt_tensor_rank(got) == p->out_rank, "%s %s: rank %d, want %d", how, p->expr,
              lt_tensor_rank(got), p->out_rank);
  for (int k = 0; k < p->out_rank; k++)
    FUZZ_ASSERT(lt_tensor_shape(got)[k] == p->extent[p->out_labels[k]], "%s %s: axis %d", how,
                p->expr, k);
  int64_t n = lt_tensor_numel(got);
  lt_tensor *c = NULL;
  FUZZ_ASSERT(lt_tensor_contiguous(got, LT_F64, &c) == LT_OK, "contiguous");
  double *vals = malloc(sizeof(double) * (size_t)(n ? n : 1));
  FUZZ_ASSERT(lt_tensor_to_host(c, vals, sizeof(double) * (size_t)n) == LT_OK, "to_host");
  for (int64_t i = 0; i < n; i++)
    FUZZ_ASSERT(vals[i] == want[i], "%s %s: element %lld is %.17g, want %.17g", how, p->expr,
                (long long)i, vals[i], want[i]);
  free(vals);
  lt_tensor_destroy(c);
}

/* D = 2 * einsum + 0.5 * D through a plan, into a stepped output. */
static void check_plan(lt_context *ctx, const problem *p, const lt_tensor *const *ts,
                       lt_dtype dtype, const double *want) {
  int64_t shape[MAX_LABELS], big[MAX_LABELS], n = 1;
  for (int k = 0; k < p->out_rank; k++) {
    shape[k] = p->extent[p->out_labels[k]];
    big[k] = 2 * shape[k] + 1;
    n *= shape[k];
  }
  lt_tensor *store = NULL, *d = NULL, *tmp = NULL;
  if (lt_tensor_full(ctx, dtype, p->out_rank, big, 0.5, &store) != LT_OK) abort();
  d = store;
  for (int k = 0; k < p->out_rank; k++) {
    if (lt_view_slice(d, k, 1, 1 + 2 * shape[k], 2, &tmp) != LT_OK) abort();
    if (d != store) lt_tensor_destroy(d);
    d = tmp;
  }
  if (d == store && lt_view_reshape(store, 0, NULL, &d) != LT_OK) abort();
  lt_plan *plan = NULL;
  lt_status st = lt_plan_einsum(p->expr, p->n_ops, ts, d, NULL, &plan);
  FUZZ_ASSERT(st == LT_OK, "plan %s: %s", p->expr, lt_status_string(st));
  const double scalars[2] = {2.0, 0.5};
  st = lt_plan_execute(plan, ts, p->n_ops, scalars, 2, d);
  FUZZ_ASSERT(st == LT_OK, "execute %s: %s", p->expr, lt_status_string(st));
  double *scaled = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++)
    scaled[i] = 2.0 * want[i] + 0.25;
  check_result(p, d, scaled, "plan");
  free(scaled);
  lt_plan_destroy(plan);
  lt_tensor_destroy(d);
  lt_tensor_destroy(store);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lt_context *ctx;
  if (ctx == NULL && lt_context_create(NULL, &ctx) != LT_OK) abort();
  fuzz_input in = {data, size, 0};
  problem *p = calloc(1, sizeof *p);
  decode_problem(p, &in);
  lt_dtype out_dtype = LT_F32;
  const lt_tensor *ts[MAX_OPS];
  for (int i = 0; i < p->n_ops; i++) {
    operand *o = &p->op[i];
    int layout = (int)fuzz_range(&in, 0, 4);
    lt_dtype dtype = fuzz_u8(&in) & 1 ? LT_F64 : LT_F32;
    if (dtype == LT_F64) out_dtype = LT_F64;
    for (int d = 0; d < o->rank; d++)
      o->collapsed[d] = layout == 4 && (fuzz_u8(&in) & 1);
    int64_t base[MAX_RANK];
    for (int d = 0; d < o->rank; d++)
      base[d] = o->collapsed[d] ? 1 : o->shape[d];
    int64_t nv = numel_of(o->rank, base);
    for (int64_t k = 0; k < nv; k++)
      o->vals[k] = quarter(&in);
    o->t = fuzz_make_tensor(ctx, dtype, o->rank, o->shape, o->collapsed, o->vals, layout);
    ts[i] = o->t;
  }
  double want[243];
  reference(p, want);
  lt_tensor *got = NULL;
  lt_status st = lt_einsum(p->expr, p->n_ops, ts, NULL, &got);
  if (st != LT_OK) describe(p);
  FUZZ_ASSERT(st == LT_OK, "lt_einsum(\"%s\") returned %s", p->expr, lt_status_string(st));
  FUZZ_ASSERT(lt_tensor_dtype(got) == out_dtype, "%s: dtype %d, want %d", p->expr,
              (int)lt_tensor_dtype(got), (int)out_dtype);
  check_result(p, got, want, "lt_einsum");
  lt_tensor_destroy(got);
  check_plan(ctx, p, ts, out_dtype, want);
  { /* the same problem through integer labels */
    int32_t labels[MAX_OPS][MAX_RANK], out_labels[MAX_LABELS];
    const int32_t *modes[MAX_OPS];
    for (int i = 0; i < p->n_ops; i++) {
      for (int d = 0; d < p->op[i].rank; d++)
        labels[i][d] = 1000 * p->op[i].labels[d] - 7;
      modes[i] = labels[i];
    }
    for (int k = 0; k < p->out_rank; k++)
      out_labels[k] = 1000 * p->out_labels[k] - 7;
    st = lt_einsum_modes(p->n_ops, ts, modes, p->out_rank, out_labels, NULL, &got);
    FUZZ_ASSERT(st == LT_OK, "lt_einsum_modes for %s returned %s", p->expr, lt_status_string(st));
    check_result(p, got, want, "lt_einsum_modes");
    lt_tensor_destroy(got);
  }
  for (int i = 0; i < p->n_ops; i++)
    lt_tensor_destroy(p->op[i].t);
  free(p);
  return 0;
}

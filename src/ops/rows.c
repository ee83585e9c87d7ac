/* SPDX-License-Identifier: MIT */
/* Row plans: softmax, log_softmax, logsumexp, variance / standard deviation and scans. Each
 * lowers to a program of one backend row step (backend.h): A's modes split into the row
 * (normalised, reduced or scanned) and the kept modes, D matched to them by label. */
#include "core/dtype.h"
#include "core/error.h"
#include "lower/program.h"
#include "ops/modes.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

typedef struct rows_impl {
  lt_context *ctx;   /* for freeing; the plan holds the reference */
  lt__row_step step; /* being built; then the program's one step */
  lt__program prog;
} rows_impl;

static void rows_impl_destroy(void *impl) {
  rows_impl *r = impl;
  lt__program_free(&r->prog);
  lt__host_free(r->ctx, r, sizeof *r);
}

static lt_status emit_rows(rows_impl *r) {
  lt__step *s = lt__program_add(&r->prog, LT__STEP_ROWS);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  s->u.rows = r->step;
  s->buf[0] = (lt__bufref){LT__BUF_INPUT, 0};
  s->buf[1] = (lt__bufref){LT__BUF_OUTPUT, 0};
  return LT_OK;
}

static lt_status run_rows(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                          const double *scalars, lt_tensor *d) {
  (void)n_inputs;
  const rows_impl *r = plan->impl;
  LT_RETURN_IF(lt__tensor_overlap(d, inputs[0]) != LT__OVERLAP_NONE, LT_ERR_ALIASING,
               "lt_plan_execute: the output D overlaps the input A");
  return lt__program_run((lt__program *)&r->prog, plan->ctx, inputs, scalars, d);
}

static bool is_float(lt_dtype t) {
  return t == LT_F16 || t == LT_BF16 || t == LT_F32 || t == LT_F64;
}

static const char *op_name(lt__row_op op) {
  static const char *names[] = {"softmax", "log_softmax", "logsumexp", "var",
                                "std",     "cumsum",      "cumprod"};
  return names[op];
}

/* Kept and row dims of a whole-row op (D has A's modes): row = A's axes marked in `row`, in
 * the order of `order` (n_row of them). */
static lt_status lower_whole(const char *fn, const lt_tensor *a, const int32_t *modes_a,
                             const lt_tensor *d, const int32_t *modes_d, const int *order,
                             int n_row, lt__row_step *s) {
  LT_RETURN_IF(d->rank != a->rank, LT_ERR_SHAPE_MISMATCH,
               "%s: D has rank %d but A has rank %d (D takes A's modes)", fn, d->rank, a->rank);
  int64_t dstride[LT_MAX_RANK];
  for (int i = 0; i < a->rank; i++) {
    int at = lt__modes_find(modes_d, d->rank, modes_a[i]);
    LT_RETURN_IF(at < 0, LT_ERR_SHAPE_MISMATCH, "%s: mode %d of A (axis %d) does not appear in D",
                 fn, (int)modes_a[i], i);
    LT_RETURN_IF(a->shape[i] != d->shape[at], LT_ERR_SHAPE_MISMATCH,
                 "%s: mode %d has extent %lld in A but %lld in D", fn, (int)modes_a[i],
                 (long long)a->shape[i], (long long)d->shape[at]);
    dstride[i] = d->strides[at];
  }
  bool in_row[LT_MAX_RANK] = {false};
  for (int r = 0; r < n_row; r++) {
    in_row[order[r]] = true;
    s->row_shape[r] = a->shape[order[r]];
    s->in_row_strides[r] = a->strides[order[r]];
    s->out_row_strides[r] = dstride[order[r]];
  }
  s->row_rank = n_row;
  s->rank = 0;
  for (int i = 0; i < a->rank; i++) {
    if (in_row[i]) continue;
    s->shape[s->rank] = a->shape[i];
    s->in.strides[s->rank] = a->strides[i];
    s->out.strides[s->rank++] = dstride[i];
  }
  return LT_OK;
}

/* Kept dims = D's modes (each a mode of A), row = A's other modes in A's order. */
static lt_status lower_reduce(const char *fn, const lt_tensor *a, const int32_t *modes_a,
                              const lt_tensor *d, const int32_t *modes_d, lt__row_step *s) {
  for (int k = 0; k < d->rank; k++) {
    int at = lt__modes_find(modes_a, a->rank, modes_d[k]);
    LT_RETURN_IF(at < 0, LT_ERR_SHAPE_MISMATCH, "%s: mode %d of D (axis %d) does not appear in A",
                 fn, (int)modes_d[k], k);
    LT_RETURN_IF(a->shape[at] != d->shape[k], LT_ERR_SHAPE_MISMATCH,
                 "%s: mode %d has extent %lld in A but %lld in D", fn, (int)modes_d[k],
                 (long long)a->shape[at], (long long)d->shape[k]);
    s->shape[k] = d->shape[k];
    s->in.strides[k] = a->strides[at];
    s->out.strides[k] = d->strides[k];
  }
  s->rank = d->rank;
  s->row_rank = 0;
  for (int i = 0; i < a->rank; i++) {
    if (lt__modes_find(modes_d, d->rank, modes_a[i]) >= 0) continue;
    s->row_shape[s->row_rank] = a->shape[i];
    s->in_row_strides[s->row_rank++] = a->strides[i];
  }
  return LT_OK;
}

/* The shared part of every constructor: checks, lowering (order == NULL: reducing op), plan. */
static lt_status build(const char *fn, lt__row_op op, const lt_tensor *a, const int32_t *modes_a,
                       const lt_tensor *d, const int32_t *modes_d, const int *order, int n_row,
                       double ddof, const lt_plan_options *opts, lt_plan **out) {
  LT_TRY_PREFIXED(lt__modes_check(a, modes_a, "A"), fn);
  LT_TRY_PREFIXED(lt__modes_check(d, modes_d, "D"), fn);
  const lt_tensor *all[2] = {d, a};
  const char *names[2] = {"D", "A"};
  LT_TRY(lt__same_context(fn, 2, all, names));
  bool scan = op == LT__ROW_CUMSUM || op == LT__ROW_CUMPROD;
  LT_RETURN_IF(!is_float(d->dtype) && !(scan && lt__dtype_is_int(d->dtype)), LT_ERR_DTYPE,
               "%s: D must have a floating dtype%s, not %s", fn, scan ? " or an integer one" : "",
               lt_dtype_name(d->dtype));
  LT_RETURN_IF(lt__tensor_self_overlaps(d), LT_ERR_ALIASING,
               "%s: output D has elements that overlap each other (zero or clashing strides)", fn);
  LT_TRY(lt__check_options(opts, fn));
  if (opts == NULL) opts = lt__plan_options_default();
  lt_context *ctx = d->storage->ctx;
  rows_impl *r = lt__host_alloc(ctx, sizeof *r);
  LT_RETURN_IF(r == NULL, LT_ERR_OUT_OF_MEMORY, "%s: out of memory building a plan", fn);
  memset(r, 0, sizeof *r);
  r->ctx = ctx;
  lt__program_init(&r->prog, ctx);
  lt__row_step *s = &r->step;
  s->op = op;
  s->ddof = ddof;
  s->in.dtype = a->dtype;
  s->out.dtype = d->dtype;
  lt_status st = order ? lower_whole(fn, a, modes_a, d, modes_d, order, n_row, s)
                       : lower_reduce(fn, a, modes_a, d, modes_d, s);
  /* Scans of integers and bool run exactly in 64-bit integers (wrapping, as NumPy's cumsum);
   * the softmax family and moments are float functions (f64 for exact inputs). */
  s->compute = lt__plan_map_compute(opts, 1, &a, !scan);
  if (st == LT_OK && !is_float(s->compute) && !scan)
    st = lt__error(LT_ERR_DTYPE, "%s: computes in f32 or f64, not %s", fn,
                   lt_dtype_name(s->compute));
  lt_plan *p = NULL;
  if (st == LT_OK) st = emit_rows(r);
  if (st == LT_OK) st = lt__plan_alloc(ctx, LT__PLAN_ROWS, 1, &p);
  if (st != LT_OK) {
    rows_impl_destroy(r);
    return st;
  }
  p->impl = r;
  p->destroy_impl = rows_impl_destroy;
  p->run = run_rows;
  p->n_inputs_min = p->n_inputs_max = 1;
  p->n_scalars = 0;
  lt__layout_from_tensor(a, &p->inputs[0]);
  lt__layout_from_tensor(d, &p->output);
  char text[160];
  snprintf(text, sizeof text, "%s: rank-%d A -> rank-%d D, rows of %d mode(s), in %s", op_name(op),
           a->rank, d->rank, s->row_rank, lt_dtype_name(s->compute));
  st = lt__plan_set_description(p, text);
  if (st != LT_OK) {
    lt_plan_destroy(p);
    return st;
  }
  *out = p;
  return LT_OK;
}

lt_status lt_plan_softmax(const lt_tensor *a, const int32_t *modes_a, int n_modes,
                          const int32_t *modes, bool log, const lt_tensor *d,
                          const int32_t *modes_d, const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY_PREFIXED(lt__modes_check(a, modes_a, "A"), "lt_plan_softmax");
  LT_RETURN_IF(n_modes < 0 || n_modes > a->rank, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_softmax: %d modes to normalise over, but A has rank %d", n_modes, a->rank);
  LT_RETURN_IF(n_modes > 0 && modes == NULL, LT_ERR_NULL_POINTER, "lt_plan_softmax: modes is NULL");
  int order[LT_MAX_RANK];
  for (int r = 0; r < n_modes; r++) {
    order[r] = lt__modes_find(modes_a, a->rank, modes[r]);
    LT_RETURN_IF(order[r] < 0, LT_ERR_INVALID_ARGUMENT,
                 "lt_plan_softmax: mode %d (modes[%d]) is not a mode of A", (int)modes[r], r);
    for (int q = 0; q < r; q++)
      LT_RETURN_IF(order[q] == order[r], LT_ERR_INVALID_ARGUMENT,
                   "lt_plan_softmax: mode %d is listed twice", (int)modes[r]);
  }
  return build("lt_plan_softmax", log ? LT__ROW_LOG_SOFTMAX : LT__ROW_SOFTMAX, a, modes_a, d,
               modes_d, order, n_modes, 0, opts, out);
}

lt_status lt_plan_logsumexp(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *d,
                            const int32_t *modes_d, const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  return build("lt_plan_logsumexp", LT__ROW_LOGSUMEXP, a, modes_a, d, modes_d, NULL, 0, 0, opts,
               out);
}

lt_status lt_plan_variance(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *d,
                           const int32_t *modes_d, double ddof, bool std,
                           const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_RETURN_IF(!(ddof >= 0) || ddof > 9e15, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_variance: ddof must be a finite number >= 0, not %g", ddof);
  return build("lt_plan_variance", std ? LT__ROW_STD : LT__ROW_VAR, a, modes_a, d, modes_d, NULL, 0,
               ddof, opts, out);
}

lt_status lt_plan_scan(const lt_tensor *a, const int32_t *modes_a, int32_t mode, lt_scan_op op,
                       const lt_tensor *d, const int32_t *modes_d, const lt_plan_options *opts,
                       lt_plan **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY_PREFIXED(lt__modes_check(a, modes_a, "A"), "lt_plan_scan");
  LT_RETURN_IF((int)op != LT_SCAN_SUM && (int)op != LT_SCAN_PROD, LT_ERR_INVALID_ARGUMENT,
               "lt_plan_scan: unknown scan op code %d", (int)op);
  int axis = lt__modes_find(modes_a, a->rank, mode);
  LT_RETURN_IF(axis < 0, LT_ERR_INVALID_ARGUMENT, "lt_plan_scan: mode %d is not a mode of A",
               (int)mode);
  return build("lt_plan_scan", op == LT_SCAN_SUM ? LT__ROW_CUMSUM : LT__ROW_CUMPROD, a, modes_a, d,
               modes_d, &axis, 1, 0, opts, out);
}

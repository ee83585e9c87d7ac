/* SPDX-License-Identifier: MIT */
/* Elementwise plans over mode labels: permutation (one input), binary and trinary. Each plan
 * lowers to a program of one backend map step, built here once, which runs like every other
 * plan's program (memory handles, offsets and scalars patched into a copy of the step).
 * Aliasing (checked at execution, since only then is the memory known): the output may share
 * memory with an input only with an identical element-for-element layout (in place); any
 * other overlap is LT_ERR_ALIASING. A scalar equal to 0 makes its term 0 without reading the
 * operand (as cuTENSOR: NaN or Inf in it stays out); the backends' map kernels apply that. */
#include "core/dtype.h"
#include "core/error.h"
#include "lower/program.h"
#include "ops/modes.h"
#include "ops/plan.h"

#include <stdio.h>
#include <string.h>

typedef struct map_impl {
  lt_context *ctx;   /* for freeing; the plan holds the reference */
  lt__map_step step; /* being built; then the program's one step */
  lt__program prog;
  bool in_place_ok[3]; /* input k walks exactly like the output (same dtype and strides) */
} map_impl;

static const char *const operand_names[4] = {"A", "B", "C", "D"};

static void map_impl_destroy(void *impl) {
  map_impl *m = impl;
  lt__program_free(&m->prog);
  lt__host_free(m->ctx, m, sizeof *m);
}

/* The program of one map step: input k and the output patched in, scalar k its k-th. */
static lt_status emit_map(map_impl *m) {
  static const lt__scalar_role roles[3] = {LT__SCALAR_ALPHA, LT__SCALAR_BETA, LT__SCALAR_GAMMA};
  lt__step *s = lt__program_add(&m->prog, LT__STEP_MAP);
  if (s == NULL) return LT_ERR_OUT_OF_MEMORY;
  s->u.map = m->step;
  for (int k = 0; k < m->step.n_in; k++) {
    s->buf[k] = (lt__bufref){LT__BUF_INPUT, k};
    s->scalar[k] = roles[k];
  }
  s->buf[3] = (lt__bufref){LT__BUF_OUTPUT, 0};
  return LT_OK;
}

/* Refuses an output that overlaps input k other than element for element. */
static lt_status check_aliasing(const map_impl *m, const lt_tensor *in, int k, const lt_tensor *d) {
  lt__overlap ov = lt__tensor_overlap(d, in);
  if (ov == LT__OVERLAP_NONE) return LT_OK;
  bool same = m->in_place_ok[k] && lt__tensor_same_start(in, d);
  LT_RETURN_IF(!same, LT_ERR_ALIASING,
               "lt_plan_execute: the output D overlaps input %s in a different arrangement; "
               "use a separate output (only identical layouts may be updated in place)",
               operand_names[k]);
  return LT_OK;
}

static lt_status run_map(const lt_plan *plan, const lt_tensor *const *inputs, int n_inputs,
                         const double *scalars, lt_tensor *d) {
  const map_impl *m = plan->impl;
  for (int k = 0; k < n_inputs; k++)
    LT_TRY(check_aliasing(m, inputs[k], k, d));
  if (d->numel == 0) return LT_OK;
  return lt__program_run((lt__program *)&m->prog, plan->ctx, inputs, scalars, d);
}

static bool valid_binary_op(lt_binary_op op) {
  return (int)op >= LT_BINARY_ADD && (int)op <= LT_BINARY_LOGADDEXP;
}

/* Checks the ops against the operands and the compute dtype (issue 18 A): WHERE only as a
 * trinary select on a bool A; integer-only ops need integer compute, float functions float
 * compute. */
static lt_status check_ops(const lt__map_step *s, const lt_tensor *const *ins) {
  int n_in = s->n_in;
  bool where = n_in == 3 && s->op_ab == LT_BINARY_WHERE;
  LT_RETURN_IF(n_in == 2 && s->op_ab == LT_BINARY_WHERE, LT_ERR_INVALID_ARGUMENT,
               "where selects between two operands: use lt_plan_trinary (A ? B : C)");
  LT_RETURN_IF(n_in == 3 && (s->op_ab == LT_BINARY_WHERE) != (s->op_abc == LT_BINARY_WHERE),
               LT_ERR_INVALID_ARGUMENT,
               "where is D = A ? B : C: op_ab and op_abc must both be LT_BINARY_WHERE");
  LT_RETURN_IF(where && ins[0]->dtype != LT_BOOL, LT_ERR_DTYPE,
               "where: the condition A must be bool, not %s", lt_dtype_name(ins[0]->dtype));
  bool int_compute = s->compute == LT_I64 || s->compute == LT_U64;
  lt_binary_op ops[2] = {s->op_ab, s->op_abc};
  for (int q = 0; q < (n_in == 3 ? 2 : n_in - 1); q++) {
    LT_RETURN_IF(!int_compute && lt__binary_is_int_op(ops[q]), LT_ERR_DTYPE,
                 "%s needs integer or bool operands, but %s computes in %s",
                 lt__binary_name(ops[q]), q == 0 ? "A, B" : "A, B, C", lt_dtype_name(s->compute));
    LT_RETURN_IF(int_compute && lt__binary_is_float_op(ops[q]), LT_ERR_DTYPE,
                 "%s is a float function: compute dtype %s cannot run it", lt__binary_name(ops[q]),
                 lt_dtype_name(s->compute));
  }
  for (int k = 0; k < n_in; k++) {
    LT_RETURN_IF(!int_compute && lt__unary_is_int_op(s->unary[k]), LT_ERR_DTYPE,
                 "%s needs an integer or bool operand, but %s is %s (computed in %s)",
                 lt__unary_name(s->unary[k]), operand_names[k], lt_dtype_name(ins[k]->dtype),
                 lt_dtype_name(s->compute));
    LT_RETURN_IF(int_compute && lt__unary_is_float_op(s->unary[k]), LT_ERR_DTYPE,
                 "%s of operand %s is a float function: compute dtype %s cannot run it",
                 lt__unary_name(s->unary[k]), operand_names[k], lt_dtype_name(s->compute));
  }
  return LT_OK;
}

/* Whether a float function appears among the step's ops. */
static bool any_float_op(const lt__map_step *s) {
  bool f = (s->n_in >= 2 && lt__binary_is_float_op(s->op_ab)) ||
           (s->n_in >= 3 && lt__binary_is_float_op(s->op_abc));
  for (int k = 0; k < s->n_in; k++)
    f |= lt__unary_is_float_op(s->unary[k]);
  return f;
}

/* Builds the plan for n_in inputs (1: permutation, 2: binary, 3: trinary). */
static lt_status build_map_plan(lt__plan_kind kind, int n_in, const lt_tensor *const *ins,
                                const int32_t *const *modes, lt_binary_op op_ab,
                                lt_binary_op op_abc, const lt_tensor *d, const int32_t *modes_d,
                                const lt_plan_options *opts, lt_plan **out) {
  LT_CHECK_ARG_NULL(out, "", "the plan pointer (out)");
  *out = NULL;
  static const char *const calls[] = {"lt_plan_permutation", "lt_plan_binary", "lt_plan_trinary"};
  const char *call = calls[n_in - 1];
  for (int k = 0; k < n_in; k++)
    LT_TRY_PREFIXED(lt__modes_check(ins[k], modes[k], operand_names[k]), call);
  LT_TRY_PREFIXED(lt__modes_check(d, modes_d, "D"), call);
  const lt_tensor *all[4] = {d, ins[0], n_in > 1 ? ins[1] : NULL, n_in > 2 ? ins[2] : NULL};
  const char *names[4] = {"D", "A", "B", "C"};
  LT_TRY(lt__same_context(call, 4, all, names));
  LT_RETURN_IF(n_in >= 2 && !valid_binary_op(op_ab), LT_ERR_INVALID_ARGUMENT,
               "unknown binary op code %d (op_ab)", (int)op_ab);
  LT_RETURN_IF(n_in >= 3 && !valid_binary_op(op_abc), LT_ERR_INVALID_ARGUMENT,
               "unknown binary op code %d (op_abc)", (int)op_abc);
  LT_TRY(lt__check_options(opts, calls[n_in - 1]));
  if (opts == NULL) opts = lt__plan_options_default();
  LT_RETURN_IF(lt__tensor_self_overlaps(d), LT_ERR_ALIASING,
               "output D has elements that overlap each other (zero or clashing strides)");
  lt_context *ctx = d->storage->ctx;
  map_impl *m = lt__host_alloc(ctx, sizeof *m);
  LT_RETURN_IF(m == NULL, LT_ERR_OUT_OF_MEMORY, "out of memory building a plan");
  memset(m, 0, sizeof *m);
  m->ctx = ctx;
  lt__program_init(&m->prog, ctx);
  lt__map_step *s = &m->step;
  lt_status st = LT_OK;
  s->rank = d->rank;
  memcpy(s->shape, d->shape, sizeof(int64_t) * (size_t)d->rank);
  s->n_in = n_in;
  s->op_ab = op_ab;
  s->op_abc = op_abc;
  s->out.dtype = d->dtype;
  memcpy(s->out.strides, d->strides, sizeof(int64_t) * (size_t)d->rank);
  for (int k = 0; k < n_in && st == LT_OK; k++) {
    st = lt__modes_align(ins[k], modes[k], operand_names[k], d, modes_d, "D", s->in[k].strides);
    s->in[k].dtype = ins[k]->dtype;
    s->unary[k] = opts->unary[k];
    /* ~ on bool is logical not (NumPy); in the integer compute its 0/1 would become -1/-2. */
    if (s->unary[k] == LT_UNARY_INVERT && ins[k]->dtype == LT_BOOL) s->unary[k] = LT_UNARY_NOT;
    s->scalars[k] = 1.0;
    m->in_place_ok[k] = lt__aligned_like(ins[k], s->in[k].strides, d);
  }
  if (st == LT_OK) {
    /* WHERE's condition only selects: the values' dtypes decide the compute type. */
    bool where = n_in == 3 && op_ab == LT_BINARY_WHERE;
    s->compute =
        lt__plan_map_compute(opts, where ? 2 : n_in, where ? ins + 1 : ins, any_float_op(s));
    st = check_ops(s, ins);
  }
  lt_plan *p = NULL;
  if (st == LT_OK) st = emit_map(m);
  if (st == LT_OK) st = lt__plan_alloc(ctx, kind, n_in, &p);
  if (st != LT_OK) {
    map_impl_destroy(m);
    return st;
  }
  p->impl = m;
  p->destroy_impl = map_impl_destroy;
  p->run = run_map;
  p->n_inputs_min = p->n_inputs_max = n_in;
  p->n_scalars = n_in;
  for (int k = 0; k < n_in; k++) {
    lt__layout_from_tensor(ins[k], &p->inputs[k]);
    p->default_scalars[k] = 1.0;
  }
  lt__layout_from_tensor(d, &p->output);
  static const char *const kinds[] = {"permutation", "binary", "trinary"};
  char text[160];
  snprintf(text, sizeof text, "%s: %d input(s) -> rank-%d %s output, computed in %s",
           kinds[n_in - 1], n_in, d->rank, lt_dtype_name(d->dtype), lt_dtype_name(s->compute));
  st = lt__plan_set_description(p, text);
  if (st != LT_OK) {
    lt_plan_destroy(p);
    return st;
  }
  *out = p;
  return LT_OK;
}

lt_status lt_plan_permutation(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *d,
                              const int32_t *modes_d, const lt_plan_options *opts, lt_plan **out) {
  const lt_tensor *ins[1] = {a};
  const int32_t *modes[1] = {modes_a};
  return build_map_plan(LT__PLAN_PERMUTATION, 1, ins, modes, LT_BINARY_ADD, LT_BINARY_ADD, d,
                        modes_d, opts, out);
}

lt_status lt_plan_binary(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *b,
                         const int32_t *modes_b, lt_binary_op op_ab, const lt_tensor *d,
                         const int32_t *modes_d, const lt_plan_options *opts, lt_plan **out) {
  const lt_tensor *ins[2] = {a, b};
  const int32_t *modes[2] = {modes_a, modes_b};
  return build_map_plan(LT__PLAN_BINARY, 2, ins, modes, op_ab, LT_BINARY_ADD, d, modes_d, opts,
                        out);
}

lt_status lt_plan_trinary(const lt_tensor *a, const int32_t *modes_a, const lt_tensor *b,
                          const int32_t *modes_b, const lt_tensor *c, const int32_t *modes_c,
                          lt_binary_op op_ab, lt_binary_op op_abc, const lt_tensor *d,
                          const int32_t *modes_d, const lt_plan_options *opts, lt_plan **out) {
  const lt_tensor *ins[3] = {a, b, c};
  const int32_t *modes[3] = {modes_a, modes_b, modes_c};
  return build_map_plan(LT__PLAN_TRINARY, 3, ins, modes, op_ab, op_abc, d, modes_d, opts, out);
}

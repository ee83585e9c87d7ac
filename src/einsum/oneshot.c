/* SPDX-License-Identifier: MIT */
/* One-shot einsum (lt_einsum, lt_einsum_into, lt_einsum_modes): a plan from the context's
 * cache, executed once. */
#include "core/error.h"
#include "einsum/einsum.h"

#include <stdlib.h>
#include <string.h>

/* Key bytes: small keys live on the stack, big ones (many operands) come from the context's
 * allocator. */
typedef struct key_buf {
  lt_context *ctx;
  unsigned char local[2048];
  unsigned char *data;
  size_t len, cap;
  bool failed;
} key_buf;

static void key_free(key_buf *k) {
  if (k->data != k->local) lt__host_free(k->ctx, k->data, k->cap);
}

static void key_put(key_buf *k, const void *src, size_t n) {
  if (k->failed || n == 0) return;
  if (k->len + n > k->cap) {
    size_t cap = 2 * (k->len + n);
    unsigned char *grown = lt__host_alloc(k->ctx, cap);
    if (grown == NULL) {
      k->failed = true;
      return;
    }
    memcpy(grown, k->data, k->len);
    key_free(k);
    k->data = grown;
    k->cap = cap;
  }
  memcpy(k->data + k->len, src, n);
  k->len += n;
}

static void key_layout(key_buf *k, const lt_tensor *t) {
  int32_t head[2] = {(int32_t)t->dtype, (int32_t)t->rank};
  key_put(k, head, sizeof head);
  key_put(k, t->shape, sizeof(int64_t) * (size_t)t->rank);
  key_put(k, t->strides, sizeof(int64_t) * (size_t)t->rank);
}

static void key_common(key_buf *k, int n, const lt_tensor *const *inputs, const lt_tensor *d,
                       const lt_plan_options *opts) {
  key_put(k, &n, sizeof n);
  for (int i = 0; i < n; i++)
    key_layout(k, inputs[i]);
  int32_t has_d = d != NULL;
  key_put(k, &has_d, sizeof has_d);
  if (d) key_layout(k, d);
  const lt_plan_options *o = opts ? opts : lt__plan_options_default();
  int64_t fields[8] = {o->compute,  o->output, o->unary[0],     o->unary[1],
                       o->unary[2], o->path,   o->memory_limit, o->lowp};
  key_put(k, fields, sizeof fields);
  /* path search options (issue 22) */
  double pf[3] = {o->path_seconds, o->path_memory_weight, (double)o->path_trials};
  key_put(k, pf, sizeof pf);
  int64_t pp[3] = {(int64_t)o->path_seed, o->path_pairs_set, o->n_path_pairs};
  key_put(k, pp, sizeof pp);
  if (o->n_path_pairs > 0) key_put(k, o->path_pairs, sizeof(int64_t[2]) * (size_t)o->n_path_pairs);
}

static void key_init(key_buf *k, lt_context *ctx) {
  k->ctx = ctx;
  k->data = k->local;
  k->len = 0;
  k->cap = sizeof k->local;
  k->failed = false;
}

typedef struct build_args {
  const char *expr;
  int n;
  const lt_tensor *const *inputs;
  const int32_t *const *modes;
  int rank_out;
  const int32_t *modes_out;
  const lt_tensor *d;
  const lt_plan_options *opts;
} build_args;

static lt_status build_expr(const void *arg, lt_plan **out) {
  const build_args *a = arg;
  return lt_plan_einsum(a->expr, a->n, a->inputs, a->d, a->opts, out);
}

static lt_status build_modes(const void *arg, lt_plan **out) {
  const build_args *a = arg;
  return lt_plan_einsum_modes(a->n, a->inputs, a->modes, a->rank_out, a->modes_out, a->d, a->opts,
                              out);
}

/* Runs the cached plan for key into d (or a new output when out != NULL). */
static lt_status run_cached(key_buf *k, lt__plan_builder build, const build_args *a, lt_tensor *d,
                            lt_tensor **out) {
  if (k->failed) {
    key_free(k);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the plan cache key");
  }
  lt_context *ctx = k->ctx;
  void *entry;
  const lt_plan *plan;
  lt_status st = lt__plan_cache_acquire(ctx, k->data, k->len, build, a, &entry, &plan);
  key_free(k);
  if (st != LT_OK) return st;
  lt_tensor *fresh = NULL;
  if (out) st = lt_plan_create_output(plan, &fresh);
  if (st == LT_OK) st = lt_plan_execute(plan, a->inputs, a->n, NULL, 0, out ? fresh : d);
  lt__plan_cache_release(ctx, entry);
  if (st != LT_OK) {
    lt_tensor_destroy(fresh);
    return st;
  }
  if (out) *out = fresh;
  return LT_OK;
}

/* Validates what the key reads before the key is built (the planner checks the rest). */
static lt_status check_args(int n, const lt_tensor *const *inputs, const lt_tensor *d,
                            const lt_plan_options *opts) {
  LT_RETURN_IF(n < 1, LT_ERR_INVALID_ARGUMENT, "einsum: %d inputs (at least 1 needed)", n);
  LT_CHECK_ARG_NULL(inputs, "einsum", "inputs");
  for (int i = 0; i < n; i++) {
    LT_RETURN_IF(inputs[i] == NULL, LT_ERR_NULL_POINTER, "einsum: input %d is NULL", i);
    LT_TRY(lt__einsum_check_input(inputs[i], i));
  }
  if (d) LT_TRY(lt__check_tensor(d, "einsum: the output"));
  return lt__check_options(opts, "einsum");
}

static lt_status einsum_expr(const char *expr, int n, const lt_tensor *const *inputs,
                             const lt_plan_options *opts, lt_tensor *d, lt_tensor **out) {
  LT_CHECK_ARG_NULL(expr, "einsum", "expr");
  LT_TRY(check_args(n, inputs, d, opts));
  key_buf k;
  key_init(&k, inputs[0]->storage->ctx);
  key_put(&k, "E", 1);
  key_put(&k, expr, strlen(expr) + 1);
  key_common(&k, n, inputs, d, opts);
  build_args a = {.expr = expr, .n = n, .inputs = inputs, .d = d, .opts = opts};
  return run_cached(&k, build_expr, &a, d, out);
}

lt_status lt_einsum(const char *expr, int n_inputs, const lt_tensor *const *inputs,
                    const lt_plan_options *opts, lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  return einsum_expr(expr, n_inputs, inputs, opts, NULL, out);
}

lt_status lt_einsum_into(const char *expr, int n_inputs, const lt_tensor *const *inputs,
                         const lt_plan_options *opts, lt_tensor *d) {
  LT_CHECK_NULL(d, "d");
  return einsum_expr(expr, n_inputs, inputs, opts, d, NULL);
}

lt_status lt_einsum_modes(int n_inputs, const lt_tensor *const *inputs, const int32_t *const *modes,
                          int rank_out, const int32_t *modes_out, const lt_plan_options *opts,
                          lt_tensor **out) {
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(check_args(n_inputs, inputs, NULL, opts));
  LT_CHECK_NULL(modes, "modes");
  LT_RETURN_IF(rank_out < 0 || rank_out > LT_MAX_RANK, LT_ERR_INVALID_ARGUMENT,
               "einsum: output rank %d is outside [0, %d]", rank_out, LT_MAX_RANK);
  LT_RETURN_IF(rank_out > 0 && modes_out == NULL, LT_ERR_NULL_POINTER, "einsum: modes_out is NULL");
  for (int i = 0; i < n_inputs; i++)
    LT_RETURN_IF(inputs[i]->rank > 0 && modes[i] == NULL, LT_ERR_NULL_POINTER,
                 "einsum: modes of operand %d is NULL", i);
  key_buf k;
  key_init(&k, inputs[0]->storage->ctx);
  key_put(&k, "M", 1);
  for (int i = 0; i < n_inputs; i++)
    key_put(&k, modes[i], sizeof(int32_t) * (size_t)inputs[i]->rank);
  key_put(&k, &rank_out, sizeof rank_out);
  key_put(&k, modes_out, sizeof(int32_t) * (size_t)rank_out);
  key_common(&k, n_inputs, inputs, NULL, opts);
  build_args a = {.n = n_inputs,
                  .inputs = inputs,
                  .modes = modes,
                  .rank_out = rank_out,
                  .modes_out = modes_out,
                  .opts = opts};
  return run_cached(&k, build_modes, &a, NULL, out);
}

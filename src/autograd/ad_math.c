/* SPDX-License-Identifier: MIT */
/* The few computations backward rules are written in: one fused elementwise call over plans
 * (scalars and read-time unary ops included, so a rule like g*(1-y^2) is one pass), summing a
 * gradient down to a broadcast input's shape, and a float64 host pass for derivatives that need
 * a comparison (ReLU, abs, ties of min/max), which the elementwise ops cannot express. */
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>

static lt_dtype promote(lt_dtype a, lt_dtype b) {
  if (a == b) return a;
  if (a == LT_F64 || b == LT_F64 || a == LT_I64 || b == LT_I64) return LT_F64;
  return LT_F32;
}

lt_status lt__ad_ew(lt_binary_op op_ab, lt_binary_op op_abc, const lt_tensor *a, lt_unary_op ua,
                    const lt_tensor *b, lt_unary_op ub, const lt_tensor *c, lt_unary_op uc,
                    const double *s, lt_tensor **out) {
  *out = NULL;
  const lt_tensor *ins[3] = {a, b, c};
  int n = c ? 3 : b ? 2 : 1;
  int rank = 0;
  lt_dtype dt = a->dtype;
  for (int k = 0; k < n; k++) {
    if (ins[k]->rank > rank) rank = ins[k]->rank;
    dt = promote(dt, ins[k]->dtype);
    if (ins[k]->storage->ctx != a->storage->ctx)
      return lt__context_mismatch("autograd", "an operand", ins[k]->storage->ctx, "another",
                                  a->storage->ctx);
  }
  int64_t shape[LT_MAX_RANK];
  int32_t md[LT_MAX_RANK], mk[3][LT_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    shape[i] = 1;
    md[i] = i;
    for (int k = 0; k < n; k++) {
      int j = i - (rank - ins[k]->rank);
      int64_t e = j >= 0 ? ins[k]->shape[j] : 1;
      LT_RETURN_IF(e != 1 && shape[i] != 1 && e != shape[i], LT_ERR_SHAPE_MISMATCH,
                   "operands do not broadcast: axis %d has extents %lld and %lld (aligned from "
                   "the right)",
                   i, (long long)shape[i], (long long)e);
      if (e != 1) shape[i] = e;
    }
  }
  for (int k = 0; k < n; k++)
    for (int j = 0; j < ins[k]->rank; j++)
      mk[k][j] = rank - ins[k]->rank + j;
  lt_plan_options *opts;
  LT_TRY(lt_plan_options_create(&opts));
  lt_unary_op un[3] = {ua, ub, uc};
  lt_status st = LT_OK;
  for (int k = 0; k < n && st == LT_OK; k++)
    st = lt_plan_options_set_unary(opts, k, un[k]);
  lt_tensor *o = NULL;
  lt_plan *plan = NULL;
  if (st == LT_OK) st = lt_tensor_empty(a->storage->ctx, dt, rank, shape, &o);
  if (st == LT_OK) {
    if (n == 1)
      st = lt_plan_permutation(a, mk[0], o, md, opts, &plan);
    else if (n == 2)
      st = lt_plan_binary(a, mk[0], b, mk[1], op_ab, o, md, opts, &plan);
    else
      st = lt_plan_trinary(a, mk[0], b, mk[1], c, mk[2], op_ab, op_abc, o, md, opts, &plan);
  }
  static const double ones[3] = {1, 1, 1};
  if (st == LT_OK) st = lt_plan_execute(plan, ins, n, s ? s : ones, n == 1 ? 1 : n, o);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  if (st != LT_OK) {
    lt_tensor_destroy(o);
    return st;
  }
  *out = o;
  return LT_OK;
}

lt_status lt__ad_scale(const lt_tensor *a, double s, lt_tensor **out) {
  return lt__ad_ew(LT_BINARY_ADD, LT_BINARY_ADD, a, LT_UNARY_IDENTITY, NULL, LT_UNARY_IDENTITY,
                   NULL, LT_UNARY_IDENTITY, &s, out);
}

static bool same_shape(const lt_tensor *t, const lt__ad_meta *m) {
  return t->rank == m->rank &&
         (m->rank == 0 || memcmp(t->shape, m->shape, sizeof(int64_t) * (size_t)m->rank) == 0);
}

lt_status lt__ad_sum_to(const lt_tensor *g, const lt__ad_meta *m, lt_tensor **out) {
  *out = NULL;
  if (same_shape(g, m)) {
    if (g->dtype == m->dtype) return lt__ad_alias(g, out);
    return lt_tensor_contiguous(g, m->dtype, out);
  }
  if (g->rank < m->rank) {
    lt_tensor *b;
    LT_TRY(lt_view_broadcast_to(g, m->rank, m->shape, &b));
    lt_status st = lt__ad_sum_to(b, m, out);
    lt_tensor_destroy(b);
    return st;
  }
  int axes[LT_MAX_RANK], n = 0, lead = g->rank - m->rank;
  for (int i = 0; i < g->rank; i++) {
    int j = i - lead;
    if (j < 0 || (m->shape[j] == 1 && g->shape[i] != 1))
      axes[n++] = i;
    else
      LT_RETURN_IF(m->shape[j] != g->shape[i], LT_ERR_INTERNAL,
                   "autograd: a gradient of extent %lld meets an input of extent %lld",
                   (long long)g->shape[i], (long long)m->shape[j]);
  }
  lt_tensor *r, *v;
  LT_TRY(lt_reduce(LT_REDUCE_SUM, g, n, axes, false, &r));
  lt_status st = lt_tensor_reshape(r, m->rank, m->shape, &v);
  lt_tensor_destroy(r);
  LT_TRY(st);
  if (v->dtype == m->dtype) {
    *out = v;
    return LT_OK;
  }
  st = lt_tensor_contiguous(v, m->dtype, out);
  lt_tensor_destroy(v);
  return st;
}

lt_status lt__ad_zeros(lt_context *ctx, const lt__ad_meta *m, lt_tensor **out) {
  return lt_tensor_zeros(ctx, m->dtype, m->rank, m->shape, out);
}

/* t broadcast to x's shape, in float64 on the host: a malloc'd array the caller frees. */
static lt_status host_f64(const lt_tensor *t, const lt_tensor *x, double **out) {
  *out = NULL;
  lt_tensor *b, *c;
  LT_TRY(lt_view_broadcast_to(t, x->rank, x->shape, &b));
  lt_status st = lt_tensor_contiguous(b, LT_F64, &c);
  lt_tensor_destroy(b);
  LT_TRY(st);
  size_t bytes = sizeof(double) * (size_t)(x->numel > 0 ? x->numel : 1);
  double *h = malloc(bytes);
  if (h == NULL) st = lt__error(LT_ERR_OUT_OF_MEMORY, "autograd: out of memory (host pass)");
  if (st == LT_OK) st = lt_tensor_to_host(c, h, bytes);
  lt_tensor_destroy(c);
  if (st != LT_OK) {
    free(h);
    return st;
  }
  *out = h;
  return LT_OK;
}

/* Element i of a dense F32 or F64 block. */
static double load_elem(const void *p, lt_dtype d, int64_t i) {
  return d == LT_F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}
static void store_elem(void *p, lt_dtype d, int64_t i, double v) {
  if (d == LT_F32)
    ((float *)p)[i] = (float)v;
  else
    ((double *)p)[i] = v;
}

/* Host-memory tensors of one float dtype, all dense in C order with x's shape: the pass reads
 * and writes their memory directly (the training hot path: ReLU on a CPU context). */
static bool direct_ok(const lt_tensor *x, const lt_tensor *y, const lt_tensor *g) {
  const lt_tensor *ts[3] = {x, y, g};
  if (!x->storage->ctx->backend->caps.host_memory || (x->dtype != LT_F32 && x->dtype != LT_F64))
    return false;
  for (int k = 0; k < 3; k++) {
    const lt_tensor *t = ts[k];
    if (t == NULL) continue;
    if (t->dtype != x->dtype || t->rank != x->rank || !lt_tensor_is_contiguous(t) ||
        t->storage->ctx != x->storage->ctx ||
        memcmp(t->shape, x->shape, sizeof(int64_t) * (size_t)x->rank) != 0)
      return false;
  }
  return true;
}

static lt_status direct_pointwise(const lt_tensor *x, const lt_tensor *y, const lt_tensor *g,
                                  lt__ad_pointwise_fn f, lt_tensor **out) {
  lt_tensor *r;
  LT_TRY(lt_tensor_empty(x->storage->ctx, x->dtype, x->rank, x->shape, &r));
  void *px = NULL, *py = NULL, *pg = NULL, *pr = NULL;
  lt_status st = lt_tensor_host_pointer(x, &px);
  if (st == LT_OK && y) st = lt_tensor_host_pointer(y, &py);
  if (st == LT_OK && g) st = lt_tensor_host_pointer(g, &pg);
  if (st == LT_OK) st = lt_tensor_host_pointer(r, &pr);
  if (st != LT_OK) {
    lt_tensor_destroy(r);
    return st;
  }
  lt_dtype d = x->dtype;
  for (int64_t i = 0; i < x->numel; i++)
    store_elem(
        pr, d, i,
        f(load_elem(px, d, i), py ? load_elem(py, d, i) : 0.0, pg ? load_elem(pg, d, i) : 1.0));
  *out = r;
  return LT_OK;
}

lt_status lt__ad_host_pointwise(const lt_tensor *x, const lt_tensor *y, const lt_tensor *g,
                                lt__ad_pointwise_fn f, lt_tensor **out) {
  *out = NULL;
  if (direct_ok(x, y, g)) return direct_pointwise(x, y, g, f, out);
  double *hx = NULL, *hy = NULL, *hg = NULL;
  lt_status st = host_f64(x, x, &hx);
  if (st == LT_OK && y) st = host_f64(y, x, &hy);
  if (st == LT_OK && g) st = host_f64(g, x, &hg);
  if (st == LT_OK) {
    for (int64_t i = 0; i < x->numel; i++)
      hx[i] = f(hx[i], hy ? hy[i] : 0.0, hg ? hg[i] : 1.0);
    lt_tensor *r;
    st = lt_tensor_from_host(x->storage->ctx, LT_F64, x->rank, x->shape, NULL, hx, &r);
    lt_dtype want = g ? g->dtype : x->dtype;
    if (st == LT_OK && want != LT_F64) {
      st = lt_tensor_contiguous(r, want, out);
      lt_tensor_destroy(r);
    } else if (st == LT_OK) {
      *out = r;
    }
  }
  free(hx);
  free(hy);
  free(hg);
  return st;
}

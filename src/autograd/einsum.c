/* SPDX-License-Identifier: MIT */
/* Differentiable einsum (string and integer-label forms; contraction plans are the two-operand
 * case). The gradient of operand i is itself an einsum of the output gradient and the other
 * operands, planned through the path optimiser and the plan cache like any one-shot einsum.
 * Three things an einsum can do to operand i are undone around that einsum:
 *  - a label only operand i carries was summed inside it: the gradient broadcasts along it;
 *  - a size-1 axis broadcast against a longer one elsewhere: the gradient sums over it;
 *  - a repeated label (a diagonal): the gradient is written onto that diagonal of zeros. */
#include "einsum/einsum.h"
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>

typedef struct einsum_extra {
  lt__einsum_expr e;
} einsum_extra;

static bool has_label(const int32_t *labels, int rank, int32_t l) {
  for (int i = 0; i < rank; i++)
    if (labels[i] == l) return true;
  return false;
}

/* The gradient of operand i over its unique labels (first-appearance order), with i's own
 * extents. */
static lt_status unique_grad(const lt__ad_node *n, const lt__einsum_expr *e, int i,
                             const lt_tensor *g, int *n_u, int32_t *u, lt_tensor **out) {
  const lt__ad_meta *mi = &n->in[i];
  int64_t ext[LT_MAX_RANK];
  *n_u = 0;
  for (int a = 0; a < e->rank[i]; a++)
    if (!has_label(u, *n_u, e->labels[i][a])) {
      ext[*n_u] = mi->shape[a];
      u[(*n_u)++] = e->labels[i][a];
    }
  /* the other operands and g; labels of u that none of them has are left for broadcasting */
  const lt_tensor *ins[LT__AD_MAX_INPUTS + 1];
  const int32_t *modes[LT__AD_MAX_INPUTS + 1];
  int m = 0;
  ins[m] = g;
  modes[m++] = e->labels_out;
  for (int j = 0; j < e->n_inputs; j++)
    if (j != i) {
      ins[m] = n->saved[j];
      modes[m++] = e->labels[j];
    }
  int32_t present[LT_MAX_RANK];
  int np = 0;
  for (int a = 0; a < *n_u; a++) {
    bool seen = has_label(e->labels_out, e->rank_out, u[a]);
    for (int j = 0; j < e->n_inputs && !seen; j++)
      seen = j != i && has_label(e->labels[j], e->rank[j], u[a]);
    if (seen) present[np++] = u[a];
  }
  lt_tensor *r;
  LT_TRY(lt_einsum_modes(m, ins, modes, np, present, NULL, &r));
  /* r's axes in u order with 1 for the missing labels, then sum and broadcast to i's extents */
  int64_t shape1[LT_MAX_RANK];
  int axes[LT_MAX_RANK], n_axes = 0;
  for (int a = 0, p = 0; a < *n_u; a++) {
    bool here = p < np && present[p] == u[a];
    shape1[a] = here ? r->shape[p++] : 1;
    if (shape1[a] != ext[a] && ext[a] == 1) axes[n_axes++] = a;
  }
  lt_tensor *v = NULL, *s = NULL;
  lt_status st = lt_tensor_reshape(r, *n_u, shape1, &v);
  lt_tensor_destroy(r);
  if (st == LT_OK && n_axes > 0) {
    st = lt_reduce(LT_REDUCE_SUM, v, n_axes, axes, true, &s);
    lt_tensor_destroy(v);
    v = s;
  }
  if (st == LT_OK) {
    st = lt_view_broadcast_to(v, *n_u, ext, out);
  }
  lt_tensor_destroy(v);
  return st;
}

static lt_status einsum_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  const lt__einsum_expr *e = &((const einsum_extra *)n->extra)->e;
  for (int a = 0; a < e->rank_out; a++)
    LT_RETURN_IF(has_label(e->labels_out, a, e->labels_out[a]), LT_ERR_UNSUPPORTED,
                 "autograd: einsum with a repeated output label has no gradient here");
  for (int i = 0; i < e->n_inputs; i++) {
    if (!n->needs[i]) continue;
    int n_u;
    int32_t u[LT_MAX_RANK];
    lt_tensor *gu;
    LT_TRY(unique_grad(n, e, i, g, &n_u, u, &gu));
    if (n_u == e->rank[i]) {
      grads[i] = gu;
      continue;
    }
    /* repeated labels: write gu onto the diagonal of a zero gradient */
    lt_tensor *z, *diag;
    lt_status st = lt__ad_zeros(g->storage->ctx, &n->in[i], &z);
    if (st == LT_OK) {
      int64_t strides[LT_MAX_RANK] = {0};
      for (int a = 0; a < e->rank[i]; a++)
        for (int b = 0; b < n_u; b++)
          if (u[b] == e->labels[i][a]) strides[b] += z->strides[a];
      st = lt_view_as_strided(z, n_u, gu->shape, strides, z->offset, &diag);
      if (st == LT_OK) {
        st = lt_tensor_copy_into(diag, gu);
        lt_tensor_destroy(diag);
      }
      if (st == LT_OK)
        grads[i] = z;
      else
        lt_tensor_destroy(z);
    }
    lt_tensor_destroy(gu);
    LT_TRY(st);
  }
  return LT_OK;
}

const lt__ad_rule lt__ad_rule_einsum = {"einsum", einsum_backward};

static void extra_free(void *p) {
  einsum_extra *x = p;
  lt__einsum_expr_free(&x->e);
  free(x);
}

static lt_status record_einsum(lt_tape *tape, einsum_extra *x, int n_inputs,
                               const lt_tensor *const *inputs, lt_tensor **out) {
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, &lt__ad_rule_einsum, n_inputs, inputs, *out, &n);
  if (st != LT_OK) {
    extra_free(x);
    lt_tensor_destroy(*out);
    *out = NULL;
    return st;
  }
  n->extra = x;
  n->extra_free = extra_free;
  /* operand j is read by the gradient of every other operand that needs one */
  for (int j = 0; j < n_inputs && st == LT_OK; j++) {
    bool read = false;
    for (int i = 0; i < n_inputs; i++)
      read |= i != j && n->needs[i];
    if (read) st = lt__ad_save(n, j, inputs[j], "operand");
  }
  if (st != LT_OK) {
    lt__ad_unrecord_last(tape);
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

/* The expression block and the operands' ranks for recording; einsums past the tape's operand
 * limit compute but are refused for recording. */
static lt_status einsum_prepare(int n_inputs, const lt_tensor *const *inputs, einsum_extra **x,
                                int **ranks) {
  LT_RETURN_IF(n_inputs > LT__AD_MAX_INPUTS, LT_ERR_UNSUPPORTED,
               "autograd: an einsum of %d operands cannot be recorded (at most %d)", n_inputs,
               LT__AD_MAX_INPUTS);
  *x = calloc(1, sizeof **x);
  *ranks = malloc(sizeof(int) * (size_t)n_inputs);
  if (*x == NULL || *ranks == NULL) {
    free(*x);
    free(*ranks);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "autograd: out of memory recording an einsum");
  }
  for (int i = 0; i < n_inputs; i++)
    (*ranks)[i] = inputs[i]->rank;
  return LT_OK;
}

lt_status lt_ad_einsum(lt_tape *tape, const char *expr, int n_inputs,
                       const lt_tensor *const *inputs, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_einsum"));
  LT_TRY(lt_einsum(expr, n_inputs, inputs, NULL, out));
  if (!lt__ad_should_record(tape, n_inputs, inputs, *out)) return LT_OK;
  einsum_extra *x;
  int *ranks;
  lt_status st = einsum_prepare(n_inputs, inputs, &x, &ranks);
  if (st == LT_OK) {
    st = lt__einsum_parse(expr, n_inputs, ranks, &x->e);
    free(ranks);
    if (st == LT_OK) return record_einsum(tape, x, n_inputs, inputs, out);
    extra_free(x);
  }
  lt_tensor_destroy(*out);
  *out = NULL;
  return st;
}

lt_status lt_ad_einsum_modes(lt_tape *tape, int n_inputs, const lt_tensor *const *inputs,
                             const int32_t *const *modes, int rank_out, const int32_t *modes_out,
                             lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_einsum_modes"));
  LT_TRY(lt_einsum_modes(n_inputs, inputs, modes, rank_out, modes_out, NULL, out));
  if (!lt__ad_should_record(tape, n_inputs, inputs, *out)) return LT_OK;
  einsum_extra *x;
  int *ranks;
  lt_status st = einsum_prepare(n_inputs, inputs, &x, &ranks);
  if (st == LT_OK) {
    st = lt__einsum_from_modes(n_inputs, ranks, modes, rank_out, modes_out, &x->e);
    free(ranks);
    if (st == LT_OK) return record_einsum(tape, x, n_inputs, inputs, out);
    extra_free(x);
  }
  lt_tensor_destroy(*out);
  *out = NULL;
  return st;
}

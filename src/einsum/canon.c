/* SPDX-License-Identifier: MIT */
/* Canonical einsum: labels to dense mode ids, extents resolved (NumPy broadcasting of extent 1
 * across operands), repeated labels folded into diagonal strides (zero-copy). */
#include "core/error.h"
#include "einsum/einsum.h"

#include <string.h>

void lt__einsum_canon_free(lt__einsum_canon *c) {
  size_t cap = (size_t)c->cap_labels;
  if (c->label_of) lt__host_free(c->ctx, c->label_of, sizeof(int32_t) * cap);
  if (c->extent) lt__host_free(c->ctx, c->extent, sizeof(int64_t) * cap);
  if (c->in) lt__host_free(c->ctx, c->in, sizeof(lt__mview) * (size_t)(c->n_inputs + 1));
  c->label_of = NULL;
  c->extent = NULL;
  c->in = NULL;
  c->cap_labels = 0;
}

static int find_or_add(lt__einsum_canon *c, int32_t label) {
  for (int i = 0; i < c->n_labels; i++)
    if (c->label_of[i] == label) return i;
  if (c->n_labels >= c->cap_labels) return -1;
  c->label_of[c->n_labels] = label;
  c->extent[c->n_labels] = -1;
  return c->n_labels++;
}

/* Merges operand k's axes into the extent table and builds its mode view. */
static lt_status add_input(const lt__einsum_expr *e, int k, const lt_tensor *t, lt__einsum_canon *c,
                           int *owner) {
  lt__mview *v = &c->in[k];
  memset(v, 0, sizeof *v);
  v->buf = (lt__bufref){LT__BUF_INPUT, k};
  v->dtype = t->dtype;
  int64_t own_extent[LT_MAX_RANK];
  char name[48];
  for (int a = 0; a < t->rank; a++) {
    int id = find_or_add(c, e->labels[k][a]);
    LT_RETURN_IF(id < 0, LT_ERR_INTERNAL, "einsum: more than %d distinct labels", c->cap_labels);
    int64_t ext = t->shape[a];
    int slot = -1;
    for (int i = 0; i < v->rank; i++)
      if (v->mode[i] == id) slot = i;
    if (slot >= 0) {
      lt__einsum_label_name(e, e->labels[k][a], name, sizeof name);
      LT_RETURN_IF(own_extent[slot] != ext, LT_ERR_SHAPE_MISMATCH,
                   "einsum: label %s repeats in operand %d with extents %lld and %lld (a "
                   "diagonal needs equal extents)",
                   name, k, (long long)own_extent[slot], (long long)ext);
      v->stride[slot] += t->strides[a]; /* the diagonal, as a view */
      continue;
    }
    slot = v->rank++;
    v->mode[slot] = id;
    v->stride[slot] = t->strides[a];
    own_extent[slot] = ext;
    if (c->extent[id] < 0 || c->extent[id] == 1) {
      if (c->extent[id] != ext) owner[id] = k;
      if (c->extent[id] < 0 || ext != 1) c->extent[id] = ext;
    } else if (ext != 1 && ext != c->extent[id]) {
      lt__einsum_label_name(e, e->labels[k][a], name, sizeof name);
      return lt__error(LT_ERR_SHAPE_MISMATCH,
                       "einsum: label %s has extents %lld and %lld in operands %d and %d", name,
                       (long long)c->extent[id], (long long)ext, owner[id], k);
    }
  }
  return LT_OK;
}

static lt_status build_output(const lt__einsum_expr *e, const lt_tensor *d, lt__einsum_canon *c,
                              int64_t *out_shape) {
  lt__mview *v = &c->out;
  memset(v, 0, sizeof *v);
  v->buf = (lt__bufref){LT__BUF_OUTPUT, 0};
  int64_t strides[LT_MAX_RANK];
  for (int a = 0; a < e->rank_out; a++) {
    int id = find_or_add(c, e->labels_out[a]);
    out_shape[a] = c->extent[id];
  }
  if (d) {
    char name[48];
    LT_RETURN_IF(d->rank != e->rank_out, LT_ERR_SHAPE_MISMATCH,
                 "einsum: the output has rank %d but the expression gives rank %d", d->rank,
                 e->rank_out);
    for (int a = 0; a < d->rank; a++) {
      lt__einsum_label_name(e, e->labels_out[a], name, sizeof name);
      LT_RETURN_IF(d->shape[a] != out_shape[a], LT_ERR_SHAPE_MISMATCH,
                   "einsum: output axis %d (label %s) has extent %lld but the expression gives "
                   "%lld",
                   a, name, (long long)d->shape[a], (long long)out_shape[a]);
      strides[a] = d->strides[a];
    }
    v->dtype = d->dtype;
  } else {
    /* The sizes must fit before strides exist (an outer product's extents multiply). */
    LT_TRY(lt__check_shape(e->rank_out, out_shape, LT_F64, NULL));
    lt__contiguous_strides(e->rank_out, out_shape, strides);
  }
  for (int a = 0; a < e->rank_out; a++) { /* output labels are distinct (parse.c) */
    int id = find_or_add(c, e->labels_out[a]);
    v->mode[v->rank] = id;
    v->stride[v->rank++] = strides[a];
  }
  return LT_OK;
}

lt_status lt__einsum_canonicalize(const lt__einsum_expr *e, const lt_tensor *const *inputs,
                                  const lt_tensor *d, lt__einsum_canon *c, int64_t *out_shape) {
  lt__einsum_canon_free(c);
  c->n_labels = 0;
  c->n_inputs = e->n_inputs;
  /* every axis may bring a new label */
  int cap = e->rank_out + 1;
  for (int k = 0; k < e->n_inputs; k++)
    cap += e->rank[k];
  c->cap_labels = cap;
  c->label_of = lt__host_alloc(c->ctx, sizeof(int32_t) * (size_t)cap);
  c->extent = lt__host_alloc(c->ctx, sizeof(int64_t) * (size_t)cap);
  c->in = lt__host_calloc(c->ctx, (size_t)e->n_inputs + 1, sizeof(lt__mview));
  int *owner = lt__host_alloc(c->ctx, sizeof(int) * (size_t)cap);
  if (!c->label_of || !c->extent || !c->in || !owner) {
    if (owner) lt__host_free(c->ctx, owner, sizeof(int) * (size_t)cap);
    lt__einsum_canon_free(c);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for %d operands", e->n_inputs);
  }
  lt_status st = LT_OK;
  for (int k = 0; k < e->n_inputs && st == LT_OK; k++)
    st = add_input(e, k, inputs[k], c, owner);
  lt__host_free(c->ctx, owner, sizeof(int) * (size_t)cap);
  LT_TRY(st);
  /* Operand axes of extent 1 under a longer label broadcast with stride 0. */
  for (int k = 0; k < e->n_inputs; k++)
    for (int a = 0; a < inputs[k]->rank; a++)
      if (inputs[k]->shape[a] == 1) {
        lt__mview *v = &c->in[k];
        for (int i = 0; i < v->rank; i++)
          if (c->label_of[v->mode[i]] == e->labels[k][a] && c->extent[v->mode[i]] != 1)
            v->stride[i] = 0;
      }
  return build_output(e, d, c, out_shape);
}

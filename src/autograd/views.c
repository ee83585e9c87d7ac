/* SPDX-License-Identifier: MIT */
/* Differentiable views and copies. Views save nothing: reshape/squeeze/unsqueeze reshape the
 * gradient back, permute permutes it back, broadcast and dtype conversion hand it on (the tape
 * sums to the input's shape and converts dtype), and the views that pick elements (slice,
 * select, flip, diagonal) replay themselves on a zero gradient and copy into that view.
 * as_strided works on the storage, so elements read twice add up. */
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>

enum { VIEW_SLICE, VIEW_SELECT, VIEW_FLIP, VIEW_DIAGONAL };

/* Passes the gradient on unchanged: the tape's accumulation sums broadcast axes and converts. */
static lt_status pass_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  (void)n;
  return lt__ad_alias(g, &grads[0]);
}

static lt_status reshape_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  return lt_tensor_reshape(g, n->in[0].rank, n->in[0].shape, &grads[0]);
}

static lt_status permute_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  int inv[LT_MAX_RANK];
  const int *axes = n->extra;
  for (int i = 0; i < n->in[0].rank; i++)
    inv[axes[i]] = i;
  return lt_view_permute(g, inv, &grads[0]);
}

/* Applies the recorded view to t. */
static lt_status replay(const lt__ad_node *n, const lt_tensor *t, lt_tensor **out) {
  const int64_t *p = n->iparam;
  switch ((int)p[0]) {
  case VIEW_SLICE: return lt_view_slice(t, (int)p[1], p[2], p[3], p[4], out);
  case VIEW_SELECT: return lt_view_select(t, (int)p[1], p[2], out);
  case VIEW_FLIP: return lt_view_flip(t, (int)p[1], out);
  case VIEW_DIAGONAL: return lt_view_diagonal(t, p[1], (int)p[2], (int)p[3], out);
  }
  return lt__error(LT_ERR_INTERNAL, "autograd: unknown view %d", (int)p[0]);
}

static lt_status replay_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  lt_tensor *z, *v;
  LT_TRY(lt__ad_zeros(g->storage->ctx, &n->in[0], &z));
  lt_status st = replay(n, z, &v);
  if (st == LT_OK) {
    st = lt_tensor_copy_into(v, g);
    lt_tensor_destroy(v);
  }
  if (st != LT_OK) {
    lt_tensor_destroy(z);
    return st;
  }
  grads[0] = z;
  return LT_OK;
}

/* as_strided: the view's shape/strides/offset and the input's, over a storage of n elements. */
typedef struct strided_extra {
  int rank, in_rank;
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK], offset;
  int64_t in_strides[LT_MAX_RANK], in_offset, storage_elems;
} strided_extra;

static lt_status as_strided_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  const strided_extra *e = n->extra;
  lt_tensor *gc;
  LT_TRY(lt_tensor_contiguous(g, LT_F64, &gc));
  size_t gbytes = sizeof(double) * (size_t)(gc->numel > 0 ? gc->numel : 1);
  double *hg = malloc(gbytes);
  double *hs = calloc((size_t)(e->storage_elems > 0 ? e->storage_elems : 1), sizeof(double));
  lt_status st = (hg && hs) ? lt_tensor_to_host(gc, hg, gbytes)
                            : lt__error(LT_ERR_OUT_OF_MEMORY, "autograd: out of memory");
  lt_tensor_destroy(gc);
  if (st == LT_OK) {
    int64_t idx[LT_MAX_RANK] = {0};
    for (int64_t i = 0; i < g->numel; i++) { /* scatter-add in C order */
      int64_t off = e->offset;
      for (int d = 0; d < e->rank; d++)
        off += idx[d] * e->strides[d];
      hs[off] += hg[i];
      for (int d = e->rank - 1; d >= 0; d--) {
        if (++idx[d] < e->shape[d]) break;
        idx[d] = 0;
      }
    }
    lt_tensor *s, *v;
    st = lt_tensor_from_host(g->storage->ctx, LT_F64, 1, &e->storage_elems, NULL, hs, &s);
    if (st == LT_OK) {
      st = lt_view_as_strided(s, e->in_rank, n->in[0].shape, e->in_strides, e->in_offset, &v);
      lt_tensor_destroy(s);
      if (st == LT_OK) {
        st = lt_tensor_contiguous(v, n->in[0].dtype, &grads[0]);
        lt_tensor_destroy(v);
      }
    }
  }
  free(hg);
  free(hs);
  return st;
}

const lt__ad_rule lt__ad_rule_convert = {"copy/convert", pass_backward};
const lt__ad_rule lt__ad_rule_broadcast = {"broadcast_to", pass_backward};
const lt__ad_rule lt__ad_rule_reshape = {"reshape", reshape_backward};
const lt__ad_rule lt__ad_rule_permute = {"permute", permute_backward};
const lt__ad_rule lt__ad_rule_view_replay = {"view", replay_backward};
const lt__ad_rule lt__ad_rule_as_strided = {"as_strided", as_strided_backward};

/* Records `out` = view/copy of a under rule with params; on failure destroys *out. */
static lt_status record1(lt_tape *tape, const lt__ad_rule *rule, const lt_tensor *a,
                         lt_tensor **out, const int64_t *params, int n_params, void *extra) {
  if (!lt__ad_should_record(tape, 1, &a, *out)) {
    free(extra);
    return LT_OK;
  }
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, rule, 1, &a, *out, &n);
  if (st == LT_OK) {
    if (n_params > 0) memcpy(n->iparam, params, sizeof(int64_t) * (size_t)n_params);
    n->extra = extra;
    n->extra_free = free;
    return LT_OK;
  }
  free(extra);
  lt_tensor_destroy(*out);
  *out = NULL;
  return st;
}

lt_status lt_ad_contiguous(lt_tape *tape, const lt_tensor *a, lt_dtype dtype, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_contiguous"));
  LT_TRY(lt_tensor_contiguous(a, dtype, out));
  lt_dtype d = (*out)->dtype; /* a conversion to integers or bool carries no gradient */
  bool floating = d == LT_F16 || d == LT_BF16 || d == LT_F32 || d == LT_F64;
  static const lt__ad_rule to_integer = {"conversion to an integer or bool dtype", NULL};
  return record1(tape, floating ? &lt__ad_rule_convert : &to_integer, a, out, NULL, 0, NULL);
}
lt_status lt_ad_reshape(lt_tape *tape, const lt_tensor *a, int rank, const int64_t *shape,
                        lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_reshape"));
  LT_TRY(lt_tensor_reshape(a, rank, shape, out));
  return record1(tape, &lt__ad_rule_reshape, a, out, NULL, 0, NULL);
}
lt_status lt_ad_squeeze(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_squeeze"));
  LT_TRY(lt_view_squeeze(a, axis, out));
  return record1(tape, &lt__ad_rule_reshape, a, out, NULL, 0, NULL);
}
lt_status lt_ad_unsqueeze(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_unsqueeze"));
  LT_TRY(lt_view_unsqueeze(a, axis, out));
  return record1(tape, &lt__ad_rule_reshape, a, out, NULL, 0, NULL);
}
lt_status lt_ad_broadcast_to(lt_tape *tape, const lt_tensor *a, int rank, const int64_t *shape,
                             lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_broadcast_to"));
  LT_TRY(lt_view_broadcast_to(a, rank, shape, out));
  return record1(tape, &lt__ad_rule_broadcast, a, out, NULL, 0, NULL);
}
lt_status lt_ad_permute(lt_tape *tape, const lt_tensor *a, const int *axes, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_permute"));
  LT_TRY(lt_view_permute(a, axes, out));
  int *copy = malloc(sizeof(int) * (size_t)(a->rank > 0 ? a->rank : 1));
  if (copy == NULL) {
    lt_tensor_destroy(*out);
    *out = NULL;
    return lt__error(LT_ERR_OUT_OF_MEMORY, "lt_ad_permute: out of memory");
  }
  for (int i = 0; i < a->rank; i++)
    copy[i] = axes[i] < 0 ? axes[i] + a->rank : axes[i];
  return record1(tape, &lt__ad_rule_permute, a, out, NULL, 0, copy);
}
lt_status lt_ad_slice(lt_tape *tape, const lt_tensor *a, int axis, int64_t start, int64_t stop,
                      int64_t step, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_slice"));
  LT_TRY(lt_view_slice(a, axis, start, stop, step, out));
  int64_t p[5] = {VIEW_SLICE, axis, start, stop, step};
  return record1(tape, &lt__ad_rule_view_replay, a, out, p, 5, NULL);
}
lt_status lt_ad_select(lt_tape *tape, const lt_tensor *a, int axis, int64_t index,
                       lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_select"));
  LT_TRY(lt_view_select(a, axis, index, out));
  int64_t p[3] = {VIEW_SELECT, axis, index};
  return record1(tape, &lt__ad_rule_view_replay, a, out, p, 3, NULL);
}
lt_status lt_ad_flip(lt_tape *tape, const lt_tensor *a, int axis, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_flip"));
  LT_TRY(lt_view_flip(a, axis, out));
  int64_t p[2] = {VIEW_FLIP, axis};
  return record1(tape, &lt__ad_rule_view_replay, a, out, p, 2, NULL);
}
lt_status lt_ad_diagonal(lt_tape *tape, const lt_tensor *a, int64_t offset, int axis1, int axis2,
                         lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_diagonal"));
  LT_TRY(lt_view_diagonal(a, offset, axis1, axis2, out));
  int64_t p[4] = {VIEW_DIAGONAL, offset, axis1, axis2};
  return record1(tape, &lt__ad_rule_view_replay, a, out, p, 4, NULL);
}
lt_status lt_ad_as_strided(lt_tape *tape, const lt_tensor *a, int rank, const int64_t *shape,
                           const int64_t *strides, int64_t offset, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_as_strided"));
  LT_TRY(lt_view_as_strided(a, rank, shape, strides, offset, out));
  if (!lt__ad_should_record(tape, 1, &a, *out)) return LT_OK;
  strided_extra *e = calloc(1, sizeof *e);
  if (e == NULL) {
    lt_tensor_destroy(*out);
    *out = NULL;
    return lt__error(LT_ERR_OUT_OF_MEMORY, "lt_ad_as_strided: out of memory");
  }
  e->rank = rank;
  e->in_rank = a->rank;
  memcpy(e->shape, shape, sizeof(int64_t) * (size_t)rank);
  memcpy(e->strides, strides, sizeof(int64_t) * (size_t)rank);
  memcpy(e->in_strides, a->strides, sizeof(int64_t) * (size_t)a->rank);
  e->offset = offset;
  e->in_offset = a->offset;
  e->storage_elems = (int64_t)(a->storage->nbytes / lt_dtype_size(a->dtype));
  return record1(tape, &lt__ad_rule_as_strided, a, out, NULL, 0, e);
}

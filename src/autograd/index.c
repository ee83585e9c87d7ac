/* SPDX-License-Identifier: MIT */
/* Differentiable indexing, selection and joining: take / index_select / take_along_axis
 * (gradient: scatter-add into zeros), scatter_add (gradient: the identity and a gather), where
 * (the gradient goes to the chosen branch, none to the condition), clip, and concatenate /
 * stack / split (slices and selections of the gradient). Index tensors and conditions are
 * integer or bool, never tracked: they are saved (with their version, so an in-place change is
 * caught) and get no gradient. */
#include "autograd/autograd.h"

#include <stdlib.h>
#include <string.h>

#define ID LT_UNARY_IDENTITY

enum { IX_TAKE, IX_TAKE_ALONG, IX_SCATTER_ADD, IX_WHERE, IX_CLIP, IX_CONCAT, IX_STACK };

/* Node layout: iparam {kind, axis}; saved as each rule says; extra: concatenate's offsets. */

/* take(a, index, axis): scatter-add g, its index axes flattened into one, into zeros of a's
 * shape along axis. */
static lt_status take_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **out) {
  const lt__ad_meta *in = &n->in[0];
  const lt_tensor *index = n->saved[0];
  int axis = (int)n->iparam[1];
  int64_t gshape[LT_MAX_RANK], m = index->numel;
  for (int i = 0; i < in->rank; i++)
    gshape[i] = i == axis ? m : in->shape[i];
  lt_tensor *z = NULL, *g2 = NULL, *i1 = NULL;
  lt_status st = lt__ad_zeros(g->storage->ctx, in, &z);
  if (st == LT_OK) st = lt_tensor_reshape(g, in->rank, gshape, &g2);
  if (st == LT_OK) st = lt_tensor_reshape(index, 1, &m, &i1);
  if (st == LT_OK) st = lt_scatter_add(z, axis, i1, g2);
  lt_tensor_destroy(g2);
  lt_tensor_destroy(i1);
  if (st != LT_OK) {
    lt_tensor_destroy(z);
    return st;
  }
  *out = z;
  return LT_OK;
}

/* take_along_axis: scatter-add g (the broadcast shape) along axis with the index broadcast to
 * g's shape, into zeros with g's extents off axis; the tape sums that down to a's shape. */
static lt_status take_along_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **out) {
  const lt__ad_meta *in = &n->in[0];
  int axis = (int)n->iparam[1];
  lt__ad_meta zm = *in;
  for (int i = 0; i < in->rank; i++)
    if (i != axis) zm.shape[i] = g->shape[i];
  zm.dtype = g->dtype;
  lt_tensor *z = NULL, *ib = NULL;
  lt_status st = lt__ad_zeros(g->storage->ctx, &zm, &z);
  if (st == LT_OK) st = lt_view_broadcast_to(n->saved[0], g->rank, g->shape, &ib);
  if (st == LT_OK) st = lt_scatter_add(z, axis, ib, g);
  lt_tensor_destroy(ib);
  if (st != LT_OK) {
    lt_tensor_destroy(z);
    return st;
  }
  *out = z;
  return LT_OK;
}

/* scatter_add(d, index, src): d's gradient is g; src's is g gathered at the index (the
 * index_add form with a 1-D index, else the scatter_add form of src's shape). */
static lt_status scatter_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  lt_status st = LT_OK;
  if (n->needs[0]) st = lt__ad_alias(g, &grads[0]);
  if (st != LT_OK || !n->needs[1]) return st;
  const lt_tensor *index = n->saved[0];
  const lt__ad_meta *src = &n->in[1];
  int axis = (int)n->iparam[1];
  bool full = index->rank == src->rank &&
              memcmp(index->shape, src->shape, sizeof(int64_t) * (size_t)src->rank) == 0;
  return full ? lt_take_along_axis(g, index, axis, &grads[1])
              : lt_index_select(g, axis, index, &grads[1]);
}

/* where(c, a, b): a gets g where c, b gets g elsewhere. */
static lt_status where_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  const lt_tensor *c = n->saved[0];
  lt_tensor *zero;
  LT_TRY(lt_tensor_full(g->storage->ctx, g->dtype, 0, NULL, 0.0, &zero));
  lt_status st = LT_OK;
  if (n->needs[1])
    st = lt__ad_ew(LT_BINARY_WHERE, LT_BINARY_WHERE, c, ID, g, ID, zero, ID, NULL, &grads[1]);
  if (st == LT_OK && n->needs[2])
    st = lt__ad_ew(LT_BINARY_WHERE, LT_BINARY_WHERE, c, ID, zero, ID, g, ID, NULL, &grads[2]);
  lt_tensor_destroy(zero);
  return st;
}

/* clip(a, lo, hi) = min(max(a, lo), hi): a gets g where lo <= a <= hi (the bounds included, as
 * PyTorch's clamp), lo where a < lo <= hi, hi where max(a, lo) > hi: exactly one of the three
 * for every non-NaN element. */
static lt_status clip_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  const lt_tensor *a = n->saved[0], *lo = n->saved[1], *hi = n->saved[2];
  lt_tensor *t = NULL, *m = NULL;
  lt_status st = LT_OK;
  if (n->needs[0]) {
    st = lt__ad_ew(LT_BINARY_GE, LT_BINARY_MUL, a, ID, lo, ID, g, ID, NULL, &t);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_LE, LT_BINARY_MUL, a, ID, hi, ID, t, ID, NULL, &grads[0]);
    lt_tensor_destroy(t);
    t = NULL;
  }
  if (st == LT_OK && n->needs[1]) {
    st = lt__ad_ew(LT_BINARY_LT, LT_BINARY_MUL, a, ID, lo, ID, g, ID, NULL, &t);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_LE, LT_BINARY_MUL, lo, ID, hi, ID, t, ID, NULL, &grads[1]);
  }
  if (st == LT_OK && n->needs[2]) {
    st = lt__ad_ew(LT_BINARY_MAX, 0, a, ID, lo, ID, NULL, ID, NULL, &m);
    if (st == LT_OK)
      st = lt__ad_ew(LT_BINARY_GT, LT_BINARY_MUL, m, ID, hi, ID, g, ID, NULL, &grads[2]);
  }
  lt_tensor_destroy(t);
  lt_tensor_destroy(m);
  return st;
}

/* concatenate: input k's gradient is g's slice [offset_k, offset_k + extent_k) along axis;
 * stack: g's position k along the new axis. */
static lt_status join_grad(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  int axis = (int)n->iparam[1];
  const int64_t *off = n->extra;
  lt_status st = LT_OK;
  for (int k = 0; k < n->n_in && st == LT_OK; k++) {
    if (!n->needs[k]) continue;
    if (n->iparam[0] == IX_STACK)
      st = lt_view_select(g, axis, k, &grads[k]);
    else
      st = lt_view_slice(g, axis, off[k], off[k + 1], 1, &grads[k]);
  }
  return st;
}

static lt_status index_backward(const lt__ad_node *n, const lt_tensor *g, lt_tensor **grads) {
  switch ((int)n->iparam[0]) {
  case IX_TAKE: return take_grad(n, g, &grads[0]);
  case IX_TAKE_ALONG: return take_along_grad(n, g, &grads[0]);
  case IX_SCATTER_ADD: return scatter_grad(n, g, grads);
  case IX_WHERE: return where_grad(n, g, grads);
  case IX_CLIP: return clip_grad(n, g, grads);
  case IX_CONCAT:
  case IX_STACK: return join_grad(n, g, grads);
  }
  return lt__error(LT_ERR_INTERNAL, "autograd: unknown indexing rule %d", (int)n->iparam[0]);
}

static const lt__ad_rule rules[] = {
    {"take", index_backward},        {"take_along_axis", index_backward},
    {"scatter_add", index_backward}, {"where", index_backward},
    {"clip", index_backward},        {"concatenate", index_backward},
    {"stack", index_backward},
};

/* Records *out = kind(ins) with axis, saving ins[k] for each bit k of `save`; takes `extra`.
 * On failure destroys *out. */
static lt_status record(lt_tape *tape, int kind, int n_in, const lt_tensor *const *ins, int axis,
                        unsigned save, void *extra, lt_tensor **out) {
  if (!lt__ad_should_record(tape, n_in, ins, *out)) {
    free(extra);
    return LT_OK;
  }
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, &rules[kind], n_in, ins, *out, &n);
  if (st == LT_OK) {
    n->iparam[0] = kind;
    n->iparam[1] = axis;
    n->extra = extra;
    n->extra_free = free;
    extra = NULL;
    static const char *what[3] = {"first operand", "second operand", "third operand"};
    for (int k = 0; k < n_in && k < 3 && st == LT_OK; k++)
      if (save >> k & 1) st = lt__ad_save(n, k, ins[k], what[k]);
    if (st != LT_OK) lt__ad_unrecord_last(tape);
  }
  free(extra);
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

/* The index tensor is saved in slot 0 whatever its operand position: the rules read it there. */
static lt_status record_indexed(lt_tape *tape, int kind, const lt_tensor *a, const lt_tensor *b,
                                const lt_tensor *index, int axis, lt_tensor **out) {
  const lt_tensor *ins[2] = {a, b};
  int n_in = b ? 2 : 1;
  if (!lt__ad_should_record(tape, n_in, ins, *out)) return LT_OK;
  lt__ad_node *n;
  lt_status st = lt__ad_record(tape, &rules[kind], n_in, ins, *out, &n);
  if (st == LT_OK) {
    n->iparam[0] = kind;
    n->iparam[1] = axis;
    st = lt__ad_save(n, 0, index, "index");
    if (st != LT_OK) lt__ad_unrecord_last(tape);
  }
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
  }
  return st;
}

static int norm_axis(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

lt_status lt_ad_take(lt_tape *tape, const lt_tensor *a, const lt_tensor *index, int axis,
                     lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_take"));
  LT_TRY(lt_take(a, index, axis, out));
  return record_indexed(tape, IX_TAKE, a, NULL, index, norm_axis(axis, a->rank), out);
}
lt_status lt_ad_index_select(lt_tape *tape, const lt_tensor *a, int axis, const lt_tensor *index,
                             lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_index_select"));
  LT_TRY(lt_index_select(a, axis, index, out));
  return record_indexed(tape, IX_TAKE, a, NULL, index, norm_axis(axis, a->rank), out);
}
lt_status lt_ad_take_along_axis(lt_tape *tape, const lt_tensor *a, const lt_tensor *index, int axis,
                                lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_take_along_axis"));
  LT_TRY(lt_take_along_axis(a, index, axis, out));
  return record_indexed(tape, IX_TAKE_ALONG, a, NULL, index, norm_axis(axis, a->rank), out);
}

lt_status lt_ad_scatter_add(lt_tape *tape, const lt_tensor *d, int axis, const lt_tensor *index,
                            const lt_tensor *src, lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_scatter_add"));
  LT_CHECK_NULL(out, "out");
  *out = NULL;
  LT_TRY(lt__check_tensor(d, "lt_ad_scatter_add: d"));
  LT_TRY(lt_tensor_contiguous(d, d->dtype, out));
  lt_status st = lt_scatter_add(*out, axis, index, src);
  if (st != LT_OK) {
    lt_tensor_destroy(*out);
    *out = NULL;
    return st;
  }
  return record_indexed(tape, IX_SCATTER_ADD, d, src, index, norm_axis(axis, d->rank), out);
}

lt_status lt_ad_where(lt_tape *tape, const lt_tensor *cond, const lt_tensor *a, const lt_tensor *b,
                      lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_where"));
  LT_TRY(lt_where(cond, a, b, out));
  const lt_tensor *ins[3] = {cond, a, b};
  return record(tape, IX_WHERE, 3, ins, 0, 1u, NULL, out);
}

lt_status lt_ad_clip(lt_tape *tape, const lt_tensor *a, const lt_tensor *lo, const lt_tensor *hi,
                     lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_clip"));
  LT_TRY(lt_clip(a, lo, hi, out));
  const lt_tensor *ins[3] = {a, lo, hi};
  return record(tape, IX_CLIP, 3, ins, 0, 7u, NULL, out);
}

/* The tape records at most LT__AD_MAX_INPUTS inputs per op; on refusal *out is destroyed. */
static lt_status check_count(lt_tape *tape, int n, const lt_tensor *const *tensors, const char *fn,
                             lt_tensor **out) {
  if (n <= LT__AD_MAX_INPUTS || !lt__ad_should_record(tape, n, tensors, *out)) return LT_OK;
  lt_tensor_destroy(*out);
  *out = NULL;
  return lt__error(LT_ERR_UNSUPPORTED, "%s: %d tensors; the tape records up to %d", fn, n,
                   LT__AD_MAX_INPUTS);
}

lt_status lt_ad_concatenate(lt_tape *tape, int n, const lt_tensor *const *tensors, int axis,
                            lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_concatenate"));
  LT_TRY(lt_concatenate(n, tensors, axis, out));
  LT_TRY(check_count(tape, n, tensors, "lt_ad_concatenate", out));
  int ax = norm_axis(axis, tensors[0]->rank);
  int64_t *off = malloc(sizeof(int64_t) * (size_t)(n + 1));
  if (off == NULL) {
    lt_tensor_destroy(*out);
    *out = NULL;
    return lt__error(LT_ERR_OUT_OF_MEMORY, "lt_ad_concatenate: out of memory");
  }
  off[0] = 0;
  for (int k = 0; k < n; k++)
    off[k + 1] = off[k] + tensors[k]->shape[ax];
  return record(tape, IX_CONCAT, n, tensors, ax, 0u, off, out);
}

lt_status lt_ad_stack(lt_tape *tape, int n, const lt_tensor *const *tensors, int axis,
                      lt_tensor **out) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_stack"));
  LT_TRY(lt_stack(n, tensors, axis, out));
  LT_TRY(check_count(tape, n, tensors, "lt_ad_stack", out));
  return record(tape, IX_STACK, n, tensors, norm_axis(axis, (*out)->rank), 0u, NULL, out);
}

lt_status lt_ad_split(lt_tape *tape, const lt_tensor *a, int axis, int n_points,
                      const int64_t *points, lt_tensor **outs) {
  LT_TRY(lt__ad_check_tape(tape, "lt_ad_split"));
  LT_TRY(lt_split(a, axis, n_points, points, outs));
  for (int i = 0; i <= n_points; i++) { /* the pieces again, as recorded slices */
    lt_tensor_destroy(outs[i]);
    outs[i] = NULL;
  }
  int ax = norm_axis(axis, a->rank);
  int64_t ext = a->shape[ax], start = 0;
  lt_status st = LT_OK;
  for (int i = 0; i <= n_points && st == LT_OK; i++) { /* as lt_split: Python slicing */
    int64_t p = i < n_points ? points[i] : ext;
    if (p < 0) p = p + ext < 0 ? 0 : p + ext;
    if (p > ext) p = ext;
    st = lt_ad_slice(tape, a, ax, start, p > start ? p : start, 1, &outs[i]);
    start = p;
  }
  if (st != LT_OK)
    for (int i = 0; i <= n_points; i++) {
      lt_tensor_destroy(outs[i]);
      outs[i] = NULL;
    }
  return st;
}

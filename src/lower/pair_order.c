/* SPDX-License-Identifier: MIT */
/* Canonical operand order for a pairwise contraction (see lt__pair_canonical_order). */
#include "lower/pair.h"

/* Position of `mode` in v, -1 if v lacks it. */
static int mode_pos(const lt__mview *v, int32_t mode) {
  for (int i = 0; i < v->rank; i++)
    if (v->mode[i] == mode) return i;
  return -1;
}

/* Orders two operands by what the lowering looks at (dtype, unary, and per dimension: extent,
 * stride, place in D and in the other operand), never by mode ids or argument position, so
 * that A.B and B.A (which label modes differently) compare alike: < 0 when x comes first. */
static int operand_cmp(const lt__pair *p, const lt__mview *x, lt_unary_op ux, const lt__mview *y,
                       lt_unary_op uy) {
  int64_t kx[3 + 4 * LT_MAX_RANK], ky[3 + 4 * LT_MAX_RANK];
  const lt__mview *v[2] = {x, y}, *other[2] = {y, x};
  int64_t *key[2] = {kx, ky};
  lt_unary_op u[2] = {ux, uy};
  for (int s = 0; s < 2; s++) {
    int64_t *k = key[s];
    int n = 0;
    k[n++] = v[s]->dtype;
    k[n++] = u[s];
    k[n++] = v[s]->rank;
    for (int i = 0; i < v[s]->rank; i++) {
      k[n++] = p->extent[v[s]->mode[i]];
      k[n++] = v[s]->stride[i];
      k[n++] = mode_pos(&p->d, v[s]->mode[i]);
      k[n++] = mode_pos(other[s], v[s]->mode[i]);
    }
  }
  int n = 3 + 4 * x->rank;
  if (y->rank != x->rank) return x->rank < y->rank ? -1 : 1;
  for (int i = 0; i < n; i++)
    if (kx[i] != ky[i]) return kx[i] < ky[i] ? -1 : 1;
  return 0;
}

void lt__pair_canonical_order(lt__pair *p) {
  if (operand_cmp(p, &p->a, p->unary[0], &p->b, p->unary[1]) <= 0) return;
  lt__mview t = p->a;
  p->a = p->b;
  p->b = t;
  lt_unary_op u = p->unary[0];
  p->unary[0] = p->unary[1];
  p->unary[1] = u;
}

/* SPDX-License-Identifier: MIT */
/* Tree refinement (cotengra's subtree reconfiguration): walk the tree's steps, most costly
 * first; around each, expand a subtree to at most `subtree` leaves by opening its costliest
 * internal nodes, re-solve that subtree exactly (lt__path_dp_items) and keep the better one. A
 * subtree's result is the same whatever its inner order, so the rest of the tree is unaffected. */
#include "core/error.h"
#include "einsum/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct tree {
  const lt__pnet *net;
  int n, nodes;
  int32_t (*child)[2]; /* internal nodes n..2n-2 */
  int32_t *parent;
  int64_t *at; /* legs in pool */
  int *cnt;
  double *size, *cost;
  lt__legpool pool;
  lt__leg *tmp;
  size_t tmp_cap;
} tree;

static lt_status node_eval(tree *t, int c) {
  int a = t->child[c][0], b = t->child[c][1];
  size_t need = (size_t)(t->cnt[a] + t->cnt[b]) + 1;
  if (need > t->tmp_cap) {
    lt__leg *grown = lt__host_realloc(t->net->ctx, t->tmp, t->tmp_cap * sizeof(lt__leg),
                                      2 * need * sizeof(lt__leg));
    LT_RETURN_IF(grown == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory refining a path");
    t->tmp = grown;
    t->tmp_cap = 2 * need;
  }
  int r = lt__legs_merge(t->net, t->pool.data + t->at[a], t->cnt[a], t->pool.data + t->at[b],
                         t->cnt[b], t->tmp, &t->size[c], &t->cost[c]);
  t->cnt[c] = r;
  return lt__legpool_push(&t->pool, t->tmp, r, &t->at[c]);
}

static int by_cost_desc(const void *x, const void *y, void *arg) {
  const double *cost = arg;
  double a = cost[*(const int32_t *)x], b = cost[*(const int32_t *)y];
  return (a < b) - (a > b);
}

/* qsort_r is not C11; a small insertion-merge sort keeps this portable. */
static void sort_nodes(int32_t *v, int m, const double *cost, int32_t *scratch) {
  if (m < 2) return;
  int h = m / 2;
  sort_nodes(v, h, cost, scratch);
  sort_nodes(v + h, m - h, cost, scratch);
  int i = 0, j = h, k = 0;
  while (i < h || j < m)
    scratch[k++] =
        (j >= m || (i < h && by_cost_desc(&v[i], &v[j], (void *)cost) <= 0)) ? v[i++] : v[j++];
  memcpy(v, scratch, sizeof(int32_t) * (size_t)m);
}

/* Re-solves the subtree around node r; *gained when it was rewritten. */
static lt_status reconfigure(tree *t, int r, int subtree, double negligible, bool *gained) {
  int32_t items[LT__DP_MAX], inner[LT__DP_MAX];
  int k = 1, m = 0;
  items[0] = r;
  while (k < subtree) {
    int best = -1;
    for (int i = 0; i < k; i++)
      if (items[i] >= t->n && (best < 0 || t->cost[items[i]] > t->cost[items[best]])) best = i;
    if (best < 0) break;
    int32_t c = items[best];
    inner[m++] = c;
    items[best] = t->child[c][0];
    items[k++] = t->child[c][1];
  }
  *gained = false;
  if (k < 3) return LT_OK;
  double cur = 0;
  for (int i = 0; i < m; i++)
    cur += t->cost[inner[i]] + t->net->mem_weight * t->size[inner[i]];
  /* A subtree that costs next to nothing can gain next to nothing: skip its exact search
   * (most of a large tree's subtrees, and the search is exponential in `subtree`). */
  if (cur < negligible) return LT_OK;
  const lt__leg *legs[LT__DP_MAX];
  int n_legs[LT__DP_MAX];
  for (int i = 0; i < k; i++) {
    legs[i] = t->pool.data + t->at[items[i]];
    n_legs[i] = t->cnt[items[i]];
  }
  int32_t local[LT__DP_MAX][2];
  double obj;
  bool found;
  LT_TRY(lt__path_dp_items(t->net, k, legs, n_legs, local, &obj, &found));
  if (!found || !(obj < cur * (1 - 1e-9))) return LT_OK;
  /* Reuse the opened nodes' ids; r (inner[0]) stays the root of the subtree. */
  int32_t id_of[2 * LT__DP_MAX];
  for (int i = 0; i < k; i++)
    id_of[i] = items[i];
  for (int s = 0; s < k - 1; s++)
    id_of[k + s] = s == k - 2 ? inner[0] : inner[s + 1];
  for (int s = 0; s < k - 1; s++) {
    int32_t c = id_of[k + s], a = id_of[local[s][0]], b = id_of[local[s][1]];
    t->child[c][0] = a;
    t->child[c][1] = b;
    t->parent[a] = t->parent[b] = c;
    LT_TRY(node_eval(t, c));
  }
  *gained = true;
  return LT_OK;
}

/* Post-order walk from the root rewriting the tree as SSA steps. */
static int emit(const tree *t, int c, int32_t (*ssa)[2], int *step) {
  if (c < t->n) return c;
  int a = emit(t, t->child[c][0], ssa, step);
  int b = emit(t, t->child[c][1], ssa, step);
  ssa[*step][0] = a;
  ssa[*step][1] = b;
  return t->n + (*step)++;
}

lt_status lt__path_refine(const lt__pnet *net, int32_t (*ssa)[2], int subtree, double deadline) {
  int n = net->n;
  if (n < 3) return LT_OK;
  if (subtree > LT__DP_MAX) subtree = LT__DP_MAX;
  lt_context *ctx = net->ctx;
  tree t = {.net = net, .n = n, .nodes = 2 * n - 1, .pool = {.ctx = ctx}};
  size_t nodes = (size_t)t.nodes;
  t.child = lt__host_alloc(ctx, sizeof(int32_t[2]) * nodes);
  t.parent = lt__host_alloc(ctx, sizeof(int32_t) * nodes);
  t.at = lt__host_alloc(ctx, sizeof(int64_t) * nodes);
  t.cnt = lt__host_alloc(ctx, sizeof(int) * nodes);
  t.size = lt__host_alloc(ctx, sizeof(double) * nodes);
  t.cost = lt__host_alloc(ctx, sizeof(double) * nodes);
  int32_t *order = lt__host_alloc(ctx, sizeof(int32_t) * nodes * 2);
  lt_status st = LT_OK;
  if (!t.child || !t.parent || !t.at || !t.cnt || !t.size || !t.cost || !order) {
    st = lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory refining a path");
    goto done;
  }
  for (int k = 0; k < n && st == LT_OK; k++) {
    t.cnt[k] = (int)(net->leg_at[k + 1] - net->leg_at[k]);
    st = lt__legpool_push(&t.pool, net->legs + net->leg_at[k], t.cnt[k], &t.at[k]);
    t.cost[k] = t.size[k] = 0;
  }
  t.parent[t.nodes - 1] = -1;
  for (int s = 0; s < n - 1 && st == LT_OK; s++) {
    int c = n + s;
    t.child[c][0] = ssa[s][0];
    t.child[c][1] = ssa[s][1];
    t.parent[ssa[s][0]] = t.parent[ssa[s][1]] = c;
    st = node_eval(&t, c);
  }
  int root = t.nodes - 1;
  for (int pass = 0; pass < 8 && st == LT_OK; pass++) {
    int m = 0;
    for (int c = n; c < t.nodes; c++)
      order[m++] = c;
    sort_nodes(order, m, t.cost, order + nodes);
    double total = 0;
    for (int c = n; c < t.nodes; c++)
      total += t.cost[c] + net->mem_weight * t.size[c];
    bool any = false;
    for (int i = 0; i < m && st == LT_OK; i++) {
      if (deadline > 0 && lt__seconds() > deadline) {
        pass = 8;
        break;
      }
      bool gained;
      st = reconfigure(&t, order[i], subtree, 1e-4 * total, &gained);
      any |= gained;
    }
    if (!any) break;
  }
  if (st == LT_OK) {
    int step = 0;
    emit(&t, root, ssa, &step);
  }
done:
  if (t.child) lt__host_free(ctx, t.child, sizeof(int32_t[2]) * nodes);
  if (t.parent) lt__host_free(ctx, t.parent, sizeof(int32_t) * nodes);
  if (t.at) lt__host_free(ctx, t.at, sizeof(int64_t) * nodes);
  if (t.cnt) lt__host_free(ctx, t.cnt, sizeof(int) * nodes);
  if (t.size) lt__host_free(ctx, t.size, sizeof(double) * nodes);
  if (t.cost) lt__host_free(ctx, t.cost, sizeof(double) * nodes);
  if (order) lt__host_free(ctx, order, sizeof(int32_t) * nodes * 2);
  if (t.tmp) lt__host_free(ctx, t.tmp, t.tmp_cap * sizeof(lt__leg));
  lt__legpool_free(&t.pool);
  return st;
}

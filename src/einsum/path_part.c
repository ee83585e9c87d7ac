/* SPDX-License-Identifier: MIT */
/* Contraction trees by recursive bisection (as cotengra's partition-based trees): split the
 * operands in two so that few label weight crosses the cut (weight log2(extent): the cut's
 * labels are the step joining the halves), recurse into each half, and solve groups of at
 * most `cutoff` operands exactly. A bisection is a breadth-first grown region refined by
 * Fiduccia-Mattheyses passes (moves of one operand at a time, best prefix kept) under a
 * balance bound; the balance, cutoff and weight noise are sampled per trial by the caller.
 * On lattices and regular graphs the greedy family builds long, thin fronts; bisection keeps
 * every intermediate's boundary near the graph's minimal cuts. */
#include "core/error.h"
#include "einsum/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct part {
  const lt__pnet *net;
  lt__rng *rng;
  lt__part_params prm;
  int n, step;
  int32_t (*ssa)[2];
  double *w;        /* per label */
  int32_t *hold;    /* label l's operands: hold[hold_at[l] .. hold_at[l+1]) */
  int64_t *hold_at; /* n_labels + 1 */
  int8_t *side;     /* per operand: -1 outside the set being split, else 0 or 1 */
  int32_t *cnt[2];  /* per label: holders on each side within the set */
  double *gain;     /* per operand: cut decrease if it changed side */
  bool *locked;
  int32_t *moves, *queue, *stamp;
  int8_t *best_side;
  int stamp_now;
  size_t bytes[13];
} part;

static double gain_of(const part *p, int v) {
  const lt__pnet *net = p->net;
  int s = p->side[v];
  double g = 0;
  for (int64_t i = net->leg_at[v]; i < net->leg_at[v + 1]; i++) {
    int32_t l = net->legs[i].label;
    int32_t a = p->cnt[s][l], b = p->cnt[1 - s][l];
    if (a == 1 && b > 0) g += p->w[l];
    if (b == 0 && a > 1) g -= p->w[l];
  }
  return g;
}

static void set_counts(part *p, const int32_t *v, int m) {
  const lt__pnet *net = p->net;
  for (int i = 0; i < m; i++)
    for (int64_t q = net->leg_at[v[i]]; q < net->leg_at[v[i] + 1]; q++)
      p->cnt[0][net->legs[q].label] = p->cnt[1][net->legs[q].label] = 0;
  for (int i = 0; i < m; i++)
    for (int64_t q = net->leg_at[v[i]]; q < net->leg_at[v[i] + 1]; q++)
      p->cnt[p->side[v[i]]][net->legs[q].label]++;
}

static double cut_of(part *p, const int32_t *v, int m) {
  const lt__pnet *net = p->net;
  double cut = 0;
  p->stamp_now++;
  for (int i = 0; i < m; i++)
    for (int64_t q = net->leg_at[v[i]]; q < net->leg_at[v[i] + 1]; q++) {
      int32_t l = net->legs[q].label;
      if (p->stamp[l] == p->stamp_now) continue;
      p->stamp[l] = p->stamp_now;
      if (p->cnt[0][l] > 0 && p->cnt[1][l] > 0) cut += p->w[l];
    }
  return cut;
}

/* Moves v to the other side, updating counts and the gains of every operand it touches. */
static void move(part *p, int v) {
  const lt__pnet *net = p->net;
  int s = p->side[v];
  p->side[v] = (int8_t)(1 - s);
  for (int64_t q = net->leg_at[v]; q < net->leg_at[v + 1]; q++) {
    int32_t l = net->legs[q].label;
    p->cnt[s][l]--;
    p->cnt[1 - s][l]++;
  }
  for (int64_t q = net->leg_at[v]; q < net->leg_at[v + 1]; q++) {
    int32_t l = net->legs[q].label;
    for (int64_t h = p->hold_at[l]; h < p->hold_at[l + 1]; h++)
      if (p->side[p->hold[h]] >= 0) p->gain[p->hold[h]] = gain_of(p, p->hold[h]);
  }
  p->gain[v] = gain_of(p, v);
}

/* Side 0 grows breadth-first from random operands to `target` members; the rest is side 1. */
static void grow(part *p, const int32_t *v, int m, int target) {
  const lt__pnet *net = p->net;
  for (int i = 0; i < m; i++)
    p->side[v[i]] = 1;
  int have = 0, head = 0, tail = 0;
  while (have < target) {
    if (head == tail) {
      int start = v[lt__rng_next(p->rng) % (uint64_t)m];
      for (int i = 0; p->side[start] == 0; i++)
        start = v[(i + 1) % m];
      p->side[start] = 0;
      have++;
      p->queue[tail++] = start;
      continue;
    }
    int u = p->queue[head++];
    for (int64_t q = net->leg_at[u]; q < net->leg_at[u + 1] && have < target; q++) {
      int32_t l = net->legs[q].label;
      for (int64_t h = p->hold_at[l]; h < p->hold_at[l + 1] && have < target; h++) {
        int x = p->hold[h];
        if (p->side[x] != 1) continue;
        p->side[x] = 0;
        have++;
        p->queue[tail++] = x;
      }
    }
  }
}

/* Fiduccia-Mattheyses passes on the current split; sides stay within [lo, m - lo]. */
static void refine(part *p, const int32_t *v, int m, int lo) {
  set_counts(p, v, m);
  int size[2] = {0, 0};
  for (int i = 0; i < m; i++) {
    size[p->side[v[i]]]++;
    p->gain[v[i]] = gain_of(p, v[i]);
  }
  for (int pass = 0; pass < 6; pass++) {
    for (int i = 0; i < m; i++)
      p->locked[v[i]] = false;
    double run = 0, best = 0;
    int n_moves = 0, best_at = 0;
    while (n_moves < m && n_moves - best_at < 50) {
      int pick = -1;
      for (int i = 0; i < m; i++) {
        int x = v[i];
        if (p->locked[x] || size[p->side[x]] - 1 < lo) continue;
        if (pick < 0 || p->gain[x] > p->gain[pick]) pick = x;
      }
      if (pick < 0) break;
      run += p->gain[pick];
      size[p->side[pick]]--;
      size[1 - p->side[pick]]++;
      move(p, pick);
      p->locked[pick] = true;
      p->moves[n_moves++] = pick;
      if (run > best + 1e-9) best = run, best_at = n_moves;
    }
    while (n_moves > best_at) {
      int x = p->moves[--n_moves];
      size[p->side[x]]--;
      size[1 - p->side[x]]++;
      move(p, x);
    }
    if (best_at == 0) break;
  }
}

/* Leaves: the exact optimum over the group's operands, as steps over global ids. */
static lt_status solve_leaf(part *p, const int32_t *v, int m, int *id) {
  const lt__pnet *net = p->net;
  const lt__leg *legs[LT__DP_MAX];
  int n_legs[LT__DP_MAX];
  int32_t local[LT__DP_MAX][2], gid[2 * LT__DP_MAX];
  for (int i = 0; i < m; i++) {
    legs[i] = net->legs + net->leg_at[v[i]];
    n_legs[i] = (int)(net->leg_at[v[i] + 1] - net->leg_at[v[i]]);
    gid[i] = v[i];
  }
  double obj;
  bool found;
  LT_TRY(lt__path_dp_items(net, m, legs, n_legs, local, &obj, &found));
  /* None found: every order of the group exceeds net->limit or the double range (the DP
   * compares doubles). The written order keeps the tree whole; the caller judges it. */
  for (int s = 0; !found && s < m - 1; s++) {
    local[s][0] = s == 0 ? 0 : m + s - 1;
    local[s][1] = s + 1;
  }
  for (int s = 0; s < m - 1; s++) {
    p->ssa[p->step][0] = gid[local[s][0]];
    p->ssa[p->step][1] = gid[local[s][1]];
    gid[m + s] = p->n + p->step++;
  }
  *id = gid[2 * m - 2];
  return LT_OK;
}

/* Splits v[0..m) (reordered: side 0 first) and recurses; *id gets the subtree's node. */
static lt_status split(part *p, int32_t *v, int m, int *id) {
  if (m == 1) {
    *id = v[0];
    return LT_OK;
  }
  if (m <= p->prm.cutoff) return solve_leaf(p, v, m, id);
  int half = m / 2;
  int lo = (int)floor(half * (1 - p->prm.imbalance));
  if (lo < 1) lo = 1;
  double best_cut = INFINITY;
  for (int start = 0; start < p->prm.starts; start++) {
    grow(p, v, m, half);
    refine(p, v, m, lo);
    double cut = cut_of(p, v, m);
    if (cut < best_cut) {
      best_cut = cut;
      for (int i = 0; i < m; i++)
        p->best_side[v[i]] = p->side[v[i]];
    }
  }
  /* Stable in-place order: side 0 to the front (queue as scratch). */
  int ma = 0, mb = 0;
  for (int i = 0; i < m; i++)
    if (p->best_side[v[i]] == 0)
      v[ma++] = v[i];
    else
      p->queue[mb++] = v[i];
  memcpy(v + ma, p->queue, sizeof(int32_t) * (size_t)mb);
  for (int i = 0; i < m; i++)
    p->side[v[i]] = -1;
  int a, b;
  LT_TRY(split(p, v, ma, &a));
  LT_TRY(split(p, v + ma, mb, &b));
  p->ssa[p->step][0] = a;
  p->ssa[p->step][1] = b;
  *id = p->n + p->step++;
  return LT_OK;
}

static void part_free(part *p) {
  lt_context *ctx = p->net->ctx;
  void *ptr[13] = {p->w,      p->hold,  p->hold_at, p->side,      p->cnt[0], p->cnt[1], p->gain,
                   p->locked, p->moves, p->queue,   p->best_side, p->stamp,  NULL};
  for (int i = 0; i < 12; i++)
    if (ptr[i]) lt__host_free(ctx, ptr[i], p->bytes[i]);
}

lt_status lt__path_partition(const lt__pnet *net, const lt__part_params *prm, lt__rng *rng,
                             int32_t (*ssa)[2], bool *found) {
  *found = false;
  int n = net->n, L = net->n_labels;
  if (n < 2) {
    *found = true;
    return LT_OK;
  }
  LT_RETURN_IF(prm->cutoff < 2 || prm->cutoff > LT__DP_MAX || prm->starts < 1 ||
                   !(prm->imbalance >= 0 && prm->imbalance < 1),
               LT_ERR_INTERNAL, "einsum: partition parameters out of range");
  lt_context *ctx = net->ctx;
  part p = {.net = net, .rng = rng, .prm = *prm, .n = n, .ssa = ssa};
  int64_t n_legs = net->leg_at[n];
  size_t un = (size_t)n, ul = (size_t)L + 1;
  size_t sizes[12] = {sizeof(double) * ul,  sizeof(int32_t) * (size_t)(n_legs + 1),
                      sizeof(int64_t) * ul, sizeof(int8_t) * un,
                      sizeof(int32_t) * ul, sizeof(int32_t) * ul,
                      sizeof(double) * un,  sizeof(bool) * un,
                      sizeof(int32_t) * un, sizeof(int32_t) * un,
                      sizeof(int8_t) * un,  sizeof(int32_t) * ul};
  memcpy(p.bytes, sizes, sizeof sizes);
  p.w = lt__host_alloc(ctx, sizes[0]);
  p.hold = lt__host_alloc(ctx, sizes[1]);
  p.hold_at = lt__host_calloc(ctx, 1, sizes[2]);
  p.side = lt__host_alloc(ctx, sizes[3]);
  p.cnt[0] = lt__host_alloc(ctx, sizes[4]);
  p.cnt[1] = lt__host_alloc(ctx, sizes[5]);
  p.gain = lt__host_alloc(ctx, sizes[6]);
  p.locked = lt__host_alloc(ctx, sizes[7]);
  p.moves = lt__host_alloc(ctx, sizes[8]);
  p.queue = lt__host_alloc(ctx, sizes[9]);
  p.best_side = lt__host_alloc(ctx, sizes[10]);
  p.stamp = lt__host_calloc(ctx, 1, sizes[11]);
  int32_t *order = lt__host_alloc(ctx, sizeof(int32_t) * un);
  lt_status st = LT_OK;
  if (!p.w || !p.hold || !p.hold_at || !p.side || !p.cnt[0] || !p.cnt[1] || !p.gain || !p.locked ||
      !p.moves || !p.queue || !p.best_side || !p.stamp || !order) {
    st = lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the partition search");
  } else {
    /* Extent-1 labels keep a little weight, so that connected operands still attract. */
    for (int l = 0; l < L; l++)
      p.w[l] = (log2(net->extent[l]) + 0.05) * (1 + prm->noise * lt__rng_uniform(rng));
    for (int64_t i = 0; i < n_legs; i++)
      p.hold_at[net->legs[i].label + 1]++;
    for (int l = 0; l < L; l++)
      p.hold_at[l + 1] += p.hold_at[l];
    memset(p.cnt[0], 0, sizes[4]); /* as a fill cursor per label */
    for (int k = 0; k < n; k++)
      for (int64_t i = net->leg_at[k]; i < net->leg_at[k + 1]; i++) {
        int32_t l = net->legs[i].label;
        p.hold[p.hold_at[l] + p.cnt[0][l]++] = k;
      }
    for (int k = 0; k < n; k++)
      p.side[k] = -1, order[k] = k;
    int root;
    st = split(&p, order, n, &root);
    if (st == LT_OK) *found = p.step == n - 1;
    if (st == LT_OK && !*found)
      st = lt__error(LT_ERR_INTERNAL, "einsum: partition tree incomplete");
  }
  if (order) lt__host_free(ctx, order, sizeof(int32_t) * un);
  part_free(&p);
  return st;
}

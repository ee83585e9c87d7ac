/* SPDX-License-Identifier: MIT */
/* Exact searches: dynamic programming over every subset of a few items (whole small
 * networks, and subtrees during refinement), and the O(n^3) matrix-chain order for networks
 * shaped as a line. */
#include "core/error.h"
#include "einsum/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Subsets' labels as bits over the items' distinct labels (when at most 128), so that a
 * split's cost is size(a) * size(b) / (extents a and b share): a few multiplications. */
typedef struct lmask {
  uint64_t w[2];
} lmask;

typedef struct dp_state {
  double *obj, *size;
  lmask *mask;
  uint32_t *split;
  int64_t *at;
  int *cnt;
  int k, next;
  int32_t (*ssa)[2];
} dp_state;

static int dp_emit(dp_state *d, uint32_t s) {
  if ((s & (s - 1)) == 0) return __builtin_ctz(s);
  uint32_t a = d->split[s];
  int ia = dp_emit(d, a), ib = dp_emit(d, s & ~a);
  int step = d->next++;
  d->ssa[step][0] = ia;
  d->ssa[step][1] = ib;
  return d->k + step;
}

lt_status lt__path_dp_items(const lt__pnet *net, int k, const lt__leg *const *legs,
                            const int *n_legs, int32_t (*ssa)[2], double *objective, bool *found) {
  *found = false;
  LT_RETURN_IF(k < 1 || k > LT__DP_MAX, LT_ERR_INTERNAL, "einsum: %d items for the exact search",
               k);
  if (k == 1) {
    *found = true;
    *objective = 0;
    return LT_OK;
  }
  size_t m = (size_t)1 << k;
  lt_context *ctx = net->ctx;
  dp_state d = {.k = k, .ssa = ssa};
  d.obj = lt__host_alloc(ctx, m * sizeof(double));
  d.size = lt__host_alloc(ctx, m * sizeof(double));
  d.split = lt__host_alloc(ctx, m * sizeof(uint32_t));
  d.at = lt__host_alloc(ctx, m * sizeof(int64_t));
  d.cnt = lt__host_alloc(ctx, m * sizeof(int));
  d.mask = lt__host_alloc(ctx, m * sizeof(lmask));
  int32_t local[128];
  double local_ext[128];
  int n_local = 0;
  bool masks = true;
  for (int i = 0; i < k && masks; i++)
    for (int q = 0; q < n_legs[i] && masks; q++) {
      int32_t l = legs[i][q].label;
      int f = 0;
      while (f < n_local && local[f] != l)
        f++;
      if (f == n_local) {
        if (n_local == 128)
          masks = false;
        else
          local[n_local] = l, local_ext[n_local++] = net->extent[l];
      }
    }
  lt__legpool pool = {.ctx = ctx};
  lt__leg *tmp = NULL;
  int tmp_n = 0;
  for (int i = 0; i < k; i++)
    tmp_n += n_legs[i];
  tmp = lt__host_alloc(ctx, sizeof(lt__leg) * (size_t)(tmp_n + 1));
  lt_status st = LT_OK;
  if (!d.obj || !d.size || !d.split || !d.at || !d.cnt || !d.mask || !tmp)
    st = lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the exact path search");
  uint32_t full = (uint32_t)(m - 1);
  for (uint32_t s = 1; s <= full && st == LT_OK; s++) {
    uint32_t low = s & -s;
    d.split[s] = 0;
    if (s == low) {
      int i = __builtin_ctz(s);
      if (masks) {
        d.mask[s] = (lmask){{0, 0}};
        for (int q = 0; q < n_legs[i]; q++) {
          int f = 0;
          while (local[f] != legs[i][q].label)
            f++;
          d.mask[s].w[f / 64] |= 1ull << (f % 64);
        }
      }
      st = lt__legpool_push(&pool, legs[i], n_legs[i], &d.at[s]);
      d.cnt[s] = n_legs[i];
      d.size[s] = lt__legs_size(net, legs[i], n_legs[i]);
      d.obj[s] = 0;
      continue;
    }
    uint32_t rest = s & ~low;
    double size, cost;
    int r = lt__legs_merge(net, pool.data + d.at[rest], d.cnt[rest], pool.data + d.at[low],
                           d.cnt[low], tmp, &size, &cost);
    st = lt__legpool_push(&pool, tmp, r, &d.at[s]);
    d.cnt[s] = r;
    d.size[s] = size;
    d.obj[s] = INFINITY;
    if (masks) {
      d.mask[s] = (lmask){{0, 0}};
      for (int q = 0; q < r; q++) {
        int f = 0;
        while (local[f] != tmp[q].label)
          f++;
        d.mask[s].w[f / 64] |= 1ull << (f % 64);
      }
    }
    if (net->limit > 0 && s != full && size > net->limit) continue;
    double best = INFINITY;
    for (uint32_t a = (s - 1) & s; a; a = (a - 1) & s) {
      if (!(a & low)) continue;
      uint32_t b = s & ~a;
      double c = d.obj[a] + d.obj[b];
      if (!(c < best)) continue;
      double u;
      if (masks) {
        double shared = 1;
        for (int w = 0; w < 2; w++)
          for (uint64_t x = d.mask[a].w[w] & d.mask[b].w[w]; x; x &= x - 1)
            shared *= local_ext[w * 64 + __builtin_ctzll(x)];
        u = d.size[a] * d.size[b] / shared;
      } else {
        u = lt__legs_union_extent(net, pool.data + d.at[a], d.cnt[a], pool.data + d.at[b], d.cnt[b],
                                  false);
      }
      c += u + net->mem_weight * size;
      if (c < best) best = c, d.split[s] = a;
    }
    d.obj[s] = best;
  }
  if (st == LT_OK && d.obj[full] < INFINITY) {
    *found = true;
    *objective = d.obj[full];
    dp_emit(&d, full);
  }
  lt__legpool_free(&pool);
  if (tmp) lt__host_free(ctx, tmp, sizeof(lt__leg) * (size_t)(tmp_n + 1));
  if (d.obj) lt__host_free(ctx, d.obj, m * sizeof(double));
  if (d.size) lt__host_free(ctx, d.size, m * sizeof(double));
  if (d.split) lt__host_free(ctx, d.split, m * sizeof(uint32_t));
  if (d.at) lt__host_free(ctx, d.at, m * sizeof(int64_t));
  if (d.cnt) lt__host_free(ctx, d.cnt, m * sizeof(int));
  if (d.mask) lt__host_free(ctx, d.mask, m * sizeof(lmask));
  return st;
}

lt_status lt__path_dp(const lt__pnet *net, int32_t (*ssa)[2], bool *found) {
  const lt__leg *legs[LT__DP_MAX];
  int n_legs[LT__DP_MAX];
  for (int i = 0; i < net->n; i++) {
    legs[i] = net->legs + net->leg_at[i];
    n_legs[i] = (int)(net->leg_at[i + 1] - net->leg_at[i]);
  }
  double obj;
  return lt__path_dp_items(net, net->n, legs, n_legs, ssa, &obj, found);
}

/* ---- matrix chains ---- */

/* Chains longer than this are left to the greedy search and refinement (the DP is cubic). */
#define CHAIN_MAX 300

/* The operands in line order if the network is a line, else false. order has n entries. */
static bool chain_order(const lt__pnet *net, int *order, int *nb) {
  int n = net->n;
  /* nb[2k], nb[2k+1]: operand k's neighbours (-1 = none) */
  for (int k = 0; k < 2 * n; k++)
    nb[k] = -1;
  /* first holder of each label, found by scanning operands in order */
  for (int k = 0; k < n; k++)
    for (int64_t i = net->leg_at[k]; i < net->leg_at[k + 1]; i++) {
      int32_t l = net->legs[i].label;
      for (int j = k + 1; j < n; j++) {
        bool has = false;
        for (int64_t q = net->leg_at[j]; q < net->leg_at[j + 1] && !has; q++)
          has = net->legs[q].label == l;
        if (!has) continue;
        /* a label on three operands is no chain; j is k's neighbour through l */
        for (int j2 = j + 1; j2 < n; j2++)
          for (int64_t q = net->leg_at[j2]; q < net->leg_at[j2 + 1]; q++)
            if (net->legs[q].label == l) return false;
        int *pk = nb[2 * k] == j || nb[2 * k] < 0 ? &nb[2 * k] : &nb[2 * k + 1];
        int *pj = nb[2 * j] == k || nb[2 * j] < 0 ? &nb[2 * j] : &nb[2 * j + 1];
        if ((*pk >= 0 && *pk != j) || (*pj >= 0 && *pj != k)) return false;
        *pk = j;
        *pj = k;
        break;
      }
    }
  int start = -1;
  for (int k = 0; k < n && start < 0; k++)
    if (nb[2 * k + 1] < 0 && nb[2 * k] >= 0) start = k;
  if (start < 0) return false;
  int prev = -1, cur = start;
  for (int i = 0; i < n; i++) {
    if (cur < 0) return false;
    order[i] = cur;
    int next = nb[2 * cur] != prev ? nb[2 * cur] : nb[2 * cur + 1];
    prev = cur;
    cur = next;
  }
  return cur < 0;
}

typedef struct chain_state {
  int n;
  const int *order;
  int32_t *split;
  int next;
  int32_t (*ssa)[2];
} chain_state;

static int chain_emit(chain_state *c, int i, int j) {
  if (i == j) return c->order[i];
  int k = c->split[(size_t)i * (size_t)c->n + (size_t)j];
  int a = chain_emit(c, i, k), b = chain_emit(c, k + 1, j);
  int step = c->next++;
  c->ssa[step][0] = a;
  c->ssa[step][1] = b;
  return c->n + step;
}

lt_status lt__path_chain(const lt__pnet *net, int32_t (*ssa)[2], bool *is_chain) {
  int n = net->n;
  *is_chain = false;
  if (n < 3 || n > CHAIN_MAX) return LT_OK;
  lt_context *ctx = net->ctx;
  size_t nn = (size_t)n * (size_t)n;
  int *order = lt__host_alloc(ctx, sizeof(int) * (size_t)n * 3);
  double *size = lt__host_alloc(ctx, sizeof(double) * nn);
  double *obj = lt__host_alloc(ctx, sizeof(double) * nn);
  int32_t *split = lt__host_alloc(ctx, sizeof(int32_t) * nn);
  double *bond = lt__host_alloc(ctx, sizeof(double) * (size_t)n);
  int64_t max_legs = net->leg_at[n] + 1;
  lt__leg *run = lt__host_alloc(ctx, sizeof(lt__leg) * (size_t)max_legs * 2);
  lt_status st = LT_OK;
  if (!order || !size || !obj || !split || !bond || !run) {
    st = lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the matrix-chain search");
    goto done;
  }
  if (!chain_order(net, order, order + n)) goto done;
  *is_chain = true;
  /* bond[i]: product of the labels order[i] and order[i+1] share */
  for (int i = 0; i + 1 < n; i++) {
    const lt__leg *a = net->legs + net->leg_at[order[i]];
    const lt__leg *b = net->legs + net->leg_at[order[i + 1]];
    int na = (int)(net->leg_at[order[i] + 1] - net->leg_at[order[i]]);
    int nb = (int)(net->leg_at[order[i + 1] + 1] - net->leg_at[order[i + 1]]);
    double u = lt__legs_union_extent(net, a, na, b, nb, false);
    bond[i] = lt__legs_size(net, a, na) * lt__legs_size(net, b, nb) / u;
  }
  /* segment sizes by growing each segment one operand at a time */
  for (int i = 0; i < n; i++) {
    lt__leg *cur = run, *nxt = run + max_legs;
    int k = order[i];
    int cn = (int)(net->leg_at[k + 1] - net->leg_at[k]);
    memcpy(cur, net->legs + net->leg_at[k], sizeof(lt__leg) * (size_t)cn);
    size[(size_t)i * n + i] = lt__legs_size(net, cur, cn);
    for (int j = i + 1; j < n; j++) {
      int kj = order[j];
      double sz, cost;
      cn = lt__legs_merge(net, cur, cn, net->legs + net->leg_at[kj],
                          (int)(net->leg_at[kj + 1] - net->leg_at[kj]), nxt, &sz, &cost);
      size[(size_t)i * n + j] = sz;
      lt__leg *t = cur;
      cur = nxt;
      nxt = t;
    }
  }
  for (int len = 1; len <= n; len++)
    for (int i = 0; i + len - 1 < n; i++) {
      int j = i + len - 1;
      size_t ij = (size_t)i * n + j;
      obj[ij] = len == 1 ? 0 : INFINITY;
      if (len == 1) continue;
      if (net->limit > 0 && len < n && size[ij] > net->limit) continue;
      for (int k = i; k < j; k++) {
        size_t l = (size_t)i * n + k, r = (size_t)(k + 1) * n + j;
        double c = obj[l] + obj[r] + size[l] * size[r] / bond[k] + net->mem_weight * size[ij];
        if (c < obj[ij]) obj[ij] = c, split[ij] = k;
      }
    }
  if (obj[n - 1] < INFINITY) {
    chain_state c = {n, order, split, 0, ssa};
    chain_emit(&c, 0, n - 1);
  } else {
    *is_chain = false;
  }
done:
  if (order) lt__host_free(ctx, order, sizeof(int) * (size_t)n * 3);
  if (size) lt__host_free(ctx, size, sizeof(double) * nn);
  if (obj) lt__host_free(ctx, obj, sizeof(double) * nn);
  if (split) lt__host_free(ctx, split, sizeof(int32_t) * nn);
  if (bond) lt__host_free(ctx, bond, sizeof(double) * (size_t)n);
  if (run) lt__host_free(ctx, run, sizeof(lt__leg) * (size_t)max_legs * 2);
  return st;
}

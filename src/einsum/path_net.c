/* SPDX-License-Identifier: MIT */
/* The network the path searches see (legs per operand), tree evaluation, and the conversions
 * between SSA trees and NumPy-style paths. */
#include "core/error.h"
#include "einsum/path.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double lt__seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* splitmix64: small, fast, and good enough to sample greedy perturbations. */
uint64_t lt__rng_next(lt__rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double lt__rng_uniform(lt__rng *r) { return ((double)(lt__rng_next(r) >> 11) + 0.5) * 0x1p-53; }

lt_status lt__legpool_push(lt__legpool *p, const lt__leg *legs, int n, int64_t *at) {
  /* The first push allocates even when it holds no legs, so that later pointers into the
   * pool never offset a NULL base (undefined behaviour; UBSan's fuzz runs caught it). */
  if (p->data == NULL || p->len + (size_t)n > p->cap) {
    size_t cap = 2 * (p->len + (size_t)n) + 64;
    lt__leg *grown =
        lt__host_realloc(p->ctx, p->data, p->cap * sizeof *p->data, cap * sizeof *p->data);
    LT_RETURN_IF(grown == NULL, LT_ERR_OUT_OF_MEMORY,
                 "einsum: out of memory (%zu bytes) searching a contraction path",
                 cap * sizeof *p->data);
    p->data = grown;
    p->cap = cap;
  }
  if (n) memcpy(p->data + p->len, legs, sizeof *legs * (size_t)n);
  *at = (int64_t)p->len;
  p->len += (size_t)n;
  return LT_OK;
}

void lt__legpool_free(lt__legpool *p) {
  if (p->data) lt__host_free(p->ctx, p->data, p->cap * sizeof *p->data);
  p->data = NULL;
  p->len = p->cap = 0;
}

void lt__pnet_free(lt__pnet *net) {
  lt_context *ctx = net->ctx;
  if (net->extent) lt__host_free(ctx, net->extent, sizeof(double) * (size_t)(net->n_labels + 1));
  if (net->total) lt__host_free(ctx, net->total, sizeof(int32_t) * (size_t)(net->n_labels + 1));
  if (net->leg_at) lt__host_free(ctx, net->leg_at, sizeof(int64_t) * (size_t)(net->n + 1));
  if (net->legs) lt__host_free(ctx, net->legs, net->legs_bytes);
  memset(net, 0, sizeof *net);
}

lt_status lt__pnet_init(lt__pnet *net, lt_context *ctx, int n, int n_labels, const int64_t *extent,
                        const int *rank, const int32_t *const *modes, int rank_out,
                        const int32_t *modes_out) {
  memset(net, 0, sizeof *net);
  net->ctx = ctx;
  net->n = n;
  net->n_labels = n_labels;
  int64_t n_legs = 0;
  for (int k = 0; k < n; k++)
    n_legs += rank[k];
  net->legs_bytes = sizeof(lt__leg) * (size_t)(n_legs + 1);
  net->extent = lt__host_alloc(ctx, sizeof(double) * (size_t)(n_labels + 1));
  net->total = lt__host_calloc(ctx, (size_t)n_labels + 1, sizeof(int32_t));
  net->leg_at = lt__host_alloc(ctx, sizeof(int64_t) * (size_t)(n + 1));
  net->legs = lt__host_alloc(ctx, net->legs_bytes);
  if (!net->extent || !net->total || !net->leg_at || !net->legs) {
    lt__pnet_free(net);
    return lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the path search");
  }
  for (int l = 0; l < n_labels; l++)
    net->extent[l] = (double)extent[l];
  int64_t at = 0;
  for (int k = 0; k < n; k++) {
    net->leg_at[k] = at;
    for (int i = 0; i < rank[k]; i++) {
      int32_t m = modes[k][i];
      bool seen = false;
      for (int64_t j = net->leg_at[k]; j < at && !seen; j++)
        seen = net->legs[j].label == m;
      if (seen) continue;
      /* insertion keeps each operand's legs sorted by label */
      int64_t j = at++;
      while (j > net->leg_at[k] && net->legs[j - 1].label > m) {
        net->legs[j] = net->legs[j - 1];
        j--;
      }
      net->legs[j] = (lt__leg){m, 1};
      net->total[m]++;
    }
  }
  net->leg_at[n] = at;
  for (int i = 0; i < rank_out; i++)
    net->total[modes_out[i]]++;
  return LT_OK;
}

double lt__legs_size(const lt__pnet *net, const lt__leg *a, int na) {
  double s = 1;
  for (int i = 0; i < na; i++)
    s *= net->extent[a[i].label];
  return s;
}

int lt__legs_merge(const lt__pnet *net, const lt__leg *a, int na, const lt__leg *b, int nb,
                   lt__leg *out, double *size, double *cost) {
  int i = 0, j = 0, n = 0;
  double s = 1, c = 1;
  while (i < na || j < nb) {
    lt__leg l;
    if (j >= nb || (i < na && a[i].label < b[j].label))
      l = a[i++];
    else if (i >= na || b[j].label < a[i].label)
      l = b[j++];
    else
      l = (lt__leg){a[i].label, a[i].count + b[j].count}, i++, j++;
    double e = net->extent[l.label];
    c *= e;
    if (l.count < net->total[l.label]) {
      out[n++] = l;
      s *= e;
    }
  }
  *size = s;
  *cost = c;
  return n;
}

double lt__log2_add(double a, double b) {
  if (a < b) {
    double t = a;
    a = b;
    b = t;
  }
  if (b == -INFINITY) return a;
  return a + log1p(exp2(b - a)) / 0.69314718055994530942 /* ln 2 */;
}

bool lt__tree_cost_less(const lt__tree_cost *a, const lt__tree_cost *b) {
  /* Plain sums while both are finite (exact comparisons, ties included); logs beyond. */
  if (isfinite(a->objective) && isfinite(b->objective)) return a->objective < b->objective;
  return a->log2_objective < b->log2_objective;
}

static double legs_log2(const lt__pnet *net, const lt__leg *a, int na) {
  double s = 0;
  for (int i = 0; i < na; i++)
    s += log2(net->extent[a[i].label]);
  return s;
}

double lt__legs_union_extent(const lt__pnet *net, const lt__leg *a, int na, const lt__leg *b,
                             int nb, bool as_log2) {
  int i = 0, j = 0;
  double c = as_log2 ? 0 : 1;
  while (i < na || j < nb) {
    int32_t l;
    if (j >= nb || (i < na && a[i].label < b[j].label))
      l = a[i++].label;
    else if (i >= na || b[j].label < a[i].label)
      l = b[j++].label;
    else
      l = a[i].label, i++, j++;
    if (as_log2)
      c += log2(net->extent[l]);
    else
      c *= net->extent[l];
  }
  return c;
}

lt_status lt__tree_eval(const lt__pnet *net, const int32_t (*ssa)[2], const bool *sliced,
                        lt__tree_cost *out, double *step_cost, double *step_size) {
  int n = net->n;
  memset(out, 0, sizeof *out);
  if (n < 2) return LT_OK;
  lt__pnet view = *net;
  double slices = 1;
  if (sliced) {
    view.extent = lt__host_alloc(net->ctx, sizeof(double) * (size_t)net->n_labels + 1);
    LT_RETURN_IF(view.extent == NULL, LT_ERR_OUT_OF_MEMORY,
                 "einsum: out of memory for the path search");
    for (int l = 0; l < net->n_labels; l++) {
      view.extent[l] = sliced[l] ? 1.0 : net->extent[l];
      if (sliced[l]) slices *= net->extent[l];
    }
  }
  lt__legpool pool = {.ctx = net->ctx};
  double l2_cost = -INFINITY, l2_written = -INFINITY;
  size_t at_bytes = sizeof(int64_t) * (size_t)(2 * n);
  int64_t *at = lt__host_alloc(net->ctx, at_bytes);
  int *cnt = lt__host_alloc(net->ctx, sizeof(int) * (size_t)(2 * n));
  lt__leg *tmp = NULL;
  size_t tmp_n = 0;
  lt_status st = at && cnt ? LT_OK : LT_ERR_OUT_OF_MEMORY;
  if (st != LT_OK) lt__error(st, "einsum: out of memory for the path search");
  for (int k = 0; k < n && st == LT_OK; k++) {
    at[k] = net->leg_at[k];
    cnt[k] = (int)(net->leg_at[k + 1] - net->leg_at[k]);
  }
  /* Operand legs live in net->legs; results in the pool (told apart by id). */
  for (int s = 0; s < n - 1 && st == LT_OK; s++) {
    int a = ssa[s][0], b = ssa[s][1];
    /* A result with no legs may sit in a pool that has none yet: no offset on a NULL base. */
    const lt__leg *la = a < n ? net->legs + at[a] : pool.data ? pool.data + at[a] : NULL;
    const lt__leg *lb = b < n ? net->legs + at[b] : pool.data ? pool.data + at[b] : NULL;
    size_t need = (size_t)(cnt[a] + cnt[b]) + 1;
    if (need > tmp_n) {
      lt__leg *grown = lt__host_realloc(net->ctx, tmp, tmp_n * sizeof *tmp, need * sizeof *tmp);
      if (grown == NULL) {
        st = lt__error(LT_ERR_OUT_OF_MEMORY, "einsum: out of memory for the path search");
        break;
      }
      tmp = grown;
      tmp_n = need;
    }
    double size, cost;
    int r = lt__legs_merge(&view, la, cnt[a], lb, cnt[b], tmp, &size, &cost);
    /* before the push: la and lb may point into the pool, which the push may move */
    l2_cost = lt__log2_add(
        l2_cost,
        isfinite(cost) ? log2(cost) : lt__legs_union_extent(&view, la, cnt[a], lb, cnt[b], true));
    l2_written = lt__log2_add(l2_written, isfinite(size) ? log2(size) : legs_log2(&view, tmp, r));
    st = lt__legpool_push(&pool, tmp, r, &at[n + s]);
    cnt[n + s] = r;
    out->cost += cost;
    out->written += size;
    if (s + 1 < n - 1 && size > out->largest) out->largest = size;
    if (step_cost) step_cost[s] = cost;
    if (step_size) step_size[s] = size;
  }
  out->cost *= slices;
  out->written *= slices;
  out->objective = out->cost + net->mem_weight * out->written;
  out->log2_cost = l2_cost + log2(slices);
  out->log2_objective =
      net->mem_weight > 0
          ? lt__log2_add(out->log2_cost, log2(net->mem_weight) + l2_written + log2(slices))
          : out->log2_cost;
  if (tmp) lt__host_free(net->ctx, tmp, tmp_n * sizeof *tmp);
  lt__legpool_free(&pool);
  if (at) lt__host_free(net->ctx, at, at_bytes);
  if (cnt) lt__host_free(net->ctx, cnt, sizeof(int) * (size_t)(2 * n));
  if (sliced) lt__host_free(net->ctx, view.extent, sizeof(double) * (size_t)net->n_labels + 1);
  return st;
}

lt_status lt__ssa_to_positions(lt_context *ctx, int n, const int32_t (*ssa)[2], int64_t (*pos)[2]) {
  int32_t *list = lt__host_alloc(ctx, sizeof(int32_t) * (size_t)n);
  LT_RETURN_IF(list == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory converting a path");
  int len = n;
  for (int k = 0; k < n; k++)
    list[k] = k;
  for (int s = 0; s < n - 1; s++) {
    int i = -1, j = -1;
    for (int k = 0; k < len; k++) {
      if (list[k] == ssa[s][0]) i = k;
      if (list[k] == ssa[s][1]) j = k;
    }
    if (i > j) {
      int t = i;
      i = j;
      j = t;
    }
    pos[s][0] = i;
    pos[s][1] = j;
    memmove(list + j, list + j + 1, sizeof(int32_t) * (size_t)(len - j - 1));
    memmove(list + i, list + i + 1, sizeof(int32_t) * (size_t)(len - i - 2));
    len -= 2;
    list[len++] = n + s;
  }
  lt__host_free(ctx, list, sizeof(int32_t) * (size_t)n);
  return LT_OK;
}

lt_status lt__positions_to_ssa(lt_context *ctx, int n, int64_t n_pairs, const int64_t (*pos)[2],
                               int32_t (*ssa)[2]) {
  LT_RETURN_IF(n_pairs != n - 1, LT_ERR_INVALID_ARGUMENT,
               "einsum: the explicit path has %lld pairs, but %d operands take %d",
               (long long)n_pairs, n, n - 1);
  int32_t *list = lt__host_alloc(ctx, sizeof(int32_t) * (size_t)n);
  LT_RETURN_IF(list == NULL, LT_ERR_OUT_OF_MEMORY, "einsum: out of memory converting a path");
  int len = n;
  for (int k = 0; k < n; k++)
    list[k] = k;
  lt_status st = LT_OK;
  for (int s = 0; s < n - 1; s++) {
    int64_t i = pos[s][0], j = pos[s][1];
    if (i < 0 || j < 0 || i >= len || j >= len) {
      st = lt__error(LT_ERR_INVALID_ARGUMENT,
                     "einsum: explicit path pair %d (%lld, %lld) names a position outside [0, %d) "
                     "(%d operands remain at that step)",
                     s, (long long)i, (long long)j, len, len);
      break;
    }
    if (i == j) {
      st = lt__error(LT_ERR_INVALID_ARGUMENT,
                     "einsum: explicit path pair %d (%lld, %lld) contracts an operand with itself",
                     s, (long long)i, (long long)j);
      break;
    }
    if (i > j) {
      int64_t t = i;
      i = j;
      j = t;
    }
    ssa[s][0] = list[i];
    ssa[s][1] = list[j];
    memmove(list + j, list + j + 1, sizeof(int32_t) * (size_t)(len - j - 1));
    memmove(list + i, list + i + 1, sizeof(int32_t) * (size_t)(len - i - 2));
    len -= 2;
    list[len++] = n + s;
  }
  lt__host_free(ctx, list, sizeof(int32_t) * (size_t)n);
  return st;
}

/* Contraction path: the order in which pairs of operands are contracted. Cost model: a step
 * costs 2 * (product of the extents of every label it touches) flops; an intermediate costs
 * its element count in workspace. Dynamic programming over subsets finds the optimum for few
 * operands; a greedy pass (checked against the written order) serves beyond. */
#include "core/error.h"
#include "einsum/einsum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest operand count for the exhaustive search (3^n splits). */
#define OPTIMAL_MAX_OPERANDS 12
/* LT_PATH_AUTO searches exhaustively up to this many operands. */
#define AUTO_OPTIMAL_MAX_OPERANDS 8
#define WORDS (LT__EINSUM_MAX_LABELS / 64)

typedef struct lset {
  uint64_t w[WORDS];
} lset;

static void lset_add(lset *s, int id) { s->w[id / 64] |= 1ull << (id % 64); }

static lset lset_or(lset a, lset b) {
  for (int i = 0; i < WORDS; i++)
    a.w[i] |= b.w[i];
  return a;
}

static lset lset_and(lset a, lset b) {
  for (int i = 0; i < WORDS; i++)
    a.w[i] &= b.w[i];
  return a;
}

static bool lset_intersects(lset a, lset b) {
  for (int i = 0; i < WORDS; i++)
    if (a.w[i] & b.w[i]) return true;
  return false;
}

static double lset_size(lset s, const int64_t *extent) {
  double n = 1;
  for (int i = 0; i < WORDS; i++)
    for (uint64_t w = s.w[i]; w; w &= w - 1)
      n *= (double)extent[i * 64 + __builtin_ctzll(w)];
  return n;
}

typedef struct path_ctx {
  int n;
  lset in[LT__EINSUM_MAX_OPERANDS];
  lset out;
  const int64_t *extent;
  double limit; /* elements; 0 = none */
} path_ctx;

/* Labels a contraction of operand set `mask` must keep: those any other operand or the output
 * still needs. (Only for n <= 64; masks index operands.) */
static lset keep_of(const path_ctx *p, lset have, const bool *inside) {
  lset need = p->out;
  for (int k = 0; k < p->n; k++)
    if (!inside[k]) need = lset_or(need, p->in[k]);
  return lset_and(have, need);
}

/* ---- simulation of a path over a working list (shared by every algorithm) ---- */

typedef struct work {
  int n;
  lset labels[LT__EINSUM_MAX_OPERANDS];
  uint64_t members[LT__EINSUM_MAX_OPERANDS]; /* original operands merged into the item */
} work;

static void work_init(const path_ctx *p, work *w) {
  w->n = p->n;
  for (int k = 0; k < p->n; k++) {
    w->labels[k] = p->in[k];
    w->members[k] = k < 64 ? 1ull << k : 0;
  }
}

/* Result labels of contracting items i and j of w. */
static lset work_result(const path_ctx *p, const work *w, int i, int j) {
  lset need = p->out;
  for (int k = 0; k < w->n; k++)
    if (k != i && k != j) need = lset_or(need, w->labels[k]);
  return lset_and(lset_or(w->labels[i], w->labels[j]), need);
}

static void work_apply(const path_ctx *p, work *w, int i, int j, double *flops, double *largest) {
  lset r = work_result(p, w, i, j);
  *flops += 2.0 * lset_size(lset_or(w->labels[i], w->labels[j]), p->extent);
  if (w->n > 2) {
    double size = lset_size(r, p->extent);
    if (size > *largest) *largest = size;
  }
  uint64_t m = w->members[i] | w->members[j];
  for (int k = j; k + 1 < w->n; k++)
    w->labels[k] = w->labels[k + 1], w->members[k] = w->members[k + 1];
  for (int k = i; k + 1 < w->n - 1; k++)
    w->labels[k] = w->labels[k + 1], w->members[k] = w->members[k + 1];
  w->n -= 2;
  w->labels[w->n] = r;
  w->members[w->n++] = m;
}

static void path_cost(const path_ctx *p, lt__path *path) {
  work w;
  work_init(p, &w);
  path->flops = 0;
  path->largest = 0;
  for (int s = 0; s < path->n_steps; s++)
    work_apply(p, &w, path->step[s].i, path->step[s].j, &path->flops, &path->largest);
}

/* ---- algorithms ---- */

static void path_as_written(const path_ctx *p, lt__path *path) {
  path->n_steps = 0;
  for (int s = 0; s + 1 < p->n; s++)
    path->step[path->n_steps++] = (lt__path_step){0, s == 0 ? 1 : p->n - s - 1};
}

/* Cheapest pair first: prefer pairs that share a label, scored by how much memory the step
 * frees (NumPy's greedy rule), then by flops. */
static bool path_greedy(const path_ctx *p, lt__path *path) {
  work w;
  work_init(p, &w);
  path->n_steps = 0;
  while (w.n > 1) {
    int bi = -1, bj = -1;
    double best[3] = {INFINITY, INFINITY, INFINITY};
    for (int i = 0; i < w.n; i++)
      for (int j = i + 1; j < w.n; j++) {
        lset r = work_result(p, &w, i, j);
        double size = lset_size(r, p->extent);
        if (p->limit > 0 && w.n > 2 && size > p->limit) continue;
        double key[3] = {lset_intersects(w.labels[i], w.labels[j]) ? 0.0 : 1.0,
                         size - lset_size(w.labels[i], p->extent) -
                             lset_size(w.labels[j], p->extent),
                         lset_size(lset_or(w.labels[i], w.labels[j]), p->extent)};
        if (key[0] < best[0] ||
            (key[0] == best[0] && (key[1] < best[1] || (key[1] == best[1] && key[2] < best[2])))) {
          memcpy(best, key, sizeof best);
          bi = i, bj = j;
        }
      }
    if (bi < 0) return false;
    double f = 0, l = 0;
    work_apply(p, &w, bi, bj, &f, &l);
    path->step[path->n_steps++] = (lt__path_step){bi, bj};
  }
  return true;
}

typedef struct dp_entry {
  double cost;
  uint32_t split; /* one side of the best split; 0 for single operands */
} dp_entry;

static lset union_of(const path_ctx *p, uint32_t mask) {
  lset s = {{0}};
  for (int k = 0; k < p->n; k++)
    if (mask >> k & 1) s = lset_or(s, p->in[k]);
  return s;
}

/* Emits the steps that build `mask` from its best split, in post order. */
static void dp_emit(const dp_entry *dp, uint32_t mask, const path_ctx *p, work *w, lt__path *path) {
  uint32_t a = dp[mask].split;
  if (a == 0) return;
  uint32_t b = mask & ~a;
  dp_emit(dp, a, p, w, path);
  dp_emit(dp, b, p, w, path);
  int i = -1, j = -1;
  for (int k = 0; k < w->n; k++) {
    if (w->members[k] == a) i = k;
    if (w->members[k] == b) j = k;
  }
  if (i > j) {
    int t = i;
    i = j;
    j = t;
  }
  double f = 0, l = 0;
  work_apply(p, w, i, j, &f, &l);
  path->step[path->n_steps++] = (lt__path_step){i, j};
}

static lt_status path_optimal(lt_context *ctx, const path_ctx *p, lt__path *path, bool *found) {
  uint32_t full = (1u << p->n) - 1;
  size_t dp_bytes = sizeof(dp_entry) * ((size_t)full + 1);
  size_t kept_bytes = sizeof(lset) * ((size_t)full + 1);
  dp_entry *dp = lt__host_alloc(ctx, dp_bytes);
  lset *kept = lt__host_alloc(ctx, kept_bytes);
  if (dp == NULL || kept == NULL) {
    lt__host_free(ctx, dp, dp_bytes);
    lt__host_free(ctx, kept, kept_bytes);
    return lt__error(LT_ERR_OUT_OF_MEMORY,
                     "einsum: out of memory (%zu bytes) searching a path over %d operands",
                     dp_bytes + kept_bytes, p->n);
  }
  for (uint32_t s = 1; s <= full; s++) {
    bool inside[LT__EINSUM_MAX_OPERANDS];
    for (int k = 0; k < p->n; k++)
      inside[k] = s >> k & 1;
    kept[s] = keep_of(p, union_of(p, s), inside);
    dp[s].split = 0;
    dp[s].cost = (s & (s - 1)) ? INFINITY : 0.0;
    if (dp[s].cost == 0.0) continue;
    if (p->limit > 0 && s != full && lset_size(kept[s], p->extent) > p->limit) continue;
    uint32_t low = s & -s;
    /* Every split with the lowest operand on side a, each pair seen once. */
    for (uint32_t a = (s - 1) & s; a; a = (a - 1) & s) {
      if (!(a & low)) continue;
      uint32_t b = s & ~a;
      double c = dp[a].cost + dp[b].cost;
      if (c >= dp[s].cost) continue;
      c += 2.0 * lset_size(lset_or(kept[a], kept[b]), p->extent);
      if (c < dp[s].cost) dp[s].cost = c, dp[s].split = a;
    }
  }
  *found = dp[full].cost < INFINITY;
  if (*found) {
    work w;
    work_init(p, &w);
    path->n_steps = 0;
    dp_emit(dp, full, p, &w, path);
  }
  lt__host_free(ctx, dp, dp_bytes);
  lt__host_free(ctx, kept, kept_bytes);
  return LT_OK;
}

lt_status lt__einsum_path(lt_context *ctx, const lt__einsum_canon *c, lt_path_algo algo,
                          int64_t memory_limit, size_t elem_bytes, lt__path *path) {
  path_ctx p;
  memset(&p, 0, sizeof p);
  p.n = c->n_inputs;
  p.extent = c->extent;
  p.limit = memory_limit > 0 ? (double)memory_limit / (double)elem_bytes : 0;
  for (int k = 0; k < p.n; k++)
    for (int i = 0; i < c->in[k].rank; i++)
      lset_add(&p.in[k], c->in[k].mode[i]);
  for (int i = 0; i < c->out.rank; i++)
    lset_add(&p.out, c->out.mode[i]);

  lt__path naive;
  path_as_written(&p, &naive);
  path_cost(&p, &naive);
  bool naive_fits = p.limit == 0 || naive.largest <= p.limit;
  bool found = false;
  if (algo == LT_PATH_OPTIMAL && p.n > OPTIMAL_MAX_OPERANDS) algo = LT_PATH_GREEDY;
  if (algo == LT_PATH_AUTO)
    algo = p.n <= AUTO_OPTIMAL_MAX_OPERANDS ? LT_PATH_OPTIMAL : LT_PATH_GREEDY;
  if (algo == LT_PATH_NONE) {
    *path = naive;
    found = naive_fits;
  } else if (algo == LT_PATH_OPTIMAL) {
    LT_TRY(path_optimal(ctx, &p, path, &found));
  } else {
    found = path_greedy(&p, path);
    if (found) path_cost(&p, path);
    /* Greedy can lose to the written order; never return worse than it. */
    if (naive_fits && (!found || naive.flops < path->flops)) *path = naive, found = true;
  }
  LT_RETURN_IF(!found, LT_ERR_OUT_OF_MEMORY,
               "einsum: no contraction order keeps every intermediate under the memory limit "
               "of %lld bytes",
               (long long)memory_limit);
  path_cost(&p, path);
  path->naive_flops = naive.flops;
  return LT_OK;
}

/* SPDX-License-Identifier: MIT */
/* Contraction paths (issue 22): exact search against brute force, the matrix-chain optimum
 * against the textbook DP, AUTO never costlier than greedy, explicit paths and their errors,
 * tree introspection, sliced execution against a naive float64 einsum (every device) with the
 * memory limit checked by the context's peak counter, and a 1000-operand network. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 1100
#define MAXL 64

/* ---- an independent cost model: label sets as arrays ---- */

typedef struct net {
  int n, n_labels;
  int rank[MAXN];
  int32_t modes[MAXN][8];
  int64_t ext[4 * MAXN];
  int rank_out;
  int32_t out[8];
} net;

typedef struct lset {
  int n;
  int32_t l[64];
} lset;

static bool has(const lset *s, int32_t l) {
  for (int i = 0; i < s->n; i++)
    if (s->l[i] == l) return true;
  return false;
}

static void add(lset *s, int32_t l) {
  if (!has(s, l)) s->l[s->n++] = l;
}

/* Weight of the elements each step writes in the objective (lt_plan_options_set_path_cost). */
static double g_weight;

/* Cost of a NumPy-style path over the current list `cur` (m items): each step pays the product
 * of every extent in the union and keeps the labels others or the output still need. */
static double sim_cost(const net *g, lset *cur, int m, const int64_t (*pairs)[2], int steps) {
  double total = 0;
  for (int s = 0; s < steps; s++) {
    int i = (int)pairs[s][0], j = (int)pairs[s][1];
    if (i > j) {
      int t = i;
      i = j;
      j = t;
    }
    lset u = cur[i];
    for (int q = 0; q < cur[j].n; q++)
      add(&u, cur[j].l[q]);
    double c = 1;
    for (int q = 0; q < u.n; q++)
      c *= (double)g->ext[u.l[q]];
    total += c;
    lset r = {0};
    for (int q = 0; q < u.n; q++) {
      bool need = false;
      for (int k = 0; k < g->rank_out; k++)
        need |= g->out[k] == u.l[q];
      for (int k = 0; k < m && !need; k++)
        need = k != i && k != j && has(&cur[k], u.l[q]);
      if (need) add(&r, u.l[q]);
    }
    double size = 1;
    for (int q = 0; q < r.n; q++)
      size *= (double)g->ext[r.l[q]];
    total += g_weight * size;
    memmove(&cur[j], &cur[j + 1], sizeof(lset) * (size_t)(m - j - 1));
    memmove(&cur[i], &cur[i + 1], sizeof(lset) * (size_t)(m - i - 2));
    m -= 2;
    cur[m++] = r;
  }
  return total;
}

static lset *initial(const net *g) {
  lset *cur = calloc((size_t)g->n, sizeof(lset));
  for (int k = 0; k < g->n; k++)
    for (int a = 0; a < g->rank[k]; a++)
      add(&cur[k], g->modes[k][a]);
  return cur;
}

static double path_cost(const net *g, const int64_t (*pairs)[2]) {
  lset *cur = initial(g);
  double c = sim_cost(g, cur, g->n, pairs, g->n - 1);
  free(cur);
  return c;
}

/* Cheapest over every sequence of pairs (n <= 6). */
static double brute(const net *g, lset *cur, int m) {
  if (m == 1) return 0;
  double best = INFINITY;
  lset *next = malloc(sizeof(lset) * (size_t)m);
  for (int i = 0; i < m; i++)
    for (int j = i + 1; j < m; j++) {
      memcpy(next, cur, sizeof(lset) * (size_t)m);
      int64_t p[1][2] = {{i, j}};
      double c = sim_cost(g, next, m, (const int64_t(*)[2])p, 1);
      c += brute(g, next, m - 1);
      if (c < best) best = c;
    }
  free(next);
  return best;
}

static lt_status find(const net *g, const lt_plan_options *opts, int64_t (*pairs)[2],
                      double *cost) {
  static int64_t shape_store[MAXN][8];
  const int64_t *shapes[MAXN];
  const int32_t *modes[MAXN];
  for (int k = 0; k < g->n; k++) {
    for (int a = 0; a < g->rank[k]; a++)
      shape_store[k][a] = g->ext[g->modes[k][a]];
    shapes[k] = shape_store[k];
    modes[k] = g->modes[k];
  }
  return lt_einsum_find_path(g->n, g->rank, shapes, modes, g->rank_out, g->out, opts, pairs, cost,
                             NULL);
}

static lt_plan_options *algo_options(lt_path_algo algo) {
  lt_plan_options *o;
  LT_CHECK(lt_plan_options_create(&o));
  LT_CHECK(lt_plan_options_set_path(o, algo));
  return o;
}

/* A random small network: labels of extent 1..5 spread over n operands. */
static void random_small(net *g, int n) {
  memset(g, 0, sizeof *g);
  g->n = n;
  g->n_labels = (int)lt_test_rand_int(3, 8);
  for (int l = 0; l < g->n_labels; l++)
    g->ext[l] = lt_test_rand_int(1, 5);
  int count[MAXL] = {0};
  for (int k = 0; k < n; k++) {
    int r = (int)lt_test_rand_int(1, 4);
    for (int a = 0; a < r; a++) {
      int32_t l = (int32_t)lt_test_rand_int(0, g->n_labels - 1);
      bool dup = false;
      for (int b = 0; b < g->rank[k]; b++)
        dup |= g->modes[k][b] == l;
      if (dup) continue;
      g->modes[k][g->rank[k]++] = l;
      count[l]++;
    }
  }
  for (int l = 0; l < g->n_labels && g->rank_out < 3; l++)
    if (count[l] == 1 || (count[l] > 1 && lt_test_rand_int(0, 4) == 0)) g->out[g->rank_out++] = l;
}

static void test_dp_equals_brute_force(void **state) {
  lt_test_rng_reset(lt_test_seed());
  lt_plan_options *opt = algo_options(LT_PATH_OPTIMAL), *aut = algo_options(LT_PATH_AUTO);
  for (int it = 0; it < 60; it++) {
    net g;
    random_small(&g, (int)lt_test_rand_int(2, 6));
    int64_t pairs[8][2];
    double cost;
    lset *cur = initial(&g);
    double want = brute(&g, cur, g.n);
    free(cur);
    LT_CHECK(find(&g, opt, pairs, &cost));
    assert_true(fabs(cost - want) <= 1e-12 * want);
    assert_true(fabs(path_cost(&g, (const int64_t(*)[2])pairs) - want) <= 1e-12 * want);
    LT_CHECK(find(&g, aut, pairs, &cost));
    assert_true(fabs(path_cost(&g, (const int64_t(*)[2])pairs) - want) <= 1e-12 * want);
  }
  /* the combined objective: cost + weight * elements written, still exact */
  g_weight = 10;
  LT_CHECK(lt_plan_options_set_path_cost(opt, g_weight));
  for (int it = 0; it < 30; it++) {
    net g;
    random_small(&g, (int)lt_test_rand_int(3, 6));
    int64_t pairs[8][2];
    double cost;
    lset *cur = initial(&g);
    double want = brute(&g, cur, g.n);
    free(cur);
    LT_CHECK(find(&g, opt, pairs, &cost));
    assert_true(fabs(path_cost(&g, (const int64_t(*)[2])pairs) - want) <= 1e-12 * want);
  }
  g_weight = 0;
  lt_plan_options_destroy(opt);
  lt_plan_options_destroy(aut);
}

static void test_matrix_chain_optimum(void **state) {
  lt_test_rng_reset(lt_test_seed());
  lt_plan_options *aut = algo_options(LT_PATH_AUTO);
  static double m[64][64];
  for (int it = 0; it < 12; it++) {
    int n = (int)lt_test_rand_int(3, 60);
    net g;
    memset(&g, 0, sizeof g);
    g.n = n;
    int64_t p[65];
    for (int i = 0; i <= n; i++)
      p[i] = g.ext[i] = lt_test_rand_int(1, 60);
    for (int k = 0; k < n; k++) {
      g.rank[k] = 2;
      g.modes[k][0] = k;
      g.modes[k][1] = k + 1;
    }
    g.rank_out = 2;
    g.out[0] = 0;
    g.out[1] = n;
    /* the textbook recurrence: m[i][j] = min_k m[i][k] + m[k+1][j] + p[i] p[k+1] p[j+1] */
    for (int len = 2; len <= n; len++)
      for (int i = 0; i + len - 1 < n; i++) {
        int j = i + len - 1;
        m[i][j] = INFINITY;
        for (int k = i; k < j; k++) {
          double c = m[i][k] + m[k + 1][j] + (double)p[i] * (double)p[k + 1] * (double)p[j + 1];
          if (c < m[i][j]) m[i][j] = c;
        }
      }
    for (int i = 0; i < n; i++)
      m[i][i] = 0;
    int64_t pairs[64][2];
    double cost;
    LT_CHECK(find(&g, aut, pairs, &cost));
    double got = path_cost(&g, (const int64_t(*)[2])pairs);
    assert_true(fabs(got - cost) <= 1e-12 * cost);
    if (!(fabs(got - m[0][n - 1]) <= 1e-12 * m[0][n - 1]))
      fail_msg("chain of %d: cost %.17g, optimum %.17g", n, got, m[0][n - 1]);
  }
  lt_plan_options_destroy(aut);
}

/* A random graph of degree ~d over n operands (multi-edges allowed), extents 2..4. */
static void random_graph(net *g, int n, int d) {
  memset(g, 0, sizeof *g);
  g->n = n;
  for (int e = 0; e < n * d / 2; e++) {
    int a = (int)lt_test_rand_int(0, n - 1), b = (int)lt_test_rand_int(0, n - 1);
    if (a == b || g->rank[a] >= 6 || g->rank[b] >= 6) continue;
    int32_t l = (int32_t)g->n_labels++;
    g->ext[l] = lt_test_rand_int(2, 4);
    g->modes[a][g->rank[a]++] = l;
    g->modes[b][g->rank[b]++] = l;
  }
}

static void test_never_worse_than_greedy(void **state) {
  lt_test_rng_reset(lt_test_seed());
  lt_plan_options *gr = algo_options(LT_PATH_GREEDY), *aut = algo_options(LT_PATH_AUTO);
  LT_CHECK(lt_plan_options_set_path_budget(aut, 16, 10.0)); /* trials decide, not the clock */
  int rounds = lt_test_instrumented() ? 3 : 12;
  for (int it = 0; it < rounds; it++) {
    net g;
    random_graph(&g, (int)lt_test_rand_int(11, 60), (int)lt_test_rand_int(3, 4));
    static int64_t p1[MAXN][2], p2[MAXN][2];
    double c1, c2;
    LT_CHECK(find(&g, gr, p1, &c1));
    LT_CHECK(find(&g, aut, p2, &c2));
    assert_true(c2 <= c1 * (1 + 1e-12));
    assert_true(fabs(path_cost(&g, (const int64_t(*)[2])p2) - c2) <= 1e-9 * c2);
    assert_true(fabs(path_cost(&g, (const int64_t(*)[2])p1) - c1) <= 1e-9 * c1);
    /* the same seed gives the same tree */
    static int64_t p3[MAXN][2];
    double c3;
    LT_CHECK(find(&g, aut, p3, &c3));
    assert_memory_equal(p2, p3, sizeof(int64_t[2]) * (size_t)(g.n - 1));
  }
  lt_plan_options_destroy(gr);
  lt_plan_options_destroy(aut);
}

/* ---- recursive bisection (LT_PATH_PARTITION) and costs past the double range ---- */

/* NumPy pairs that name positions in range, each step two distinct ones. */
static bool valid_pairs(int n, const int64_t (*pairs)[2]) {
  for (int s = 0, m = n; s < n - 1; s++, m--)
    if (pairs[s][0] < 0 || pairs[s][1] < 0 || pairs[s][0] >= m || pairs[s][1] >= m ||
        pairs[s][0] == pairs[s][1])
      return false;
  return true;
}

/* Which operands each side of the last step holds, as bit masks (n <= 64). */
static void root_split(int n, const int64_t (*pairs)[2], uint64_t *a, uint64_t *b) {
  uint64_t list[64];
  for (int k = 0; k < n; k++)
    list[k] = 1ull << k;
  int m = n;
  for (int s = 0; s < n - 1; s++) {
    int i = (int)pairs[s][0], j = (int)pairs[s][1];
    if (i > j) {
      int t = i;
      i = j;
      j = t;
    }
    *a = list[i];
    *b = list[j];
    memmove(&list[j], &list[j + 1], sizeof(uint64_t) * (size_t)(m - j - 1));
    memmove(&list[i], &list[i + 1], sizeof(uint64_t) * (size_t)(m - i - 2));
    m -= 2;
    list[m++] = *a | *b;
  }
}

static void test_partition_valid_and_seeded(void **state) {
  lt_test_rng_reset(lt_test_seed());
  lt_plan_options *pa = algo_options(LT_PATH_PARTITION), *gr = algo_options(LT_PATH_GREEDY);
  LT_CHECK(lt_plan_options_set_path_budget(pa, 6, 10.0)); /* trials decide, not the clock */
  int rounds = lt_test_instrumented() ? 4 : 14;
  static int64_t p1[MAXN][2], p2[MAXN][2];
  for (int it = 0; it < rounds; it++) {
    net g;
    /* 2 and 3 operands (no split at all) up to 80 (several levels of splits) */
    int n = it < 2 ? 2 + it : (int)lt_test_rand_int(4, 80);
    random_graph(&g, n, (int)lt_test_rand_int(2, 4));
    if (it % 3 == 0 && g.n_labels > 0) g.out[g.rank_out++] = g.modes[0][0];
    double c1, c2, cg;
    LT_CHECK(lt_plan_options_set_path_seed(pa, (uint64_t)it));
    LT_CHECK(find(&g, pa, p1, &c1));
    assert_true(valid_pairs(g.n, (const int64_t(*)[2])p1));
    double want = path_cost(&g, (const int64_t(*)[2])p1);
    if (!(fabs(want - c1) <= 1e-9 * want))
      fail_msg("n=%d: reported %g, path costs %g", n, c1, want);
    LT_CHECK(find(&g, pa, p2, &c2));
    assert_memory_equal(p1, p2, sizeof(int64_t[2]) * (size_t)(g.n - 1));
    /* a bisection tree is a real search: within a small factor of greedy on such graphs */
    LT_CHECK(find(&g, gr, p2, &cg));
    if (!(c1 <= 50 * cg)) fail_msg("n=%d: partition %g, greedy %g", n, c1, cg);
  }
  lt_plan_options_destroy(pa);
  lt_plan_options_destroy(gr);
}

/* Two dense clusters of 16 operands (extent-4 bonds) joined by one extent-2 bond: the first
 * bisection must cut that bond, so the last step joins exactly the two clusters. */
static void test_partition_cuts_the_bridge(void **state) {
  lt_test_rng_reset(lt_test_seed());
  lt_plan_options *pa = algo_options(LT_PATH_PARTITION);
  LT_CHECK(lt_plan_options_set_path_budget(pa, 4, 10.0));
  int rounds = lt_test_instrumented() ? 2 : 6;
  for (int it = 0; it < rounds; it++) {
    net g;
    memset(&g, 0, sizeof g);
    int half = 16;
    g.n = 2 * half;
    /* operands of the two clusters interleaved, so that no order in the input gives it away */
    for (int c = 0; c < 2; c++) {
      for (int i = 0; i < half; i++) { /* a ring keeps each cluster connected */
        int a = 2 * i + c, b = 2 * ((i + 1) % half) + c;
        int32_t l = (int32_t)g.n_labels++;
        g.ext[l] = 4;
        g.modes[a][g.rank[a]++] = l;
        g.modes[b][g.rank[b]++] = l;
      }
      for (int e = 0; e < half; e++) { /* chords */
        int a = 2 * (int)lt_test_rand_int(0, half - 1) + c;
        int b = 2 * (int)lt_test_rand_int(0, half - 1) + c;
        if (a == b || g.rank[a] >= 5 || g.rank[b] >= 5) continue;
        int32_t l = (int32_t)g.n_labels++;
        g.ext[l] = 4;
        g.modes[a][g.rank[a]++] = l;
        g.modes[b][g.rank[b]++] = l;
      }
    }
    int a = 2 * (int)lt_test_rand_int(0, half - 1), b = 2 * (int)lt_test_rand_int(0, half - 1) + 1;
    int32_t l = (int32_t)g.n_labels++;
    g.ext[l] = 2;
    g.modes[a][g.rank[a]++] = l;
    g.modes[b][g.rank[b]++] = l;
    static int64_t p[MAXN][2];
    double c;
    LT_CHECK(lt_plan_options_set_path_seed(pa, (uint64_t)it + 7));
    LT_CHECK(find(&g, pa, p, &c));
    uint64_t ma = 0, mb = 0, even = 0x5555555555555555ull & ((1ull << g.n) - 1);
    root_split(g.n, (const int64_t(*)[2])p, &ma, &mb);
    if (!((ma == even && mb == (even << 1)) || (mb == even && ma == (even << 1))))
      fail_msg("round %d: the last step joins %#llx and %#llx", it, (unsigned long long)ma,
               (unsigned long long)mb);
  }
  lt_plan_options_destroy(pa);
}

/* log2 of a path's cost, summed as logs (the test's own rule, valid past 1e308). */
static double path_log2_cost(const net *g, const int64_t (*pairs)[2]) {
  lset *cur = initial(g);
  int m = g->n;
  double total = -INFINITY;
  for (int s = 0; s < g->n - 1; s++) {
    int i = (int)pairs[s][0], j = (int)pairs[s][1];
    if (i > j) {
      int t = i;
      i = j;
      j = t;
    }
    lset u = cur[i], r = {0};
    for (int q = 0; q < cur[j].n; q++)
      add(&u, cur[j].l[q]);
    double c = 0;
    for (int q = 0; q < u.n; q++) {
      c += log2((double)g->ext[u.l[q]]);
      bool need = false;
      for (int k = 0; k < g->rank_out; k++)
        need |= g->out[k] == u.l[q];
      for (int k = 0; k < m && !need; k++)
        need = k != i && k != j && has(&cur[k], u.l[q]);
      if (need) add(&r, u.l[q]);
    }
    double hi = fmax(total, c), lo = fmin(total, c);
    total = lo == -INFINITY ? hi : hi + log2(1 + exp2(lo - hi));
    memmove(&cur[j], &cur[j + 1], sizeof(lset) * (size_t)(m - j - 1));
    memmove(&cur[i], &cur[i + 1], sizeof(lset) * (size_t)(m - i - 2));
    m -= 2;
    cur[m++] = r;
  }
  free(cur);
  return total;
}

/* Extents of 2^40 on a random graph of degree 7: every tree costs far beyond 1e308, so trees
 * can only be told apart through log2 sums; AUTO must still beat the written order and never
 * lose to greedy. */
static void test_cost_past_double_range(void **state) {
  lt_test_rng_reset(lt_test_seed());
  lt_plan_options *aut = algo_options(LT_PATH_AUTO), *gr = algo_options(LT_PATH_GREEDY),
                  *no = algo_options(LT_PATH_NONE);
  /* the clock bounds refinement (slow under valgrind); greedy's tree is offered first */
  LT_CHECK(lt_plan_options_set_path_budget(aut, 8, 0.2));
  int rounds = lt_test_instrumented() ? 2 : 4;
  static int64_t pa[MAXN][2], pg[MAXN][2], pn[MAXN][2];
  for (int it = 0; it < rounds; it++) {
    net g;
    memset(&g, 0, sizeof g);
    g.n = (int)lt_test_rand_int(24, 40);
    for (int e = 0; e < g.n * 7 / 2; e++) {
      int a = (int)lt_test_rand_int(0, g.n - 1), b = (int)lt_test_rand_int(0, g.n - 1);
      if (a == b || g.rank[a] >= 8 || g.rank[b] >= 8) continue;
      int32_t l = (int32_t)g.n_labels++;
      g.ext[l] = (int64_t)1 << 40;
      g.modes[a][g.rank[a]++] = l;
      g.modes[b][g.rank[b]++] = l;
    }
    double ca, cg, cn;
    LT_CHECK(find(&g, aut, pa, &ca));
    LT_CHECK(find(&g, gr, pg, &cg));
    LT_CHECK(find(&g, no, pn, &cn));
    double la = path_log2_cost(&g, (const int64_t(*)[2])pa);
    double lg = path_log2_cost(&g, (const int64_t(*)[2])pg);
    double ln = path_log2_cost(&g, (const int64_t(*)[2])pn);
    if (!(ln > 1100)) fail_msg("the written order costs only 2^%g: not a test of overflow", ln);
    if (!(la <= lg + 1e-9 && la < ln))
      fail_msg("n=%d: log2 costs auto %.6f, greedy %.6f, as written %.6f", g.n, la, lg, ln);
    /* the reported double saturates rather than wrapping or going NaN */
    assert_true(cn > 1e308 && !isnan(cn));
  }
  lt_plan_options_destroy(aut);
  lt_plan_options_destroy(gr);
  lt_plan_options_destroy(no);
}

/* ---- execution ---- */

/* Naive float64 einsum over host copies: every combination of every label. */
static void naive_einsum(const net *g, double *const *in, double *out) {
  int64_t total = 1, idx[MAXL] = {0}, ext[MAXL] = {0};
  /* labels no operand holds do not exist for the einsum */
  for (int k = 0; k < g->n; k++)
    for (int a = 0; a < g->rank[k]; a++)
      ext[g->modes[k][a]] = g->ext[g->modes[k][a]];
  for (int l = 0; l < g->n_labels; l++) {
    if (ext[l] == 0) ext[l] = 1;
    total *= ext[l];
  }
  int64_t out_n = 1;
  for (int a = 0; a < g->rank_out; a++)
    out_n *= g->ext[g->out[a]];
  memset(out, 0, sizeof(double) * (size_t)out_n);
  for (int64_t t = 0; t < total; t++) {
    double v = 1;
    for (int k = 0; k < g->n; k++) {
      int64_t off = 0;
      for (int a = 0; a < g->rank[k]; a++)
        off = off * g->ext[g->modes[k][a]] + idx[g->modes[k][a]];
      v *= in[k][off];
    }
    int64_t o = 0;
    for (int a = 0; a < g->rank_out; a++)
      o = o * g->ext[g->out[a]] + idx[g->out[a]];
    out[o] += v;
    for (int l = 0; l < g->n_labels && ++idx[l] == ext[l]; l++)
      idx[l] = 0;
  }
}

static void sliced_case(lt_context *ctx, const net *g, lt_test_layout layout) {
  lt_tensor *ins[8];
  double *host[8];
  const int32_t *modes[8];
  for (int k = 0; k < g->n; k++) {
    int64_t shape[8];
    for (int a = 0; a < g->rank[k]; a++)
      shape[a] = g->ext[g->modes[k][a]];
    ins[k] = lt_test_random_tensor(ctx, LT_F64, g->rank[k], shape, layout);
    host[k] = lt_test_read_all(ins[k]);
    modes[k] = g->modes[k];
  }
  int64_t oshape[8];
  for (int a = 0; a < g->rank_out; a++)
    oshape[a] = g->ext[g->out[a]];
  int64_t on = lt_test_numel(g->rank_out, oshape);
  double *want = malloc(sizeof(double) * (size_t)on), *prev;
  naive_einsum(g, host, want);
  /* unsliced plan: its largest intermediate sets the limit */
  lt_plan *plain;
  LT_CHECK(lt_plan_einsum_modes(g->n, (const lt_tensor *const *)ins, modes, g->rank_out, g->out,
                                NULL, NULL, &plain));
  size_t ws;
  LT_CHECK(lt_plan_workspace_size(plain, &ws));
  lt_plan_destroy(plain);
  int64_t limit = (int64_t)(ws / 3 > 8 ? ws / 3 : 8);
  lt_plan_options *o;
  LT_CHECK(lt_plan_options_create(&o));
  LT_CHECK(lt_plan_options_set_memory_limit(o, limit));
  lt_plan *plan;
  lt_status st = lt_plan_einsum_modes(g->n, (const lt_tensor *const *)ins, modes, g->rank_out,
                                      g->out, NULL, o, &plan);
  if (st == LT_OK) {
    size_t ws_sliced;
    LT_CHECK(lt_plan_workspace_size(plan, &ws_sliced));
    assert_true(ws_sliced <= (size_t)limit);
    int ns = 0;
    double slices = 0, overhead = 0;
    int32_t labels[8];
    LT_CHECK(lt_plan_einsum_slicing(plan, &ns, labels, 8, &slices, &overhead));
    if (ns > 0) {
      assert_non_null(strstr(lt_plan_describe(plan), "sliced labels:"));
      assert_true(slices >= 2 && overhead >= 1 - 1e-12);
    }
    lt_tensor *d;
    LT_CHECK(lt_plan_create_output(plan, &d));
    lt_tensor *fill = lt_test_random_tensor(ctx, LT_F64, g->rank_out, oshape, LT_LAYOUT_CONTIGUOUS);
    LT_CHECK(lt_tensor_copy_into(d, fill));
    prev = lt_test_read_all(d);
    int64_t before, peak;
    LT_CHECK(lt_context_memory(ctx, &before, NULL));
    LT_CHECK(lt_context_reset_peak_memory(ctx));
    double sc[2] = {0.5, 2.0};
    LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)ins, g->n, sc, 2, d));
    LT_CHECK(lt_context_synchronize(ctx));
    LT_CHECK(lt_context_memory(ctx, NULL, &peak));
    if (peak - before > limit)
      fail_msg("execution held %lld bytes over the %lld-byte limit", (long long)(peak - before),
               (long long)limit);
    double *got = lt_test_read_all(d);
    if (getenv("LT_TEST_VERBOSE")) printf("%s", lt_plan_describe(plan));
    for (int64_t i = 0; i < on; i++)
      prev[i] = 0.5 * want[i] + 2.0 * prev[i];
    lt_test_assert_close(got, prev, on, 1e-12, "sliced einsum");
    free(got);
    free(prev);
    lt_tensor_destroy(fill);
    lt_tensor_destroy(d);
    lt_plan_destroy(plan);
  } else {
    assert_int_equal(st, LT_ERR_OUT_OF_MEMORY);
  }
  lt_plan_options_destroy(o);
  free(want);
  for (int k = 0; k < g->n; k++) {
    lt_tensor_destroy(ins[k]);
    free(host[k]);
  }
}

static void sliced_on(lt_context *ctx) {
  lt_test_rng_reset(lt_test_seed());
  int rounds = lt_test_instrumented() ? 4 : 24;
  for (int it = 0; it < rounds; it++) {
    net g;
    random_small(&g, (int)lt_test_rand_int(2, 5));
    for (int l = 0; l < g.n_labels; l++)
      g.ext[l] = lt_test_rand_int(2, 6);
    sliced_case(ctx, &g, (lt_test_layout)(it % 4));
  }
  /* a ring with summed labels only, and a chain keeping its ends */
  net ring = {.n = 4,
              .n_labels = 4,
              .rank = {2, 2, 2, 2},
              .modes = {{0, 1}, {1, 2}, {2, 3}, {3, 0}},
              .ext = {7, 6, 5, 8}};
  sliced_case(ctx, &ring, LT_LAYOUT_TRANSPOSED);
  net chain = {.n = 3,
               .n_labels = 4,
               .rank = {2, 2, 2},
               .modes = {{0, 1}, {1, 2}, {2, 3}},
               .ext = {9, 7, 8, 6},
               .rank_out = 2,
               .out = {0, 3}};
  sliced_case(ctx, &chain, LT_LAYOUT_NEGATIVE);
}

static void test_sliced_equals_reference(void **state) { lt_test_on_each_device(sliced_on); }

static void test_explicit_path(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_test_rng_reset(lt_test_seed());
  net g = {.n = 4,
           .n_labels = 5,
           .rank = {2, 2, 2, 2},
           .modes = {{0, 1}, {1, 2}, {2, 3}, {3, 4}},
           .ext = {3, 4, 5, 6, 2},
           .rank_out = 2,
           .out = {0, 4}};
  lt_tensor *ins[4];
  double *host[4];
  const int32_t *modes[4];
  for (int k = 0; k < 4; k++) {
    int64_t shape[2] = {g.ext[g.modes[k][0]], g.ext[g.modes[k][1]]};
    ins[k] = lt_test_random_tensor(ctx, LT_F64, 2, shape, LT_LAYOUT_STEPPED);
    host[k] = lt_test_read_all(ins[k]);
    modes[k] = g.modes[k];
  }
  double want[6];
  naive_einsum(&g, host, want);
  lt_plan_options *o;
  LT_CHECK(lt_plan_options_create(&o));
  const int64_t path[3][2] = {{2, 3}, {0, 1}, {0, 1}};
  LT_CHECK(lt_plan_options_set_explicit_path(o, 3, path));
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum_modes(4, (const lt_tensor *const *)ins, modes, 2, g.out, NULL, o, &plan));
  int64_t n_steps, pair[2], ssa[2];
  double cost, size, sum = 0;
  LT_CHECK(lt_plan_einsum_n_steps(plan, &n_steps));
  assert_int_equal(n_steps, 3);
  for (int s = 0; s < 3; s++) {
    LT_CHECK(lt_plan_einsum_step(plan, s, pair, ssa, &cost, &size));
    assert_int_equal(pair[0], path[s][0]);
    assert_int_equal(pair[1], path[s][1]);
    sum += cost;
  }
  /* SSA ids: (2,3)->4, (0,1)->5, (4,5)->6; the last step's result is the 3x2 output */
  assert_int_equal(ssa[0], 4);
  assert_int_equal(ssa[1], 5);
  assert_true(size == 6);
  assert_true(sum == path_cost(&g, path));
  LT_CHECK_FAILS(lt_plan_einsum_step(plan, 3, pair, NULL, NULL, NULL), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_einsum_step(plan, -1, NULL, NULL, NULL, NULL), LT_ERR_INVALID_ARGUMENT);
  lt_tensor *d;
  LT_CHECK(lt_plan_create_output(plan, &d));
  LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)ins, 4, NULL, 0, d));
  double *got = lt_test_read_all(d);
  lt_test_assert_close(got, want, 6, 1e-12, "explicit path");
  free(got);
  lt_tensor_destroy(d);
  lt_plan_destroy(plan);
  /* bad paths: named errors at planning */
  const struct {
    int64_t n;
    int64_t p[4][2];
    const char *msg;
  } bad[] = {
      {2, {{0, 1}, {0, 1}}, "has 2 pairs, but 4 operands take 3"},
      {3, {{0, 4}, {0, 1}, {0, 1}}, "pair 0 (0, 4) names a position outside [0, 4)"},
      {3, {{0, 1}, {0, 1}, {1, 2}}, "pair 2 (1, 2) names a position outside [0, 2)"},
      {3, {{1, 1}, {0, 1}, {0, 1}}, "contracts an operand with itself"},
      {3, {{-1, 1}, {0, 1}, {0, 1}}, "outside"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    LT_CHECK(lt_plan_options_set_explicit_path(o, bad[i].n, (const int64_t(*)[2])bad[i].p));
    LT_CHECK_FAILS(
        lt_plan_einsum_modes(4, (const lt_tensor *const *)ins, modes, 2, g.out, NULL, o, &plan),
        LT_ERR_INVALID_ARGUMENT);
    if (strstr(lt_last_error(), bad[i].msg) == NULL)
      fail_msg("message '%s' lacks '%s'", lt_last_error(), bad[i].msg);
  }
  LT_CHECK_FAILS(lt_plan_options_set_explicit_path(o, 3, NULL), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_plan_options_set_explicit_path(o, -2, NULL), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_plan_options_set_explicit_path(o, -1, NULL)); /* cleared: searches again */
  LT_CHECK(lt_plan_einsum_modes(4, (const lt_tensor *const *)ins, modes, 2, g.out, NULL, o, &plan));
  lt_plan_destroy(plan);
  /* option values */
  LT_CHECK_FAILS(lt_plan_options_set_path_budget(o, 0, 1.0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_options_set_path_budget(o, 4, 0.0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_options_set_path_budget(o, 4, NAN), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_options_set_path_cost(o, -1.0), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_options_set_path_cost(o, INFINITY), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_plan_options_set_path_cost(o, 64.0));
  LT_CHECK(lt_plan_options_set_path_seed(o, 7));
  lt_plan_options_destroy(o);
  for (int k = 0; k < 4; k++) {
    lt_tensor_destroy(ins[k]);
    free(host[k]);
  }
  lt_context_destroy(ctx);
}

/* A ring of n 2x2 rotations: trace of the product = 2 cos(sum of angles). */
static void test_thousand_operands(void **state) {
  int n = lt_test_instrumented() ? 200 : 1000;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_test_rng_reset(lt_test_seed());
  lt_tensor **ins = calloc((size_t)n, sizeof *ins);
  int32_t(*mo)[2] = calloc((size_t)n, sizeof *mo);
  const int32_t **modes = calloc((size_t)n, sizeof *modes);
  double angle = 0;
  for (int k = 0; k < n; k++) {
    double t = lt_test_rand_double(-1, 1);
    angle += t;
    double r[4] = {cos(t), -sin(t), sin(t), cos(t)};
    int64_t shape[2] = {2, 2};
    LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 2, shape, NULL, r, &ins[k]));
    /* labels 1000.. : integer labels far beyond the 52 letters */
    mo[k][0] = 1000 + k;
    mo[k][1] = 1000 + (k + 1) % n;
    modes[k] = mo[k];
  }
  /* a small budget keeps the test quick; the default one is measured by the bench */
  lt_plan_options *o;
  LT_CHECK(lt_plan_options_create(&o));
  LT_CHECK(lt_plan_options_set_path_budget(o, 4, 0.05));
  lt_tensor *out;
  LT_CHECK(lt_einsum_modes(n, (const lt_tensor *const *)ins, modes, 0, NULL, o, &out));
  double v;
  LT_CHECK(lt_tensor_get(out, NULL, &v));
  if (!(fabs(v - 2 * cos(angle)) <= 1e-9)) fail_msg("trace %.17g, want %.17g", v, 2 * cos(angle));
  lt_tensor_destroy(out);
  lt_plan_options_destroy(o);
  lt_plan *plan;
  LT_CHECK(
      lt_plan_einsum_modes(n, (const lt_tensor *const *)ins, modes, 0, NULL, NULL, NULL, &plan));
  int64_t steps;
  LT_CHECK(lt_plan_einsum_n_steps(plan, &steps));
  assert_int_equal(steps, n - 1);
  lt_plan_destroy(plan);
  for (int k = 0; k < n; k++)
    lt_tensor_destroy(ins[k]);
  free(ins);
  free(mo);
  free(modes);
  lt_context_destroy(ctx);
}

/* Extent 1 broadcasts in lt_einsum_find_path as in lt_einsum (it was refused: "label 1 has
 * extents 1 and 3"); other differing extents are still refused. */
static void test_find_path_broadcasts_extent_one(void **state) {
  (void)state;
  int ranks[2] = {2, 2};
  int64_t s0[2] = {2, 1}, s1[2] = {3, 4}, bad[2] = {2, 2};
  int32_t m0[2] = {0, 1}, m1[2] = {1, 2}, mo[2] = {0, 2};
  const int64_t *shapes[2] = {s0, s1};
  const int32_t *modes[2] = {m0, m1};
  int64_t pairs[1][2];
  double cost;
  LT_CHECK(lt_einsum_find_path(2, ranks, shapes, modes, 2, mo, NULL, pairs, &cost, NULL));
  assert_true(pairs[0][0] == 0 && pairs[0][1] == 1);
  shapes[0] = bad;
  LT_CHECK_FAILS(lt_einsum_find_path(2, ranks, shapes, modes, 2, mo, NULL, pairs, &cost, NULL),
                 LT_ERR_SHAPE_MISMATCH);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dp_equals_brute_force),
      cmocka_unit_test(test_matrix_chain_optimum),
      cmocka_unit_test(test_never_worse_than_greedy),
      cmocka_unit_test(test_explicit_path),
      cmocka_unit_test(test_sliced_equals_reference),
      cmocka_unit_test(test_thousand_operands),
      cmocka_unit_test(test_partition_valid_and_seeded),
      cmocka_unit_test(test_partition_cuts_the_bridge),
      cmocka_unit_test(test_cost_past_double_range),
      cmocka_unit_test(test_find_path_broadcasts_extent_one),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

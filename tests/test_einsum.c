/* SPDX-License-Identifier: MIT */
/* Einsum against the naive float64 reference: a random-expression generator (labels, repeats,
 * ellipses with broadcasting, size-1 broadcasting, scalars, implicit and explicit outputs,
 * spaces, 1-10 operands) over random layouts, every path algorithm, f32 and
 * f64, one-shot and planned with alpha/beta, on every backend. */
#include "einsum_ref.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELL (-1)   /* an item that stands for '...' */
#define ELL_ID0 52 /* reference label id of broadcast dimension 0 */
#define MAX_OPS 10

typedef struct gen_case {
  int n_ops;
  int n_items[MAX_OPS];
  int item[MAX_OPS][12]; /* letter ids 0..51 or ELL */
  int64_t shape[MAX_OPS][16];
  int rank[MAX_OPS];
  int ell_rank[MAX_OPS]; /* broadcast dims this operand covers */
  int E;                 /* broadcast rank of the expression */
  int64_t extent[ELL_ID0 + 4];
  bool implicit;
  int n_out_items;
  int out_item[16];
  char text[512];
} gen_case;

static char letter(int id) { return (char)(id < 26 ? 'A' + id : 'a' + id - 26); }

/* Reference labels per axis of operand k. */
static int axis_labels(const gen_case *g, int k, int *labels) {
  int r = 0;
  for (int i = 0; i < g->n_items[k]; i++) {
    if (g->item[k][i] == ELL)
      for (int j = 0; j < g->ell_rank[k]; j++)
        labels[r++] = ELL_ID0 + g->E - g->ell_rank[k] + j;
    else
      labels[r++] = g->item[k][i];
  }
  return r;
}

/* NumPy's implicit output: '...' dims, then letters used exactly once, uppercase first. */
static int output_labels(const gen_case *g, int *labels) {
  int r = 0;
  if (!g->implicit) {
    for (int i = 0; i < g->n_out_items; i++) {
      if (g->out_item[i] == ELL)
        for (int j = 0; j < g->E; j++)
          labels[r++] = ELL_ID0 + j;
      else
        labels[r++] = g->out_item[i];
    }
    return r;
  }
  int count[52] = {0};
  for (int k = 0; k < g->n_ops; k++)
    for (int i = 0; i < g->n_items[k]; i++)
      if (g->item[k][i] != ELL) count[g->item[k][i]]++;
  for (int j = 0; j < g->E; j++)
    labels[r++] = ELL_ID0 + j;
  for (int l = 0; l < 52; l++)
    if (count[l] == 1) labels[r++] = l;
  return r;
}

static void maybe_space(char *s, size_t *n) {
  if (lt_test_rand_int(0, 9) == 0) s[(*n)++] = ' ';
}

static void render(gen_case *g) {
  size_t n = 0;
  for (int k = 0; k < g->n_ops; k++) {
    if (k) g->text[n++] = ',';
    maybe_space(g->text, &n);
    for (int i = 0; i < g->n_items[k]; i++) {
      if (g->item[k][i] == ELL)
        n += (size_t)sprintf(g->text + n, "...");
      else
        g->text[n++] = letter(g->item[k][i]);
      maybe_space(g->text, &n);
    }
  }
  if (!g->implicit) {
    n += (size_t)sprintf(g->text + n, "->");
    for (int i = 0; i < g->n_out_items; i++) {
      maybe_space(g->text, &n);
      if (g->out_item[i] == ELL)
        n += (size_t)sprintf(g->text + n, "...");
      else
        g->text[n++] = letter(g->out_item[i]);
    }
  }
  g->text[n] = '\0';
}

static int64_t index_space(const gen_case *g) {
  int64_t t = 1;
  for (int l = 0; l < ELL_ID0 + g->E; l++)
    t *= g->extent[l] ? g->extent[l] : 1;
  return t;
}

static void generate(gen_case *g, bool big) {
  memset(g, 0, sizeof *g);
  g->n_ops = big ? (int)lt_test_rand_int(2, 4)
                 : (int)lt_test_rand_int(1, lt_test_rand_int(0, 3) == 0 ? MAX_OPS : 4);
  int pool[8], n_pool = (int)lt_test_rand_int(1, 6);
  for (int i = 0; i < n_pool; i++) {
    pool[i] = (int)lt_test_rand_int(0, 51);
    for (int j = 0; j < i; j++)
      if (pool[j] == pool[i]) i--, j = i; /* redraw duplicates */
  }
  for (int l = 0; l < ELL_ID0 + 4; l++)
    g->extent[l] = l < ELL_ID0 ? 1 : lt_test_rand_int(1, 4);
  for (int i = 0; i < n_pool; i++)
    g->extent[pool[i]] = lt_test_rand_int(1, big ? 24 : 4);
  if (lt_test_rand_int(0, 30) == 0) g->extent[pool[0]] = 0;
  g->E = lt_test_rand_int(0, 3) == 0 ? (int)lt_test_rand_int(1, 2) : 0;
  for (int k = 0; k < g->n_ops; k++) {
    int n = (int)lt_test_rand_int(0, 4);
    for (int i = 0; i < n; i++)
      g->item[k][i] = pool[lt_test_rand_int(0, n_pool - 1)];
    g->n_items[k] = n;
    if (g->E > 0 && lt_test_rand_int(0, 2) > 0) {
      int at = (int)lt_test_rand_int(0, n);
      memmove(&g->item[k][at + 1], &g->item[k][at], sizeof(int) * (size_t)(n - at));
      g->item[k][at] = ELL;
      g->n_items[k]++;
      g->ell_rank[k] = (int)lt_test_rand_int(0, g->E);
    }
  }
  /* Keep E the broadcast rank actually used (NumPy's rule works from the operands). */
  int used = 0;
  for (int k = 0; k < g->n_ops; k++)
    used = g->ell_rank[k] > used ? g->ell_rank[k] : used;
  g->E = used;
  g->implicit = lt_test_rand_int(0, 2) == 0;
  if (!g->implicit) {
    bool seen[52] = {false};
    for (int k = 0; k < g->n_ops; k++)
      for (int i = 0; i < g->n_items[k]; i++)
        if (g->item[k][i] != ELL) seen[g->item[k][i]] = true;
    for (int l = 0; l < 52; l++)
      if (seen[l] && lt_test_rand_int(0, 1)) g->out_item[g->n_out_items++] = l;
    for (int i = g->n_out_items - 1; i > 0; i--) {
      int j = (int)lt_test_rand_int(0, i), t = g->out_item[i];
      g->out_item[i] = g->out_item[j];
      g->out_item[j] = t;
    }
    if (g->E > 0 || lt_test_rand_int(0, 4) == 0) {
      int at = (int)lt_test_rand_int(0, g->n_out_items);
      memmove(&g->out_item[at + 1], &g->out_item[at], sizeof(int) * (size_t)(g->n_out_items - at));
      g->out_item[at] = ELL;
      g->n_out_items++;
    }
  }
  /* Keep the reference's loop small. */
  while (index_space(g) > (big ? 300000 : 20000)) {
    int l = (int)lt_test_rand_int(0, ELL_ID0 + 3);
    if (g->extent[l] > 1) g->extent[l]--;
  }
  for (int k = 0; k < g->n_ops; k++) {
    int labels[16];
    g->rank[k] = axis_labels(g, k, labels);
    bool one[ELL_ID0 + 4] = {false};
    for (int a = 0; a < g->rank[k]; a++)
      if (lt_test_rand_int(0, 12) == 0) one[labels[a]] = true; /* size-1 broadcasting */
    for (int a = 0; a < g->rank[k]; a++)
      g->shape[k][a] = one[labels[a]] ? 1 : g->extent[labels[a]];
  }
  /* A label's extent is the longest of its axes (all of them may have broadcast to 1). */
  int64_t longest[ELL_ID0 + 4];
  for (int l = 0; l < ELL_ID0 + 4; l++)
    longest[l] = 1;
  for (int k = 0; k < g->n_ops; k++) {
    int labels[16];
    axis_labels(g, k, labels);
    for (int a = 0; a < g->rank[k]; a++)
      if (g->shape[k][a] != 1) longest[labels[a]] = g->shape[k][a];
  }
  memcpy(g->extent, longest, sizeof longest);
  render(g);
}

static void check_case(lt_context *ctx, const gen_case *g, lt_dtype dtype, lt_path_algo algo,
                       bool planned) {
  lt_tensor *ins[MAX_OPS];
  double *data[MAX_OPS];
  int labels[MAX_OPS][16];
  lt_ref_operand ro[MAX_OPS];
  for (int k = 0; k < g->n_ops; k++) {
    lt_test_layout lay = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_COUNT - 1);
    ins[k] = lt_test_random_tensor(ctx, dtype, g->rank[k], g->shape[k], lay);
    data[k] = lt_test_snapshot(ins[k]);
    axis_labels(g, k, labels[k]);
    ro[k] = (lt_ref_operand){g->rank[k], labels[k], g->shape[k], data[k]};
  }
  int out_labels[16];
  int out_rank = output_labels(g, out_labels);
  double *want = lt_ref_einsum(g->n_ops, ro, ELL_ID0 + g->E, g->extent, out_rank, out_labels);
  int64_t out_shape[16];
  for (int a = 0; a < out_rank; a++)
    out_shape[a] = g->extent[out_labels[a]];
  int64_t n = lt_test_numel(out_rank, out_shape);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_path(opts, algo));
  char what[2048];
  int len = snprintf(what, sizeof what, "einsum '%s' (%s, path %d, %s) shapes", g->text,
                     lt_dtype_name(dtype), (int)algo, planned ? "planned" : "one-shot");
  for (int k = 0; k < g->n_ops; k++) {
    len += snprintf(what + len, sizeof what - (size_t)len, " (");
    for (int a = 0; a < g->rank[k]; a++)
      len += snprintf(what + len, sizeof what - (size_t)len, a ? ",%lld" : "%lld",
                      (long long)g->shape[k][a]);
    len += snprintf(what + len, sizeof what - (size_t)len, ")");
  }
  double *got;
  double rtol = lt_test_tolerance(dtype, index_space(g));
  if (!planned) {
    lt_tensor *out = NULL;
    lt_status st = lt_einsum(g->text, g->n_ops, (const lt_tensor *const *)ins, opts, &out);
    if (st != LT_OK) fail_msg("%s failed: %s", what, lt_last_error());
    assert_int_equal(lt_tensor_rank(out), out_rank);
    assert_int_equal(lt_tensor_dtype(out), dtype);
    got = lt_test_read_all(out);
    lt_test_assert_close(got, want, n, rtol, what);
    lt_tensor_destroy(out);
  } else {
    lt_test_output o;
    lt_test_layout lay = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_BROADCAST - 1);
    lt_test_output_make(ctx, dtype, out_rank, out_shape, lay, &o);
    double sc[2] = {lt_test_rand_double(-2, 2), lt_test_rand_int(0, 1) ? 0.0 : 0.5};
    if (sc[1] != 0.0) {
      lt_tensor *init =
          lt_test_random_tensor(ctx, dtype, out_rank, out_shape, LT_LAYOUT_CONTIGUOUS);
      LT_CHECK(lt_tensor_copy_into(o.view, init));
      lt_tensor_destroy(init);
    }
    double *old = lt_test_read_all(o.view);
    lt_plan *plan = NULL;
    lt_status st =
        lt_plan_einsum(g->text, g->n_ops, (const lt_tensor *const *)ins, o.view, opts, &plan);
    if (st != LT_OK) fail_msg("%s failed: %s", what, lt_last_error());
    LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)ins, g->n_ops, sc, 2, o.view));
    for (int64_t i = 0; i < n; i++)
      want[i] = sc[0] * want[i] + (sc[1] != 0 ? sc[1] * old[i] : 0);
    got = lt_test_read_all(o.view);
    snprintf(what + strlen(what), sizeof what - strlen(what), "\n%s", lt_plan_describe(plan));
    lt_test_assert_close(got, want, n, rtol * 4, what);
    lt_test_output_check_guard(&o);
    lt_plan_destroy(plan);
    lt_test_output_free(&o);
    free(old);
  }
  for (int k = 0; k < g->n_ops; k++) {
    lt_test_check_unchanged(ins[k], data[k]);
    lt_tensor_destroy(ins[k]);
    free(data[k]);
  }
  free(got);
  free(want);
  lt_plan_options_destroy(opts);
}

static void test_random_expressions(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  uint64_t seed = lt_test_seed();
  int cases = getenv("LT_EINSUM_CASES") ? atoi(getenv("LT_EINSUM_CASES")) : 400;
  for (int dv = 0; dv < ndev; dv++) {
    lt_test_rng_reset(seed);
    printf("[einsum] device %s, seed %llu, %d cases\n", devs[dv], (unsigned long long)seed, cases);
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int it = 0; it < cases; it++) {
      gen_case g;
      generate(&g, it % 5 == 4); /* every fifth case large enough for GEMM */
      if (getenv("LT_TEST_VERBOSE")) printf("case %d: %s\n", it, g.text);
      check_case(ctx, &g, it % 2 ? LT_F32 : LT_F64, (lt_path_algo)(it % 4), it % 3 == 0);
    }
    lt_context_destroy(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_expressions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* lt_plan_execute_slices (issue 24), on random networks: a sliced einsum plan's slices run in
 * ranges, as workers share them. Every range is checked against a naive float64 loop that keeps
 * only the label values whose slice number lies in the range (D = alpha*partial + beta*D over all
 * of D, as einsum.h says); ranges partitioning [0, n_slices) into zeroed outputs add up to
 * lt_plan_execute's result. Random networks with odd extents, every input and output layout,
 * every device; then the refusals. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXOP 6
#define MAXLAB 10

typedef struct net {
  int n, n_labels;
  int rank[MAXOP];
  int32_t modes[MAXOP][4];
  int64_t ext[MAXLAB];
  int rank_out;
  int32_t out[4];
} net;

/* Operands of 1..3 distinct labels; every label with odd-ish extents 2..7; output labels are
 * some of those seen once and, sometimes, one seen more often (then kept labels get sliced). */
static void random_net(net *g) {
  memset(g, 0, sizeof *g);
  g->n = (int)lt_test_rand_int(2, 5);
  g->n_labels = (int)lt_test_rand_int(3, 7);
  for (int l = 0; l < g->n_labels; l++)
    g->ext[l] = lt_test_rand_int(2, 7);
  int seen[MAXLAB] = {0};
  for (int k = 0; k < g->n; k++) {
    int want = (int)lt_test_rand_int(1, 3);
    for (int t = 0; t < 8 && g->rank[k] < want; t++) {
      int32_t l = (int32_t)lt_test_rand_int(0, g->n_labels - 1);
      bool dup = false;
      for (int a = 0; a < g->rank[k]; a++)
        dup |= g->modes[k][a] == l;
      if (!dup) g->modes[k][g->rank[k]++] = l, seen[l]++;
    }
  }
  for (int l = 0; l < g->n_labels; l++)
    if (seen[l] == 0) g->ext[l] = 1; /* unused: the reference loops over it once */
  for (int l = 0; l < g->n_labels && g->rank_out < 3; l++)
    if ((seen[l] == 1 && lt_test_rand_int(0, 2) > 0) ||
        (seen[l] > 1 && lt_test_rand_int(0, 5) == 0))
      g->out[g->rank_out++] = l;
}

/* want[o] = sum over label values whose slice number (sliced label j = digit j, j = 0
 * fastest) lies in [first, first + count) of the product of the inputs; touched[o] whether
 * any such value writes o. */
static void naive_range(const net *g, double *const *in, int ns, const int32_t *sliced,
                        int64_t first, int64_t count, double *want, bool *touched) {
  int64_t on = 1;
  for (int a = 0; a < g->rank_out; a++)
    on *= g->ext[g->out[a]];
  memset(want, 0, sizeof(double) * (size_t)on);
  memset(touched, 0, sizeof(bool) * (size_t)on);
  int64_t idx[MAXLAB] = {0};
  for (;;) {
    int64_t s = 0;
    for (int j = ns - 1; j >= 0; j--)
      s = s * g->ext[sliced[j]] + idx[sliced[j]];
    if (s >= first && s < first + count) {
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
      want[o] += v;
      touched[o] = true;
    }
    int l = 0;
    while (l < g->n_labels && ++idx[l] == g->ext[l])
      idx[l++] = 0;
    if (l == g->n_labels) break;
  }
}

typedef struct sliced_plan {
  lt_plan *plan;
  int ns;
  int32_t labels[MAXLAB];
  int64_t total;
} sliced_plan;

/* A plan for g writing into `d`'s layout, sliced under a fraction of its unsliced workspace. */
static bool make_plan(const net *g, lt_tensor *const *ins, const lt_tensor *d, sliced_plan *p) {
  const int32_t *modes[MAXOP];
  for (int k = 0; k < g->n; k++)
    modes[k] = g->modes[k];
  lt_plan *plain;
  LT_CHECK(lt_plan_einsum_modes(g->n, (const lt_tensor *const *)ins, modes, g->rank_out, g->out, d,
                                NULL, &plain));
  size_t ws;
  LT_CHECK(lt_plan_workspace_size(plain, &ws));
  lt_plan_destroy(plain);
  /* the tightest of ws/4, ws/3, ws/2 that some slicing meets */
  lt_status st = LT_ERR_OUT_OF_MEMORY;
  for (size_t div = 4; div >= 2 && st != LT_OK; div--) {
    lt_plan_options *o;
    LT_CHECK(lt_plan_options_create(&o));
    LT_CHECK(lt_plan_options_set_memory_limit(o, (int64_t)(ws / div > 8 ? ws / div : 8)));
    st = lt_plan_einsum_modes(g->n, (const lt_tensor *const *)ins, modes, g->rank_out, g->out, d, o,
                              &p->plan);
    lt_plan_options_destroy(o);
    if (st != LT_OK) assert_int_equal(st, LT_ERR_OUT_OF_MEMORY);
  }
  if (st != LT_OK) return false;
  double slices;
  LT_CHECK(lt_plan_einsum_slicing(p->plan, &p->ns, p->labels, MAXLAB, &slices, NULL));
  p->total = (int64_t)slices;
  return true;
}

static void check_range(lt_context *ctx, const net *g, lt_tensor *const *ins, double *const *host,
                        const sliced_plan *p, lt_test_output *out, int64_t first, int64_t count) {
  int64_t oshape[4], on = 1;
  for (int a = 0; a < g->rank_out; a++)
    on *= oshape[a] = g->ext[g->out[a]];
  lt_tensor *fill = lt_test_random_tensor(ctx, LT_F64, g->rank_out, oshape, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK(lt_tensor_copy_into(out->view, fill));
  lt_tensor_destroy(fill);
  double *before = lt_test_read_all(out->view);
  double *want = malloc(sizeof(double) * (size_t)on);
  bool *touched = malloc((size_t)on);
  naive_range(g, host, p->ns, p->labels, first, count, want, touched);
  double sc[2] = {0.75, -1.5};
  LT_CHECK(lt_plan_execute_slices(p->plan, first, count, (const lt_tensor *const *)ins, g->n, sc, 2,
                                  out->view));
  for (int64_t i = 0; i < on; i++)
    want[i] = 0.75 * (touched[i] ? want[i] : 0.0) - 1.5 * before[i];
  double *got = lt_test_read_all(out->view);
  lt_test_assert_close(got, want, on, 1e-12, "slice range");
  lt_test_output_check_guard(out);
  free(got);
  free(want);
  free(touched);
  free(before);
}

/* Random ranges (empty ones too) partitioning [0, total) into zeroed outputs: they add up to
 * lt_plan_execute's result. */
static void check_partition(lt_context *ctx, const net *g, lt_tensor *const *ins,
                            const sliced_plan *p, lt_tensor *d) {
  int64_t oshape[4], on = 1;
  for (int a = 0; a < g->rank_out; a++)
    on *= oshape[a] = g->ext[g->out[a]];
  LT_CHECK(lt_plan_execute(p->plan, (const lt_tensor *const *)ins, g->n, NULL, 0, d));
  double *whole = lt_test_read_all(d);
  double *sum = calloc((size_t)on, sizeof(double));
  lt_tensor *zero;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, g->rank_out, oshape, &zero));
  for (int64_t first = 0; first < p->total;) {
    int64_t count = lt_test_rand_int(0, p->total - first);
    LT_CHECK(lt_tensor_copy_into(d, zero));
    LT_CHECK(lt_plan_execute_slices(p->plan, first, count, (const lt_tensor *const *)ins, g->n,
                                    NULL, 0, d));
    double *part = lt_test_read_all(d);
    for (int64_t i = 0; i < on; i++)
      sum[i] += part[i];
    free(part);
    first += count;
  }
  lt_test_assert_close(sum, whole, on, 1e-12, "sum of slice ranges");
  lt_tensor_destroy(zero);
  free(sum);
  free(whole);
}

static void ranges_on(lt_context *ctx) {
  int rounds = lt_test_instrumented() ? 6 : 40, sliced_seen = 0;
  for (int it = 0; it < rounds; it++) {
    net g;
    random_net(&g);
    lt_tensor *ins[MAXOP];
    double *host[MAXOP];
    for (int k = 0; k < g.n; k++) {
      int64_t shape[4];
      for (int a = 0; a < g.rank[k]; a++)
        shape[a] = g.ext[g.modes[k][a]];
      ins[k] = lt_test_random_tensor(ctx, LT_F64, g.rank[k], shape,
                                     (lt_test_layout)((it + k) % LT_LAYOUT_COUNT));
      host[k] = lt_test_read_all(ins[k]);
    }
    int64_t oshape[4];
    for (int a = 0; a < g.rank_out; a++)
      oshape[a] = g.ext[g.out[a]];
    lt_test_output out;
    lt_test_output_make(ctx, LT_F64, g.rank_out, oshape, (lt_test_layout)(it % 4), &out);
    sliced_plan p;
    if (make_plan(&g, ins, out.view, &p)) {
      sliced_seen += p.ns > 0;
      int64_t a = lt_test_rand_int(0, p.total), b = lt_test_rand_int(0, p.total);
      check_range(ctx, &g, ins, host, &p, &out, a < b ? a : b, a < b ? b - a : a - b);
      check_range(ctx, &g, ins, host, &p, &out, 0, p.total);
      check_range(ctx, &g, ins, host, &p, &out, p.total - 1, 1);
      check_partition(ctx, &g, ins, &p, out.view);
      lt_plan_destroy(p.plan);
    }
    lt_test_output_free(&out);
    for (int k = 0; k < g.n; k++) {
      lt_tensor_destroy(ins[k]);
      free(host[k]);
    }
  }
  assert_true(sliced_seen >= rounds / 3); /* the memory limit did slice most networks */
}

static void test_ranges_equal_reference(void **state) {
  (void)state;
  lt_test_on_each_device(ranges_on);
}

static void test_refusals(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t sa[2] = {5, 7}, sb[2] = {7, 6}, sc3[2] = {6, 3};
  lt_tensor *a, *b, *c, *d, *bad;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, sa, &a));
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, sb, &b));
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, sc3, &c));
  const lt_tensor *ins[3] = {a, b, c};
  lt_plan_options *o;
  LT_CHECK(lt_plan_options_create(&o));
  LT_CHECK(lt_plan_options_set_memory_limit(o, 64));
  lt_plan *plan;
  LT_CHECK(lt_plan_einsum("ij,jk,kl->il", 3, ins, NULL, o, &plan));
  double slices;
  int ns;
  LT_CHECK(lt_plan_einsum_slicing(plan, &ns, NULL, 0, &slices, NULL));
  assert_true(ns >= 1 && slices >= 2);
  int64_t total = (int64_t)slices;
  LT_CHECK(lt_plan_create_output(plan, &d));
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, sa, &bad));
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, -1, 1, ins, 3, NULL, 0, d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, -1, ins, 3, NULL, 0, d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 1, total, ins, 3, NULL, 0, d),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, INT64_MAX, INT64_MAX, ins, 3, NULL, 0, d),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, total + 1, 0, ins, 3, NULL, 0, d),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK(lt_plan_execute_slices(plan, total, 0, ins, 3, NULL, 0, d)); /* empty: fine */
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, 1, ins, 2, NULL, 0, d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, 1, ins, 3, NULL, 0, bad), LT_ERR_LAYOUT_MISMATCH);
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, 1, ins, 3, NULL, 0, NULL), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_plan_execute_slices(NULL, 0, 1, ins, 2, NULL, 0, d), LT_ERR_NULL_POINTER);
  double sc[3] = {1, 0, 0};
  LT_CHECK_FAILS(lt_plan_execute_slices(plan, 0, 1, ins, 3, sc, 3, d), LT_ERR_INVALID_ARGUMENT);
  /* the output may not overlap an input: a square einsum into its own operand */
  lt_tensor *sq;
  int64_t s2[2] = {4, 4};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, s2, &sq));
  const lt_tensor *sqin[2] = {sq, sq};
  lt_plan *sqplan;
  LT_CHECK(lt_plan_einsum("ij,jk->ik", 2, sqin, sq, NULL, &sqplan));
  LT_CHECK_FAILS(lt_plan_execute_slices(sqplan, 0, 1, sqin, 2, NULL, 0, sq), LT_ERR_ALIASING);
  lt_plan_destroy(sqplan);
  /* a plan of another family */
  int32_t ma[2] = {0, 1}, md[2] = {1, 0};
  lt_plan *perm;
  lt_tensor *pd;
  int64_t st[2] = {7, 5};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F64, 2, st, &pd));
  LT_CHECK(lt_plan_permutation(a, ma, pd, md, NULL, &perm));
  const lt_tensor *pin[1] = {a};
  LT_CHECK_FAILS(lt_plan_execute_slices(perm, 0, 1, pin, 1, NULL, 0, pd), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "not an einsum plan"));
  lt_plan_destroy(perm);
  lt_tensor_destroy(pd);
  lt_tensor_destroy(sq);
  lt_tensor_destroy(bad);
  lt_tensor_destroy(d);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(o);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_tensor_destroy(c);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ranges_equal_reference),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

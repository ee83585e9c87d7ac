/* SPDX-License-Identifier: MIT */
/* lt_plan_contraction against the naive reference: random mode groups, layouts, dtypes,
 * alpha/beta, C given or not, size-0 and size-1 modes, small (direct) and large (GEMM). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "einsum_ref.h"
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct contraction_case {
  int na, nb, nd;
  int32_t ma[16], mb[16], md[16];
  int64_t extent[16];
  int n_labels;
} contraction_case;

static void shuffle(int32_t *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)lt_test_rand_int(0, i);
    int32_t t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}

/* Random groups: batch, M, N, K, and modes private to A or B. */
static void random_case(contraction_case *c, bool big, bool allow_zero) {
  int counts[6];
  int n = 0;
  for (int g = 0; g < 6; g++)
    counts[g] = (int)lt_test_rand_int(0, g >= 4 ? 1 : 2);
  if (big && counts[3] == 0) counts[3] = 1; /* a contracted mode, so GEMM runs */
  c->na = c->nb = c->nd = 0;
  for (int g = 0; g < 6; g++)
    for (int i = 0; i < counts[g]; i++, n++) {
      int32_t label = 100 + 7 * n; /* arbitrary, non-dense labels */
      c->extent[n] = big ? lt_test_rand_int(2, 4) : lt_test_rand_int(1, 4);
      if (allow_zero && lt_test_rand_int(0, 12) == 0) c->extent[n] = 0;
      bool in_a = g == 0 || g == 1 || g == 3 || g == 4;
      bool in_b = g == 0 || g == 2 || g == 3 || g == 5;
      bool in_d = g <= 2;
      if (in_a) c->ma[c->na++] = label;
      if (in_b) c->mb[c->nb++] = label;
      if (in_d) c->md[c->nd++] = label;
    }
  c->n_labels = n;
  /* Big cases grow random labels until the whole index space (the reference's cost) is
   * ~40k, enough for the GEMM path. */
  for (int64_t total = 1; big && n > 0; total = 1) {
    for (int i = 0; i < n; i++)
      total *= c->extent[i];
    if (total >= 40000) break;
    c->extent[lt_test_rand_int(0, n - 1)] += 1;
  }
  shuffle(c->ma, c->na);
  shuffle(c->mb, c->nb);
  shuffle(c->md, c->nd);
}

static void shape_of(const contraction_case *c, int rank, const int32_t *modes, int64_t *shape,
                     int *ids) {
  for (int i = 0; i < rank; i++) {
    ids[i] = (modes[i] - 100) / 7;
    shape[i] = c->extent[ids[i]];
  }
}

/* When set, A, B and C are read through unary transforms (NEG, SQUARE, ABS). */
static bool use_unary;

static double *transformed(const double *v, int64_t n, lt_unary_op op) {
  double *out = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++)
    out[i] = op == LT_UNARY_NEG      ? -v[i]
             : op == LT_UNARY_SQUARE ? v[i] * v[i]
             : op == LT_UNARY_ABS    ? fabs(v[i])
                                     : v[i];
  return out;
}

static void run_case_layouts(lt_context *ctx, const contraction_case *c, lt_dtype dtype,
                             bool with_c, lt_test_layout la, lt_test_layout lb, lt_test_layout ld,
                             double alpha, double beta) {
  int64_t sa[16], sb[16], sd[16];
  int ia[16], ib[16], id[16];
  shape_of(c, c->na, c->ma, sa, ia);
  shape_of(c, c->nb, c->mb, sb, ib);
  shape_of(c, c->nd, c->md, sd, id);
  lt_tensor *a = lt_test_random_tensor(ctx, dtype, c->na, sa, la);
  lt_tensor *b = lt_test_random_tensor(ctx, dtype, c->nb, sb, lb);
  lt_tensor *cc =
      with_c ? lt_test_random_tensor(ctx, dtype, c->nd, sd, LT_LAYOUT_TRANSPOSED) : NULL;
  lt_test_output out;
  lt_test_output_make(ctx, dtype, c->nd, sd, ld, &out);
  if (!with_c && beta != 0.0) {
    lt_tensor *init = lt_test_random_tensor(ctx, dtype, c->nd, sd, LT_LAYOUT_CONTIGUOUS);
    LT_CHECK(lt_tensor_copy_into(out.view, init));
    lt_tensor_destroy(init);
  }
  double *da = lt_test_snapshot(a), *db = lt_test_snapshot(b);
  double *dc = lt_test_read_all(with_c ? cc : out.view);
  lt_plan *plan;
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  lt_unary_op ua = use_unary ? LT_UNARY_NEG : LT_UNARY_IDENTITY;
  lt_unary_op ub = use_unary ? LT_UNARY_SQUARE : LT_UNARY_IDENTITY;
  lt_unary_op uc = use_unary && with_c ? LT_UNARY_ABS : LT_UNARY_IDENTITY;
  LT_CHECK(lt_plan_options_set_unary(opts, 0, ua));
  LT_CHECK(lt_plan_options_set_unary(opts, 1, ub));
  LT_CHECK(lt_plan_options_set_unary(opts, 2, uc));
  LT_CHECK(lt_plan_contraction(a, c->ma, b, c->mb, cc, c->md, out.view, c->md, opts, &plan));
  lt_plan_options_destroy(opts);
  const lt_tensor *ins[3] = {a, b, cc};
  double sc[2] = {alpha, beta};
  LT_CHECK(lt_plan_execute(plan, ins, with_c ? 3 : 2, sc, 2, out.view));

  int64_t n = lt_test_numel(c->nd, sd), terms = 1;
  double *ta = transformed(da, lt_test_numel(c->na, sa), ua);
  double *tb = transformed(db, lt_test_numel(c->nb, sb), ub);
  double *tc = transformed(dc, n, uc);
  lt_ref_operand ro[2] = {{c->na, ia, sa, ta}, {c->nb, ib, sb, tb}};
  double *want = lt_ref_einsum(2, ro, c->n_labels, c->extent, c->nd, id);
  for (int i = 0; i < c->n_labels; i++)
    terms *= c->extent[i] ? c->extent[i] : 1;
  for (int64_t i = 0; i < n; i++)
    want[i] = alpha * want[i] + (beta != 0 ? beta * tc[i] : 0.0);
  double *got = lt_test_read_all(out.view);
  char what[128];
  snprintf(what, sizeof what, "contraction (%s, %s/%s, %s)", lt_dtype_name(dtype),
           lt_test_layout_name(la), lt_test_layout_name(lb), lt_plan_describe(plan));
  lt_test_assert_close(got, want, n, lt_test_tolerance(dtype, terms), what);
  if (getenv("LT_TEST_VERBOSE")) printf("%s\n", what);
  lt_test_output_check_guard(&out);
  lt_test_check_unchanged(a, da);
  lt_test_check_unchanged(b, db);
  free(got);
  free(want);
  free(ta);
  free(tb);
  free(tc);
  free(da);
  free(db);
  free(dc);
  lt_plan_destroy(plan);
  lt_test_output_free(&out);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_tensor_destroy(cc);
}

/* run_case_layouts with random layout families for A, B and the output. */
static void run_case(lt_context *ctx, const contraction_case *c, lt_dtype dtype, bool with_c,
                     double alpha, double beta) {
  lt_test_layout la = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_COUNT - 1);
  lt_test_layout lb = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_COUNT - 1);
  lt_test_layout ld = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_BROADCAST - 1);
  run_case_layouts(ctx, c, dtype, with_c, la, lb, ld, alpha, beta);
}

static void random_contractions_on(lt_context *ctx) {
  for (int it = 0; it < 300; it++) {
    contraction_case c;
    bool big = it % 3 == 0;
    random_case(&c, big, !big);
    lt_dtype dtype = it % 2 ? LT_F32 : LT_F64;
    bool with_c = lt_test_rand_int(0, 2) == 0;
    double alpha = lt_test_rand_double(-2, 2);
    double beta = lt_test_rand_int(0, 2) == 0 ? 0.0 : lt_test_rand_double(-2, 2);
    run_case(ctx, &c, dtype, with_c, alpha, beta);
  }
}

static void test_random_contractions(void **state) {
  lt_test_on_each_device(random_contractions_on);
}

/* Plain matrix products in every transposition hit the no-copy GEMM path. */
static void test_matmul_layouts(void **state) {
  lt_test_rng_reset(lt_test_seed() + 1);
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    contraction_case c = {.na = 2, .nb = 2, .nd = 2, .n_labels = 3, .extent = {33, 40, 37}};
    int32_t pairs[2][2] = {{100, 107}, {107, 100}}, pb[2][2] = {{107, 114}, {114, 107}},
            pd[2][2] = {{100, 114}, {114, 100}};
    for (int x = 0; x < 8; x++) {
      memcpy(c.ma, pairs[x & 1], sizeof pairs[0]);
      memcpy(c.mb, pb[(x >> 1) & 1], sizeof pb[0]);
      memcpy(c.md, pd[(x >> 2) & 1], sizeof pd[0]);
      run_case(ctx, &c, LT_F64, false, 1.5, 0.0);
      run_case(ctx, &c, LT_F32, true, -0.5, 2.0);
    }
    lt_context_destroy(ctx);
  }
}

/* Matrix products whose extents cross the packed GEMM's cache blocks (kc 256-512, A blocks of
 * 64-256 rows, nc 3072) and register tiles (16 or 32 x 12) at uneven points, single matrices
 * (threads share one GEMM) and batches (threads take whole GEMMs), on one thread and on two. */
static void test_gemm_blocking(void **state) {
  lt_test_rng_reset(lt_test_seed() + 2);
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  const int64_t shapes[][4] = {/* m, n, k, batch; those above 8 MFLOP run on both threads */
                               {200, 64, 400, 1}, {33, 3100, 40, 1}, {1, 50, 7, 1}, {50, 1, 513, 1},
                               {293, 27, 1, 1},   {64, 47, 300, 6},  {17, 13, 5, 3}};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int threads = 1; threads <= 2; threads++) {
      LT_CHECK(lt_context_set_num_threads(ctx, threads));
      for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int64_t *e = shapes[i];
        bool batched = e[3] > 1;
        contraction_case c = {.na = 2 + batched,
                              .nb = 2 + batched,
                              .nd = 2 + batched,
                              .n_labels = 3 + batched,
                              .extent = {e[0], e[2], e[1], e[3]}};
        int32_t m = 100, k = 107, n = 114, b = 121;
        int32_t ma2[2][2] = {{m, k}, {k, m}}, mb2[2][2] = {{k, n}, {n, k}};
        int32_t md2[2][2] = {{m, n}, {n, m}};
        int32_t ma3[2][3] = {{b, m, k}, {k, b, m}}, mb3[2][3] = {{b, k, n}, {n, k, b}};
        int32_t md3[2][3] = {{b, m, n}, {n, b, m}};
        for (int x = 0; x < 4; x++) {
          int ia = x & 1, ib = (x >> 1) & 1, id = x == 3;
          memcpy(c.ma, batched ? ma3[ia] : ma2[ia], sizeof(int32_t) * (size_t)c.na);
          memcpy(c.mb, batched ? mb3[ib] : mb2[ib], sizeof(int32_t) * (size_t)c.nb);
          memcpy(c.md, batched ? md3[id] : md2[id], sizeof(int32_t) * (size_t)c.nd);
          run_case(ctx, &c, x % 2 ? LT_F32 : LT_F64, x == 1, 0.75, x >= 2 ? -1.5 : 0.0);
        }
      }
    }
    lt_context_destroy(ctx);
  }
}

/* Contractions whose GEMM row, column or k group spans modes that do not nest into one stride
 * (TCCG shapes): where the CPU's packed kernels run (AVX2, AVX-512) they pack through offset
 * lists and write C tiles in place or, where a tile crosses a mode boundary, element-wise.
 * Odd extents put edge tiles and boundary-crossing tiles everywhere; every layout family of A
 * and B and every output family; each instruction-set level the CPU has (LT_CPU_ISA is read
 * when a context opens), and the other devices once. */
typedef struct scatter_spec {
  const char *spec;  /* C-A-B */
  int64_t extent[8]; /* by letter */
} scatter_spec;

static void case_of_spec(const scatter_spec *sp, contraction_case *c) {
  int part = 0, *count[3] = {&c->nd, &c->na, &c->nb};
  int32_t *modes[3] = {c->md, c->ma, c->mb};
  c->na = c->nb = c->nd = c->n_labels = 0;
  for (const char *ch = sp->spec; *ch; ch++) {
    if (*ch == '-') {
      part++;
      continue;
    }
    int id = *ch - 'a';
    modes[part][(*count[part])++] = 100 + 7 * id;
    if (id + 1 > c->n_labels) c->n_labels = id + 1;
  }
  for (int i = 0; i < c->n_labels; i++)
    c->extent[i] = sp->extent[i];
}

static void scattered_groups_on(lt_context *ctx) {
  static const scatter_spec specs[] = {
      {"abcd-dbea-ec", {13, 5, 17, 9, 6}},     {"abcdef-dega-gfbc", {5, 3, 7, 4, 6, 3, 5}},
      {"abcd-aecf-bfde", {5, 6, 7, 3, 9, 4}},  {"abc-adc-db", {9, 21, 5, 19}},
      {"abcde-efbad-cf", {3, 5, 17, 4, 3, 6}}, {"ab-cad-dcb", {33, 17, 5, 7}},
  };
  int combos = lt_test_instrumented() ? 1 : 5;
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    contraction_case c;
    case_of_spec(&specs[i], &c);
    for (int x = 0; x < combos; x++) {
      lt_test_layout la = (lt_test_layout)((x + (int)i) % LT_LAYOUT_COUNT);
      lt_test_layout lb = (lt_test_layout)((2 * x + 1) % LT_LAYOUT_COUNT);
      lt_test_layout ld = (lt_test_layout)(x % LT_LAYOUT_BROADCAST);
      run_case_layouts(ctx, &c, x % 2 ? LT_F64 : LT_F32, x == 2, la, lb, ld, 1.25,
                       x >= 3 ? -0.5 : 0.0);
    }
  }
}

static void test_scattered_groups(void **state) {
  (void)state;
  lt_test_rng_reset(lt_test_seed() + 3);
  if (!getenv("LT_CPU_ISA")) { /* the default run covers every level; variants only their own */
    static const char *levels[] = {"avx2", "baseline"};
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
      setenv("LT_CPU_ISA", levels[l], 1);
      lt_context *ctx;
      LT_CHECK(lt_context_create("cpu", &ctx));
      scattered_groups_on(ctx);
      lt_context_destroy(ctx);
      unsetenv("LT_CPU_ISA");
    }
  }
  lt_test_on_each_device(scattered_groups_on);
}

/* LT_CPU_ISA is read once, when a context opens: contexts made after it is set plan and run
 * on the capped instruction set (the portable GEMM kernels, SSE2 tiles) while one made before
 * keeps its own, in one process. What is under test is the CPU backend's dispatch, so the CPU
 * alone; the instrumented runs (valgrind, TSan) skip it, as it repeats two whole tests and ASan
 * covers it. */
static void test_isa_switch_new_context(void **state) {
  if (getenv("LT_CPU_ISA")) skip(); /* the variant under test is the default */
  if (lt_test_instrumented()) skip();
  const char *devices = getenv("LT_TEST_DEVICES");
  char saved[256];
  snprintf(saved, sizeof saved, "%s", devices ? devices : "");
  setenv("LT_TEST_DEVICES", "cpu", 1);
  lt_context *before;
  LT_CHECK(lt_context_create("cpu", &before));
  setenv("LT_CPU_ISA", "baseline", 1);
  test_gemm_blocking(state); /* its contexts are made now, after the setenv */
  test_random_contractions(state);
  contraction_case c = {.na = 2,
                        .nb = 2,
                        .nd = 2,
                        .n_labels = 3,
                        .extent = {70, 50, 60},
                        .ma = {100, 107},
                        .mb = {107, 114},
                        .md = {100, 114}};
  run_case(before, &c, LT_F32, false, 1.0, 0.0);
  unsetenv("LT_CPU_ISA");
  run_case(before, &c, LT_F64, true, 0.5, 2.0);
  lt_context_destroy(before);
  if (devices)
    setenv("LT_TEST_DEVICES", saved, 1);
  else
    unsetenv("LT_TEST_DEVICES");
}

static void test_invalid(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t s23[2] = {2, 3}, s34[2] = {3, 4}, s24[2] = {2, 4};
  lt_tensor *a, *b, *d, *bad;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s23, &a));
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s34, &b));
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s24, &d));
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s24, &bad));
  int32_t ma[2] = {0, 1}, mb[2] = {1, 2}, md[2] = {0, 2}, mrep[2] = {0, 0}, mx[2] = {0, 9};
  lt_plan *plan = (lt_plan *)1;
  LT_CHECK_FAILS(lt_plan_contraction(a, ma, b, mb, NULL, NULL, d, mx, NULL, &plan),
                 LT_ERR_INVALID_ARGUMENT);
  assert_null(plan);
  LT_CHECK_FAILS(lt_plan_contraction(a, mrep, b, mb, NULL, NULL, d, md, NULL, &plan),
                 LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_plan_contraction(a, ma, a, ma, NULL, NULL, b, ma, NULL, &plan),
                 LT_ERR_SHAPE_MISMATCH);
  LT_CHECK_FAILS(lt_plan_contraction(a, ma, b, mb, NULL, NULL, d, NULL, NULL, &plan),
                 LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_plan_contraction(NULL, ma, b, mb, NULL, NULL, d, md, NULL, &plan),
                 LT_ERR_NULL_POINTER);
  lt_tensor *bc;
  int64_t s1[2] = {2, 1};
  lt_tensor *one;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, s1, &one));
  LT_CHECK(lt_view_broadcast_to(one, 2, s24, &bc));
  LT_CHECK_FAILS(lt_plan_contraction(a, ma, b, mb, NULL, NULL, bc, md, NULL, &plan),
                 LT_ERR_ALIASING);
  LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, d, md, NULL, &plan));
  const lt_tensor *ins[2] = {a, bad};
  LT_CHECK_FAILS(lt_plan_execute(plan, ins, 2, NULL, 0, d), LT_ERR_LAYOUT_MISMATCH);
  lt_plan_destroy(plan);
  lt_tensor_destroy(bc);
  lt_tensor_destroy(one);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  lt_tensor_destroy(d);
  lt_tensor_destroy(bad);
  lt_context_destroy(ctx);
}

/* C may be D itself (accumulation in place), small (direct) and large (GEMM); an output that
 * shares memory with A or B, or with C in another arrangement, is refused at execution. */
static void aliasing_on(lt_context *ctx) {
  int32_t ma[2] = {0, 1}, mb[2] = {1, 2}, md[2] = {0, 2}, mt[2] = {2, 0};
  int64_t sizes[2] = {3, 300};
  for (int k = 0; k < 2; k++) {
    int64_t n = sizes[k], s[2] = {n, n};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, 2, s, LT_LAYOUT_CONTIGUOUS);
    lt_tensor *b = lt_test_random_tensor(ctx, LT_F64, 2, s, LT_LAYOUT_TRANSPOSED);
    lt_tensor *d = lt_test_random_tensor(ctx, LT_F64, 2, s, LT_LAYOUT_CONTIGUOUS);
    double *da = lt_test_read_all(a), *db = lt_test_read_all(b), *dd = lt_test_read_all(d);
    lt_plan *plan;
    LT_CHECK(lt_plan_contraction(a, ma, b, mb, d, md, d, md, NULL, &plan));
    const lt_tensor *ins[3] = {a, b, d};
    double sc[2] = {1.5, -2.5};
    LT_CHECK(lt_plan_execute(plan, ins, 3, sc, 2, d));
    double *want = malloc(sizeof(double) * (size_t)(n * n));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double acc = 0;
        for (int64_t l = 0; l < n; l++)
          acc += da[i * n + l] * db[l * n + j];
        want[i * n + j] = 1.5 * acc - 2.5 * dd[i * n + j];
      }
    double *got = lt_test_read_all(d);
    lt_test_assert_close(got, want, n * n, lt_test_tolerance(LT_F64, n), "C = D in place");
    lt_plan_destroy(plan);
    /* D = A, D = B, and C = D transposed: each refused, D left as it was. */
    LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, a, md, NULL, &plan));
    LT_CHECK_FAILS(lt_plan_execute(plan, ins, 2, NULL, 0, a), LT_ERR_ALIASING);
    lt_test_check_unchanged(a, da);
    lt_plan_destroy(plan);
    LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, b, md, NULL, &plan));
    LT_CHECK_FAILS(lt_plan_execute(plan, ins, 2, NULL, 0, b), LT_ERR_ALIASING);
    lt_test_check_unchanged(b, db);
    lt_plan_destroy(plan);
    lt_tensor *dt;
    LT_CHECK(lt_view_transpose(d, 0, 1, &dt));
    LT_CHECK(lt_plan_contraction(a, ma, b, mb, dt, mt, d, md, NULL, &plan));
    LT_CHECK_FAILS(lt_plan_execute(plan, (const lt_tensor *[]){a, b, dt}, 3, sc, 2, d),
                   LT_ERR_ALIASING);
    lt_test_check_unchanged(d, got);
    lt_plan_destroy(plan);
    lt_tensor_destroy(dt);
    free(want);
    free(got);
    free(da);
    free(db);
    free(dd);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
    lt_tensor_destroy(d);
  }
}

static void test_aliasing(void **state) { lt_test_on_each_device(aliasing_on); }

/* Unary transforms on A, B and C reach every lowering (direct, elementwise, GEMM packs). */
static void test_unary_operands(void **state) {
  use_unary = true;
  test_random_contractions(state);
  use_unary = false;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_contractions),
      cmocka_unit_test(test_matmul_layouts),
      cmocka_unit_test(test_gemm_blocking),
      cmocka_unit_test(test_scattered_groups),
      cmocka_unit_test(test_isa_switch_new_context),
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_aliasing),
      cmocka_unit_test(test_unary_operands),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

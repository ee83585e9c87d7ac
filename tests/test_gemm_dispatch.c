/* SPDX-License-Identifier: MIT */
/* The GEMM dispatch and the operand order (issue 25), against the naive float64 reference:
 * A.B and B.A make the same plan (same description, workspace and bit-identical results) over
 * random mode groups and layouts; LT_GEMM_ENGINE forces either CPU engine, and the measured
 * choice is named in the plan's description, is the same for every plan of a shape class, and
 * computes the same products; OpenBLAS's process-wide thread count is left as found. No timing
 * is asserted. */
#define _GNU_SOURCE /* setenv, RTLD_DEFAULT */
#include "einsum_ref.h"
#include "harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pair_case {
  int na, nb, nd, n_labels;
  int32_t ma[8], mb[8], md[8]; /* labels 0..n_labels-1 */
  int64_t extent[8];
} pair_case;

static void shape_of(const pair_case *c, int rank, const int32_t *modes, int64_t *shape, int *ids) {
  for (int i = 0; i < rank; i++)
    shape[i] = c->extent[modes[i]], ids[i] = modes[i];
}

/* Random batch, M, N, K groups (K never empty); sizes large enough for GEMM unless small. */
static void random_pair(pair_case *c, bool small) {
  int counts[4];
  for (int g = 0; g < 4; g++)
    counts[g] = (int)lt_test_rand_int(g == 3, 2);
  c->na = c->nb = c->nd = c->n_labels = 0;
  for (int g = 0; g < 4; g++)
    for (int i = 0; i < counts[g]; i++) {
      int32_t l = c->n_labels++;
      c->extent[l] = lt_test_rand_int(1, small ? 4 : 12);
      if (g != 2) c->ma[c->na++] = l;
      if (g != 1) c->mb[c->nb++] = l;
      if (g != 3) c->md[c->nd++] = l;
    }
  for (int64_t total = 1; !small; total = 1) {
    for (int i = 0; i < c->n_labels; i++)
      total *= c->extent[i];
    if (total >= 20000) break;
    c->extent[lt_test_rand_int(0, c->n_labels - 1)] += 1;
  }
  lt_test_shuffle(c->ma, c->na);
  lt_test_shuffle(c->mb, c->nb);
  lt_test_shuffle(c->md, c->nd);
}

/* Plans D = A.B, or B.A when swap, and runs it. With `same`, the result must equal it bit for
 * bit; else it is checked against *ref, the reference, computed into *ref when NULL (caller
 * frees). Returns the result (caller frees) and the description in desc. */
static double *run_pair(lt_context *ctx, const pair_case *c, lt_dtype dt, lt_tensor *a,
                        lt_tensor *b, bool swap, const double *same, double **ref, char *desc,
                        size_t desc_size, size_t *ws) {
  int64_t sa[8], sb[8], sd[8];
  int ia[8], ib[8], id[8];
  shape_of(c, c->na, c->ma, sa, ia);
  shape_of(c, c->nb, c->mb, sb, ib);
  shape_of(c, c->nd, c->md, sd, id);
  lt_tensor *d;
  LT_CHECK(lt_tensor_zeros(ctx, dt, c->nd, sd, &d));
  lt_plan *plan;
  if (swap)
    LT_CHECK(lt_plan_contraction(b, c->mb, a, c->ma, NULL, NULL, d, c->md, NULL, &plan));
  else
    LT_CHECK(lt_plan_contraction(a, c->ma, b, c->mb, NULL, NULL, d, c->md, NULL, &plan));
  const lt_tensor *ins[2] = {swap ? b : a, swap ? a : b};
  LT_CHECK(lt_plan_execute(plan, ins, 2, NULL, 0, d));
  snprintf(desc, desc_size, "%s", lt_plan_describe(plan));
  LT_CHECK(lt_plan_workspace_size(plan, ws));
  double *got = lt_test_read_all(d);
  lt_plan_destroy(plan);
  lt_tensor_destroy(d);
  if (same) {
    /* One plan, one order of arithmetic: the same bits. */
    if (memcmp(got, same, sizeof(double) * (size_t)lt_test_numel(c->nd, sd)) != 0)
      fail_msg("results differ: %s", desc);
    return got;
  }
  if (*ref == NULL) {
    double *da = lt_test_read_all(a), *db = lt_test_read_all(b);
    lt_ref_operand ro[2] = {{c->na, ia, sa, da}, {c->nb, ib, sb, db}};
    *ref = lt_ref_einsum(2, ro, c->n_labels, c->extent, c->nd, id);
    free(da);
    free(db);
  }
  int64_t terms = 1;
  for (int i = 0; i < c->n_labels; i++)
    terms *= c->extent[i];
  lt_test_assert_close(got, *ref, lt_test_numel(c->nd, sd), lt_test_tolerance(dt, terms), desc);
  return got;
}

static void swapped_operands_n(lt_context *ctx, int cases) {
  for (int it = 0; it < cases; it++) {
    pair_case c;
    random_pair(&c, it % 4 == 3);
    lt_dtype dt = it % 2 ? LT_F32 : LT_F64;
    int64_t sa[8], sb[8];
    int ids[8];
    shape_of(&c, c.na, c.ma, sa, ids);
    shape_of(&c, c.nb, c.mb, sb, ids);
    lt_test_layout la = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_COUNT - 1);
    lt_test_layout lb = (lt_test_layout)lt_test_rand_int(0, LT_LAYOUT_COUNT - 1);
    lt_tensor *a = lt_test_random_tensor(ctx, dt, c.na, sa, la);
    lt_tensor *b = lt_test_random_tensor(ctx, dt, c.nb, sb, lb);
    char d1[256], d2[256];
    size_t w1, w2;
    double *ref = NULL;
    double *r1 = run_pair(ctx, &c, dt, a, b, false, NULL, &ref, d1, sizeof d1, &w1);
    double *r2 = run_pair(ctx, &c, dt, a, b, true, r1, &ref, d2, sizeof d2, &w2);
    free(ref);
    if (strcmp(d1, d2) != 0 || w1 != w2)
      fail_msg("A.B and B.A plan differently (%s/%s):\n  %s\n  %s", lt_test_layout_name(la),
               lt_test_layout_name(lb), d1, d2);
    free(r1);
    free(r2);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
  }
}

static void swapped_operands_on(lt_context *ctx) {
  /* Fewer on OpenCL, where each new plan shape compiles kernels: the order is chosen before
   * any backend step, so the CPU cases cover the logic and these the other backend's plans. */
  bool cpu = strcmp(lt_context_device(ctx), "cpu") == 0;
  swapped_operands_n(ctx, lt_test_instrumented() ? 8 : cpu ? 40 : 10);
}

static void test_swapped_operands(void **state) {
  (void)state;
  lt_test_on_each_device(swapped_operands_on);
}

static bool cpu_has_openblas(void) {
  const char *name = "";
  LT_CHECK(lt_device_string(0, LT_DEVICE_NAME, &name));
  return strstr(name, "OpenBLAS") != NULL;
}

/* Matrix products (one and batched, contiguous and transposed operands) on a CPU context made
 * with LT_GEMM_ENGINE = engine (NULL: unset, measured); returns how many plans named `named`. */
static int products_on_engine(const char *engine, const char *named, int threads) {
  lt_context *ctx = lt_test_cpu_context_with_engine(engine);
  LT_CHECK(lt_context_set_num_threads(ctx, threads));
  lt_test_rng_reset(lt_test_seed() + 25);
  /* m, n, k, batch: above 4 MFLOP OpenBLAS runs on the context's threads (C split in blocks
   * of 16, or whole GEMMs per thread). */
  const int64_t shapes[][4] = {
      {160, 64, 200, 1}, {40, 36, 50, 6}, {33, 47, 29, 1}, {130, 20, 32, 1}};
  int hits = 0;
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int layout = 0; layout < 2; layout++) {
      const int64_t *e = shapes[s];
      bool batched = e[3] > 1;
      pair_case c = {.na = 2 + batched,
                     .nb = 2 + batched,
                     .nd = 2 + batched,
                     .n_labels = 3 + batched,
                     .extent = {e[0], e[2], e[1], e[3]}};
      int32_t ma[3] = {3, 0, 1}, mb[3] = {3, 1, 2}, md[3] = {3, 0, 2};
      if (layout) ma[1] = 1, ma[2] = 0, mb[1] = 2, mb[2] = 1; /* transposed operands */
      memcpy(c.ma, ma + !batched, sizeof(int32_t) * (size_t)c.na);
      memcpy(c.mb, mb + !batched, sizeof(int32_t) * (size_t)c.nb);
      memcpy(c.md, md + !batched, sizeof(int32_t) * (size_t)c.nd);
      lt_dtype dt = (s + layout) % 2 ? LT_F32 : LT_F64;
      int64_t sa[8], sb[8];
      int ids[8];
      shape_of(&c, c.na, c.ma, sa, ids);
      shape_of(&c, c.nb, c.mb, sb, ids);
      lt_tensor *a = lt_test_random_tensor(ctx, dt, c.na, sa, LT_LAYOUT_CONTIGUOUS);
      lt_tensor *b = lt_test_random_tensor(ctx, dt, c.nb, sb, LT_LAYOUT_CONTIGUOUS);
      char desc[256], again[256];
      size_t ws;
      /* Every call makes the same operands (the seed is reset), so one reference serves all. */
      static double *refs[8];
      double **ref = &refs[2 * s + (size_t)layout];
      double *got = run_pair(ctx, &c, dt, a, b, false, NULL, ref, desc, sizeof desc, &ws);
      assert_non_null(strstr(desc, "GEMM"));
      /* Ours: the packed engine, at k <= 32 the streaming one, or the small one. */
      bool packed = strstr(desc, ", packed)") != NULL || strstr(desc, ", stream)") != NULL ||
                    strstr(desc, ", small)") != NULL;
      bool blas = strstr(desc, ", OpenBLAS)") != NULL;
      if (!(packed ^ blas)) fail_msg("no engine named: %s", desc);
      hits += strstr(desc, named) != NULL;
      /* The class is measured once: a second plan of it runs on the same engine. */
      free(run_pair(ctx, &c, dt, a, b, false, got, ref, again, sizeof again, &ws));
      free(got);
      assert_string_equal(desc, again);
      lt_tensor_destroy(a);
      lt_tensor_destroy(b);
    }
  lt_context_destroy(ctx);
  return hits;
}

static void test_engine_choice(void **state) {
  (void)state;
  const int plans = 8;
  for (int threads = 1; threads <= 2; threads++) {
    assert_int_equal(products_on_engine("packed", ", packed)", threads), plans);
    int blas = products_on_engine("openblas", ", OpenBLAS)", threads);
    assert_int_equal(blas, cpu_has_openblas() ? plans : 0);
    int measured_blas = products_on_engine(NULL, ", OpenBLAS)", threads);
    if (!cpu_has_openblas()) assert_int_equal(measured_blas, 0);
  }
}

/* libtensor runs OpenBLAS single-threaded inside its own pool (OpenBLAS's threads would spin
 * ~0.1 s after each call, slowing whatever runs next), so it lowers OpenBLAS's process-wide
 * thread count around its steps; another caller in the process (NumPy, the application) must
 * find its own setting back. Looked up at run time: the test links no BLAS. */
static void test_openblas_threads_restored(void **state) {
  (void)state;
  int (*get)(void);
  void (*set)(int);
  *(void **)&get = dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  *(void **)&set = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  if (!get || !set || !cpu_has_openblas()) skip();
  int found = get();
  set(2);
  int want = get();
  for (int threads = 1; threads <= 2; threads++) {
    assert_int_equal(products_on_engine("openblas", ", OpenBLAS)", threads), 8);
    assert_int_equal(get(), want);
  }
  set(found);
}

/* LT_CPU_ISA is read when a context opens: contexts made after it changes use the capped
 * instruction set (plan and run alike), and one made before keeps its own. */
static void test_isa_per_context(void **state) {
  (void)state;
  if (getenv("LT_CPU_ISA")) skip(); /* the variant under test is the default */
  lt_context *before;
  LT_CHECK(lt_context_create("cpu", &before));
  setenv("LT_CPU_ISA", "baseline", 1);
  lt_context *after;
  LT_CHECK(lt_context_create("cpu", &after));
  swapped_operands_n(after, 12);
  swapped_operands_n(before, 4);
  unsetenv("LT_CPU_ISA");
  lt_context_destroy(after);
  lt_context_destroy(before);
}

int main(void) {
  lt_test_rng_reset(lt_test_seed());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_swapped_operands),
      cmocka_unit_test(test_engine_choice),
      cmocka_unit_test(test_isa_per_context),
      cmocka_unit_test(test_openblas_threads_restored),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

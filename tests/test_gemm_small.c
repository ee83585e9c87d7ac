/* SPDX-License-Identifier: MIT */
/* The small-GEMM engine (cpu_gemm_small.c, issue 20) against the naive float64 reference:
 * D = alpha * A.B + beta * D for every transposition of A, B and D (mode orders ik/ki, kj/jk,
 * ij/ji) crossed with contiguous, transposed, stepped and negative-stride views, m, n and k
 * from {0, 1, 3, 17, 63, 64, 65} (not multiples of the register tile, size 0 included),
 * beta = 0 over a NaN-poisoned output (which must not leak into D) and beta != 0, f32 and
 * f64, on one and two threads, batched and not, on contexts made with LT_GEMM_ENGINE=small.
 * Registered again with LT_CPU_ISA=avx2 (the AVX2 kernels) and baseline (no kernels: other
 * engines). Outputs live inside a guarded buffer. No timing is asserted. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "einsum_ref.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Labels: i = 0, j = 1, k = 2. */
static const char *const a_orders[2] = {"ik", "ki"}, *const b_orders[2] = {"kj", "jk"},
                         *const d_orders[2] = {"ij", "ji"};

/* Modes of one operand: the batch label (3) first where there is a batch, then s's two. */
static int modes_of(const char *s, bool batched, int32_t *modes, int *ids, const int64_t *extent,
                    int64_t *shape) {
  int r = 0;
  if (batched) modes[r] = 3, ids[r] = 3, shape[r] = extent[3], r++;
  for (int i = 0; i < 2; i++, r++) {
    int l = s[i] == 'i' ? 0 : s[i] == 'j' ? 1 : 2;
    modes[r] = l, ids[r] = l, shape[r] = extent[l];
  }
  return r;
}

/* One product (a batch of `batch` products where batch > 0); returns whether its plan ran on
 * the small engine. */
static bool run_batch(lt_context *ctx, const int64_t *mnk, int64_t batch, lt_dtype dt, int orders,
                      lt_test_layout la, lt_test_layout lb, lt_test_layout ld, bool accumulate) {
  const int64_t extent[4] = {mnk[0], mnk[1], mnk[2], batch};
  bool batched = batch > 0;
  int32_t ma[3], mb[3], md[3];
  int ia[3], ib[3], id[3];
  int64_t sa[3], sb[3], sd[3];
  const char *oa = a_orders[orders & 1], *ob = b_orders[(orders >> 1) & 1],
             *od = d_orders[(orders >> 2) & 1];
  int r = modes_of(oa, batched, ma, ia, extent, sa);
  modes_of(ob, batched, mb, ib, extent, sb);
  modes_of(od, batched, md, id, extent, sd);
  lt_tensor *a = lt_test_random_tensor(ctx, dt, r, sa, la);
  lt_tensor *b = lt_test_random_tensor(ctx, dt, r, sb, lb);
  lt_test_output out;
  lt_test_output_make(ctx, dt, r, sd, ld, &out);
  int64_t numel = lt_test_numel(r, sd);
  double *before = NULL;
  if (accumulate) { /* beta reads D: finite values first */
    lt_tensor *init = lt_test_random_tensor(ctx, dt, r, sd, LT_LAYOUT_CONTIGUOUS);
    LT_CHECK(lt_tensor_copy_into(out.view, init));
    lt_tensor_destroy(init);
    before = lt_test_read_all(out.view);
  }
  double *sna = lt_test_snapshot(a), *snb = lt_test_snapshot(b);
  lt_plan *plan;
  LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, out.view, md, NULL, &plan));
  const lt_tensor *ins[2] = {a, b};
  const double alpha = -1.25, beta = accumulate ? 0.5 : 0.0, scalars[2] = {alpha, beta};
  LT_CHECK(lt_plan_execute(plan, ins, 2, scalars, 2, out.view));
  char desc[512];
  snprintf(desc, sizeof desc, "%s,%s->%s m=%lld n=%lld k=%lld batch %lld %s (%s/%s/%s%s): %s", oa,
           ob, od, (long long)mnk[0], (long long)mnk[1], (long long)mnk[2], (long long)batch,
           lt_dtype_name(dt), lt_test_layout_name(la), lt_test_layout_name(lb),
           lt_test_layout_name(ld), accumulate ? ", beta" : "", lt_plan_describe(plan));
  bool small = strstr(desc, ", small)") != NULL;
  double *da = lt_test_read_all(a), *db = lt_test_read_all(b);
  lt_ref_operand ro[2] = {{r, ia, sa, da}, {r, ib, sb, db}};
  double *want = lt_ref_einsum(2, ro, batched ? 4 : 3, extent, r, id);
  for (int64_t i = 0; i < numel; i++)
    want[i] = alpha * want[i] + (accumulate ? beta * before[i] : 0.0);
  double *got = lt_test_read_all(out.view);
  lt_test_assert_close(got, want, numel, lt_test_tolerance(dt, mnk[2] > 0 ? mnk[2] : 1), desc);
  lt_test_output_check_guard(&out);
  lt_test_check_unchanged(a, sna);
  lt_test_check_unchanged(b, snb);
  free(sna);
  free(snb);
  free(got);
  free(want);
  free(da);
  free(db);
  free(before);
  lt_plan_destroy(plan);
  lt_test_output_free(&out);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  return small;
}

static bool run_case(lt_context *ctx, const int64_t *mnk, lt_dtype dt, int orders,
                     lt_test_layout la, lt_test_layout lb, lt_test_layout ld, bool accumulate) {
  return run_batch(ctx, mnk, 0, dt, orders, la, lb, ld, accumulate);
}

/* Contractions below the direct kernel's flop threshold (caps.direct_max_flops, 32768) on a
 * default context: those that need no copy go to one in-place GEMM (the small engine, 16^3 in
 * 0.4 us where the direct kernel took 26); every transposition and layout, alpha and beta,
 * against the reference, a batch of them too. */
static void test_tiny_contractions(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  static const int64_t t[5] = {2, 5, 8, 16, 24};
  int small = 0, runs = 0;
  for (int c = 0; c < 40; c++) {
    int64_t mnk[3] = {t[c % 5], t[(c / 5) % 5], t[(c + 2) % 5]};
    if (2 * mnk[0] * mnk[1] * mnk[2] > 32768) continue;
    lt_test_layout la = (lt_test_layout)(c % 4), lb = (lt_test_layout)((c / 4) % 4);
    small += run_case(ctx, mnk, c % 2 ? LT_F32 : LT_F64, c % 8, la, lb, LT_LAYOUT_CONTIGUOUS,
                      c % 3 == 1);
    runs++;
  }
  if (lt_test_has_x86_gemm_kernels() && small < runs / 2)
    fail_msg("only %d of %d tiny contractions ran as an in-place GEMM", small, runs);
  if (!lt_test_has_x86_gemm_kernels()) assert_int_equal(small, 0);
  const int64_t mnk[3] = {8, 8, 8};
  bool batch_small = run_batch(ctx, mnk, 3, LT_F32, 5, LT_LAYOUT_NEGATIVE, LT_LAYOUT_STEPPED,
                               LT_LAYOUT_CONTIGUOUS, true);
  assert_int_equal(batch_small, lt_test_has_x86_gemm_kernels());
  lt_context_destroy(ctx);
}

static const int64_t sizes[] = {1, 3, 17, 63, 64, 65};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Every transposition (8 mode orders) with contiguous operands, and every layout family of
 * each operand, over sizes chosen so that each of m, n and k takes every value. */
static void test_layouts(void **state) {
  (void)state;
  for (int threads = 1; threads <= 2; threads++) {
    lt_context *ctx = lt_test_cpu_context_with_engine("small");
    LT_CHECK(lt_context_set_num_threads(ctx, threads));
    int small = 0, runs = 0;
    for (int c = 0; c < N_SIZES * 4; c++) {
      int64_t mnk[3] = {sizes[c % N_SIZES], sizes[(c / 2 + 1) % N_SIZES],
                        sizes[(c / 3 + 2) % N_SIZES]};
      lt_dtype dt = (c + threads) % 2 ? LT_F32 : LT_F64;
      int orders = c % 8;
      lt_test_layout la = (lt_test_layout)(c % 4), lb = (lt_test_layout)((c / 4) % 4);
      lt_test_layout ld = (lt_test_layout)((c / 2) % 4);
      if (c < 8) la = lb = ld = LT_LAYOUT_CONTIGUOUS;
      small += run_case(ctx, mnk, dt, orders, la, lb, ld, c % 3 == 1);
      runs++;
    }
    /* The lowering runs some of these directly (m or n of 1, small k): only "some" here. */
    if (lt_test_has_x86_gemm_kernels() && small < runs / 5)
      fail_msg("only %d of %d plans ran on the small engine", small, runs);
    if (!lt_test_has_x86_gemm_kernels()) assert_int_equal(small, 0);
    lt_context_destroy(ctx);
  }
}

/* m, n and k in {17, 63, 64, 65}: every remainder class of the 6-row tile and of 16- and
 * 8-lane vectors, each transposition, contiguous or transposed views. */
static void test_edges(void **state) {
  (void)state;
  lt_context *ctx = lt_test_cpu_context_with_engine("small");
  static const int64_t e[4] = {17, 63, 64, 65};
  int small = 0, runs = 0;
  for (int c = 0; c < 64; c += lt_test_instrumented() ? 3 : 1) {
    int64_t mnk[3] = {e[c % 4], e[(c / 4) % 4], e[c / 16]};
    lt_test_layout la = (lt_test_layout)(c / 8 % 2), lb = (lt_test_layout)(c / 16 % 2);
    small += run_case(ctx, mnk, c % 2 ? LT_F32 : LT_F64, c % 8, la, lb, LT_LAYOUT_CONTIGUOUS,
                      c % 5 == 2);
    runs++;
  }
  if (lt_test_has_x86_gemm_kernels() && small < runs / 2)
    fail_msg("only %d of %d plans ran on the small engine", small, runs);
  lt_context_destroy(ctx);
}

/* Size-0 extents (m, n or k) and k = 0 with beta: D = beta * D, never NaN from C. */
static void test_empty(void **state) {
  (void)state;
  lt_context *ctx = lt_test_cpu_context_with_engine("small");
  const int64_t cases[][3] = {{0, 17, 5}, {17, 0, 5}, {17, 5, 0}, {0, 0, 0}, {3, 65, 0}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int accumulate = 0; accumulate < 2; accumulate++)
      run_case(ctx, cases[c], c % 2 ? LT_F32 : LT_F64, (int)c, LT_LAYOUT_CONTIGUOUS,
               LT_LAYOUT_TRANSPOSED, LT_LAYOUT_CONTIGUOUS, accumulate);
  lt_context_destroy(ctx);
}

/* One product above the engine's one-thread threshold, on two threads (row bands split). */
static void test_threaded(void **state) {
  (void)state;
  lt_context *ctx = lt_test_cpu_context_with_engine("small");
  LT_CHECK(lt_context_set_num_threads(ctx, 2));
  const int64_t mnk[3] = {161, 140, 101};
  for (int orders = 0; orders < 8; orders += 3)
    run_case(ctx, mnk, orders % 2 ? LT_F32 : LT_F64, orders, LT_LAYOUT_CONTIGUOUS,
             LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_CONTIGUOUS, orders == 3);
  lt_context_destroy(ctx);
}

/* Batches of small products (whole GEMMs per task, B copied on the task's stack where its rows
 * are not unit-stride), on two threads. */
static void test_batched(void **state) {
  (void)state;
  lt_context *ctx = lt_test_cpu_context_with_engine("small");
  LT_CHECK(lt_context_set_num_threads(ctx, 2));
  const int64_t mnk[4][3] = {{17, 65, 9}, {6, 33, 40}, {63, 17, 64}, {1, 40, 7}};
  int small = 0;
  for (int c = 0; c < 8; c++)
    small +=
        run_batch(ctx, mnk[c % 4], c % 3 + 2, c % 2 ? LT_F32 : LT_F64, c, (lt_test_layout)(c % 3),
                  (lt_test_layout)(c / 2 % 2), LT_LAYOUT_CONTIGUOUS, c % 4 == 1);
  if (lt_test_has_x86_gemm_kernels() && small < 2)
    fail_msg("only %d of 8 batches ran small", small);
  lt_context_destroy(ctx);
}

/* Whether the automatic choice has the AVX-512 kernels' mid range (GEMMs past the size cap whose
 * B fits in L2): an AVX-512 CPU with the instruction set not capped below it. */
static bool mid_range_expected(void) {
  const char *isa = getenv("LT_CPU_ISA");
  if (isa && (strcmp(isa, "baseline") == 0 || strcmp(isa, "avx2") == 0)) return false;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

/* The automatic choice past the size cap (m * n * k > 2^21) on two threads: one GEMM whose B
 * has unit-stride rows and fits in 1 MiB runs small, in either orientation of C; a B that
 * needs a copy, a B over 1 MiB and a batch do not. A is stepped (or B, where C's orientation
 * makes it the broadcast operand) so that no OpenBLAS layout exists and nothing is timed. */
static void test_mid_range(void **state) {
  (void)state;
  lt_context *ctx = lt_test_cpu_context_with_engine(NULL);
  LT_CHECK(lt_context_set_num_threads(ctx, 2));
  const lt_test_layout S = LT_LAYOUT_STEPPED, C = LT_LAYOUT_CONTIGUOUS;
  struct {
    int64_t mnk[3], batch;
    lt_dtype dt;
    int orders;
    lt_test_layout la, lb;
    bool small;
  } cases[] = {
      {{70, 100, 330}, 0, LT_F32, 0, S, C, true},  /* ik,kj->ij: B (132 KiB) read in place */
      {{100, 70, 330}, 0, LT_F32, 5, C, S, true},  /* ki,kj->ji: turned, A^T is the B read */
      {{40, 160, 400}, 0, LT_F64, 0, S, C, true},  /* f64, B 500 KiB */
      {{70, 100, 330}, 0, LT_F32, 2, S, C, false}, /* ik,jk->ij: B would need a copy */
      {{16, 400, 400}, 0, LT_F64, 0, S, C, false}, /* B 1.22 MiB: not in L2 */
      {{70, 100, 330}, 2, LT_F32, 0, S, C, false}, /* a batch of two */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    bool small = run_batch(ctx, cases[c].mnk, cases[c].batch, cases[c].dt, cases[c].orders,
                           cases[c].la, cases[c].lb, C, c == 1);
    if (small != (cases[c].small && mid_range_expected()))
      fail_msg("mid-range case %zu (m=%lld n=%lld k=%lld) ran %son the small engine", c,
               (long long)cases[c].mnk[0], (long long)cases[c].mnk[1], (long long)cases[c].mnk[2],
               small ? "" : "not ");
  }
  lt_context_destroy(ctx);
}

int main(void) {
  lt_test_rng_reset(lt_test_seed() + 20);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_layouts),   cmocka_unit_test(test_edges),
      cmocka_unit_test(test_empty),     cmocka_unit_test(test_threaded),
      cmocka_unit_test(test_batched),   cmocka_unit_test(test_tiny_contractions),
      cmocka_unit_test(test_mid_range),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

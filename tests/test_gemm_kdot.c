/* SPDX-License-Identifier: MIT */
/* The k-dot GEMM engine (cpu_gemm_kdot.c, issues 19 and 21): a small C beside a long k that is
 * the unit stride of both operands (the weight gradient of a contraction over a large batch),
 * against a naive float64 loop, for f32 and f64. Rows of A and B are dense, stepped, reversed
 * or made of two modes in transposed order (a scattered row group); D is contiguous,
 * transposed, stepped or reversed inside a NaN-poisoned buffer; m, n and k are ragged against
 * the register tile and the vector length (1 included), with size-0 m and k; alpha and beta.
 * The same plan must give the same bits on 1, 2 and 3 threads (k is cut by the shape alone).
 * Contexts are made with LT_GEMM_ENGINE=kdot (any k) and measured (k >= 4096, where the
 * engine is chosen by itself). Registered again with LT_CPU_ISA=avx2 and baseline (no k-dot
 * kernels there: the same products run packed). No timing is asserted. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum rows_kind { ROWS_DENSE, ROWS_STEPPED, ROWS_REVERSED, ROWS_TWO_MODES } rows_kind;

static const char *rows_name(rows_kind r) {
  return r == ROWS_DENSE      ? "dense"
         : r == ROWS_STEPPED  ? "stepped"
         : r == ROWS_REVERSED ? "reversed"
                              : "two modes, transposed";
}

/* An operand of `rows` rows by k, k unit-stride, its rows laid out as `kind` says (two modes
 * of extents r1 x (rows / r1), with the first the faster in memory, for ROWS_TWO_MODES). The
 * view's modes: row_modes[0..nr) then k_mode; returns its rank. */
static lt_tensor *operand(lt_context *ctx, lt_dtype dt, int64_t rows, int64_t k, rows_kind kind,
                          int64_t r1, int *rank) {
  int64_t pad = 3, ld = k + pad, step = kind == ROWS_STEPPED ? 2 : 1;
  int64_t n_rows_mem = rows * step > 0 ? rows * step : 1;
  int64_t total[1] = {n_rows_mem * ld};
  lt_tensor *base = lt_test_random_tensor(ctx, dt, 1, total, LT_LAYOUT_CONTIGUOUS), *v;
  if (kind == ROWS_TWO_MODES) {
    int64_t r2 = rows / r1, shape[3] = {r1, r2, k}, strides[3] = {ld, r1 * ld, 1};
    LT_CHECK(lt_view_as_strided(base, 3, shape, strides, 0, &v));
    *rank = 3;
  } else {
    int64_t shape[2] = {rows, k}, strides[2] = {kind == ROWS_REVERSED ? -ld : step * ld, 1};
    int64_t offset = kind == ROWS_REVERSED && rows > 0 ? (rows - 1) * ld : 0;
    LT_CHECK(lt_view_as_strided(base, 2, shape, strides, offset, &v));
    *rank = 2;
  }
  lt_tensor_destroy(base);
  return v;
}

typedef struct kdot_case {
  int64_t m, n, k;
  lt_dtype dt;
  rows_kind ra, rb;
  lt_test_layout ld;
  bool accumulate;
} kdot_case;

/* Runs one case on ctx with 1, 2 and 3 threads; returns whether its plan ran on k-dot. */
static bool check_case(lt_context *ctx, const kdot_case *c) {
  int rank_a, rank_b;
  /* modes: i = 0 (or i1 = 0, i2 = 3), j = 1, p = 2 */
  lt_tensor *a = operand(ctx, c->dt, c->m, c->k, c->ra, c->m % 2 ? 1 : 2, &rank_a);
  lt_tensor *b = operand(ctx, c->dt, c->n, c->k, c->rb, c->n % 3 ? 1 : 3, &rank_b);
  int32_t ma3[3] = {0, 3, 2}, ma2[2] = {0, 2}, mb3[3] = {1, 4, 2}, mb2[2] = {1, 2};
  const int32_t *ma = rank_a == 3 ? ma3 : ma2, *mb = rank_b == 3 ? mb3 : mb2;
  /* D holds (i..., j...) in C order: i1, i2 (or i), j1, j2 (or j) */
  int32_t md[4];
  int64_t sd[4];
  int nd = 0;
  for (int i = 0; i < rank_a - 1; i++)
    md[nd] = ma[i], sd[nd++] = lt_tensor_shape(a)[i];
  for (int i = 0; i < rank_b - 1; i++)
    md[nd] = mb[i], sd[nd++] = lt_tensor_shape(b)[i];
  double *da = lt_test_read_all(a), *db = lt_test_read_all(b);
  int64_t numel = c->m * c->n;
  double *d0 = malloc(sizeof(double) * (size_t)(numel + 1)),
         *want = malloc(sizeof(double) * (size_t)(numel + 1));
  for (int64_t i = 0; i < numel; i++)
    d0[i] = c->accumulate ? lt_test_rand_double(-1.0, 1.0) : 0.0;
  const double scalars[2] = {0.75, c->accumulate ? -0.5 : 0.0};
  /* A's rows in C order are i1-major: row (i1, i2) is da[(i1 * r2 + i2) * k], and D's index
   * (i1, i2, j) is ((i1 * r2 + i2) * n + j): both are "row i" in C order. */
  for (int64_t i = 0; i < c->m; i++)
    for (int64_t j = 0; j < c->n; j++) {
      double s = 0.0;
      for (int64_t p = 0; p < c->k; p++)
        s += da[i * c->k + p] * db[j * c->k + p];
      want[i * c->n + j] = scalars[0] * s + scalars[1] * d0[i * c->n + j];
    }
  char what[512];
  snprintf(what, sizeof what, "%lld x %lld x %lld %s, A rows %s, B rows %s, D %s%s",
           (long long)c->m, (long long)c->n, (long long)c->k, lt_dtype_name(c->dt),
           rows_name(c->ra), rows_name(c->rb), lt_test_layout_name(c->ld),
           c->accumulate ? ", beta" : "");
  double *first = NULL;
  bool kdot = false;
  for (int threads = 1; threads <= 3; threads++) {
    LT_CHECK(lt_context_set_num_threads(ctx, threads));
    lt_test_output out;
    lt_test_output_make(ctx, c->dt, nd, sd, c->ld, &out);
    lt_tensor *init;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F64, nd, sd, NULL, d0, &init));
    LT_CHECK(lt_tensor_copy_into(out.view, init));
    lt_tensor_destroy(init);
    lt_plan *plan;
    LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, out.view, md, NULL, &plan));
    kdot = strstr(lt_plan_describe(plan), ", k-dot)") != NULL;
    const lt_tensor *ins[2] = {a, b};
    LT_CHECK(lt_plan_execute(plan, ins, 2, scalars, 2, out.view));
    lt_plan_destroy(plan);
    lt_test_output_check_guard(&out);
    double *got = lt_test_read_all(out.view);
    lt_test_assert_close(got, want, numel, lt_test_tolerance(c->dt, c->k), what);
    /* The k-dot engine cuts k by the shape alone; OpenBLAS, which runs these shapes where the
     * ISA has no k-dot kernels, gives other bits for a block of C than for the whole on some
     * cores (Zen's sgemm along its M), so only the engine's own claim is checked. */
    if (first) {
      if (kdot && memcmp(got, first, sizeof(double) * (size_t)numel) != 0)
        fail_msg("%s: %d threads changed the bits of the 1-thread result", what, threads);
      free(got);
    } else {
      first = got;
    }
    lt_test_output_free(&out);
  }
  free(first);
  free(want);
  free(d0);
  free(da);
  free(db);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
  return kdot;
}

/* On the forced engine: ragged tiles (3 x 8 on AVX-512, 3 x 4 on AVX2) and vector tails. */
static const kdot_case forced_cases[] = {
    {13, 29, 1031, LT_F32, ROWS_DENSE, ROWS_STEPPED, LT_LAYOUT_CONTIGUOUS, false},
    /* at least one tile per row: the kernels copy the next block's rows themselves */
    {60, 64, 700, LT_F64, ROWS_STEPPED, ROWS_TWO_MODES, LT_LAYOUT_NEGATIVE, true},
    {13, 29, 1031, LT_F64, ROWS_REVERSED, ROWS_TWO_MODES, LT_LAYOUT_TRANSPOSED, true},
    {24, 16, 517, LT_F32, ROWS_TWO_MODES, ROWS_REVERSED, LT_LAYOUT_STEPPED, true},
    {7, 1, 4097, LT_F64, ROWS_STEPPED, ROWS_DENSE, LT_LAYOUT_NEGATIVE, false},
    {1, 1, 1, LT_F32, ROWS_DENSE, ROWS_DENSE, LT_LAYOUT_CONTIGUOUS, true},
    {1, 9, 2000, LT_F32, ROWS_REVERSED, ROWS_DENSE, LT_LAYOUT_NEGATIVE, false},
    {40, 2, 1033, LT_F64, ROWS_DENSE, ROWS_TWO_MODES, LT_LAYOUT_STEPPED, false},
    {0, 5, 100, LT_F32, ROWS_DENSE, ROWS_DENSE, LT_LAYOUT_CONTIGUOUS, false},
    {4, 5, 0, LT_F64, ROWS_DENSE, ROWS_STEPPED, LT_LAYOUT_TRANSPOSED, true},
};

/* Measured: k >= 4096, the engine's own class. */
static const kdot_case measured_cases[] = {
    {48, 64, 4101, LT_F32, ROWS_DENSE, ROWS_DENSE, LT_LAYOUT_CONTIGUOUS, false},
    {10, 6, 4500, LT_F64, ROWS_TWO_MODES, ROWS_STEPPED, LT_LAYOUT_TRANSPOSED, true},
    {5, 3, 9000, LT_F32, ROWS_REVERSED, ROWS_REVERSED, LT_LAYOUT_NEGATIVE, true},
};

static void test_forced(void **state) {
  (void)state;
  lt_context *ctx = lt_test_cpu_context_with_engine("kdot");
  int ran = 0;
  for (size_t i = 0; i < sizeof forced_cases / sizeof forced_cases[0]; i++)
    ran += check_case(ctx, &forced_cases[i]);
  /* Every case but 1 x 1 x 1 (elementwise) and the size-0 ones reaches the engine where it
   * has kernels. */
  assert_int_equal(ran, lt_test_has_x86_gemm_kernels() ? 7 : 0);
  lt_context_destroy(ctx);
}

static void test_measured(void **state) {
  (void)state;
  lt_context *ctx = lt_test_cpu_context_with_engine(NULL);
  int ran = 0;
  for (size_t i = 0; i < sizeof measured_cases / sizeof measured_cases[0]; i++)
    ran += check_case(ctx, &measured_cases[i]);
  assert_int_equal(ran, lt_test_has_x86_gemm_kernels() ? 3 : 0);
  lt_context_destroy(ctx);
}

int main(void) {
  lt_test_rng_reset(lt_test_seed() + 23);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_forced),
                                     cmocka_unit_test(test_measured)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

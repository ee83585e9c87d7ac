/* SPDX-License-Identifier: MIT */
/* The packed GEMM engine's k-split (cpu_gemm_packed.c): contractions whose C is tiny beside a
 * long k (modes a, b kept; c, d summed, k = c * d over ten thousand), with k over two modes
 * that merge into one stride or that do not (scattered), against a naive float64 loop, for f32
 * and f64, inputs and outputs contiguous, transposed, stepped and reversed (outputs inside a
 * NaN-poisoned buffer), alpha and beta. The same plan must give the same bits on 1, 2 and 3
 * threads: where k is cut does not depend on the thread count. No timing is asserted. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ksplit_case {
  const char *a, *b, *d; /* one letter per mode: a, b are kept, c, d summed */
  int64_t extent[4];
} ksplit_case;

static const ksplit_case cases[] = {
    {"cad", "dbc", "ab", {16, 24, 96, 128}},  /* k scattered in both operands */
    {"acd", "cdb", "ba", {16, 24, 96, 128}},  /* k one stride in both */
    {"dca", "bdc", "ab", {13, 29, 97, 127}},  /* odd extents: partial tiles, a short last range */
    {"cda", "cbd", "ba", {5, 7, 256, 1031}}}; /* C of a few tiles, k past 16 ranges of 16 blocks */

/* Modes, shape and C-order stride per label (0 where absent) of one operand. */
static int layout_of(const char *s, const int64_t *extent, int32_t *modes, int64_t *shape,
                     int64_t *stride) {
  int n = (int)strlen(s);
  for (int l = 0; l < 4; l++)
    stride[l] = 0;
  int64_t step = 1;
  for (int i = n - 1; i >= 0; i--) {
    int l = s[i] - 'a';
    modes[i] = l, shape[i] = extent[l], stride[l] = step;
    step *= extent[l];
  }
  return n;
}

/* D = alpha * A.B + beta * D on `threads` threads; returns D read back (caller frees). */
static double *run(const ksplit_case *c, lt_dtype dt, int threads, const lt_tensor *a,
                   const int32_t *ma, const lt_tensor *b, const int32_t *mb, lt_test_layout ld,
                   const double *d0, const double *scalars, lt_test_output *out) {
  int32_t md[2];
  int64_t sd[2], std[4];
  int nd = layout_of(c->d, c->extent, md, sd, std);
  lt_context *ctx = lt_tensor_context(a);
  LT_CHECK(lt_context_set_num_threads(ctx, threads));
  lt_test_output_make(ctx, dt, nd, sd, ld, out);
  lt_tensor *init;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, nd, sd, NULL, d0, &init));
  LT_CHECK(lt_tensor_copy_into(out->view, init));
  lt_tensor_destroy(init);
  lt_plan *plan;
  LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, out->view, md, NULL, &plan));
  const lt_tensor *ins[2] = {a, b};
  LT_CHECK(lt_plan_execute(plan, ins, 2, scalars, 2, out->view));
  lt_plan_destroy(plan);
  lt_test_output_check_guard(out);
  return lt_test_read_all(out->view);
}

static void check_case(lt_context *ctx, const ksplit_case *c, lt_dtype dt, lt_test_layout la,
                       lt_test_layout lb, lt_test_layout ld, bool accumulate) {
  int32_t ma[3], mb[3], md[2];
  int64_t sa[3], sb[3], sd[2], ta[4], tb[4], td[4];
  int na = layout_of(c->a, c->extent, ma, sa, ta), nb = layout_of(c->b, c->extent, mb, sb, tb);
  int nd = layout_of(c->d, c->extent, md, sd, td);
  lt_tensor *a = lt_test_random_tensor(ctx, dt, na, sa, la);
  lt_tensor *b = lt_test_random_tensor(ctx, dt, nb, sb, lb);
  double *da = lt_test_read_all(a), *db = lt_test_read_all(b);
  int64_t numel = lt_test_numel(nd, sd);
  double *d0 = malloc(sizeof(double) * (size_t)numel),
         *want = malloc(sizeof(double) * (size_t)numel);
  for (int64_t i = 0; i < numel; i++)
    d0[i] = accumulate ? lt_test_rand_double(-1.0, 1.0) : 0.0;
  const double scalars[2] = {0.75, accumulate ? -0.5 : 0.0};
  const int64_t *e = c->extent;
  for (int64_t i = 0; i < e[0]; i++)
    for (int64_t j = 0; j < e[1]; j++) {
      double s = 0.0;
      for (int64_t p = 0; p < e[2]; p++)
        for (int64_t q = 0; q < e[3]; q++)
          s += da[i * ta[0] + p * ta[2] + q * ta[3]] * db[j * tb[1] + p * tb[2] + q * tb[3]];
      int64_t o = i * td[0] + j * td[1];
      want[o] = scalars[0] * s + scalars[1] * d0[o];
    }
  char what[256];
  snprintf(what, sizeof what, "%s,%s->%s %s (%s/%s/%s%s)", c->a, c->b, c->d, lt_dtype_name(dt),
           lt_test_layout_name(la), lt_test_layout_name(lb), lt_test_layout_name(ld),
           accumulate ? ", beta" : "");
  double *first = NULL;
  for (int threads = 1; threads <= 3; threads++) {
    lt_test_output out;
    double *got = run(c, dt, threads, a, ma, b, mb, ld, d0, scalars, &out);
    lt_test_assert_close(got, want, numel, lt_test_tolerance(dt, e[2] * e[3]), what);
    if (first) {
      if (memcmp(got, first, sizeof(double) * (size_t)numel) != 0)
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
}

static void test_ksplit(void **state) {
  (void)state;
  /* The packed engine, not OpenBLAS, whichever is measured faster here. */
  lt_context *ctx = lt_test_cpu_context_with_engine("packed");
  static const lt_test_layout layouts[4] = {LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_TRANSPOSED,
                                            LT_LAYOUT_STEPPED, LT_LAYOUT_NEGATIVE};
  int n = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int f64 = 0; f64 < 2; f64++, n++)
      check_case(ctx, &cases[i], f64 ? LT_F64 : LT_F32, layouts[n % 4], layouts[(n + 1) % 4],
                 layouts[(n + 3) % 4], n % 3 == 1);
  lt_context_destroy(ctx);
}

int main(void) {
  lt_test_rng_reset(lt_test_seed() + 19);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ksplit)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}

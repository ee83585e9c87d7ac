/* SPDX-License-Identifier: MIT */
/* Panel packing of the packed GEMM engine (cpu_gemm_pack.c, cpu_gemm_pack_avx512.c) and its k
 * blocks (cpu_gemm_packed.c), through contractions on the engine forced by LT_GEMM_ENGINE:
 * C[i, j] = sum_k A[i, k] B[k, j] against a naive float64 loop, for f32 and f64, with each
 * operand's rows or k the unit-stride direction (copied rows and transposed tiles), rows flipped
 * or stepped, k flipped or stepped (no unit stride: the element-wise packer), extents that leave
 * partial register tiles and partial 16-wide transposes, and k past one k block (blocks of
 * equal depth). C is written row-major and column-major, which swaps the operands between the
 * A and B panels (32 and 12 rows wide on AVX-512), except for a C narrower than a tile, which
 * keeps the orientation that pads it least (its tiles then written element by element). No
 * timing is asserted. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

enum { L_CONTIGUOUS, L_TRANSPOSED, L_ROWS_FLIPPED, L_K_FLIPPED, L_ROWS_STEPPED, L_K_STEPPED, L_N };

static const char *const layout_names[L_N] = {"contiguous", "transposed",   "rows flipped",
                                              "k flipped",  "rows stepped", "k stepped"};

/* A view of logical shape [rows, k] in layout `lay` (its own buffer, released with the view). */
static lt_tensor *operand(lt_context *ctx, lt_dtype dt, int64_t rows, int64_t k, int lay) {
  bool tr = lay == L_TRANSPOSED || lay == L_K_FLIPPED;
  int64_t shape[2] = {tr ? k : rows, tr ? rows : k};
  if (lay == L_ROWS_STEPPED) shape[0] *= 2;
  if (lay == L_K_STEPPED) shape[1] *= 2;
  lt_tensor *base = lt_test_random_tensor(ctx, dt, 2, shape, LT_LAYOUT_CONTIGUOUS), *v, *w;
  switch (lay) {
  case L_TRANSPOSED: LT_CHECK(lt_view_transpose(base, 0, 1, &v)); break;
  case L_ROWS_FLIPPED: LT_CHECK(lt_view_flip(base, 0, &v)); break;
  case L_K_FLIPPED:
    LT_CHECK(lt_view_flip(base, 0, &w));
    LT_CHECK(lt_view_transpose(w, 0, 1, &v));
    lt_tensor_destroy(w);
    break;
  case L_ROWS_STEPPED:
    LT_CHECK(lt_view_slice(base, 0, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, 2, &v));
    break;
  case L_K_STEPPED:
    LT_CHECK(lt_view_slice(base, 1, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, 2, &v));
    break;
  default: return base;
  }
  lt_tensor_destroy(base);
  return v;
}

static void check_case(lt_context *ctx, lt_dtype dt, int64_t m, int64_t n, int64_t k, int la,
                       int lb, bool col_major) {
  lt_tensor *a = operand(ctx, dt, m, k, la), *bt = operand(ctx, dt, n, k, lb), *b;
  LT_CHECK(lt_view_transpose(bt, 0, 1, &b)); /* [k, n]: B's rows are bt's */
  lt_tensor_destroy(bt);
  double *ha = lt_test_read_all(a), *hb = lt_test_read_all(b);
  double *want = malloc(sizeof(double) * (size_t)(m * n));
  assert_non_null(want);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; p++)
        acc += ha[i * k + p] * hb[p * n + j];
      want[i * n + j] = acc;
    }
  const lt_tensor *ins[2] = {a, b};
  lt_tensor *c, *ct = NULL;
  LT_CHECK(lt_einsum(col_major ? "ik,kj->ji" : "ik,kj->ij", 2, ins, NULL, &c));
  if (col_major) LT_CHECK(lt_view_transpose(c, 0, 1, &ct));
  double *got = lt_test_read_all(ct ? ct : c);
  char what[160];
  snprintf(what, sizeof what, "%s %lldx%lldx%lld, A %s, B %s, C %s", lt_dtype_name(dt),
           (long long)m, (long long)n, (long long)k, layout_names[la], layout_names[lb],
           col_major ? "column-major" : "row-major");
  lt_test_assert_close(got, want, m * n, lt_test_tolerance(dt, k), what);
  free(got);
  free(want);
  free(ha);
  free(hb);
  lt_tensor_destroy(ct);
  lt_tensor_destroy(c);
  lt_tensor_destroy(a);
  lt_tensor_destroy(b);
}

static void test_pack_layouts(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  static const int64_t sizes[][3] = {
      {45, 29, 17}, /* partial tiles both ways, k not a multiple of 16 */
      {33, 13, 40}, /* one row past a 32-row panel, one past a 12-row panel */
      {1, 12, 5},   /* single row, single panel */
      {70, 5, 33},  /* a narrow C: kept in the orientation with fewer padded tiles */
  };
  for (int d = 0; d < 2; d++)
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
      for (int la = 0; la < L_N; la++)
        for (int lb = 0; lb < L_N; lb++)
          check_case(ctx, d ? LT_F64 : LT_F32, sizes[s][0], sizes[s][1], sizes[s][2], la, lb,
                     (la + lb + (int)s) % 2 == 1);
  lt_context_destroy(ctx);
}

/* k over several k blocks (384 deep on AVX-512 f32): blocks of equal depth, the packers'
 * offsets into each. */
static void test_pack_k_blocks(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  static const int64_t ks[] = {785, 1100};
  for (int d = 0; d < 2; d++)
    for (size_t s = 0; s < sizeof ks / sizeof ks[0]; s++)
      for (int l = 0; l < L_N; l++)
        check_case(ctx, d ? LT_F64 : LT_F32, 37, 26, ks[s], l, (l + 1) % L_N, l % 2 == 0);
  lt_context_destroy(ctx);
}

int main(void) {
  setenv("LT_GEMM_ENGINE", "packed", 1);
  lt_test_rng_reset(lt_test_seed() + 29);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pack_layouts),
      cmocka_unit_test(test_pack_k_blocks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

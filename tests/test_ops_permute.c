/* SPDX-License-Identifier: MIT */
/* Permutation plans and lt_permute against a naive float64 loop: random permutations of rank
 * 0..8, every dtype (bit copies, conversions, alpha and unary ops), every layout family, sizes
 * that exercise the tiled path with ragged edges, on every backend. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lt_dtype dtypes[] = {LT_F16, LT_BF16, LT_F32, LT_F64};
static const double scalar_values[] = {1.0, -2.5, 0.0};

static void run_case(lt_context *ctx, int rank, const int64_t *shape_a, lt_dtype in_dtype,
                     lt_dtype out_dtype, lt_test_layout layout, lt_unary_op unary, double alpha) {
  int32_t modes_a[LT_MAX_RANK], modes_d[LT_MAX_RANK];
  int64_t shape_d[LT_MAX_RANK];
  for (int i = 0; i < rank; i++)
    modes_a[i] = modes_d[i] = (int32_t)(i * 5 - 3);
  lt_test_shuffle(modes_d, rank);
  for (int k = 0; k < rank; k++)
    for (int i = 0; i < rank; i++)
      if (modes_a[i] == modes_d[k]) shape_d[k] = shape_a[i];
  lt_tensor *a = lt_test_random_tensor(ctx, in_dtype, rank, shape_a, layout);
  double *snap = lt_test_snapshot(a), *va = lt_test_read_all(a);
  lt_test_output out;
  lt_test_output_make(ctx, out_dtype, rank, shape_d, (lt_test_layout)lt_test_rand_int(0, 3), &out);
  lt_plan_options *opts;
  LT_CHECK(lt_plan_options_create(&opts));
  LT_CHECK(lt_plan_options_set_unary(opts, 0, unary));
  lt_plan *plan;
  LT_CHECK(lt_plan_permutation(a, modes_a, out.view, modes_d, opts, &plan));
  LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)&a, 1, &alpha, 1, out.view));
  int64_t n = lt_test_numel(rank, shape_d), idx[LT_MAX_RANK];
  double *want = malloc(sizeof(double) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) {
    lt_test_unravel(i, rank, shape_d, idx);
    double x = va[lt_test_mode_index(rank, shape_a, modes_a, rank, modes_d, idx)];
    want[i] = lt_test_round_to(out_dtype, alpha == 0.0 ? 0.0 : alpha * lt_test_unary_ref(unary, x));
  }
  double *got = lt_test_read_all(out.view);
  char what[128];
  snprintf(what, sizeof what, "permutation rank %d %s->%s %s unary %d alpha %g", rank,
           lt_dtype_name(in_dtype), lt_dtype_name(out_dtype), lt_test_layout_name(layout), unary,
           alpha);
  bool exact = unary == LT_UNARY_IDENTITY && alpha == 1.0 && in_dtype == out_dtype;
  /* Arithmetic runs in f32 unless the input is f64 (the default compute rule). */
  lt_dtype precision = in_dtype != LT_F64 && out_dtype == LT_F64 ? LT_F32 : out_dtype;
  lt_test_assert_close(got, want, n, exact ? 0.0 : lt_test_tolerance(precision, 2), what);
  lt_test_output_check_guard(&out);
  lt_test_check_unchanged(a, snap);
  free(got);
  free(want);
  free(snap);
  free(va);
  lt_plan_destroy(plan);
  lt_plan_options_destroy(opts);
  lt_test_output_free(&out);
  lt_tensor_destroy(a);
}

static void test_random_permutations(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 21);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int counter = 0;
    for (int rank = 0; rank <= 8; rank++)
      for (size_t t = 0; t < 4; t++)
        for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++, counter++) {
          int64_t shape[LT_MAX_RANK];
          for (int i = 0; i < rank; i++) {
            shape[i] = lt_test_rand_int(1, rank > 4 ? 3 : 6);
            if (lt_test_rand_int(0, 30) == 0) shape[i] = 0;
          }
          lt_dtype out_dtype = counter % 3 == 0 ? dtypes[(t + 1) % 4] : dtypes[t];
          lt_unary_op unary = counter % 2 ? (lt_unary_op)(counter % 13) : LT_UNARY_IDENTITY;
          run_case(ctx, rank, shape, dtypes[t], out_dtype, (lt_test_layout)layout, unary,
                   scalar_values[(counter / 2) % 3]);
        }
    lt_context_destroy(ctx);
  }
}

/* Shapes large enough for the tiled transpose, with extents that are not tile multiples. */
static void test_tiled(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 22);
  /* (40, 2100, 5): with the 5 moved outward, rows that interleave in the input (taken block by
   * block). */
  int64_t shapes[4][3] = {{67, 45, 3}, {5, 97, 70}, {130, 1, 66}, {40, 2100, 5}};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int s = 0; s < 4; s++)
      for (size_t t = 0; t < 4; t++)
        for (int layout = 0; layout < 4; layout++) {
          run_case(ctx, 3, shapes[s], dtypes[t], dtypes[t], (lt_test_layout)layout,
                   LT_UNARY_IDENTITY, 1.0);
          run_case(ctx, 3, shapes[s], dtypes[t], dtypes[(t + 2) % 4], (lt_test_layout)layout,
                   LT_UNARY_NEG, -2.5);
        }
    lt_context_destroy(ctx);
  }
}

/* Bit copies of integer and bool elements through the tiled path, extents past 256 along both
 * tiled dims: the cached tiles are 256 bytes wide, so 1-byte elements once made 256-row tiles
 * that overran the 128-entry row tables (a transposed u8 300 x 33 came out mostly wrong). Each
 * shape is permuted several ways (random orders), every layout family, against the naive loop. */
static void test_tiled_narrow_bits(void **state) {
  (void)state;
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 24);
  static const lt_dtype bits[] = {LT_U8, LT_I8, LT_BOOL, LT_I16, LT_U16, LT_I32, LT_I64};
  int64_t shapes[3][3] = {{300, 33, 2}, {33, 300, 3}, {257, 3, 129}};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int s = 0; s < 3; s++)
      for (size_t t = 0; t < sizeof bits / sizeof bits[0]; t++)
        for (int layout = 0; layout < 4; layout++)
          run_case(ctx, 3, shapes[s], bits[t], bits[t], (lt_test_layout)layout, LT_UNARY_IDENTITY,
                   1.0);
    lt_context_destroy(ctx);
  }
}

/* Outputs past the streaming threshold (32 MiB): non-temporal tiles and rows, multi-dim tile
 * groups (a reversal whose last extent is 4), checked exactly against a naive index loop. */
static void test_large_streaming(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shapes[3][5] = {{4, 33, 32, 16, 260}, {2050, 4100, 1, 1, 1}, {64, 257, 513, 1, 1}};
  int ranks[3] = {5, 2, 3};
  int perms[3][5] = {{4, 3, 2, 1, 0}, {1, 0}, {1, 0, 2}};
  for (int c = 0; c < 3; c++) {
    int rank = ranks[c];
    int64_t n = lt_test_numel(rank, shapes[c]);
    float *data = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++)
      data[i] = (float)i;
    lt_tensor *a, *o;
    LT_CHECK(lt_tensor_from_host(ctx, LT_F32, rank, shapes[c], NULL, data, &a));
    LT_CHECK(lt_permute(a, perms[c], &o));
    float *got;
    LT_CHECK(lt_tensor_host_pointer(o, (void **)&got));
    int64_t oshape[5], idx[5], astr[5];
    for (int i = 0; i < rank; i++)
      oshape[i] = shapes[c][perms[c][i]];
    for (int i = rank - 1, st = 1; i >= 0; i--) {
      astr[i] = st;
      st *= (int)shapes[c][i];
    }
    for (int64_t k = 0; k < n; k++) {
      lt_test_unravel(k, rank, oshape, idx);
      int64_t src = 0;
      for (int i = 0; i < rank; i++)
        src += idx[i] * astr[perms[c][i]];
      if (got[k] != data[src])
        fail_msg("case %d: element %lld is %g, expected %g", c, (long long)k, got[k], data[src]);
    }
    free(data);
    lt_tensor_destroy(o);
    lt_tensor_destroy(a);
  }
  lt_context_destroy(ctx);
}

/* ---- bit copies past the streaming threshold, in every layout the tile kernels meet ---- */

typedef enum { PLAIN, FLIPPED, SHIFTED, STEPPED, INPUT_FLIPPED } bitcopy_layout;

/* A tensor of `shape` whose elements are distinct nonzero bit patterns: FLIPPED is a view with
 * every axis reversed (negative strides), SHIFTED a view starting one element into each row of
 * a buffer one element wider (rows off the 64-byte grid), STEPPED every other element of rows
 * twice as long. INPUT_FLIPPED: A flipped, D plain (A's contiguous dim then runs backwards). */
static lt_tensor *pattern_tensor(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape,
                                 bitcopy_layout layout, unsigned fill) {
  int64_t wide[LT_MAX_RANK];
  for (int i = 0; i < rank; i++)
    wide[i] = i < rank - 1        ? shape[i]
              : layout == SHIFTED ? shape[i] + 1
              : layout == STEPPED ? 2 * shape[i]
                                  : shape[i];
  size_t es = lt_dtype_size(dtype), n = (size_t)lt_test_numel(rank, wide);
  unsigned char *bytes = malloc(n * es);
  for (size_t i = 0; i < n * es; i++)
    bytes[i] = (unsigned char)(fill ? fill : (i * 2654435761u >> 13) | 1);
  lt_tensor *base, *view = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, dtype, rank, wide, NULL, bytes, &base));
  free(bytes);
  if (layout == PLAIN) return base;
  if (layout == SHIFTED) {
    LT_CHECK(lt_view_slice(base, rank - 1, 1, wide[rank - 1], 1, &view));
  } else if (layout == STEPPED) {
    LT_CHECK(lt_view_slice(base, rank - 1, 0, wide[rank - 1], 2, &view));
  } else {
    view = base;
    for (int i = 0; i < rank; i++) {
      lt_tensor *next;
      LT_CHECK(lt_view_flip(view, i, &next));
      if (view != base) lt_tensor_destroy(view);
      view = next;
    }
  }
  lt_tensor_destroy(base); /* the view keeps the storage */
  return view;
}

static const unsigned char *element_bytes(const lt_tensor *t, const int64_t *idx) {
  void *p;
  LT_CHECK(lt_tensor_host_pointer(t, &p));
  int64_t off = 0;
  for (int i = 0; i < lt_tensor_rank(t); i++)
    off += idx[i] * lt_tensor_strides(t)[i];
  return (const unsigned char *)p + off * (int64_t)lt_dtype_size(lt_tensor_dtype(t));
}

/* D = permute(A) by a plan, compared byte for byte with a naive index loop; in the SHIFTED
 * layout the column left out of the output view must keep its poison. */
static void run_bitcopy(lt_context *ctx, lt_dtype dtype, int rank, const int64_t *shape_a,
                        const int *perm, bitcopy_layout layout) {
  int32_t modes_a[LT_MAX_RANK], modes_d[LT_MAX_RANK];
  int64_t shape_d[LT_MAX_RANK], idx_d[LT_MAX_RANK], idx_a[LT_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    modes_a[i] = i;
    modes_d[i] = perm[i];
    shape_d[i] = shape_a[perm[i]];
  }
  bitcopy_layout la = layout == INPUT_FLIPPED ? FLIPPED : layout;
  bitcopy_layout ld = layout == INPUT_FLIPPED ? PLAIN : layout;
  lt_tensor *a = pattern_tensor(ctx, dtype, rank, shape_a, la, 0);
  lt_tensor *d = pattern_tensor(ctx, dtype, rank, shape_d, ld, 0xa5);
  lt_plan *plan;
  LT_CHECK(lt_plan_permutation(a, modes_a, d, modes_d, NULL, &plan));
  LT_CHECK(lt_plan_execute(plan, (const lt_tensor *const *)&a, 1, NULL, 0, d));
  size_t es = lt_dtype_size(dtype);
  int64_t n = lt_test_numel(rank, shape_d);
  for (int64_t k = 0; k < n; k++) {
    lt_test_unravel(k, rank, shape_d, idx_d);
    for (int i = 0; i < rank; i++)
      idx_a[perm[i]] = idx_d[i];
    if (memcmp(element_bytes(d, idx_d), element_bytes(a, idx_a), es) != 0)
      fail_msg("%s rank %d layout %d: element %lld differs", lt_dtype_name(dtype), rank, layout,
               (long long)k);
  }
  if (layout == SHIFTED) {
    int64_t rows = n / shape_d[rank - 1];
    for (int64_t r = 0; r < rows; r++) {
      lt_test_unravel(r * shape_d[rank - 1], rank, shape_d, idx_d);
      const unsigned char *before = element_bytes(d, idx_d) - es;
      for (size_t b = 0; b < es; b++)
        if (before[b] != 0xa5)
          fail_msg("row %lld: the element before the view was written", (long long)r);
    }
  }
  lt_plan_destroy(plan);
  lt_tensor_destroy(d);
  lt_tensor_destroy(a);
}

/* Outputs of at least 32 MiB take the non-temporal paths: extents that are and are not multiples
 * of the vector blocks (16 floats, 8 doubles), rows on and off the 64-byte grid, negative
 * strides, 2-, 4- and 8-byte elements, one- and two-dim tile groups. Run under LT_CPU_ISA =
 * baseline / avx2 / (default) by the ctest entries, so every kernel is checked. */
static void test_streamed_bitcopies(void **state) {
  /* Streaming starts at 32 MiB outputs: minutes under memcheck (which also hides AVX-512) and
   * TSan, for a test with one thread's worth of logic per tile. */
  if (lt_test_instrumented()) skip();
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  struct {
    lt_dtype dtype;
    int rank;
    int64_t shape[3];
    int perm[3];
  } cases[] = {
      {LT_F32, 3, {2, 2048, 2112}, {0, 2, 1}}, /* whole blocks, aligned rows */
      {LT_F32, 3, {3, 1024, 2755}, {2, 1, 0}}, /* ragged edges, a two-dim q group */
      {LT_F32, 3, {2081, 48, 84}, {0, 2, 1}},  /* small matrices, read ahead block by block */
      {LT_F64, 3, {5, 520, 1624}, {2, 0, 1}},
      {LT_F16, 2, {4100, 4097, 1}, {1, 0, 0}},
      {LT_F32, 3, {60, 720, 200}, {2, 1, 0}},  /* 240-byte rows: the q group takes the next dim */
      {LT_F32, 3, {1400, 2100, 3}, {2, 0, 1}}, /* interleaved rows, gathered then streamed */
      /* short rows end to end (43-float rows, the innermost p dim steps by 43): joined runs */
      {LT_F32, 3, {43, 700, 300}, {1, 2, 0}},
      {LT_F64, 3, {29, 500, 290}, {1, 2, 0}},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int layout = PLAIN; layout <= INPUT_FLIPPED; layout++)
      run_bitcopy(ctx, cases[c].dtype, cases[c].rank, cases[c].shape, cases[c].perm,
                  (bitcopy_layout)layout);
  lt_context_destroy(ctx);
}

/* lt_permute: a C-contiguous copy with axes reordered, exact; bad axes are refused. */
static void test_lt_permute(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t shape[4] = {3, 40, 5, 33};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F32, 4, shape, LT_LAYOUT_STEPPED), *o;
    double *v = lt_test_read_all(a);
    int axes[4] = {3, 1, 0, 2};
    LT_CHECK(lt_permute(a, axes, &o));
    assert_true(lt_tensor_is_contiguous(o));
    double *g = lt_test_read_all(o);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < 33; i3++)
      for (int64_t i1 = 0; i1 < 40; i1++)
        for (int64_t i0 = 0; i0 < 3; i0++)
          for (int64_t i2 = 0; i2 < 5; i2++, k++)
            if (g[k] != v[((i0 * 40 + i1) * 5 + i2) * 33 + i3])
              fail_msg("lt_permute element %lld differs", (long long)k);
    free(g);
    lt_tensor_destroy(o);
    o = NULL;
    int bad[4] = {0, 1, 1, 2};
    LT_CHECK_FAILS(lt_permute(a, bad, &o), LT_ERR_INVALID_ARGUMENT);
    assert_null(o);
    free(v);
    lt_tensor_destroy(a);
    lt_context_destroy(ctx);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_permutations), cmocka_unit_test(test_tiled),
      cmocka_unit_test(test_large_streaming),     cmocka_unit_test(test_streamed_bitcopies),
      cmocka_unit_test(test_lt_permute),          cmocka_unit_test(test_tiled_narrow_bits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* SPDX-License-Identifier: MIT */
/* Semantics under stress: outputs overlapping inputs (identical, shifted, transposed, flipped,
 * broadcast), NaN/Inf propagation, element counts and strides beyond 2^31, sizes that overflow
 * 64 bits, guard regions. Either the right answer or a documented status, never a wrong
 * answer. */
#define _DEFAULT_SOURCE /* mmap's MAP_NORESERVE */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- outputs overlapping inputs: copy_into ---- */

/* Host copy of a rank-1/2 tensor's elements in C order. */
static double *values(const lt_tensor *t) { return lt_test_read_all(t); }

/* A guarded output of `shape` (stepped inside a NaN-poisoned base) filled with random data. */
static void guarded_random(lt_context *ctx, int rank, const int64_t *shape, lt_test_output *o) {
  lt_test_output_make(ctx, LT_F64, rank, shape, LT_LAYOUT_STEPPED, o);
  lt_tensor *r = lt_test_random_tensor(ctx, LT_F64, rank, shape, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK(lt_tensor_copy_into(o->view, r));
  lt_tensor_destroy(r);
  free(o->base_before); /* the guard compares against the poisoned base with the data in */
  o->base_before = lt_test_read_all(o->base);
}

static void test_copy_into_identical(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t shape[2] = {7, 5};
    lt_test_output o;
    guarded_random(ctx, 2, shape, &o);
    double *before = values(o.view);
    LT_CHECK(lt_tensor_copy_into(o.view, o.view));
    lt_test_check_unchanged(o.view, before);
    lt_test_output_check_guard(&o);
    free(before);
    lt_test_output_free(&o);
    lt_context_destroy(ctx);
  }
}

/* dst = base[dst_at : dst_at+len], src = base[src_at : src_at+len] of one 1-D storage. */
static void check_shifted(lt_context *ctx, int64_t n, int64_t len, int64_t dst_at, int64_t src_at) {
  lt_tensor *base = lt_test_random_tensor(ctx, LT_F64, 1, &n, LT_LAYOUT_CONTIGUOUS);
  double *old = values(base);
  lt_tensor *dst, *src;
  LT_CHECK(lt_view_slice(base, 0, dst_at, dst_at + len, 1, &dst));
  LT_CHECK(lt_view_slice(base, 0, src_at, src_at + len, 1, &src));
  LT_CHECK(lt_tensor_copy_into(dst, src));
  double *now = values(base);
  for (int64_t i = 0; i < n; i++) {
    double want = (i >= dst_at && i < dst_at + len) ? old[i - dst_at + src_at] : old[i];
    if (now[i] != want)
      fail_msg("shift %lld -> %lld: element %lld is %g, want %g", (long long)src_at,
               (long long)dst_at, (long long)i, now[i], want);
  }
  free(now);
  free(old);
  lt_tensor_destroy(src);
  lt_tensor_destroy(dst);
  lt_tensor_destroy(base);
}

static void test_copy_into_shifted(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t shifts[] = {1, 2, 7, 31};
    for (int k = 0; k < 4; k++) {
      check_shifted(ctx, 96, 64, 0, shifts[k]); /* read ahead of the write */
      check_shifted(ctx, 96, 64, shifts[k], 0); /* read behind the write */
    }
    lt_context_destroy(ctx);
  }
}

/* dst = the whole square, src = a rearranged view of it. */
typedef enum { REARRANGE_TRANSPOSE, REARRANGE_FLIP, REARRANGE_BROADCAST_ROW } rearrangement;

static void test_copy_into_rearranged_self(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t n = 9, shape[2] = {9, 9};
    for (int r = REARRANGE_TRANSPOSE; r <= REARRANGE_BROADCAST_ROW; r++) {
      lt_test_output o;
      guarded_random(ctx, 2, shape, &o);
      double *old = values(o.view);
      lt_tensor *src = NULL, *row = NULL, *flipped = NULL;
      if (r == REARRANGE_TRANSPOSE) {
        LT_CHECK(lt_view_transpose(o.view, 0, 1, &src));
      } else if (r == REARRANGE_FLIP) {
        LT_CHECK(lt_view_flip(o.view, 1, &src));
      } else { /* every row becomes the old row 2 reversed: overwrites row 2 while reading it */
        LT_CHECK(lt_view_select(o.view, 0, 2, &row));
        LT_CHECK(lt_view_flip(row, 0, &flipped));
        src = flipped;
        flipped = NULL;
      }
      LT_CHECK(lt_tensor_copy_into(o.view, src));
      double *now = values(o.view);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          double want = r == REARRANGE_TRANSPOSE ? old[j * n + i]
                        : r == REARRANGE_FLIP    ? old[i * n + (n - 1 - j)]
                                                 : old[2 * n + (n - 1 - j)];
          if (now[i * n + j] != want)
            fail_msg("%s, rearrangement %d: (%lld,%lld) is %g, want %g", devs[d], r, (long long)i,
                     (long long)j, now[i * n + j], want);
        }
      lt_test_output_check_guard(&o);
      free(now);
      free(old);
      lt_tensor_destroy(src);
      lt_tensor_destroy(row);
      lt_test_output_free(&o);
    }
    lt_context_destroy(ctx);
  }
}

static void test_copy_into_self_overlapping_destination(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  const int64_t n = 6, shape[2] = {4, 6};
  lt_tensor *base = lt_test_random_tensor(ctx, LT_F64, 1, &n, LT_LAYOUT_CONTIGUOUS), *wide;
  double *old = values(base);
  LT_CHECK(lt_view_broadcast_to(base, 2, shape, &wide));
  lt_tensor *src = lt_test_random_tensor(ctx, LT_F64, 2, shape, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK_FAILS(lt_tensor_copy_into(wide, src), LT_ERR_ALIASING);
  lt_test_check_unchanged(base, old);
  /* Overlapping through clashing strides, not zero ones: (0, 2) and (1, 0) are element 2. */
  lt_tensor *clash;
  const int64_t cshape[2] = {2, 3}, cstrides[2] = {2, 1};
  LT_CHECK(lt_view_as_strided(base, 2, cshape, cstrides, 0, &clash));
  lt_tensor *csrc = lt_test_random_tensor(ctx, LT_F64, 2, cshape, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK_FAILS(lt_tensor_copy_into(clash, csrc), LT_ERR_ALIASING);
  lt_test_check_unchanged(base, old);
  lt_tensor_destroy(csrc);
  lt_tensor_destroy(clash);
  lt_tensor_destroy(src);
  lt_tensor_destroy(wide);
  lt_tensor_destroy(base);
  free(old);
  lt_context_destroy(ctx);
}

/* ---- outputs overlapping inputs: operations and einsum ---- */

/* Accepts the right answer or LT_ERR_ALIASING (with the output untouched). */
static void check_overlap_result(lt_status st, const lt_tensor *d, const double *want,
                                 const double *before, int64_t n, const char *what) {
  if (st == LT_ERR_ALIASING) {
    assert_true(lt_last_error()[0] != '\0');
    lt_test_check_unchanged(d, before);
    return;
  }
  if (st != LT_OK) fail_msg("%s: %s (%s)", what, lt_status_string(st), lt_last_error());
  double *got = values(d);
  lt_test_assert_close(got, want, n, lt_test_tolerance(LT_F64, 2), what);
  free(got);
}

static void test_operations_with_overlapping_output(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t n = 80, len = 64;
    const int32_t m[1] = {0};
    const int64_t shifts[3] = {0, 1, 5};
    for (int k = 0; k < 3; k++)
      for (int dir = 0; dir < 2; dir++) {
        /* d = a + b where d is a shifted by +-shift in the same storage as a. */
        lt_tensor *base = lt_test_random_tensor(ctx, LT_F64, 1, &n, LT_LAYOUT_CONTIGUOUS);
        lt_tensor *b = lt_test_random_tensor(ctx, LT_F64, 1, &len, LT_LAYOUT_NEGATIVE);
        lt_tensor *a, *dv;
        int64_t a_at = dir ? shifts[k] : 0, d_at = dir ? 0 : shifts[k];
        LT_CHECK(lt_view_slice(base, 0, a_at, a_at + len, 1, &a));
        LT_CHECK(lt_view_slice(base, 0, d_at, d_at + len, 1, &dv));
        double *av = values(a), *bv = values(b), *before = values(dv), want[64];
        for (int64_t i = 0; i < len; i++)
          want[i] = av[i] + bv[i];
        lt_plan *plan = NULL;
        lt_clear_error();
        lt_status st = lt_plan_binary(a, m, b, m, LT_BINARY_ADD, dv, m, NULL, &plan);
        if (st == LT_OK) {
          const lt_tensor *ins[2] = {a, b};
          st = lt_plan_execute(plan, ins, 2, NULL, 0, dv);
        }
        char what[64];
        snprintf(what, sizeof what, "%s: d = a + b, a at %lld, d at %lld", devs[d], (long long)a_at,
                 (long long)d_at);
        check_overlap_result(st, dv, want, before, len, what);
        lt_plan_destroy(plan);
        free(av);
        free(bv);
        free(before);
        lt_tensor_destroy(dv);
        lt_tensor_destroy(a);
        lt_tensor_destroy(b);
        lt_tensor_destroy(base);
      }
    /* In-place transpose through einsum: d is the input itself, read transposed. */
    {
      const int64_t sq[2] = {11, 11};
      lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, 2, sq, LT_LAYOUT_CONTIGUOUS);
      double *old = values(a), want[121];
      for (int i = 0; i < 11; i++)
        for (int j = 0; j < 11; j++)
          want[i * 11 + j] = old[j * 11 + i];
      const lt_tensor *ins[1] = {a};
      lt_clear_error();
      lt_status st = lt_einsum_into("ij->ji", 1, ins, NULL, a);
      check_overlap_result(st, a, want, old, 121, "einsum_into ij->ji in place");
      free(old);
      lt_tensor_destroy(a);
    }
    lt_context_destroy(ctx);
  }
}

/* ---- NaN and Inf ---- */

static lt_tensor *vector(lt_context *ctx, lt_dtype dtype, const double *v, int64_t n) {
  lt_tensor *f64 = NULL, *t = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 1, &n, NULL, v, &f64));
  LT_CHECK(lt_tensor_contiguous(f64, dtype, &t));
  lt_tensor_destroy(f64);
  return t;
}

static double scalar_of(const lt_tensor *t) {
  double v = 0;
  LT_CHECK(lt_tensor_get(t, NULL, &v));
  return v;
}

static void test_min_max_propagate_nan_everywhere(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  const lt_dtype dtypes[2] = {LT_F32, LT_F64};
  const lt_reduce_op ops[2] = {LT_REDUCE_MIN, LT_REDUCE_MAX};
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    for (int k = 0; k < 2; k++)
      for (int64_t n = 1; n <= 64; n++)
        for (int64_t pos = 0; pos < n; pos++) {
          double v[64];
          for (int64_t i = 0; i < n; i++)
            v[i] = lt_test_rand_double(-1, 1);
          v[pos] = NAN;
          lt_tensor *t = vector(ctx, dtypes[k], v, n);
          for (int o = 0; o < 2; o++) {
            lt_tensor *r = NULL;
            LT_CHECK(lt_reduce(ops[o], t, -1, NULL, false, &r));
            if (!isnan(scalar_of(r)))
              fail_msg("%s %s %s: NaN at %lld of %lld gave %g", devs[d], lt_dtype_name(dtypes[k]),
                       o ? "max" : "min", (long long)pos, (long long)n, scalar_of(r));
            lt_tensor_destroy(r);
          }
          { /* argmax: the first NaN wins */
            lt_tensor *r = NULL;
            LT_CHECK(lt_argmax(t, 0, &r));
            if (scalar_of(r) != (double)pos)
              fail_msg("%s argmax: NaN at %lld of %lld, got %g", devs[d], (long long)pos,
                       (long long)n, scalar_of(r));
            lt_tensor_destroy(r);
          }
          { /* elementwise min/max against a NaN-free operand */
            double w[64];
            for (int64_t i = 0; i < n; i++)
              w[i] = lt_test_rand_double(-1, 1);
            lt_tensor *u = vector(ctx, dtypes[k], w, n), *r = NULL;
            for (int o = 0; o < 2; o++)
              for (int swap = 0; swap < 2; swap++) {
                LT_CHECK(
                    lt_binary(o ? LT_BINARY_MAX : LT_BINARY_MIN, swap ? u : t, swap ? t : u, &r));
                double *got = values(r);
                for (int64_t i = 0; i < n; i++)
                  if (isnan(got[i]) != (i == pos))
                    fail_msg("%s binary %s: element %lld is %g (NaN at %lld)", devs[d],
                             o ? "max" : "min", (long long)i, got[i], (long long)pos);
                free(got);
                lt_tensor_destroy(r);
              }
            lt_tensor_destroy(u);
          }
          lt_tensor_destroy(t);
        }
    lt_context_destroy(ctx);
  }
}

static void test_sums_of_infinities(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  const double cases[][4] = {{INFINITY, 1, 2, 3},
                             {-INFINITY, 1, -INFINITY, 3},
                             {INFINITY, -INFINITY, 1, 2},
                             {1e308, 1e308, 0, 0},
                             {INFINITY, INFINITY, 5, NAN}};
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    for (int c = 0; c < 5; c++) {
      volatile double want = 0.0; /* IEEE, in order */
      for (int i = 0; i < 4; i++)
        want += cases[c][i];
      lt_tensor *t = vector(ctx, LT_F64, cases[c], 4), *r = NULL;
      { /* through lt_reduce */
        LT_CHECK(lt_reduce(LT_REDUCE_SUM, t, -1, NULL, false, &r));
        double got = scalar_of(r);
        if (!(got == want || (isnan(got) && isnan(want))))
          fail_msg("%s sum case %d: %g, want %g", devs[d], c, got, want);
        lt_tensor_destroy(r);
      }
      { /* through einsum */
        const lt_tensor *ins[1] = {t};
        LT_CHECK(lt_einsum("i->", 1, ins, NULL, &r));
        double got = scalar_of(r);
        if (!(got == want || (isnan(got) && isnan(want))))
          fail_msg("%s einsum i-> case %d: %g, want %g", devs[d], c, got, want);
        lt_tensor_destroy(r);
      }
      lt_tensor_destroy(t);
    }
    lt_context_destroy(ctx);
  }
}

/* beta = 0 never reads the output: NaN already there must not leak into the result. */
static void test_beta_zero_ignores_nan_in_output(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const int64_t sa[2] = {6, 5}, sb[2] = {5, 4}, sd[2] = {6, 4}, sr[1] = {6};
    lt_tensor *a = lt_test_random_tensor(ctx, LT_F64, 2, sa, LT_LAYOUT_TRANSPOSED);
    lt_tensor *b = lt_test_random_tensor(ctx, LT_F64, 2, sb, LT_LAYOUT_STEPPED);
    double *av = values(a), *bv = values(b);
    const double scalars[2] = {1.0, 0.0};
    { /* a reduction plan */
      lt_test_output o;
      lt_test_output_make(ctx, LT_F64, 1, sr, LT_LAYOUT_STEPPED, &o); /* NaN-poisoned */
      const int32_t ma[2] = {0, 1}, md[1] = {0};
      lt_plan *plan = NULL;
      LT_CHECK(lt_plan_reduction(a, ma, NULL, NULL, LT_REDUCE_SUM, o.view, md, NULL, &plan));
      const lt_tensor *ins[1] = {a};
      LT_CHECK(lt_plan_execute(plan, ins, 1, scalars, 2, o.view));
      double want[6] = {0}, *got = values(o.view);
      for (int i = 0; i < 6; i++)
        for (int j = 0; j < 5; j++)
          want[i] += av[i * 5 + j];
      lt_test_assert_close(got, want, 6, lt_test_tolerance(LT_F64, 5), "reduction beta=0");
      lt_test_output_check_guard(&o);
      free(got);
      lt_plan_destroy(plan);
      lt_test_output_free(&o);
    }
    double want[24] = {0};
    for (int i = 0; i < 6; i++)
      for (int k = 0; k < 4; k++)
        for (int j = 0; j < 5; j++)
          want[i * 4 + k] += av[i * 5 + j] * bv[j * 4 + k];
    for (int kind = 0; kind < 2; kind++) {
      lt_test_output o;
      lt_test_output_make(ctx, LT_F64, 2, sd, LT_LAYOUT_TRANSPOSED, &o);
      const int32_t ma[2] = {'i', 'j'}, mb[2] = {'j', 'k'}, md[2] = {'i', 'k'};
      const lt_tensor *ins[2] = {a, b};
      lt_plan *plan = NULL;
      if (kind == 0)
        LT_CHECK(lt_plan_contraction(a, ma, b, mb, NULL, NULL, o.view, md, NULL, &plan));
      else
        LT_CHECK(lt_plan_einsum("ij,jk->ik", 2, ins, o.view, NULL, &plan));
      LT_CHECK(lt_plan_execute(plan, ins, 2, scalars, 2, o.view));
      double *got = values(o.view);
      lt_test_assert_close(got, want, 24, lt_test_tolerance(LT_F64, 5),
                           kind ? "einsum beta=0" : "contraction beta=0");
      lt_test_output_check_guard(&o);
      free(got);
      lt_plan_destroy(plan);
      lt_test_output_free(&o);
    }
    free(av);
    free(bv);
    lt_tensor_destroy(a);
    lt_tensor_destroy(b);
    lt_context_destroy(ctx);
  }
}

/* ---- sizes ---- */

static double get_at(const lt_tensor *t, const int64_t *idx) {
  double v = NAN;
  LT_CHECK(lt_tensor_get(t, idx, &v));
  return v;
}

/* Element counts beyond 2^31 through zero strides: no memory behind them. */
static void test_element_counts_beyond_2_31(void **state) {
  const char *devs[8];
  int ndev = lt_test_devices(devs);
  for (int d = 0; d < ndev; d++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[d], &ctx));
    const double v3[3] = {0.5, -1.5, 2.25};
    lt_tensor *small = vector(ctx, LT_F32, v3, 3), *big = NULL, *flat = NULL, *cut = NULL;
    const int64_t shape[3] = {1 << 20, 1 << 12, 3};
    LT_CHECK(lt_view_broadcast_to(small, 3, shape, &big));
    assert_true(lt_tensor_numel(big) == 3LL << 32);
    assert_true(lt_tensor_nbytes(big) == (size_t)12 << 32);
    assert_false(lt_tensor_is_contiguous(big));
    assert_true(get_at(big, (const int64_t[]){(1 << 20) - 1, (1 << 12) - 1, 2}) == 2.25);
    assert_true(get_at(big, (const int64_t[]){-1, -1, -3}) == 0.5);
    assert_true(get_at(big, (const int64_t[]){123456, 4000, 1}) == -1.5);
    /* Flattened: one axis of 3 * 2^32 elements, still a view. */
    LT_CHECK(lt_tensor_reshape(big, 2, (const int64_t[]){1LL << 32, 3}, &flat));
    assert_true(lt_tensor_shares_storage(flat, small));
    assert_true(get_at(flat, (const int64_t[]){(1LL << 32) - 1, 1}) == -1.5);
    /* A huge step across the huge axis. */
    LT_CHECK(lt_view_slice(flat, 0, 5, 1LL << 32, 1LL << 30, &cut));
    assert_int_equal(lt_tensor_shape(cut)[0], 4);
    lt_tensor *c = NULL;
    LT_CHECK(lt_tensor_contiguous(cut, LT_F64, &c));
    double got[12];
    LT_CHECK(lt_tensor_to_host(c, got, sizeof got));
    for (int i = 0; i < 12; i++)
      assert_true(got[i] == v3[i % 3]);
    lt_tensor_destroy(c);
    /* Reducing it reads 3 * 2^32 elements: only on request (LT_TEST_LARGE=1), it takes long. */
    const char *large = getenv("LT_TEST_LARGE");
    if (large && *large == '1') {
      lt_tensor *r = NULL;
      LT_CHECK(lt_reduce(LT_REDUCE_SUM, flat, 1, (const int[]){0}, false, &r));
      double sums[3];
      LT_CHECK(lt_tensor_contiguous(r, LT_F64, &c));
      LT_CHECK(lt_tensor_to_host(c, sums, sizeof sums));
      for (int i = 0; i < 3; i++)
        assert_true(sums[i] == v3[i] * 4294967296.0);
      lt_tensor_destroy(c);
      lt_tensor_destroy(r);
    }
    lt_tensor_destroy(cut);
    lt_tensor_destroy(flat);
    lt_tensor_destroy(big);
    lt_tensor_destroy(small);
    lt_context_destroy(ctx);
  }
}

/* Strides beyond 2^31 elements with real memory behind them: a sparse reservation of 24 GiB of
 * address space wrapped zero-copy, of which only the pages actually read are ever touched. */
static void test_strides_beyond_2_31(void **state) {
  const size_t span = (size_t)3 << 33; /* bytes */
  void *mem =
      mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) skip();
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  const int64_t stride = (1LL << 31) + 3; /* f32 elements: ~8 GiB apart */
  float *f = mem;
  for (int i = 0; i < 3; i++)
    f[i * stride] = (float)(i + 1) * 0.75f;
  lt_tensor *t = NULL, *c = NULL, *rev = NULL;
  LT_CHECK(lt_tensor_wrap_host(ctx, LT_F32, 1, (const int64_t[]){3}, &stride, mem, NULL, NULL, &t));
  LT_CHECK(lt_view_flip(t, 0, &rev));
  assert_true(get_at(rev, (const int64_t[]){0}) == 2.25);
  LT_CHECK(lt_tensor_contiguous(rev, LT_F64, &c));
  double got[3];
  LT_CHECK(lt_tensor_to_host(c, got, sizeof got));
  for (int i = 0; i < 3; i++)
    assert_true(got[i] == (3 - i) * 0.75);
  /* Writing through the far view: copy_into reversed. */
  lt_tensor *src = vector(ctx, LT_F32, (const double[]){5, 6, 7}, 3);
  LT_CHECK(lt_tensor_copy_into(rev, src));
  for (int i = 0; i < 3; i++)
    assert_true(f[i * stride] == (float)(7 - i));
  { /* a sum through lt_reduce */
    lt_tensor *r = NULL;
    LT_CHECK(lt_reduce(LT_REDUCE_SUM, t, -1, NULL, false, &r));
    assert_true(scalar_of(r) == 18.0);
    lt_tensor_destroy(r);
  }
  { /* a dot product with the flipped view through einsum */
    lt_tensor *r = NULL;
    const lt_tensor *ins[2] = {t, rev};
    LT_CHECK(lt_einsum("i,i->", 2, ins, NULL, &r));
    assert_true(scalar_of(r) == 5 * 7 + 6 * 6 + 7 * 5);
    lt_tensor_destroy(r);
  }
  lt_tensor_destroy(src);
  lt_tensor_destroy(c);
  lt_tensor_destroy(rev);
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  munmap(mem, span);
}

static void test_sizes_overflowing_64_bits_are_refused(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = (lt_tensor *)ctx, *one = NULL;
  const int64_t two32[2] = {1LL << 32, 1LL << 32}, e62[2] = {1LL << 62, 4};
  const int64_t with_zero[3] = {1LL << 40, 0, 1LL << 40};
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 2, two32, &t), LT_ERR_OVERFLOW);
  assert_null(t);
  LT_CHECK_FAILS(lt_tensor_zeros(ctx, LT_F32, 2, e62, &t), LT_ERR_OVERFLOW);
  /* 2^61 f64 elements: the count fits, the byte size does not. */
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F64, 1, (const int64_t[]){1LL << 61}, &t),
                 LT_ERR_OVERFLOW);
  /* Extents whose product overflows are refused even when another extent is 0. */
  LT_CHECK_FAILS(lt_tensor_empty(ctx, LT_F32, 3, with_zero, &t), LT_ERR_OVERFLOW);
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 1.0, &one));
  LT_CHECK_FAILS(lt_view_broadcast_to(one, 2, two32, &t), LT_ERR_OVERFLOW);
  assert_null(t);
  LT_CHECK_FAILS(lt_view_as_strided(one, 2, e62, (const int64_t[]){0, 0}, 0, &t), LT_ERR_OVERFLOW);
  LT_CHECK_FAILS(lt_view_reshape(one, 3, (const int64_t[]){1LL << 32, 1LL << 32, 0}, &t),
                 LT_ERR_OVERFLOW);
  /* Strides whose span overflows. */
  LT_CHECK_FAILS(
      lt_view_as_strided(one, 1, (const int64_t[]){3}, (const int64_t[]){INT64_MAX}, 0, &t),
      LT_ERR_OVERFLOW);
  float x = 0;
  LT_CHECK_FAILS(lt_tensor_wrap_host(ctx, LT_F32, 1, (const int64_t[]){4},
                                     (const int64_t[]){INT64_MAX / 2}, &x, NULL, NULL, &t),
                 LT_ERR_OVERFLOW);
  assert_null(t);
  lt_tensor_destroy(one);
  lt_context_destroy(ctx);
}

int main(void) {
  lt_test_rng_reset(lt_test_seed());
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_copy_into_identical),
      cmocka_unit_test(test_copy_into_shifted),
      cmocka_unit_test(test_copy_into_rearranged_self),
      cmocka_unit_test(test_copy_into_self_overlapping_destination),
      cmocka_unit_test(test_operations_with_overlapping_output),
      cmocka_unit_test(test_min_max_propagate_nan_everywhere),
      cmocka_unit_test(test_sums_of_infinities),
      cmocka_unit_test(test_beta_zero_ignores_nan_in_output),
      cmocka_unit_test(test_element_counts_beyond_2_31),
      cmocka_unit_test(test_strides_beyond_2_31),
      cmocka_unit_test(test_sizes_overflowing_64_bits_are_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

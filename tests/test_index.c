/* SPDX-License-Identifier: MIT */
/* Index family (include/tensor/index.h): gather (take, take_along_axis), scatter-add, mask
 * selection, concatenate/stack/split, creation functions and sort/argsort/topk, each against a
 * naive float64 reference in this file, over the layout families, on every device. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const lt_dtype dtypes[] = {LT_F32, LT_F64, LT_I64, LT_F16, LT_BF16, LT_I32, LT_I16};

/* A tensor of random indices (its dtype cycles through the signed integer dtypes) in [lo, hi]
 * (negative ones count from the end), in a contiguous or (flip = true) negative-stride layout. Host
 * copy in *host (C order). */
static lt_tensor *index_tensor(lt_context *ctx, int rank, const int64_t *shape, int64_t lo,
                               int64_t hi, bool flip, int64_t *host) {
  int64_t n = lt_test_numel(rank, shape);
  int64_t *buf = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++)
    buf[i] = lt_test_rand_int(lo, hi);
  static const lt_dtype index_dtypes[] = {LT_I64, LT_I32, LT_I16, LT_I8};
  static int turn = 0;
  lt_tensor *t, *t64;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, rank, shape, NULL, buf, &t64));
  LT_CHECK(lt_tensor_contiguous(t64, index_dtypes[turn++ % 4], &t));
  lt_tensor_destroy(t64);
  if (flip && rank > 0) {
    /* The flipped view reads buf reversed along axis 0: the host copy follows it. */
    lt_tensor *f;
    LT_CHECK(lt_view_flip(t, 0, &f));
    lt_tensor_destroy(t);
    t = f;
    int64_t inner = n / (shape[0] ? shape[0] : 1);
    for (int64_t i = 0; i < n; i++)
      host[i] = buf[(shape[0] - 1 - i / inner) * inner + i % inner];
  } else {
    memcpy(host, buf, sizeof(int64_t) * (size_t)n);
  }
  free(buf);
  return t;
}

static int64_t wrap(int64_t j, int64_t ext) { return j < 0 ? j + ext : j; }

/* lt_random values of an integer tensor: the harness fills in [-1, 1), so scale for I64. */
static lt_tensor *data_tensor(lt_context *ctx, lt_dtype dt, int rank, const int64_t *shape,
                              lt_test_layout layout) {
  bool is_int = lt_dtype_is_integer(dt);
  return lt_test_random_tensor_range(ctx, dt, rank, shape, layout, is_int ? -1000 : -1,
                                     is_int ? 1000 : 1);
}

static void check_take(lt_context *ctx, lt_dtype dt, int ra, const int64_t *sa, int axis, int ri,
                       const int64_t *si, lt_test_layout la, lt_test_layout lo, bool flip) {
  lt_tensor *a = data_tensor(ctx, dt, ra, sa, la);
  int64_t nidx = lt_test_numel(ri, si), ext = sa[axis];
  int64_t *ih = malloc(sizeof(int64_t) * (size_t)(nidx ? nidx : 1));
  lt_tensor *idx = index_tensor(ctx, ri, si, -ext, ext - 1, flip, ih);
  int rd = ra - 1 + ri;
  int64_t sd[LT_MAX_RANK];
  for (int k = 0; k < rd; k++)
    sd[k] = k < axis ? sa[k] : k < axis + ri ? si[k - axis] : sa[k - ri + 1];
  lt_test_output o;
  lt_test_output_make(ctx, dt, rd, sd, lo, &o);
  lt_plan *p;
  LT_CHECK(lt_plan_take(a, axis, idx, o.view, NULL, &p));
  const lt_tensor *ins[2] = {a, idx};
  double *snap = lt_test_snapshot(a);
  LT_CHECK(lt_plan_execute(p, ins, 2, NULL, 0, o.view));
  lt_test_check_unchanged(a, snap);
  lt_test_output_check_guard(&o);
  double *av = lt_test_read_all(a), *dv = lt_test_read_all(o.view);
  int64_t nd = lt_test_numel(rd, sd), inner = 1;
  for (int k = axis + 1; k < ra; k++)
    inner *= sa[k];
  for (int64_t e = 0; e < nd; e++) {
    /* d's C-order position e = ((outer * nidx) + ipos) * inner + in */
    int64_t in = e % inner, ipos = (e / inner) % (nidx ? nidx : 1), outer = e / inner / nidx;
    int64_t src = (outer * ext + wrap(ih[ipos], ext)) * inner + in;
    if (dv[e] != av[src])
      fail_msg("take %s axis %d at %lld: got %g want %g", lt_test_layout_name(la), axis,
               (long long)e, dv[e], av[src]);
  }
  free(av);
  free(dv);
  free(snap);
  free(ih);
  lt_plan_destroy(p);
  lt_test_output_free(&o);
  lt_tensor_destroy(idx);
  lt_tensor_destroy(a);
}

static void take_on(lt_context *ctx) {
  const int64_t sa[3] = {3, 4, 5}, si2[2] = {2, 3}, si1[1] = {7}, s1[1] = {6};
  for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++)
    for (int la = 0; la < LT_LAYOUT_COUNT; la++)
      for (int axis = 0; axis < 3; axis++) {
        lt_test_layout lo = la == LT_LAYOUT_BROADCAST ? LT_LAYOUT_TRANSPOSED : (lt_test_layout)la;
        check_take(ctx, dtypes[t], 3, sa, axis, 2, si2, la, lo, false);
        check_take(ctx, dtypes[t], 3, sa, axis, 1, si1, la, LT_LAYOUT_CONTIGUOUS, true);
        check_take(ctx, dtypes[t], 3, sa, axis, 0, NULL, la, LT_LAYOUT_STEPPED, false);
      }
  check_take(ctx, LT_F64, 1, s1, 0, 0, NULL, LT_LAYOUT_NEGATIVE, LT_LAYOUT_CONTIGUOUS, false);
  const int64_t s0[3] = {3, 0, 2}, si0[1] = {0};
  check_take(ctx, LT_F32, 3, s0, 2, 1, si0, LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_CONTIGUOUS, false);
  check_take(ctx, LT_F32, 3, s0, 0, 1, si1, LT_LAYOUT_CONTIGUOUS, LT_LAYOUT_CONTIGUOUS, false);
}

static void test_take(void **state) {
  (void)state;
  lt_test_on_each_device(take_on);
}

/* Runs plan p on {a, idx} into d, which must fail with LT_ERR_OUT_OF_RANGE and a message
 * containing `want`; then destroys p, the tensors and the host buffers (the large-output
 * checks' common ending). */
static void expect_bad_index_then_free(lt_plan *p, lt_tensor *a, lt_tensor *idx, lt_tensor *d,
                                       lt_tensor *base, const char *want, void *host, void *ih) {
  const lt_tensor *bad_ins[2] = {a, idx};
  LT_CHECK_FAILS(lt_plan_execute(p, bad_ins, 2, NULL, 0, d), LT_ERR_OUT_OF_RANGE);
  if (strstr(lt_last_error(), want) == NULL)
    fail_msg("the error should name %s: %s", want, lt_last_error());
  lt_plan_destroy(p);
  lt_tensor_destroy(d);
  lt_tensor_destroy(base);
  lt_tensor_destroy(idx);
  lt_tensor_destroy(a);
  free(host);
  free(ih);
}

/* Whole rows into outputs past the streaming threshold (32 MiB; non-temporal stores, source
 * rows prefetched ahead): 4 KiB rows, and 404-byte rows into an output view whose rows start
 * off 64-byte lines; checked bit for bit against the host data, then a bad index near the end
 * is an error naming its position. CPU only, and not under valgrind/TSan (the sizes). */
static void check_large_rows(lt_context *ctx, int64_t rows, int64_t cols, int64_t n_idx) {
  int64_t sa[2] = {rows, cols}, si[1] = {n_idx};
  float *host = malloc(sizeof(float) * (size_t)(rows * cols));
  int32_t *ih = malloc(sizeof(int32_t) * (size_t)n_idx);
  for (int64_t i = 0; i < rows * cols; i++)
    host[i] = (float)lt_test_rand_double(-1, 1);
  for (int64_t i = 0; i < n_idx; i++)
    ih[i] = (int32_t)lt_test_rand_int(-rows, rows - 1);
  lt_tensor *a, *idx, *base, *d;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F32, 2, sa, NULL, host, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_I32, 1, si, NULL, ih, &idx));
  int64_t sb[2] = {n_idx, cols + 1};
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 2, sb, &base));
  LT_CHECK(lt_view_slice(base, 1, 1, cols + 1, 1, &d)); /* rows start one element in */
  lt_plan *p;
  LT_CHECK(lt_plan_take(a, 0, idx, d, NULL, &p));
  const lt_tensor *ins[2] = {a, idx};
  LT_CHECK(lt_plan_execute(p, ins, 2, NULL, 0, d));
  void *mem;
  LT_CHECK(lt_tensor_host_pointer(base, &mem));
  const float *out = mem;
  for (int64_t r = 0; r < n_idx; r++) {
    int64_t j = ih[r] < 0 ? ih[r] + rows : ih[r];
    if (memcmp(out + r * (cols + 1) + 1, host + j * cols, sizeof(float) * (size_t)cols) != 0)
      fail_msg("take of %lld-float rows: row %lld differs from source row %lld", (long long)cols,
               (long long)r, (long long)j);
  }
  ih[n_idx - 3] = (int32_t)rows;
  lt_tensor_destroy(idx);
  LT_CHECK(lt_tensor_from_host(ctx, LT_I32, 1, si, NULL, ih, &idx));
  char want[64];
  snprintf(want, sizeof want, "%lld", (long long)rows);
  expect_bad_index_then_free(p, a, idx, d, base, want, host, ih);
}

/* Element gathers (take_along_axis on the last axis) into outputs past the streaming threshold:
 * rows gathered into L1 in chunks and streamed out, including 2 KiB chunk boundaries, a row
 * length that is no multiple of a line (1000 floats) and output rows that start off 64-byte
 * lines (a view one element into a wider base); checked bit for bit, then a bad index in the
 * last chunk of the last row is an error naming its position. CPU only, not under valgrind/TSan. */
static void check_large_along(lt_context *ctx, lt_dtype dt, int64_t rows, int64_t cols) {
  size_t es = lt_dtype_size(dt);
  int64_t sa[2] = {rows, cols}, n = rows * cols;
  unsigned char *host = malloc(es * (size_t)n);
  int64_t *ih = malloc(sizeof(int64_t) * (size_t)n);
  for (size_t b = 0; b < es * (size_t)n; b++)
    host[b] = (unsigned char)lt_test_rand_int(0, 255);
  for (int64_t i = 0; i < n; i++)
    ih[i] = lt_test_rand_int(-cols, cols - 1);
  lt_tensor *a, *idx, *base, *d;
  LT_CHECK(lt_tensor_from_host(ctx, dt, 2, sa, NULL, host, &a));
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 2, sa, NULL, ih, &idx));
  int64_t sb[2] = {rows, cols + 1};
  LT_CHECK(lt_tensor_empty(ctx, dt, 2, sb, &base));
  LT_CHECK(lt_view_slice(base, 1, 1, cols + 1, 1, &d));
  lt_plan *p;
  LT_CHECK(lt_plan_take_along_axis(a, 1, idx, d, NULL, &p));
  const lt_tensor *ins[2] = {a, idx};
  LT_CHECK(lt_plan_execute(p, ins, 2, NULL, 0, d));
  void *mem;
  LT_CHECK(lt_tensor_host_pointer(base, &mem));
  const unsigned char *out = mem;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      int64_t j = ih[r * cols + c] < 0 ? ih[r * cols + c] + cols : ih[r * cols + c];
      if (memcmp(out + ((size_t)(r * (cols + 1) + 1 + c)) * es, host + (size_t)(r * cols + j) * es,
                 es) != 0)
        fail_msg("take_along_axis (%zu-byte elements): (%lld, %lld) differs from (%lld, %lld)", es,
                 (long long)r, (long long)c, (long long)r, (long long)j);
    }
  ih[n - 5] = cols;
  lt_tensor_destroy(idx);
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 2, sa, NULL, ih, &idx));
  char want[64];
  snprintf(want, sizeof want, "(%lld, %lld)", (long long)(rows - 1), (long long)(cols - 5));
  expect_bad_index_then_free(p, a, idx, d, base, want, host, ih);
}

static void test_take_large_outputs(void **state) {
  (void)state;
  if (lt_test_instrumented()) {
    printf("[ SKIP     ] 32 MiB outputs under valgrind/TSan (the ASan run covers them)\n");
    return;
  }
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  LT_CHECK(lt_context_set_num_threads(ctx, 2));
  check_large_rows(ctx, 1000, 1024, 8200);
  check_large_rows(ctx, 3000, 101, 83100);
  check_large_along(ctx, LT_F32, 8400, 1000);
  check_large_along(ctx, LT_F64, 131072, 33);
  lt_context_destroy(ctx);
}

static void along_on(lt_context *ctx) {
  const int64_t sa[3] = {3, 4, 5};
  for (int la = 0; la < LT_LAYOUT_COUNT; la++)
    for (int axis = 0; axis < 3; axis++) {
      /* INDEX broadcasts on axis (axis + 1) % 3 (extent 1 there), has extent 6 on axis. */
      int64_t si[3] = {3, 4, 5};
      si[axis] = 6;
      si[(axis + 1) % 3] = 1;
      lt_tensor *a = data_tensor(ctx, LT_F64, 3, sa, (lt_test_layout)la);
      int64_t ni = lt_test_numel(3, si), ih[128];
      lt_tensor *idx = index_tensor(ctx, 3, si, -sa[axis], sa[axis] - 1, la % 2, ih);
      lt_tensor *d;
      LT_CHECK(lt_take_along_axis(a, idx, axis, &d));
      const int64_t *sd = lt_tensor_shape(d);
      double *av = lt_test_read_all(a), *dv = lt_test_read_all(d);
      int64_t nd = lt_tensor_numel(d), pos[3];
      for (int64_t e = 0; e < nd; e++) {
        lt_test_unravel(e, 3, sd, pos);
        int64_t ip[3] = {pos[0], pos[1], pos[2]}, ap[3] = {pos[0], pos[1], pos[2]};
        ip[(axis + 1) % 3] = 0;
        int64_t li = (ip[0] * si[1] + ip[1]) * si[2] + ip[2];
        ap[axis] = wrap(ih[li], sa[axis]);
        assert_true(li < ni);
        double want = av[(ap[0] * sa[1] + ap[1]) * sa[2] + ap[2]];
        if (dv[e] != want) fail_msg("take_along_axis axis %d at %lld", axis, (long long)e);
      }
      free(av);
      free(dv);
      lt_tensor_destroy(d);
      lt_tensor_destroy(idx);
      lt_tensor_destroy(a);
    }
}

static void test_take_along_axis(void **state) {
  (void)state;
  lt_test_on_each_device(along_on);
}

/* d[..., idx[j], ...] += src[..., j, ...] in float64, against the library (1-D or full INDEX). */
static void check_scatter(lt_context *ctx, lt_dtype dt, int axis, bool full, lt_test_layout lay) {
  const int64_t sd[3] = {4, 3, 5};
  int64_t ss[3] = {4, 3, 5};
  ss[axis] = 7;
  lt_tensor *src = data_tensor(ctx, dt, 3, ss, lay);
  int64_t ns = lt_test_numel(3, ss), ih[256];
  int64_t si1[1] = {7};
  lt_tensor *idx = full ? index_tensor(ctx, 3, ss, -sd[axis], sd[axis] - 1, lay % 2, ih)
                        : index_tensor(ctx, 1, si1, -sd[axis], sd[axis] - 1, lay % 2, ih);
  lt_test_output o;
  lt_test_output_make(ctx, dt, 3, sd, lay == LT_LAYOUT_BROADCAST ? LT_LAYOUT_NEGATIVE : lay, &o);
  lt_tensor *init = data_tensor(ctx, dt, 3, sd, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK(lt_tensor_copy_into(o.view, init));
  double *want = lt_test_read_all(init), *sv = lt_test_read_all(src);
  int64_t pos[3];
  for (int64_t e = 0; e < ns; e++) {
    lt_test_unravel(e, 3, ss, pos);
    int64_t j = full ? ih[e] : ih[pos[axis]];
    pos[axis] = wrap(j, sd[axis]);
    want[(pos[0] * sd[1] + pos[1]) * sd[2] + pos[2]] += sv[e];
  }
  LT_CHECK(lt_scatter_add(o.view, axis, idx, src));
  lt_test_output_check_guard(&o);
  double *got = lt_test_read_all(o.view);
  lt_test_assert_close(got, want, lt_test_numel(3, sd), lt_test_tolerance(dt, 8), "scatter_add");
  free(got);
  free(want);
  free(sv);
  lt_tensor_destroy(init);
  lt_test_output_free(&o);
  lt_tensor_destroy(idx);
  lt_tensor_destroy(src);
}

static void scatter_on(lt_context *ctx) {
  for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++)
    for (int lay = 0; lay < LT_LAYOUT_COUNT; lay++)
      for (int axis = 0; axis < 3; axis++) {
        check_scatter(ctx, dtypes[t], axis, false, (lt_test_layout)lay);
        check_scatter(ctx, dtypes[t], axis, true, (lt_test_layout)lay);
      }
}

static void test_scatter_add(void **state) {
  (void)state;
  lt_test_on_each_device(scatter_on);
}

/* The same f32 scatter-add with 1 and 4 threads gives the same bits (many repeated indices). */
static void test_scatter_deterministic(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t n = lt_test_instrumented() ? 2000 : 200000, sd[2] = {16, 64}, ss[2] = {n, 64};
  lt_tensor *src = lt_test_random_tensor(ctx, LT_F32, 2, ss, LT_LAYOUT_CONTIGUOUS);
  int64_t *ih = malloc(sizeof(int64_t) * (size_t)n), sn[1] = {n};
  lt_tensor *idx = index_tensor(ctx, 1, sn, 0, 15, false, ih);
  float *res[2];
  for (int r = 0; r < 2; r++) {
    LT_CHECK(lt_context_set_num_threads(ctx, r == 0 ? 1 : 4));
    lt_tensor *d;
    LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, sd, &d));
    LT_CHECK(lt_scatter_add(d, 0, idx, src));
    res[r] = malloc(16 * 64 * sizeof(float));
    LT_CHECK(lt_tensor_to_host(d, res[r], 16 * 64 * sizeof(float)));
    lt_tensor_destroy(d);
  }
  assert_memory_equal(res[0], res[1], 16 * 64 * sizeof(float));
  free(res[0]);
  free(res[1]);
  free(ih);
  lt_tensor_destroy(idx);
  lt_tensor_destroy(src);
  lt_context_destroy(ctx);
}

static void errors_on(lt_context *ctx) {
  const int64_t sa[2] = {3, 4}, si[1] = {2};
  lt_tensor *a = data_tensor(ctx, LT_F32, 2, sa, LT_LAYOUT_CONTIGUOUS), *d = NULL;
  int64_t bad[2] = {1, 4};
  lt_tensor *idx;
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, si, NULL, bad, &idx));
  LT_CHECK_FAILS(lt_take(a, idx, 1, &d), LT_ERR_OUT_OF_RANGE);
  assert_null(d);
  assert_non_null(strstr(lt_last_error(), "INDEX, axis 1"));
  assert_non_null(strstr(lt_last_error(), "index 4 at position (0, 1)"));
  bad[1] = -4; /* -4 wraps to 0 on axis 1 (extent 4), but is out of range on axis 0 (extent 3) */
  lt_tensor_destroy(idx);
  LT_CHECK(lt_tensor_from_host(ctx, LT_I64, 1, si, NULL, bad, &idx));
  LT_CHECK(lt_take(a, idx, 1, &d));
  lt_tensor_destroy(d);
  LT_CHECK_FAILS(lt_take(a, idx, 0, &d), LT_ERR_OUT_OF_RANGE);
  assert_non_null(strstr(lt_last_error(), "index -4"));
  LT_CHECK_FAILS(lt_take(a, idx, 2, &d), LT_ERR_OUT_OF_RANGE);
  /* Unsigned indices: u8 gathers; a u64 beyond INT64_MAX is out of range, not negative. */
  const uint8_t small[2] = {3, 0};
  const uint64_t huge[2] = {0, (1ull << 63) + 1};
  lt_tensor *iu;
  LT_CHECK(lt_tensor_from_host(ctx, LT_U8, 1, si, NULL, small, &iu));
  LT_CHECK(lt_take(a, iu, 1, &d));
  double *got = lt_test_read_all(d), *av = lt_test_read_all(a);
  assert_true(got[0] == av[3] && got[1] == av[0] && got[2] == av[7]);
  free(got);
  free(av);
  lt_tensor_destroy(d);
  lt_tensor_destroy(iu);
  LT_CHECK(lt_tensor_from_host(ctx, LT_U64, 1, si, NULL, huge, &iu));
  LT_CHECK_FAILS(lt_take(a, iu, 1, &d), LT_ERR_OUT_OF_RANGE);
  /* the message gives the index the caller wrote (2^63 + 1), not a clamped one */
  assert_non_null(strstr(lt_last_error(), "index 9223372036854775809 at position (0, 1)"));
  lt_tensor_destroy(iu);
  LT_CHECK_FAILS(lt_take(a, a, 0, &d), LT_ERR_DTYPE); /* float indices */
  lt_tensor *z;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, sa, &z));
  LT_CHECK_FAILS(lt_scatter_add(z, 0, idx, a), LT_ERR_SHAPE_MISMATCH); /* 2 indices, 3 rows */
  assert_non_null(strstr(lt_last_error(), "INDEX"));
  const int64_t sm[2] = {3, 5};
  lt_tensor *m = data_tensor(ctx, LT_F32, 2, sm, LT_LAYOUT_CONTIGUOUS);
  LT_CHECK_FAILS(lt_mask_select(a, m, &d), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "mask has extent 5 on axis 1"));
  const lt_tensor *pair[2] = {a, m};
  LT_CHECK_FAILS(lt_concatenate(2, pair, 0, &d), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "tensor 1 has extent 5 on axis 1"));
  LT_CHECK_FAILS(lt_arange(ctx, LT_F32, 0, 1, 0, &d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_topk(a, 5, 1, true, &d, NULL), LT_ERR_OUT_OF_RANGE);
  LT_CHECK_FAILS(lt_sort(a, 2, false, &d), LT_ERR_OUT_OF_RANGE);
  /* Missing, destroyed and odd arguments: statuses, never crashes. */
  LT_CHECK_FAILS(lt_take(NULL, idx, 0, &d), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_take(a, NULL, 0, &d), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_take(a, idx, 0, NULL), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_concatenate(0, pair, 0, &d), LT_ERR_INVALID_ARGUMENT);
  const lt_tensor *holes[2] = {a, NULL};
  LT_CHECK_FAILS(lt_concatenate(2, holes, 0, &d), LT_ERR_NULL_POINTER);
  lt_tensor *outs[3];
  LT_CHECK_FAILS(lt_split(a, 0, -1, NULL, outs), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_split(a, 0, 2, NULL, outs), LT_ERR_NULL_POINTER);
  assert_null(outs[0]);
  LT_CHECK_FAILS(lt_eye(ctx, LT_F32, -1, 2, 0, &d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_linspace(ctx, LT_F32, 0, 1, -3, true, &d), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_arange(ctx, LT_F32, 0, 1e300, 1e-300, &d), LT_ERR_OVERFLOW);
  LT_CHECK_FAILS(lt_topk(a, -1, 1, true, &d, NULL), LT_ERR_OUT_OF_RANGE);
  LT_CHECK_FAILS(lt_topk(a, 1, 1, true, NULL, NULL), LT_ERR_NULL_POINTER);
  /* one slot for both results lost (leaked) the values tensor */
  LT_CHECK_FAILS(lt_topk(a, 1, 1, true, &d, &d), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "values and indices point at the same place"));
  assert_null(d);
  lt_tensor *dead;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, sa, &dead));
  lt_tensor_destroy(dead);
  LT_CHECK_FAILS(lt_sort(dead, 0, false, &d), LT_ERR_INVALID_HANDLE);
  lt_plan *p = NULL;
  int64_t sd[2] = {3, 3};
  lt_tensor *wrong;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, sd, &wrong));
  LT_CHECK_FAILS(lt_plan_take(a, 1, idx, wrong, NULL, &p), LT_ERR_SHAPE_MISMATCH);
  assert_non_null(strstr(lt_last_error(), "axis 1"));
  LT_CHECK_FAILS(lt_plan_sort(a, 1, 3, LT_SORT_INDICES, wrong, NULL, &p), LT_ERR_DTYPE);
  LT_CHECK_FAILS(lt_plan_sort(a, 1, 5, 0, wrong, NULL, &p), LT_ERR_OUT_OF_RANGE);
  assert_null(p);
  lt_tensor_destroy(wrong);
  lt_tensor_destroy(m);
  lt_tensor_destroy(z);
  lt_tensor_destroy(idx);
  lt_tensor_destroy(a);
}

static void test_errors(void **state) {
  (void)state;
  lt_test_on_each_device(errors_on);
}

static void mask_on(lt_context *ctx) {
  const int64_t sa[3] = {4, 3, 2};
  for (int lay = 0; lay < LT_LAYOUT_COUNT; lay++)
    for (int mr = 0; mr <= 3; mr++) {
      lt_tensor *a = data_tensor(ctx, LT_F64, 3, sa, (lt_test_layout)lay);
      float mh[24];
      for (int i = 0; i < 24; i++)
        mh[i] = lt_test_rand_int(0, 2) ? (float)lt_test_rand_int(-2, 2) : 0.0f;
      lt_tensor *m0, *m;
      LT_CHECK(lt_tensor_from_host(ctx, LT_F32, mr, sa, NULL, mh, &m0));
      if (mr > 0 && lay % 2)
        LT_CHECK(lt_view_flip(m0, 0, &m));
      else
        LT_CHECK(lt_view_reshape(m0, mr, sa, &m));
      lt_tensor_destroy(m0);
      lt_tensor *d;
      LT_CHECK(lt_mask_select(a, m, &d));
      double *av = lt_test_read_all(a), *mv = lt_test_read_all(m), *dv = lt_test_read_all(d);
      int64_t nm = lt_test_numel(mr, sa), inner = lt_test_numel(3 - mr, sa + mr), c = 0;
      for (int64_t i = 0; i < nm; i++) {
        if (mv[i] == 0) continue;
        for (int64_t j = 0; j < inner; j++)
          assert_true(dv[c * inner + j] == av[i * inner + j]);
        c++;
      }
      assert_int_equal(lt_tensor_shape(d)[0], c);
      assert_int_equal(lt_tensor_rank(d), 1 + 3 - mr);
      free(av);
      free(mv);
      free(dv);
      lt_tensor_destroy(d);
      lt_tensor_destroy(m);
      lt_tensor_destroy(a);
    }
}

static void test_mask_select(void **state) {
  (void)state;
  lt_test_on_each_device(mask_on);
}

static void join_on(lt_context *ctx) {
  const int64_t sa[3] = {5, 4, 3};
  for (int lay = 0; lay < LT_LAYOUT_COUNT; lay++)
    for (int axis = 0; axis < 3; axis++) {
      lt_tensor *a = data_tensor(ctx, LT_F32, 3, sa, (lt_test_layout)lay), *parts[4], *back;
      const int64_t points[3] = {1, -1, 9}; /* pieces [0,1) [1,e-1) [e-1,e) [e,e) */
      LT_CHECK(lt_split(a, axis, 3, points, parts));
      assert_int_equal(lt_tensor_shape(parts[3])[axis], 0);
      assert_true(lt_tensor_shares_storage(parts[1], a));
      LT_CHECK(lt_concatenate(4, (const lt_tensor *const *)parts, axis, &back));
      /* Adjacent pieces: a view (unless along a broadcast axis, where it would alias). */
      if (lay != LT_LAYOUT_BROADCAST && !lt_tensor_shares_storage(back, a))
        fail_msg("concatenate of split pieces copied (%s, axis %d)",
                 lt_test_layout_name((lt_test_layout)lay), axis);
      double *av = lt_test_read_all(a), *bv = lt_test_read_all(back);
      assert_memory_equal(av, bv, sizeof(double) * 60);
      free(bv);
      lt_tensor_destroy(back);
      /* Reordered pieces (a view with a negative stride, or a copy), against a reference. */
      const lt_tensor *rev[2] = {parts[2], parts[0]};
      LT_CHECK(lt_concatenate(2, rev, axis, &back));
      bv = lt_test_read_all(back);
      int64_t sb[3] = {5, 4, 3}, pos[3];
      sb[axis] = 2;
      for (int64_t e = 0; e < lt_test_numel(3, sb); e++) {
        lt_test_unravel(e, 3, sb, pos);
        pos[axis] = pos[axis] == 0 ? sa[axis] - 1 : 0;
        assert_true(bv[e] == av[(pos[0] * sa[1] + pos[1]) * sa[2] + pos[2]]);
      }
      free(bv);
      lt_tensor_destroy(back);
      /* stack(a, a) along a new axis. */
      const lt_tensor *two[2] = {a, a};
      LT_CHECK(lt_stack(2, two, axis, &back));
      assert_false(lt_tensor_shares_storage(back, a)); /* never a view aliasing itself */
      assert_int_equal(lt_tensor_rank(back), 4);
      assert_int_equal(lt_tensor_shape(back)[axis], 2);
      bv = lt_test_read_all(back);
      int64_t inner = lt_test_numel(3 - axis, sa + axis), outer = 60 / inner;
      for (int64_t o = 0; o < outer; o++)
        for (int r = 0; r < 2; r++)
          assert_memory_equal(bv + (o * 2 + r) * inner, av + o * inner, sizeof(double) * inner);
      free(bv);
      free(av);
      lt_tensor_destroy(back);
      for (int i = 0; i < 4; i++)
        lt_tensor_destroy(parts[i]);
      lt_tensor_destroy(a);
    }
}

static void test_join(void **state) {
  (void)state;
  lt_test_on_each_device(join_on);
}

static void create_on(lt_context *ctx) {
  lt_tensor *t;
  LT_CHECK(lt_arange(ctx, LT_F64, 0, 1, 0.1, &t));
  assert_int_equal(lt_tensor_numel(t), 10);
  double *v = lt_test_read_all(t);
  for (int i = 0; i < 10; i++)
    assert_true(fabs(v[i] - 0.1 * i) < 1e-15);
  free(v);
  lt_tensor_destroy(t);
  LT_CHECK(lt_arange(ctx, LT_I64, 5, 0, -2, &t));
  v = lt_test_read_all(t);
  assert_int_equal(lt_tensor_numel(t), 3);
  assert_true(v[0] == 5 && v[1] == 3 && v[2] == 1);
  free(v);
  lt_tensor_destroy(t);
  LT_CHECK(lt_arange(ctx, LT_F32, 3, 1, 1, &t));
  assert_int_equal(lt_tensor_numel(t), 0);
  lt_tensor_destroy(t);
  /* Integer aranges of whole numbers are exact past 2^53 (doubles gave 2^53 twice), and signed
   * and unsigned 64-bit ends near the top fit. */
  const struct {
    lt_dtype dt;
    double start, stop, step;
    uint64_t first, delta;
    int n;
  } exact[] = {{LT_I64, 9007199254740990.0, 9007199254740998.0, 1, 9007199254740990ull, 1, 8},
               {LT_U64, 18446744073709549568.0, 0, -4096, 18446744073709549568ull, -4096ull, 5},
               {LT_I64, -9223372036854775808.0, -9223372036854771712.0, 1024, 0x8000000000000000ull,
                1024, 4}};
  for (int c = 0; c < 3; c++) {
    double stop = exact[c].stop ? exact[c].stop : exact[c].start + exact[c].n * exact[c].step;
    LT_CHECK(lt_arange(ctx, exact[c].dt, exact[c].start, stop, exact[c].step, &t));
    assert_int_equal(lt_tensor_numel(t), exact[c].n);
    for (int64_t i = 0; i < exact[c].n; i++) {
      uint64_t got;
      int64_t got_signed;
      if (exact[c].dt == LT_U64) {
        LT_CHECK(lt_tensor_get_u64(t, &i, &got));
      } else {
        LT_CHECK(lt_tensor_get_i64(t, &i, &got_signed));
        got = (uint64_t)got_signed;
      }
      assert_true(got == exact[c].first + (uint64_t)i * exact[c].delta);
    }
    lt_tensor_destroy(t);
  }
  /* An integer dtype that cannot hold the sequence refuses it (it wrapped). */
  LT_CHECK_FAILS(lt_arange(ctx, LT_U8, -3, 3, 1, &t), LT_ERR_OUT_OF_RANGE);
  assert_non_null(strstr(lt_last_error(), "-3 is outside the range of u8"));
  LT_CHECK_FAILS(lt_arange(ctx, LT_I8, 120, 135, 1, &t), LT_ERR_OUT_OF_RANGE);
  assert_non_null(strstr(lt_last_error(), "134 is outside the range of i8"));
  LT_CHECK_FAILS(lt_linspace(ctx, LT_I8, 0, 1000, 3, true, &t), LT_ERR_OUT_OF_RANGE);
  assert_null(t);
  LT_CHECK(lt_linspace(ctx, LT_I8, -128, 127, 2, true, &t));
  lt_tensor_destroy(t);
  LT_CHECK(lt_arange(ctx, LT_U8, 300, 300, 1, &t)); /* empty: nothing to hold */
  lt_tensor_destroy(t);
  for (int ep = 0; ep < 2; ep++) {
    LT_CHECK(lt_linspace(ctx, LT_F64, -1, 2, 7, ep, &t));
    v = lt_test_read_all(t);
    for (int i = 0; i < 7; i++)
      assert_true(fabs(v[i] - (-1 + 3.0 * i / (ep ? 6 : 7))) < 1e-15);
    if (ep) assert_true(v[6] == 2.0);
    free(v);
    lt_tensor_destroy(t);
  }
  LT_CHECK(lt_eye(ctx, LT_F32, 3, 4, 1, &t));
  v = lt_test_read_all(t);
  for (int i = 0; i < 12; i++)
    assert_true(v[i] == (i % 4 - i / 4 == 1 ? 1.0 : 0.0));
  free(v);
  lt_tensor *o;
  LT_CHECK(lt_full_like(t, LT_F64, 2.5, &o));
  assert_int_equal(lt_tensor_dtype(o), LT_F64);
  v = lt_test_read_all(o);
  for (int i = 0; i < 12; i++)
    assert_true(v[i] == 2.5);
  free(v);
  lt_tensor_destroy(o);
  LT_CHECK(lt_ones_like(t, LT_DTYPE_INVALID, &o));
  v = lt_test_read_all(o);
  assert_true(v[0] == 1.0 && v[11] == 1.0 && lt_tensor_dtype(o) == LT_F32);
  free(v);
  lt_tensor_destroy(o);
  lt_tensor_destroy(t);
}

static void test_create(void **state) {
  (void)state;
  lt_test_on_each_device(create_on);
}

/* Reference: stable insertion sort of positions by value, NaN greatest, reversed for desc. */
static bool ref_before(double x, double y, bool desc) {
  if (desc) {
    double t = x;
    x = y;
    y = t;
  }
  return x < y || (!isnan(x) && isnan(y));
}

static void sort_on(lt_context *ctx) {
  /* On axis 1 (50) the CPU radix-sorts, or for k = 2 keeps an insertion buffer (topk); the
   * short axes use the insertion buffer throughout. */
  const int64_t sa[3] = {3, 50, 4};
  for (size_t t = 0; t < sizeof dtypes / sizeof *dtypes; t++)
    for (int lay = 0; lay < LT_LAYOUT_COUNT; lay++)
      for (int axis = 0; axis < 3; axis++)
        for (int desc = 0; desc < 2; desc++) {
          lt_dtype dt = dtypes[t];
          lt_tensor *a0 = data_tensor(ctx, dt, 3, sa, LT_LAYOUT_CONTIGUOUS);
          /* Ties and NaNs: round to a few values, plant NaNs in floats. */
          double *h = lt_test_read_all(a0);
          for (int i = 0; i < 600; i++)
            h[i] = (i % 7 == 3 && !lt_dtype_is_integer(dt))
                       ? NAN
                       : round(h[i] * (lt_dtype_is_integer(dt) ? 0.003 : 2));
          lt_tensor *a1, *a;
          LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 3, sa, NULL, h, &a1));
          LT_CHECK(lt_tensor_contiguous(a1, dt, &a));
          lt_tensor *view = a;
          if (lay == LT_LAYOUT_NEGATIVE) LT_CHECK(lt_view_flip(a, axis, &view));
          double *av = lt_test_read_all(view);
          int64_t k = desc ? 2 : sa[axis];
          lt_tensor *vals, *idx;
          LT_CHECK(lt_topk(view, k, axis, desc, &vals, &idx));
          int64_t n = sa[axis], stride = lt_test_numel(2 - axis, sa + axis + 1);
          double *vv = lt_test_read_all(vals), *iv = lt_test_read_all(idx);
          for (int64_t row = 0; row < 600 / n; row++) {
            int64_t base = (row / stride) * n * stride + row % stride, perm[50];
            for (int64_t i = 0; i < n; i++) {
              int64_t j = i;
              while (j > 0 &&
                     ref_before(av[base + i * stride], av[base + perm[j - 1] * stride], desc)) {
                perm[j] = perm[j - 1];
                j--;
              }
              perm[j] = i;
            }
            int64_t obase = (row / stride) * k * stride + row % stride;
            for (int64_t r = 0; r < k; r++) {
              assert_int_equal((int64_t)iv[obase + r * stride], perm[r]);
              double w = av[base + perm[r] * stride], g = vv[obase + r * stride];
              assert_true(g == w || (isnan(g) && isnan(w)));
            }
          }
          free(vv);
          free(iv);
          free(av);
          free(h);
          lt_tensor_destroy(vals);
          lt_tensor_destroy(idx);
          if (view != a) lt_tensor_destroy(view);
          lt_tensor_destroy(a);
          lt_tensor_destroy(a1);
          lt_tensor_destroy(a0);
        }
}

static void test_sort(void **state) {
  (void)state;
  lt_test_on_each_device(sort_on);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_take),
      cmocka_unit_test(test_take_large_outputs),
      cmocka_unit_test(test_take_along_axis),
      cmocka_unit_test(test_scatter_add),
      cmocka_unit_test(test_scatter_deterministic),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_mask_select),
      cmocka_unit_test(test_join),
      cmocka_unit_test(test_create),
      cmocka_unit_test(test_sort),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

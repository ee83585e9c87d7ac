/* SPDX-License-Identifier: MIT */
/* Views: every view op checked against explicit index arithmetic on random data in every
 * layout family; a property test of ~1000 random chains of view ops compared element by
 * element with a naive model (an explicit list of storage offsets, transformed by the same
 * index maps); and every error path. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 8

/* ---- explicit index maps: view index -> input index ---- */

typedef void (*index_map)(const int64_t *vidx, int64_t *tidx, const void *arg);

static int64_t ravel(int rank, const int64_t *shape, const int64_t *idx) {
  int64_t k = 0;
  for (int d = 0; d < rank; d++)
    k = k * shape[d] + idx[d];
  return k;
}

typedef struct reshape_arg {
  int vrank, trank;
  const int64_t *vshape, *tshape;
} reshape_arg;
static void map_reshape(const int64_t *v, int64_t *t, const void *arg) {
  const reshape_arg *a = arg;
  lt_test_unravel(ravel(a->vrank, a->vshape, v), a->trank, a->tshape, t);
}

typedef struct permute_arg {
  int rank;
  int axes[LT_MAX_RANK];
} permute_arg;
static void map_permute(const int64_t *v, int64_t *t, const void *arg) {
  const permute_arg *a = arg;
  for (int i = 0; i < a->rank; i++)
    t[a->axes[i]] = v[i];
}

typedef struct slice_arg {
  int rank, axis;
  int64_t first, step;
} slice_arg;
static void map_slice(const int64_t *v, int64_t *t, const void *arg) {
  const slice_arg *a = arg;
  for (int i = 0; i < a->rank; i++)
    t[i] = v[i];
  t[a->axis] = a->first + v[a->axis] * a->step;
}

typedef struct select_arg {
  int trank, axis;
  int64_t index;
} select_arg;
static void map_select(const int64_t *v, int64_t *t, const void *arg) {
  const select_arg *a = arg;
  for (int i = 0, j = 0; i < a->trank; i++)
    t[i] = i == a->axis ? a->index : v[j++];
}

typedef struct broadcast_arg {
  int trank, vrank;
  const int64_t *tshape;
} broadcast_arg;
static void map_broadcast(const int64_t *v, int64_t *t, const void *arg) {
  const broadcast_arg *a = arg;
  for (int i = 0; i < a->trank; i++)
    t[i] = a->tshape[i] == 1 ? 0 : v[a->vrank - a->trank + i];
}

typedef struct squeeze_arg { /* also unsqueeze: the view's axis `axis` is new */
  int trank;
  bool dropped[LT_MAX_RANK]; /* squeeze: input axes removed */
} squeeze_arg;
static void map_squeeze(const int64_t *v, int64_t *t, const void *arg) {
  const squeeze_arg *a = arg;
  for (int i = 0, j = 0; i < a->trank; i++)
    t[i] = a->dropped[i] ? 0 : v[j++];
}

typedef struct unsqueeze_arg {
  int trank, axis;
} unsqueeze_arg;
static void map_unsqueeze(const int64_t *v, int64_t *t, const void *arg) {
  const unsqueeze_arg *a = arg;
  for (int i = 0, j = 0; i < a->trank; i++, j++) {
    if (j == a->axis) j++;
    t[i] = v[j];
  }
}

typedef struct diagonal_arg {
  int trank, axis1, axis2;
  int64_t offset;
} diagonal_arg;
static void map_diagonal(const int64_t *v, int64_t *t, const void *arg) {
  const diagonal_arg *a = arg;
  int j = 0;
  for (int i = 0; i < a->trank; i++)
    if (i != a->axis1 && i != a->axis2) t[i] = v[j++];
  t[a->axis1] = v[j] + (a->offset < 0 ? -a->offset : 0);
  t[a->axis2] = v[j] + (a->offset > 0 ? a->offset : 0);
}

typedef struct strided_arg {
  int rank;
  const int64_t *strides;
  int64_t offset;
} strided_arg;
static void map_strided(const int64_t *v, int64_t *t, const void *arg) {
  const strided_arg *a = arg;
  t[0] = a->offset;
  for (int i = 0; i < a->rank; i++)
    t[0] += v[i] * a->strides[i];
}

/* ---- comparing a view with its input through a map ---- */

/* Address of element idx of a host tensor, from its own strides; NULL off the host. */
static const char *element_address(const lt_tensor *t, const int64_t *idx) {
  void *p;
  if (lt_tensor_host_pointer(t, &p) != LT_OK) {
    lt_clear_error();
    return NULL;
  }
  int64_t off = 0;
  for (int d = 0; d < lt_tensor_rank(t); d++)
    off += idx[d] * lt_tensor_strides(t)[d];
  return (const char *)p + off * (int64_t)lt_dtype_size(lt_tensor_dtype(t));
}

/* Every element of v must be element map(idx) of t: the same memory and the same value. */
static void check_view(const lt_tensor *t, const lt_tensor *v, int vrank, const int64_t *vshape,
                       index_map map, const void *arg, const char *what) {
  assert_true(lt_tensor_shares_storage(t, v));
  assert_int_equal(lt_tensor_dtype(v), lt_tensor_dtype(t));
  if (lt_tensor_rank(v) != vrank)
    fail_msg("%s: rank %d, expected %d", what, lt_tensor_rank(v), vrank);
  for (int d = 0; d < vrank; d++)
    if (lt_tensor_shape(v)[d] != vshape[d])
      fail_msg("%s: extent %lld of axis %d, expected %lld", what, (long long)lt_tensor_shape(v)[d],
               d, (long long)vshape[d]);
  int64_t n = lt_test_numel(vrank, vshape);
  assert_int_equal(lt_tensor_numel(v), n);
  int64_t vidx[LT_MAX_RANK], tidx[LT_MAX_RANK];
  for (int64_t k = 0; k < n; k++) {
    lt_test_unravel(k, vrank, vshape, vidx);
    map(vidx, tidx, arg);
    const char *va = element_address(v, vidx), *ta = element_address(t, tidx);
    if (va != ta) fail_msg("%s: element %lld is at a different address", what, (long long)k);
    double vv, tv;
    LT_CHECK(lt_tensor_get(v, vidx, &vv));
    LT_CHECK(lt_tensor_get(t, tidx, &tv));
    if (memcmp(&vv, &tv, sizeof vv) != 0)
      fail_msg("%s: element %lld is %.17g, expected %.17g", what, (long long)k, vv, tv);
  }
}

/* Runs `body` for each device, dtype (two element sizes) and input layout of shape. */
typedef void (*op_body)(lt_tensor *t, int rank, const int64_t *shape, const char *what);

static void for_inputs(int rank, const int64_t *shape, op_body body) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed());
  static const lt_dtype dtypes[] = {LT_F64, LT_F16};
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int di = 0; di < 2; di++)
      for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++) {
        lt_tensor *t = lt_test_random_tensor(ctx, dtypes[di], rank, shape, (lt_test_layout)layout);
        char what[96];
        snprintf(what, sizeof what, "%s %s %s", devs[dv], lt_dtype_name(dtypes[di]),
                 lt_test_layout_name((lt_test_layout)layout));
        int64_t snap_shape[LT_MAX_RANK], snap_strides[LT_MAX_RANK],
            snap_offset = lt_tensor_offset(t);
        memcpy(snap_shape, lt_tensor_shape(t), sizeof(int64_t) * (size_t)rank);
        memcpy(snap_strides, lt_tensor_strides(t), sizeof(int64_t) * (size_t)rank);
        body(t, rank, shape, what);
        /* Views never change their input. */
        assert_memory_equal(lt_tensor_shape(t), snap_shape, sizeof(int64_t) * (size_t)rank);
        assert_memory_equal(lt_tensor_strides(t), snap_strides, sizeof(int64_t) * (size_t)rank);
        assert_int_equal(lt_tensor_offset(t), snap_offset);
        lt_tensor_destroy(t);
      }
    lt_context_destroy(ctx);
  }
}

static const int64_t shape345[3] = {3, 4, 5};

/* ---- one test per view op ---- */

static void reshape_body(lt_tensor *t, int rank, const int64_t *shape, const char *what) {
  static const int64_t targets[][5] = {{60},         {5, 12},       {-1, 5},    {3, 20},
                                       {3, 4, 5, 1}, {1, 3, 1, 20}, {3, -1, 5}, {12, 5},
                                       {2, 2, 15},   {3, 2, 2, 5}};
  static const int ranks[] = {1, 2, 2, 2, 4, 4, 3, 2, 3, 4};
  for (int c = 0; c < 10; c++) {
    int64_t full[5];
    memcpy(full, targets[c], sizeof full);
    for (int d = 0; d < ranks[c]; d++)
      if (full[d] == -1) full[d] = 60 / (ranks[c] == 2 ? 5 : 15);
    lt_tensor *v = NULL;
    lt_status st = lt_view_reshape(t, ranks[c], targets[c], &v);
    if (st == LT_ERR_NOT_VIEWABLE) {
      /* Only a non-contiguous input may refuse; a C-contiguous one always reshapes. */
      assert_false(lt_tensor_is_contiguous(t));
      assert_null(v);
      continue;
    }
    LT_CHECK(st);
    reshape_arg arg = {ranks[c], rank, full, shape};
    check_view(t, v, ranks[c], full, map_reshape, &arg, what);
    lt_tensor_destroy(v);
  }
}
static void test_reshape(void **state) {
  for_inputs(3, shape345, reshape_body);
  /* Splitting an axis of a transposed tensor is a view; merging across the transpose is not. */
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t s[2] = {6, 4};
  lt_tensor *t = lt_test_random_tensor(ctx, LT_F32, 2, s, LT_LAYOUT_TRANSPOSED), *v = NULL;
  int64_t split[3] = {2, 3, 4}, merge[1] = {24};
  LT_CHECK(lt_view_reshape(t, 3, split, &v));
  reshape_arg arg = {3, 2, split, s};
  check_view(t, v, 3, split, map_reshape, &arg, "split transposed");
  lt_tensor_destroy(v);
  LT_CHECK_FAILS(lt_view_reshape(t, 1, merge, &v), LT_ERR_NOT_VIEWABLE);
  assert_null(v);
  assert_non_null(strstr(lt_last_error(), "lt_tensor_reshape"));
  lt_tensor_destroy(t);
  /* Size 0 and rank 0. */
  int64_t z[2] = {0, 3}, z2[3] = {3, 0, 7}, one[3] = {1, 1, 1};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, z, &t));
  LT_CHECK(lt_view_reshape(t, 3, z2, &v));
  assert_int_equal(lt_tensor_numel(v), 0);
  lt_tensor_destroy(v);
  lt_tensor_destroy(t);
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 4.5, &t));
  LT_CHECK(lt_view_reshape(t, 3, one, &v));
  reshape_arg a0 = {3, 0, one, NULL};
  check_view(t, v, 3, one, map_reshape, &a0, "rank 0 -> (1,1,1)");
  lt_tensor *back = NULL;
  LT_CHECK(lt_view_reshape(v, 0, NULL, &back));
  assert_int_equal(lt_tensor_rank(back), 0);
  lt_tensor_destroy(back);
  lt_tensor_destroy(v);
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
}

static void permute_body(lt_tensor *t, int rank, const int64_t *shape, const char *what) {
  static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int p = 0; p < 6; p++) {
    permute_arg arg = {3, {perms[p][0], perms[p][1], perms[p][2]}};
    int axes[3];
    int64_t vshape[3];
    for (int i = 0; i < 3; i++) {
      axes[i] = p % 2 ? perms[p][i] - 3 : perms[p][i]; /* negative axes too */
      vshape[i] = shape[perms[p][i]];
    }
    lt_tensor *v = NULL;
    LT_CHECK(lt_view_permute(t, axes, &v));
    check_view(t, v, 3, vshape, map_permute, &arg, what);
    lt_tensor_destroy(v);
  }
  static const int pairs[][2] = {{0, 1}, {0, 2}, {1, 2}, {-1, 0}, {2, -2}, {1, 1}};
  for (int p = 0; p < 6; p++) {
    int a = (pairs[p][0] + 3) % 3, b = (pairs[p][1] + 3) % 3;
    permute_arg arg = {3, {0, 1, 2}};
    arg.axes[a] = b;
    arg.axes[b] = a;
    int64_t vshape[3] = {shape[0], shape[1], shape[2]};
    vshape[a] = shape[b];
    vshape[b] = shape[a];
    lt_tensor *v = NULL;
    LT_CHECK(lt_view_transpose(t, pairs[p][0], pairs[p][1], &v));
    check_view(t, v, 3, vshape, map_permute, &arg, what);
    lt_tensor_destroy(v);
  }
}
static void test_permute_transpose(void **state) { for_inputs(3, shape345, permute_body); }

/* Python's slice semantics, by explicit iteration: first index and count. */
static int64_t python_slice(int64_t n, int64_t start, int64_t stop, int64_t step, int64_t *first) {
  if (start == LT_SLICE_DEFAULT) start = step > 0 ? 0 : n - 1;
  if (stop == LT_SLICE_DEFAULT) stop = step > 0 ? n : -1;
  int64_t count = 0;
  *first = start;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    count++;
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  return count;
}

static void slice_body(lt_tensor *t, int rank, const int64_t *shape, const char *what) {
  const int64_t D = LT_SLICE_DEFAULT;
  static const int64_t cases[][3] = {
      {D, D, 1}, {1, 3, 1},         {0, 5, 2},          {D, D, -1}, {4, 0, -2}, {3, -1, -3},
      {2, 2, 1}, {3, 1, 1},         {1, 3, -1},         {0, 5, 10}, {D, 1, -1}, {3, D, -2},
      {5, 5, 1}, {D, D, INT64_MAX}, {D, D, -INT64_MAX}, {D, 2, 2},  {2, D, 3},  {-1, -1, -1}};
  for (int axis = -3; axis < 3; axis++)
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      int a = (axis + 3) % 3;
      int64_t n = shape[a], start = cases[c][0], stop = cases[c][1], step = cases[c][2];
      if (start != D && start > n) start = n;
      if (stop != D && stop > n) stop = n;
      if (step < 0 && start != D && start > n - 1) start = n - 1;
      if (step < 0 && stop != D && stop > n - 1) stop = n - 1;
      slice_arg arg = {3, a, 0, step};
      int64_t vshape[3] = {shape[0], shape[1], shape[2]};
      vshape[a] = python_slice(n, start, stop, step, &arg.first);
      lt_tensor *v = NULL;
      LT_CHECK(lt_view_slice(t, axis, start, stop, step, &v));
      char w[160];
      snprintf(w, sizeof w, "%s slice axis %d [%lld:%lld:%lld]", what, axis, (long long)start,
               (long long)stop, (long long)step);
      check_view(t, v, 3, vshape, map_slice, &arg, w);
      lt_tensor_destroy(v);
    }
}
static void test_slice(void **state) { for_inputs(3, shape345, slice_body); }

static void select_flip_body(lt_tensor *t, int rank, const int64_t *shape, const char *what) {
  for (int axis = -3; axis < 3; axis++) {
    int a = (axis + 3) % 3;
    for (int64_t i = -shape[a]; i < shape[a]; i++) {
      select_arg arg = {3, a, i < 0 ? i + shape[a] : i};
      int64_t vshape[2];
      for (int d = 0, j = 0; d < 3; d++)
        if (d != a) vshape[j++] = shape[d];
      lt_tensor *v = NULL;
      LT_CHECK(lt_view_select(t, axis, i, &v));
      check_view(t, v, 2, vshape, map_select, &arg, what);
      lt_tensor_destroy(v);
    }
    lt_tensor *v = NULL;
    LT_CHECK(lt_view_flip(t, axis, &v));
    slice_arg arg = {3, a, shape[a] - 1, -1};
    check_view(t, v, 3, shape, map_slice, &arg, what);
    /* Flipping twice gives the original layout back. */
    lt_tensor *vv = NULL;
    LT_CHECK(lt_view_flip(v, a, &vv));
    assert_int_equal(lt_tensor_offset(vv), lt_tensor_offset(t));
    assert_memory_equal(lt_tensor_strides(vv), lt_tensor_strides(t), 3 * sizeof(int64_t));
    lt_tensor_destroy(vv);
    lt_tensor_destroy(v);
  }
}
static void test_select_flip(void **state) { for_inputs(3, shape345, select_flip_body); }

static const int64_t shape315[3] = {3, 1, 5};

static void broadcast_squeeze_body(lt_tensor *t, int rank, const int64_t *shape, const char *what) {
  static const int64_t targets[][5] = {{3, 1, 5},       {3, 4, 5}, {2, 3, 4, 5},
                                       {2, 1, 3, 1, 5}, {3, 0, 5}, {0, 3, 7, 5}};
  static const int ranks[] = {3, 3, 4, 5, 3, 4};
  for (int c = 0; c < 6; c++) {
    lt_tensor *v = NULL;
    LT_CHECK(lt_view_broadcast_to(t, ranks[c], targets[c], &v));
    broadcast_arg arg = {rank, ranks[c], shape};
    check_view(t, v, ranks[c], targets[c], map_broadcast, &arg, what);
    lt_tensor_destroy(v);
  }
  /* unsqueeze at every position. */
  for (int axis = -4; axis < 4; axis++) {
    int a = (axis + 4) % 4;
    int64_t vshape[4];
    for (int d = 0, j = 0; d < 4; d++)
      vshape[d] = d == a ? 1 : shape[j++];
    unsqueeze_arg arg = {3, a};
    lt_tensor *v = NULL;
    LT_CHECK(lt_view_unsqueeze(t, axis, &v));
    check_view(t, v, 4, vshape, map_unsqueeze, &arg, what);
    lt_tensor_destroy(v);
  }
  /* squeeze one axis (1 or -2) and all. */
  for (int c = 0; c < 3; c++) {
    squeeze_arg arg = {3, {false, true, false}};
    int64_t vshape[2] = {3, 5};
    lt_tensor *v = NULL;
    LT_CHECK(lt_view_squeeze(t, c == 0 ? 1 : c == 1 ? -2 : LT_ALL_AXES, &v));
    check_view(t, v, 2, vshape, map_squeeze, &arg, what);
    lt_tensor_destroy(v);
  }
}
static void test_broadcast_unsqueeze_squeeze(void **state) {
  for_inputs(3, shape315, broadcast_squeeze_body);
  /* squeeze-all on many size-1 axes, and a scalar broadcast. */
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t s[5] = {1, 2, 1, 1, 3}, target[2] = {4, 3};
  lt_tensor *t = lt_test_random_tensor(ctx, LT_F32, 5, s, LT_LAYOUT_STEPPED), *v = NULL;
  LT_CHECK(lt_view_squeeze(t, LT_ALL_AXES, &v));
  squeeze_arg arg = {5, {true, false, true, true, false}};
  int64_t vs[2] = {2, 3};
  check_view(t, v, 2, vs, map_squeeze, &arg, "squeeze all");
  lt_tensor_destroy(v);
  lt_tensor_destroy(t);
  LT_CHECK(lt_tensor_full(ctx, LT_F64, 0, NULL, 1.25, &t));
  LT_CHECK(lt_view_broadcast_to(t, 2, target, &v));
  broadcast_arg barg = {0, 2, NULL};
  check_view(t, v, 2, target, map_broadcast, &barg, "scalar broadcast");
  assert_int_equal(lt_tensor_strides(v)[0], 0);
  assert_int_equal(lt_tensor_strides(v)[1], 0);
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_squeeze(t, LT_ALL_AXES, &v)); /* rank 0 stays rank 0 */
  assert_int_equal(lt_tensor_rank(v), 0);
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_unsqueeze(t, 0, &v));
  assert_int_equal(lt_tensor_rank(v), 1);
  lt_tensor_destroy(v);
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
}

static void diagonal_body(lt_tensor *t, int rank, const int64_t *shape, const char *what) {
  static const int axis_pairs[][2] = {{0, 1}, {1, 0}, {0, 2}, {2, 0}, {1, 2}, {-1, -3}, {-2, 2}};
  for (int p = 0; p < 7; p++) {
    int a = (axis_pairs[p][0] + 3) % 3, b = (axis_pairs[p][1] + 3) % 3;
    for (int64_t off = -shape[a] - 1; off <= shape[b] + 1; off++) {
      int64_t len = off >= 0 ? (shape[b] - off < shape[a] ? shape[b] - off : shape[a])
                             : (shape[a] + off < shape[b] ? shape[a] + off : shape[b]);
      if (len < 0) len = 0;
      int64_t vshape[3];
      for (int d = 0, j = 0; d < 3; d++)
        if (d != a && d != b) vshape[j++] = shape[d];
      vshape[1] = len;
      diagonal_arg arg = {3, a, b, off};
      lt_tensor *v = NULL;
      LT_CHECK(lt_view_diagonal(t, off, axis_pairs[p][0], axis_pairs[p][1], &v));
      char w[128];
      snprintf(w, sizeof w, "%s diagonal(%lld, %d, %d)", what, (long long)off, a, b);
      check_view(t, v, 2, vshape, map_diagonal, &arg, w);
      lt_tensor_destroy(v);
    }
  }
}
static void test_diagonal(void **state) {
  for_inputs(3, shape345, diagonal_body);
  /* A plain 2x3 matrix, values written out: offsets 0, 1, 2 and -1. */
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  double m[6] = {0, 1, 2, 3, 4, 5};
  int64_t s[2] = {2, 3};
  lt_tensor *t = NULL, *v = NULL;
  LT_CHECK(lt_tensor_from_host(ctx, LT_F64, 2, s, NULL, m, &t));
  double want[][2] = {{0, 4}, {1, 5}, {2, -1}, {3, -1}};
  for (int off = 0; off < 4; off++) {
    LT_CHECK(lt_view_diagonal(t, off - (off == 3 ? 4 : 0), 0, 1, &v));
    int64_t n = lt_tensor_numel(v);
    for (int64_t i = 0; i < n; i++) {
      double got;
      LT_CHECK(lt_tensor_get(v, &i, &got));
      assert_true(got == want[off][i]);
    }
    assert_int_equal(n, off == 0 || off == 1 ? 2 : 1);
    lt_tensor_destroy(v);
  }
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
}

/* A random layout of rank <= 3 (extents <= max_extent, |strides| <= max_stride) and the
 * lowest/highest offsets it reaches from its first element. Returns the rank. */
static int random_layout(int64_t max_extent, int64_t max_stride, int64_t *shape, int64_t *strides,
                         int64_t *lo, int64_t *hi) {
  int rank = (int)lt_test_rand_int(0, 3);
  *lo = *hi = 0;
  for (int d = 0; d < rank; d++) {
    shape[d] = lt_test_rand_int(0, max_extent);
    strides[d] = lt_test_rand_int(-max_stride, max_stride);
    int64_t span = (shape[d] ? shape[d] - 1 : 0) * strides[d];
    *(span < 0 ? lo : hi) += span;
  }
  return rank;
}

static void test_as_strided(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  lt_test_rng_reset(lt_test_seed() + 7);
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    int64_t n = 50;
    lt_tensor *base = lt_test_random_tensor(ctx, LT_F32, 1, &n, LT_LAYOUT_CONTIGUOUS);
    /* A view with an offset: as_strided offsets still count from the storage start. */
    lt_tensor *mid = NULL;
    LT_CHECK(lt_view_slice(base, 0, 10, 40, 3, &mid));
    for (int iter = 0; iter < 300; iter++) {
      int64_t shape[3], strides[3], lo, hi;
      int rank = random_layout(4, 6, shape, strides, &lo, &hi);
      int64_t offset = lt_test_rand_int(-10, 60);
      bool empty = lt_test_numel(rank, shape) == 0;
      bool inside = empty ? (offset >= 0 && offset <= n) : (offset + lo >= 0 && offset + hi < n);
      lt_tensor *v = (lt_tensor *)&v;
      lt_status st = lt_view_as_strided(iter % 2 ? mid : base, rank, shape, strides, offset, &v);
      if (!inside) {
        if (st != LT_ERR_OUT_OF_RANGE)
          fail_msg("as_strided offset %lld reaching [%lld, %lld] of [0, %lld): %s",
                   (long long)offset, (long long)(offset + lo), (long long)(offset + hi),
                   (long long)n, lt_status_string(st));
        assert_null(v);
        continue;
      }
      LT_CHECK(st);
      assert_int_equal(lt_tensor_offset(v), offset);
      strided_arg arg = {rank, strides, offset};
      check_view(base, v, rank, shape, map_strided, &arg, "as_strided");
      lt_tensor_destroy(v);
    }
    lt_tensor_destroy(mid);
    lt_tensor_destroy(base);
    lt_context_destroy(ctx);
  }
}

/* ---- property test: random chains of view ops against a naive model ---- */

/* The model: the storage offset of every element of the current view, in C order. */
typedef struct model {
  int rank;
  int64_t shape[LT_MAX_RANK];
  int64_t n;
  int64_t *off;
} model;

static void model_free(model *m) {
  free(m->off);
  m->off = NULL;
}

/* New model of shape vshape whose element idx is element map(idx) of m. */
static model model_apply(const model *m, int vrank, const int64_t *vshape, index_map map,
                         const void *arg) {
  model r = {vrank, {0}, lt_test_numel(vrank, vshape), NULL};
  memcpy(r.shape, vshape, sizeof(int64_t) * (size_t)vrank);
  r.off = malloc(sizeof(int64_t) * (size_t)(r.n + 1));
  int64_t vidx[LT_MAX_RANK], tidx[LT_MAX_RANK];
  for (int64_t k = 0; k < r.n; k++) {
    lt_test_unravel(k, vrank, vshape, vidx);
    map(vidx, tidx, arg);
    r.off[k] = map == map_strided ? tidx[0] : m->off[ravel(m->rank, m->shape, tidx)];
  }
  return r;
}

/* True if the model's offsets are an affine function of the index (expressible as strides). */
static bool model_is_affine(const model *m) {
  if (m->n == 0) return true;
  int64_t s[LT_MAX_RANK], idx[LT_MAX_RANK] = {0};
  for (int d = 0; d < m->rank; d++) {
    idx[d] = 1;
    s[d] = m->shape[d] > 1 ? m->off[ravel(m->rank, m->shape, idx)] - m->off[0] : 0;
    idx[d] = 0;
  }
  for (int64_t k = 0; k < m->n; k++) {
    lt_test_unravel(k, m->rank, m->shape, idx);
    int64_t o = m->off[0];
    for (int d = 0; d < m->rank; d++)
      o += idx[d] * s[d];
    if (o != m->off[k]) return false;
  }
  return true;
}

typedef struct chain_env {
  const double *values; /* storage contents */
  const char *storage;  /* host address of the storage start (NULL off the host) */
  size_t esize;
  int64_t capacity;
  char log[2048];
} chain_env;

static void chain_fail(const chain_env *env, const char *fmt, int64_t k, double got, double want) {
  fail_msg("%s: element %lld: %s (got %.17g, expected %.17g)", env->log, (long long)k, fmt, got,
           want);
}

static void check_against_model(const lt_tensor *v, const model *m, const chain_env *env) {
  if (lt_tensor_rank(v) != m->rank) chain_fail(env, "rank differs", -1, lt_tensor_rank(v), m->rank);
  for (int d = 0; d < m->rank; d++)
    if (lt_tensor_shape(v)[d] != m->shape[d])
      chain_fail(env, "extent differs", d, (double)lt_tensor_shape(v)[d], (double)m->shape[d]);
  int64_t idx[LT_MAX_RANK];
  bool contiguous = true;
  /* On the host: every element's address and lt_tensor_get. On a device, where each get is a
   * transfer: one gathered copy of the view. */
  double *all = env->storage ? NULL : lt_test_read_all(v);
  for (int64_t k = 0; k < m->n; k++) {
    lt_test_unravel(k, m->rank, m->shape, idx);
    if (m->off[k] != m->off[0] + k) contiguous = false;
    if (env->storage && element_address(v, idx) != env->storage + m->off[k] * (int64_t)env->esize)
      chain_fail(env, "address differs", k, 0, 0);
    double got;
    if (all)
      got = all[k];
    else
      LT_CHECK(lt_tensor_get(v, idx, &got));
    if (got != env->values[m->off[k]])
      chain_fail(env, "value differs", k, got, env->values[m->off[k]]);
  }
  free(all);
  if (lt_tensor_is_contiguous(v) != contiguous)
    chain_fail(env, "is_contiguous differs", -1, lt_tensor_is_contiguous(v), contiguous);
}

static int rand_axis(int rank) { /* a valid axis, sometimes written negatively */
  int a = (int)lt_test_rand_int(0, rank - 1);
  return lt_test_rand_int(0, 3) == 0 ? a - rank : a;
}

static int64_t rand_divisor(int64_t n) {
  int64_t divs[64];
  int nd = 0;
  for (int64_t d = 1; d <= n && nd < 64; d++)
    if (n % d == 0) divs[nd++] = d;
  return divs[lt_test_rand_int(0, nd - 1)];
}

#define LOG(env, ...)                                                                              \
  do {                                                                                             \
    size_t used = strlen((env)->log);                                                              \
    if (used < sizeof(env)->log - 1)                                                               \
      snprintf((env)->log + used, sizeof(env)->log - used, __VA_ARGS__);                           \
  } while (0)

/* Applies one random view op to (*v, *m); returns false if it skipped the op. */
static bool random_op(lt_tensor **v, model *m, chain_env *env) {
  int r = m->rank;
  lt_tensor *out = NULL;
  model next = {0};
  int op = (int)lt_test_rand_int(0, 10);
  lt_status st = LT_OK;
  switch (op) {
  case 0: { /* reshape, maybe with -1 */
    int64_t shape[5], req[5];
    int nr = (int)lt_test_rand_int(m->n == 1 ? 0 : 1, 4);
    int64_t rest = m->n;
    for (int d = 0; d < nr; d++) {
      shape[d] = d == nr - 1 ? rest : (rest == 0 ? lt_test_rand_int(0, 3) : rand_divisor(rest));
      if (rest) rest /= shape[d] ? shape[d] : 1;
    }
    if (m->n == 0 && nr > 0) shape[lt_test_rand_int(0, nr - 1)] = 0;
    memcpy(req, shape, sizeof shape);
    if (nr > 0 && m->n > 0 && lt_test_rand_int(0, 2) == 0) req[lt_test_rand_int(0, nr - 1)] = -1;
    if (m->n == 0 && nr == 0) return false;
    LOG(env, " reshape(");
    for (int d = 0; d < nr; d++)
      LOG(env, "%lld,", (long long)req[d]);
    LOG(env, ")");
    reshape_arg arg = {nr, r, shape, m->shape};
    next = model_apply(m, nr, shape, map_reshape, &arg);
    st = lt_view_reshape(*v, nr, req, &out);
    bool affine = model_is_affine(&next);
    if (st == LT_ERR_NOT_VIEWABLE && !affine) {
      model_free(&next);
      LOG(env, "=not viewable");
      return false;
    }
    if (!affine) fail_msg("%s: reshape accepted a non-affine layout", env->log);
    break;
  }
  case 1: { /* permute */
    if (r == 0) return false;
    permute_arg arg = {r, {0}};
    int axes[LT_MAX_RANK];
    int64_t shape[LT_MAX_RANK];
    for (int i = 0; i < r; i++)
      arg.axes[i] = i;
    for (int i = r - 1; i > 0; i--) {
      int j = (int)lt_test_rand_int(0, i), t = arg.axes[i];
      arg.axes[i] = arg.axes[j];
      arg.axes[j] = t;
    }
    LOG(env, " permute(");
    for (int i = 0; i < r; i++) {
      axes[i] = lt_test_rand_int(0, 1) ? arg.axes[i] : arg.axes[i] - r;
      shape[i] = m->shape[arg.axes[i]];
      LOG(env, "%d,", axes[i]);
    }
    LOG(env, ")");
    next = model_apply(m, r, shape, map_permute, &arg);
    st = lt_view_permute(*v, axes, &out);
    break;
  }
  case 2: { /* transpose */
    if (r == 0) return false;
    int a = rand_axis(r), b = rand_axis(r);
    int na = (a + r) % r, nb = (b + r) % r;
    permute_arg arg = {r, {0}};
    int64_t shape[LT_MAX_RANK];
    for (int i = 0; i < r; i++)
      arg.axes[i] = i;
    arg.axes[na] = nb;
    arg.axes[nb] = na;
    for (int i = 0; i < r; i++)
      shape[i] = m->shape[arg.axes[i]];
    LOG(env, " transpose(%d,%d)", a, b);
    next = model_apply(m, r, shape, map_permute, &arg);
    st = lt_view_transpose(*v, a, b, &out);
    break;
  }
  case 3: { /* slice */
    if (r == 0) return false;
    int axis = rand_axis(r), a = (axis + r) % r;
    int64_t n = m->shape[a];
    static const int64_t steps[] = {1, 1, 2, 3, -1, -1, -2, -3, 7, -7, INT64_MAX, -INT64_MAX};
    int64_t step = steps[lt_test_rand_int(0, 11)];
    int64_t start = step > 0 ? lt_test_rand_int(0, n) : lt_test_rand_int(-1, n - 1);
    int64_t stop = step > 0 ? lt_test_rand_int(0, n) : lt_test_rand_int(-1, n - 1);
    if (lt_test_rand_int(0, 3) == 0) start = LT_SLICE_DEFAULT;
    if (lt_test_rand_int(0, 3) == 0) stop = LT_SLICE_DEFAULT;
    slice_arg arg = {r, a, 0, step};
    int64_t shape[LT_MAX_RANK];
    memcpy(shape, m->shape, sizeof(int64_t) * (size_t)r);
    shape[a] = python_slice(n, start, stop, step, &arg.first);
    LOG(env, " slice(%d,%lld,%lld,%lld)", axis, (long long)start, (long long)stop, (long long)step);
    next = model_apply(m, r, shape, map_slice, &arg);
    st = lt_view_slice(*v, axis, start, stop, step, &out);
    break;
  }
  case 4: { /* select */
    if (r == 0) return false;
    int axis = rand_axis(r), a = (axis + r) % r;
    if (m->shape[a] == 0) return false;
    int64_t i = lt_test_rand_int(-m->shape[a], m->shape[a] - 1);
    select_arg arg = {r, a, i < 0 ? i + m->shape[a] : i};
    int64_t shape[LT_MAX_RANK];
    for (int d = 0, j = 0; d < r; d++)
      if (d != a) shape[j++] = m->shape[d];
    LOG(env, " select(%d,%lld)", axis, (long long)i);
    next = model_apply(m, r - 1, shape, map_select, &arg);
    st = lt_view_select(*v, axis, i, &out);
    break;
  }
  case 5: { /* broadcast_to */
    int lead = (int)lt_test_rand_int(0, 2);
    if (r + lead > 8) return false;
    int64_t shape[LT_MAX_RANK];
    for (int d = 0; d < lead; d++)
      shape[d] = lt_test_rand_int(1, 3);
    for (int d = 0; d < r; d++)
      shape[lead + d] = m->shape[d] == 1 ? lt_test_rand_int(0, 3) : m->shape[d];
    if (lt_test_numel(r + lead, shape) > 2048) return false;
    broadcast_arg arg = {r, r + lead, m->shape};
    LOG(env, " broadcast_to(");
    for (int d = 0; d < r + lead; d++)
      LOG(env, "%lld,", (long long)shape[d]);
    LOG(env, ")");
    next = model_apply(m, r + lead, shape, map_broadcast, &arg);
    st = lt_view_broadcast_to(*v, r + lead, shape, &out);
    break;
  }
  case 6: { /* unsqueeze */
    if (r >= 8) return false;
    int a = (int)lt_test_rand_int(0, r), axis = lt_test_rand_int(0, 1) ? a : a - r - 1;
    int64_t shape[LT_MAX_RANK];
    for (int d = 0, j = 0; d <= r; d++)
      shape[d] = d == a ? 1 : m->shape[j++];
    unsqueeze_arg arg = {r, a};
    LOG(env, " unsqueeze(%d)", axis);
    next = model_apply(m, r + 1, shape, map_unsqueeze, &arg);
    st = lt_view_unsqueeze(*v, axis, &out);
    break;
  }
  case 7: { /* squeeze one or all */
    int ones[LT_MAX_RANK], n1 = 0;
    for (int d = 0; d < r; d++)
      if (m->shape[d] == 1) ones[n1++] = d;
    if (n1 == 0) return false;
    bool all = lt_test_rand_int(0, 1);
    int a = ones[lt_test_rand_int(0, n1 - 1)];
    squeeze_arg arg = {r, {false}};
    int64_t shape[LT_MAX_RANK];
    int nr = 0;
    for (int d = 0; d < r; d++) {
      arg.dropped[d] = all ? m->shape[d] == 1 : d == a;
      if (!arg.dropped[d]) shape[nr++] = m->shape[d];
    }
    LOG(env, " squeeze(%d)", all ? LT_ALL_AXES : a);
    next = model_apply(m, nr, shape, map_squeeze, &arg);
    st = lt_view_squeeze(*v, all ? LT_ALL_AXES : a, &out);
    break;
  }
  case 8: { /* flip */
    if (r == 0) return false;
    int axis = rand_axis(r), a = (axis + r) % r;
    slice_arg arg = {r, a, m->shape[a] - 1, -1};
    LOG(env, " flip(%d)", axis);
    next = model_apply(m, r, m->shape, map_slice, &arg);
    st = lt_view_flip(*v, axis, &out);
    break;
  }
  case 9: { /* diagonal */
    if (r < 2) return false;
    int axis1 = rand_axis(r), axis2 = rand_axis(r), a = (axis1 + r) % r, b = (axis2 + r) % r;
    if (a == b) return false;
    int64_t off = lt_test_rand_int(-m->shape[a] - 1, m->shape[b] + 1);
    int64_t len = off >= 0 ? (m->shape[b] - off < m->shape[a] ? m->shape[b] - off : m->shape[a])
                           : (m->shape[a] + off < m->shape[b] ? m->shape[a] + off : m->shape[b]);
    int64_t shape[LT_MAX_RANK];
    int j = 0;
    for (int d = 0; d < r; d++)
      if (d != a && d != b) shape[j++] = m->shape[d];
    shape[j] = len < 0 ? 0 : len;
    diagonal_arg arg = {r, a, b, off};
    LOG(env, " diagonal(%lld,%d,%d)", (long long)off, axis1, axis2);
    next = model_apply(m, r - 1, shape, map_diagonal, &arg);
    st = lt_view_diagonal(*v, off, axis1, axis2, &out);
    break;
  }
  default: { /* as_strided: a fresh layout inside the storage */
    int64_t shape[3], strides[3], lo, hi;
    int rank = random_layout(5, 9, shape, strides, &lo, &hi);
    if (hi - lo >= env->capacity) return false;
    int64_t offset = lt_test_rand_int(-lo, env->capacity - 1 - hi);
    strided_arg arg = {rank, strides, offset};
    LOG(env, " as_strided(rank %d, offset %lld)", rank, (long long)offset);
    next = model_apply(m, rank, shape, map_strided, &arg);
    st = lt_view_as_strided(*v, rank, shape, strides, offset, &out);
    break;
  }
  }
  if (st != LT_OK) fail_msg("%s: %s (%s)", env->log, lt_status_string(st), lt_last_error());
  lt_tensor_destroy(*v); /* the new view alone keeps the storage alive */
  *v = out;
  model_free(m);
  *m = next;
  return true;
}

static void test_random_chains(void **state) {
  const char *devs[MAX_DEVICES];
  int ndev = lt_test_devices(devs);
  uint64_t seed = lt_test_seed() + 8;
  printf("[ views ] random chains with seed %llu (LT_TEST_SEED=%llu)\n", (unsigned long long)seed,
         (unsigned long long)lt_test_seed());
  lt_test_rng_reset(seed);
  static const lt_dtype dtypes[] = {LT_F64, LT_F32, LT_F16, LT_BF16, LT_I64};
  const int64_t capacity = 360;
  int applied = 0, copies = 0;
  for (int dv = 0; dv < ndev; dv++) {
    lt_context *ctx;
    LT_CHECK(lt_context_create(devs[dv], &ctx));
    for (int chain = 0; chain < 1000; chain++) {
      lt_dtype dtype = dtypes[chain % 5];
      lt_tensor *base = lt_test_random_tensor_range(ctx, dtype, 1, &capacity, LT_LAYOUT_CONTIGUOUS,
                                                    -1000.0, 1000.0);
      chain_env env = {NULL, NULL, lt_dtype_size(dtype), capacity, ""};
      snprintf(env.log, sizeof env.log, "chain %d (%s, %s):", chain, devs[dv],
               lt_dtype_name(dtype));
      double *values = lt_test_read_all(base);
      env.values = values;
      void *p;
      if (lt_tensor_host_pointer(base, &p) == LT_OK)
        env.storage = p;
      else
        lt_clear_error();
      /* Start from the whole storage shaped (3,4,5,6), then forget the base handle. */
      model m = {1, {capacity}, capacity, malloc(sizeof(int64_t) * (size_t)capacity)};
      for (int64_t i = 0; i < capacity; i++)
        m.off[i] = i;
      lt_tensor *v = NULL;
      int64_t start[4] = {3, 4, 5, 6};
      LT_CHECK(lt_view_reshape(base, 4, start, &v));
      reshape_arg arg = {4, 1, start, m.shape};
      model first = model_apply(&m, 4, start, map_reshape, &arg);
      model_free(&m);
      m = first;
      lt_tensor_destroy(base);
      int length = (int)lt_test_rand_int(1, 10);
      for (int step = 0; step < length; step++) {
        if (random_op(&v, &m, &env)) applied++;
        check_against_model(v, &m, &env);
      }
      /* Materialise the final view now and then: the copy engine on odd layouts. */
      if (chain % 4 == 0) {
        lt_tensor *c = NULL;
        LT_CHECK(lt_tensor_contiguous(v, LT_F64, &c));
        double *got = malloc(sizeof(double) * (size_t)(m.n + 1));
        LT_CHECK(lt_tensor_to_host(c, got, sizeof(double) * (size_t)m.n));
        for (int64_t k = 0; k < m.n; k++)
          if (got[k] != values[m.off[k]])
            chain_fail(&env, "contiguous copy differs", k, got[k], values[m.off[k]]);
        free(got);
        lt_tensor_destroy(c);
        copies++;
      }
      lt_tensor_destroy(v);
      model_free(&m);
      free(values);
    }
    lt_context_destroy(ctx);
  }
  printf("[ views ] %d view ops applied, %d copies checked\n", applied, copies);
  assert_true(applied > 3000 * ndev);
}

/* ---- error paths ---- */

typedef struct error_case {
  const char *what;
  lt_status status;
  const char *message; /* substring */
} error_case;

static void check_error(lt_status st, lt_tensor *out, const error_case *c) {
  if (st != c->status)
    fail_msg("%s: returned %s (%s), expected %s", c->what, lt_status_string(st), lt_last_error(),
             lt_status_string(c->status));
  assert_null(out);
  if (strstr(lt_last_error(), c->message) == NULL)
    fail_msg("%s: message \"%s\" lacks \"%s\"", c->what, lt_last_error(), c->message);
}

#define EXPECT(call, status, message)                                                              \
  do {                                                                                             \
    lt_tensor *out = (lt_tensor *)&ctx;                                                            \
    lt_clear_error();                                                                              \
    error_case c = {#call, status, message};                                                       \
    lt_status st = call;                                                                           \
    check_error(st, out, &c);                                                                      \
  } while (0)

static void test_view_errors(void **state) {
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  lt_tensor *t = lt_test_random_tensor(ctx, LT_F32, 3, shape345, LT_LAYOUT_CONTIGUOUS);
  lt_tensor *tr = lt_test_random_tensor(ctx, LT_F32, 3, shape345, LT_LAYOUT_TRANSPOSED);
  lt_tensor *scalar = NULL, *empty = NULL;
  LT_CHECK(lt_tensor_full(ctx, LT_F32, 0, NULL, 1.0, &scalar));
  int64_t zshape[2] = {0, 3};
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 2, zshape, &empty));
  int64_t capacity = 60;

  /* reshape */
  int64_t two_infer[3] = {-1, -1, 5}, neg[2] = {-2, -30}, wrong[2] = {7, 9}, indiv[2] = {-1, 7};
  int64_t big[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0}, flat[1] = {60}, zinf[2] = {0, -1};
  EXPECT(lt_view_reshape(t, 3, two_infer, &out), LT_ERR_INVALID_ARGUMENT, "more than one -1");
  EXPECT(lt_view_reshape(t, 2, neg, &out), LT_ERR_INVALID_ARGUMENT, "negative");
  EXPECT(lt_view_reshape(t, 2, wrong, &out), LT_ERR_SHAPE_MISMATCH, "60 elements");
  EXPECT(lt_view_reshape(t, 2, indiv, &out), LT_ERR_SHAPE_MISMATCH, "not divisible by 7");
  EXPECT(lt_view_reshape(t, 3, big, &out), LT_ERR_OVERFLOW, "overflows");
  EXPECT(lt_view_reshape(t, 65, flat, &out), LT_ERR_INVALID_ARGUMENT, "rank 65");
  EXPECT(lt_view_reshape(t, -1, flat, &out), LT_ERR_INVALID_ARGUMENT, "rank -1");
  EXPECT(lt_view_reshape(tr, 1, flat, &out), LT_ERR_NOT_VIEWABLE, "without a copy");
  EXPECT(lt_view_reshape(empty, 2, zinf, &out), LT_ERR_SHAPE_MISMATCH, "cannot infer");
  EXPECT(lt_tensor_reshape(t, 2, wrong, &out), LT_ERR_SHAPE_MISMATCH, "60 elements");

  /* permute / transpose */
  int dup[3] = {0, 1, 0}, range[3] = {0, 1, 3}, negr[3] = {-4, 0, 1};
  EXPECT(lt_view_permute(t, dup, &out), LT_ERR_INVALID_ARGUMENT, "appears twice");
  EXPECT(lt_view_permute(t, range, &out), LT_ERR_OUT_OF_RANGE, "axis 3");
  EXPECT(lt_view_permute(t, negr, &out), LT_ERR_OUT_OF_RANGE, "axis -4");
  EXPECT(lt_view_transpose(t, 0, 3, &out), LT_ERR_OUT_OF_RANGE, "lt_view_transpose");
  EXPECT(lt_view_transpose(t, -4, 0, &out), LT_ERR_OUT_OF_RANGE, "axis -4");
  EXPECT(lt_view_transpose(scalar, 0, 0, &out), LT_ERR_OUT_OF_RANGE, "rank-0");

  /* slice (axis 1 has extent 4) */
  const int64_t D = LT_SLICE_DEFAULT;
  EXPECT(lt_view_slice(t, 3, 0, 1, 1, &out), LT_ERR_OUT_OF_RANGE, "axis 3");
  EXPECT(lt_view_slice(t, 1, 0, 4, 0, &out), LT_ERR_INVALID_ARGUMENT, "step");
  EXPECT(lt_view_slice(t, 1, 5, 4, 1, &out), LT_ERR_OUT_OF_RANGE, "start 5");
  EXPECT(lt_view_slice(t, 1, -1, 4, 1, &out), LT_ERR_OUT_OF_RANGE, "start -1");
  EXPECT(lt_view_slice(t, 1, 0, 5, 1, &out), LT_ERR_OUT_OF_RANGE, "stop 5");
  EXPECT(lt_view_slice(t, 1, D, -1, 2, &out), LT_ERR_OUT_OF_RANGE, "stop -1");
  EXPECT(lt_view_slice(t, 1, 4, D, -1, &out), LT_ERR_OUT_OF_RANGE, "start 4");
  EXPECT(lt_view_slice(t, 1, 3, -2, -1, &out), LT_ERR_OUT_OF_RANGE, "stop -2");
  EXPECT(lt_view_slice(t, 1, D, D, INT64_MIN, &out), LT_ERR_OVERFLOW, "step");
  EXPECT(lt_view_slice(scalar, 0, D, D, 1, &out), LT_ERR_OUT_OF_RANGE, "rank-0");

  /* select */
  EXPECT(lt_view_select(t, 1, 4, &out), LT_ERR_OUT_OF_RANGE, "index 4");
  EXPECT(lt_view_select(t, 1, -5, &out), LT_ERR_OUT_OF_RANGE, "index -5");
  EXPECT(lt_view_select(t, -4, 0, &out), LT_ERR_OUT_OF_RANGE, "axis -4");
  EXPECT(lt_view_select(empty, 0, 0, &out), LT_ERR_OUT_OF_RANGE, "extent 0");
  EXPECT(lt_view_select(scalar, 0, 0, &out), LT_ERR_OUT_OF_RANGE, "rank-0");

  /* broadcast_to */
  int64_t bad_b[3] = {3, 2, 5}, low[2] = {4, 5}, negb[3] = {3, -4, 5};
  int64_t ovf[4] = {INT64_C(1) << 32, INT64_C(1) << 32, 4, 5}, r65[65];
  for (int i = 0; i < 65; i++)
    r65[i] = 1;
  EXPECT(lt_view_broadcast_to(t, 3, bad_b, &out), LT_ERR_SHAPE_MISMATCH, "extent 4");
  EXPECT(lt_view_broadcast_to(t, 2, low, &out), LT_ERR_SHAPE_MISMATCH, "rank 3 to rank 2");
  EXPECT(lt_view_broadcast_to(t, 3, negb, &out), LT_ERR_INVALID_ARGUMENT, "negative");
  EXPECT(lt_view_broadcast_to(scalar, 4, ovf, &out), LT_ERR_OVERFLOW,
         "lt_view_broadcast_to: shape overflows");
  EXPECT(lt_view_broadcast_to(t, 65, r65, &out), LT_ERR_SHAPE_MISMATCH, "rank 65");

  /* unsqueeze / squeeze / flip */
  EXPECT(lt_view_unsqueeze(t, 4, &out), LT_ERR_OUT_OF_RANGE, "axis 4");
  EXPECT(lt_view_unsqueeze(t, -5, &out), LT_ERR_OUT_OF_RANGE, "axis -5");
  EXPECT(lt_view_squeeze(t, 0, &out), LT_ERR_INVALID_ARGUMENT, "extent 3, not 1");
  EXPECT(lt_view_squeeze(t, 3, &out), LT_ERR_OUT_OF_RANGE, "axis 3");
  EXPECT(lt_view_squeeze(scalar, 0, &out), LT_ERR_OUT_OF_RANGE, "rank-0");
  EXPECT(lt_view_flip(t, 3, &out), LT_ERR_OUT_OF_RANGE, "lt_view_flip");
  EXPECT(lt_view_flip(scalar, 0, &out), LT_ERR_OUT_OF_RANGE, "rank-0");

  /* diagonal */
  EXPECT(lt_view_diagonal(t, 0, 1, 1, &out), LT_ERR_INVALID_ARGUMENT, "same axis");
  EXPECT(lt_view_diagonal(t, 0, 1, -2, &out), LT_ERR_INVALID_ARGUMENT, "same axis");
  EXPECT(lt_view_diagonal(t, 0, 0, 3, &out), LT_ERR_OUT_OF_RANGE, "axis 3");
  EXPECT(lt_view_diagonal(empty, INT64_MIN, 0, 1, &out), LT_ERR_OVERFLOW, "offset");
  int64_t one = 5;
  lt_tensor *vec = NULL;
  LT_CHECK(lt_tensor_zeros(ctx, LT_F32, 1, &one, &vec));
  EXPECT(lt_view_diagonal(vec, 0, 0, 1, &out), LT_ERR_OUT_OF_RANGE, "rank-1");

  /* as_strided (storage of 60 elements) */
  int64_t s2[2] = {3, 4}, st_ok[2] = {4, 1}, st_neg[2] = {-4, 1}, st_big[2] = {INT64_MAX, 1};
  int64_t s0[2] = {0, 4}, negs[2] = {-3, 4}, st_big2[2] = {1, INT64_MAX};
  EXPECT(lt_view_as_strided(t, 2, s2, st_ok, 49, &out), LT_ERR_OUT_OF_RANGE, "[49, 60]");
  EXPECT(lt_view_as_strided(t, 2, s2, st_neg, 7, &out), LT_ERR_OUT_OF_RANGE, "[-1, 10]");
  EXPECT(lt_view_as_strided(t, 2, s2, st_ok, -1, &out), LT_ERR_OUT_OF_RANGE, "holds [0, 60)");
  EXPECT(lt_view_as_strided(t, 2, s2, st_big, 0, &out), LT_ERR_OVERFLOW, "overflows");
  EXPECT(lt_view_as_strided(t, 2, s0, st_big2, 0, &out), LT_ERR_OVERFLOW, "overflows");
  EXPECT(lt_view_as_strided(t, 2, s0, st_ok, 61, &out), LT_ERR_OUT_OF_RANGE, "offset 61");
  EXPECT(lt_view_as_strided(t, 2, negs, st_ok, 0, &out), LT_ERR_INVALID_ARGUMENT, "negative");
  EXPECT(lt_view_as_strided(t, 65, r65, r65, 0, &out), LT_ERR_INVALID_ARGUMENT, "rank 65");
  EXPECT(lt_view_as_strided(t, 0, NULL, NULL, 60, &out), LT_ERR_OUT_OF_RANGE, "[60, 60]");
  /* The edges themselves are fine. */
  lt_tensor *v = NULL;
  LT_CHECK(lt_view_as_strided(t, 2, s2, st_ok, 48, &v));
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_as_strided(t, 2, s0, st_ok, 60, &v));
  lt_tensor_destroy(v);
  LT_CHECK(lt_view_as_strided(t, 0, NULL, NULL, capacity - 1, &v));
  lt_tensor_destroy(v);
  /* Huge strides on an empty layout are accepted only while their span fits in int64, and
   * then every view op on them stays free of overflow (UBSan checks this run). */
  int64_t ze[3] = {0, 2, 1}, zs[3] = {1, INT64_MAX / 2, INT64_MAX};
  LT_CHECK(lt_view_as_strided(t, 3, ze, zs, 0, &v));
  lt_tensor *w = NULL;
  LT_CHECK(lt_view_unsqueeze(v, 2, &w));
  lt_tensor_destroy(w);
  LT_CHECK(lt_view_diagonal(v, 0, 1, 2, &w));
  lt_tensor_destroy(w);
  LT_CHECK(lt_view_select(v, 1, 1, &w));
  lt_tensor_destroy(w);
  LT_CHECK(lt_view_flip(v, 1, &w));
  lt_tensor_destroy(w);
  LT_CHECK(lt_view_slice(v, 1, 0, 2, 1, &w));
  lt_tensor_destroy(w);
  lt_tensor_destroy(v);
  /* A stride of INT64_MIN has no negation: flipping or stepping that axis must still work,
   * since an empty tensor's strides are never used (the fuzzer reached this by slicing). */
  int64_t zm[2] = {0, 3}, zms[2] = {1, INT64_MIN / 2};
  LT_CHECK(lt_view_as_strided(t, 2, zm, zms, 0, &v));
  LT_CHECK(lt_view_slice(v, 1, 0, 3, 2, &w));
  lt_tensor *x = NULL;
  LT_CHECK(lt_view_flip(w, 1, &x));
  assert_int_equal(lt_tensor_shape(x)[1], 2);
  lt_tensor_destroy(x);
  LT_CHECK(lt_view_slice(w, 1, LT_SLICE_DEFAULT, LT_SLICE_DEFAULT, -3, &x));
  lt_tensor_destroy(x);
  lt_tensor_destroy(w);
  lt_tensor_destroy(v);

  lt_tensor *list[] = {t, tr, scalar, empty, vec};
  for (int i = 0; i < 5; i++)
    lt_tensor_destroy(list[i]);
  lt_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reshape),
      cmocka_unit_test(test_permute_transpose),
      cmocka_unit_test(test_slice),
      cmocka_unit_test(test_select_flip),
      cmocka_unit_test(test_broadcast_unsqueeze_squeeze),
      cmocka_unit_test(test_diagonal),
      cmocka_unit_test(test_as_strided),
      cmocka_unit_test(test_random_chains),
      cmocka_unit_test(test_view_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

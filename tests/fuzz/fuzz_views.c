/* SPDX-License-Identifier: MIT */
/* Fuzz target: random chains of view operations (and copies) with random arguments. A naive
 * model keeps, for every element of the current view, the index of the storage element it
 * names, materialised as an explicit array, so it shares no layout arithmetic with the library.
 * After each step the library's status must match what the documented rules predict, and every
 * element of a successful view must equal the model's. */
#include "fuzz_input.h"

#include <math.h>

#define MAX_ELEMS 4096
#define MAX_STEPS 40

typedef struct model {
  int rank;
  int64_t shape[LT_MAX_RANK];
  int64_t numel;
  int64_t ids[MAX_ELEMS]; /* storage element of each view element, C order */
} model;

typedef struct state {
  lt_context *ctx;
  lt_dtype dtype;
  lt_tensor *cur;   /* the view under test */
  model m;          /* the model of cur */
  int64_t capacity; /* elements in cur's storage */
  double *store;    /* expected value of every storage element */
} state;

static void unravel(int64_t linear, int rank, const int64_t *shape, int64_t *idx) {
  for (int d = rank - 1; d >= 0; d--) {
    idx[d] = linear % shape[d];
    linear /= shape[d];
  }
}

static int64_t ravel(int rank, const int64_t *shape, const int64_t *idx) {
  int64_t l = 0;
  for (int d = 0; d < rank; d++)
    l = l * shape[d] + idx[d];
  return l;
}

/* malloc count for n elements (at least one, so that malloc never sees 0). */
static size_t count_or_one(int64_t n) { return n > 0 ? (size_t)n : 1; }

/* Product of extents, or -1 when it exceeds MAX_ELEMS. */
static int64_t small_numel(int rank, const int64_t *shape) {
  int64_t n = 1;
  for (int d = 0; d < rank; d++)
    if (shape[d] == 0) return 0;
  for (int d = 0; d < rank; d++) {
    if (shape[d] > MAX_ELEMS) return -1;
    n *= shape[d];
    if (n > MAX_ELEMS) return -1;
  }
  return n;
}

/* A value every dtype holds exactly, distinct for small storages. */
static double value_for(lt_dtype dtype, int64_t i) {
  return dtype == LT_BF16 ? (double)(i % 200 + 1) : (double)(i + 1);
}

static double decode(lt_dtype dtype, const void *buf, int64_t i) {
  switch (dtype) {
  case LT_F16: return lt_f16_to_f32(((const uint16_t *)buf)[i]);
  case LT_BF16: return lt_bf16_to_f32(((const uint16_t *)buf)[i]);
  case LT_F32: return ((const float *)buf)[i];
  case LT_F64: return ((const double *)buf)[i];
  case LT_I64: return (double)((const int64_t *)buf)[i];
  default: abort();
  }
}

/* Compares the library's view with the model, element by element, through three paths. */
static void check_view(state *s, fuzz_input *in) {
  const lt_tensor *t = s->cur;
  const model *m = &s->m;
  FUZZ_ASSERT(lt_tensor_rank(t) == m->rank, "rank %d, model %d", lt_tensor_rank(t), m->rank);
  for (int d = 0; d < m->rank; d++)
    FUZZ_ASSERT(lt_tensor_shape(t)[d] == m->shape[d], "axis %d extent %lld, model %lld", d,
                (long long)lt_tensor_shape(t)[d], (long long)m->shape[d]);
  FUZZ_ASSERT(lt_tensor_numel(t) == m->numel, "numel %lld, model %lld",
              (long long)lt_tensor_numel(t), (long long)m->numel);
  if (lt_tensor_is_contiguous(t))
    for (int64_t i = 1; i < m->numel; i++)
      FUZZ_ASSERT(m->ids[i] == m->ids[0] + i, "claims contiguity, element %lld is not",
                  (long long)i);
  /* 1: a contiguous f64 copy. */
  lt_tensor *c = NULL;
  FUZZ_ASSERT(lt_tensor_contiguous(t, LT_F64, &c) == LT_OK, "contiguous copy failed");
  double *got = malloc(sizeof(double) * count_or_one(m->numel));
  FUZZ_ASSERT(lt_tensor_to_host(c, got, sizeof(double) * (size_t)m->numel) == LT_OK, "to_host");
  for (int64_t i = 0; i < m->numel; i++)
    FUZZ_ASSERT(got[i] == s->store[m->ids[i]], "element %lld is %g, model %g (storage %lld)",
                (long long)i, got[i], s->store[m->ids[i]], (long long)m->ids[i]);
  lt_tensor_destroy(c);
  /* 2: to_host in the tensor's own dtype. */
  unsigned char *raw = malloc(8 * count_or_one(m->numel));
  FUZZ_ASSERT(lt_tensor_to_host(t, raw, 8 * count_or_one(m->numel)) == LT_OK,
              "to_host in own dtype");
  for (int64_t i = 0; i < m->numel; i++)
    FUZZ_ASSERT(decode(s->dtype, raw, i) == s->store[m->ids[i]], "to_host element %lld",
                (long long)i);
  free(raw);
  free(got);
  /* 3: one element through lt_tensor_get, with negative indices where chosen. */
  if (m->numel > 0) {
    int64_t lin = fuzz_range(in, 0, m->numel - 1), idx[LT_MAX_RANK];
    unravel(lin, m->rank, m->shape, idx);
    for (int d = 0; d < m->rank; d++)
      if (fuzz_u8(in) & 1) idx[d] -= m->shape[d];
    double v = NAN;
    FUZZ_ASSERT(lt_tensor_get(t, idx, &v) == LT_OK, "get");
    FUZZ_ASSERT(v == s->store[m->ids[lin]], "get of element %lld: %g, model %g", (long long)lin, v,
                s->store[m->ids[lin]]);
  }
}

/* Replaces the current view with `next` (the status was OK) and the model with `nm`. */
static void adopt(state *s, lt_tensor *next, const model *nm) {
  FUZZ_ASSERT(next != NULL, "OK status but no tensor");
  FUZZ_ASSERT(lt_tensor_shares_storage(next, s->cur), "a view does not share storage");
  lt_tensor_destroy(s->cur);
  s->cur = next;
  if (nm != &s->m) s->m = *nm;
}

/* Checks the status against the expectation: `ok` true means the call must succeed; else it
 * must fail with one of the accepted statuses and leave *out NULL. */
static void expect(lt_status st, bool ok, lt_status bad1, lt_status bad2, lt_tensor *out,
                   const char *op) {
  if (ok) {
    FUZZ_ASSERT(st == LT_OK, "%s: expected success, got %s", op, lt_status_string(st));
    return;
  }
  FUZZ_ASSERT(st == bad1 || st == bad2, "%s: expected %s or %s, got %s", op, lt_status_string(bad1),
              lt_status_string(bad2), lt_status_string(st));
  FUZZ_ASSERT(out == NULL, "%s: failed but set *out", op);
  FUZZ_ASSERT(lt_last_error()[0] != '\0', "%s: failed without a message", op);
}

static bool axis_ok(int axis, int rank) { return axis >= -rank && axis < rank; }
static int norm_axis(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

static model *scratch(void) {
  static model nm;
  return &nm;
}

static void op_reshape(state *s, fuzz_input *in) {
  int rank = (int)fuzz_range(in, 0, 6);
  int64_t shape[LT_MAX_RANK] = {0};
  int64_t rest = s->m.numel;
  bool factor = fuzz_u8(in) % 4 != 0 && rest > 0;
  for (int d = 0; d < rank; d++) {
    if (factor && d < rank - 1) {
      int64_t e = fuzz_range(in, 1, 6);
      shape[d] = rest % e == 0 ? e : 1;
      rest /= shape[d];
    } else if (factor) {
      shape[d] = rest;
    } else {
      shape[d] = fuzz_range(in, -2, 5);
    }
  }
  if (factor && rank > 0 && fuzz_u8(in) % 3 == 0) shape[fuzz_range(in, 0, rank - 1)] = -1;
  /* Expected status by the documented rules. */
  int infer = -1, minus = 0;
  bool negative = false;
  int64_t known = 1;
  for (int d = 0; d < rank; d++) {
    if (shape[d] == -1) {
      minus++;
      infer = d;
    } else if (shape[d] < 0) {
      negative = true;
    } else {
      known *= shape[d];
    }
  }
  lt_tensor *out = NULL;
  lt_status st = lt_view_reshape(s->cur, rank, shape, &out);
  if (minus > 1 || negative) return expect(st, false, LT_ERR_INVALID_ARGUMENT, 0, out, "reshape");
  model *nm = scratch();
  *nm = s->m;
  nm->rank = rank;
  memcpy(nm->shape, shape, sizeof(int64_t) * (size_t)rank);
  if (infer >= 0) {
    if (known == 0 || s->m.numel % known != 0)
      return expect(st, false, LT_ERR_SHAPE_MISMATCH, 0, out, "reshape");
    nm->shape[infer] = s->m.numel / known;
    known = s->m.numel;
  }
  if (known != s->m.numel) return expect(st, false, LT_ERR_SHAPE_MISMATCH, 0, out, "reshape");
  /* Whether strides exist for the new shape is left to the library: both answers are honest,
   * and a wrong view is caught by the element check. */
  if (st == LT_ERR_NOT_VIEWABLE) return expect(st, false, LT_ERR_NOT_VIEWABLE, 0, out, "reshape");
  expect(st, true, 0, 0, out, "reshape");
  adopt(s, out, nm);
}

static void op_permute(state *s, fuzz_input *in) {
  int rank = s->m.rank, axes[LT_MAX_RANK] = {0};
  for (int d = 0; d < rank; d++)
    axes[d] = d;
  if (fuzz_u8(in) % 4 == 0) {
    for (int d = 0; d < rank; d++)
      axes[d] = (int)fuzz_range(in, -rank - 1, rank);
  } else {
    for (int d = rank - 1; d > 0; d--) {
      int j = (int)fuzz_range(in, 0, d), tmp = axes[d];
      axes[d] = axes[j];
      axes[j] = tmp;
    }
    for (int d = 0; d < rank; d++)
      if (fuzz_u8(in) & 1) axes[d] -= rank;
  }
  lt_status want = LT_OK;
  bool seen[LT_MAX_RANK] = {false};
  for (int d = 0; d < rank && want == LT_OK; d++) {
    if (!axis_ok(axes[d], rank))
      want = LT_ERR_OUT_OF_RANGE;
    else if (seen[norm_axis(axes[d], rank)])
      want = LT_ERR_INVALID_ARGUMENT;
    else
      seen[norm_axis(axes[d], rank)] = true;
  }
  lt_tensor *out = NULL;
  lt_status st = lt_view_permute(s->cur, axes, &out);
  if (want != LT_OK) return expect(st, false, want, want, out, "permute");
  expect(st, true, 0, 0, out, "permute");
  model *nm = scratch();
  nm->rank = rank;
  nm->numel = s->m.numel;
  for (int d = 0; d < rank; d++)
    nm->shape[d] = s->m.shape[norm_axis(axes[d], rank)];
  int64_t idx[LT_MAX_RANK], src[LT_MAX_RANK];
  for (int64_t i = 0; i < nm->numel; i++) {
    unravel(i, rank, nm->shape, idx);
    for (int d = 0; d < rank; d++)
      src[norm_axis(axes[d], rank)] = idx[d];
    nm->ids[i] = s->m.ids[ravel(rank, s->m.shape, src)];
  }
  adopt(s, out, nm);
}

static void op_transpose(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int a = (int)fuzz_range(in, -rank - 1, rank), b = (int)fuzz_range(in, -rank - 1, rank);
  lt_tensor *out = NULL;
  lt_status st = lt_view_transpose(s->cur, a, b, &out);
  if (!axis_ok(a, rank) || !axis_ok(b, rank))
    return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "transpose");
  expect(st, true, 0, 0, out, "transpose");
  a = norm_axis(a, rank);
  b = norm_axis(b, rank);
  model *nm = scratch();
  *nm = s->m;
  nm->shape[a] = s->m.shape[b];
  nm->shape[b] = s->m.shape[a];
  int64_t idx[LT_MAX_RANK];
  for (int64_t i = 0; i < nm->numel; i++) {
    unravel(i, rank, nm->shape, idx);
    int64_t t = idx[a];
    idx[a] = idx[b];
    idx[b] = t;
    nm->ids[i] = s->m.ids[ravel(rank, s->m.shape, idx)];
  }
  adopt(s, out, nm);
}

static void op_slice(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int axis = (int)fuzz_range(in, -rank - 1, rank);
  int64_t n = axis_ok(axis, rank) ? s->m.shape[norm_axis(axis, rank)] : 0;
  int64_t start = fuzz_u8(in) % 3 == 0 ? LT_SLICE_DEFAULT : fuzz_int(in, -2, n + 1);
  int64_t stop = fuzz_u8(in) % 3 == 0 ? LT_SLICE_DEFAULT : fuzz_int(in, -2, n + 1);
  int64_t step = fuzz_int(in, -4, 4);
  lt_tensor *out = NULL;
  lt_status st = lt_view_slice(s->cur, axis, start, stop, step, &out);
  if (!axis_ok(axis, rank)) return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "slice");
  if (step == 0) return expect(st, false, LT_ERR_INVALID_ARGUMENT, 0, out, "slice");
  if (step == INT64_MIN) return expect(st, false, LT_ERR_OVERFLOW, 0, out, "slice");
  axis = norm_axis(axis, rank);
  if (start == LT_SLICE_DEFAULT) start = step > 0 ? 0 : n - 1;
  if (stop == LT_SLICE_DEFAULT) stop = step > 0 ? n : -1;
  int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? n : n - 1;
  if (start < lo || start > hi || stop < lo || stop > hi)
    return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "slice");
  int64_t pos[MAX_ELEMS], count = 0;
  for (int64_t p = start; step > 0 ? p < stop : p > stop;) {
    pos[count++] = p;
    if (__builtin_add_overflow(p, step, &p)) break;
  }
  if (st == LT_ERR_OVERFLOW) {
    /* Refusing is honest only when the new stride really overflows int64. */
    int64_t product;
    FUZZ_ASSERT(__builtin_mul_overflow(lt_tensor_strides(s->cur)[axis], step, &product),
                "slice: OVERFLOW although stride * step %lld fits", (long long)step);
    return expect(st, false, LT_ERR_OVERFLOW, 0, out, "slice");
  }
  expect(st, true, 0, 0, out, "slice");
  model *nm = scratch();
  *nm = s->m;
  nm->shape[axis] = count;
  nm->numel = small_numel(rank, nm->shape);
  int64_t idx[LT_MAX_RANK];
  for (int64_t i = 0; i < nm->numel; i++) {
    unravel(i, rank, nm->shape, idx);
    idx[axis] = pos[idx[axis]];
    nm->ids[i] = s->m.ids[ravel(rank, s->m.shape, idx)];
  }
  adopt(s, out, nm);
}

static void op_select(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int axis = (int)fuzz_range(in, -rank - 1, rank);
  int64_t n = axis_ok(axis, rank) ? s->m.shape[norm_axis(axis, rank)] : 0;
  int64_t index = fuzz_int(in, -n - 1, n);
  lt_tensor *out = NULL;
  lt_status st = lt_view_select(s->cur, axis, index, &out);
  if (!axis_ok(axis, rank) || index < -n || index >= n)
    return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "select");
  expect(st, true, 0, 0, out, "select");
  axis = norm_axis(axis, rank);
  int64_t k = index < 0 ? index + n : index;
  model *nm = scratch();
  nm->rank = rank - 1;
  for (int d = 0, r = 0; d < rank; d++)
    if (d != axis) nm->shape[r++] = s->m.shape[d];
  nm->numel = small_numel(nm->rank, nm->shape);
  int64_t idx[LT_MAX_RANK], src[LT_MAX_RANK];
  for (int64_t i = 0; i < nm->numel; i++) {
    unravel(i, nm->rank, nm->shape, idx);
    for (int d = 0, r = 0; d < rank; d++)
      src[d] = d == axis ? k : idx[r++];
    nm->ids[i] = s->m.ids[ravel(rank, s->m.shape, src)];
  }
  adopt(s, out, nm);
}

static void op_broadcast(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int nrank = rank + (int)fuzz_range(in, -1, 2);
  if (nrank < 0 || nrank > LT_MAX_RANK) nrank = rank;
  int lead = nrank - rank;
  int64_t shape[LT_MAX_RANK] = {0};
  bool compatible = nrank >= rank;
  for (int d = 0; d < nrank; d++) {
    int64_t e = d >= lead && d - lead < rank ? s->m.shape[d - lead] : 1;
    if (e == 1 || fuzz_u8(in) % 8 == 0)
      shape[d] = fuzz_range(in, 0, 4);
    else
      shape[d] = e;
    if (d >= lead && shape[d] != e && e != 1) compatible = false;
  }
  /* Like NumPy, a shape is refused when its nonzero extents need more than 2^63 bytes, even
   * when another extent is 0 (high ranks of extent 4 reach that). */
  __int128 bytes = (__int128)lt_dtype_size(s->dtype);
  for (int d = 0; d < nrank; d++)
    if (shape[d] > 0 && bytes <= INT64_MAX) bytes *= shape[d];
  lt_tensor *out = NULL;
  lt_status st = lt_view_broadcast_to(s->cur, nrank, shape, &out);
  /* A shape both incompatible and too big may be refused for either reason. */
  if (!compatible)
    return expect(st, false, LT_ERR_SHAPE_MISMATCH,
                  bytes > INT64_MAX ? LT_ERR_OVERFLOW : LT_ERR_SHAPE_MISMATCH, out, "broadcast_to");
  if (bytes > INT64_MAX) return expect(st, false, LT_ERR_OVERFLOW, 0, out, "broadcast_to");
  expect(st, true, 0, 0, out, "broadcast_to");
  model *nm = scratch();
  nm->rank = nrank;
  memcpy(nm->shape, shape, sizeof(int64_t) * (size_t)nrank);
  nm->numel = small_numel(nrank, shape);
  if (nm->numel < 0) { /* too big to model: keep the old view */
    lt_tensor_destroy(out);
    return;
  }
  int64_t idx[LT_MAX_RANK], src[LT_MAX_RANK];
  for (int64_t i = 0; i < nm->numel; i++) {
    unravel(i, nrank, shape, idx);
    for (int d = 0; d < rank; d++)
      src[d] = s->m.shape[d] == 1 ? 0 : idx[d + lead];
    nm->ids[i] = s->m.ids[ravel(rank, s->m.shape, src)];
  }
  adopt(s, out, nm);
}

static void op_unsqueeze(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int axis = (int)fuzz_range(in, -rank - 2, rank + 1);
  lt_tensor *out = NULL;
  lt_status st = lt_view_unsqueeze(s->cur, axis, &out);
  if (rank >= LT_MAX_RANK)
    return expect(st, false, LT_ERR_INVALID_ARGUMENT, LT_ERR_OUT_OF_RANGE, out, "unsqueeze");
  if (!axis_ok(axis, rank + 1)) return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "unsqueeze");
  expect(st, true, 0, 0, out, "unsqueeze");
  axis = norm_axis(axis, rank + 1);
  model *nm = scratch();
  *nm = s->m;
  nm->rank = rank + 1;
  for (int d = 0, r = 0; d <= rank; d++)
    nm->shape[d] = d == axis ? 1 : s->m.shape[r++];
  adopt(s, out, nm); /* same elements in the same order */
}

static void op_squeeze(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int axis = fuzz_u8(in) % 3 == 0 ? LT_ALL_AXES : (int)fuzz_range(in, -rank - 1, rank);
  lt_tensor *out = NULL;
  lt_status st = lt_view_squeeze(s->cur, axis, &out);
  if (axis != LT_ALL_AXES) {
    if (!axis_ok(axis, rank)) return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "squeeze");
    if (s->m.shape[norm_axis(axis, rank)] != 1)
      return expect(st, false, LT_ERR_INVALID_ARGUMENT, 0, out, "squeeze");
  }
  expect(st, true, 0, 0, out, "squeeze");
  model *nm = scratch();
  *nm = s->m;
  nm->rank = 0;
  for (int d = 0; d < rank; d++) {
    bool drop = axis == LT_ALL_AXES ? s->m.shape[d] == 1 : d == norm_axis(axis, rank);
    if (!drop) nm->shape[nm->rank++] = s->m.shape[d];
  }
  adopt(s, out, nm);
}

static void op_flip(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int axis = (int)fuzz_range(in, -rank - 1, rank);
  lt_tensor *out = NULL;
  lt_status st = lt_view_flip(s->cur, axis, &out);
  if (!axis_ok(axis, rank)) return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "flip");
  expect(st, true, 0, 0, out, "flip");
  axis = norm_axis(axis, rank);
  model *nm = scratch();
  *nm = s->m;
  int64_t idx[LT_MAX_RANK];
  for (int64_t i = 0; i < nm->numel; i++) {
    unravel(i, rank, nm->shape, idx);
    idx[axis] = nm->shape[axis] - 1 - idx[axis];
    nm->ids[i] = s->m.ids[ravel(rank, s->m.shape, idx)];
  }
  adopt(s, out, nm);
}

static void op_diagonal(state *s, fuzz_input *in) {
  int rank = s->m.rank;
  int a = (int)fuzz_range(in, -rank - 1, rank), b = (int)fuzz_range(in, -rank - 1, rank);
  int64_t offset = fuzz_int(in, -4, 4);
  lt_tensor *out = NULL;
  lt_status st = lt_view_diagonal(s->cur, offset, a, b, &out);
  if (!axis_ok(a, rank) || !axis_ok(b, rank))
    return expect(st, false, LT_ERR_OUT_OF_RANGE, 0, out, "diagonal");
  a = norm_axis(a, rank);
  b = norm_axis(b, rank);
  if (a == b) return expect(st, false, LT_ERR_INVALID_ARGUMENT, 0, out, "diagonal");
  if (offset == INT64_MIN) return expect(st, false, LT_ERR_OVERFLOW, 0, out, "diagonal");
  expect(st, true, 0, 0, out, "diagonal");
  int64_t n1 = s->m.shape[a], n2 = s->m.shape[b], len;
  int64_t skip1 = offset < 0 ? -offset : 0, skip2 = offset > 0 ? offset : 0;
  if (skip1 >= n1 || skip2 >= n2)
    len = 0;
  else
    len = n1 - skip1 < n2 - skip2 ? n1 - skip1 : n2 - skip2;
  model *nm = scratch();
  nm->rank = rank - 1;
  for (int d = 0, r = 0; d < rank; d++)
    if (d != a && d != b) nm->shape[r++] = s->m.shape[d];
  nm->shape[rank - 2] = len;
  nm->numel = small_numel(nm->rank, nm->shape);
  int64_t idx[LT_MAX_RANK], src[LT_MAX_RANK];
  for (int64_t i = 0; i < nm->numel; i++) {
    unravel(i, nm->rank, nm->shape, idx);
    for (int d = 0, r = 0; d < rank; d++)
      if (d != a && d != b) src[d] = idx[r++];
    src[a] = idx[rank - 2] + skip1;
    src[b] = idx[rank - 2] + skip2;
    nm->ids[i] = s->m.ids[ravel(rank, s->m.shape, src)];
  }
  adopt(s, out, nm);
}

static void op_as_strided(state *s, fuzz_input *in) {
  int rank = (int)fuzz_range(in, 0, 4);
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    shape[d] = fuzz_range(in, 0, 4);
    strides[d] = fuzz_int(in, -8, 8);
  }
  int64_t offset = fuzz_int(in, 0, s->capacity);
  int64_t numel = small_numel(rank, shape);
  /* Reach of the layout in exact (128-bit) arithmetic. Every layout's span must fit in 64 bits,
   * an empty one's too (axes of extent 0 aside), so later offset arithmetic cannot overflow. */
  __int128 lo = offset, hi = offset;
  for (int d = 0; d < rank; d++) {
    if (shape[d] == 0) continue;
    __int128 span = (__int128)(shape[d] - 1) * strides[d];
    if (span < 0)
      lo += span;
    else
      hi += span;
  }
  bool fits = lo >= INT64_MIN && hi <= INT64_MAX;
  bool inside =
      fits && (numel > 0 ? lo >= 0 && hi < s->capacity : offset >= 0 && offset <= s->capacity);
  lt_tensor *out = NULL;
  lt_status st = lt_view_as_strided(s->cur, rank, shape, strides, offset, &out);
  if (!inside) return expect(st, false, LT_ERR_OUT_OF_RANGE, LT_ERR_OVERFLOW, out, "as_strided");
  expect(st, true, 0, 0, out, "as_strided");
  model *nm = scratch();
  nm->rank = rank;
  memcpy(nm->shape, shape, sizeof(int64_t) * (size_t)rank);
  nm->numel = numel;
  int64_t idx[LT_MAX_RANK];
  for (int64_t i = 0; i < numel; i++) {
    unravel(i, rank, shape, idx);
    int64_t id = offset;
    for (int d = 0; d < rank; d++)
      id += idx[d] * strides[d];
    nm->ids[i] = id;
  }
  adopt(s, out, nm);
}

/* Writes into the current view: from a fresh tensor, or from a flipped view of itself (the
 * overlapping case that must behave as if through a temporary). */
static void op_copy_into(state *s, fuzz_input *in) {
  const model *m = &s->m;
  bool dup = false;
  unsigned char *seen = calloc((size_t)s->capacity + 1, 1);
  for (int64_t i = 0; i < m->numel && !dup; i++) {
    dup = seen[m->ids[i]];
    seen[m->ids[i]] = 1;
  }
  free(seen);
  double want[MAX_ELEMS];
  lt_tensor *src = NULL;
  if (m->rank > 0 && fuzz_u8(in) & 1) {
    int axis = (int)fuzz_range(in, 0, m->rank - 1);
    FUZZ_ASSERT(lt_view_flip(s->cur, axis, &src) == LT_OK, "flip for copy_into");
    int64_t idx[LT_MAX_RANK];
    for (int64_t i = 0; i < m->numel; i++) {
      unravel(i, m->rank, m->shape, idx);
      idx[axis] = m->shape[axis] - 1 - idx[axis];
      want[i] = s->store[m->ids[ravel(m->rank, m->shape, idx)]];
    }
  } else {
    /* Broadcast from the trailing axes, as the documentation promises. */
    int srank = m->rank > 0 ? (int)fuzz_range(in, 0, m->rank) : 0;
    int lead = m->rank - srank;
    int64_t sshape[LT_MAX_RANK] = {0};
    for (int d = 0; d < srank; d++)
      sshape[d] = fuzz_u8(in) % 4 == 0 ? 1 : m->shape[lead + d];
    int64_t sn = small_numel(srank, sshape);
    if (sn < 0) { /* dst is empty through an axis the source lacks: keep the source small */
      for (int d = 0; d < srank; d++)
        sshape[d] = 1;
      sn = 1;
    }
    double vals[MAX_ELEMS];
    for (int64_t i = 0; i < sn; i++)
      vals[i] = (double)fuzz_range(in, 1, 200);
    FUZZ_ASSERT(lt_tensor_from_host(s->ctx, LT_F64, srank, sshape, NULL, vals, &src) == LT_OK,
                "source tensor");
    int64_t idx[LT_MAX_RANK], sidx[LT_MAX_RANK];
    for (int64_t i = 0; i < m->numel; i++) {
      unravel(i, m->rank, m->shape, idx);
      for (int d = 0; d < srank; d++)
        sidx[d] = sshape[d] == 1 ? 0 : idx[lead + d];
      want[i] = vals[ravel(srank, sshape, sidx)];
    }
  }
  lt_status st = lt_tensor_copy_into(s->cur, src);
  lt_tensor_destroy(src);
  if (dup) return expect(st, false, LT_ERR_ALIASING, 0, NULL, "copy_into");
  /* A non-overlapping but exotic layout may be refused conservatively (documented status). */
  if (st == LT_ERR_ALIASING) return;
  expect(st, true, 0, 0, NULL, "copy_into");
  for (int64_t i = 0; i < m->numel; i++)
    s->store[m->ids[i]] = want[i];
}

/* Continues on a contiguous copy (possibly in another dtype): a new storage. */
static void op_contiguous(state *s, fuzz_input *in) {
  static const lt_dtype dtypes[] = {LT_DTYPE_INVALID, LT_F64, LT_F32, LT_I64};
  lt_dtype dtype = dtypes[fuzz_u8(in) % 4];
  if (s->dtype == LT_F16 || s->dtype == LT_BF16) dtype = LT_DTYPE_INVALID;
  lt_tensor *out = NULL;
  FUZZ_ASSERT(lt_tensor_contiguous(s->cur, dtype, &out) == LT_OK, "contiguous");
  FUZZ_ASSERT(lt_tensor_is_contiguous(out), "a contiguous copy is not contiguous");
  double *store = malloc(sizeof(double) * count_or_one(s->m.numel));
  for (int64_t i = 0; i < s->m.numel; i++) {
    store[i] = s->store[s->m.ids[i]];
    s->m.ids[i] = i;
  }
  free(s->store);
  s->store = store;
  s->capacity = s->m.numel;
  if (dtype != LT_DTYPE_INVALID) s->dtype = dtype;
  lt_tensor_destroy(s->cur);
  s->cur = out;
}

typedef void (*view_op)(state *s, fuzz_input *in);
static const view_op ops[] = {op_reshape,    op_permute,   op_transpose, op_slice, op_select,
                              op_broadcast,  op_unsqueeze, op_squeeze,   op_flip,  op_diagonal,
                              op_as_strided, op_copy_into, op_contiguous};

static lt_tensor *make_base(state *s, fuzz_input *in) {
  static const lt_dtype dtypes[] = {LT_F64, LT_F32, LT_I64, LT_F16, LT_BF16};
  s->dtype = dtypes[fuzz_u8(in) % 5];
  s->m.rank = (int)fuzz_range(in, 0, 4);
  for (int d = 0; d < s->m.rank; d++)
    s->m.shape[d] = fuzz_range(in, 0, 6);
  s->m.numel = small_numel(s->m.rank, s->m.shape);
  s->capacity = s->m.numel;
  s->store = malloc(sizeof(double) * count_or_one(s->m.numel));
  for (int64_t i = 0; i < s->m.numel; i++) {
    s->m.ids[i] = i;
    s->store[i] = value_for(s->dtype, i);
  }
  lt_tensor *f64 = NULL, *base = NULL;
  FUZZ_ASSERT(lt_tensor_from_host(s->ctx, LT_F64, s->m.rank, s->m.shape, NULL, s->store, &f64) ==
                  LT_OK,
              "base");
  FUZZ_ASSERT(lt_tensor_contiguous(f64, s->dtype, &base) == LT_OK, "base conversion");
  lt_tensor_destroy(f64);
  return base;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static lt_context *ctx;
  if (ctx == NULL && lt_context_create(NULL, &ctx) != LT_OK) abort();
  fuzz_input in = {data, size, 0};
  state *s = calloc(1, sizeof *s);
  s->ctx = ctx;
  s->cur = make_base(s, &in);
  check_view(s, &in);
  for (int step = 0; step < MAX_STEPS && !fuzz_done(&in); step++) {
    lt_clear_error();
    ops[fuzz_u8(&in) % (sizeof ops / sizeof ops[0])](s, &in);
    check_view(s, &in);
  }
  lt_tensor_destroy(s->cur);
  free(s->store);
  free(s);
  return 0;
}

/* SPDX-License-Identifier: MIT */
/* DLPack: exports read back through the DLTensor alone (independently of the library) for every
 * layout family and dtype; imports of hand-built producer tensors (zero-copy or copied, versioned
 * and legacy), deleter counts and lifetimes in either order, the read-only flag, and every kind
 * of bad input with its status, on every backend. */
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static const lt_dtype dl_dtypes[] = {LT_F16, LT_BF16, LT_F32, LT_F64, LT_I64};
static const uint8_t dl_codes[] = {kDLFloat, kDLBfloat, kDLFloat, kDLFloat, kDLInt};

/* Reads element `i` of a DLTensor's buffer as double, from the DLPack description only. */
static double dl_load(const DLTensor *dl, const int64_t *index) {
  int64_t off = 0, stride = 1;
  for (int i = dl->ndim - 1; i >= 0; i--) {
    int64_t s = dl->strides ? dl->strides[i] : stride;
    off += index[i] * s;
    stride *= dl->shape[i];
  }
  const char *p = (const char *)dl->data + dl->byte_offset + off * (dl->dtype.bits / 8);
  uint16_t h;
  float f;
  double d;
  int64_t v;
  switch (dl->dtype.bits) {
  case 16:
    memcpy(&h, p, 2);
    return dl->dtype.code == kDLBfloat ? lt_bf16_to_f32(h) : lt_f16_to_f32(h);
  case 32: memcpy(&f, p, 4); return f;
  default:
    if (dl->dtype.code == kDLInt) {
      memcpy(&v, p, 8);
      return (double)v;
    }
    memcpy(&d, p, 8);
    return d;
  }
}

static void check_dl_equals(const DLTensor *dl, const double *want) {
  int64_t n = lt_test_numel(dl->ndim, dl->shape), index[LT_MAX_RANK];
  for (int64_t i = 0; i < n; i++) {
    lt_test_unravel(i, dl->ndim, dl->shape, index);
    double got = dl_load(dl, index);
    if (got != want[i]) fail_msg("element %lld: %g != %g", (long long)i, got, want[i]);
  }
}

static void test_export_layouts(void **state) {
  (void)state;
  static const int64_t shapes[][3] = {{3, 4, 5}, {1, 6, 2}, {4, 0, 3}};
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  for (size_t d = 0; d < sizeof dl_dtypes / sizeof dl_dtypes[0]; d++)
    for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++)
      for (int s = 0; s < 3; s++) {
        lt_tensor *t = lt_test_random_tensor(ctx, dl_dtypes[d], 3, shapes[s], layout);
        double *want = lt_test_read_all(t);
        DLManagedTensorVersioned *m;
        LT_CHECK(lt_tensor_to_dlpack(t, 0, &m));
        lt_tensor_destroy(t); /* the export keeps the storage alive */
        assert_int_equal(m->version.major, 1);
        assert_int_equal(m->flags, 0);
        assert_int_equal(m->dl_tensor.device.device_type, kDLCPU);
        assert_int_equal(m->dl_tensor.dtype.code, dl_codes[d]);
        assert_int_equal(m->dl_tensor.dtype.bits, 8 * lt_dtype_size(dl_dtypes[d]));
        assert_int_equal(m->dl_tensor.dtype.lanes, 1);
        assert_int_equal(m->dl_tensor.ndim, 3);
        for (int i = 0; i < 3; i++)
          assert_int_equal(m->dl_tensor.shape[i], shapes[s][i]);
        check_dl_equals(&m->dl_tensor, want);
        m->deleter(m);
        free(want);
      }
  lt_context_destroy(ctx);
}

static void test_export_flags_and_legacy(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shape[2] = {4, 3};
  lt_tensor *t = lt_test_random_tensor(ctx, LT_F64, 2, shape, LT_LAYOUT_TRANSPOSED);
  double *want = lt_test_read_all(t);
  DLManagedTensorVersioned *m;
  LT_CHECK(lt_tensor_to_dlpack(t, LT_DLPACK_READ_ONLY, &m));
  assert_int_equal(m->flags, DLPACK_FLAG_BITMASK_READ_ONLY);
  void *p;
  LT_CHECK(lt_tensor_host_pointer(t, &p));
  assert_ptr_equal(m->dl_tensor.data, p); /* shared */
  m->deleter(m);
  LT_CHECK(lt_tensor_to_dlpack(t, LT_DLPACK_COPY, &m));
  assert_int_equal(m->flags, DLPACK_FLAG_BITMASK_IS_COPIED);
  assert_ptr_not_equal(m->dl_tensor.data, p);
  assert_int_equal(m->dl_tensor.strides[0], 3); /* a fresh C-contiguous copy */
  check_dl_equals(&m->dl_tensor, want);
  m->deleter(m);
  DLManagedTensor *l;
  LT_CHECK(lt_tensor_to_dlpack_legacy(t, 0, &l));
  lt_tensor_destroy(t);
  check_dl_equals(&l->dl_tensor, want);
  l->deleter(l);
  LT_CHECK(lt_tensor_empty(ctx, LT_F32, 0, NULL, &t));
  LT_CHECK(lt_tensor_to_dlpack(t, 0, &m));
  assert_int_equal(m->dl_tensor.ndim, 0);
  m->deleter(m);
  LT_CHECK_FAILS(lt_tensor_to_dlpack_legacy(t, LT_DLPACK_READ_ONLY, &l), LT_ERR_INVALID_ARGUMENT);
  assert_null(l);
  LT_CHECK_FAILS(lt_tensor_to_dlpack(t, 64, &m), LT_ERR_INVALID_ARGUMENT);
  assert_null(m);
  LT_CHECK_FAILS(lt_tensor_to_dlpack(NULL, 0, &m), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_tensor_to_dlpack(t, 0, NULL), LT_ERR_NULL_POINTER);
  lt_tensor_destroy(t);
  lt_context_destroy(ctx);
  free(want);
}

/* ---- a producer written by hand: data + shape + strides in one block, deleter counted ---- */

typedef struct producer {
  DLManagedTensorVersioned v;
  DLManagedTensor legacy;
  int64_t shape[3];
  int64_t strides[3];
  double data[64];
  int deleted;
} producer;

static void producer_delete(DLManagedTensorVersioned *self) {
  ((producer *)self->manager_ctx)->deleted++;
}
static void producer_delete_legacy(DLManagedTensor *self) {
  ((producer *)self->manager_ctx)->deleted++;
}

/* A 3x4 f64 tensor over data[] read transposed-with-steps: element (i, j) at 8 + 2*i - 11*j...
 * expressed with one negative stride and a byte offset, value 100*i + j. */
static void producer_init(producer *p) {
  memset(p, 0, sizeof *p);
  for (int k = 0; k < 64; k++)
    p->data[k] = -1;
  p->shape[0] = 3;
  p->shape[1] = 4;
  p->strides[0] = 2;
  p->strides[1] = -12;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      p->data[40 + 2 * i - 12 * j] = 100 * i + j;
  DLTensor dl = {p->data,    {kDLCPU, 0},        2, {kDLFloat, 64, 1}, p->shape,
                 p->strides, 40 * sizeof(double)};
  p->v.version.major = 1;
  p->v.version.minor = 0;
  p->v.manager_ctx = p;
  p->v.deleter = producer_delete;
  p->v.dl_tensor = dl;
  p->legacy.manager_ctx = p;
  p->legacy.deleter = producer_delete_legacy;
  p->legacy.dl_tensor = dl;
}

static void check_producer_values(const lt_tensor *t) {
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 4; j++) {
      double v;
      int64_t idx[2] = {i, j};
      LT_CHECK(lt_tensor_get(t, idx, &v));
      assert_true(v == (double)(100 * i + j));
    }
}

static void test_import_zero_copy(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  producer *p = malloc(sizeof *p);
  for (int legacy = 0; legacy < 2; legacy++) {
    producer_init(p);
    lt_tensor *t, *view;
    if (legacy)
      LT_CHECK(lt_tensor_from_dlpack_legacy(ctx, &p->legacy, 0, &t));
    else
      LT_CHECK(lt_tensor_from_dlpack(ctx, &p->v, 0, &t));
    check_producer_values(t);
    int64_t idx[2] = {2, 3};
    LT_CHECK(lt_tensor_set(t, idx, 7.5)); /* zero-copy: lands in the producer's memory */
    assert_true(p->data[40 + 4 - 36] == 7.5);
    LT_CHECK(lt_view_transpose(t, 0, 1, &view));
    lt_tensor_destroy(t);
    assert_int_equal(p->deleted, 0); /* the view still uses it */
    lt_tensor_destroy(view);
    assert_int_equal(p->deleted, 1);
  }
  free(p);
  lt_context_destroy(ctx);
}

static void test_import_read_only_and_copy(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  producer *p = malloc(sizeof *p);
  for (int mode = 0; mode < 2; mode++) {
    producer_init(p);
    if (mode == 0) p->v.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    lt_tensor *t;
    LT_CHECK(lt_tensor_from_dlpack(ctx, &p->v, mode == 0 ? 0 : LT_DLPACK_COPY, &t));
    assert_int_equal(p->deleted, 1); /* copied: the producer is released at once */
    check_producer_values(t);
    int64_t idx[2] = {2, 3};
    LT_CHECK(lt_tensor_set(t, idx, 7.5));
    assert_true(p->data[40 + 4 - 36] == 203); /* never written */
    lt_tensor_destroy(t);
    assert_int_equal(p->deleted, 1);
  }
  free(p);
  lt_context_destroy(ctx);
}

static void test_roundtrip(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  int64_t shape[3] = {2, 3, 4};
  for (int layout = 0; layout < LT_LAYOUT_COUNT; layout++) {
    lt_tensor *t = lt_test_random_tensor(ctx, LT_F32, 3, shape, layout), *back;
    double *want = lt_test_read_all(t);
    DLManagedTensorVersioned *m;
    LT_CHECK(lt_tensor_to_dlpack(t, 0, &m));
    LT_CHECK(lt_tensor_from_dlpack(ctx, m, 0, &back));
    void *p0, *p1;
    LT_CHECK(lt_tensor_host_pointer(t, &p0));
    LT_CHECK(lt_tensor_host_pointer(back, &p1));
    assert_ptr_equal(p0, p1);
    lt_tensor_destroy(t);
    double *got = lt_test_read_all(back);
    lt_test_assert_close(got, want, 24, 0, "dlpack round trip");
    lt_tensor_destroy(back); /* runs the export's deleter: ASan/valgrind see any leak */
    free(got);
    free(want);
  }
  lt_context_destroy(ctx);
}

static void test_import_errors(void **state) {
  (void)state;
  lt_context *ctx;
  LT_CHECK(lt_context_create("cpu", &ctx));
  producer *p = malloc(sizeof *p);
  lt_tensor *t = NULL;
  producer_init(p);
  p->v.version.major = 2;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_UNSUPPORTED);
  producer_init(p);
  p->v.dl_tensor.dtype.lanes = 4;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_DTYPE);
  producer_init(p);
  p->v.dl_tensor.dtype.code = kDLComplex;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_DTYPE);
  producer_init(p);
  p->v.dl_tensor.dtype.bits = 24;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_DTYPE);
  producer_init(p);
  p->v.dl_tensor.device.device_type = kDLCUDA;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_UNSUPPORTED);
  producer_init(p);
  p->v.dl_tensor.shape = NULL;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_NULL_POINTER);
  producer_init(p);
  p->v.dl_tensor.ndim = -1;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_INVALID_ARGUMENT);
  producer_init(p);
  p->v.dl_tensor.byte_offset = 3; /* misaligned doubles */
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_INVALID_ARGUMENT);
  /* an offset that wraps the address around to 8 bytes below data: the copy read them */
  for (uint32_t flags = 0; flags <= LT_DLPACK_COPY; flags++) {
    producer_init(p);
    p->v.dl_tensor.byte_offset = UINT64_MAX - 7;
    LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, flags, &t), LT_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(lt_last_error(), "byte_offset 18446744073709551608 wraps around"));
  }
  producer_init(p);
  int64_t neg_shape[2] = {-2, 3};
  p->v.dl_tensor.shape = neg_shape;
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &t), LT_ERR_INVALID_ARGUMENT);
  assert_non_null(strstr(lt_last_error(), "lt_tensor_from_dlpack: extent -2 of axis 0"));
  producer_init(p);
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 8, &t), LT_ERR_INVALID_ARGUMENT);
  LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, NULL, 0, &t), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_tensor_from_dlpack(NULL, &p->v, 0, &t), LT_ERR_NULL_POINTER);
  LT_CHECK_FAILS(lt_tensor_from_dlpack_legacy(ctx, NULL, 0, &t), LT_ERR_NULL_POINTER);
  assert_null(t);
  assert_int_equal(p->deleted, 0); /* a failed import never releases the producer */
  free(p);
  lt_context_destroy(ctx);
}

/* Every backend: host memory imports onto it only as a copy, and its tensors export only as
 * host copies, unless it addresses host memory itself. */
static void on_device(lt_context *ctx) {
  bool host = true;
  void *ptr;
  int64_t shape[2] = {3, 4};
  lt_tensor *t = lt_test_random_tensor(ctx, LT_F32, 2, shape, LT_LAYOUT_STEPPED), *back;
  if (lt_tensor_host_pointer(t, &ptr) != LT_OK) host = false;
  double *want = lt_test_read_all(t);
  DLManagedTensorVersioned *m;
  if (!host) LT_CHECK_FAILS(lt_tensor_to_dlpack(t, 0, &m), LT_ERR_UNSUPPORTED);
  LT_CHECK(lt_tensor_to_dlpack(t, LT_DLPACK_COPY, &m));
  check_dl_equals(&m->dl_tensor, want);
  lt_tensor_destroy(t);
  producer *p = malloc(sizeof *p);
  producer_init(p);
  if (!host) {
    LT_CHECK_FAILS(lt_tensor_from_dlpack(ctx, &p->v, 0, &back), LT_ERR_UNSUPPORTED);
    assert_int_equal(p->deleted, 0);
  }
  LT_CHECK(lt_tensor_from_dlpack(ctx, &p->v, LT_DLPACK_COPY, &back));
  assert_int_equal(p->deleted, 1);
  check_producer_values(back);
  lt_tensor_destroy(back);
  LT_CHECK(lt_tensor_from_dlpack(ctx, m, LT_DLPACK_COPY, &back));
  double *got = lt_test_read_all(back);
  lt_test_assert_close(got, want, 12, 0, "dlpack copy round trip");
  lt_tensor_destroy(back);
  free(got);
  free(p);
  free(want);
}

static void test_every_device(void **state) {
  (void)state;
  lt_test_on_each_device(on_device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_export_layouts),   cmocka_unit_test(test_export_flags_and_legacy),
      cmocka_unit_test(test_import_zero_copy), cmocka_unit_test(test_import_read_only_and_copy),
      cmocka_unit_test(test_roundtrip),        cmocka_unit_test(test_import_errors),
      cmocka_unit_test(test_every_device),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}

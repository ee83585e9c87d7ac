/* SPDX-License-Identifier: MIT */
/* libtensor._fast: reading a NumPy array's layout without NumPy's headers.
 *
 * The ndarray object's leading fields (PyArrayObject_fields: data, nd, dimensions, strides,
 * base, descr, flags) and the descriptor's leading fields (typeobj, kind, type, byteorder, one
 * byte, type_num) are the same in NumPy 1.x and 2.x: every compiled extension reads them
 * through NumPy's inline accessors. Reading them directly costs a few loads where the buffer
 * protocol costs a Py_buffer fill; bind() checks the reading on a probe array first and falls
 * back to the buffer protocol if anything differs, so a future layout change costs speed, never
 * correctness. */
#include "fast.h"

#include <string.h>

typedef struct {
  PyObject_HEAD char *data;
  int nd;
  Py_intptr_t *dimensions, *strides;
  PyObject *base, *descr;
  int flags;
} np_array_head;

typedef struct {
  PyObject_HEAD PyTypeObject *typeobj;
  char kind, type, byteorder, former_flags;
  int type_num;
} np_descr_head;

enum { NPY_ALIGNED_FLAG = 0x100, NPY_WRITEABLE_FLAG = 0x400 };

static int direct_ok; /* set by lt__fast_numpy_probe */

/* The library dtype and element size of NumPy type number `num` (NPY_BOOL..NPY_HALF). */
static int dtype_of_type_num(int num, int *size) {
  static const struct {
    int num, size;
    lt_dtype dtype;
  } table[] = {{0, 1, LT_BOOL}, {1, 1, LT_I8},   {2, 1, LT_U8},   {3, 2, LT_I16}, {4, 2, LT_U16},
               {5, 4, LT_I32},  {6, 4, LT_U32},  {7, 8, LT_I64},  {8, 8, LT_U64}, {9, 8, LT_I64},
               {10, 8, LT_U64}, {11, 4, LT_F32}, {12, 8, LT_F64}, {23, 2, LT_F16}};
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (table[i].num == num) {
      *size = table[i].size;
      return (int)table[i].dtype;
    }
  return -1;
}

static int read_direct(PyObject *arr, int writable, lt_fast_array_view *v) {
  const np_array_head *a = (const np_array_head *)arr;
  const np_descr_head *d = (const np_descr_head *)a->descr;
  if (d == NULL || d->byteorder == '>' || !(a->flags & NPY_ALIGNED_FLAG) ||
      (writable && !(a->flags & NPY_WRITEABLE_FLAG)) || a->nd > LT_MAX_RANK)
    return LT_FAST_SKIP;
  v->dtype = dtype_of_type_num(d->type_num, &v->itemsize);
  if (v->dtype < 0) return LT_FAST_SKIP;
  v->data = a->data;
  v->ndim = a->nd;
  for (int i = 0; i < a->nd; i++) {
    v->shape[i] = a->dimensions[i];
    v->strides[i] = a->strides[i];
  }
  return LT_FAST_ARRAY;
}

/* The layout through the buffer protocol (what NumPy promises to every consumer). */
static int dtype_of_format(const char *fmt, Py_ssize_t itemsize) {
  if (fmt == NULL) return -1;
  if (*fmt == '@' || *fmt == '=' || *fmt == '<')
    fmt++; /* x86 and every platform the library targets are little-endian */
  if (fmt[0] == '\0' || fmt[1] != '\0') return -1;
  static const char *const kinds[] = {"?", "bhilq", "BHILQ", "efd"};
  static const lt_dtype by_size[4][9] = {
      [0] = {[1] = LT_BOOL},
      [1] = {[1] = LT_I8, [2] = LT_I16, [4] = LT_I32, [8] = LT_I64},
      [2] = {[1] = LT_U8, [2] = LT_U16, [4] = LT_U32, [8] = LT_U64},
      [3] = {[2] = LT_F16, [4] = LT_F32, [8] = LT_F64}};
  for (int k = 0; k < 4; k++)
    if (strchr(kinds[k], fmt[0]) && itemsize > 0 && itemsize <= 8 && by_size[k][itemsize])
      return (int)by_size[k][itemsize];
  return -1;
}

static int read_buffer(PyObject *arr, int writable, lt_fast_array_view *v) {
  Py_buffer b;
  if (PyObject_GetBuffer(arr, &b, writable ? PyBUF_RECORDS : PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear(); /* read-only for out=, or no buffer: the general path says why */
    return LT_FAST_SKIP;
  }
  int kind = LT_FAST_SKIP;
  v->dtype = dtype_of_format(b.format, b.itemsize);
  if (v->dtype >= 0 && b.ndim <= LT_MAX_RANK) {
    v->itemsize = (int)b.itemsize;
    v->data = b.buf;
    v->ndim = b.ndim;
    for (int i = 0; i < b.ndim; i++) {
      v->shape[i] = b.shape[i];
      v->strides[i] = b.strides[i];
    }
    kind = LT_FAST_ARRAY;
  }
  /* The caller's reference keeps the memory: NumPy never frees or resizes a referenced
   * array's data. */
  PyBuffer_Release(&b);
  return kind;
}

int lt__fast_numpy_view(PyObject *arr, int writable, lt_fast_array_view *v) {
  return direct_ok ? read_direct(arr, writable, v) : read_buffer(arr, writable, v);
}

int lt__fast_numpy_probe(PyObject *probe) {
  lt_fast_array_view direct, buffer;
  direct_ok = 0;
  if (read_buffer(probe, 1, &buffer) != LT_FAST_ARRAY) return 0;
  int same = read_direct(probe, 1, &direct) == LT_FAST_ARRAY && direct.dtype == buffer.dtype &&
             direct.itemsize == buffer.itemsize && direct.data == buffer.data &&
             direct.ndim == buffer.ndim && direct.ndim > 0;
  for (int i = 0; same && i < direct.ndim; i++)
    same = direct.shape[i] == buffer.shape[i] && direct.strides[i] == buffer.strides[i];
  direct_ok = same;
  return same;
}

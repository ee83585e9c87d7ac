/* SPDX-License-Identifier: MIT */
/* libtensor._fast: NumPy arrays as zero-copy tensors, and a small cache of them.
 *
 * Small operands passed again and again (a training loop's weights and batches) are wrapped
 * once: a slot keeps the tensor, which keeps a reference to its array (so the array's address
 * cannot be reused by another object while cached), and is taken only for the same array with
 * the same data pointer, dtype, shape and strides, read afresh on every call. The tensor reads
 * the array's memory, so it always sees the current values. Only small arrays, few of them: the
 * cache never holds much memory alive (clear_wraps() drops it). */
#include "fast.h"

#include <string.h>

#define LT_FAST_WRAP_SLOTS 64
#define LT_FAST_WRAP_MAX_BYTES 65536

/* Arrays the library holds through this module (libtensor.held_count() adds them). */
static Py_ssize_t live_arrays;

/* The library drops a wrapped array: its reference goes, under the GIL whoever holds it. */
static void release_array(void *data, void *user) {
  (void)data;
  if (!Py_IsInitialized()) return; /* interpreter shutdown: nothing left to release into */
  PyGILState_STATE g = PyGILState_Ensure();
  live_arrays--;
  Py_DECREF((PyObject *)user);
  PyGILState_Release(g);
}

Py_ssize_t lt__fast_live_arrays(void) { return live_arrays; }

/* The view as the library's element strides; 0 when a stride is no whole element or the data
 * is misaligned (the general path copies those). */
static int element_layout(const lt_fast_array_view *v, int64_t *shape, int64_t *strides) {
  if ((uintptr_t)v->data % (uintptr_t)v->itemsize) return 0;
  for (int i = 0; i < v->ndim; i++) {
    if (v->strides[i] % v->itemsize) return 0;
    shape[i] = v->shape[i];
    strides[i] = v->strides[i] / v->itemsize;
  }
  return 1;
}

static int wrap_view(PyObject *arr, const lt_fast_array_view *v, lt_tensor **out) {
  int64_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
  if (!element_layout(v, shape, strides)) return LT_FAST_SKIP;
  Py_INCREF(arr); /* the release callback's: it keeps the memory while the library uses it */
  lt_status st = lt__fast.lt_tensor_wrap_host(lt__fast_state.cpu, (lt_dtype)v->dtype, v->ndim,
                                              shape, strides, v->data, release_array, arr, out);
  if (st != LT_OK) {
    Py_DECREF(arr); /* on failure the library never calls release */
    lt__fast_raise(st);
    return -1;
  }
  live_arrays++;
  return LT_FAST_ARRAY;
}

int lt__fast_wrap_array(PyObject *arr, int writable, lt_tensor **out) {
  lt_fast_array_view v;
  if (Py_TYPE(arr) != (PyTypeObject *)lt__fast_state.ndarray_type ||
      lt__fast_numpy_view(arr, writable, &v) != LT_FAST_ARRAY)
    return LT_FAST_SKIP;
  return wrap_view(arr, &v, out);
}

typedef struct wrap_slot {
  PyObject *arr; /* borrowed: the tensor's release callback holds the reference */
  lt_tensor *t;
  /* Calls using it now: it is never evicted while one is (any Python code a call runs, a
   * deallocation or a collection, may let another thread in). */
  int busy;
  lt_fast_array_view v;
} wrap_slot;

static wrap_slot slots[LT_FAST_WRAP_SLOTS];

void lt__fast_wrap_done(int owned) {
  if (owned >= LT_FAST_OWNED_CACHED) slots[owned - LT_FAST_OWNED_CACHED].busy--;
}

static int same_view(const lt_fast_array_view *a, const lt_fast_array_view *b) {
  size_t row = sizeof(Py_ssize_t) * (size_t)a->ndim;
  return a->data == b->data && a->dtype == b->dtype && a->ndim == b->ndim &&
         !memcmp(a->shape, b->shape, row) && !memcmp(a->strides, b->strides, row);
}

static void slot_clear(wrap_slot *s) {
  lt_tensor *t = s->t;
  s->t = NULL, s->arr = NULL;
  if (t) lt__fast.lt_tensor_destroy(t); /* may run Python code (the array's deallocation) */
}

int lt__fast_wrap_cached(PyObject *arr, int writable, lt_tensor **out, int *owned) {
  lt_fast_array_view v;
  *owned = LT_FAST_OWNED_NONE;
  if (Py_TYPE(arr) != (PyTypeObject *)lt__fast_state.ndarray_type ||
      lt__fast_numpy_view(arr, writable, &v) != LT_FAST_ARRAY)
    return LT_FAST_SKIP;
  int64_t numel = 1;
  for (int i = 0; i < v.ndim; i++)
    numel *= v.shape[i];
  int index = (int)(((uintptr_t)arr >> 4) % LT_FAST_WRAP_SLOTS);
  wrap_slot *s = &slots[index];
  int cacheable = numel * v.itemsize <= LT_FAST_WRAP_MAX_BYTES && numel < LT_FAST_GIL_ELEMENTS;
  if (cacheable && s->t != NULL && s->arr == arr && same_view(&s->v, &v)) {
    s->busy++;
    *out = s->t;
    *owned = LT_FAST_OWNED_CACHED + index;
    return LT_FAST_ARRAY;
  }
  if (!cacheable || s->busy > 0) { /* too big to hold on to, or the slot is in use */
    int kind = wrap_view(arr, &v, out);
    *owned = kind == LT_FAST_ARRAY ? LT_FAST_OWNED_DESTROY : LT_FAST_OWNED_NONE;
    return kind;
  }
  s->busy++; /* nobody takes the slot while the old tensor goes and the new one comes */
  slot_clear(s);
  int kind = wrap_view(arr, &v, out);
  if (kind == LT_FAST_ARRAY) {
    s->arr = arr, s->t = *out, s->v = v;
    *owned = LT_FAST_OWNED_CACHED + index;
  } else {
    s->busy--;
  }
  return kind;
}

void lt__fast_clear_wraps(void) {
  for (int i = 0; i < LT_FAST_WRAP_SLOTS; i++)
    if (slots[i].busy == 0) slot_clear(&slots[i]);
}

/* wrap(array): (handle, readonly) of a new tensor over a NumPy array on the CPU context (the
 * caller owns the handle), for lt.tensor / from_numpy; NotImplemented for what the general
 * path must do (another default device, a dtype or layout the library cannot wrap). */
PyObject *lt__fast_wrap(PyObject *self, PyObject *arr) {
  (void)self;
  lt_fast_array_view v;
  if (!lt__fast_bound || !lt__fast_default_is_cpu() ||
      Py_TYPE(arr) != (PyTypeObject *)lt__fast_state.ndarray_type)
    Py_RETURN_NOTIMPLEMENTED;
  int readonly = 0;
  if (lt__fast_numpy_view(arr, 1, &v) != LT_FAST_ARRAY) {
    readonly = 1;
    if (lt__fast_numpy_view(arr, 0, &v) != LT_FAST_ARRAY) Py_RETURN_NOTIMPLEMENTED;
  }
  lt_tensor *t = NULL;
  int kind = wrap_view(arr, &v, &t);
  if (kind < 0) return NULL;
  if (kind == LT_FAST_SKIP) Py_RETURN_NOTIMPLEMENTED;
  PyObject *h = PyLong_FromVoidPtr(t);
  PyObject *r = h ? PyTuple_Pack(2, h, readonly ? Py_True : Py_False) : NULL;
  Py_XDECREF(h);
  if (r == NULL) lt__fast.lt_tensor_destroy(t);
  return r;
}

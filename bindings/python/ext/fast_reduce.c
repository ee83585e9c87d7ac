/* SPDX-License-Identifier: MIT */
/* libtensor._fast: reductions over all axes or one axis (ops._reduce's common calls). */
#include "fast.h"

/* reduce(op, a, axis, keepdims): lt_reduce of a NumPy array or Tensor over every axis (axis
 * None) or one (an int), recorded (lt_ad_reduce) when a is a tracked Tensor and its tape
 * records. NotImplemented for what the Python path decides: axis tuples, an axis out of range,
 * a min or max over nothing (NumPy's error), operands it does not wrap. */
PyObject *lt__fast_reduce(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 4) {
    PyErr_SetString(PyExc_TypeError, "reduce(op, a, axis, keepdims)");
    return NULL;
  }
  long op = PyLong_AsLong(args[0]);
  int keepdims = PyObject_IsTrue(args[3]);
  if ((op == -1 && PyErr_Occurred()) || keepdims < 0) return NULL;
  PyObject *a = args[1];
  int is_tensor = Py_TYPE(a) == (PyTypeObject *)lt__fast_state.tensor_type;
  if (!lt__fast_bound || op < LT_REDUCE_SUM || op > LT_REDUCE_MAXABS ||
      (!is_tensor && Py_TYPE(a) != (PyTypeObject *)lt__fast_state.ndarray_type) ||
      (args[2] != Py_None && !PyLong_CheckExact(args[2])))
    Py_RETURN_NOTIMPLEMENTED;
  lt_context *ctx = is_tensor                   ? lt__fast_tensor_context(a)
                    : lt__fast_default_is_cpu() ? lt__fast_state.cpu
                                                : NULL;
  lt_tensor *t = NULL;
  int owned = LT_FAST_OWNED_NONE;
  int kind = ctx ? lt__fast_operand(a, ctx, LT_FAST_CACHED | LT_FAST_RECORDABLE, &t, &owned) : 0;
  if (kind <= 0) {
    if (kind < 0) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  int rank = lt__fast.lt_tensor_rank(t), axis = -1, n_axes = -1;
  const int64_t *shape = lt__fast.lt_tensor_shape(t);
  if (args[2] != Py_None) {
    long ax = PyLong_AsLong(args[2]);
    if (ax == -1 && PyErr_Occurred()) PyErr_Clear(), ax = rank; /* huge: the general path */
    if (ax < -rank || ax >= rank) {
      lt__fast_release(t, owned);
      Py_RETURN_NOTIMPLEMENTED;
    }
    axis = (int)(ax < 0 ? ax + rank : ax), n_axes = 1;
  }
  if (op == LT_REDUCE_MIN || op == LT_REDUCE_MAX) { /* over nothing, into something: refused */
    int empty_reduced = 0, empty_kept = 0;
    for (int d = 0; d < rank; d++) {
      int reduced = n_axes < 0 || d == axis;
      if (shape[d] == 0) *(reduced ? &empty_reduced : &empty_kept) = 1;
    }
    if (empty_reduced && !empty_kept) {
      lt__fast_release(t, owned);
      Py_RETURN_NOTIMPLEMENTED;
    }
  }
  lt_tape *tape = lt__fast_recording_tape(ctx, &t, &owned, 1);
  lt_tensor *r = NULL;
  lt_status st;
  PyThreadState *unlocked =
      lt__fast.lt_tensor_numel(t) >= LT_FAST_GIL_ELEMENTS && owned < LT_FAST_OWNED_CACHED
          ? PyEval_SaveThread()
          : NULL;
  if (tape != NULL)
    st = lt__fast.lt_ad_reduce(tape, (lt_reduce_op)op, t, n_axes, &axis, keepdims, &r);
  else
    st = lt__fast.lt_reduce((lt_reduce_op)op, t, n_axes, &axis, keepdims, &r);
  if (unlocked) PyEval_RestoreThread(unlocked);
  lt__fast_release(t, owned);
  if (st != LT_OK) return lt__fast_raise(st);
  return kind == LT_FAST_TENSOR ? PyLong_FromVoidPtr(r) : lt__fast_to_numpy(r);
}

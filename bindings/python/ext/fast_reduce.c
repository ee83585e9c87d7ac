/* SPDX-License-Identifier: MIT */
/* libtensor._fast: reductions and the softmax family over all axes or one (the common calls
 * of ops._reduce and stats.softmax / log_softmax / logsumexp). */
#include "fast.h"

/* What one call computes: a reduction op, or a row op of the softmax family. */
typedef enum { ROW_SOFTMAX, ROW_LOG_SOFTMAX, ROW_LOGSUMEXP, ROW_KINDS } row_kind;

typedef struct axis_call {
  int is_row; /* a row_kind in `op`, else an lt_reduce_op */
  long op;
  int n_axes, axis, keepdims;
} axis_call;

static lt_status run_call(lt_tape *tape, const axis_call *c, const lt_tensor *t, lt_tensor **r) {
  const int *ax = &c->axis;
  if (!c->is_row)
    return tape ? lt__fast.lt_ad_reduce(tape, (lt_reduce_op)c->op, t, c->n_axes, ax, c->keepdims, r)
                : lt__fast.lt_reduce((lt_reduce_op)c->op, t, c->n_axes, ax, c->keepdims, r);
  switch ((row_kind)c->op) {
  case ROW_SOFTMAX:
    return tape ? lt__fast.lt_ad_softmax(tape, t, c->n_axes, ax, r)
                : lt__fast.lt_softmax(t, c->n_axes, ax, r);
  case ROW_LOG_SOFTMAX:
    return tape ? lt__fast.lt_ad_log_softmax(tape, t, c->n_axes, ax, r)
                : lt__fast.lt_log_softmax(t, c->n_axes, ax, r);
  default:
    return tape ? lt__fast.lt_ad_logsumexp(tape, t, c->n_axes, ax, c->keepdims, r)
                : lt__fast.lt_logsumexp(t, c->n_axes, ax, c->keepdims, r);
  }
}

/* (op, a, axis, keepdims): the call over every axis of a NumPy array or Tensor (axis None) or
 * one (an int), recorded (lt_ad_*) when a is a tracked Tensor and its tape records.
 * NotImplemented for what the Python path decides: axis tuples, an axis out of range, a min or
 * max over nothing (NumPy's error), operands it does not wrap. */
static PyObject *axis_entry(PyObject *const *args, Py_ssize_t n, int is_row) {
  if (n != 4) {
    PyErr_SetString(PyExc_TypeError, "(op, a, axis, keepdims)");
    return NULL;
  }
  axis_call c = {.is_row = is_row, .op = PyLong_AsLong(args[0]), .n_axes = -1, .axis = -1};
  c.keepdims = PyObject_IsTrue(args[3]);
  if ((c.op == -1 && PyErr_Occurred()) || c.keepdims < 0) return NULL;
  PyObject *a = args[1];
  int is_tensor = Py_TYPE(a) == (PyTypeObject *)lt__fast_state.tensor_type;
  int op_ok =
      is_row ? c.op >= 0 && c.op < ROW_KINDS : c.op >= LT_REDUCE_SUM && c.op <= LT_REDUCE_MAXABS;
  if (!lt__fast_bound || !op_ok ||
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
  int rank = lt__fast.lt_tensor_rank(t);
  const int64_t *shape = lt__fast.lt_tensor_shape(t);
  int refuse = 0;
  if (args[2] != Py_None) {
    long ax = PyLong_AsLong(args[2]);
    if (ax == -1 && PyErr_Occurred()) PyErr_Clear(), ax = rank; /* huge: the general path */
    refuse = ax < -rank || ax >= rank;
    c.axis = (int)(ax < 0 ? ax + rank : ax), c.n_axes = 1;
  }
  if (!is_row && (c.op == LT_REDUCE_MIN || c.op == LT_REDUCE_MAX)) {
    int empty_reduced = 0, empty_kept = 0; /* over nothing, into something: NumPy refuses */
    for (int d = 0; d < rank; d++)
      if (shape[d] == 0) *(c.n_axes < 0 || d == c.axis ? &empty_reduced : &empty_kept) = 1;
    refuse |= empty_reduced && !empty_kept;
  }
  if (refuse) {
    lt__fast_release(t, owned);
    Py_RETURN_NOTIMPLEMENTED;
  }
  lt_tape *tape = lt__fast_recording_tape(ctx, &t, &owned, 1);
  lt_tensor *r = NULL;
  /* A recorded call keeps the GIL, the shared tape's lock (fast_calls.c: record). */
  PyThreadState *unlocked = tape == NULL && lt__fast.lt_tensor_numel(t) >= LT_FAST_GIL_ELEMENTS &&
                                    owned < LT_FAST_OWNED_CACHED
                                ? PyEval_SaveThread()
                                : NULL;
  lt_status st = run_call(tape, &c, t, &r);
  if (unlocked) PyEval_RestoreThread(unlocked);
  lt__fast_release(t, owned);
  if (st != LT_OK) return lt__fast_raise(st);
  return kind == LT_FAST_TENSOR ? PyLong_FromVoidPtr(r) : lt__fast_to_numpy(r);
}

PyObject *lt__fast_reduce(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  return axis_entry(args, n, 0);
}

PyObject *lt__fast_rows(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  return axis_entry(args, n, 1);
}

/* SPDX-License-Identifier: MIT */
/* libtensor._fast: the contexts that have a gradient tape, and the recording decision.
 *
 * Autograd (libtensor/autograd.py) registers each tape it makes here, so that operations on
 * Tensors of such a context still take the C paths: they call the library's lt_ad_* calls when
 * an operand is tracked and recording is on, and the plain calls otherwise (the choice
 * autograd._ad_new makes in Python, at ~10-25 us a call through ctypes). */
#include "fast.h"

#include <stdlib.h>

typedef struct tape_entry {
  lt_context *ctx;
  lt_tape *tape;
} tape_entry;

static tape_entry *entries;
static Py_ssize_t n_entries, cap_entries;
static int recording = 1;
/* watch_tapes(None): autograd is absent or not trusted; Tensor operands never take the C
 * paths while some tape may exist. */
static int tapes_unknown;

int lt__fast_tapes_unknown(void) { return tapes_unknown; }

int lt__fast_any_tape(void) { return n_entries > 0; }

lt_tape *lt__fast_tape_of(const lt_context *ctx) {
  for (Py_ssize_t i = 0; i < n_entries; i++)
    if (entries[i].ctx == ctx) return entries[i].tape;
  return NULL;
}

lt_tape *lt__fast_recording_tape(const lt_context *ctx, lt_tensor *const *t, const int *owned,
                                 int n) {
  lt_tape *tape = recording ? lt__fast_tape_of(ctx) : NULL;
  for (int i = 0; tape != NULL && i < n; i++) {
    bool tracked = false;
    /* Only Tensors (owned == 0) can be tracked: NumPy operands are fresh wrappers. */
    if (owned[i] == LT_FAST_OWNED_NONE &&
        lt__fast.lt_tape_is_tracked(tape, t[i], &tracked) == LT_OK && tracked)
      return tape;
  }
  return NULL;
}

PyObject *lt__fast_set_tape(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "set_tape(context, tape or None)");
    return NULL;
  }
  lt_context *ctx = lt__fast_handle(args[0]);
  if (ctx == NULL) return NULL;
  lt_tape *tape = args[1] == Py_None ? NULL : lt__fast_handle(args[1]);
  if (tape == NULL && PyErr_Occurred()) return NULL;
  for (Py_ssize_t i = 0; i < n_entries; i++)
    if (entries[i].ctx == ctx) {
      if (tape != NULL)
        entries[i].tape = tape;
      else
        entries[i] = entries[--n_entries];
      Py_RETURN_NONE;
    }
  if (tape == NULL) Py_RETURN_NONE;
  if (n_entries == cap_entries) {
    Py_ssize_t cap = cap_entries ? 2 * cap_entries : 4;
    tape_entry *grown = realloc(entries, (size_t)cap * sizeof *grown);
    if (grown == NULL) return PyErr_NoMemory();
    entries = grown, cap_entries = cap;
  }
  entries[n_entries++] = (tape_entry){ctx, tape};
  Py_RETURN_NONE;
}

PyObject *lt__fast_set_recording(PyObject *self, PyObject *flag) {
  (void)self;
  int on = PyObject_IsTrue(flag);
  if (on < 0) return NULL;
  recording = on;
  Py_RETURN_NONE;
}

PyObject *lt__fast_watch_tapes(PyObject *self, PyObject *tapes) {
  (void)self;
  tapes_unknown = tapes == Py_None;
  Py_RETURN_NONE;
}

void lt__fast_forget_tapes(void) {
  free(entries);
  entries = NULL;
  n_entries = cap_entries = 0;
}

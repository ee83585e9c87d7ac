/* SPDX-License-Identifier: MIT */
/* The destructor of the DLPack capsules the package exports (dlpack.py). A consumer that fails
 * (NumPy refusing bf16, say) drops the capsule while its exception is pending; a destructor
 * written in Python through ctypes cannot run then (its first C-API call raises the pending
 * error, which ctypes prints and clears): the export leaked and the caller got SystemError.
 * This one keeps the pending exception for the consumer, as the DLPack reference code does. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "fast.h"

#include "tensor/dlpack.h"
#include <stdint.h>

static void capsule_destructor(PyObject *capsule) {
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  /* a consumed capsule was renamed "used_dltensor(_versioned)": the consumer owns it */
  if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
    DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
    if (m && m->deleter) m->deleter(m);
  } else if (PyCapsule_IsValid(capsule, "dltensor")) {
    DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (m && m->deleter) m->deleter(m);
  }
  PyErr_Restore(type, value, traceback);
}

PyObject *lt__fast_capsule_destructor(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)&capsule_destructor);
}

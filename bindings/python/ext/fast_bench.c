/* SPDX-License-Identifier: MIT */
/* libtensor._fast: the library's own per-execute floor, for bench_python_calls.py. */
#include "fast.h"

#include <time.h>

/* time_plan(plan, handles: tuple, out, n, cpu): seconds per lt_plan_execute of `plan` over
 * tensor handles, run n times in a C loop: the library's own floor, for bench_python_calls.py
 * (cpu: the process's CPU time, else the monotonic clock, as bench_timing.CLOCK). */
PyObject *lt__fast_time_plan(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 5 || !PyTuple_Check(args[1]) || PyTuple_GET_SIZE(args[1]) > LT_FAST_MAX_OPERANDS) {
    PyErr_SetString(PyExc_TypeError, "time_plan(plan, handles: tuple, out, n, cpu)");
    return NULL;
  }
  lt_tensor *in[LT_FAST_MAX_OPERANDS];
  int n_in = (int)PyTuple_GET_SIZE(args[1]);
  for (int i = 0; i < n_in; i++)
    if ((in[i] = lt__fast_handle(PyTuple_GET_ITEM(args[1], i))) == NULL) return NULL;
  lt_plan *plan = lt__fast_handle(args[0]);
  lt_tensor *d = plan ? lt__fast_handle(args[2]) : NULL;
  long reps = d ? PyLong_AsLong(args[3]) : -1;
  if (reps < 1 || !lt__fast_bound) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "time_plan: n >= 1, after bind()");
    return NULL;
  }
  clockid_t clock = PyObject_IsTrue(args[4]) ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
  struct timespec t0, t1;
  lt_status st = LT_OK;
  clock_gettime(clock, &t0);
  for (long r = 0; r < reps && st == LT_OK; r++)
    st = lt__fast.lt_plan_execute(plan, (const lt_tensor *const *)in, n_in, NULL, 0, d);
  clock_gettime(clock, &t1);
  if (st != LT_OK) return lt__fast_raise(st);
  double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  return PyFloat_FromDouble(seconds / (double)reps);
}

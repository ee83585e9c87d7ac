/* SPDX-License-Identifier: MIT */
/* libtensor._fast: the Python binding's hot paths in C (issue 20).
 *
 * The module never links libtensor: the package hands it the addresses of the functions of
 * the library that ctypes loaded (bind()), so both paths always talk to one library instance
 * (two copies would each have their own contexts and handles). Only the public C API is used.
 * Every entry point returns NotImplemented for whatever it does not cover, and the Python
 * code then takes its general path: the fast path never decides semantics on its own. */
#ifndef LT_PY_FAST_H
#define LT_PY_FAST_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <tensor.h>

/* The library functions the module calls, resolved by bind(). */
#define LT_FAST_FUNCS(X)                                                                           \
  X(lt_binary)                                                                                     \
  X(lt_unary)                                                                                      \
  X(lt_tensor_wrap_host)                                                                           \
  X(lt_tensor_destroy)                                                                             \
  X(lt_tensor_host_pointer)                                                                        \
  X(lt_tensor_rank)                                                                                \
  X(lt_tensor_shape)                                                                               \
  X(lt_tensor_strides)                                                                             \
  X(lt_tensor_dtype)                                                                               \
  X(lt_tensor_numel)                                                                               \
  X(lt_dtype_size)                                                                                 \
  X(lt_tensor_copy_into)                                                                           \
  X(lt_plan_binary)                                                                                \
  X(lt_plan_permutation)                                                                           \
  X(lt_plan_options_create)                                                                        \
  X(lt_plan_options_set_unary)                                                                     \
  X(lt_plan_options_destroy)                                                                       \
  X(lt_plan_einsum)                                                                                \
  X(lt_plan_execute)                                                                               \
  X(lt_plan_create_output)                                                                         \
  X(lt_plan_destroy)                                                                               \
  X(lt_tensor_context)                                                                             \
  X(lt_tensor_contiguous)                                                                          \
  X(lt_tape_is_tracked)                                                                            \
  X(lt_tape_forget)                                                                                \
  X(lt_ad_binary)                                                                                  \
  X(lt_ad_unary)                                                                                   \
  X(lt_ad_einsum)                                                                                  \
  X(lt_reduce)                                                                                     \
  X(lt_ad_reduce)                                                                                  \
  X(lt_softmax)                                                                                    \
  X(lt_log_softmax)                                                                                \
  X(lt_logsumexp)                                                                                  \
  X(lt_ad_softmax)                                                                                 \
  X(lt_ad_log_softmax)                                                                             \
  X(lt_ad_logsumexp)

typedef struct lt_fast_api {
#define LT_FAST_MEMBER(name) __typeof__(name) *name;
  LT_FAST_FUNCS(LT_FAST_MEMBER)
#undef LT_FAST_MEMBER
} lt_fast_api;

/* Filled by bind(); `bound` is 0 until then (every entry point then answers NotImplemented). */
extern lt_fast_api lt__fast;
extern int lt__fast_bound;

/* What bind() received besides the functions. */
typedef struct lt_fast_state {
  lt_context *cpu;        /* the package's shared CPU context */
  PyObject *check;        /* errors.check(status): raises the binding's exception for a status */
  PyObject *tensor_type;  /* libtensor.Tensor (exact type only: subclasses take the general path) */
  PyObject *asarray;      /* numpy.asarray */
  PyObject *empty;        /* numpy.empty */
  PyObject *ndarray_type; /* numpy.ndarray */
  PyObject *plans;        /* einsum plan cache: key bytes -> capsule(lt_plan) */
  PyObject *dtypes;       /* numpy.dtype per lt_dtype code (None where NumPy has none) */
} lt_fast_state;
extern lt_fast_state lt__fast_state;

/* Operands of one einsum or plan call at most (more: the general path). */
#define LT_FAST_MAX_OPERANDS 32

#define LT_FAST_N_DTYPES 14 /* lt_dtype codes 0..LT_BOOL */

/* Above this many elements a call releases the GIL while the library works: below, taking
 * and giving it back would cost more than the call. */
#define LT_FAST_GIL_ELEMENTS 32768

/* A NumPy array's layout as the library takes it: byte strides, a library dtype. */
typedef struct lt_fast_array_view {
  void *data;
  int ndim, itemsize, dtype;
  Py_ssize_t shape[LT_MAX_RANK], strides[LT_MAX_RANK];
} lt_fast_array_view;

/* The layout of exact ndarray `arr` (fast_numpy.c), native byte order and aligned, writable if
 * asked: LT_FAST_ARRAY, or LT_FAST_SKIP (no exception) when it does not qualify. */
int lt__fast_numpy_view(PyObject *arr, int writable, lt_fast_array_view *v);
/* Checks the direct reading of NumPy's fields against the buffer protocol on a writable, 2-D
 * strided `probe`; 1 when they agree (the fast reading is then used), else 0. */
int lt__fast_numpy_probe(PyObject *probe);

/* Operand kinds of lt__fast_operand. */
enum { LT_FAST_SKIP = 0, LT_FAST_ARRAY = 1, LT_FAST_TENSOR = 2 };

/* A zero-copy tensor over a NumPy array (exact ndarray, native byte order, a library dtype,
 * aligned whole-element strides) on the CPU context; `writable` asks for a writable array.
 * Returns LT_FAST_ARRAY with *out set, LT_FAST_SKIP when the array does not qualify, -1 with
 * a Python exception set. The tensor holds a reference to the array until its release. */
int lt__fast_wrap_array(PyObject *arr, int writable, lt_tensor **out);
/* What a caller does with an operand's tensor when done: nothing (a Tensor's handle),
 * destroy it (a fresh wrapper), or hand it back to the wrap cache (slot index added). */
enum { LT_FAST_OWNED_NONE = 0, LT_FAST_OWNED_DESTROY = 1, LT_FAST_OWNED_CACHED = 2 };
/* The same through the cache of small operands (fast_wraps.c); *owned as above. */
int lt__fast_wrap_cached(PyObject *arr, int writable, lt_tensor **out, int *owned);
/* Hands a cached tensor back (any other `owned` value: nothing). */
void lt__fast_wrap_done(int owned);
/* Arrays the library holds through this module now (cached or not). */
Py_ssize_t lt__fast_live_arrays(void);
/* Empties the cache of small operands (dropping the references it holds). */
void lt__fast_clear_wraps(void);
/* Done with an operand's tensor, as `owned` says. */
void lt__fast_release(lt_tensor *t, int owned);

/* Flags of lt__fast_operand. */
enum { LT_FAST_WRITABLE = 1, LT_FAST_CACHED = 2, LT_FAST_RECORDABLE = 4 };
/* An operand as a tensor: an exact ndarray (wrapped; through the cache with LT_FAST_CACHED) or
 * an exact Tensor of context `ctx` (its handle, *owned = 0; LT_FAST_WRITABLE asks for a Tensor
 * that is not read-only, and a writable array). A Tensor of a context with a gradient tape
 * qualifies only with LT_FAST_RECORDABLE (the caller then records through
 * lt__fast_recording_tape). Returns the kind, LT_FAST_SKIP, or -1 with an exception set.
 * *owned: the caller destroys *out. */
int lt__fast_operand(PyObject *v, lt_context *ctx, int flags, lt_tensor **out, int *owned);
/* The context handle of an exact Tensor `v`, or NULL (no exception) when it has none. */
lt_context *lt__fast_tensor_context(PyObject *v);
/* The library's failure `st` as the binding's exception (through errors.check); returns NULL. */
PyObject *lt__fast_raise(lt_status st);
/* A NumPy array over the result tensor `t` (ownership moves to the array; a 0-d result comes
 * back as a NumPy scalar, as the general path returns it). NULL with an exception set. */
PyObject *lt__fast_to_numpy(lt_tensor *t);
/* A NumPy result of rank `rank` as the general path returns it (a 0-d one as a NumPy scalar);
 * consumes `arr`. */
PyObject *lt__fast_numpy_result(PyObject *arr, int rank);
/* Nonzero when the default device ($LT_DEVICE) is the CPU, the only one NumPy data is
 * wrapped on. */
int lt__fast_default_is_cpu(void);
/* A handle passed from Python as an int (NULL with an exception set when it is not one). */
void *lt__fast_handle(PyObject *v);

/* fast_tape.c: the tape autograd made for `ctx` (NULL: none). */
lt_tape *lt__fast_tape_of(const lt_context *ctx);
/* Nonzero once some context has a tape registered. */
int lt__fast_any_tape(void);
/* Nonzero after watch_tapes(None): Tensor operands then never take the C paths. */
int lt__fast_tapes_unknown(void);
/* The tape to record a call on `ctx` over operands t[0..n) on (owned[i] as lt__fast_operand
 * set it: only Tensors can be tracked): NULL when recording is off, ctx has no tape or no
 * operand is tracked (the plain call then gives the same result). */
lt_tape *lt__fast_recording_tape(const lt_context *ctx, lt_tensor *const *t, const int *owned,
                                 int n);
/* Drops the registered tapes (module teardown). */
void lt__fast_forget_tapes(void);
PyObject *lt__fast_set_tape(PyObject *self, PyObject *const *args, Py_ssize_t n);
PyObject *lt__fast_set_recording(PyObject *self, PyObject *flag);
/* fast_dlpack.c: the address of the C destructor for exported DLPack capsules. */
PyObject *lt__fast_capsule_destructor(PyObject *self, PyObject *unused);
PyObject *lt__fast_watch_tapes(PyObject *self, PyObject *tapes);

/* The entry points of fast_calls.c. */
PyObject *lt__fast_binary(PyObject *self, PyObject *const *args, Py_ssize_t n);
PyObject *lt__fast_unary(PyObject *self, PyObject *const *args, Py_ssize_t n);
PyObject *lt__fast_einsum(PyObject *self, PyObject *const *args, Py_ssize_t n);
PyObject *lt__fast_plan_call(PyObject *self, PyObject *const *args, Py_ssize_t n);
PyObject *lt__fast_wrap(PyObject *self, PyObject *arr);
PyObject *lt__fast_reduce(PyObject *self, PyObject *const *args, Py_ssize_t n);
PyObject *lt__fast_rows(PyObject *self, PyObject *const *args, Py_ssize_t n);
PyObject *lt__fast_time_plan(PyObject *self, PyObject *const *args, Py_ssize_t n);

#endif

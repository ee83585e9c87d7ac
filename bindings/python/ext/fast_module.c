/* SPDX-License-Identifier: MIT */
/* libtensor._fast: binding to the loaded library, NumPy arrays in and out, the module. */
#include "fast.h"

#include <stdlib.h>
#include <string.h>

lt_fast_api lt__fast;
int lt__fast_bound;
lt_fast_state lt__fast_state;

static PyObject *str_handle, *str_context, *str_readonly;

lt_context *lt__fast_tensor_context(PyObject *v) {
  PyObject *c = PyObject_GetAttr(v, str_context);
  PyObject *ch = c ? PyObject_GetAttr(c, str_handle) : NULL;
  Py_XDECREF(c);
  void *cp = ch && ch != Py_None ? PyLong_AsVoidPtr(ch) : NULL;
  Py_XDECREF(ch);
  PyErr_Clear(); /* a closed context or a stranger object: the general path reports it */
  return cp;
}

void lt__fast_release(lt_tensor *t, int owned) {
  if (owned == LT_FAST_OWNED_DESTROY)
    lt__fast.lt_tensor_destroy(t);
  else
    lt__fast_wrap_done(owned);
}

int lt__fast_operand(PyObject *v, lt_context *ctx, int flags, lt_tensor **out, int *owned) {
  int writable = flags & LT_FAST_WRITABLE;
  *owned = 0;
  if (Py_TYPE(v) == (PyTypeObject *)lt__fast_state.tensor_type) {
    if (lt__fast_tapes_unknown() || lt__fast_tensor_context(v) != ctx ||
        (!(flags & LT_FAST_RECORDABLE) && lt__fast_tape_of(ctx) != NULL))
      return LT_FAST_SKIP;
    if (writable) {
      PyObject *ro = PyObject_GetAttr(v, str_readonly);
      if (ro == NULL) return -1;
      int frozen = PyObject_IsTrue(ro);
      Py_DECREF(ro);
      if (frozen != 0) return frozen < 0 ? -1 : LT_FAST_SKIP;
    }
    PyObject *h = PyObject_GetAttr(v, str_handle);
    if (h == NULL) return -1;
    if (h == Py_None) { /* a destroyed tensor: the general path reports it */
      Py_DECREF(h);
      return LT_FAST_SKIP;
    }
    *out = PyLong_AsVoidPtr(h);
    Py_DECREF(h);
    if (*out == NULL) return PyErr_Occurred() ? -1 : LT_FAST_SKIP;
    return LT_FAST_TENSOR;
  }
  if (ctx != lt__fast_state.cpu) return LT_FAST_SKIP;
  if (flags & LT_FAST_CACHED) return lt__fast_wrap_cached(v, writable, out, owned);
  int kind = lt__fast_wrap_array(v, writable, out);
  *owned = kind == LT_FAST_ARRAY ? LT_FAST_OWNED_DESTROY : LT_FAST_OWNED_NONE;
  return kind;
}

PyObject *lt__fast_raise(lt_status st) {
  PyObject *r = PyObject_CallFunction(lt__fast_state.check, "i", (int)st);
  if (r != NULL) { /* check() returned: the status was no failure after all */
    Py_DECREF(r);
    PyErr_Format(PyExc_RuntimeError, "libtensor._fast: unexpected status %d", (int)st);
  }
  return NULL;
}

int lt__fast_default_is_cpu(void) {
  const char *dev = getenv("LT_DEVICE"); /* os.environ writes through to the C environment */
  return dev == NULL || dev[0] == '\0' || strcmp(dev, "cpu") == 0;
}

void *lt__fast_handle(PyObject *v) {
  void *p = PyLong_AsVoidPtr(v);
  if (p == NULL && !PyErr_Occurred())
    PyErr_SetString(PyExc_ValueError, "libtensor._fast: NULL handle");
  return p;
}

/* ---- NumPy arrays out: a small owner object with __array_struct__ (NumPy's oldest, cheapest
 * protocol, read the same way by NumPy 1.x and 2.x; no NumPy headers, so no ABI tie) */

/* NumPy's PyArrayInterface, as documented for __array_struct__. */
typedef struct {
  int two, nd;
  char typekind;
  int itemsize, flags;
  Py_intptr_t *shape, *strides;
  void *data;
  PyObject *descr;
} array_interface;

enum { NPY_ALIGNED = 0x100, NPY_NOTSWAPPED = 0x200, NPY_WRITEABLE = 0x400, NPY_HAS_DESCR = 0x800 };

typedef struct {
  PyObject_HEAD lt_tensor *t;
  array_interface iface;
  Py_intptr_t dims[];
} result_block;

static void block_dealloc(PyObject *self) {
  result_block *b = (result_block *)self;
  lt__fast.lt_tensor_destroy(b->t);
  PyObject_Free(self);
}

static PyObject *block_array_struct(PyObject *self, void *closure) {
  (void)closure;
  return PyCapsule_New(&((result_block *)self)->iface, NULL, NULL);
}

static PyGetSetDef block_getset[] = {{"__array_struct__", block_array_struct, NULL, NULL, NULL},
                                     {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject block_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "libtensor._fast.ResultBlock",
    .tp_basicsize = sizeof(result_block),
    .tp_itemsize = 2 * sizeof(Py_intptr_t),
    .tp_dealloc = block_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Owns a libtensor result tensor that a NumPy array views.",
    .tp_getset = block_getset,
};

PyObject *lt__fast_to_numpy(lt_tensor *t) {
  int rank = lt__fast.lt_tensor_rank(t);
  lt_dtype dtype = lt__fast.lt_tensor_dtype(t);
  void *data = NULL;
  lt_status st = lt__fast.lt_tensor_host_pointer(t, &data);
  if (dtype == LT_BF16 || st != LT_OK) {
    lt__fast.lt_tensor_destroy(t);
    if (st != LT_OK) return lt__fast_raise(st);
    PyErr_SetString(PyExc_TypeError, "libtensor._fast: bfloat16 result");
    return NULL;
  }
  result_block *b = PyObject_Malloc(sizeof(result_block) + 2 * (size_t)rank * sizeof(Py_intptr_t));
  if (b == NULL) {
    lt__fast.lt_tensor_destroy(t);
    return PyErr_NoMemory();
  }
  PyObject_Init((PyObject *)b, &block_type);
  b->t = t;
  int size = (int)lt__fast.lt_dtype_size(dtype);
  const int64_t *shape = lt__fast.lt_tensor_shape(t), *strides = lt__fast.lt_tensor_strides(t);
  for (int i = 0; i < rank; i++) {
    b->dims[i] = (Py_intptr_t)shape[i];
    b->dims[rank + i] = (Py_intptr_t)(strides[i] * size);
  }
  char kind = dtype == LT_BOOL                                                            ? 'b'
              : (dtype == LT_F16 || dtype == LT_F32 || dtype == LT_F64)                   ? 'f'
              : (dtype == LT_U8 || dtype == LT_U16 || dtype == LT_U32 || dtype == LT_U64) ? 'u'
                                                                                          : 'i';
  /* The dtype object itself: else NumPy formats and parses a type string for every array. */
  PyObject *descr =
      (int)dtype < LT_FAST_N_DTYPES ? PyTuple_GET_ITEM(lt__fast_state.dtypes, dtype) : Py_None;
  int flags = NPY_ALIGNED | NPY_NOTSWAPPED | NPY_WRITEABLE | (descr != Py_None ? NPY_HAS_DESCR : 0);
  b->iface = (array_interface){
      2, rank, kind, size, flags, b->dims, b->dims + rank, data, descr != Py_None ? descr : NULL};
  PyObject *arr = PyObject_CallOneArg(lt__fast_state.asarray, (PyObject *)b);
  Py_DECREF(b); /* the array holds it as its base */
  return arr ? lt__fast_numpy_result(arr, rank) : NULL;
}

PyObject *lt__fast_numpy_result(PyObject *arr, int rank) {
  if (rank != 0) return arr;
  PyObject *empty = PyTuple_New(0); /* arr[()]: a 0-d result as a NumPy scalar */
  PyObject *scalar = empty ? PyObject_GetItem(arr, empty) : NULL;
  Py_XDECREF(empty);
  Py_DECREF(arr);
  return scalar;
}

/* ---- the module */

static void drop(PyObject **p) { Py_CLEAR(*p); }

static PyObject *fast_bind(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 8 || !PyDict_Check(args[0]) || !PyTuple_Check(args[7]) ||
      PyTuple_GET_SIZE(args[7]) != LT_FAST_N_DTYPES) {
    PyErr_SetString(PyExc_TypeError, "bind(functions: dict, cpu_context: int, check, Tensor, "
                                     "asarray, ndarray, probe, dtypes: tuple)");
    return NULL;
  }
  lt_fast_api api;
#define LT_FAST_RESOLVE(name)                                                                      \
  {                                                                                                \
    PyObject *a = PyDict_GetItemString(args[0], #name);                                            \
    void *p = a ? PyLong_AsVoidPtr(a) : NULL;                                                      \
    if (p == NULL) {                                                                               \
      if (!PyErr_Occurred())                                                                       \
        PyErr_SetString(PyExc_ImportError, "libtensor._fast: the library lacks " #name);           \
      return NULL;                                                                                 \
    }                                                                                              \
    memcpy(&api.name, &p, sizeof p); /* object pointer to function pointer, as dlsym's users */    \
  }
  LT_FAST_FUNCS(LT_FAST_RESOLVE)
#undef LT_FAST_RESOLVE
  void *cpu = lt__fast_handle(args[1]);
  if (cpu == NULL) return NULL;
  PyObject *plans = PyDict_New();
  if (plans == NULL) return NULL;
  lt__fast = api;
  lt__fast_state.cpu = cpu;
  PyObject **slots[] = {&lt__fast_state.check, &lt__fast_state.tensor_type, &lt__fast_state.asarray,
                        &lt__fast_state.ndarray_type};
  for (int i = 0; i < 4; i++) {
    Py_INCREF(args[2 + i]);
    Py_XSETREF(*slots[i], args[2 + i]);
  }
  PyObject *numpy = PyImport_ImportModule("numpy");
  PyObject *empty = numpy ? PyObject_GetAttrString(numpy, "empty") : NULL;
  Py_XDECREF(numpy);
  if (empty == NULL) {
    Py_DECREF(plans);
    return NULL;
  }
  Py_XSETREF(lt__fast_state.empty, empty);
  Py_XSETREF(lt__fast_state.plans, plans);
  Py_INCREF(args[7]);
  Py_XSETREF(lt__fast_state.dtypes, args[7]);
  lt__fast_numpy_probe(args[6]);
  lt__fast_bound = 1;
  Py_RETURN_NONE;
}

static PyObject *fast_held(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return PyLong_FromSsize_t(lt__fast_live_arrays());
}

static PyObject *fast_destroy(PyObject *self, PyObject *arg) {
  (void)self;
  void *h = PyLong_AsVoidPtr(arg);
  if (h == NULL && PyErr_Occurred()) return NULL;
  if (!lt__fast_bound) Py_RETURN_NONE;
  /* A tracked handle's records are released with it (as autograd's Tensor.__del__ did). */
  lt_tape *tape = h && lt__fast_any_tape() ? lt__fast_tape_of(lt__fast.lt_tensor_context(h)) : NULL;
  if (tape != NULL) lt__fast.lt_tape_forget(tape, h);
  lt__fast.lt_tensor_destroy(h);
  Py_RETURN_NONE;
}

static PyObject *fast_clear_plans(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  if (lt__fast_state.plans) PyDict_Clear(lt__fast_state.plans);
  Py_RETURN_NONE;
}

static PyObject *fast_clear_wraps(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  lt__fast_clear_wraps();
  Py_RETURN_NONE;
}

static PyObject *fast_cached_plans(PyObject *self, PyObject *unused) {
  (void)self, (void)unused;
  return PyLong_FromSsize_t(lt__fast_state.plans ? PyDict_Size(lt__fast_state.plans) : 0);
}

#define LT_FAST_FASTCALL(f) ((PyCFunction)(void (*)(void))(f))

static PyMethodDef fast_methods[] = {
    {"bind", LT_FAST_FASTCALL(fast_bind), METH_FASTCALL,
     "bind(functions, cpu_context, check, Tensor, asarray, ndarray): attach to the library"},
    {"binary", LT_FAST_FASTCALL(lt__fast_binary), METH_FASTCALL,
     "binary(op, a, b, out): lt_binary on arrays/Tensors, or NotImplemented"},
    {"unary", LT_FAST_FASTCALL(lt__fast_unary), METH_FASTCALL,
     "unary(op, a, out): lt_unary on an array/Tensor, or NotImplemented"},
    {"einsum", LT_FAST_FASTCALL(lt__fast_einsum), METH_FASTCALL,
     "einsum(expr, operands, options, out): a cached plan run on NumPy arrays, or NotImplemented"},
    {"reduce", LT_FAST_FASTCALL(lt__fast_reduce), METH_FASTCALL,
     "reduce(op, a, axis, keepdims): lt_reduce over all axes or one, or NotImplemented"},
    {"rows", LT_FAST_FASTCALL(lt__fast_rows), METH_FASTCALL,
     "rows(kind, a, axis, keepdims): softmax (0), log_softmax (1), logsumexp (2) over all axes "
     "or one, or NotImplemented"},
    {"plan_call", LT_FAST_FASTCALL(lt__fast_plan_call), METH_FASTCALL,
     "plan_call(plan, context, template, operands, out, alpha, beta): run, or NotImplemented"},
    {"time_plan", LT_FAST_FASTCALL(lt__fast_time_plan), METH_FASTCALL,
     "time_plan(plan, handles, out, n, cpu): seconds per lt_plan_execute in a C loop (benchmarks)"},
    {"destroy", fast_destroy, METH_O, "destroy(handle): lt_tensor_destroy"},
    {"wrap", lt__fast_wrap, METH_O,
     "wrap(array): (handle, readonly) of a zero-copy tensor over it, or NotImplemented"},
    {"held", fast_held, METH_NOARGS, "arrays the library holds through this module"},
    {"watch_tapes", lt__fast_watch_tapes, METH_O,
     "watch_tapes(None): Tensor operands never take the C paths (autograd absent)"},
    {"set_tape", LT_FAST_FASTCALL(lt__fast_set_tape), METH_FASTCALL,
     "set_tape(context, tape or None): the gradient tape of a context (autograd)"},
    {"set_recording", lt__fast_set_recording, METH_O,
     "set_recording(bool): no_grad scopes turn recording off"},
    {"capsule_destructor", lt__fast_capsule_destructor, METH_NOARGS,
     "the address of the C destructor of exported DLPack capsules"},
    {"clear_plans", fast_clear_plans, METH_NOARGS, "drops the cached einsum plans"},
    {"cached_plans", fast_cached_plans, METH_NOARGS, "number of cached plans"},
    {"clear_wraps", fast_clear_wraps, METH_NOARGS,
     "drops the cached wrappers of small NumPy operands (and their references)"},
    {NULL, NULL, 0, NULL}};

static void fast_free(void *module) {
  (void)module;
  lt__fast_clear_wraps();
  lt__fast_bound = 0;
  drop(&lt__fast_state.plans);
  drop(&lt__fast_state.check);
  drop(&lt__fast_state.tensor_type);
  drop(&lt__fast_state.asarray);
  drop(&lt__fast_state.ndarray_type);
  lt__fast_forget_tapes();
  drop(&lt__fast_state.dtypes);
  drop(&lt__fast_state.empty);
}

static struct PyModuleDef fast_module = {PyModuleDef_HEAD_INIT,
                                         .m_name = "libtensor._fast",
                                         .m_doc = "libtensor's Python hot paths in C",
                                         .m_size = -1,
                                         .m_methods = fast_methods,
                                         .m_free = fast_free};

PyMODINIT_FUNC PyInit__fast(void); /* the module's entry point, found by name */
PyMODINIT_FUNC PyInit__fast(void) {
  if (PyType_Ready(&block_type) < 0) return NULL;
  str_handle = PyUnicode_InternFromString("_handle");
  str_context = PyUnicode_InternFromString("context");
  str_readonly = PyUnicode_InternFromString("readonly");
  if (!str_handle || !str_context || !str_readonly) return NULL;
  return PyModule_Create(&fast_module);
}

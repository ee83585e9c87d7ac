/* SPDX-License-Identifier: MIT */
/* libtensor._fast: one-shot elementwise ops, einsum through cached plans, plan calls. */
#include "fast.h"

#include <string.h>

/* Cached einsum plans: past this many the cache starts over (each holds a few KB). */
#define LT_FAST_MAX_PLANS 256

/* Tensors for one call's operands, released (lt__fast_release) by operands_release. */
typedef struct operand_set {
  lt_tensor *t[LT_FAST_MAX_OPERANDS + 1];
  int owned[LT_FAST_MAX_OPERANDS + 1];
  int n, any_tensor;
  int any_cached; /* a tensor of the wrap cache: the GIL stays held while it is in use */
} operand_set;

static void operands_release(operand_set *s) {
  for (int i = 0; i < s->n; i++)
    lt__fast_release(s->t[i], s->owned[i]);
  s->n = 0;
}

static int is_float(lt_dtype d) { return d == LT_F16 || d == LT_F32 || d == LT_F64; }

/* Adds operand `v` on `ctx`. floats_only: NumPy arrays must be float (where the general path
 * rounds integer results back to integers). Returns 1, LT_FAST_SKIP, or -1 with an exception. */
static int operands_add(operand_set *s, PyObject *v, lt_context *ctx, int flags, int floats_only) {
  int i = s->n;
  int kind = lt__fast_operand(v, ctx, flags, &s->t[i], &s->owned[i]);
  if (kind <= 0) return kind;
  s->n++;
  if (s->owned[i] >= LT_FAST_OWNED_CACHED) s->any_cached = 1;
  if (kind == LT_FAST_TENSOR)
    s->any_tensor = 1;
  else if (floats_only && !is_float(lt__fast.lt_tensor_dtype(s->t[i])))
    return LT_FAST_SKIP;
  return 1;
}

/* The context of a call over `args`: the first exact Tensor's, else the CPU context when it is
 * the default device; NULL when the general path must decide. */
static lt_context *call_context(PyObject *const *args, int n) {
  for (int i = 0; i < n; i++)
    if (Py_TYPE(args[i]) == (PyTypeObject *)lt__fast_state.tensor_type)
      return lt__fast_tensor_context(args[i]);
  return lt__fast_default_is_cpu() ? lt__fast_state.cpu : NULL;
}

static int same_shape(const lt_tensor *a, const lt_tensor *b) {
  int rank = lt__fast.lt_tensor_rank(a);
  return rank == lt__fast.lt_tensor_rank(b) &&
         (rank == 0 || !memcmp(lt__fast.lt_tensor_shape(a), lt__fast.lt_tensor_shape(b),
                               (size_t)rank * sizeof(int64_t)));
}

/* The new result `r` of a call as the general path delivers it: a NumPy array when no Tensor
 * took part, else the new handle (the package wraps it in a Tensor). Consumes `r` and the
 * operands. */
static PyObject *deliver(lt_tensor *r, operand_set *s) {
  int to_numpy = !s->any_tensor;
  operands_release(s);
  return to_numpy ? lt__fast_to_numpy(r) : PyLong_FromVoidPtr(r);
}

static int int_arg(PyObject *v, int *out) {
  long x = PyLong_AsLong(v);
  if (x == -1 && PyErr_Occurred()) return -1;
  *out = (int)x;
  return 0;
}

/* ---- plans cached by (what, options, context, dtypes, shapes, strides, out layout) */

/* A cached plan is a capsule; its context, when set, holds numpy.empty's arguments (shape,
 * dtype) for the plan's result, so that NumPy allocates it (cheaper than a library tensor seen
 * through a NumPy array). */
static void plan_capsule_free(PyObject *capsule) {
  lt_plan *p = PyCapsule_GetPointer(capsule, "lt_plan");
  Py_XDECREF((PyObject *)PyCapsule_GetContext(capsule));
  if (p != NULL && lt__fast_bound) lt__fast.lt_plan_destroy(p);
}

static size_t layout_bytes(const lt_tensor *t) {
  return sizeof(int32_t) * 2 + 2 * sizeof(int64_t) * (size_t)lt__fast.lt_tensor_rank(t);
}

static char *put_layout(char *p, const lt_tensor *t) {
  int32_t head[2] = {(int32_t)lt__fast.lt_tensor_dtype(t), (int32_t)lt__fast.lt_tensor_rank(t)};
  size_t row = sizeof(int64_t) * (size_t)head[1];
  memcpy(p, head, sizeof head);
  p += sizeof head;
  memcpy(p, lt__fast.lt_tensor_shape(t), row);
  memcpy(p + row, lt__fast.lt_tensor_strides(t), row);
  return p + 2 * row;
}

/* The key of a plan, as bytes: `what` (an einsum expression, or "#b<op>" / "#u<op>" for the
 * elementwise ops: no expression starts with '#'), then everything the plan constructor reads. */
static PyObject *plan_key(const char *what, size_t len, const void *opts, const lt_context *ctx,
                          const operand_set *s, const lt_tensor *d) {
  size_t size = len + 1 + sizeof opts + sizeof ctx + (d ? layout_bytes(d) : 1);
  for (int i = 0; i < s->n; i++)
    size += layout_bytes(s->t[i]);
  PyObject *key = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
  if (key == NULL) return NULL;
  char *p = PyBytes_AS_STRING(key);
  memcpy(p, what, len + 1);
  p += len + 1;
  memcpy(p, &opts, sizeof opts);
  memcpy(p + sizeof opts, &ctx, sizeof ctx);
  p += sizeof opts + sizeof ctx;
  for (int i = 0; i < s->n; i++)
    p = put_layout(p, s->t[i]);
  if (d)
    put_layout(p, d);
  else
    *p = '\0';
  return key;
}

/* The cached plan of `key` (and its numpy.empty arguments, borrowed, or NULL), or NULL (with an
 * exception set only on a failed lookup). */
static lt_plan *find_plan(PyObject *key, PyObject **empty_args) {
  PyObject *hit = PyDict_GetItemWithError(lt__fast_state.plans, key);
  if (empty_args) *empty_args = hit ? PyCapsule_GetContext(hit) : NULL;
  return hit ? PyCapsule_GetPointer(hit, "lt_plan") : NULL;
}

/* Caches `plan` under `key` with numpy.empty's arguments for its result (or NULL), destroying
 * it when it cannot. 0, or -1 with an exception set. */
static int store_plan(PyObject *key, lt_plan *plan, PyObject *empty_args) {
  PyObject *capsule = PyCapsule_New(plan, "lt_plan", plan_capsule_free);
  if (capsule == NULL) {
    lt__fast.lt_plan_destroy(plan);
    return -1;
  }
  Py_XINCREF(empty_args);
  PyCapsule_SetContext(capsule, empty_args);
  if (PyDict_Size(lt__fast_state.plans) >= LT_FAST_MAX_PLANS) PyDict_Clear(lt__fast_state.plans);
  int bad = PyDict_SetItem(lt__fast_state.plans, key, capsule);
  Py_DECREF(capsule); /* the dict holds the plan now */
  return bad ? -1 : 0;
}

/* The plan lt_binary / lt_unary build inside (ops/oneshot.c: trailing-aligned modes, default
 * options), made once for these layouts with the first result `r` as the output template, so
 * that later calls only execute. NULL when it cannot be made (the calls then stay one-shot). */
static lt_plan *elementwise_plan(int op, const operand_set *s, const lt_tensor *r) {
  int rank = lt__fast.lt_tensor_rank(r);
  int32_t md[LT_MAX_RANK], ma[LT_MAX_RANK], mb[LT_MAX_RANK];
  for (int i = 0; i < rank; i++)
    md[i] = i;
  int32_t *m[2] = {ma, mb};
  for (int k = 0; k < s->n; k++) {
    int rk = lt__fast.lt_tensor_rank(s->t[k]);
    for (int i = 0; i < rk; i++)
      m[k][i] = rank - rk + i;
  }
  lt_plan *plan = NULL;
  lt_status st;
  if (s->n == 2) {
    st = lt__fast.lt_plan_binary(s->t[0], ma, s->t[1], mb, (lt_binary_op)op, r, md, NULL, &plan);
  } else {
    lt_plan_options *opts = NULL;
    st = lt__fast.lt_plan_options_create(&opts);
    if (st == LT_OK) st = lt__fast.lt_plan_options_set_unary(opts, 0, (lt_unary_op)op);
    if (st == LT_OK) st = lt__fast.lt_plan_permutation(s->t[0], ma, r, md, opts, &plan);
    lt__fast.lt_plan_options_destroy(opts);
  }
  return st == LT_OK ? plan : NULL;
}

/* Shared by binary and unary: n_in operands after the op code, then out. */
/* numpy.empty's arguments for results like `r` (a new reference; NULL, with no exception, for
 * dtypes NumPy lacks or when it cannot be made). */
static PyObject *empty_args_of(const lt_tensor *r) {
  int rank = lt__fast.lt_tensor_rank(r), dtype = (int)lt__fast.lt_tensor_dtype(r);
  PyObject *descr =
      dtype < LT_FAST_N_DTYPES ? PyTuple_GET_ITEM(lt__fast_state.dtypes, dtype) : NULL;
  PyObject *shape = descr && descr != Py_None ? PyTuple_New(rank) : NULL;
  for (int i = 0; shape && i < rank; i++) {
    PyObject *e = PyLong_FromLongLong((long long)lt__fast.lt_tensor_shape(r)[i]);
    if (e == NULL)
      Py_CLEAR(shape);
    else
      PyTuple_SET_ITEM(shape, i, e);
  }
  PyObject *args = shape ? PyTuple_Pack(2, shape, descr) : NULL;
  Py_XDECREF(shape);
  PyErr_Clear();
  return args;
}

/* Whether any operand is of a floating dtype. */
static int any_float(const operand_set *s) {
  for (int i = 0; i < s->n; i++) {
    lt_dtype d = lt__fast.lt_tensor_dtype(s->t[i]);
    if (is_float(d) || d == LT_BF16) return 1;
  }
  return 0;
}

static int mixed_sign(const operand_set *s) {
  lt_dtype a = lt__fast.lt_tensor_dtype(s->t[0]), b = lt__fast.lt_tensor_dtype(s->t[1]);
  int sa = a == LT_I8 || a == LT_I16 || a == LT_I32 || a == LT_I64;
  int sb = b == LT_I8 || b == LT_I16 || b == LT_I32 || b == LT_I64;
  return (a == LT_U64 && sb) || (b == LT_U64 && sa);
}

/* ---- calls recorded on a gradient tape (fast_tape.c) */

/* The operands as the tape takes them: Tensors as they are, NumPy operands as private copies
 * (the tape may save an operand for backward, and a NumPy array can change under it; the
 * Python path copies them too). LT_OK, or the failed copy's status with nothing left over. */
static lt_status private_operands(const operand_set *s, lt_tensor **in) {
  for (int i = 0; i < s->n; i++) {
    in[i] = s->t[i];
    if (s->owned[i] == LT_FAST_OWNED_NONE) continue;
    lt_status st = lt__fast.lt_tensor_contiguous(s->t[i], LT_DTYPE_INVALID, &in[i]);
    if (st != LT_OK) {
      while (i-- > 0)
        if (in[i] != s->t[i]) lt__fast.lt_tensor_destroy(in[i]);
      return st;
    }
  }
  return LT_OK;
}

/* What a recorded call runs: lt_ad_binary, lt_ad_unary or lt_ad_einsum over `in`. */
typedef struct recorded_call {
  int op, n_in;
  const char *expr; /* einsum's; NULL for the elementwise ops */
} recorded_call;

static lt_status run_recorded(lt_tape *tape, const recorded_call *c, lt_tensor *const *in,
                              lt_tensor **r) {
  if (c->expr != NULL)
    return lt__fast.lt_ad_einsum(tape, c->expr, c->n_in, (const lt_tensor *const *)in, r);
  return c->n_in == 2 ? lt__fast.lt_ad_binary(tape, (lt_binary_op)c->op, in[0], in[1], r)
                      : lt__fast.lt_ad_unary(tape, (lt_unary_op)c->op, in[0], r);
}

/* Runs `c` on the tape over the set's operands and returns the new result's handle for the
 * package to wrap. Consumes the operands. The GIL stays held: every thread shares the context's
 * tape, which is not thread-safe, and the GIL is its lock (the ctypes path holds it too). */
static PyObject *record(lt_tape *tape, const recorded_call *c, operand_set *s) {
  lt_tensor *in[LT_FAST_MAX_OPERANDS + 1], *r = NULL;
  lt_status st = private_operands(s, in);
  if (st == LT_OK) {
    st = run_recorded(tape, c, in, &r);
    for (int i = 0; i < s->n; i++)
      if (in[i] != s->t[i]) lt__fast.lt_tensor_destroy(in[i]);
  }
  operands_release(s);
  return st == LT_OK ? PyLong_FromVoidPtr(r) : lt__fast_raise(st);
}

/* NumPy's casting='same_kind' for out= (convert.check_out_cast): kinds bool < unsigned <
 * signed < float, and a result goes only into its own kind or a later one. */
static int kind_rank(lt_dtype d) {
  return d == LT_BOOL ? 0 : (d >= LT_U8 && d <= LT_U64) ? 1 : (d >= LT_I64 && d <= LT_I32) ? 2 : 3;
}

static int same_kind(lt_dtype from, lt_dtype to) { return kind_rank(from) <= kind_rank(to); }

static PyObject *elementwise(PyObject *const *args, Py_ssize_t n, int n_in) {
  if (n != n_in + 2) {
    PyErr_SetString(PyExc_TypeError, "libtensor._fast: wrong argument count");
    return NULL;
  }
  int op;
  if (int_arg(args[0], &op) < 0) return NULL;
  for (int i = 0; i < n_in; i++) /* scalars and other objects: before anything is cached */
    if (Py_TYPE(args[1 + i]) != (PyTypeObject *)lt__fast_state.ndarray_type &&
        Py_TYPE(args[1 + i]) != (PyTypeObject *)lt__fast_state.tensor_type)
      Py_RETURN_NOTIMPLEMENTED;
  lt_context *ctx = lt__fast_bound ? call_context(args + 1, n_in) : NULL;
  if (ctx == NULL) Py_RETURN_NOTIMPLEMENTED;
  operand_set s = {.n = 0};
  PyObject *out = args[n_in + 1];
  lt_tensor *target = NULL; /* out=, written straight by the plan when its layout allows */
  int ok = 1, t_owned = LT_FAST_OWNED_NONE;
  /* out= with a tracked operand is the Python path's (it records, then copies into out) */
  int flags = LT_FAST_CACHED | (out == Py_None ? LT_FAST_RECORDABLE : 0);
  for (int i = 0; i < n_in && ok > 0; i++)
    ok = operands_add(&s, args[1 + i], ctx, flags, 0);
  if (ok > 0 && out != Py_None)
    ok = lt__fast_operand(out, ctx, LT_FAST_WRITABLE | LT_FAST_CACHED, &target, &t_owned);
  if (ok <= 0) {
    operands_release(&s);
    if (ok < 0) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  lt_tape *tape = out == Py_None ? lt__fast_recording_tape(ctx, s.t, s.owned, s.n) : NULL;
  if (tape != NULL) return record(tape, &(recorded_call){op, n_in, NULL}, &s);
  if (t_owned >= LT_FAST_OWNED_CACHED) s.any_cached = 1;
  char what[2 + sizeof op + 1] = {'#', n_in == 2 ? 'b' : 'u'}; /* no snprintf: it is slow */
  memcpy(what + 2, &op, sizeof op);
  PyObject *key = plan_key(what, sizeof what - 1, NULL, ctx, &s, target);
  PyObject *empty_args = NULL;
  /* Integer power depends on the values (a negative exponent is refused, as NumPy): lt_binary
   * checks them on every call, so it is never run through a cached plan. Nor is a comparison
   * of u64 with a signed integer, which lt_binary computes exactly in three passes (a plan
   * compares them in f64). */
  int by_value = n_in == 2 && ((op == LT_BINARY_POW && !any_float(&s)) ||
                               (op >= LT_BINARY_EQ && op <= LT_BINARY_GE && mixed_sign(&s)));
  lt_plan *plan = key && !by_value ? find_plan(key, &empty_args) : NULL;
  PyObject *made = NULL; /* a NumPy result allocated by NumPy, and its tensor */
  lt_tensor *made_t = NULL;
  int made_failed = 0;
  if (plan != NULL && target == NULL && !s.any_tensor && empty_args != NULL) {
    made = PyObject_Call(lt__fast_state.empty, empty_args, NULL);
    if (made != NULL && lt__fast_wrap_array(made, 1, &made_t) != LT_FAST_ARRAY) Py_CLEAR(made);
  }
  if (PyErr_Occurred()) {
    Py_XDECREF(key);
    Py_XDECREF(made);
    lt__fast_release(target, t_owned);
    operands_release(&s);
    return NULL;
  }
  int64_t work = lt__fast.lt_tensor_numel(s.t[0]);
  if (n_in == 2 && lt__fast.lt_tensor_numel(s.t[1]) > work) work = lt__fast.lt_tensor_numel(s.t[1]);
  PyThreadState *unlocked =
      work >= LT_FAST_GIL_ELEMENTS && !s.any_cached ? PyEval_SaveThread() : NULL;
  const lt_tensor *const *in = (const lt_tensor *const *)s.t;
  lt_tensor *r = NULL; /* a new result (no out=, or out= through a temporary) */
  lt_status st = LT_OK;
  lt_plan *fresh = NULL; /* made by this call, to be cached */
  int direct = 0;
  if (plan != NULL && target != NULL) {
    st = lt__fast.lt_plan_execute(plan, in, s.n, NULL, 0, target);
    direct = st != LT_ERR_ALIASING; /* out= overlapping an input: through a temporary */
  } else if (made_t != NULL) {
    st = lt__fast.lt_plan_execute(plan, in, s.n, NULL, 0, made_t);
    if (st != LT_OK) { /* NumPy's strides differ from the plan's (size 0): the plan's output */
      made_failed = 1;
      st = lt__fast.lt_plan_create_output(plan, &r);
      if (st == LT_OK) st = lt__fast.lt_plan_execute(plan, in, s.n, NULL, 0, r);
    }
  } else if (plan != NULL) {
    st = lt__fast.lt_plan_create_output(plan, &r);
    if (st == LT_OK) st = lt__fast.lt_plan_execute(plan, in, s.n, NULL, 0, r);
  }
  if (plan == NULL || (target != NULL && !direct)) {
    st = n_in == 2 ? lt__fast.lt_binary((lt_binary_op)op, s.t[0], s.t[1], &r)
                   : lt__fast.lt_unary((lt_unary_op)op, s.t[0], &r);
    /* The plan for later calls; into out= only for its dtype and shape (else a conversion or
     * broadcast follows, through the temporary each time). */
    if (st == LT_OK && plan == NULL && !by_value &&
        (target == NULL || (lt__fast.lt_tensor_dtype(r) == lt__fast.lt_tensor_dtype(target) &&
                            same_shape(r, target))))
      fresh = elementwise_plan(op, &s, target ? target : r);
  }
  if (unlocked) PyEval_RestoreThread(unlocked);
  PyObject *fresh_args = fresh != NULL && target == NULL ? empty_args_of(r) : NULL;
  int bad = fresh != NULL && store_plan(key, fresh, fresh_args) < 0;
  Py_XDECREF(fresh_args);
  Py_DECREF(key);
  lt__fast.lt_tensor_destroy(made_t);
  PyObject *ret = out;
  if (made != NULL && st == LT_OK && !made_failed) {
    operands_release(&s);
    return lt__fast_numpy_result(made, (int)PyTuple_GET_SIZE(PyTuple_GET_ITEM(empty_args, 0)));
  }
  Py_XDECREF(made);
  if (st != LT_OK || bad) {
    ret = bad ? NULL : lt__fast_raise(st);
  } else if (target != NULL && r != NULL) { /* out= through the temporary r */
    if (!same_shape(r, target) ||
        !same_kind(lt__fast.lt_tensor_dtype(r), lt__fast.lt_tensor_dtype(target))) {
      ret = Py_NotImplemented; /* broadcast or a refused cast into out=: the general path */
    } else if ((st = lt__fast.lt_tensor_copy_into(target, r)) != LT_OK) {
      ret = lt__fast_raise(st);
    }
  } else if (target == NULL) {
    return deliver(r, &s); /* consumes r and the operands */
  }
  lt__fast.lt_tensor_destroy(r);
  lt__fast_release(target, t_owned);
  operands_release(&s);
  Py_XINCREF(ret);
  return ret;
}

PyObject *lt__fast_binary(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  return elementwise(args, n, 2);
}

PyObject *lt__fast_unary(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  return elementwise(args, n, 1);
}

/* The cached einsum plan for this call, or a new one (cached), with numpy.empty's arguments
 * for its result where it makes one (borrowed; NULL when NumPy cannot hold it). NULL with an
 * exception set. */
static lt_plan *cached_plan(const char *expr, size_t len, const lt_plan_options *opts,
                            const lt_context *ctx, const operand_set *s, const lt_tensor *d,
                            PyObject **empty_args) {
  PyObject *key = plan_key(expr, len, opts, ctx, s, d);
  lt_plan *plan = key ? find_plan(key, empty_args) : NULL;
  if (plan != NULL || PyErr_Occurred()) {
    Py_XDECREF(key);
    return plan;
  }
  lt_status st =
      lt__fast.lt_plan_einsum(expr, s->n, (const lt_tensor *const *)s->t, d, opts, &plan);
  if (st != LT_OK) {
    Py_DECREF(key);
    lt__fast_raise(st);
    return NULL;
  }
  PyObject *args = NULL;
  lt_tensor *tmpl = NULL;
  if (d == NULL && lt__fast.lt_plan_create_output(plan, &tmpl) == LT_OK) {
    args = empty_args_of(tmpl);
    lt__fast.lt_tensor_destroy(tmpl);
  }
  int bad = store_plan(key, plan, args);
  Py_XDECREF(args);
  Py_DECREF(key);
  if (bad) return NULL;
  *empty_args = args; /* the capsule holds a reference */
  return plan;
}

/* Runs `plan`, with the GIL released unless the call is small (then taking and giving back
 * the GIL would cost more than other threads gain) or a tensor of the wrap cache takes part
 * (fast_wraps.c: another thread could evict it). */
static lt_status execute(const lt_plan *plan, const operand_set *s, const double *scalars,
                         int n_scalars, lt_tensor *d) {
  const lt_tensor *const *in = (const lt_tensor *const *)s->t;
  int64_t work = lt__fast.lt_tensor_numel(d);
  for (int i = 0; i < s->n; i++)
    work += lt__fast.lt_tensor_numel(s->t[i]);
  if (s->any_cached || work < LT_FAST_GIL_ELEMENTS / 4)
    return lt__fast.lt_plan_execute(plan, in, s->n, scalars, n_scalars, d);
  lt_status st;
  Py_BEGIN_ALLOW_THREADS;
  st = lt__fast.lt_plan_execute(plan, in, s->n, scalars, n_scalars, d);
  Py_END_ALLOW_THREADS;
  return st;
}

/* einsum(expr, operands, options, out): NumPy float arrays on the default CPU context, and
 * Tensors (the result is then the new handle; out= a Tensor or an array). */
PyObject *lt__fast_einsum(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 4 || !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "einsum(expr, operands: tuple, options, out)");
    return NULL;
  }
  Py_ssize_t n_ops = PyTuple_GET_SIZE(args[1]), len = 0;
  if (!lt__fast_bound || !PyUnicode_Check(args[0]) || n_ops < 1 || n_ops > LT_FAST_MAX_OPERANDS)
    Py_RETURN_NOTIMPLEMENTED;
  lt_context *ctx = call_context(PySequence_Fast_ITEMS(args[1]), (int)n_ops);
  if (ctx == NULL) Py_RETURN_NOTIMPLEMENTED;
  const char *expr = PyUnicode_AsUTF8AndSize(args[0], &len);
  if (expr == NULL) return NULL;
  if (strlen(expr) != (size_t)len)
    Py_RETURN_NOTIMPLEMENTED; /* an embedded NUL: the general path's message */
  void *opts = lt__fast_handle(args[2]);
  if (opts == NULL) return NULL;
  operand_set s = {.n = 0};
  PyObject *out = args[3];
  lt_tensor *d = NULL;
  int d_owned = LT_FAST_OWNED_NONE, ok = 1;
  int flags = LT_FAST_CACHED | (out == Py_None ? LT_FAST_RECORDABLE : 0);
  for (Py_ssize_t i = 0; i < n_ops && ok > 0; i++)
    ok = operands_add(&s, PyTuple_GET_ITEM(args[1], i), ctx, flags, 1);
  if (ok > 0 && out != Py_None) ok = lt__fast_operand(out, ctx, LT_FAST_WRITABLE, &d, &d_owned);
  if (ok <= 0) {
    operands_release(&s);
    if (ok < 0) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  /* Recorded without the plan options, as the Python path records einsum. */
  lt_tape *tape = out == Py_None ? lt__fast_recording_tape(ctx, s.t, s.owned, s.n) : NULL;
  if (tape != NULL) return record(tape, &(recorded_call){0, (int)n_ops, expr}, &s);
  PyObject *empty_args = NULL, *made = NULL;
  lt_plan *plan = cached_plan(expr, (size_t)len, opts, ctx, &s, d, &empty_args);
  lt_status st = LT_OK;
  /* A NumPy result is allocated by NumPy and written in place (as the elementwise calls do):
   * cheaper than a library tensor seen through a NumPy array. Should NumPy's strides differ
   * from the plan's (size-0 or -1 extents), the plan's own output is used instead. */
  if (plan != NULL && d == NULL && !s.any_tensor && empty_args != NULL) {
    made = PyObject_Call(lt__fast_state.empty, empty_args, NULL);
    if (made != NULL && lt__fast_wrap_array(made, 1, &d) == LT_FAST_ARRAY) {
      d_owned = LT_FAST_OWNED_DESTROY;
      if (execute(plan, &s, NULL, 0, d) == LT_OK) {
        lt__fast_release(d, d_owned);
        operands_release(&s);
        return lt__fast_numpy_result(made, (int)PyTuple_GET_SIZE(PyTuple_GET_ITEM(empty_args, 0)));
      }
      lt__fast_release(d, d_owned);
      d = NULL, d_owned = LT_FAST_OWNED_NONE;
    }
    Py_CLEAR(made);
    PyErr_Clear();
  }
  if (plan != NULL && d == NULL) {
    st = lt__fast.lt_plan_create_output(plan, &d);
    d_owned = st == LT_OK ? LT_FAST_OWNED_DESTROY : LT_FAST_OWNED_NONE;
  }
  if (plan != NULL && st == LT_OK) st = execute(plan, &s, NULL, 0, d);
  int to_numpy = !s.any_tensor;
  operands_release(&s);
  if (plan == NULL || st != LT_OK) {
    lt__fast_release(d, d_owned);
    return plan == NULL ? NULL : lt__fast_raise(st);
  }
  if (out == Py_None) /* consumes d */
    return to_numpy ? lt__fast_to_numpy(d) : PyLong_FromVoidPtr(d);
  lt__fast_release(d, d_owned);
  Py_INCREF(out);
  return out;
}

/* ---- plan calls */

/* Whether `out` has exactly the layout of the plan's own output `tmpl`. */
static int same_layout(const lt_tensor *out, const lt_tensor *tmpl) {
  int rank = lt__fast.lt_tensor_rank(tmpl);
  return lt__fast.lt_tensor_dtype(out) == lt__fast.lt_tensor_dtype(tmpl) && same_shape(out, tmpl) &&
         (rank == 0 || !memcmp(lt__fast.lt_tensor_strides(out), lt__fast.lt_tensor_strides(tmpl),
                               (size_t)rank * sizeof(int64_t)));
}

/* plan_call(plan, context, template, operands, out, alpha, beta). Operands: Tensors of the
 * plan's context or (on the CPU) NumPy float arrays. out: None, a Tensor, or a NumPy array of
 * the plan's output layout (template); anything else is the general path's. */
PyObject *lt__fast_plan_call(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  (void)self;
  if (n != 7 || !PyTuple_Check(args[3])) {
    PyErr_SetString(PyExc_TypeError,
                    "plan_call(plan, context, template, operands: tuple, out, alpha, beta)");
    return NULL;
  }
  Py_ssize_t n_ops = PyTuple_GET_SIZE(args[3]);
  if (!lt__fast_bound || n_ops > LT_FAST_MAX_OPERANDS) Py_RETURN_NOTIMPLEMENTED;
  lt_plan *plan = lt__fast_handle(args[0]);
  lt_context *ctx = plan ? lt__fast_handle(args[1]) : NULL;
  lt_tensor *tmpl = ctx ? lt__fast_handle(args[2]) : NULL;
  double scalars[2] = {PyFloat_AsDouble(args[5]), PyFloat_AsDouble(args[6])};
  if (tmpl == NULL || PyErr_Occurred()) return NULL;
  PyObject *out = args[4];
  if (scalars[1] != 0.0 && out == Py_None) Py_RETURN_NOTIMPLEMENTED; /* the general path's error */
  operand_set s = {.n = 0};
  lt_tensor *d = NULL;
  int d_owned = 0, ok = 1;
  for (Py_ssize_t i = 0; i < n_ops && ok > 0; i++)
    ok = operands_add(&s, PyTuple_GET_ITEM(args[3], i), ctx, LT_FAST_CACHED, 1);
  if (ok > 0 && out != Py_None) {
    ok = lt__fast_operand(out, ctx, LT_FAST_WRITABLE, &d, &d_owned);
    if (ok == LT_FAST_ARRAY && !same_layout(d, tmpl))
      ok = LT_FAST_SKIP; /* the general path copies from the plan's own layout */
  }
  if (ok <= 0) {
    if (d_owned) lt__fast.lt_tensor_destroy(d);
    operands_release(&s);
    if (ok < 0) return NULL;
    Py_RETURN_NOTIMPLEMENTED;
  }
  lt_status st = LT_OK;
  if (d == NULL) st = lt__fast.lt_plan_create_output(plan, &d), d_owned = st == LT_OK;
  int plain = scalars[0] == 1.0 && scalars[1] == 0.0;
  if (st == LT_OK) st = execute(plan, &s, plain ? NULL : scalars, plain ? 0 : 2, d);
  int to_numpy = !s.any_tensor;
  operands_release(&s);
  if (st != LT_OK) {
    if (d_owned) lt__fast.lt_tensor_destroy(d);
    return lt__fast_raise(st);
  }
  if (out == Py_None) return to_numpy ? lt__fast_to_numpy(d) : PyLong_FromVoidPtr(d);
  if (d_owned) lt__fast.lt_tensor_destroy(d);
  Py_INCREF(out);
  return out;
}

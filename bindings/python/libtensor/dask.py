# SPDX-License-Identifier: MIT
"""libtensor on Dask (issue 24 A): a sliced einsum whose slices run on dask.distributed
workers, and Tensors as dask.array chunks.

    import libtensor.dask as ltd
    client = distributed.Client(...)
    r = ltd.einsum("ab,bc,cd,da->", *arrays, memory_limit=1 << 20, client=client)
    x = ltd.from_array(a, chunks=(100, 70))     # a dask array of Tensor chunks
    (da.einsum("ij,jk->ik", x, x.T) + 1).sum(axis=0).compute()  # libtensor on every worker

The einsum is planned once, here, with the C planner: the path and the labels sliced to stay
under memory_limit. Each task receives that plan (an explicit path, the memory limit and the
sliced labels), builds the execution plan without any search, checks that it slices the same
labels, and runs its share of the slices (lt_plan_execute_slices) into a zeroed output; the
shares are summed by a tree reduction. All scheduling is Dask's.

Importing this module makes Tensor a NumPy duck array for Dask: __array_function__ and
__array_ufunc__ run the functions and ufuncs Dask applies to chunks (elementwise math,
reductions, einsum, tensordot, concatenate, transpose, reshape) with libtensor kernels and
return Tensors; other NumPy functions see NumPy copies. Tensors pickle through a NumPy buffer
(tensor.py), so chunks travel between processes.
"""
import concurrent.futures
import ctypes
import functools
import importlib.util
import uuid

import numpy as np

if importlib.util.find_spec("dask") is None or importlib.util.find_spec("distributed") is None:
    # optional: Debian's python3-dask and python3-distributed
    raise ImportError("libtensor.dask needs dask and distributed (Debian: python3-dask "
                      "python3-distributed; pip: dask[distributed])")
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import distributed  # noqa: E402
from dask.array.core import concatenate_lookup, einsum_lookup, tensordot_lookup  # noqa: E402

from . import _lib, enums  # noqa: E402
from . import ops as _ops  # noqa: E402
from . import indexing as _indexing  # noqa: E402
from .einsum import EinsumPlan, einsum as _einsum  # noqa: E402
from .errors import InvalidArgumentError, check  # noqa: E402
from .tensor import Tensor, from_numpy, lt_dtype as _lt_dtype  # noqa: E402

_EINVAL = enums.LT_ERR_INVALID_ARGUMENT
# The two calls below take shapes test_abi's header parser does not read (an array of int64
# pairs), so they are bound here through prototypes of their own rather than in _lib.
_set_explicit_path = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int64,
                                      ctypes.POINTER(ctypes.c_int64))(
    ("lt_plan_options_set_explicit_path", _lib.lib))
_slicing = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int),
                            ctypes.POINTER(ctypes.c_int32), ctypes.c_int,
                            ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double))(
    ("lt_plan_einsum_slicing", _lib.lib))


class WorkerLostError(RuntimeError):
    """A worker died while running slices and Dask gave up retrying them: no partial sum is
    returned."""


# ---- sliced einsum over dask.distributed

def _pairs_and_slicing(handle):
    """(path pairs, sliced labels, slice count) of an einsum plan."""
    count = ctypes.c_int64()
    check(_lib.fn("lt_plan_einsum_n_steps")(handle, ctypes.byref(count)))
    pairs = []
    for s in range(count.value):
        pair = (ctypes.c_int64 * 2)()
        check(_lib.fn("lt_plan_einsum_step")(handle, s, pair, None, None, None))
        pairs.append((pair[0], pair[1]))
    ns = ctypes.c_int()
    labels = (ctypes.c_int32 * 64)()
    n_slices = ctypes.c_double()
    check(_slicing(handle, ctypes.byref(ns), labels, 64, ctypes.byref(n_slices), None))
    if ns.value > 64:
        raise InvalidArgumentError(f"libtensor.dask: {ns.value} sliced labels (at most 64)",
                                   _EINVAL)
    return pairs, tuple(labels[:ns.value]), int(n_slices.value)


class _ShippedPlan:
    """What a task needs to rebuild the client's plan without a search (it pickles)."""

    def __init__(self, expr, pairs, memory_limit, dtype, labels, n_slices, shape, out_dtype):
        self.expr, self.pairs, self.memory_limit, self.dtype = expr, pairs, memory_limit, dtype
        self.labels, self.n_slices, self.shape, self.out_dtype = labels, n_slices, shape, out_dtype

    def build(self, tensors):
        """The plan for these operands from the shipped path; RuntimeError if the slicing the
        library derives here differs from the client's."""
        opts = ctypes.c_void_p()
        check(_lib.fn("lt_plan_options_create")(ctypes.byref(opts)))
        plan = ctypes.c_void_p()
        try:
            flat = (ctypes.c_int64 * max(2 * len(self.pairs), 2))(
                *[i for p in self.pairs for i in p])
            check(_set_explicit_path(opts, len(self.pairs), flat))
            if self.memory_limit:
                check(_lib.fn("lt_plan_options_set_memory_limit")(opts, int(self.memory_limit)))
            if self.dtype is not None:
                check(_lib.fn("lt_plan_options_set_output_dtype")(opts, self.dtype))
            check(_lib.fn("lt_plan_einsum")(_lib.cstr(self.expr, "einsum expression"),
                                            len(tensors),
                                            _lib.handle_array(t.handle for t in tensors), None,
                                            opts, ctypes.byref(plan)))
        finally:
            _lib.fn("lt_plan_options_destroy")(opts)
        _, labels, n = _pairs_and_slicing(plan.value)
        if labels != self.labels or n != self.n_slices:
            _lib.fn("lt_plan_destroy")(plan.value)
            raise RuntimeError(f"libtensor.dask: the worker's plan slices labels {labels} "
                               f"({n} slices), the client's {self.labels} ({self.n_slices}): "
                               "different libtensor builds on client and workers?")
        return plan.value


def _run_share(plan, first, count, *arrays):
    """Slices [first, first + count) of the shipped plan into a zeroed NumPy array."""
    tensors = [from_numpy(np.asarray(a, order="C")) for a in arrays]
    handle = plan.build(tensors)
    try:
        out = np.zeros(plan.shape, plan.out_dtype)
        target = from_numpy(out)
        check(_lib.fn("lt_plan_execute_slices")(handle, first, count,
                                                _lib.handle_array(t.handle for t in tensors),
                                                len(tensors), None, 0, target.handle))
    finally:
        _lib.fn("lt_plan_destroy")(handle)
    return out


def _add(*parts):
    return functools.reduce(lambda a, b: _ops.add(a, b), parts)


def _compute_shares(expr, shipped, hosts, bounds, split_every, client):
    """Runs the slices [bounds[i], bounds[i+1]) as Dask tasks and sums them in a tree."""
    # Keys of their own for every call: a key reused while the scheduler still releases the
    # previous call's (same data, same expression) would be forgotten under the new one.
    token = uuid.uuid4().hex
    # Operands as graph keys rather than scattered data: a worker lost with them is then
    # recomputed from the graph (lost scattered data would cancel the whole call).
    inputs = [dask.delayed(h, name=f"lt-einsum-operand-{token}-{k}")
              for k, h in enumerate(hosts)]
    shares = len(bounds) - 1
    parts = [dask.delayed(_run_share, pure=True)(shipped, bounds[i], bounds[i + 1] - bounds[i],
                                                 *inputs,
                                                 dask_key_name=f"lt-einsum-slices-{token}-{i}")
             for i in range(shares)]
    level = 0
    while len(parts) > 1:
        parts = [dask.delayed(_add, pure=True)(
            *parts[i:i + split_every], dask_key_name=f"lt-einsum-sum-{token}-{level}-{i}")
            for i in range(0, len(parts), split_every)]
        level += 1
    try:
        return client.compute(parts[0]).result() if client is not None else parts[0].compute()
    except distributed.KilledWorker as exc:
        raise WorkerLostError(f"libtensor.dask.einsum: a worker died running the slices of "
                              f"{expr!r} and Dask stopped retrying ({exc}); no partial sum is "
                              "returned") from exc
    except concurrent.futures.CancelledError as exc:
        raise WorkerLostError(f"libtensor.dask.einsum: the scheduler cancelled the slices of "
                              f"{expr!r} (key {exc}), as it does when workers holding data it "
                              "cannot recompute die; no partial sum is returned") from exc


def einsum(expr, *arrays, memory_limit=None, client=None, optimize="auto", dtype=None,
           shares=None, split_every=4):
    """numpy.einsum(expr, *arrays) with the slices of a sliced contraction run as Dask tasks.

    memory_limit (bytes) bounds each task's workspace: the planner slices labels to meet it
    (None: no slicing, one task). shares: how many tasks share the slices (default: twice the
    cluster's worker threads, at most one per slice); split_every: the fan-in of the tree that
    sums them. client: a dask.distributed Client (default: the current one, else Dask's default
    scheduler; False: Dask's configured scheduler even when a Client exists). Returns a NumPy
    array (a Tensor when an operand is a Tensor), equal to the single-process einsum to
    rounding. A worker lost for good raises WorkerLostError."""
    if split_every < 2:
        raise InvalidArgumentError("libtensor.dask.einsum: split_every must be >= 2", _EINVAL)
    any_tensor = any(isinstance(a, Tensor) for a in arrays)
    # C-ordered, as the tasks receive them: the client plans the very layouts they run
    hosts = [np.asarray(a.numpy() if isinstance(a, Tensor) else a, order="C") for a in arrays]
    plan = EinsumPlan(expr, *hosts, optimize=optimize, dtype=dtype, memory_limit=memory_limit)
    pairs, labels, n_slices = _pairs_and_slicing(plan.handle)
    code = None if dtype is None else _lt_dtype(dtype)
    shipped = _ShippedPlan(expr, pairs, memory_limit, code, labels, n_slices, plan.shape,
                           plan.dtype)
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError:
            client = None
    elif client is False:
        client = None
    if shares is None:
        threads = sum(client.nthreads().values()) if client is not None else 2
        shares = 2 * max(threads, 1)
    shares = max(1, min(int(shares), n_slices))
    bounds = [n_slices * i // shares for i in range(shares + 1)]
    # A worker that dies while another fetches one of its keys can leave that task failing with
    # a KeyError naming the lost key (dask.distributed 2022.x races the fetch against the
    # scheduler's recovery) instead of being rescheduled: the whole graph runs again once under
    # fresh keys. Only our own keys qualify; nothing partial is ever summed.
    for attempt in (0, 1):
        try:
            out = _compute_shares(expr, shipped, hosts, bounds, split_every, client)
            break
        except KeyError as exc:
            if not str(exc).strip("'\"").startswith("lt-einsum-"):
                raise
            if attempt:
                raise WorkerLostError(f"libtensor.dask.einsum: data of {expr!r} was lost with a "
                                      f"worker twice ({exc}); no partial sum is returned") from exc
    out = np.asarray(out)
    return from_numpy(np.asarray(out, order="C")) if any_tensor else out


# ---- Tensors as dask.array chunks: the NumPy protocols Dask dispatches through

# NumPy ufunc name -> the libtensor function (ops names them alike, but for these).
_UFUNC_ALIASES = {"absolute": "abs", "true_divide": "divide", "conjugate": None}


def _ufunc_impl(ufunc):
    name = _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    if name is None or name not in _ops.__all__ or ufunc.nout != 1:
        return None
    fn = getattr(_ops, name)
    return fn if callable(fn) else None


def _to_numpy(x):
    """x with every Tensor inside (lists, tuples, dicts) replaced by a NumPy array."""
    if isinstance(x, Tensor):
        return x.numpy()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_numpy(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_numpy(v) for k, v in x.items()}
    return x


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """Ufunc calls run libtensor's kernels and return Tensors; other ufunc methods (reduce,
    at, outer, ...) and keyword forms see NumPy copies."""
    fn = _ufunc_impl(ufunc) if method == "__call__" else None
    if fn is not None and ufunc.nin == len(inputs) and \
            all(kwargs.get(k) is None for k in kwargs if k in ("out", "dtype", "where")) and \
            set(kwargs) <= {"out", "dtype", "casting", "order", "subok", "where"}:
        return fn(*inputs)
    return getattr(ufunc, method)(*_to_numpy(inputs), **_to_numpy(kwargs))


def _reduction(fn):
    def run(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if out is not None or kwargs.get("where", True) is not True or kwargs.get("initial") \
                is not None:
            return NotImplemented
        r = fn(a, axis=axis, keepdims=keepdims)
        if dtype is not None and np.dtype(dtype) != r.dtype:
            r = r.astype(np.dtype(dtype).name)
        return r
    return run


def _as_tensor(x):
    return x if isinstance(x, Tensor) else _tensor_from(x)


def _tensor_from(x):
    return from_numpy(np.asarray(x))


def _concatenate(arrays, axis=0, **kwargs):
    if kwargs.get("out") is not None:
        return NotImplemented
    arrays = [_as_tensor(a) for a in arrays]
    if axis is None:
        arrays, axis = [a.reshape_or_copy(-1) for a in arrays], 0
    return _indexing.concatenate(arrays, axis=axis)


def _chunk_einsum(subscripts, *operands, dtype=None, optimize="auto", casting=None, order=None,
                  **kwargs):
    if kwargs.get("out") is not None:
        return NotImplemented
    return _einsum(subscripts, *[_as_tensor(o) for o in operands], dtype=dtype,
                   optimize=optimize if optimize in ("auto", "greedy", "optimal", True, False)
                   else "auto")


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _tensordot(a, b, axes=2):
    """np.tensordot as one libtensor einsum."""
    a, b = _as_tensor(a), _as_tensor(b)
    if isinstance(axes, int):
        left, right = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        left, right = axes
        left = [left] if isinstance(left, int) else list(left)
        right = [right] if isinstance(right, int) else list(right)
    left = [i % a.ndim for i in left] if a.ndim else left
    right = [i % b.ndim for i in right] if b.ndim else right
    sa = list(_LETTERS[:a.ndim])
    sb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(left, right):
        sb[j] = sa[i]
    out = [c for i, c in enumerate(sa) if i not in left] + \
        [c for j, c in enumerate(sb) if j not in right]
    return _einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out)}", a, b)


def _transpose(a, axes=None):
    return a.transpose(*axes) if axes is not None else a.transpose()


def _reshape(a, newshape, order="C"):
    return a.reshape_or_copy(newshape) if order == "C" else NotImplemented


def _squeeze(a, axis=None):
    return a.squeeze(axis)


def _stack(arrays, axis=0, out=None):
    return _indexing.stack([_as_tensor(x) for x in arrays], axis=axis) if out is None \
        else NotImplemented


_FUNCTIONS = {
    np.sum: _reduction(_ops.sum), np.prod: _reduction(_ops.prod),
    np.min: _reduction(_ops.min), np.max: _reduction(_ops.max),
    np.amin: _reduction(_ops.min), np.amax: _reduction(_ops.max),
    np.mean: _reduction(_ops.mean),
    np.concatenate: _concatenate, np.einsum: _chunk_einsum, np.tensordot: _tensordot,
    np.transpose: _transpose, np.reshape: _reshape, np.squeeze: _squeeze, np.stack: _stack,
}


def _array_function(self, func, types, args, kwargs):
    """NumPy functions Dask applies to chunks run in libtensor (_FUNCTIONS); any other sees
    NumPy copies of the Tensors, as before this module was imported."""
    impl = _FUNCTIONS.get(func)
    if impl is not None:
        r = impl(*args, **kwargs)
        if r is not NotImplemented:
            return r
    return func(*_to_numpy(args), **_to_numpy(kwargs))


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    return method


# Installed on Tensor here, not in tensor.py: they change what NumPy functions return for
# Tensors (Tensors instead of arrays), which only Dask users ask for.
Tensor.__array_ufunc__ = _array_ufunc
Tensor.__array_function__ = _array_function
Tensor.__array_priority__ = 20.0  # dask's tensordot picks the chunk type of highest priority
for _name, _fn in {"sum": _FUNCTIONS[np.sum], "prod": _FUNCTIONS[np.prod],
                   "min": _FUNCTIONS[np.min], "max": _FUNCTIONS[np.max],
                   "mean": _FUNCTIONS[np.mean]}.items():
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _method(_fn))
del _name, _fn

concatenate_lookup.register(Tensor)(_concatenate)
tensordot_lookup.register(Tensor)(_tensordot)
einsum_lookup.register(Tensor)(_chunk_einsum)


def from_array(x, chunks="auto", **kwargs):
    """A dask array whose chunks are libtensor Tensors (views of one Tensor holding x)."""
    t = x if isinstance(x, Tensor) else _tensor_from(x)
    return da.from_array(t, chunks=chunks, asarray=False, **kwargs)


def as_tensor_chunks(x):
    """The dask array x with each chunk converted to a Tensor."""
    meta = from_numpy(np.empty((0,) * x.ndim, x.dtype))
    return x.map_blocks(_tensor_from, dtype=x.dtype, meta=meta)


__all__ = ["einsum", "from_array", "as_tensor_chunks", "WorkerLostError"]

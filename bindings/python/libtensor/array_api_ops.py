# SPDX-License-Identifier: MIT
"""The array API namespace's statistics, searching, sorting, sets, manipulation and linear
algebra (re-exported by array_api.py, which holds dtypes, creation and elementwise functions).

Each function is one C operation or an exact composition of them: views (permute, reshape,
flip, broadcast), take/concatenate/where/sort/cumsum and einsum; nothing round-trips through
NumPy except index bookkeeping on host-side shapes."""
import builtins
import operator
from collections import namedtuple

import numpy as np

from . import array_api_base as _xp
from . import indexing as _ix
from . import ops as _ops
from . import stats as _stats
from .einsum import einsum as _einsum
from .tensor import Tensor

_t, _dtype, _KINDS = _xp._t, _xp._dtype, _xp._KINDS
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _axes(axis, ndim, what="axis"):
    """Normalised axes (a tuple), or all of them for None; out of range or repeated: error."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < builtins.max(ndim, 1 if what == "insert" else ndim):
            raise IndexError(f"libtensor.array_api: {what} {a} is out of range for {ndim} axes")
        out.append(a % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"libtensor.array_api: repeated {what} in {axis}")
    return tuple(out)


# ---- statistics

def _sum_dtype(x, dtype):
    """The standard's accumulation dtype: the default integer of the same signedness for
    integers and bool (int64 / uint64), the input's dtype for floats, or `dtype`."""
    if dtype is not None:
        return _dtype(dtype)
    if x.dtype in _KINDS["unsigned integer"]:
        return _xp.uint64
    if x.dtype in _KINDS["signed integer"] or x.dtype == _xp.bool:
        return _xp.int64
    return x.dtype


def _reduce(fn, x, axis, keepdims, dtype=None):
    x = _t(x)
    axes = _axes(axis, x.ndim)
    if dtype is not None and x.dtype != dtype:
        x = x.contiguous(dtype)
    if not axes:  # nothing reduced: the values themselves
        return x.copy()
    out = fn(x, axis=list(axes), keepdims=keepdims)
    return out if dtype is None or out.dtype == dtype else out.contiguous(dtype)


def sum(x, /, *, axis=None, dtype=None, keepdims=False):  # noqa: A001
    x = _t(x)
    return _reduce(_ops.sum, x, axis, keepdims, _sum_dtype(x, dtype))


def prod(x, /, *, axis=None, dtype=None, keepdims=False):
    x = _t(x)
    return _reduce(_ops.prod, x, axis, keepdims, _sum_dtype(x, dtype))


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _extreme(_ops.max, x, axis, keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _extreme(_ops.min, x, axis, keepdims)


def _extreme(fn, x, axis, keepdims):
    x = _t(x)
    if x.size == 0 and any(x.shape[a] == 0 for a in _axes(axis, x.ndim)):
        raise ValueError("libtensor.array_api: max/min of an empty axis has no identity")
    out = _reduce(fn, x, axis, keepdims)
    return out if out.dtype == x.dtype else out.contiguous(x.dtype)


def mean(x, /, *, axis=None, keepdims=False):
    x = _t(x)
    if x.dtype not in _KINDS["real floating"]:
        raise TypeError("libtensor.array_api: mean needs a real floating array")
    return _reduce(_ops.mean, x, axis, keepdims)


def _moment(fn, x, axis, correction, keepdims):
    x = _t(x)
    if x.dtype not in _KINDS["real floating"]:
        raise TypeError("libtensor.array_api: var/std need a real floating array")
    axes = _axes(axis, x.ndim)
    if not axes:  # one value per result: 0 / (1 - correction), NaN for NaN and infinities
        v = _ops.divide(_ops.square(_ops.subtract(x, x)), _xp._scalar_like(1.0 - correction, x))
        return v if fn is _stats.var else _ops.sqrt(v)
    return fn(x, axis=list(axes), ddof=correction, keepdims=keepdims)


def var(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _moment(_stats.var, x, axis, correction, keepdims)


def std(x, /, *, axis=None, correction=0.0, keepdims=False):
    return _moment(_stats.std, x, axis, correction, keepdims)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    x = _t(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("libtensor.array_api: cumulative_sum needs axis for ndim != 1")
        axis = 0
    axis = _axes(axis, x.ndim)[0]
    dt = _sum_dtype(x, dtype)
    x = x if x.dtype == dt else x.contiguous(dt)
    out = _stats.cumsum(x, axis) if x.shape[axis] else x.copy()
    if out.dtype != dt:  # integer scans run in 64 bits, exact modulo 2^64: narrowing wraps
        out = out.contiguous(dt)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        out = _ix.concatenate([_xp.zeros(tuple(shape), dtype=dt, device=x.context), out], axis)
    return out


def _logical(fn, x, axis, keepdims):
    x = _t(x)
    b = x if x.dtype == _xp.bool else _ops.not_equal(x, _xp._scalar_like(0, x))
    if b.size == 0:
        b = b.contiguous(_xp.int8)
    out = _reduce(fn, b, axis, keepdims)
    return out if out.dtype == _xp.bool else _ops.not_equal(out, _xp._scalar_like(0, out))


def all(x, /, *, axis=None, keepdims=False):  # noqa: A001
    x = _t(x)
    if x.size == 0:
        shape = _reduced_shape(x, axis, keepdims)
        return _xp.full(shape, True, device=x.context)
    return _logical(_ops.min, x, axis, keepdims)


def any(x, /, *, axis=None, keepdims=False):  # noqa: A001
    x = _t(x)
    if x.size == 0:
        return _xp.full(_reduced_shape(x, axis, keepdims), False, device=x.context)
    return _logical(_ops.max, x, axis, keepdims)


def _reduced_shape(x, axis, keepdims):
    axes = _axes(axis, x.ndim)
    return tuple(1 if i in axes else n for i, n in enumerate(x.shape)
                 if keepdims or i not in axes)


# ---- searching and sorting

def argmax(x, /, *, axis=None, keepdims=False):
    return _ops.argmax(_t(x), axis=axis, keepdims=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    return _ops.argmin(_t(x), axis=axis, keepdims=keepdims)


def nonzero(x, /):
    x = _t(x)
    if x.ndim == 0:
        raise ValueError("libtensor.array_api: nonzero needs an array of rank >= 1")
    rows = _ix.argwhere(x)  # (count, ndim) int64
    return tuple(rows[:, i].copy() for i in range(x.ndim))


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    """Indices where x2's values would go into the sorted 1-D x1: the count of x1's values
    below each one (side left), or at most it (side right), by a broadcast compare and sum
    (O(len(x1) * x2.size), exact; NaN sorts last as in sort)."""
    if side not in ("left", "right"):
        raise ValueError(f"libtensor.array_api: side must be left or right, not {side!r}")
    a, v = _t(x1), _t(x2)
    if a.ndim != 1:
        raise ValueError("libtensor.array_api: searchsorted needs a 1-d x1")
    if sorter is not None:
        a = take(a, sorter)
    a_col = a.reshape((a.size,) + (1,) * v.ndim)
    nan_a, nan_v = _ops.isnan(a_col), _ops.isnan(v)
    if side == "left":  # a < v, NaN above every number
        before = _ops.logical_or(_ops.less(a_col, v),
                                 _ops.logical_and(nan_v, _ops.logical_not(nan_a)))
    else:  # a <= v
        before = _ops.logical_or(_ops.less_equal(a_col, v), nan_v)
    if a.size == 0:
        return _xp.zeros(v.shape, dtype=_xp.int64, device=v.context)
    return _ops.sum(before.contiguous(_xp.int64), axis=[0])


def sort(x, /, *, axis=-1, descending=False, stable=True):
    return _ix.sort(_t(x), axis=axis, descending=descending)


def argsort(x, /, *, axis=-1, descending=False, stable=True):
    return _ix.argsort(_t(x), axis=axis, descending=descending)


# ---- sets (sort-based, as NumPy: each NaN is a value of its own)

def _unique_parts(x):
    flat = _t(x).reshape_or_copy((-1,))
    order = _ix.argsort(flat)
    s = _ix.take(flat, order)
    n = s.size
    if n == 0:
        first = _xp.zeros((0,), dtype=_xp.bool, device=flat.context)
    else:
        head = _xp.full((1,), True, device=flat.context)
        first = _ix.concatenate([head, _ops.not_equal(s[1:], s[:-1])]) if n > 1 else head
    return flat, order, s, first


def unique_values(x, /):
    _, _, s, first = _unique_parts(x)
    return s[first] if s.size else s.copy()


def unique_counts(x, /):
    _, _, s, first = _unique_parts(x)
    return _UniqueCounts(_values(s, first), _counts(first, s.size))


def unique_inverse(x, /):
    x = _t(x)
    _, order, s, first = _unique_parts(x)
    return _UniqueInverse(_values(s, first), _inverse(order, first, x.shape))


def unique_all(x, /):
    x = _t(x)
    _, order, s, first = _unique_parts(x)
    indices = order[first] if s.size else order.copy()
    return _UniqueAll(_values(s, first), indices, _inverse(order, first, x.shape),
                      _counts(first, s.size))


def _values(s, first):
    return s[first] if s.size else s.copy()


def _counts(first, n):
    starts = _ix.argwhere(first).reshape((-1,)) if n else _xp.zeros((0,), dtype=_xp.int64)
    if n == 0:
        return starts
    ends = _ix.concatenate([starts[1:], _xp.full((1,), n, dtype=_xp.int64,
                                                 device=starts.context)])
    return _ops.subtract(ends, starts)


def _inverse(order, first, shape):
    if order.size == 0:
        return _xp.zeros(shape, dtype=_xp.int64, device=order.context)
    group = _ops.subtract(_stats.cumsum(first.contiguous(_xp.int64), 0), 1)
    back = _ix.argsort(order)  # the inverse permutation
    return _ix.take(group, back).reshape(shape)


_UniqueAll = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
_UniqueCounts = namedtuple("UniqueCountsResult", "values counts")
_UniqueInverse = namedtuple("UniqueInverseResult", "values inverse_indices")


# ---- manipulation (zero-copy views where the standard allows)

def reshape(x, /, shape, *, copy=None):
    x = _t(x)
    shape = tuple(operator.index(n) for n in shape)
    if copy:
        return x.copy().reshape(shape)
    if copy is False:
        return x.view(shape)  # never a copy: ValueError-like NotViewableError otherwise
    return x.reshape(shape)


def permute_dims(x, /, axes):
    x = _t(x)
    axes = _axes(tuple(axes), x.ndim)
    if len(axes) != x.ndim:
        raise ValueError(f"libtensor.array_api: permute_dims needs {x.ndim} axes")
    return x.permute(*axes)


def matrix_transpose(x, /):
    x = _t(x)
    if x.ndim < 2:
        raise ValueError("libtensor.array_api: matrix_transpose needs at least 2 axes")
    return x.swapaxes(-1, -2)


def moveaxis(x, source, destination, /):
    x = _t(x)
    src, dst = _axes(source, x.ndim), _axes(destination, x.ndim)
    if len(src) != len(dst):
        raise ValueError("libtensor.array_api: moveaxis needs as many sources as destinations")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.permute(*order)


def expand_dims(x, /, axis=0):
    x = _t(x)
    axis = operator.index(axis)
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise IndexError(f"libtensor.array_api: axis {axis} is out of range for expand_dims")
    return x.unsqueeze(axis % (x.ndim + 1))


def squeeze(x, /, axis):
    x = _t(x)
    axes = _axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"libtensor.array_api: squeeze: axis {a} has extent {x.shape[a]}")
    return x.reshape(tuple(n for i, n in enumerate(x.shape) if i not in axes))


def flip(x, /, *, axis=None):
    x = _t(x)
    out = x
    for a in _axes(axis, x.ndim):
        out = out.flip(a)
    return out


def broadcast_to(x, /, shape):
    return _t(x).broadcast_to(tuple(shape))


def broadcast_arrays(*arrays):
    arrays = [_t(a) for a in arrays]
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    return [a.broadcast_to(shape) for a in arrays]


def concat(arrays, /, *, axis=0):
    arrays = [_t(a) for a in arrays]
    dt = _xp.result_type(*arrays)
    arrays = [a if a.dtype == dt else a.contiguous(dt) for a in arrays]
    out = _ix.concatenate(arrays, axis)
    return out.copy() if builtins.any(out.shares_storage(a) for a in arrays) else out


def stack(arrays, /, *, axis=0):
    arrays = [_t(a) for a in arrays]
    dt = _xp.result_type(*arrays)
    return _ix.stack([a if a.dtype == dt else a.contiguous(dt) for a in arrays], axis)


def unstack(x, /, *, axis=0):
    x = _t(x)
    axis = _axes(axis, x.ndim)[0]
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


def roll(x, /, shift, *, axis=None):
    x = _t(x)
    if axis is None:
        return roll(x.reshape_or_copy((-1,)), shift, axis=0).reshape(x.shape)
    shifts = shift if isinstance(shift, tuple) else (shift,)
    axes = axis if isinstance(axis, tuple) else (axis,)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError("libtensor.array_api: roll needs one shift per axis")
    out = x
    for s, a in zip(shifts, axes):
        a = _axes(a, x.ndim)[0]
        n = x.shape[a]
        s = operator.index(s) % n if n else 0
        if s:
            lead = (slice(None),) * a
            out = _ix.concatenate([out[lead + (slice(n - s, None),)],
                                   out[lead + (slice(0, n - s),)]], a)
    return out.copy() if out is x else out


def repeat(x, repeats, /, *, axis=None):
    x = _t(x)
    if axis is None:
        x, axis = x.reshape_or_copy((-1,)), 0
    axis = _axes(axis, x.ndim)[0]
    n = x.shape[axis]
    if isinstance(repeats, Tensor):
        counts = repeats.numpy().astype(np.int64).reshape(-1)
    else:
        counts = np.asarray(repeats, dtype=np.int64).reshape(-1)
    if counts.size == 1:
        counts = np.repeat(counts, n)
    if counts.size != n or (counts < 0).any():
        raise ValueError("libtensor.array_api: repeats must be non-negative, one per element")
    index = np.repeat(np.arange(n, dtype=np.int64), counts)  # host-side index bookkeeping
    return _ix.take(x, index, axis)


def tile(x, repetitions, /):
    x = _t(x)
    reps = tuple(operator.index(r) for r in repetitions)
    nd = builtins.max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    shape = (1,) * (nd - x.ndim) + x.shape
    # interleave a repetition axis before each axis, broadcast it, then merge the pairs
    view = x.reshape_or_copy(tuple(v for n in shape for v in (1, n)))
    big = view.broadcast_to(tuple(v for r, n in zip(reps, shape) for v in (r, n)))
    return big.reshape_or_copy(tuple(r * n for r, n in zip(reps, shape)))


def take(x, indices, /, *, axis=None):
    x = _t(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("libtensor.array_api: take needs axis for ndim != 1")
        axis = 0
    return _ix.take(x, _t(indices), axis)


# ---- linear algebra (einsum underneath)

def _promoted(x1, x2):
    a, b = _xp._pair(x1, x2)
    dt = _xp.result_type(a, b)
    return (a if a.dtype == dt else a.contiguous(dt)), (b if b.dtype == dt else b.contiguous(dt))


def matmul(x1, x2, /):
    a, b = _promoted(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("libtensor.array_api: matmul does not take 0-d operands")
    if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
        raise ValueError(f"libtensor.array_api: matmul shapes {a.shape} and {b.shape} do not "
                         "match")
    if a.ndim == 1 and b.ndim == 1:
        return _einsum("i,i->", a, b)
    if a.ndim == 1:
        return _einsum("j,...jk->...k", a, b)
    if b.ndim == 1:
        return _einsum("...ij,j->...i", a, b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = a.broadcast_to(batch + a.shape[-2:])
    b = b.broadcast_to(batch + b.shape[-2:])
    return _einsum("...ij,...jk->...ik", a, b)


def tensordot(x1, x2, /, *, axes=2):
    a, b = _promoted(x1, x2)
    if isinstance(axes, int):
        if axes < 0 or axes > builtins.min(a.ndim, b.ndim):
            raise ValueError(f"libtensor.array_api: tensordot axes={axes} is out of range")
        axes = (list(range(a.ndim - axes, a.ndim)), list(range(axes)))
    ax_a, ax_b = [x % a.ndim for x in axes[0]], [x % b.ndim for x in axes[1]]
    la = list(_LETTERS[:a.ndim])
    lb = list(_LETTERS[a.ndim:a.ndim + b.ndim])
    for i, j in zip(ax_a, ax_b):
        if a.shape[i] != b.shape[j]:
            raise ValueError("libtensor.array_api: tensordot contracted axes differ in extent")
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in ax_a] + \
        [c for j, c in enumerate(lb) if j not in ax_b]
    return _einsum(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


def vecdot(x1, x2, /, *, axis=-1):
    a, b = _promoted(x1, x2)
    shape = np.broadcast_shapes(a.shape, b.shape)
    n = len(shape)
    if not -n <= axis < n or a.shape[axis] != b.shape[axis]:
        raise ValueError("libtensor.array_api: vecdot axis is out of range or differs")
    a, b = a.broadcast_to(shape), b.broadcast_to(shape)
    axis %= n
    letters = _LETTERS[:n]
    out = letters[:axis] + letters[axis + 1:]
    return _einsum(f"{letters},{letters}->{out}", a, b)


__all__ = ["sum", "prod", "max", "min", "mean", "var", "std", "cumulative_sum", "all", "any",
           "argmax", "argmin", "nonzero", "searchsorted", "sort", "argsort", "unique_values",
           "unique_counts", "unique_inverse", "unique_all", "reshape", "permute_dims",
           "matrix_transpose", "moveaxis", "expand_dims", "squeeze", "flip", "broadcast_to",
           "broadcast_arrays", "concat", "stack", "unstack", "roll", "repeat", "tile", "take",
           "matmul", "tensordot", "vecdot"]

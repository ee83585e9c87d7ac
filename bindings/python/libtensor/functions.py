# SPDX-License-Identifier: MIT
"""NumPy's module functions that are views, compositions or aliases of what the package has:
reshape, transpose, squeeze, expand_dims, flip, swapaxes, moveaxis, ravel, nonzero, where with
one argument, dot, outer, isclose, allclose, array_equal, count_nonzero, vstack, hstack,
asarray, array, and NumPy's dtype names (lt.float32, ...). NumPy inputs give NumPy results,
Tensors give Tensors, as everywhere in the package. Sits on top with methods."""
import builtins

import numpy as np

from . import array_api_ops as _xp_ops
from . import ops as _ops
from .convert import operands, result
from .einsum import matmul
from .indexing import argwhere, concatenate
from .methods import all, any  # noqa: A004 (NumPy's names)
from .tensor import Tensor, tensor

bool_, int8, int16, int32, int64 = np.bool_, np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64, bfloat16 = np.float16, np.float32, np.float64, "bfloat16"

_NONE = object()


def _on(a, fn):
    (t,), numpy_out = operands([a])
    return result(fn(t), numpy_out)


def reshape(a, shape):
    """np.reshape: a view when the strides allow it, else a copy."""
    return _on(a, lambda t: t.reshape(shape))


def transpose(a, axes=None):
    return _on(a, lambda t: t.transpose(*(() if axes is None else axes)))


def squeeze(a, axis=None):
    return _on(a, lambda t: t.squeeze(axis))


def expand_dims(a, axis):
    """np.expand_dims; a tuple of axes inserts several (positions in the result)."""
    def expand(t):
        axes = axis if isinstance(axis, tuple) else (axis,)
        ndim = t.ndim + len(axes)
        for ax in sorted(x % ndim for x in axes):
            t = t.unsqueeze(ax)
        return t
    return _on(a, expand)


def flip(a, axis=None):
    return _on(a, lambda t: t.flip(axis))


def swapaxes(a, axis1, axis2):
    return _on(a, lambda t: t.swapaxes(axis1, axis2))


def moveaxis(a, source, destination):
    """np.moveaxis: a view with the axes `source` moved to `destination`."""
    def axes(x):  # NumPy takes lists too
        return tuple(x) if isinstance(x, list) else x
    return _on(a, lambda t: _xp_ops.moveaxis(t, axes(source), axes(destination)))


def ravel(a):
    return _on(a, lambda t: t.reshape(-1))


def nonzero(a):
    """np.nonzero: a tuple of int64 index arrays, one per axis, in C order."""
    (t,), numpy_out = operands([a])
    if t.ndim == 0:
        raise ValueError("libtensor: nonzero of a 0-d array is not defined (NumPy 2 refuses it)")
    at = argwhere(t)
    return tuple(result(at[:, k].copy(), numpy_out) for k in range(t.ndim))


def where(condition, x=_NONE, y=_NONE, out=None):
    """np.where: elementwise choice, or with the condition alone its nonzero()."""
    if x is _NONE and y is _NONE:
        return nonzero(condition)
    if x is _NONE or y is _NONE:
        raise ValueError("libtensor: where takes both x and y, or neither")
    return _ops.where(condition, x, y, out)


def dot(a, b, out=None):
    """np.dot for vectors and matrices (matmul); scalars multiply."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _ops.multiply(a, b, out)
    return matmul(a, b, out=out)


def outer(a, b, out=None):
    (ta, tb), numpy_out = operands([a, b])
    r = _ops.multiply(ta.reshape(-1, 1), tb.reshape(1, -1))
    return result(r, numpy_out) if out is None else _ops.contiguous(r, out=out)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """np.isclose: |a - b| <= atol + rtol * |b|, infinities equal to themselves."""
    close = _ops.less_equal(_ops.abs(_ops.subtract(a, b)),
                            _ops.add(atol, _ops.multiply(rtol, _ops.abs(b))))
    close = _ops.logical_or(close, _ops.equal(a, b))  # inf == inf (their difference is NaN)
    if equal_nan:
        close = _ops.logical_or(close, _ops.logical_and(_ops.isnan(a), _ops.isnan(b)))
    return close


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(all(isclose(a, b, rtol, atol, equal_nan)))


def array_equal(a1, a2, equal_nan=False):
    if np.shape(a1) != np.shape(a2):
        return False
    same = _ops.equal(a1, a2)
    if equal_nan:
        same = _ops.logical_or(same, _ops.logical_and(_ops.isnan(a1), _ops.isnan(a2)))
    return bool(all(same))


def count_nonzero(a, axis=None, keepdims=False):
    (t,), numpy_out = operands([a])
    return result(_ops.sum(_ops.not_equal(t, 0), axis=axis, keepdims=keepdims), numpy_out)


def vstack(arrays):
    parts = [p if np.ndim(p) >= 2 else reshape(p, (1, -1)) for p in arrays]
    return concatenate(parts, axis=0)


def hstack(arrays):
    parts = list(arrays)
    return concatenate(parts, axis=0 if builtins.all(np.ndim(p) == 1 for p in parts) else 1)


def asarray(a, dtype=None, device=None):
    """A Tensor of `a` (zero-copy for a NumPy array on the CPU when no conversion is needed)."""
    return a if isinstance(a, Tensor) and dtype is None and device is None else \
        tensor(a, dtype=dtype, device=device)


def array(a, dtype=None, device=None, copy=True):
    return tensor(a, dtype=dtype, device=device, copy=copy)


absolute, true_divide = _ops.abs, _ops.divide


def positive(a, out=None):
    return _ops.contiguous(a, out=out)


__all__ = ["reshape", "transpose", "squeeze", "expand_dims", "flip", "swapaxes", "moveaxis",
           "ravel", "nonzero", "where", "dot", "outer", "isclose", "allclose", "array_equal",
           "count_nonzero", "vstack", "hstack", "asarray", "array", "absolute", "true_divide",
           "positive", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
           "uint64", "float16", "float32", "float64", "bfloat16"]

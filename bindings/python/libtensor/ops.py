"""Elementwise operations, reductions and permutations, NumPy style.

(This module defines sum/min/max/abs like NumPy: the builtins are not used below their
definitions.)

Each function takes Tensors, NumPy arrays or scalars. With NumPy inputs (no Tensor among them)
the result is a NumPy array (owning its storage through the library's result tensor); with a
Tensor among the inputs it is a Tensor on that tensor's context."""

import numpy as np

from . import _lib
from .context import context
from .tensor import Tensor, _new, from_numpy

_BINARY = {"add": 0, "multiply": 1, "minimum": 2, "maximum": 3, "subtract": 4, "divide": 5,
           "power": 6}
_UNARY = {"negative": 1, "abs": 2, "sqrt": 3, "exp": 4, "log": 5, "sin": 6, "cos": 7, "tanh": 8,
          "sigmoid": 9, "relu": 10, "reciprocal": 11, "square": 12}
_REDUCE = {"sum": 0, "prod": 1, "min": 2, "max": 3, "mean": 4, "sumsq": 5, "maxabs": 6}


def _is_scalar(x):
    return isinstance(x, (int, float, np.number)) and not isinstance(x, bool)


def _float_dtype(v):
    """The NumPy float dtype of an array or Tensor operand, else None."""
    if _is_scalar(v) or isinstance(getattr(v, "dtype", None), str):
        return None
    dt = getattr(v, "dtype", None)
    return dt if isinstance(dt, np.dtype) and dt.kind == "f" else None


def operands(values, device=None):
    """Tensors for `values` on one context (a Tensor's if any is given, else `device`'s), and
    whether the caller passed only NumPy data (so results go back as NumPy arrays)."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    ctx = tensors[0].context if tensors and device is None else context(device)
    like = next((d for d in map(_float_dtype, values) if d is not None), None)
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v if v.context is ctx else v.to(ctx))
        elif _is_scalar(v) and like is not None and not isinstance(v, np.generic):
            # NumPy keeps the array's float dtype for Python scalars; so do we.
            out.append(from_numpy(np.asarray(v, dtype=like), ctx))
        else:
            out.append(from_numpy(v, ctx))
    return out, not tensors


def result(t, numpy_out):
    if not numpy_out:
        return t
    arr = t.numpy()
    return arr[()] if arr.ndim == 0 else arr


def _binary(name, a, b):
    (ta, tb), numpy_out = operands([a, b])
    return result(_new("lt_binary", ta.context, _BINARY[name], ta.handle, tb.handle), numpy_out)


def _unary(name, a):
    (ta,), numpy_out = operands([a])
    return result(_new("lt_unary", ta.context, _UNARY[name], ta.handle), numpy_out)


def add(a, b): return _binary("add", a, b)
def subtract(a, b): return _binary("subtract", a, b)
def multiply(a, b): return _binary("multiply", a, b)
def divide(a, b): return _binary("divide", a, b)
def minimum(a, b): return _binary("minimum", a, b)
def maximum(a, b): return _binary("maximum", a, b)
def power(a, b): return _binary("power", a, b)


def negative(a): return _unary("negative", a)
def abs(a): return _unary("abs", a)  # noqa: A001 (NumPy's name)
def sqrt(a): return _unary("sqrt", a)
def exp(a): return _unary("exp", a)
def log(a): return _unary("log", a)
def sin(a): return _unary("sin", a)
def cos(a): return _unary("cos", a)
def tanh(a): return _unary("tanh", a)
def sigmoid(a): return _unary("sigmoid", a)
def relu(a): return _unary("relu", a)
def reciprocal(a): return _unary("reciprocal", a)
def square(a): return _unary("square", a)


sub, mul, div, neg = subtract, multiply, divide, negative


def _axes(axis, ndim):
    if axis is None:
        return None
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = _lib.as_int(a, 32, "axis")  # as NumPy: 1.0 or (0, 1) inside a tuple is a TypeError
        if not -ndim <= a < ndim:
            from .errors import OutOfRangeError
            raise OutOfRangeError(f"libtensor: axis {a} is out of range for {ndim} axes", -5)
        out.append(a % ndim)
    return out


def _reduce(name, a, axis, keepdims):
    (ta,), numpy_out = operands([a])
    axes = _axes(axis, ta.ndim)
    n = -1 if axes is None else len(axes)
    return result(_new("lt_reduce", ta.context, _REDUCE[name], ta.handle, n,
                       _lib.int_array(axes or []), bool(keepdims)), numpy_out)


def sum(a, axis=None, keepdims=False): return _reduce("sum", a, axis, keepdims)  # noqa: A001
def prod(a, axis=None, keepdims=False): return _reduce("prod", a, axis, keepdims)
def min(a, axis=None, keepdims=False): return _reduce("min", a, axis, keepdims)  # noqa: A001
def max(a, axis=None, keepdims=False): return _reduce("max", a, axis, keepdims)  # noqa: A001
def mean(a, axis=None, keepdims=False): return _reduce("mean", a, axis, keepdims)


amin, amax = min, max


def _arg(fn_name, a, axis, keepdims):
    (ta,), numpy_out = operands([a])
    if axis is None:
        flat = ta.reshape_or_copy(-1)
        t = _new(fn_name, ta.context, flat.handle, 0)
        if keepdims:
            t = t.reshape([1] * ta.ndim)
    else:
        axis = _lib.as_int(axis, 32, "axis")  # one axis: argmax over several is not defined
        t = _new(fn_name, ta.context, ta.handle, axis)
        if keepdims:
            t = t.unsqueeze(axis % ta.ndim)
    return result(t, numpy_out)


def argmax(a, axis=None, keepdims=False): return _arg("lt_argmax", a, axis, keepdims)
def argmin(a, axis=None, keepdims=False): return _arg("lt_argmin", a, axis, keepdims)


def permute(a, axes=None):
    """Materialised transpose: a C-contiguous copy with axes reordered (np.transpose + copy)."""
    (ta,), numpy_out = operands([a])
    axes = list(range(ta.ndim - 1, -1, -1)) if axes is None else [int(x) for x in axes]
    if len(axes) != ta.ndim:
        from .errors import InvalidArgumentError
        raise InvalidArgumentError(f"libtensor: permute needs {ta.ndim} axes, got {len(axes)}",
                                   -1)
    return result(_new("lt_permute", ta.context, ta.handle, _lib.int_array(axes)), numpy_out)


def contiguous(a, dtype=None):
    (ta,), numpy_out = operands([a])
    return result(ta.contiguous(dtype), numpy_out)


__all__ = list(_BINARY) + list(_UNARY) + list(_REDUCE)[:5] + [
    "sub", "mul", "div", "neg", "amin", "amax", "argmax", "argmin", "permute", "contiguous"]

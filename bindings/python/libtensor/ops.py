"""Elementwise operations, reductions and permutations, NumPy style.

(This module defines sum/min/max/abs like NumPy: the builtins are not used below their
definitions.)

Each function takes Tensors, NumPy arrays or scalars. With NumPy inputs (no Tensor among them)
the result is a NumPy array (owning its storage through the library's result tensor); with a
Tensor among the inputs it is a Tensor on that tensor's context. Tensors on different devices
(or contexts) in one call raise ContextMismatchError: nothing is moved implicitly, Tensor.to()
moves (see convert). Also installs Tensor's arithmetic operators."""

from . import _lib, enums
from .convert import deliver, operands, result
from .errors import InvalidArgumentError, OutOfRangeError
from .tensor import Tensor, _new, check_writeable

_BINARY = {"add": enums.LT_BINARY_ADD, "multiply": enums.LT_BINARY_MUL,
           "minimum": enums.LT_BINARY_MIN, "maximum": enums.LT_BINARY_MAX,
           "subtract": enums.LT_BINARY_SUB, "divide": enums.LT_BINARY_DIV,
           "power": enums.LT_BINARY_POW}
_UNARY = {"negative": enums.LT_UNARY_NEG, "abs": enums.LT_UNARY_ABS,
          "sqrt": enums.LT_UNARY_SQRT, "exp": enums.LT_UNARY_EXP, "log": enums.LT_UNARY_LOG,
          "sin": enums.LT_UNARY_SIN, "cos": enums.LT_UNARY_COS, "tanh": enums.LT_UNARY_TANH,
          "sigmoid": enums.LT_UNARY_SIGMOID, "relu": enums.LT_UNARY_RELU,
          "reciprocal": enums.LT_UNARY_RECIPROCAL, "square": enums.LT_UNARY_SQUARE}
_REDUCE = {"sum": enums.LT_REDUCE_SUM, "prod": enums.LT_REDUCE_PROD,
           "min": enums.LT_REDUCE_MIN, "max": enums.LT_REDUCE_MAX, "mean": enums.LT_REDUCE_MEAN,
           "sumsq": enums.LT_REDUCE_SUMSQ, "maxabs": enums.LT_REDUCE_MAXABS}


# Every operation takes out= (a Tensor, or a NumPy array): the result is written into it
# (converted to its dtype; elementwise results broadcast to its shape, as in NumPy) and it is
# returned. With out= on a CPU NumPy array or any Tensor the write goes into its own storage.
def _binary(name, a, b, out=None):
    (ta, tb), numpy_out = operands([a, b])
    t = _new("lt_binary", ta.context, _BINARY[name], ta.handle, tb.handle)
    return deliver(t, out, numpy_out, broadcast=True)


def _unary(name, a, out=None):
    (ta,), numpy_out = operands([a])
    return deliver(_new("lt_unary", ta.context, _UNARY[name], ta.handle), out, numpy_out, True)


def add(a, b, out=None): return _binary("add", a, b, out)
def subtract(a, b, out=None): return _binary("subtract", a, b, out)
def multiply(a, b, out=None): return _binary("multiply", a, b, out)
def divide(a, b, out=None): return _binary("divide", a, b, out)
def minimum(a, b, out=None): return _binary("minimum", a, b, out)
def maximum(a, b, out=None): return _binary("maximum", a, b, out)
def power(a, b, out=None): return _binary("power", a, b, out)


def negative(a, out=None): return _unary("negative", a, out)
def abs(a, out=None): return _unary("abs", a, out)  # noqa: A001 (NumPy's name)
def sqrt(a, out=None): return _unary("sqrt", a, out)
def exp(a, out=None): return _unary("exp", a, out)
def log(a, out=None): return _unary("log", a, out)
def sin(a, out=None): return _unary("sin", a, out)
def cos(a, out=None): return _unary("cos", a, out)
def tanh(a, out=None): return _unary("tanh", a, out)
def sigmoid(a, out=None): return _unary("sigmoid", a, out)
def relu(a, out=None): return _unary("relu", a, out)
def reciprocal(a, out=None): return _unary("reciprocal", a, out)
def square(a, out=None): return _unary("square", a, out)


sub, mul, div, neg = subtract, multiply, divide, negative


def _axes(axis, ndim):
    if axis is None:
        return None
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = _lib.as_int(a, 32, "axis")  # as NumPy: 1.0 or (0, 1) inside a tuple is a TypeError
        if not -ndim <= a < ndim:
            raise OutOfRangeError(f"libtensor: axis {a} is out of range for {ndim} axes",
                                  enums.LT_ERR_OUT_OF_RANGE)
        out.append(a % ndim)
    return out


def _reduce(name, a, axis, keepdims, out=None):
    (ta,), numpy_out = operands([a])
    axes = _axes(axis, ta.ndim)
    n = -1 if axes is None else len(axes)
    return deliver(_new("lt_reduce", ta.context, _REDUCE[name], ta.handle, n,
                        _lib.int_array(axes or []), bool(keepdims)), out, numpy_out)


def sum(a, axis=None, keepdims=False, out=None):  # noqa: A001
    return _reduce("sum", a, axis, keepdims, out)


def prod(a, axis=None, keepdims=False, out=None):
    return _reduce("prod", a, axis, keepdims, out)


def min(a, axis=None, keepdims=False, out=None):  # noqa: A001
    return _reduce("min", a, axis, keepdims, out)


def max(a, axis=None, keepdims=False, out=None):  # noqa: A001
    return _reduce("max", a, axis, keepdims, out)


def mean(a, axis=None, keepdims=False, out=None):
    return _reduce("mean", a, axis, keepdims, out)


amin, amax = min, max


def _arg(fn_name, a, axis, keepdims, out=None):
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
    return deliver(t, out, numpy_out)


def argmax(a, axis=None, keepdims=False, out=None):
    return _arg("lt_argmax", a, axis, keepdims, out)


def argmin(a, axis=None, keepdims=False, out=None):
    return _arg("lt_argmin", a, axis, keepdims, out)


def permute(a, axes=None, out=None):
    """Materialised transpose: a C-contiguous copy with axes reordered (np.transpose + copy)."""
    (ta,), numpy_out = operands([a])
    axes = list(range(ta.ndim - 1, -1, -1)) if axes is None else [int(x) for x in axes]
    if len(axes) != ta.ndim:
        raise InvalidArgumentError(f"libtensor: permute needs {ta.ndim} axes, got {len(axes)}",
                                   enums.LT_ERR_INVALID_ARGUMENT)
    return deliver(_new("lt_permute", ta.context, ta.handle, _lib.int_array(axes)), out,
                   numpy_out)


def contiguous(a, dtype=None, out=None):
    (ta,), numpy_out = operands([a])
    return deliver(ta.contiguous(dtype), out, numpy_out)


def _inplace(fn):
    """t op= x: computes into t's own storage (also a wrapped NumPy array's) and returns t."""
    def method(self, other):
        check_writeable(self)
        fn(self, other, out=self)
        return self
    return method


# Tensor's operators: tensor.py sits below this module, so they are installed from here.
_OPERATORS = {
    "__add__": lambda self, other: add(self, other),
    "__radd__": lambda self, other: add(other, self),
    "__sub__": lambda self, other: subtract(self, other),
    "__rsub__": lambda self, other: subtract(other, self),
    "__mul__": lambda self, other: multiply(self, other),
    "__rmul__": lambda self, other: multiply(other, self),
    "__truediv__": lambda self, other: divide(self, other),
    "__rtruediv__": lambda self, other: divide(other, self),
    "__pow__": lambda self, other: power(self, other),
    "__neg__": lambda self: negative(self),
    "__iadd__": _inplace(add),
    "__isub__": _inplace(subtract),
    "__imul__": _inplace(multiply),
    "__itruediv__": _inplace(divide),
    "__ipow__": _inplace(power),
}
for _name, _method in _OPERATORS.items():
    _method.__name__, _method.__qualname__ = _name, f"Tensor.{_name}"
    setattr(Tensor, _name, _method)
del _name, _method

__all__ = list(_BINARY) + list(_UNARY) + list(_REDUCE)[:5] + [
    "sub", "mul", "div", "neg", "amin", "amax", "argmax", "argmin", "permute", "contiguous"]

# SPDX-License-Identifier: MIT
"""Elementwise operations, reductions and permutations, NumPy style.

(This module defines sum/min/max/abs like NumPy: the builtins are not used below their
definitions.)

Each function takes Tensors, NumPy arrays or scalars. With NumPy inputs (no Tensor among them)
the result is a NumPy array (owning its storage through the library's result tensor); with a
Tensor among the inputs it is a Tensor on that tensor's context. Tensors on different devices
(or contexts) in one call raise ContextMismatchError: nothing is moved implicitly, Tensor.to()
moves (see convert). Also installs Tensor's arithmetic operators."""

import builtins
import ctypes
import math

import numpy as np

from . import _lib, enums
from ._ext import FAST as _FAST
from .convert import (check_inplace, deliver, operands, out_tensor, promoted_dtype, result,
                      weak_scalar_bf16)
from .errors import InvalidArgumentError, OutOfRangeError, check
from .tensor import Tensor, _new, check_writeable, lt_dtype

_BINARY = {"add": enums.LT_BINARY_ADD, "multiply": enums.LT_BINARY_MUL,
           "minimum": enums.LT_BINARY_MIN, "maximum": enums.LT_BINARY_MAX,
           "subtract": enums.LT_BINARY_SUB, "divide": enums.LT_BINARY_DIV,
           "power": enums.LT_BINARY_POW,
           # issue 18 A
           "equal": enums.LT_BINARY_EQ, "not_equal": enums.LT_BINARY_NE,
           "less": enums.LT_BINARY_LT, "less_equal": enums.LT_BINARY_LE,
           "greater": enums.LT_BINARY_GT, "greater_equal": enums.LT_BINARY_GE,
           "logical_and": enums.LT_BINARY_LOGICAL_AND, "logical_or": enums.LT_BINARY_LOGICAL_OR,
           "logical_xor": enums.LT_BINARY_LOGICAL_XOR,
           "bitwise_and": enums.LT_BINARY_BITWISE_AND, "bitwise_or": enums.LT_BINARY_BITWISE_OR,
           "bitwise_xor": enums.LT_BINARY_BITWISE_XOR, "left_shift": enums.LT_BINARY_SHIFT_LEFT,
           "right_shift": enums.LT_BINARY_SHIFT_RIGHT,
           "floor_divide": enums.LT_BINARY_FLOOR_DIVIDE, "remainder": enums.LT_BINARY_REMAINDER,
           "fmod": enums.LT_BINARY_FMOD, "arctan2": enums.LT_BINARY_ATAN2,
           "hypot": enums.LT_BINARY_HYPOT}
_UNARY = {"negative": enums.LT_UNARY_NEG, "abs": enums.LT_UNARY_ABS,
          "sqrt": enums.LT_UNARY_SQRT, "exp": enums.LT_UNARY_EXP, "log": enums.LT_UNARY_LOG,
          "sin": enums.LT_UNARY_SIN, "cos": enums.LT_UNARY_COS, "tanh": enums.LT_UNARY_TANH,
          "sigmoid": enums.LT_UNARY_SIGMOID, "relu": enums.LT_UNARY_RELU,
          "reciprocal": enums.LT_UNARY_RECIPROCAL, "square": enums.LT_UNARY_SQUARE,
          # issue 18 A
          "log1p": enums.LT_UNARY_LOG1P, "expm1": enums.LT_UNARY_EXPM1,
          "floor": enums.LT_UNARY_FLOOR, "ceil": enums.LT_UNARY_CEIL, "rint": enums.LT_UNARY_ROUND,
          "trunc": enums.LT_UNARY_TRUNC, "sign": enums.LT_UNARY_SIGN, "erf": enums.LT_UNARY_ERF,
          "gelu": enums.LT_UNARY_GELU, "silu": enums.LT_UNARY_SILU,
          "softplus": enums.LT_UNARY_SOFTPLUS, "rsqrt": enums.LT_UNARY_RSQRT,
          "logical_not": enums.LT_UNARY_NOT, "invert": enums.LT_UNARY_INVERT,
          "isnan": enums.LT_UNARY_ISNAN, "isinf": enums.LT_UNARY_ISINF,
          "isfinite": enums.LT_UNARY_ISFINITE}
_REDUCE = {"sum": enums.LT_REDUCE_SUM, "prod": enums.LT_REDUCE_PROD,
           "min": enums.LT_REDUCE_MIN, "max": enums.LT_REDUCE_MAX, "mean": enums.LT_REDUCE_MEAN,
           "sumsq": enums.LT_REDUCE_SUMSQ, "maxabs": enums.LT_REDUCE_MAXABS}


def _new_result(handle, a, b):
    """A Tensor for the extension's new result handle, on the context of the first Tensor."""
    return Tensor(handle, (a if isinstance(a, Tensor) else b).context)


# Every operation takes out= (a Tensor, or a NumPy array): the result is written into it
# (converted to its dtype; elementwise results broadcast to its shape, as in NumPy) and it is
# returned. With out= on a CPU NumPy array or any Tensor the write goes into its own storage.
_PY_SCALARS = (float, int, bool)


_INT_RANGE = {}


_COMPARISONS = frozenset(("equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"))


# Binary ops whose result is a float or a bool: an integer scalar past the array's range is not
# cast to its dtype but taken as an int64 (or a float past that), as NumPy 2 computes them.
_FLOAT_FUNCTIONS = frozenset(("arctan2", "hypot", "copysign", "logaddexp"))
_FLOAT_OR_BOOL_RESULT = _FLOAT_FUNCTIONS | {"divide", "logical_and", "logical_or", "logical_xor"}


def _scalar_array(v, t, name):
    """Python scalar `v` beside Tensor or array `t` as the 0-d array NumPy 2 makes of it (a weak
    scalar: t's dtype where the kind allows and the value fits, else the scalar's default; the
    rule of convert._scalar_dtype, inlined here for its cost per call). An integer past t's
    integer range is NumPy 2's OverflowError for arithmetic; a comparison gets the exact
    answer (NumPy 2 compares such values too)."""
    dt, like = t.dtype, None
    if dt == "bfloat16" and type(v) in (float, int):
        return weak_scalar_bf16(v, t.context)
    kind = dt.kind if isinstance(dt, np.dtype) else ""
    if type(v) is float:
        like = dt if kind == "f" else None
    elif type(v) is int:
        if kind == "f":
            like = dt
        elif kind in ("i", "u"):
            lo_hi = _INT_RANGE.get(dt)
            if lo_hi is None:
                info = np.iinfo(dt)
                lo_hi = _INT_RANGE[dt] = (int(info.min), int(info.max))
            like = dt if lo_hi[0] <= v <= lo_hi[1] else None
            if like is None:
                if name in _COMPARISONS:
                    # past every value of the dtype: infinity of its sign compares the same and
                    # exactly (a u64 2**63 beside int64 compared in float64: 2**63 - 1 == 2**63)
                    return np.asarray(math.inf if v > 0 else -math.inf)
                if name in _FLOAT_FUNCTIONS:  # in the array's float (u8 beside -3: float16)
                    return np.asarray(float(v), dtype=np.result_type(dt, np.float16))
                if name in _FLOAT_OR_BOOL_RESULT:  # not cast to the array's dtype (NumPy 2)
                    return np.asarray(v if -2**63 <= v < 2**63 else float(v))
                raise OverflowError(f"libtensor: {name}: Python integer {v} out of bounds for "
                                    f"{dt} (NumPy 2's rule; convert the array or the scalar "
                                    "explicitly to compute in a wider type)")
        elif not -2**63 <= v < 2**63 and name not in _COMPARISONS and \
                name not in _FLOAT_OR_BOOL_RESULT:
            raise OverflowError(f"libtensor: {name}: Python integer {v} does not fit in int64 "
                                f"(NumPy 2's default integer) beside {dt}")
    return np.asarray(v, dtype=like)


def _binary(name, a, b, out=None):
    # A Python scalar beside a Tensor goes in as a 0-d array, which the extension wraps and runs
    # through a cached plan (as a scalar it fell to the general path: ~30 us a call).
    if type(a) in _PY_SCALARS and isinstance(b, (Tensor, np.ndarray)):
        a = _scalar_array(a, b, name)
    elif type(b) in _PY_SCALARS and isinstance(a, (Tensor, np.ndarray)):
        b = _scalar_array(b, a, name)
    if _FAST is not None:  # the C extension's one call; NotImplemented: what it leaves to us
        r = _FAST.binary(_BINARY[name], a, b, out)
        if r is not NotImplemented:
            return r if type(r) is not int else _new_result(r, a, b)
    (ta, tb), numpy_out = operands([a, b])
    t = _new("lt_binary", ta.context, _BINARY[name], ta.handle, tb.handle)
    return deliver(t, out, numpy_out, broadcast=True)


def _unary(name, a, out=None):
    if _FAST is not None:
        r = _FAST.unary(_UNARY[name], a, out)
        if r is not NotImplemented:
            return r if type(r) is not int else Tensor(r, a.context)
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

# issue 18 A: comparisons, logical and bitwise ops, integer division, the extra math.
def equal(a, b, out=None): return _binary("equal", a, b, out)
def not_equal(a, b, out=None): return _binary("not_equal", a, b, out)
def less(a, b, out=None): return _binary("less", a, b, out)
def less_equal(a, b, out=None): return _binary("less_equal", a, b, out)
def greater(a, b, out=None): return _binary("greater", a, b, out)
def greater_equal(a, b, out=None): return _binary("greater_equal", a, b, out)
def logical_and(a, b, out=None): return _binary("logical_and", a, b, out)
def logical_or(a, b, out=None): return _binary("logical_or", a, b, out)
def logical_xor(a, b, out=None): return _binary("logical_xor", a, b, out)
def bitwise_and(a, b, out=None): return _binary("bitwise_and", a, b, out)
def bitwise_or(a, b, out=None): return _binary("bitwise_or", a, b, out)
def bitwise_xor(a, b, out=None): return _binary("bitwise_xor", a, b, out)
def left_shift(a, b, out=None): return _binary("left_shift", a, b, out)
def right_shift(a, b, out=None): return _binary("right_shift", a, b, out)
def floor_divide(a, b, out=None): return _binary("floor_divide", a, b, out)
def remainder(a, b, out=None): return _binary("remainder", a, b, out)
def fmod(a, b, out=None): return _binary("fmod", a, b, out)
def arctan2(a, b, out=None): return _binary("arctan2", a, b, out)
def hypot(a, b, out=None): return _binary("hypot", a, b, out)


def log1p(a, out=None): return _unary("log1p", a, out)
def expm1(a, out=None): return _unary("expm1", a, out)
def floor(a, out=None): return _unary("floor", a, out)
def ceil(a, out=None): return _unary("ceil", a, out)
def rint(a, out=None):
    """Half to even; integers and bools give NumPy 2's float for them (int8 -> float16), the
    C op keeping integers as they are."""
    dt = getattr(a, "dtype", None)
    if isinstance(dt, np.dtype) and dt.kind in "biu":
        return contiguous(a, np.result_type(dt, np.float16), out=out)
    return _unary("rint", a, out)
def trunc(a, out=None): return _unary("trunc", a, out)
def sign(a, out=None): return _unary("sign", a, out)
def erf(a, out=None): return _unary("erf", a, out)
def gelu(a, out=None): return _unary("gelu", a, out)
def silu(a, out=None): return _unary("silu", a, out)
def softplus(a, out=None): return _unary("softplus", a, out)
def rsqrt(a, out=None): return _unary("rsqrt", a, out)
def logical_not(a, out=None): return _unary("logical_not", a, out)
def invert(a, out=None): return _unary("invert", a, out)
def isnan(a, out=None): return _unary("isnan", a, out)
def isinf(a, out=None): return _unary("isinf", a, out)
def isfinite(a, out=None): return _unary("isfinite", a, out)


# issue 20 B: the array API's remaining elementwise functions, under NumPy's names.
_UNARY.update({"tan": enums.LT_UNARY_TAN, "arcsin": enums.LT_UNARY_ASIN,
               "arccos": enums.LT_UNARY_ACOS, "arctan": enums.LT_UNARY_ATAN,
               "sinh": enums.LT_UNARY_SINH, "cosh": enums.LT_UNARY_COSH,
               "arcsinh": enums.LT_UNARY_ASINH, "arccosh": enums.LT_UNARY_ACOSH,
               "arctanh": enums.LT_UNARY_ATANH, "log2": enums.LT_UNARY_LOG2,
               "log10": enums.LT_UNARY_LOG10, "signbit": enums.LT_UNARY_SIGNBIT})
_BINARY.update({"copysign": enums.LT_BINARY_COPYSIGN, "logaddexp": enums.LT_BINARY_LOGADDEXP})
def tan(a, out=None): return _unary("tan", a, out)
def arcsin(a, out=None): return _unary("arcsin", a, out)
def arccos(a, out=None): return _unary("arccos", a, out)
def arctan(a, out=None): return _unary("arctan", a, out)
def sinh(a, out=None): return _unary("sinh", a, out)
def cosh(a, out=None): return _unary("cosh", a, out)
def arcsinh(a, out=None): return _unary("arcsinh", a, out)
def arccosh(a, out=None): return _unary("arccosh", a, out)
def arctanh(a, out=None): return _unary("arctanh", a, out)
def log2(a, out=None): return _unary("log2", a, out)
def log10(a, out=None): return _unary("log10", a, out)
def signbit(a, out=None): return _unary("signbit", a, out)
def copysign(a, b, out=None): return _binary("copysign", a, b, out)
def logaddexp(a, b, out=None): return _binary("logaddexp", a, b, out)


mod, bitwise_not, atan2 = remainder, invert, arctan2


def round(a, decimals=0, out=None):  # noqa: A001 (NumPy's name)
    """Half to even, as np.round; only decimals=0."""
    decimals = _lib.as_int(decimals, 32, "decimals")
    dt = getattr(a, "dtype", None)
    if isinstance(dt, np.dtype) and dt.kind in "iu":
        if decimals >= 0:  # NumPy rounds integers to themselves
            return contiguous(a, out=out)
        raise InvalidArgumentError("libtensor: round of integers to negative decimals is not "
                                   "supported", enums.LT_ERR_INVALID_ARGUMENT)
    if decimals == 0:
        return rint(a, out)
    # NumPy's own method: scale, round half to even, scale back
    scale = 10.0 ** decimals
    return divide(rint(multiply(a, scale)), scale, out)


def _into(name, ts, result_ts, out):
    """Runs lt_<name>_into straight into out= (one pass, no temporary result to copy) when out
    is a Tensor or a NumPy array the library wraps in place, of the result's dtype (other
    dtypes cast as NumPy does, through the general path). True when done; False leaves the call
    to the general path, also when out partly overlaps an input (NumPy buffers that case)."""
    if out is None:
        return False
    target = out_tensor(out, ts[0].context)
    if target is None or target.lt_dtype != promoted_dtype(result_ts):
        return False
    status = _lib.fn(f"lt_{name}_into")(*[t.handle for t in ts], target.handle)
    if status == enums.STATUS["LT_ERR_ALIASING"]:
        return False
    check(status)
    return True


def where(cond, a, b, out=None):
    """cond ? a : b with broadcasting; a non-bool cond means cond != 0 (as NumPy)."""
    (tc, ta, tb), numpy_out = operands([cond, a, b])
    if tc.lt_dtype != enums.LT_BOOL:
        (zero,), _ = operands([0], tc.context)
        tc = _new("lt_binary", tc.context, enums.LT_BINARY_NE, tc.handle, zero.handle)
    if _into("where", (tc, ta, tb), (ta, tb), out):
        return out
    return deliver(_new("lt_where", ta.context, tc.handle, ta.handle, tb.handle), out, numpy_out)


def _clip_bound(v, a):
    """An integer clip bound past an integer array's range saturates to it (NumPy 2 keeps the
    array's dtype there: such a bound never binds)."""
    dt = getattr(a, "dtype", None)
    if type(v) is not int or not isinstance(dt, np.dtype) or dt.kind not in "iu":
        return v
    info = np.iinfo(dt)
    return builtins.min(builtins.max(v, int(info.min)), int(info.max))


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):  # noqa: A002
    """minimum(maximum(a, a_min), a_max); None leaves that side open (NumPy 2.1's min= and
    max= keywords name them too). NaN propagates."""
    a_min = min if a_min is None else a_min
    a_max = max if a_max is None else a_max
    if a_min is None and a_max is None:
        raise InvalidArgumentError("libtensor: clip needs a_min or a_max",
                                   enums.LT_ERR_INVALID_ARGUMENT)
    a_min, a_max = _clip_bound(a_min, a), _clip_bound(a_max, a)
    if a_min is None:
        return minimum(a, a_max, out)
    if a_max is None:
        return maximum(a, a_min, out)
    (ta, tlo, thi), numpy_out = operands([a, a_min, a_max])
    if _into("clip", (ta, tlo, thi), (ta, tlo, thi), out):
        return out
    return deliver(_new("lt_clip", ta.context, ta.handle, tlo.handle, thi.handle), out, numpy_out,
                   True)


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


def _refuse_empty_extremum(name, shape, axes):
    # The C reduction gives min +inf / max -inf over nothing; NumPy refuses, and so does this
    # binding, unless the result itself is empty.
    reduced = range(len(shape)) if axes is None else axes
    kept = [n for k, n in enumerate(shape) if k not in reduced]
    if any(shape[k] == 0 for k in reduced) and all(n > 0 for n in kept):
        raise InvalidArgumentError(
            f"zero-size array to reduction operation {name}imum which has no identity")


def _reduce(name, a, axis, keepdims, out=None):
    if _FAST is not None and out is None and (axis is None or type(axis) is int):
        r = _FAST.reduce(_REDUCE[name], a, axis, keepdims)  # one C call; else the code below
        if r is not NotImplemented:
            return r if type(r) is not int else Tensor(r, a.context)
    (ta,), numpy_out = operands([a])
    axes = _axes(axis, ta.ndim)
    n = -1 if axes is None else len(axes)
    if name in ("min", "max"):
        _refuse_empty_extremum(name, ta.shape, axes)
    return deliver(_new("lt_reduce", ta.context, _REDUCE[name], ta.handle, n,
                        _lib.int_array(axes or []), bool(keepdims)), out, numpy_out)


# NumPy's signatures and argument order: sum(a, axis, dtype, out, keepdims) and
# min(a, axis, out, keepdims). `dtype` converts first (a float one) or, for an integer one,
# also the result (NumPy accumulates in it: int8 sums wrap in int8).
def _typed(name, a, axis, dtype, out, keepdims):
    if dtype is None:
        return _reduce(name, a, axis, keepdims, out)
    (ta,), numpy_out = operands([a])
    r = _reduce(name, ta.astype(dtype), axis, keepdims, None)
    code = lt_dtype(dtype)
    return deliver(r if r.lt_dtype == code else r.astype(dtype), out, numpy_out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False):  # noqa: A001
    return _typed("sum", a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    return _typed("prod", a, axis, dtype, out, keepdims)


def min(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return _reduce("min", a, axis, keepdims, out)


def max(a, axis=None, out=None, keepdims=False):  # noqa: A001
    return _reduce("max", a, axis, keepdims, out)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    return _typed("mean", a, axis, dtype, out, keepdims)


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


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg("lt_argmax", a, axis, keepdims, out)


def argmin(a, axis=None, out=None, *, keepdims=False):
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
        check_inplace(f"in-place {fn.__name__}", self)
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
    # issue 18 A
    "__lt__": lambda self, other: less(self, other),
    "__le__": lambda self, other: less_equal(self, other),
    "__gt__": lambda self, other: greater(self, other),
    "__ge__": lambda self, other: greater_equal(self, other),
    "__eq__": lambda self, other: equal(self, other),
    "__ne__": lambda self, other: not_equal(self, other),
    "__invert__": lambda self: invert(self),
    "__and__": lambda self, other: bitwise_and(self, other),
    "__rand__": lambda self, other: bitwise_and(other, self),
    "__or__": lambda self, other: bitwise_or(self, other),
    "__ror__": lambda self, other: bitwise_or(other, self),
    "__xor__": lambda self, other: bitwise_xor(self, other),
    "__rxor__": lambda self, other: bitwise_xor(other, self),
    "__floordiv__": lambda self, other: floor_divide(self, other),
    "__rfloordiv__": lambda self, other: floor_divide(other, self),
    "__mod__": lambda self, other: remainder(self, other),
    "__rmod__": lambda self, other: remainder(other, self),
    "__lshift__": lambda self, other: left_shift(self, other),
    "__rshift__": lambda self, other: right_shift(self, other),
    "__abs__": lambda self: abs(self),
    "__rpow__": lambda self, other: power(other, self),
    "__rlshift__": lambda self, other: left_shift(other, self),
    "__rrshift__": lambda self, other: right_shift(other, self),
    "__pos__": lambda self: self,
    "__ifloordiv__": _inplace(floor_divide),
    "__imod__": _inplace(remainder),
    "__iand__": _inplace(bitwise_and),
    "__ior__": _inplace(bitwise_or),
    "__ixor__": _inplace(bitwise_xor),
    "__ilshift__": _inplace(left_shift),
    "__irshift__": _inplace(right_shift),
}
for _name, _method in _OPERATORS.items():
    _method.__name__, _method.__qualname__ = _name, f"Tensor.{_name}"
    setattr(Tensor, _name, _method)
del _name, _method
Tensor.__hash__ = object.__hash__  # __eq__ is elementwise; Tensors stay usable as keys

__all__ = list(_BINARY) + list(_UNARY) + list(_REDUCE)[:5] + [
    "sub", "mul", "div", "neg", "amin", "amax", "argmax", "argmin", "permute", "contiguous",
    "mod", "bitwise_not", "atan2", "round", "where", "clip"]

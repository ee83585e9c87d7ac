# SPDX-License-Identifier: MIT
"""The Python array API standard's namespace (2023.12) over libtensor: `Tensor.__array_namespace__()`
returns this module, and `import libtensor.array_api as xp` gives it directly.

Every function takes and returns Tensors (NumPy arrays and Python scalars are taken as inputs,
never returned). This module holds the dtypes, the inspection API, creation, data type
functions, the elementwise functions and the array object's remaining methods; array_api_ops.py
holds statistics, searching, sorting, sets, manipulation and linear algebra, imported at the end.

Complex dtypes are not part of the namespace: the C library stores no complex tensors, so
`complex64`/`complex128` are absent (as the standard allows for a library that cannot store
them, code tests `hasattr(xp, "complex64")`). `missing()` lists the standard's names this
namespace lacks.
"""
import builtins
import math
from collections import namedtuple
import operator
import sys

import numpy as np

from . import ops as _ops
from .context import context, devices as _devices
from .dlpack import from_dlpack  # noqa: F401 (the standard's name)
from .errors import LibtensorError
from .tensor import Tensor, empty as _empty, full as _full, tensor as _tensor, zeros as _zeros
from . import indexing as _ix

__array_api_version__ = "2023.12"

# ---- dtypes: NumPy dtype objects, so that they compare equal to NumPy's
bool = np.dtype(np.bool_)  # noqa: A001 (the standard's name)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float32, float64 = np.dtype(np.float32), np.dtype(np.float64)
_KINDS = {"bool": (bool,), "signed integer": (int8, int16, int32, int64),
          "unsigned integer": (uint8, uint16, uint32, uint64),
          "real floating": (float32, float64), "complex floating": ()}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"]
_ALL = (bool,) + _KINDS["numeric"]

e, pi, inf, nan, newaxis = math.e, math.pi, math.inf, math.nan, None


def _dtype(dtype):
    """A dtype of this namespace, or TypeError."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in _ALL:
        raise TypeError(f"libtensor.array_api: {dtype!r} is not a dtype of this namespace")
    return dt


def __array_namespace_info__():
    return _Info()


class _Info:
    """The inspection API (2023.12): capabilities, devices and dtypes of this namespace."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return context().device

    def devices(self):
        return [d.id for d in _devices()]

    def default_dtypes(self, *, device=None):
        return {"real floating": float64, "complex floating": None, "integral": int64,
                "indexing": int64}

    def dtypes(self, *, device=None, kind=None):
        if kind is None:
            kinds = _ALL
        else:
            kinds = ()
            for k in (kind if isinstance(kind, tuple) else (kind,)):
                if k not in _KINDS:
                    raise ValueError(f"libtensor.array_api: unknown dtype kind {k!r}")
                kinds += _KINDS[k]
        return {dt.name: dt for dt in _ALL if dt in kinds}


# ---- creation

def _device(device):
    """The Context for a device argument (None: the default)."""
    return context(device)


def _infer_dtype(obj):
    """The standard's default dtype for Python scalars and nested sequences of them."""
    flat, stack = [], [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, (list, tuple)):
            stack.extend(o)
        else:
            flat.append(o)
    if flat and builtins.all(isinstance(v, builtins.bool) for v in flat):
        return bool
    if builtins.any(isinstance(v, float) for v in flat):
        return float64
    if builtins.any(isinstance(v, complex) for v in flat):
        raise TypeError("libtensor.array_api: complex values are not supported")
    if builtins.any(isinstance(v, Tensor) for v in flat):
        return None
    return int64


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    dtype = None if dtype is None else _dtype(dtype)
    if isinstance(obj, Tensor):
        same_dev = device is None or _device(device) is obj.context
        if (dtype is None or dtype == obj.dtype) and same_dev:
            return obj.copy() if copy else obj
        if copy is False:
            raise ValueError("libtensor.array_api: asarray(copy=False) cannot change the dtype "
                             "or device without a copy")
        out = obj if dtype is None else obj.contiguous(dtype)
        return out if same_dev else out.to(device)
    if isinstance(obj, np.ndarray) or hasattr(obj, "__buffer__") or hasattr(obj, "__dlpack__"):
        arr = np.asarray(obj)
        if copy is False and dtype is not None and arr.dtype != dtype:
            raise ValueError("libtensor.array_api: asarray(copy=False) cannot convert dtypes")
        _dtype(arr.dtype)
        return _tensor(arr, dtype=dtype, device=device, copy=builtins.bool(copy))
    if copy is False:
        raise ValueError("libtensor.array_api: asarray(copy=False) needs an array to share")
    if dtype is None:
        dtype = _infer_dtype(obj)
    if isinstance(obj, int) and not isinstance(obj, builtins.bool) and dtype in _KINDS["integral"]:
        info = np.iinfo(dtype)
        if not info.min <= obj <= info.max:
            raise OverflowError(f"libtensor.array_api: {obj} does not fit in {dtype}")
    arr = np.asarray(obj, dtype=dtype)
    _dtype(arr.dtype)
    return _tensor(arr, device=device, copy=True)


def _shape(shape):
    return (operator.index(shape),) if not isinstance(shape, (tuple, list)) else \
        tuple(operator.index(n) for n in shape)


def _default(dtype, fallback=float64):
    return fallback if dtype is None else _dtype(dtype)


def empty(shape, *, dtype=None, device=None):
    return _empty(_shape(shape), _default(dtype), device)


def zeros(shape, *, dtype=None, device=None):
    return _zeros(_shape(shape), _default(dtype), device)


def ones(shape, *, dtype=None, device=None):
    return _full(_shape(shape), 1, _default(dtype), device)


def _scalar_dtype(value):
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    raise TypeError(f"libtensor.array_api: fill value {value!r} is not a bool, int or float")


def full(shape, fill_value, *, dtype=None, device=None):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    dtype = _scalar_dtype(fill_value) if dtype is None else _dtype(dtype)
    return asarray(np.full(_shape(shape), fill_value, dtype=dtype), device=device)


def _like_device(x, device):
    return x.context if device is None else device


def empty_like(x, /, *, dtype=None, device=None):
    return empty(x.shape, dtype=dtype or x.dtype, device=_like_device(x, device))


def zeros_like(x, /, *, dtype=None, device=None):
    return zeros(x.shape, dtype=dtype or x.dtype, device=_like_device(x, device))


def ones_like(x, /, *, dtype=None, device=None):
    return ones(x.shape, dtype=dtype or x.dtype, device=_like_device(x, device))


def full_like(x, /, fill_value, *, dtype=None, device=None):
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=_like_device(x, device))


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        ints = builtins.all(isinstance(v, int) for v in (start, stop, step))
        dtype = int64 if ints else float64
    dtype = _dtype(dtype)
    if step == 0:
        raise ValueError("libtensor.array_api: arange step must not be zero")
    n = builtins.max(0, math.ceil((stop - start) / step))
    if dtype in _KINDS["integral"]:
        # exact for large integers: the C routine computes through doubles
        values = np.arange(start, start + n * step, step, dtype=object)[:n].astype(dtype)
    else:
        values = start + np.arange(n, dtype=np.float64) * step
    return asarray(np.asarray(values, dtype=dtype), device=device)


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    dtype = _default(dtype)
    if dtype not in _KINDS["real floating"]:
        raise TypeError("libtensor.array_api: linspace needs a real floating dtype")
    return _ix.linspace(start, stop, num, endpoint=endpoint, dtype=dtype,
                        device=_device(device))


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None):
    return _ix.eye(n_rows, n_cols, k, dtype=_default(dtype), device=_device(device))


def meshgrid(*arrays, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"libtensor.array_api: meshgrid indexing {indexing!r} is not xy or ij")
    arrays = [_t(a) for a in arrays]
    if not arrays:
        return []
    shape = [a.size for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 if i == 0 else 0 if i == 1 else i) if indexing == "xy" and len(arrays) > 1 \
            else i
        view = [1] * len(arrays)
        view[axis] = a.size
        out.append(a.reshape_or_copy(tuple(view)).broadcast_to(tuple(shape)).copy())
    return out


def _tri(x, k, lower):
    x = _t(x)
    if x.ndim < 2:
        raise ValueError("libtensor.array_api: tril/triu need at least 2 axes")
    rows, cols = x.shape[-2:]
    r = _ix.arange(rows, dtype="int64", device=x.context).reshape((rows, 1))
    c = _ix.arange(cols, dtype="int64", device=x.context).reshape((1, cols))
    keep = _ops.less_equal(c - r, k) if lower else _ops.greater_equal(c - r, k)
    return _ops.where(keep, x, zeros((), dtype=x.dtype, device=x.context))


def tril(x, /, *, k=0):
    return _tri(x, k, True)


def triu(x, /, *, k=0):
    return _tri(x, k, False)


# ---- data types

def astype(x, dtype, /, *, copy=True, device=None):
    dtype = _dtype(dtype)
    x = _t(x)
    same_dev = device is None or _device(device) is x.context
    if not copy and x.dtype == dtype and same_dev:
        return x
    t = x.contiguous(dtype)
    return t if same_dev else t.to(device)


def _dt(v):
    return _dtype(v.dtype if isinstance(v, Tensor) else v)


def can_cast(from_, to, /):
    a, b = _dt(from_), _dt(to)
    if a == b:
        return True
    try:
        return _promote(a, b) == b
    except TypeError:  # no promotion between them: no cast by the standard's rules
        return False


def result_type(*arrays_and_dtypes):
    if not arrays_and_dtypes:
        raise ValueError("libtensor.array_api: result_type needs at least one argument")
    dts = [_dt(a) for a in arrays_and_dtypes if not isinstance(a, (int, float, complex))]
    scalars = [a for a in arrays_and_dtypes if isinstance(a, (int, float, complex))]
    if not dts:
        raise ValueError("libtensor.array_api: result_type needs an array or a dtype")
    out = dts[0]
    for d in dts[1:]:
        out = _promote(out, d)
    for s in scalars:
        out = _promote(out, _scalar_dtype(s)) if (out == bool) != isinstance(s, builtins.bool) \
            and not (out in _KINDS["real floating"] and isinstance(s, int)) else out
    return out


def _promote(a, b):
    if a == b:
        return a
    if (a == bool) != (b == bool):
        raise TypeError(f"libtensor.array_api: no promotion between {a} and {b}")
    fa, fb = a in _KINDS["real floating"], b in _KINDS["real floating"]
    if fa != fb:
        raise TypeError(f"libtensor.array_api: no promotion between {a} and {b} (mixed kinds)")
    if {a, b} == {uint64, int64} or (uint64 in (a, b) and (a.kind == "i" or b.kind == "i")):
        raise TypeError(f"libtensor.array_api: no promotion between {a} and {b}")
    return np.promote_types(a, b)


_FInfo = namedtuple("finfo_object", "bits eps max min smallest_normal dtype")
_IInfo = namedtuple("iinfo_object", "bits max min dtype")


def finfo(type, /):  # noqa: A002 (the standard's name)
    dt = _dt(type)
    if dt not in _KINDS["real floating"]:
        raise TypeError(f"libtensor.array_api: finfo needs a floating dtype, not {dt}")
    f = np.finfo(dt)  # the standard wants Python floats, NumPy gives its scalars
    return _FInfo(int(f.bits), float(f.eps), float(f.max), float(f.min),
                  float(f.smallest_normal), dt)


def iinfo(type, /):  # noqa: A002
    dt = _dt(type)
    if dt not in _KINDS["integral"]:
        raise TypeError(f"libtensor.array_api: iinfo needs an integer dtype, not {dt}")
    i = np.iinfo(dt)
    return _IInfo(int(i.bits), int(i.max), int(i.min), dt)


def isdtype(dtype, kind):
    dtype = _dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"libtensor.array_api: unknown dtype kind {kind!r}")
        return dtype in _KINDS[kind]
    return dtype == _dtype(kind)


# ---- elementwise (the library's own kernels)

def _t(x):
    return x if isinstance(x, Tensor) else asarray(x)


def _pair(x1, x2):
    """Tensors for a binary function: a Python scalar takes the array's dtype (the standard's
    rule), so int8 + 1 stays int8 and float32 + 0.5 stays float32."""
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return x1, x2
    if isinstance(x1, Tensor):
        return x1, _scalar_like(x2, x1)
    if isinstance(x2, Tensor):
        return _scalar_like(x1, x2), x2
    return asarray(x1), asarray(x2)


def _scalar_like(s, x):
    if not isinstance(s, (int, float, builtins.bool, np.generic)):
        if isinstance(s, (np.ndarray, list, tuple)):
            return asarray(s)
        raise TypeError(f"libtensor.array_api: {type(s).__name__} is not an array or a scalar")
    dt = x.dtype
    if isinstance(s, float) and dt in _KINDS["integral"] + (bool,):
        dt = float64 if dt != bool else float64
    elif isinstance(s, int) and not isinstance(s, builtins.bool) and dt == bool:
        dt = int64
    if dt in _KINDS["integral"]:
        info = np.iinfo(dt)
        if isinstance(s, int) and not info.min <= s <= info.max:
            raise OverflowError(f"libtensor.array_api: {s} does not fit in {dt}")
    return _tensor(np.asarray(s, dtype=dt), device=x.context, copy=True)


def _binary(fn, name):
    def op(x1, x2, /):
        a, b = _pair(x1, x2)
        return fn(a, b)
    op.__name__ = op.__qualname__ = name
    return op


def _unary(fn, name):
    def op(x, /):
        return fn(_t(x))
    op.__name__ = op.__qualname__ = name
    return op


for _name, _fn in {
        "add": _ops.add, "subtract": _ops.subtract, "multiply": _ops.multiply,
        "divide": _ops.divide, "pow": _ops.power, "minimum": _ops.minimum,
        "maximum": _ops.maximum, "equal": _ops.equal, "not_equal": _ops.not_equal,
        "less": _ops.less, "less_equal": _ops.less_equal, "greater": _ops.greater,
        "greater_equal": _ops.greater_equal, "logical_and": _ops.logical_and,
        "logical_or": _ops.logical_or, "logical_xor": _ops.logical_xor,
        "bitwise_and": _ops.bitwise_and, "bitwise_or": _ops.bitwise_or,
        "bitwise_xor": _ops.bitwise_xor, "bitwise_left_shift": _ops.left_shift,
        "bitwise_right_shift": _ops.right_shift, "floor_divide": _ops.floor_divide,
        "remainder": _ops.remainder, "atan2": _ops.arctan2, "hypot": _ops.hypot,
        "copysign": _ops.copysign, "logaddexp": _ops.logaddexp}.items():
    globals()[_name] = _binary(_fn, _name)
for _name, _fn in {
        "abs": _ops.abs, "negative": _ops.negative, "sqrt": _ops.sqrt, "exp": _ops.exp,
        "log": _ops.log, "sin": _ops.sin, "cos": _ops.cos, "tan": _ops.tan, "tanh": _ops.tanh,
        "asin": _ops.arcsin, "acos": _ops.arccos, "atan": _ops.arctan, "sinh": _ops.sinh,
        "cosh": _ops.cosh, "asinh": _ops.arcsinh, "acosh": _ops.arccosh,
        "atanh": _ops.arctanh, "log2": _ops.log2, "log10": _ops.log10, "log1p": _ops.log1p,
        "expm1": _ops.expm1, "square": _ops.square, "floor": _ops.floor, "ceil": _ops.ceil,
        "trunc": _ops.trunc, "round": _ops.rint, "signbit": _ops.signbit,
        "isnan": _ops.isnan, "isinf": _ops.isinf, "isfinite": _ops.isfinite,
        "logical_not": _ops.logical_not, "bitwise_invert": _ops.invert,
        "reciprocal": _ops.reciprocal}.items():  # reciprocal: a libtensor extra
    globals()[_name] = _unary(_fn, _name)
del _name, _fn


def sign(x, /):
    x = _t(x)
    out = _ops.sign(x)
    # the standard's sign of -0.0 is +0 (the C op keeps the zero's sign, as NumPy's copysign
    # rules would); adding +0.0 turns -0.0 into +0.0 and changes nothing else
    return _ops.add(out, _scalar_like(0.0, out)) if out.dtype in _KINDS["real floating"] else out


def positive(x, /):
    return _t(x).copy()


def conj(x, /):
    return _t(x).copy()  # real dtypes only: the conjugate is the value


def real(x, /):
    return _t(x).copy()


def imag(x, /):
    return zeros_like(_t(x))


def clip(x, /, min=None, max=None):  # noqa: A002 (the standard's names)
    x = _t(x)
    out = x
    if min is not None:
        out = _ops.maximum(out, _bound(min, x))
    if max is not None:
        out = _ops.minimum(out, _bound(max, x))
    return out.contiguous(x.dtype) if out.dtype != x.dtype else (out.copy() if out is x else out)


def _bound(v, x):
    """A clip bound in x's dtype; an integer bound past x's range saturates (clip then keeps
    x's values, as the bound never binds)."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, (int, float)) and x.dtype in _KINDS["integral"]:
        info = np.iinfo(x.dtype)
        v = builtins.min(builtins.max(v, info.min), info.max)
        if isinstance(v, float):
            v = math.floor(v) if v >= 0 else math.ceil(v)
    return _scalar_like(v, x)


def where(condition, x1, x2, /):
    c = _t(condition)
    a, b = _pair(x1, x2)
    if a.context is not c.context:
        c = c.to(a.context)
    return _ops.where(c, a, b)


# ---- the array object: what Tensor lacks of the standard's methods

def _scalar_of(self, kind):
    if self.size != 1 or self.ndim != 0 and kind is not builtins.bool:
        if self.ndim != 0:
            raise TypeError(f"libtensor.array_api: only 0-d arrays convert to {kind.__name__}")
    return kind(self.item())


def _index(self):
    if self.ndim != 0 or self.dtype not in _KINDS["integral"]:
        raise TypeError("libtensor.array_api: only 0-d integer arrays can be indices")
    return self.item()


def _inplace(fn):
    def method(self, other):
        out = fn(self, other)
        if out.shape != self.shape or out.dtype != self.dtype:
            raise ValueError(f"libtensor.array_api: in-place result {out.dtype}{out.shape} "
                             f"does not fit {self.dtype}{self.shape}")
        self[...] = out
        return self
    return method


def _reflected(fn):
    return lambda self, other: fn(other, self)


def _namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12"):
        raise ValueError(f"libtensor: array API version {api_version!r} is not supported")
    return sys.modules[__name__]


def _to_device(self, device, /, *, stream=None):
    return self if context(device) is self.context else self.to(device)


def _bool(self):
    if self.size != 1:
        raise ValueError("libtensor: the truth value of an array of more than one element "
                         "is ambiguous")
    return builtins.bool(self.item())


def _complex(self):
    return complex(_scalar_of(self, float))


def _T(self):
    if self.ndim != 2:
        raise ValueError("libtensor.array_api: .T needs a 2-d array (use permute_dims or mT)")
    return self.swapaxes(0, 1)


_ARRAY_METHODS = {
    "__array_namespace__": _namespace, "to_device": _to_device, "__bool__": _bool,
    "__int__": lambda self: _scalar_of(self, int),
    "__float__": lambda self: _scalar_of(self, float),
    "__complex__": _complex, "__index__": _index, "__pos__": lambda self: positive(self),
    "__rpow__": _reflected(pow),  # noqa: F821 (installed above through globals())
    "__rlshift__": _reflected(bitwise_left_shift),  # noqa: F821
    "__rrshift__": _reflected(bitwise_right_shift),  # noqa: F821
    "__ifloordiv__": _inplace(floor_divide), "__imod__": _inplace(remainder),  # noqa: F821
    "__iand__": _inplace(bitwise_and), "__ior__": _inplace(bitwise_or),  # noqa: F821
    "__ixor__": _inplace(bitwise_xor),  # noqa: F821
    "__ilshift__": _inplace(bitwise_left_shift),  # noqa: F821
    "__irshift__": _inplace(bitwise_right_shift),  # noqa: F821
}
for _name, _method in _ARRAY_METHODS.items():
    setattr(Tensor, _name, _method)
del _name, _method
Tensor.mT = property(lambda self: matrix_transpose(self))  # noqa: F821 (array_api_ops)

# ---- statistics, searching, sorting, sets, manipulation, linear algebra
from .array_api_ops import *  # noqa: E402,F401,F403
from .array_api_ops import matrix_transpose  # noqa: E402,F401

# ---- the standard's names (2023.12), for `missing()`
STANDARD_NAMES = frozenset("""
abs acos acosh add all any arange argmax argmin argsort asarray asin asinh astype atan atan2
atanh bitwise_and bitwise_invert bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor
bool broadcast_arrays broadcast_to can_cast ceil clip complex128 complex64 concat conj copysign
cos cosh cumulative_sum divide e empty empty_like equal exp expand_dims expm1 eye finfo
flip float32 float64 floor floor_divide from_dlpack full full_like greater greater_equal hypot
iinfo imag inf int16 int32 int64 int8 isdtype isfinite isinf isnan less less_equal linspace log
log10 log1p log2 logaddexp logical_and logical_not logical_or logical_xor matmul
matrix_transpose max maximum mean meshgrid min minimum moveaxis multiply nan negative newaxis
nonzero not_equal ones ones_like permute_dims pi positive pow prod real remainder
repeat reshape result_type roll round searchsorted sign signbit sin sinh sort sqrt square
squeeze stack std subtract sum take tan tanh tensordot tile tril triu trunc uint16 uint32
uint64 uint8 unique_all unique_counts unique_inverse unique_values unstack var vecdot where
zeros zeros_like
""".split())


def missing():
    """The standard's names that this namespace does not provide."""
    here = sys.modules[__name__]
    return sorted(n for n in STANDARD_NAMES if n != "newaxis" and not hasattr(here, n))


__all__ = sorted(n for n in globals() if not n.startswith("_") and n not in
                 ("builtins", "math", "operator", "sys", "np", "Tensor", "context",
                  "LibtensorError", "namedtuple"))

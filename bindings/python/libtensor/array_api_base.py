# SPDX-License-Identifier: MIT
"""The array API namespace's bottom layer: dtypes, the inspection API, creation and data type
functions, and the conversion of operands (Python scalars take the array's dtype). array_api.py
re-exports all of it; array_api_ops.py builds on it."""
import builtins
import math
import operator
from collections import namedtuple

import numpy as np

from . import indexing as _ix
from . import ops as _ops
from .context import context, devices as _devices
from .tensor import Tensor, empty as _empty, full as _full, tensor as _tensor, zeros as _zeros


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
    if not flat:  # [] or [[], []]: NumPy's and array_api_strict's float64
        return float64
    if builtins.all(isinstance(v, builtins.bool) for v in flat):
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
    _check_fits(obj, dtype)
    arr = np.asarray(obj, dtype=dtype)
    _dtype(arr.dtype)
    return _tensor(arr, device=device, copy=True)


def _check_fits(value, dtype):
    """A Python int outside an integer dtype's range raises OverflowError, as NumPy 2 does
    (NumPy 1 wrapped it silently)."""
    if isinstance(value, int) and not isinstance(value, builtins.bool) and \
            dtype in _KINDS["integral"]:
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise OverflowError(f"libtensor.array_api: {value} does not fit in {dtype}")


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
    _check_fits(fill_value, dtype)
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
    except TypeError:
        # no promotion between them; the standard does not forbid cross-kind casts, and the
        # library converts integers to a float that holds them as NumPy's "safe" rule says
        return a.kind in "iu" and b.kind == "f" and builtins.bool(np.can_cast(a, b, "safe"))


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


__all__ = sorted(n for n in globals() if not n.startswith("_") and n not in
                 ("builtins", "math", "operator", "np", "Tensor", "context", "namedtuple"))

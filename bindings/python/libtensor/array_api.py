# SPDX-License-Identifier: MIT
"""The Python array API standard's namespace (2023.12) over libtensor: `Tensor.__array_namespace__()`
returns this module, and `import libtensor.array_api as xp` gives it directly.

It covers what the C library computes today; every function returns Tensors. Names of the
standard that this module does not define resolve, at attribute access, to the package's
function of the same name when there is one (so ops other modules add -- concat, where, sort,
cumulative_sum, the integer dtypes' functions -- plug in by name), else raise AttributeError
naming what is missing. `STANDARD_NAMES` lists the standard's names; `missing()` tells which
ones this build lacks.
"""
import builtins
import math
import sys

import numpy as np

from .einsum import einsum as _einsum_fn
from . import ops as _ops
from .context import context, devices as _devices
from .dlpack import from_dlpack
from .tensor import Tensor, empty as _empty, full as _full, tensor as _tensor, zeros as _zeros

__array_api_version__ = "2023.12"

# ---- dtypes: the ones the library stores (NumPy dtype objects, so they compare with NumPy's)
float16 = np.dtype(np.float16)  # not in the standard: a libtensor extra
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int64 = np.dtype(np.int64)
_DTYPES = {"float32": float32, "float64": float64, "int64": int64}
# The standard's other dtype names, so that code (and the conformance suite) can name them; the
# library stores them once the integer/bool dtypes land (until then creating such a tensor
# raises DtypeError, and __array_namespace_info__().dtypes() does not list them).
bool = np.dtype(np.bool_)  # noqa: A001 (the standard's name)
int8, int16, int32 = np.dtype(np.int8), np.dtype(np.int16), np.dtype(np.int32)
uint8, uint16 = np.dtype(np.uint8), np.dtype(np.uint16)
uint32, uint64 = np.dtype(np.uint32), np.dtype(np.uint64)
# Complex tensors are not supported at all: the names exist for code that names them.
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)

e, pi, inf, nan, newaxis = math.e, math.pi, math.inf, math.nan, None


def __array_namespace_info__():
    return _Info()


class _Info:
    """The inspection API (2023.12): capabilities, devices and dtypes of this namespace."""

    def capabilities(self):
        return {"boolean indexing": False, "data-dependent shapes": False}

    def default_device(self):
        return context().device

    def devices(self):
        return [d.id for d in _devices()]

    def default_dtypes(self, *, device=None):
        return {"real floating": float64, "integral": int64, "indexing": int64}

    def dtypes(self, *, device=None, kind=None):
        if kind in (None, "real floating", "numeric"):
            return dict(_DTYPES) if kind is None or kind == "numeric" else \
                {"float32": float32, "float64": float64}
        if kind in ("signed integer", "integral"):
            return {"int64": int64}
        return {}


# ---- creation

def asarray(obj, /, *, dtype=None, device=None, copy=None):
    if isinstance(obj, Tensor) and dtype is None and device is None:
        return obj.copy() if copy else obj
    if copy is False and not isinstance(obj, (Tensor, np.ndarray)):
        raise ValueError("libtensor: asarray(copy=False) needs an array to share")
    if dtype is None and not isinstance(obj, (Tensor, np.ndarray)):
        arr = np.asarray(obj)
        if arr.dtype.kind == "f":
            arr = arr.astype(np.float64)
        return _tensor(arr, device=device, copy=True)
    return _tensor(obj, dtype=dtype, device=device, copy=builtins.bool(copy))


def _shape(shape):
    return (shape,) if isinstance(shape, int) else tuple(shape)


def empty(shape, *, dtype=None, device=None):
    return _ops_filled(shape, 0.0, dtype, device, "empty")


def zeros(shape, *, dtype=None, device=None):
    return _ops_filled(shape, 0.0, dtype, device, "zeros")


def ones(shape, *, dtype=None, device=None):
    return _ops_filled(shape, 1.0, dtype, device, "full")


def full(shape, fill_value, *, dtype=None, device=None):
    if dtype is None:
        dtype = int64 if isinstance(fill_value, int) and not isinstance(fill_value, builtins.bool) \
            else float64
    return _ops_filled(shape, fill_value, dtype, device, "full")


def _ops_filled(shape, value, dtype, device, kind):
    dtype = float64 if dtype is None else dtype
    if kind == "empty":
        return _empty(_shape(shape), dtype, device)
    if kind == "zeros":
        return _zeros(_shape(shape), dtype, device)
    return _full(_shape(shape), value, dtype, device)


def empty_like(x, /, *, dtype=None, device=None):
    return empty(x.shape, dtype=dtype or x.dtype, device=device or x.context)


def zeros_like(x, /, *, dtype=None, device=None):
    return zeros(x.shape, dtype=dtype or x.dtype, device=device or x.context)


def ones_like(x, /, *, dtype=None, device=None):
    return ones(x.shape, dtype=dtype or x.dtype, device=device or x.context)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=device or x.context)


# ---- data types

def astype(x, dtype, /, *, copy=True, device=None):
    if not copy and x.dtype == np.dtype(dtype) and device is None:
        return x
    t = x.contiguous(dtype)
    return t.to(device) if device is not None else t


def can_cast(from_, to, /):
    return np.can_cast(getattr(from_, "dtype", from_), to)


def result_type(*arrays_and_dtypes):
    return np.result_type(*[getattr(a, "dtype", a) for a in arrays_and_dtypes])


def finfo(type, /):  # noqa: A002 (the standard's name)
    return np.finfo(getattr(type, "dtype", type))


def iinfo(type, /):  # noqa: A002
    return np.iinfo(getattr(type, "dtype", type))


def isdtype(dtype, kind):
    dtype = np.dtype(dtype)
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    if not isinstance(kind, str):
        return dtype == np.dtype(kind)
    return {"bool": dtype.kind == "b", "signed integer": dtype.kind == "i",
            "unsigned integer": dtype.kind == "u", "integral": dtype.kind in "iu",
            "real floating": dtype.kind == "f", "complex floating": dtype.kind == "c",
            "numeric": dtype.kind in "iufc"}[kind]


# ---- elementwise (the library's own kernels)

def _t(x):
    return x if isinstance(x, Tensor) else asarray(x)


def _binary(fn):
    def op(x1, x2, /):
        if not isinstance(x1, Tensor) and not isinstance(x2, Tensor):
            x1 = asarray(x1)
        return fn(x1, x2)
    op.__name__ = fn.__name__
    return op


add = _binary(_ops.add)
subtract = _binary(_ops.subtract)
multiply = _binary(_ops.multiply)
divide = _binary(_ops.divide)
pow = _binary(_ops.power)  # noqa: A001 (the standard's name)
minimum = _binary(_ops.minimum)
maximum = _binary(_ops.maximum)


def _unary(fn):
    def op(x, /):
        return fn(_t(x))
    op.__name__ = fn.__name__
    return op


abs = _unary(_ops.abs)  # noqa: A001
negative = _unary(_ops.negative)
sqrt = _unary(_ops.sqrt)
exp = _unary(_ops.exp)
log = _unary(_ops.log)
sin = _unary(_ops.sin)
cos = _unary(_ops.cos)
tanh = _unary(_ops.tanh)
square = _unary(_ops.square)
reciprocal = _unary(_ops.reciprocal)  # not in the standard: a libtensor extra


def positive(x, /):
    return _t(x).copy()


# ---- statistical and searching

def _stat(fn):
    def op(x, /, *, axis=None, keepdims=False, dtype=None):
        out = fn(_t(x), axis=axis, keepdims=keepdims)
        return out if dtype is None else astype(out, dtype)
    op.__name__ = fn.__name__
    return op


sum = _stat(_ops.sum)  # noqa: A001
prod = _stat(_ops.prod)


def max(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _ops.max(_t(x), axis=axis, keepdims=keepdims)


def min(x, /, *, axis=None, keepdims=False):  # noqa: A001
    return _ops.min(_t(x), axis=axis, keepdims=keepdims)


def mean(x, /, *, axis=None, keepdims=False):
    return _ops.mean(_t(x), axis=axis, keepdims=keepdims)


def argmax(x, /, *, axis=None, keepdims=False):
    return _ops.argmax(_t(x), axis=axis, keepdims=keepdims)


def argmin(x, /, *, axis=None, keepdims=False):
    return _ops.argmin(_t(x), axis=axis, keepdims=keepdims)


# ---- manipulation (zero-copy views where the standard allows)

def reshape(x, /, shape, *, copy=None):
    x = _t(x)
    if copy:
        return x.copy().reshape(shape)
    if copy is False:
        return x.reshape(shape)
    return x.reshape_or_copy(shape)


def permute_dims(x, /, axes):
    return _t(x).permute(*axes)


def matrix_transpose(x, /):
    x = _t(x)
    if x.ndim < 2:
        raise ValueError("libtensor: matrix_transpose needs at least 2 axes")
    return x.swapaxes(-1, -2)


def expand_dims(x, /, *, axis=0):
    return _t(x).unsqueeze(axis)


def squeeze(x, /, axis):
    x = _t(x)
    axes = axis if isinstance(axis, tuple) else (axis,)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"libtensor: squeeze: axis {a} has extent {x.shape[a]}, not 1")
    return x.squeeze(axes if isinstance(axis, tuple) else axis)


def flip(x, /, *, axis=None):
    return _t(x).flip(axis)


def broadcast_to(x, /, shape):
    return _t(x).broadcast_to(tuple(shape))


def broadcast_arrays(*arrays):
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    return [broadcast_to(a, shape) for a in arrays]


# ---- linear algebra (einsum underneath)

def matmul(x1, x2, /):
    a, b = _t(x1), _t(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("libtensor: matmul does not take 0-d operands")
    if a.ndim == 1 and b.ndim == 1:
        return _einsum_fn("i,i->", a, b)
    if a.ndim == 1:
        return _einsum_fn("j,...jk->...k", a, b)
    if b.ndim == 1:
        return _einsum_fn("...ij,j->...i", a, b)
    return _einsum_fn("...ij,...jk->...ik", a, b)


def tensordot(x1, x2, /, *, axes=2):
    a, b = _t(x1), _t(x2)
    if isinstance(axes, int):
        axes = (list(range(a.ndim - axes, a.ndim)), list(range(axes)))
    ax_a, ax_b = [x % a.ndim for x in axes[0]], [x % b.ndim for x in axes[1]]
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    la = [next(letters) for _ in range(a.ndim)]
    lb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(ax_a, ax_b):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in ax_a] + \
        [c for j, c in enumerate(lb) if j not in ax_b]
    return _einsum_fn(f"{''.join(la)},{''.join(lb)}->{''.join(out)}", a, b)


def vecdot(x1, x2, /, *, axis=-1):
    a, b = _t(x1), _t(x2)
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = a.broadcast_to(shape), b.broadcast_to(shape)
    n = len(shape)
    axis %= n
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[:n]
    out = letters[:axis] + letters[axis + 1:]
    return _einsum_fn(f"{letters},{letters}->{out}", a, b)


einsum = _einsum_fn  # not in the standard: a libtensor extra

# ---- the standard's names (2023.12), for `missing()` and plug-in by name
STANDARD_NAMES = frozenset("""
abs acos acosh add all any arange argmax argmin argsort asarray asin asinh astype atan atan2
atanh bitwise_and bitwise_invert bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor
bool broadcast_arrays broadcast_to can_cast ceil clip complex128 complex64 concat conj copysign
cos cosh cumulative_sum diff divide e empty empty_like equal exp expand_dims expm1 eye finfo
flip float32 float64 floor floor_divide from_dlpack full full_like greater greater_equal hypot
iinfo imag inf int16 int32 int64 int8 isdtype isfinite isinf isnan less less_equal linspace log
log10 log1p log2 logaddexp logical_and logical_not logical_or logical_xor matmul
matrix_transpose max maximum mean meshgrid min minimum moveaxis multiply nan negative newaxis
nonzero not_equal ones ones_like permute_dims pi positive pow prod real reciprocal remainder
repeat reshape result_type roll round searchsorted sign signbit sin sinh sort sqrt square
squeeze stack std subtract sum take tan tanh tensordot tile tril triu trunc uint16 uint32
uint64 uint8 unique_all unique_counts unique_inverse unique_values unstack var vecdot where
zeros zeros_like
""".split())


def missing():
    """The standard's names that this namespace does not provide yet."""
    return sorted(n for n in STANDARD_NAMES if _resolve(n) is None)


def _resolve(name):
    here = globals().get(name)
    if here is not None or name in ("newaxis",):
        return here if here is not None else "newaxis"
    pkg = sys.modules.get(__package__)
    return getattr(pkg, name, None) if pkg is not None else None


def __getattr__(name):
    """Plug-in by name: a standard name this module lacks resolves to the package's function
    of that name when another module of the package provides it."""
    if name in STANDARD_NAMES:
        found = _resolve(name)
        if found is not None:
            return found
        raise AttributeError(f"libtensor.array_api: {name} is not implemented yet (the C "
                             "library has no such operation in this build)")
    raise AttributeError(f"module 'libtensor.array_api' has no attribute {name!r}")


def _namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12"):
        raise ValueError(f"libtensor: array API version {api_version!r} is not supported")
    return sys.modules[__name__]


def _to_device(self, device, /, *, stream=None):
    return self if context(device) is self.context else self.to(device)


Tensor.__array_namespace__ = _namespace
Tensor.to_device = _to_device
Tensor.mT = property(matrix_transpose)
__all__ = sorted(n for n in globals() if not n.startswith("_") and n not in
                 ("builtins", "math", "sys", "np", "Tensor", "context"))

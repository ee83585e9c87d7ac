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

The namespace shares the Tensor class with the NumPy-style API, so where the two differ the
NumPy behaviour is kept: `.T` reverses every axis (the standard recommends an error unless the
array is 2-d), and `+=`, `-=`, `*=`, `/=`, `**=` cast the result to the array's dtype as NumPy's
same_kind casting does (int8 += int16 wraps; the other in-place operators refuse a dtype change).
"""
import builtins
import math
import sys

import numpy as np

from . import ops as _ops
from .array_api_base import *  # noqa: F401,F403 (dtypes, creation, data type functions)
from .array_api_base import (_KINDS, _pair, _scalar_like, _t, __array_namespace_info__,  # noqa: F401
                             zeros_like)
from .context import context
from .dlpack import from_dlpack  # noqa: F401 (the standard's name)
from .tensor import Tensor

__array_api_version__ = "2023.12"


# ---- elementwise (the library's own kernels)

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
        "trunc": _ops.trunc, "round": _ops.round, "signbit": _ops.signbit,
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


# The operators stay the package's (ops.py): NumPy's promotion, float16/bfloat16 and same_kind
# in-place casts for everyone (replacing them here broke f16 ** and t_i8 &= t_i32 for all
# callers). Only what the standard adds to the array object is installed.
_ARRAY_METHODS = {
    "__array_namespace__": _namespace, "to_device": _to_device, "__bool__": _bool,
    "__int__": lambda self: _scalar_of(self, int),
    "__float__": lambda self: _scalar_of(self, float),
    "__complex__": _complex, "__index__": _index,
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
                 ("builtins", "math", "sys", "np", "Tensor", "context"))

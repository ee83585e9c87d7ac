# SPDX-License-Identifier: MIT
"""Docstrings for the functions and methods whose behaviour is NumPy's (one-line definitions
in ops, indexing, tensor and functions), written once here rather than repeated on each.
Imported last by the package; it changes no behaviour."""
import sys

from . import functions, indexing, ops
from . import methods  # noqa: F401 (the methods must exist before their docstrings)
from .tensor import Tensor

# the module, not the function lt.tensor that the package binds to the same name
tensor = sys.modules[__package__ + ".tensor"]

_ELEMENTWISE = ("{name}(a{b}, out=None): NumPy's np.{numpy}, elementwise, on arrays and Tensors "
                "(NumPy in, NumPy out; a Tensor in, a Tensor out). Broadcasting, dtype promotion "
                "and Python scalars follow NumPy 2; out= (an array or a Tensor) receives the "
                "result under casting='same_kind'. Failures raise lt.LibtensorError subclasses.")
_ALIASES = {"sub": "subtract", "mul": "multiply", "div": "divide", "neg": "negative",
            "mod": "remainder", "atan2": "arctan2", "bitwise_not": "invert", "amin": "min",
            "amax": "max", "absolute": "abs", "true_divide": "divide"}
_REDUCTIONS = {
    "sum": "sum(a, axis=None, dtype=None, out=None, keepdims=False)",
    "prod": "prod(a, axis=None, dtype=None, out=None, keepdims=False)",
    "mean": "mean(a, axis=None, dtype=None, out=None, keepdims=False)",
    "min": "min(a, axis=None, out=None, keepdims=False)",
    "max": "max(a, axis=None, out=None, keepdims=False)",
    "argmax": "argmax(a, axis=None, out=None, *, keepdims=False)",
    "argmin": "argmin(a, axis=None, out=None, *, keepdims=False)",
}
_OTHERS = {
    "contiguous": "contiguous(a, dtype=None, out=None): a C-contiguous copy, converted to dtype.",
    "stack": "stack(arrays, axis=0, out=None): np.stack; mixed dtypes promote as NumPy.",
    "linspace": "linspace(start, stop, num=50, endpoint=True, dtype='float64', device=None): "
                "np.linspace; integer dtypes take the floor (NumPy 2).",
    "full_like": "full_like(a, fill_value, dtype=None): np.full_like (integers past 2**53 "
                 "exact).",
    "ones_like": "ones_like(a, dtype=None): np.ones_like.",
    "zeros_like": "zeros_like(a, dtype=None): np.zeros_like.",
    "empty_like": "empty_like(a, dtype=None): np.empty_like (contents undefined).",
    "argwhere": "argwhere(a): np.argwhere, the (n, ndim) int64 indices of nonzero elements.",
    "transpose": "transpose(a, axes=None): np.transpose, a view.",
    "squeeze": "squeeze(a, axis=None): np.squeeze, a view.",
    "flip": "flip(a, axis=None): np.flip, a view (negative strides).",
    "swapaxes": "swapaxes(a, axis1, axis2): np.swapaxes, a view.",
    "ravel": "ravel(a): np.ravel, a view when the strides allow it, else a copy.",
    "outer": "outer(a, b, out=None): np.outer of the flattened operands.",
    "allclose": "allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False): np.allclose.",
    "array_equal": "array_equal(a1, a2, equal_nan=False): np.array_equal.",
    "count_nonzero": "count_nonzero(a, axis=None, keepdims=False): np.count_nonzero.",
    "vstack": "vstack(arrays): np.vstack.",
    "hstack": "hstack(arrays): np.hstack.",
    "array": "array(a, dtype=None, device=None, copy=True): a Tensor copy of a (lt.tensor).",
    "positive": "positive(a, out=None): np.positive, a copy.",
    "empty": "empty(shape, dtype='float64', device=None): np.empty on a device (contents "
             "undefined).",
    "zeros": "zeros(shape, dtype='float64', device=None): np.zeros on a device.",
    "full": "full(shape, value, dtype=None, device=None): np.full on a device (dtype: the "
            "value's, as NumPy; integers past 2**53 exact).",
    "broadcast_to": "broadcast_to(a, shape): np.broadcast_to, a read-only-in-spirit view "
                    "(stride 0 along broadcast axes).",
    "as_strided": "as_strided(a, shape, strides, offset=None): a view with explicit strides "
                  "(in elements), checked against the storage's bounds.",
}
_METHODS = {
    "astype": "astype(dtype): a C-contiguous copy converted to dtype (float to integer "
              "refuses NaN and out-of-range values).",
    "copy": "copy(): a C-contiguous copy.",
    "item": "item(): the one element as a Python scalar.",
    "squeeze": "squeeze(axis=None): a view without the given (or all) extent-1 axes.",
    "unsqueeze": "unsqueeze(axis): a view with an extent-1 axis inserted at axis.",
    "expand_dims": "expand_dims(axis): a view with an extent-1 axis inserted at axis.",
    "flip": "flip(axis=None): a view with the axis (axes; None: all) reversed.",
    "permute": "permute(*axes): a view with the axes reordered (torch's permute).",
    "broadcast_to": "broadcast_to(shape): a view broadcast to shape (stride 0).",
    "diagonal": "diagonal(offset=0, axis1=0, axis2=1): np.diagonal, a view.",
    "shares_storage": "shares_storage(other): whether both tensors view the same storage.",
}


def _set(fn, text):
    if fn is not None and not (getattr(fn, "__doc__", None) or "").strip():
        try:
            fn.__doc__ = text
        except (AttributeError, TypeError):
            pass


for _name in list(ops._BINARY) + list(ops._UNARY) + list(_ALIASES):
    _fn = getattr(ops, _name, None)
    _np = _ALIASES.get(_name, _name)
    _set(_fn, _ELEMENTWISE.format(name=_name, numpy=_np,
                                  b=", b" if _np in ops._BINARY else ""))
for _name, _sig in _REDUCTIONS.items():
    _set(getattr(ops, _name), f"{_sig}: np.{_name} over an int, a tuple of axes or all; NumPy "
         "in, NumPy out (0-d results as NumPy scalars), a Tensor in, a Tensor out.")
for _name, _text in _OTHERS.items():
    for _module in (functions, indexing, ops, tensor):
        _set(getattr(_module, _name, None), _text)
for _name, _text in _METHODS.items():
    _set(getattr(Tensor, _name, None), "Tensor." + _text)
for _name in ("sum", "prod", "mean", "min", "max", "argmax", "argmin", "all", "any", "round",
              "argsort", "dot"):
    _set(getattr(Tensor, _name, None), f"ndarray.{_name}: as lt.{_name}(self, ...), NumPy's "
         "arguments.")
del _name, _fn, _np, _sig, _text, _module

# SPDX-License-Identifier: MIT
"""Softmax, log_softmax, logsumexp, var, std, cumsum and cumprod, NumPy / SciPy style.

As in ops: NumPy inputs give NumPy results, a Tensor input gives a Tensor on its context.
Results keep a floating input's dtype (int64 inputs give float64, except cumsum / cumprod,
which keep int64 as NumPy does). Also installs the matching Tensor methods."""

from . import _lib
from ._ext import FAST as _FAST
from .convert import deliver, operands
from .ops import _axes
from .tensor import Tensor, _new


def _axis_args(axis, ndim):
    axes = _axes(axis, ndim)
    return (-1, _lib.int_array([])) if axes is None else (len(axes), _lib.int_array(axes))


# The extension's kinds (fast_reduce.c): one C call for all axes or one axis.
_ROWS = {"softmax": 0, "log_softmax": 1, "logsumexp": 2}


def _fast_rows(name, x, axis, keepdims=False):
    if _FAST is None or not (axis is None or type(axis) is int):
        return NotImplemented
    r = _FAST.rows(_ROWS[name], x, axis, keepdims)
    return r if type(r) is not int else Tensor(r, x.context)


def softmax(x, axis=None, out=None):
    """exp(x) / sum(exp(x)) over `axis` (None: all axes, as scipy.special.softmax), fused and
    stable; rows that are all -inf give NaN (as PyTorch). out= receives the result."""
    r = _fast_rows("softmax", x, axis) if out is None else NotImplemented
    if r is not NotImplemented:
        return r
    (t,), numpy_out = operands([x])
    return deliver(_new("lt_softmax", t.context, t.handle, *_axis_args(axis, t.ndim)), out,
                   numpy_out)


def log_softmax(x, axis=None, out=None):
    """x - logsumexp(x) over `axis` (None: all axes), fused and stable."""
    r = _fast_rows("log_softmax", x, axis) if out is None else NotImplemented
    if r is not NotImplemented:
        return r
    (t,), numpy_out = operands([x])
    return deliver(_new("lt_log_softmax", t.context, t.handle, *_axis_args(axis, t.ndim)), out,
                   numpy_out)


def logsumexp(a, axis=None, keepdims=False, out=None):
    """log(sum(exp(a))) over `axis`, shifted by the max (scipy.special.logsumexp without b)."""
    r = _fast_rows("logsumexp", a, axis, keepdims) if out is None else NotImplemented
    if r is not NotImplemented:
        return r
    (t,), numpy_out = operands([a])
    return deliver(_new("lt_logsumexp", t.context, t.handle, *_axis_args(axis, t.ndim),
                        bool(keepdims)), out, numpy_out)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance over `axis` with `ddof` delta degrees of freedom (numpy.var, its argument
    order; `dtype` converts first)."""
    (t,), numpy_out = operands([a])
    if dtype is not None:
        t = t.astype(dtype)
    return deliver(_new("lt_var", t.context, t.handle, *_axis_args(axis, t.ndim), float(ddof),
                        bool(keepdims)), out, numpy_out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation over `axis` (numpy.std, its argument order)."""
    (t,), numpy_out = operands([a])
    if dtype is not None:
        t = t.astype(dtype)
    return deliver(_new("lt_std", t.context, t.handle, *_axis_args(axis, t.ndim), float(ddof),
                        bool(keepdims)), out, numpy_out)


def _scan(fn_name, a, axis, dtype, out):
    (t,), numpy_out = operands([a])
    if dtype is not None:
        t = t.astype(dtype)
    if axis is None:  # NumPy flattens
        t, axis = t.reshape_or_copy(-1), 0
    else:
        axis = _lib.as_int(axis, 32, "axis")
    r = _new(fn_name, t.context, t.handle, axis)
    if dtype is not None and r.lt_dtype != t.lt_dtype:  # an integer dtype= wraps as NumPy's
        r = r.astype(dtype)
    return deliver(r, out, numpy_out)


def cumsum(a, axis=None, dtype=None, out=None):
    """Inclusive cumulative sum along `axis` (None: of the flattened array), as numpy.cumsum;
    `dtype` converts first."""
    return _scan("lt_cumsum", a, axis, dtype, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Inclusive cumulative product along `axis` (None: flattened), as numpy.cumprod."""
    return _scan("lt_cumprod", a, axis, dtype, out)


for _fn in (softmax, log_softmax, logsumexp, var, std, cumsum, cumprod):
    setattr(Tensor, _fn.__name__, _fn)
del _fn

__all__ = ["softmax", "log_softmax", "logsumexp", "var", "std", "cumsum", "cumprod"]

# SPDX-License-Identifier: MIT
"""Softmax, log_softmax, logsumexp, var, std, cumsum and cumprod, NumPy / SciPy style.

As in ops: NumPy inputs give NumPy results, a Tensor input gives a Tensor on its context.
Results keep a floating input's dtype (int64 inputs give float64, except cumsum / cumprod,
which keep int64 as NumPy does). Also installs the matching Tensor methods."""

from . import _lib
from .convert import operands, result
from .ops import _axes
from .tensor import Tensor, _new


def _axis_args(axis, ndim):
    axes = _axes(axis, ndim)
    return (-1, _lib.int_array([])) if axes is None else (len(axes), _lib.int_array(axes))


def softmax(x, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (None: all axes, as scipy.special.softmax), fused and
    stable; rows that are all -inf give NaN (as PyTorch)."""
    (t,), numpy_out = operands([x])
    return result(_new("lt_softmax", t.context, t.handle, *_axis_args(axis, t.ndim)), numpy_out)


def log_softmax(x, axis=None):
    """x - logsumexp(x) over `axis` (None: all axes), fused and stable."""
    (t,), numpy_out = operands([x])
    return result(_new("lt_log_softmax", t.context, t.handle, *_axis_args(axis, t.ndim)),
                  numpy_out)


def logsumexp(a, axis=None, keepdims=False):
    """log(sum(exp(a))) over `axis`, shifted by the max (scipy.special.logsumexp without b)."""
    (t,), numpy_out = operands([a])
    return result(_new("lt_logsumexp", t.context, t.handle, *_axis_args(axis, t.ndim),
                       bool(keepdims)), numpy_out)


def var(a, axis=None, ddof=0, keepdims=False):
    """Variance over `axis` with `ddof` delta degrees of freedom (numpy.var)."""
    (t,), numpy_out = operands([a])
    return result(_new("lt_var", t.context, t.handle, *_axis_args(axis, t.ndim), float(ddof),
                       bool(keepdims)), numpy_out)


def std(a, axis=None, ddof=0, keepdims=False):
    """Standard deviation over `axis` (numpy.std)."""
    (t,), numpy_out = operands([a])
    return result(_new("lt_std", t.context, t.handle, *_axis_args(axis, t.ndim), float(ddof),
                       bool(keepdims)), numpy_out)


def _scan(fn_name, a, axis):
    (t,), numpy_out = operands([a])
    if axis is None:  # NumPy flattens
        t, axis = t.reshape_or_copy(-1), 0
    else:
        axis = _lib.as_int(axis, 32, "axis")
    return result(_new(fn_name, t.context, t.handle, axis), numpy_out)


def cumsum(a, axis=None):
    """Inclusive cumulative sum along `axis` (None: of the flattened array), as numpy.cumsum."""
    return _scan("lt_cumsum", a, axis)


def cumprod(a, axis=None):
    """Inclusive cumulative product along `axis` (None: flattened), as numpy.cumprod."""
    return _scan("lt_cumprod", a, axis)


for _fn in (softmax, log_softmax, logsumexp, var, std, cumsum, cumprod):
    setattr(Tensor, _fn.__name__, _fn)
del _fn

__all__ = ["softmax", "log_softmax", "logsumexp", "var", "std", "cumsum", "cumprod"]

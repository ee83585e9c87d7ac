# SPDX-License-Identifier: MIT
"""NumPy's array methods on Tensor (t.sum(), t.max(axis=0), t.tolist(), ...) and the module
functions lt.all / lt.any, over the package's functions (so autograd records them as it records
those). Sits above ops, indexing, stats and array_api; imported last by the package.

Methods take NumPy's keyword arguments; as in NumPy, `dtype` converts before reducing and
`out` receives the result. t.sort() sorts in place, as ndarray.sort; lt.sort returns a
sorted copy."""
from . import array_api_ops as _xp_ops
from . import ops as _ops
from .convert import deliver, operands
from .einsum import matmul
from .indexing import argsort, ones_like, sort, zeros_like
from .tensor import Tensor


def all(a, axis=None, out=None, keepdims=False):  # noqa: A001 (NumPy's name)
    """np.all: whether every element (along `axis`, an int or a tuple) is nonzero; True for an
    empty reduction."""
    (ta,), numpy_out = operands([a])
    return deliver(_xp_ops.all(ta, axis=axis, keepdims=keepdims), out, numpy_out)


def any(a, axis=None, out=None, keepdims=False):  # noqa: A001 (NumPy's name)
    """np.any: whether some element (along `axis`) is nonzero; False for an empty reduction."""
    (ta,), numpy_out = operands([a])
    return deliver(_xp_ops.any(ta, axis=axis, keepdims=keepdims), out, numpy_out)


def _method(fn):
    """ndarray's method: the function with the tensor first (NumPy's argument order)."""
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    return method


def _flatten(self):
    """A C-ordered 1-d copy (ndarray.flatten)."""
    return self.contiguous().reshape(-1)


def _ravel(self):
    """1-d: a view when the layout allows, else a copy (ndarray.ravel)."""
    return self.reshape_or_copy(-1)


def _tolist(self):
    """Nested Python lists of Python scalars (ndarray.tolist)."""
    return self.numpy().tolist()


def _clip(self, min=None, max=None, out=None):  # noqa: A002 (NumPy's names)
    """ndarray.clip: one bound may be None (then it is np.minimum / np.maximum)."""
    if min is None and max is None:
        raise ValueError("libtensor: clip needs min or max")
    if min is None:
        return _ops.minimum(self, max, out)
    if max is None:
        return _ops.maximum(self, min, out)
    return _ops.clip(self, min, max, out)


def _sort(self, axis=-1, kind=None):
    """In place, as ndarray.sort (stable; NaN last); lt.sort returns a sorted copy."""
    self[...] = sort(self, axis)


def _imatmul(self, other):
    """t @= m: the product written back into t (buffered, as NumPy)."""
    return matmul(self, other, out=self)


def _fill(self, value):
    """Sets every element to `value` in place (ndarray.fill)."""
    self[...] = value


def _bool(self):
    """bool() of a one-element tensor; others are ambiguous, as NumPy says."""
    if self.size != 1:
        raise ValueError("libtensor: the truth value of an empty array is ambiguous" if
                         self.size == 0 else "libtensor: the truth value of an array with more "
                         "than one element is ambiguous (use a.any() or a.all())")
    return bool(self.item())


def _not_a_number(other):
    return other is None or isinstance(other, (str, bytes))


def _eq(self, other):
    """Elementwise ==; None and strings are unequal to every element (NumPy 2)."""
    if _not_a_number(other):
        return zeros_like(self, dtype="bool")
    return _ops.equal(self, other)


def _ne(self, other):
    if _not_a_number(other):
        return ones_like(self, dtype="bool")
    return _ops.not_equal(self, other)


def _contains(self, value):
    """`value in t`: some element equals it (ndarray.__contains__)."""
    return bool(any(_eq(self, value)))


def _format(self, spec):
    """format(t, spec): a 0-d tensor formats as its scalar; others only with an empty spec."""
    if self.ndim == 0:
        return format(self.item(), spec)
    if spec:
        raise TypeError("libtensor: unsupported format string passed to Tensor.__format__")
    return str(self)


_METHODS = {
    "sum": _method(_ops.sum),
    "prod": _method(_ops.prod),
    "mean": _method(_ops.mean),
    "max": _method(_ops.max),
    "min": _method(_ops.min),
    "argmax": _method(_ops.argmax),
    "argmin": _method(_ops.argmin),
    "all": _method(lambda a, axis=None, out=None, keepdims=False: all(a, axis, out, keepdims)),
    "any": _method(lambda a, axis=None, out=None, keepdims=False: any(a, axis, out, keepdims)),
    "clip": _clip,
    "round": lambda self, decimals=0, out=None: _ops.round(self, decimals, out),
    "argsort": lambda self, axis=-1, kind=None: argsort(self, axis, kind),
    "dot": lambda self, b, out=None: matmul(self, b, out=out),
    "flatten": _flatten,
    "ravel": _ravel,
    "tolist": _tolist,
    "fill": _fill,
    "sort": _sort,
    "__imatmul__": _imatmul,
    "__divmod__": lambda self, other: (_ops.floor_divide(self, other), _ops.remainder(self, other)),
    "__rdivmod__": lambda self, other: (_ops.floor_divide(other, self),
                                        _ops.remainder(other, self)),
    "__contains__": _contains,
    "__format__": _format,
}
_REPLACED = {"__bool__": _bool, "__eq__": _eq, "__ne__": _ne}  # refine the operators' versions
for _name, _method in _REPLACED.items():
    _method.__name__, _method.__qualname__ = _name, f"Tensor.{_name}"
    setattr(Tensor, _name, _method)
for _name, _method in _METHODS.items():
    if _name.startswith("__") or not hasattr(Tensor, _name):
        _method.__name__, _method.__qualname__ = _name, f"Tensor.{_name}"
        setattr(Tensor, _name, _method)
del _name, _method

__all__ = ["all", "any"]

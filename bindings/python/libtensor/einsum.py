"""einsum like numpy.einsum on NumPy arrays or Tensors, its path text, and explicit plans.

Operands as in ops (see convert): Tensors of one call share one context, nothing is moved
implicitly. Also installs Tensor's @ operator."""
import ctypes

import numpy as np

from . import _lib, enums
from .context import context
from .convert import operands, require_context, result
from .errors import InvalidArgumentError, check
from .tensor import Tensor, _new, check_writeable, from_numpy, lt_dtype

_PATHS = {"auto": enums.LT_PATH_AUTO, True: enums.LT_PATH_AUTO, "greedy": enums.LT_PATH_GREEDY,
          "optimal": enums.LT_PATH_OPTIMAL, "none": enums.LT_PATH_NONE,
          False: enums.LT_PATH_NONE, None: enums.LT_PATH_NONE}
_EINVAL = enums.LT_ERR_INVALID_ARGUMENT


class _Options:
    """lt_plan_options for an einsum: path algorithm, output dtype, memory limit."""

    def __init__(self, optimize="auto", dtype=None, memory_limit=None):
        key = optimize.lower() if isinstance(optimize, str) else optimize
        if isinstance(key, (list, tuple)) and key and key[0] == "einsum_path":
            key = "none"  # an explicit NumPy path: keep the operand order as written
        if key not in _PATHS:
            raise InvalidArgumentError(f"libtensor: optimize={optimize!r}: expected 'auto', "
                                       "'greedy', 'optimal', 'none', True or False",
                                       _EINVAL)
        out = ctypes.c_void_p()
        check(_lib.fn("lt_plan_options_create")(ctypes.byref(out)))
        self.handle = out.value
        check(_lib.fn("lt_plan_options_set_path")(self.handle, _PATHS[key]))
        if dtype is not None:
            check(_lib.fn("lt_plan_options_set_output_dtype")(self.handle, lt_dtype(dtype)))
        if memory_limit:
            check(_lib.fn("lt_plan_options_set_memory_limit")(self.handle, int(memory_limit)))

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h is not None:
            try:
                _lib.fn("lt_plan_options_destroy")(h)
            except Exception:
                pass


_options_cache = {}


def _options(optimize="auto", dtype=None, memory_limit=None):
    """Plan options for these settings, created once: the library only reads them."""
    key = (optimize if isinstance(optimize, (str, bool, type(None))) else repr(optimize),
           None if dtype is None else lt_dtype(dtype), memory_limit)
    opts = _options_cache.get(key)
    if opts is None:
        opts = _options_cache.setdefault(key, _Options(optimize, dtype, memory_limit))
    return opts


def _numpy_result_dtype(arrays, got):
    """NumPy's einsum keeps integer inputs integer; the library computes them in float."""
    want = np.result_type(*[a.dtype if isinstance(a, np.ndarray) else np.asarray(a).dtype
                            for a in arrays if not isinstance(a, Tensor)]) if arrays else None
    return want if want is not None and want.kind in "iub" and got.kind == "f" else None


def _to_numpy(t, arrays, dtype=None):
    arr = result(t, True)
    want = None if dtype is not None else _numpy_result_dtype(arrays, np.asarray(arr).dtype)
    return np.rint(arr).astype(want) if want is not None else arr


def _wrap_out(out, ctx):
    """A tensor writing straight into the NumPy array `out`, or None if it must be copied."""
    if isinstance(out, Tensor):
        require_context(out, ctx, "out=", "the operands")
        check_writeable(out)
        return out
    if not (isinstance(out, np.ndarray) and out.flags.writeable and ctx.is_cpu):
        return None
    try:
        t = from_numpy(out, ctx)
    except Exception:
        return None
    return t if _same_memory(t, out) else None


def _same_memory(t, arr):
    ptr = ctypes.c_void_p()
    if _lib.fn("lt_tensor_host_pointer")(t.handle, ctypes.byref(ptr)) != 0:
        return False
    return (ptr.value or 0) == arr.ctypes.data and t.dtype == arr.dtype


def einsum(expr, *arrays, device=None, optimize="auto", out=None, dtype=None):
    """Evaluates an einsum expression like numpy.einsum (ellipsis, repeated labels, implicit
    output, many operands). NumPy inputs give a NumPy result; Tensors a Tensor. `out` (an array
    or Tensor of the result's shape) receives the result and is returned."""
    tensors, numpy_out = operands(arrays, device)
    ctx = tensors[0].context if tensors else context(device)
    opts = _options(optimize, dtype)
    handles = _lib.handle_array(t.handle for t in tensors)
    if out is not None:
        target = _wrap_out(out, ctx)
        if target is not None:
            check(_lib.fn("lt_einsum_into")(_lib.cstr(expr, "einsum expression"), len(tensors), handles, opts.handle,
                                            target.handle))
            return out
    t = _new("lt_einsum", ctx, _lib.cstr(expr, "einsum expression"), len(tensors), handles, opts.handle)
    if out is None:
        return _to_numpy(t, arrays, dtype) if numpy_out else t
    np.copyto(out, np.asarray(_to_numpy(t, arrays, dtype)), casting="unsafe")
    return out


class EinsumPlan:
    """An einsum compiled for fixed operand layouts and dtypes; call it with arrays of those
    layouts (the data may differ) as many times as needed: plan(*arrays, out=None). Arrays of
    other layouts raise LayoutMismatchError. `shape` and `dtype` describe the result."""

    def __init__(self, expr, *arrays, device=None, optimize="auto", dtype=None,
                 memory_limit=None):
        tensors, self._numpy_out = operands(arrays, device)
        self.context = tensors[0].context if tensors else context(device)
        self.expr = expr
        self.n_inputs = len(tensors)
        opts = _options(optimize, dtype, memory_limit)
        out = ctypes.c_void_p()
        check(_lib.fn("lt_plan_einsum")(_lib.cstr(expr, "einsum expression"), len(tensors),
                                        _lib.handle_array(t.handle for t in tensors), None,
                                        opts.handle, ctypes.byref(out)))
        self.handle = out.value
        template = ctypes.c_void_p()
        check(_lib.fn("lt_plan_create_output")(self.handle, ctypes.byref(template)))
        template = Tensor(template.value, self.context)
        self.shape, self.dtype = template.shape, template.dtype

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h is not None:
            try:
                _lib.fn("lt_plan_destroy")(h)
            except Exception:
                pass

    def describe(self):
        """The chosen path, each step's flops and intermediate sizes."""
        return _lib.fn("lt_plan_describe")(self.handle).decode()

    __str__ = describe

    @property
    def workspace_size(self):
        size = ctypes.c_size_t()
        check(_lib.fn("lt_plan_workspace_size")(self.handle, ctypes.byref(size)))
        return size.value

    def __call__(self, *arrays, out=None, alpha=1.0, beta=0.0):
        """Runs the plan: out = alpha * einsum(arrays) + beta * out."""
        if len(arrays) != self.n_inputs:
            raise InvalidArgumentError(f"libtensor: this plan takes {self.n_inputs} operands, "
                                       f"got {len(arrays)}", _EINVAL)
        tensors, numpy_out = operands(arrays, self.context, "the plan")
        if beta != 0 and out is None:
            raise InvalidArgumentError("libtensor: beta != 0 needs out=", _EINVAL)
        target = None
        if isinstance(out, Tensor):
            target = _wrap_out(out, self.context)
        elif out is not None and out.flags.c_contiguous and out.dtype == self.dtype \
                and out.shape == self.shape:
            target = _wrap_out(out, self.context)  # the plan's own output layout
        if target is None:
            handle = ctypes.c_void_p()
            check(_lib.fn("lt_plan_create_output")(self.handle, ctypes.byref(handle)))
            target = Tensor(handle.value, self.context)
            if beta != 0:
                target[...] = np.asarray(out)
        scalars = (ctypes.c_double * 2)(alpha, beta)
        check(_lib.fn("lt_plan_execute")(self.handle, _lib.handle_array(t.handle for t in tensors),
                                         len(tensors), scalars, 2, target.handle))
        if out is not None and target is not out and not _is_view_of(target, out):
            np.copyto(out, np.asarray(_to_numpy(target, arrays)), casting="unsafe")
            return out
        if out is not None:
            return out
        return _to_numpy(target, arrays) if numpy_out else target


# Tensor's matrix product: tensor.py sits below this module, so it is installed from here.
def _matmul(self, other):
    return einsum("...ij,...jk->...ik", self, other)


_matmul.__name__, _matmul.__qualname__ = "__matmul__", "Tensor.__matmul__"
Tensor.__matmul__ = _matmul


def _is_view_of(t, out):
    return isinstance(out, np.ndarray) and _same_memory(t, out)


def plan_einsum(expr, *arrays, **kwargs):
    """Compiles `expr` for the layouts of `arrays`; returns a callable EinsumPlan."""
    return EinsumPlan(expr, *arrays, **kwargs)


def einsum_path(expr, *arrays, device=None, optimize="auto"):
    """The text of lt_plan_describe for this expression and these operands."""
    return plan_einsum(expr, *arrays, device=device, optimize=optimize).describe()


__all__ = ["einsum", "einsum_path", "plan_einsum", "EinsumPlan"]

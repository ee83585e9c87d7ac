# SPDX-License-Identifier: MIT
"""Operands in, results out: what ops and einsum share. Sits on tensor; below ops and einsum.

Operations take Tensors, NumPy arrays (anything np.asarray takes) and Python scalars. With no
Tensor among them the result goes back as a NumPy array; with a Tensor it stays a Tensor.

No Tensor is ever moved by an operation: every Tensor of one operation must live on the
operation's context, else ContextMismatchError (status LT_ERR_CONTEXT_MISMATCH) naming both
devices; move one explicitly with Tensor.to(device). This holds for two contexts of one
device as well, as the C library refuses them alike (lt.context() gives every name of a
device the same shared context, so only explicitly made Contexts can meet this). NumPy data
and scalars are not Tensors: they are wrapped (zero-copy on the CPU) or copied onto the
operation's context, as before."""
import ctypes

import numpy as np

from . import _lib, enums
from ._ext import FAST
from .context import context
from .errors import DtypeError, check, raise_status
from .tensor import Tensor, check_writeable, from_numpy


def _is_scalar(x):
    return isinstance(x, (int, float, np.number)) and not isinstance(x, bool)


def _array_dtype(v, kinds):
    """The NumPy dtype of an array or Tensor operand when its kind is in `kinds` (a bfloat16
    Tensor's is the string "bfloat16", of kind "f"), else None."""
    if _is_scalar(v):
        return None
    dt = getattr(v, "dtype", None)
    if dt == "bfloat16":
        return dt if "f" in kinds else None
    return dt if isinstance(dt, np.dtype) and dt.kind in kinds else None


def weak_scalar_bf16(v, ctx):
    """Python scalar `v` beside a bfloat16 Tensor as the 0-d bfloat16 Tensor a weak scalar
    becomes (NumPy has no bfloat16 dtype to make it with): rounded once, from float64."""
    return from_numpy(np.asarray(v, dtype=np.float64), ctx).astype("bfloat16")


def _scalar_dtype(v, values):
    """NumPy 2's dtype for a Python scalar among arrays (weak scalars): a float takes the
    arrays' float dtype, an int their integer (or float) dtype when the value fits; None:
    the scalar's own default (int64 / float64)."""
    if isinstance(v, float):
        kinds = "f"
    elif isinstance(v, int):
        kinds = "fiu"
    else:
        return None
    for dt in (_array_dtype(x, kinds) for x in values):
        if dt is None:
            continue
        if dt != "bfloat16" and dt.kind in "iu" and not np.iinfo(dt).min <= v <= np.iinfo(dt).max:
            return None  # NumPy 2 raises OverflowError here; we widen instead
        return dt
    return None


def require_context(t, ctx, what, where):
    """ContextMismatchError unless Tensor `t` (described as `what`, e.g. "operand 2") lives on
    `ctx` (described as `where`, e.g. "operand 1"), naming both devices."""
    if t.context is ctx:
        return
    if t.device != ctx.device:
        raise_status("LT_ERR_CONTEXT_MISMATCH",
                     f"libtensor: {what} lives on {t.device!r} but {where} on {ctx.device!r}; "
                     f"an operation does not move tensors between devices: use "
                     f".to({ctx.device!r}) (or .to({t.device!r}) on the other side)")
    raise_status("LT_ERR_CONTEXT_MISMATCH",
                 f"libtensor: {what} and {where} belong to two different {ctx.device!r} "
                 "contexts; the tensors of one operation must share one context (Tensor.to "
                 "copies onto another)")


# Lean calls: small NumPy operands passed again and again (a training loop's weights) are
# wrapped once. An entry holds its array, so its id cannot be reused while cached, and is taken
# only for the same array object with the same shape and strides (ndarray.shape can be
# assigned). Only arrays wrapped zero-copy are cached, so the tensor always sees the array's
# current values. Small arrays only, few of them: the cache never holds much memory alive.
_WRAP_CACHE = {}
_WRAP_SLOTS = 64
_WRAP_MAX_BYTES = 1 << 16
_ZERO_COPY_DTYPES = frozenset(np.dtype(d) for d in (np.float16, np.float32, np.float64,
                                                    np.int64))


def _wrap(v, ctx):
    if type(v) is not np.ndarray or v.nbytes > _WRAP_MAX_BYTES or not ctx.is_cpu:
        return from_numpy(v, ctx)
    key = id(v)
    hit = _WRAP_CACHE.get(key)
    if hit is not None and hit[0] is v and hit[1] is ctx and hit[2] == v.shape \
            and hit[3] == v.strides:
        return hit[4]
    t = from_numpy(v, ctx)
    if v.dtype in _ZERO_COPY_DTYPES and v.flags.aligned and \
            not any(s % v.itemsize for s in v.strides):
        if len(_WRAP_CACHE) >= _WRAP_SLOTS:
            _WRAP_CACHE.pop(next(iter(_WRAP_CACHE)))
        _WRAP_CACHE[key] = (v, ctx, v.shape, v.strides, t)
    return t


def clear_wrap_cache():
    """Drops the cached wrappers of NumPy operands (and the references they hold), the C
    extension's as well."""
    _WRAP_CACHE.clear()
    if FAST is not None:
        FAST.clear_wraps()


# Set by autograd: will_record(tensors) is True when an op over these Tensors is recorded on a
# tape. The NumPy operands of such an op are copied, not wrapped: the tape may save them for
# backward, and a NumPy array written later changes under a wrapper without the library seeing
# it (a silently wrong gradient). The C extension copies them likewise.
will_record = None


def operands(values, device=None, where=None):
    """Tensors for `values` on one context, and whether the caller passed only NumPy data (so
    results go back as NumPy arrays). The context is `device`'s when given (a name or a
    Context; `where` then describes it in errors), else the first Tensor's, else the default
    device's. A Tensor on another context raises ContextMismatchError (see the module)."""
    tensors = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
    if device is not None or not tensors:
        ctx = context(device)
        where = where or f"the operation (device={device!r})"
    else:
        ctx = values[tensors[0]].context
        where = f"operand {tensors[0] + 1}"
    private = bool(tensors) and will_record is not None and len(tensors) < len(values) and \
        any(isinstance(v, np.ndarray) for v in values) and will_record([values[i] for i in tensors])
    out = []
    for i, v in enumerate(values):
        like = None
        if _is_scalar(v) and not isinstance(v, np.generic):
            like = _scalar_dtype(v, values)
        if isinstance(v, Tensor):
            require_context(v, ctx, f"operand {i + 1}", where)
            out.append(v)
        elif like == "bfloat16":
            out.append(weak_scalar_bf16(v, ctx))
        elif like is not None:
            # NumPy keeps the array's dtype for Python scalars; so do we.
            out.append(from_numpy(np.asarray(v, dtype=like), ctx))
        elif private and isinstance(v, np.ndarray):
            out.append(from_numpy(v, ctx, copy=True))
        else:
            out.append(_wrap(v, ctx))
    return out, not tensors


def result(t, numpy_out):
    """`t` itself, or for NumPy callers a writable NumPy array of it: the zero-copy view of a
    CPU result (which nothing else references), else a copy (0-d results as NumPy scalars)."""
    if not numpy_out:
        return t
    arr = t._host_view()
    if arr is None:
        arr = t._host_copy()
    return arr[()] if arr.ndim == 0 else arr


def out_tensor(out, ctx):
    """A Tensor writing straight into `out` (a Tensor on ctx, or a writable NumPy array the
    library can wrap zero-copy on a CPU context), else None (the caller copies into it).
    ValueError for a read-only `out`, TypeError for anything that is not an array."""
    if isinstance(out, Tensor):
        require_context(out, ctx, "out=", "the operands")
        check_writeable(out)
        return out
    if not isinstance(out, np.ndarray):
        raise TypeError(f"libtensor: out= must be a Tensor or a NumPy array, not "
                        f"{type(out).__name__}")
    if not out.flags.writeable:
        raise ValueError("libtensor: out= is read-only")
    if not ctx.is_cpu:
        return None
    hit = _WRAP_CACHE.get(id(out))
    if hit is not None and hit[0] is out and hit[1] is ctx and hit[2] == out.shape \
            and hit[3] == out.strides:
        return hit[4]  # cached wrappers are zero-copy by construction
    try:
        t = _wrap(out, ctx)
    except Exception:
        return None
    ptr = ctypes.c_void_p()
    if _lib.fn("lt_tensor_host_pointer")(t.handle, ctypes.byref(ptr)) != 0:
        return None
    same = (ptr.value or 0) == out.__array_interface__["data"][0] and t.dtype == out.dtype
    return t if same else None


def _np_kind(dtype):
    return np.dtype(np.float32) if isinstance(dtype, str) else dtype  # "bfloat16": a float


def promoted_dtype(tensors):
    """NumPy's result_type of the tensors' dtypes, as the library's ops promote: the floats'
    common dtype first, then each dtype with it (a pairwise fold is order-dependent: int8,
    uint8, float16 would give float32 through int16; NumPy gives float16)."""
    promote = _lib.fn("lt_dtype_promote")

    def pair(a, b):
        d = ctypes.c_int(0)
        check(promote(a, b, ctypes.byref(d)))
        return d.value
    floats = [t.lt_dtype for t in tensors if enums.LT_F16 <= t.lt_dtype <= enums.LT_F64]
    common = None
    for f in floats:
        common = f if common is None else pair(common, f)
    out = None
    for t in tensors:
        x = t.lt_dtype if common is None else pair(common, t.lt_dtype)
        out = x if out is None else pair(out, x)
    return out


def check_out_cast(result_dtype, out_dtype):
    """NumPy's default rule for out= (casting='same_kind'): a result may be written into an
    out= of the same kind or a wider one (bool < unsigned < signed < float), never float into
    an integer or bool array, nor signed into unsigned: DtypeError (a TypeError), as NumPy's
    UFuncTypeError."""
    if not np.can_cast(_np_kind(result_dtype), _np_kind(out_dtype), casting="same_kind"):
        raise DtypeError(f"libtensor: cannot write a {result_dtype} result into out= of dtype "
                         f"{out_dtype} (NumPy's casting rule 'same_kind'; convert with "
                         f"astype first)")


# Set by autograd: refuses an in-place write into a tensor the tape tracks (the tape does not
# record writes, so its gradient would silently be the value's before the write).
inplace_hook = None


def check_inplace(what, *tensors):
    """Refuses (LT_ERR_INVALID_ARGUMENT) an in-place write by `what` into a tracked tensor."""
    if inplace_hook is not None:
        inplace_hook(what, *tensors)


def deliver(t, out, numpy_out, broadcast=False):
    """The result `t` of an operation as the caller asked: with out=None as `result` does; else
    written into `out` (converted to its dtype) and `out` returned. The shapes must match, or
    with `broadcast` (elementwise ops, whose out= takes part in broadcasting as in NumPy) t's
    shape must broadcast to out's."""
    if out is None:
        return result(t, numpy_out)
    if not isinstance(out, (Tensor, np.ndarray)):
        raise TypeError(f"libtensor: out= must be a Tensor or a NumPy array, not "
                        f"{type(out).__name__}")
    # a tracked result written into out= would leave the graph behind (PyTorch refuses out= with
    # inputs that require a gradient); a tracked out= would be overwritten unrecorded
    check_inplace("out=", t, *((out,) if isinstance(out, Tensor) else ()))
    shape = tuple(out.shape)
    if t.shape != shape:
        try:
            ok = broadcast and np.broadcast_shapes(t.shape, shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise_status("LT_ERR_SHAPE_MISMATCH",
                         f"libtensor: out= has shape {shape}, the result {t.shape}")
    check_out_cast(t.dtype, out.dtype)
    target = out_tensor(out, t.context)
    if target is None:
        np.copyto(out, t.numpy(), casting="same_kind")
    else:
        check(_lib.fn("lt_tensor_copy_into")(target.handle, t.handle))
    return out


__all__ = ["operands", "result", "require_context", "out_tensor", "deliver", "check_out_cast",
           "clear_wrap_cache", "check_inplace"]

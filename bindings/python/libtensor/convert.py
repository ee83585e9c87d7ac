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
import numpy as np

from .context import context
from .errors import raise_status
from .tensor import Tensor, from_numpy


def _is_scalar(x):
    return isinstance(x, (int, float, np.number)) and not isinstance(x, bool)


def _array_dtype(v, kinds):
    """The NumPy dtype of an array or Tensor operand when its kind is in `kinds`, else None."""
    if _is_scalar(v) or isinstance(getattr(v, "dtype", None), str):
        return None
    dt = getattr(v, "dtype", None)
    return dt if isinstance(dt, np.dtype) and dt.kind in kinds else None


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
        if dt.kind in "iu" and not np.iinfo(dt).min <= v <= np.iinfo(dt).max:
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
    out = []
    for i, v in enumerate(values):
        like = None
        if _is_scalar(v) and not isinstance(v, np.generic):
            like = _scalar_dtype(v, values)
        if isinstance(v, Tensor):
            require_context(v, ctx, f"operand {i + 1}", where)
            out.append(v)
        elif like is not None:
            # NumPy keeps the array's dtype for Python scalars; so do we.
            out.append(from_numpy(np.asarray(v, dtype=like), ctx))
        else:
            out.append(from_numpy(v, ctx))
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


__all__ = ["operands", "result", "require_context"]

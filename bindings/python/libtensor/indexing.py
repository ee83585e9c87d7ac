# SPDX-License-Identifier: MIT
"""Gather/scatter, boolean masks, joining, creation and sorting, NumPy style (include/tensor/index.h).

As in ops: Tensors, NumPy arrays or lists in; NumPy arrays out when no Tensor came in, else
Tensors on the operands' context. Integer index arrays may hold negative indices (counted from
the end); an index out of range raises OutOfRangeError naming the operand and axis, and is
never read. Also extends Tensor indexing and assignment with integer arrays (a[idx], a[idx] = v)
and masks (a[m], a[m] = v)."""
import ctypes
import operator

import numpy as np

from . import _lib, enums
from .context import context
from .convert import check_inplace, deliver, operands, promoted_dtype, result
from .errors import InvalidArgumentError, OutOfRangeError, ShapeMismatchError, check
from .tensor import (BF16, _EXACT_INTS, _LT_TO_NP, Tensor, _dtype_out, _new, check_writeable,
                     from_numpy, full, lt_dtype, tensor)


def _axis(axis, what="axis"):
    return _lib.as_int(axis, 32, what)


def _flat(t):
    return t.reshape_or_copy(-1)


def _index_operand(values):
    """Tensors for (data, index): integer arrays keep their dtype (no widening)."""
    data, index = values
    if not isinstance(index, Tensor):
        arr = np.asarray(index)
        if arr.dtype.kind in "iu":
            index = arr
        elif arr.size == 0:
            index = arr.astype(np.int64)
        else:
            raise IndexError(f"libtensor: indices must be integers, not {arr.dtype}")
    return operands([data, index])


def take(a, indices, axis=None, out=None):
    """np.take(a, indices, axis): axis None takes from the flattened array."""
    (ta, ti), numpy_out = _index_operand([a, indices])
    if axis is None:
        ta, axis = _flat(ta), 0
    return deliver(_new("lt_take", ta.context, ta.handle, ti.handle, _axis(axis)), out,
                   numpy_out)


def take_along_axis(a, indices, axis=-1):
    """np.take_along_axis(a, indices, axis) (axis None: both flattened)."""
    (ta, ti), numpy_out = _index_operand([a, indices])
    if axis is None:
        ta, ti, axis = _flat(ta), _flat(ti), 0
    return result(_new("lt_take_along_axis", ta.context, ta.handle, ti.handle, _axis(axis)),
                  numpy_out)


def scatter_add(target, axis, index, src):
    """In place, deterministic: target[..., index[j], ...] += src[..., j, ...] along `axis`
    (torch index_add_ with a 1-D index, scatter_add_ with an index shaped like src). `target`
    must be a Tensor; returns it."""
    if not isinstance(target, Tensor):
        raise TypeError("libtensor: scatter_add updates a Tensor in place")
    (ts, ti), _ = _index_operand([src, index])
    ts = operands([target, ts])[0][1]
    check_writeable(target)
    _check_inplace("scatter_add", target, ts)
    check(_lib.fn("lt_scatter_add")(target.handle, _axis(axis), ti.handle, ts.handle))
    return target


# In-place writes refuse tensors a tape tracks (convert.check_inplace, which autograd arms).
_check_inplace = check_inplace


def _split_views(ta, axis, points):
    outs = (ctypes.c_void_p * (len(points) + 1))()
    check(_lib.fn("lt_split")(ta.handle, axis, len(points), _lib.int64_array(points), outs))
    return [Tensor(h, ta.context, ta.readonly) for h in outs]


def _tensors(arrays, what):
    """The pieces to join, in their promoted dtype (NumPy's concatenate / stack promote; the
    library joins tensors of one dtype)."""
    arrays = list(arrays)
    if not arrays:
        raise InvalidArgumentError(f"libtensor: {what} needs at least one array",
                                   enums.LT_ERR_INVALID_ARGUMENT)
    ts, numpy_out = operands(arrays)
    if any(t.lt_dtype != ts[0].lt_dtype for t in ts):
        code = promoted_dtype(ts)
        ts = [t if t.lt_dtype == code else t.contiguous(_dtype_out(code)) for t in ts]
    return ts, numpy_out


def concatenate(arrays, axis=0, out=None):
    """np.concatenate (axis None: flattened first). A view when the pieces are adjacent views
    of one storage (as split returns them); out= receives a copy."""
    ts, numpy_out = _tensors(arrays, "concatenate")
    if axis is None:
        ts, axis = [_flat(t) for t in ts], 0
    handles = _lib.handle_array(t.handle for t in ts)
    joined = _new("lt_concatenate", ts[0].context, len(ts), handles, _axis(axis))
    # A view over read-only pieces stays read-only.
    joined.readonly = any(t.readonly and joined.shares_storage(t) for t in ts)
    return deliver(joined, out, numpy_out)


def stack(arrays, axis=0, out=None):
    ts, numpy_out = _tensors(arrays, "stack")
    handles = _lib.handle_array(t.handle for t in ts)
    return deliver(_new("lt_stack", ts[0].context, len(ts), handles, _axis(axis)), out,
                   numpy_out)


def split(a, indices_or_sections, axis=0):
    """np.split: views of a. An integer N must divide the axis into N equal parts."""
    (ta,), numpy_out = operands([a])
    axis = _axis(axis)
    if ta.ndim == 0:
        raise OutOfRangeError("libtensor: split needs an array of rank >= 1",
                              enums.LT_ERR_OUT_OF_RANGE)
    n = ta.shape[axis % ta.ndim] if -ta.ndim <= axis < ta.ndim else 0
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        points = [_lib.as_int(p, 64, "split point") for p in indices_or_sections]
    else:
        if sections <= 0 or n % sections:
            raise ValueError("libtensor: array split does not result in an equal division")
        points = [i * (n // sections) for i in range(1, sections)]
    return [result(t, numpy_out) for t in _split_views(ta, axis, points)]


def _created(fn_name, device, *args):
    ctx = context(device)
    return _new(fn_name, ctx, ctx.handle, *args)


def arange(start=None, stop=None, step=None, dtype=None, device=None):
    """np.arange: int64 when every argument is an integer, else float64 (unless dtype);
    arange(n), arange(start, stop[, step]) and arange(stop=n)."""
    if stop is None:
        start, stop = 0, start
    elif start is None:
        start = 0
    if stop is None:
        raise TypeError("libtensor: arange needs stop")
    step = 1 if step is None else step
    if dtype is None:
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                   for v in (start, stop, step))
        dtype = "int64" if ints else "float64"
    code = lt_dtype(dtype)
    if _big_int(start, stop, step) and code in _EXACT_INTS:
        # lt_arange takes doubles, which round integers past 2^53 (and got the count wrong):
        # NumPy's integer arange is exact, and its errors for out-of-range values are NumPy's
        values = range(operator.index(start), operator.index(stop), operator.index(step))
        info = np.iinfo(_LT_TO_NP[code])
        for v in (values[0], values[-1]) if len(values) else ():
            if not info.min <= v <= info.max:
                raise OutOfRangeError(f"lt_arange: {v} is outside the range of {info.dtype} "
                                      f"[{info.min}, {info.max}]", enums.LT_ERR_OUT_OF_RANGE)
        arr = np.arange(values.start, values.stop, values.step, dtype=info.dtype)
        return tensor(arr, device=device, copy=True)
    return _created("lt_arange", device, code, float(start), float(stop), float(step))


def _big_int(*values):
    """Some value is an integer that a double cannot hold exactly."""
    return any(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and abs(int(v)) > 2**53
               for v in values)


def linspace(start, stop, num=50, endpoint=True, dtype="float64", device=None):
    if _lib.as_int(num, 64, "num") < 0:
        raise ValueError(f"libtensor: number of samples, {num}, must be non-negative")
    return _created("lt_linspace", device, lt_dtype(dtype), float(start), float(stop), num,
                    bool(endpoint))


def eye(N, M=None, k=0, dtype="float64", device=None):
    """np.eye; float64 by default as NumPy."""
    M = N if M is None else M
    k = _lib.as_int(k, 1 << 16, "k")
    # A diagonal past the matrix is all zeros at any distance (k may exceed int64, as NumPy's).
    k = max(-_lib.as_int(N, 64, "N") - 1, min(k, _lib.as_int(M, 64, "M") + 1))
    return _created("lt_eye", device, lt_dtype(dtype), N, M, k)


def ones(shape, dtype="float64", device=None):
    """A tensor of ones (float64 by default as NumPy)."""
    shape = [shape] if isinstance(shape, (int, np.integer)) else list(shape)
    return _created("lt_ones", device, lt_dtype(dtype), len(shape), _lib.int64_array(shape))


def _like(fn_name, a, dtype, *value):
    (ta,), numpy_out = operands([a])
    code = enums.LT_DTYPE_INVALID if dtype is None else lt_dtype(dtype)
    return result(_new(fn_name, ta.context, ta.handle, code, *value), numpy_out)


def full_like(a, fill_value, dtype=None):
    if _big_int(fill_value):  # lt_full_like takes a double: lt.full keeps big integers exact
        (ta,), numpy_out = operands([a])
        code = ta.lt_dtype if dtype is None else lt_dtype(dtype)
        if code in _EXACT_INTS:
            return result(full(ta.shape, fill_value, _LT_TO_NP[code], device=ta.context),
                          numpy_out)
    return _like("lt_full_like", a, dtype, float(fill_value))
def ones_like(a, dtype=None): return _like("lt_ones_like", a, dtype)
def zeros_like(a, dtype=None): return _like("lt_zeros_like", a, dtype)
def empty_like(a, dtype=None): return _like("lt_empty_like", a, dtype)


def _tracked(t):
    """Whether t requires a gradient (autograd installs requires_grad): values selected from it
    are then gathered by take / take_along_axis, which the tape records, as PyTorch
    differentiates sort, topk and masks."""
    return getattr(t, "requires_grad", False)


def _sorted(fn_name, a, axis, descending):
    (ta,), numpy_out = operands([a])
    if axis is None:
        ta, axis = _flat(ta), 0
    if fn_name == "lt_sort" and _tracked(ta):
        order = _new("lt_argsort", ta.context, ta.handle, _axis(axis), bool(descending))
        return result(take_along_axis(ta, order, axis), numpy_out)
    return result(_new(fn_name, ta.context, ta.handle, _axis(axis), bool(descending)), numpy_out)


def sort(a, axis=-1, kind=None, descending=False):
    """np.sort (always stable; NaN last). descending=True: largest first, NaN first."""
    return _sorted("lt_sort", a, axis, descending)


def argsort(a, axis=-1, kind=None, descending=False):
    """np.argsort(kind="stable") as int64."""
    return _sorted("lt_argsort", a, axis, descending)


def topk(a, k, axis=-1, largest=True):
    """torch.topk(a, k, axis, largest, sorted=True): (values, int64 indices)."""
    (ta,), numpy_out = operands([a])
    v, i = ctypes.c_void_p(), ctypes.c_void_p()
    check(_lib.fn("lt_topk")(ta.handle, _lib.as_int(k, 64, "k"), _axis(axis), bool(largest),
                             ctypes.byref(v), ctypes.byref(i)))
    vt, it = Tensor(v.value, ta.context), Tensor(i.value, ta.context)
    if _tracked(ta):
        vt = take_along_axis(ta, it, axis)
    return result(vt, numpy_out), result(it, numpy_out)


def argwhere(a):
    (ta,), numpy_out = operands([a])
    return result(_new("lt_argwhere", ta.context, ta.handle), numpy_out)


# a[idx] with an integer array and a[mask] with a boolean array (one index, not in a tuple).
_basic_getitem = Tensor.__getitem__
_basic_setitem = Tensor.__setitem__


class MaskShapeError(ShapeMismatchError, IndexError):
    """A boolean mask whose shape is not the indexed array's leading extents: IndexError, as
    NumPy and the array API standard raise, and ShapeMismatchError, as the library reports it."""


def _array_key(key):
    """(kind, index) for an integer-array or boolean-mask key: kind "b" or "i"/"u"; None for
    any other key (basic indexing)."""
    if not isinstance(key, (list, np.ndarray, Tensor)):
        return None
    if isinstance(key, Tensor):
        kind = "b" if key.dtype == np.bool_ else key.dtype.kind
        idx = key
    else:
        arr = np.asarray(key)
        # [] is float64 to NumPy: an empty key is integer unless it is a bool array
        kind = arr.dtype.kind if arr.size or arr.dtype == np.bool_ else "i"
        idx = arr if kind != "i" or arr.size else arr.astype(np.int64)
    if kind not in "biu":
        raise IndexError(f"libtensor: arrays used as indices must be of integer or boolean "
                         f"type, not {np.dtype(kind + '8') if kind == 'f' else kind}")
    return kind, idx


def _mask_select(self, idx):
    ti = operands([self, idx])[0][1]
    if _tracked(self) and ti.ndim <= self.ndim and tuple(ti.shape) == tuple(self.shape[:ti.ndim]):
        # the selected rows gathered from a view with the mask's axes merged: recorded
        rest = tuple(self.shape[ti.ndim:])
        flat = self.reshape_or_copy(*((-1,) + rest)) if self.ndim else self.reshape_or_copy(1)
        picks = np.flatnonzero(np.asarray(ti.numpy(), dtype=bool))
        return take(flat, picks.astype(np.int64), 0)
    if ti.size == 0 and ti.ndim <= self.ndim and all(
            m in (n, 0) for m, n in zip(ti.shape, self.shape)):
        # The array API lets an empty mask have 0 where the array has any extent: nothing is
        # selected (NumPy refuses it).
        shape = (0,) + tuple(self.shape[ti.ndim:])
        if self.lt_dtype == BF16:
            return from_numpy(np.empty(shape, np.float32), self.context, dtype="bfloat16")
        return from_numpy(np.empty(shape, self.dtype), self.context, copy=True)
    try:
        return _new("lt_mask_select", self.context, self.handle, ti.handle)
    except ShapeMismatchError as e:
        raise MaskShapeError(str(e), e.status) from None


def _is_array_index(k):
    return isinstance(k, (list, np.ndarray, Tensor))


def _host_index(k):
    """An array index as a NumPy array (integer or bool), IndexError for other dtypes."""
    kind, idx = _array_key(k)
    return idx.numpy() if isinstance(idx, Tensor) else np.asarray(idx)


def _advanced_getitem(self, key):
    """NumPy's advanced indexing with several index arrays in a tuple (t[i, j], t[1:, idx],
    t[mask, 0]): the slices and None first, as a view; then the index arrays, broadcast
    together, become one flat index into those axes merged (their result dims where the first
    of them stood when they are adjacent, else in front, as NumPy places them), taken with
    lt.take, which autograd records."""
    key = list(key)
    if any(k is Ellipsis for k in key):
        at = key.index(Ellipsis)
        key = [_host_index(k) if _is_array_index(k) else k for k in key]
        used = sum(0 if k is None or k is Ellipsis else
                   k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1 for k in key)
        key[at:at + 1] = [slice(None)] * max(self.ndim - used, 0)
    basic, arrays, axes, axis = [], [], [], 0
    for k in key:
        if k is None:
            basic.append(None)
            axis += 1
        elif _is_array_index(k) or isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            arr = np.asarray(k) if not _is_array_index(k) else _host_index(k)
            parts = np.nonzero(arr) if arr.dtype == np.bool_ else (arr,)
            for part in parts:  # a mask of d dims indexes d axes
                basic.append(slice(None))
                arrays.append(part)
                axes.append(axis)
                axis += 1
        else:
            basic.append(k)
            axis += 0 if isinstance(k, (int, np.integer)) else 1
    view = _basic_getitem(self, tuple(basic))
    try:
        index = np.broadcast_arrays(*arrays)
    except ValueError as e:
        raise IndexError(f"libtensor: shape mismatch: indexing arrays could not be broadcast "
                         f"together ({e})") from None
    extents = [view.shape[a] for a in axes]
    flat_shape = index[0].shape
    for i, (arr, n) in enumerate(zip(index, extents)):
        if arr.size and (arr.min() < -n or arr.max() >= n):
            bad = arr[(arr < -n) | (arr >= n)].flat[0]
            raise OutOfRangeError(f"libtensor: index {bad} is out of bounds for axis "
                                  f"{axes[i]} with size {n}", enums.LT_ERR_OUT_OF_RANGE)
    adjacent = axes == list(range(axes[0], axes[0] + len(axes)))
    if not adjacent:  # NumPy puts the broadcast dims first
        order = axes + [a for a in range(view.ndim) if a not in axes]
        view = view.permute(*order)
        axes = list(range(len(axes)))
    p = axes[0]
    flat = np.ravel_multi_index([np.where(a < 0, a + n, a).astype(np.int64).ravel()
                                 for a, n in zip(index, extents)], extents) if index[0].size \
        else np.zeros(0, np.int64)
    merged = view.reshape_or_copy(*(tuple(view.shape[:p]) + (-1,) +
                                    tuple(view.shape[p + len(axes):]))) if all(extents) else \
        view.reshape_or_copy(*(tuple(view.shape[:p]) + (0,) + tuple(view.shape[p + len(axes):])))
    got = take(merged, flat.astype(np.int64), p)
    return got.reshape(tuple(view.shape[:p]) + tuple(flat_shape) +
                       tuple(view.shape[p + len(axes):]))


def _getitem(self, key):
    if isinstance(key, tuple) and any(_is_array_index(k) for k in key):
        return _advanced_getitem(self, key)
    found = _array_key(key)
    if found is None:
        return _basic_getitem(self, key)
    kind, idx = found
    return _mask_select(self, idx) if kind == "b" else take(self, idx, 0)


def _value_tensor(self, value):
    """value as a Tensor of self's dtype on self's context (NumPy's casting on assignment)."""
    if isinstance(value, Tensor):
        if value.dtype == self.dtype and value.context is self.context:
            return value
        value = value.numpy()
    return from_numpy(np.asarray(value, dtype=np.float64 if self.lt_dtype == BF16 else self.dtype),
                      self.context)


def _setitem(self, key, value):
    """a[mask] = v and a[idx] = v as NumPy assigns them (the last of repeated indices wins);
    any other key writes through the view a[key]."""
    if isinstance(key, tuple) and any(_is_array_index(k) for k in key):
        check_writeable(self)
        _check_inplace("__setitem__", self)
        return _assign_on_host(self, tuple(_host_index(k) if _is_array_index(k) else k
                                           for k in key), _value_tensor(self, value))
    found = _array_key(key)
    if found is None:
        _check_inplace("__setitem__", self)
        return _basic_setitem(self, key, value)
    check_writeable(self)
    _check_inplace("__setitem__", self)
    kind, idx = found
    src = _value_tensor(self, value)
    if kind == "b":
        mask = operands([self, idx])[0][1]
        extra = self.ndim - mask.ndim
        if (extra >= 0 and tuple(mask.shape) == tuple(self.shape[:mask.ndim])
                and src.ndim <= extra
                and all(v in (1, s) for v, s in zip(src.shape[::-1], self.shape[::-1]))):
            # One value (or row) for every selected element: selected in place, on the device.
            cond = mask.reshape(tuple(mask.shape) + (1,) * extra)
            if cond.dtype != np.bool_:
                cond = cond != 0
            check(_lib.fn("lt_where_into")(cond.handle, src.handle, self.handle, self.handle))
            return
        if _mask_select(self, mask).size == 0:  # the shape checks, with the library's message
            return  # nothing selected
    # Values per selected element, or integer indices: through a host copy, as NumPy assigns.
    _assign_on_host(self, idx.numpy() if isinstance(idx, Tensor) else np.asarray(idx), src)


def _assign_on_host(self, key_host, src):
    """self[key_host] = src as NumPy assigns it (the last of repeated indices wins), through
    a host copy written back whole."""
    host = self.numpy(copy=True)
    try:
        host[key_host] = src.numpy()
    except IndexError as e:
        raise OutOfRangeError(f"libtensor: {e}", enums.LT_ERR_OUT_OF_RANGE) from None
    except ValueError as e:
        raise ShapeMismatchError(f"libtensor: {e}", enums.LT_ERR_SHAPE_MISMATCH) from None
    back = from_numpy(host, self.context)
    check(_lib.fn("lt_tensor_copy_into")(self.handle, back.handle))


_getitem.__doc__ = (_basic_getitem.__doc__ or "") + (
    " An integer array (take along axis 0) or a boolean mask over the leading axes also work,"
    " and tuples mixing index arrays with ints, slices, None and ... (NumPy's advanced"
    " indexing).")
Tensor.__getitem__ = _getitem
_setitem.__doc__ = (_basic_setitem.__doc__ or "") + " " + _setitem.__doc__
Tensor.__setitem__ = _setitem

__all__ = ["take", "take_along_axis", "scatter_add", "concatenate", "stack", "split", "arange",
           "linspace", "eye", "ones", "full_like", "ones_like", "zeros_like", "empty_like",
           "sort", "argsort", "topk", "argwhere"]

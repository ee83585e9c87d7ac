# SPDX-License-Identifier: MIT
"""Tensors: NumPy interop (zero-copy both ways on the CPU), views, copies and .npy files.

Sits on _lib, enums, errors and context; the arithmetic operators of Tensor (+, -, *, /, **,
unary -, @) are installed by ops and einsum, which sit above this module."""
import ctypes
import itertools
import operator
import threading

import numpy as np

from . import _lib, enums
from .context import Context, context
from .errors import DtypeError, check

F16, BF16, F32, F64, I64 = enums.LT_F16, enums.LT_BF16, enums.LT_F32, enums.LT_F64, enums.LT_I64
# issue 18 A: every NumPy integer and bool dtype has its own code (no widening).
I8, I16, I32, U8, U16, U32, U64, BOOL = (enums.LT_I8, enums.LT_I16, enums.LT_I32, enums.LT_U8,
                                         enums.LT_U16, enums.LT_U32, enums.LT_U64, enums.LT_BOOL)
_LT_TO_NP = {F16: np.dtype(np.float16), F32: np.dtype(np.float32), F64: np.dtype(np.float64),
             I64: np.dtype(np.int64), I8: np.dtype(np.int8), I16: np.dtype(np.int16),
             I32: np.dtype(np.int32), U8: np.dtype(np.uint8), U16: np.dtype(np.uint16),
             U32: np.dtype(np.uint32), U64: np.dtype(np.uint64), BOOL: np.dtype(np.bool_)}
_NP_TO_LT = {v: k for k, v in _LT_TO_NP.items()}
_EXACT_INTS = (I8, I16, I32, I64, U8, U16, U32, U64)
_NAMES = {"float16": F16, "f16": F16, "half": F16, "bfloat16": BF16, "bf16": BF16,
          "float32": F32, "f32": F32, "single": F32, "float64": F64, "f64": F64, "double": F64,
          "float": F64, "int": I64,  # NumPy's meanings (np.dtype("float") is float64)
          "int64": I64, "i64": I64, "int8": I8, "i8": I8, "int16": I16, "i16": I16,
          "int32": I32, "i32": I32, "uint8": U8, "u8": U8, "uint16": U16, "u16": U16,
          "uint32": U32, "u32": U32, "uint64": U64, "u64": U64, "bool": BOOL}
_EXACT = {I8, I16, I32, I64, U8, U16, U32, U64, BOOL}
_SLICE_DEFAULT = enums.LT_SLICE_DEFAULT
_ALL_AXES = enums.LT_ALL_AXES


def lt_dtype(dtype):
    """The lt_dtype code for a dtype given as a name ("bfloat16", "f32"), a NumPy dtype or type."""
    if isinstance(dtype, str) and dtype.lower() in _NAMES:
        return _NAMES[dtype.lower()]
    try:
        code = _NP_TO_LT.get(np.dtype(dtype))
    except TypeError:
        code = None
    if code is None:
        raise DtypeError(f"libtensor: unsupported dtype {dtype!r} (float16, bfloat16, float32, "
                         "float64, int8..int64, uint8..uint64 or bool)", enums.LT_ERR_DTYPE)
    return code


def _dtype_out(code):
    return _LT_TO_NP.get(code, "bfloat16")


def _storable(arr):
    """`arr` converted, if needed, to a native-order dtype the library stores."""
    dt = arr.dtype
    if dt.kind == "f" and dt.itemsize > 8:
        arr = arr.astype(np.float64)
    elif dt.kind not in "fiub":
        raise DtypeError(f"libtensor: NumPy dtype {dt} has no libtensor equivalent",
                         enums.LT_ERR_DTYPE)
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _element_strides(arr, address):
    """Byte strides as element strides, or None when they are not whole elements (or the data
    at `address` is misaligned for its dtype)."""
    size = arr.itemsize
    if address % size or any(s % size for s in arr.strides):
        return None
    return [s // size for s in arr.strides]


# Arrays the library holds zero-copy, keyed by the `user` value passed to lt_tensor_wrap_host.
# The release callback drops the reference once the library no longer needs the memory.
_held = {}
_keys = itertools.count(1)
# Re-entrant: a garbage collection inside a locked section may release a tensor, and so call
# _release, on the same thread.
_held_lock = threading.RLock()


@_lib.release_fn
def _release(data, user):
    with _held_lock:
        _held.pop(user, None)


def held_count():
    """Number of NumPy arrays currently kept alive for the library (for leak tests)."""
    return len(_held) + (fast_held() if fast_held is not None else 0)


def _new(fn_name, ctx, *args, readonly=False):
    """Calls a constructor-style C function whose last argument is the out handle."""
    out = ctypes.c_void_p()
    check(_lib.fn(fn_name)(*args, ctypes.byref(out)))
    return Tensor(out.value, ctx, readonly)


class _HostView:
    """Exposes a CPU tensor's memory to NumPy and keeps the tensor alive as the array's base."""

    def __init__(self, tensor, ptr, dtype, readonly, shape, strides):
        self.tensor = tensor
        self.__array_interface__ = {
            "version": 3, "shape": shape, "typestr": dtype.str,
            "data": (ptr, readonly),
            "strides": tuple(s * dtype.itemsize for s in strides)}


# The accessors of the hot paths, bound once (they take only handles: no range checks).
_rank_fn, _shape_fn, _strides_fn, _dtype_fn, _host_ptr_fn = (
    _lib.fn(n) for n in ("lt_tensor_rank", "lt_tensor_shape", "lt_tensor_strides",
                         "lt_tensor_dtype", "lt_tensor_host_pointer"))


# Tensor.__del__'s call; _ext replaces it with the C extension's when that is present.
destroy_handle = _lib.fn("lt_tensor_destroy")
# Set by _ext when the C extension is present: its wrap(array) -> (handle, readonly) |
# NotImplemented, its count of the arrays it holds, and the shared CPU context.
fast_wrap = fast_held = fast_cpu = None


class Tensor:
    """A libtensor tensor: storage shared by views, dtype, shape, element strides, context."""

    # NumPy's operators defer to ours (ndarray * Tensor calls Tensor.__rmul__ and gives a Tensor,
    # as with PyTorch's tensors), so a NumPy operand on the left keeps the result on the device
    # and on the tape; np.sin(t) and other ufuncs still convert through __array__.
    __array_priority__ = 1000

    def __init__(self, handle, ctx, readonly=False):
        self._handle = handle
        self.context = ctx
        # Set for tensors over a read-only NumPy array (and their views): never written.
        self.readonly = readonly

    def __del__(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h is not None:
            try:
                destroy_handle(h)
            except Exception:  # interpreter shutdown
                pass

    @property
    def handle(self):
        return self._handle

    # ---- properties
    # A handle's dtype never changes: read once (a ctypes call costs ~1.5 us, as much as a
    # whole small operation through the extension).
    @property
    def dtype(self):
        """NumPy dtype, or the string "bfloat16"."""
        d = self.__dict__.get("_np_dtype")
        if d is None:
            d = self.__dict__["_np_dtype"] = _dtype_out(self.lt_dtype)
        return d

    @property
    def lt_dtype(self):
        d = self.__dict__.get("_lt_dtype")
        if d is None:
            d = self.__dict__["_lt_dtype"] = _lib.fn("lt_tensor_dtype")(self._handle)
        return d

    # Nor do its rank and shape (views are new handles).
    @property
    def ndim(self):
        return len(self.shape)

    @property
    def shape(self):
        s = self.__dict__.get("_shape")
        if s is None:
            h = self._handle
            s = self.__dict__["_shape"] = tuple(_shape_fn(h)[:_rank_fn(h)])
        return s

    @property
    def strides(self):
        """Strides in elements (NumPy's are in bytes)."""
        h = self._handle
        return tuple(_strides_fn(h)[:_rank_fn(h)])

    @property
    def offset(self):
        return _lib.fn("lt_tensor_offset")(self._handle)

    @property
    def size(self):
        return _lib.fn("lt_tensor_numel")(self._handle)

    @property
    def nbytes(self):
        return _lib.fn("lt_tensor_nbytes")(self._handle)

    @property
    def itemsize(self):
        return _lib.fn("lt_dtype_size")(self.lt_dtype)

    @property
    def is_contiguous(self):
        return bool(_lib.fn("lt_tensor_is_contiguous")(self._handle))

    @property
    def device(self):
        return self.context.device

    def shares_storage(self, other):
        return bool(_lib.fn("lt_tensor_shares_storage")(self._handle, other._handle))

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        # Without it Python iterates through __getitem__ until IndexError, and a 0-d tensor,
        # whose t[0] is an IndexError, iterated as an empty sequence (NumPy raises TypeError).
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        return (f"Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device!r})\n"
                f"{self.numpy()!r}")

    # ---- NumPy interop
    def numpy(self, copy=False):
        """The elements as a NumPy array; bfloat16 becomes float32.

        A CPU tensor of a NumPy dtype gives a zero-copy view that keeps this tensor alive. The
        view is read-only when the tensor is (it wraps a read-only array) and when it has a
        zero stride over an axis longer than 1 (a broadcast: one element seen at several
        places, read-only as NumPy's broadcast_to). Any other tensor (on a device such as
        OpenCL, or bfloat16) gives a C-ordered copy that is read-only, since writes to it
        would never reach the tensor. copy=True: always a fresh, writable C-ordered copy."""
        if not copy:
            view = self._host_view()
            if view is not None:
                return view
        out = self._host_copy()
        if not copy:
            out.flags.writeable = False
        return out

    def __array__(self, dtype=None, copy=None):
        """NumPy's array protocol (np.asarray, np.array), NumPy 2 style: copy=None as numpy();
        copy=True a fresh writable array; copy=False the zero-copy view, or ValueError when
        there is none (device tensors, bfloat16, a dtype conversion), as NumPy 2 specifies."""
        if copy is False:
            view = self._host_view()
            if view is None:
                raise ValueError(f"libtensor: a {self.dtype} tensor on {self.device!r} cannot be "
                                 "exposed to NumPy without a copy (copy=False)")
            if dtype is not None and np.dtype(dtype) != view.dtype:
                raise ValueError(f"libtensor: converting {view.dtype} to {np.dtype(dtype)} "
                                 "needs a copy (copy=False)")
            return view
        arr = self.numpy(copy=bool(copy))
        return arr if dtype is None or np.dtype(dtype) == arr.dtype else arr.astype(dtype)

    def _host_view(self):
        """The zero-copy NumPy view of a CPU tensor (see numpy()), or None if there is none."""
        h = self._handle
        code = _dtype_fn(h)
        if code == BF16 or not self.context.is_cpu:
            return None
        dtype = _LT_TO_NP[code]
        rank = _rank_fn(h)
        p, q = _shape_fn(h), _strides_fn(h)
        shape, strides = tuple(p[:rank]), tuple(q[:rank])
        if 0 in shape:
            return np.empty(shape, dtype)  # no element to alias
        ptr = ctypes.c_void_p()
        check(_host_ptr_fn(h, ctypes.byref(ptr)))
        aliased = 0 in strides and any(s == 0 and n > 1 for s, n in zip(strides, shape))
        # a tensor the tape tracks: read-only, since a write through NumPy bumps no version
        # counter and would change a gradient silently (PyTorch refuses .numpy() there)
        tracked = getattr(self, "requires_grad", False)
        return np.asarray(_HostView(self, ptr.value, dtype, self.readonly or aliased or tracked,
                                    shape, strides))

    def _host_copy(self):
        """A fresh, writable, C-ordered NumPy copy (bfloat16 as float32)."""
        if self.lt_dtype == BF16:
            return self.contiguous(F32)._host_copy()
        out = np.empty(self.shape, _LT_TO_NP[self.lt_dtype])
        check(_lib.fn("lt_tensor_to_host")(self._handle, out.ctypes.data_as(ctypes.c_void_p),
                                           out.nbytes))
        return out

    def item(self):
        if self.size != 1:
            raise ValueError("libtensor: item() needs a tensor of exactly one element")
        index = _lib.int64_array([0] * self.ndim)
        if self.lt_dtype in _EXACT:  # exact: no trip through double
            unsigned = self.lt_dtype in (U8, U16, U32, U64, BOOL)
            value = ctypes.c_uint64() if unsigned else ctypes.c_int64()
            fn = "lt_tensor_get_u64" if unsigned else "lt_tensor_get_i64"
            check(_lib.fn(fn)(self._handle, index, ctypes.byref(value)))
            return bool(value.value) if self.lt_dtype == BOOL else int(value.value)
        value = ctypes.c_double()
        check(_lib.fn("lt_tensor_get")(self._handle, index, ctypes.byref(value)))
        return value.value

    # ---- copies
    def contiguous(self, dtype=None):
        """C-contiguous copy, optionally converted to `dtype`."""
        code = 0 if dtype is None else (dtype if isinstance(dtype, int) else lt_dtype(dtype))
        return _new("lt_tensor_contiguous", self.context, self._handle, code)

    def astype(self, dtype):
        return self.contiguous(dtype)

    def copy(self):
        return self.contiguous()

    def to(self, device):
        """Copy on another device ("cpu", "opencl", a Context)."""
        ctx = context(device)
        return _new("lt_tensor_to_context", ctx, self._handle, ctx.handle)

    def save(self, path, fsync=False):
        """Writes a .npy file; `path` is a str, bytes or os.PathLike (see load). The file is
        written beside the target and renamed over it when complete, so a failed save (a full
        disk) leaves an existing file as it was; `fsync=True` also waits until the data is on
        disk."""
        flags = enums.LT_SAVE_FSYNC if fsync else enums.LT_SAVE_DEFAULT
        check(_lib.fn("lt_npy_save_with_flags")(self._handle, _lib.cpath(path), flags))

    # ---- views (zero-copy, share storage)
    def _view(self, fn_name, *args):
        return _new(fn_name, self.context, self._handle, *args, readonly=self.readonly)

    def view(self, *shape):
        """View with a new shape (one extent may be -1); NotViewableError if the strides do not
        allow one (torch's view)."""
        shape = _shape_arg(shape)
        return self._view("lt_view_reshape", len(shape), _lib.int64_array(shape))

    def reshape(self, *shape):
        """New shape (one extent may be -1): a view when the strides allow it, else a
        contiguous copy, as NumPy's and torch's reshape (view() never copies)."""
        shape = _shape_arg(shape)
        return self._view("lt_tensor_reshape", len(shape), _lib.int64_array(shape))

    reshape_or_copy = reshape

    def permute(self, *axes):
        axes = _shape_arg(axes)
        if len(axes) != self.ndim:
            raise ValueError(f"libtensor: permute needs {self.ndim} axes, got {len(axes)}")
        return self._view("lt_view_permute", _lib.int_array(axes))

    def transpose(self, *axes):
        """Reverses the axes, or reorders them as `axes` (like numpy.transpose)."""
        axes = _shape_arg(axes)
        return self.permute(*(axes or range(self.ndim - 1, -1, -1)))

    @property
    def T(self):
        return self.transpose()

    def swapaxes(self, axis0, axis1):
        return self._view("lt_view_transpose", axis0, axis1)

    def broadcast_to(self, shape):
        shape = _shape_arg((shape,))
        return self._view("lt_view_broadcast_to", len(shape), _lib.int64_array(shape))

    def squeeze(self, axis=None):
        if isinstance(axis, tuple):
            t = self
            for a in sorted((a % self.ndim for a in axis), reverse=True):
                t = t.squeeze(a)
            return t
        return self._view("lt_view_squeeze", _ALL_AXES if axis is None else axis)

    def unsqueeze(self, axis):
        return self._view("lt_view_unsqueeze", axis)

    expand_dims = unsqueeze

    def flip(self, axis=None):
        if axis is None:
            axis = tuple(range(self.ndim))
        if isinstance(axis, tuple):
            t = self
            for a in axis:
                t = t.flip(a)
            return t
        return self._view("lt_view_flip", axis)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return self._view("lt_view_diagonal", offset, axis1, axis2)

    def as_strided(self, shape, strides, offset=None):
        """Any layout over this tensor's storage (strides and offset in elements); refused if it
        reaches outside the storage."""
        shape, strides = list(shape), list(strides)
        if len(shape) != len(strides):
            raise ValueError("libtensor: as_strided needs as many strides as extents")
        return self._view("lt_view_as_strided", len(shape), _lib.int64_array(shape),
                          _lib.int64_array(strides), self.offset if offset is None else offset)

    def __getitem__(self, key):
        """Basic NumPy indexing: ints, slices, Ellipsis and None, as zero-copy views."""
        t, axis = self, 0
        for item in _expand_key(key, self.ndim):
            if item is None:
                t, axis = t.unsqueeze(axis), axis + 1
            elif isinstance(item, slice):
                steps = range(*item.indices(t.shape[axis]))
                if len(steps) == 0:
                    t = t._view("lt_view_slice", axis, 0, 0, 1)
                elif steps != range(t.shape[axis]):
                    t = t._view("lt_view_slice", axis, steps.start, steps.stop, steps.step)
                axis += 1
            else:
                t = t._view("lt_view_select", axis, item)
        return t

    def __setitem__(self, key, value):
        """Copies `value` (broadcast, converted) into the view self[key]."""
        check_writeable(self)
        dst = self[key]
        if isinstance(value, Tensor):
            src = value
        else:
            src = from_numpy(np.asarray(value, dtype=np.float64 if self.lt_dtype == BF16
                                        else self.dtype), self.context)
        check(_lib.fn("lt_tensor_copy_into")(dst._handle, src._handle))

    # Arithmetic operators (+, -, *, /, **, unary -, @): installed by ops and einsum.


def check_writeable(t):
    if t.readonly:
        raise ValueError("libtensor: tensor is read-only (it wraps a read-only NumPy array)")


def _shape_arg(args):
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        args = tuple(args[0]) if args[0] is not None else ()
    return [operator.index(a) for a in args]


def _expand_key(key, ndim):
    """The index tuple with Ellipsis replaced by full slices; ints normalised."""
    if not isinstance(key, tuple):
        key = (key,)
    items = []
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            items.append(k)
        elif isinstance(k, (bool, np.bool_)):
            raise IndexError("libtensor: boolean indices are not supported (basic indexing only)")
        else:
            try:
                items.append(operator.index(k))
            except TypeError:
                raise IndexError(f"libtensor: only integers, slices, ..., and None are valid "
                                 f"indices, not {type(k).__name__}") from None
    if items.count(Ellipsis) > 1:
        raise IndexError("libtensor: an index can only have a single ellipsis ('...')")
    used = sum(1 for k in items if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"libtensor: too many indices: tensor has {ndim} axes, {used} indexed")
    fill = [slice(None)] * (ndim - used)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = fill
    else:
        items += fill
    return items


def from_numpy(arr, device=None, dtype=None, copy=False):
    """A Tensor over a NumPy array: zero-copy on a CPU context when the dtype is supported and
    the strides are whole elements (the array is kept alive while the library uses it), else a
    copy. `dtype` converts (e.g. "bfloat16", always a copy)."""
    if fast_wrap is not None and device is None and dtype is None and not copy:
        r = fast_wrap(arr)  # one C call (the extension checks the default device is the CPU)
        if r is not NotImplemented:
            return Tensor(r[0], fast_cpu, r[1])
    ctx = context(device)
    arr = np.asarray(arr)
    target = None if dtype is None else lt_dtype(dtype)
    if target == BF16:
        return from_numpy(arr, ctx, np.float32, copy=True).contiguous(BF16)
    arr = _storable(arr if target is None else arr.astype(_LT_TO_NP[target], copy=False))
    code = _NP_TO_LT[arr.dtype]
    address = arr.__array_interface__["data"][0]
    strides = _element_strides(arr, address)
    if strides is None:  # strides of partial elements or a misaligned address: a fresh copy
        arr = np.array(arr, order="C", copy=True)
        address = arr.__array_interface__["data"][0]
        strides = _element_strides(arr, address)
    shape = _lib.int64_array(arr.shape)
    strides_c = _lib.int64_array(strides)
    data = ctypes.c_void_p(address)
    if copy or not ctx.is_cpu:
        return _new("lt_tensor_from_host", ctx, ctx.handle, code, arr.ndim, shape, strides_c,
                    data)
    with _held_lock:
        key = next(_keys)
        _held[key] = arr
    try:
        return _new("lt_tensor_wrap_host", ctx, ctx.handle, code, arr.ndim, shape, strides_c,
                    data, _release, ctypes.c_void_p(key), readonly=not arr.flags.writeable)
    except BaseException:
        with _held_lock:
            _held.pop(key, None)  # on failure the library never calls release
        raise


def tensor(data, dtype=None, device=None, copy=False):
    """A Tensor from a Tensor (moved to `device` / converted when asked), a NumPy array, a
    nested list or a scalar."""
    if isinstance(data, Tensor):
        t = data
        if device is not None and context(device).device != t.device:
            t = t.to(device)
        if dtype is not None and lt_dtype(dtype) != t.lt_dtype:
            t = t.contiguous(dtype)
        return t.copy() if copy and t is data else t
    if type(data) is int and not -2**63 <= data < 2**64:  # NumPy: OverflowError, not object
        raise OverflowError(f"libtensor: Python integer {data} does not fit in 64 bits")
    return from_numpy(data, device, dtype, copy)


def _filled(fn_name, shape, dtype, device, *value):
    ctx = context(device)
    shape = _shape_arg((shape,))
    return _new(fn_name, ctx, ctx.handle, lt_dtype(dtype), len(shape), _lib.int64_array(shape),
                *value)


# Creation defaults follow NumPy: float64, and for full the fill value's own dtype.
def empty(shape, dtype="float64", device=None):
    return _filled("lt_tensor_empty", shape, dtype, device)


def zeros(shape, dtype="float64", device=None):
    return _filled("lt_tensor_zeros", shape, dtype, device)


def full(shape, value, dtype=None, device=None):
    if dtype is None:
        dtype = np.asarray(value).dtype.name
    code = lt_dtype(dtype)
    if code in _EXACT_INTS and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        info = np.iinfo(_LT_TO_NP[code])
        if type(value) is int and not info.min <= value <= info.max:  # as NumPy 2's np.full
            raise OverflowError(f"libtensor: full: Python integer {value} out of bounds for "
                                f"{info.dtype}")
        if abs(int(value)) > 2 ** 53:  # lt_tensor_full takes a double, which would round it
            return tensor(np.full(_shape_arg((shape,)), value, dtype=info.dtype), device=device,
                          copy=True)
    return _filled("lt_tensor_full", shape, dtype, device, float(value))


def load(path, device=None):
    """Loads a .npy file into a Tensor. `path` is a str, bytes or os.PathLike, passed to the
    library as os.fsencode(os.fspath(path)) (names that are not UTF-8 work); a path holding a
    NUL character is a ValueError."""
    ctx = context(device)
    return _new("lt_npy_load", ctx, ctx.handle, _lib.cpath(path))


def save(path, data, fsync=False):
    """Saves a Tensor or array as .npy through the library (see Tensor.save)."""
    tensor(data).save(path, fsync=fsync)


def as_strided(data, shape, strides, offset=None):
    return tensor(data).as_strided(shape, strides, offset)


def broadcast_to(data, shape):
    return tensor(data).broadcast_to(shape)


__all__ = ["Tensor", "Context", "from_numpy", "tensor", "empty", "zeros", "full", "load",
           "save", "lt_dtype", "held_count", "as_strided", "broadcast_to"]


# ---- issue 24 A: pickling, so Tensors travel to other processes (Dask workers) ----
def _unpickle(arr, device, dtype_name, readonly, requires_grad=False):
    """The Tensor a pickle describes: its elements (a fresh array, wrapped without a copy on
    the CPU) on the device of that id, as the library dtype of that name."""
    t = from_numpy(arr, device, None if dtype_name == arr.dtype.name else dtype_name)
    if readonly:
        t.readonly = True
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce(self):
    # requires_grad (autograd's) travels too, as torch's pickles keep it
    return _unpickle, (self.numpy(copy=True), self.device, _dtype_name(self.lt_dtype),
                       bool(self.readonly), bool(getattr(self, "requires_grad", False)))


def _dtype_name(code):
    return _lib.fn("lt_dtype_name")(code).decode()


Tensor.__reduce__ = _reduce

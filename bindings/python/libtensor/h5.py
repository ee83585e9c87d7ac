# SPDX-License-Identifier: MIT
"""HDF5 files through libtensor's C layer (include/tensor/hdf5.h), in the style of h5py:

    with lt.h5.File("data.h5", "r") as f:
        t = f["/a/b"][10:20, ::2]          # a hyperslab, read as a Tensor
        f["/a/b"].attrs["units"]
    with lt.h5.File("out.h5", "w") as f:  # written beside, renamed over out.h5 on close
        f.create_dataset("x", data=a, chunks=(64, 64), compression="gzip", shuffle=True)

Modes: "r" read-only, "r+" read-write in place, "w" a new file (atomic: the old file stays
until close succeeds), "a" read-write, created when missing. `available()` tells whether this
libtensor was built with HDF5 (otherwise every call raises UnsupportedError).
"""
import ctypes
import os

import numpy as np

from . import _lib, enums
from .context import context
from .errors import check
from .tensor import _expand_key, _new, lt_dtype, tensor

_MODES = {"r": enums.LT_H5_READ, "r+": enums.LT_H5_READ_WRITE, "w": enums.LT_H5_CREATE}


def available():
    """True if this libtensor reads and writes HDF5."""
    return bool(_lib.fn("lt_h5_available")())


def _text(fn, *args):
    """Calls a C function with the (buf, cap, needed) convention and returns the text."""
    need = ctypes.c_size_t(0)
    check(fn(*args, None, 0, ctypes.byref(need)))
    buf = ctypes.create_string_buffer(need.value)
    check(fn(*args, buf, need.value, ctypes.byref(need)))
    return buf.value.decode("utf-8", "replace")


def _abs(base, name):
    name = _lib.cstr(name, "name")
    if name.startswith(b"/"):
        return name
    return base.rstrip(b"/") + b"/" + name


class _Slab:
    """start/stop/step arrays and the axes to drop (integer indices) for a basic index."""

    def __init__(self, key, shape):
        self.start, self.stop, self.step, self.drop = [], [], [], []
        for axis, item in enumerate(_expand_key(key, len(shape))):
            if item is None:
                raise IndexError("libtensor: None (newaxis) is not supported on datasets")
            n = shape[axis]
            if isinstance(item, slice):
                b, e, k = item.indices(n)
                r = range(b, e, k)
                if len(r) == 0:
                    b, e, k = 0, 0, 1
                self.start.append(b)
                self.stop.append(e)
                self.step.append(k)
            else:
                i = item + n if item < 0 else item
                if not 0 <= i < n:
                    raise IndexError(f"libtensor: index {item} is out of bounds for axis {axis} "
                                     f"with size {n}")
                self.start.append(i)
                self.stop.append(i + 1)
                self.step.append(1)
                self.drop.append(axis)

    def arrays(self):
        return (_lib.int64_array(self.start), _lib.int64_array(self.stop),
                _lib.int64_array(self.step))

    def squeeze(self, t):
        for axis in reversed(self.drop):
            t = t._view("lt_view_select", axis, 0)
        return t


class Attributes:
    """The attributes of one object: str, int and float scalars (h5py's .attrs)."""

    def __init__(self, file, path):
        self._file, self._path = file, path

    def _kinds(self):
        text = _text(_lib.fn("lt_h5_attr_list"), self._file._h(), self._path)
        return {line[2:]: line[0] for line in text.splitlines()}

    def keys(self):
        return list(self._kinds())

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._kinds())

    def __contains__(self, name):
        return name in self._kinds()

    def __getitem__(self, name):
        kind = self._kinds().get(name)
        if kind is None:
            raise KeyError(name)
        h, cname = self._file._h(), _lib.cstr(name, "name")
        if kind == "s":
            return _text(_lib.fn("lt_h5_attr_get_string"), h, self._path, cname)
        if kind == "i":
            v = ctypes.c_int64()
            check(_lib.fn("lt_h5_attr_get_int64")(h, self._path, cname, ctypes.byref(v)))
            return v.value
        v = ctypes.c_double()
        check(_lib.fn("lt_h5_attr_get_double")(h, self._path, cname, ctypes.byref(v)))
        return v.value

    def __setitem__(self, name, value):
        h, cname = self._file._h(), _lib.cstr(name, "name")
        if isinstance(value, str):
            check(_lib.fn("lt_h5_attr_set_string")(h, self._path, cname,
                                                   _lib.cstr(value, "value")))
        elif isinstance(value, (bool, np.bool_)):
            raise TypeError("libtensor: bool attributes are not supported (use an int)")
        elif isinstance(value, (int, np.integer)):
            check(_lib.fn("lt_h5_attr_set_int64")(h, self._path, cname, int(value)))
        elif isinstance(value, (float, np.floating)):
            check(_lib.fn("lt_h5_attr_set_double")(h, self._path, cname, float(value)))
        else:
            raise TypeError(f"libtensor: attribute values are str, int or float, not "
                            f"{type(value).__name__}")


class Dataset:
    """A dataset: shape, dtype, chunks, filters; indexing reads hyperslabs as Tensors."""

    def __init__(self, file, path):
        self._file, self._path = file, path
        kind, dt, rank = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        shape, chunk = (ctypes.c_int64 * 64)(), (ctypes.c_int64 * 64)()
        desc = ctypes.create_string_buffer(512)
        check(_lib.fn("lt_h5_stat")(file._h(), path, ctypes.byref(kind), ctypes.byref(dt),
                                    ctypes.byref(rank), shape, chunk, desc, 512))
        self.shape = tuple(shape[i] for i in range(rank.value))
        self.chunks = tuple(chunk[i] for i in range(rank.value)) or None
        if self.chunks is not None and not any(self.chunks):
            self.chunks = None
        self.lt_dtype = dt.value
        self.description = desc.value.decode()
        self.attrs = Attributes(file, path)

    name = property(lambda self: self._path.decode())
    ndim = property(lambda self: len(self.shape))
    dtype = property(lambda self: _lib.fn("lt_dtype_name")(self.lt_dtype).decode()
                     if self.lt_dtype else None)

    def __len__(self):
        if not self.shape:
            raise TypeError("libtensor: len() of a 0-d dataset")
        return self.shape[0]

    def __repr__(self):
        return f"<lt.h5.Dataset {self.name} {self.shape} {self.description}>"

    def read(self, key=(), dtype=None, device=None):
        """self[key] as a Tensor on `device`, converted to `dtype` when given."""
        ctx = context(device)
        code = lt_dtype(dtype) if dtype is not None else 0
        if key == ():
            return _new("lt_h5_read", ctx, self._file._h(), self._path, ctx.handle, code)
        s = _Slab(key, self.shape)
        t = _new("lt_h5_read_slab", ctx, self._file._h(), self._path, len(self.shape),
                 *s.arrays(), ctx.handle, code)
        return s.squeeze(t)

    def __getitem__(self, key):
        return self.read(key)

    def read_into(self, out, key=()):
        """Reads self[key] (slices only) into the existing Tensor `out` (any strides)."""
        s = _Slab(key, self.shape)
        if s.drop:
            raise IndexError("libtensor: read_into takes slices only (no integer indices)")
        check(_lib.fn("lt_h5_read_into")(self._file._h(), self._path, len(self.shape),
                                         *s.arrays(), out.handle))
        return out

    def __setitem__(self, key, value):
        """Writes value (array or Tensor of the selection's shape) into the slab."""
        s = _Slab(key, self.shape)
        t = tensor(value)
        for axis in s.drop:
            t = t.unsqueeze(axis)
        check(_lib.fn("lt_h5_write_slab")(self._file._h(), self._path, len(self.shape),
                                          *s.arrays(), t.handle))


class Group:
    """A group: datasets and groups by name (absolute or relative), attributes."""

    def __init__(self, file, path):
        self._file, self._path = file, path
        self.attrs = Attributes(file, path)

    name = property(lambda self: self._path.decode())

    def _stat_kind(self, path):
        kind = ctypes.c_int()
        check(_lib.fn("lt_h5_stat")(self._file._h(), path, ctypes.byref(kind), None, None, None,
                                    None, None, 0))
        return kind.value

    def __getitem__(self, name):
        path = _abs(self._path, name)
        if not self._exists(path):
            raise KeyError(name)
        kind = self._stat_kind(path)
        if kind == enums.LT_H5_DATASET:
            return Dataset(self._file, path)
        if kind == enums.LT_H5_GROUP:
            return Group(self._file, path)
        raise KeyError(f"{name}: neither a group nor a dataset")

    def _exists(self, path):
        p = path.decode().rstrip("/")
        tree = self._file._tree()
        if path == b"/" or p in tree or p + "/" in tree:
            return True
        # the listing does not enter groups reached through soft links ("/soft_group/x")
        kind = ctypes.c_int()
        return _lib.fn("lt_h5_stat")(self._file._h(), path, ctypes.byref(kind), None, None, None,
                                     None, None, 0) == 0

    def __contains__(self, name):
        return self._exists(_abs(self._path, name))

    def keys(self):
        """Names of the direct members."""
        prefix = self._path.decode().rstrip("/") + "/"
        out = []
        for p in self._file._tree():
            if p.startswith(prefix) and p != prefix:
                rest = p[len(prefix):].rstrip("/")
                if "/" not in rest:
                    out.append(rest)
        return out

    def __iter__(self):
        return iter(self.keys())

    def create_dataset(self, name, shape=None, dtype=None, data=None, chunks=None,
                       compression=None, compression_opts=None, shuffle=False, replace=False):
        """Writes `data` (a NumPy array, nested list or Tensor; or zeros of shape/dtype) as a
        new dataset. chunks: a tuple, True (automatic) or None; compression: None or "gzip"
        with compression_opts 1-9 (default 4); shuffle: the byte-shuffle filter."""
        if data is None:
            if shape is None:
                raise TypeError("libtensor: create_dataset needs data or a shape")
            data = np.zeros(shape, dtype=dtype or "float32")
        t = tensor(data, dtype=dtype)
        if compression not in (None, "gzip"):
            raise ValueError(f"libtensor: compression {compression!r} (only 'gzip')")
        level = (4 if compression_opts is None else int(compression_opts)) if compression else 0
        flags = (enums.LT_H5_SHUFFLE if shuffle else 0) | (enums.LT_H5_REPLACE if replace else 0)
        if chunks is True:  # automatic: the library's choice when filtered, else rows of 64
            chunks = None if (level or shuffle) else [max(1, min(n, 64)) for n in t.shape]
        chunk_arg = _lib.int64_array(chunks, "chunk") if chunks else None
        path = _abs(self._path, name)
        check(_lib.fn("lt_h5_write")(self._file._h(), path, t.handle, chunk_arg, level, flags))
        self._file._forget_tree()
        return Dataset(self._file, path)

    def __setitem__(self, name, data):
        self.create_dataset(name, data=data)


class File(Group):
    """An open HDF5 file (a context manager); the root group."""

    def __init__(self, path, mode="r"):
        raw = _lib.cpath(path)
        if mode == "a":
            mode = "r+" if os.path.exists(raw) else "w"
        if mode not in _MODES:
            raise ValueError(f"libtensor: mode {mode!r} (r, r+, w or a)")
        self._handle = None
        out = ctypes.c_void_p()
        check(_lib.fn("lt_h5_open")(raw, _MODES[mode], ctypes.byref(out)))
        self._handle, self.mode, self.filename = out.value, mode, os.fsdecode(raw)
        self._tree_cache = None
        super().__init__(self, b"/")

    def _h(self):
        if self._handle is None:
            raise ValueError("libtensor: the HDF5 file is closed")
        return self._handle

    def _tree(self):
        if self._tree_cache is None:
            self._tree_cache = _text(_lib.fn("lt_h5_list"), self._h()).splitlines()
        return self._tree_cache

    def _forget_tree(self):
        self._tree_cache = None

    def tree(self):
        """Every group (ending in '/') and dataset path, in name order."""
        return list(self._tree())

    def close(self):
        """Closes the file ("w": renames the new file over the target; errors raise)."""
        h, self._handle = self._handle, None
        if h is not None:
            check(_lib.fn("lt_h5_close")(h))

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        """Closes the file; after an exception a new file ("w") is dropped and the target
        left as it was (its old contents stay until a close succeeds)."""
        if exc_type is None:
            self.close()
            return
        h, self._handle = self._handle, None
        if h is not None:
            _lib.fn("lt_h5_discard")(h)

    def __del__(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h is not None:
            _lib.fn("lt_h5_close")(h)


__all__ = ["File", "Group", "Dataset", "Attributes", "available"]

# SPDX-License-Identifier: MIT
"""Devices and contexts."""
import ctypes
import os
import threading

from . import _lib, enums
from .errors import check

_PROPS_STR = {"id": enums.LT_DEVICE_ID, "name": enums.LT_DEVICE_NAME,
              "vendor": enums.LT_DEVICE_VENDOR, "type": enums.LT_DEVICE_TYPE}
_PROPS_INT = {"global_memory": enums.LT_DEVICE_GLOBAL_MEMORY,
              "compute_units": enums.LT_DEVICE_COMPUTE_UNITS, "fp64": enums.LT_DEVICE_FP64,
              "fp16": enums.LT_DEVICE_FP16}


class Device:
    """One device the library can open: id ("cpu", "opencl:P:D"), name, vendor, type,
    global_memory (bytes), compute_units, fp64 and fp16 (bools)."""

    def __init__(self, index):
        self.index = index
        for key, prop in _PROPS_STR.items():
            out = ctypes.c_char_p()
            check(_lib.fn("lt_device_string")(index, prop, ctypes.byref(out)))
            setattr(self, key, out.value.decode())
        for key, prop in _PROPS_INT.items():
            out = ctypes.c_int64()
            check(_lib.fn("lt_device_int")(index, prop, ctypes.byref(out)))
            setattr(self, key, bool(out.value) if key.startswith("fp") else out.value)

    def __repr__(self):
        return f"Device({self.id!r}, name={self.name!r}, type={self.type!r})"


def devices():
    """Every device present: the CPU first, then OpenCL devices."""
    count = ctypes.c_int()
    check(_lib.fn("lt_device_count")(ctypes.byref(count)))
    return [Device(i) for i in range(count.value)]


class Context:
    """A device and its resources. Tensors keep their context alive inside the library, so a
    Context may be closed (or collected) while its tensors are still in use."""

    def __init__(self, device=None):
        out = ctypes.c_void_p()
        name = None if device is None else _lib.cstr(device, "device")
        check(_lib.fn("lt_context_create")(name, ctypes.byref(out)))
        self._handle = out.value
        self._device = _lib.fn("lt_context_device")(self._handle).decode()

    @property
    def handle(self):
        if self._handle is None:
            raise ValueError("libtensor: context is closed")
        return self._handle

    @property
    def device(self):
        """The device id string ("cpu", "opencl:0:0")."""
        return self._device

    @property
    def is_cpu(self):
        return self.device == "cpu"

    @property
    def num_threads(self):
        return _lib.fn("lt_context_num_threads")(self.handle)

    @num_threads.setter
    def num_threads(self, threads):
        threads = _lib.as_int(threads, 32, "num_threads")
        check(_lib.fn("lt_context_set_num_threads")(self.handle, threads))

    def synchronize(self):
        check(_lib.fn("lt_context_synchronize")(self.handle))

    def clear_cache(self):
        check(_lib.fn("lt_context_clear_cache")(self.handle))

    def close(self):
        """Releases this reference (tensors on the context keep it alive)."""
        if self._handle is not None and _lib.has("lt_context_destroy"):
            _lib.fn("lt_context_destroy")(self._handle)
        self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may already be gone
            pass

    def __repr__(self):
        return f"Context({self.device!r})" if self._handle else "Context(<closed>)"


_shared = {}
_shared_lock = threading.Lock()


def context(device=None):
    """A shared Context for `device` (a string, a Context, or None: $LT_DEVICE, else "cpu"),
    opened once per process and reused by the one-call functions. Names of one device
    ("opencl" and "opencl:0:0") share one Context, so that their tensors can meet in an
    operation (tensors of two contexts cannot, see ops)."""
    if isinstance(device, Context):
        return device
    if device is None:
        device = os.environ.get("LT_DEVICE") or "cpu"
    with _shared_lock:
        ctx = _shared.get(device)
        if ctx is None:
            ctx = Context(device)
            ctx = _shared.setdefault(ctx.device, ctx)  # the device's shared one, if opened
            _shared[device] = ctx
        return ctx

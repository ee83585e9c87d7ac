# SPDX-License-Identifier: MIT
"""DLPack: Tensor.__dlpack__ / __dlpack_device__ and from_dlpack, zero-copy on the CPU.

Sits on tensor (installs the two Tensor methods from here). The capsules follow the Python array
API standard: a producer hands out "dltensor_versioned" (DLPack >= 1.0, when the consumer asks
with max_version) or legacy "dltensor" capsules; a consumer renames the capsule to "used_..."
once it owns the managed tensor, and a capsule never consumed frees it in its destructor.
"""
import ctypes

import numpy as np

from . import _lib
from .context import context
from .errors import check
from .tensor import Tensor, from_numpy
from . import _ext as _ext_mod
from ._ext import FAST as _FAST

K_DL_CPU, K_DL_OPENCL = 1, 4
_HOST_DEVICES = (1, 3, 11)  # kDLCPU, kDLCUDAHost, kDLROCMHost
_VERSIONED, _LEGACY = b"dltensor_versioned", b"dltensor"
_USED_VERSIONED, _USED_LEGACY = b"used_dltensor_versioned", b"used_dltensor"
COPY, READ_ONLY = 1, 2  # lt_dlpack_flags


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _deleter)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", _deleter),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_api = ctypes.pythonapi
_capsule_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", _api))
_capsule_get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))
_capsule_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_capsule_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _api))
# The destructor receives the capsule as a raw pointer: these take it as one.
_raw_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api))
_raw_get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    """Frees a managed tensor no consumer took (the capsule still has its original name)."""
    for name, struct in ((_VERSIONED, DLManagedTensorVersioned), (_LEGACY, DLManagedTensor)):
        if _raw_valid(capsule, name):
            ptr = _raw_get(capsule, name)
            managed = ctypes.cast(ptr, ctypes.POINTER(struct)).contents
            if managed.deleter:
                managed.deleter(ptr)
            return


def _destructor():
    """The C extension's destructor, which keeps a failing consumer's pending exception (the one
    above, in Python, cannot run then: the export leaked and the consumer's error became
    SystemError). Taken even under LT_PY_NO_EXT (it is no fast path); the ctypes one serves an
    install without the extension."""
    module = _FAST if _FAST is not None else _ext_mod._import()
    if module is not None and hasattr(module, "capsule_destructor"):
        return ctypes.c_void_p(module.capsule_destructor())
    return ctypes.cast(_capsule_destructor, ctypes.c_void_p)


_DESTRUCTOR = _destructor()


def _dlpack_device(self):
    """(device type, device id) as DLPack numbers them: (1, 0) for the CPU, (4, 0) OpenCL."""
    return (K_DL_CPU, 0) if self.context.is_cpu else (K_DL_OPENCL, 0)


def _dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Exports this tensor as a DLPack capsule (array API standard semantics): zero-copy for a
    CPU tensor; copy=True always copies; a device (OpenCL) tensor is exported as a host copy
    only when copy=True or dl_device=(1, 0) asks for the CPU, else BufferError. A read-only
    tensor (over a read-only NumPy array) is flagged read-only, which legacy capsules (consumers
    without max_version >= (1, 0)) cannot express: BufferError there, as NumPy does."""
    if stream is not None and stream != -1:
        raise BufferError("libtensor: stream must be None for CPU tensors")
    host = self.context.is_cpu
    flags = COPY if copy else 0
    if dl_device is not None:
        dl_device = tuple(dl_device)
        if dl_device != _dlpack_device(self):
            if dl_device[0] != K_DL_CPU or dl_device[1] != 0 or copy is False:
                raise BufferError(f"libtensor: cannot export a tensor on {self.device!r} to "
                                  f"DLPack device {dl_device}" +
                                  (" without a copy (copy=False)" if copy is False else ""))
            flags |= COPY
    if not host and not flags & COPY:
        raise BufferError(f"libtensor: a tensor on {self.device!r} is exported only as a host "
                          "copy: pass copy=True or dl_device=(1, 0)")
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    # a broadcast view shows one element at several places: read-only, as its .numpy() view and
    # NumPy's broadcast_to (a write through one place would change the others)
    aliased = any(s == 0 and n > 1 for s, n in zip(self.strides, self.shape))
    if (self.readonly or aliased) and not flags & COPY:
        if not versioned:
            raise BufferError("libtensor: a read-only tensor (or a broadcast view) cannot be "
                              "exported as a legacy DLPack capsule (no read-only flag); ask "
                              "with max_version=(1, 0) or copy=True")
        flags |= READ_ONLY
    out = ctypes.c_void_p()
    if versioned:
        check(_lib.fn("lt_tensor_to_dlpack")(self.handle, flags, ctypes.byref(out)))
        name = _VERSIONED
    else:
        check(_lib.fn("lt_tensor_to_dlpack_legacy")(self.handle, flags, ctypes.byref(out)))
        name = _LEGACY
    try:
        return _capsule_new(out.value, name, _DESTRUCTOR)
    except BaseException:
        struct = DLManagedTensorVersioned if versioned else DLManagedTensor
        ctypes.cast(out, ctypes.POINTER(struct)).contents.deleter(out.value)
        raise


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device


def _from_device_tensor(x, device, copy):
    """from_dlpack of a libtensor tensor on a device (OpenCL): the array API's semantics
    without a host round trip. The same context (device None: x's own, as the standard asks)
    shares x's memory unless copy=True; another one is a copy (copy=False: BufferError)."""
    ctx = x.context if device is None else context(device)
    if ctx is x.context or ctx.handle == x.context.handle:
        return x.copy() if copy else x[...]
    if copy is False:
        raise BufferError(f"libtensor: moving a tensor from {x.device!r} to {ctx.device!r} needs "
                          "a copy (copy=False)")
    return x.to(ctx)


def from_dlpack(x, /, *, device=None, copy=None):
    """A Tensor sharing the memory of `x`, any object with __dlpack__ (NumPy >= 1.22, PyTorch,
    JAX, CuPy host arrays, another Tensor) or a DLPack capsule. Zero-copy on a CPU context;
    copy=True copies, copy=False refuses any copy (BufferError); a read-only producer (a
    read-only NumPy array) is copied, since libtensor tensors are writable (copy=False: refused).
    device: the context to import onto (host data onto OpenCL is a copy)."""
    if isinstance(x, Tensor) and not x.context.is_cpu:
        return _from_device_tensor(x, device, copy)
    ctx = context(device)
    flags = COPY if copy or not ctx.is_cpu else 0
    if copy is False and not ctx.is_cpu:
        raise BufferError(f"libtensor: importing onto {ctx.device!r} needs a copy (copy=False)")
    if type(x).__name__ == "PyCapsule":
        capsule = x
    else:
        if not hasattr(x, "__dlpack__"):
            raise TypeError(f"libtensor: from_dlpack needs an object with __dlpack__, not "
                            f"{type(x).__name__}")
        kwargs = {}
        if hasattr(x, "__dlpack_device__"):
            dev = tuple(x.__dlpack_device__())
            if dev[0] not in _HOST_DEVICES:
                if copy is False:
                    raise BufferError(f"libtensor: DLPack device {dev} is not host memory: "
                                      "importing it needs a copy (copy=False)")
                # the array API's way to a host copy of a device array
                kwargs = {"dl_device": (K_DL_CPU, 0), "copy": True}
        try:
            capsule = x.__dlpack__(max_version=(1, 1), **kwargs)
        except TypeError:  # a producer older than the 2023.12 standard (NumPy < 2)
            try:
                capsule = x.__dlpack__()
            except BufferError:
                # NumPy < 2 refuses read-only arrays (its capsules cannot say read-only): the
                # copy the versioned protocol would make anyway.
                if copy is False or not isinstance(x, np.ndarray):
                    raise
                return from_numpy(x, ctx, copy=True)
    if _capsule_valid(capsule, _VERSIONED):
        ptr = _capsule_get(capsule, _VERSIONED)
        managed = ctypes.cast(ptr, ctypes.POINTER(DLManagedTensorVersioned)).contents
        if copy is False and managed.flags & 1:
            raise BufferError("libtensor: the DLPack tensor is read-only and libtensor tensors "
                              "are writable: it needs a copy (copy=False)")
        fn, used = "lt_tensor_from_dlpack", _USED_VERSIONED
    elif _capsule_valid(capsule, _LEGACY):
        ptr = _capsule_get(capsule, _LEGACY)
        fn, used = "lt_tensor_from_dlpack_legacy", _USED_LEGACY
    else:
        raise ValueError("libtensor: not an unused DLPack capsule (dltensor or "
                         "dltensor_versioned)")
    out = ctypes.c_void_p()
    check(_lib.fn(fn)(ctx.handle, ptr, flags, ctypes.byref(out)))
    # The library owns the managed tensor now: the capsule must not free it again.
    _capsule_set_name(capsule, used)
    return Tensor(out.value, ctx)


__all__ = ["from_dlpack"]

# SPDX-License-Identifier: MIT
"""The optional C extension libtensor._fast (issue 20 A): the hot paths of one-shot elementwise
ops, einsum and plan calls in C. Sits on _lib, errors, context and tensor; below convert.

FAST is the bound module, or None when it is absent (a ctypes-only install, a Python it was not
built for) or when the environment variable LT_PY_NO_EXT is set to anything but "" or "0":
then every call takes the ctypes path, which gives the same results and exceptions (the
extension answers NotImplemented for whatever it does not cover, and the ctypes path takes
over). The extension does not link libtensor: it is handed the addresses of the functions of
the library ctypes loaded, so there is only ever one copy of the library in the process."""
import ctypes
import glob
import importlib.machinery
import importlib.util
import os
import sys

import numpy as np

from . import _lib
from .context import context
from .errors import check
from .tensor import _LT_TO_NP, Tensor

# Every function the extension calls (fast.h: LT_FAST_FUNCS).
_FUNCS = ("lt_binary", "lt_unary", "lt_tensor_wrap_host", "lt_tensor_destroy",
          "lt_tensor_host_pointer", "lt_tensor_rank", "lt_tensor_shape", "lt_tensor_strides",
          "lt_tensor_dtype", "lt_tensor_numel", "lt_dtype_size", "lt_tensor_copy_into",
          "lt_plan_binary", "lt_plan_permutation", "lt_plan_options_create",
          "lt_plan_options_set_unary", "lt_plan_options_destroy", "lt_plan_einsum",
          "lt_plan_execute", "lt_plan_create_output", "lt_plan_destroy", "lt_tensor_context",
          "lt_tensor_contiguous", "lt_tape_is_tracked", "lt_tape_forget", "lt_ad_binary",
          "lt_ad_unary", "lt_ad_einsum", "lt_reduce", "lt_ad_reduce", "lt_softmax",
          "lt_log_softmax", "lt_logsumexp", "lt_ad_softmax", "lt_ad_log_softmax",
          "lt_ad_logsumexp")


def disabled():
    """True when LT_PY_NO_EXT asks for the ctypes path alone."""
    return os.environ.get("LT_PY_NO_EXT", "") not in ("", "0")


def _import():
    """The extension module: inside the package when installed, else from the build tree of
    the loaded library (build/src/libtensor.so -> build/python/libtensor/_fast*.so)."""
    try:
        return importlib.import_module(__package__ + "._fast")
    except ImportError:
        pass
    folder = os.path.join(os.path.dirname(os.path.realpath(_lib.path)), "..", "python",
                          "libtensor")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        for path in sorted(glob.glob(os.path.join(folder, "_fast" + suffix))):
            spec = importlib.util.spec_from_file_location("libtensor._fast", path)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except ImportError:
                continue
            return module
    return None


def _bind():
    if disabled():
        return None
    module = _import()
    if module is None or not all(hasattr(_lib.lib, name) for name in _FUNCS):
        return None
    functions = {name: ctypes.cast(getattr(_lib.lib, name), ctypes.c_void_p).value
                 for name in _FUNCS}
    # A strided, offset probe: the extension checks its direct reading of NumPy's array fields
    # against the buffer protocol on it (and keeps to the buffer protocol if they differ).
    probe = np.zeros((5, 6), np.float32)[::2, :0:-1]
    dtypes = tuple(_LT_TO_NP.get(code) for code in range(14))
    module.bind(functions, context("cpu").handle, check, Tensor, np.asarray, np.ndarray, probe,
                dtypes)
    # Tensor.__del__'s call, without ctypes (the package's name `tensor` is a function).
    tensor_module = sys.modules[Tensor.__module__]
    tensor_module.destroy_handle = module.destroy
    tensor_module.fast_wrap, tensor_module.fast_held = module.wrap, module.held
    tensor_module.fast_cpu = context("cpu")
    return module


FAST = _bind()


def watch_tapes(tapes):
    """autograd registers each tape it makes with the extension (set_tape), which then records
    the calls it serves on Tensors of that context through the lt_ad_* calls. None (autograd
    absent) keeps Tensor operands on the Python paths for good (NumPy data never records)."""
    if FAST is not None:
        FAST.watch_tapes(tapes)


def active():
    """True when the C extension serves the hot paths (False: ctypes only)."""
    return FAST is not None


__all__ = ["FAST", "active", "disabled", "watch_tapes"]

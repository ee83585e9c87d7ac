# SPDX-License-Identifier: MIT
"""Counter-based random numbers (Philox4x32-10) with an API close to numpy.random.Generator.

    rng = lt.random.default_rng(42)
    rng.standard_normal((3, 4))                  # a NumPy array
    rng.uniform(-1, 1, 1000, device="opencl")    # a Tensor on that device

The values depend only on (seed, stream) and the generator's position, never on the device or
the thread count; they are not NumPy's bits. Without `device` results are NumPy arrays (or
Python scalars for size=None), as NumPy's; with it, Tensors there."""

import ctypes
import operator
import os

import numpy as np

from . import _lib
from .context import context
from .errors import check
from .convert import result
from .tensor import Tensor, empty, from_numpy

_STREAM_MASK = 2 ** 64 - 1


class Generator:
    """A libtensor lt_rng handle. Methods advance its counter, so successive calls differ."""

    def __init__(self, seed=None, stream=0):
        if seed is None:
            seed = int.from_bytes(os.urandom(8), "little")
        seed = operator.index(seed)
        self.seed, self.stream = seed & _STREAM_MASK, int(stream) & _STREAM_MASK
        handle = ctypes.c_void_p()
        check(_lib.fn("lt_rng_create")(self.seed, self.stream, ctypes.byref(handle)))
        self._handle = handle.value

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            _lib.fn("lt_rng_destroy")(handle)

    @property
    def offset(self):
        """The counter position in Philox blocks (settable, to replay or skip ahead)."""
        v = ctypes.c_uint64()
        check(_lib.fn("lt_rng_get_offset")(self._handle, ctypes.byref(v)))
        return v.value

    @offset.setter
    def offset(self, value):
        check(_lib.fn("lt_rng_set_offset")(self._handle, int(value)))

    def _fill(self, fn_name, size, dtype, device, *args):
        shape = () if size is None else (tuple(size) if np.iterable(size) else (int(size),))
        t = empty(shape, dtype, device=context(device))
        check(_lib.fn(fn_name)(self._handle, t.handle, *args))
        if device is not None:
            return t
        out = result(t, True)
        return out.item() if size is None else out

    def random(self, size=None, dtype="float64", device=None):
        """Uniform in [0, 1)."""
        return self._fill("lt_rng_uniform", size, dtype, device, 0.0, 1.0)

    def uniform(self, low=0.0, high=1.0, size=None, dtype="float64", device=None):
        """Uniform in [low, high)."""
        return self._fill("lt_rng_uniform", size, dtype, device, float(low), float(high))

    def standard_normal(self, size=None, dtype="float64", device=None):
        return self._fill("lt_rng_normal", size, dtype, device, 0.0, 1.0)

    def normal(self, loc=0.0, scale=1.0, size=None, dtype="float64", device=None):
        return self._fill("lt_rng_normal", size, dtype, device, float(loc), float(scale))

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False, device=None):
        """Integers in [low, high) ([low, high] with endpoint; high None: [0, low)), unbiased."""
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high) + (1 if endpoint else 0)
        return self._fill("lt_rng_integers", size, dtype, device, low, high)

    def bernoulli(self, p=0.5, size=None, dtype="float64", device=None):
        """1 with probability p, else 0 (torch.bernoulli with a scalar p)."""
        return self._fill("lt_rng_bernoulli", size, dtype, device, float(p))

    def permutation(self, x, device=None):
        """A random permutation of range(x) for an int x, else a shuffled copy of x along its
        first axis (NumPy arrays and Tensors on the CPU)."""
        if isinstance(x, (int, np.integer)):
            t = empty((int(x),), "int64", device=context(device))
            check(_lib.fn("lt_rng_permutation")(self._handle, t.handle))
            return t if device is not None else result(t, True)
        perm = self.permutation(len(x))
        if isinstance(x, Tensor):
            return from_numpy(x.numpy(copy=True)[perm], x.context)
        return np.asarray(x)[perm]


def default_rng(seed=None, stream=0):
    """A Generator for (seed, stream); seed None draws one from the OS."""
    return seed if isinstance(seed, Generator) else Generator(seed, stream)


__all__ = ["Generator", "default_rng"]

# SPDX-License-Identifier: MIT
"""Shared fixtures of the Python differential tests: devices, seeded RNG, layouts, tolerances."""
import os
import zlib

import numpy as np
import pytest

import libtensor as lt


def _open_devices():
    found = []
    for dev in ("cpu", "opencl"):
        try:
            lt.Context(dev).close()
            found.append(dev)
        except lt.LibtensorError:
            pass
    return found


DEVICES = _open_devices()
SEED = int(os.environ.get("LT_TEST_SEED", "1234"))


def skip_unless_supported(device, dtype):
    """Skips float64 work on a device without float64 arithmetic (some OpenCL GPUs)."""
    if np.dtype(dtype) != np.float64 or device == "cpu":
        return
    dev_id = lt.Context(device).device
    if not any(d.id == dev_id and d.fp64 for d in lt.devices()):
        pytest.skip(f"{dev_id} has no float64 arithmetic")


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture
def rng(request):
    # One stream per test, reproducible from LT_TEST_SEED and the test's name; crc32 rather than
    # hash(), whose value for a str changes with every interpreter (PYTHONHASHSEED).
    return np.random.default_rng([SEED, zlib.crc32(request.node.name.encode())])


LAYOUTS = ("contiguous", "fortran", "transposed", "stepped", "negative", "broadcast", "offset")


def random_array(rng, shape, dtype=np.float64, layout="contiguous"):
    """Random non-zero data in [0.5, 1.5) (signs mixed) with the given memory layout."""
    shape = tuple(shape)
    rank = len(shape)

    def values(s):
        v = rng.uniform(0.5, 1.5, size=s) * rng.choice([-1.0, 1.0], size=s)
        return v.astype(dtype) if np.dtype(dtype).kind == "f" else \
            rng.integers(-9, 10, size=s).astype(dtype)

    if rank == 0:
        # A 0-d array owning its element, or a 0-d view into the middle of a larger buffer.
        if layout == "contiguous":
            return np.array(values(()))
        return values((3,))[1:2].reshape(())
    if layout == "fortran":
        return np.asfortranarray(values(shape))
    if layout == "transposed":
        return values(shape[::-1]).transpose()
    if layout == "stepped":
        base = values(tuple(2 * n + 1 for n in shape))
        return base[tuple(slice(1, 1 + 2 * n, 2) for n in shape)]
    if layout == "negative":
        return values(shape)[(slice(None, None, -1),) * rank]
    if layout == "broadcast" and rank > 0:
        # Axes of extent > 1 picked at random get stride 0.
        small = tuple(1 if (n > 1 and rng.random() < 0.5) else n for n in shape)
        return np.broadcast_to(values(small), shape)
    if layout == "offset" and rank > 0:
        base = values((shape[0] + 1,) + shape[1:])
        return base[1:]
    return values(shape)


def tolerance(dtype, n=1):
    """(rtol, atol) for comparing a result of `dtype`, summing about `n` terms, with float64:
    rounding to the stored dtype plus accumulation in the compute dtype (float32 for 16- and
    32-bit dtypes, float64 otherwise). The one place tolerances are stated."""
    storage = {np.float16: 2.0 ** -11, np.float32: 2.0 ** -24}.get(np.dtype(dtype).type,
                                                                     2.0 ** -53)
    compute = 2.0 ** -24 if storage > 2.0 ** -53 else 2.0 ** -53
    tol = 4 * storage + 16 * compute * max(1.0, float(n)) ** 0.5
    return tol, tol


def assert_close(got, want, dtype=None, n=1):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, f"shape {got.shape} != {want.shape}"
    rtol, atol = tolerance(dtype or got.dtype, n)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol * max(1.0, float(np.max(np.abs(want), initial=0))))

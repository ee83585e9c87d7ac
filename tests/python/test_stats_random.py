# SPDX-License-Identifier: MIT
"""softmax / log_softmax / logsumexp / var / std / cumsum / cumprod against NumPy (SciPy's
logsumexp and softmax when python3-scipy is installed, else the NumPy formulas) on every
device and layout family; lt.random's Generator API, bounds, moments, reproducibility and
device independence."""
import numpy as np
import pytest

import libtensor as lt
from conftest import DEVICES, LAYOUTS, random_array, skip_unless_supported

try:
    from scipy import special as _special
except ImportError:  # optional: the NumPy formulas below stand in
    _special = None


def ref_logsumexp(x, axis=None, keepdims=False):
    if _special is not None:
        return _special.logsumexp(x, axis=axis, keepdims=keepdims)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):
        r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


def ref_softmax(x, axis=None):
    if _special is not None:
        return _special.softmax(x, axis=axis)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def ref_log_softmax(x, axis=None):
    return x - ref_logsumexp(x, axis=axis, keepdims=True)


AXES = [None, 0, -1, (0, 2), (2, 0, 1)]


def _on(device, a):
    return lt.tensor(a, device=device)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_family(device, rng, layout, dtype):
    skip_unless_supported(device, dtype)
    a = random_array(rng, (3, 4, 5), dtype, layout) * 4
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for axis in AXES:
        t = _on(device, a)
        np.testing.assert_allclose(lt.softmax(t, axis=axis).numpy(), ref_softmax(a, axis),
                                   rtol=tol, atol=tol)
        np.testing.assert_allclose(t.log_softmax(axis).numpy(), ref_log_softmax(a, axis),
                                   rtol=tol, atol=tol)
        for keep in (False, True):
            got = lt.logsumexp(t, axis=axis, keepdims=keep).numpy()
            want = ref_logsumexp(a, axis, keep)
            assert got.shape == np.shape(want) and got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_var_std(device, rng, layout, dtype):
    skip_unless_supported(device, dtype)
    a = random_array(rng, (4, 3, 6), dtype, layout) + 100
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for axis in AXES:
        for ddof in (0, 1):
            t = _on(device, a)
            got = lt.var(t, axis=axis, ddof=ddof).numpy()
            want = np.var(a.astype(np.float64), axis=axis, ddof=ddof)
            assert got.dtype == dtype
            # A broadcast axis has variance exactly 0, which the reference misses by rounding
            # (about (eps * |mean|)^2): an absolute floor of that size, no looser.
            floor = (8 * np.finfo(dtype).eps * np.max(np.abs(a))) ** 2
            np.testing.assert_allclose(got, want, rtol=tol, atol=floor)
            np.testing.assert_allclose(t.std(axis, ddof=ddof, keepdims=True).numpy(),
                                       np.std(a.astype(np.float64), axis=axis, ddof=ddof,
                                              keepdims=True), rtol=tol, atol=np.sqrt(floor))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cumsum_cumprod(device, rng, layout):
    a = random_array(rng, (3, 7, 2), np.float64, layout)
    for axis in (None, 0, 1, -1):
        t = _on(device, a)
        np.testing.assert_allclose(lt.cumsum(t, axis).numpy(), np.cumsum(a, axis), rtol=1e-12)
        np.testing.assert_allclose(t.cumprod(axis).numpy(), np.cumprod(a, axis), rtol=1e-12)
    i = np.arange(-6, 6, dtype=np.int64).reshape(3, 4)
    got = lt.cumsum(i, 1)
    assert got.dtype == np.int64 and (got == np.cumsum(i, 1)).all()


def test_numpy_in_numpy_out_and_special_values():
    x = np.array([[1e4, 1e4 - 1, -np.inf], [-np.inf, -np.inf, -np.inf]])
    sm = lt.softmax(x, axis=1)
    assert isinstance(sm, np.ndarray)
    np.testing.assert_allclose(sm[0], ref_softmax(x[0]), rtol=1e-12)
    assert np.isnan(sm[1]).all()  # as PyTorch
    lse = lt.logsumexp(x, axis=1)
    assert lse[1] == -np.inf and np.isclose(lse[0], ref_logsumexp(x[0]))
    assert lt.var(np.array([1.0, 2.0]), ddof=2) == np.inf
    with pytest.raises(lt.OutOfRangeError):
        lt.cumsum(np.ones(3), axis=1)
    with pytest.raises(lt.InvalidArgumentError):
        lt.var(np.ones(3), ddof=-1)


def test_rng_api_and_bounds():
    g = lt.random.default_rng(7)
    assert isinstance(g.random(), float)
    u = g.uniform(-2, 3, size=(100, 10))
    assert u.shape == (100, 10) and u.dtype == np.float64 and u.min() >= -2 and u.max() < 3
    assert g.random(5, dtype="float32").dtype == np.float32
    k = g.integers(5, 9, size=10000)
    assert k.dtype == np.int64 and set(np.unique(k)) == {5, 6, 7, 8}
    assert set(np.unique(g.integers(3, size=1000, endpoint=True))) == {0, 1, 2, 3}
    big = g.integers(-2 ** 63, 2 ** 63 - 1, size=1000)
    assert big.min() < -2 ** 61 and big.max() > 2 ** 61
    p = g.permutation(50)
    assert sorted(p) == list(range(50))
    x = np.arange(10) * 3
    assert sorted(g.permutation(x)) == list(x)
    b = g.bernoulli(0.25, size=20000)
    assert abs(b.mean() - 0.25) < 0.02 and set(np.unique(b)) <= {0.0, 1.0}
    z = g.normal(3, 2, size=200000)
    assert abs(z.mean() - 3) < 0.03 and abs(z.std() - 2) < 0.03
    with pytest.raises(lt.InvalidArgumentError):
        g.uniform(1, 0, size=3)
    with pytest.raises(lt.InvalidArgumentError):
        g.integers(3, 3, size=3)


def test_rng_reproducible_and_advancing():
    a, b = lt.random.default_rng(11), lt.random.default_rng(11)
    x1, x2 = a.standard_normal(1000), a.standard_normal(1000)
    assert not np.array_equal(x1, x2)
    np.testing.assert_array_equal(b.standard_normal(1000), x1)
    b.offset = 0
    np.testing.assert_array_equal(b.standard_normal(1000), x1)
    c = lt.random.default_rng(11, stream=1)
    assert not np.array_equal(c.standard_normal(1000), x1)


@pytest.mark.skipif("opencl" not in DEVICES, reason="no OpenCL device")
def test_rng_same_bits_on_every_device():
    for method, args in (("random", ()), ("integers", (0, 1000)), ("bernoulli", (0.4,))):
        cpu = getattr(lt.random.default_rng(5), method)(*args, size=(33, 17), device="cpu")
        ocl = getattr(lt.random.default_rng(5), method)(*args, size=(33, 17), device="opencl")
        np.testing.assert_array_equal(cpu.numpy(), ocl.numpy())
    cpu = lt.random.default_rng(5).standard_normal(999, device="cpu").numpy()
    ocl = lt.random.default_rng(5).standard_normal(999, device="opencl").numpy()
    np.testing.assert_array_equal(cpu, ocl)

# SPDX-License-Identifier: MIT
"""The array API namespace beyond test_array_api.py (issue 20 B): the remaining elementwise
functions, statistics, searching, sets, manipulation, the array object's methods and the
standard's dtype rules, each against NumPy on random data in several layouts and on every
device present. (The official array-api-tests suite is run by hand; see the issue's notes.)"""
import math

import numpy as np
import pytest

import libtensor as lt
from conftest import assert_close, random_array, skip_unless_supported

xp = lt.array_api

UNARY = {"tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
         "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh,
         "atanh": np.arctanh, "log2": np.log2, "log10": np.log10, "signbit": np.signbit}
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-30, -3.5]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_new_unary(device, rng, dtype):
    skip_unless_supported(device, dtype)
    layouts = {"contiguous": lambda v: v, "transposed": lambda v: v.T,
               "negative": lambda v: v[::-1, ::-1],
               "stepped": lambda v: np.repeat(v, 2, axis=1)[:, ::2]}
    for name, ref in UNARY.items():
        for layout, view in layouts.items():
            a = (rng.uniform(-1.5, 1.5, size=(3, 4)) * 1.7).astype(dtype)
            a.reshape(-1)[:len(SPECIAL)] = SPECIAL
            a = view(a)
            with np.errstate(all="ignore"):
                want = ref(a)
            got = getattr(xp, name)(xp.asarray(a, device=device))
            assert got.dtype == want.dtype, (name, layout)
            got = got.numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            fin = ~np.isnan(want)
            assert_close(got[fin], want[fin], n=4)
            if name == "signbit":  # the sign bit itself, -0.0 included
                np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_copysign_logaddexp(device, rng, dtype):
    skip_unless_supported(device, dtype)
    a = random_array(rng, (4, 6), dtype) * 50
    b = random_array(rng, (6,), dtype, "negative") * 50
    a.reshape(-1)[:6] = [np.inf, -np.inf, np.inf, np.nan, -0.0, 0.0]
    b2 = np.ascontiguousarray(np.broadcast_to(b, a.shape))
    b2.reshape(-1)[:6] = [np.inf, -np.inf, -np.inf, 1.0, 0.0, -0.0]
    ta, tb = xp.asarray(a, device=device), xp.asarray(b2, device=device)
    np.testing.assert_array_equal(xp.copysign(ta, tb).numpy(), np.copysign(a, b2))
    with np.errstate(all="ignore"):
        want = np.logaddexp(a, b2)
    got = xp.logaddexp(ta, tb).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert_close(got[~np.isnan(want)], want[~np.isnan(want)], n=4)
    assert xp.logaddexp(ta, xp.asarray(b, device=device)).shape == a.shape  # broadcast


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64])
def test_new_ops_on_integers(device, dtype):
    a = np.array([-3, -1, 0, 1, 2, 100], dtype=np.int64).astype(dtype)
    t = xp.asarray(a, device=device)
    np.testing.assert_array_equal(xp.signbit(t).numpy(), a < 0)
    with np.errstate(all="ignore"):
        want = np.log2(a)  # NumPy's float for the width: int8 gives float16
    got = xp.log2(t).numpy()
    assert got.dtype == want.dtype
    assert_close(got[a > 0], want[a > 0], n=2)


def test_scalar_operands_keep_the_array_dtype():
    for dt, s in ((xp.int8, 3), (xp.uint16, 7), (xp.float32, 0.5), (xp.bool, True)):
        x = xp.asarray([1, 0, 1], dtype=dt)
        out = xp.add(x, s) if dt != xp.bool else xp.logical_and(x, s)
        assert out.dtype == dt
        assert xp.multiply(s, x).dtype == dt if dt != xp.bool else True
    with pytest.raises(OverflowError):
        xp.add(xp.asarray([1], dtype=xp.int8), 1000)
    with pytest.raises(TypeError):
        xp.add(xp.asarray([1.0]), "text")


def test_dtype_rules():
    assert xp.result_type(xp.int8, xp.uint8) == xp.int16
    assert xp.result_type(xp.float32, xp.float64) == xp.float64
    assert xp.result_type(xp.asarray([1], dtype=xp.uint8), 1) == xp.uint8
    for a, b in ((xp.int64, xp.float32), (xp.bool, xp.int8), (xp.uint64, xp.int64)):
        with pytest.raises(TypeError):
            xp.result_type(a, b)
    assert xp.can_cast(xp.int8, xp.int16) and not xp.can_cast(xp.int16, xp.int8)
    assert xp.can_cast(xp.int8, xp.float64) and not xp.can_cast(xp.float64, xp.int64)
    assert xp.can_cast(xp.float32, xp.float64) and not xp.can_cast(xp.bool, xp.int8)
    assert not xp.can_cast(xp.uint64, xp.int8)  # no promotion between them: False, no error
    assert xp.iinfo(xp.uint8).max == 255 and xp.finfo(xp.float32).bits == 32
    assert type(xp.finfo(xp.float64).eps) is float  # Python floats, as the standard says
    assert math.copysign(1.0, xp.sign(xp.asarray(-0.0)).item()) == 1.0  # sign(-0.0) is +0
    assert xp.tensordot(xp.asarray([3], dtype=xp.uint16), xp.asarray([2], dtype=xp.int16),
                        axes=1).dtype == xp.int32  # promoted, not through a float
    with pytest.raises(TypeError):
        xp.iinfo(xp.float32)
    with pytest.raises(TypeError):
        xp.asarray([1.0], dtype="complex128")


def test_asarray_semantics(device):
    a = np.arange(6.0).reshape(2, 3)
    assert xp.asarray(True).dtype == xp.bool and xp.asarray(2).dtype == xp.int64
    assert xp.asarray([1, 2.5]).dtype == xp.float64
    assert xp.asarray([]).dtype == xp.float64 and xp.asarray([[], []]).shape == (2, 0)
    assert xp.asarray([[], []]).dtype == xp.float64  # as NumPy and array_api_strict
    t = xp.asarray(a, device=device)
    assert xp.asarray(t) is t and xp.asarray(t, copy=True) is not t
    with pytest.raises(ValueError):
        xp.asarray(t, dtype=xp.float32, copy=False)
    with pytest.raises(ValueError):
        xp.asarray([1, 2], copy=False)
    with pytest.raises(OverflowError):
        xp.asarray(2 ** 70)
    for fill in (300, -129):  # NumPy 1 (Debian's) wrapped these in np.full
        with pytest.raises(OverflowError):
            xp.full((2,), fill, dtype=xp.int8)
        with pytest.raises(OverflowError):
            xp.full_like(xp.asarray([1], dtype=xp.int8), fill)
    assert xp.full((2,), -128, dtype=xp.int8).numpy().tolist() == [-128, -128]
    c = xp.asarray(t, copy=True)
    c[0, 0] = 42.0
    assert t[0, 0].item() == 0.0


def test_array_object():
    x = xp.asarray([[1, 2], [3, 4]], dtype=xp.int16)
    assert int(x[1, 1]) == 4 and float(x[0, 0]) == 1.0 and bool(x[0, 1])
    assert [10, 20, 30][x[0, 0]] == 20  # __index__
    with pytest.raises(TypeError):
        int(x)
    y = x.copy()
    y //= 2
    y <<= 1
    y |= 1
    np.testing.assert_array_equal(y.numpy(), ((np.array([[1, 2], [3, 4]]) // 2) << 1) | 1)
    np.testing.assert_array_equal((2 ** x).numpy(), 2 ** np.array([[1, 2], [3, 4]]))
    assert (+x).dtype == xp.int16 and x.T.shape == (2, 2)
    with pytest.raises(ValueError):
        z = xp.asarray([1, 2], dtype=xp.int8)
        z += xp.asarray([[1, 2], [3, 4]], dtype=xp.int8)  # would change the shape


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative"])
def test_statistics(device, rng, layout):
    a = random_array(rng, (3, 4, 5), np.float64, layout)
    t = xp.asarray(a, device=device)
    assert math.isnan(xp.var(xp.asarray(math.nan), axis=()).item())  # no axis reduced
    assert xp.var(xp.asarray([2.0]), axis=()).item() == 0.0
    for corr in (0, 1):
        for axis in (None, 1, (0, 2)):
            assert_close(xp.var(t, axis=axis, correction=corr).numpy(),
                         np.var(a, axis=axis, ddof=corr), n=60)
            assert_close(xp.std(t, axis=axis, correction=corr, keepdims=True).numpy(),
                         np.std(a, axis=axis, ddof=corr, keepdims=True), n=60)
    i8 = xp.asarray(np.array([100, 100, 100], np.int8), device=device)
    assert xp.sum(i8).dtype == xp.int64 and xp.sum(i8).item() == 300
    assert xp.sum(xp.asarray(np.array([1], np.uint8))).dtype == xp.uint64
    assert xp.sum(i8, dtype=xp.int8).dtype == xp.int8
    # an explicit narrow dtype is kept, wrapping as NumPy's cumsum(dtype=int8)
    for dt in (xp.int8, xp.uint16, xp.int32):
        c = xp.cumulative_sum(i8, dtype=dt)
        assert c.dtype == dt
        np.testing.assert_array_equal(c.numpy(), np.cumsum(np.array([100] * 3, np.int8), dtype=dt))
        c = xp.cumulative_sum(i8, dtype=dt, include_initial=True)
        assert c.dtype == dt and c.numpy().tolist() == [0] + np.cumsum([100] * 3, dtype=dt).tolist()
    c = xp.cumulative_sum(xp.asarray(np.zeros((0, 1), np.int8), device=device), axis=1,
                          dtype=xp.int16, include_initial=True)
    assert c.dtype == xp.int16 and c.shape == (0, 2)
    c = xp.cumulative_sum(t, axis=1, include_initial=True).numpy()
    assert_close(c, np.concatenate([np.zeros((3, 1, 5)), np.cumsum(a, axis=1)], axis=1), n=5)
    b = a > 0
    tb = xp.asarray(b, device=device)
    for axis in (None, 0, (1, 2)):
        np.testing.assert_array_equal(xp.all(tb, axis=axis).numpy(), b.all(axis=axis))
        np.testing.assert_array_equal(xp.any(t, axis=axis).numpy(), a.any(axis=axis))
    assert xp.all(xp.asarray(np.zeros((0, 2)))).item() is True
    assert xp.any(xp.asarray(np.zeros((0, 2))), axis=0).shape == (2,)


def test_sets_and_searching(device, rng):
    a = rng.integers(-3, 4, size=(4, 5)).astype(np.float64)
    a[0, :2] = np.nan  # each NaN is a value of its own, as NumPy's equal_nan=False
    t = xp.asarray(a, device=device)
    vals, idx, inv, cnt = np.unique(a, return_index=True, return_inverse=True,
                                    return_counts=True, equal_nan=False)
    out = xp.unique_all(t)
    np.testing.assert_array_equal(out.values.numpy(), vals)
    np.testing.assert_array_equal(out.indices.numpy(), idx)
    np.testing.assert_array_equal(out.inverse_indices.numpy(), inv.reshape(a.shape))
    np.testing.assert_array_equal(out.counts.numpy(), cnt)
    np.testing.assert_array_equal(xp.unique_values(t).numpy(), vals)
    np.testing.assert_array_equal(xp.unique_counts(t).counts.numpy(), cnt)
    np.testing.assert_array_equal(xp.unique_inverse(t).inverse_indices.numpy(),
                                  inv.reshape(a.shape))
    assert xp.unique_values(xp.asarray(np.zeros(0))).shape == (0,)
    s = np.sort(rng.integers(-5, 6, size=9).astype(np.float64))
    v = rng.integers(-7, 8, size=(2, 3)).astype(np.float64)
    for side in ("left", "right"):
        np.testing.assert_array_equal(
            xp.searchsorted(xp.asarray(s, device=device), xp.asarray(v, device=device),
                            side=side).numpy(), np.searchsorted(s, v, side=side))
    nz = xp.nonzero(xp.asarray(a > 0, device=device))
    for got, want in zip(nz, np.nonzero(a > 0)):
        np.testing.assert_array_equal(got.numpy(), want)
    r = rng.integers(0, 3, size=(3, 4))
    np.testing.assert_array_equal(
        xp.argsort(xp.asarray(r), axis=1, descending=True).numpy(),
        np.argsort(-r, axis=1, kind="stable"))


def test_manipulation(device, rng):
    a = random_array(rng, (2, 3, 4), np.float64, "transposed")
    t = xp.asarray(a, device=device)
    np.testing.assert_array_equal(xp.moveaxis(t, 0, -1).numpy(), np.moveaxis(a, 0, -1))
    np.testing.assert_array_equal(xp.moveaxis(t, (0, 1), (2, 0)).numpy(),
                                  np.moveaxis(a, (0, 1), (2, 0)))
    for shift, axis in ((1, 0), (-5, 2), ((1, 2), (0, 1)), (7, None)):
        np.testing.assert_array_equal(xp.roll(t, shift, axis=axis).numpy(),
                                      np.roll(a, shift, axis=axis))
    np.testing.assert_array_equal(xp.repeat(t, 2, axis=1).numpy(), np.repeat(a, 2, axis=1))
    np.testing.assert_array_equal(xp.repeat(t, xp.asarray([0, 2, 1]), axis=1).numpy(),
                                  np.repeat(a, [0, 2, 1], axis=1))
    np.testing.assert_array_equal(xp.repeat(t, 3).numpy(), np.repeat(a, 3))
    for reps in ((2,), (2, 1, 3), (3, 1, 1, 2)):
        np.testing.assert_array_equal(xp.tile(t, reps).numpy(), np.tile(a, reps))
    for axis in (0, -1):
        for got, want in zip(xp.unstack(t, axis=axis), np.moveaxis(a, axis, 0)):
            np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(xp.flip(t, axis=(0, 2)).numpy(), np.flip(a, (0, 2)))
    i8 = xp.asarray(np.ones((2, 3, 4), np.int8), device=device)
    cat = xp.concat([i8, xp.astype(t, xp.int16)], axis=1)
    assert cat.dtype == xp.int16 and cat.shape == (2, 6, 4)
    np.testing.assert_array_equal(xp.concat([t, t], axis=None).numpy(),
                                  np.concatenate([a, a], axis=None))
    np.testing.assert_array_equal(xp.stack([t, t], axis=-1).numpy(), np.stack([a, a], -1))
    m = random_array(rng, (2, 4, 5))
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(xp.tril(xp.asarray(m), k=k).numpy(), np.tril(m, k))
        np.testing.assert_array_equal(xp.triu(xp.asarray(m), k=k).numpy(), np.triu(m, k))
    u, v = np.arange(3.0), np.arange(4.0)
    for ind in ("xy", "ij"):
        for got, want in zip(xp.meshgrid(xp.asarray(u), xp.asarray(v), indexing=ind),
                             np.meshgrid(u, v, indexing=ind)):
            np.testing.assert_array_equal(got.numpy(), want)


def test_creation():
    np.testing.assert_array_equal(xp.arange(2 ** 60, 2 ** 60 + 5, 2).numpy(),
                                  np.arange(2 ** 60, 2 ** 60 + 5, 2))
    np.testing.assert_allclose(xp.arange(0.0, 1.0, 0.1).numpy(), np.arange(0.0, 1.0, 0.1))
    assert xp.arange(5, 0).shape == (0,) and xp.arange(10, 0, -3).shape == (4,)
    assert xp.full((2,), True).dtype == xp.bool
    np.testing.assert_array_equal(xp.eye(3, 4, k=1).numpy(), np.eye(3, 4, k=1))
    np.testing.assert_allclose(xp.linspace(0, 1, 5, endpoint=False).numpy(),
                               np.linspace(0, 1, 5, endpoint=False))
    assert math.isclose(xp.e, math.e) and xp.newaxis is None

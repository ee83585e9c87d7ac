# SPDX-License-Identifier: MIT
"""In-place operators and out=: results land in the existing storage (also a wrapped NumPy
array's), compared with NumPy on random data and varied layouts, on every device."""
import numpy as np
import pytest

import libtensor as lt
from conftest import assert_close, random_array

BINARY = ("add", "subtract", "multiply", "divide", "minimum", "maximum")
INPLACE = {"__iadd__": np.add, "__isub__": np.subtract, "__imul__": np.multiply,
           "__itruediv__": np.divide}


@pytest.mark.parametrize("layout", ("contiguous", "transposed", "stepped", "negative"))
@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_operators_write_the_wrapped_array(rng, op, layout):
    a = random_array(rng, (4, 5), np.float32, layout)
    b = random_array(rng, (5,), np.float32)  # broadcast along the rows
    want = INPLACE[op](a.copy(), b)
    t = lt.tensor(a)
    same = getattr(t, op)(b)
    assert same is t
    assert_close(a, want)  # the NumPy array itself changed
    t2 = lt.tensor(a)
    t2 += lt.tensor(b)
    assert_close(a, INPLACE["__iadd__"](want, b))


def test_inplace_operator_statement(device, rng):
    a = random_array(rng, (3, 4), np.float32)
    t = lt.tensor(a.copy(), device=device)
    keep = t
    t += 1.0
    t *= t  # the output is exactly one of the inputs: allowed
    assert t is keep
    assert_close(t.numpy(), (a + 1) ** 2)
    t -= t[::-1]  # partially overlapping input: read completely first
    assert_close(t.numpy(), (a + 1) ** 2 - ((a + 1) ** 2)[::-1])


def test_inplace_readonly_refused():
    r = np.ones(3)
    r.flags.writeable = False
    t = lt.tensor(r)
    with pytest.raises(ValueError, match="read-only"):
        t += 1
    assert r[0] == 1


@pytest.mark.parametrize("name", BINARY)
def test_binary_out(device, rng, name):
    a = random_array(rng, (3, 4), np.float64, "transposed")
    b = random_array(rng, (4,), np.float64)
    want = getattr(np, name)(a, b)
    out = lt.empty((4, 3), "float64", device=device).T  # a strided Tensor out
    assert getattr(lt, name)(lt.tensor(a, device=device), b, out=out) is out
    assert_close(out.numpy(), want)
    if device == "cpu":
        arr = np.full((5, 4), np.nan)[1:4]  # an offset NumPy out: written zero-copy
        assert getattr(lt, name)(a, b, out=arr) is arr
        assert_close(arr, want)
        a32 = np.full((3, 4), np.nan, np.float32)  # another dtype: converted
        getattr(lt, name)(a, b, out=a32)
        assert_close(a32, want.astype(np.float32))
        big = np.full((2, 3, 4), np.nan)  # out= broadcasts as in NumPy
        getattr(lt, name)(a, b, out=big)
        assert_close(big, np.broadcast_to(want, big.shape))


def test_unary_reduction_out(rng):
    a = random_array(rng, (3, 4), np.float64, "negative")
    out = np.full((3, 4), np.nan)
    assert lt.abs(a, out=out) is out
    assert_close(out, np.abs(a))
    s = np.full(4, np.nan)
    assert lt.sum(a, axis=0, out=s) is s
    assert_close(s, a.sum(axis=0), n=3)
    k = np.full((3, 1), np.nan)
    lt.max(a, axis=1, keepdims=True, out=k)
    assert_close(k, a.max(axis=1, keepdims=True))
    i = np.full(3, -1, np.int64)
    lt.argmax(a, axis=1, out=i)
    np.testing.assert_array_equal(i, a.argmax(axis=1))
    m = lt.empty((4,), "float64")
    lt.mean(lt.tensor(a), axis=0, out=m)
    assert_close(m.numpy(), a.mean(axis=0), n=3)


def test_out_errors(rng):
    a = random_array(rng, (3, 4))
    with pytest.raises(lt.ShapeMismatchError):
        lt.add(a, a, out=np.empty((4, 3)))
    with pytest.raises(lt.ShapeMismatchError):
        lt.sum(a, axis=0, out=np.empty((1, 4)))
    frozen = np.empty((3, 4))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        lt.add(a, a, out=frozen)
    with pytest.raises(TypeError):
        lt.add(a, a, out=[0] * 12)


def test_setitem_writes_the_wrapped_array(rng):
    a = random_array(rng, (4, 6), np.float64)
    t = lt.tensor(a)
    t[1] = 5.0
    t[2:, ::2] = np.arange(3.0)
    t[0, ...] = lt.tensor(np.full(6, -2.0))
    want = a.copy()
    assert (a[1] == 5).all() and (a[0] == -2).all()
    np.testing.assert_array_equal(a[2:, ::2], np.broadcast_to(np.arange(3.0), (2, 3)))
    np.testing.assert_array_equal(t.numpy(), want)


def test_every_elementwise_op_takes_out():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    b = np.array([2, 1, 3], np.int32)
    for name in ("equal", "less", "logical_and", "bitwise_and", "bitwise_or", "bitwise_xor",
                 "left_shift", "right_shift", "floor_divide", "remainder", "fmod", "arctan2",
                 "hypot", "maximum", "power"):
        want = getattr(np, name)(a, b)
        out = np.empty_like(want)
        assert getattr(lt, name)(a, b, out=out) is out
        np.testing.assert_allclose(out, want, rtol=1e-6)
    for name in ("log1p", "expm1", "floor", "ceil", "rint", "trunc", "sign", "logical_not",
                 "invert", "isnan", "isfinite"):
        want = getattr(np, name)(a)
        out = np.empty_like(want)
        assert getattr(lt, name)(a, out=out) is out
        np.testing.assert_allclose(out, want, rtol=1e-6)
    out = np.empty((2, 3), np.int32)
    assert lt.where(a > 2, a, b, out=out) is out
    np.testing.assert_array_equal(out, np.where(a > 2, a, b))
    assert lt.clip(a, 2, 4, out=out) is out
    np.testing.assert_array_equal(out, np.clip(a, 2, 4))

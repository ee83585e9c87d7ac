# SPDX-License-Identifier: MIT
"""The array API namespace: reached from a Tensor, its functions against NumPy on random data,
the names it lacks reported rather than hidden. test_array_api_more.py covers the rest of the
standard (issue 20 B)."""
import numpy as np
import pytest

import libtensor as lt
from conftest import assert_close, random_array

xp = lt.array_api


def test_namespace_from_tensor():
    t = lt.tensor(np.ones(3))
    assert t.__array_namespace__() is xp
    assert t.__array_namespace__(api_version="2023.12") is xp
    with pytest.raises(ValueError):
        t.__array_namespace__(api_version="1999.01")
    assert xp.__array_api_version__ == "2023.12"
    assert xp.float64 == np.float64 and xp.int64 == np.int64


def test_creation_and_dtypes():
    assert xp.zeros((2, 3)).shape == (2, 3) and xp.zeros((2, 3)).dtype == xp.float64
    np.testing.assert_array_equal(xp.full((2,), 3).numpy(), [3, 3])
    assert xp.full((2,), 3).dtype == xp.int64
    np.testing.assert_array_equal(xp.ones_like(xp.zeros((2, 2), dtype=xp.float32)).numpy(),
                                  np.ones((2, 2), np.float32))
    a = xp.asarray([1.5, 2.5])
    assert a.dtype == xp.float64
    assert xp.astype(a, xp.float32).dtype == xp.float32
    assert xp.isdtype(xp.float32, "real floating") and not xp.isdtype(xp.int64, "real floating")
    assert xp.isdtype(xp.int64, ("integral", "bool"))
    assert xp.result_type(a, xp.float32) == np.float64
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "minimum",
                                  "maximum"])
def test_binary(rng, name):
    a, b = random_array(rng, (3, 4), layout="transposed"), random_array(rng, (4,))
    assert_close(getattr(xp, name)(xp.asarray(a), xp.asarray(b)).numpy(),
                 getattr(np, name)(a, b))


@pytest.mark.parametrize("name", ["abs", "negative", "exp", "sin", "cos", "tanh", "square",
                                  "positive"])
def test_unary(rng, name):
    a = random_array(rng, (3, 4), layout="negative")
    assert_close(getattr(xp, name)(xp.asarray(a)).numpy(), getattr(np, name)(a))


def test_statistics_and_search(rng):
    a = random_array(rng, (3, 4, 5))
    t = xp.asarray(a)
    for name in ("sum", "prod", "max", "min", "mean"):
        for axis in (None, 1, (0, 2)):
            assert_close(getattr(xp, name)(t, axis=axis, keepdims=True).numpy(),
                         getattr(np, name)(a, axis=axis, keepdims=True), n=60)
    np.testing.assert_array_equal(xp.argmax(t, axis=2).numpy(), a.argmax(axis=2))
    np.testing.assert_array_equal(xp.argmin(t).numpy(), a.argmin())


def test_manipulation(rng):
    a = random_array(rng, (2, 1, 3))
    t = xp.asarray(a)
    np.testing.assert_array_equal(xp.permute_dims(t, (2, 0, 1)).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(xp.reshape(t, (3, 2)).numpy(), a.reshape(3, 2))
    np.testing.assert_array_equal(xp.squeeze(t, 1).numpy(), a.squeeze(1))
    with pytest.raises(ValueError):
        xp.squeeze(t, 0)
    np.testing.assert_array_equal(xp.expand_dims(t, axis=0).numpy(), a[None])
    np.testing.assert_array_equal(xp.flip(t, axis=2).numpy(), a[:, :, ::-1])
    np.testing.assert_array_equal(xp.broadcast_to(t, (4, 2, 5, 3)).numpy(),
                                  np.broadcast_to(a, (4, 2, 5, 3)))
    x, y = xp.broadcast_arrays(xp.asarray(np.ones(3)), xp.asarray(np.ones((2, 1))))
    assert x.shape == y.shape == (2, 3)


def test_linear_algebra(rng):
    a, b = random_array(rng, (2, 3, 4)), random_array(rng, (4, 5))
    v = random_array(rng, (4,))
    ta, tb, tv = xp.asarray(a), xp.asarray(b), xp.asarray(v)
    assert_close(xp.matmul(ta, tb).numpy(), np.matmul(a, b), n=4)
    assert_close(xp.matmul(ta, tv).numpy(), np.matmul(a, v), n=4)
    assert_close(xp.matmul(tv, tb).numpy(), np.matmul(v, b), n=4)
    assert_close(xp.matmul(tv, tv).numpy(), np.matmul(v, v), n=4)
    assert_close(xp.tensordot(ta, tb, axes=1).numpy(), np.tensordot(a, b, axes=1), n=4)
    assert_close(xp.tensordot(ta, ta, axes=([1, 2], [1, 2])).numpy(),
                 np.tensordot(a, a, axes=([1, 2], [1, 2])), n=12)
    assert_close(xp.vecdot(ta, tv).numpy(), (a * v).sum(-1), n=4)
    np.testing.assert_array_equal(ta.mT.numpy(), np.swapaxes(a, -1, -2))
    with pytest.raises(ValueError):
        xp.matmul(xp.asarray(1.0), tb)


def test_missing_names_are_reported():
    # the library stores no complex tensors: those dtype names are absent, nothing else
    assert xp.missing() == ["complex128", "complex64"]
    assert not hasattr(xp, "complex64")
    with pytest.raises(AttributeError):
        xp.no_such_name  # noqa: B018


def test_dlpack_and_devices():
    t = xp.asarray(np.arange(4.0))
    assert (np.from_dlpack(t) == np.arange(4.0)).all()
    back = xp.from_dlpack(np.arange(3.0))
    assert isinstance(back, lt.Tensor)
    assert t.to_device("cpu") is t
    info = xp.__array_namespace_info__()
    assert info.default_device() == "cpu" and "cpu" in info.devices()
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32", "uint64", "float32", "float64"}
    assert set(info.dtypes(kind="unsigned integer")) == {"uint8", "uint16", "uint32", "uint64"}
    assert info.dtypes(kind="complex floating") == {}
    with pytest.raises(ValueError):
        info.dtypes(kind="no such kind")

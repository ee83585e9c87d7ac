# SPDX-License-Identifier: MIT
"""NumPy's names and signatures from `import libtensor as lt`: module functions that are views
or compositions (reshape, moveaxis, nonzero, where(cond), isclose, ...), NumPy's argument order
for reductions (sum(a, axis, dtype, out, keepdims)), NumPy functions applied to Tensors
(np.std(t) calls t.std with dtype= and out=), and the operators staying NumPy's for float16
and bfloat16 (the array API namespace once replaced some of them with stricter versions)."""
import numpy as np
import pytest

import libtensor as lt
from conftest import DEVICES, SEED


@pytest.mark.parametrize("device", DEVICES)
def test_module_views_and_compositions(device):
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((3, 4, 5))
    t = lt.tensor(a, device=device)
    checks = [
        (lambda m, x: m.reshape(x, (4, 15)), None),
        (lambda m, x: m.transpose(x, (2, 0, 1)), None),
        (lambda m, x: m.squeeze(m.expand_dims(x, (0, 3)), 0), None),
        (lambda m, x: m.flip(x, 1), None),
        (lambda m, x: m.swapaxes(x, 0, 2), None),
        (lambda m, x: m.moveaxis(x, 0, -1), None),
        (lambda m, x: m.moveaxis(x, [0, 1], [2, 0]), None),
        (lambda m, x: m.ravel(m.swapaxes(x, 0, 1)), None),
        (lambda m, x: m.count_nonzero(x > 0), None),
        (lambda m, x: m.where(x > 0.5, x, 0.0), None),
    ]
    for fn, _ in checks:
        want = fn(np, a)
        got = fn(lt, a)
        np.testing.assert_array_equal(np.asarray(got), want)
        got_t = fn(lt, t)
        np.testing.assert_array_equal(got_t.numpy() if isinstance(got_t, lt.Tensor)
                                      else np.asarray(got_t), want)
    for got, want in zip(lt.nonzero(a > 0.5), np.nonzero(a > 0.5)):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(lt.where(t > 0.5), np.where(a > 0.5)):
        np.testing.assert_array_equal(got.numpy(), want)
    with pytest.raises(ValueError):
        lt.where(a > 0, a)
    b = a[0]
    np.testing.assert_allclose(lt.dot(b, b.T), b @ b.T, rtol=1e-12)
    np.testing.assert_array_equal(lt.outer([1, 2], [3, 4, 5]), np.outer([1, 2], [3, 4, 5]))
    x = np.array([1.0, np.inf, np.nan, 1.0])
    y = np.array([1.0 + 1e-9, np.inf, np.nan, 1.1])
    for nan in (False, True):
        np.testing.assert_array_equal(lt.isclose(x, y, equal_nan=nan),
                                      np.isclose(x, y, equal_nan=nan))
    assert lt.allclose(a, a + 1e-12) and not lt.allclose(a, a + 1)
    assert lt.array_equal(a, a.copy()) and not lt.array_equal(a, a[:2])
    np.testing.assert_array_equal(lt.vstack([[1, 2], [3, 4]]), np.vstack([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(lt.hstack([np.ones(2), np.zeros(3)]),
                                  np.hstack([np.ones(2), np.zeros(3)]))
    assert lt.zeros(2, lt.int8).dtype == np.int8 and lt.zeros(2, "float").dtype == np.float64


def test_reductions_take_numpys_argument_order():
    a = (np.arange(12, dtype=np.int8) * 20).reshape(3, 4)
    got = lt.sum(a, 0, np.float64)  # sum(a, axis, dtype, out, keepdims)
    assert got.dtype == np.float64 and got.shape == (4,)
    assert lt.min(a, 0, None, True).shape == (1, 4)
    t = lt.tensor(a)
    assert t.sum(dtype=np.int8).item() == a.sum(dtype=np.int8)  # wraps in int8, as NumPy
    assert t.prod(dtype=np.int32).dtype == np.int32
    assert lt.cumsum(a.astype(np.uint8), dtype=np.uint8).dtype == np.uint8
    out = np.zeros(4)
    assert lt.mean(a, 0, None, out) is out
    np.testing.assert_allclose(out, a.mean(0))
    tf = lt.tensor(a.astype(np.float64))
    for fn in (np.std, np.var, np.mean, np.sum, np.max, np.argmax, np.all, np.any):
        np.testing.assert_allclose(np.asarray(fn(tf).numpy()), fn(a.astype(np.float64)),
                                   err_msg=fn.__name__)
    np.testing.assert_allclose(np.std(tf, axis=1, ddof=1).numpy(),
                               np.std(a.astype(np.float64), axis=1, ddof=1))


def test_reshape_copies_when_no_view_can():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = lt.tensor(a)
    np.testing.assert_array_equal(t[:, ::2, ::-1].reshape(-1).numpy(),
                                  a[:, ::2, ::-1].reshape(-1))
    with pytest.raises(lt.NotViewableError):
        t.T.view(24)


def test_operators_stay_numpys_for_every_dtype():
    h = np.array([2, 3], np.float16)
    np.testing.assert_array_equal(h ** lt.tensor(np.array([1.0, 3.0], np.float16)), h ** [1, 3])
    t = lt.tensor(np.array([5, 6], np.int8))
    t &= lt.tensor(np.array([3, 3], np.int32))  # same_kind into int8, as NumPy
    assert t.tolist() == [1, 2] and t.dtype == np.int8
    f = lt.tensor(np.array([7.0, 8.0], np.float16))
    f %= np.array([4.0, 5.0], np.float16)
    assert f.tolist() == [3.0, 3.0]
    assert (2 ** lt.tensor(np.ones(2), dtype="bfloat16")).dtype == "bfloat16"


def test_round_clip_matmul_and_scalar_edges_as_numpy():
    a = np.array([1.2345, -2.5551, 0.125, 3.0])
    np.testing.assert_allclose(lt.round(a, 2), np.round(a, 2))
    np.testing.assert_allclose(lt.tensor(a).round(1).numpy(), np.round(a, 1))
    np.testing.assert_array_equal(lt.clip(np.arange(5), max=2), np.clip(np.arange(5), None, 2))
    np.testing.assert_array_equal(lt.clip(np.arange(5), min=3), np.clip(np.arange(5), 3, None))
    x = np.arange(4.0).reshape(2, 2)
    want = x @ x
    assert lt.matmul(x, x, out=x) is x and np.array_equal(x, want)  # NumPy buffers the overlap
    u = np.array([1, 0, 5], np.uint8)
    np.testing.assert_array_equal(lt.logical_and(u, -3), [True, False, True])
    assert lt.arctan2(u, -3).dtype == np.float16 and lt.hypot(u, 300).dtype == np.float16


def test_every_public_function_has_a_docstring():
    import inspect
    missing = [n for n in lt.__all__ if callable(getattr(lt, n)) and
               not (getattr(lt, n).__doc__ or "").strip()]
    assert missing == []
    methods = [n for n in dir(lt.Tensor) if not n.startswith("_") and
               callable(getattr(lt.Tensor, n)) and not inspect.isclass(getattr(lt.Tensor, n))
               and not (getattr(lt.Tensor, n).__doc__ or "").strip()]
    assert set(methods) <= {"requires_grad_", "to_device"}, methods
    for cls in (lt.optim.SGD, lt.optim.Adam, lt.optim.AdamW):
        assert cls.__doc__


def test_in_place_sort_matmul_and_axis_errors():
    a = np.array([[3.0, 1.0, np.nan, 2.0], [0.0, 5.0, 1.0, 1.0]])
    t = lt.tensor(a.copy())
    assert t.sort() is None
    b = a.copy()
    b.sort()
    np.testing.assert_array_equal(t.numpy(), b)
    m = lt.tensor(np.arange(4.0).reshape(2, 2))
    m @= m
    assert m.tolist() == [[2.0, 3.0], [6.0, 11.0]]
    # an axis out of range is a ValueError too, as NumPy's AxisError
    with pytest.raises(ValueError):
        lt.sum(np.ones(3), axis=5)
    with pytest.raises(IndexError):
        lt.sum(np.ones(3), axis=5)


def test_arange_stop_keyword_and_take_along_last_axis():
    assert lt.arange(stop=4).tolist() == [0, 1, 2, 3]
    a, i = np.array([[3, 1], [2, 4]]), np.array([[1, 0], [0, 1]])
    np.testing.assert_array_equal(lt.take_along_axis(a, i), np.take_along_axis(a, i, axis=-1))
    with pytest.raises(TypeError):
        lt.arange()

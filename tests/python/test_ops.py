# SPDX-License-Identifier: MIT
"""Elementwise operations, reductions and permutations against NumPy."""
import numpy as np
import pytest

import libtensor as lt
from conftest import LAYOUTS, assert_close, random_array, skip_unless_supported

BINARY = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
          ("divide", np.divide), ("minimum", np.minimum), ("maximum", np.maximum)]
UNARY = [("negative", np.negative), ("abs", np.abs), ("exp", np.exp), ("sin", np.sin),
         ("cos", np.cos), ("tanh", np.tanh), ("square", np.square),
         ("reciprocal", np.reciprocal), ("relu", lambda x: np.maximum(x, 0)),
         ("sigmoid", lambda x: 1 / (1 + np.exp(-x)))]
POSITIVE_UNARY = [("sqrt", np.sqrt), ("log", np.log)]
BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)),
                    ((0, 3), (1, 3)), ((1,), ())]


@pytest.mark.parametrize("name,ref", BINARY)
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary(device, rng, name, ref, shapes, dtype):
    skip_unless_supported(device, dtype)
    layouts = rng.choice(LAYOUTS, 2)
    a = random_array(rng, shapes[0], dtype, layouts[0])
    b = random_array(rng, shapes[1], dtype, layouts[1])
    got = getattr(lt, name)(lt.tensor(a, device=device), lt.tensor(b, device=device))
    assert isinstance(got, lt.Tensor) and got.device.startswith(device)
    assert got.dtype == np.result_type(a, b)
    assert_close(got.numpy(), ref(a.astype(np.float64), b.astype(np.float64)), dtype)


def test_binary_numpy_in_numpy_out(rng):
    a = random_array(rng, (4, 5), np.float32, "transposed")
    b = random_array(rng, (5,), np.float64)
    got = lt.add(a, b)
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    assert_close(got, a + b)
    got = lt.power(np.abs(a), 1.5)
    assert got.dtype == np.float32
    assert_close(got, np.abs(a).astype(np.float64) ** 1.5, np.float32)
    t = lt.tensor(a)
    assert_close((t * 2.0 - 1.0).numpy(), a * 2.0 - 1.0, np.float32)
    assert_close((1.0 / t).numpy(), 1.0 / a, np.float32)


def test_binary_shape_mismatch():
    with pytest.raises(lt.ShapeMismatchError):
        lt.add(np.ones((3, 4)), np.ones((5,)))


@pytest.mark.parametrize("name,ref", UNARY + POSITIVE_UNARY)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary(device, rng, name, ref, layout, dtype):
    skip_unless_supported(device, dtype)
    a = random_array(rng, (3, 5), dtype, layout)
    if (name, ref) in POSITIVE_UNARY:
        a = np.abs(a)
    got = getattr(lt, name)(lt.tensor(a, device=device)).numpy()
    assert got.dtype == dtype
    assert_close(got, ref(a.astype(np.float64)), dtype)


REDUCTIONS = [("sum", np.sum), ("prod", np.prod), ("min", np.min), ("max", np.max),
              ("mean", np.mean)]
AXES = [None, 0, 1, -1, (0, 2), (0, 1, 2), ()]


@pytest.mark.parametrize("name,ref", REDUCTIONS)
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce(device, rng, name, ref, axis, keepdims):
    skip_unless_supported(device, np.float64)
    layout = rng.choice(LAYOUTS)
    a = random_array(rng, (3, 4, 5), np.float64, layout)
    got = getattr(lt, name)(lt.tensor(a, device=device), axis=axis, keepdims=keepdims).numpy()
    want = ref(a, axis=axis, keepdims=keepdims)
    assert_close(got, want, np.float64, n=a.size)


def test_reduce_numpy_scalar_and_f32(rng):
    a = random_array(rng, (7, 9), np.float32, "negative")
    got = lt.sum(a)
    assert np.ndim(got) == 0
    assert_close(got, a.astype(np.float64).sum(), np.float32, n=a.size)
    assert_close(lt.mean(a, axis=0), a.astype(np.float64).mean(axis=0), np.float32, n=7)


def test_reduce_empty(device):
    a = np.empty((0, 3))
    t = lt.tensor(a, device=device)
    np.testing.assert_array_equal(lt.sum(t, axis=0).numpy(), np.zeros(3))
    np.testing.assert_array_equal(lt.prod(t, axis=0).numpy(), np.ones(3))
    with pytest.raises(ValueError, match="no identity"):  # as NumPy; the C call gives -inf
        lt.max(t, axis=0)


def test_reduce_bad_axis():
    with pytest.raises(IndexError):
        lt.sum(np.ones((2, 3)), axis=2)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_argmin(device, rng, axis, keepdims):
    a = random_array(rng, (4, 6), np.float32, "transposed")
    t = lt.tensor(a, device=device)
    for name, ref in (("argmax", np.argmax), ("argmin", np.argmin)):
        got = getattr(lt, name)(t, axis=axis, keepdims=keepdims).numpy()
        want = ref(a, axis=axis, keepdims=keepdims)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("axes", [(0, 1, 2), (2, 1, 0), (1, 2, 0), None], ids=str)
def test_permute(device, rng, layout, axes):
    a = random_array(rng, (3, 4, 5), np.float32, layout)
    got = lt.permute(lt.tensor(a, device=device), axes)
    assert got.is_contiguous
    np.testing.assert_array_equal(got.numpy(), np.transpose(a, axes))
    np.testing.assert_array_equal(lt.permute(a, axes), np.transpose(a, axes))


def test_contiguous_converts(device, rng):
    a = random_array(rng, (3, 4), np.float64, "negative")
    t = lt.tensor(a, device=device).contiguous("float32")
    assert t.is_contiguous and t.dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), a.astype(np.float32))


def test_nan_propagates_like_numpy(device, rng):
    a = random_array(rng, (4, 5), np.float32)
    b = random_array(rng, (4, 5), np.float32)
    a[1, 2] = np.nan
    b[3, 0] = np.nan
    ta, tb = lt.tensor(a, device=device), lt.tensor(b, device=device)
    np.testing.assert_array_equal(lt.minimum(ta, tb).numpy(), np.minimum(a, b))
    np.testing.assert_array_equal(lt.maximum(ta, tb).numpy(), np.maximum(a, b))
    np.testing.assert_array_equal(lt.max(ta, axis=1).numpy(), np.max(a, axis=1))
    np.testing.assert_array_equal(lt.min(ta, axis=0).numpy(), np.min(a, axis=0))


def test_bfloat16_operations(device, rng):
    a = random_array(rng, (3, 8), np.float32)
    b = random_array(rng, (8,), np.float32)
    ta, tb = lt.tensor(a, "bfloat16", device), lt.tensor(b, "bfloat16", device)
    a16, b16 = ta.numpy().astype(np.float64), tb.numpy().astype(np.float64)  # rounded inputs
    got = lt.multiply(ta, tb)
    assert got.dtype == "bfloat16"
    np.testing.assert_allclose(got.numpy(), a16 * b16, rtol=2 ** -7)
    np.testing.assert_allclose(lt.sum(ta, axis=1).numpy(), a16.sum(axis=1), rtol=2 ** -6,
                               atol=2 ** -6)


@pytest.mark.parametrize("name", ["min", "max", "amin", "amax"])
def test_extremum_of_nothing_is_refused_like_numpy(name):
    np_f, lt_f = getattr(np, name), getattr(lt, name)
    for shape, axis in (((0,), None), ((0,), 0), ((3, 0), 1), ((3, 0), None), ((0, 3), 0)):
        a = np.zeros(shape, np.float32)
        with pytest.raises(ValueError):
            np_f(a, axis=axis)
        with pytest.raises(ValueError, match="no identity"):
            lt_f(lt.tensor(a), axis=axis)
    # An empty result is fine for both.
    a = np.zeros((0, 3), np.float32)
    assert lt_f(lt.tensor(a), axis=1).numpy().shape == np_f(a, axis=1).shape == (0,)


@pytest.mark.parametrize("sa,sb", [((4,), (4,)), ((4,), (4, 3)), ((2, 4), (4,)), ((2, 4), (4, 3)),
                                   ((5, 2, 4), (4, 3)), ((1, 2, 4), (5, 4, 3)),
                                   ((5, 1, 2, 4), (3, 4, 2)), ((0, 2, 4), (4, 3))])
def test_matmul_follows_numpy(sa, sb):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    want = np.matmul(a, b)
    for x, y in ((lt.tensor(a), lt.tensor(b)), (lt.tensor(a), b), (a, lt.tensor(b))):
        got = x @ y
        got = got.numpy() if isinstance(got, lt.Tensor) else got
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lt.matmul(a, b), want, rtol=1e-12, atol=1e-12)


def test_matmul_refusals_follow_numpy():
    a = lt.tensor(np.ones((2, 3)))
    with pytest.raises(ValueError, match="core dimension"):
        a @ lt.tensor(np.ones((4, 2)))
    with pytest.raises(ValueError):
        a @ lt.tensor(np.float64(2.0))


def test_reflected_and_inplace_operators():
    a = np.array([1, 2, 3], np.int32)
    t = lt.tensor(a)
    np.testing.assert_array_equal((2 ** t).numpy(), 2 ** a)
    np.testing.assert_array_equal((1 << t).numpy(), 1 << a)
    np.testing.assert_array_equal((64 >> t).numpy(), 64 >> a)
    np.testing.assert_array_equal((+t).numpy(), a)
    for op in ("__ifloordiv__", "__imod__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
               "__irshift__"):
        b, u = a.copy(), lt.from_numpy(a.copy())
        storage = u
        getattr(b, op)(2)
        u = getattr(u, op)(2)
        assert u is storage
        np.testing.assert_array_equal(u.numpy(), b)

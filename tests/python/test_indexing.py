# SPDX-License-Identifier: MIT
"""Gather/scatter, masks, joining, creation and sorting against NumPy, on every device."""
import numpy as np
import pytest

import libtensor as lt
from conftest import DEVICES, LAYOUTS, SEED, random_array

DTYPES = [np.float32, np.float64, np.int64, np.int32, np.uint8, np.float16]
INDEX_DTYPES = [np.int64, np.int32, np.int16, np.int8]


def _on(device, a):
    return lt.tensor(a, device=device)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take(device, rng, layout, axis):
    # Every dtype meets several layouts and axes without the full product (CI time).
    dtype = DTYPES[(LAYOUTS.index(layout) + (axis or 0)) % len(DTYPES)]
    a = random_array(rng, (3, 4, 5), dtype, layout)
    n = a.size if axis is None else a.shape[axis]
    for k, shape in enumerate([(6,), (2, 3), ()]):
        idx = rng.integers(-n, n, size=shape).astype(INDEX_DTYPES[k + (axis or 0) % 2])
        got = lt.take(_on(device, a), idx, axis=axis)
        np.testing.assert_array_equal(got.numpy(), np.take(a, idx, axis=axis))
        assert got.dtype == a.dtype


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_take_along_axis(device, rng, layout, axis):
    a = random_array(rng, (3, 4, 5), np.float64, layout)
    shape = [3, 4, 5]
    shape[axis] = 7
    shape[(axis + 1) % 3] = 1  # broadcasts against a
    idx = rng.integers(-a.shape[axis], a.shape[axis], size=shape)
    got = lt.take_along_axis(_on(device, a), idx, axis)
    np.testing.assert_array_equal(got.numpy(), np.take_along_axis(a, idx, axis))


def test_numpy_in_numpy_out(rng):
    a = rng.standard_normal((4, 3))
    got = lt.take(a, [3, -4, 1], axis=0)
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, a[[3, -4, 1]])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("full", [False, True])
def test_scatter_add(device, rng, dtype, full):
    d = random_array(rng, (4, 5), dtype)
    src = random_array(rng, (9, 5), dtype, "transposed")
    idx = rng.integers(-4, 4, size=(9, 5) if full else (9,))
    t = _on(device, d.copy())
    lt.scatter_add(t, 0, idx, _on(device, src))
    want = d.copy()
    if full:
        cols = np.broadcast_to(np.arange(5), (9, 5))
        np.add.at(want, (idx % 4, cols), src)
    else:
        np.add.at(want, idx % 4, src)
    if dtype == np.int64:
        np.testing.assert_array_equal(t.numpy(), want)
    else:
        np.testing.assert_allclose(t.numpy(), want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("mask_rank", [1, 2, 3])
def test_mask(device, rng, mask_rank):
    a = random_array(rng, (4, 3, 2), np.float32, "negative")
    m = rng.random(a.shape[:mask_rank]) < 0.5
    got = _on(device, a)[m]
    np.testing.assert_array_equal(got.numpy(), a[m])
    tm = _on(device, m)
    assert tm.dtype == np.bool_
    np.testing.assert_array_equal(_on(device, a)[tm].numpy(), a[m])


def test_integer_array_index(device, rng):
    a = random_array(rng, (5, 3), np.float64, "stepped")
    idx = np.array([[4, -5], [0, 2]])
    np.testing.assert_array_equal(_on(device, a)[idx].numpy(), a[idx])
    np.testing.assert_array_equal(_on(device, a)[[1, 1, 0]].numpy(), a[[1, 1, 0]])


@pytest.mark.parametrize("layout", ["contiguous", "negative", "stepped", "transposed"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, "bfloat16"])
def test_setitem_mask_and_indices(device, rng, layout, dtype):
    # a[mask] = v and a[idx] = v write into a (every layout), as NumPy assigns; they were a
    # silent no-op (the write went into the copy that a[mask] returns).
    base = random_array(rng, (4, 3, 2), np.float32 if dtype == "bfloat16" else dtype, layout)
    want = base.copy()
    t = lt.tensor(base, device=device, dtype=dtype)
    want = t.numpy().astype(want.dtype)  # bfloat16 rounded base's values
    m1 = rng.random(4) < 0.5
    m1[0], m1[1] = True, False
    m2 = rng.random((4, 3)) < 0.5
    k2 = int(m2.sum())
    row = np.array([3, 4], want.dtype)
    per_element = (np.arange(k2 * 2).reshape(k2, 2) % 7).astype(want.dtype)
    idx = np.array([2, -1, 2])  # repeated: the last write wins, as in NumPy
    steps = [(m1, 5), (m2, row), (m2, per_element), (idx, np.array(6, want.dtype)),
             (m2 * 0 + 1 == 1, 2)]
    for key, value in steps:
        want[key] = value
        t[key] = value
        np.testing.assert_array_equal(t.numpy().astype(want.dtype), want)
    t[lt.tensor(m1, device=device)] = lt.tensor(np.array([1, 0], want.dtype), device=device)
    want[m1] = np.array([1, 0], want.dtype)
    np.testing.assert_array_equal(t.numpy().astype(want.dtype), want)
    # an empty mask may have 0 where the array has any extent (the array API): nothing selected
    empty = lt.tensor(np.zeros((0, 1)), device=device)
    assert empty[np.zeros((0, 0), bool)].shape == (0,)
    assert t[np.zeros((0, 3), bool)].shape == (0, 2)
    t[np.zeros((4, 0), bool)] = 9
    np.testing.assert_array_equal(t.numpy().astype(want.dtype), want)
    z = lt.tensor(np.array(0, np.uint8), device=device)
    z[np.array(True)] = 1
    assert z.numpy() == 1
    with pytest.raises(IndexError, match="mask has extent 2 on axis 0"):
        t[np.array([True, False])] = 1
    with pytest.raises(IndexError, match="out of bounds"):
        t[np.array([7])] = 1
    with pytest.raises(ValueError, match="assign|broadcast"):
        t[m1] = np.zeros((int(m1.sum()) + 1, 3, 2), want.dtype)
    np.testing.assert_array_equal(t.numpy().astype(want.dtype), want)  # failures write nothing


def test_index_errors(device, rng):
    a = _on(device, random_array(rng, (3, 4)))
    with pytest.raises(lt.OutOfRangeError, match=r"INDEX, axis 1.*index 4"):
        lt.take(a, [0, 4], axis=1)
    with pytest.raises(lt.OutOfRangeError, match=r"index -4"):
        a[[-4]]
    with pytest.raises(lt.ShapeMismatchError, match="mask has extent 5 on axis 1"):
        a[np.ones((3, 5), bool)]
    with pytest.raises(IndexError, match="mask has extent 5 on axis 1"):  # NumPy's class too
        a[np.ones((3, 5), bool)]
    with pytest.raises(IndexError):
        a[np.array([0.5])]
    with pytest.raises(lt.ShapeMismatchError, match="tensor 1 has extent 5 on axis 1"):
        lt.concatenate([a, _on(device, np.zeros((3, 5)))], axis=0)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_stack_split(device, rng, layout, axis):
    a = random_array(rng, (4, 6, 2), np.float32, layout)
    b = random_array(rng, (4, 6, 2), np.float32)
    ta, tb = _on(device, a), _on(device, b)
    np.testing.assert_array_equal(lt.concatenate([ta, tb], axis).numpy(),
                                  np.concatenate([a, b], axis))
    np.testing.assert_array_equal(lt.stack([ta, tb, ta], axis).numpy(), np.stack([a, b, a], axis))
    for spec in (2, [1, 3], [5, 1, 9]):
        if isinstance(spec, int) and a.shape[axis] % spec:
            continue
        parts = lt.split(ta, spec, axis)
        want = np.split(a, spec, axis)
        assert len(parts) == len(want)
        for p, w in zip(parts, want):
            np.testing.assert_array_equal(p.numpy(), w)
        np.testing.assert_array_equal(lt.concatenate(parts, axis).numpy(),
                                      np.concatenate(want, axis))
    with pytest.raises(ValueError):
        lt.split(ta, 5, 1)


def test_creation(device):
    for args in [(5,), (2, 11, 3), (0, 1, 0.1), (1.5, -2, -0.5), (3, 1)]:
        got = lt.arange(*args, device=device)
        want = np.arange(*args)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-15)
    for num in (0, 1, 7):
        for endpoint in (True, False):
            np.testing.assert_allclose(lt.linspace(-1, 2.5, num, endpoint, device=device).numpy(),
                                       np.linspace(-1, 2.5, num, endpoint), rtol=1e-15)
            # integer dtypes floor, as NumPy 2 (written out: NumPy 1 truncates)
            got = lt.linspace(-3.5, 2, num, endpoint, dtype="int16", device=device).numpy()
            want = np.floor(np.linspace(-3.5, 2, num, endpoint)).astype(np.int16)
            np.testing.assert_array_equal(got, want)
    for n, m, k in [(3, None, 0), (3, 5, 2), (4, 2, -1), (0, 3, 0), (3, 4, 2**70), (0, 0, 2**63),
                    (2, 3, -2**64), (3, 4, 4), (3, 4, -3)]:
        np.testing.assert_array_equal(lt.eye(n, m, k, "float64", device=device).numpy(),
                                      np.eye(n, m, k))
    t = lt.ones((2, 3), device=device)
    np.testing.assert_array_equal(t.numpy(), np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(lt.full_like(t, 7.5, "float64").numpy(), np.full((2, 3), 7.5))
    np.testing.assert_array_equal(lt.zeros_like(t).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(lt.ones_like(np.zeros(4, np.int64)), np.ones(4, np.int64))
    assert lt.empty_like(t).shape == (2, 3)
    with pytest.raises(lt.InvalidArgumentError):
        lt.arange(0, 1, 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_sort_argsort(device, rng, dtype, axis):
    layouts = ["contiguous", "transposed", "negative", "stepped"]
    layout = layouts[(DTYPES.index(dtype) + (axis or 0)) % 4]
    a = random_array(rng, (5, 60, 3), dtype, layout)
    a = np.round(a * 2).astype(dtype)  # many ties: stability matters
    if np.dtype(dtype).kind == "f":
        a[rng.random(a.shape) < 0.1] = np.nan
    ta = _on(device, a)
    np.testing.assert_array_equal(lt.sort(ta, axis).numpy(), np.sort(a, axis, kind="stable"))
    np.testing.assert_array_equal(lt.argsort(ta, axis).numpy(),
                                  np.argsort(a, axis, kind="stable"))


@pytest.mark.parametrize("largest", [True, False])
def test_topk(device, rng, largest):
    a = np.round(rng.standard_normal((6, 9)) * 3)
    a[1, 2] = np.nan
    v, i = lt.topk(_on(device, a), 4, axis=1, largest=largest)
    for r in range(a.shape[0]):
        row = a[r]
        # Reference: stable order by value, NaN as the greatest; largest reverses it.
        key = np.where(np.isnan(row), np.inf, row)
        nan_rank = np.isnan(row).astype(int)
        order = np.lexsort((np.arange(9), -key if largest else key,
                            -nan_rank if largest else nan_rank))
        np.testing.assert_array_equal(i.numpy()[r], order[:4])
        np.testing.assert_array_equal(v.numpy()[r], row[order[:4]])


def test_views_of_read_only_stay_read_only():
    a = np.arange(12.0).reshape(3, 4)
    a.setflags(write=False)
    t = lt.tensor(a)
    parts = lt.split(t, [2], 1)
    assert all(p.readonly for p in parts)
    joined = lt.concatenate(parts, 1)
    assert joined.shares_storage(t) and joined.readonly
    with pytest.raises(ValueError):
        joined[0, 0] = 5.0


@pytest.mark.parametrize("device", DEVICES)
def test_advanced_indexing_with_several_arrays(device):
    """Tuples with several index arrays, mixed with ints, slices, None and ..., as NumPy: the
    broadcast dims where the first array stood when the arrays are adjacent, else in front."""
    rng = np.random.default_rng(SEED)
    a = rng.standard_normal((4, 5, 6))
    t = lt.tensor(a, device=device)
    keys = [([0, 1], [1, 2]), (slice(1, None), [0, 2, 3]), ([0, 3], slice(None), [1, 5]),
            (Ellipsis, [0, -1]), (np.array([[0], [2]]), np.array([1, 3])), (1, [0, 4]),
            ([1, 2], 0, slice(None, None, -1)), (a[:, :, 0] > 0, 2), (None, [0, 1], [2, 3]),
            ([], []), (slice(None), np.array([True, False, True, False, True])),
            ([-1, -4], Ellipsis), (slice(None), [[0, 1], [2, 3]], slice(2, 4))]
    for k in keys:
        np.testing.assert_array_equal(t[k].numpy(), a[k], err_msg=str(k))
    np.testing.assert_array_equal(t[lt.tensor(np.array([3, 0])), [1, 1], [5, 0]].numpy(),
                                  a[[3, 0], [1, 1], [5, 0]])
    with pytest.raises(IndexError):
        t[[0, 9], [0, 0]]
    with pytest.raises(IndexError):
        t[[0, 1], [0, 1, 2]]
    b = a.copy()
    t[[0, 1], [2, 3]] = -1.0
    b[[0, 1], [2, 3]] = -1.0
    t[1:, [0, 4]] = 7.0
    b[1:, [0, 4]] = 7.0
    np.testing.assert_array_equal(t.numpy(), b)


def test_advanced_indexing_differentiates():
    a = np.arange(12.0).reshape(3, 4)
    x = lt.tensor(a, requires_grad=True)
    lt.sum(x[[0, 2, 2], [1, 3, 3]] * 2).backward()
    want = np.zeros_like(a)
    np.add.at(want, ([0, 2, 2], [1, 3, 3]), 2.0)
    np.testing.assert_array_equal(x.grad.numpy(), want)

# SPDX-License-Identifier: MIT
"""Exact integer and bool einsum, matmul and scans (issue 18) against NumPy, on every device:
exact equality (NumPy's integer einsum/matmul/cumsum wrap modulo 2^64), NumPy's result dtypes
(bool einsum gives bool, int32 with int64 gives int64, ...), with values near 2^62, 2^63 - 1,
INT64_MIN and the uint64 top, in several memory layouts; and NumPy's creation defaults."""
import numpy as np
import pytest

import libtensor as lt
from conftest import random_array

LAYOUTS = ("contiguous", "transposed", "stepped", "negative", "broadcast")

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 2), (2, 2, 3)]),
    ("i,i->", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    ("ij,jk->ik", [(24, 40), (40, 24)]),  # past the size where floats take GEMM
]

DTYPES = [(np.int64, np.int64), (np.uint64, np.uint64), (np.int32, np.int64),
          (np.uint32, np.int64), (np.uint8, np.int8), (np.bool_, np.bool_),
          (np.int16, np.bool_)]


def edge_values(rng, shape, dtype, layout):
    """Integers of dtype with its extremes and (for 64 bits) values near 2^62 mixed in."""
    base = random_array(rng, shape, np.int64, layout)  # only the layout is kept
    if np.dtype(dtype) == np.bool_:
        vals = rng.random(base.shape) < 0.5
    else:
        info = np.iinfo(dtype)
        vals = rng.integers(info.min, info.max, size=base.shape, dtype=dtype, endpoint=True)
        edges = [info.min, info.max, info.max - 1, 1, 3]
        if info.bits == 64:
            edges += [2 ** 62 + 1, 2 ** 62 - 3, 2 ** 53 + 1]
        flat = vals.reshape(-1)
        pick = rng.random(flat.shape) < 0.4
        flat[pick] = np.array(edges, dtype=object)[
            rng.integers(0, len(edges), size=int(pick.sum()))].astype(dtype)
    if layout == "broadcast":  # axis 0 with stride 0
        return np.broadcast_to(vals[:1], shape) if len(shape) and shape[0] else vals
    out = np.empty_like(base, dtype=dtype)
    out[...] = vals
    return out


def cases():
    for i, (expr, shapes) in enumerate(CASES):
        for j, dts in enumerate(DTYPES):
            yield pytest.param(expr, shapes, dts, LAYOUTS[(i + j) % len(LAYOUTS)], (i + j) % 4,
                               id=f"{expr}-{'x'.join(map(str, shapes))}-"
                                  f"{'-'.join(np.dtype(d).name for d in dts)}")


@pytest.mark.parametrize("expr,shapes,dts,layout,slot", list(cases()))
def test_einsum_exact(device, rng, expr, shapes, dts, layout, slot):
    if device != "cpu" and slot != 0:
        pytest.skip("OpenCL compiles a program per dtype combination: every fourth one runs")
    arrays = [edge_values(rng, s, dts[min(k, 1)], layout) for k, s in enumerate(shapes)]
    want = np.einsum(expr, *arrays)
    got = lt.einsum(expr, *[lt.tensor(a, device=device) for a in arrays]).numpy()
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


@pytest.mark.parametrize("dts", DTYPES[:5], ids=lambda d: "-".join(np.dtype(x).name for x in d))
def test_matmul_exact(device, rng, dts):
    a = edge_values(rng, (2, 5, 6), dts[0], "transposed")
    b = edge_values(rng, (6, 3), dts[1], "negative")
    got = (lt.tensor(a, device=device) @ lt.tensor(b, device=device)).numpy()
    want = a @ b
    assert got.dtype == want.dtype and np.array_equal(got, want)


def test_issue_examples(device):
    big = np.array([2 ** 62 + 1, -2 ** 63], np.int64)
    assert np.array_equal(lt.einsum("i->i", lt.tensor(big, device=device)).numpy(), big)
    m = np.array([[2 ** 62 + 1, 2 ** 62], [7, -1]], np.int64)
    got = lt.einsum("ij,jk->ik", lt.tensor(m, device=device), lt.tensor(m, device=device))
    assert np.array_equal(got.numpy(), m @ m)  # wraps, never saturates
    b = np.array([True, False, True])
    r = lt.einsum("i,i->", lt.tensor(b, device=device), lt.tensor(b, device=device)).numpy()
    assert r.dtype == np.bool_ and r == np.einsum("i,i->", b, b)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.uint8, np.bool_, np.int8])
@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_scans_exact(device, rng, dtype, fn):
    a = edge_values(rng, (3, 6), dtype, "stepped")
    for axis in (0, 1):
        want = getattr(np, fn)(a, axis=axis)
        got = getattr(lt, fn)(lt.tensor(a, device=device), axis).numpy()
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_creation_defaults_match_numpy():
    for name, args in (("zeros", ((2, 3),)), ("ones", ((2, 3),)), ("empty", ((2, 3),)),
                       ("eye", (3,))):
        assert getattr(lt, name)(*args).dtype == getattr(np, name)(*args).dtype, name
    for value in (3, 1.5, True):
        assert lt.full((2,), value).dtype == np.full((2,), value).dtype
    assert np.array_equal(lt.full((2,), 7).numpy(), np.full((2,), 7))


def test_full_exact_big_integers(device):
    for value, dtype in ((2 ** 62 + 1, None), (-2 ** 63, "int64"), (2 ** 64 - 1, "uint64")):
        got = lt.full((3,), value, dtype, device=device).numpy()
        want = np.full((3,), value, dtype)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def test_array_api_linalg_exact(device):
    xp = lt.array_api
    a = np.array([[2 ** 62 + 1, -3], [5, 2 ** 40]], np.int64)
    ta = lt.tensor(a, device=device)
    assert np.array_equal(np.asarray(xp.matmul(ta, ta)), a @ a)
    assert np.array_equal(np.asarray(xp.tensordot(ta, ta, axes=1)), np.tensordot(a, a, axes=1))
    m = np.array([[True, False], [False, False]])
    tm = lt.tensor(m, device=device)
    r = np.asarray(xp.matmul(tm, tm))
    assert r.dtype == np.bool_ and np.array_equal(r, np.matmul(m, m))


def test_arange_and_full_like_keep_integers_past_2_53():
    """lt_arange / lt_full_like take doubles: from Python, integers a double cannot hold go an
    exact way (arange(2**62, 2**62 + 5) was empty; full_like(t, 2**53 + 1) rounded)."""
    for args in [(2**62, 2**62 + 5), (2**53 + 1, 2**53 + 7, 2), (1, 2**60, 2**59 + 1),
                 (2**62, 2**62 - 3, -1)]:
        np.testing.assert_array_equal(lt.arange(*args).numpy(), np.arange(*args))
    np.testing.assert_array_equal(lt.arange(2**63, 2**63 + 3, dtype="uint64").numpy(),
                                  np.arange(2**63, 2**63 + 3, dtype=np.uint64))
    with pytest.raises(lt.OutOfRangeError):
        lt.arange(2**62, 2**62 + 5, dtype="int8")
    t = lt.tensor(np.zeros(2, np.int64))
    assert lt.full_like(t, 2**53 + 1).numpy().tolist() == [2**53 + 1] * 2
    assert lt.full_like(t, 2**63 - 1).numpy().tolist() == [2**63 - 1] * 2
    assert lt.full_like(np.zeros(2, np.uint64), 2**64 - 1).tolist() == [2**64 - 1] * 2


def test_python_ints_past_the_dtype_in_comparisons_and_division():
    """An int past the array's dtype compares as the infinity of its sign (exact: 2**63 beside
    int64 went through float64, where 2**63 - 1 == 2**63), true division takes it as NumPy 2
    does (int8 / 300 raised), and ints past int64 beside bool are NumPy's OverflowError."""
    t = lt.tensor(np.array([2**63 - 1, -5]))
    assert (t == 2**63).numpy().tolist() == [False, False]
    assert (t < 2**63).numpy().tolist() == [True, True]
    assert (t != 2**80).numpy().tolist() == [True, True]
    assert (t > -2**70).numpy().tolist() == [True, True]
    u = lt.tensor(np.array([2**64 - 1], np.uint64))
    assert (u < 2**64).numpy().tolist() == [True] and (u == -1).numpy().tolist() == [False]
    a = lt.tensor(np.array([1, 2], np.int8))
    np.testing.assert_allclose((a / 300).numpy(), [1 / 300, 2 / 300])
    np.testing.assert_allclose((lt.tensor(np.array([1, 2], np.uint8)) / -1).numpy(), [-1, -2])
    with pytest.raises(OverflowError):
        lt.tensor(np.array([True])) + 2**63
    with pytest.raises(OverflowError):
        a + 300

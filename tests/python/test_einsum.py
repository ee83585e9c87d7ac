# SPDX-License-Identifier: MIT
"""einsum against numpy.einsum on random expressions, operand counts and layouts; plans."""
import string

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import libtensor as lt
from conftest import (DEVICES, LAYOUTS, SEED, assert_close, random_array,
                      skip_unless_supported)


def random_expression(rng, max_operands=4, max_rank=4, ellipsis=True):
    """A random einsum: expression, operand shapes, and the number of terms each output sums.
    Labels repeat within and across operands; output implicit or explicit; maybe ellipsis."""
    n_ops = int(rng.integers(1, max_operands + 1))
    labels = string.ascii_letters[:int(rng.integers(1, 7))]
    extent = {c: int(rng.choice([1, 2, 3, 4, 5])) for c in labels}
    if rng.random() < 0.05:
        extent[labels[0]] = 0
    use_ellipsis = ellipsis and rng.random() < 0.3
    ell_shape = tuple(int(x) for x in rng.integers(1, 4, size=int(rng.integers(0, 3))))
    terms, shapes = [], []
    for _ in range(n_ops):
        rank = int(rng.integers(0, max_rank + 1))
        term = "".join(rng.choice(list(labels), size=rank))
        shape = [extent[c] for c in term]
        if use_ellipsis and rng.random() < 0.7:
            k = int(rng.integers(0, len(ell_shape) + 1))  # broadcast: fewer leading axes
            ell = ell_shape[len(ell_shape) - k:]
            if k and rng.random() < 0.3:
                ell = (1,) + ell[1:]
            at = int(rng.integers(0, len(term) + 1))
            term = term[:at] + "..." + term[at:]
            shape = shape[:at] + list(ell) + shape[at:]
        terms.append(term)
        shapes.append(tuple(shape))
    used = sorted(set("".join(terms).replace(".", "")))
    if rng.random() < 0.3:
        expr = ",".join(terms)  # implicit output
    else:
        out = [c for c in used if rng.random() < 0.5]
        rng.shuffle(out)
        out = "".join(out)
        if any("..." in t for t in terms):
            at = int(rng.integers(0, len(out) + 1))
            out = out[:at] + "..." + out[at:]
        expr = ",".join(terms) + "->" + out
    n_terms = int(np.prod([extent[c] for c in used])) if used else 1
    return expr, shapes, n_terms


def check_einsum(rng, expr, shapes, n_terms, device, dtype=np.float64, optimize="auto"):
    skip_unless_supported(device, dtype)
    arrays = [random_array(rng, s, dtype, rng.choice(LAYOUTS)) for s in shapes]
    want = np.einsum(expr, *[a.astype(np.float64) for a in arrays])
    got = lt.einsum(expr, *arrays, device=device, optimize=optimize)
    assert isinstance(got, (np.ndarray, np.generic)) and np.shape(got) == np.shape(want)
    assert got.dtype == np.result_type(*arrays), expr
    assert_close(got, want, dtype, n=n_terms)


@pytest.mark.parametrize("case", range(120))
def test_random_expressions(device, case):
    rng = np.random.default_rng([SEED, case])
    expr, shapes, n_terms = random_expression(rng)
    dtype = [np.float64, np.float32][case % 2]
    optimize = ["auto", "greedy", "optimal", "none"][case % 4]
    check_einsum(rng, expr, shapes, n_terms, device, dtype, optimize)


@pytest.mark.parametrize("n_ops", [6, 8, 12])
def test_many_operands(device, rng, n_ops):
    # A chain with side legs: a matrix-product state contracted to a scalar and a vector.
    labels = string.ascii_letters
    terms = [labels[i] + labels[i + 1] for i in range(n_ops)]
    shapes = [(int(rng.integers(2, 5)),) for _ in range(n_ops + 1)]
    shapes = [(shapes[i][0], shapes[i + 1][0]) for i in range(n_ops)]
    for out in ("", labels[0] + labels[n_ops]):
        expr = ",".join(terms) + "->" + out
        check_einsum(rng, expr, shapes, 5 ** n_ops, device, np.float64)


NUMPY_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("i,i", [(5,), (5,)]), ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    (",ij", [(), (2, 3)]), ("ij,", [(2, 3), ()]), ("iij->ji", [(3, 3, 2)]),
    ("abcd,dbe->aec", [(2, 3, 4, 5), (5, 3, 2)]), ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5),
                                                                      (5, 2)]),
    ("i...,i...->...", [(3, 2, 2), (3, 1, 2)]), ("...", [(2, 3)]), ("", [()]),
    ("ijk,ijk->", [(0, 2, 3), (0, 2, 3)]), ("ij->ji", [(1, 1)]),
]


@pytest.mark.parametrize("expr,shapes", NUMPY_CASES, ids=[c[0] or "scalar" for c in NUMPY_CASES])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_numpy_cases(device, rng, expr, shapes, dtype):
    check_einsum(rng, expr, shapes, 60, device, dtype)


def test_integer_inputs_stay_integer(rng):
    a = rng.integers(-5, 5, size=(3, 4))
    b = rng.integers(-5, 5, size=(4,))
    got = lt.einsum("ij,j->i", a, b)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, np.einsum("ij,j->i", a, b))


def test_tensor_in_tensor_out(device, rng):
    a = random_array(rng, (3, 4))
    t = lt.tensor(a, device=device)
    got = lt.einsum("ij->ji", t)
    assert isinstance(got, lt.Tensor) and got.device.startswith(device)
    np.testing.assert_array_equal(got.numpy(), a.T)
    assert_close((t @ t.T).numpy(), a @ a.T, np.float64, n=4)


@pytest.mark.parametrize("out_layout", ["contiguous", "transposed", "stepped"])
def test_out_argument(device, rng, out_layout):
    a = random_array(rng, (3, 4))
    b = random_array(rng, (4, 5), layout="negative")
    out = random_array(rng, (3, 5), layout=out_layout)
    got = lt.einsum("ij,jk->ik", a, b, out=out, device=device)
    assert got is out
    assert_close(out, a @ b, np.float64, n=4)
    out32 = np.full((3, 5), np.nan, np.float32)
    lt.einsum("ij,jk->ik", a, b, out=out32, device=device)
    assert_close(out32, a @ b, np.float32, n=4)


def test_plan_reused(device, rng):
    shapes = [(4, 3, 5), (4, 5, 2), (2, 6)]
    layouts = ["transposed", "negative", "stepped"]
    first = [random_array(rng, s, np.float32, l) for s, l in zip(shapes, layouts)]
    plan = lt.plan_einsum("bij,bjk,kl->bil", *first, device=device)
    assert "flop" in plan.describe().lower()
    assert plan.workspace_size >= 0
    for _ in range(5):
        arrays = [random_array(rng, s, np.float32, l) for s, l in zip(shapes, layouts)]
        want = np.einsum("bij,bjk,kl->bil", *[a.astype(np.float64) for a in arrays])
        assert_close(plan(*arrays), want, np.float32, n=10)
        out = np.full((4, 3, 6), np.nan, np.float32)
        assert plan(*arrays, out=out) is out
        assert_close(out, want, np.float32, n=10)
        prev = out.copy()
        plan(*arrays, out=out, alpha=2.0, beta=-1.0)
        assert_close(out, 2 * want - prev, np.float32, n=10)


def test_einsum_path_text(rng):
    arrays = [random_array(rng, s) for s in [(8, 2), (2, 8), (8, 2)]]
    path, text = lt.einsum_path("ij,jk,kl->il", *arrays, optimize="optimal")
    assert path[0] == "einsum_path" and len(path) == 3
    assert isinstance(text, str) and text.strip()
    assert "flop" in text.lower()


@settings(deadline=None, max_examples=40, derandomize=True, database=None)
@given(seed=st.integers(0, 2 ** 31), device=st.sampled_from(DEVICES))
def test_random_expressions_property(seed, device):
    rng = np.random.default_rng(seed)
    expr, shapes, n_terms = random_expression(rng, max_operands=5, max_rank=3)
    check_einsum(rng, expr, shapes, n_terms, device)


def test_output_dtype_option(rng):
    a, b = random_array(rng, (3, 4)), random_array(rng, (4, 2), np.float32)
    got = lt.einsum("ij,jk->ik", a, b, dtype="float32")
    assert got.dtype == np.float32
    assert_close(got, a @ b.astype(np.float64), np.float32, n=4)


def test_out_tensor_and_read_only(rng):
    a = random_array(rng, (3, 4))
    out = lt.zeros((4, 3), "float64")
    assert lt.einsum("ij->ji", a, out=out) is out
    np.testing.assert_array_equal(out.numpy(), a.T)
    frozen = np.zeros((4, 3))
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        lt.einsum("ij->ji", a, out=lt.tensor(frozen))


def test_threads_share_a_plan(rng):
    """One plan executed from several threads at once, plus one-shot einsums and wraps."""
    import threading
    a, b = random_array(rng, (6, 5), layout="transposed"), random_array(rng, (5, 4))
    plan = lt.plan_einsum("ij,jk->ik", a, b)
    errors = []

    def work(seed):
        local = np.random.default_rng(seed)
        for _ in range(100):
            x = local.uniform(-1, 1, (5, 6)).T  # the plan's layout: transposed
            y = local.uniform(-1, 1, (5, 4))
            try:
                assert_close(plan(x, y), x @ y, np.float64, n=5)
                assert_close(lt.einsum("ij,jk->ki", x, y), (x @ y).T, np.float64, n=5)
            except Exception as exc:  # reported on the main thread
                errors.append(exc)
                return

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@pytest.mark.parametrize("expr,shapes", [
    ("c,cd,b->bd", [(4,), (4, 1), (2,)]),  # an extent-1 output label kept through a pair step
    ("ddc,dacd,b->bd", [(1, 1, 4), (1, 3, 4, 1), (2,)]),
])
def test_extent_one_labels(device, rng, expr, shapes):
    """Minimal forms of random cases that failed on OpenCL only ("contraction: output mode 1
    appears in neither A nor B")."""
    check_einsum(rng, expr, shapes, 12, device)


@pytest.mark.parametrize("d1,d2", [("float32", "float64"), ("float32", "int32"), ("int32", "int64"),
                                   ("int8", "uint8"), ("float16", "float32"), ("bool", "int16"),
                                   ("bool", "float32")])
def test_mixed_dtype_result_is_numpys_promotion(d1, d2):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((3, 4)) * 3).astype(d1)
    b = (rng.standard_normal((4, 2)) * 3).astype(d2)
    for expr in ("ij,jk->ik", "ij,jk->k", "ij,jk"):
        want = np.einsum(expr, a.astype(np.float64), b.astype(np.float64))
        got = lt.einsum(expr, lt.tensor(a), lt.tensor(b))
        assert got.dtype == np.einsum(expr, a, b).dtype == np.result_type(a, b)
        tol = 1e-2 if "float16" in (d1, d2) else 1e-5
        np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("precision", ["fast", "f32"])
def test_low_precision_plans(rng, precision):
    """issue 21: bf16/f16 plans in either lowp mode match a float64 product of the same rounded
    inputs (f32 sums of k = 70 terms, one rounding to the output); a bad mode is refused."""
    a = rng.standard_normal((40, 70)).astype(np.float32)
    b = rng.standard_normal((70, 30)).astype(np.float32)
    for dtype, unit in (("bfloat16", 2.0 ** -8), ("float16", 2.0 ** -11)):
        ta, tb = lt.from_numpy(a, dtype=dtype), lt.from_numpy(b, dtype=dtype)
        ra = np.asarray(ta.numpy(), dtype=np.float64)
        rb = np.asarray(tb.numpy(), dtype=np.float64)
        plan = lt.plan_einsum("ij,jk->ik", ta, tb, precision=precision)
        got = np.asarray(plan(ta, tb).numpy(), dtype=np.float64)
        ref = ra @ rb
        tol = 72 * 2.0 ** -24 * (np.abs(ra) @ np.abs(rb)) + unit * np.abs(ref)
        assert np.all(np.abs(got - ref) <= tol), (dtype, precision)
    with pytest.raises(ValueError, match="precision"):
        lt.plan_einsum("ij,jk->ik", ta, tb, precision="half")


def test_out_casting_and_python_scalars():
    """out= follows NumPy's same_kind rule also where out= is written in place (an int64 result
    went into a uint8 out= wrapped, 900 as 132); Python scalars are arrays, as NumPy's einsum
    takes them (int64, float64), not weak scalars."""
    a, b = np.full((2, 3), 100), np.full((3, 2), 3)
    for out in (np.zeros((2, 2), np.uint8), np.zeros((2, 2), bool),
                lt.tensor(np.zeros((2, 2), np.uint16))):
        with pytest.raises(lt.DtypeError, match="same_kind"):
            lt.einsum("ij,jk->ik", a, b, out=out)
    out = np.zeros((2, 2))
    assert lt.einsum("ij,jk->ik", a, b, out=out) is out and (out == 900).all()
    i8 = np.ones(3, np.int8)
    assert lt.einsum(",i->i", 2, i8).dtype == np.int64
    assert lt.einsum(",i->i", 300, i8).dtype == np.int64
    assert lt.einsum(",i->i", 1.5, np.ones(2, np.float16)).dtype == np.float64

# SPDX-License-Identifier: MIT
"""einsum's other spellings, against NumPy: the sublist form (Ellipsis, implicit output, past 52
labels), einsum_path's (path, text), and explicit paths followed and validated with NumPy's
exception types."""
import itertools

import numpy as np
import pytest

import libtensor as lt
from conftest import assert_close, random_array

CASES = [  # (expression, shapes)
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("i...,i->...", [(3, 2, 2), (3,)]),
    ("abc,cd,bd->a", [(2, 3, 4), (4, 5), (3, 5)]),
    ("ij,jk,kl,lm->im", [(3, 4), (4, 5), (5, 6), (6, 2)]),
    ("ab,bc,cd,de,ea->", [(2, 3), (3, 4), (4, 2), (2, 3), (3, 2)]),
]


def _to_sublist(expr, arrays):
    """The same einsum in NumPy's sublist form."""
    code = {c: i for i, c in enumerate(sorted(set(expr) - set(",->.")))}

    def sub(s):
        out = []
        while s:
            if s.startswith("..."):
                out.append(Ellipsis)
                s = s[3:]
            else:
                out.append(code[s[0]])
                s = s[1:]
        return out
    lhs, arrow, rhs = expr.partition("->")
    args = []
    for a, s in zip(arrays, lhs.split(",")):
        args += [a, sub(s)]
    if arrow:
        args.append(sub(rhs))
    return args


@pytest.mark.parametrize("expr,shapes", CASES)
def test_sublist_form(rng, expr, shapes, device):
    arrays = [random_array(rng, s, layout="transposed") for s in shapes]
    args = _to_sublist(expr, arrays)
    want = np.einsum(*args)
    got = lt.einsum(*args, device=device)
    assert_close(got, want, n=64)
    assert_close(lt.einsum(*args, device=device), np.einsum(expr, *arrays), n=64)


def test_sublist_past_52_labels():
    ops = []
    vals = [np.linspace(0.5, 1.5, 2) + i / 100 for i in range(60)]
    for i, v in enumerate(vals):
        ops += [v, [100 + i]]  # labels beyond NumPy's [0, 52)
    got = lt.einsum(*ops, [100, 101])
    want = np.outer(vals[0], vals[1]) * np.prod([v.sum() for v in vals[2:]])
    assert_close(got, want, n=60)
    got_implicit = lt.einsum(*ops[:4])  # two labels, implicit output
    assert_close(got_implicit, np.outer(vals[0], vals[1]))


def test_sublist_errors():
    a = np.ones((2, 2))
    with pytest.raises(TypeError):
        lt.einsum(a, ["i", "j"])
    with pytest.raises(TypeError):  # as NumPy: the third argument is read as the output
        lt.einsum(a, [0, 1], a)


@pytest.mark.parametrize("optimize", ["greedy", "optimal", "auto", "partition"])
@pytest.mark.parametrize("expr,shapes", CASES[5:])
def test_einsum_path_is_numpy_shaped(rng, expr, shapes, optimize):
    arrays = [random_array(rng, s) for s in shapes]
    path, text = lt.einsum_path(expr, *arrays, optimize=optimize)
    assert path[0] == "einsum_path" and "flops" in text
    assert all(isinstance(p, tuple) for p in path[1:])
    want = np.einsum(expr, *arrays)
    # The path is valid for NumPy and for us, and gives the same result.
    assert_close(np.einsum(expr, *arrays, optimize=path), want, n=64)
    assert_close(lt.einsum(expr, *arrays, optimize=path), want, n=64)
    sub_path, _ = lt.einsum_path(*_to_sublist(expr, arrays), optimize=optimize)
    assert sub_path == path


def _all_paths(n):
    """Every pairwise path for n operands (NumPy's position convention)."""
    if n == 1:
        yield []
        return
    for pair in itertools.combinations(range(n), 2):
        for rest in _all_paths(n - 1):
            yield [pair] + rest


@pytest.mark.parametrize("expr,shapes", CASES[6:])
def test_every_explicit_path(rng, expr, shapes):
    arrays = [random_array(rng, s, layout="negative") for s in shapes]
    want = np.einsum(expr, *arrays)
    for k, steps in enumerate(_all_paths(len(arrays))):
        if k % 7:  # a spread of the orders, kept small
            continue
        path = ["einsum_path"] + steps
        assert_close(lt.einsum(expr, *arrays, optimize=path), want, n=64)
        assert lt.einsum_path(expr, *arrays, optimize=path)[0] == path
    # Steps naming more than two operands, and one operand alone, as NumPy allows.
    n = len(arrays)
    for steps in ([(0, 1, 2), tuple(range(n - 2))], [(0,), tuple(range(n))]):
        path = ["einsum_path"] + steps
        assert_close(np.einsum(expr, *arrays, optimize=path), want, n=64)
        assert_close(lt.einsum(expr, *arrays, optimize=path), want, n=64)


def test_explicit_path_writes_out(rng):
    arrays = [random_array(rng, s) for s in CASES[6][1]]
    out = np.full((3, 2), np.nan)
    path = ["einsum_path", (1, 2), (0, 2), (0, 1)]
    assert lt.einsum(CASES[6][0], *arrays, optimize=path, out=out) is out
    assert_close(out, np.einsum(CASES[6][0], *arrays), n=64)


@pytest.mark.parametrize("bad", [
    ["einsum_path", (0, 1)],                  # operands left over
    ["einsum_path", (0, 9), (0, 1), (0, 1)],  # position out of range
    ["einsum_path", (0, 1), (0, 1), (0, 1), (0, 1)],  # too many steps
])
def test_invalid_explicit_paths_raise_as_numpy(rng, bad):
    expr, shapes = CASES[6]
    arrays = [random_array(rng, s) for s in shapes]
    with pytest.raises(Exception) as np_exc:
        np.einsum(expr, *arrays, optimize=bad)
    with pytest.raises(np_exc.type):
        lt.einsum(expr, *arrays, optimize=bad)
    with pytest.raises(np_exc.type):
        lt.einsum_path(expr, *arrays, optimize=bad)

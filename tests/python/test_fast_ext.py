# SPDX-License-Identifier: MIT
"""The C extension libtensor._fast (issue 20 A) against the ctypes path and NumPy: identical
results, dtypes and exceptions over layouts and dtypes; lifetimes of wrapped arrays and
results; the plan caches; explicit einsum paths reaching the library's plan; LT_PY_NO_EXT.

The tests comparing the two paths skip (with a message) when the extension is not active,
as in a ctypes-only install or under LT_PY_NO_EXT=1 (ctest runs this file both ways)."""
import contextlib
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import libtensor as lt
from conftest import LAYOUTS, assert_close, random_array

EXT = lt._ext.FAST
OPS = sys.modules["libtensor.ops"]
EINSUM = sys.modules["libtensor.einsum"]
STATS = sys.modules["libtensor.stats"]
AUTOGRAD = sys.modules["libtensor.autograd"]
TENSOR = sys.modules["libtensor.tensor"]
needs_ext = pytest.mark.skipif(EXT is None, reason="libtensor._fast is not active (not built, "
                               "or LT_PY_NO_EXT is set): the ctypes path alone is tested")


@contextlib.contextmanager
def ctypes_only():
    """The package's Python (ctypes) paths, as without the extension."""
    saved = OPS._FAST, EINSUM._FAST, STATS._FAST, TENSOR.fast_wrap
    OPS._FAST = EINSUM._FAST = STATS._FAST = TENSOR.fast_wrap = None
    try:
        yield
    finally:
        OPS._FAST, EINSUM._FAST, STATS._FAST, TENSOR.fast_wrap = saved


@pytest.fixture
def no_tapes():
    """Earlier autograd tests leave gradient tapes behind, which send out= Tensors and plan calls
    on their contexts to the Python paths: unregistered from the extension for the test."""
    tapes = dict(getattr(AUTOGRAD, "_tapes", {}))
    for ctx in tapes:
        EXT.set_tape(ctx.handle, None)
    yield
    for ctx, tape in tapes.items():
        EXT.set_tape(ctx.handle, tape.handle)


def both(fn):
    """fn() through the extension and through ctypes: (result, result) or (exception, ...)."""
    out = []
    for ctx in (contextlib.nullcontext(), ctypes_only()):
        with ctx:
            try:
                out.append(fn())
            except Exception as exc:  # compared by the caller
                out.append(exc)
    return out


def assert_same(fast, slow):
    """Identical results (values bit for bit, dtype, type, shape) or identical exceptions."""
    if isinstance(slow, Exception):
        assert type(fast) is type(slow), (fast, slow)
        assert str(fast) == str(slow)
        return
    assert not isinstance(fast, Exception), fast
    assert type(fast) is type(slow)
    f = fast.numpy() if isinstance(fast, lt.Tensor) else np.asarray(fast)
    s = slow.numpy() if isinstance(slow, lt.Tensor) else np.asarray(slow)
    assert f.dtype == s.dtype and f.shape == s.shape
    np.testing.assert_array_equal(f, s)


def test_active_unless_disabled():
    if lt._ext.disabled():
        assert EXT is None and not lt._ext.active()
    elif EXT is None:
        pytest.skip("libtensor._fast was not built here (no python3-dev)")
    else:
        assert lt._ext.active()


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "power", "less", "equal"]
UNARY = ["negative", "sqrt", "exp", "abs", "isnan"]
DTYPES = [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8]


@needs_ext
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(5, 7), (1, 4), (0, 3), (), (2, 3, 4)])
def test_elementwise_same_as_ctypes_and_numpy(rng, layout, shape):
    for dtype in DTYPES:
        a = random_array(rng, shape, dtype, layout)
        b = random_array(rng, shape[-1:] if shape else shape, dtype, "contiguous")  # broadcast
        for name in BINARY:
            fast, slow = both(lambda: getattr(lt, name)(a, b))
            assert_same(fast, slow)
            if not isinstance(slow, Exception) and np.dtype(dtype).kind == "f" and \
                    dtype != np.float16 and name != "power":
                assert_close(fast, getattr(np, name)(a, b), dtype)
        for name in UNARY:
            fast, slow = both(lambda: getattr(lt, name)(a))
            assert_same(fast, slow)


REDUCE = ["sum", "prod", "min", "max", "mean"]


@needs_ext
@pytest.mark.parametrize("layout", LAYOUTS)
def test_reductions_same_as_ctypes(rng, layout):
    """lt.sum & co. and the softmax family over all axes or one (the extension's), and what it
    leaves to the Python path (axis tuples, axes out of range, min/max over nothing): the same
    values, dtypes, types and exceptions, for NumPy arrays and Tensors."""
    for dtype in (np.float32, np.float64, np.int8, np.uint16, np.int64, np.bool_):
        for shape in [(), (5,), (3, 4), (2, 0, 3), (4, 1, 3)]:
            a = random_array(rng, shape, dtype, layout)
            for x in (a, lt.tensor(a)):
                for name in REDUCE + ["softmax", "log_softmax", "logsumexp"]:
                    for axis in (None, 0, -1, 2, 7, (0,)):
                        for keepdims in (False, True):
                            kw = {} if "softmax" in name else {"keepdims": keepdims}
                            assert_same(*both(lambda: getattr(lt, name)(x, axis=axis, **kw)))


@needs_ext
def test_cached_plan_follows_values_and_layouts(rng):
    EXT.clear_plans()
    a, b = random_array(rng, (4, 6)), random_array(rng, (4, 6))
    assert_close(lt.add(a, b), a + b)
    assert EXT.cached_plans() == 1
    a[...] = 2.0  # same array, new values
    assert_close(lt.add(a, b), 2.0 + b)
    assert_close(lt.add(a.T, b.T), (a + b).T)  # another layout: another plan
    assert EXT.cached_plans() == 2
    for _ in range(3):
        lt.add(a, b)
    assert EXT.cached_plans() == 2
    with pytest.raises(lt.ShapeMismatchError):
        lt.add(a, b[:, :5])


@needs_ext
def test_out_and_errors_same_as_ctypes(rng):
    a, b = random_array(rng, (3, 4), np.float32), random_array(rng, (3, 4), np.float32)
    for out_of in (lambda: np.empty((3, 4), np.float32), lambda: np.empty((3, 4), np.float64),
                   lambda: np.empty((2, 3, 4), np.float32),  # broadcast into out=
                   lambda: np.empty((4, 3), np.float32).T,   # strided out=
                   lambda: lt.empty((3, 4), "float32")):
        fast_out, slow_out = out_of(), out_of()
        with ctypes_only():
            got_slow = lt.multiply(a, b, out=slow_out)
        got_fast = lt.multiply(a, b, out=fast_out)
        assert got_fast is fast_out and got_slow is slow_out
        assert_same(fast_out, slow_out)
        assert_close(np.asarray(fast_out), np.broadcast_to(a * b, fast_out.shape))
    frozen = np.empty((3, 4), np.float32)
    frozen.flags.writeable = False
    assert_same(*both(lambda: lt.add(a, b, out=frozen)))
    assert_same(*both(lambda: lt.add(a, b, out=[1, 2])))
    assert_same(*both(lambda: lt.add(a, b[:, :3])))                      # shapes
    assert_same(*both(lambda: lt.subtract(a > 0, b > 0)))                # bool - bool
    assert_same(*both(lambda: lt.bitwise_and(a, b)))                     # float bitwise
    assert_same(*both(lambda: lt.add(a, 1.5)))                           # a scalar
    assert_same(*both(lambda: lt.add(a.astype(">f4"), b)))               # byte order
    assert_same(*both(lambda: lt.add(np.array([1 + 2j]), np.array([1j]))))  # no such dtype


@needs_ext
def test_tensor_operands(rng, no_tapes):
    a, b = random_array(rng, (3, 5)), random_array(rng, (5,), layout="negative")
    ta, tb = lt.tensor(a), lt.tensor(b)
    for fn in (lambda: ta + tb, lambda: ta * b, lambda: lt.subtract(a, tb), lambda: lt.sqrt(ta),
               lambda: -ta, lambda: lt.maximum(ta, tb, out=lt.empty((3, 5), "float64"))):
        fast, slow = both(fn)
        assert isinstance(fast, lt.Tensor)
        assert_same(fast, slow)
    t = lt.tensor(a.copy())
    t += tb  # in place, into the tensor's own storage
    assert_close(t.numpy(), a + b)
    frozen = a.copy()
    frozen.flags.writeable = False
    assert_same(*both(lambda: lt.add(ta, tb, out=lt.tensor(frozen))))
    other = lt.Context("cpu")  # a second CPU context: never mixed silently
    to = lt.tensor(b, device=other)
    assert_same(*both(lambda: ta + to))
    other.close()


@needs_ext
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.uint8,
                                   np.int64, np.uint64, np.bool_])
def test_python_scalars_beside_tensors(rng, dtype, no_tapes):
    """A Python scalar beside a Tensor runs through the extension as a weak 0-d array: the same
    values and dtypes as the general path (the scalar's own dtype where the tensor's kind or
    range cannot hold it), with one cached plan per dtype pair, not a one-shot per call."""
    a = (rng.integers(1, 5, size=(3, 4))).astype(dtype)
    t = lt.tensor(a)
    for s in (0.5, 3, -1, 300, 2 ** 40, True, -2.5):
        for fn in (lambda: t + s, lambda: s * t, lambda: t - s, lambda: s / t, lambda: t < s,
                   lambda: lt.maximum(t, s), lambda: t // s if s else t):
            assert_same(*both(fn))
    before = lt._ext.FAST.cached_plans()
    for _ in range(3):
        t * 0.5
    assert lt._ext.FAST.cached_plans() <= before + 1


@contextlib.contextmanager
def counting_ad_new():
    """Counts the calls that reach autograd's Python recording constructor (the ctypes path)."""
    calls = []
    saved = {m: m._new for m in (OPS, EINSUM, STATS)}
    for m, fn in saved.items():
        m._new = lambda name, *a, _fn=fn, **k: (calls.append(name), _fn(name, *a, **k))[1]
    try:
        yield calls
    finally:
        for m, fn in saved.items():
            m._new = fn


def _graph(x, w, a, b):
    """A composition of the calls the extension serves: Tensors, NumPy arrays, Python scalars."""
    h = lt.einsum("ij,jk->ik", x, w)
    z = lt.tanh(h * a + 0.5) - lt.exp(-h) / 3.0
    rows = lt.logsumexp(z, axis=1) + lt.sum(lt.log_softmax(z, axis=0) * lt.softmax(z, axis=-1), 1)
    return lt.sum(lt.einsum("ik,k->i", z * z, b) + lt.mean(z, axis=1) + rows) * 0.25


@needs_ext
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative"])
def test_recorded_in_c_same_as_ctypes(rng, layout):
    """With a tape, the extension records elementwise ops and einsum through the lt_ad_* calls
    (the ctypes path's constructor is never reached), with the gradients the ctypes path gives
    (to rounding), and values that match finite differences."""
    xa, wa = random_array(rng, (4, 5), layout=layout), random_array(rng, (5, 3), layout=layout)
    a, b = random_array(rng, (4, 3)), random_array(rng, (3,), layout=layout)
    grads = []
    for path in (contextlib.nullcontext, ctypes_only):
        x, w = lt.tensor(xa, requires_grad=True), lt.tensor(wa, requires_grad=True)
        with path(), counting_ad_new() as calls:
            loss = _graph(x, w, a, b)
        if path is contextlib.nullcontext:
            assert calls == [], calls
        else:
            assert calls.count("lt_binary") >= 5 and calls.count("lt_einsum") == 2
            assert calls.count("lt_reduce") == 3 and calls.count("lt_logsumexp") == 1
            assert calls.count("lt_log_softmax") == calls.count("lt_softmax") == 1
        loss.backward()
        grads.append((float(loss.numpy()), x.grad.numpy(), w.grad.numpy()))
    # (not bit for bit: the extension hands the tape a contiguous copy of a NumPy operand
    # where ctypes wraps its strides, and an einsum may then sum in another order)
    for fast, slow in zip(grads[0], grads[1]):
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-14)

    def f(xv):
        with lt.no_grad():
            return float(lt.tensor(_graph(lt.tensor(xv), lt.tensor(wa), a, b)).numpy())
    eps, fd = 1e-6, np.zeros_like(xa)
    for idx in np.ndindex(*xa.shape):
        hi, lo = xa.copy(), xa.copy()
        hi[idx] += eps
        lo[idx] -= eps
        fd[idx] = (f(hi) - f(lo)) / (2 * eps)
    np.testing.assert_allclose(grads[0][1], fd, rtol=1e-5, atol=1e-7)


@needs_ext
def test_recorded_numpy_operand_is_a_private_copy(rng):
    """A NumPy operand the tape saves is copied: writing the array after the call does not
    change the gradient (as on the ctypes path)."""
    a = random_array(rng, (6,))
    expected = a.copy()
    x = lt.tensor(random_array(rng, (6,)), requires_grad=True)
    loss = lt.sum(x * a)
    a[:] = 7.0
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), expected)


@needs_ext
def test_no_grad_and_untracked_operands_take_the_plain_calls(rng):
    x = lt.tensor(random_array(rng, (3, 3)), requires_grad=True)
    plain = lt.tensor(random_array(rng, (3, 3)))
    with lt.no_grad():
        y = x * 2.0 + lt.einsum("ij,jk->ik", x, x)
    assert not y.requires_grad
    assert not (plain * plain).requires_grad  # a tape exists, nothing tracked: not recorded
    z = x * 2.0  # recording again after the scope
    assert z.requires_grad
    lt.sum(z).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 3), 2.0))
    with pytest.raises(lt.InvalidArgumentError):
        lt.sum(y).backward()  # y was made under no_grad: not tracked


@needs_ext
def test_lifetimes(rng):
    a = random_array(rng, (16, 16), np.float32)
    before = sys.getrefcount(a)
    for _ in range(50):
        lt.add(a, a)
        lt.einsum("ij,jk->ik", a, a)
    assert sys.getrefcount(a) <= before + 1  # the wrap cache's, at most
    lt.convert.clear_wrap_cache()
    assert sys.getrefcount(a) == before  # no reference kept by a call or a cached plan
    r = lt.multiply(a, 2.0 * np.ones_like(a))
    want = 2.0 * a
    del a
    gc.collect()
    assert_close(r, want)  # the result owns its storage (the library's tensor)
    assert r.flags.writeable and r.flags.aligned and r.base is not None
    ctx = lt.context()
    big = np.ones((300, 300), np.float32)
    lt.add(big, big), lt.einsum("ij->ji", big)  # their plans, cached (plans count as used)
    gc.collect()
    used = ctx_memory(ctx)
    for _ in range(20):
        lt.add(big, big)
        lt.einsum("ij->ji", big)
    gc.collect()
    # Every result's storage went back (destroyed handles stay in the library's bounded
    # quarantine for a while, which counts a little).
    assert ctx_memory(ctx) - used < big.nbytes


def ctx_memory(ctx):
    import ctypes  # noqa: E401 (a test helper)
    cur, peak = ctypes.c_int64(), ctypes.c_int64()
    lt.errors.check(lt._lib.fn("lt_context_memory")(ctx.handle, ctypes.byref(cur),
                                                     ctypes.byref(peak)))
    return cur.value


EXPRS = [("ij,jk->ik", [(4, 5), (5, 3)]), ("ij->ji", [(4, 5)]), ("ii->i", [(4, 4)]),
         ("ii", [(3, 3)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
         ("i,j->ij", [(3,), (4,)]), ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
         ("bij,bjk", [(2, 3, 4), (2, 4, 2)]), ("i,i", [(0,), (0,)]), (",->", [(), ()])]


@needs_ext
@pytest.mark.parametrize("layout", LAYOUTS)
def test_einsum_same_as_ctypes_and_numpy(rng, layout):
    for expr, shapes in EXPRS:
        for dtype in (np.float32, np.float64):
            arrays = [random_array(rng, s, dtype, layout) for s in shapes]
            fast, slow = both(lambda: lt.einsum(expr, *arrays))
            assert_same(fast, slow)
            assert_close(fast, np.einsum(expr, *arrays), dtype, n=30)
            out = np.empty_like(np.asarray(slow))
            assert lt.einsum(expr, *arrays, out=out) is out
            assert_close(out, np.einsum(expr, *arrays), dtype, n=30)
    ints = [random_array(rng, (3, 4), np.int32), random_array(rng, (4, 2), np.int32)]
    assert_same(*both(lambda: lt.einsum("ij,jk->ik", *ints)))  # the Python path's rounding
    a = random_array(rng, (3, 4))
    assert_same(*both(lambda: lt.einsum("ij,jk->ik", a, a)))   # extents differ
    assert_same(*both(lambda: lt.einsum("ij->k", a)))          # a label nowhere in the inputs
    assert_same(*both(lambda: lt.einsum("ij\0", a)))           # a NUL in the expression
    assert_same(*both(lambda: lt.einsum("ij->ji", a, optimize="greedy")))
    assert_same(*both(lambda: lt.einsum("ij->ji", a, optimize="best")))


@needs_ext
def test_plan_calls_same_as_ctypes(rng, no_tapes):
    a, b = random_array(rng, (5, 3), layout="transposed"), random_array(rng, (3, 4))
    plan = lt.plan_einsum("ij,jk->ik", a, b)
    want = a @ b
    fast, slow = both(lambda: plan(a, b))
    assert_same(fast, slow)
    assert_close(fast, want, n=3)
    for out_of in (lambda: np.empty((5, 4)), lambda: np.empty((4, 5)).T,
                   lambda: np.empty((5, 4), np.float32), lambda: lt.empty((5, 4), "float64")):
        o1, o2 = out_of(), out_of()
        assert plan(a, b, out=o1) is o1
        with ctypes_only():
            assert plan(a, b, out=o2) is o2
        assert_same(o1, o2)
    o = np.ones((5, 4))
    assert plan(a, b, out=o, alpha=2.0, beta=0.5) is o
    assert_close(o, 2.0 * want + 0.5, n=3)
    ta, tb = lt.tensor(a), lt.tensor(b)
    fast, slow = both(lambda: plan(ta, tb))
    assert isinstance(fast, lt.Tensor)
    assert_same(fast, slow)
    assert_same(*both(lambda: plan(a)))                   # operand count
    assert_same(*both(lambda: plan(b, a)))                # layouts
    assert_same(*both(lambda: plan(a, b, beta=1.0)))      # beta without out=
    assert_same(*both(lambda: plan(a.astype(np.float32), b)))


# ---- explicit paths (with and without the extension: einsum's front end is Python)

NETWORK = ("ab,bc,cd,de->ae", [(3, 4), (4, 5), (5, 6), (6, 2)])


def test_explicit_path_reaches_the_plan(rng):
    expr, shapes = NETWORK
    arrays = [random_array(rng, s) for s in shapes]
    want = np.einsum(expr, *arrays)
    for path in (["einsum_path", (2, 3), (1, 2), (0, 1)],
                 ["einsum_path", (0, 1), (0, 1), (0, 1)],
                 ["einsum_path", (1, 3), (0, 2), (0, 1)]):
        assert_close(lt.einsum(expr, *arrays, optimize=path), want, n=100)
        plan = lt.plan_einsum(expr, *arrays, optimize=path)
        assert plan_path(plan) == [tuple(sorted(p)) for p in path[1:]]
    # A step over three operands becomes pairs that leave the list as NumPy's.
    path = ["einsum_path", (0, 2, 3), (0, 1)]
    assert_close(lt.einsum(expr, *arrays, optimize=path), np.einsum(expr, *arrays,
                                                                     optimize=path), n=100)
    assert plan_path(lt.plan_einsum(expr, *arrays, optimize=path)) == [(0, 2), (1, 2), (0, 1)]
    big = lt.einsum(*[x for i, a in enumerate(arrays) for x in (a, [i, i + 1])], [0, 4],
                    optimize=["einsum_path", (0, 1), (0, 1), (0, 1)])
    assert_close(big, want, n=100)


def plan_path(plan):
    return EINSUM._plan_path(plan, plan.n_inputs)


@pytest.mark.parametrize("path", [["einsum_path", (0, 5)], ["einsum_path", (0, 1)],
                                  ["einsum_path", (0, 1), (0, 1), (0, 1), (0, 1)],
                                  ["einsum_path", ("a", 1), (0, 1), (0, 1)]])
def test_explicit_path_errors_as_numpy(rng, path):
    expr, shapes = NETWORK
    arrays = [random_array(rng, s) for s in shapes]
    with pytest.raises(Exception) as theirs:
        np.einsum(expr, *arrays, optimize=path)
    with pytest.raises(type(theirs.value)):
        lt.einsum(expr, *arrays, optimize=path)


def test_ctypes_only_in_a_subprocess():
    """LT_PY_NO_EXT=1: the package runs on ctypes alone, with the same answers."""
    code = ("import numpy as np, libtensor as lt\n"
            "assert not lt._ext.active()\n"
            "a = np.arange(12.0).reshape(3, 4)\n"
            "np.testing.assert_array_equal(lt.add(a, a), a + a)\n"
            "np.testing.assert_allclose(lt.einsum('ij,kj->ik', a, a), a @ a.T)\n"
            "print('ok')\n")
    env = dict(os.environ, LT_PY_NO_EXT="1")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


@needs_ext
def test_wrap_cache_follows_arrays(rng):
    lt.convert.clear_wrap_cache()
    a, b = random_array(rng, (4, 6)), random_array(rng, (4, 6))
    assert_close(lt.add(a, b), a + b)
    a[...] = 2.0  # same object, new values: no stale copy
    assert_close(lt.add(a, b), 2.0 + b)
    a.shape = (6, 4)  # same object, new shape: not the cached wrapper
    with pytest.raises(lt.ShapeMismatchError):
        lt.add(a, b)
    assert_close(lt.add(a, b.reshape(6, 4)), 2.0 + b.reshape(6, 4))
    out = np.empty((6, 4))
    for _ in range(2):  # out= through the cache too
        assert lt.multiply(a, 3.0 * np.ones((6, 4)), out=out) is out
        assert_close(out, np.full((6, 4), 6.0))
    # Many arrays share few slots: an operand never evicts another of the same call.
    arrays = [random_array(rng, (3,)) for _ in range(300)]
    for x, y in zip(arrays, arrays[1:]):
        assert_close(lt.subtract(x, y), x - y)
    lt.convert.clear_wrap_cache()


@needs_ext
def test_threads_share_the_caches(rng):
    import threading
    arrays = [random_array(rng, (5, 5)) for _ in range(200)]
    errors = []

    def work(k):
        try:
            for i in range(300):
                x, y = arrays[(7 * i + k) % 200], arrays[(11 * i + 3 * k) % 200]
                np.testing.assert_array_equal(lt.add(x, y), x + y)
                if i % 50 == 0:
                    gc.collect()
                    lt.convert.clear_wrap_cache()
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]


@needs_ext
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "negative", "broadcast"])
def test_einsum_tensor_operands(rng, layout, no_tapes):
    for expr, shapes in EXPRS[:8]:
        arrays = [random_array(rng, s, np.float32, layout) for s in shapes]
        tensors = [lt.tensor(a) for a in arrays]
        fast, slow = both(lambda: lt.einsum(expr, *tensors))
        assert isinstance(fast, lt.Tensor)
        assert_same(fast, slow)
        assert_close(fast.numpy(), np.einsum(expr, *arrays), np.float32, n=30)
        mixed = [tensors[0]] + arrays[1:]  # a Tensor among arrays: a Tensor result
        assert_same(*both(lambda: lt.einsum(expr, *mixed)))
        out = lt.empty(np.einsum(expr, *arrays).shape, "float32")
        assert lt.einsum(expr, *tensors, out=out) is out
        assert_close(out.numpy(), np.einsum(expr, *arrays), np.float32, n=30)
    a = lt.tensor(random_array(rng, (3, 4)))
    assert_same(*both(lambda: a @ a.T))
    assert_same(*both(lambda: a @ a))  # extents differ
    other = lt.Context("cpu")
    assert_same(*both(lambda: lt.einsum("ij,jk", a, lt.tensor(np.ones((4, 2)), device=other))))
    other.close()


@needs_ext
@pytest.mark.parametrize("layout", LAYOUTS)
def test_tensor_creation_same_as_ctypes(rng, layout):
    for dtype in DTYPES + [np.bool_]:
        arr = random_array(rng, (3, 4), dtype, layout)
        fast, slow = both(lambda: lt.tensor(arr))
        assert_same(fast, slow)
        assert fast.readonly == slow.readonly == (not arr.flags.writeable)
        assert fast.strides == slow.strides and fast.context is slow.context
        assert np.shares_memory(fast.numpy(), arr)  # zero-copy
    frozen = random_array(rng, (2, 2))
    frozen.flags.writeable = False
    t = lt.tensor(frozen)
    assert t.readonly and not t.numpy().flags.writeable
    with pytest.raises(ValueError):
        t += 1
    swapped = random_array(rng, (3,)).astype(">f8")  # converted: the general path
    assert_same(*both(lambda: lt.tensor(swapped)))
    del t
    gc.collect()
    held = lt.held_count()
    a = random_array(rng, (4,))
    t = lt.tensor(a)
    assert lt.held_count() == held + 1
    del a
    gc.collect()
    t[1] = 7.0
    assert t.numpy()[1] == 7.0  # the array lives on inside the tensor
    del t
    gc.collect()
    assert lt.held_count() == held


@needs_ext
def test_out_written_by_the_plan_and_overlaps(rng, no_tapes):
    a, b = random_array(rng, (6, 5)), random_array(rng, (5,))
    for _ in range(3):  # the first call makes the plan into out=, the next ones run it
        o = np.empty((6, 5))
        assert lt.multiply(a, b, out=o) is o
        np.testing.assert_array_equal(o, a * b)
    x = a.copy()
    for _ in range(3):  # exactly in place: one of the inputs
        lt.add(x, b, out=x)
    assert_close(x, a + 3 * b)
    for _ in range(3):  # out= overlapping an input partly: as NumPy, from the old values
        y, z = a.copy(), a.copy()
        lt.subtract(y[:-1], b, out=y[1:])
        np.subtract(z[:-1], b, out=z[1:])
        np.testing.assert_array_equal(y, z)
    t = lt.tensor(a.copy())
    for _ in range(3):
        t += lt.tensor(b)  # Tensor in place
    assert_close(t.numpy(), a + 3 * b)
    f32 = np.empty((6, 5), np.float32)  # another dtype: converted, as the ctypes path does
    fast, slow = both(lambda: lt.add(a, b, out=f32).copy())
    assert_same(fast, slow)

# SPDX-License-Identifier: MIT
"""Python autograd of the vocabulary ops (issue 19) against central finite differences in
float64, on every device: the issue-18 math ops, softmax & co, var/std, scans, take /
take_along_axis / Tensor.scatter_add, where, clip, concatenate / stack / split, a composition of
them, comparisons as masks; backward without retain_graph frees only the graph it walked; a
graph whose results Python collected is released."""
import gc

import numpy as np
import pytest

import libtensor as lt
from libtensor import _lib
from conftest import DEVICES, SEED


def _fd(value, arrays, k, h=1e-6):
    a = arrays[k]
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + h
        lp = value(*arrays)
        a[idx] = old - h
        lm = value(*arrays)
        a[idx] = old
        g[idx] = (lp - lm) / (2 * h)
    return g


IDX = np.array([[2, 0, -1], [1, 1, 0]])
ALONG = np.array([[2, 0, 1, 2], [0, 0, 2, 1]])

# name -> (function of tensors, input shapes, value range)
CASES = {
    "log1p": (lambda x: lt.log1p(x), [(3, 4)], (0.2, 2)),
    "expm1": (lambda x: lt.expm1(x), [(3, 4)], (-2, 2)),
    "erf": (lambda x: lt.erf(x), [(3, 4)], (-2, 2)),
    "gelu": (lambda x: lt.gelu(x), [(3, 4)], (-2, 2)),
    "silu": (lambda x: lt.silu(x), [(3, 4)], (-2, 2)),
    "softplus": (lambda x: lt.softplus(x), [(3, 4)], (-2, 2)),
    "rsqrt": (lambda x: lt.rsqrt(x), [(3, 4)], (0.3, 2)),
    "steps": (lambda x: lt.floor(x) + lt.ceil(x) * lt.sign(x) + lt.trunc(x) + lt.rint(x) + x,
              [(3, 4)], (-2, 2)),
    "arctan2": (lambda x, y: lt.arctan2(x, y), [(3, 4), (4,)], (-2, 2)),
    "hypot": (lambda x, y: lt.hypot(x, y), [(3, 4), (3, 1)], (-2, 2)),
    "fmod": (lambda x, y: lt.fmod(x, y), [(3, 4), (4,)], (0.7, 1.3)),
    "remainder": (lambda x, y: lt.remainder(x * 3, y), [(3, 4), (4,)], (0.7, 1.3)),
    "minimum_maximum": (lambda x, y: lt.minimum(x, y) * lt.maximum(x, y), [(3, 4), (4,)],
                        (-1, 1)),
    "softmax": (lambda x: lt.softmax(x, axis=1), [(3, 4)], (-1, 1)),
    "log_softmax": (lambda x: lt.log_softmax(x, axis=(0, 1)), [(3, 4)], (-1, 1)),
    "logsumexp": (lambda x: lt.logsumexp(x, axis=0, keepdims=True), [(3, 4)], (-1, 1)),
    "var": (lambda x: lt.var(x, axis=1, ddof=1), [(3, 4)], (-1, 1)),
    "std": (lambda x: lt.std(x, axis=None), [(3, 4)], (-1, 1)),
    "cumsum": (lambda x: lt.cumsum(x, axis=1), [(3, 4)], (-1, 1)),
    "cumprod": (lambda x: lt.cumprod(x, axis=0), [(3, 4)], (-1, 1)),
    "take": (lambda x: lt.take(x, IDX, axis=0), [(3, 4)], (-1, 1)),
    "take_along_axis": (lambda x: lt.take_along_axis(x, ALONG, axis=0), [(3, 4)], (-1, 1)),
    "scatter_add": (lambda x, s: x.scatter_add(0, ALONG, s), [(3, 4), (2, 4)], (-1, 1)),
    "where": (lambda x, y: lt.where(x > y, x * 2, y), [(3, 4), (4,)], (-1, 1)),
    "clip": (lambda x, lo, hi: lt.clip(x, lo, hi), [(3, 4), (3, 1), (4,)], (-1, 1)),
    "concatenate": (lambda x, y: lt.concatenate([y, x, y], axis=0), [(3, 4), (2, 4)], (-1, 1)),
    "stack": (lambda x, y: lt.stack([x, y * 2], axis=-1), [(3, 4), (3, 4)], (-1, 1)),
    "split": (lambda x: lt.concatenate(lt.split(x, [1, 3], axis=1)[::-1], axis=1), [(3, 4)],
              (-1, 1)),
    # >= 5 of the new ops in one composition
    "composition": (lambda x, y: lt.sum(lt.log_softmax(lt.gelu(lt.clip(x, -0.5, 0.6)) +
                                                       lt.take(lt.silu(y), [0, 0, 2], axis=0),
                                                       axis=1) *
                                        lt.cumsum(lt.softplus(x), axis=0), axis=0),
                    [(3, 4), (3, 4)], (-1, 1)),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_rule(device, name):
    f, shapes, (lo, hi) = CASES[name]
    rng = np.random.default_rng(SEED + len(name))
    arrays = [rng.uniform(lo, hi, s) for s in shapes]
    out_shape = np.asarray(f(*[lt.tensor(a) for a in arrays])).shape
    w = rng.uniform(-1, 1, out_shape)

    def value(*vals):
        with lt.no_grad():
            y = f(*[lt.tensor(v, device=device) for v in vals])
            return float(np.sum(np.asarray(y.to("cpu")) * w))

    ts = [lt.tensor(a, device=device, requires_grad=True) for a in arrays]
    lt.sum(f(*ts) * lt.tensor(w, device=device)).backward()
    for k, t in enumerate(ts):
        want = _fd(value, [a.copy() for a in arrays], k)
        assert t.grad is not None, f"{name}: input {k} got no gradient"
        got = np.asarray(t.grad.to("cpu"))
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale,
                                   err_msg=f"{name} input {k}")


def test_masks_stop_gradients():
    x = lt.tensor(np.array([-1.0, 0.5, 2.0]), requires_grad=True)
    lt.sum(x * (x > 0) + lt.where(lt.isnan(x), 0.0, x)).backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [1.0, 2.0, 2.0])
    assert not (x > 0).requires_grad and not lt.isfinite(x).requires_grad
    with pytest.raises(lt.LibtensorError):
        lt.sum((x > 0).astype("float64")).backward()  # nothing to differentiate
    with pytest.raises(lt.InvalidArgumentError, match="in place"):
        lt.scatter_add(x, 0, [0], lt.tensor(np.ones(1)))


def _saved(ctx):
    tape = lt.autograd._tapes[ctx]
    count = _lib.ctypes.c_int64()
    assert _lib.fn("lt_tape_saved_count")(tape.handle, _lib.ctypes.byref(count), None) == 0
    return count.value


def test_backward_frees_only_its_graph():
    x = lt.tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    a = lt.sum(lt.exp(x))  # graph A
    b = lt.sum(lt.sin(x))  # graph B
    b.backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.cos([0.5, -1.0, 2.0]))
    x.grad = None
    a.backward()  # A still has its history after B's backward
    np.testing.assert_allclose(np.asarray(x.grad), np.exp([0.5, -1.0, 2.0]))
    with pytest.raises(lt.LibtensorError):
        a.backward()  # A's graph was freed by its own backward
    # a graph whose results Python collected is released, with what it saved
    ctx = x.context
    gc.collect()
    before = _saved(ctx)
    for _ in range(40):
        lt.exp(lt.tanh(x))  # never backpropagated; collected at once
    gc.collect()
    c = lt.sum(lt.sin(x))
    c.backward()
    assert _saved(ctx) == before

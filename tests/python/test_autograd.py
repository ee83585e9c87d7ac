# SPDX-License-Identifier: MIT
"""Python autograd (PyTorch conventions) against central finite differences in float64 on random
compositions of >= 5 ops, on every device; the API's contract (grad = None, no_grad, detach,
retain_graph, in-place detection) and the optimisers against their formulas."""
import numpy as np
import pytest

import libtensor as lt
from conftest import DEVICES, SEED

# bounded or tame ops, so that finite differences stay accurate after 10 steps
UNARY = [lt.tanh, lt.sin, lt.cos, lt.sigmoid, lt.negative, lt.relu, lt.abs]


def _random_program(rng, n_ops):
    """A random composition of n_ops ops on inputs x [3, 4] and w [4, 3] ending in a scalar."""
    steps = []
    for _ in range(n_ops):
        kind = rng.integers(0, 6)
        if kind == 0:
            steps.append(("unary", UNARY[rng.integers(0, len(UNARY))]))
        elif kind == 1:
            steps.append(("mul_w", None))
        elif kind == 2:
            steps.append(("add_row", None))
        elif kind == 3:
            steps.append(("transpose", None))
        elif kind == 4:
            steps.append(("slice", None))
        else:
            steps.append(("reduce_keep", [lt.sum, lt.mean, lt.max][rng.integers(0, 3)]))
    return steps


def _run(steps, x, w):
    h = x
    for kind, f in steps:
        if kind == "unary":
            h = f(h)
        elif kind == "mul_w":
            h = lt.einsum("ij,jk->ik", h, w) if h.shape[-1] == 4 else h * 0.5
        elif kind == "add_row":
            h = h + lt.sum(w, axis=1)[: h.shape[-1]] if h.shape[-1] <= 4 else h
        elif kind == "transpose":
            h = h.T
        elif kind == "slice":
            h = h[::-1] if h.shape[0] > 1 else h
        else:
            h = f(h, axis=-1, keepdims=True) + h
    return lt.sum(h * h)


def _fd(f, arrays, k, h=1e-6):
    a = arrays[k]
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        old = a[idx]
        a[idx] = old + h
        lp = f(*arrays)
        a[idx] = old - h
        lm = f(*arrays)
        a[idx] = old
        g[idx] = (lp - lm) / (2 * h)
    return g


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("trial", range(8))
def test_random_compositions(device, trial):
    rng = np.random.default_rng(SEED + trial)
    steps = _random_program(rng, 5 + trial)
    xa, wa = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (4, 3))

    def value(xv, wv):
        with lt.no_grad():
            return float(np.asarray(_run(steps, lt.tensor(xv, device=device),
                                         lt.tensor(wv, device=device)).to("cpu")))

    x = lt.tensor(xa, device=device, requires_grad=True)
    w = lt.tensor(wa, device=device, requires_grad=True)
    loss = _run(steps, x, w)
    loss.backward()
    for k, t in enumerate((x, w)):
        want = _fd(value, [xa.copy(), wa.copy()], k)
        got = np.zeros_like(want) if t.grad is None else np.asarray(t.grad.to("cpu"))
        scale = max(1.0, float(np.abs(want).max()))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale,
                                   err_msg=f"steps {[s[0] for s in steps]} input {k}")


def test_contract():
    x = lt.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
    assert x.requires_grad and x.grad is None
    y = lt.sum(lt.log(x))
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(np.asarray(x.grad), 2 / np.arange(1.0, 7.0).reshape(2, 3))
    # zero-copy: two reads of .grad are views of the one gradient buffer
    assert np.shares_memory(np.asarray(x.grad), np.asarray(x.grad))
    x.grad = None
    assert x.grad is None
    with lt.no_grad():
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad and not x.detach().requires_grad
    with pytest.raises(lt.LibtensorError):
        (x * 2).backward()  # not a scalar and no gradient given
    z = lt.exp(x)  # saves its output
    s = lt.sum(z)
    with pytest.raises(lt.InvalidArgumentError, match="writes in place"):
        z[0, 0] = 5.0  # the tape cannot record a write: refused (PyTorch records it)
    with lt.no_grad():
        z[0, 0] = 5.0  # modified in place after it was saved
    with pytest.raises(lt.InvalidArgumentError, match="modified in place"):
        s.backward()
    # argmax's integer result is a constant (PyTorch): a loss of it alone is not tracked, and
    # x * argmax sends the argmax values to x
    assert not lt.argmax(x, axis=1).requires_grad and not (x > 0).requires_grad
    with pytest.raises(lt.InvalidArgumentError, match="not tracked"):
        lt.sum(lt.argmax(x, axis=1).astype("float64")).backward()
    w = lt.tensor(np.array([-1.0, 2.0, 3.0]), requires_grad=True)
    lt.sum(w * lt.argmax(w).astype("float64") + lt.signbit(w) * w).backward()
    np.testing.assert_array_equal(np.asarray(w.grad), [3.0, 2.0, 2.0])


def test_optimisers_match_formulas():
    rng = np.random.default_rng(SEED)
    p0 = rng.uniform(-1, 1, 5)
    for cls, kw in [(lt.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
                    (lt.optim.Adam, dict(lr=0.1)), (lt.optim.AdamW, dict(lr=0.1))]:
        p = lt.tensor(p0, requires_grad=True)
        opt = cls([p], **kw)
        ref, m, v = p0.copy(), np.zeros(5), np.zeros(5)
        for step in range(1, 4):
            lt.sum(lt.square(p)).backward()
            opt.step()
            opt.zero_grad()
            g = 2 * ref
            if cls is lt.optim.SGD:
                m = g if step == 1 else 0.9 * m + g
                ref = ref - 0.1 * (g + 0.9 * m)
            else:
                if cls is lt.optim.AdamW:
                    ref = ref * (1 - 0.1 * 1e-2)
                m = 0.9 * m + 0.1 * g
                v = 0.999 * v + 0.001 * g * g
                ref = ref - 0.1 * (m / (1 - 0.9 ** step)) / (
                    np.sqrt(v / (1 - 0.999 ** step)) + 1e-8)
        np.testing.assert_allclose(np.asarray(p), ref, rtol=1e-12, err_msg=cls.__name__)


def test_selections_and_numpy_operands_keep_the_graph(device):
    # masks, sort and topk gather what they select, so gradients reach the selected elements
    # (PyTorch's); a NumPy operand on the left gives a Tensor (Tensor's operators take priority).
    # All four were silently cut from the tape: x.grad read [1, 1, 1].
    a = np.array([-1.0, 2.0, 3.0])
    w = lt.tensor(np.array([1.0, 2.0, 3.0]), device=device)
    cases = [(lambda x: x[x > 0] ** 2, [1.0, 5.0, 7.0]),
             (lambda x: lt.sort(x) * w, [2.0, 3.0, 4.0]),
             (lambda x: lt.sort(x, descending=True) * w, [4.0, 3.0, 2.0]),
             (lambda x: lt.topk(x, 2)[0] * w[:2], [1.0, 3.0, 2.0]),
             (lambda x: np.float64(2.0) * x, [3.0, 3.0, 3.0]),
             (lambda x: a * x, [0.0, 3.0, 4.0])]
    for f, want in cases:
        x = lt.tensor(a, requires_grad=True, device=device)
        (lt.sum(f(x)) + lt.sum(x)).backward()
        np.testing.assert_allclose(np.asarray(x.grad), want, rtol=0, atol=1e-15)
    m = lt.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True, device=device)
    lt.sum(m[np.array([False, True])] * 2).backward()
    np.testing.assert_array_equal(np.asarray(m.grad), [[0, 0, 0], [2, 2, 2]])
    assert isinstance(np.ones(3) + lt.tensor(a, device=device), lt.Tensor)


def test_adam_counts_steps_per_parameter(device):
    # a parameter's first gradient at step 3 takes Adam's first step (torch.optim counts per
    # parameter): b moves by lr, not by the bias-corrected step-3 amount (it read 0.936)
    for opt_class in (lt.optim.Adam, lt.optim.AdamW):
        w = lt.tensor(np.array([1.0]), requires_grad=True, device=device)
        b = lt.tensor(np.array([1.0]), requires_grad=True, device=device)
        opt = opt_class([w, b], lr=0.1, weight_decay=0.0)
        for s in range(3):
            loss = lt.sum(w * w) + lt.sum(b * b) if s == 2 else lt.sum(w * w)
            loss.backward()
            opt.step()
            opt.zero_grad()
        np.testing.assert_allclose(np.asarray(b), [0.9], rtol=1e-7)


def test_copysign_and_logaddexp_differentiate(device):
    # both refused a tracked operand ("unknown binary op code"); checked by central differences,
    # with q of both signs
    p0, q0 = np.array([-1.5, 0.7, 2.0, -0.3]), np.array([0.4, -2.0, 1.0, -0.6])
    w, h = np.array([1.0, 2.0, 3.0, 4.0]), 1e-6
    for name in ("copysign", "logaddexp"):
        f = getattr(np, name)
        p = lt.tensor(p0, requires_grad=True, device=device)
        q = lt.tensor(q0, requires_grad=True, device=device)
        lt.sum(getattr(lt, name)(p, q) * lt.tensor(w, device=device)).backward()
        dp = w * (f(p0 + h, q0) - f(p0 - h, q0)) / (2 * h)
        dq = w * (f(p0, q0 + h) - f(p0, q0 - h)) / (2 * h)
        np.testing.assert_allclose(np.asarray(p.grad), dp, atol=1e-6)
        np.testing.assert_allclose(np.asarray(q.grad), dq, atol=1e-6)


def test_std_of_a_constant_row_has_zero_gradient(device):
    # PyTorch masks std's g / (2 std) where std is 0 (layer norm of a constant row); it was NaN
    x = lt.tensor(np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]), requires_grad=True, device=device)
    lt.sum(lt.std(x, axis=1)).backward()
    g = np.asarray(x.grad)
    np.testing.assert_array_equal(g[0], [0.0, 0.0, 0.0])
    row = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(g[1], (row - row.mean()) / (3 * row.std()), rtol=1e-12)


def test_pow_at_zero_matches_pytorch(device):
    # 0 ** 2, 0 ** 0, 2 ** 0, 0 ** -1: d/dx 0, 0, 0, -inf and d/dy 0, 0, log 2, -inf (PyTorch's
    # masks); the zero-base entries were NaN
    x = lt.tensor(np.array([0.0, 0.0, 2.0, 0.0]), requires_grad=True, device=device)
    y = lt.tensor(np.array([2.0, 0.0, 0.0, -1.0]), requires_grad=True, device=device)
    lt.sum(lt.power(x, y)).backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [0.0, 0.0, 0.0, -np.inf])
    np.testing.assert_array_equal(np.asarray(y.grad), [0.0, 0.0, np.log(2.0), -np.inf])
    z = lt.tensor(np.array([0.0, 1.5]), requires_grad=True, device=device)
    lt.sum(z ** 0).backward()
    np.testing.assert_array_equal(np.asarray(z.grad), [0.0, 0.0])


def test_sgd_nesterov_needs_momentum_and_no_dampening():
    w = lt.tensor(np.array([1.0]), requires_grad=True)
    for kw in (dict(momentum=0.0), dict(momentum=0.9, dampening=0.5)):
        with pytest.raises(ValueError, match="Nesterov momentum needs momentum > 0"):
            lt.optim.SGD([w], lr=0.1, nesterov=True, **kw)
    lt.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True)


def test_mask_assignment_to_a_tracked_tensor_is_refused_with_a_way_out():
    y = lt.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True) * 2
    with pytest.raises(lt.InvalidArgumentError, match=r"out of place \(lt.where"):
        y[np.array([True, False, False])] = 7.0
    np.testing.assert_array_equal(np.asarray(y.detach()), [2.0, 4.0, 6.0])


def test_numpy_operands_written_after_the_op_do_not_change_gradients():
    """The tape keeps its own copy of a NumPy operand (the ctypes path wrapped it, so writing the
    array later changed the gradient: 100 instead of 2)."""
    w = lt.tensor(np.ones(3), requires_grad=True)
    n = np.full(3, 2.0)
    loss = lt.sum(w * n)
    m = np.full((3, 2), 2.0)
    loss2 = lt.sum(lt.einsum("i,ij->j", w, m))
    n[:] = 100.0
    m[:] = 100.0
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])
    w.grad = None
    loss2.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 4.0, 4.0])


def test_threads_share_a_context_tape():
    """Every thread's ops go to the context's one tape (not thread-safe in C): training in four
    threads at once crashed or doubled gradients; plain ops beside one trainer crashed too."""
    import threading
    errors = []

    def trainer():
        try:
            w = lt.tensor(np.ones((8, 8)), requires_grad=True)
            for _ in range(300):
                lt.sum(w * w).backward()
                if not np.array_equal(np.asarray(w.grad), np.full((8, 8), 2.0)):
                    errors.append("gradient")
                w.grad = None
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(repr(exc))

    def plain():
        a = lt.tensor(np.ones((8, 8)))
        for _ in range(600):
            lt.sum(a * 2 + 1)
            b = a.T + 1
            del b

    threads = [threading.Thread(target=trainer) for _ in range(3)] + \
        [threading.Thread(target=plain) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_in_place_writes_to_tracked_tensors_are_refused():
    """The tape records no writes: t *= 3, t[0] = 7, t.sort(), t.fill(), out= into a tracked
    tensor, and out= receiving a tracked result all gave gradients of the value before the
    write, silently. They are refused (under no_grad they run, as PyTorch's manual updates)."""
    x = lt.tensor(np.ones(3), requires_grad=True)
    y = x * 1.0
    for write in (lambda: y.__imul__(3), lambda: y.__iadd__(y), lambda: y.__setitem__(0, 7.0),
                  lambda: y.__setitem__(slice(1, None), 2.0), lambda: y.sort(),
                  lambda: y.fill(2.0), lambda: lt.add(y, 1.0, out=y),
                  lambda: lt.add(x, 1.0, out=lt.tensor(np.zeros(3))),
                  lambda: lt.einsum("i->i", x, out=lt.tensor(np.zeros(3))),
                  lambda: x.__iadd__(1.0)):
        with pytest.raises(lt.InvalidArgumentError, match="in place"):
            write()
    lt.sum(y * 3).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])
    with lt.no_grad():
        x -= 0.5 * x.grad  # a manual SGD step, as in PyTorch
    np.testing.assert_array_equal(x.numpy(), [-0.5, -0.5, -0.5])
    z = lt.tensor(np.ones(3))
    z += 1.0  # untracked tensors are written as ever
    assert z.tolist() == [2.0, 2.0, 2.0]


def test_threads_train_on_numpy_wrapping_operands():
    """Six threads train with Adam on operands that wrap NumPy arrays (their release runs Python
    when the tape frees them, where the interpreter may switch threads mid-backward): the ctypes
    path crashed in 6 of 8 runs before tape calls took a lock of their own."""
    import sys
    import threading
    errors = []

    def train(seed):
        try:
            r = np.random.default_rng(seed)
            x, y = r.standard_normal((16, 4)), r.standard_normal((16, 1))
            w0 = lt.tensor(r.standard_normal((4, 3)), requires_grad=True)
            w1 = lt.tensor(r.standard_normal((3, 1)), requires_grad=True)
            opt = lt.optim.Adam([w0, w1], lr=0.01)
            for _ in range(40):
                loss = lt.mean((lt.tanh(lt.tensor(x) @ w0) @ w1 - y) ** 2)
                opt.zero_grad()
                loss.backward()
                opt.step()
            if not np.isfinite(float(loss)):
                errors.append("loss")
        except Exception as exc:  # noqa: BLE001 (reported below)
            errors.append(repr(exc))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        threads = [threading.Thread(target=train, args=(s,)) for s in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []


def test_overlapping_no_grad_blocks_of_two_threads_restore_recording():
    """A enters, B enters, A leaves, B leaves: recording was left off for good (B restored the
    off state it had found)."""
    import threading
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()

    def first():
        with lt.no_grad():
            a_in.set()
            b_in.wait(5)
        a_out.set()

    def second():
        a_in.wait(5)
        with lt.no_grad():
            b_in.set()
            a_out.wait(5)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert lt.is_grad_enabled()
    x = lt.tensor(np.ones(2), requires_grad=True)
    lt.sum(x * x).backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_numpy_views_of_tracked_tensors_are_read_only():
    """A write through np.asarray(x) bumps no version counter: it changed the gradient silently
    (10 instead of 2). Views of tracked tensors are read-only; gradients stay writable."""
    x = lt.tensor(np.ones(3), requires_grad=True)
    z = lt.sum(x * x)
    view = np.asarray(x)
    assert not view.flags.writeable
    with pytest.raises(ValueError):
        view[0] = 5.0
    z.backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0] and np.asarray(x.grad).flags.writeable

# SPDX-License-Identifier: MIT
"""One training step (forward, softmax cross-entropy, backward, Adam) of a 784-256-10 MLP at
batch 128 in f32, side by side in one run: the C example's step (bench_autograd --step, run
here), the Python binding, PyTorch CPU and hand-written NumPy (each skipped with a note when
missing). Run with the peers' venv, e.g.

    OMP_NUM_THREADS=2 /work/venv-bench/bin/python bench/bench_autograd.py [build/bench/bench_autograd]
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import libtensor as lt  # noqa: E402
from bench_timing import median_pair_seconds, median_seconds  # noqa: E402

B, D, H, C = 128, 784, 256, 10
REPS = 5 if os.environ.get("LT_BENCH_QUICK") else 20
rng = np.random.default_rng(0)
X = rng.uniform(-1, 1, (B, D)).astype(np.float32)
Y = np.eye(C, dtype=np.float32)[np.arange(B) % C]
P0 = [(rng.normal(size=(D, H)) * 0.05).astype(np.float32), np.zeros(H, np.float32),
      (rng.normal(size=(H, C)) * 0.05).astype(np.float32), np.zeros(C, np.float32)]


def lt_step_factory(fused=False):
    x, y = lt.tensor(X), lt.tensor(Y)
    params = [lt.tensor(p, requires_grad=True) for p in P0]
    opt = lt.optim.Adam(params, lr=1e-3)

    def step():
        w1, b1, w2, b2 = params
        z = lt.einsum("bh,hc->bc", lt.relu(lt.einsum("bi,ih->bh", x, w1) + b1), w2) + b2
        if fused:  # the log_softmax rule (issue 19)
            loss = -lt.sum(lt.log_softmax(z, axis=1) * y) * (1.0 / B)
        else:
            with lt.no_grad():
                m = lt.max(z, axis=1, keepdims=True)
            zs = z - m
            loss = lt.mean(lt.log(lt.sum(lt.exp(zs), axis=1)) - lt.sum(zs * y, axis=1))
        loss.backward()
        opt.step()
        opt.zero_grad()
    return step


def torch_step_factory():
    import torch
    torch.set_num_threads(int(os.environ.get("LT_NUM_THREADS", "2")))
    x, y = torch.from_numpy(X), torch.from_numpy(Y.argmax(1))
    params = [torch.tensor(p, requires_grad=True) for p in P0]
    opt = torch.optim.Adam(params, lr=1e-3)

    def step():
        w1, b1, w2, b2 = params
        z = torch.relu(x @ w1 + b1) @ w2 + b2
        loss = torch.nn.functional.cross_entropy(z, y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    return step


def numpy_step_factory():
    params = [p.copy() for p in P0]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = [0]

    def step():
        w1, b1, w2, b2 = params
        h = X @ w1 + b1
        a = np.maximum(h, 0)
        z = a @ w2 + b2
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        p = e / e.sum(axis=1, keepdims=True)
        dz = (p - Y) / B
        grads = [None, None, a.T @ dz, dz.sum(0)]
        da = dz @ w2.T
        dh = da * (h > 0)
        grads[0], grads[1] = X.T @ dh, dh.sum(0)
        t[0] += 1
        bc1, bc2 = 1 - 0.9 ** t[0], 1 - 0.999 ** t[0]
        for i, g in enumerate(grads):
            m[i] *= 0.9
            m[i] += 0.1 * g
            v[i] *= 0.999
            v[i] += 0.001 * g * g
            params[i] -= 1e-3 * (m[i] / bc1) / (np.sqrt(v[i] / bc2) + 1e-8)
    return step


# What a step must compute: forward and weight gradients of both layers, and the input gradient
# of layer 2 only (X needs none).
STEP_GEMM_FLOPS = 2 * B * (2 * D * H + 3 * H * C)


def step_limit_seconds():
    """The step's GEMM flops at the best square f32 GEMM rate measured in this process: no
    step can run faster than its arithmetic at the machine's GEMM speed."""
    n = 1024
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    out = np.empty((n, n), np.float32)
    ta, tb = lt.tensor(a), lt.tensor(b)
    t_np = median_seconds(lambda: np.matmul(a, b, out=out), 7)
    time.sleep(0.2)  # NumPy's OpenBLAS threads spin after a call and would slow the next side
    best = min(t_np, median_seconds(lambda: lt.einsum("ij,jk->ik", ta, tb), 7))
    rate = 2.0 * n ** 3 / best
    return STEP_GEMM_FLOPS / rate, rate


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench", "bench_autograd")
    rows = []
    try:
        out = subprocess.run([exe, "--step"], capture_output=True, text=True, check=True)
        rows.append(("libtensor C (examples' step)", float(out.stdout.strip()) / 1e3))
    except (OSError, subprocess.CalledProcessError, ValueError) as exc:
        print(f"note: C step skipped ({exc})")
    time.sleep(0.2)
    rows.append(("libtensor Python", median_seconds(lt_step_factory(), REPS)))
    time.sleep(0.2)
    rows.append(("libtensor Python, log_softmax", median_seconds(lt_step_factory(True), REPS)))
    time.sleep(0.2)
    try:
        rows.append(("PyTorch CPU", median_seconds(torch_step_factory(), REPS)))
    except ImportError:
        print("note: PyTorch not importable here: skipped (use /work/venv-bench/bin/python)")
    time.sleep(0.2)
    rows.append(("NumPy by hand", median_seconds(numpy_step_factory(), REPS)))
    flops = 3 * 2 * B * (D * H + H * C)
    ref = dict(rows).get("PyTorch CPU")
    time.sleep(0.2)
    limit, rate = step_limit_seconds()
    print(f"MLP {D}-{H}-{C}, batch {B}, f32, one Adam step ({flops / 1e6:.0f} MFLOP of GEMM):")
    for name, s in rows:
        extra = f"  {s / ref:5.2f}x PyTorch's time" if ref else ""
        print(f"  {name:<30} {s * 1e3:8.3f} ms  {flops / s * 1e-9:6.1f} GFLOP/s{extra}"
              f"  {limit / s:4.2f} of the limit")
    print(f"  limit: the step's {STEP_GEMM_FLOPS / 1e6:.0f} MFLOP of GEMM (no input gradient) at "
          f"{rate * 1e-9:.0f} GFLOP/s, the best 1024^3 f32 GEMM measured here (NumPy, libtensor), "
          f"= {limit * 1e3:.3f} ms; Adam's and the small ops' memory traffic come on top")
    # The aims are ratios: measured with the two steps alternating, so that load from elsewhere
    # on a shared machine hits both sides (the rows above run minutes apart).
    print("alternated pairs (median ms of each side; samples of >= 50 ms, 0.2 s pauses between):")
    pairs = [("Python (log_softmax) / NumPy", lt_step_factory(True), numpy_step_factory)]
    if ref:
        pairs.insert(0, ("Python (log_softmax) / PyTorch", lt_step_factory(True),
                         torch_step_factory))
    for name, lt_step, other in pairs:
        time.sleep(0.2)
        a, b = median_pair_seconds(lt_step, other(), REPS, min_time=0.05, pause=0.2)
        print(f"  {name:<32} {a * 1e3:8.3f} / {b * 1e3:8.3f} ms = {a / b:5.2f}")


if __name__ == "__main__":
    main()

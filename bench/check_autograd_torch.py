# SPDX-License-Identifier: MIT
"""Gradients of the Python binding against torch.autograd on random compositions of >= 5 ops
(a check beside the project's tests, which use finite differences: torch is not a Debian
package). Run with the peers' venv:

    /work/venv-bench/bin/python bench/check_autograd_torch.py [trials]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
import libtensor as lt  # noqa: E402

try:
    import torch
except ImportError:
    print("note: torch is not importable here; nothing to compare")
    sys.exit(0)

# (libtensor, torch) pairs of unary ops and reductions
UNARY = [(lt.tanh, torch.tanh), (lt.sin, torch.sin), (lt.cos, torch.cos), (lt.exp, torch.exp),
         (lt.sigmoid, torch.sigmoid), (lt.relu, torch.relu), (lt.abs, torch.abs),
         (lt.square, torch.square)]
REDUCE = [(lambda h: lt.sum(h, axis=1, keepdims=True), lambda h: h.sum(1, keepdim=True)),
          (lambda h: lt.mean(h, axis=0, keepdims=True), lambda h: h.mean(0, keepdim=True)),
          (lambda h: lt.max(h, axis=1, keepdims=True), lambda h: h.amax(1, keepdim=True)),
          (lambda h: lt.prod(h, axis=0, keepdims=True), lambda h: h.prod(0, keepdim=True))]


def program(rng, n):
    steps = []
    for _ in range(n):
        k = rng.integers(0, 5)
        if k == 0:
            steps.append(("unary", UNARY[rng.integers(0, len(UNARY))]))
        elif k == 1:
            steps.append(("reduce", REDUCE[rng.integers(0, len(REDUCE))]))
        else:
            steps.append((["matmul", "mul_w", "flip"][k - 2], None))
    return steps


def run(steps, x, w, side):
    h = x
    for kind, f in steps:
        if kind == "unary":
            h = f[side](h)
        elif kind == "reduce":
            h = f[side](h) * 0.5 + h
        elif kind == "matmul":
            h = (lt.einsum("ij,jk->ik", h, w) if side == 0 else h @ w) * 0.3
        elif kind == "mul_w":
            h = h * (w[0] if side == 0 else w[0])
        else:
            h = h[::-1] if side == 0 else torch.flip(h, [0])
    return lt.sum(h * h) if side == 0 else (h * h).sum()


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    worst = 0.0
    for t in range(trials):
        rng = np.random.default_rng(t)
        steps = program(rng, 5 + t % 6)
        xa, wa = rng.uniform(-1, 1, (4, 4)), rng.uniform(-1, 1, (4, 4))
        x, w = lt.tensor(xa, requires_grad=True), lt.tensor(wa, requires_grad=True)
        run(steps, x, w, 0).backward()
        xt = torch.tensor(xa, requires_grad=True)
        wt = torch.tensor(wa, requires_grad=True)
        run(steps, xt, wt, 1).backward()
        for ours, theirs in ((x.grad, xt.grad), (w.grad, wt.grad)):
            a = np.zeros((4, 4)) if ours is None else np.asarray(ours)
            b = np.zeros((4, 4)) if theirs is None else theirs.numpy()
            err = np.abs(a - b).max() / max(1.0, np.abs(b).max())
            worst = max(worst, err)
            if err > 1e-10:
                print(f"trial {t}: {[s[0] for s in steps]}: relative difference {err:.2e}")
    print(f"{trials} random compositions of 5-10 ops: worst relative difference {worst:.2e}")


if __name__ == "__main__":
    main()

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
         (lt.square, torch.square),
         # issue 19: the issue-18 math ops
         (lt.expm1, torch.expm1), (lt.erf, torch.erf), (lt.gelu, torch.nn.functional.gelu),
         (lt.silu, torch.nn.functional.silu), (lt.softplus, torch.nn.functional.softplus),
         (lambda h: lt.log1p(lt.abs(h)), lambda h: torch.log1p(torch.abs(h))),
         (lambda h: lt.rsqrt(h * h + 1), lambda h: torch.rsqrt(h * h + 1)),
         (lambda h: lt.floor(h) + h, lambda h: torch.floor(h) + h)]
IDX = np.array([3, 0, 0, 1])
ALONG = np.array([[1, 0, 3, 3], [2, 2, 0, 1], [0, 1, 1, 2], [3, 3, 2, 0]])
# (libtensor, torch) pairs of the vocabulary ops that keep a [4, 4] shape: f(h, w)
VOCAB = [
    (lambda h, w: lt.softmax(h, axis=1), lambda h, w: torch.softmax(h, 1)),
    (lambda h, w: lt.log_softmax(h, axis=0) * 0.3, lambda h, w: torch.log_softmax(h, 0) * 0.3),
    (lambda h, w: lt.logsumexp(h, axis=0, keepdims=True) * 0.5 + h,
     lambda h, w: torch.logsumexp(h, 0, keepdim=True) * 0.5 + h),
    (lambda h, w: lt.var(h, axis=1, ddof=1, keepdims=True) + h,
     lambda h, w: torch.var(h, 1, correction=1, keepdim=True) + h),
    (lambda h, w: lt.std(h, axis=0, keepdims=True) + h,
     lambda h, w: torch.std(h, 0, correction=0, keepdim=True) + h),
    (lambda h, w: lt.cumsum(h, axis=0) * 0.5, lambda h, w: torch.cumsum(h, 0) * 0.5),
    (lambda h, w: lt.cumprod(h, axis=1), lambda h, w: torch.cumprod(h, 1)),
    (lambda h, w: lt.where(h > 0, h, h * w), lambda h, w: torch.where(h > 0, h, h * w)),
    (lambda h, w: lt.clip(h, -0.5, 0.5), lambda h, w: torch.clamp(h, -0.5, 0.5)),
    (lambda h, w: lt.take(h, IDX, axis=0), lambda h, w: h[torch.tensor(IDX)]),
    (lambda h, w: lt.take_along_axis(h, ALONG, axis=1),
     lambda h, w: torch.gather(h, 1, torch.tensor(ALONG))),
    (lambda h, w: h.scatter_add(0, ALONG, w), lambda h, w: h.scatter_add(0, torch.tensor(ALONG), w)),
    (lambda h, w: lt.concatenate(lt.split(h, [1, 3], axis=1)[::-1], axis=1),
     lambda h, w: torch.cat(torch.split(h, [1, 2, 1], 1)[::-1], 1)),
    (lambda h, w: lt.sum(lt.stack([h, w], axis=0), axis=0),
     lambda h, w: torch.stack([h, w]).sum(0)),
    (lambda h, w: lt.arctan2(h, w) + lt.hypot(h, w), lambda h, w: torch.atan2(h, w) + torch.hypot(h, w)),
    (lambda h, w: lt.maximum(h, w) - lt.minimum(h, w * 0.5),
     lambda h, w: torch.maximum(h, w) - torch.minimum(h, w * 0.5)),
]
REDUCE = [(lambda h: lt.sum(h, axis=1, keepdims=True), lambda h: h.sum(1, keepdim=True)),
          (lambda h: lt.mean(h, axis=0, keepdims=True), lambda h: h.mean(0, keepdim=True)),
          (lambda h: lt.max(h, axis=1, keepdims=True), lambda h: h.amax(1, keepdim=True)),
          (lambda h: lt.prod(h, axis=0, keepdims=True), lambda h: h.prod(0, keepdim=True))]


def program(rng, n):
    steps = []
    for _ in range(n):
        k = rng.integers(0, 6)
        if k == 5:
            steps.append(("vocab", VOCAB[rng.integers(0, len(VOCAB))]))
        elif k == 0:
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
        elif kind == "vocab":
            h = f[side](h, w)
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
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    worst = 0.0
    used = set()
    for t in range(trials):
        rng = np.random.default_rng(t)
        steps = program(rng, 5 + t % 6)
        used.update(id(f) for kind, f in steps if kind in ("unary", "vocab"))
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
    print(f"{trials} random compositions of 5-10 ops ({len(used)} of the {len(UNARY) + len(VOCAB)} "
          f"unary/vocabulary ops used): worst relative difference {worst:.2e}")


if __name__ == "__main__":
    main()

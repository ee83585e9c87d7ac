# SPDX-License-Identifier: MIT
"""The model of examples/mlp.c through the Python binding: a 2-layer MLP (ReLU, softmax
cross-entropy, Adam) on three interleaved spirals, or on X.npy / y.npy given on the command line.

    python3 examples/mlp.py [--epochs N] [--hidden H] [--lr LR] [--seed S]
                            [--min-accuracy A] [X.npy y.npy]
"""
import argparse
import sys

import numpy as np

import libtensor as lt


def spirals(n, classes, rng):
    x = np.zeros((n * classes, 2), np.float32)
    y = np.zeros(n * classes, np.int64)
    for c in range(classes):
        r = np.linspace(0.0, 1.0, n)
        t = c * 4.0 + r * 4.0 + rng.normal(size=n) * 0.1
        x[c * n:(c + 1) * n] = np.c_[r * np.sin(t), r * np.cos(t)]
        y[c * n:(c + 1) * n] = c
    return x, y


def forward(x, w1, b1, w2, b2):
    return lt.einsum("bh,hc->bc", lt.relu(lt.einsum("bi,ih->bh", x, w1) + b1), w2) + b2


def cross_entropy(z, w):
    """Mean softmax cross-entropy as sum(log_softmax(z) * w), w = -onehot / rows (as mlp.c)."""
    return lt.sum(lt.log_softmax(z, axis=1) * w)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-accuracy", type=float, default=0.0)
    ap.add_argument("data", nargs="*", help="X.npy y.npy")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    if a.data:
        if len(a.data) != 2:
            ap.error("give both X.npy and y.npy")
        x, y = np.load(a.data[0]).astype(np.float32), np.load(a.data[1]).astype(np.int64)
    else:
        x, y = spirals(400, 3, rng)
    order = rng.permutation(len(y))
    x, y = x[order], y[order]
    ntr = len(y) * 4 // 5
    classes = int(y.max()) + 1
    onehot = lt.tensor(np.eye(classes, dtype=np.float32)[y[:ntr]] * np.float32(-1.0 / ntr))
    xtr, xte = lt.tensor(x[:ntr]), lt.tensor(x[ntr:])
    d = x.shape[1]
    params = [lt.tensor((rng.normal(size=(d, a.hidden)) * np.sqrt(2 / d)).astype(np.float32),
                        requires_grad=True),
              lt.tensor(np.zeros(a.hidden, np.float32), requires_grad=True),
              lt.tensor((rng.normal(size=(a.hidden, classes)) * np.sqrt(2 / a.hidden))
                        .astype(np.float32), requires_grad=True),
              lt.tensor(np.zeros(classes, np.float32), requires_grad=True)]
    opt = lt.optim.Adam(params, lr=a.lr)
    tty = sys.stdout.isatty()
    print(f"mlp.py: {ntr} train / {len(y) - ntr} test rows, {d} features, {classes} classes, "
          f"hidden {a.hidden}, {a.epochs} epochs")
    for ep in range(1, a.epochs + 1):
        loss = cross_entropy(forward(xtr, *params), onehot)
        loss.backward()
        opt.step()
        opt.zero_grad()
        if not tty and ep % 20 and ep != a.epochs:
            continue  # logs get every 20th epoch
        bar = "=" * (30 * ep // a.epochs)
        print(f"\r[{bar:<30}] epoch {ep:4d}/{a.epochs}  loss {loss.item():.4f}",
              end="\n" if not tty or ep % 100 == 0 or ep == a.epochs else "", flush=True)
    with lt.no_grad():
        pred = np.asarray(lt.argmax(forward(xte, *params), axis=1))
    acc = float(np.mean(pred == y[ntr:]))
    print(f"test accuracy {acc:.4f} ({len(y) - ntr} rows)")
    return 0 if acc >= a.min_accuracy else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

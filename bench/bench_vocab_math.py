#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Softmax, logsumexp, var, cumsum and the random generator against NumPy and PyTorch.

    PYTHONPATH=bindings/python LIBTENSOR_PATH=build/src/libtensor.so \\
        /work/venv-bench/bin/python bench/bench_vocab_math.py

Each case runs on LT_BENCH_N float32 elements (default 2**24) as rows of LT_BENCH_ROW (default
1024) along the last axis, or as one vector (RNG), on LT_BENCH_THREADS threads (default 2) for
libtensor and PyTorch (NumPy does not thread these). Printed per case and library: the median
time, the effective bandwidth (bytes read + written once) as a fraction of this machine's copy
bandwidth measured in the same run (np.copyto of the same size, one thread: the streaming
limit), and libtensor's speed-up over each peer. Peers that are not installed are skipped
with a note. Libraries alternate with 0.2 s pauses so that one's spinning threads do not eat
into the next.
"""
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
THREADS = int(os.environ.get("LT_BENCH_THREADS", 2))
os.environ.setdefault("LT_NUM_THREADS", str(THREADS))

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import median_seconds  # noqa: E402

import libtensor as lt  # noqa: E402

try:
    import torch  # noqa: E402
    torch.set_num_threads(THREADS)
except ImportError:
    torch = None
    print("note: torch is not installed; its column is skipped")

N = int(os.environ.get("LT_BENCH_N", 1 << 24))
ROW = int(os.environ.get("LT_BENCH_ROW", 1024))
REPS = int(os.environ.get("LT_BENCH_REPS", 5))


def timed(fn):
    time.sleep(0.2)
    return median_seconds(fn, REPS)


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def np_logsumexp(x):
    m = x.max(axis=-1, keepdims=True)
    return np.log(np.exp(x - m).sum(axis=-1)) + m[..., 0]


def cases(x, t, tx):
    """(name, bytes moved, {library: fn})."""
    rows = x.size // ROW
    four = 4.0 * x.size
    yield "softmax", 2 * four, {
        "libtensor": lambda: lt.softmax(t, axis=-1), "numpy": lambda: np_softmax(x),
        "torch": tx is not None and (lambda: torch.softmax(tx, -1))}
    yield "logsumexp", four + 4.0 * rows, {
        "libtensor": lambda: lt.logsumexp(t, axis=-1), "numpy": lambda: np_logsumexp(x),
        "torch": tx is not None and (lambda: torch.logsumexp(tx, -1))}
    yield "var", four + 4.0 * rows, {
        "libtensor": lambda: lt.var(t, axis=-1), "numpy": lambda: x.var(axis=-1),
        "torch": tx is not None and (lambda: torch.var(tx, -1, correction=0))}
    yield "cumsum", 2 * four, {
        "libtensor": lambda: lt.cumsum(t, axis=-1), "numpy": lambda: np.cumsum(x, axis=-1),
        "torch": tx is not None and (lambda: torch.cumsum(tx, -1))}
    g, ng = lt.random.default_rng(1), np.random.default_rng(1)
    for dtype in ("float64", "float32"):
        nbytes = np.dtype(dtype).itemsize * float(x.size)
        yield "standard_normal %s" % dtype, nbytes, {
            "libtensor": lambda d=dtype: g.standard_normal(x.size, dtype=d, device="cpu"),
            "numpy": lambda d=dtype: ng.standard_normal(x.size, dtype=d),
            "torch": torch is not None and (
                lambda d=dtype: torch.randn(x.size, dtype=getattr(torch, d)))}
    yield "uniform float32", four, {
        "libtensor": lambda: g.random(x.size, dtype="float32", device="cpu"),
        "numpy": lambda: ng.random(x.size, dtype="float32"),
        "torch": torch is not None and (lambda: torch.rand(x.size))}


def main():
    x = np.random.default_rng(0).standard_normal((N // ROW, ROW)).astype(np.float32)
    t = lt.tensor(x, device="cpu")
    tx = torch.from_numpy(x) if torch is not None else None
    dst = np.empty_like(x)
    copy_s = timed(lambda: np.copyto(dst, x))
    copy_gbs = 8.0 * x.size / copy_s / 1e9
    print("libtensor %s (%d threads), numpy %s%s; %d float32 elements, rows of %d; "
          "copy limit %.1f GB/s (np.copyto, read + write)" % (
              lt.__version__, THREADS, np.__version__,
              ", torch %s" % torch.__version__ if torch is not None else "", N, ROW, copy_gbs))
    print("case,library,ms,GB/s,fraction_of_copy,libtensor_speedup")
    for name, nbytes, fns in cases(x, t, tx):
        secs = {}
        for lib in ("libtensor", "numpy", "torch"):
            if fns.get(lib):
                secs[lib] = timed(fns[lib])
        for lib, s in secs.items():
            gbs = nbytes / s / 1e9
            print("%s,%s,%.2f,%.2f,%.2f,%.2f" % (name, lib, s * 1e3, gbs, gbs / copy_gbs,
                                                 s / secs["libtensor"]))


if __name__ == "__main__":
    main()

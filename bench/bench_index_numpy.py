#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Comparisons, isfinite, where, clip, logical ops, gather (take), scatter-add, concatenate and
sort: libtensor beside NumPy, one process.

    LIBTENSOR_PATH=build/src/libtensor.so PYTHONPATH=bindings/python \
        /usr/bin/python3 bench/bench_index_numpy.py

Each memory-bound figure is GB/s (bytes read + written) and a ratio to the copy limit measured
in the same run (the faster of NumPy's copyto and libtensor's threaded copy of the same bytes).
Medians of LT_BENCH_REPS samples (default 5) on LT_BENCH_N float32 elements (default 2**24);
libtensor and NumPy samples alternate, so load from elsewhere hits both. NumPy is single-threaded
for these operations.
"""
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import median_pair_seconds, median_seconds  # noqa: E402

import libtensor as lt  # noqa: E402

N = int(os.environ.get("LT_BENCH_N", 1 << 24))
REPS = int(os.environ.get("LT_BENCH_REPS", 5))


def limit():
    """The machine's copy limit in GB/s, measured now: 2 * bytes per copy."""
    a = np.ones(N, np.float32)
    d = np.empty_like(a)
    t_np = median_seconds(lambda: np.copyto(d, a), REPS)
    ta = lt.tensor(a)
    td = lt.empty(N)
    t_lt = median_seconds(lambda: td.__setitem__(slice(None), ta), REPS)
    return 8.0 * N / min(t_np, t_lt) / 1e9


def row(name, nbytes, fn_lt, fn_np, lim):
    time.sleep(0.2)
    t_lt, t_np = median_pair_seconds(fn_lt, fn_np, REPS)
    gb_lt, gb_np = nbytes / t_lt / 1e9, nbytes / t_np / 1e9
    print(f"{name:<44} {gb_lt:8.2f} {gb_lt / lim:6.2f} {gb_np:8.2f} {gb_np / lim:6.2f} "
          f"{t_np / t_lt:7.2f}x")


def main():
    rng = np.random.default_rng(0)
    lim = limit()
    print(f"copy limit {lim:.2f} GB/s ({N} float32, {lt.context().num_threads} libtensor threads)")
    print(f"{'case':<44} {'lt GB/s':>8} {'/lim':>6} {'np GB/s':>8} {'/lim':>6} {'lt/np':>8}")
    cols = 64
    a = rng.standard_normal((N // cols, cols)).astype(np.float32)
    ta = lt.tensor(a)
    # The streaming elementwise vocabulary (issue 18): bytes read + written once, outputs
    # preallocated on both sides (out=), so the figure is the kernel's, not the allocator's.
    b2 = rng.standard_normal(a.shape).astype(np.float32)
    tb2 = lt.tensor(b2)
    m_np, m_lt = np.empty(a.shape, np.bool_), lt.empty(a.shape, "bool")
    f_np, f_lt = np.empty_like(a), lt.empty(a.shape, "float32")
    row("less a < b (f32, f32 -> bool)", 9.0 * a.size, lambda: lt.less(ta, tb2, out=m_lt),
        lambda: np.less(a, b2, out=m_np), lim)
    row("isfinite (f32 -> bool)", 5.0 * a.size, lambda: lt.isfinite(ta, out=m_lt),
        lambda: np.isfinite(a, out=m_np), lim)
    mask = a > 0
    tmask = lt.tensor(mask)
    row("where(m, a, b) (bool, f32, f32 -> f32)", 13.0 * a.size,
        lambda: lt.where(tmask, ta, tb2, out=f_lt), lambda: np.where(mask, a, b2), lim)
    row("clip(a, -0.5, 0.5) (f32)", 8.0 * a.size, lambda: lt.clip(ta, -0.5, 0.5, out=f_lt),
        lambda: np.clip(a, -0.5, 0.5, out=f_np), lim)
    row("logical_and (bool, bool -> bool)", 3.0 * a.size,
        lambda: lt.logical_and(tmask, tmask, out=m_lt),
        lambda: np.logical_and(mask, mask, out=m_np), lim)
    rows_idx = rng.integers(0, a.shape[0], a.shape[0])
    ti = lt.tensor(rows_idx)
    nbytes = 8.0 * a.size + 8.0 * rows_idx.size
    row(f"take rows {a.shape} axis 0, random", nbytes, lambda: lt.take(ta, ti, 0),
        lambda: np.take(a, rows_idx, 0), lim)
    col_idx = rng.integers(0, cols, (a.shape[0], cols))
    tc = lt.tensor(col_idx)
    nbytes = 8.0 * a.size + 8.0 * col_idx.size
    row(f"take_along_axis {a.shape} axis 1, random", nbytes,
        lambda: lt.take_along_axis(ta, tc, 1), lambda: np.take_along_axis(a, col_idx, 1), lim)
    flat_idx = rng.integers(0, N, N)
    tf, flat = lt.tensor(flat_idx), a.reshape(-1)
    tflat = lt.tensor(flat)
    row(f"take {N} elements, random (latency-bound)", 16.0 * N, lambda: lt.take(tflat, tf, 0),
        lambda: np.take(flat, flat_idx, 0), lim)
    d = np.zeros((1024, cols), np.float32)
    td = lt.tensor(d.copy())
    seg = rng.integers(0, 1024, a.shape[0])
    tseg = lt.tensor(seg)
    row(f"scatter_add {a.shape} into (1024, {cols})", 4.0 * a.size + 8.0 * seg.size,
        lambda: lt.scatter_add(td, 0, tseg, ta), lambda: np.add.at(d, seg, a), lim)
    half = a.shape[0] // 2
    b, c = a[:half], a[half:].copy()
    tb, tc2 = lt.tensor(b), lt.tensor(c)
    row("concatenate 2 halves (copy)", 8.0 * a.size, lambda: lt.concatenate([tb, tc2], 0),
        lambda: np.concatenate([b, c], 0), lim)
    s = rng.standard_normal((N // 1024, 1024)).astype(np.float32)
    ts = lt.tensor(s)
    t_lt, t_np = median_pair_seconds(lambda: lt.sort(ts, -1), lambda: np.sort(s, -1,
                                                                              kind="stable"), REPS)
    print(f"{'sort rows of 1024 (stable), seconds':<44} {t_lt:8.4f} {'':>6} {t_np:8.4f} "
          f"{'':>6} {t_np / t_lt:7.2f}x")
    t_lt, t_np = median_pair_seconds(
        lambda: lt.topk(ts, 8, -1), lambda: np.argpartition(-s, 8, -1), REPS)
    print(f"{'topk 8 of rows of 1024 vs argpartition, s':<44} {t_lt:8.4f} {'':>6} {t_np:8.4f} "
          f"{'':>6} {t_np / t_lt:7.2f}x")


if __name__ == "__main__":
    main()

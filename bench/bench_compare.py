#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Comparisons and where (issue 18 A): libtensor vs NumPy, each as a ratio to the machine's copy
bandwidth measured in the same run (the larger of np.copyto and libtensor's own copy).

    LIBTENSOR_PATH=build/src/libtensor.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/bench_compare.py

GB/s counts bytes read + written (a < b on f32: 4 + 4 read, 1 written per element). Both sides
allocate their output per call (the binding has no out= here). LT_BENCH_N elements (default
2**24), medians of LT_BENCH_REPS runs (default 7); OMP_WAIT_POLICY=passive and a 0.2 s pause
between libraries, as bench/ asks."""
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

import libtensor as lt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import median_seconds  # noqa: E402

N = int(os.environ.get("LT_BENCH_N", 1 << 24))
REPS = int(os.environ.get("LT_BENCH_REPS", 7))


def gbs(nbytes, fn):
    fn()
    return nbytes / median_seconds(fn, REPS) / 1e9


def main():
    rng = np.random.default_rng(0)
    a = rng.random(N, dtype=np.float32)
    b = rng.random(N, dtype=np.float32)
    ia = rng.integers(-100, 100, N, dtype=np.int32)
    ib = rng.integers(-100, 100, N, dtype=np.int32)
    m = a < b
    dst = np.empty_like(a)
    ta, tb, tia, tib, tm = (lt.tensor(x) for x in (a, b, ia, ib, m))
    copy_np = gbs(8.0 * N, lambda: np.copyto(dst, a))
    time.sleep(0.2)
    copy_lt = gbs(8.0 * N, lambda: ta.contiguous())
    limit = max(copy_np, copy_lt)
    print(f"copy limit {limit:.1f} GB/s (np.copyto {copy_np:.1f}, libtensor copy {copy_lt:.1f}); "
          f"N = {N}, threads: libtensor default, NumPy 1")
    cases = [("a < b  f32", 9.0 * N, lambda: lt.less(ta, tb), lambda: np.less(a, b)),
             ("a == b i32", 9.0 * N, lambda: lt.equal(tia, tib), lambda: np.equal(ia, ib)),
             ("where(m, a, b) f32", 13.0 * N, lambda: lt.where(tm, ta, tb),
              lambda: np.where(m, a, b)),
             ("isnan(a) f32", 5.0 * N, lambda: lt.isnan(ta), lambda: np.isnan(a)),
             ("a // b i32", 12.0 * N, lambda: tia // tib, lambda: np.floor_divide(ia, ib))]
    print(f"{'case':22s} {'libtensor GB/s':>15s} {'of limit':>9s} {'NumPy GB/s':>11s} "
          f"{'of limit':>9s} {'speed-up':>9s}")
    for name, nbytes, ours, theirs in cases:
        with np.errstate(all="ignore"):
            g_lt = gbs(nbytes, ours)
            time.sleep(0.2)
            g_np = gbs(nbytes, theirs)
            time.sleep(0.2)
        print(f"{name:22s} {g_lt:15.1f} {g_lt / limit:9.2f} {g_np:11.1f} {g_np / limit:9.2f} "
              f"{g_lt / g_np:9.2f}")


if __name__ == "__main__":
    main()

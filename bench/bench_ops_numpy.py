#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""NumPy on the cases of bench_ops.c, for a side-by-side.

    build/bench/bench_ops ours.csv && /usr/bin/python3 bench/bench_ops_numpy.py ours.csv

Prints NumPy's GB/s (bytes read + written, as bench_ops counts them) for
np.ascontiguousarray(a.transpose(p)), a.sum(axis) and a + b, medians of LT_BENCH_REPS runs
(default 5) on LT_BENCH_N float32 elements (default 2**26); with bench_ops' CSV it also prints
libtensor's figure and the speed-up. NumPy runs on one thread (it does not thread these).
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import median_seconds  # noqa: E402

N = int(os.environ.get("LT_BENCH_N", 1 << 26))
REPS = int(os.environ.get("LT_BENCH_REPS", 5))



def shape_text(shape, items):
    return "(%s) [%s]" % (",".join(map(str, shape)), ",".join(map(str, items)))


def cases():
    r = int(round(math.sqrt(N)))
    s3 = (N // (512 * 256), 256, 512)
    s4 = (N // (64 * 128 * 128), 64, 128, 128)
    s5 = (N // (32 * 32 * 32 * 64), 32, 32, 32, 64)
    s6 = (N // (16 * 16 * 16 * 16 * 64), 16, 16, 16, 16, 64)
    perms = [((r, N // r), (1, 0))]
    perms += [(s3, p) for p in [(2, 1, 0), (0, 2, 1), (2, 0, 1), (1, 0, 2)]]
    perms += [(s4, p) for p in [(3, 2, 1, 0), (0, 1, 3, 2), (3, 0, 1, 2)]]
    perms += [(s5, p) for p in [(4, 3, 2, 1, 0), (0, 1, 2, 4, 3), (4, 0, 1, 2, 3)]]
    perms += [(s6, p) for p in [(5, 4, 3, 2, 1, 0), (0, 1, 2, 3, 5, 4), (5, 0, 1, 2, 3, 4)]]
    odd = [((r - 1, r + 1), (1, 0)), ((1000, 1000, N // 1000000), (2, 1, 0))]
    odd += [((N // (255 * 257), 255, 257), p) for p in [(0, 2, 1), (2, 0, 1)]]
    odd += [((4096, N // (4096 * 3), 3), (2, 0, 1))]
    for cat, group in [("permutation", perms), ("perm-odd", odd)]:
        for shape, p in group:
            a = np.ones(shape, np.float32)
            yield cat, shape_text(shape, p), 8.0 * a.size, lambda a=a, p=p: np.ascontiguousarray(a.transpose(p))
    hwc, chw = (4096, N // (4096 * 3), 3), (3, 4096, N // (4096 * 3))
    for shape, axes in [(hwc, (2,)), (chw, (0,))]:
        a = np.ones(shape, np.float32)
        out = a.size // shape[axes[0]]
        yield "short-axis", shape_text(shape, axes), 4.0 * (a.size + out), lambda a=a, axes=axes: a.sum(axis=axes)
    a, b, d = np.ones(hwc, np.float32), np.ones((3,), np.float32), np.empty(hwc, np.float32)
    yield "short-axis", "(%d,%d,%d) + B(k)" % hwc, 4.0 * (2 * a.size + 3), lambda a=a, b=b, d=d: np.add(a, b, out=d)
    b = np.ones(hwc[:2] + (1,), np.float32)
    yield "short-axis", "(%d,%d,%d) + B(i,j)" % hwc, 4.0 * (2 * a.size + b.size), lambda a=a, b=b, d=d: np.add(a, b, out=d)
    tall = (N // 64, 64)
    a = np.ones(tall, np.float32)
    yield "short-axis", shape_text(tall, (0,)), 4.0 * (a.size + 64), lambda a=a: a.sum(axis=0)
    yield "short-axis", shape_text(tall, (1,)), 4.0 * (a.size + tall[0]), lambda a=a: a.sum(axis=1)
    nchw = (N // (256 * 64 * 64), 256, 64, 64)
    a = np.ones(nchw, np.float32)
    yield "nchw", shape_text(nchw, (0, 2, 3)), 4.0 * (a.size + 256), lambda a=a: a.sum(axis=(0, 2, 3))
    b, d = np.ones((256, 1, 1), np.float32), np.empty(nchw, np.float32)
    yield "nchw", "(%d,%d,%d,%d) + B(j)" % nchw, 4.0 * (2 * a.size + 256), lambda a=a, b=b, d=d: np.add(a, b, out=d)
    r3 = (N // (512 * 512), 512, 512)
    a = np.ones(r3, np.float32)
    for axes in [(2,), (0,), (1,), (1, 2), (0, 1), (0, 2), (0, 1, 2)]:
        out = 1
        for i, e in enumerate(r3):
            out *= 1 if i in axes else e
        yield "reduction", shape_text(r3, axes), 4.0 * (a.size + out), lambda axes=axes: a.sum(axis=axes)
    bs = {"B(i,j,k)": r3, "B(k)": (r3[2],), "B(i,j)": (r3[0], r3[1], 1), "B(j)": (r3[1], 1)}
    d = np.empty(r3, np.float32)
    for label, shape in bs.items():
        b = np.ones(shape, np.float32)
        text = "(%d,%d,%d) + %s" % (r3 + (label,))
        yield "binary", text, 4.0 * (2 * a.size + b.size), lambda b=b: np.add(a, b, out=d)


def main():
    ours = {}
    if len(sys.argv) > 1:
        with open(sys.argv[1]) as f:
            for line in f:
                cat, rest = line.strip().split(",", 1)
                case, gbs, _ratio = rest.rsplit(",", 2)
                ours[(cat, case)] = float(gbs)
    print("numpy %s, %d float32 elements, median of %d runs" % (np.__version__, N, REPS))
    logs = {}
    for cat, case, nbytes, fn in cases():
        if nbytes == 0:
            continue
        gbs = nbytes / median_seconds(fn, REPS) / 1e9
        line = "numpy,%s,%s,%.4f" % (cat, case, gbs)
        if (cat, case) in ours:
            speedup = ours[(cat, case)] / gbs
            logs.setdefault(cat, []).append(math.log(speedup))
            line += ",libtensor,%.4f,speedup,%.2f" % (ours[(cat, case)], speedup)
        print(line)
    for cat, values in logs.items():
        print("speed-up over numpy, %s: geometric mean %.2f, minimum %.2f" % (
            cat, math.exp(sum(values) / len(values)), math.exp(min(values))))


if __name__ == "__main__":
    main()

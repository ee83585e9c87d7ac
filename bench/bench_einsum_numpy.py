#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""np.einsum(optimize=True) on the TCCG cases of bench_contract.c and on multi-operand chains,
side by side with libtensor's Python binding when it imports (else NumPy alone).

    LIBTENSOR_PATH=build/src/libtensor.so /usr/bin/python3 bench/bench_einsum_numpy.py

GFLOP/s from medians of LT_BENCH_REPS samples (default 7), NumPy's and libtensor's taken
alternately; LT_BENCH_SCALE shrinks the extents as
in bench_contract. Speed-up = NumPy time / libtensor time; the geometric mean is printed last.
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import median_pair_seconds, median_seconds  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
try:
    import libtensor as lt
except Exception as exc:  # the binding or the library is missing: NumPy figures only
    print(f"libtensor binding not importable ({exc}); NumPy figures only")
    lt = None

REPS = int(os.environ.get("LT_BENCH_REPS", 7))
MIN_TIME = 0.02  # seconds per sample: small chains loop, so one stray interrupt cannot decide
SCALE = float(os.environ.get("LT_BENCH_SCALE", 1.0))

# (C-A-B, extents) exactly as in bench_contract.c
TCCG = [
    ("abc-bda-dc", dict(a=312, b=296, c=24, d=312)),
    ("abcd-dbea-ec", dict(a=72, b=72, c=24, d=72, e=72)),
    ("abcde-efbad-cf", dict(a=24, b=24, c=48, d=24, e=24, f=48)),
    ("abcd-ea-ebcd", dict(a=128, b=32, c=32, d=32, e=128)),
    ("ab-ac-cb", dict(a=1024, b=1024, c=1024)),
    ("abc-acd-db", dict(a=168, b=168, c=168, d=168)),
    ("abcdef-dega-gfbc", dict(a=16, b=16, c=16, d=16, e=16, f=16, g=32)),
]

CHAINS = [
    ("ij,jk,kl,lm->im", [(400, 30), (30, 400), (400, 30), (30, 400)]),
    ("ab,bc,cd,de,ef,fg->ag", [(256, 512), (512, 64), (64, 512), (512, 32), (32, 512), (512, 256)]),
    ("bij,bjk,bkl->bil", [(64, 96, 96), (64, 96, 96), (64, 96, 96)]),
    ("ijk,jl,kl->il", [(64, 128, 128), (128, 96), (128, 96)]),
    ("pqrs,pi,qj,rk,sl->ijkl", [(24, 24, 24, 24), (24, 24), (24, 24), (24, 24), (24, 24)]),
]



def einsum_flops(expr, shapes):
    """Flops of the best path NumPy finds (its own count), for GFLOP/s figures."""
    arrays = [np.empty(s, dtype=np.float32) for s in shapes]
    info = np.einsum_path(expr, *arrays, optimize="optimal")[1]
    for line in info.splitlines():
        if "Optimized FLOP count" in line:
            return float(line.split(":")[1])
    return float("nan")


def run(name, expr, shapes, dtype, speedups):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    flops = einsum_flops(expr, shapes)
    run_np = lambda: np.einsum(expr, *arrays, optimize=True)  # noqa: E731
    if lt is not None:
        t_np, t_lt = median_pair_seconds(run_np, lambda: lt.einsum(expr, *arrays), REPS, MIN_TIME)
    else:
        t_np = median_seconds(run_np, REPS, MIN_TIME)
    line = f"{name:26s} {np.dtype(dtype).name:8s} {flops / 1e9:7.2f} GFLOP  numpy {flops / t_np / 1e9:7.1f} GFLOP/s"
    if lt is not None:
        speedups.append(t_np / t_lt)
        line += f"  libtensor {flops / t_lt / 1e9:7.1f} GFLOP/s  speed-up {t_np / t_lt:5.2f}x"
    print(line, flush=True)


def main():
    print(f"numpy {np.__version__}, medians of {REPS} runs, scale {SCALE}")
    speedups = []
    for dtype in (np.float32, np.float64):
        for spec, ext in TCCG:
            c, a, b = spec.split("-")
            e = {k: max(1, round(v * SCALE)) for k, v in ext.items()}
            expr = f"{a},{b}->{c}"
            run(spec, expr, [tuple(e[x] for x in a), tuple(e[x] for x in b)], dtype, speedups)
        for expr, shapes in CHAINS:
            shapes = [tuple(max(1, round(x * SCALE)) for x in s) for s in shapes]
            run(expr, expr, shapes, dtype, speedups)
    if speedups:
        geo = math.exp(sum(math.log(s) for s in speedups) / len(speedups))
        print(f"speed-up over numpy: geometric mean {geo:.2f}x, min {min(speedups):.2f}x "
              "(aim: >= 1.5x, never below 1)")


if __name__ == "__main__":
    main()

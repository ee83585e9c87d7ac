#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Per-call cost of the Python binding, side by side with NumPy, one process:

    LIBTENSOR_PATH=build/src/libtensor.so /usr/bin/python3 bench/bench_python_calls.py

For n x n float32 (n = 8, 64, 1024): lt.add(a, b) on NumPy arrays vs np.add; t + t on Tensors;
lt.add(..., out=) into a preallocated array; lt.einsum('ij,jk->ik') vs a @ a; an EinsumPlan call
with out= vs the bare lt_plan_execute ctypes call (the floor: what any ctypes binding pays);
and lt_binary through ctypes on wrapped tensors (the C call itself). Medians of LT_BENCH_REPS
samples (default 7), each at least 20 ms; libraries alternate, with a 0.2 s pause between
them. Ratios > 1 mean slower than the reference named in the column.
"""
import ctypes
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_timing import median_pair_seconds  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
import libtensor as lt  # noqa: E402
from libtensor import _lib  # noqa: E402

REPS = int(os.environ.get("LT_BENCH_REPS", 7))
MIN_TIME = 0.02
SIZES = [int(s) for s in os.environ.get("LT_BENCH_SIZES", "8,64,1024").split(",")]


def pair(fn_a, fn_b):
    time.sleep(0.2)
    return median_pair_seconds(fn_a, fn_b, REPS, MIN_TIME)


def us(s):
    return f"{s * 1e6:9.2f}"


def main():
    print(f"libtensor {lt.__version__} ({lt.library_path}), NumPy {np.__version__}; "
          f"{os.cpu_count()} CPUs; median of {REPS}")
    header = f"{'n':>5} {'case':34} {'libtensor us':>12} {'reference us':>12} {'ratio':>7}"
    print(header)
    print("-" * len(header))
    rows = []
    for n in SIZES:
        a = np.random.default_rng(0).uniform(-1, 1, (n, n)).astype(np.float32)
        b = a.copy()
        o = np.empty_like(a)
        t, tb, to = lt.tensor(a), lt.tensor(b), lt.tensor(o)
        plan = lt.plan_einsum("ij,jk->ik", t, tb)
        binary = _lib.fn("lt_binary")
        out_h = ctypes.c_void_p()
        destroy = _lib.fn("lt_tensor_destroy")
        add_op = lt.enums.LT_BINARY_ADD

        def raw_binary():
            binary(add_op, t.handle, tb.handle, ctypes.byref(out_h))
            destroy(out_h.value)

        execute = _lib.fn("lt_plan_execute")
        handles = _lib.handle_array([t.handle, tb.handle])

        def raw_plan():
            execute(plan.handle, handles, 2, None, 0, to.handle)

        cases = [
            ("lt.add(np, np) vs np.add", lambda: lt.add(a, b), lambda: np.add(a, b)),
            ("t + t vs a + a", lambda: t + tb, lambda: a + b),
            ("lt.add(out=np) vs np.add(out=)", lambda: lt.add(a, b, out=o),
             lambda: np.add(a, b, out=o)),
            ("lt.add vs bare lt_binary (ctypes)", lambda: lt.add(a, b), raw_binary),
            ("lt.einsum('ij,jk->ik') vs a @ a", lambda: lt.einsum("ij,jk->ik", a, b),
             lambda: a @ b),
            ("plan(t, t, out=t) vs bare execute", lambda: plan(t, tb, out=to), raw_plan),
        ]
        for name, ours, ref in cases:
            if n >= 1024 and "bare" in name and "execute" not in name:
                continue
            mine, theirs = pair(ours, ref)
            rows.append((n, name, mine, theirs))
            print(f"{n:>5} {name:34} {us(mine):>12} {us(theirs):>12} {mine / theirs:7.2f}",
                  flush=True)


if __name__ == "__main__":
    main()

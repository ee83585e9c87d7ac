#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Per-call cost of the Python binding, side by side with NumPy and PyTorch, one process:

    LIBTENSOR_PATH=build/src/libtensor.so /usr/bin/python3 bench/bench_python_calls.py
    LIBTENSOR_PATH=build/src/libtensor.so PYTHONPATH=bindings/python \\
        /work/venv-bench/bin/python bench/bench_python_calls.py      # with PyTorch

For n x n float32 (n = 8, 64, 1024; LT_BENCH_SIZES): lt.add(a, b) on NumPy arrays, t + t on
Tensors, lt.add(..., out=), one-shot lt.einsum('ij,jk->ik') (reference a @ a), and an EinsumPlan
call with out= (reference: the bare lt_plan_execute through ctypes, the floor any ctypes
binding pays). Each libtensor case runs twice: through the C extension libtensor._fast
("lt") and through ctypes alone ("ctypes", the extension switched off in-process), unless the
extension is absent. Medians of LT_BENCH_REPS samples (default 7), each at least 20 ms; all
sides of a case take turns within each round, after a 0.2 s pause. Ratios are lt / NumPy; aims
(issue 20, 64 x 64): lt.add <= 3x np.add, lt.einsum <= 1.5x a @ a, a plan call <= 2 us.
PyTorch columns read "-" where torch is not importable (e.g. Debian's python3). The row "plan
call - C-loop execute" is the plan call minus the same lt_plan_execute timed in a C loop by the
extension (its NumPy column shows that floor): the binding's own cost per plan call."""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_timing  # noqa: E402
from bench_timing import median_group_seconds  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
import libtensor as lt  # noqa: E402
from libtensor import _lib  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

REPS = int(os.environ.get("LT_BENCH_REPS", 7))
MIN_TIME = 0.02
SIZES = [int(s) for s in os.environ.get("LT_BENCH_SIZES", "8,64,1024").split(",")]
_MODULES = [sys.modules["libtensor.ops"], sys.modules["libtensor.einsum"]]
FAST = lt._ext.FAST
CPU = bench_timing.CLOCK is time.process_time  # LT_BENCH_CLOCK=cpu (see bench_timing)


def ctypes_only(fn):
    """fn run with the C extension switched off (the package's ctypes paths)."""
    def run():
        for m in _MODULES:
            m._FAST = None
        try:
            return fn()
        finally:
            for m in _MODULES:
                m._FAST = FAST
    return run


def us(s):
    return "-" if s is None else f"{s * 1e6:.2f}"


def main():
    print(f"libtensor {lt.__version__} ({lt.library_path}), C extension "
          f"{'on' if FAST else 'absent'}; NumPy {np.__version__}; PyTorch "
          f"{torch.__version__ if torch else 'absent'}; {os.cpu_count()} CPUs; median of {REPS}; "
          f"{'CPU' if CPU else 'wall'} time; load average {os.getloadavg()[0]:.1f}")
    head = (f"{'n':>5} {'case':26} {'lt us':>9} {'ctypes us':>9} {'NumPy us':>9} "
            f"{'torch us':>9} {'lt/NumPy':>8}")
    print(head)
    print("-" * len(head))
    for n in SIZES:
        a = np.random.default_rng(0).uniform(-1, 1, (n, n)).astype(np.float32)
        b, o = a.copy(), np.empty_like(a)
        t, tb, to = lt.tensor(a), lt.tensor(b), lt.tensor(o)
        plan = lt.plan_einsum("ij,jk->ik", t, tb)
        execute = _lib.fn("lt_plan_execute")
        handles = _lib.handle_array([t.handle, tb.handle])
        x, y, z = (torch.from_numpy(v) for v in (a, b, o)) if torch else (None,) * 3
        cases = [
            ("lt.add(np, np) | np.add", lambda: lt.add(a, b), lambda: np.add(a, b),
             x is not None and (lambda: torch.add(x, y))),
            ("t + t | a + a", lambda: t + tb, lambda: a + b, x is not None and (lambda: x + y)),
            ("lt.add(out=) | np.add(out=)", lambda: lt.add(a, b, out=o),
             lambda: np.add(a, b, out=o), x is not None and (lambda: torch.add(x, y, out=z))),
            ("lt.einsum(ij,jk->ik) | a@a", lambda: lt.einsum("ij,jk->ik", a, b),
             lambda: a @ b, x is not None and (lambda: x @ y)),
            ("plan(out=t) | bare execute", lambda: plan(t, tb, out=to),
             lambda: execute(plan.handle, handles, 2, None, 0, to.handle), None),
        ]
        for name, ours, ref, peer in cases:
            fns = [ours, ref] + ([ctypes_only(ours)] if FAST else []) + ([peer] if peer else [])
            time.sleep(0.2)
            got = median_group_seconds(fns, REPS, MIN_TIME)
            mine, theirs = got[0], got[1]
            slow = got[2] if FAST else None
            other = got[-1] if peer else None
            print(f"{n:>5} {name:26} {us(mine):>9} {us(slow):>9} {us(theirs):>9} "
                  f"{us(other):>9} {mine / theirs:8.2f}", flush=True)
        if FAST:
            # The plan call against the library's own lt_plan_execute run in a C loop: what
            # the binding adds per call (the aim's 2 us), whatever the plan itself costs.
            time.sleep(0.2)
            loops = max(1, int(MIN_TIME / max(FAST.time_plan(plan.handle, (t.handle, tb.handle),
                                                             to.handle, 1, CPU), 1e-7)))
            calls, floors = [], []
            for _ in range(REPS):
                calls.append(median_group_seconds([lambda: plan(t, tb, out=to)], 1, MIN_TIME)[0])
                floors.append(FAST.time_plan(plan.handle, (t.handle, tb.handle), to.handle,
                                             loops, CPU))
            call, floor = statistics.median(calls), statistics.median(floors)
            print(f"{n:>5} {'plan call - C-loop execute':26} {us(call - floor):>9} "
                  f"{'':>9} {us(floor):>9} {'':>9} {'(floor)':>8}", flush=True)


if __name__ == "__main__":
    main()

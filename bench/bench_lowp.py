#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Low-precision contractions (issue 21): bf16 and f16 2048^3 matmul ("ij,jk->ik") and batched
matmul ("bij,bjk->bik", 64 x 256^3) in libtensor and PyTorch, in one process, plus both
libraries' f32 GEMM of the same shapes. Prints GFLOP/s (median of LT_BENCH_REPS rounds,
default 5, with the spread min-max), our ratio to PyTorch, our low-precision rate over our own
f32 rate, and each result's error against a float64 product of the same rounded inputs
(max |got - ref| / max |ref|). Libraries alternate within each round, with a 0.2 s pause
between them; both get LT_BENCH_THREADS threads (default: libtensor's own count). libtensor runs
its default LT_LOWP_FAST mode and, as "lt-f32", LT_LOWP_F32 (plan option precision="f32").

    OMP_WAIT_POLICY=passive LIBTENSOR_PATH=build/src/libtensor.so \\
        /work/venv-bench/bin/python bench/bench_lowp.py
"""
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
import libtensor as lt  # noqa: E402

REPS = int(os.environ.get("LT_BENCH_REPS", "5"))
PAUSE = 0.2
CASES = [("matmul 2048^3", "ij,jk->ik", (2048, 2048), (2048, 2048)),
         ("batched 64x256^3", "bij,bjk->bik", (64, 256, 256), (64, 256, 256))]


def flops_of(sa, sb):
    return 2.0 * np.prod(sa) * sb[-1]


def timed(fn, reps=3):
    """Best of `reps` calls (after one warm-up), in seconds."""
    fn()
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best


def main():
    threads = int(os.environ.get("LT_BENCH_THREADS", "0")) or None
    try:
        import torch
    except ImportError:
        torch = None
        print("note: PyTorch not installed, skipped")
    if torch is not None and threads:
        torch.set_num_threads(threads)
    print(f"threads: torch {torch.get_num_threads() if torch else '-'}; load {os.getloadavg()}")
    rng = np.random.default_rng(21)
    summary = {}
    for name, expr, sa, sb in CASES:
        fl = flops_of(sa, sb)
        a32 = rng.standard_normal(sa, dtype=np.float32)
        b32 = rng.standard_normal(sb, dtype=np.float32)
        for dt in ("bfloat16", "float16", "float32"):
            runners = {}
            ta = lt.from_numpy(a32, dtype=dt)
            tb = lt.from_numpy(b32, dtype=dt)
            # The rounded inputs, as float64, for the reference product.
            ra = np.asarray(ta.numpy() if dt == "bfloat16" else ta, dtype=np.float64)
            rb = np.asarray(tb.numpy() if dt == "bfloat16" else tb, dtype=np.float64)
            ref = np.matmul(ra, rb)
            scale = np.abs(ref).max()
            modes = ("fast", "f32") if dt == "bfloat16" else ("fast",)
            for mode in modes:
                plan = lt.plan_einsum(expr, ta, tb, precision=mode)
                out = plan(ta, tb)
                runners["lt" if mode == "fast" else "lt-f32"] = (
                    lambda p=plan, o=out: p(ta, tb, out=o), out)
            if torch is not None:
                xa = torch.from_numpy(ra).to(getattr(torch, dt))
                xb = torch.from_numpy(rb).to(getattr(torch, dt))
                xc = torch.matmul(xa, xb)
                runners["torch"] = (lambda: torch.matmul(xa, xb, out=xc), xc)
            times = {k: [] for k in runners}
            for _ in range(REPS):
                for key, (fn, _) in runners.items():
                    time.sleep(PAUSE)
                    times[key].append(timed(fn, 1))
            for key, (fn, out) in runners.items():
                got = out.float().numpy() if key == "torch" else np.asarray(
                    out.numpy() if dt == "bfloat16" else out, dtype=np.float64)
                err = np.abs(np.asarray(got, dtype=np.float64) - ref).max() / scale
                rates = [fl / t / 1e9 for t in times[key]]
                print(f"{name:18s} {dt:9s} {key:7s} {statistics.median(rates):8.1f} GFLOP/s "
                      f"(spread {min(rates):.1f}-{max(rates):.1f})  err {err:.2e}")
            summary[(name, dt)] = {k: statistics.median(fl / t / 1e9 for t in v)
                                   for k, v in times.items()}
    print("\nsummary (median GFLOP/s): lt / torch, and lt over our own f32 GEMM of the shape")
    for (name, dt), med in summary.items():
        ours_f32 = summary[(name, "float32")]["lt"]
        vs_torch = f"{med['lt'] / med['torch']:.2f}x torch" if "torch" in med else "torch -"
        print(f"{name:18s} {dt:9s} lt {med['lt']:7.1f}  {vs_torch}  "
              f"{med['lt'] / ours_f32:.2f}x our f32")
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

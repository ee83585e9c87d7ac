#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Low-precision contractions (issue 21): bf16 and f16 2048^3 matmul ("ij,jk->ik") and batched
matmul ("bij,bjk->bik", 64 x 256^3) in libtensor and PyTorch, in one process, plus both
libraries' f32 GEMM of the same shapes; then f16 / bf16 elementwise sums and conversions beside
NumPy and PyTorch, against the two-thread copy measured in the same run; then int8 and int16
1024^3 matmuls (exact, wrapping as NumPy's) beside NumPy's and PyTorch's, over our f32 GEMM of
the shape. Prints GFLOP/s (median of LT_BENCH_REPS rounds,
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
PROBE_LIMIT_S = 5.0  # a peer slower than this per call is skipped (torch_usable)
ELEMWISE_N = 1 << 24
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


def torch_usable(torch, dt, name, expr, sa, sb):
    """Whether PyTorch's matmul of this dtype finishes the case in reasonable time: a CPU without
    AVX512-BF16 / FP16 or AMX leaves it scalar code (about 1 GFLOP/s on an AVX2 Zen 3, so a
    2048^3 matmul takes most of a minute per call). Probed on the case shrunk to 1/8 along each
    axis; skipped with a note when the full case would take over PROBE_LIMIT_S per call."""
    def shrink(shape):  # a batch axis (the first of three) keeps its extent
        return tuple(x if len(shape) == 3 and i == 0 else max(1, x // 8) for i, x in enumerate(shape))
    small_a, small_b = shrink(sa), shrink(sb)
    xa = torch.ones(small_a, dtype=getattr(torch, dt))
    xb = torch.ones(small_b, dtype=getattr(torch, dt))
    rate = flops_of(small_a, small_b) / timed(lambda: torch.matmul(xa, xb), 2)
    if flops_of(sa, sb) / rate > PROBE_LIMIT_S:
        print(f"note: torch skipped for {name} {dt}: {rate / 1e9:.2f} GFLOP/s on "
              f"{expr} {small_a} x {small_b} (no vector kernels for {dt} on this CPU)")
        return False
    return True


def copy_limit(torch):
    """The machine's memory limit in this run: the best two-thread copy (bytes read + written,
    GB/s) of a 256 MiB f32 array by NumPy (one thread) and PyTorch."""
    n = ELEMWISE_N * 4
    x, y = np.ones(n, np.float32), np.empty(n, np.float32)
    best = 8.0 * n / timed(lambda: np.copyto(y, x))
    if torch is not None:
        tx, ty = torch.ones(n), torch.empty(n)
        best = max(best, 8.0 * n / timed(lambda: ty.copy_(tx)))
    return best / 1e9


def elementwise(torch, limit):
    """f16 / bf16 elementwise work: the sum of two arrays, and the conversions from and to
    f32, in libtensor, NumPy (f16 only: it has no bf16) and PyTorch, as GB/s of the bytes each
    reads and writes, and as a share of the copy limit. Results must equal NumPy's / the
    reference conversion bit for bit (checked)."""
    n = ELEMWISE_N
    rng = np.random.default_rng(7)
    x32 = rng.standard_normal(n, dtype=np.float32)
    y32 = rng.standard_normal(n, dtype=np.float32)
    print(f"\nelementwise, {n} elements; copy limit {limit:.1f} GB/s (bytes read + written)")
    for dt in ("float16", "bfloat16"):
        tx32, ty32 = lt.from_numpy(x32), lt.from_numpy(y32)
        tx, ty = tx32.astype(dt), ty32.astype(dt)
        cases = {"x + y": (6.0 * n, {"lt": lambda: tx + ty}),
                 "f32 -> " + dt: (6.0 * n, {"lt": lambda: tx32.astype(dt)}),
                 dt + " -> f32": (6.0 * n, {"lt": lambda: tx.astype("float32")})}
        if dt == "float16":
            nx, ny = x32.astype(np.float16), y32.astype(np.float16)
            cases["x + y"][1]["numpy"] = lambda: nx + ny
            cases["f32 -> " + dt][1]["numpy"] = lambda: x32.astype(np.float16)
            cases[dt + " -> f32"][1]["numpy"] = lambda: nx.astype(np.float32)
            same = np.array_equal((tx + ty).numpy().view(np.uint16), (nx + ny).view(np.uint16))
            print(f"  f16 x + y equals NumPy's bit for bit: {same}")
        if torch is not None:
            tdt = getattr(torch, dt)
            qx, qy, qx32 = torch.from_numpy(x32).to(tdt), torch.from_numpy(y32).to(tdt), \
                torch.from_numpy(x32)
            cases["x + y"][1]["torch"] = lambda: qx + qy
            cases["f32 -> " + dt][1]["torch"] = lambda: qx32.to(tdt)
            cases[dt + " -> f32"][1]["torch"] = lambda: qx.float()
        for op, (nbytes, runners) in cases.items():
            rates = {}
            for key, fn in runners.items():
                time.sleep(PAUSE)
                rates[key] = nbytes / statistics.median(timed(fn, 1) for _ in range(REPS)) / 1e9
            peers = "  ".join(f"{k} {v:6.1f}" for k, v in rates.items() if k != "lt")
            best_peer = max((v for k, v in rates.items() if k != "lt"), default=None)
            vs = f"  {rates['lt'] / best_peer:.2f}x best peer" if best_peer else ""
            print(f"  {dt:9s} {op:17s} lt {rates['lt']:6.1f} GB/s ({rates['lt'] / limit:.2f} of "
                  f"copy)  {peers}{vs}")


INT_N = 1024


def integers(torch):
    """int8 / int16 matmul: libtensor runs them as an exact float GEMM (f32 while every partial
    sum stays below 2^24, else f64), NumPy and PyTorch in integer loops. Exactness is checked
    against an int64 product wrapped to the dtype; NumPy is timed once (seconds per call)."""
    n = INT_N
    rng = np.random.default_rng(22)
    fl = 2.0 * n ** 3
    a32 = rng.standard_normal((n, n), dtype=np.float32)
    b32 = rng.standard_normal((n, n), dtype=np.float32)
    t32a, t32b = lt.from_numpy(a32), lt.from_numpy(b32)
    p32 = lt.plan_einsum("ij,jk->ik", t32a, t32b)
    o32 = p32(t32a, t32b)
    f32 = fl / min(timed(lambda: p32(t32a, t32b, out=o32), 1) for _ in range(REPS)) / 1e9
    print(f"\ninteger matmul {n}^3 (GOP/s, median of {REPS}); our f32 GEMM of the shape "
          f"{f32:.1f} GFLOP/s")
    for dt in (np.int8, np.int16):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, (n, n), endpoint=True).astype(dt)
        b = rng.integers(info.min, info.max, (n, n), endpoint=True).astype(dt)
        ta, tb = lt.from_numpy(a), lt.from_numpy(b)
        plan = lt.plan_einsum("ij,jk->ik", ta, tb)
        out = plan(ta, tb)
        runners = {"lt": lambda: plan(ta, tb, out=out)}
        if torch is not None:
            xa, xb = torch.from_numpy(a), torch.from_numpy(b)
            xc = torch.matmul(xa, xb)
            runners["torch"] = lambda: torch.matmul(xa, xb, out=xc)
        rates = {k: [] for k in runners}
        for _ in range(REPS):
            for key, fn in runners.items():
                time.sleep(PAUSE)
                rates[key].append(fl / timed(fn, 1) / 1e9)
        time.sleep(PAUSE)
        t0 = time.perf_counter()
        got_np = np.matmul(a, b)
        rates["numpy"] = [fl / (time.perf_counter() - t0) / 1e9]
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(dt)
        exact = np.array_equal(np.asarray(out), want) and np.array_equal(got_np, want)
        med = {k: statistics.median(v) for k, v in rates.items()}
        peers = "  ".join(f"{k} {v:7.2f}" for k, v in med.items() if k != "lt")
        best = max(v for k, v in med.items() if k != "lt")
        print(f"  {np.dtype(dt).name:6s} lt {med['lt']:7.2f}  {peers}  ({med['lt'] / best:.0f}x "
              f"the best peer, {med['lt'] / f32:.2f} of our f32 GEMM)  exact {exact}")


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
            if torch is not None and torch_usable(torch, dt, name, expr, sa, sb):
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
    elementwise(torch, copy_limit(torch))
    integers(torch)
    print(f"load after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

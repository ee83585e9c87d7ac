#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""TCCG-48 (issue 21): the 48 contractions of the TCCG benchmark in f32, and the first 12 in
f64, side by side in one process with the peers that import (NumPy's einsum, PyTorch's einsum;
pytblis and JAX when installed, else skipped with a note), each case also run as a plain GEMM
of the same m, n, k (NumPy's OpenBLAS and PyTorch's BLAS; the faster is "best GEMM"), and set
against the machine's roofline measured in the same run:

    roofline time = max(flops / best square-GEMM rate, bytes of A + B + C / copy bandwidth)

Prints per-case GFLOP/s, our ratio to the best plain GEMM, to the best peer and to the
roofline, then geometric means and medians. Libraries run in turn with a pause between them
(OpenBLAS's threads keep spinning after a call and slow whatever runs next); every figure is
the median of LT_BENCH_REPS (default 5) rounds. Extents are the TCCG paper's, scaled evenly so
each case does about LT_BENCH_GFLOP (default 2) GFLOP. All libraries get LT_BENCH_THREADS
threads (default: libtensor's own count).

    OMP_WAIT_POLICY=passive LIBTENSOR_PATH=build/src/libtensor.so \\
        /work/venv-bench/bin/python bench/bench_tccg.py

LT_BENCH_BASELINE=<another libtensor.so> adds that build as one more runner (not a peer) and
prints our ratio to it per case and in geometric mean.
"""
import math
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings",
                                "python"))
import libtensor as lt  # noqa: E402


def _load_baseline(path):
    """A second copy of the binding over another build of the library (LT_BENCH_BASELINE), so
    that two builds are compared in one process, alternately, under the same load."""
    if not path:
        return None
    import importlib
    saved = {k: v for k, v in sys.modules.items() if k == "libtensor" or k.startswith("libtensor.")}
    for k in saved:
        del sys.modules[k]
    old_env = os.environ.get("LIBTENSOR_PATH")
    os.environ["LIBTENSOR_PATH"] = path
    try:
        return importlib.import_module("libtensor")
    finally:
        for k in [k for k in sys.modules if k == "libtensor" or k.startswith("libtensor.")]:
            del sys.modules[k]
        sys.modules.update(saved)
        if old_env is None:
            del os.environ["LIBTENSOR_PATH"]
        else:
            os.environ["LIBTENSOR_PATH"] = old_env


BASE = _load_baseline(os.environ.get("LT_BENCH_BASELINE"))

REPS = int(os.environ.get("LT_BENCH_REPS", 5))
GFLOP = float(os.environ.get("LT_BENCH_GFLOP", 2.0))
PAUSE = float(os.environ.get("LT_BENCH_PAUSE", 0.2))
SETTLE = int(os.environ.get("LT_BENCH_SETTLE", 1))  # untimed calls after each pause (rounds)
ONLY = os.environ.get("LT_BENCH_ONLY")  # comma-separated case numbers (1-based), for probing

# (C-A-B, extents of a, b, c, ... in order), as in the TCCG benchmark's sizes
TCCG48 = [
    ("abc-bda-dc", "312 312 24 312"), ("abc-dca-bd", "312 24 296 312"),
    ("abcd-dbea-ec", "72 72 24 72 72"), ("abcd-deca-be", "72 24 72 72 72"),
    ("abcd-ebad-ce", "72 72 24 72 72"), ("abcde-efbad-cf", "48 32 24 32 48 32"),
    ("abcde-ecbfa-fd", "48 32 32 24 48 48"), ("abcde-efcad-bf", "48 24 32 32 48 32"),
    ("abcd-ea-ebcd", "72 72 72 72 72"), ("abcd-eb-aecd", "72 72 72 72 72"),
    ("abcd-ec-abed", "72 72 72 72 72"), ("ab-ac-cb", "5136 5120 5136"),
    ("ab-acd-dbc", "312 296 296 312"), ("ab-cad-dcb", "312 296 312 312"),
    ("abc-acd-db", "312 296 296 312"), ("abc-ad-bdc", "312 312 296 296"),
    ("abc-adc-bd", "312 312 296 296"), ("abc-adc-db", "312 296 296 312"),
    ("abc-adec-ebd", "72 72 72 72 72"), ("abcd-aebf-dfce", "72 72 72 72 72 72"),
    ("abcd-aebf-fdec", "72 72 72 72 72 72"), ("abcd-aecf-bfde", "72 72 72 72 72 72"),
    ("abcd-aecf-fbed", "72 72 72 72 72 72"), ("abcd-aedf-bfce", "72 72 72 72 72 72"),
    ("abcd-aedf-fbec", "72 72 72 72 72 72"), ("abcd-aefb-fdce", "72 72 72 72 72 72"),
    ("abcd-aefc-fbed", "72 72 72 72 72 72"), ("abcd-eafb-fdec", "72 72 72 72 72 72"),
    ("abcd-eafc-bfde", "72 72 72 72 72 72"), ("abcd-eafd-fbec", "72 72 72 72 72 72"),
    ("abcdef-dega-gfbc", "24 16 16 24 16 16 24"), ("abcdef-degb-gfac", "24 16 16 24 16 16 24"),
    ("abcdef-degc-gfab", "24 16 16 24 16 16 24"), ("abcdef-dfga-gebc", "24 16 16 24 16 16 24"),
    ("abcdef-dfgb-geac", "24 16 16 24 16 16 24"), ("abcdef-dfgc-geab", "24 16 16 24 16 16 24"),
    ("abcdef-efga-gdbc", "24 16 16 16 24 16 24"), ("abcdef-efgb-gdac", "24 16 16 16 24 16 24"),
    ("abcdef-efgc-gdab", "24 16 16 16 24 16 24"), ("abcdef-gdab-efgc", "24 16 16 16 24 16 24"),
    ("abcdef-gdac-efgb", "24 16 16 16 24 16 24"), ("abcdef-gdbc-efga", "24 16 16 16 24 16 24"),
    ("abcdef-geab-dfgc", "24 16 16 24 16 16 24"), ("abcdef-geac-dfgb", "24 16 16 24 16 16 24"),
    ("abcdef-gebc-dfga", "24 16 16 24 16 16 24"), ("abcdef-gfab-degc", "24 16 16 24 16 16 24"),
    ("abcdef-gfac-degb", "24 16 16 24 16 16 24"), ("abcdef-gfbc-dega", "24 16 16 24 16 16 24"),
]
F64_CASES = 12


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def case_shape(spec, sizes):
    """Labels, extents scaled to about GFLOP, flops, and the GEMM m, n, k."""
    c, a, b = spec.split("-")
    ext = {chr(97 + i): int(s) for i, s in enumerate(sizes.split())}
    flops = 2.0 * math.prod(ext.values())
    scale = (GFLOP * 1e9 / flops) ** (1.0 / len(ext))
    ext = {k: max(1, round(v * scale)) for k, v in ext.items()}
    m = math.prod(ext[x] for x in a if x in c)
    n = math.prod(ext[x] for x in b if x in c)
    k = math.prod(ext[x] for x in a if x not in c)
    return (c, a, b), ext, 2.0 * m * n * k, (m, n, k)


class Peers:
    """The libraries that import, each a maker of a zero-argument runner for a case."""

    def __init__(self, threads):
        self.names, self.notes = ["numpy"], []
        try:
            from threadpoolctl import threadpool_limits
            self._limits = threadpool_limits(limits=threads)
        except Exception as exc:
            self.notes.append(f"threadpoolctl missing ({exc}): NumPy's BLAS keeps its own count")
        try:
            import torch
            torch.set_num_threads(threads)
            self.torch = torch
            self.names.append("torch")
        except Exception as exc:
            self.torch = None
            self.notes.append(f"PyTorch not installed ({type(exc).__name__}): skipped")
        try:
            import pytblis
            pytblis.set_num_threads(threads)
            self.tblis = pytblis
            self.names.append("tblis")
        except Exception as exc:
            self.tblis = None
            self.notes.append(f"pytblis not installed ({type(exc).__name__}): skipped")
        try:
            import jax
            import jax.numpy as jnp
            jax.config.update("jax_enable_x64", True)
            self.jax, self.jnp = jax, jnp
            self.names.append("jax")
            self.notes.append("jax: XLA's CPU client picks its own thread count (all cores "
                              "here); outputs are allocated per call (no out=)")
        except Exception as exc:
            self.jax = None
            self.notes.append(f"JAX not installed ({type(exc).__name__}): skipped")

    def _jax_runner(self, expr, A, B):
        f = self.jax.jit(lambda x, y: self.jnp.einsum(expr, x, y))
        ja, jb = self.jax.device_put(A), self.jax.device_put(B)
        return lambda: f(ja, jb).block_until_ready()

    def einsum(self, name, expr, A, B, C):
        if name == "numpy":
            return lambda: np.einsum(expr, A, B, out=C, optimize=True)
        if name == "tblis":
            return lambda: self.tblis.contract(expr, A, B, out=C)
        if name == "jax":
            return self._jax_runner(expr, A, B)
        ta, tb = self.torch.from_numpy(A), self.torch.from_numpy(B)
        return lambda: self.torch.einsum(expr, ta, tb)

    def gemm(self, name, a, b, c):
        if name == "numpy":
            return lambda: np.matmul(a, b, out=c)
        if name == "tblis":
            return lambda: self.tblis.contract("ik,kj->ij", a, b, out=c)
        if name == "jax":
            return self._jax_runner("ik,kj->ij", a, b)
        ta, tb, tc = (self.torch.from_numpy(x) for x in (a, b, c))
        return lambda: self.torch.matmul(ta, tb, out=tc)


def timed(fn, min_time=0.01):
    """Seconds per call: one call, or a loop of them when one is very short."""
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    if dt >= min_time:
        return dt
    n = max(1, int(min_time / max(dt, 1e-7)))
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def rounds(runners):
    """Median seconds of each runner over REPS rounds, the runners in turn, paused between.
    After each pause, SETTLE untimed calls of the runner come before its timed one: the pause
    keeps the previous library's spinning threads off this one, and the untimed call takes this
    library's own wake-up after the idle pause (PyTorch's and JAX's pools and the hypervisor's
    idle vCPUs make the first call after a pause up to 2x slower, by an amount that depends on
    which library ran before), which bench_steady measures on its own (issue 25)."""
    for fn in runners.values():
        fn()  # warm: plans, pages, BLAS buffers
        time.sleep(PAUSE)
    samples = {name: [] for name in runners}
    for _ in range(REPS):
        for name, fn in runners.items():
            for _ in range(SETTLE):
                fn()
            samples[name].append(timed(fn))
            time.sleep(PAUSE)
    return {name: statistics.median(v) for name, v in samples.items()}


def machine(peers):
    """Best square-GEMM rate (flop/s) and copy bandwidth (bytes read + written per second)."""
    n = 2048
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n),
                                                                             dtype=np.float32)
    c = np.empty((n, n), np.float32)
    runners = {p: peers.gemm(p, a, b, c) for p in peers.names}
    ta, tb, tc = (lt.from_numpy(x) for x in (a, b, c))
    plan = lt.plan_einsum("ij,jk->ik", ta, tb)
    runners["libtensor"] = lambda: plan(ta, tb, out=tc)
    t = rounds(runners)
    gemm = {k: 2.0 * n ** 3 / v for k, v in t.items()}
    src = np.ones(32 << 20, np.float32)
    dst = np.empty_like(src)
    copies = {"numpy": lambda: np.copyto(dst, src)}
    if peers.torch is not None:
        ts, td = peers.torch.from_numpy(src), peers.torch.from_numpy(dst)
        copies["torch"] = lambda: td.copy_(ts)
    tcopy = rounds(copies)
    bw = {k: 2.0 * src.nbytes / v for k, v in tcopy.items()}
    return gemm, bw


def run_case(idx, spec, sizes, dtype, peers, roof):
    (c, a, b), ext, flops, (m, n, k) = case_shape(spec, sizes)
    expr = f"{a},{b}->{c}"
    rng = np.random.default_rng(idx)
    A = rng.standard_normal([ext[x] for x in a]).astype(dtype)
    B = rng.standard_normal([ext[x] for x in b]).astype(dtype)
    C = np.empty([ext[x] for x in c], dtype)
    ga, gb, gc = np.ones((m, k), dtype), np.ones((k, n), dtype), np.empty((m, n), dtype)
    tA, tB, tC = lt.from_numpy(A), lt.from_numpy(B), lt.from_numpy(C)
    plan = lt.plan_einsum(expr, tA, tB)
    runners = {"libtensor": lambda: plan(tA, tB, out=tC)}
    if BASE is not None:
        bA, bB, bC = BASE.from_numpy(A), BASE.from_numpy(B), BASE.from_numpy(np.empty_like(C))
        bplan = BASE.plan_einsum(expr, bA, bB)
        runners["baseline"] = lambda: bplan(bA, bB, out=bC)
    for p in peers.names:
        runners[p] = peers.einsum(p, expr, A, B, C)
    for p in peers.names:
        runners["gemm:" + p] = peers.gemm(p, ga, gb, gc)
    t = rounds(runners)
    want = np.einsum(expr, A.astype(np.float64), B.astype(np.float64))
    err = float(np.max(np.abs(C - want)) / max(1e-30, float(np.max(np.abs(want)))))
    rate = {name: flops / v / 1e9 for name, v in t.items()}
    best_gemm = max(v for name, v in rate.items() if name.startswith("gemm:"))
    best_peer = max(rate[p] for p in peers.names)
    es = np.dtype(dtype).itemsize
    nbytes = (A.size + B.size + C.size) * es
    rate_scale = 1.0 if dtype == np.float32 else 0.5
    t_roof = max(flops / (roof[0] * rate_scale), nbytes / roof[1])
    ours = rate["libtensor"]
    row = dict(gemm=ours / best_gemm, peer=ours / best_peer, roof=t_roof / t["libtensor"])
    base_txt = ""
    if BASE is not None:
        row["base"] = ours / rate["baseline"]
        base_txt = f" /base {row['base']:4.2f}"
    peers_txt = " ".join(f"{p} {rate[p]:6.1f}" for p in peers.names)
    gemm_txt = " ".join(f"{p[5:]} {rate[p]:6.1f}" for p in rate if p.startswith("gemm:"))
    print(f"{idx:2d} {spec:17s} {np.dtype(dtype).name:7s} m={m:<8d} n={n:<6d} k={k:<5d} "
          f"ours {ours:6.1f} | {peers_txt} | gemm {gemm_txt} | /gemm {row['gemm']:4.2f} "
          f"/peer {row['peer']:4.2f} /roof {row['roof']:4.2f}{base_txt} err {err:.1e}", flush=True)
    if os.environ.get("LT_BENCH_DESC"):
        print("   ", plan.describe())
    return row


def summary(name, rows):
    if not rows:
        return
    g = [r["gemm"] for r in rows]
    p = [r["peer"] for r in rows]
    f = [r["roof"] for r in rows]
    below = sum(1 for x in p if x < 1.0)
    print(f"{name}: geomean /best-gemm {geomean(g):.2f} (aim >= 1.0), /best-peer geomean "
          f"{geomean(p):.2f} min {min(p):.2f} ({below} of {len(p)} below 1.0; aim none), "
          f"roofline median {statistics.median(f):.2f} (aim >= 0.6)")
    if rows and "base" in rows[0]:
        b = [r["base"] for r in rows]
        print(f"{name}: against the baseline build: geomean {geomean(b):.2f}, min {min(b):.2f}")


def main():
    threads = int(os.environ.get("LT_BENCH_THREADS", 0)) or lt.context().num_threads
    lt.context().num_threads = threads
    if BASE is not None:
        BASE.context().num_threads = threads
        print(f"baseline build {os.environ['LT_BENCH_BASELINE']} runs beside this one")
    peers = Peers(threads)
    print(f"numpy {np.__version__}, {threads} threads each, medians of {REPS} rounds, "
          f"~{GFLOP} GFLOP per case, {PAUSE} s pauses, each followed by {SETTLE} untimed call(s); load average {os.getloadavg()}")
    for note in peers.notes:
        print("note:", note)
    gemm, bw = machine(peers)
    roof = (max(gemm.values()), max(bw.values()))
    print("machine: square 2048 f32 GEMM " +
          ", ".join(f"{k} {v / 1e9:.1f}" for k, v in gemm.items()) + " GFLOP/s; copy " +
          ", ".join(f"{k} {v / 1e9:.1f}" for k, v in bw.items()) +
          f" GB/s; roofline from {roof[0] / 1e9:.1f} GFLOP/s f32 and {roof[1] / 1e9:.1f} GB/s")
    only = {int(x) for x in ONLY.split(",")} if ONLY else None
    results = {np.float32: [], np.float64: []}
    for dtype, count in ((np.float32, 48), (np.float64, F64_CASES)):
        for i, (spec, sizes) in enumerate(TCCG48[:count], 1):
            if only is None or i in only:
                results[dtype].append(run_case(i, spec, sizes, dtype, peers, roof))
    summary("f32", results[np.float32])
    summary("f64 (first 12)", results[np.float64])
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()

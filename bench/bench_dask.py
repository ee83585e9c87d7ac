#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""libtensor.dask (issue 24 A): the overhead of a sliced einsum run on a dask.distributed
LocalCluster against the same slices run in one process, side by side with dask.array.einsum
over NumPy chunks (and over Tensor chunks) of the same contraction.

    LIBTENSOR_PATH=build/src/libtensor.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/bench_dask.py [--workers 2] [--bond 384] [--reps 5]

Dask comes from Debian (python3-dask, python3-distributed); without it the script says so and
exits. The network is a ring of four bond x bond matrices (every label summed); the memory
limit makes the planner slice it. Rows:
  one process, all slices   EinsumPlan(memory_limit) called once: the sliced run in one process
  one process, by shares    the same shares the cluster runs, one after another, each
                            rebuilding its plan from the shipped path (the tasks' own work)
  dask, libtensor slices    libtensor.dask.einsum on the cluster (planning, scatter, tasks,
                            tree sum, gather)
  dask.array.einsum numpy   da.einsum over NumPy chunks split along the sliced label
  dask.array.einsum tensor  the same over Tensor chunks (libtensor kernels per block)
The limit to compare with is "one process, all slices" / workers (perfect scaling): each
distributed row prints its time over that limit. Runs alternate; medians and spreads
(max/min) over --reps; the load average is printed next to the figures (2 shared cores here,
so expect noise)."""
import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

try:
    import dask.array as da  # noqa: E402
    import distributed  # noqa: E402
except ImportError:
    raise SystemExit("dask/distributed not installed (Debian: python3-dask python3-distributed):"
                     " nothing to measure")

import libtensor as lt  # noqa: E402
import libtensor.dask as ltd  # noqa: E402

EXPR = "ab,bc,cd,da->"


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--bond", type=int, default=384)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--limit", type=int, default=0, help="memory limit bytes (default bond^2*8/4)")
    args = ap.parse_args()
    n = args.bond
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((n, n)) / n for _ in range(4)]
    limit = args.limit or n * n * 8 // 4
    plan = lt.plan_einsum(EXPR, *arrays, memory_limit=limit)
    pairs, labels, n_slices = ltd._pairs_and_slicing(plan.handle)
    want = np.einsum(EXPR, *arrays, optimize=True)
    print(f"# {EXPR} bond {n}, memory limit {limit} bytes: sliced labels {labels}, "
          f"{n_slices} slices")
    print(f"# load average at start: {os.getloadavg()}")
    cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                       processes=True, host="127.0.0.1",
                                       dashboard_address=":0", silence_logs=50)
    client = distributed.Client(cluster)
    shares = 2 * args.workers
    shipped = ltd._ShippedPlan(EXPR, pairs, limit, None, labels, n_slices, plan.shape,
                               plan.dtype)
    bounds = [n_slices * i // shares for i in range(shares + 1)]
    chunk = max(1, n // shares)
    np_chunks = [da.from_array(a, chunks=(n, chunk) if i == 2 else (chunk, n) if i == 3
                               else (n, n)) for i, a in enumerate(arrays)]
    t_chunks = [ltd.from_array(a, chunks=c.chunks) for a, c in zip(arrays, np_chunks)]
    rows = {
        "one process, all slices": lambda: plan(*arrays),
        "one process, by shares": lambda: sum(
            ltd._run_share(shipped, bounds[i], bounds[i + 1] - bounds[i], *arrays)
            for i in range(shares)),
        "dask, libtensor slices": lambda: ltd.einsum(EXPR, *arrays, memory_limit=limit,
                                                     client=client, shares=shares),
        "dask.array.einsum numpy": lambda: client.compute(
            da.einsum(EXPR, *np_chunks, optimize=True)).result(),
        "dask.array.einsum tensor": lambda: client.compute(
            da.einsum(EXPR, *t_chunks)).result(),
    }
    times = {k: [] for k in rows}
    for k, fn in rows.items():  # warm-up (imports on workers, plan caches) and check
        _, got = timed(fn)
        err = abs(float(np.asarray(got)) - float(want)) / max(abs(float(want)), 1e-300)
        print(f"# {k}: relative difference from numpy {err:.2e}")
    loads = []
    for _ in range(args.reps):
        for k, fn in rows.items():
            time.sleep(0.2)
            t, _ = timed(fn)
            times[k].append(t)
        loads.append(os.getloadavg()[0])
    base = statistics.median(times["one process, all slices"])
    ideal = base / args.workers
    print(f"# {args.workers} worker processes x 1 thread; {shares} shares; reps {args.reps}; "
          f"load average (1 min) during runs: median {statistics.median(loads):.1f}, "
          f"range {min(loads):.1f}-{max(loads):.1f}")
    print(f"{'row':28s} {'median s':>9s} {'spread':>7s} {'/ 1 process':>12s} "
          f"{'/ ideal':>8s}")
    for k, ts in times.items():
        med = statistics.median(ts)
        print(f"{k:28s} {med:9.4f} {max(ts) / min(ts):7.2f} {med / base:12.2f} "
              f"{med / ideal:8.2f}")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: MIT
"""Timing shared by the Python benchmarks: one definition of a median sample.

LT_BENCH_CLOCK=cpu times with the process's CPU time instead of the wall clock: on a machine
shared by many jobs (load average far above the core count) wall times mostly measure the
waiting for a core; CPU time measures the work (single-threaded calls only)."""
import os
import statistics
import time

CLOCK = time.process_time if os.environ.get("LT_BENCH_CLOCK") == "cpu" else time.perf_counter


def _loops_for(fn, min_time):
    """Calls of fn per sample so that a sample lasts at least min_time (after a warm-up)."""
    fn()
    start = CLOCK()
    fn()
    once = max(CLOCK() - start, 1e-7)
    return max(1, int(min_time / once))


def _sample(fn, inner):
    start = CLOCK()
    for _ in range(inner):
        fn()
    return (CLOCK() - start) / inner


def median_pair_seconds(fn_a, fn_b, reps, min_time=0.0, pause=0.0):
    """Medians of fn_a and fn_b over `reps` samples each, taken alternately, so that a burst of
    load from elsewhere on a shared machine hits both sides rather than skewing their ratio.
    `pause` seconds of sleep before each sample keep one side's spinning thread pool (OpenBLAS's
    spins ~0.1 s after a call) from slowing the other's sample."""
    inner_a, inner_b = _loops_for(fn_a, min_time), _loops_for(fn_b, min_time)
    a, b = [], []
    for _ in range(reps):
        time.sleep(pause)
        a.append(_sample(fn_a, inner_a))
        time.sleep(pause)
        b.append(_sample(fn_b, inner_b))
    return statistics.median(a), statistics.median(b)


def median_seconds(fn, reps, min_time=0.0):
    """Median wall time of fn() over `reps` samples, after one warm-up call (page faults, plan
    caches, thread pools); each sample loops fn enough times to last at least min_time."""
    fn()
    start = CLOCK()
    fn()
    once = max(CLOCK() - start, 1e-7)
    inner = max(1, int(min_time / once))
    samples = []
    for _ in range(reps):
        start = CLOCK()
        for _ in range(inner):
            fn()
        samples.append((CLOCK() - start) / inner)
    return statistics.median(samples)


def median_group_seconds(fns, reps, min_time=0.0):
    """Medians of every fn in `fns` over `reps` samples each, the fns taking turns within each
    round (median_pair_seconds for any number of sides)."""
    inners = [_loops_for(fn, min_time) for fn in fns]
    samples = [[] for _ in fns]
    for _ in range(reps):
        for fn, inner, out in zip(fns, inners, samples):
            out.append(_sample(fn, inner))
    return [statistics.median(s) for s in samples]

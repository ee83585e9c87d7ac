# SPDX-License-Identifier: MIT
"""Timing shared by the Python benchmarks: one definition of a median sample."""
import statistics
import time


def _loops_for(fn, min_time):
    """Calls of fn per sample so that a sample lasts at least min_time (after a warm-up)."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, int(min_time / once))


def _sample(fn, inner):
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def median_pair_seconds(fn_a, fn_b, reps, min_time=0.0):
    """Medians of fn_a and fn_b over `reps` samples each, taken alternately, so that a burst of
    load from elsewhere on a shared machine hits both sides rather than skewing their ratio."""
    inner_a, inner_b = _loops_for(fn_a, min_time), _loops_for(fn_b, min_time)
    a, b = [], []
    for _ in range(reps):
        a.append(_sample(fn_a, inner_a))
        b.append(_sample(fn_b, inner_b))
    return statistics.median(a), statistics.median(b)


def median_seconds(fn, reps, min_time=0.0):
    """Median wall time of fn() over `reps` samples, after one warm-up call (page faults, plan
    caches, thread pools); each sample loops fn enough times to last at least min_time."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    inner = max(1, int(min_time / once))
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)

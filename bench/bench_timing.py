"""Timing shared by the Python benchmarks: one definition of a median sample."""
import statistics
import time


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

# SPDX-License-Identifier: MIT
"""Nothing grows across 100k calls: Python objects (tracemalloc), held arrays, process RSS."""
import gc
import os
import tracemalloc

import numpy as np
import pytest

import libtensor as lt

CALLS = int(os.environ.get("LT_MEMORY_CALLS", "100000"))
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def assert_flat(call, calls=CALLS):
    """Runs `call` a few times to warm caches, then `calls` times: 90% of them with the process
    RSS measured around them (it must stay within a bound far below what leaking one small
    allocation per call would add), the last 10% under tracemalloc (the Python heap must not
    grow; tracemalloc slows every allocation, hence only a slice)."""
    for _ in range(200):
        call()
    gc.collect()
    held = lt.held_count()
    traced = calls // 10
    rss_before = rss_bytes()
    for _ in range(calls - traced):
        call()
    gc.collect()
    rss_growth = rss_bytes() - rss_before
    tracemalloc.start()
    py_before = tracemalloc.get_traced_memory()[0]
    for _ in range(traced):
        call()
    gc.collect()
    py_growth = tracemalloc.get_traced_memory()[0] - py_before
    tracemalloc.stop()
    assert lt.held_count() == held
    assert py_growth < 64 * 1024, f"Python heap grew by {py_growth} bytes over {traced} calls"
    # 90k calls leaking even 32 bytes each would add 2.9 MB.
    assert rss_growth < 1024 * 1024 + calls * 4, f"RSS grew by {rss_growth} bytes"


def test_wrap_unwrap_flat():
    a = np.random.default_rng(1).uniform(size=(4, 5))[:, ::2]

    def call():
        lt.tensor(a).T.numpy()

    assert_flat(call)


def test_einsum_flat():
    rng = np.random.default_rng(2)
    a, b = rng.uniform(size=(3, 4)), rng.uniform(size=(4, 2)).T

    def call():
        lt.einsum("ij,kj->ik", a, b)

    assert_flat(call)


def test_add_flat():
    rng = np.random.default_rng(3)
    a, b = rng.uniform(size=(3, 4)).astype(np.float32), rng.uniform(size=(4,))

    def call():
        lt.add(a, b)

    assert_flat(call)


def test_plan_flat():
    rng = np.random.default_rng(4)
    a, b = rng.uniform(size=(3, 4)), rng.uniform(size=(4, 2))
    plan = lt.plan_einsum("ij,jk->ik", a, b)
    out = np.empty((3, 2))

    def call():
        plan(a, b, out=out)

    assert_flat(call, CALLS // 2)


def test_failing_calls_do_not_leak():
    t = lt.tensor(np.ones((2, 3)))

    def call():
        with pytest.raises(lt.ShapeMismatchError):
            t.reshape(7)

    assert_flat(call, CALLS // 10)


def test_checker_detects_leaks():
    """The checks above can fail: a call keeping 64 bytes per call alive is caught."""
    kept = []
    with pytest.raises(AssertionError):
        assert_flat(lambda: kept.append(bytes(64)), 20000)
    kept.clear()
    a = np.ones((2, 2))
    with pytest.raises(AssertionError):
        assert_flat(lambda: kept.append(lt.tensor(a)), 2000)

# SPDX-License-Identifier: MIT
"""The lean-call paths give the same answers as the general ones: cached wrappers of NumPy
operands follow the array's current values and layout, and the plan's one-call path checks
what the general path checks."""
import gc

import numpy as np
import pytest

import libtensor as lt
from conftest import assert_close, random_array


def test_cached_wrapper_sees_new_values_and_layouts(rng):
    a = random_array(rng, (4, 6))
    b = random_array(rng, (4, 6))
    assert_close(lt.add(a, b), a + b)
    a[...] = 2.0  # same object, new values: no stale copy
    assert_close(lt.add(a, b), 2.0 + b)
    a.shape = (6, 4)  # same object, new shape: not the cached wrapper
    with pytest.raises(lt.LibtensorError):
        lt.add(a, b)
    assert_close(lt.add(a, b.reshape(6, 4)), 2.0 + b.reshape(6, 4))
    c = a.astype(np.int32)  # converted (a copy): never cached
    first = lt.add(c, 1)
    c[...] = 5
    np.testing.assert_array_equal(lt.add(c, 1), np.full((6, 4), 6))
    assert first[0, 0] == 3
    lt.convert.clear_wrap_cache()


def test_cache_holds_little():
    lt.convert.clear_wrap_cache()
    gc.collect()
    held = lt.held_count()
    for _ in range(500):
        lt.add(np.ones(8), 1.0)
    big = np.ones((512, 512))
    lt.add(big, big)  # too big to cache
    assert lt.held_count() <= held + 64  # the cache's slots at most
    lt.convert.clear_wrap_cache()
    gc.collect()
    assert lt.held_count() == held


def test_plan_fast_path(rng):
    a, b = random_array(rng, (5, 3), layout="transposed"), random_array(rng, (3, 4))
    plan = lt.plan_einsum("ij,jk->ik", a, b)
    ta, tb = lt.tensor(a), lt.tensor(b)
    out = lt.empty((5, 4), "float64")
    assert plan(ta, tb, out=out) is out
    assert_close(out.numpy(), a @ b, n=3)
    with pytest.raises(lt.LayoutMismatchError):
        plan(tb, ta, out=out)
    with pytest.raises(lt.LayoutMismatchError):
        plan(ta, tb, out=lt.empty((5, 4), "float32"))
    frozen = np.empty((5, 4))
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        plan(ta, tb, out=lt.tensor(frozen))
    with pytest.raises(lt.InvalidArgumentError):
        plan(ta, out=out)

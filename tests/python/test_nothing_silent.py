# SPDX-License-Identifier: MIT
"""Nothing lost, nothing silent (issue 17, Python side): paths reach C as the bytes the OS uses
(NUL refused), NumPy arrays that cannot write through are read-only, and an operation never
moves a Tensor between devices or contexts."""
import os
import warnings

import numpy as np
import pytest

import libtensor as lt
from conftest import DEVICES

needs_opencl = pytest.mark.skipif("opencl" not in DEVICES, reason="no OpenCL device")


# ---- 4. paths
def test_paths_of_every_kind(tmp_path):
    a = np.arange(6.0).reshape(2, 3)
    for path in (str(tmp_path / "s.npy"), os.fsencode(tmp_path / "b.npy"), tmp_path / "p.npy"):
        lt.save(path, a)
        np.testing.assert_array_equal(lt.load(path).numpy(), a)
        lt.tensor(a).T.save(path)
        np.testing.assert_array_equal(np.load(os.fsdecode(path)), a.T)


def test_non_utf8_path(tmp_path):
    raw = os.fsencode(tmp_path) + b"/caf\xe9-\xff.npy"  # Latin-1, not UTF-8
    a = np.arange(4.0)
    lt.save(raw, a)
    assert os.path.exists(raw)
    np.testing.assert_array_equal(lt.load(raw).numpy(), a)
    # The same name as str (surrogate escapes), the way os.listdir returns it.
    name = os.fsdecode(raw)
    np.testing.assert_array_equal(lt.load(name).numpy(), a)
    lt.save(name, a[::-1])
    np.testing.assert_array_equal(lt.load(raw).numpy(), a[::-1])


def test_nul_in_path_is_refused(tmp_path):
    good = tmp_path / "a.npy"
    np.save(good, np.ones(3))
    for bad in (str(good) + "\0junk", os.fsencode(good) + b"\0junk"):
        with pytest.raises(ValueError, match="NUL"):
            lt.load(bad)  # used to load a.npy silently
        with pytest.raises(ValueError, match="NUL"):
            lt.save(bad, np.ones(3))
    with pytest.raises(TypeError):
        lt.load(3)


def test_error_messages_name_the_path_readably(tmp_path):
    with pytest.raises(OSError) as info:
        lt.load(os.fsencode(tmp_path) + b"/missing.npy")
    assert str(tmp_path / "missing.npy") in str(info.value) and "b'" not in str(info.value)
    with pytest.raises(OSError) as info:
        lt.load(os.fsencode(tmp_path) + b"/missing-\xff.npy")
    assert "missing-\\xff.npy" in str(info.value)


# ---- 5. arrays that cannot write through are read-only
def test_broadcast_view_is_read_only():
    t = lt.tensor(np.arange(3.0))
    b = t.broadcast_to((4, 3))
    for arr in (b.numpy(), np.asarray(b), t[None].broadcast_to((2, 3)).numpy()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0, 0] = 5.0  # would change every row
    np.testing.assert_array_equal(b.numpy(), np.broadcast_to(np.arange(3.0), (4, 3)))
    assert t.numpy().flags.writeable and t[None].numpy().flags.writeable
    copy = b.numpy(copy=True)
    assert copy.flags.writeable and not np.shares_memory(copy, t.numpy())


def test_bfloat16_array_is_a_read_only_copy():
    t = lt.tensor(np.arange(4.0), dtype="bfloat16")
    assert not t.numpy().flags.writeable and not np.asarray(t).flags.writeable
    assert t.numpy(copy=True).flags.writeable


@needs_opencl
def test_device_array_is_a_read_only_copy():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    t = lt.tensor(a, device="opencl")
    assert t.device.startswith("opencl")
    for arr in (np.asarray(t), t.numpy()):
        assert not arr.flags.writeable  # writes would never reach the device
        np.testing.assert_array_equal(arr, a)
    assert t.numpy(copy=True).flags.writeable
    assert np.array(t).flags.writeable  # np.array copies
    # NumPy-in, NumPy-out calls return arrays of their own, writable.
    out = lt.einsum("ij->ji", a, device="opencl")
    assert out.flags.writeable


def test_array_protocol_copy_argument():
    a = np.arange(6.0).reshape(2, 3)
    t = lt.tensor(a)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.shares_memory(t.__array__(copy=False), a)
        assert np.shares_memory(t.__array__(), a)
        fresh = t.__array__(copy=True)
        assert fresh.flags.writeable and not np.shares_memory(fresh, a)
        assert t.__array__(np.float32).dtype == np.float32
        assert t.__array__(dtype=np.float64, copy=False).dtype == np.float64
        np.testing.assert_array_equal(np.asarray(t), a)
        with pytest.raises(ValueError):
            t.__array__(np.float32, copy=False)  # a conversion is a copy
        with pytest.raises(ValueError):
            lt.tensor(a, dtype="bfloat16").__array__(copy=False)


@needs_opencl
def test_array_protocol_copy_false_on_a_device():
    t = lt.tensor(np.ones(3), device="opencl")
    with pytest.raises(ValueError):
        t.__array__(copy=False)
    assert t.__array__(copy=True).flags.writeable


# ---- 6. no silent device moves
MISMATCH = lt.enums.STATUS["LT_ERR_CONTEXT_MISMATCH"]


@needs_opencl
def test_mixing_devices_in_one_operation_is_an_error():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    c = lt.tensor(x)
    g = lt.tensor(x, device="opencl")
    calls = [lambda: lt.add(c, g), lambda: g * c, lambda: c - g, lambda: c @ g.T,
             lambda: lt.einsum("ij,kj->ik", g, c), lambda: lt.maximum(g, c),
             lambda: lt.einsum("ij->ji", c, device="opencl"),
             lambda: lt.plan_einsum("ij->ji", x, device="opencl")(c),
             lambda: lt.einsum("ij->ji", g, out=lt.empty((3, 2)))]
    for call in calls:
        with pytest.raises(lt.ContextMismatchError) as info:
            call()
        err = info.value
        assert err.status == MISMATCH and err.status_name == "LT_ERR_CONTEXT_MISMATCH"
        assert "'cpu'" in str(err) and repr(g.device) in str(err)
    # Explicit moves work; NumPy data and scalars are still copied onto the op's device.
    got = lt.add(c.to(g.device), g)
    assert got.device == g.device
    np.testing.assert_array_equal(got.numpy(), 2 * x)
    assert lt.add(g, x).device == g.device and (g + 1.0).device == g.device
    np.testing.assert_array_equal((1.0 + g).numpy(), x + 1)
    assert lt.einsum("ij->ji", g, device=g.device).device == g.device  # "opencl:0:0"
    assert lt.context("opencl") is lt.context(g.device)


def test_two_contexts_of_one_device_do_not_mix():
    x = np.arange(4.0)
    own = lt.Context("cpu")
    a, b = lt.tensor(x), lt.tensor(x, device=own)
    assert a.device == b.device == "cpu"
    for call in (lambda: lt.add(a, b), lambda: a + b, lambda: lt.einsum("i,i->", a, b)):
        with pytest.raises(lt.ContextMismatchError) as info:
            call()
        assert info.value.status == MISMATCH and "'cpu' contexts" in str(info.value)
    with pytest.raises(lt.ContextMismatchError):  # the C library refuses the same
        a[...] = b
    np.testing.assert_array_equal(lt.add(a, b.to("cpu")).numpy(), 2 * x)
    # Names of one device share one context, so these meet.
    assert lt.context("cpu") is lt.context(lt.Context("cpu").device)


# ---- out= follows NumPy's casting='same_kind': no float silently truncated into integers
_KINDS = [np.bool_, np.uint8, np.uint32, np.int8, np.int64, np.float16, np.float32, np.float64]


@pytest.mark.parametrize("src", _KINDS)
@pytest.mark.parametrize("dst", _KINDS)
@pytest.mark.parametrize("target", ["numpy", "tensor", "strided"])
def test_out_casting_as_numpy(src, dst, target):
    a = np.array([1, 0, 1], dtype=src)
    base = np.zeros(6, dtype=dst)
    o = base[::2] if target == "strided" else base[:3]
    try:
        np.add(a, a, out=o.copy())
        allowed = True
    except TypeError:
        allowed = False
    out = lt.tensor(o.copy()) if target == "tensor" else o
    if allowed:
        r = lt.add(a, a, out=out)
        assert r is out
        np.testing.assert_array_equal(np.asarray(out), np.add(a, a).astype(dst))
    else:
        before = np.asarray(out).copy()
        with pytest.raises(TypeError, match="same_kind"):
            lt.add(a, a, out=out)
        np.testing.assert_array_equal(np.asarray(out), before)  # left as it was


def test_float_einsum_into_integer_out_is_refused():
    a = np.array([np.nan, 1.5, 2e10])
    for out in (np.zeros(3, np.int32), lt.zeros((3,), "int32")):
        with pytest.raises(TypeError):
            lt.einsum("i,i->i", a, a, out=out)
        with pytest.raises(TypeError):
            lt.einsum("i->i", lt.tensor(a), out=out)
    with pytest.raises(TypeError):  # the NaN never reaches the integers
        lt.add(lt.tensor(a), 1.0, out=lt.zeros((3,), "int32"))

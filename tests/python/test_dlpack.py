# SPDX-License-Identifier: MIT
"""DLPack: zero-copy round trips with NumPy (and PyTorch when installed), both directions, every
layout family and dtype; lifetimes when either side goes first; read-only data; copies; capsule
rules; device tensors."""
import gc

import numpy as np
import pytest

import libtensor as lt
from conftest import DEVICES, LAYOUTS, random_array

DTYPES = (np.float16, np.float32, np.float64, np.int64)


def _ptr(arr):
    return arr.__array_interface__["data"][0]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_to_tensor_zero_copy(rng, layout, dtype):
    for shape in ((3, 4, 5), (1, 4), (), (2, 0, 3)):
        if layout == "broadcast" and not shape:
            continue
        a = random_array(rng, shape, dtype, layout)
        if not a.flags.writeable:  # broadcast views are read-only in NumPy: a copy
            t = lt.from_dlpack(a)
            np.testing.assert_array_equal(t.numpy(), a)
            continue
        t = lt.from_dlpack(a)
        assert t.shape == a.shape and t.dtype == a.dtype
        np.testing.assert_array_equal(t.numpy(), a)
        if a.size:
            t[(0,) * a.ndim] = 7
            assert a[(0,) * a.ndim] == 7  # the same memory


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_to_numpy_zero_copy(rng, layout, dtype):
    a = random_array(rng, (3, 4, 2), dtype, layout)
    t = lt.tensor(a.copy())[::-1, 1:, :].T
    b = np.from_dlpack(t)
    want = t.numpy(copy=True)
    np.testing.assert_array_equal(b, want)
    assert _ptr(b) == _ptr(t.numpy())  # the tensor's own memory, same strides
    assert b.strides == t.numpy().strides
    t[0, 0, 0] = 3
    assert b[0, 0, 0] == 3


def test_lifetimes_either_order():
    base = np.arange(24.0).reshape(4, 6)
    held = lt.held_count()
    t = lt.from_dlpack(base)
    del base
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), np.arange(24.0).reshape(4, 6))  # NumPy side gone
    b = np.from_dlpack(t[1:, ::2])
    del t
    gc.collect()
    np.testing.assert_array_equal(b, np.arange(24.0).reshape(4, 6)[1:, ::2])  # tensor gone
    del b
    gc.collect()
    assert lt.held_count() == held


def test_unconsumed_capsule_frees_the_export():
    arr = np.arange(5.0)
    held = lt.held_count()
    t = lt.tensor(arr)  # wraps arr: held until every export of it is gone
    assert lt.held_count() == held + 1
    caps = [t.__dlpack__(), t.__dlpack__(max_version=(1, 0))]
    del t
    gc.collect()
    assert lt.held_count() == held + 1
    del caps
    gc.collect()
    assert lt.held_count() == held


def test_capsule_consumed_once():
    cap = lt.tensor(np.ones(3)).__dlpack__(max_version=(1, 1))
    t = lt.from_dlpack(cap)
    np.testing.assert_array_equal(t.numpy(), np.ones(3))
    with pytest.raises(ValueError, match="not an unused DLPack capsule"):
        lt.from_dlpack(cap)
    with pytest.raises(TypeError, match="__dlpack__"):
        lt.from_dlpack([1, 2])


def test_read_only():
    r = np.arange(4.0)
    r.flags.writeable = False
    t = lt.from_dlpack(r)  # copied: a libtensor tensor is always writable
    t[0] = 9
    assert r[0] == 0
    with pytest.raises(BufferError):
        lt.from_dlpack(r, copy=False)
    ro = lt.tensor(r)  # a read-only Tensor: exported with the read-only flag
    assert ro.readonly
    with pytest.raises(BufferError, match="legacy"):
        ro.__dlpack__()
    back = lt.from_dlpack(ro.__dlpack__(max_version=(1, 0)))  # flagged: the import copies
    back[1] = 9
    assert r[1] == 1
    with pytest.raises(BufferError, match="read-only"):
        lt.from_dlpack(ro, copy=False)


def test_copy_flags():
    a = np.arange(6.0)
    t = lt.from_dlpack(a, copy=True)
    t[0] = 5
    assert a[0] == 0
    src = lt.tensor(np.arange(3.0))
    c = lt.from_dlpack(src.__dlpack__(max_version=(1, 0), copy=True))
    c[0] = 5
    assert src.numpy()[0] == 0
    assert src.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="stream"):
        src.__dlpack__(stream=3)
    with pytest.raises(BufferError):
        src.__dlpack__(dl_device=(2, 0))


def test_device_tensors(device):
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    t = lt.tensor(a, device=device)
    if device == "cpu":
        np.testing.assert_array_equal(np.from_dlpack(t), a)
        return
    assert t.__dlpack_device__() == (4, 0)
    with pytest.raises(BufferError, match="host copy"):
        t.__dlpack__()
    back = lt.from_dlpack(t.__dlpack__(copy=True))  # a host copy
    np.testing.assert_array_equal(back.numpy(), a)
    back2 = lt.from_dlpack(t.__dlpack__(dl_device=(1, 0)))
    np.testing.assert_array_equal(back2.numpy(), a)
    on_dev = lt.from_dlpack(a, device=device)  # host data onto the device: copied
    assert on_dev.device == t.device
    np.testing.assert_array_equal(on_dev.numpy(), a)
    with pytest.raises(BufferError):
        lt.from_dlpack(a, device=device, copy=False)


def test_torch_both_ways():
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()
    t = lt.from_dlpack(x)
    np.testing.assert_array_equal(t.numpy(), x.numpy())
    t[0, 0] = 42
    assert x[0, 0].item() == 42
    y = torch.from_dlpack(lt.tensor(np.arange(6.0)).reshape(2, 3).T)
    np.testing.assert_array_equal(y.numpy(), np.arange(6.0).reshape(2, 3).T)
    del t, x
    gc.collect()
    assert y.sum().item() == 15


def test_a_failing_consumer_keeps_its_error():
    """NumPy refuses bf16: the capsule it drops with its error pending must free the export and
    leave NumPy's error (the destructor in Python could not run then: the export leaked and the
    caller got SystemError instead of NumPy's error)."""
    t = lt.tensor(np.ones(1000, np.float32), dtype="bfloat16")
    for _ in range(3):
        with pytest.raises(Exception) as info:
            np.from_dlpack(t)
        assert not isinstance(info.value, SystemError), info.value


def test_broadcast_views_export_read_only():
    t = lt.tensor(np.arange(4.0)).broadcast_to((3, 4))
    cap = t.__dlpack__(max_version=(1, 0))
    assert type(cap).__name__ == "PyCapsule"
    with pytest.raises(BufferError, match="broadcast"):
        t.__dlpack__()
    if hasattr(np, "__version__") and int(np.__version__.split(".")[0]) >= 2:
        assert not np.from_dlpack(t).flags.writeable


@pytest.mark.parametrize("device", DEVICES)
def test_from_dlpack_of_device_tensors(device):
    """The array API's from_dlpack: device=None keeps x's device (a view), another device is a
    copy (copy=False refuses it); OpenCL tensors were refused outright."""
    x = lt.tensor(np.array([1.0, 2.0]), device=device)
    same = lt.from_dlpack(x)
    assert same.device == x.device
    same[0] = 5.0
    assert x.numpy()[0] == 5.0
    host = lt.from_dlpack(x, device="cpu", copy=True)
    assert host.device == "cpu" and host.numpy().tolist() == [5.0, 2.0]
    if not x.context.is_cpu:
        with pytest.raises(BufferError):
            lt.from_dlpack(x, device="cpu", copy=False)
        assert lt.from_dlpack(x, device="cpu").numpy().tolist() == [5.0, 2.0]

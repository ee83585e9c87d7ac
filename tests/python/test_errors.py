# SPDX-License-Identifier: MIT
"""Failing calls raise the exception class of their lt_status, with the library's message."""
import numpy as np
import pytest

import libtensor as lt


def test_every_status_has_a_class():
    for status in range(-1, -20, -1):
        cls = lt.error_class(status)
        assert issubclass(cls, lt.LibtensorError) and cls.status == status
        assert cls.status_name.startswith("LT_ERR_")


def test_message_and_status():
    with pytest.raises(lt.ShapeMismatchError) as info:
        lt.tensor(np.ones((2, 3))).reshape(4, 2)
    err = info.value
    assert err.status == -4 and err.status_name == "LT_ERR_SHAPE_MISMATCH"
    assert "6" in str(err) and "8" in str(err)
    assert isinstance(err, ValueError)


def test_unknown_device():
    with pytest.raises(lt.NoDeviceError) as info:
        lt.Context("tpu")
    assert "tpu" in str(info.value)


def test_out_of_range_is_index_error():
    t = lt.tensor(np.ones((2, 3)))
    with pytest.raises(IndexError):
        t.swapaxes(0, 5)
    with pytest.raises(lt.OutOfRangeError):
        t.unsqueeze(7)


def test_dtype_error():
    with pytest.raises(lt.DtypeError):
        lt.zeros((2,), "complex64")


def test_einsum_errors():
    a = np.ones((2, 3))
    with pytest.raises(lt.ParseError):
        lt.einsum("ij,->", a)
    with pytest.raises(lt.LibtensorError) as info:
        lt.einsum("ij,jk->ik", a, np.ones((4, 2)))
    assert "j" in str(info.value)
    with pytest.raises(lt.LibtensorError):
        lt.einsum("ij->ij", a, a)
    with pytest.raises(ValueError):
        lt.einsum("ij->ji", a, optimize="fastest")


def test_plan_layout_mismatch():
    a = np.ones((3, 4))
    plan = lt.plan_einsum("ij->j", a)
    with pytest.raises(lt.LibtensorError):
        plan(np.ones((4, 3)))
    with pytest.raises(ValueError):
        plan(a, a)


def test_integers_beyond_c_ranges_raise_instead_of_wrapping():
    # ctypes would truncate these silently (2**64 + 5 reaching C as 5).
    t = lt.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.raises(OverflowError):
        t[2**70]
    with pytest.raises(OverflowError):
        lt.zeros((2**64 + 5,))
    with pytest.raises(OverflowError):
        t[::2**70]
    with pytest.raises(OverflowError):
        t.reshape(2**63)
    ctx = lt.Context("cpu")
    threads = ctx.num_threads
    with pytest.raises(OverflowError):
        ctx.num_threads = 2**32 + 3
    assert ctx.num_threads == threads


def test_wrong_argument_types_raise_type_error():
    a = lt.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError):
        lt.einsum(5, a)
    with pytest.raises(TypeError):
        lt.Context(3)
    with pytest.raises(TypeError):
        lt.argmax(a, axis=(0, 1))
    with pytest.raises(TypeError):
        lt.sum(a, axis=1.0)
    with pytest.raises(TypeError):
        lt.Context("cpu").num_threads = "x"


def test_nul_inside_a_string_is_refused():
    a = lt.tensor(np.ones((2, 3)))
    with pytest.raises(ValueError):
        lt.einsum("ij\0->ji", a)


def test_misaligned_numpy_array_is_copied():
    # The library refuses to wrap a misaligned address; the binding copies instead.
    arr = np.frombuffer(bytearray(8 * 8 + 1), dtype=np.float64, count=8, offset=1)
    arr[:] = np.arange(8.0) - 2.5
    assert not arr.flags.aligned
    t = lt.from_numpy(arr)
    np.testing.assert_array_equal(t.numpy(), arr)
    assert float(lt.sum(arr)) == arr.sum()

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

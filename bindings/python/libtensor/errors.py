# SPDX-License-Identifier: MIT
"""Exceptions raised for failing library calls: one class per lt_status, with the message of
lt_last_error(). Each class also derives from the closest built-in exception, so callers can
catch ValueError / IndexError / TypeError / MemoryError / OSError as with NumPy."""
from . import _lib, enums


class LibtensorError(Exception):
    """A libtensor call failed. `status` is the lt_status value, `status_name` its name."""

    status = None
    status_name = "LT_ERR"

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status
            self.status_name = _status_name(status)


def _status_name(status):
    # The header's name (enums), so that a status newer than the loaded library still has one.
    name = enums.STATUS_NAME.get(status)
    return name if name is not None else _lib.fn("lt_status_string")(status).decode()


# lt_status name -> (class name, built-in base). Every error status of enums.STATUS_TABLE.
_CLASSES = {
    "LT_ERR_INVALID_ARGUMENT": ("InvalidArgumentError", ValueError),
    "LT_ERR_NULL_POINTER": ("NullPointerError", ValueError),
    "LT_ERR_OUT_OF_MEMORY": ("OutOfMemoryError", MemoryError),
    "LT_ERR_SHAPE_MISMATCH": ("ShapeMismatchError", ValueError),
    # an index (IndexError) or an axis (NumPy's AxisError is a ValueError and an IndexError)
    "LT_ERR_OUT_OF_RANGE": ("OutOfRangeError", (IndexError, ValueError)),
    "LT_ERR_OVERFLOW": ("SizeOverflowError", OverflowError),
    "LT_ERR_DTYPE": ("DtypeError", TypeError),
    "LT_ERR_NOT_VIEWABLE": ("NotViewableError", ValueError),
    "LT_ERR_PARSE": ("ParseError", ValueError),
    "LT_ERR_IO": ("FileError", OSError),
    "LT_ERR_FORMAT": ("FormatError", ValueError),
    "LT_ERR_UNSUPPORTED": ("UnsupportedError", NotImplementedError),
    "LT_ERR_DEVICE": ("DeviceError", RuntimeError),
    "LT_ERR_NO_DEVICE": ("NoDeviceError", LookupError),
    "LT_ERR_ALIASING": ("AliasingError", ValueError),
    "LT_ERR_CONTEXT_MISMATCH": ("ContextMismatchError", ValueError),
    "LT_ERR_LAYOUT_MISMATCH": ("LayoutMismatchError", ValueError),
    "LT_ERR_BUILD": ("BuildError", RuntimeError),
    "LT_ERR_INTERNAL": ("InternalError", RuntimeError),
    # Like a closed file's "I/O operation on closed file".
    "LT_ERR_INVALID_HANDLE": ("InvalidHandleError", ValueError),
}


def _make(status_name, class_name, base):
    bases = base if isinstance(base, tuple) else (base,)
    doc = (f"The library's {status_name}; also a {' and a '.join(b.__name__ for b in bases)}, "
           f"as Python reports the same failure. str() is the library's message "
           f"(lt_last_error).")
    cls = type(class_name, (LibtensorError,) + bases, {"status": enums.STATUS[status_name],
                                                       "status_name": status_name, "__doc__": doc})
    cls.__module__ = __name__
    return cls


_BY_STATUS = {}
for _status_name_, (_class_name, _base) in _CLASSES.items():
    _cls = globals()[_class_name] = _make(_status_name_, _class_name, _base)
    _BY_STATUS[_cls.status] = _cls
del _status_name_, _class_name, _base, _cls

__all__ = ["LibtensorError", "error_class", "check"] + [c.__name__ for c in _BY_STATUS.values()]


def error_class(status):
    """The exception class raised for an lt_status value."""
    return _BY_STATUS.get(status, LibtensorError)


def raise_status(status_name, message):
    """Raises the exception class of the lt_status `status_name` (an enums.STATUS key) with
    `message`, for failures the binding detects before calling the library."""
    status = enums.STATUS[status_name]
    raise error_class(status)(message, status)


def check(status):
    """Raises the exception for a failing lt_status, with lt_last_error() as its message."""
    if status == 0:
        return
    # backslashreplace: a file name that is not UTF-8 stays readable (b'\xff' reads \xff).
    message = _lib.fn("lt_last_error")().decode(errors="backslashreplace")
    cls = error_class(status)
    exc = cls(message or _status_name(status), status)
    raise exc

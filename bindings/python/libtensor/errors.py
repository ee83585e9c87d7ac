"""Exceptions raised for failing library calls: one class per lt_status, with the message of
lt_last_error(). Each class also derives from the closest built-in exception, so callers can
catch ValueError / IndexError / TypeError / MemoryError / OSError as with NumPy."""
from . import _lib


class LibtensorError(Exception):
    """A libtensor call failed. `status` is the lt_status value, `status_name` its name."""

    status = None
    status_name = "LT_ERR"

    def __init__(self, message, status=None):
        super().__init__(message)
        if status is not None:
            self.status = status
            self.status_name = _status_name(status)


def _make(name, status, *bases):
    cls = type(name, (LibtensorError,) + bases, {"status": status,
                                                  "status_name": _status_name(status)})
    cls.__module__ = __name__
    return cls


def _status_name(status):
    return _lib.fn("lt_status_string")(status).decode()


InvalidArgumentError = _make("InvalidArgumentError", -1, ValueError)
NullPointerError = _make("NullPointerError", -2, ValueError)
OutOfMemoryError = _make("OutOfMemoryError", -3, MemoryError)
ShapeMismatchError = _make("ShapeMismatchError", -4, ValueError)
OutOfRangeError = _make("OutOfRangeError", -5, IndexError)
SizeOverflowError = _make("SizeOverflowError", -6, OverflowError)
DtypeError = _make("DtypeError", -7, TypeError)
NotViewableError = _make("NotViewableError", -8, ValueError)
ParseError = _make("ParseError", -9, ValueError)
FileError = _make("FileError", -10, OSError)
FormatError = _make("FormatError", -11, ValueError)
UnsupportedError = _make("UnsupportedError", -12, NotImplementedError)
DeviceError = _make("DeviceError", -13, RuntimeError)
NoDeviceError = _make("NoDeviceError", -14, LookupError)
AliasingError = _make("AliasingError", -15, ValueError)
ContextMismatchError = _make("ContextMismatchError", -16, ValueError)
LayoutMismatchError = _make("LayoutMismatchError", -17, ValueError)
BuildError = _make("BuildError", -18, RuntimeError)
InternalError = _make("InternalError", -19, RuntimeError)

_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, NullPointerError, OutOfMemoryError, ShapeMismatchError,
    OutOfRangeError, SizeOverflowError, DtypeError, NotViewableError, ParseError, FileError,
    FormatError, UnsupportedError, DeviceError, NoDeviceError, AliasingError,
    ContextMismatchError, LayoutMismatchError, BuildError, InternalError)}


def error_class(status):
    """The exception class raised for an lt_status value."""
    return _BY_STATUS.get(status, LibtensorError)


def check(status):
    """Raises the exception for a failing lt_status, with lt_last_error() as its message."""
    if status == 0:
        return
    message = _lib.fn("lt_last_error")().decode(errors="replace")
    cls = error_class(status)
    exc = cls(message or _status_name(status), status)
    raise exc

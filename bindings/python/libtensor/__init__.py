# SPDX-License-Identifier: MIT
"""libtensor: dense strided tensors, views, operations, einsum and plans (ctypes binding).

    import libtensor as lt
    lt.einsum("ij,jk->ik", a, b)          # NumPy arrays in, NumPy array out
    t = lt.tensor(a)[1:, ::-1].T          # zero-copy views
    plan = lt.plan_einsum("bij,bjk->bik", x, y); plan(x, y)

The modules import one another in one direction only (no cycles, no imports inside
functions): _lib (loading, ctypes signatures) -> enums (the header's values) -> errors ->
context -> tensor -> convert (operands in, results out) -> ops, einsum, indexing -> (stats,
array_api, autograd, methods) -> this package.
"""
from . import _lib, enums
from . import errors as _errors
from .errors import *  # noqa: F401,F403
from .errors import LibtensorError, error_class
from .context import Context, Device, context, devices
from .tensor import (Tensor, as_strided, broadcast_to, empty, from_numpy, full, held_count,
                     load, lt_dtype, save, tensor, zeros)
from . import convert
from . import ops as _ops
from .ops import *  # noqa: F401,F403
from .einsum import EinsumPlan, einsum, einsum_path, matmul, plan_einsum
# Issue 20: DLPack interop and the array API namespace (Tensor.__array_namespace__).
from .dlpack import from_dlpack
from . import indexing as _indexing
from .indexing import *  # noqa: F401,F403
# issue 18 C: softmax family, var/std, scans; counter-based random numbers (lt.random)
from . import stats as _stats
from .stats import *  # noqa: F401,F403
from . import random
from . import array_api
from . import h5  # HDF5 files: lt.h5.File (h5.py)
# autograd (issue 19): on top of everything above; replaces lt.tensor by one taking
# requires_grad=.
from .autograd import no_grad, is_grad_enabled, tensor  # noqa: F811
from . import optim
# Issue 20 A: the C extension (libtensor._fast, optional) records the calls it serves on the
# tapes autograd registers with it; without autograd it leaves Tensor operands to Python.
from . import _ext
from . import autograd as _autograd
_ext.watch_tapes(getattr(_autograd, "_tapes", None))
from . import methods as _methods  # NumPy's array methods on Tensor, lt.all / lt.any
from .methods import all, any  # noqa: A004 (NumPy's names)
from . import functions as _functions  # NumPy's views and compositions: lt.reshape, lt.where...
from .functions import *  # noqa: F401,F403,A004
from . import docstrings as _docstrings  # noqa: F401 (NumPy's behaviour, documented once)

__version__ = _lib.fn("lt_version")().decode()
library_path = _lib.path


def has(name):
    """True if the loaded libtensor exports the C function `name` (e.g. "lt_einsum")."""
    return _lib.has(name)


__all__ = (["Context", "Device", "context", "devices", "LibtensorError", "error_class",
            "Tensor", "as_strided", "broadcast_to", "empty", "from_numpy", "full", "held_count",
            "load", "lt_dtype", "save", "tensor", "zeros", "EinsumPlan", "einsum", "einsum_path",
            "plan_einsum", "matmul", "has", "library_path", "from_dlpack", "array_api", "h5", "no_grad",
            "is_grad_enabled", "optim"]
           + [n for n in dir(_errors) if n.endswith("Error")] + list(_ops.__all__)
           + list(_indexing.__all__) + list(_stats.__all__) + list(_methods.__all__)
           + list(_functions.__all__)
           + ["random"])
__all__ = list(dict.fromkeys(__all__))  # each name once (errors and ops overlap)

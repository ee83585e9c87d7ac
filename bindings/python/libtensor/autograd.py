# SPDX-License-Identifier: MIT
"""Gradients in PyTorch's conventions, over libtensor's C gradient tape.

    x = lt.tensor(a, requires_grad=True)
    loss = lt.sum(lt.tanh(x @ w) ** 2)
    loss.backward()
    x.grad            # a Tensor (np.asarray reads it zero-copy); x.grad = None drops it
    with lt.no_grad(): ...
    opt = lt.optim.Adam([w], lr=1e-3); opt.step(); opt.zero_grad()

Each Context gets one tape, made when a first tensor on it requires a gradient. While the tape
records, the one-call operations (ops, einsum, the Tensor operators and views, softmax & co,
var/std, scans, take, where, clip, concatenate/stack/split) go through the C library's lt_ad_*
calls whenever an operand is tracked, and through the plain calls otherwise. backward()
without retain_graph frees the graph it walked, as PyTorch: other graphs recorded on the same
context keep their history. A tracked Tensor that Python collects is forgotten by the tape
(lt_tape_forget), so a graph nobody runs backward through is released with its results.

Sits on top of the package: patches the module-level constructor `_new` of ops, einsum and
tensor, and adds requires_grad / grad / backward / detach to Tensor."""

import contextlib
import ctypes
import sys
import threading

from . import _lib, enums
from .errors import check, raise_status
from .tensor import Tensor, from_numpy
from . import ops as _ops_mod  # noqa: F401 (patched below)
from . import indexing as _indexing_mod
from .convert import operands
from . import convert as _convert_mod
from ._ext import FAST as _FAST

# (the package's names `tensor` and `einsum` are functions: the modules come from sys.modules)
_tensor_mod = sys.modules[__package__ + ".tensor"]
_einsum_mod = sys.modules[__package__ + ".einsum"]
_plain_new = _tensor_mod._new

_tapes = {}  # Context -> tape handle
_lock = threading.RLock()
_recording = True  # process-wide: no_grad() turns it off (as torch.no_grad on one thread)


class _Tape:
    def __init__(self, ctx):
        out = ctypes.c_void_p()
        check(_lib.fn("lt_tape_create")(ctx.handle, ctypes.byref(out)))
        self.handle = out.value
        self.context = ctx
        if not _recording:
            check(_lib.fn("lt_tape_set_recording")(self.handle, False, None))
        if _FAST is not None:  # the extension records this context's calls in C
            _FAST.set_tape(ctx.handle, self.handle)

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h is not None:
            try:
                if _FAST is not None:
                    _FAST.set_tape(self.context.handle, None)
                _lib.fn("lt_tape_destroy")(h)
            except Exception:  # interpreter shutdown
                pass


def _tape_of(ctx, create=False):
    with _lock:
        tape = _tapes.get(ctx)
        if tape is None and create:
            tape = _tapes[ctx] = _Tape(ctx)
        return tape


def _tracked(tape, handle):
    out = ctypes.c_bool()
    check(_lib.fn("lt_tape_is_tracked")(tape.handle, handle, ctypes.byref(out)))
    return out.value


def _will_record(tensors):
    tape = _tapes.get(tensors[0].context) if _recording else None
    return tape is not None and any(_tracked(tape, t.handle) for t in tensors)


_convert_mod.will_record = _will_record


# C call -> (differentiable call, positions of tensor handles in the args, args rewrite)
def _same(args):
    return args


_AD = {
    "lt_unary": ("lt_ad_unary", (1,), _same),
    "lt_binary": ("lt_ad_binary", (1, 2), _same),
    "lt_reduce": ("lt_ad_reduce", (1,), _same),
    # argmax/argmin are recorded so that backward through them fails (they stop gradients)
    "lt_argmax": ("lt_ad_reduce", (0,), lambda a: (enums.LT_REDUCE_ARGMAX, a[0], 1,
                                                   _lib.int_array([a[1]]), False)),
    "lt_argmin": ("lt_ad_reduce", (0,), lambda a: (enums.LT_REDUCE_ARGMIN, a[0], 1,
                                                   _lib.int_array([a[1]]), False)),
    "lt_einsum": ("lt_ad_einsum", (), lambda a: a[:3]),  # no plan options on the tape path
    "lt_tensor_contiguous": ("lt_ad_contiguous", (0,), _same),
    "lt_tensor_reshape": ("lt_ad_reshape", (0,), _same),
    "lt_view_reshape": ("lt_ad_reshape", (0,), _same),
    "lt_view_permute": ("lt_ad_permute", (0,), _same),
    "lt_view_slice": ("lt_ad_slice", (0,), _same),
    "lt_view_select": ("lt_ad_select", (0,), _same),
    "lt_view_broadcast_to": ("lt_ad_broadcast_to", (0,), _same),
    "lt_view_unsqueeze": ("lt_ad_unsqueeze", (0,), _same),
    "lt_view_squeeze": ("lt_ad_squeeze", (0,), _same),
    "lt_view_flip": ("lt_ad_flip", (0,), _same),
    "lt_view_diagonal": ("lt_ad_diagonal", (0,), _same),
    "lt_view_as_strided": ("lt_ad_as_strided", (0,), _same),
    # issue 19: the vocabulary ops
    "lt_softmax": ("lt_ad_softmax", (0,), _same),
    "lt_log_softmax": ("lt_ad_log_softmax", (0,), _same),
    "lt_logsumexp": ("lt_ad_logsumexp", (0,), _same),
    "lt_var": ("lt_ad_var", (0,), _same),
    "lt_std": ("lt_ad_std", (0,), _same),
    "lt_cumsum": ("lt_ad_cumsum", (0,), _same),
    "lt_cumprod": ("lt_ad_cumprod", (0,), _same),
    "lt_take": ("lt_ad_take", (0,), _same),
    "lt_take_along_axis": ("lt_ad_take_along_axis", (0,), _same),
    "lt_where": ("lt_ad_where", (1, 2), _same),  # the condition never carries a gradient
    "lt_clip": ("lt_ad_clip", (0, 1, 2), _same),
    "lt_concatenate": ("lt_ad_concatenate", (), _same),
    "lt_stack": ("lt_ad_stack", (), _same),
}


def _handles_of(fn_name, positions, args):
    if fn_name == "lt_einsum":
        return [args[2][i] for i in range(args[1])]
    if fn_name in ("lt_concatenate", "lt_stack"):
        return [args[1][i] for i in range(args[0])]
    return [args[i] for i in positions]


def _ad_new(fn_name, ctx, *args, readonly=False):
    """The package's constructor call, recorded on the context's tape when an operand is
    tracked."""
    entry = _AD.get(fn_name)
    tape = _tapes.get(ctx) if entry is not None and _recording else None
    if tape is not None:
        ad_name, positions, rewrite = entry
        if any(h is not None and _tracked(tape, h)
               for h in _handles_of(fn_name, positions, args)):
            out = ctypes.c_void_p()
            check(_lib.fn(ad_name)(tape.handle, *rewrite(args), ctypes.byref(out)))
            return Tensor(out.value, ctx, readonly)
    return _plain_new(fn_name, ctx, *args, readonly=readonly)


_plain_swapaxes = Tensor.swapaxes


def _swapaxes(self, axis0, axis1):
    """swapaxes through permute when a tape may record it (lt_view_transpose has no rule)."""
    n = self.ndim
    if _tapes.get(self.context) is None or not (-n <= axis0 < n and -n <= axis1 < n):
        return _plain_swapaxes(self, axis0, axis1)
    perm = list(range(n))
    perm[axis0 % n], perm[axis1 % n] = perm[axis1 % n], perm[axis0 % n]
    return self.permute(*perm)


# ---- Tensor's autograd surface

def _get_requires_grad(self):
    tape = _tape_of(self.context)
    return tape is not None and _tracked(tape, self.handle)


def _set_requires_grad(self, value):
    tape = _tape_of(self.context, create=bool(value))
    if tape is not None:
        check(_lib.fn("lt_tape_requires_grad")(tape.handle, self.handle, bool(value)))


def requires_grad_(self, requires_grad=True):
    _set_requires_grad(self, requires_grad)
    return self


def _get_grad(self):
    tape = _tape_of(self.context)
    if tape is None or not _tracked(tape, self.handle):
        return None
    out = ctypes.c_void_p()
    status = _lib.fn("lt_tape_grad")(tape.handle, self.handle, ctypes.byref(out))
    if status == enums.LT_ERR_INVALID_ARGUMENT:  # not a leaf: like PyTorch, no .grad kept
        return None
    check(status)
    return None if out.value is None else Tensor(out.value, self.context)


def _set_grad(self, value):
    tape = _tape_of(self.context)
    if tape is None or not _tracked(tape, self.handle):
        if value is None:
            return
        raise_status("LT_ERR_INVALID_ARGUMENT",
                     "libtensor: .grad can be set only on a tensor that requires a gradient")
    if value is not None and not isinstance(value, Tensor):
        value = from_numpy(value, self.context, self.dtype, copy=True)
    check(_lib.fn("lt_tape_set_grad")(tape.handle, self.handle,
                                      None if value is None else value.handle))


def backward(self, gradient=None, retain_graph=False):
    """Accumulates d(self)/d(leaf) into the .grad of every leaf self depends on. `gradient`
    (self's shape) is needed unless self has one element."""
    tape = _tape_of(self.context)
    if tape is None:
        raise_status("LT_ERR_INVALID_ARGUMENT",
                     "libtensor: backward() on a tensor that does not require a gradient")
    g = None
    if gradient is not None:
        g = gradient if isinstance(gradient, Tensor) else from_numpy(
            gradient, self.context, self.dtype, copy=True)
    flags = enums.LT_BACKWARD_RETAIN_GRAPH if retain_graph else 0
    # without retain_graph the C tape frees the walked graph only (other graphs stay)
    check(_lib.fn("lt_tape_backward")(tape.handle, self.handle,
                                      None if g is None else g.handle, flags))


def detach(self):
    """A Tensor on the same memory that the tape does not track."""
    return Tensor(_lib_new_alias(self), self.context, self.readonly)


def _lib_new_alias(t):
    out = ctypes.c_void_p()
    tape = _tape_of(t.context, create=True)
    check(_lib.fn("lt_tape_detach")(tape.handle, t.handle, ctypes.byref(out)))
    return out.value


def _set_recording(on):
    global _recording
    _recording = on
    if _FAST is not None:
        _FAST.set_recording(on)
    for tape in _tapes.values():
        check(_lib.fn("lt_tape_set_recording")(tape.handle, on, None))


_no_grad_depth = 0  # no_grad blocks open now, in every thread


@contextlib.contextmanager
def no_grad():
    """Nothing computed inside is recorded (on every context). Process-wide, not per thread as
    in PyTorch: recording resumes when the last open block, in any thread, closes (blocks of
    two threads that overlapped used to leave recording off for good)."""
    global _no_grad_depth
    with _lock:
        _no_grad_depth += 1
        _set_recording(False)
    try:
        yield
    finally:
        with _lock:
            _no_grad_depth -= 1
            if _no_grad_depth == 0:
                _set_recording(True)


def is_grad_enabled():
    """Whether operations are recorded for gradients (False inside lt.no_grad())."""
    return _recording


def tensor(data, dtype=None, device=None, copy=False, requires_grad=False):
    """lt.tensor with PyTorch's requires_grad flag. A tensor that requires a gradient is a
    private copy (never an alias of the caller's array), since optimisers write it in place."""
    t = _tensor_mod.tensor(data, dtype, device, copy=copy or requires_grad)
    if requires_grad:
        _set_requires_grad(t, True)
    return t


_plain_del = Tensor.__del__
_forget_fn = _lib.fn("lt_tape_forget")


def _del(self):
    """Tells the context's tape that this handle is gone, so that records only it needed are
    released (PyTorch frees a graph whose results die)."""
    h = getattr(self, "_handle", None)
    if h is not None and _tapes:
        try:
            tape = _tapes.get(self.context)
            if tape is not None and tape.handle is not None:
                _forget_fn(tape.handle, h)
        except Exception:  # interpreter shutdown
            pass
    plain = _plain_del
    if plain is not None:  # None once the module is torn down at interpreter exit
        plain(self)


def _check_inplace(what, *tensors):
    for t in tensors:
        tape = _tapes.get(t.context)
        if tape is not None and _recording and _tracked(tape, t.handle):
            hint = ("build the result out of place (lt.where, or assign into a copy)"
                    if what.startswith("__") else
                    "compute a new tensor (without out=)" if what == "out=" else
                    "write the out-of-place form (t = t + x, not t += x)"
                    if what.startswith("in-place") else f"use the out-of-place Tensor.{what}(...)")
            raise_status("LT_ERR_INVALID_ARGUMENT",
                         f"libtensor: {what} writes in place, which the tape cannot record for "
                         f"a tensor that requires a gradient; {hint} instead")


def _split_views(ta, axis, points):
    tape = _tapes.get(ta.context) if _recording else None
    if tape is None or not _tracked(tape, ta.handle):
        return _plain_split_views(ta, axis, points)
    outs = (ctypes.c_void_p * (len(points) + 1))()
    check(_lib.fn("lt_ad_split")(tape.handle, ta.handle, axis, len(points),
                                 _lib.int64_array(points), outs))
    return [Tensor(h, ta.context, ta.readonly) for h in outs]


def scatter_add(self, axis, index, src):
    """Out of place (torch.Tensor.scatter_add / index_add): a copy of self with
    copy[..., index[j], ...] += src[..., j, ...] along `axis` (a 1-D index, or one shaped like
    src); differentiable in self and src."""
    (ts, ti), _ = _indexing_mod._index_operand([src, index])
    ts = operands([self, ts])[0][1]
    tape = _tapes.get(self.context) if _recording else None
    out = ctypes.c_void_p()
    check(_lib.fn("lt_ad_scatter_add")(None if tape is None else tape.handle, self.handle,
                                       _lib.as_int(axis, 32, "axis"), ti.handle, ts.handle,
                                       ctypes.byref(out)))
    return Tensor(out.value, self.context)


_plain_split_views = _indexing_mod._split_views
_indexing_mod._split_views = _split_views
_convert_mod.inplace_hook = _check_inplace
for _mod in (_tensor_mod, _ops_mod, _einsum_mod, _indexing_mod,
             sys.modules[__package__ + ".stats"]):
    _mod._new = _ad_new
if _FAST is None:  # else the extension's destroy (tensor.destroy_handle) forgets the handle
    Tensor.__del__ = _del
Tensor.scatter_add = scatter_add
Tensor.requires_grad = property(_get_requires_grad, _set_requires_grad)
Tensor.requires_grad_ = requires_grad_
Tensor.grad = property(_get_grad, _set_grad)
Tensor.backward = backward
Tensor.detach = detach
Tensor.swapaxes = _swapaxes

__all__ = ["no_grad", "is_grad_enabled", "tensor"]

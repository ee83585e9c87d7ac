# SPDX-License-Identifier: MIT
"""einsum like numpy.einsum on NumPy arrays or Tensors, its path text, and explicit plans.

Operands as in ops (see convert): Tensors of one call share one context, nothing is moved
implicitly. Also installs Tensor's @ operator."""
import ctypes
import functools
import operator
import re
import string

import numpy as np

from . import _lib, enums
from ._ext import FAST as _FAST
from .context import context
from .convert import check_inplace, check_out_cast, deliver, operands, require_context, result
from .errors import AliasingError, InvalidArgumentError, check
from .tensor import Tensor, _new, check_writeable, from_numpy, lt_dtype

_PATHS = {"auto": enums.LT_PATH_AUTO, True: enums.LT_PATH_AUTO, "greedy": enums.LT_PATH_GREEDY,
          "optimal": enums.LT_PATH_OPTIMAL, "none": enums.LT_PATH_NONE,
          "partition": enums.LT_PATH_PARTITION,
          False: enums.LT_PATH_NONE, None: enums.LT_PATH_NONE}
_EINVAL = enums.LT_ERR_INVALID_ARGUMENT
# lt_lowp_compute: how f16/bf16 operands multiply (the C header documents both).
_PRECISIONS = {"fast": enums.LT_LOWP_FAST, "f32": enums.LT_LOWP_F32}


class _Options:
    """lt_plan_options for an einsum: path algorithm, output dtype, memory limit, f16/bf16
    arithmetic (precision "fast" or "f32")."""

    def __init__(self, optimize="auto", dtype=None, memory_limit=None, precision="fast"):
        key = optimize.lower() if isinstance(optimize, str) else optimize
        pairs = None
        if _is_explicit_path(key):
            # An explicit path (validated by _check_path) as the library's pairs.
            pairs = _path_pairs([list(step) for step in key[1:]])
            if pairs is None:
                raise InvalidArgumentError("libtensor: an explicit path with a one-operand "
                                           "step among several operands runs in einsum only",
                                           _EINVAL)
            key = "auto"
        if key not in _PATHS:
            raise InvalidArgumentError(f"libtensor: optimize={optimize!r}: expected 'auto', "
                                       "'greedy', 'optimal', 'none', True or False",
                                       _EINVAL)
        if precision not in _PRECISIONS:
            raise InvalidArgumentError(f"libtensor: precision={precision!r}: expected 'fast' or "
                                       "'f32'", _EINVAL)
        out = ctypes.c_void_p()
        check(_lib.fn("lt_plan_options_create")(ctypes.byref(out)))
        self.handle = out.value
        if precision != "fast":  # the library's default: older builds lack the setter
            check(_lib.fn("lt_plan_options_set_lowp_compute")(self.handle,
                                                              _PRECISIONS[precision]))
        check(_lib.fn("lt_plan_options_set_path")(self.handle, _PATHS[key]))
        if pairs is not None:
            flat = _lib.int64_array([i for pair in pairs for i in pair])
            check(_set_explicit_path(self.handle, len(pairs), flat))
        if dtype is not None:
            check(_lib.fn("lt_plan_options_set_output_dtype")(self.handle, lt_dtype(dtype)))
        if memory_limit:
            check(_lib.fn("lt_plan_options_set_memory_limit")(self.handle, int(memory_limit)))

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h is not None:
            try:
                _lib.fn("lt_plan_options_destroy")(h)
            except Exception:
                pass


# lt_plan_options_set_explicit_path(opts, n_pairs, const int64_t (*pairs)[2]): the pairs
# pass as a flat int64 array (the header parser of test_abi does not read array pointers, so
# this one is bound here; _lib.UNBOUND lists it).
_set_explicit_path = _lib.lib.lt_plan_options_set_explicit_path
_set_explicit_path.restype = _lib.status
_set_explicit_path.argtypes = [_lib.handle, ctypes.c_int64, _lib.c_int64_p]

_options_cache = {}
_execute = _lib.fn("lt_plan_execute")


def _path_pairs(steps):
    """NumPy path steps as the library's pairs: a step of k positions becomes k - 1 pairs (the
    first two, then each further position with the previous pair's result, which sits at the
    end of the list), so the operand list after it is NumPy's: the rest in order, then the
    result. None for a step of one position among several operands (no pair expresses it)."""
    pairs, left = [], sum(len(s) - 1 for s in steps) + 1
    for step in steps:
        if len(step) == 1:
            if left > 1:
                return None
            continue
        pos = sorted(step)
        pairs.append((pos[0], pos[1]))
        left -= 1
        for k, p in enumerate(pos[2:]):
            pairs.append((p - (k + 2), left - 1))  # k + 2 positions below p have left
            left -= 1
    return pairs


def _options(optimize="auto", dtype=None, memory_limit=None, precision="fast"):
    """Plan options for these settings, created once: the library only reads them."""
    key = (optimize if isinstance(optimize, (str, bool, type(None))) else repr(optimize),
           None if dtype is None else lt_dtype(dtype), memory_limit, precision)
    opts = _options_cache.get(key)
    if opts is None:
        opts = _options_cache.setdefault(key, _Options(optimize, dtype, memory_limit, precision))
    return opts


def _result_dtype(arrays, dtype):
    """The dtype einsum gives these operands (or `dtype`), for NumPy's out= casting check: the
    kind is what matters there, so bfloat16 stands in as float16."""
    if dtype is not None:
        return "bfloat16" if lt_dtype(dtype) == enums.LT_BF16 else np.dtype(dtype)
    dts = [a.dtype if isinstance(a, (np.ndarray, Tensor)) else np.asarray(a).dtype for a in arrays]
    return np.result_type(*[np.float16 if d == "bfloat16" else d for d in dts]) if dts else None


def _numpy_result_dtype(arrays, got):
    """NumPy's einsum keeps integer inputs integer; the library computes them in float."""
    want = np.result_type(*[a.dtype if isinstance(a, np.ndarray) else np.asarray(a).dtype
                            for a in arrays if not isinstance(a, Tensor)]) if arrays else None
    return want if want is not None and want.kind in "iub" and got.kind == "f" else None


def _to_numpy(t, arrays, dtype=None):
    arr = result(t, True)
    want = None if dtype is not None else _numpy_result_dtype(arrays, np.asarray(arr).dtype)
    return np.rint(arr).astype(want) if want is not None else arr


def _wrap_out(out, ctx):
    """A tensor writing straight into the NumPy array `out`, or None if it must be copied."""
    if isinstance(out, Tensor):
        require_context(out, ctx, "out=", "the operands")
        check_writeable(out)
        return out
    if not (isinstance(out, np.ndarray) and out.flags.writeable and ctx.is_cpu):
        return None
    try:
        t = from_numpy(out, ctx)
    except Exception:
        return None
    return t if _same_memory(t, out) else None


def _same_memory(t, arr):
    ptr = ctypes.c_void_p()
    if _lib.fn("lt_tensor_host_pointer")(t.handle, ctypes.byref(ptr)) != 0:
        return False
    return (ptr.value or 0) == arr.ctypes.data and t.dtype == arr.dtype


def einsum(expr, *arrays, device=None, optimize="auto", out=None, dtype=None):
    """Evaluates an einsum expression like numpy.einsum (ellipsis, repeated labels, implicit
    output, many operands). NumPy inputs give a NumPy result; Tensors a Tensor. `out` (an array
    or Tensor of the result's shape) receives the result and is returned.

    Also NumPy's sublist form, einsum(a, [0, 1], b, [1, 2], [0, 2]) (Ellipsis allowed), whose
    integer labels may go past NumPy's 52; and optimize=['einsum_path', (0, 1), ...], an
    explicit path (as einsum_path returns), followed step by step and validated as NumPy
    does (IndexError for a position out of range, RuntimeError when operands are left)."""
    if not isinstance(expr, str):
        parsed = _sublists(expr, arrays)
        if parsed[0] is None:  # more than 52 distinct labels: integer-label einsum
            return _einsum_modes(*parsed[1:], device=device, optimize=optimize, out=out,
                                 dtype=dtype)
        expr, arrays = parsed[0], tuple(parsed[1])
    # NumPy's einsum takes Python scalars as arrays (int64, float64), not as weak scalars
    arrays = tuple(np.asarray(a) if type(a) in (int, float, bool) else a for a in arrays)
    if out is not None and hasattr(out, "dtype"):
        check_out_cast(_result_dtype(arrays, dtype), out.dtype)
    if out is not None:
        check_inplace("out=", *(a for a in (out,) + tuple(arrays) if isinstance(a, Tensor)))
    if _FAST is not None and device is None and dtype is None and type(expr) is str and \
            (optimize == "auto" or isinstance(optimize, (str, bool))):
        # The C extension: a plan cached by layouts, run in one call (NumPy float arrays,
        # Tensors).
        opts = _AUTO.handle if optimize == "auto" else _options(optimize).handle
        r = _FAST.einsum(expr, arrays, opts, out)
        if r is not NotImplemented:
            return r if type(r) is not int else \
                Tensor(r, next(a for a in arrays if isinstance(a, Tensor)).context)
    if _is_explicit_path(optimize):
        steps = _check_path(optimize, len(arrays))
        if _path_pairs(steps) is None:  # a one-operand step: NumPy's, followed step by step
            return _explicit_path(expr, arrays, optimize, device, out, dtype)
    tensors, numpy_out = operands(arrays, device)
    ctx = tensors[0].context if tensors else context(device)
    opts = _options(optimize, dtype)
    handles = _lib.handle_array(t.handle for t in tensors)
    if out is not None:
        target = _wrap_out(out, ctx)
        if target is not None:
            check(_lib.fn("lt_einsum_into")(_lib.cstr(expr, "einsum expression"), len(tensors),
                                            handles, opts.handle, target.handle))
            return out
    t = _new("lt_einsum", ctx, _lib.cstr(expr, "einsum expression"), len(tensors), handles,
             opts.handle)
    if out is None:
        return _to_numpy(t, arrays, dtype) if numpy_out else t
    check_out_cast(t.dtype, out.dtype)
    np.copyto(out, np.asarray(_to_numpy(t, arrays, dtype)), casting="same_kind")
    return out


class EinsumPlan:
    """An einsum compiled for fixed operand layouts and dtypes; call it with arrays of those
    layouts (the data may differ) as many times as needed: plan(*arrays, out=None). Arrays of
    other layouts raise LayoutMismatchError. `shape` and `dtype` describe the result."""

    def __init__(self, expr, *arrays, device=None, optimize="auto", dtype=None,
                 memory_limit=None, precision="fast"):
        tensors, self._numpy_out = operands(arrays, device)
        self.context = tensors[0].context if tensors else context(device)
        self.expr = expr
        self.n_inputs = len(tensors)
        opts = _options(optimize, dtype, memory_limit, precision)
        out = ctypes.c_void_p()
        check(_lib.fn("lt_plan_einsum")(_lib.cstr(expr, "einsum expression"), len(tensors),
                                        _lib.handle_array(t.handle for t in tensors), None,
                                        opts.handle, ctypes.byref(out)))
        self.handle = out.value
        template = ctypes.c_void_p()
        check(_lib.fn("lt_plan_create_output")(self.handle, ctypes.byref(template)))
        # Kept: the extension compares out= arrays with it (the plan's own output layout).
        self._template = template = Tensor(template.value, self.context)
        # The extension's call with this plan's handles bound (one C call per plan call).
        self._fast_call = None if _FAST is None else functools.partial(
            _FAST.plan_call, self.handle, self.context.handle, template.handle)
        self.shape, self.dtype = template.shape, template.dtype

    def __del__(self):
        h, self.handle = getattr(self, "handle", None), None
        if h is not None:
            try:
                _lib.fn("lt_plan_destroy")(h)
            except Exception:
                pass

    def describe(self):
        """The chosen path, each step's flops and intermediate sizes."""
        return _lib.fn("lt_plan_describe")(self.handle).decode()

    __str__ = describe

    @property
    def workspace_size(self):
        size = ctypes.c_size_t()
        check(_lib.fn("lt_plan_workspace_size")(self.handle, ctypes.byref(size)))
        return size.value

    def __call__(self, *arrays, out=None, alpha=1.0, beta=0.0):
        """Runs the plan: out = alpha * einsum(arrays) + beta * out."""
        if self._fast_call is not None and len(arrays) == self.n_inputs:
            # One C call; NotImplemented: what it leaves to the code below.
            r = self._fast_call(arrays, out, alpha, beta)
            if r is not NotImplemented:
                return r if type(r) is not int else Tensor(r, self.context)
        # Lean path: Tensors of this context in and out, no scalars to pass: one C call.
        if type(out) is Tensor and out.context is self.context and not out.readonly and \
                alpha == 1.0 and beta == 0.0 and len(arrays) == self.n_inputs and \
                all(type(a) is Tensor and a.context is self.context for a in arrays):
            handles = (ctypes.c_void_p * self.n_inputs)(*[a._handle for a in arrays])
            check(_execute(self.handle, handles, self.n_inputs, None, 0, out._handle))
            return out
        if len(arrays) != self.n_inputs:
            raise InvalidArgumentError(f"libtensor: this plan takes {self.n_inputs} operands, "
                                       f"got {len(arrays)}", _EINVAL)
        tensors, numpy_out = operands(arrays, self.context, "the plan")
        if beta != 0 and out is None:
            raise InvalidArgumentError("libtensor: beta != 0 needs out=", _EINVAL)
        target = None
        if isinstance(out, Tensor):
            target = _wrap_out(out, self.context)
        elif out is not None and out.flags.c_contiguous and out.dtype == self.dtype \
                and out.shape == self.shape:
            target = _wrap_out(out, self.context)  # the plan's own output layout
        if target is None:
            handle = ctypes.c_void_p()
            check(_lib.fn("lt_plan_create_output")(self.handle, ctypes.byref(handle)))
            target = Tensor(handle.value, self.context)
            if beta != 0:
                target[...] = np.asarray(out)
        scalars = (ctypes.c_double * 2)(alpha, beta)
        check(_lib.fn("lt_plan_execute")(self.handle, _lib.handle_array(t.handle for t in tensors),
                                         len(tensors), scalars, 2, target.handle))
        if out is not None and target is not out and not _is_view_of(target, out):
            check_out_cast(target.dtype, out.dtype)
            np.copyto(out, np.asarray(_to_numpy(target, arrays)), casting="same_kind")
            return out
        if out is not None:
            return out
        return _to_numpy(target, arrays) if numpy_out else target


def matmul(a, b, out=None, device=None):
    """numpy.matmul: the matrix product over the last two axes, broadcasting the others; a 1-D
    operand is a vector (its axis is dropped from the result). 0-d operands are a ValueError."""
    ra, rb = np.ndim(a), np.ndim(b)
    if ra == 0 or rb == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions (0-d operands "
                         "are not matrices; use multiply)")
    expr = ("i,i->" if ra == 1 and rb == 1 else "j,...jk->...k" if ra == 1
            else "...ij,j->...i" if rb == 1 else "...ij,...jk->...ik")
    ka, kb = np.shape(a)[-1], np.shape(b)[0 if rb == 1 else -2]
    if ka != kb:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 (size "
                         f"{kb} is different from {ka})")
    try:
        return einsum(expr, a, b, out=out, device=device)
    except AliasingError:
        # out= overlaps an operand (x = x @ y in place): NumPy buffers the result, so do we
        r = einsum(expr, a, b, device=device)
        if isinstance(out, np.ndarray):
            np.copyto(out, np.asarray(r), casting="same_kind")
        else:
            out[...] = r
        return out


# Tensor's matrix product: tensor.py sits below this module, so it is installed from here.
def _matmul(self, other):
    return matmul(self, other)


def _rmatmul(self, other):
    return matmul(other, self)


_matmul.__name__, _matmul.__qualname__ = "__matmul__", "Tensor.__matmul__"
_rmatmul.__name__, _rmatmul.__qualname__ = "__rmatmul__", "Tensor.__rmatmul__"
Tensor.__matmul__ = _matmul
Tensor.__rmatmul__ = _rmatmul


def _is_view_of(t, out):
    return isinstance(out, np.ndarray) and _same_memory(t, out)


def plan_einsum(expr, *arrays, **kwargs):
    """Compiles `expr` for the layouts of `arrays`; returns a callable EinsumPlan."""
    return EinsumPlan(expr, *arrays, **kwargs)


def einsum_path(expr, *arrays, device=None, optimize="auto"):
    """(path, text) as numpy.einsum_path: path = ['einsum_path', (i, j), ...] the contraction
    order the library chose (positions in the current operand list; each step's result is
    appended at the end), usable as einsum(..., optimize=path); text = lt_plan_describe's
    account (each step's flops, intermediate sizes and how it runs). Sublist form accepted; an
    explicit path is validated and returned as given."""
    if not isinstance(expr, str):
        expr, arrays = _sublists(expr, arrays, need_letters=True)
    if _is_explicit_path(optimize):
        inputs, _ = _expand(expr, [np.ndim(a) if not isinstance(a, Tensor) else a.ndim
                                   for a in arrays])
        steps = _check_path(optimize, len(inputs))
        return ["einsum_path"] + [tuple(s) for s in steps], _explicit_text(expr, steps)
    plan = plan_einsum(expr, *arrays, device=device, optimize=optimize)
    return ["einsum_path"] + _plan_path(plan, len(arrays)), plan.describe()


# ---- sublists, explicit paths

_LABELS = string.ascii_uppercase + string.ascii_lowercase  # NumPy's order for sublist ints


def _sublist_labels(sub, mapping):
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
            continue
        try:
            s = operator_index(s)
        except TypeError:
            s = None
        if s is None:
            raise TypeError("libtensor: einsum sublists must contain int labels or Ellipsis")
        out.append(mapping(s))
    return out


def _sublists(first, rest, need_letters=False):
    """(expr, arrays) for the sublist form (op, sub, op, sub, ..., [out]); with more than 52
    distinct labels (None, arrays, modes, out_modes) for the integer-label API."""
    args = (first,) + tuple(rest)
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(args) % 2 == 1:
        out = ops.pop() if len(ops) > len(subs) else None
    if len(ops) != len(subs) or not ops:
        raise ValueError("libtensor: einsum sublist form is einsum(op0, sublist0, op1, "
                         "sublist1, ..., [sublist_out])")
    labels = sorted({int(x) for sub in subs + ([out] if out is not None else [])
                     for x in sub if x is not Ellipsis and isinstance(x, (int, np.integer))
                     and not isinstance(x, (bool, np.bool_))})
    if all(0 <= x < 52 for x in labels):
        mapping = _LABELS.__getitem__
    elif len(labels) <= 52:
        index = {x: _LABELS[i] for i, x in enumerate(labels)}
        mapping = index.__getitem__
    else:
        if need_letters or any(x is Ellipsis for sub in subs for x in sub):
            raise ValueError(f"libtensor: {len(labels)} distinct labels with Ellipsis (or "
                             "for einsum_path): at most 52")
        modes = [[int(x) for x in sub] for sub in subs]
        if out is None:  # implicit output: the labels seen once, in increasing order
            flat = [x for m in modes for x in m]
            out = sorted(x for x in set(flat) if flat.count(x) == 1)
        return None, ops, modes, [int(x) for x in out]
    expr = ",".join("".join(_sublist_labels(sub, mapping)) for sub in subs)
    if out is not None:
        expr += "->" + "".join(_sublist_labels(out, mapping))
    return expr, ops


def _einsum_modes(arrays, modes, out_modes, device=None, optimize="auto", out=None, dtype=None):
    if _is_explicit_path(optimize):
        _check_path(optimize, len(arrays))  # NumPy's errors before the library's
    tensors, numpy_out = operands(arrays, device)
    for i, (t, m) in enumerate(zip(tensors, modes)):
        if len(m) != t.ndim:
            raise InvalidArgumentError(f"libtensor: sublist {i} has {len(m)} labels for an "
                                       f"operand with {t.ndim} axes", _EINVAL)
    ctx = tensors[0].context
    arrs = [(ctypes.c_int32 * max(len(m), 1))(*m) for m in modes]
    ptrs = (ctypes.POINTER(ctypes.c_int32) * len(arrs))(
        *[ctypes.cast(a, ctypes.POINTER(ctypes.c_int32)) for a in arrs])
    outm = (ctypes.c_int32 * max(len(out_modes), 1))(*out_modes)
    h = ctypes.c_void_p()
    check(_lib.fn("lt_einsum_modes")(len(tensors), _lib.handle_array(t.handle for t in tensors),
                                     ptrs, len(out_modes), outm, _options(optimize, dtype).handle,
                                     ctypes.byref(h)))
    t = Tensor(h.value, ctx)
    if out is not None:
        return deliver(t, out, numpy_out)
    return _to_numpy(t, arrays, dtype) if numpy_out else t


def _is_explicit_path(optimize):
    return isinstance(optimize, (list, tuple)) and len(optimize) > 0 and \
        isinstance(optimize[0], str) and optimize[0] == "einsum_path"


def _expand(expr, ndims):
    """Input subscripts with every '...' spelled out in unused letters, and the output's (the
    implicit output as NumPy: ellipsis labels, then the labels seen once, sorted)."""
    expr = expr.replace(" ", "")
    lhs, arrow, rhs = expr.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise ValueError(f"libtensor: einsum expression has {len(inputs)} operands, "
                         f"{len(ndims)} given")
    unused = [c for c in _LABELS if c not in expr]
    n_ell = max([nd - len(sub.replace("...", "")) for sub, nd in zip(inputs, ndims)
                 if "..." in sub] or [0])
    ell = "".join(unused[:n_ell])
    out = []
    for sub, nd in zip(inputs, ndims):
        if "..." in sub:
            k = nd - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[n_ell - k:] if k > 0 else "")
        out.append(sub)
    if arrow:
        rhs = rhs.replace("...", ell)
    else:
        flat = "".join(out)
        rhs = ell + "".join(sorted(c for c in set(flat) if flat.count(c) == 1 and c not in ell))
    return out, rhs


def _check_path(path, n):
    """The steps of an explicit path, validated as NumPy does (its exception types)."""
    steps, left = [], n
    for k, step in enumerate(path[1:]):
        try:
            step = [operator_index(i) for i in step]
        except TypeError:
            raise TypeError(f"libtensor: einsum_path step {k} ({step!r}) is not a tuple of "
                            "operand positions") from None
        if not step or len(set(step)) != len(step):
            raise ValueError(f"libtensor: einsum_path step {k} {tuple(step)} must name "
                             "distinct operand positions")
        for i in step:
            if not 0 <= i < left:
                raise IndexError(f"libtensor: einsum_path step {k} {tuple(step)}: position {i} "
                                 f"is out of range for {left} remaining operands")
        left -= len(step) - 1
        steps.append(step)
    if left != 1:
        raise RuntimeError(f"Invalid einsum_path is specified: {left - 1} more operands has "
                           "to be contracted.")
    return steps


def operator_index(i):
    if isinstance(i, (bool, np.bool_)):
        raise TypeError("bool")
    return operator.index(i)


def _explicit_steps(expr, ndims, steps):
    """(step expressions, final expression): each step's einsum over the positions it names,
    keeping the labels still needed by the remaining operands or the output."""
    inputs, output = _expand(expr, ndims)
    exprs = []
    for k, step in enumerate(steps):
        chosen = [inputs[i] for i in step]
        rest = [s for i, s in enumerate(inputs) if i not in step]
        if k == len(steps) - 1:
            res = output
        else:
            keep = set("".join(rest)) | set(output)
            seen = []
            for c in "".join(chosen):
                if c in keep and c not in seen:
                    seen.append(c)
            res = "".join(seen)
        exprs.append(",".join(chosen) + "->" + res)
        inputs = rest + [res]
    return exprs, inputs, output


def _explicit_text(expr, steps):
    return (f"einsum {expr!r}: explicit path " +
            " ".join(str(tuple(s)) for s in steps))


def _explicit_path(expr, arrays, path, device, out, dtype):
    """einsum following an explicit path: one einsum per step over the positions it names,
    its result appended to the operand list; the last step writes the result (or out=)."""
    tensors, numpy_out = operands(arrays, device)
    steps = _check_path(path, len(tensors))
    exprs, left, output = _explicit_steps(expr, [t.ndim for t in tensors], steps)
    current = list(tensors)
    for step, e in zip(steps[:-1], exprs[:-1]):
        chosen = [current[i] for i in step]
        current = [t for i, t in enumerate(current) if i not in step]
        current.append(einsum(e, *chosen, optimize="none"))
    if steps:
        final, last = exprs[-1], [current[i] for i in steps[-1]]
    else:  # one operand and no step: the whole expression at once
        final, last = ",".join(left) + "->" + output, current
    res = einsum(final, *last, optimize="none", dtype=dtype, out=out)
    if out is not None:
        return out
    return _to_numpy(res, arrays, dtype) if numpy_out else res


_STEP = re.compile(r"^\s*step \d+: (\S+)->(\S*)")


def _plan_path(plan, n):
    """The plan's pairwise path in NumPy's form: from lt_plan_einsum_step when the library has
    it, else read from the description's step lines (each step's operand subscripts matched
    in the current list)."""
    if _lib.has("lt_plan_einsum_n_steps"):
        count = ctypes.c_int64()
        check(_lib.fn("lt_plan_einsum_n_steps")(plan.handle, ctypes.byref(count)))
        pairs = []
        for s in range(count.value):
            pair = (ctypes.c_int64 * 2)()
            check(_lib.fn("lt_plan_einsum_step")(plan.handle, s, pair, None, None, None))
            pairs.append(tuple(sorted((pair[0], pair[1]))))
        return pairs or [tuple(range(n))]
    lines = [m.groups() for m in map(_STEP.match, plan.describe().splitlines()) if m]
    inputs = _expand(plan.expr, [0] * n)[0] if "..." not in plan.expr else None
    if not lines or inputs is None:
        return [tuple(range(n))]
    current, path = list(inputs), []
    for lhs, res in lines:
        picked = []
        for sub in lhs.split(","):
            hit = next((i for i, c in enumerate(current) if c == sub and i not in picked), None)
            if hit is None:
                return [tuple(range(n))]
            picked.append(hit)
        path.append(tuple(sorted(picked)))
        current = [c for i, c in enumerate(current) if i not in picked] + [res]
    return path


# The default options, made once (the extension's einsum path passes their handle).
_AUTO = _options("auto")

__all__ = ["einsum", "einsum_path", "matmul", "plan_einsum", "EinsumPlan"]

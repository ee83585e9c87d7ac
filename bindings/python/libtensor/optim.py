# SPDX-License-Identifier: MIT
"""Optimisers in torch.optim's conventions over the C optimisers (lt_optim_*): each updates its
parameters in place through plans from the gradients on their context's tape.

    opt = lt.optim.Adam(params, lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()
"""
import ctypes

from . import _lib, enums
from .autograd import _tape_of
from .errors import check, raise_status
from .tensor import Tensor


class Optimizer:
    """torch.optim's interface over the C optimiser (lt_optim_*): step() updates every
    parameter from its .grad in one fused pass per tensor, zero_grad() clears the gradients."""
    _KIND = None

    def __init__(self, params, hyper):
        self.params = list(params)
        if not self.params or not all(isinstance(p, Tensor) for p in self.params):
            raise_status("LT_ERR_INVALID_ARGUMENT",
                         "libtensor: an optimiser needs a non-empty list of Tensors")
        ctx = self.params[0].context
        tape = _tape_of(ctx, create=True)
        for p in self.params:
            if not p.requires_grad:
                p.requires_grad = True
        self._tape = tape  # keeps the tape alive as long as the optimiser
        out = ctypes.c_void_p()
        check(_lib.fn("lt_optim_create")(tape.handle, self._KIND, len(self.params),
                                         _lib.handle_array(p.handle for p in self.params),
                                         ctypes.byref(out)))
        self._handle = out.value
        for name, value in hyper.items():
            if value is not None:
                check(_lib.fn("lt_optim_set")(self._handle, name, float(value)))

    def __del__(self):
        h, self._handle = getattr(self, "_handle", None), None
        if h is not None:
            try:
                _lib.fn("lt_optim_destroy")(h)
            except Exception:
                pass

    def step(self):
        """One update of every parameter that has a gradient."""
        check(_lib.fn("lt_optim_step")(self._handle))

    def zero_grad(self, set_to_none=True):
        """Drops the parameters' gradients (they are always set to None)."""
        check(_lib.fn("lt_optim_zero_grad")(self._handle))


class SGD(Optimizer):
    """torch.optim.SGD: momentum, dampening, weight decay and Nesterov as PyTorch defines them."""
    _KIND = enums.LT_OPTIM_SGD

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("libtensor: Nesterov momentum needs momentum > 0 and dampening 0 "
                             f"(got {momentum} and {dampening}), as torch.optim.SGD")
        super().__init__(params, {enums.LT_OPTIM_LR: lr, enums.LT_OPTIM_MOMENTUM: momentum,
                                    enums.LT_OPTIM_DAMPENING: dampening,
                                    enums.LT_OPTIM_WEIGHT_DECAY: weight_decay,
                                    enums.LT_OPTIM_NESTEROV: 1.0 if nesterov else 0.0})


class Adam(Optimizer):
    """torch.optim.Adam (L2 weight decay added to the gradient), bias-corrected per parameter."""
    _KIND = enums.LT_OPTIM_ADAM

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, {enums.LT_OPTIM_LR: lr, enums.LT_OPTIM_BETA1: betas[0],
                                    enums.LT_OPTIM_BETA2: betas[1], enums.LT_OPTIM_EPS: eps,
                                    enums.LT_OPTIM_WEIGHT_DECAY: weight_decay})


class AdamW(Adam):
    """torch.optim.AdamW: decoupled weight decay."""
    _KIND = enums.LT_OPTIM_ADAMW

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        Adam.__init__(self, params, lr, betas, eps, weight_decay)


__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]

"""torch's deprecated functions that old code still calls: ``torch.range`` (inclusive of its end), ``torch.svd``
(V, not Vh), ``torch.qr`` (``some``), ``torch.cholesky`` (its own CholeskyBackward0), each with torch's once-a-process
warning where torch warns. (A module of their own: ``range`` must not shadow Python's in a module that uses it.)"""
import math
import warnings

import jax.numpy as jnp
import numpy as np

from .._warnings import warn_once
from .. import _dtype
from ._bind import public
from ._registry import _apply, op
from ._return_types import structseq
from .creation import _check_requires_grad, _finish, _number, zeros
from .linalg_module import _check, _cholesky_ex, _out, _qr, _raise_info, _svd

_LEGACY = {  # torch's once-a-process warnings
    "qr": "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
          "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
          "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
    "range": "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
             "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
    "cholesky": "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
                "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
                "transform will produce equivalent results for all valid (symmetric positive definite) inputs.",
}


def _legacy_warning(name):
    warn_once(("legacy", name), _LEGACY[name], stacklevel=4)


@public
def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with V the conjugate transpose of linalg.svd's Vh (LinalgSvdBackward0), reduced unless
    ``some=False``; ``compute_uv=False``: U and V zero (m x m, n x n), S alone differentiable."""
    if input.ndim < 2:  # (torch's svd has a message of its own)
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.ndim} dimensions "
                           f"instead")
    _check(input, "linalg.svd", square=False)
    if not compute_uv:
        S = _apply(_svd, (input,), (False,))[1]
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return _out(structseq("svd", ("U", "S", "V"))(zeros(*batch, m, m, dtype=input.dtype), S,
                                                      zeros(*batch, n, n, dtype=input.dtype)), out)
    U, S, Vh = _apply(_svd, (input,), (not some,))
    return _out(structseq("svd", ("U", "S", "V"))(U, S, Vh.mH), out)


@public
def qr(input, some=True, *, out=None):
    """torch.qr: linalg.qr in mode 'reduced' (or 'complete' with ``some=False``), after torch's warning."""
    _legacy_warning("qr")
    _check(input, "linalg.qr", square=False)
    return _out(structseq("qr", ("Q", "R"))(*_apply(_qr, (input,), ("reduced" if some else "complete",))), out)


@op("CholeskyBackward0", save=("result",), attrs=("upper",))
def _cholesky(self, *, upper):
    return _cholesky_ex.forward(self, upper=upper)[0]


_cholesky.derivative(lambda grad, result, upper: _cholesky_ex.backward((grad, None), result, upper))


@public
def cholesky(input, upper=False, *, out=None):
    """torch.cholesky: the lower (or ``upper``) Cholesky factor (CholeskyBackward0), after torch's warning."""
    _legacy_warning("cholesky")
    _check(input, "cholesky")
    result = _apply(_cholesky, (input,), (bool(upper),))
    if jnp.isnan(result._data).any():  # (as torch's, a host read; only then is info computed)
        _raise_info(_apply(_cholesky_ex, (input.detach(),), (bool(upper),))[1],
                    "cholesky: {where}The factorization could not be completed because the input is not "
                    "positive-definite (the leading minor of order {k} is not positive-definite).")
    return _out(result, out)


@public(method=False)
def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.range (deprecated in torch for arange): start to end *inclusive* by step, in the default dtype."""
    _legacy_warning("range")
    d = _dtype.to_dtype(dtype) or _dtype.get_default_dtype()
    _check_requires_grad(d._np, requires_grad)
    a0, a1, st = (float(_number(v)) for v in (start, end, step))
    if st == 0:
        raise RuntimeError("step must be nonzero")
    if (st > 0 and a1 < a0) or (st < 0 and a1 > a0):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    values = (a0 + st * np.arange(int(math.floor((a1 - a0) / st)) + 1)).astype(d._np)
    return _finish(values, device, requires_grad, out)


def _get_volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _set_volatile(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", UserWarning,
                  stacklevel=2)


# Variable.volatile (removed in torch 0.4; old code still reads and sets it): always False, with torch's warnings
public(_get_volatile, name="volatile", function=False, method=property(_get_volatile, _set_volatile))

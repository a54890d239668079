"""torchlike.special: torch.special's functions. Its aliases are the torch-level functions themselves (expit is
sigmoid: SigmoidBackward0, gammaln is lgamma, ...), recorded as torch records them; its own ops are in
ops/special.py (SpecialI0EBackward0, ...), the Bessel functions and polynomials have no derivative, as in torch."""
import math as _math

from . import ops as _ops  # noqa: F401
from .ops import pointwise as _pw, reduction as _rd, special as _sp
from .ops._out import _write_out

erf, erfc, erfinv, expm1, exp2, log1p, sinc, logit, xlogy = (
    _pw.erf, _pw.erfc, _sp.erfinv, _pw.expm1, _pw.exp2, _pw.log1p, _pw.sinc, _pw.logit, _sp.xlogy)
expit, gammaln, digamma, psi, polygamma, multigammaln, i0, round = (  # noqa: A001 - torch's name
    _pw.sigmoid, _sp.lgamma, _sp.digamma, _sp.digamma, _sp.polygamma, _sp.mvlgamma, _sp.i0, _pw.round)
gammainc, gammaincc, xlog1py, zeta = _sp.igamma, _sp.igammac, _sp._xlog1py, _sp._zeta_fn
globals().update(_sp._special)


def ndtr(input, *, out=None):
    """The standard normal CDF, as torch computes it: (1 + erf(x / sqrt(2))) * 0.5 (MulBackward1)."""
    if out is not None:
        return _write_out("special_ndtr", lambda: ndtr(input), out, (input,))
    return (1 + _pw.erf(input * _math.sqrt(0.5))) * 0.5


def logsumexp(input, dim, keepdim=False, *, out=None):
    """torch.logsumexp (LogsumexpBackward0)."""
    if out is not None:
        return _write_out("special_logsumexp", lambda: logsumexp(input, dim, keepdim), out, (input,))
    return _rd.logsumexp(input, dim, keepdim)


def softmax(input, dim, *, dtype=None):
    """torch.softmax (SoftmaxBackward0)."""
    return _rd.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """torch.log_softmax (LogSoftmaxBackward0)."""
    return _rd.log_softmax(input, dim, dtype)


__all__ = sorted(n for n in globals() if not n.startswith("_") and n != "math")

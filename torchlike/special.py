"""torchlike.special: torch.special's functions. Its aliases are the torch-level functions themselves (expit is
sigmoid: SigmoidBackward0, gammaln is lgamma, ...), recorded as torch records them; its own ops are in
ops/special.py (SpecialI0EBackward0, ...), the Bessel functions and polynomials have no derivative, as in torch."""
import torchlike as _tl
from .ops import reduction as _rd, special as _sp
from .ops import _bind
from .ops._out import _write_out

erf, erfc, erfinv, expm1, exp2, log1p, sinc, logit, xlogy = (
    _tl.erf, _tl.erfc, _tl.erfinv, _tl.expm1, _tl.exp2, _tl.log1p, _tl.sinc, _tl.logit, _tl.xlogy)
expit, gammaln, digamma, psi, polygamma, multigammaln, i0 = (
    _tl.sigmoid, _tl.lgamma, _tl.digamma, _tl.digamma, _tl.polygamma, _tl.mvlgamma, _tl.i0)
gammainc, gammaincc = _sp._gammainc("gammainc", _tl.igamma), _sp._gammainc("gammaincc", _tl.igammac)
xlog1py, zeta, ndtr = _sp._xlog1py, _sp._zeta_fn, _sp._ndtr
globals().update(_sp._special)


def round(input, *, decimals=0, out=None):  # noqa: A001 - torch's name
    """torch.round with ``decimals`` (RoundBackward1)."""
    return _tl.round(input, decimals=decimals, out=out)


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


__all__ = sorted(n for n in globals() if not n.startswith("_"))
_bind.guarded(globals(), " ".join(__all__), prefix="special_")  # torch's argument errors, as special_<name>

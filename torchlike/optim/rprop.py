"""Rprop (etas, step size bounds, maximize): torch's single-tensor update, jitted over all parameters."""
import jax.numpy as jnp

from ..ops.creation import full_like as _full_like, tensor as _tensor, zeros_like as _zeros_like
from ._single import _c, _check_lr, _ElementwiseOptimizer
from .optimizer import _scalar_dtype, _to_scalar

__all__ = ["Rprop"]


def _sign(x):
    """torch's sign: 0 for NaN."""
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


class Rprop(_ElementwiseOptimizer):
    """Resilient backpropagation, as ``torch.optim.Rprop``; ``foreach`` and ``capturable`` are accepted and
    recorded (``foreach=True`` counts torch's in-place ops on ``prev``)."""

    _kind = "rprop"
    _hypers = ("etas", "step_sizes")  # lr only sets the initial step sizes
    _defaults_on_load = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        self._init(params, {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                            "maximize": maximize, "differentiable": differentiable, "capturable": capturable})

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["foreach"]))

    def _new_state(self, p, group):
        lr = _to_scalar(group["lr"])
        return {"step": _tensor(0.0, dtype=_scalar_dtype()), "prev": _zeros_like(p),
                "step_size": _full_like(p, complex(lr, lr) if p.is_complex() else lr)}

    def _bumps(self, spec):
        maximize, foreach = spec
        return {"step_size": 2, "prev": 1 + foreach + (foreach and maximize)}  # mul_, clamp_; [neg_,] copy_s

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        etaminus, etaplus = _c(h["etaminus"], rd), _c(h["etaplus"], rd)
        sign = _sign(g * st["prev"])
        sign = jnp.where(sign > 0, etaplus, sign)
        sign = jnp.where(sign < 0, etaminus, sign)
        sign = jnp.where(sign == 0, jnp.ones((), rd), sign)
        step_size = jnp.minimum(jnp.maximum(st["step_size"] * sign, _c(h["step_size_min"], rd)),
                                _c(h["step_size_max"], rd))
        g = jnp.where(sign == etaminus, jnp.zeros((), rd), g)
        return p + _c(-1.0, rd) * _sign(g) * step_size, {"step": st["step"] + 1, "prev": g, "step_size": step_size}

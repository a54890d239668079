"""Adamax (weight decay, maximize): torch's single-tensor update, jitted over all parameters."""
import jax.numpy as jnp

from ..ops.creation import tensor as _tensor, zeros_like as _zeros_like
from ._single import _c, _check, _check_betas, _check_lr, _decay, _ElementwiseOptimizer
from .adam import _lerp
from .optimizer import _scalar_dtype

__all__ = ["Adamax"]


class Adamax(_ElementwiseOptimizer):
    """Adamax (Adam with the infinity norm), as ``torch.optim.Adamax``; ``foreach`` and ``capturable`` are
    accepted and recorded."""

    _kind = "adamax"
    _hypers = ("lr", "betas", "eps", "weight_decay")
    _defaults_on_load = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *,
                 maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        self._init(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                            "capturable": capturable})

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _new_state(self, p, group):
        return {"step": _tensor(0.0, dtype=_scalar_dtype()), "exp_avg": _zeros_like(p), "exp_inf": _zeros_like(p)}

    def _bumps(self, spec):
        return {"exp_inf": 2}  # mul_ then maximum(out=)

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        step = st["step"] + 1
        p, g = _decay(p, g, h, spec[1], False, rd)
        m = _lerp(st["exp_avg"], g, _c(1 - h["beta1"], rd))
        u = jnp.maximum(st["exp_inf"] * _c(h["beta2"], rd), jnp.abs(g) + _c(h["eps"], rd))
        clr = h["lr"] / (1 - h["beta1"] ** step.astype(jnp.float64))
        return p + _c(-clr, rd) * m / u, {"step": step, "exp_avg": m, "exp_inf": u}

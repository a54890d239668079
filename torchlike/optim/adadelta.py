"""Adadelta (weight decay, maximize): torch's single-tensor update, jitted over all parameters."""
import jax.numpy as jnp

from ..ops.creation import tensor as _tensor, zeros_like as _zeros_like
from ._single import _c, _check, _check_lr, _decay, _ElementwiseOptimizer
from .optimizer import _scalar_dtype

__all__ = ["Adadelta"]


class Adadelta(_ElementwiseOptimizer):
    """Adadelta, as ``torch.optim.Adadelta``; ``foreach`` and ``capturable`` are accepted and recorded."""

    _kind = "adadelta"
    _hypers = ("lr", "rho", "eps", "weight_decay")
    _defaults_on_load = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= rho <= 1.0, "rho value", rho)
        _check(0.0 <= eps, "epsilon value", eps)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        self._init(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay, "maximize": maximize,
                            "capturable": capturable, "foreach": foreach, "differentiable": differentiable})

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _new_state(self, p, group):
        return {"step": _tensor(0.0, dtype=_scalar_dtype()), "square_avg": _zeros_like(p),
                "acc_delta": _zeros_like(p)}

    def _bumps(self, spec):
        return {"square_avg": 2, "acc_delta": 2}

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        p, g = _decay(p, g, h, spec[1], False, rd)
        rho, eps = _c(h["rho"], rd), _c(h["eps"], rd)
        sq = st["square_avg"] * rho + _c(1 - h["rho"], rd) * g * g
        std = jnp.sqrt(sq + eps)
        delta = jnp.sqrt(st["acc_delta"] + eps) / std * g
        acc = st["acc_delta"] * rho + _c(1 - h["rho"], rd) * delta * delta
        return p + _c(-h["lr"], rd) * delta, {"step": st["step"] + 1, "square_avg": sq, "acc_delta": acc}

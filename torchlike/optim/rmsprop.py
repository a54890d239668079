"""RMSprop (momentum, centered, weight decay, maximize): torch's single-tensor update, jitted over all parameters."""
import jax.numpy as jnp

from ..ops.creation import tensor as _tensor, zeros_like as _zeros_like
from ._single import _c, _check, _check_lr, _decay, _ElementwiseOptimizer
from .adam import _lerp
from .optimizer import _scalar_dtype

__all__ = ["RMSprop"]


class RMSprop(_ElementwiseOptimizer):
    """RMSprop, as ``torch.optim.RMSprop``; ``foreach`` and ``capturable`` are accepted and recorded."""

    _kind = "rmsprop"
    _hypers = ("lr", "alpha", "eps", "weight_decay", "momentum")
    _defaults_on_load = dict(momentum=0, centered=False, foreach=None, maximize=False, differentiable=False,
                             capturable=False)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check(0.0 <= momentum, "momentum value", momentum)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= alpha, "alpha value", alpha)
        self._init(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                            "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                            "maximize": maximize, "differentiable": differentiable})

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0), bool(group["momentum"] > 0),
                bool(group["centered"]))

    def _new_state(self, p, group):
        state = {"step": _tensor(0.0, dtype=_scalar_dtype()), "square_avg": _zeros_like(p)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)
        return state

    def _bumps(self, spec):
        return {"square_avg": 2, "momentum_buffer": 2}

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        _, has_wd, has_mom, centered = spec
        out = {"step": st["step"] + 1}
        p, g = _decay(p, g, h, has_wd, False, rd)
        alpha = h["alpha"]
        sq = out["square_avg"] = st["square_avg"] * _c(alpha, rd) + _c(1 - alpha, rd) * g * g
        if centered:
            ga = out["grad_avg"] = _lerp(st["grad_avg"], g, _c(1 - alpha, rd))
            avg = jnp.sqrt(sq + _c(-1.0, rd) * ga * ga)
        else:
            avg = jnp.sqrt(sq)
        avg = avg + _c(h["eps"], rd)
        if has_mom:
            buf = out["momentum_buffer"] = st["momentum_buffer"] * _c(h["momentum"], rd) + g / avg
            return p + _c(-h["lr"], rd) * buf, out
        return p + _c(-h["lr"], rd) * g / avg, out

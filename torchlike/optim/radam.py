"""RAdam (L2 or decoupled weight decay, maximize): torch's single-tensor update, jitted over all parameters."""
import jax.numpy as jnp

from ..ops.creation import tensor as _tensor, zeros_like as _zeros_like
from ._single import _c, _check, _check_betas, _check_lr, _decay, _ElementwiseOptimizer
from .adam import _lerp
from .optimizer import _scalar_dtype

__all__ = ["RAdam"]


class RAdam(_ElementwiseOptimizer):
    """RAdam, as ``torch.optim.RAdam``; ``foreach`` and ``capturable`` are accepted and recorded."""

    _kind = "radam"
    _hypers = ("lr", "betas", "eps", "weight_decay")
    _defaults_on_load = dict(foreach=None, maximize=False, differentiable=False, capturable=False,
                             decoupled_weight_decay=False)

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                 *, foreach=None, maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        self._init(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                            "maximize": maximize, "foreach": foreach, "capturable": capturable,
                            "decoupled_weight_decay": decoupled_weight_decay, "differentiable": differentiable})

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0), bool(group["decoupled_weight_decay"]))

    def _new_state(self, p, group):
        return {"step": _tensor(0.0, dtype=_scalar_dtype()), "exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)}

    def _bumps(self, spec):
        return {"exp_avg_sq": 2, "param": 2 if spec[1] and spec[2] else 1}

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        step = st["step"] + 1
        t = step.astype(jnp.float64)
        lr, beta1, beta2 = h["lr"], h["beta1"], h["beta2"]
        p, g = _decay(p, g, h, spec[1], spec[2], rd)
        m = _lerp(st["exp_avg"], g, _c(1 - beta1, rd))
        v = st["exp_avg_sq"] * _c(beta2, rd) + _c(1 - beta2, rd) * g * g
        bc1, bc2 = 1 - beta1 ** t, 1 - beta2 ** t
        corrected = m / _c(bc1, rd) * _c(lr, rd)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * (beta2 ** t) / bc2
        rect = jnp.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = 1 / (jnp.sqrt(v) + _c(h["eps"], rd)) * _c(jnp.sqrt(bc2), rd)
        update = jnp.where(rho_t > 5.0, corrected * adaptive * _c(rect, rd), corrected)
        return p - update, {"step": step, "exp_avg": m, "exp_avg_sq": v}

"""NAdam (momentum decay, L2 or decoupled weight decay, maximize): torch's single-tensor update, jitted."""
import jax.numpy as jnp

from ..ops.creation import tensor as _tensor, zeros_like as _zeros_like
from ._single import _c, _check, _check_betas, _check_lr, _decay, _ElementwiseOptimizer
from .adam import _lerp
from .optimizer import _scalar_dtype

__all__ = ["NAdam"]


class NAdam(_ElementwiseOptimizer):
    """NAdam, as ``torch.optim.NAdam``; ``foreach`` and ``capturable`` are accepted and recorded."""

    _kind = "nadam"
    _hypers = ("lr", "betas", "eps", "weight_decay", "momentum_decay")
    _defaults_on_load = dict(maximize=False, foreach=None, capturable=False, differentiable=False,
                             decoupled_weight_decay=False)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False):
        _check_lr(lr)
        _check(0.0 <= eps, "epsilon value", eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= momentum_decay, "momentum_decay value", momentum_decay)
        self._init(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                            "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                            "maximize": maximize, "foreach": foreach, "capturable": capturable,
                            "differentiable": differentiable})

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0), bool(group["decoupled_weight_decay"]))

    def _new_state(self, p, group):
        return {"step": _tensor(0.0, dtype=_scalar_dtype()), "mu_product": _tensor(1.0, dtype=_scalar_dtype()),
                "exp_avg": _zeros_like(p), "exp_avg_sq": _zeros_like(p)}

    def _bumps(self, spec):
        return {"exp_avg_sq": 2, "param": 3 if spec[1] and spec[2] else 2}  # [mul_], addcdiv_, addcdiv_

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        step = st["step"] + 1
        t = step.astype(jnp.float64)
        lr, beta1, beta2 = h["lr"], h["beta1"], h["beta2"]
        bc2 = 1 - beta2 ** t
        p, g = _decay(p, g, h, spec[1], spec[2], rd)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * h["momentum_decay"])))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * h["momentum_decay"])))
        mp = st["mu_product"] * mu.astype(st["mu_product"].dtype)  # a tensor of the scalar dtype, as torch's
        mp64 = mp.astype(jnp.float64)
        m = _lerp(st["exp_avg"], g, _c(1 - beta1, rd))
        v = st["exp_avg_sq"] * _c(beta2, rd) + _c(1 - beta2, rd) * g * g
        denom = jnp.sqrt(v / _c(bc2, rd)) + _c(h["eps"], rd)
        p = p + _c(-lr * (1.0 - mu) / (1.0 - mp64), rd) * g / denom
        p = p + _c((-lr * mu_next) / (1.0 - mp64 * mu_next), rd) * m / denom
        return p, {"step": step, "mu_product": mp, "exp_avg": m, "exp_avg_sq": v}

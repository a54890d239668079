"""ASGD (weight decay, maximize): torch's single-tensor update, or with ``foreach=True`` its multi-tensor one (which
rounds differently), jitted over all parameters."""
import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor
from ..ops.creation import tensor as _tensor, zeros_like as _zeros_like
from ._single import _c, _check, _check_lr, _ElementwiseOptimizer
from .optimizer import _scalar_dtype, _to_scalar

__all__ = ["ASGD"]


class ASGD(_ElementwiseOptimizer):
    """Averaged stochastic gradient descent, as ``torch.optim.ASGD``; ``capturable`` is accepted and recorded."""

    _kind = "asgd"
    _hypers = ("lr", "lambd", "alpha", "t0", "weight_decay")
    _defaults_on_load = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None, maximize=False,
                 differentiable=False, capturable=False):
        _check_lr(lr)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        self._init(params, {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                            "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                            "capturable": capturable})

    def __setstate__(self, state):
        super().__setstate__(state)
        for p_state in self.state.values():
            for key in ("eta", "mu"):
                if key in p_state and not isinstance(p_state[key], Tensor):  # old checkpoints: a number
                    p_state[key] = _tensor(p_state[key], dtype=_scalar_dtype())

    def _spec(self, group):
        # the default dtype: torch rounds the new eta and mu through it (``torch.as_tensor`` of a Python float)
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0), bool(group["foreach"]),
                _dtype.get_default_dtype().name)

    def _new_state(self, p, group):
        return {"step": _tensor(0.0, dtype=_scalar_dtype()),
                "eta": _tensor(float(_to_scalar(group["lr"])), dtype=_scalar_dtype()),
                "mu": _tensor(1.0, dtype=_scalar_dtype()), "ax": _zeros_like(p)}

    def _bumps(self, spec):
        return {"param": 1 if spec[2] else 2}  # foreach: addcmul_; else mul_, add_

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        _, has_wd, foreach, default = spec
        default = jnp.dtype(default)
        lr, lambd, alpha = h["lr"], h["lambd"], h["alpha"]
        step = st["step"] + 1
        t = step.astype(jnp.float64)
        eta, mu, ax = st["eta"], st["mu"], st["ax"]
        if has_wd:
            g = g + _c(h["weight_decay"], rd) * p
        if foreach:  # p - eta * (g + lambd * p); eta's new value in the step's dtype, as torch's tensor arithmetic
            p = p - (g + _c(lambd, rd) * p) * eta.astype(rd)
            ax = ax + (p - ax) * mu.astype(rd)
            sd = step.dtype
            base = jnp.asarray(1, sd) + (lambd * lr).astype(sd) * step
            new_eta = (1 / jnp.power(base.astype(jnp.float64), alpha).astype(sd)) * lr.astype(sd)
        else:
            eta64 = eta.astype(jnp.float64)
            p = p * _c(1 - lambd * eta64, rd)
            p = p + _c(-eta64, rd) * g
            ax = jnp.where(mu.astype(jnp.float64) != 1, ax + (p - ax) * mu.astype(rd), p)
            new_eta = (lr / ((1 + lambd * lr * t) ** alpha)).astype(default)
        new_mu = (1 / jnp.maximum(1.0, t - h["t0"])).astype(default)
        return p, {"step": step, "eta": new_eta.astype(eta.dtype), "mu": new_mu.astype(mu.dtype), "ax": ax}

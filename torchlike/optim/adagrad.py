"""Adagrad (lr decay, initial accumulator, weight decay, maximize): torch's single-tensor update, jitted."""
import jax.numpy as jnp

from ..ops.creation import full_like as _full_like, tensor as _tensor
from ._single import _c, _check, _check_lr, _decay, _ElementwiseOptimizer
from .optimizer import _scalar_dtype

__all__ = ["Adagrad"]


class Adagrad(_ElementwiseOptimizer):
    """Adagrad, as ``torch.optim.Adagrad``: the state of every parameter is created by the constructor.

    ``foreach`` and ``fused`` are accepted and recorded. Sparse gradients do not exist in torchlike."""

    _kind = "adagrad"
    _hypers = ("lr", "lr_decay", "eps", "weight_decay")
    _defaults_on_load = dict(foreach=None, maximize=False, differentiable=False, fused=None)
    _takes_sparse = True

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check_lr(lr)
        _check(0.0 <= lr_decay, "lr_decay value", lr_decay)
        _check(0.0 <= weight_decay, "weight_decay value", weight_decay)
        _check(0.0 <= initial_accumulator_value, "initial_accumulator_value value", initial_accumulator_value)
        _check(0.0 <= eps, "epsilon value", eps)
        self._init(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                            "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                            "maximize": maximize, "differentiable": differentiable, "fused": fused})
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p].update(self._new_state(p, group))

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _new_state(self, p, group):
        v = self.defaults["initial_accumulator_value"]
        return {"step": _tensor(0.0, dtype=_scalar_dtype()),
                "sum": _full_like(p, complex(v, v) if p.is_complex() else v)}

    def share_memory(self):
        """A no-op kept for torch's API (state tensors are not shared between processes)."""

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        step = st["step"] + 1
        p, g = _decay(p, g, h, spec[1], False, rd)
        clr = h["lr"] / (1 + (step.astype(jnp.float64) - 1) * h["lr_decay"])
        s = st["sum"] + _c(1.0, rd) * g * g
        std = jnp.sqrt(s) + _c(h["eps"], rd)
        return p + _c(-clr, rd) * g / std, {"step": step, "sum": s}

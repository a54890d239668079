"""Adafactor (factored second moments of >= 2-d parameters, decoupled weight decay, maximize): torch's single-tensor
update, jitted over all parameters."""
import jax.numpy as jnp

from .._tensor import Tensor
from ..ops.creation import tensor as _tensor, zeros as _zeros, zeros_like as _zeros_like
from ._single import _c, _ElementwiseOptimizer
from .adam import _lerp
from .optimizer import _scalar_arg, _scalar_dtype

__all__ = ["Adafactor"]


def _require(ok, message):
    if not ok:
        raise ValueError(message)


def _norm(x):
    """``x.norm(2).item()``: in x's dtype, then a Python float."""
    return jnp.sqrt(jnp.sum(x * x)).astype(jnp.float64)


def _mean_sq(g, axis):
    """``torch.norm(g, dim=axis, keepdim=True).square_().div_(g.size(axis))``."""
    return jnp.square(jnp.sqrt(jnp.sum(g * g, axis=axis, keepdims=True))) / jnp.asarray(g.shape[axis], g.dtype)


def _py_max(a, b):
    """Python's ``max(a, b)`` (``a`` unless ``b > a``; NaN never wins)."""
    return jnp.where(b > a, b, a)


class Adafactor(_ElementwiseOptimizer):
    """Adafactor, as ``torch.optim.Adafactor``: parameters of two or more dimensions keep row and column factors of
    the second moment (``row_var``, ``col_var``), others a full ``variance``. ``foreach`` is accepted and recorded."""

    _kind = "adafactor"
    _hypers = ("lr", "beta2_decay", "d", "weight_decay")  # and eps1, eps2
    _defaults_on_load = dict(foreach=None)

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _require(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _require(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _require(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _require(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _require(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _require(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        self._init(params, {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                            "foreach": foreach, "maximize": maximize})

    def _check_param(self, p):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        super()._check_param(p)

    def _spec(self, group):
        return (bool(group["maximize"]), bool(group["weight_decay"] != 0))

    def _new_state(self, p, group):
        state = {"step": _tensor(0.0, dtype=_scalar_dtype())}
        if p.dim() > 1:
            shape = list(p.shape)
            state["row_var"] = _zeros(shape[:-1] + [1], dtype=p.dtype)
            state["col_var"] = _zeros(shape[:-2] + [1, shape[-1]], dtype=p.dtype)
        else:
            state["variance"] = _zeros_like(p)
        return state

    def _hyper_args(self, group):
        out = super()._hyper_args(group)
        eps1, eps2 = group["eps"]
        if eps1 is None:  # torch: the machine epsilon of the group's first parameter with a gradient
            eps1 = float(jnp.finfo(self._params_with_grad(group)[0]._data.dtype).eps)
        out["eps1"], out["eps2"] = _scalar_arg(eps1), _scalar_arg(eps2)
        return out

    def _bumps(self, spec):
        return {"param": 2 if spec[1] else 1}  # [mul_,] add_

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        lr, eps1 = h["lr"], h["eps1"]
        step = st["step"] + 1
        t = step.astype(jnp.float64)
        one_minus_beta2 = _c(t ** h["beta2_decay"], rd)
        rho = jnp.where(1 / t ** 0.5 < lr, 1 / t ** 0.5, lr)  # Python's min(lr, ...)
        alpha = _py_max(h["eps2"], _norm(p) / p.size ** 0.5) * rho
        if spec[1]:
            p = p * _c(1 - lr * h["weight_decay"], rd)
        if g.ndim > 1:
            row = _lerp(st["row_var"], _mean_sq(g, -1), one_minus_beta2)
            col = _lerp(st["col_var"], _mean_sq(g, -2), one_minus_beta2)
            var = row * col / jnp.maximum(jnp.mean(row, axis=-2, keepdims=True), _c(eps1, rd))
            new = {"step": step, "row_var": row, "col_var": col}
        else:
            var = _lerp(st["variance"], g * g, one_minus_beta2)
            new = {"step": step, "variance": var}
        update = 1 / jnp.sqrt(jnp.maximum(var, _c(eps1 * eps1, rd))) * g
        denom = _py_max(1.0, _norm(update) / (update.size ** 0.5 * h["d"]))
        return p + _c(-alpha / denom, rd) * update, new

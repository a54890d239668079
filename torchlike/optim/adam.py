"""Adam (and AdamW's decoupled weight decay, AMSGrad, maximize): torch's single-tensor update, jitted over all
parameters at once."""
import jax
import jax.numpy as jnp

from .. import _xcache
from .._tensor import Tensor
from ..ops.creation import tensor as _tensor, zeros_like as _zeros_like
from .optimizer import (Optimizer, _f64, _real_dtype, _run_update, _scalar_arg, _scalar_dtype, _to_scalar,
                        _traces, _write)

__all__ = ["Adam"]


def _as_real(x):
    return jnp.stack([x.real, x.imag], -1) if jnp.iscomplexobj(x) else x


def _as_complex(x, like):
    return jax.lax.complex(x[..., 0], x[..., 1]) if jnp.iscomplexobj(like) else x


def _lerp(start, end, w):
    """torch's lerp: ``start + w * (end - start)`` for |w| < 0.5, else ``end - (end - start) * (1 - w)``."""
    d = end - start
    return jnp.where(jnp.abs(w) < 0.5, start + w * d, end - d * (1 - w))


def _adam_update(specs, hypers, params, grads, steps, exp_avgs, exp_avg_sqs, max_sqs):
    """All groups' new (params, steps, exp_avgs, exp_avg_sqs, max_exp_avg_sqs). ``specs[i]``: group i's
    static structure (weight_decay != 0, decoupled, amsgrad, maximize); ``hypers[i]``: its traced scalars.
    Bias corrections are computed in float64 from the incremented step, as torch does in Python."""
    _traces["adam"] += 1
    out = ([], [], [], [], [])
    for spec, h, ps, gs, ss, ms, vs, xs in zip(specs, hypers, params, grads, steps, exp_avgs, exp_avg_sqs, max_sqs):
        has_wd, decoupled, amsgrad, maximize = spec
        lr, beta1, beta2 = _f64(h["lr"]), _f64(h["beta1"]), _f64(h["beta2"])
        group_out = ([], [], [], [], [])
        for j, (p, g, s, m, v) in enumerate(zip(ps, gs, ss, ms, vs)):
            rd = _real_dtype(p.dtype)
            if maximize:
                g = -g
            s = s + 1
            if has_wd:
                if decoupled:
                    p = p * (1 - lr * _f64(h["weight_decay"])).astype(rd)
                else:
                    g = g + _f64(h["weight_decay"]).astype(rd) * p
            cp, g, m, v = p, _as_real(g), _as_real(m), _as_real(v)
            p = _as_real(p)
            m = _lerp(m, g, (1 - beta1).astype(rd))
            v = v * beta2.astype(rd) + (1 - beta2).astype(rd) * g * g
            t = s.astype(jnp.float64)
            step_size = lr / (1 - beta1 ** t)
            bc2_sqrt = jnp.sqrt(1 - beta2 ** t)
            if amsgrad:
                x = jnp.maximum(_as_real(xs[j]), v)
                denom = jnp.sqrt(x) / bc2_sqrt.astype(rd) + _f64(h["eps"]).astype(rd)
                group_out[4].append(_as_complex(x, cp))
            else:
                denom = jnp.sqrt(v) / bc2_sqrt.astype(rd) + _f64(h["eps"]).astype(rd)
            p = p + (-step_size).astype(rd) * m / denom
            for k, a in enumerate((_as_complex(p, cp), s, _as_complex(m, cp), _as_complex(v, cp))):
                group_out[k].append(a)
        for k in range(5):
            out[k].append(group_out[k])
    return out


_adam_jit = _xcache.jit(_adam_update, "_adam_update", static_argnums=(0,))


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (``decoupled_weight_decay=True`` gives AdamW).

    ``foreach``, ``capturable`` and ``fused`` are accepted and recorded: the update always runs as one jitted
    function, with torch's single-tensor arithmetic."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
            if lr.numel() != 1:
                raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for capturable=False and foreach=True")
                if betas[i].numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        self._init_checked(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._group_defaults(amsgrad=False, maximize=False, foreach=None, capturable=False, differentiable=False,
                             decoupled_weight_decay=False, fused=None)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):  # old checkpoints: a number
                    p_state["step"] = _tensor(float(p_state["step"]), dtype=_scalar_dtype())

    def step(self, closure=None):
        """One Adam step over every parameter with a gradient; returns ``closure()``'s loss if given."""
        loss = self._eval_closure(closure)
        specs, hypers, targets = [], [], []
        args = ([], [], [], [], [], [])  # params, grads, steps, exp_avgs, exp_avg_sqs, max_exp_avg_sqs
        for group in self.param_groups:
            ps = self._params_with_grad(group)
            if not ps:
                continue
            amsgrad = bool(group["amsgrad"])
            decoupled = bool(group["decoupled_weight_decay"])
            specs.append((bool(group["weight_decay"] != 0), decoupled, amsgrad, bool(group["maximize"])))
            beta1, beta2 = group["betas"]
            hypers.append({"lr": _scalar_arg(group["lr"]), "beta1": _scalar_arg(beta1), "beta2": _scalar_arg(beta2),
                           "eps": _scalar_arg(group["eps"]), "weight_decay": _scalar_arg(group["weight_decay"])})
            states = []
            for p in ps:
                state = self.state[p]
                if len(state) == 0:  # lazy initialisation, torch's keys and order
                    state["step"] = _tensor(0.0, dtype=_scalar_dtype())
                    state["exp_avg"] = _zeros_like(p)
                    state["exp_avg_sq"] = _zeros_like(p)
                    if amsgrad:
                        state["max_exp_avg_sq"] = _zeros_like(p)
                states.append(state)
            for k, col in enumerate((ps, [p._grad for p in ps], [s["step"] for s in states],
                                     [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                                     [s["max_exp_avg_sq"] for s in states] if amsgrad else [])):
                args[k].append([t._data for t in col])
            targets.append((ps, states, amsgrad, decoupled and bool(group["weight_decay"] != 0)))
        if not specs:
            return loss
        new = _run_update(_adam_jit, "adam", tuple(specs), (hypers, *args))
        for i, (ps, states, amsgrad, decays) in enumerate(targets):
            for j, (p, state) in enumerate(zip(ps, states)):
                _write(p, new[0][i][j], bumps=2 if decays else 1)  # decoupled decay: mul_ then addcdiv_
                _write(state["step"], new[1][i][j])
                _write(state["exp_avg"], new[2][i][j])  # lerp_
                _write(state["exp_avg_sq"], new[3][i][j], bumps=2)  # mul_ then addcmul_
                if amsgrad:
                    _write(state["max_exp_avg_sq"], new[4][i][j])
        return loss

"""SGD with momentum, dampening, Nesterov, weight decay and maximize: torch's update as one jitted function."""
import jax
import jax.numpy as jnp

from .. import _lazy, _xcache
from .._internal import wrap
from .._tensor import Tensor
from .optimizer import Optimizer, _f64, _real_dtype, _run_update, _scalar_arg, _traces, _write

__all__ = ["SGD"]


def _sgd_update(specs, hypers, params, grads, bufs, fresh):
    """All groups' new parameters and momentum buffers. ``specs[i]``: group i's static option structure
    (weight_decay != 0, momentum != 0, nesterov, maximize); ``hypers[i]``: its traced scalars; ``fresh[i][j]``:
    traced, True when parameter j has no momentum buffer yet (torch then starts it as the gradient)."""
    _traces["sgd"] += 1
    new_params, new_bufs = [], []
    for (has_wd, has_mom, nesterov, maximize), h, ps, gs, bs, fr in zip(specs, hypers, params, grads, bufs, fresh):
        out_p, out_b = [], []
        for j, (p, g) in enumerate(zip(ps, gs)):
            rd = _real_dtype(p.dtype)  # torch casts Python scalars to the tensor's (real) dtype
            if maximize:
                g = -g
            if has_wd:
                g = g + _f64(h["weight_decay"]).astype(rd) * p
            if has_mom:
                mom = _f64(h["momentum"]).astype(rd)
                b = jnp.where(fr[j], g, bs[j] * mom + (1 - _f64(h["dampening"])).astype(rd) * g)
                out_b.append(b)
                g = g + mom * b if nesterov else b
            out_p.append(p + (-_f64(h["lr"])).astype(rd) * g)
        new_params.append(out_p)
        new_bufs.append(out_b)
    return new_params, new_bufs


_sgd_jit = _xcache.jit(_sgd_update, "_sgd_update", static_argnums=(0,))


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    ``foreach`` and ``fused`` are accepted and recorded: the update always runs as one jitted function."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        self._init_checked(params, defaults, name="SGD")

    def __setstate__(self, state):
        super().__setstate__(state)
        self._group_defaults(nesterov=False, maximize=False, foreach=None, differentiable=False, fused=False)

    def step(self, closure=None):
        """One SGD step over every parameter with a gradient; returns ``closure()``'s loss if given."""
        loss = self._eval_closure(closure)
        specs, hypers, params, grads, bufs, fresh, targets = [], [], [], [], [], [], []
        for group in self.param_groups:
            ps = self._params_with_grad(group)
            if not ps:
                continue
            has_mom = bool(group["momentum"] != 0)
            specs.append((bool(group["weight_decay"] != 0), has_mom, bool(group["nesterov"]), bool(group["maximize"])))
            hypers.append({k: _scalar_arg(group[k]) for k in ("lr", "momentum", "dampening", "weight_decay")})
            gs = [p._grad._data for p in ps]
            params.append([p._data for p in ps])
            grads.append(gs)
            if has_mom:
                old = [self.state[p].get("momentum_buffer") for p in ps]
                bufs.append([g if b is None else b._data for b, g in zip(old, gs)])
                fresh.append([_lazy._number(b is None) for b in old])
            else:
                old = None
                bufs.append([])
                fresh.append([])
            targets.append((ps, old))
        if not specs:
            return loss
        new_params, new_bufs = _run_update(_sgd_jit, "sgd", tuple(specs), (hypers, params, grads, bufs, fresh))
        for (ps, old), nps, nbs in zip(targets, new_params, new_bufs):
            for p, a in zip(ps, nps):
                _write(p, a)
            if old is not None:
                for p, b, a in zip(ps, old, nbs):
                    if b is None:  # torch: buf = grad.clone()
                        self.state[p]["momentum_buffer"] = wrap(a)
                    else:  # buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                        _write(b, a, bumps=2)
        return loss

"""The shared step of the element-wise optimizers (RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD,
Adafactor).

A subclass gives torch's per-parameter update as a pure function of JAX arrays (``_update``), its lazily created
state (``_new_state``), its traced hyper-parameters (``_hypers``), its static option structure (``_spec``) and how
many in-place ops torch runs on each tensor (``_bumps``). ``step()`` runs the update of every parameter of every
group as one jitted function and writes the results back in place. Complex parameters are updated as real pairs
(torch's ``view_as_real``)."""
import functools

import jax
import jax.numpy as jnp

from .. import _xcache
from .._tensor import Tensor
from ..ops.creation import tensor as _tensor
from .adam import _as_complex, _as_real
from .optimizer import Optimizer, _f64, _real_dtype, _scalar_arg, _scalar_dtype, _traces, _write

_JITS = {}
# group options that are pairs, passed traced as two scalars
_PAIRS = {"betas": ("beta1", "beta2"), "etas": ("etaminus", "etaplus"),
          "step_sizes": ("step_size_min", "step_size_max")}


def _check(ok, what, value):
    """torch's constructor checks: ``ValueError("Invalid <what>: <value>")`` unless ``ok``."""
    if not ok:
        raise ValueError(f"Invalid {what}: {value}")


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check(0.0 <= lr, "learning rate", lr)


def _check_betas(betas):
    _check(0.0 <= betas[0] < 1.0, "beta parameter at index 0", betas[0])
    _check(0.0 <= betas[1] < 1.0, "beta parameter at index 1", betas[1])


def _c(x, rd):
    """A Python-float hyper-parameter as torch uses it in a tensor op: cast to the tensor's (real) dtype."""
    return jnp.asarray(x, jnp.float64).astype(rd)


def _decay(p, g, h, has_wd, decoupled, rd):
    """Weight decay: L2 (``g + wd * p``) or decoupled (``p * (1 - lr * wd)``). Returns (p, g)."""
    if has_wd:
        if decoupled:
            p = p * _c(1 - h["lr"] * h["weight_decay"], rd)
        else:
            g = g + _c(h["weight_decay"], rd) * p
    return p, g


def _run(update, kind, specs, hypers, params, grads, states):
    """Every group's new parameters and state arrays (``specs[i][0]``: maximize)."""
    _traces[kind] += 1
    out_p, out_s = [], []
    for spec, h, ps, gs, ss in zip(specs, hypers, params, grads, states):
        h = {k: _f64(v) for k, v in h.items()}
        new_p, new_s = [], []
        for p, g, st in zip(ps, gs, ss):
            if spec[0]:
                g = -g
            rp, rst = update(spec, h, _as_real(p), _as_real(g), {k: _as_real(v) for k, v in st.items()},
                             _real_dtype(p.dtype))
            new_p.append(_as_complex(rp, p))
            new_s.append({k: _as_complex(v, st[k]) for k, v in rst.items()})
        out_p.append(new_p)
        out_s.append(new_s)
    return out_p, out_s


class _ElementwiseOptimizer(Optimizer):
    _kind = None
    _hypers = ("lr",)  # group keys passed traced; a pair (_PAIRS: "betas", ...) becomes two scalars
    _defaults_on_load = {}  # options older checkpoints may lack
    _takes_sparse = False  # torch's optimizer accepts sparse gradients (torchlike makes none)

    def _spec(self, group):
        """Static structure; element 0 is ``maximize``."""
        raise NotImplementedError

    def _new_state(self, p, group):
        raise NotImplementedError

    def _check_param(self, p):
        """torch's refusals of a parameter with a gradient, at step time before its state is created."""
        if p._grad.is_sparse and not self._takes_sparse:
            raise RuntimeError(f"{type(self).__name__} does not support sparse gradients")

    def _bumps(self, spec):
        """``{state key or "param": in-place ops torch runs on it per step}`` (missing keys: 1)."""
        return {}

    @staticmethod
    def _update(spec, h, p, g, st, rd):
        raise NotImplementedError

    def _init(self, params, defaults):
        if defaults.get("differentiable"):
            raise NotImplementedError(f"torchlike.optim.{type(self).__name__}: differentiable=True is not supported")
        Optimizer.__init__(self, params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        self._group_defaults(**self._defaults_on_load)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):  # old checkpoints: a number
                    p_state["step"] = _tensor(float(p_state["step"]), dtype=_scalar_dtype())

    def _hyper_args(self, group):
        out = {}
        for k in self._hypers:
            if k in _PAIRS:
                out[_PAIRS[k][0]], out[_PAIRS[k][1]] = map(_scalar_arg, group[k])
            else:
                out[k] = _scalar_arg(group[k])
        return out

    def step(self, closure=None):
        """One step over every parameter with a gradient; returns ``closure()``'s loss if given."""
        loss = self._eval_closure(closure)
        specs, hypers, params, grads, states, targets = [], [], [], [], [], []
        for group in self.param_groups:
            ps = self._params_with_grad(group)
            if not ps:
                continue
            spec = self._spec(group)
            group_states = []
            for p in ps:
                self._check_param(p)
                if len(self.state[p]) == 0:
                    self.state[p].update(self._new_state(p, group))
                group_states.append(self.state[p])
            specs.append(spec)
            hypers.append(self._hyper_args(group))
            params.append([p._data for p in ps])
            grads.append([p._grad._data for p in ps])
            states.append([{k: v._data for k, v in s.items() if isinstance(v, Tensor)} for s in group_states])
            targets.append((ps, group_states, self._bumps(spec)))
        if not specs:
            return loss
        cls = type(self)
        if cls not in _JITS:
            _JITS[cls] = _xcache.jit(functools.partial(_run, cls._update, cls._kind), f"_{cls._kind}_update",
                                     static_argnums=(0,))
        new_p, new_s = _JITS[cls](tuple(specs), hypers, params, grads, states)
        for (ps, group_states, bumps), nps, nss in zip(targets, new_p, new_s):
            for p, s, a, ns in zip(ps, group_states, nps, nss):
                if bumps.get("param", 1):
                    _write(p, a, bumps.get("param", 1))
                for k, v in ns.items():
                    _write(s[k], v, bumps.get(k, 1))
        return loss

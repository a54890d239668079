"""torch.amp.GradScaler: loss scaling for float16 training, with torch's semantics.

``scale(loss)`` multiplies by the scale; ``step(optimizer)`` unscales the gradients (unless ``unscale_`` did)
and skips ``optimizer.step()`` when any of them is inf/NaN; ``update()`` halves the scale after a skipped step and
doubles it after ``growth_interval`` clean ones. On 'cuda' without a GPU it is disabled with torch's warning and
then passes everything through.
"""
import warnings

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .. import cuda as _cuda
from .._grad_mode import no_grad
from .._tensor import Tensor
from ..ops.creation import tensor as _tensor

__all__ = ["GradScaler"]

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.**16, growth_factor=2., backoff_factor=.5, growth_interval=2000,
    enabled=True)``."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        self._device = device
        if enabled and device == "cuda" and not _cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
                          stacklevel=2)
            enabled = False
        self._enabled = enabled
        if enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
        self._init_scale = float(init_scale)
        self._scale = None  # made by the first scale() (or load_state_dict), as torch's
        self._growth_factor = growth_factor
        self._backoff_factor = backoff_factor
        self._growth_interval = growth_interval
        self._growth_tracker = 0
        self._per_optimizer = {}  # id(optimizer) -> {"stage", "found_inf"}

    def is_enabled(self):
        """Whether scaling is on."""
        return self._enabled

    def get_scale(self):
        """The current scale (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def scale(self, outputs):
        """``outputs`` (a tensor or nested lists/tuples of them) multiplied by the scale."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._scale = self._init_scale
        if isinstance(outputs, Tensor):
            return outputs * _tensor(self._scale, dtype=_dtype.float32)
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _check_scale(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  This may indicate your script did not "
                                 "use scaler.scale(loss or outputs) earlier in the iteration.")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": None})

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale, in place, and note whether any is inf/NaN."""
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._state(optimizer)
        if state["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = float(np.float32(1.0) / np.float32(self._scale))
        found = None  # no gradient: nothing was checked
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype == _dtype.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    found = bool(found) or not bool(jnp.isfinite(g._data).all())
                    g.mul_(inv)
        state["found_inf"] = found
        state["stage"] = _UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` on unscaled gradients, skipped when any is inf/NaN; returns what it returns."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        state["stage"] = _STEPPED
        if not state["found_inf"]:
            return optimizer.step(*args, **kwargs)
        return None

    def update(self, new_scale=None):
        """Grow or back off the scale from the inf checks since the last update (or set ``new_scale``)."""
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            checks = [s["found_inf"] for s in self._per_optimizer.values() if s["found_inf"] is not None]
            if not checks:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(checks):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
            self._scale = float(np.float32(self._scale))
        self._per_optimizer = {}

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker ({} when disabled)."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        """Restore what ``state_dict`` returned."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._growth_tracker = state_dict["_growth_tracker"]

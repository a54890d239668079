"""torchlike.autograd.forward_ad: forward-mode AD with dual tensors (torch.autograd.forward_ad's API).

The rules the op table runs while a level is active are in ``torchlike/ops/_forward_ad.py``.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)

A tensor's tangent at the active level is ``Tensor._fw_tangent``: a Tensor with no history (None: no tangent).
Every op of the op table propagates tangents through one jitted function per (op, static arguments, inputs that
carry a tangent); inputs without one count as constants (zero tangents); integer and bool outputs get none.
That function is the linear transpose of the op's backward formula when the op has one (torch's forward
derivatives agree with its backward formulas, also at kinks such as relu(0), abs(0) or a clamp bound, where
JAX's jvp may pick the other side), else ``jax.jvp`` of the op's JAX forward. The ops run this only while a
level is active (``_state.level is not None``), in any grad mode, and never record autograd nodes for tangents.

Inference mode turns forward AD off (no tangents are made, read or updated), as in torch.
Views and in-place ops follow torch: the tangent of a view is the same view of its input's tangent (they share
a storage, as torch's do); an in-place op updates the target's tangent in place, so its views' tangents see
the change; an in-place op that gives a view a tangent gives its base a zero tangent first and makes the view's
tangent a view of it, and views of a base that gets a tangent get views of it (torch reads those lazily).
Only one level exists at a time (torch does not support nesting either); exiting it drops every tangent.
"""
import contextlib
from typing import NamedTuple, Optional

from .. import _grad_mode as _gm
from .._tensor import Tensor
from ..ops import _views
from ..ops._forward_ad import (_state, _identity, _track, _set_tangent, _same_layout,  # noqa: F401
                               _copy_with_layout)
from ..ops.shape import _view

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "dual_level"]

_NO_LEVEL_MSG = ("Trying to create a dual Tensor for forward AD but no level exists, make sure to enter_dual_level() "
                 "first.")
_EXIT_ORDER_MSG = ("Trying to exit a forward AD level that was not the last one that was created. This is not "
                   "supported.")


def _current_level():
    level = _state.level
    return -1 if level is None else level


def enter_dual_level():
    """Enter a new forward AD level and return it (0); tangents live until it is exited."""
    if _state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state.tensors = {}
    _state.prune_at = 1024
    _state.level = 0
    return 0


def exit_dual_level(*, level=None):
    """Exit the current forward AD level (only the last one may be exited); every tangent of it is dropped."""
    current = _current_level()
    if level is None:
        level = current
    if level != current:
        raise RuntimeError(_EXIT_ORDER_MSG)
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    tensors = _state.tensors
    _state.level = None
    _state.tensors = None
    for ref in tensors.values():
        t = ref()
        if t is not None:
            t._fw_tangent = None


class dual_level(contextlib.ContextDecorator):
    """Context manager (or decorator) running its body inside a forward AD level; ``as`` gives the level."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal (a view without the tangent) and the tangent (or None)."""

    primal: "torchlike.Tensor"  # noqa: F821
    tangent: Optional["torchlike.Tensor"]  # noqa: F821


def make_dual(tensor, tangent, *, level=None):
    """A new tensor, a view of ``tensor`` (ViewBackward0 when it requires grad), whose tangent is ``tangent``.

    The tangent is kept as given when its layout matches ``tensor``'s, else copied into that layout.
    Backward-differentiable with respect to ``tensor`` (not through the tangent: tangents carry no history).
    """
    if level is None:
        level = _current_level()
    if level < 0:
        raise RuntimeError(_NO_LEVEL_MSG)
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: torch.{tensor.dtype.name}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: torch.{tangent.dtype.name}")
    if level != 0:
        raise RuntimeError("Invalid level given to _make_dual")
    if _state.level is not None and tensor._fw_tangent is not None:
        raise RuntimeError("Making a dual Tensor based on a Tensor that already has a forward gradient at the same "
                           f"level {level} is not supported.")
    shape, tshape = tensor._data.shape, tangent._data.shape
    if tshape != shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(shape)} while the given forward "
                           f"gradient is of size {list(tshape)}.")
    if _state.level is None:
        raise RuntimeError("Trying to access a forward AD level with an invalid index. This index was either not "
                           "created or is already deleted.")
    if not _same_layout(tangent, tensor):
        tangent = _copy_with_layout(tangent._data, tensor)
    dual = _views._view_apply(_view, tensor, (tuple(shape),))
    if not _gm._state.inference:  # inference mode turns forward AD off, as in torch
        _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at ``level``: primal is a view of ``tensor`` without the tangent
    (an alias: torch's ``torch::autograd::Identity`` node when it requires grad); tangent is ``tensor``'s
    tangent as stored, or None. Outside a level: ``(tensor, None)``."""
    if level is None:
        level = _current_level()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not {type(tensor).__name__}")
    tangent = tensor._fw_tangent if _state.level is not None and not _gm._state.inference else None
    if tangent is not None:
        if level != 0:
            raise RuntimeError("Invalid level given to _fw_primal")
        _track(tensor)  # a tangent someone assigned directly: drop it with the level too
    primal = _views._view_apply(_identity, tensor, ())
    return UnpackedDualTensor(primal, tangent if level == _state.level else None)

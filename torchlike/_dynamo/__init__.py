"""torch._dynamo's user-facing part for torchlike.compile: ``reset``, ``config``, ``OptimizedModule``."""
from . import config  # noqa: F401
from .eval_frame import OptimizedModule, compile, disable, is_compiling, _ALL  # noqa: F401

__all__ = ["reset", "config", "OptimizedModule", "disable", "is_compiling", "mark_dynamic"]


def mark_dynamic(t, index, min=None, max=None):  # noqa: A002 - torch's names
    """Nothing to mark: torchlike.compile specializes on shapes and recompiles for a new one (its guard)."""


def reset():
    """Forget every compiled program (the next call of each compiled function traces again)."""
    for compiled in list(_ALL):
        compiled.programs.clear()
        compiled.compiles = 0
        compiled.warned = False

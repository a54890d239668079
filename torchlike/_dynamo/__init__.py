"""torch._dynamo's user-facing part for torchlike.compile: ``reset``, ``config``, ``OptimizedModule``."""
from . import config  # noqa: F401
from .eval_frame import OptimizedModule, compile, _ALL  # noqa: F401

__all__ = ["reset", "config", "OptimizedModule"]


def reset():
    """Forget every compiled program (the next call of each compiled function traces again)."""
    for compiled in list(_ALL):
        compiled.programs.clear()
        compiled.compiles = 0
        compiled.warned = False

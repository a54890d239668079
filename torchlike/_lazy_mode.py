"""``torchlike.lazy()`` and ``torchlike.sync()``: the public switch of lazy mode (see ``torchlike/_lazy.py``)."""
import contextlib

from ._lazy import _State, sync  # noqa: F401  (torchlike.sync)
from .ops._registry import set_lazy


@contextlib.contextmanager
def lazy(enabled=True):
    """Record ops, backward formulas and optimizer updates into cached fused programs inside the block; values
    are computed when read, at ``optimizer.step()``, ``torchlike.sync()`` and when the block ends."""
    before = _State.on
    set_lazy(enabled)
    try:
        yield
    finally:
        set_lazy(before)

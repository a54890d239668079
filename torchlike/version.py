"""torch.version: torchlike's ``__version__`` names the torch API it mirrors, with torchlike's own version as the
local part: ``2.13.0+torchlike.0.1.0``, as torch 2.13's CPU build is ``2.13.0+cpu``. Version checks written for
torch (``torch.__version__ >= "2.0"``, ``>= (2, 1)``, ``packaging.version.parse(torch.__version__)``) see 2.13.0.
"""
import re

__all__ = ["__version__", "torch_compat", "torchlike", "cuda", "hip", "rocm", "xpu", "debug", "git_version",
           "TorchVersion"]

torch_compat = "2.13"  # the torch release whose behaviour torchlike reproduces (the oracle of its tests)
torchlike = "0.1.0"  # torchlike's own release (pyproject.toml)
cuda = None  # as a CPU-only torch build: no CUDA toolkit is compiled in (JAX's GPU backend is found at run time)
hip = None
rocm = None
xpu = None
debug = False
git_version = "unknown"

_RELEASE = re.compile(r"\d+(?:\.\d+)*")


def _release(v):
    """(major, minor, patch, ...) of a version string, tuple or TorchVersion; None when it is not a version."""
    if isinstance(v, str):
        m = _RELEASE.match(v)
        return None if m is None else tuple(int(p) for p in m.group().split("."))
    if isinstance(v, (tuple, list)) and all(isinstance(p, int) for p in v):
        return tuple(v)
    return None


def _padded(a, b):
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


class TorchVersion(str):
    """A version string that compares as a version with strings (``"2.2"``) and tuples (``(2, 1)``), as torch's."""

    __slots__ = ()

    def _cmp(self, other, op):
        mine, theirs = _release(self), _release(other)
        if mine is None or theirs is None:
            return getattr(str, op)(self, other)
        mine, theirs = _padded(mine, theirs)
        if op == "__eq__":  # "2.13.0+torchlike..." == "2.13.0" is False, as torch's "2.13.0+cpu"
            local = other.partition("+")[2] if isinstance(other, str) else ""
            return mine == theirs and self.partition("+")[2] == local
        return getattr(mine, op)(theirs)

    def __lt__(self, other):
        return self._cmp(other, "__lt__")

    def __le__(self, other):
        return self._cmp(other, "__le__")

    def __gt__(self, other):
        return self._cmp(other, "__gt__")

    def __ge__(self, other):
        return self._cmp(other, "__ge__")

    def __eq__(self, other):
        return self._cmp(other, "__eq__")

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


__version__ = TorchVersion(f"{torch_compat}.0+torchlike.{torchlike}")

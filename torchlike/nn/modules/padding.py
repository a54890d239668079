"""Padding modules (torch.nn's): ZeroPad, ConstantPad, ReflectionPad, ReplicationPad, CircularPad in 1, 2 and 3
dims; an int ``padding`` pads every side of the padded dims alike."""
from .._padding import pad
from .module import Module

__all__ = [f"{kind}Pad{n}d" for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular")
           for n in (1, 2, 3)]


class _PadNd(Module):
    __constants__ = ["padding", "mode"]
    _n = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = (padding,) * (2 * self._n) if isinstance(padding, int) else tuple(padding)

    def forward(self, input):
        return pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


def _make(kind, base, n, mode, doc):
    return type(f"{kind}Pad{n}d", (base,), {"_n": n, "_mode": mode, "__module__": __name__, "__doc__": doc})


for _n in (1, 2, 3):
    for _kind, _base, _mode in (("Zero", _ZeroPadNd, "constant"), ("Constant", _ConstantPadNd, "constant"),
                                ("Reflection", _PadNd, "reflect"), ("Replication", _PadNd, "replicate"),
                                ("Circular", _PadNd, "circular")):
        globals()[f"{_kind}Pad{_n}d"] = _make(_kind, _base, _n, _mode,
                                              f"{_kind} padding of the last {_n} dim(s) (F.pad mode {_mode!r}).")

"""torch.types: the type aliases annotations use (``Number``, ``Device``, ``_size``, ...), over torchlike's classes.
torchlike has no symbolic sizes, so torch's SymInt/SymFloat aliases are absent."""
import os
from builtins import (bool as _bool, bytes as _bytes, complex as _complex, float as _float,  # noqa: F401
                      int as _int, str as _str)
from collections.abc import Sequence
from typing import IO

from ._device import device as _device
from ._dtype import dtype as _dtype  # noqa: F401
from ._tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors = Tensor | Sequence[Tensor | None]
_size = Size | list[int] | tuple[int, ...]

Number = int | float | bool
_Number = (int, float, bool)  # for isinstance(x, _Number)
FileLike = str | os.PathLike[str] | IO[bytes]
Device = _device | str | int | None  # "device-like": a device, its name or index; None for the default


class Storage:
    """The storage protocol of annotations (torchlike's storages are ``torchlike.UntypedStorage``)."""

    device: _device
    dtype: _dtype

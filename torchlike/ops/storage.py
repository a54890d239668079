"""A tensor's storage as torch shows it: ``untyped_storage()``, the deprecated ``storage()`` and ``data_ptr()``.

JAX arrays are immutable, so a tensor's memory is not one buffer that in-place ops write into: torchlike's views
and aliases share a ``_views._Storage`` whose array each in-place op replaces. What programs read from a storage
is its identity (do two tensors share memory? safetensors and checkpoint code ask ``untyped_storage().data_ptr()``),
its size, and a ``data_ptr()`` that stays put across in-place ops and differs between views by their offset. So
each storage gets an address of its own on first ask: distinct from every other storage's for the process's life
(addresses are never reused), stable while the storage lives, and ``data_ptr()`` of a tensor is that address plus
its offset in bytes, as torch's.
"""

import numpy as np

from .._warnings import warn_once
from . import _views
from ._bind import public
from .._device import _device_of

_next_address = [1 << 16]


def _address(storage):
    """The storage's stable fake address (assigned on first ask, 64-byte aligned, never reused)."""
    if storage.address is None:
        storage.address = _next_address[0]
        _next_address[0] += (storage.data.size * storage.data.dtype.itemsize + 127) // 64 * 64
    return storage.address


class UntypedStorage:
    """torch.UntypedStorage as a tensor's ``untyped_storage()`` gives it: the bytes its views share."""

    __module__ = "torchlike"

    def __init__(self, storage):
        self._storage = storage

    def data_ptr(self):
        return _address(self._storage) if self._storage.data.size else 0

    def nbytes(self):
        return self._storage.data.size * self._storage.data.dtype.itemsize

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.size()

    def element_size(self):
        return 1

    @property
    def device(self):
        return _device_of(self._storage.data)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def tolist(self):
        return np.asarray(self._storage.data).reshape(-1).view(np.uint8).tolist()

    def _kind(self):
        return f"UntypedStorage(device={self.device})"

    def __repr__(self):  # (torch's: the values, one a line, then what the storage is)
        return "".join(f" {v}\n" for v in self.tolist()) + f"[torch.storage.{self._kind()} of size {self.size()}]"


class TypedStorage(UntypedStorage):
    """torch.TypedStorage (deprecated in torch): the storage counted in elements of its tensor's dtype."""

    __module__ = "torchlike"

    def __init__(self, storage, dtype):
        super().__init__(storage)
        self.dtype = dtype

    def size(self):
        return int(self._storage.data.size)

    def element_size(self):
        return self._storage.data.dtype.itemsize

    def tolist(self):
        return np.asarray(self._storage.data).reshape(-1).tolist()

    def _kind(self):
        return f"TypedStorage(dtype={self.dtype}, device={self.device})"

    def untyped(self):
        return UntypedStorage(self._storage)


@public(name="untyped_storage", function=False)
def _untyped_storage(self):
    """The storage ``self`` shares with its views and aliases."""
    return UntypedStorage(_views._storage_of(self))


@public(name="storage", function=False)
def _typed_storage(self):
    """``untyped_storage()`` counted in elements (torch warns once that TypedStorage is deprecated)."""
    warn_once("TypedStorage", "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
              "the only storage class. This should only matter to you if you are using storages directly.  To access "
              "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()", stacklevel=3)
    return TypedStorage(_views._storage_of(self), self.dtype)


@public(name="data_ptr", function=False)
def _data_ptr(self):
    """The address of the tensor's first element: its storage's address plus its offset in bytes (0 if empty)."""
    if not self._data.size:
        return 0
    return _address(_views._storage_of(self)) + self.storage_offset() * self._data.dtype.itemsize


@public(method=False)
def is_storage(obj):
    """Whether ``obj`` is a storage (``untyped_storage()`` / ``storage()``'s result)."""
    return isinstance(obj, UntypedStorage)

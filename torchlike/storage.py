"""torch.storage: the storage classes (a tensor's ``untyped_storage()`` and deprecated ``storage()``)."""
from .ops.storage import TypedStorage, UntypedStorage  # noqa: F401

__all__ = ["TypedStorage", "UntypedStorage"]

"""torch.utils.hooks: the handle every ``register_*hook`` returns, and the hook dicts it removes from.

It imports nothing from torchlike: tensors, nodes and modules all keep their hooks this way.
"""
import itertools
import weakref

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` takes the hook out (idempotent)."""

    _ids = itertools.count()

    def __init__(self, container):
        try:
            self._container_ref = weakref.ref(container)
        except TypeError:  # a plain dict cannot be weakly referenced: hold it (it holds only the hooks)
            self._container_ref = lambda: container
        self.id = next(RemovableHandle._ids)

    def remove(self):
        container = self._container_ref()
        if container is not None:
            container.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _Hooks(dict):
    """A hook dict a RemovableHandle can reference weakly (so a handle never keeps hooks alive)."""

    __slots__ = ("__weakref__",)


def _add_hook(container, fn):
    handle = RemovableHandle(container)
    container[handle.id] = fn
    return handle

"""Hook handles, as ``torch.utils.hooks``. Imports only the standard library: it sits below the data model."""
import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle"]


class RemovableHandle:
    """Returned by every ``register_*hook``: ``remove()`` (or leaving a ``with`` block) drops the hook.

    ``hooks_dict`` holds the hook under ``handle.id``; ``extra_dict`` (a dict or a list of dicts) holds
    entries under the same id that go with it. All are referenced weakly, so a handle keeps nothing alive
    (a plain ``dict`` cannot be weakly referenced: pass an ``OrderedDict`` or a dict subclass).
    """

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict) if isinstance(extra_dict, list) else ()

    def remove(self):
        """Take the hook out (idempotent)."""
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        # a hooks dict that was gone when pickled becomes a dead reference
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extras = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras)

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()


class _Hooks(dict):
    """A plain hook dict that a RemovableHandle can reference weakly (tensors' and nodes' hooks)."""

    __slots__ = ("__weakref__",)


def _add_hook(hooks, hook, prepend=False, extra_dict=None):
    """Put ``hook`` into the ``hooks`` OrderedDict (first with ``prepend``) and return its handle."""
    handle = RemovableHandle(hooks, extra_dict=extra_dict)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle

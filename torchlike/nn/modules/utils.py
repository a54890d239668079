"""torch.nn.modules.utils: the argument helpers modules and user layers share (``_pair(3) == (3, 3)``) and
``consume_prefix_in_state_dict_if_present``."""
import collections.abc
import itertools
import warnings

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n, name="parse"):
    """A parser that turns an iterable into a tuple and repeats anything else ``n`` times."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``t`` reversed, each element repeated ``n`` times (a conv padding as ``F.pad`` takes it)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pooling's output size with each None taken from the input's trailing ``defaults``."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def _deprecated(message):
    """typing_extensions.deprecated(message, category=FutureWarning) for a class, as torch marks its deprecated
    modules: making the class itself (not a subclass) or subclassing it warns; ``__deprecated__`` is the message."""
    def mark(cls):
        new, init_subclass = cls.__new__, cls.__init_subclass__
        python_hook = hasattr(init_subclass, "__func__")  # (else object's builtin one)

        def __new__(klass, *args, **kwargs):
            if klass is cls:
                warnings.warn(message, FutureWarning, stacklevel=2)
            return new(klass) if new is object.__new__ else new(klass, *args, **kwargs)

        def __init_subclass__(klass, **kwargs):
            warnings.warn(message, FutureWarning, stacklevel=2)
            return init_subclass.__func__(klass, **kwargs) if python_hook else init_subclass(**kwargs)
        cls.__new__ = staticmethod(__new__)
        cls.__init_subclass__ = classmethod(__init_subclass__)
        cls.__deprecated__ = message
        return cls
    return mark


def consume_prefix_in_state_dict_if_present(state_dict, prefix):
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place, as a
    DataParallel/DDP checkpoint needs before a bare model loads it."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # '' is the wrapper's own entry (kept); 'module' and 'module.xx' lose the prefix
        if key and (key == prefix.replace(".", "") or key.startswith(prefix)):
            metadata[key[len(prefix):]] = metadata.pop(key)

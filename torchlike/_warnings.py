"""torch's once-a-process warnings (its TORCH_WARN_ONCE, and its Python-side "warned" flags): the first call with a
key warns, later ones are silent."""
import warnings

_warned = set()  # the keys that have warned in this process


def warn_once(key, message, category=UserWarning, stacklevel=1):
    """``warnings.warn(message, category)`` unless ``key`` has warned before (``stacklevel`` as warnings.warn's,
    counted from the caller)."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, category, stacklevel=stacklevel + 1)

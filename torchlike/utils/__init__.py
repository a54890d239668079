"""torchlike.utils: small helpers below the data model, as ``torch.utils`` (hooks)."""


def _typename(obj):
    """torch.typename: 'torch.FloatTensor' for tensors, else the qualified class name."""
    from .._tensor import Tensor  # here, not at the top: torchlike.utils sits below the data model

    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"

"""torch.nn.utils.stateless.functional_call: call a module with some parameters and buffers replaced (by dotted
name), restoring them afterwards; deprecated in torch in favour of torch.func.functional_call, which it calls."""
import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by ``parameters_and_buffers``
    for this call."""
    from ...func import functional_call as call  # (torchlike.func builds on nn)
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    if type(module).__name__ == "DataParallel":
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    return call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)

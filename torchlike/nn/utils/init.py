"""torch.nn.utils.init: ``skip_init``."""
import inspect

from ...ops.sampling import get_rng_state, set_rng_state
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """An instance of ``module_cls(*args, **kwargs)`` whose parameters and buffers are left uninitialized (as if
    made by ``torch.empty``). The class must take a ``device`` argument, as torch requires.

    torch builds the module on its meta device and then ``to_empty``; torchlike has no meta device, so the module is
    built on the final device with the global generator's state put back afterwards (its draws are not seen: the
    generator is where torch's would be), then ``to_empty``.
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    kwargs["device"] = final_device
    state = get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)
    return module.to_empty(device=final_device)

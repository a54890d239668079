"""functorch's top-level transforms: torchlike.func's, with torch's deprecation warnings."""
import functools
import warnings

from .. import func as _func
from .make_functional import combine_state_for_ensemble, make_functional, make_functional_with_buffers  # noqa: F401


def _deprecated(name, replacement):
    target = getattr(_func, name)

    @functools.wraps(target)
    def call(*args, **kwargs):
        warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the integration, "
                      f"`functorch.{name}` is deprecated as of PyTorch 2.0 and will be deleted in a future version "
                      f"of PyTorch >= 2.3. Please use `{replacement}` instead; see the PyTorch 2.0 release notes "
                      "and/or the `torch.func` migration guide for more details "
                      "https://pytorch.org/docs/main/func.migrating.html", FutureWarning, stacklevel=2)
        return target(*args, **kwargs)
    return call


vmap = _deprecated("vmap", "torch.vmap")
grad = _deprecated("grad", "torch.func.grad")
grad_and_value = _deprecated("grad_and_value", "torch.func.grad_and_value")
vjp = _deprecated("vjp", "torch.func.vjp")
jvp = _deprecated("jvp", "torch.func.jvp")
jacrev = _deprecated("jacrev", "torch.func.jacrev")
jacfwd = _deprecated("jacfwd", "torch.func.jacfwd")
hessian = _deprecated("hessian", "torch.func.hessian")
functionalize = _deprecated("functionalize", "torch.func.functionalize")

"""torch.autograd.grad_mode: the grad-mode switches (kept in ``torchlike._grad_mode``, below the op table)."""
from .._grad_mode import (__all__, no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: F401
                          set_multithreading_enabled, is_grad_enabled, is_inference_mode_enabled,
                          is_multithreading_enabled)

"""torch.distributed.pipelining over JAX devices: the split backward of zero-bubble schedules
(``stage_backward``, ``stage_backward_input``, ``stage_backward_weight``, from torch's ``_backward`` module)."""
from ._backward import stage_backward, stage_backward_input, stage_backward_weight  # noqa: F401

"""torch.distributed.pipelining over JAX devices: ``PipelineStage``, the schedules ``ScheduleGPipe``,
``Schedule1F1B``, ``ScheduleInterleavedZeroBubble`` and ``ScheduleZBVZeroBubble`` (one process drives every
stage), and the split backward of zero-bubble schedules (``stage_backward``, ``stage_backward_input``,
``stage_backward_weight``, from torch's ``_backward`` module)."""
from ._backward import stage_backward, stage_backward_input, stage_backward_weight  # noqa: F401
from .schedules import (Schedule1F1B, ScheduleGPipe, ScheduleInterleavedZeroBubble,  # noqa: F401
                        ScheduleZBVZeroBubble)
from .stage import PipelineStage  # noqa: F401

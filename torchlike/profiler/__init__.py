"""torch.profiler: ``profile(activities=[ProfilerActivity.CPU])`` and ``record_function`` over the op table's
timings (``torchlike.autograd.profiler``). Only CPU times are recorded; ``schedule`` is not supported (the whole
``with`` block is recorded), and ``step()`` only counts steps."""
import enum

from ..autograd.profiler import record_function  # noqa: F401
from ..autograd import profiler as _autograd_profiler

__all__ = ["profile", "record_function", "ProfilerActivity"]


class ProfilerActivity(enum.Enum):
    CPU = 0
    CUDA = 2


class profile(_autograd_profiler.profile):
    """``with torchlike.profiler.profile(activities=[ProfilerActivity.CPU]) as prof:``; ``on_trace_ready(prof)``
    runs at exit."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None, custom_trace_id_callback=None):
        if schedule is not None:
            raise NotImplementedError("torchlike.profiler.profile records the whole block: schedule= is not "
                                      "supported")
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory)
        self.activities = set(activities or (ProfilerActivity.CPU,))
        self.on_trace_ready = on_trace_ready
        self.step_num = 0

    def __exit__(self, *exc):
        super().__exit__(*exc)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)
        return False

    def step(self):
        """Count a step (no schedule to advance)."""
        self.step_num += 1

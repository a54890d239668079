"""torch.distributed's pieces that make sense over JAX devices: ``pipelining`` (split backward and pipeline
schedules), ``tensor`` (DeviceMesh and DTensor on JAX sharding, tensor parallelism), ``fsdp`` (fully_shard) and
``device_mesh``. Submodules are imported on their own, as torch's.

One process drives every device (JAX's single controller), so no process group is ever initialised: the
queries here answer as torch's do before ``init_process_group`` (``get_rank``/``get_world_size`` raise its
ValueError), which is what ``DistributedSampler`` and ``if dist.is_initialized():`` code ask."""

__all__ = ["is_available", "is_initialized", "get_rank", "get_world_size"]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available():
    """True: the package's APIs exist (pipelining, tensor, fsdp)."""
    return True


def is_initialized():
    """Whether the default process group is initialised: never (see the module's docstring)."""
    return False


def get_rank(group=None):
    """This process's rank in the default group: none exists, so torch's ValueError."""
    raise ValueError(_NOT_INITIALIZED)


def get_world_size(group=None):
    """Processes in the default group: none exists, so torch's ValueError."""
    raise ValueError(_NOT_INITIALIZED)

"""torch.distributed's pieces that make sense over JAX devices: ``pipelining`` (split backward and pipeline
schedules), ``tensor`` (DeviceMesh and DTensor on JAX sharding, tensor parallelism), ``fsdp`` (fully_shard) and
``device_mesh``. Submodules are imported on their own, as torch's."""

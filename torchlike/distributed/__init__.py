"""torch.distributed's pieces that make sense over JAX devices: ``pipelining`` (split backward and pipeline
schedules). Submodules are imported on their own, as torch's."""

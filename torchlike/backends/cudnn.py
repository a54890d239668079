"""torch.backends.cudnn: flags kept for scripts (XLA chooses GPU kernels itself); cuDNN is never linked in."""
enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True


def is_available():
    """False: torchlike does not link cuDNN (JAX's GPU backend uses it internally)."""
    return False


def version():
    """None, as torch's build without cuDNN."""
    return None


def is_acceptable(tensor):
    """False: no tensor runs through torch's cuDNN path."""
    return False

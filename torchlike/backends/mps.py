"""torch.backends.mps: JAX has no Metal backend that torchlike uses."""


def is_available():
    """False: torchlike has no MPS device."""
    return False


def is_built():
    """False: torchlike has no MPS device."""
    return False

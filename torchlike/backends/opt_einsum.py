"""torch.backends.opt_einsum: JAX's einsum always orders contractions with opt_einsum (a JAX dependency)."""
import opt_einsum as _opt_einsum

enabled = True
strategy = "auto"


def is_available():
    """True: opt_einsum comes with JAX."""
    return True


def get_opt_einsum():
    """The opt_einsum package."""
    return _opt_einsum

"""functorch's make_fx (graph capture to torch.fx): not part of torchlike (its programs are JAX's: use
``jax.make_jaxpr(interop.as_jax(f))``)."""


def make_fx(f, *args, **kwargs):
    """Refused: torchlike has no torch.fx graphs."""
    raise NotImplementedError("make_fx: torchlike has no torch.fx graphs; jax.make_jaxpr(torchlike.interop.as_jax(f)) "
                              "shows the program instead")

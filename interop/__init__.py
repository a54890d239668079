"""interop: bridges between torchlike, JAX, NumPy and real PyTorch.

- Conversions: ``to_jax``, ``from_jax``, ``to_numpy``, ``from_numpy``, ``to_torch``, ``from_torch`` (zero-copy
  through DLPack where the memory allows; each function's docstring says when it copies).
- ``jax_op(fn)``: a JAX function becomes a differentiable torchlike function (one jitted forward and backward per
  signature; differentiable to any order). ``as_jax(fn)``: a torchlike function becomes a JAX function that
  ``jax.grad``/``jit``/``vmap``/``jvp`` accept (torchlike's Tensor is a JAX pytree).
- ``torch_op(fn)``: a torchlike or JAX function becomes a torch-differentiable function; ``from_torch_op(fn)``:
  a torch function becomes a differentiable torchlike function.
- ``interop.testing.assert_grads_close``: one function, four gradients (torchlike, torch, jax.grad, finite
  differences) compared.

Importing interop first stops JAX from preallocating most of a GPU that torch shares (see ``_gpu``); it must run
before anything creates a JAX array, so it is the first thing done here.
"""
from ._gpu import _configure_jax_memory

_configure_jax_memory()

from ._convert import to_jax, from_jax, to_numpy, from_numpy, to_torch, from_torch  # noqa: E402
from ._jax import jax_op, as_jax  # noqa: E402
from ._torch import torch_op, from_torch_op  # noqa: E402
from . import testing  # noqa: E402,F401

__all__ = ["to_jax", "from_jax", "to_numpy", "from_numpy", "to_torch", "from_torch", "jax_op", "as_jax",
           "torch_op", "from_torch_op", "testing"]

"""Explicit conversions between torchlike Tensors, jax.Arrays, NumPy arrays and real torch tensors.

Memory sharing (tested on CPU; on GPU DLPack shares device memory the same way, untested here):

* torchlike <-> JAX: always free. A Tensor holds a ``jax.Array``; ``to_jax`` returns it, ``from_jax`` wraps it.
* JAX/torchlike -> torch: zero-copy through DLPack for every dtype (the torch tensor aliases JAX's buffer).
* torch -> JAX/torchlike: zero-copy through DLPack when the strides are a permutation of a dense layout
  (contiguous, transposed/permuted; strides of size-1 dims do not matter) and the data pointer is 64-byte
  aligned (XLA's requirement: torch's own CPU allocator aligns storages to 64 bytes, but a tensor from
  ``torch.from_numpy`` uses NumPy's memory, often only 16-byte aligned, and a slice may start mid-line).
  A copy otherwise: JAX copies misaligned data itself, and interop copies gapped/broadcast tensors (slices
  with a step, ``expand``) and tensors with torch's lazy conjugate/negative bit into a contiguous tensor first. Every dtype of the matrix (bool, ints,
  uint8, float16, bfloat16, float32/64, complex64/128) goes through DLPack unchanged.
* NumPy -> JAX/torchlike: always a copy (NumPy arrays are writable; JAX assumes its buffers never change).
* JAX/torchlike -> NumPy: ``np.asarray`` of a CPU array with the default row-major layout is a zero-copy,
  read-only view; a GPU array, or one imported from a transposed torch tensor (non-default layout), is copied.

JAX assumes arrays are immutable. When memory is shared, modifying the torch tensor in place (or the
torchlike/JAX side through the torch tensor) changes the JAX array behind JAX's back: results already computed
or cached (e.g. JAX's cached NumPy view) may or may not see the change. Do not mutate shared memory; clone first.

The DLPack import (~35 us) happens only in these functions, never on torchlike's per-op paths.
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

from torchlike._internal import Tensor, np_to_dtype, wrap

__all__ = ["to_jax", "from_jax", "to_numpy", "from_numpy", "to_torch", "from_torch"]


def _leaf(data, requires_grad):
    t = wrap(data)
    if requires_grad:
        t.requires_grad_(True)  # torch's error for integer/bool dtypes
    return t


def _check(x, kind, name):
    if not isinstance(x, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise TypeError(f"{name}(): expected {want}, got {type(x).__name__}")


def to_jax(t):
    """The ``jax.Array`` holding torchlike Tensor ``t``'s values (a view's own values).

    Zero-copy: the array the Tensor holds. A ``torch.Tensor`` is also accepted, with ``from_torch``'s sharing
    rules. The result carries no autograd history (``interop.as_jax`` differentiates through torchlike code).
    """
    if isinstance(t, Tensor):
        return t._data
    torch = sys.modules.get("torch")  # t cannot be a torch tensor unless torch is imported
    if torch is not None and isinstance(t, torch.Tensor):
        return _torch_to_jax(t)
    raise TypeError(f"to_jax(): expected Tensor or torch.Tensor, got {type(t).__name__}")


def from_jax(a, *, requires_grad=False):
    """A history-free torchlike leaf Tensor around the ``jax.Array`` ``a`` (zero-copy)."""
    _check(a, jax.Array, "from_jax")
    np_to_dtype(a.dtype)  # TypeError for dtypes torchlike lacks (uint32, float8, ...)
    return _leaf(a, requires_grad)


def to_numpy(t):
    """``t``'s values as a NumPy array, like ``t.detach().numpy()``.

    Zero-copy and read-only for a CPU tensor with JAX's default layout; a copy otherwise (GPU arrays, arrays
    imported from transposed torch tensors). bfloat16 comes back as ``ml_dtypes.bfloat16``.
    """
    _check(t, Tensor, "to_numpy")
    return np.asarray(t._data)


def from_numpy(a, *, requires_grad=False):
    """A torchlike leaf Tensor with ``a``'s values, dtype and shape (always a copy: NumPy memory is writable)."""
    _check(a, np.ndarray, "from_numpy")
    np_to_dtype(a.dtype)
    return _leaf(jnp.array(a, copy=True), requires_grad)


def _dense_permutation(x):
    """True when torch tensor ``x``'s strides are those of a dense array in some dim order (what XLA imports)."""
    dims = sorted((st, n) for n, st in zip(x.shape, x.stride()) if n != 1)
    expected = 1
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True


def _torch_to_jax(x):
    import torch
    x = x.detach()
    if x.is_conj() or x.is_neg():
        x = x.resolve_conj().resolve_neg()  # a copy: DLPack cannot carry torch's lazy bits
    if x.numel() and not _dense_permutation(x):
        x = x.clone(memory_format=torch.contiguous_format)  # a copy: XLA only imports dense layouts
    return jnp.from_dlpack(x)


def to_torch(t, *, requires_grad=False):
    """A ``torch.Tensor`` sharing memory with torchlike Tensor (or ``jax.Array``) ``t`` through DLPack (zero-copy).

    The result is a new torch leaf with no history (``requires_grad`` sets its flag). It aliases JAX's
    immutable buffer: do not modify it in place (``.clone()`` it first). Use ``interop.torch_op`` for gradients
    that flow between the two frameworks.
    """
    import torch
    _check(t, (Tensor, jax.Array), "to_torch")
    out = torch.from_dlpack(t._data if isinstance(t, Tensor) else t)
    return out.requires_grad_(True) if requires_grad else out


def from_torch(t, *, requires_grad=False):
    """A torchlike leaf Tensor with torch tensor ``t``'s values, dtype and shape (no history).

    Zero-copy through DLPack when ``t`` is dense in some dim order (contiguous, transposed, permuted; size-1 dims'
    strides are ignored) and 64-byte aligned (torch-allocated storage at offset 0; ``torch.from_numpy`` memory
    may not be); a copy for gapped or broadcast strides (``x[::2]``,
    ``expand``), misaligned offsets and conjugate/negative-bit tensors. ``t`` may require grad: its values
    are taken as by ``t.detach()``. Do not modify ``t`` in place while the result is in use (JAX assumes
    immutability).
    """
    import torch
    _check(t, torch.Tensor, "from_torch")
    return _leaf(_torch_to_jax(t), requires_grad)


"""Matrix products: mm, matmul, addmm (more arrive with the op-table work)."""
import jax.numpy as jnp

from ._registry import op, _apply
from ._util import _methods
from .pointwise import _binary_dtype

__all__ = ["mm", "matmul", "addmm"]


@op("MmBackward0", save={"self": ("mat2",), "mat2": ("self",)})
def _mm(self, mat2):
    return self @ mat2


@_mm.derivative
def _(grad, self, mat2):
    return (grad @ jnp.conj(mat2).T if mat2 is not None else None,
            jnp.conj(self).T @ grad if self is not None else None)


def mm(input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {input.dtype.name} != "
                           f"{mat2.dtype.name}")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    return _apply(_mm, (input, mat2), ())


@op("AddmmBackward0", save={"mat1": ("mat2",), "mat2": ("mat1",)})
def _addmm(self, mat1, mat2, *, beta, alpha):
    out = mat1 @ mat2
    if alpha != 1:
        out = out * alpha
    return out + (self if beta == 1 else self * beta)


@_addmm.derivative
def _(grad, mat1, mat2, beta, alpha):
    gs = grad if beta == 1 else grad * beta
    g = grad if alpha == 1 else grad * alpha
    return (gs, g @ jnp.conj(mat2).T if mat2 is not None else None,
            jnp.conj(mat1).T @ g if mat1 is not None else None)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return _apply(_addmm, (input, mat1, mat2), (beta, alpha))


def matmul(input, other):
    if input.ndim == 2 and other.ndim == 2:
        return mm(input, other)
    raise NotImplementedError("matmul beyond 2-D arrives with the op-table work")


_methods(mm=mm, matmul=matmul, addmm=addmm, __matmul__=matmul)

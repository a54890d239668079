"""Matrix products: matmul (every rank combination), mm, bmm, dot, mv, outer, einsum, addmm, baddbmm.

``matmul`` runs as torch's ``at::native::_matmul_impl`` runs: 1-D/2-D cases go to dot / mv / mm; higher ranks
are either folded into one mm/mv of a reshaped operand or run as a broadcast bmm, with torch's views, copies
and in-place squeeze around them, built from the table's own ops, so the graph (node by node), the saved
tensors, the output's ``_version`` and the errors (which follow the path taken) are torch's.
"""
import math

import jax.numpy as jnp
import numpy as np
import opt_einsum as _opt_einsum  # torch's contraction path for einsum of 3+ operands

from .._tensor import Tensor, _type_string, _message_type
from . import _registry
from ._registry import op, _apply
from ._bind import public
from ._out import _write_out
from ._util import _check_unique
from .shape import _unsafe_view, _squeeze_dim_

_CPP_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char", "bool": "bool", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _word(t):
    """torch's ScalarType name of a tensor's dtype: Float, Double, Long, ..."""
    return _type_string(t._data.dtype)[6:-6]


def _cpp(t):
    """The C++ type name torch prints in some messages: float, double, long int, ..."""
    return _CPP_NAMES[np.dtype(t._data.dtype).name]


def _bad_inplace(self, shape, dtype=None):
    """torch's refusal of an in-place result of another shape (or ``dtype``) than ``self``'s."""
    if tuple(shape) != tuple(self.shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output tensor size "
                           f"{list(shape)} should match")
    if dtype is not None and np.dtype(dtype) != self._data.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_cpp(self)} and output tensor dtype "
                           f"{_CPP_NAMES[np.dtype(dtype).name]} should match")


def _x(shape):
    return "x".join(str(s) for s in shape)


def _not_for_bool(kernel, t):
    if t._data.dtype == np.bool_:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _conj_t(a):
    return jnp.conj(jnp.swapaxes(a, -1, -2))


# ----- mm, bmm, dot, mv: one node each -------------------------------------------------------------------
@op("MmBackward0", save={"self": ("mat2",), "mat2": ("self",)}, attrs=("mat2_sym_sizes", "self_sym_sizes"))
def _mm(self, mat2):
    return self @ mat2


@_mm.derivative
def _(grad, self, mat2):
    return (grad @ _conj_t(mat2) if mat2 is not None else None,
            _conj_t(self) @ grad if self is not None else None)


def _check_mm(s1, s2, a, b, kernel=True):
    """torch's mm checks for shapes s1 @ s2 of tensors a, b (shapes may be folded views of them); ``kernel``: with
    the CPU kernel's refusal of bool (after an out= tensor's dtype check)."""
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(s1)} and {_x(s2)})")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp(a)} != {_cpp(b)}")
    if kernel:
        _not_for_bool("addmm_impl_cpu_", a)
    return a._data.dtype


def _mm_meta(input, mat2, kernel=True):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return _check_mm(input.shape, mat2.shape, input, mat2, kernel)


@public
def mm(input, mat2, *, out=None):
    """Matrix product of two 2-D tensors (MmBackward0)."""
    if out is not None:
        return _write_out("mm", lambda: mm(input, mat2), out, (input, mat2), "mm",
                          expect=lambda: _mm_meta(input, mat2, kernel=False))
    _mm_meta(input, mat2)
    return _apply(_mm, (input, mat2), ())


@op("BmmBackward0", save={"self": ("mat2",), "mat2": ("self",)}, attrs=())
def _bmm(self, mat2):
    return jnp.matmul(self, mat2)


_bmm.derivative(_mm.backward)


def _check_bmm(s1, s2, a, b, name="bmm"):
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] "
                           f"but got: [{s2[0]}, {s2[1]}].")
    _not_for_bool(name, a)  # (torch's kernel is chosen by the first operand's dtype: a bool one is refused first)
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {_word(a)} but found {_word(b)}")


@public
def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors with the same batch size (BmmBackward0)."""
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    s1, s2 = input.shape, mat2.shape
    if (s1[0] * s1[1] * s2[2] == 0 or s1[2] == 0) and s2[0] == s1[0] and s2[1] == s1[2]:
        # torch returns an empty or zero result of mat2's dtype before its kernel's dtype checks (bool too)
        return _apply(_bmm, (input if mat2.dtype == input.dtype else input.to(mat2.dtype), mat2), ())
    _check_bmm(s1, s2, input, mat2)
    return _apply(_bmm, (input, mat2), ())


@op("DotBackward0", save={"self": ("tensor",), "tensor": ("self",)}, attrs=())
def _dot(self, tensor):
    return jnp.sum(self * tensor)  # torch.dot does not conjugate (that is vdot)


@_dot.derivative
def _(grad, self, tensor):
    return (grad * jnp.conj(tensor) if tensor is not None else None,
            grad * jnp.conj(self) if self is not None else None)


def _check_dot(input, tensor):
    """torch's checks of dot's (and vdot's) operands, in its order."""
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input._data.dtype != tensor._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {_word(input)} and "
                           f"{_word(tensor)}")
    if input.shape[0] != tensor.shape[0]:
        n, m = input.shape[0], tensor.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same number "
                           f"of elements, but got {n} and {m} elements respectively")
    _not_for_bool("dot", input)


@public
def dot(input, tensor):
    """Inner product of two 1-D tensors, without conjugation (DotBackward0)."""
    _check_dot(input, tensor)
    return _apply(_dot, (input, tensor), ())


@op("VdotBackward0", save={"self": ("other",), "other": ("self",)}, attrs=())
def _vdot(self, other):
    return _dot.forward(jnp.conj(self), other)


@_vdot.derivative
def _(grad, self, other):
    return (jnp.conj(grad) * other if other is not None else None,
            grad * self if self is not None else None)


def _vdot_checked(input, other):
    """torch.vdot's computation: dot's checks, then the first operand conjugated (VdotBackward0)."""
    _check_dot(input, other)
    return _apply(_vdot, (input, other), ())


# ----- tensordot's contraction: inner (torch.tensordot itself is a Python function: torchlike/_top_level.py) -----
def _copy_out(compute, out):
    """torch's tensordot_out (inner's too): the result copied into ``out`` (CopyBackwards), after its dtype check
    and out's resize."""
    result = compute()
    if out is None:
        return result
    if isinstance(out, Tensor) and result.dtype != out.dtype:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype {_word(result)}, but got an "
                           f"output tensor with dtype {_word(out)}")
    if not isinstance(out, Tensor) or tuple(out.shape) != tuple(result.shape):
        _write_out("tensordot", result.detach, out, ())  # (out resized as torch resizes it)
    return out.copy_(result)


def _tensordot(a, b, dims1, dims2):
    """torch's at::tensordot: contracted dims of size 1 summed first, then one mm of the permuted operands (their dims
    as given), or for a full contraction their dot (mul and sum unless both are contiguous)."""
    if len(dims1) != len(dims2):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, csize = a, b, 1
    for d1, d2 in zip(dims1, dims2):
        s1, s2 = a.size(d1), b.size(d2)
        if s2 == 1:
            t1 = t1.sum(d1, True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = t2.sum(d2, True, dtype=t2.dtype)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in dim {d1} and second "
                               f"has size {s2} in dim {d2}")
        else:
            csize *= s1
    _check_unique(dims1, a.ndim)
    _check_unique(dims2, b.ndim)
    c1, c2 = {d % a.ndim for d in dims1}, {d % b.ndim for d in dims2}
    free1 = [i for i in range(a.ndim) if i not in c1]
    free2 = [i for i in range(b.ndim) if i not in c2]
    size1, size2 = math.prod(t1.shape[i] for i in free1), math.prod(t2.shape[i] for i in free2)
    sizes = [t1.shape[i] for i in free1] + [t2.shape[i] for i in free2]
    t1, t2 = t1.permute(free1 + list(dims1)), t2.permute(list(dims2) + free2)
    if size1 != 1 or size2 != 1:
        return mm(t1.reshape(size1, csize), t2.reshape(csize, size2)).reshape(sizes)
    if t1.is_contiguous() and t2.is_contiguous():
        return dot(t1.flatten(), t2.flatten()).reshape(sizes)
    return (t1.squeeze() * t2.squeeze()).sum(dtype=t1.dtype).reshape(sizes)


@public
def inner(input, other, *, out=None):
    """torch.inner: the sum over the last dims of both (a product when one is 0-d)."""
    def compute():
        if input.ndim == 0 or other.ndim == 0:
            return input * other
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                               f"{list(input.shape)} and {list(other.shape)}")
        return _tensordot(input, other, [-1], [-1])
    return _copy_out(compute, out)


@public
def vdot(input, other, *, out=None):
    """torch.vdot: the dot product of two 1-D tensors, the first conjugated (VdotBackward0)."""
    if out is None:
        return _vdot_checked(input, other)
    return _write_out("vdot", lambda: _vdot_checked(input, other), out, (input, other),
                      expect=lambda: _vdot_out_dtype(input, out))


def _vdot_out_dtype(input, out):
    if out._data.dtype != input._data.dtype:
        raise RuntimeError(f"result dtype {_word(out)} does not match input dtype {_word(input)}")
    return out._data.dtype


@op("MvBackward0", save={"self": ("vec",), "vec": ("self",)}, attrs=())
def _mv(self, vec):
    return self @ vec


@_mv.derivative
def _(grad, self, vec):
    return (grad[:, None] * jnp.conj(vec)[None, :] if vec is not None else None,
            _conj_t(self) @ grad if self is not None else None)


def _check_mv(ms, vs, mat, vec):
    if ms[1] != vs[0]:
        raise RuntimeError(f"size mismatch, got input ({ms[0]}), mat ({_x(ms)}), vec ({vs[0]})")
    if mat._data.dtype != vec._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_word(vec)}, {_word(mat)}, "
                           f"and {_word(vec)}")
    _not_for_bool("addmv_impl_cpu", mat)


@public
def mv(input, vec):
    """Matrix-vector product of a 2-D and a 1-D tensor (MvBackward0)."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _check_mv(input.shape, vec.shape, input, vec)
    return _apply(_mv, (input, vec), ())


# ----- matmul ----------------------------------------------------------------------------------------------
def _should_fold(input, other):
    """torch's should_fold: whether an N-D @ (1|2)-D product (either order) runs as one mm/mv of a folded view."""
    d1, d2 = input.ndim, other.ndim
    if not ((d1 >= 3 and d2 in (1, 2)) or (d2 >= 3 and d1 in (1, 2))):
        return False
    transpose = d2 > d1
    small, big = (input, other) if transpose else (other, input)
    if small._requires_grad:  # fold to keep backward's memory small, even if the fold copies
        return True
    if d1 == 2:  # the mm of other.mT would need a transposed copy of its result
        return False
    sizes, strides = list(big.shape), list(big.stride())
    if transpose:  # big is other.mT
        sizes[-2:], strides[-2:] = sizes[:-3:-1], strides[:-3:-1]
    if math.prod(sizes) == 0:
        return True
    return all(strides[i] == strides[i + 1] * sizes[i + 1] for i in range(len(sizes) - 2))


def _broadcast_batch(s1, s2):
    """Broadcast two shapes with torch's infer_size error (the rightmost mismatch is reported)."""
    n = max(len(s1), len(s2))
    s1, s2 = (1,) * (n - len(s1)) + tuple(s1), (1,) * (n - len(s2)) + tuple(s2)
    for i in reversed(range(n)):
        x, y = s1[i], s2[i]
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
    return tuple(y if x == 1 else x for x, y in zip(s1, s2))


def _matmul_method(self, other):
    return matmul(self, other) if isinstance(other, Tensor) else NotImplemented


def _rmatmul(self, other):
    return matmul(other, self) if isinstance(other, Tensor) else NotImplemented


@public(dunders=(("__matmul__", _matmul_method), ("__rmatmul__", _rmatmul)))
def matmul(input, other):
    """torch.matmul for every rank combination, run as torch's ``_matmul_impl`` runs it (dot, mv, mm, a folded
    mm/mv, or a broadcast bmm, with the views, copies and in-place squeeze around them), so the recorded graph,
    the saved tensors and the output's ``_version`` are torch's."""
    if _registry._composite_cast is not None:  # autocast casts matmul's operands before its decomposition
        input, other = _registry._composite_cast("matmul", (input, other))
    d1, d2 = input.ndim, other.ndim
    if d1 == 0 or d2 == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {d1}D and {d2}D")
    if d1 == 1 and d2 == 1:
        return dot(input, other)
    if d1 == 2 and d2 == 1:
        return mv(input, other)
    if d1 == 1 and d2 == 2:
        out = _apply(_squeeze_dim_, (mm(input.unsqueeze(0), other),), (0,))
        out._version_counter().version += 1  # torch squeezes its mm result in place
        return out
    if d1 == 2 and d2 == 2:
        return mm(input, other)
    if _should_fold(input, other):
        transpose = d2 > d1
        t1 = other.mT if transpose else input
        t2 = (input.t() if d1 == 2 else input) if transpose else other
        out_shape = tuple(t1.shape[:-1]) + ((t2.shape[1],) if t2.ndim == 2 else ())
        folded = t1.reshape(math.prod(t1.shape[:-1]), t1.shape[-1])
        if t2.ndim == 1:
            return _apply(_unsafe_view, (mv(folded, t2),), (out_shape,))
        out = _apply(_unsafe_view, (mm(folded, t2),), (out_shape,))
        return out.mT.contiguous() if transpose else out
    sa, sb = tuple(input.shape), tuple(other.shape)
    n, m1 = (sa[-2] if d1 > 1 else 1), sa[-1]
    m2, p = (sb[-2] if d2 > 1 else sb[0]), (sb[-1] if d2 > 1 else 1)
    batch1, batch2 = sa[:max(d1 - 2, 0)], sb[:max(d2 - 2, 0)]
    if d1 == 3 and d2 == 3 and batch1[0] != batch2[0]:  # a batch of 1 that requires grad is squeezed, then folded
        if batch1[0] == 1 and input._requires_grad:
            return matmul(input.squeeze(0), other)
        if batch2[0] == 1 and other._requires_grad:
            return matmul(input, other.squeeze(0))
    batch = _broadcast_batch(batch1, batch2)
    nb = math.prod(batch)
    a = input.expand(batch + (n, m1)).reshape(nb, n, m1)
    if d2 == 1:
        b = other.expand(batch + (m2,)).reshape(nb, m2).unsqueeze(2)
    else:
        b = other.expand(batch + (m2, p)).reshape(nb, m2, p)
    out = bmm(a, b)
    out_shape = batch + ((n,) if d1 > 1 else ()) + ((p,) if d2 > 1 else ())
    return _apply(_unsafe_view, (out.squeeze(-1) if d2 == 1 else out,), (out_shape,))


@public(aliases=("ger",))
def outer(input, vec2):
    """Outer product of two 1-D tensors: input.reshape(-1, 1) * vec2, recorded as torch does (MulBackward0)."""
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return input.reshape(-1, 1) * vec2


# ----- addmm, baddbmm --------------------------------------------------------------------------------------
def _scaled(x, s):
    """x * s, s in x's dtype as torch converts a scalar (an integer tensor truncates 0.5 to 0)."""
    if s == 1:
        return x
    return x * (int(s.real if isinstance(s, complex) else s) if jnp.issubdtype(x.dtype, jnp.integer) else s)


def _add_scaled(self, prod, beta, alpha):
    """beta * self + alpha * prod (torch ignores self, even NaN/inf in it, when beta is 0)."""
    out = _scaled(prod, alpha)
    if beta == 0:
        return jnp.broadcast_to(out, jnp.broadcast_shapes(self.shape, out.shape))
    return out + _scaled(self, beta)


def _conj_scalar(s):
    return s.conjugate() if isinstance(s, complex) else s


@op("AddmmBackward0", save={"mat1": ("mat2",), "mat2": ("mat1",)},
    attrs=("alpha", "beta", "mat1_sym_sizes", "mat2_sym_sizes"))
def _addmm(self, mat1, mat2, *, beta, alpha):
    return _add_scaled(self, jnp.matmul(mat1, mat2), beta, alpha)


@_addmm.derivative
def _(grad, mat1, mat2, beta, alpha):
    g = _scaled(grad, _conj_scalar(alpha))
    return (_scaled(grad, _conj_scalar(beta)),
            g @ _conj_t(mat2) if mat2 is not None else None,
            _conj_t(mat1) @ g if mat1 is not None else None)


@op("BaddbmmBackward0", save={"batch1": ("batch2",), "batch2": ("batch1",)}, attrs=("alpha", "beta"))
def _baddbmm(self, batch1, batch2, *, beta, alpha):
    return _addmm.forward(self, batch1, batch2, beta=beta, alpha=alpha)


_baddbmm.derivative(lambda grad, batch1, batch2, beta, alpha: _addmm.backward(grad, batch1, batch2, beta, alpha))


def _check_expand(t, target):
    """torch's expand check for broadcasting ``self`` (tensor t) of addmm/baddbmm to the product's shape."""
    shape = tuple(t.shape)
    lead = len(target) - len(shape)
    if lead < 0:
        raise RuntimeError(f"expand({_message_type(t._data.dtype)}{{{list(shape)}}}, size={list(target)}): the number "
                           f"of sizes provided ({len(target)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({len(shape)})")
    for i, s in reversed(list(enumerate(shape))):  # torch reports the last mismatching dim
        if s != 1 and s != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match the existing size "
                               f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(shape)}")


def _check_addmm(input, mat1, mat2, inplace=False):
    """addmm's checks in torch's order; in place, input must have the product's shape (no broadcast)."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    for name, a in (("self", input), ("mat1", mat1)):
        if a._data.dtype != mat2._data.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_word(a)} and {_word(mat2)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(mat1.shape)} and {_x(mat2.shape)})")
    (_bad_inplace if inplace else _check_expand)(input, (mat1.shape[0], mat2.shape[1]))
    _not_for_bool("addmm_impl_cpu_", input)


def _mm_inplace(entry, check):
    """The in-place variant of addmm-like ``entry`` (addmm_, baddbmm_): autograd's checks, then the op's."""
    def inplace(self, a, b, *, beta=1, alpha=1):
        _registry._check_autograd_inplace(self, (a, b))
        check(self, a, b, True)
        return _registry._apply_inplace(entry, self, (self, a, b), (beta, alpha))
    return inplace


@public(inplace=_mm_inplace(_addmm, _check_addmm))
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product (AddmmBackward0)."""
    _check_addmm(input, mat1, mat2)
    return _apply(_addmm, (input, mat1, mat2), (beta, alpha))


def _check_baddbmm(input, batch1, batch2, inplace=False):
    """baddbmm's checks in torch's order: the expand of input, dtypes, the batches' ranks and sizes (in place: then
    input's shape)."""
    _check_expand(input, (batch1.size(0), batch1.size(1), batch2.size(2)))
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(input)}, batch1: {_cpp(batch1)}, "
                           f"batch2: {_cpp(batch2)}")
    for name, m in (("batch1", batch1), ("batch2", batch2)):
        if m.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_bmm(batch1.shape, batch2.shape, batch1, batch2, "baddbmm")
    if inplace:
        _bad_inplace(input, (batch1.size(0), batch1.size(1), batch2.size(2)))


@public(inplace=_mm_inplace(_baddbmm, _check_baddbmm))
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2) (BaddbmmBackward0)."""
    _check_baddbmm(input, batch1, batch2)
    return _apply(_baddbmm, (input, batch1, batch2), (beta, alpha))


# ----- einsum ----------------------------------------------------------------------------------------------
# torch's at::native::einsum and sumproduct_pair (aten/src/ATen/native/Linear.cpp), transcribed over torchlike's
# own ops: each operand is aligned to one label order by views (diagonal + movedim for a repeated label,
# unsqueeze, permute), then operands are contracted pairwise (sum of dims only one of them has, then mul, or
# permute + reshape + bmm + view + permute), left to right, or along opt_einsum's path for 3+ operands as
# torch.functional.einsum asks for it; so nodes, views, versions and gradients are torch's by construction.
_ELLIPSIS = 52  # torch's subscripts: A-Z are 0-25, a-z 26-51, "..." is 52


def _subscript(c):
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _letter(s):
    return chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)


def _scan(term, start, twice, stray):
    """Yield the subscripts of one term of an equation (the term starts at index ``start``), raising torch's
    errors in the order torch meets them; ``twice`` and ``stray`` are its messages for a second ellipsis and a
    '.' outside one."""
    i, ellipsis = 0, False
    while i < len(term):
        c = term[i]
        if c == ".":
            if ellipsis:
                raise RuntimeError(twice)
            if term[i:i + 3] != "...":
                raise RuntimeError(stray)
            ellipsis, i = True, i + 2
            yield _ELLIPSIS
        elif c != " ":
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {start + i} in the equation string, "
                                   f"subscripts must be in [a-zA-Z]")
            yield _subscript(c)
        i += 1


def _input_subscripts(lhs, operands):
    """Each operand's subscripts, the count of each label and the number of dims any ellipsis covers."""
    labels, start = [], 0
    for k, term in enumerate(lhs.split(",")):
        if k == len(operands):
            raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
        labels.append(list(_scan(term, start, f"einsum(): found '.' for operand {k} for which an ellipsis was "
                                              f"already found",
                                 f"einsum(): found '.' for operand {k} that is not part of any ellipsis")))
        start += len(term) + 1
    if len(labels) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    counts, ell_num_dim = [0] * _ELLIPSIS, 0
    for k, (subs, t) in enumerate(zip(labels, operands)):
        has_ell = _ELLIPSIS in subs
        n = len(subs) - has_ell
        for s in subs:
            if s != _ELLIPSIS:
                counts[s] += 1
        if has_ell:
            ell_num_dim = max(ell_num_dim, t.ndim - n)
        if n > t.ndim if has_ell else n != t.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) "
                               + ("is more than" if has_ell else "does not match") + f" the number of dimensions "
                               f"({t.ndim}) for operand {k}" + ("" if has_ell else " and no ellipsis was given"))
    return labels, counts, ell_num_dim


def _label_positions(equation, lhs, counts, ell_num_dim):
    """Where each label (and the ellipsis) goes in the aligned shape: the output's dims, then the contracted ones.
    Returns (position per label, ellipsis position, number of output dims, aligned rank)."""
    pos, n, ell_index, ell_out = [-1] * _ELLIPSIS, 0, 0, False
    arrow = equation.find("->")
    if arrow < 0:  # implicit output: the ellipsis, then the labels seen once, A-Z before a-z
        n, ell_out = ell_num_dim, True
        for s in range(_ELLIPSIS):
            if counts[s] == 1:
                pos[s], n = n, n + 1
    else:
        for s in _scan(equation[arrow + 2:], len(lhs) + 2,
                       "einsum(): found '.' for output but an ellipsis (...) was already found",
                       "einsum(): found '.' for output that is not part of any ellipsis (...)"):
            if s == _ELLIPSIS:
                ell_index, n, ell_out = n, n + ell_num_dim, True
                continue
            if counts[s] == 0 or pos[s] != -1:
                why = "appears more than once in the output" if pos[s] != -1 else \
                    "does not appear in the equation for any input operand"
                raise RuntimeError(f"einsum(): output subscript {_letter(s)} {why}")
            pos[s], n = n, n + 1
    out_num_dim = n
    if not ell_out:
        ell_index, n = n, n + ell_num_dim
    for s in range(_ELLIPSIS):
        if counts[s] and pos[s] == -1:
            pos[s], n = n, n + 1
    return pos, ell_index, out_num_dim, n


def _align(operands, labels, pos, ell_index, ell_num_dim, rank):
    """Each operand as a view in the aligned order (diagonals for repeated labels, size-1 dims for missing ones),
    with torch's size checks; and per aligned dim, how many operands have it with a size other than 1."""
    label_size, ell_sizes, dim_counts, ops = [1] * _ELLIPSIS, [1] * ell_num_dim, [0] * rank, []
    for i, (t, subs) in enumerate(zip(operands, labels)):
        op, perm, dim = t, [-1] * rank, 0
        for s in subs:
            if s == _ELLIPSIS:
                for j in range(ell_num_dim - (t.ndim - len(subs) + 1), ell_num_dim):
                    size = op.shape[dim]
                    if size != 1:
                        if ell_sizes[j] not in (1, size):
                            raise RuntimeError(f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size "
                                               f"{size} which does not broadcast with previously seen ellipsis with "
                                               f"size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    perm[ell_index + j], dim = dim, dim + 1
            elif perm[pos[s]] == -1:
                size = op.shape[dim]
                if size != 1:
                    if label_size[s] not in (1, size):
                        raise RuntimeError(f"einsum(): subscript {_letter(s)} has size {size} for operand {i} which "
                                           f"does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[pos[s]] += 1
                perm[pos[s]], dim = dim, dim + 1
            else:  # a repeated label: take the diagonal, back at the first one's place
                prev = perm[pos[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_letter(s)} is repeated for operand {i} but the sizes "
                                       f"don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = op.diagonal(0, prev, dim).movedim(-1, prev)
        for k in range(rank):
            if perm[k] == -1:
                op = op.unsqueeze(dim)
                perm[k], dim = dim, dim + 1
        ops.append(op.permute(perm))
    return ops, dim_counts


def _sumproduct_pair(left, right, sum_dims):
    """torch's sumproduct_pair with keepdim: (left * right).sum(sum_dims, keepdim=True) of two aligned operands,
    by mul when nothing is summed, else by permute + reshape to 3-D + bmm + view + permute back (torch 2.13's,
    which swaps the operands when all of right's own output dims come before left's)."""
    if not sum_dims:
        return left * right
    lro, lo, ro, sum_size = [], [], [], 1
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in sum_dims:
            if sl and sr:
                sum_size *= left.shape[i]
            elif sl:  # in one operand only: summed right away
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            lro.append(i)
        elif sl:
            lo.append(i)
        else:
            ro.append(i)
    if lo and ro and ro[-1] < lo[0]:  # torch swaps the operands so that bmm's result is in the output's order
        left, right, lo, ro = right, left, ro, lo
    lro_size, lo_size = math.prod(left.shape[d] for d in lro), math.prod(left.shape[d] for d in lo)
    ro_size = math.prod(right.shape[d] for d in ro)
    out_size = [left.shape[d] for d in lro + lo] + [1] * len(sum_dims) + [right.shape[d] for d in ro]
    order = lro + lo + sum_dims + ro
    left = left.permute(order).reshape(lro_size, lo_size, sum_size)
    right = right.permute(lro + sum_dims + ro + lo).reshape(lro_size, sum_size, ro_size)
    return bmm(left, right).view(out_size).permute([order.index(d) for d in range(len(order))])


def _contract(ops, dim_counts, out_num_dim, path):
    """Contract the aligned operands pairwise (along ``path``, else left to right) into one."""
    pairs = iter(path) if path is not None else None
    while len(ops) > 1:
        i, j = (0, 1) if pairs is None else sorted(next(pairs))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, len(dim_counts)):  # contracted dims no other operand has are summed now
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = a.sum(a_sum, True)
        if b_sum:
            b = b.sum(b_sum, True)
        out = _sumproduct_pair(a, b, sum_dims)
        ops.insert(len(ops) if pairs is not None else 0, out)
    return ops[0]


def _parse_subscript(n):
    """torch.functional.einsum's sublist entry -> label."""
    if n == Ellipsis:
        return "..."
    if n >= 0 and n < 26:
        return chr(ord("A") + n)
    if n >= 26 and n < 52:
        return chr(ord("a") + n - 26)
    raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")


@public(method=False)
def einsum(*args):
    """Einstein summation, ``einsum(equation, *operands)`` or ``einsum(op0, sublist0, op1, sublist1, ...,
    [sublist_out])``, computed and recorded as torch does (see above): a 1-operand einsum without sums is a view."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation = ",".join("".join(_parse_subscript(s) for s in sub) for sub in args[1::2])
        if len(args) % 2:
            equation += "->" + "".join(_parse_subscript(s) for s in args[-1])
        operands = args[:-1:2] if len(args) % 2 else args[::2]
    else:
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            return einsum(equation, *operands[0])
    path = None
    if len(operands) >= 3:  # torch asks opt_einsum (strategy "auto") for the path, from the shapes
        path = _opt_einsum.contract_path(equation, *operands, optimize="auto")[0]
    if not isinstance(equation, str):
        raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not {type(equation).__name__}")
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type(t).__name__}")
    lhs = equation.partition("->")[0]
    labels, counts, ell_num_dim = _input_subscripts(lhs, operands)
    pos, ell_index, out_num_dim, rank = _label_positions(equation, lhs, counts, ell_num_dim)
    ops, dim_counts = _align(operands, labels, pos, ell_index, ell_num_dim, rank)
    out = _contract(ops, dim_counts, out_num_dim, path)
    if rank == out_num_dim:
        return out
    if len(operands) > 1:  # the contracted dims are all 1 by now
        return out.view(out.shape[:out_num_dim])
    return out.sum(list(range(out_num_dim, rank)))

"""Matrix products: matmul (every rank combination), mm, bmm, dot, mv, outer, einsum, addmm, baddbmm.

``matmul`` runs as torch's ``at::native::_matmul_impl`` runs: 1-D/2-D cases go to dot / mv / mm; higher ranks
are either folded into one mm/mv of a reshaped operand or run as a broadcast bmm, with torch's views, copies
and in-place squeeze around them, built from the table's own ops, so the graph (node by node), the saved
tensors, the output's ``_version`` and the errors (which follow the path taken) are torch's.
"""
import math

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _type_string
from ._registry import OpDef, op, _apply
from ._bind import public
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


def _check_mm(s1, s2, a, b):
    """torch's mm checks for shapes s1 @ s2 of tensors a, b (shapes may be folded views of them)."""
    if s1[1] != s2[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(s1)} and {_x(s2)})")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp(a)} != {_cpp(b)}")
    _not_for_bool("addmm_impl_cpu_", a)


@public
def mm(input, mat2):
    """Matrix product of two 2-D tensors (MmBackward0)."""
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_mm(input.shape, mat2.shape, input, mat2)
    return _apply(_mm, (input, mat2), ())


@op("BmmBackward0", save={"self": ("mat2",), "mat2": ("self",)}, attrs=())
def _bmm(self, mat2):
    return jnp.matmul(self, mat2)


_bmm.derivative(_mm.backward)


def _check_bmm(s1, s2, a, b):
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{s1[0]}, {s1[2]}] "
                           f"but got: [{s2[0]}, {s2[1]}].")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {_word(a)} but found {_word(b)}")
    _not_for_bool("bmm", a)


@public
def bmm(input, mat2):
    """Batched matrix product of two 3-D tensors with the same batch size (BmmBackward0)."""
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_bmm(input.shape, mat2.shape, input, mat2)
    return _apply(_bmm, (input, mat2), ())


@op("DotBackward0", save={"self": ("tensor",), "tensor": ("self",)}, attrs=())
def _dot(self, tensor):
    return jnp.sum(self * tensor)  # torch.dot does not conjugate (that is vdot)


@_dot.derivative
def _(grad, self, tensor):
    return (grad * jnp.conj(tensor) if tensor is not None else None,
            grad * jnp.conj(self) if self is not None else None)


@public
def dot(input, tensor):
    """Inner product of two 1-D tensors, without conjugation (DotBackward0)."""
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
    return _apply(_dot, (input, tensor), ())


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


@public
def outer(input, vec2):
    """Outer product of two 1-D tensors: input.reshape(-1, 1) * vec2, recorded as torch does (MulBackward0)."""
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return input.reshape(-1, 1) * vec2


# ----- addmm, baddbmm --------------------------------------------------------------------------------------
def _scaled(x, s):
    return x if s == 1 else x * s


def _conj_scalar(s):
    return s.conjugate() if isinstance(s, complex) else s


@op("AddmmBackward0", save={"mat1": ("mat2",), "mat2": ("mat1",)},
    attrs=("alpha", "beta", "mat1_sym_sizes", "mat2_sym_sizes"))
def _addmm(self, mat1, mat2, *, beta, alpha):
    out = _scaled(jnp.matmul(mat1, mat2), alpha)
    if beta == 0:  # torch ignores self (even NaN/inf in it) when beta is 0
        return jnp.broadcast_to(out, jnp.broadcast_shapes(self.shape, out.shape))
    return out + _scaled(self, beta)


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
        raise RuntimeError(f"expand({_type_string(t._data.dtype)}{{{list(shape)}}}, size={list(target)}): the number "
                           f"of sizes provided ({len(target)}) must be greater or equal to the number of dimensions "
                           f"in the tensor ({len(shape)})")
    for i, s in enumerate(shape):
        if s != 1 and s != target[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({target[lead + i]}) must match the existing size "
                               f"({s}) at non-singleton dimension {lead + i}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(shape)}")


@public
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product (AddmmBackward0)."""
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    for name, a in (("self", input), ("mat1", mat1)):
        if a._data.dtype != mat2._data.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {_word(a)} and {_word(mat2)}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_x(mat1.shape)} and {_x(mat2.shape)})")
    _check_expand(input, (mat1.shape[0], mat2.shape[1]))
    _not_for_bool("addmm_impl_cpu_", input)
    return _apply(_addmm, (input, mat1, mat2), (beta, alpha))


@public
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2) (BaddbmmBackward0)."""
    for name, m in (("batch1", batch1), ("batch2", batch2)):
        if m.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if input._data.dtype != batch1._data.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(input)}, batch1: {_cpp(batch1)}, "
                           f"batch2: {_cpp(batch2)}")
    _check_bmm(batch1.shape, batch2.shape, batch1, batch2)
    _check_expand(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return _apply(_baddbmm, (input, batch1, batch2), (beta, alpha))


# ----- einsum ----------------------------------------------------------------------------------------------
def _einsum_fwd(*operands, equation, dtype):
    return jnp.einsum(equation, *[o.astype(dtype) for o in operands])


_einsum_entries = {}


def _einsum_entry(node_name, n):
    """The table entry for an n-operand einsum recorded as node_name (backward: jax.vjp of jnp.einsum)."""
    entry = _einsum_entries.get((node_name, n))
    if entry is None:
        entry = OpDef(node_name, _einsum_fwd, inputs=tuple(f"operand{i}" for i in range(n)),
                      statics=("equation", "dtype"), attrs=())
        _einsum_entries[(node_name, n)] = entry
    return entry


def _label_index(c):
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _parse_einsum(equation, operands):
    """Check an equation as torch does; return (explicit jnp equation, has contraction dims)."""
    lhs, arrow, rhs = equation.partition("->")
    terms = [[]]
    for i, c in enumerate(lhs):
        if c == " ":
            continue
        if c == ",":
            if len(terms) == len(operands):
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            terms.append([])
        elif c == ".":
            terms[-1].append(c)
        elif not c.isascii() or not c.isalpha():
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, subscripts "
                               f"must be in [a-zA-Z]")
        else:
            terms[-1].append(c)
    terms = ["".join(t) for t in terms]
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    counts, sizes, ell_dims = {}, {}, 0
    for k, (term, t) in enumerate(zip(terms, operands)):
        has_ell = "..." in term
        if term.replace("...", "").count("."):
            raise RuntimeError(f"einsum(): found '.' for operand {k} that is not part of any ellipsis")
        labels = term.replace("...", "")
        if (len(labels) > t.ndim) if has_ell else (len(labels) != t.ndim):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(labels)}) "
                               + ("is more than" if has_ell else "does not match") + f" the number of dimensions "
                               f"({t.ndim}) for operand {k}" + ("" if has_ell else " and no ellipsis was given"))
        if has_ell:
            ell_dims = max(ell_dims, t.ndim - len(labels))
        left, _, right = term.partition("...")
        dims = list(zip(left, t.shape)) + list(zip(right, t.shape[t.ndim - len(right):]))
        seen = {}
        for c, s in dims:
            counts[c] = counts.get(c, 0) + 1  # torch counts repeats too: "ii" sums the diagonal
            if c in seen:
                if seen[c] != s:
                    raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't "
                                       f"match, {s} != {seen[c]}")
                continue
            seen[c] = s
            if s != 1:
                if sizes.get(c, 1) not in (1, s):
                    raise RuntimeError(f"einsum(): subscript {c} has size {s} for operand {k} which does not "
                                       f"broadcast with previously seen size {sizes[c]}")
                sizes[c] = s
    ell_in_lhs = any("..." in t for t in terms)
    if arrow:
        out = rhs.replace(" ", "")
        labels = out.replace("...", "")
        for j, c in enumerate(labels):
            if not c.isascii() or not c.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + rhs.index(c)} in "
                                   f"the equation string, subscripts must be in [a-zA-Z]")
            if c not in counts or c in labels[:j]:
                why = "appears more than once in the output" if c in labels[:j] else \
                    "does not appear in the equation for any input operand"
                raise RuntimeError(f"einsum(): output subscript {c} {why}")
        ell_out = "..." in out
    else:  # implicit output: the ellipsis, then the labels seen once, in torch's order (A-Z then a-z)
        once = sorted((c for c, k in counts.items() if k == 1), key=_label_index)
        out = ("..." if ell_in_lhs else "") + "".join(once)
        labels, ell_out = "".join(once), ell_in_lhs
    contracted = len(counts) > len(labels) or (ell_dims > 0 and not ell_out)
    return ",".join(terms) + "->" + out, contracted


def _sublists_to_equation(args):
    """torch.einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) -> (equation, operands)."""
    def letters(sub):
        return "".join("..." if s is Ellipsis else (chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
                       for s in sub)
    operands, terms = list(args[0::2]), [letters(s) for s in args[1::2]]
    if len(args) % 2:
        operands.pop()
        return ",".join(terms) + "->" + letters(args[-1]), operands
    return ",".join(terms), operands


@public(method=False)
def einsum(*args):
    """Einstein summation (string or sublist form); node named like the last node torch records for it."""
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _sublists_to_equation(args)
    n_terms = equation.partition("->")[0].count(",") + 1
    if len(operands) >= 3 and n_terms != len(operands):  # torch asks opt_einsum for a path first
        raise ValueError(f"Number of einsum subscripts, {n_terms}, must be equal to the number of operands, "
                         f"{len(operands)}.")
    eq, contracted = _parse_einsum(equation, operands)
    if len(operands) == 1:
        name = "SumBackward1" if contracted else "PermuteBackward0"
    else:
        name = "ViewBackward0" if contracted else "MulBackward0"
    dt = operands[0]._data.dtype
    if contracted and len(operands) > 1:  # torch contracts with bmm, which wants equal dtypes
        for o in operands[1:]:
            if o._data.dtype != dt:
                raise RuntimeError(f"expected scalar type {_word(operands[0])} but found {_word(o)}")
    else:  # products by mul promote
        for o in operands[1:]:
            dt = _dtype.promote_types(_dtype._from_np(dt), _dtype._from_np(o._data.dtype))._np
    return _apply(_einsum_entry(name, len(operands)), tuple(operands), (eq, np.dtype(dt)))

"""Helpers for checking torchlike against real torch on the same NumPy inputs."""
import warnings

import numpy as np
import torch

import torchlike as tl


def pair(array, requires_grad=False):
    """The same NumPy array as a torchlike tensor and a torch tensor (same dtype)."""
    array = np.asarray(array)
    a = tl.tensor(array, requires_grad=requires_grad)
    b = torch.tensor(array, requires_grad=requires_grad)
    return a, b


def dtype_name(d):
    return str(d).split(".")[-1]


def assert_same(tl_value, torch_value, rtol=1e-5, atol=1e-6, check_dtype=True):
    """Values, shape and dtype of a torchlike tensor equal those of a torch tensor (None matches None)."""
    if torch_value is None or tl_value is None:
        assert tl_value is None and torch_value is None, (tl_value, torch_value)
        return
    if isinstance(torch_value, (tuple, list)):
        assert len(tl_value) == len(torch_value)
        for a, b in zip(tl_value, torch_value):
            assert_same(a, b, rtol, atol, check_dtype)
        return
    expected = torch_value.detach().numpy(force=True) if isinstance(torch_value, torch.Tensor) else np.asarray(torch_value)
    actual = np.asarray(tl_value.detach()._data) if isinstance(tl_value, tl.Tensor) else np.asarray(tl_value)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if check_dtype and isinstance(torch_value, torch.Tensor):
        assert dtype_name(tl_value.dtype) == dtype_name(torch_value.dtype), (tl_value.dtype, torch_value.dtype)
    if expected.dtype == np.bool_ or expected.dtype.kind in "iu":
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual.astype(np.complex128 if actual.dtype.kind == "c" else np.float64),
                                   expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)


def graph(t):
    """Nested (name, [children]) description of the autograd graph below a tensor or node."""
    node = t.grad_fn if hasattr(t, "grad_fn") else t
    if node is None:
        return None
    return (node.name(), [None if n is None else graph(n) for n, _ in node.next_functions])


def graph_with_nr(t):
    """Like graph(), also recording the output_nr of each edge."""
    node = t.grad_fn if hasattr(t, "grad_fn") else t
    if node is None:
        return None
    return (node.name(), [(None if n is None else graph_with_nr(n), nr) for n, nr in node.next_functions])


def _dense(t):
    """Materialise torch's lazy tensors (a ZeroTensor gradient, the conjugate bit) for comparison."""
    if t is None:
        return t
    return torch.zeros_like(t) if t._is_zerotensor() else t.resolve_conj().resolve_neg()


def saved_names(node):
    """The node's ``_saved_*`` attribute names (strides left out: torchlike tensors are always contiguous)."""
    return {a for a in dir(node) if a.startswith("_saved_") and not a.endswith("_sym_strides")}


def compare_graph(a, b, check_saved=True, seen=None):
    """The torchlike graph below node a has torch's structure below node b, with the same saved values."""
    seen = set() if seen is None else seen
    if b is None or a is None:
        assert a is None and b is None, (a, b)
        return
    assert a.name() == b.name(), (a.name(), b.name())
    assert type(a).__name__ == type(b).__name__, (type(a).__name__, type(b).__name__)
    if id(b) in seen:
        return
    seen.add(id(b))
    if check_saved:
        assert saved_names(a) == saved_names(b), a.name()
        raw = {n for n in dir(b) if n.startswith("_raw_saved_")}
        assert {n for n in dir(a) if n.startswith("_raw_saved_")} == raw, (a.name(), raw)
        for attr in saved_names(b):
            expected = getattr(b, attr)
            assert hasattr(a, attr), (b.name(), attr)
            actual = getattr(a, attr)
            if isinstance(expected, torch.Tensor):
                assert_same(actual, _dense(expected))
            else:
                assert actual == expected and type(actual) is type(expected), (b.name(), attr, actual, expected)
    assert len(a.next_functions) == len(b.next_functions), (a.name(), a.next_functions, b.next_functions)
    for (na, ia), (nb, ib) in zip(a.next_functions, b.next_functions):
        assert ia == ib, (a.name(), ia, ib)
        compare_graph(na, nb, check_saved, seen)


def error_of(fn):
    """(type name, first line of the message) of the exception ``fn()`` raises (warnings silenced), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - any error is an outcome to compare
        return type(e).__name__, (str(e).splitlines() or [""])[0]  # (an empty message has no first line)
    return None


def assert_same_error(case):
    """``case(lib)`` raises in torch, and raises the same type with the same first line in torchlike."""
    expected = error_of(lambda: case(torch))
    assert expected is not None, "torch raised nothing"
    assert error_of(lambda: case(tl)) == expected


def saved_summary(t):
    """A node's non-tensor saved attributes and the names of its saved tensors (read before backward frees them;
    strides left out, a list of saved tensors as its None / "tensor" entries)."""
    node = t.grad_fn
    if node is None:
        return None
    values = {a: getattr(node, a) for a in dir(node) if a.startswith("_saved_") and "strides" not in a}
    return {a: "tensor" if isinstance(v, (torch.Tensor, tl.Tensor)) else
            tuple(None if i is None else "tensor" for i in v) if a == "_saved_indices" else v
            for a, v in values.items()}


def run_case(lib, fn, arrays):
    """``fn(lib, *leaves)`` on leaves made from ``arrays`` that require grad: its outputs, each one's graph, saved
    attributes and version, and the first- (create_graph) and second-order gradients of the outputs that require
    grad (None where nothing does)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    seen = [(graph(o), saved_summary(o), o._version) for o in outs]
    diff = [o.double() for o in outs if o.requires_grad]
    first = second = None
    if diff:
        first = lib.autograd.grad(sum((o * o).sum() + o.sum() for o in diff), xs, create_graph=True,
                                  allow_unused=True)
        used = [g for g in first if g is not None and g.requires_grad]
        if used:
            second = lib.autograd.grad(sum((g * g).sum() for g in used), xs, allow_unused=True)
    return outs, seen, first, second


def assert_case_matches(fn, arrays, rtol=1e-5, atol=1e-6):
    """run_case on torch and torchlike agree: outputs (values, requires_grad, view or not), graphs with saved
    attributes and versions, and the gradients of both orders (to ``rtol``/``atol``)."""
    (touts, tseen, tfirst, tsecond), (louts, lseen, lfirst, lsecond) = run_case(torch, fn, arrays), \
        run_case(tl, fn, arrays)
    assert len(louts) == len(touts)
    assert lseen == tseen
    for lo, to in zip(louts, touts):
        assert_same(lo, to)
        assert lo.requires_grad == to.requires_grad and lo._is_view() == to._is_view()
    for lg, tg in ((lfirst, tfirst), (lsecond, tsecond)):
        assert (lg is None) == (tg is None)
        if tg is not None:
            for a, b in zip(lg, tg):
                assert_same(a, b, rtol, atol)

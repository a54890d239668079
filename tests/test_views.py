"""Views and versions (issue 3, point 7), each case run in torchlike and in torch 2.13 and compared:
storage sharing, strides, in-place writes through views (CopySlices / AsStridedBackward0 graphs and
gradients), detach / .data aliasing, torch's view errors, hooks across in-place ops on views, memory."""
import gc
import warnings
import weakref

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, compare_graph, graph_with_nr

A = (np.arange(12, dtype=np.float64).reshape(3, 4) - 5) / 7
W = np.linspace(-1, 1, 4)


def both(fn):
    return fn(tl), fn(torch)


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and the message are what we compare
        return type(e).__name__, str(e)
    return None


# Every view torch's issue names (plus the ones built on them), as functions of a 3x4 tensor.
VIEWS = {
    "view": lambda x: x.view(4, 3),
    "view_as": lambda x: x.view(2, 6).view_as(x.view(6, 2)),
    "reshape": lambda x: x.reshape(-1),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, 2)),
    "getitem_int": lambda x: x[1],
    "getitem_slice": lambda x: x[:, 1:3],
    "getitem_step": lambda x: x[::2, 1::2],
    "getitem_none": lambda x: x[None, :, None],
    "getitem_ellipsis": lambda x: x[...],
    "t": lambda x: x.t(),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "movedim": lambda x: x.movedim(0, 1),
    "expand": lambda x: x[:, :1].expand(3, 5),
    "squeeze": lambda x: x[:1].squeeze(0),
    "squeeze_all": lambda x: x[:, None, :1].squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "narrow": lambda x: x.narrow(1, 1, 2),
    "select": lambda x: x.select(1, -1),
    "diagonal": lambda x: x.diagonal(),
    "diagonal_offset": lambda x: x.diagonal(1),
    "diagonal_neg": lambda x: x.diagonal(-1, 1, 0),
    "split": lambda x: x.split(2, 1)[1],
    "chunk": lambda x: x.chunk(3, 0)[2],
    "unbind": lambda x: x.unbind(1)[2],
    "split_sizes": lambda x: x.split([1, 3], 1)[1],
    "view_of_view": lambda x: x.t()[1:, ::2],
    "select_of_transpose": lambda x: x.t()[2],
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_metadata(name):
    """_base, _is_view(), the shared version counter, strides, offset, contiguity, values and node name."""
    def run(lib):
        x = lib.tensor(A, requires_grad=True) * 1
        v = VIEWS[name](x)
        before = v._version, v.grad_fn.name()
        x.add_(1)  # the view sees its base's new values and version (multi-output views refuse a new grad_fn)
        return [v._base is x, v._is_view(), tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous(),
                before, v._version, x._version, err(lambda: v.grad_fn.name()) or v.grad_fn.name(),
                v.detach().numpy().tolist()]
    assert run(tl) == run(torch)


# In-place ops applied to a view: torch's values, base graph, view graph and gradients.
INPLACE = {
    "mul_scalar": lambda v, w: v.mul_(2),
    "mul_tensor": lambda v, w: v.mul_(w),
    "add_alpha": lambda v, w: v.add_(w, alpha=3),
    "copy": lambda v, w: v.copy_(w),
    "fill": lambda v, w: v.fill_(0.5),
    "zero": lambda v, w: v.zero_(),
    "exp": lambda v, w: v.exp_(),
    "setitem": lambda v, w: v.__setitem__(0, 5.0),
    "iadd": lambda v, w: v.__iadd__(w),
}
WRITABLE = ["view", "getitem_int", "getitem_step", "t", "transpose", "unsqueeze", "narrow", "select", "diagonal",
            "view_of_view", "select_of_transpose", "reshape", "getitem_none"]


@pytest.mark.parametrize("view", WRITABLE)
@pytest.mark.parametrize("how", sorted(INPLACE))
def test_inplace_on_view(view, how):
    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        b = a * 1
        v = VIEWS[view](b)
        other = b[2] if view != "getitem_int" else b[0]  # another view of the same base
        w = lib.tensor(np.linspace(-1, 1, int(np.prod(v.shape[-1:] or (1,)))), requires_grad=True)
        INPLACE[how](v, w)
        loss = (b * b).sum() + (v * v).sum() * 2 + other.sum()
        loss.backward(retain_graph=True)  # keep saved tensors for compare_graph
        return b, v, other, a.grad, w.grad
    (tb, tv, to, ta, tw), (pb, pv, po, pa, pw) = both(run)
    for x, y in ((tb, pb), (tv, pv), (to, po), (ta, pa), (tw, pw)):
        assert_same(x, y)
    compare_graph(tb.grad_fn, pb.grad_fn)
    compare_graph(tv.grad_fn, pv.grad_fn)
    compare_graph(to.grad_fn, po.grad_fn)


def test_inplace_on_base_updates_views():
    """An in-place op on the base rewrites the views' data, and their grad_fn becomes AsStridedBackward0."""
    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        b = a * 1
        v, u = b[1], b.t()[::2]
        b.mul_(3)
        (v.sum() + (u * u).sum()).backward()
        return v, u, graph_with_nr(v), graph_with_nr(u), a.grad, v.grad_fn._saved_storage_offset
    t, p = both(run)
    assert t[2:4] == p[2:4] and t[5] == p[5]
    assert_same(list(t[:2]) + [t[4]], list(p[:2]) + [p[4]])


def test_inplace_through_view_into_base_without_grad():
    """Writing a tensor that requires grad into a view of a plain tensor makes the base (and its other views)
    require grad through CopySlices."""
    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        base = lib.zeros(3, 4, dtype=lib.float64)
        other = base[2]
        base[1].copy_(a[0] * 2)
        (base * base).sum().backward()
        return [base.requires_grad, base.is_leaf, other.requires_grad, graph_with_nr(base), graph_with_nr(other),
                a.grad.numpy().tolist(), base.detach().numpy().tolist()]
    t, p = both(run)
    assert t == p


def test_double_backward_through_copyslices():
    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        b = a * 1
        b[1].mul_(b[0].detach() + a[2])
        (g,) = lib.autograd.grad((b ** 3).sum(), a, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), a)
        return g, gg
    (tg, tgg), (pg, pgg) = both(run)
    assert_same(tg, pg)
    assert_same(tgg, pgg)


def test_no_grad_writes_through_views():
    """Optimizer-style updates: in-place on a view of a leaf under no_grad changes the leaf (version bumps)."""
    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        with lib.no_grad():
            a[0].mul_(2)
            a.t()[1].add_(1)
            a.data.add_(0.5)  # .data shares storage but not the version counter
        return a.detach().numpy().tolist(), a._version, a.requires_grad, a.is_leaf
    assert run(tl) == run(torch)


def test_detach_and_data_alias():
    def run(lib):
        b = lib.tensor(A, requires_grad=True) * 1
        d = b.detach()
        out = [d._is_view(), d._base is None, d[0]._base is d, d._version]
        d.add_(1)
        out += [b._version, b.detach().numpy().tolist()]
        b.mul_(2)
        out += [d.numpy().tolist(), d._version]
        dd = b.data
        dd.sub_(1)
        out += [b.detach().numpy().tolist(), b._version, dd._version]
        s = b.t().detach()  # a detached view keeps the view's strides
        out += [s.stride(), s.is_contiguous(), s._base is None]
        return out
    assert run(tl) == run(torch)


def test_reshape_copies_when_strides_forbid_a_view():
    def run(lib):
        x = lib.tensor(A, requires_grad=True) * 1
        r = x.t().reshape(-1)
        c = x.t().contiguous()
        return [r._base is None, graph_with_nr(r), c._base is None, graph_with_nr(c), x.contiguous() is x,
                c.is_contiguous(), r.stride()]
    assert run(tl) == run(torch)


# torch's errors, each leaving the tensors unchanged
ERRORS = {
    "view_of_leaf": lambda lib, a: a[0].mul_(2),
    "view_of_leaf_setitem": lambda lib, a: a.t()[0].__setitem__(1, 2.0),
    "split_output": lambda lib, a: (a * 1).split(2)[1].mul_(2),
    "chunk_output": lambda lib, a: (a * 1).chunk(2, 1)[0].add_(1),
    "unbind_output": lambda lib, a: (a * 1).unbind(1)[1].mul_(2),
    "split_sizes_output": lambda lib, a: (a * 1).split([1, 2])[1].mul_(2),
    "view_of_unbind_output": lambda lib, a: (a * 1).unbind(0)[1][1:].mul_(2),
    "unbind_of_plain_with_grad_input": lambda lib, a: lib.zeros(3, 4, dtype=lib.float64).unbind()[0].mul_(a[0]),
    "no_grad_view": lambda lib, a: _no_grad_view(lib, a * 1).mul_(2),
    "no_grad_view_of_leaf": lambda lib, a: _no_grad_view(lib, a).mul_(2),
    "no_grad_view_of_plain": lambda lib, a: _no_grad_view(lib, lib.zeros(3, 4, dtype=lib.float64)).mul_(a[0]),
    "expanded_write": lambda lib, a: lib.ones(3, 1).expand(3, 4).add_(1),
    "view_incompatible": lambda lib, a: a.t().view(-1),
    "view_incompatible_slice": lambda lib, a: a[:, :2].view(6),
    "view_of_stepped_slice_is_fine": lambda lib, a: a[:, ::2].view(6).add_(1),
}


def _no_grad_view(lib, x):
    with lib.no_grad():
        return x[0]


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_view_errors(name):
    def run(lib):
        a = lib.tensor(A, requires_grad=True)
        return err(lambda: ERRORS[name](lib, a)), a._version, a.detach().numpy().tolist()
    t, p = run(tl), run(torch)
    assert t[0] is not None and t == p


def test_no_grad_multi_output_views_are_writable_without_grad():
    def run(lib):
        c = lib.tensor(A)
        u = c.unbind(0)
        u[0].mul_(2)
        return c.numpy().tolist(), u[0].numpy().tolist(), c._version
    assert run(tl) == run(torch)


def test_version_error_names_copyslices():
    def run(lib):
        p = lib.tensor(A, requires_grad=True) * 1
        q = p.sin()
        p[0].mul_(2)
        return err(lambda: q.sum().backward())
    t, p = both(run)
    assert t is not None and t == p


def test_saved_view_modified_through_its_base():
    def run(lib):
        b = lib.tensor(A, requires_grad=True) * 1
        v = b[1]
        y = v.exp()  # saves its result
        z = v.sin()  # saves v
        b.add_(1)
        return err(lambda: y.sum().backward(retain_graph=True)), err(lambda: z.sum().backward())
    assert run(tl) == run(torch)


_LATE_COUNTER_WRITES = {
    "in place": lambda lib, p: p.add_(1),
    "a view made after the save": lambda lib, p: p[1:].mul_(2),
    "a detached alias made after the save": lambda lib, p: p.detach().zero_(),
    "out= under no_grad": lambda lib, p: lib.cos(p.detach(), out=p.detach()),
    "a view made after the save, not written": lambda lib, p: p[0],
}


@pytest.mark.parametrize("write", list(_LATE_COUNTER_WRITES))
def test_saved_input_without_a_version_counter_yet(write):
    """A tensor saved before anything made its version counter (no view, no in-place write yet): later writes
    through it, through views or aliases made after the save, and out=, are seen at backward as in torch."""
    def run(lib):
        x = lib.tensor(A, requires_grad=True)
        p = x * 1
        q = p.sin()  # saves p
        before = p._version
        _LATE_COUNTER_WRITES[write](lib, p)
        error = err(lambda: q.sum().backward())
        return before, p._version, error, None if error else x.grad.numpy().round(12).tolist()
    assert run(tl) == run(torch)


_UNCOUNTED_WRITES = {  # writes the version counter does not see, after an op saved p (or a view of it)
    ".data in place": lambda lib, p: p.data.mul_(3),
    ".data assigned": lambda lib, p: setattr(p, "data", p.data * 3),
    "a view's .data": lambda lib, p: p[1:].data.mul_(3),
    "detach() then .data": lambda lib, p: p.detach().data.add_(1),
}


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("write", list(_UNCOUNTED_WRITES))
def test_a_saved_input_reads_writes_its_counter_does_not_see(write, leaf):
    """torch's saved input shares the tensor's memory: a write through .data (which its version counter does not
    count) is what backward reads, in a chained run of formulas too. (A saved output keeps its value here: see the
    README.)"""
    def run(lib):
        x = lib.tensor(A, requires_grad=True)
        p = x if leaf else x * 1
        y = p
        for _ in range(20):  # (a run of single-input nodes, the first saving p: chained into one program)
            y = y.sin()
        _UNCOUNTED_WRITES[write](lib, p)
        (y * p).sum().backward()  # (and p saved by a node run on its own)
        return p._version, x.grad.numpy().round(12).tolist()
    assert run(tl) == run(torch)


# hooks across in-place ops on views (point 2 re-checked for CopySlices)
def test_hooks_and_retain_grad_across_inplace_on_view():
    def run(lib):
        calls = []
        a = lib.tensor(A, requires_grad=True)
        b = a * 1
        v = b[0]
        v.register_hook(lambda g: calls.append(("v_before", g.tolist())))
        b.register_hook(lambda g: calls.append(("b_before", g.shape)))
        v.retain_grad()
        b.retain_grad()
        v.mul_(2)
        v.register_hook(lambda g: calls.append(("v_after", g.tolist())))
        b.register_hook(lambda g: calls.append(("b_after", g.shape)))
        (b.sum() + v.sum() * 3).backward()
        return calls, v.grad.tolist(), b.grad.tolist(), a.grad.tolist()
    assert run(tl) == run(torch)


def test_views_release_memory():
    """Views and their storage go away with their tensors; no arrays pile up over many steps."""
    a = tl.tensor(A, requires_grad=True)

    def step():
        b = a * 1
        v = b.t()[1]
        v.mul_(2)
        b[0].add_(v[2:])  # (v[:1] lies inside b[0]: torch refuses the partial overlap)
        (b * b).sum().backward()
        a.grad = None

    step()
    gc.collect()
    start = len(jax.live_arrays())
    for _ in range(200):
        step()
    gc.collect()
    assert len(jax.live_arrays()) <= start
    b = a * 1
    v = b[0]
    ref = weakref.ref(b)
    node = weakref.ref(b.grad_fn)
    del b
    assert ref() is not None  # the view keeps its base alive, as torch's _base
    del v
    gc.collect()
    assert ref() is None and node() is None


def test_diagonal_op_against_torch():
    def run(lib):
        x = lib.tensor(np.arange(24, dtype=np.float64).reshape(2, 3, 4) / 5, requires_grad=True)
        outs = [x.diagonal(), x.diagonal(1, 1, 2), lib.diagonal(x, -1, -1, 0), x.diagonal(5)]
        sum(((o * o).sum() for o in outs), lib.zeros((), dtype=lib.float64)).backward()
        return outs, x.grad, outs[1].grad_fn, err(lambda: x.diagonal(0, 1, -2)), outs[2].grad_fn
    t, p = both(run)
    assert_same(list(t[0]) + [t[1]], list(p[0]) + [p[1]])
    compare_graph(t[2], p[2])
    compare_graph(t[4], p[4])  # a negative offset and dims: saved as torch's unsigned int64
    assert t[3] == p[3]


# writes into an expanded tensor (elements sharing memory): torch lets fill_, zero_, masked_fill_ and index_put_
# (the last two with a deprecation warning) through when the target does not require grad, and any write into a
# selected part that does not overlap itself; the write reaches every element sharing the memory
_MASK = [[True, False, True], [False, False, False]]
EXPANDED_WRITES = {
    "fill_": lambda lib, e, v: e.fill_(2.0),
    "fill_tensor": lambda lib, e, v: e.fill_(lib.tensor(2.0)),
    "zero_": lambda lib, e, v: e.zero_(),
    "masked_fill_": lambda lib, e, v: e.masked_fill_(lib.tensor(_MASK), 5.0),
    "masked_fill_value_grad": lambda lib, e, v: e.masked_fill_(lib.tensor(_MASK), v),
    "setitem_row": lambda lib, e, v: e.__setitem__(0, 2.0),
    "setitem_row_tensor": lambda lib, e, v: e.__setitem__(0, v * lib.tensor([1.0, 2.0, 3.0])),
    "setitem_element": lambda lib, e, v: e.__setitem__((1, 2), v),
    "setitem_column": lambda lib, e, v: e.__setitem__((slice(None), 1), 2.0),
    "setitem_all": lambda lib, e, v: e.__setitem__(Ellipsis, 2.0),
    "setitem_index": lambda lib, e, v: e.__setitem__(lib.tensor([0]), v * lib.tensor([1.0, 2.0, 3.0])),
    "setitem_mask": lambda lib, e, v: e.__setitem__(lib.tensor(_MASK), 3.0),
    "add_": lambda lib, e, v: e.add_(1.0),
    "copy_": lambda lib, e, v: e.copy_(lib.ones(2, 3)),
}


@pytest.mark.parametrize("grad", [False, True], ids=["plain", "requires_grad"])
@pytest.mark.parametrize("name", sorted(EXPANDED_WRITES))
def test_writes_into_expanded_tensors(name, grad):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=grad)
        v = lib.tensor(4.0, requires_grad=True)
        b = x * 1
        e = b.expand(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            error = err(lambda: EXPANDED_WRITES[name](lib, e, v))
        seen = [str(w.message).split(" (Triggered")[0] for w in caught]
        out = [error, seen, b.tolist(), e.tolist(), e._version, e.grad_fn and e.grad_fn.name(),
               b.grad_fn and b.grad_fn.name()]
        if error is None and e.requires_grad:
            inputs = [t for t in (x, v) if t.requires_grad]
            try:  # backward through the write to an expanded base raises torch's error
                grads = lib.autograd.grad((e * lib.tensor([[1.0], [2.0]])).sum(), inputs, allow_unused=True)
                out.append([g is not None and g.tolist() for g in grads])
            except RuntimeError as ex:
                out.append(str(ex))
        return out
    assert run(tl) == run(torch)

"""Memory layout of results against torch 2.13 (GEN_REPORT class H): pointwise ops give their result the layout
of their inputs (TensorIterator), clone/to/*_like preserve it, a dense leaf's .grad takes its strides. Compared on
the same NumPy inputs: values, dtype, strides, is_contiguous, view-ness, _version, node names, leaf gradients
(values and strides), and what a later view/reshape of the result does (a view, a copy or torch's error)."""
import io

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, graph

RNG = np.random.default_rng(0)


def arr(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# layouts an input can have: how to make it from a row-major tensor of the shape given
T = ("t", lambda x: x.t())                                     # (2, 3) -> (3, 2) strides (1, 3)
P3 = ("perm3", lambda x: x.permute(2, 0, 1))                   # (2, 3, 4) -> (4, 2, 3)
CL = ("channels_last", lambda x: x.permute(0, 3, 1, 2))        # (2, 4, 5, 3) -> (2, 3, 4, 5)
SL = ("slice", lambda x: x[:, ::2])                            # (4, 6) -> (4, 3) not dense
SLT = ("slice_t", lambda x: x[:, ::2].t())                     # (4, 6) -> (3, 4)
EXP = ("expand", lambda x: x.expand(3, 4))                     # (3, 1) -> (3, 4) stride 0
ONE = ("size1", lambda x: x.permute(2, 0, 1))                  # (1, 3, 2) -> (2, 1, 3)
ROW = ("row", lambda x: x)


def _observe(lib, fn, inputs, backward=True):
    leaves = [lib.tensor(a, requires_grad=rg) for a, _, rg in inputs]
    args = [make(x) for x, (_, (_, make), _) in zip(leaves, inputs)]
    try:
        out = fn(lib, *args)
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return ("error", type(e).__name__, str(e).split("\n")[0])
    outs = out if isinstance(out, tuple) else (out,)
    seen = [dict(shape=tuple(o.shape), stride=o.stride(), contiguous=o.is_contiguous(), view=o._is_view(),
                 version=o._version, graph=graph(o), dtype=str(o.dtype).split(".")[-1]) for o in outs]
    values = [o.detach().clone() for o in outs]
    grads = []
    if backward and outs[0].requires_grad:
        total = sum((o * lib.tensor(np.linspace(-1, 1, o.numel()).reshape(o.shape))).sum()
                    for o in outs if o.requires_grad)
        total.backward()
        grads = [(x.grad, x.grad.stride() if x.grad is not None and x.numel() else None)
                 for x in leaves if x.requires_grad]  # (an empty leaf's grad strides: (0, 0) in torch)
    return seen, values, grads


def check(fn, inputs, backward=True):
    """``inputs``: (array, layout, requires_grad) each; fn(lib, *tensors in those layouts)."""
    a, b = _observe(tl, fn, inputs, backward), _observe(torch, fn, inputs, backward)
    if b[0] == "error" or a[0] == "error":
        assert a == b
        return
    assert a[0] == b[0]
    assert_same(a[1], b[1])
    assert [s for _, s in a[2]] == [s for _, s in b[2]]
    assert_same([g for g, _ in a[2]], [g for g, _ in b[2]])


def one(shape, layout, rg=True, dtype="float64"):
    return (arr(*shape, dtype=dtype) if dtype != "int64" else RNG.integers(-3, 4, shape), layout, rg)


UNARY = {
    "sin": lambda lib, x: x.sin(), "exp": lambda lib, x: lib.exp(x), "neg": lambda lib, x: -x,
    "abs": lambda lib, x: x.abs(), "sigmoid": lambda lib, x: x.sigmoid(), "relu": lambda lib, x: x.relu(),
    "gelu": lambda lib, x: lib.nn.functional.gelu(x), "pow2": lambda lib, x: x ** 2, "mul2": lambda lib, x: x * 2,
    "rsub1": lambda lib, x: 1 - x, "clamp": lambda lib, x: x.clamp(-0.5, 0.5), "gt0": lambda lib, x: x > 0,
    "isnan": lambda lib, x: lib.isnan(x), "float": lambda lib, x: x.float(), "to_int": lambda lib, x: x.to(lib.int64),
    "clone": lambda lib, x: x.clone(), "contiguous": lambda lib, x: x.contiguous(),
    "round": lambda lib, x: x.round(), "sgn": lambda lib, x: x.sgn(),
}
UNARY_INPUTS = {
    "t": ((2, 3), T), "perm3": ((2, 3, 4), P3), "channels_last": ((2, 4, 5, 3), CL), "slice": ((4, 6), SL),
    "slice_t": ((4, 6), SLT), "expand": ((3, 1), EXP), "size1": ((1, 3, 2), ONE),
}


@pytest.mark.parametrize("layout", list(UNARY_INPUTS))
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, layout):
    shape, lay = UNARY_INPUTS[layout]
    check(UNARY[op], [one(shape, lay)])


BINARY = {
    "add": lambda lib, a, b: a + b, "mul": lambda lib, a, b: lib.mul(a, b), "sub_alpha": lambda lib, a, b: lib.sub(
        a, b, alpha=2), "div": lambda lib, a, b: a / b, "atan2": lambda lib, a, b: lib.atan2(a, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b), "le": lambda lib, a, b: a <= b,
    "rsub": lambda lib, a, b: lib.rsub(a, b), "pow": lambda lib, a, b: a.abs() ** b,
    "where": lambda lib, a, b: lib.where(a > 0, a, b), "logical_and": lambda lib, a, b: lib.logical_and(a, b),
}
BINARY_INPUTS = {  # (shape, layout) of each operand; the permuted one first, second or both
    "t_row": [((2, 3), T), ((3, 2), ROW)], "row_t": [((3, 2), ROW), ((2, 3), T)],
    "t_bcast_row": [((2, 3), T), ((2,), ROW)], "t_bcast_col": [((2, 3), T), ((3, 1), ROW)],
    "bcast_t": [((1, 2), ROW), ((2, 3), T)], "two_perms": [((3, 4, 2), P3), ((2, 4, 3), ("p021", lambda x: x.permute(
        0, 2, 1)))], "cl_bias": [((2, 4, 5, 3), CL), ((3, 1, 1), ROW)], "expand_t": [((3, 1), EXP), ((4, 3), T)],
    "scalar_t": [((), ROW), ((2, 3), T)], "t_t": [((2, 3), T), ((2, 3), T)],
    "slice_slice_t": [((4, 6), SL), ((4, 6), SL)],
}


@pytest.mark.parametrize("layout", list(BINARY_INPUTS))
@pytest.mark.parametrize("op", list(BINARY))
def test_binary(op, layout):
    check(BINARY[op], [one(shape, lay) for shape, lay in BINARY_INPUTS[layout]])


@pytest.mark.parametrize("fn", [
    lambda lib, a, b, c: lib.lerp(a, b, c), lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5),
    lambda lib, a, b, c: a.clamp(b, c), lambda lib, a, b, c: lib.where(c > 0, b, a),
], ids=["lerp", "addcmul", "clamp_tensors", "where_perm_cond"])
@pytest.mark.parametrize("first", [0, 1, 2])
def test_ternary(fn, first):
    """The operand in transposed layout is the first, second or third (torch weighs them in order)."""
    inputs = [one((3, 2), ROW) for _ in range(3)]
    inputs[first] = one((2, 3), T)
    check(fn, inputs)


@pytest.mark.parametrize("op", ["sin", "mul2", "gt0", "float", "clone", "contiguous"])
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (2, 0, 3)])
def test_empty(op, shape):
    """Empty tensors count as contiguous (made by zeros: torch.tensor of an empty array has strides of its own)."""
    seen = [(lambda y: (y.shape, y.stride(), y.is_contiguous()))(UNARY[op](lib, lib.zeros(shape).transpose(0, -1)))
            for lib in (tl, torch)]
    assert seen[0] == seen[1]


def test_integer_input_of_a_floating_op():
    check(lambda lib, x: x.sin(), [one((2, 3), T, rg=False, dtype="int64")], backward=False)
    check(lambda lib, x: x.double() * 1, [one((2, 3), T, rg=False, dtype="int64")], backward=False)


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.zeros_like(x), lambda lib, x: lib.ones_like(x), lambda lib, x: lib.full_like(x, 2.5),
    lambda lib, x: lib.empty_like(x).zero_(), lambda lib, x: lib.zeros_like(x, dtype=lib.int64),
    lambda lib, x: lib.rand_like(x).mul(0), lambda lib, x: lib.randn_like(x).mul(0),
], ids=["zeros", "ones", "full", "empty", "zeros_int", "rand", "randn"])
@pytest.mark.parametrize("layout", ["t", "slice_t", "channels_last", "expand"])
def test_like_factories_preserve_layout(fn, layout):
    shape, lay = UNARY_INPUTS[layout]
    check(fn, [one(shape, lay, rg=False)], backward=False)


# ----- what a user does with a permuted result next -------------------------------------------------------------
AFTER = {
    "view": lambda lib, y: y.view(-1), "reshape": lambda lib, y: y.reshape(-1), "flatten": lambda lib, y: y.flatten(),
    "ravel": lambda lib, y: y.ravel(), "t_view": lambda lib, y: y.t().view(-1), "t_reshape": lambda lib, y: y.t().reshape(
        6), "select": lambda lib, y: y[1], "column": lambda lib, y: y[:, 1], "contiguous": lambda lib, y: y.contiguous(),
    "t_contiguous": lambda lib, y: y.t().contiguous(), "sum0": lambda lib, y: y.sum(0), "sum1_keep": lambda lib, y: y.sum(
        1, keepdim=True), "softmax": lambda lib, y: y.softmax(0), "cumsum": lambda lib, y: y.cumsum(1),
    "unsqueeze": lambda lib, y: y.unsqueeze(1), "mm": lambda lib, y: y @ y.t(),
}


@pytest.mark.parametrize("after", list(AFTER))
def test_after_a_permuted_result(after):
    check(lambda lib, x: AFTER[after](lib, x.sin()), [one((2, 3), T)])


@pytest.mark.parametrize("after", ["view", "reshape", "t_view", "sum0", "mm"])
def test_after_a_channels_last_result(after):
    fn = {"view": lambda y: y.view(2, -1), "reshape": lambda y: y.reshape(2, -1), "t_view": lambda y: y.permute(
        0, 2, 3, 1).view(2, -1), "sum0": lambda y: y.sum(0), "mm": lambda y: y.flatten(1) @ y.flatten(1).t()}[after]
    check(lambda lib, x: fn(x * 2 + 1), [one((2, 4, 5, 3), CL)])


def test_writes_through_views_of_a_permuted_result():
    def fn(lib, x):
        y = x.sin()
        v = y.t()
        v.mul_(2)
        y[0].add_(1)
        return y, v
    check(fn, [one((2, 3), T)])


def test_inplace_keeps_the_target_layout():
    def fn(lib, x, c):
        y = x * 1  # permuted
        y.add_(c)  # a row-major operand: y stays permuted
        z = c * 1  # row-major
        z.mul_(x)  # a permuted operand: z stays row-major
        return y, z
    check(fn, [one((2, 3), T), one((3, 2), ROW)])


@pytest.mark.filterwarnings("ignore:An output with one or more elements was resized")
def test_out_keeps_the_out_layout():
    seen, a = [], arr(2, 3)
    for lib in (tl, torch):
        x = lib.tensor(a).t()
        row, perm = lib.zeros(3, 2), lib.zeros(2, 3).t()
        lib.sin(x, out=row)
        lib.sin(x.contiguous(), out=perm)
        resized = [lib.empty(0), lib.empty(6)]  # torch resizes them, laid out as the result
        lib.sin(x, out=resized[0])
        lib.add(x, 1, out=resized[1])
        seen.append((row.stride(), perm.stride(), row._version, perm._version, row.tolist() == perm.tolist(),
                     [(tuple(r.shape), r.stride(), r._version) for r in resized]))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("shape,make", [
    ((3, 2), lambda x: x.t()), ((2, 4, 5, 3), lambda x: x.permute(0, 3, 1, 2)),
    ((4, 6), lambda x: x[:, ::2]),  # not dense: a row-major .grad
], ids=["t", "channels_last", "slice"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_leaf_grad_layout(shape, make, create_graph):
    """torch's AccumulateGrad: a dense leaf's first .grad has the leaf's strides; a second one adds into it."""
    seen, a = [], arr(*shape)
    for lib in (tl, torch):
        w = make(lib.tensor(a)).requires_grad_()
        (w.sin() * w.detach()).sum().backward(create_graph=create_graph)
        first = (w.grad.stride(), w.grad.detach().clone())
        (w * 3).sum().backward()
        seen.append((w.stride(), first[0], w.grad.stride(), [first[1], w.grad.detach().clone()]))
    assert seen[0][:3] == seen[1][:3]
    assert_same(seen[0][3], seen[1][3])


def test_layout_through_a_graph():
    """A chain of pointwise ops on a transposed leaf: each result's strides, the graph and the leaf gradient."""
    check(lambda lib, x, y: ((x.sin() * y + 1).exp() / (x.t().t() + 2)).tanh(), [one((2, 3), T), one((3, 2), ROW)])
    check(lambda lib, x: lib.nn.functional.leaky_relu(x, 0.1) * lib.nn.functional.softplus(x), [one((2, 4, 5, 3), CL)])


def test_torch_load_of_a_permuted_result():
    """torch.save writes the storage in memory order with torch's strides: torch reads the same tensor back."""
    y = (tl.tensor(arr(2, 3)).t() * 2).detach()
    buf = io.BytesIO()
    tl.save(y, buf)
    buf.seek(0)
    z = torch.load(buf)
    assert z.stride() == y.stride() == (1, 3)
    np.testing.assert_array_equal(z.numpy(), y.numpy())


def test_data_assignment_takes_the_new_layout():
    seen, a = [], arr(2, 3)
    for lib in (tl, torch):
        y = lib.tensor(a).t() * 1
        y.data = lib.zeros(3, 2)
        seen.append((y.stride(), y.is_contiguous()))
    assert seen[0] == seen[1]


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
@pytest.mark.parametrize("source", [
    lambda a: a.T, lambda a: a[:, ::2], lambda a: a.reshape(2, 3, 1).transpose(2, 0, 1), lambda a: a[:1].T,
    lambda a: a.reshape(1, 2, 3, 1).transpose(0, 3, 1, 2),
], ids=["T", "slice", "perm3_size1", "size1_T", "channels_last"])
@pytest.mark.parametrize("make", [
    lambda lib, s: lib.tensor(s), lambda lib, s: lib.tensor(s, dtype=lib.float32), lambda lib, s: lib.as_tensor(
        s) if s.flags.c_contiguous or s.flags.f_contiguous or s.ndim < 2 else lib.tensor(s),
    lambda lib, s: lib.tensor(lib.tensor(s)), lambda lib, s: lib.tensor(s) + 1,
], ids=["tensor", "tensor_f32", "as_tensor", "tensor_of_tensor", "then_add"])
def test_creation_keeps_a_dense_source_layout(source, make):
    """torch.tensor / as_tensor of a dense NumPy array (or tensor) keep its layout; a non-dense one is row-major."""
    s = source(np.arange(6.0).reshape(2, 3))
    seen = [(lambda t: (t.stride(), t.is_contiguous(), t.tolist()))(make(lib, s)) for lib in (tl, torch)]
    assert seen[0] == seen[1]


def test_memory_formats_as_torch():
    """torch.channels_last and friends: to/contiguous/clone lay a copy out in the format (ToCopyBackward0 /
    CloneBackward0), is_contiguous(memory_format=) reads it, Module.to converts the 4-d parameters, and the
    results' values and gradients are unchanged."""
    import torch
    import torchlike as tl
    data = np.arange(120.0, dtype=np.float32).reshape(2, 3, 4, 5) / 50
    seen = []
    for m in (tl, torch):
        x = m.tensor(data, requires_grad=True)
        r = []
        for f in (lambda: x.to(memory_format=m.channels_last), lambda: x.contiguous(memory_format=m.channels_last),
                  lambda: x.clone(memory_format=m.channels_last), lambda: x.to(m.float64, memory_format=m.channels_last),
                  lambda: x.to(memory_format=m.contiguous_format), lambda: x.to(memory_format=m.preserve_format)):
            y = f()
            r.append((y.stride(), y.grad_fn and y.grad_fn.name(), y is x, y.is_contiguous(memory_format=m.channels_last),
                      y.is_contiguous()))
        y = x.contiguous(memory_format=m.channels_last)
        r.append((y.contiguous(memory_format=m.channels_last) is y, y.contiguous().stride(), repr(m.channels_last),
                  m.ones(2, 3, 4, 5, 6).to(memory_format=m.channels_last_3d).stride()))
        with pytest.raises(RuntimeError, match="^required rank 4 tensor to use channels_last format$"):
            m.ones(3, 4, 5).contiguous(memory_format=m.channels_last)
        conv = m.nn.Conv2d(3, 4, 3)
        with m.no_grad():
            conv.weight.copy_(m.tensor(np.linspace(-1, 1, 108, dtype=np.float32).reshape(4, 3, 3, 3)))
            conv.bias.zero_()
        conv = conv.to(memory_format=m.channels_last)
        r.append((conv.weight.stride(), m.nn.Linear(3, 4).to(memory_format=m.channels_last).weight.stride()))
        out = m.nn.functional.relu(conv(y))
        out.square().sum().backward()
        seen.append((r, out.detach().numpy(), x.grad.numpy(), conv.weight.grad.numpy()))
    assert seen[0][0] == seen[1][0]
    for a, b in zip(seen[0][1:], seen[1][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


_FORMAT_INPUTS = {  # f(module, make): 4-d inputs laid out as channels-last models and views make them
    "contiguous": lambda m, mk: mk(2, 3, 4, 5),
    "channels_last": lambda m, mk: mk(2, 3, 4, 5).to(memory_format=m.channels_last),
    "permuted_nhwc": lambda m, mk: mk(2, 4, 5, 3).permute(0, 3, 1, 2),
    "reversed": lambda m, mk: mk(5, 4, 3, 2).permute(3, 2, 1, 0),
    "sliced": lambda m, mk: mk(2, 3, 4, 10)[..., ::2],
    "channels_last_sliced": lambda m, mk: mk(2, 3, 4, 10).to(memory_format=m.channels_last)[..., ::2],
    "one_channel": lambda m, mk: mk(2, 1, 4, 5).to(memory_format=m.channels_last),
    "one_pixel": lambda m, mk: mk(2, 3, 1, 1).to(memory_format=m.channels_last),
    "channels_narrowed": lambda m, mk: mk(2, 6, 4, 5).to(memory_format=m.channels_last)[:, :3],
    "expanded": lambda m, mk: mk(1, 3, 1, 5).expand(2, 3, 4, 5),
}
_FORMAT_OPS = {  # f(module, x, make): ops whose result torch allocates in the input's suggested memory format
    "conv2d": lambda m, x, mk: m.nn.functional.conv2d(x, mk(4, x.shape[1], 3, 3)),
    "conv2d_cl_weight": lambda m, x, mk: m.nn.functional.conv2d(
        x, mk(4, x.shape[1], 3, 3).to(memory_format=m.channels_last)),
    "conv_transpose2d": lambda m, x, mk: m.nn.functional.conv_transpose2d(x, mk(x.shape[1], 2, 3, 3)),
    "max_pool2d": lambda m, x, mk: m.nn.functional.max_pool2d(x, 2, return_indices=True),
    "avg_pool2d": lambda m, x, mk: m.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda m, x, mk: m.nn.functional.adaptive_avg_pool2d(x, 2),
    "adaptive_max_pool2d": lambda m, x, mk: m.nn.functional.adaptive_max_pool2d(x, 2, True),
    "batch_norm": lambda m, x, mk: m.nn.functional.batch_norm(x, None, None, training=True),
    "group_norm": lambda m, x, mk: m.nn.functional.group_norm(x, 1),
    "interpolate": lambda m, x, mk: m.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
    "pad": lambda m, x, mk: m.nn.functional.pad(x, (1, 1, 1, 1)),
    "pad_reflect": lambda m, x, mk: m.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"),
    "cat": lambda m, x, mk: m.cat([x, x], 1),
    "cat_with_contiguous": lambda m, x, mk: m.cat([x, mk(*x.shape)], 0),
    "roll": lambda m, x, mk: x.roll(1, 3),
    "roll_flat": lambda m, x, mk: x.roll(3),
    "sort": lambda m, x, mk: x.sort(1),
}


@pytest.mark.parametrize("op", list(_FORMAT_OPS))
def test_memory_format_of_results_as_torch(op):
    """Convolutions, poolings, normalisations, upsampling, padding, cat, roll and sort lay their results out as
    torch's CPU kernels do (channels-last in, channels-last out): strides equal torch's for every input layout,
    values too."""
    import torch
    import torchlike as tl
    for name, make_input in _FORMAT_INPUTS.items():
        if (name, op) == ("one_pixel", "roll"):  # (torch clones a roll along a size-1 dim: not worth a rule)
            continue
        got = []
        for m in (tl, torch):
            rng = np.random.default_rng(3)

            def mk(*shape, m=m, rng=rng):
                return m.tensor(rng.standard_normal(shape).astype(np.float32))
            try:
                out = _FORMAT_OPS[op](m, make_input(m, mk), mk)
            except RuntimeError as e:  # (a 1x1 image is too small for some: both raise)
                got.append([(str(e).splitlines()[0], None)])
                continue
            outs = out if isinstance(out, tuple) else (out,)
            got.append([(tuple(o.stride()), o.detach().numpy()) for o in outs])
        assert [s for s, _ in got[0]] == [s for s, _ in got[1]], (name, op)
        for (_, a), (_, b) in zip(*got):
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_channels_last_3d_results_as_torch():
    import torch
    import torchlike as tl
    ops = [lambda m, x, w: m.nn.functional.conv3d(x, w), lambda m, x, w: m.nn.functional.max_pool3d(x, 2),
           lambda m, x, w: m.nn.functional.avg_pool3d(x, 2), lambda m, x, w: m.nn.functional.adaptive_avg_pool3d(x, 2),
           lambda m, x, w: m.nn.functional.batch_norm(x, None, None, training=True),
           lambda m, x, w: m.nn.functional.interpolate(x, scale_factor=2, mode="trilinear"),
           lambda m, x, w: m.nn.functional.group_norm(x, 3)]
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 3, 4, 4, 4)).astype(np.float32), rng.standard_normal((4, 3, 3, 3, 3)).astype(np.float32)
    for f in ops:
        a, b = (f(m, m.tensor(x).to(memory_format=m.channels_last_3d), m.tensor(w)) for m in (tl, torch))
        assert a.stride() == b.stride()
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-5)

"""torch's top-level names torchlike adds as thin wrappers (torchlike/_top_level.py), against torch 2.13 on the same
NumPy inputs: values, dtypes, shapes, first-order gradients, the output's node name where torch's comes from the
same op, and for each name a bad input raising torch's exception type and leading message text."""
import inspect
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, assert_same_error, compare_graph, pair

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4)).astype(np.float32)
X2 = RNG.standard_normal((4, 3)).astype(np.float32)
V = RNG.standard_normal(4).astype(np.float32)
V2 = RNG.standard_normal(4).astype(np.float32)
W = RNG.standard_normal(3).astype(np.float32)


def check(fn, *arrays, node=True, rtol=1e-5, atol=1e-6):
    """``fn(lib, *tensors)`` on both libraries: outputs, their node names (``node``) and the gradients of the floating
    inputs for a fixed random cotangent of each floating output."""
    pairs = [pair(a, requires_grad=np.asarray(a).dtype.kind in "fc") for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = [fn(tl, *[p[0] for p in pairs]), fn(torch, *[p[1] for p in pairs])]
    ours, theirs = ([o] if isinstance(o, (tl.Tensor, torch.Tensor)) else list(o) for o in outs)
    assert_same(ours, theirs, rtol, atol)
    diff = [(a, b) for a, b in zip(ours, theirs) if b.requires_grad]
    assert [a.requires_grad for a in ours] == [b.requires_grad for b in theirs]
    if node:
        assert [a.grad_fn and a.grad_fn.name() for a, _ in diff] == [b.grad_fn and b.grad_fn.name() for _, b in diff]
    leaves = [(a, b) for a, b in pairs if b.requires_grad]
    if not diff or not leaves:
        return
    rng = np.random.default_rng(1)  # (the same cotangents whatever ran before in this process: xdist's order varies)
    cots = [rng.standard_normal(b.shape).astype(np.asarray(b.detach()).dtype) for _, b in diff]
    grads = [lib.autograd.grad([o[k] for o in diff], [leaf[k] for leaf in leaves], [lib.tensor(c) for c in cots],
                               allow_unused=True) for k, lib in ((0, tl), (1, torch))]
    theirs = [torch.zeros_like(b) if g is None else g for g, (_, b) in zip(grads[1], leaves)]
    ours = [tl.zeros_like(a) if g is None else g for g, (a, _) in zip(grads[0], leaves)]
    assert_same(ours, theirs, rtol * 10, atol * 10)


def test_graphs_of_table_ops():
    """The new table ops (VdotBackward0, PdistBackward0) and layer_norm's node: torch's graph and saved values."""
    (x, y), (v, w) = pair(X, requires_grad=True), pair(V, requires_grad=True)
    for fn in (lambda m, a, b: m.pdist(a, 1.5), lambda m, a, b: m.vdot(b, b * 2), lambda m, a, b: m.layer_norm(a, [4])):
        compare_graph(fn(tl, x, v).grad_fn, fn(torch, y, w).grad_fn)


def errors(*cases):
    for case in cases:
        assert_same_error(case)


# ----- matmul precision, scalar_tensor, window functions -------------------------------------------------------------
def test_float32_matmul_precision():
    try:
        for lib in (tl, torch):
            assert lib.get_float32_matmul_precision() == "highest"
            assert lib.set_float32_matmul_precision("high") is None
            assert lib.get_float32_matmul_precision() == "high"
            assert lib.backends.cuda.matmul.allow_tf32
        for lib in (tl, torch):
            with pytest.warns(UserWarning) as record:
                lib.set_float32_matmul_precision("low")
            assert str(record[0].message).startswith("low is not one of 'highest', 'high', or 'medium'; the current"
                                                     "setFloat32MatmulPrecision call has no effect.")
            assert lib.get_float32_matmul_precision() == "high"
        errors(lambda m: m.set_float32_matmul_precision(1), lambda m: m.set_float32_matmul_precision(None),
               lambda m: m.get_float32_matmul_precision(1))
    finally:
        for lib in (tl, torch):
            lib.set_float32_matmul_precision("highest")
    assert not tl.backends.cuda.matmul.allow_tf32


def test_scalar_tensor():
    for s, kw in ((3, {}), (2.5, {"dtype": "float64"}), (True, {}), (7, {"dtype": "int8"}),
                  (1j, {"dtype": "complex64"}), (np.float64(1.5), {}), (np.bool_(True), {}),
                  (2, {"requires_grad": True})):
        ours = tl.scalar_tensor(s, **{k: getattr(tl, v) if k == "dtype" else v for k, v in kw.items()})
        theirs = torch.scalar_tensor(s, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kw.items()})
        assert_same(ours, theirs)
        assert ours.requires_grad == theirs.requires_grad
    assert_same(tl.scalar_tensor(tl.tensor(2.0)), torch.scalar_tensor(torch.tensor(2.0)))
    errors(lambda m: m.scalar_tensor("a"), lambda m: m.scalar_tensor(1j),
           lambda m: m.scalar_tensor(300, dtype=m.int8), lambda m: m.scalar_tensor(m.tensor(2.0, requires_grad=True)),
           lambda m: m.scalar_tensor(2, dtype=m.long, requires_grad=True))


WINDOWS = [("hann_window", (5,), {}), ("hann_window", (6, False), {"dtype": "float64"}), ("hann_window", (0,), {}),
           ("hann_window", (1,), {}), ("hamming_window", (6,), {}), ("hamming_window", (5, False, 0.5, 0.4), {}),
           ("hamming_window", (5, True, 0.6), {"dtype": "float64"}), ("blackman_window", (7,), {}),
           ("blackman_window", (7, False), {"dtype": "float64"}), ("bartlett_window", (7,), {}),
           ("bartlett_window", (6, False), {}), ("kaiser_window", (7,), {}),
           ("kaiser_window", (6, False, 5.0), {"dtype": "float64"}), ("kaiser_window", (3,), {"requires_grad": True})]


@pytest.mark.parametrize("name,args,kwargs", WINDOWS)
def test_window_functions(name, args, kwargs):
    ours = getattr(tl, name)(*args, **{k: getattr(tl, v) if k == "dtype" else v for k, v in kwargs.items()})
    theirs = getattr(torch, name)(*args, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()})
    assert_same(ours, theirs)
    assert ours.requires_grad == theirs.requires_grad


def test_window_function_errors():
    errors(lambda m: m.hann_window(-1), lambda m: m.hann_window(3.0), lambda m: m.hann_window(3, dtype=m.long),
           lambda m: m.hamming_window(5, alpha=0.5), lambda m: m.blackman_window(3, dtype=m.bool, pin_memory=True),
           lambda m: m.bartlett_window(-2), lambda m: m.kaiser_window(3, dtype=m.int32),
           lambda m: m.kaiser_window(3, True, "a"), lambda m: m.hann_window(3, dtype=m.complex64))


# ----- contractions ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dims,b", [(2, X), (1, X2), (0, W), (([0], [0]), X), ([[1, 0], [0, 1]], X2),
                                    (((0,), (1,)), X2)])
def test_tensordot(dims, b):
    check(lambda m, x, y: m.tensordot(x, y, dims), X, b)


def test_tensordot_forms():
    check(lambda m, a, b: m.tensordot(a, b, dims=m.tensor([[0], [0]])), X, X)
    check(lambda m, a, b: m.tensordot(a, b, m.tensor(1)), X, X2)
    check(lambda m, a, b: m.tensordot(a, b, ([0], [0])), X, X[:1])  # a contracted dim of size 1 is summed first
    check(lambda m, a, b: m.tensordot(a, b, out=m.zeros(())), X, X)  # (torch copies into out: CopyBackwards)
    check(lambda m, a, b: m.inner(a, b, out=m.zeros(3, 3)), X, X)
    out = tl.zeros(())
    assert tl.tensordot(tl.tensor(X), tl.tensor(X), out=out) is out
    assert_same(out, torch.tensordot(torch.tensor(X), torch.tensor(X)))
    errors(lambda m: m.tensordot(m.tensor(X), m.tensor(X), -1), lambda m: m.tensordot(m.tensor(X), m.tensor(X), 3),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), "a"),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), ([0], [0, 1])),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), ([0], [1])),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X).double(), 1),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), (1, 0)),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), ([0.5], [0])),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), ([5], [0])),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), ([0, 0], [0, 0])),
           lambda m: m.tensordot(m.tensor(X), m.tensor(X), out=m.zeros((), dtype=m.float64)),
           lambda m: m.inner(m.tensor(X), m.tensor(X), out="a"))


def test_inner_and_vdot():
    check(lambda m, a, b: m.inner(a, b), X, X)
    check(lambda m, a, b: m.inner(a, b), V, V2)
    check(lambda m, a, b: m.inner(a, b), np.float32(2.0), X, node=False)
    check(lambda m, a, b: m.vdot(a, b), V, V2)
    z1, z2 = V + 1j * V2, V2 - 0.5j * V
    check(lambda m, a, b: m.vdot(a, b), z1.astype(np.complex64), z2.astype(np.complex64))
    out = tl.zeros(())
    tl.vdot(tl.tensor(V), tl.tensor(V2), out=out)
    assert_same(out, torch.vdot(torch.tensor(V), torch.tensor(V2)))
    errors(lambda m: m.inner(m.tensor(X), m.tensor(W)), lambda m: m.inner(m.tensor(X), m.tensor(X).double()),
           lambda m: m.inner([1.0], m.tensor(V)),
           lambda m: m.vdot(m.tensor(X), m.tensor(V)), lambda m: m.vdot(m.tensor(V), m.tensor(W)),
           lambda m: m.vdot(m.tensor(V), m.tensor(V).double()), lambda m: m.vdot(m.tensor(V) > 0, m.tensor(V) > 0),
           lambda m: m.vdot([1.0], m.tensor(V)),
           lambda m: m.vdot(m.tensor(V), m.tensor(V), out=m.zeros((), dtype=m.float64)),
           lambda m: m.vdot(m.tensor(V, requires_grad=True), m.tensor(V), out=m.zeros(())))


# ----- statistics, indices, integration, vander ----------------------------------------------------------------------
AW = np.array([0.5, 2.0, 1.0, 3.0], np.float32)
FW = np.array([1, 2, 1, 3])


def test_cov_and_corrcoef():
    check(lambda m, x: m.cov(x), X)
    check(lambda m, x: m.cov(x), V)
    check(lambda m, x: m.cov(x, correction=0), X)
    check(lambda m, x, f: m.cov(x, fweights=f), X, FW)
    check(lambda m, x, a: m.cov(x, aweights=a), X, AW)
    check(lambda m, x, f, a: m.cov(x, correction=2, fweights=f, aweights=a), X, FW, AW)
    check(lambda m, x: m.cov(x), np.arange(6).reshape(2, 3))
    check(lambda m, x: m.corrcoef(x), X)
    check(lambda m, x: m.corrcoef(x), V, node=False)
    errors(lambda m: m.cov(m.ones(2, 2, 2)), lambda m: m.cov(m.tensor(X) > 0),
           lambda m: m.cov(m.tensor(X), fweights=m.ones(4)),
           lambda m: m.cov(m.tensor(X), fweights=m.ones(3, dtype=m.long)),
           lambda m: m.cov(m.tensor(X), fweights=-m.ones(4, dtype=m.long)),
           lambda m: m.cov(m.tensor(X), aweights=m.ones(4, dtype=m.long)),
           lambda m: m.cov(m.tensor(X), aweights=m.ones(4, 1)), lambda m: m.cov(m.tensor(X), aweights=-m.ones(4)),
           lambda m: m.cov(m.tensor(X), aweights=m.zeros(4)), lambda m: m.cov(m.tensor(X), correction=0.5),
           lambda m: m.corrcoef(m.ones(2, 2, 2)))


def test_unravel_index():
    for indices, shape in (([[1234], [5678]], (10, 10, 10, 10)), (4, (3, 2)), ([4, 1], 6),
                           ([5, 0], torch.Size([2, 3]))):
        ours, theirs = tl.unravel_index(tl.tensor(indices), shape), torch.unravel_index(torch.tensor(indices), shape)
        assert isinstance(ours, tuple)
        assert_same(ours, theirs)
    assert_same(tl.unravel_index(tl.tensor([4], dtype=tl.int32), (3, 2)),
                torch.unravel_index(torch.tensor([4], dtype=torch.int32), (3, 2)))
    errors(lambda m: m.unravel_index(m.tensor([1.0]), (3,)), lambda m: m.unravel_index(m.tensor([1]), (-3,)),
           lambda m: m.unravel_index(m.tensor([1]), "ab"), lambda m: m.unravel_index(m.tensor([1]), 3.0),
           lambda m: m.unravel_index(m.tensor([1]), (3.0,)))


def test_trapezoid():
    check(lambda m, y: m.trapezoid(y), X)
    check(lambda m, y: m.trapezoid(y, dx=0.5, dim=0), X)
    check(lambda m, y, x: m.trapezoid(y, x), X, V)
    check(lambda m, y, x: m.trapezoid(y, x, dim=0), X, X)
    check(lambda m, y: m.trapz(y, dx=2), X)
    check(lambda m, y, x: m.trapz(y, x), X, V)
    check(lambda m, y: m.trapezoid(y), np.arange(6).reshape(2, 3))
    check(lambda m, y: m.trapezoid(y), np.ones((2, 0), np.float32))
    check(lambda m, y: m.cumulative_trapezoid(y), X)
    check(lambda m, y: m.cumulative_trapezoid(y, dx=3, dim=0), X)
    check(lambda m, y, x: m.cumulative_trapezoid(y, x), X, V)
    errors(lambda m: m.trapezoid(m.tensor(X) > 0), lambda m: m.trapezoid(m.tensor(X), dx=1j),
           lambda m: m.trapezoid(m.tensor(X), m.arange(3.0)), lambda m: m.trapezoid(m.tensor(X), dim=5),
           lambda m: m.trapezoid(m.tensor(X), m.arange(4.0), dx=1), lambda m: m.trapz(m.tensor(X), dx=1j),
           lambda m: m.cumulative_trapezoid(m.tensor(X) > 0), lambda m: m.cumulative_trapezoid(m.tensor(X), dx=True),
           lambda m: m.cumulative_trapezoid(m.tensor(X), m.arange(3.0)))


@pytest.mark.parametrize("n,increasing", [(None, False), (3, True), (2, False), (1, False), (0, True)])
def test_vander(n, increasing):
    """Values against torch.vander. Its backward fails in torch 2.13 (it overwrites the input of its cumprod in place),
    so the gradient is checked against torch.linalg.vander's, flipped as torch.vander flips."""
    x, y = pair(V, requires_grad=True)
    ours = tl.vander(x, n, increasing)
    assert_same(ours, torch.vander(y.detach(), n, increasing))
    if n is not None and n < 2:
        assert not ours.requires_grad
        return
    theirs = torch.linalg.vander(y, N=n)
    theirs = theirs if increasing else theirs.flip(1)
    cot = RNG.standard_normal(tuple(theirs.shape)).astype(np.float32)
    assert_same(tl.autograd.grad(ours, x, tl.tensor(cot))[0], torch.autograd.grad(theirs, y, torch.tensor(cot))[0])


def test_vander_dtypes_and_errors():
    check(lambda m, x: m.vander(x), np.arange(3, dtype=np.int8))
    check(lambda m, x: m.vander(x), np.array([True, False]))
    errors(lambda m: m.vander(m.tensor(X)), lambda m: m.vander(m.tensor(V), -1), lambda m: m.vander(m.tensor(V), 1.5))


# ----- torch's functional aliases ----------------------------------------------------------------------------------
def test_normalizations():  # (float32 gradients with cancellation: atol 1e-4 for them)
    check(lambda m, x: m.layer_norm(x, [4]), X, atol=1e-5)
    check(lambda m, x, w, b: m.layer_norm(x, (4,), w, b, 1e-3, False), X, V, V2, atol=1e-5)
    check(lambda m, x: m.group_norm(x, 2), X.reshape(3, 4, 1), atol=1e-5)
    check(lambda m, x, w, b: m.group_norm(x, 2, w, b, 1e-3, False), X.reshape(3, 4, 1), V, V2, atol=1e-5)
    check(lambda m, x: m.rms_norm(x, [4]), X, atol=1e-5)
    check(lambda m, x, w: m.rms_norm(x, [4], w, 1e-4), X, V, atol=1e-5)
    errors(lambda m: m.layer_norm(m.tensor(X), [3]), lambda m: m.layer_norm(m.tensor(X), 4),
           lambda m: m.group_norm(m.tensor(X), 3), lambda m: m.group_norm(m.tensor(X), 2.0),
           lambda m: m.rms_norm(m.tensor(X), [3]), lambda m: m.rms_norm(m.tensor(X), 4))


def test_embedding():
    idx = np.array([[0, 2], [1, 1]])
    check(lambda m, w, i: m.embedding(w, i), X, idx)
    check(lambda m, w, i: m.embedding(w, i, 1, True), X, idx)
    check(lambda m, w, i: m.embedding(w, i, 7), X, idx)
    check(lambda m, w, i: m.embedding(w, i, padding_idx=-2), X, idx)
    assert tl.embedding(tl.tensor(X, requires_grad=True), tl.tensor(idx), 1).grad_fn._saved_padding_idx == 1
    errors(lambda m: m.embedding(m.tensor(X), m.tensor([0.0])), lambda m: m.embedding(m.tensor(X), m.tensor([5])),
           lambda m: m.embedding(m.tensor(V), m.tensor([0])), lambda m: m.embedding(m.tensor(X), m.tensor([0]), 1.5))


def test_activations_and_losses():
    check(lambda m, x: m.threshold(x, 0.1, 20.0), X)
    check(lambda m, x: m.threshold_(x * 1, 0.1, 0.0), X)
    check(lambda m, x: m.threshold_(x * 1, 0.1, 20.0), X)  # (value > threshold: torch saves the input)
    check(lambda m, x, w: m.prelu(x, w), X, np.array([0.2, 0.1, 0.3, 0.4], np.float32))
    check(lambda m, x1, x2, w, b: m.bilinear(x1, x2, w, b), X, X[::-1].copy(),
          RNG.standard_normal((2, 4, 4)).astype(np.float32), W[:2], node=False)
    check(lambda m, x: m.hardshrink(x, 0.3), X)
    check(lambda m, x: m.selu_(x * 1), X)
    check(lambda m, x: m.pdist(x), X)
    check(lambda m, x: m.pdist(x, 1), X)
    for m in (tl, torch):  # torch's pdist gradient (PdistBackwardBackward0) has no derivative of its own
        x = m.tensor(X.astype(np.float64), requires_grad=True)
        g, = m.autograd.grad(m.pdist(x).sum(), x, create_graph=True)
        assert type(g.grad_fn).__name__ == "PdistBackwardBackward0"
        with pytest.raises(NotImplementedError, match="^the derivative for '_pdist_backward' is not implemented"):
            m.autograd.grad(g.sum(), x)
    t = np.abs(X) / np.abs(X).sum()
    check(lambda m, x, t: m.kl_div(x, t), X, t)  # torch reduces nothing by default (see kl_div's docstring)
    for red in (0, 1, 2, 3):
        check(lambda m, x, t: m.kl_div(x, t, red), X, t)
    check(lambda m, x, t: m.kl_div(x, t, 2, log_target=True), X, X2.T.copy())
    out = tl.zeros(3, 4)
    tl.hardshrink(tl.tensor(X), out=out)
    assert_same(out, torch.hardshrink(torch.tensor(X)))
    tl.threshold(tl.tensor(X), 0.0, 1.0, out=out)
    assert_same(out, torch.threshold(torch.tensor(X), 0.0, 1.0))
    errors(lambda m: m.threshold(m.tensor(X), "a", 1), lambda m: m.threshold_(m.tensor(X), 0.1),
           lambda m: m.prelu(m.tensor(X), m.ones(3)), lambda m: m.bilinear(m.tensor(X), m.tensor(X), m.ones(2, 3, 4)),
           lambda m: m.hardshrink(m.arange(3)), lambda m: m.selu_([1.0]), lambda m: m.pdist(m.ones(2, 2, 2)),
           lambda m: m.pdist(m.tensor(X), -1), lambda m: m.pdist(m.arange(6).view(2, 3)),
           lambda m: m.kl_div(m.arange(3), m.arange(3)), lambda m: m.kl_div(m.tensor(X), m.tensor(X), "mean"),
           lambda m: m.kl_div(m.tensor(X), m.tensor(X), 1, True))


def test_dropout():
    check(lambda m, x: m.dropout(x, 0.0, True), X)
    check(lambda m, x: m.dropout(x, 1.0, True), X)
    check(lambda m, x: m.dropout_(x * 1, 1.0, True), X)
    x = tl.tensor(X)
    assert tl.dropout(x, 0.5, False) is x
    kept = tl.dropout(tl.ones(200), 0.5, True)
    assert set(np.unique(kept.numpy())) <= {0.0, 2.0}
    errors(lambda m: m.dropout(m.tensor(X), 2, True), lambda m: m.dropout(m.tensor(X), -0.25, False),
           lambda m: m.dropout(m.tensor(X), 0.5, 1), lambda m: m.dropout(m.arange(3), 0.5, True),
           lambda m: m.dropout_(m.tensor(X), 1.5, True), lambda m: m.dropout(m.tensor(X), 0.5))


# ----- predicates and in-place functions ---------------------------------------------------------------------------
def test_predicates():
    for lib in (tl, torch):
        x = lib.tensor(X)
        z = lib.complex(x, x)
        with lib.inference_mode():
            y = lib.ones(2)
        assert (lib.is_conj(x), lib.is_conj(z.conj()), lib.is_neg(x), lib.is_inference(x), lib.is_inference(y),
                lib.get_device(x)) == (False, True, False, False, True, -1)
    assert tl.typename(tl.tensor(X)) == torch.typename(torch.tensor(X)) == "torch.FloatTensor"
    assert tl.typename(tl.tensor(X).double()) == "torch.DoubleTensor"
    assert tl.typename(3) == torch.typename(3) == "int" and tl.typename(None) == "NoneType"
    errors(lambda m: m.is_conj([1]), lambda m: m.is_neg([1]), lambda m: m.is_inference(1.5),
           lambda m: m.get_device([1]), lambda m: m.typename(obj=1))


INPLACE = {"relu_": (), "sigmoid_": (), "tanh_": (), "exp_": (), "log_": (), "sqrt_": (), "rsqrt_": (), "abs_": (),
           "neg_": (), "sin_": (), "cos_": (), "clamp_": (-0.5, 0.5), "clamp_min_": (0.1,), "clamp_max_": (0.1,),
           "clip_": (None, 0.2), "fill_": (2.0,), "zero_": (), "round_": (), "floor_": (), "ceil_": (), "trunc_": (),
           "frac_": (), "square_": (), "erf_": (), "reciprocal_": (), "nan_to_num_": (0.5, 10.0), "detach_": ()}


def test_inplace_functions():
    a = np.abs(X) + 0.5
    for name, args in INPLACE.items():
        assert str(inspect.signature(getattr(tl, name))).startswith("(input")
        check(lambda m, x: getattr(m, name)(x * 1, *args), a, node=name not in ("fill_", "zero_"))
        pairs = pair(a)
        assert getattr(tl, name)(pairs[0], *args) is pairs[0]
        assert_same(pairs[0], getattr(torch, name)(pairs[1], *args))
    assert_same(tl.round_(tl.tensor(X), decimals=2), torch.round_(torch.tensor(X), decimals=2))
    errors(lambda m: m.relu_([1]), lambda m: m.sqrt_(m.arange(3)), lambda m: m.fill_(m.tensor(X), "a"),
           lambda m: m.clamp_(m.tensor(X)), lambda m: m.zero_(m.tensor(X), 1), lambda m: m.round_(m.tensor(X), 2),
           lambda m: m.exp_(m.tensor(X, requires_grad=True)))


def test_result_tuples_are_return_types_that_pickle():
    """torch.return_types: max/sort/topk/aminmax/frexp/linalg results pickle (and torch.save with
    weights_only=False) by their module name, print as torch's, and the module lists them."""
    import io
    import pickle
    cases = [lambda m: m.tensor([[1.0, 3.0]]).max(1), lambda m: m.tensor([3.0, 1.0]).sort(),
             lambda m: m.tensor([3.0, 1.0]).topk(1), lambda m: m.aminmax(m.tensor([1.0, 2.0])),
             lambda m: m.frexp(m.tensor([8.0])), lambda m: m.linalg.slogdet(m.eye(2)),
             lambda m: m.tensor([[1.0, 3.0]]).cummax(1)]
    for case in cases:
        ours, theirs = case(tl), case(torch)
        assert type(ours).__name__ == type(theirs).__name__ and type(ours).__module__ == "torchlike.return_types"
        assert getattr(tl.return_types, type(ours).__name__) is type(ours)
        back = pickle.loads(pickle.dumps(ours))
        assert type(back) is type(ours) and [t.tolist() for t in back] == [t.tolist() for t in theirs]
        buf = io.BytesIO()
        tl.save(ours, buf)
        buf.seek(0)
        assert [t.tolist() for t in tl.load(buf, weights_only=False)] == [t.tolist() for t in theirs]
        assert repr(ours).replace("torchlike", "torch") == repr(theirs)


def test_constants():
    for name in ("pi", "e", "inf", "nan", "newaxis"):
        a, b = getattr(tl, name), getattr(torch, name)
        assert a is b or a == b or (a != a and b != b), name
    assert tl.ones(2, 3)[:, tl.newaxis].shape == (2, 1, 3)

"""torchlike.nn.functional against torch 2.13: linear, activations, softmax family, nll_loss, cross_entropy,
mse_loss, l1_loss, binary_cross_entropy_with_logits, dropout, one_hot.

Each case runs ``fn(F, *tensors)`` with ``F`` = torchlike.nn.functional or torch.nn.functional on the same
NumPy inputs and compares values, dtypes, gradients and (where torchlike records torch's exact chain) the whole
graph with every ``_saved_*`` attribute. Shapes are shared: batch 4, features 5, classes 3.
"""
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import torchlike as tl
import torchlike.nn.functional as LF
from oracle import assert_same, compare_graph

RNG = np.random.default_rng(2)
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-12)}
N, D, C = 4, 5, 3
TARGET = np.array([0, 2, 1, 2])
TARGET_IGN = np.array([0, -100, 1, 2])
TARGET_3D = np.array([[0, 1, 2, 1], [1, 1, 0, 2]])          # for input (2, C, 4)
TARGET_4D = np.array([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])  # for input (2, C, 2, 2)


def arr(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def probs(*shape, dtype="float64"):
    e = np.exp(arr(*shape))
    return (e / e.sum(1, keepdims=True)).astype(dtype)


def _t(lib, a, rg):
    a = np.asarray(a)
    return lib.tensor(a, requires_grad=bool(rg) and a.dtype.kind == "f")


def run(fn, arrays, rg=None, full_graph=True):
    """fn(F, *tensors) on both libraries: values, graph (or output node name) and input gradients."""
    rg = rg if rg is not None else [True] * len(arrays)
    tl_in = [_t(tl, a, r) for a, r in zip(arrays, rg)]
    th_in = [_t(torch, a, r) for a, r in zip(arrays, rg)]
    out_tl, out_th = fn(LF, *tl_in), fn(TF, *th_in)
    rtol, atol = TOL.get(str(out_th.dtype).split(".")[-1], (0, 0))
    assert_same(out_tl, out_th, rtol, atol)
    if out_th.grad_fn is None:
        assert out_tl.grad_fn is None
        return out_tl, out_th
    if full_graph:
        compare_graph(out_tl.grad_fn, out_th.grad_fn)
    else:
        assert out_tl.grad_fn.name() == out_th.grad_fn.name()
    cot = RNG.standard_normal(out_th.shape).astype(out_th.numpy(force=True).dtype)
    out_tl.backward(tl.tensor(cot))
    out_th.backward(torch.tensor(cot))
    for a, b in zip(tl_in, th_in):
        assert_same(a.grad, b.grad, rtol, atol)
    return out_tl, out_th


# ----- linear ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("in_shape,bias_shape,full", [
    ((N, D), (C,), True),        # AddmmBackward0(bias, input, TBackward0(weight))
    ((N, D), None, True),        # MmBackward0(input, TBackward0(weight))
    ((2, N, D), (C,), True),     # ViewBackward0(AddmmBackward0(bias, ViewBackward0(input), TBackward0(weight)))
    ((D,), (C,), True),          # the same flattening for a 1-D input
    ((2, N, D), None, False),    # matmul: UnsafeViewBackward0 (one node for torch's chain)
    ((D,), None, False),         # matmul: SqueezeBackward4
    ((2, N, D), (N, C), False),  # AddBackward0(matmul, bias)
])
def test_linear(in_shape, bias_shape, full, dtype):
    arrays = [arr(*in_shape, dtype=dtype), arr(C, D, dtype=dtype)]
    if bias_shape is None:
        run(lambda F, x, w: F.linear(x, w), arrays, full_graph=full)
    else:
        run(lambda F, x, w, b: F.linear(x, w, b), arrays + [arr(*bias_shape, dtype=dtype)], full_graph=full)


def test_linear_partial_requires_grad():
    run(lambda F, x, w, b: F.linear(x, w, b), [arr(N, D), arr(C, D), arr(C)], rg=[False, True, True])
    run(lambda F, x, w, b: F.linear(x, w, b), [arr(2, N, D), arr(C, D), arr(C)], rg=[True, True, False])


# ----- activations and softmax ----------------------------------------------------------------------------
ACTIVATIONS = {
    "relu": lambda F, x: F.relu(x),
    "relu_inplace": lambda F, x: F.relu(x * 1, inplace=True),
    "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda F, x: F.silu(x),
    "silu_inplace": lambda F, x: F.silu(x * 1, inplace=True),
    "softplus": lambda F, x: F.softplus(x, beta=2.0, threshold=1.0),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.2),
    "leaky_relu_inplace": lambda F, x: F.leaky_relu(x * 1, 0.2, inplace=True),
    "sigmoid": lambda F, x: F.sigmoid(x),
    "tanh": lambda F, x: F.tanh(x),
    "softmax": lambda F, x: F.softmax(x, dim=1),
    "log_softmax": lambda F, x: F.log_softmax(x, 0),
    "softmax_dtype": lambda F, x: F.softmax(x, 1, dtype=torch.float64 if F is TF else tl.float64),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations(name, dtype):
    run(ACTIVATIONS[name], [arr(N, C, dtype=dtype)])


def test_inplace_activations_return_input():
    for F, lib in ((LF, tl), (TF, torch)):
        x = lib.tensor(arr(N, C))
        assert F.relu(x, inplace=True) is x and F.silu(x, inplace=True) is x
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            F.relu(lib.tensor(arr(N, C), requires_grad=True), inplace=True)


@pytest.mark.parametrize("F", [LF, TF], ids=["torchlike", "torch"])
def test_softmax_implicit_dim_warns(F):
    x = (tl if F is LF else torch).tensor(arr(2, C, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        y = F.softmax(x)
    np.testing.assert_allclose(np.asarray(y.sum(0)), np.ones((C, 4)), rtol=1e-6)  # dim 0 for 3-D input
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        F.log_softmax(x)


# ----- nll_loss ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_2d(reduction, weighted, dtype):
    w = RNG.uniform(0.5, 2.0, C).astype(dtype)
    fn = (lambda F, x, t, w: F.nll_loss(x, t, weight=w, reduction=reduction)) if weighted else \
        (lambda F, x, t: F.nll_loss(x, t, reduction=reduction))
    run(fn, [arr(N, C, dtype=dtype), TARGET] + ([w] if weighted else []), rg=[True, False, False])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_ignore_index(reduction):
    w = RNG.uniform(0.5, 2.0, C)
    run(lambda F, x, t, w: F.nll_loss(x, t, weight=w, reduction=reduction), [arr(N, C), TARGET_IGN, w],
        rg=[True, False, False])
    run(lambda F, x, t: F.nll_loss(x, t, ignore_index=2, reduction=reduction), [arr(N, C), TARGET])


def test_nll_loss_all_ignored_and_uint8_targets():
    run(lambda F, x, t: F.nll_loss(x, t), [arr(N, C), np.full(N, -100)])              # nan, zero gradient
    run(lambda F, x, t: F.nll_loss(x, t, reduction="sum"), [arr(N, C), np.full(N, -100)])
    run(lambda F, x, t: F.nll_loss(x, t), [arr(N, C), TARGET.astype(np.uint8)])


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_nll_loss_1d_input(reduction):
    run(lambda F, x, t: F.nll_loss(x, t, reduction=reduction), [arr(C), np.array(1)])
    # a (1,) target is accepted forward (torch's own backward then fails a size check)
    run(lambda F, x, t: F.nll_loss(x, t, reduction=reduction), [arr(C), np.array([2])], rg=[False, False])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "none"])
@pytest.mark.parametrize("shape,target", [((2, C, 4), TARGET_3D), ((2, C, 2, 2), TARGET_4D)], ids=["3d", "4d"])
def test_nll_loss_spatial(shape, target, reduction, dtype):
    """3-D inputs are viewed as 4-D: [ViewBackward0(]NllLoss2DBackward0(ViewBackward0(input))[)]."""
    run(lambda F, x, t, w: F.nll_loss(x, t, weight=w, reduction=reduction),
        [arr(*shape, dtype=dtype), target, RNG.uniform(0.5, 2, C).astype(dtype)], rg=[True, False, False])


def test_nll_loss_legacy_reduction_args():
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        run(lambda F, x, t: F.nll_loss(x, t, size_average=False), [arr(N, C), TARGET])


# ----- cross_entropy -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_indices(reduction, dtype):
    """NllLossBackward0(LogSoftmaxBackward0(input)), node for node."""
    run(lambda F, x, t: F.cross_entropy(x, t, reduction=reduction), [arr(N, C, dtype=dtype), TARGET])
    run(lambda F, x, t, w: F.cross_entropy(x, t, weight=w, reduction=reduction),
        [arr(N, C, dtype=dtype), TARGET_IGN, RNG.uniform(0.5, 2, C).astype(dtype)], rg=[True, False, False])


def test_cross_entropy_other_ranks():
    run(lambda F, x, t: F.cross_entropy(x, t), [arr(C), np.array(1)])
    run(lambda F, x, t: F.cross_entropy(x, t, reduction="none"), [arr(2, C, 4), TARGET_3D])
    run(lambda F, x, t: F.cross_entropy(x, t, ignore_index=1), [arr(2, C, 2, 2), TARGET_4D])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_label_smoothing(reduction, dtype):
    """AddBackward0(MulBackward1(NllLossBackward0(..)), MulBackward1(.. MaskedFillBackward0 ..)), node for node."""
    run(lambda F, x, t: F.cross_entropy(x, t, reduction=reduction, label_smoothing=0.1),
        [arr(N, C, dtype=dtype), TARGET_IGN])
    run(lambda F, x, t, w: F.cross_entropy(x, t, weight=w, reduction=reduction, label_smoothing=0.2),
        [arr(N, C, dtype=dtype), TARGET_IGN, RNG.uniform(0.5, 2, C).astype(dtype)], rg=[True, False, False])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities(reduction, dtype):
    """Soft targets: DivBackward1(NegBackward0(SumBackward0(MulBackward0(LogSoftmaxBackward0, ..)))) for mean."""
    run(lambda F, x, p: F.cross_entropy(x, p, reduction=reduction), [arr(N, C, dtype=dtype), probs(N, C, dtype=dtype)],
        rg=[True, False])
    w = RNG.uniform(0.5, 2, C).astype(dtype)
    run(lambda F, x, p, w: F.cross_entropy(x, p, weight=w, reduction=reduction, label_smoothing=0.1),
        [arr(N, C, dtype=dtype), probs(N, C, dtype=dtype), w], rg=[True, False, False])


def test_cross_entropy_probabilities_grad_to_target():
    run(lambda F, x, p: F.cross_entropy(x, p), [arr(N, C), probs(N, C)], rg=[True, True])
    run(lambda F, x, p: F.cross_entropy(x, p), [arr(2, C, 4), probs(2, C, 4)])


# ----- mse_loss, l1_loss, binary_cross_entropy_with_logits ---------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_l1(reduction, dtype):
    a, b = arr(N, C, dtype=dtype), arr(N, C, dtype=dtype)
    run(lambda F, x, y: F.mse_loss(x, y, reduction=reduction), [a, b])
    run(lambda F, x, y: F.l1_loss(x, y, reduction=reduction), [a, b], rg=[True, False])


def test_mse_and_l1_broadcast_promote_and_weight():
    with pytest.warns(UserWarning, match="Using a target size"):
        run(lambda F, x, y: F.mse_loss(x, y), [arr(N, C), arr(C)])   # MseLossBackward0(x, ExpandBackward0(y))
    with pytest.warns(UserWarning, match="Using a target size"):
        run(lambda F, x, y: F.l1_loss(x, y), [arr(N, C), arr(C)])
    run(lambda F, x, y: F.mse_loss(x, y), [arr(N, C, dtype="float32"), arr(N, C)])
    run(lambda F, x, y: F.mse_loss(x, y), [arr(N, C, dtype="float32"), RNG.integers(0, 3, (N, C))])
    w = RNG.uniform(0.5, 2, (N, C))
    run(lambda F, x, y, w: F.mse_loss(x, y, weight=w), [arr(N, C), arr(N, C), w])
    run(lambda F, x, y, w: F.l1_loss(x, y, weight=w, reduction="sum"), [arr(N, C), arr(N, C), w],
        rg=[True, False, False])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits(reduction, dtype):
    x, y = arr(N, C, dtype=dtype) * 3, RNG.uniform(0, 1, (N, C)).astype(dtype)
    run(lambda F, x, y: F.binary_cross_entropy_with_logits(x, y, reduction=reduction), [x, y])
    w, pw = RNG.uniform(0.5, 2, C).astype(dtype), RNG.uniform(0.5, 2, C).astype(dtype)
    run(lambda F, x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, weight=w, pos_weight=pw, reduction=reduction),
        [x, y, w, pw], rg=[True, True, False, False])


def test_bce_with_logits_dtype_follows_target():
    run(lambda F, x, y: F.binary_cross_entropy_with_logits(x, y),
        [arr(N, C), RNG.uniform(0, 1, (N, C)).astype("float32")])


# ----- dropout, one_hot --------------------------------------------------------------------------------------
def test_dropout():
    x = tl.tensor(arr(200, 50), requires_grad=True)
    tl.manual_seed(0)
    y = LF.dropout(x, 0.3)
    assert y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[1][0] is None
    mask = np.asarray(y.grad_fn._saved_other._data)
    assert set(np.unique(mask).round(5)) == {0.0, round(1 / 0.7, 5)}
    assert abs((mask == 0).mean() - 0.3) < 0.03
    np.testing.assert_allclose(np.asarray(y.detach()._data), np.asarray(x.detach()._data) * mask)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad._data), mask)
    tl.manual_seed(0)
    np.testing.assert_array_equal(np.asarray(LF.dropout(x, 0.3).detach()._data), np.asarray(y.detach()._data))
    assert not np.array_equal(np.asarray(LF.dropout(x, 0.3).detach()._data), np.asarray(y.detach()._data))


def test_dropout_identity_cases_inplace_and_p1():
    for F, lib in ((LF, tl), (TF, torch)):
        x = lib.tensor(arr(N, C), requires_grad=True)
        assert F.dropout(x, 0.0) is x and F.dropout(x, 0.5, training=False) is x
        z = F.dropout(x, 1.0)
        assert z.grad_fn.name() == "MulBackward0" and tuple(z.grad_fn._saved_other.shape) == ()
        assert float(abs(z.detach()).sum()) == 0.0
        y = x * 1
        assert F.dropout(y, 0.5, inplace=True) is y and y.grad_fn.name() == "MulBackward0"
        assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"


def test_one_hot():
    for t in (np.array([0, 2, 1]), np.array([[0, 2], [1, 1]])):
        assert_same(LF.one_hot(tl.tensor(t)), TF.one_hot(torch.tensor(t)))
        assert_same(LF.one_hot(tl.tensor(t), 5), TF.one_hot(torch.tensor(t), 5))
    assert_same(LF.one_hot(tl.tensor(np.zeros(0, np.int64)), 3), TF.one_hot(torch.zeros(0, dtype=torch.long), 3))


# ----- errors ----------------------------------------------------------------------------------------------
def _err(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        return type(e).__name__, str(e).split("\n")[0]
    return None


def _i(*values):
    return np.array(values, dtype=np.int64)


ERROR_CASES = [  # (fn(F, *tensors), arrays, requires_grad flags or None)
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), _i(0, 1, 2)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), _i(0, 1, 2, 3)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), _i(0, 1, 2, -1)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), TARGET.astype(np.int32)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), TARGET.astype(np.float64)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), TARGET[None]], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), TARGET[:, None]], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(N, C), np.array(1)], None),
    (lambda F, x, t, w: F.nll_loss(x, t, weight=w), [arr(N, C), TARGET, np.ones(4)], None),
    (lambda F, x, t, w: F.nll_loss(x, t, weight=w), [arr(N, C), TARGET, np.ones((3, 1))], None),
    (lambda F, x, t, w: F.nll_loss(x, t, weight=w), [arr(N, C, dtype="float32"), TARGET, np.ones(3)], None),
    (lambda F, x, t, w: F.nll_loss(x, t, weight=w), [arr(N, C), TARGET, np.ones(3)], [True, False, True]),
    (lambda F, x, t: F.nll_loss(x, t, reduction="foo"), [arr(N, C), TARGET], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(C), _i(1, 2)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(2, C, 4), np.ones((2, 3), np.int64)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(2, C, 2, 2), np.ones((2, 2, 3), np.int64)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(2, C, 2, 2), np.ones((2, 2), np.int64)], None),
    (lambda F, x, t: F.nll_loss(x, t), [arr(2, C, 2, 2), TARGET_4D + 1], None),
    (lambda F, x, t, w: F.nll_loss(x, t, weight=w), [arr(2, C, 2, 2), TARGET_4D, np.ones(4)], None),
    (lambda F, x, t, w: F.nll_loss(x, t, weight=w), [arr(2, C, 2, 2), TARGET_4D, np.ones(3)], [True, False, True]),
    (lambda F, x, t: F.nll_loss(x, t), [np.array(1.0), np.array(1)], None),
    (lambda F, x, t: F.nll_loss(x, t), [np.ones((N, C), np.int64), TARGET], None),
    (lambda F, x, t: F.nll_loss(x, t), [np.ones((2, C, 2, 2), np.int64), TARGET_4D], None),
    (lambda F, x, t: F.cross_entropy(x, t, ignore_index=1), [arr(N, C), probs(N, C)], None),
    (lambda F, x, t: F.cross_entropy(x, t), [arr(N, C), probs(N, 2)], None),
    (lambda F, x, t: F.cross_entropy(x, t), [arr(N, C), np.ones((N, C), np.int64)], None),
    (lambda F, x, t: F.cross_entropy(x, t, label_smoothing=1.5), [arr(N, C), TARGET], None),
    (lambda F, x, t: F.cross_entropy(x, t), [np.ones((N, C), np.int64), TARGET], None),
    (lambda F, x, t, w: F.cross_entropy(x, t, weight=w), [arr(N, C), probs(N, C), np.ones(4)], None),
    (lambda F, x, t: F.mse_loss(x, t), [arr(N, C), arr(2, C)], None),
    (lambda F, x, t: F.mse_loss(x, t, reduction="bad"), [arr(N, C), arr(N, C)], None),
    (lambda F, x, t: F.mse_loss(x, t), [np.ones((N, C), np.int64), np.ones((N, C), np.int64)], None),
    (lambda F, x, t, w: F.mse_loss(x, t, weight=w), [arr(N, C), arr(N, C), np.ones(C)], None),
    (lambda F, x, t: F.binary_cross_entropy_with_logits(x, t), [arr(N, C), arr(2, C)], None),
    (lambda F, x, t: F.binary_cross_entropy_with_logits(x, t), [arr(N, C), np.ones((N, C), np.int64)], None),
    (lambda F, x, t: F.binary_cross_entropy_with_logits(x, t), [np.ones((N, C), np.int64), arr(N, C)], None),
    (lambda F, x, t: F.binary_cross_entropy_with_logits(x, t, reduction="x"), [arr(N, C), arr(N, C)], None),
    (lambda F, x, t, w: F.binary_cross_entropy_with_logits(x, t, weight=w), [arr(N, C), arr(N, C), np.ones(2)],
     None),
    (lambda F, x, t, w: F.binary_cross_entropy_with_logits(x, t, pos_weight=w), [arr(N, C), arr(N, C), np.ones(2)],
     None),
    (lambda F, x, t, w: F.binary_cross_entropy_with_logits(x, t, weight=w), [arr(N, C), arr(N, C), np.ones(C)],
     [True, False, True]),
    (lambda F, x, t, w: F.binary_cross_entropy_with_logits(x, t, pos_weight=w), [arr(N, C), arr(N, C), np.ones(C)],
     [True, False, True]),
    (lambda F, x, w: F.linear(x, w), [arr(N, D), arr(C, N)], None),
    (lambda F, x, w, b: F.linear(x, w, b), [arr(N, D), arr(C, D), arr(N)], None),
    (lambda F, x, w, b: F.linear(x, w, b), [arr(N, D), arr(C, D), arr(C, dtype="float32")], None),
    (lambda F, x, w: F.linear(x, w), [arr(2, N, D), arr(C, N)], None),
    (lambda F, x: F.dropout(x, 1.5), [arr(N, C)], None),
    (lambda F, x: F.dropout(x, -0.1), [arr(N, C)], None),
    (lambda F, x: F.dropout(x, 0.5), [np.ones((N, C), np.int64)], None),
    (lambda F, x: F.one_hot(x), [np.array([0.0, 2.0])], None),
    (lambda F, x: F.one_hot(x), [np.array([0, -1])], None),
    (lambda F, x: F.one_hot(x, 3), [np.array([0, 3])], None),
    (lambda F, x: F.one_hot(x), [np.zeros(0, np.int64)], None),
    (lambda F, x: F.one_hot(x), [np.array([0, 1], np.int32)], None),
]


@pytest.mark.parametrize("k", range(len(ERROR_CASES)))
def test_errors(k):
    fn, arrays, rg = ERROR_CASES[k]
    rg = rg or [False] * len(arrays)
    expected = _err(lambda: fn(TF, *[_t(torch, a, r) for a, r in zip(arrays, rg)]))
    assert expected is not None
    assert _err(lambda: fn(LF, *[_t(tl, a, r) for a, r in zip(arrays, rg)])) == expected


DOUBLE_BACKWARD = {  # fn(F, lib, x) with x the leaf that requires grad
    "cross_entropy_smooth": (lambda F, lib, x: F.cross_entropy(x, lib.tensor(TARGET_IGN), label_smoothing=0.1),
                             (N, C)),
    "bce_pos_weight": (lambda F, lib, x: F.binary_cross_entropy_with_logits(
        x, lib.tensor(np.full((N, C), 0.3)), pos_weight=lib.tensor(np.linspace(0.5, 2, C))), (N, C)),
    "mse": (lambda F, lib, x: F.mse_loss(x, lib.tensor(np.full((N, C), 0.3))), (N, C)),
    "nll_spatial": (lambda F, lib, x: F.nll_loss(F.log_softmax(x, 1), lib.tensor(TARGET_3D)), (2, C, 4)),
}


@pytest.mark.parametrize("name", list(DOUBLE_BACKWARD))
def test_double_backward(name):
    """create_graph=True through the loss nodes: gradients of squared input gradients match torch."""
    fn, shape = DOUBLE_BACKWARD[name]
    x = arr(*shape)
    results = []
    for F, lib in ((LF, tl), (TF, torch)):
        xt = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(fn(F, lib, xt), [xt], create_graph=True)
        results.append(lib.autograd.grad((g * g).sum(), [xt])[0])
    assert_same(results[0], results[1], 1e-9, 1e-12)


def _linear_internals(T, F, x_np, w_np, b_np):
    """What a user can observe inside linear's graph: hook arguments, saved mat2, second derivatives."""
    x = T.tensor(x_np, requires_grad=True)
    w = T.tensor(w_np, requires_grad=True)
    b = T.tensor(b_np, requires_grad=True)
    y = F.linear(x, w, b)
    addmm = y.grad_fn
    t_node = addmm.next_functions[2][0]
    seen = {}
    addmm.register_hook(lambda gi, go: seen.update(addmm_gi2=gi[2].detach().numpy().copy()))
    t_node.register_prehook(lambda go: seen.update(t_pre=go[0].detach().numpy().copy()))
    mat2 = addmm._saved_mat2
    seen["mat2"] = (mat2.detach().numpy().copy(), mat2.grad_fn.name())
    (y * y).sum().backward(retain_graph=True)
    seen["grads"] = [p.grad.numpy().copy() for p in (x, w, b)]
    gw, = T.autograd.grad((F.linear(x, w, b) ** 2).sum(), w, create_graph=True)
    seen["second"] = [g.numpy().copy() for g in T.autograd.grad((gw * gw).sum(), (x, b))]
    return seen


def test_fused_linear_shows_torchs_internals():
    rng = np.random.RandomState(3)
    args = (rng.randn(4, 5), rng.randn(3, 5), rng.randn(3))
    ours = _linear_internals(tl, LF, *args)
    theirs = _linear_internals(torch, torch.nn.functional, *args)
    assert ours.keys() == theirs.keys()
    np.testing.assert_allclose(ours["addmm_gi2"], theirs["addmm_gi2"], rtol=1e-6)  # W.T's layout, shape (5, 3)
    np.testing.assert_allclose(ours["t_pre"], theirs["t_pre"], rtol=1e-6)
    np.testing.assert_allclose(ours["mat2"][0], theirs["mat2"][0])
    assert ours["mat2"][1] == theirs["mat2"][1] == "TBackward0"
    for a, b in zip(ours["grads"] + ours["second"], theirs["grads"] + theirs["second"]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)

"""issue 14's activations and losses of torch.nn.functional and torch.nn against torch 2.13: values, first-order
gradients of every input, second order (or torch's error there), graphs node by node, module reprs and
attributes, argument errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, graph

R = np.random.default_rng(3)
A = R.standard_normal((3, 4)); B = R.standard_normal((3, 4)); C = R.standard_normal((3, 4))
P = R.uniform(0.05, 0.95, (3, 4)); Q = R.uniform(0.05, 0.95, (3, 4)); V = R.uniform(0.5, 2, (3, 4))
SGN = np.sign(R.standard_normal((3, 4))); Y3 = np.array([1, -1, 1])
CLS = np.array([1, 0, 3]); ML = np.array([[1, 2, -1, 0], [0, -1, 0, 0], [3, 2, 1, 0]])
LP = R.standard_normal((5, 2, 4))


def F(m):
    return m.nn.functional


def T(m, a):
    return m.tensor(a)


CASES = {
 "smooth_l1": (lambda m, x, y: F(m).smooth_l1_loss(x, y), [A, B]),
 "smooth_l1_beta": (lambda m, x, y: F(m).smooth_l1_loss(x, y, beta=0.5, reduction="sum"), [A, B]),
 "smooth_l1_b0": (lambda m, x, y: F(m).smooth_l1_loss(x, y, beta=0.0), [A, B]),
 "huber": (lambda m, x, y: F(m).huber_loss(x, y, delta=0.7, reduction="none"), [A, B]),
 "huber_w": (lambda m, x, y: F(m).huber_loss(x, y, weight=T(m, V)), [A, B]),
 "bce": (lambda m, x, y: F(m).binary_cross_entropy(x, y), [P, Q]),
 "bce_w": (lambda m, x, y: F(m).binary_cross_entropy(x, y, weight=T(m, V[0]), reduction="sum"), [P, Q]),
 "kl": (lambda m, x, y: F(m).kl_div(x, y), [A, P]),
 "kl_bm": (lambda m, x, y: F(m).kl_div(x, y, reduction="batchmean"), [A, P]),
 "kl_lt": (lambda m, x, y: F(m).kl_div(x, y, log_target=True, reduction="none"), [A, B]),
 "cosemb": (lambda m, x, y: F(m).cosine_embedding_loss(x, y, T(m, Y3), margin=0.1), [A, B]),
 "marg": (lambda m, x, y: F(m).margin_ranking_loss(x, y, T(m, SGN), margin=0.2), [A, B]),
 "hinge": (lambda m, x: F(m).hinge_embedding_loss(x, T(m, SGN)), [A]),
 "trip": (lambda m, x, y, z: F(m).triplet_margin_loss(x, y, z), [A, B, C]),
 "trip_swap_p1": (lambda m, x, y, z: F(m).triplet_margin_loss(x, y, z, p=1, swap=True, reduction="none"), [A, B, C]),
 "tripd": (lambda m, x, y, z: F(m).triplet_margin_with_distance_loss(x, y, z, margin=2.0), [A, B, C]),
 "pnll": (lambda m, x, y: F(m).poisson_nll_loss(x, y * 3), [A, V]),
 "pnll_full": (lambda m, x, y: F(m).poisson_nll_loss(x, y * 3, log_input=False, full=True), [V, P]),
 "gnll": (lambda m, x, y, v: F(m).gaussian_nll_loss(x, y, v), [A, B, V]),
 "gnll_full": (lambda m, x, y, v: F(m).gaussian_nll_loss(x, y, v[:, 0], full=True, reduction="sum"), [A, B, V]),
 "mlsm": (lambda m, x, y: F(m).multilabel_soft_margin_loss(x, y, weight=T(m, V[0])), [A, P]),
 "mlm": (lambda m, x: F(m).multilabel_margin_loss(x, T(m, ML)), [A]),
 "mlm_1d": (lambda m, x: F(m).multilabel_margin_loss(x[0], T(m, ML[0]), reduction="none"), [A]),
 "mm": (lambda m, x: F(m).multi_margin_loss(x, T(m, CLS)), [A]),
 "mm_p2_w": (lambda m, x: F(m).multi_margin_loss(x, T(m, CLS), p=2, margin=0.5, weight=T(m, V[0]), reduction="none"), [A]),
 "sm": (lambda m, x: F(m).soft_margin_loss(x, T(m, SGN)), [A]),
 "ctc": (lambda m, x: F(m).ctc_loss(x.log_softmax(2), T(m, np.array([[1, 2], [3, 0]])), T(m, np.array([5, 4])), T(m, np.array([2, 1]))), [LP]),
 "ctc_sum_cat": (lambda m, x: F(m).ctc_loss(x.log_softmax(2), T(m, np.array([1, 1, 3])), [5, 3], [2, 1], reduction="sum"), [LP]),
 "ctc_none_1d": (lambda m, x: F(m).ctc_loss(x[:, 0].log_softmax(1), T(m, np.array([2, 3])), T(m, np.array(5)), T(m, np.array(2)), reduction="none", blank=1), [LP]),
 "ctc_inf_zero": (lambda m, x: F(m).ctc_loss(x.log_softmax(2), T(m, np.array([[1, 1, 1], [2, 2, 2]])), [3, 5], [3, 3], zero_infinity=True, reduction="sum"), [LP]),
 "mish": (lambda m, x: F(m).mish(x), [A * 3]),
 "hardswish": (lambda m, x: F(m).hardswish(x), [A * 3]),
 "hardswish_bounds": (lambda m, x: F(m).hardswish(x), [np.array([-3.0, 3.0, -4.0, 4.0, 0.5])]),
 "hardsigmoid_bounds": (lambda m, x: F(m).hardsigmoid(x), [np.array([-3.0, 3.0, -4.0, 4.0, 0.5])]),
 "hardsigmoid": (lambda m, x: F(m).hardsigmoid(x), [A * 3]),
 "softshrink": (lambda m, x: F(m).softshrink(x, 0.6), [A]),
 "hardshrink": (lambda m, x: F(m).hardshrink(x), [A]),
 "threshold": (lambda m, x: F(m).threshold(x, 0.1, -2.0), [A]),
 "glu": (lambda m, x: F(m).glu(x, 0 if False else 1), [A]),
 "prelu": (lambda m, x, w: F(m).prelu(x, w), [A, V[0]]),
 "prelu1": (lambda m, x, w: F(m).prelu(x, w), [A, V[0, :1]]),
 "rrelu_eval": (lambda m, x: F(m).rrelu(x, 0.1, 0.3), [A]),
 "softmin": (lambda m, x: F(m).softmin(x, 0), [A]),
 "softsign": (lambda m, x: F(m).softsign(x), [A]),
 "tanhshrink": (lambda m, x: F(m).tanhshrink(x), [A]),
 "normalize": (lambda m, x: F(m).normalize(x, p=3, dim=0), [A]),
 "logsigmoid": (lambda m, x: F(m).logsigmoid(x), [A]),
}

# torch has no derivative of these backward functions: a second order raises in both libraries
FIRST_ORDER_ONLY = {"mlm": "multilabel_margin_loss_backward", "mlm_1d": "multilabel_margin_loss_backward",
                    "mm": "multi_margin_loss_backward", "mm_p2_w": "multi_margin_loss_backward",
                    "hardsigmoid": "hardsigmoid_backward", "hardsigmoid_bounds": "hardsigmoid_backward", "ctc": "_ctc_loss_backward",
                    "ctc_sum_cat": "_ctc_loss_backward", "ctc_none_1d": "_ctc_loss_backward",
                    "ctc_inf_zero": "_ctc_loss_backward"}


def _run(m, name):
    fn, arrays = CASES[name]
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(m, *xs)
    g = m.autograd.grad(out, xs, out.detach() * 0 + 1.3, create_graph=True, allow_unused=True)
    s = sum((gi * gi).sum() for gi in g if gi is not None and gi.requires_grad)
    return xs, out, g, s


@pytest.mark.parametrize("name", CASES)
def test_against_torch(name):
    """Values, graph, first-order gradients and a second-order one (or torch's error there)."""
    (xs1, o1, g1, s1), (xs2, o2, g2, s2) = _run(tl, name), _run(torch, name)
    assert graph(o1) == graph(o2)
    assert_same(o1, o2, 1e-6, 1e-8)
    assert_same(list(g1), list(g2), 1e-6, 1e-8)
    if name in FIRST_ORDER_ONLY:
        for lib, s, xs in ((tl, s1, xs1), (torch, s2, xs2)):
            with pytest.raises(RuntimeError, match=f"derivative for aten::{FIRST_ORDER_ONLY[name]} is not implemented"):
                lib.autograd.grad(s, xs, allow_unused=True)
        return
    assert isinstance(s1, int) == isinstance(s2, int)  # (no gradient requires grad: a piecewise linear loss)
    if isinstance(s1, int):
        return
    assert_same(list(tl.autograd.grad(s1, xs1, allow_unused=True)), list(torch.autograd.grad(s2, xs2, allow_unused=True)),
                1e-5, 1e-7)


SAVED = {  # node attributes torch shows
    "smooth_l1": ("_saved_beta", "_saved_reduction"), "huber": ("_saved_delta", "_saved_reduction"),
    "bce_w": ("_saved_reduction", "_saved_weight"), "mm_p2_w": ("_saved_p", "_saved_margin", "_saved_reduction"),
    "mlm": ("_saved_is_target", "_saved_reduction"), "softshrink": ("_saved_lambd",), "glu": ("_saved_dim",),
    "threshold": ("_saved_threshold",), "rrelu_eval": ("_saved_lower", "_saved_upper", "_saved_training"),
    "sm": ("_saved_reduction",),
    "ctc_sum_cat": ("_saved_blank", "_saved_input_lengths", "_saved_target_lengths", "_saved_zero_infinity"),
}


@pytest.mark.parametrize("name", SAVED)
def test_saved_attributes(name):
    (_, o1, _, _), (_, o2, _, _) = _run(tl, name), _run(torch, name)
    n1, n2 = o1.grad_fn, o2.grad_fn
    while n2.name() != "CtcLossBackward0" and name.startswith("ctc"):  # (below the reduction)
        n1, n2 = n1.next_functions[0][0], n2.next_functions[0][0]
    for attr in SAVED[name]:
        a, b = getattr(n1, attr), getattr(n2, attr)
        if isinstance(b, torch.Tensor):
            assert_same(a, b)
        else:
            assert a == b, (attr, a, b)


INPLACE = {
    "mish": lambda m, x: m.nn.functional.mish(x, inplace=True),
    "hardswish": lambda m, x: m.nn.functional.hardswish(x, inplace=True),
    "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x, inplace=True),
    "threshold": lambda m, x: m.nn.functional.threshold(x, 0.1, -1.0, inplace=True),
    "rrelu": lambda m, x: m.nn.functional.rrelu(x, inplace=True),
    "relu6": lambda m, x: m.nn.functional.relu6(x, inplace=True),
    "selu": lambda m, x: m.nn.functional.selu(x, inplace=True),
    "elu": lambda m, x: m.nn.functional.elu(x, 0.5, inplace=True),
    "elu_": lambda m, x: m.nn.functional.elu_(x, 0.5), "celu_": lambda m, x: m.nn.functional.celu_(x, 2.0),
    "selu_": lambda m, x: m.nn.functional.selu_(x), "hardtanh_": lambda m, x: m.nn.functional.hardtanh_(x, -0.5, 0.5),
    "leaky_relu_": lambda m, x: m.nn.functional.leaky_relu_(x, 0.2), "relu_": lambda m, x: m.nn.functional.relu_(x),
    "threshold_": lambda m, x: m.nn.functional.threshold_(x, 0.1, -1.0),
    "rrelu_": lambda m, x: m.nn.functional.rrelu_(x, 0.1, 0.2),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace(name):
    res = []
    for m in (tl, torch):
        x = m.tensor(A, requires_grad=True)
        y = x * 1
        out = INPLACE[name](m, y)
        assert out is y and y._version == 1
        res.append((out, m.autograd.grad(out, x, out.detach() * 0 + 1.3)[0], graph(out)))
    assert res[0][2] == res[1][2]
    assert_same(res[0][0], res[1][0])
    assert_same(res[0][1], res[1][1])


def test_rrelu_training_draws_slopes():
    x = tl.tensor(A, requires_grad=True)
    out = tl.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    assert out.grad_fn.name() == "RreluWithNoiseBackward0" and out.grad_fn._saved_training is True
    slope = np.asarray((out / x).detach()._data)
    neg = A < 0
    assert np.all(slope[~neg] == 1) and np.all((slope[neg] >= 0.1) & (slope[neg] <= 0.3))
    assert len(np.unique(slope[neg])) == neg.sum()  # one draw per element
    (g,) = tl.autograd.grad(out.sum(), x)
    np.testing.assert_allclose(np.asarray(g._data), slope)
    m = tl.nn.RReLU(0.1, 0.3).eval()
    assert_same(m(tl.tensor(A)), torch.nn.RReLU(0.1, 0.3).eval()(torch.tensor(A)))


def test_gumbel_softmax():
    x = tl.tensor(A, requires_grad=True)
    soft = tl.nn.functional.gumbel_softmax(x, tau=0.5)
    np.testing.assert_allclose(np.asarray(soft.sum(-1).detach()._data), 1)
    hard = tl.nn.functional.gumbel_softmax(x, hard=True, dim=0)
    h = np.asarray(hard.detach()._data)
    assert set(np.unique(h)) <= {0.0, 1.0} and np.all(h.sum(0) == 1)
    t = torch.tensor(A, requires_grad=True)
    assert graph(hard) == graph(torch.nn.functional.gumbel_softmax(t, hard=True, dim=0))
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        tl.nn.functional.gumbel_softmax(x, eps=1e-5)


def test_normalize_out():
    out1, out2 = tl.empty(3, 4, dtype=tl.float64), torch.empty(3, 4, dtype=torch.float64)
    tl.nn.functional.normalize(tl.tensor(A), out=out1)
    torch.nn.functional.normalize(torch.tensor(A), out=out2)
    assert_same(out1, out2)


MODULES = [
    ("ReLU6", (), {}), ("ReLU6", (True,), {}), ("PReLU", (), {}), ("PReLU", (4, 0.1), {}), ("ELU", (0.5, True), {}),
    ("SELU", (), {}), ("CELU", (2.0,), {}), ("Mish", (), {}), ("Hardtanh", (-2.0, 2.0), {}), ("Hardswish", (), {}),
    ("Hardsigmoid", (True,), {}), ("Softmin", (1,), {}), ("Softsign", (), {}), ("Tanhshrink", (), {}),
    ("Softshrink", (0.3,), {}), ("Hardshrink", (), {}), ("Threshold", (0.1, 20.0), {}), ("GLU", (), {}),
    ("LogSigmoid", (), {}), ("RReLU", (0.1, 0.3), {}),
    ("SmoothL1Loss", (), {"beta": 0.5}), ("HuberLoss", (), {"delta": 0.5}), ("BCELoss", (), {}),
    ("KLDivLoss", (), {"reduction": "batchmean"}), ("CosineEmbeddingLoss", (0.1,), {}), ("MarginRankingLoss", (), {}),
    ("TripletMarginLoss", (), {"swap": True}), ("TripletMarginWithDistanceLoss", (), {}), ("CTCLoss", (), {}),
    ("PoissonNLLLoss", (), {}), ("GaussianNLLLoss", (), {"full": True}), ("MultiLabelSoftMarginLoss", (), {}),
    ("MultiLabelMarginLoss", (), {}), ("MultiMarginLoss", (2,), {}), ("SoftMarginLoss", (), {}),
    ("HingeEmbeddingLoss", (), {"reduction": "sum"}),
]


@pytest.mark.parametrize("name, args, kw", MODULES)
def test_module(name, args, kw):
    a, b = getattr(tl.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(a) == repr(b)
    assert sorted(k for k in vars(a) if not k.startswith("_")) == sorted(k for k in vars(b) if not k.startswith("_"))
    assert list(a._buffers) == list(b._buffers) and list(a._parameters) == list(b._parameters)


def test_modules_compute_as_functional():
    x, t = tl.tensor(A), torch.tensor(A)
    assert_same(tl.nn.PReLU(4, 0.2).double()(x), torch.nn.PReLU(4, 0.2).double()(t))
    assert_same(tl.nn.Hardtanh(-0.5, 0.5)(x), torch.nn.Hardtanh(-0.5, 0.5)(t))
    assert_same(tl.nn.GLU(0)(tl.tensor(A[:2])), torch.nn.GLU(0)(torch.tensor(A[:2])))
    assert_same(tl.nn.MultiMarginLoss(weight=tl.tensor(V[0]))(x, tl.tensor(CLS)),
                torch.nn.MultiMarginLoss(weight=torch.tensor(V[0]))(t, torch.tensor(CLS)))
    assert_same(tl.nn.TripletMarginWithDistanceLoss(swap=True)(x, tl.tensor(B), tl.tensor(C)),
                torch.nn.TripletMarginWithDistanceLoss(swap=True)(t, torch.tensor(B), torch.tensor(C)))
    assert_same(tl.nn.CTCLoss(blank=1)(tl.tensor(LP).log_softmax(2), tl.tensor([[2, 3], [3, 0]]), [5, 4], [2, 1]),
                torch.nn.CTCLoss(blank=1)(torch.tensor(LP).log_softmax(2), torch.tensor([[2, 3], [3, 0]]), [5, 4],
                                          [2, 1]))


ERRORS = [
    lambda m: m.nn.functional.binary_cross_entropy(T(m, A), T(m, P)),
    lambda m: m.nn.functional.binary_cross_entropy(T(m, P), T(m, P[0])),
    lambda m: m.nn.functional.gaussian_nll_loss(T(m, A), T(m, B), T(m, -V)),
    lambda m: m.nn.functional.gaussian_nll_loss(T(m, A), T(m, B), -1.0),
    lambda m: m.nn.functional.gaussian_nll_loss(T(m, A), T(m, B), T(m, V[:2])),
    lambda m: m.nn.functional.gaussian_nll_loss(T(m, A), T(m, B), T(m, V), reduction="x"),
    lambda m: m.nn.functional.smooth_l1_loss(T(m, A), T(m, B), reduction="x"),
    lambda m: m.nn.functional.huber_loss(T(m, A), T(m, B), weight=T(m, V[0])),
    lambda m: m.nn.functional.kl_div(T(m, A), T(m, B), reduction="x"),
    lambda m: m.nn.functional.margin_ranking_loss(T(m, A), T(m, B), T(m, Y3)),
    lambda m: m.nn.functional.cosine_embedding_loss(T(m, A), T(m, B), T(m, SGN)),
    lambda m: m.nn.functional.cosine_embedding_loss(T(m, A), T(m, B), T(m, np.array(1))),
    lambda m: m.nn.functional.triplet_margin_loss(T(m, A), T(m, B), T(m, C[0])),
    lambda m: m.nn.functional.triplet_margin_loss(T(m, A), T(m, B), T(m, C), margin=0),
    lambda m: m.nn.functional.triplet_margin_with_distance_loss(T(m, A), T(m, B), T(m, C), reduction="x"),
    lambda m: m.nn.functional.poisson_nll_loss(T(m, A), T(m, B), reduction="x"),
    lambda m: m.nn.functional.multilabel_soft_margin_loss(T(m, A), T(m, B), reduction="x"),
    lambda m: m.nn.functional.multi_margin_loss(T(m, A), T(m, CLS), p=3),
    lambda m: m.nn.functional.multi_margin_loss(T(m, A), T(m, CLS[:2])),
    lambda m: m.nn.functional.multi_margin_loss(T(m, A), T(m, CLS), weight=T(m, V)),
    lambda m: m.nn.functional.multilabel_margin_loss(T(m, A), T(m, ML[:, :3])),
    lambda m: m.nn.functional.soft_margin_loss(T(m, A), m.tensor(SGN, requires_grad=True)),
    lambda m: m.nn.functional.ctc_loss(T(m, LP), T(m, np.array([[1, 2], [3, 0]])), [6, 4], [2, 1]),
    lambda m: m.nn.functional.glu(T(m, A[:, :3])),
    lambda m: m.nn.functional.glu(T(m, A), 2),
    lambda m: m.nn.functional.glu(T(m, np.array(1.0))),
    lambda m: m.nn.functional.softshrink(T(m, A), -1.0),
    lambda m: m.nn.functional.prelu(T(m, A), T(m, np.ones((2, 2)))),
    lambda m: m.nn.functional.prelu(T(m, A), T(m, np.ones(3))),
    lambda m: m.nn.functional.prelu(T(m, A), m.ones(1)),
    lambda m: m.nn.functional.rrelu(T(m, A), 0.5, 0.1),
    lambda m: m.nn.functional.hardtanh(T(m, A), 2.0, 1.0),
    lambda m: m.nn.functional.mish(T(m, CLS)),
    lambda m: m.nn.functional.hardswish(T(m, CLS)),
    lambda m: m.nn.functional.threshold(m.tensor(A > 0), 0.5, 1),
    lambda m: m.nn.functional.smooth_l1_loss(m.tensor(A + 1j), m.tensor(B + 0j)),
    lambda m: m.nn.functional.soft_margin_loss(m.tensor(CLS), m.tensor(CLS)),
    lambda m: m.nn.functional.soft_margin_loss(m.tensor(CLS > 0), m.tensor(CLS)),
    lambda m: m.nn.functional.kl_div(m.tensor(CLS), m.tensor(CLS), reduction="sum"),
    lambda m: m.nn.functional.multi_margin_loss(m.tensor(A).bfloat16(), m.tensor(CLS)),
    lambda m: m.nn.functional.multilabel_margin_loss(m.tensor(A).half(), m.tensor(ML)),
    lambda m: m.nn.functional.binary_cross_entropy(m.tensor(P).float(), m.tensor(Q)),
    lambda m: m.nn.functional.multi_margin_loss(m.tensor(A), m.tensor(CLS), weight=m.ones(4)),
    lambda m: m.nn.functional.multi_margin_loss(m.tensor(A), m.tensor(CLS).int()),
    lambda m: m.nn.functional.multi_margin_loss(m.tensor(A), m.tensor([0, 1, 5])),
    lambda m: m.nn.functional.multilabel_margin_loss(m.tensor(A), m.tensor(ML).int()),
    lambda m: m.nn.functional.multilabel_margin_loss(m.tensor(A), m.tensor(np.where(ML == 3, 7, ML))),
    lambda m: m.nn.functional.gaussian_nll_loss(m.tensor(A), m.tensor(B), 1),
    lambda m: m.nn.functional.mish(A), lambda m: m.nn.functional.threshold(A, 0.1, 2.0),
    lambda m: m.nn.functional.prelu(T(m, A), V[0]), lambda m: m.nn.functional.gelu([1.0]),
    lambda m: m.nn.functional.elu(A), lambda m: m.nn.functional.logsigmoid(A), lambda m: m.nn.functional.rrelu(A),
    lambda m: m.nn.Hardtanh(1.0, 0.5),
    lambda m: m.nn.TripletMarginLoss(margin=-1.0),
    lambda m: m.nn.MultiMarginLoss(p=3),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    errors = []
    for m in (tl, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                ERRORS[k](m)
        errors.append((type(e.value), str(e.value).split("\n")[0]))
    assert errors[0] == errors[1]


def test_warnings():
    for m in (tl, torch):
        with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss by both"):
            m.nn.functional.kl_div(T(m, A), T(m, P))
        with pytest.warns(UserWarning, match="Using a target size"):
            m.nn.functional.smooth_l1_loss(T(m, A), T(m, B[0]))
        with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
            m.nn.functional.softmin(T(m, A))


def test_integer_inputs_promote():
    """C++'s integer tensor + float scalar is the default float dtype (pairwise_distance's eps, cosine's EPSILON)."""
    x, y = CLS.reshape(1, 3) * np.array([[1], [2]]), np.array([[3, 1, 0], [1, 1, 2]])
    for fn in (lambda m: m.nn.functional.triplet_margin_loss(T(m, x), T(m, y), T(m, y * 2), reduction="none"),
               lambda m: m.nn.functional.cosine_embedding_loss(T(m, x), T(m, y), T(m, np.array([1, -1])))):
        assert_same(fn(tl), fn(torch))


FORWARD_AD = {
    "mish": lambda m, x: m.nn.functional.mish(x), "hardsigmoid": lambda m, x: m.nn.functional.hardsigmoid(x),
    "glu": lambda m, x: m.nn.functional.glu(x), "prelu": lambda m, x: m.nn.functional.prelu(x, m.tensor(V[0])),
    "bce": lambda m, x: m.nn.functional.binary_cross_entropy(x.sigmoid(), m.tensor(P)),
    "triplet": lambda m, x: m.nn.functional.triplet_margin_loss(x, m.tensor(A), m.tensor(P)),
    "multi_margin": lambda m, x: m.nn.functional.multi_margin_loss(x, m.tensor(CLS)),
    "multilabel_margin": lambda m, x: m.nn.functional.multilabel_margin_loss(x, m.tensor(ML)),
    "ctc": lambda m, x: m.nn.functional.ctc_loss(x.view(3, 1, 4).log_softmax(2), m.tensor([[1, 2]]), [3], [2]),
}


@pytest.mark.parametrize("name", FORWARD_AD)
def test_forward_ad(name):
    """Tangents as torch's, or torch's refusal for the ops it has no forward derivative for."""
    res = []
    for m in (tl, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            try:
                res.append(fw.unpack_dual(FORWARD_AD[name](m, fw.make_dual(m.tensor(B), m.tensor(A)))).tangent)
            except NotImplementedError as e:
                res.append(str(e))
    if isinstance(res[1], str):
        assert res[0] == res[1]
    else:
        assert_same(res[0], res[1])


def test_result_dtypes():
    """huber_loss and soft_margin_loss compute in the input's dtype, smooth_l1_loss in the promoted one."""
    for fn in (lambda m: m.nn.functional.huber_loss(T(m, A).float(), T(m, B)),
               lambda m: m.nn.functional.soft_margin_loss(T(m, A).float(), T(m, SGN)),
               lambda m: m.nn.functional.smooth_l1_loss(T(m, A).float(), T(m, B))):
        assert_same(fn(tl), fn(torch))


def _autocast_cases(m):
    F, x, t = m.nn.functional, m.tensor(A).bfloat16().requires_grad_(), m.tensor(P).bfloat16()
    return [lambda: F.smooth_l1_loss(x, t), lambda: F.huber_loss(x, t), lambda: F.binary_cross_entropy(t, t),
            lambda: F.kl_div(x, t, reduction="sum"), lambda: F.multi_margin_loss(x, m.tensor(CLS)),
            lambda: F.soft_margin_loss(x, t), lambda: F.mish(x),
            lambda: F.ctc_loss(x.view(3, 1, 4).log_softmax(2), m.tensor([[1, 2]]), [3], [2]),
            lambda: F.cosine_embedding_loss(x, x, m.ones(3)), lambda: F.poisson_nll_loss(x, t),
            lambda: F.triplet_margin_loss(x, x, t), lambda: F.multilabel_soft_margin_loss(x, t),
            lambda: F.hinge_embedding_loss(x, t), lambda: F.margin_ranking_loss(x, x, t),
            lambda: F.multilabel_margin_loss(x, m.tensor(ML))]


def test_autocast():
    """CPU autocast runs the losses of torch's fp32 list in float32 (cast where torch casts: at the composite)."""
    results = []
    for m in (tl, torch):
        with m.autocast("cpu"):
            results.append([(str(o.dtype).split(".")[-1], graph(o)) for o in (f() for f in _autocast_cases(m))])
    assert results[0] == results[1]

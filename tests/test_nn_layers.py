"""Layer ops and modules against torch 2.13: conv2d, max_pool2d, avg_pool2d, layer_norm, batch_norm, embedding,
scaled_dot_product_attention, multi_head_attention_forward and the modules Conv2d, MaxPool2d, AvgPool2d,
LayerNorm, BatchNorm1d/2d, Embedding, MultiheadAttention.

Functional cases run ``fn(F, *tensors)`` with F = the torchlike ops or torch.nn.functional on the same NumPy
inputs and compare values, dtypes, the whole graph with every ``_saved_*`` attribute, and input gradients for a
random cotangent. Module cases build the torch module, copy its state_dict into the torchlike module through
NumPy, and compare outputs and the gradients of every parameter and input. Shapes are shared (and few) to keep
XLA compiles down: images (2, 4, 7, 7), conv weight (6, 2, 3, 3), attention (B=2, H=3, L=4, S=6, E=5).
"""
import itertools
import types
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import torchlike as tl
from oracle import assert_same, compare_graph
from torchlike.nn import _layers
from torchlike.nn.modules.attention import MultiheadAttention
from torchlike.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from torchlike.nn.modules.conv import Conv2d
from torchlike.nn.modules.normalization import LayerNorm
from torchlike.nn.modules.pooling import AvgPool2d, MaxPool2d
from torchlike.nn.modules.sparse import Embedding

LF = types.SimpleNamespace(**{n: getattr(_layers, n) for n in _layers.__all__})
RNG = np.random.default_rng(7)
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-12)}
IMG, W_CONV = (2, 4, 7, 7), (6, 2, 3, 3)


def arr(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


def _t(lib, a, rg):
    a = np.asarray(a)
    return lib.tensor(a, requires_grad=bool(rg) and a.dtype.kind == "f")


def run(fn, arrays, rg=None, full_graph=True):
    """fn(F, *tensors) on both libraries: values, graph (with saved attributes) and input gradients."""
    rg = rg if rg is not None else [True] * len(arrays)
    tl_in = [_t(tl, a, r) for a, r in zip(arrays, rg)]
    th_in = [_t(torch, a, r) for a, r in zip(arrays, rg)]
    out_tl, out_th = fn(LF, *tl_in), fn(TF, *th_in)
    rtol, atol = TOL[str(out_th.dtype).split(".")[-1]]
    assert_same(out_tl, out_th, rtol, atol)
    if full_graph:
        compare_graph(out_tl.grad_fn, out_th.grad_fn)
    else:
        assert out_tl.grad_fn.name() == out_th.grad_fn.name()
    cot = RNG.standard_normal(out_th.shape).astype(out_th.detach().numpy().dtype)
    out_tl.backward(tl.tensor(cot))
    out_th.backward(torch.tensor(cot))
    for a, b in zip(tl_in, th_in):
        assert_same(a.grad, b.grad, rtol, atol)
    return out_tl, out_th


# ----- conv2d ------------------------------------------------------------------------------------------------
CONV = {
    "stride_pad_groups_bias": (dict(stride=2, padding=1, groups=2), True, IMG),
    "same_dilated_nobias": (dict(padding="same", dilation=2, groups=2), False, IMG),
    "valid_unbatched": (dict(padding="valid", groups=2), True, IMG[1:]),  # UnsqueezeBackward0 / SqueezeBackward1
    "mixed_pairs": (dict(stride=(1, 2), padding=(0, 2), dilation=(2, 1), groups=2), True, IMG),
}


@pytest.mark.parametrize("name", list(CONV))
def test_conv2d(name):
    kw, bias, shape = CONV[name]
    if bias:
        run(lambda F, x, w, b: F.conv2d(x, w, b, **kw), [arr(*shape), arr(*W_CONV), arr(6)])
    else:
        run(lambda F, x, w: F.conv2d(x, w, **kw), [arr(*shape), arr(*W_CONV)])


def test_conv2d_float32_and_partial_grads():
    kw = CONV["stride_pad_groups_bias"][0]
    arrays = [arr(*IMG, dtype="float32"), arr(*W_CONV, dtype="float32"), arr(6, dtype="float32")]
    run(lambda F, x, w, b: F.conv2d(x, w, b, **kw), arrays)
    run(lambda F, x, w, b: F.conv2d(x, w, b, **kw), arrays, rg=[False, True, False])  # weight gradient only
    run(lambda F, x, w, b: F.conv2d(x, w, b, **kw), arrays, rg=[True, False, True])


def test_conv2d_same_even_kernel_pads_on_the_right():
    # torch warns and records ConstantPadNdBackward0 (pad (0, 1, 0, 1)) below the convolution, with padding (0, 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(lambda F, x, w: F.conv2d(x, w, padding="same", groups=2), [arr(*IMG), arr(6, 2, 2, 2)])
    msgs = [str(w.message) for w in caught]
    # torchlike warns every time; torch warns once per process (TORCH_WARN_ONCE), so it may have warned already
    assert sum(m.startswith("Using padding='same' with even kernel lengths and odd dilation") for m in msgs) in (1, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        LF.conv2d(tl.tensor(arr(*IMG)), tl.tensor(arr(6, 2, 2, 2)), padding="same", groups=2)
    assert [str(w.message).startswith("Using padding='same' with even kernel") for w in caught] == [True]


# ----- pooling -----------------------------------------------------------------------------------------------
MAX_POOL = {
    "kernel2_default_stride": (dict(kernel_size=2), IMG),  # _saved_stride () as torch's stride=None
    "ceil_padded": (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), IMG),
    "pairs_dilated_unbatched": (dict(kernel_size=(2, 3), stride=(1, 2), padding=1, dilation=(2, 1)), IMG[1:]),
}


@pytest.mark.parametrize("name", list(MAX_POOL))
def test_max_pool2d(name):
    kw, shape = MAX_POOL[name]
    run(lambda F, x: F.max_pool2d(x, **kw), [arr(*shape)])
    x = arr(*shape)
    out_tl, idx_tl = LF.max_pool2d(tl.tensor(x), return_indices=True, **kw)
    out_th, idx_th = TF.max_pool2d(torch.tensor(x), return_indices=True, **kw)
    assert_same(out_tl, out_th)
    assert_same(idx_tl, idx_th)  # int64 flat indices h * W + w


def test_max_pool2d_ties_and_infinities_pick_torchs_index():
    # ties pick the first maximum in the window; all--inf windows pick a real (not a padding) element; a window
    # with NaNs gives NaN at the last NaN's index
    x = np.round(arr(*IMG)).clip(-1, 1)
    x[0, 0, :3, :3] = -np.inf
    x[1, 0, 0, 0] = x[1, 0, 1, 1] = x[1, 1, 2, 2] = np.nan
    for kw in (MAX_POOL["ceil_padded"][0], dict(kernel_size=2)):
        (a, ia), (b, ib) = (LF.max_pool2d(tl.tensor(x), return_indices=True, **kw),
                            TF.max_pool2d(torch.tensor(x), return_indices=True, **kw))
        assert_same(a, b)
        assert_same(ia, ib)
    x[1] = 0  # no NaN gradients below
    run(lambda F, x: F.max_pool2d(x, 2), [x])  # tied gradients go to the recorded index only


def test_max_pool2d_float32():
    run(lambda F, x: F.max_pool2d(x, **MAX_POOL["ceil_padded"][0]), [arr(*IMG, dtype="float32")])


AVG_POOL = {
    "ceil_exclude_pad": (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), IMG),
    "ceil_include_pad": (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), IMG),
    "divisor_unbatched": (dict(kernel_size=(2, 3), stride=(1, 2), padding=1, divisor_override=5), IMG[1:]),
    "kernel2": (dict(kernel_size=2), IMG),
}


@pytest.mark.parametrize("name", list(AVG_POOL))
def test_avg_pool2d(name):
    kw, shape = AVG_POOL[name]
    run(lambda F, x: F.avg_pool2d(x, **kw), [arr(*shape)])


def test_avg_pool2d_float32_and_integers():
    run(lambda F, x: F.avg_pool2d(x, **AVG_POOL["ceil_exclude_pad"][0]), [arr(*IMG, dtype="float32")])
    x = np.arange(2 * 36).reshape(2, 6, 6) - 30  # integer average truncates toward zero, as torch
    assert_same(LF.avg_pool2d(tl.tensor(x), 3, 2, 1), TF.avg_pool2d(torch.tensor(x), 3, 2, 1))


# ----- layer_norm --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm(dtype):
    x = arr(*IMG, dtype=dtype)
    run(lambda F, x, w, b: F.layer_norm(x, (7, 7), w, b), [x, arr(7, 7, dtype=dtype), arr(7, 7, dtype=dtype)])
    if dtype == "float64":
        run(lambda F, x, w, b: F.layer_norm(x, [7], w, b, eps=0.1), [x, arr(7), arr(7)], rg=[True, True, False])
        run(lambda F, x: F.layer_norm(x, (4, 7, 7)), [x])  # no affine: weight and bias edges are None


# ----- batch_norm --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("training,shape,dtype", [
    (True, IMG, "float64"), (True, (5, 4), "float64"), (True, (3, 4, 2), "float64"), (True, IMG, "float32"),
    (False, IMG, "float64"), (False, (5, 4), "float64"), (False, IMG, "float32")])
def test_batch_norm(training, shape, dtype):
    mean, var = arr(4, dtype=dtype), (RNG.random(4) + 0.5).astype(dtype)
    stats = {lib: (lib.tensor(mean), lib.tensor(var)) for lib in (tl, torch)}

    def fn(F, x, w, b):
        rm, rv = stats[tl if F is LF else torch]
        return F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.3, eps=1e-3)

    run(fn, [arr(*shape, dtype=dtype), arr(4, dtype=dtype), arr(4, dtype=dtype)])
    rtol, atol = TOL[dtype]
    for a, b in zip(stats[tl], stats[torch]):  # updated in place in training, untouched in eval
        assert_same(a, b, rtol, atol)
        assert a._version == b._version == 0  # torch's kernel writes them without a version bump


def test_batch_norm_without_running_stats_or_affine():
    run(lambda F, x: F.batch_norm(x, None, None, training=True), [arr(*IMG)])
    run(lambda F, x, w: F.batch_norm(x, None, None, w, training=True), [arr(*IMG), arr(4)])


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_argument_checks_in_torchs_order(training):
    """torch checks running_mean's size (in evaluation, that it is given), running_var's, weight's, bias's, then that
    the running statistics are both given or neither: the first check that fails names the error."""
    x = arr(*IMG)
    for sizes in itertools.product((None, 4, 3), repeat=4):
        outcome = []
        for lib, F in ((tl, LF), (torch, TF)):
            rm, rv, w, b = (None if n is None else lib.tensor(np.ones(n)) for n in sizes)
            outcome.append(_err(lambda: F.batch_norm(lib.tensor(x), rm, rv, w, b, training=training)))
        assert outcome[0] == outcome[1], sizes


@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"track_running_stats": False},
                                {"affine": False, "track_running_stats": False}])
def test_batch_norm_module_of_another_width_as_torch(kw):
    for training in (True, False):
        mine, th = BatchNorm2d(3, **kw).train(training), tnn.BatchNorm2d(3, **kw).train(training)
        assert _err(lambda: mine(tl.zeros(IMG))) == _err(lambda: th(torch.zeros(IMG)))


@pytest.mark.parametrize("training", [False, True])
def test_batch_norm_of_an_empty_input_as_torch(training):
    """torch returns an empty input at once, as a clone times weight[0] plus bias[0] (graph too): no argument is
    checked, the running statistics are left as they are."""
    mean, var = arr(2), arr(5)
    stats = {lib: (lib.tensor(mean), lib.tensor(var)) for lib in (tl, torch)}

    def fn(F, x, w, b):
        rm, rv = stats[tl if F is LF else torch]
        return F.batch_norm(x, rm, rv, w, b, training=training)

    run(fn, [np.zeros((0,) + IMG[1:]), arr(3), arr(6)])
    for a, b in zip(stats[tl], stats[torch]):
        assert_same(a, b)
    for shape, weight in (((2, 0, 3), 0), ((4,), None)):  # (an empty weight has no [0]; a 1-d input no dim 1)
        def case(lib, F):
            return F.batch_norm(lib.zeros(shape), None, None, None if weight is None else lib.zeros(weight),
                                training=True)
        assert _err(lambda: case(tl, LF)) == _err(lambda: case(torch, TF))


# ----- embedding ---------------------------------------------------------------------------------------------
INDICES = np.array([[1, 2, 0], [4, 1, 1]])


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"padding_idx": -4}, {"scale_grad_by_freq": True}],
                         ids=["plain", "padding_idx", "negative_padding_idx", "scale_grad_by_freq"])
def test_embedding(kw):
    out_tl, _ = run(lambda F, w: F.embedding(_t(tl if F is LF else torch, INDICES, False), w, **kw), [arr(5, 3)])
    if "padding_idx" in kw:  # the padding row gets no gradient, though it was looked up
        row = kw["padding_idx"] % 5
        leaf = out_tl.grad_fn.next_functions[0][0].variable
        assert not np.asarray(leaf.grad._data)[row].any() and (INDICES == row).any()


def test_embedding_max_norm_renormalises_weight_in_place():
    w = arr(5, 3) * 3
    a, b = tl.tensor(w), torch.tensor(w)
    idx = INDICES[:1]
    assert_same(LF.embedding(tl.tensor(idx), a, max_norm=1.0), TF.embedding(torch.tensor(idx), b, max_norm=1.0))
    assert_same(a, b)  # looked-up rows scaled to norm 1, the others (row 3, 4) untouched
    assert a._version == b._version == 1


def test_embedding_float32():
    run(lambda F, w: F.embedding(_t(tl if F is LF else torch, INDICES, False), w, padding_idx=0),
        [arr(5, 3, dtype="float32")])


# ----- scaled_dot_product_attention --------------------------------------------------------------------------
B, H, L, S, E = 2, 3, 4, 6, 5
BOOL_MASK = RNG.random((B, 1, L, S)) > 0.3
BOOL_MASK[0, 0, 1] = False  # a fully masked row: output 0, logsumexp 0, gradient 0
FLASH = {
    "plain": {},
    "causal": {"is_causal": True},  # top-left aligned tril(L, S)
    "scale": {"scale": 0.3},
    "negative_scale": {"scale": -0.4},
    "float_mask": {"attn_mask": arr(L, S)},
    "bool_mask": {"attn_mask": BOOL_MASK},
    "float32_mask_for_float64": {"attn_mask": arr(1, H, L, S, dtype="float32")},
}


def _kw(lib, kw):
    return {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}


@pytest.mark.parametrize("name", list(FLASH))
def test_sdpa_flash_node(name):
    # 4-D inputs without dropout: one ScaledDotProductFlashAttentionForCpuBackward0 node, as torch on CPU
    kw = FLASH[name]
    out, _ = run(lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, **_kw(tl if F is LF else torch, kw)),
                 [arr(B, H, L, E), arr(B, H, S, E), arr(B, H, S, E)])
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"


def test_sdpa_flash_grouped_query_and_float32():
    run(lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
        [arr(B, H, L, E), arr(B, 1, S, E), arr(B, 1, S, E)])
    run(lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=_kw(tl if F is LF else torch,
                                                                                 {"m": BOOL_MASK})["m"]),
        [arr(B, H, L, E, dtype="float32"), arr(B, H, S, E, dtype="float32"), arr(B, H, S, E, dtype="float32")])


def _names(t):
    out, todo, seen = set(), [t.grad_fn], set()
    while todo:
        n = todo.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.add(n.name())
        todo.extend(m for m, _ in n.next_functions)
    return out


MATH = {  # torch's math path: 3-D inputs, value head size != E, a mask that requires grad, 2-D inputs
    "3d": ([(B, L, E), (B, S, E), (B, S, E)], {}),
    "3d_causal_neg_scale": ([(B, L, E), (B, S, E), (B, S, 3)], {"is_causal": True, "scale": -0.5}),
    "value_dim": ([(B, H, L, E), (B, H, S, E), (B, H, S, 3)], {"attn_mask": BOOL_MASK}),
    "2d": ([(L, E), (S, E), (S, E)], {}),
}


@pytest.mark.parametrize("name", list(MATH))
def test_sdpa_math_path(name):
    shapes, kw = MATH[name]
    out_tl, out_th = run(
        lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, **_kw(tl if F is LF else torch, kw)),
        [arr(*s) for s in shapes], full_graph=False)
    # torchlike's matmul is one node where torch's is expand/view/bmm/view; the rest of the chain is torch's
    folded = {"BmmBackward0", "ViewBackward0", "ExpandBackward0", "ReshapeAliasBackward0"}
    assert _names(out_tl) - folded == _names(out_th) - folded


def test_sdpa_math_path_mask_requires_grad():
    run(lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m),
        [arr(B, L, E), arr(B, S, E), arr(B, S, E), arr(L, S)], full_graph=False)


def test_sdpa_dropout_drops_and_rescales_attention_weights():
    # with value = I, the output is the (dropped) attention matrix itself: each entry 0 or weight / (1 - p)
    q, k, eye = arr(B, L, E), arr(B, S, E), np.broadcast_to(np.eye(S), (B, S, S)).copy()
    args = [tl.tensor(q, requires_grad=True), tl.tensor(k), tl.tensor(eye)]
    p = 0.5
    full = np.asarray(LF.scaled_dot_product_attention(*args)._data)
    out = LF.scaled_dot_product_attention(*args, dropout_p=p)
    got = np.asarray(out._data)
    dropped = got == 0
    np.testing.assert_allclose(got[~dropped], full[~dropped] / (1 - p), rtol=1e-12)
    assert 0.25 < dropped.mean() < 0.75  # 48 entries, p = 0.5
    assert "MulBackward0" in _names(out)
    out.sum().backward()
    assert np.isfinite(np.asarray(args[0].grad._data)).all()


# ----- higher order and forward mode ----------------------------------------------------------------------
def _double_backward(fn_tl, fn_th, arrays):
    """Gradient of sum(grad(sum(out ** 2)) ** 2) w.r.t. every input (the backward formulas differentiated)."""
    a = [tl.tensor(x, requires_grad=True) for x in arrays]
    b = [torch.tensor(x, requires_grad=True) for x in arrays]
    ga = tl.autograd.grad((fn_tl(*a) ** 2).sum(), a, create_graph=True)
    gb = torch.autograd.grad((fn_th(*b) ** 2).sum(), b, create_graph=True)
    for x, y in zip(tl.autograd.grad(sum((g ** 2).sum() for g in ga), a),
                    torch.autograd.grad(sum((g ** 2).sum() for g in gb), b)):
        assert_same(x, y, 1e-8, 1e-10)


def test_double_backward():  # the hand-written backward formulas (conv2d's is jax.vjp, differentiable as is)
    kw = MAX_POOL["ceil_padded"][0]
    _double_backward(lambda x: LF.max_pool2d(x, **kw), lambda x: TF.max_pool2d(x, **kw), [arr(*IMG)])
    # mean / rstd (save_mean / save_invstd) are node outputs: their gradients flow through the formulas too
    _double_backward(lambda x, w, b: LF.layer_norm(x, (7,), w, b), lambda x, w, b: TF.layer_norm(x, (7,), w, b),
                     [arr(*IMG), arr(7), arr(7)])
    _double_backward(lambda x, w, b: LF.batch_norm(x, None, None, w, b, training=True),
                     lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True), [arr(*IMG), arr(4), arr(4)])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.nn.attention's import-time torch.jit.script
def test_double_backward_sdpa_flash():
    # torch has no double backward for its CPU flash kernel: compare with its math path
    from torch.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel(SDPBackend.MATH):
        _double_backward(lambda q, k, v: LF.scaled_dot_product_attention(q, k, v, is_causal=True),
                         lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, is_causal=True),
                         [arr(B, H, L, E), arr(B, H, S, E), arr(B, H, S, E)])


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch's lazy torch.jit.script on first forward AD
def test_forward_mode():
    import torch.autograd.forward_ad as fwt
    import torchlike.autograd.forward_ad as fwl
    x, t, w = arr(*IMG), arr(*IMG), arr(*W_CONV)
    tangents = []
    for lib, F, fw in ((tl, LF, fwl), (torch, TF, fwt)):
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(t))
            out = F.layer_norm(F.max_pool2d(F.conv2d(d, lib.tensor(w), stride=2, padding=1, groups=2), 2), [2])
            tangents.append(fw.unpack_dual(out).tangent)
    assert_same(*tangents, 1e-8, 1e-10)


# ----- functional errors -------------------------------------------------------------------------------------
def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).split(" (Triggered internally")[0]
    return None


ERRORS = {
    "conv_channels": lambda F, lib: F.conv2d(lib.zeros(2, 3, 7, 7), lib.zeros(6, 2, 3, 3), groups=2),
    "conv_groups": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3)),
    "conv_dims": lambda F, lib: F.conv2d(lib.zeros(7, 7), lib.zeros(6, 2, 3, 3)),
    "conv_dtype": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3, dtype=lib.float64), groups=2),
    "conv_dtype64": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7, dtype=lib.float64), lib.zeros(6, 2, 3, 3),
                                            groups=2),
    "conv_divisible": lambda F, lib: F.conv2d(lib.zeros(2, 8, 7, 7), lib.zeros(6, 2, 3, 3), groups=4),
    "conv_bias_dtype_first": lambda F, lib: F.conv2d(lib.zeros(2, 3, 7, 7), lib.zeros(6, 2, 3, 3), lib.zeros(
        6, dtype=lib.float64), padding=-1),
    "conv_bias_dtype": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), lib.zeros(
        6, dtype=lib.float64), groups=2),
    "conv_bias_size": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), lib.zeros(5), groups=2),
    "conv_padding_string": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), padding="full"),
    "conv_same_strided": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), padding="same",
                                                 stride=2),
    "conv_stride": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), stride=0, groups=2),
    "conv_stride_len": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), stride=(1, 2, 3)),
    "conv_negative_pad": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), padding=-1),
    "conv_dilation_after_channels": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3),
                                                            dilation=0),
    "conv_dilation": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7), lib.zeros(6, 2, 3, 3), dilation=0, groups=2),
    "conv_dilation64": lambda F, lib: F.conv2d(lib.zeros(2, 4, 7, 7, dtype=lib.float64), lib.zeros(
        6, 2, 3, 3, dtype=lib.float64), dilation=(1, 0), groups=2),
    "conv_kernel_too_big": lambda F, lib: F.conv2d(lib.zeros(2, 4, 2, 2), lib.zeros(6, 2, 3, 3), groups=2),
    "max_pad": lambda F, lib: F.max_pool2d(lib.zeros(2, 4, 7, 7), 3, padding=2),
    "max_stride0": lambda F, lib: F.max_pool2d(lib.zeros(2, 4, 7, 7), 3, stride=0),
    "max_dims": lambda F, lib: F.max_pool2d(lib.zeros(7), 3),
    "max_too_small": lambda F, lib: F.max_pool2d(lib.zeros(2, 4, 7, 7), 8),
    "max_kernel_len": lambda F, lib: F.max_pool2d(lib.zeros(2, 4, 7, 7), (2, 2, 2)),
    "max_dilation": lambda F, lib: F.max_pool2d(lib.zeros(2, 4, 7, 7), 2, dilation=0),
    "max_empty": lambda F, lib: F.max_pool2d(lib.zeros(2, 4, 0, 7), 2),
    "avg_pad": lambda F, lib: F.avg_pool2d(lib.zeros(2, 4, 7, 7), 3, padding=2),
    "avg_divisor": lambda F, lib: F.avg_pool2d(lib.zeros(2, 4, 7, 7), 2, divisor_override=0),
    "avg_padding_len": lambda F, lib: F.avg_pool2d(lib.zeros(2, 4, 7, 7), 2, padding=(1, 1, 1)),
    "avg_dims": lambda F, lib: F.avg_pool2d(lib.zeros(7), 2),
    "ln_shape": lambda F, lib: F.layer_norm(lib.zeros(2, 4, 7, 7), (5,)),
    "ln_weight": lambda F, lib: F.layer_norm(lib.zeros(2, 4, 7, 7), (7,), lib.ones(5)),
    "ln_int_shape": lambda F, lib: F.layer_norm(lib.zeros(2, 4, 7, 7), 7),
    "ln_dtype": lambda F, lib: F.layer_norm(lib.zeros(2, 4, 7, 7), (7,), lib.ones(7, dtype=lib.float64)),
    "ln_dtype64": lambda F, lib: F.layer_norm(lib.zeros(2, 7, dtype=lib.float64), (7,), None, lib.ones(7)),
    "bn_eval_no_stats": lambda F, lib: F.batch_norm(lib.zeros(2, 4), None, None, training=False),
    "bn_one_stat": lambda F, lib: F.batch_norm(lib.zeros(2, 4), lib.zeros(4), None, training=True),
    "bn_one_value": lambda F, lib: F.batch_norm(lib.zeros(1, 4, 1, 1), lib.zeros(4), lib.ones(4), training=True),
    "bn_stat_size": lambda F, lib: F.batch_norm(lib.zeros(2, 3), lib.zeros(4), lib.ones(4), training=True),
    "bn_weight_size": lambda F, lib: F.batch_norm(lib.zeros(2, 4), None, None, lib.ones(3), training=True),
    "bn_dtype": lambda F, lib: F.batch_norm(lib.zeros(2, 4), lib.zeros(4, dtype=lib.float64),
                                            lib.ones(4, dtype=lib.float64), training=True),
    "bn_dtype64": lambda F, lib: F.batch_norm(lib.zeros(2, 4, dtype=lib.float64), lib.zeros(4), lib.ones(4)),
    "bn_dtype_stats_only": lambda F, lib: F.batch_norm(lib.zeros(2, 4), lib.zeros(4, dtype=lib.float64),
                                                       lib.ones(4, dtype=lib.float64), lib.ones(4), training=True),
    "bn_momentum_none": lambda F, lib: F.batch_norm(lib.zeros(2, 4), None, None, training=True, momentum=None),
    "emb_range": lambda F, lib: F.embedding(lib.tensor([5]), lib.zeros(5, 3)),
    "emb_negative": lambda F, lib: F.embedding(lib.tensor([-1]), lib.zeros(5, 3)),
    "emb_float_index": lambda F, lib: F.embedding(lib.tensor([1.0]), lib.zeros(5, 3)),
    "emb_padding_idx": lambda F, lib: F.embedding(lib.tensor([1]), lib.zeros(5, 3), padding_idx=5),
    "emb_weight_dims": lambda F, lib: F.embedding(lib.tensor([1]), lib.zeros(5)),
    "sdpa_dtypes": lambda F, lib: F.scaled_dot_product_attention(lib.zeros(1, 2, 3), lib.zeros(
        1, 2, 3, dtype=lib.float64), lib.zeros(1, 2, 3)),
    "sdpa_mask_dtype": lambda F, lib: F.scaled_dot_product_attention(
        lib.zeros(1, 2, 3), lib.zeros(1, 2, 3), lib.zeros(1, 2, 3), attn_mask=lib.zeros(2, 2, dtype=lib.int64)),
    "sdpa_mask_float64_for_float32": lambda F, lib: F.scaled_dot_product_attention(
        lib.zeros(1, 2, 3), lib.zeros(1, 2, 3), lib.zeros(1, 2, 3), attn_mask=lib.zeros(2, 2, dtype=lib.float64)),
    "sdpa_mask_and_causal": lambda F, lib: F.scaled_dot_product_attention(
        lib.zeros(1, 2, 3), lib.zeros(1, 2, 3), lib.zeros(1, 2, 3), attn_mask=lib.zeros(2, 2), is_causal=True),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_functional_errors(name):
    expected = _err(lambda: ERRORS[name](TF, torch))
    assert expected is not None
    assert _err(lambda: ERRORS[name](LF, tl)) == expected


# ----- modules -----------------------------------------------------------------------------------------------
def twin(tl_cls, th_cls, *args, dtype="float64", **kw):
    """The torch module and a torchlike one with the same parameters and buffers (copied through NumPy)."""
    th = th_cls(*args, dtype=getattr(torch, dtype), **kw)
    mine = tl_cls(*args, dtype=getattr(tl, dtype), **kw)
    mine.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in th.state_dict().items()})
    return mine, th


def run_module(mine, th, arrays, rg=None, call=None, dtype="float64"):
    """Outputs (all of a tuple) and the gradients of every parameter and input, for random cotangents."""
    rg = rg if rg is not None else [True] * len(arrays)
    tl_in = [_t(tl, a, r) for a, r in zip(arrays, rg)]
    th_in = [_t(torch, a, r) for a, r in zip(arrays, rg)]
    call = call or (lambda m, *xs: m(*xs))
    out_tl, out_th = call(mine, *tl_in), call(th, *th_in)
    out_tl = out_tl if isinstance(out_tl, tuple) else (out_tl,)
    out_th = out_th if isinstance(out_th, tuple) else (out_th,)
    rtol, atol = TOL[dtype]
    assert_same(out_tl, out_th, rtol, atol)
    pairs = [(a, b) for a, b in zip(out_tl, out_th) if b is not None and b.requires_grad]
    cots = [RNG.standard_normal(b.shape).astype(dtype) for _, b in pairs]
    tl.autograd.backward([a for a, _ in pairs], [tl.tensor(c) for c in cots])
    torch.autograd.backward([b for _, b in pairs], [torch.tensor(c) for c in cots])
    names = [n for n, _ in th.named_parameters()]
    assert [n for n, _ in mine.named_parameters()] == names
    for (n, p), q in zip(mine.named_parameters(), th.parameters()):
        assert_same(p.grad, q.grad, rtol, atol)
    for a, b in zip(tl_in, th_in):
        assert_same(a.grad, b.grad, rtol, atol)
    return out_tl, out_th


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_module(dtype):
    mine, th = twin(Conv2d, tnn.Conv2d, 4, 6, 3, stride=2, padding=1, groups=2, dtype=dtype)
    out, _ = run_module(mine, th, [arr(*IMG, dtype=dtype)], dtype=dtype)
    assert out[0].grad_fn.name() == "ConvolutionBackward0"
    assert repr(mine) == repr(th)


@pytest.mark.parametrize("padding_mode", ["reflect", "replicate", "circular"])
def test_conv2d_module_padding_modes(padding_mode):
    mine, th = twin(Conv2d, tnn.Conv2d, 4, 6, 3, padding=(1, 2), groups=2, bias=False, padding_mode=padding_mode)
    run_module(mine, th, [arr(*IMG)])
    assert repr(mine) == repr(th)
    if padding_mode != "circular":  # ReflectionPad2DBackward0 / ReplicationPad2DBackward0 (torch's circular pad is
        x = arr(*IMG)                  # CopySlices; here slices and cat)
        node = mine(tl.tensor(x, requires_grad=True)).grad_fn.next_functions[0][0]
        compare_graph(node, th(torch.tensor(x, requires_grad=True)).grad_fn.next_functions[0][0])


def test_conv2d_module_same_and_checks():
    mine, th = twin(Conv2d, tnn.Conv2d, 4, 6, 2, padding="same", dilation=1, groups=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_module(mine, th, [arr(*IMG)])
    assert repr(mine) == repr(th)
    for kw in ({"groups": 0}, {"groups": 3}, {"padding": "full"}, {"padding": "same", "stride": 2},
               {"padding_mode": "mirror"}):
        mine, ref = _err(lambda: Conv2d(4, 6, 3, **kw)), _err(lambda: tnn.Conv2d(4, 6, 3, **kw))
        if "{" in ref[1]:  # the message shows a set literal, whose order depends on string hashing
            mine, ref = (mine[0], sorted(mine[1])), (ref[0], sorted(ref[1]))
        assert mine == ref


def test_pooling_modules():
    for cls_tl, cls_th, kw in ((MaxPool2d, tnn.MaxPool2d, MAX_POOL["ceil_padded"][0]),
                               (AvgPool2d, tnn.AvgPool2d, AVG_POOL["ceil_exclude_pad"][0]),
                               (AvgPool2d, tnn.AvgPool2d, {"kernel_size": 2})):
        mine, th = cls_tl(**kw), cls_th(**kw)
        assert repr(mine) == repr(th)
        run_module(mine, th, [arr(*IMG)])
    mine, th = MaxPool2d(2, return_indices=True), tnn.MaxPool2d(2, return_indices=True)
    run_module(mine, th, [arr(*IMG)])  # (values, indices); the module's stride is the kernel size: (2, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_module(dtype):
    for kw in ({}, {"elementwise_affine": False}, {"bias": False, "eps": 0.1}):
        mine, th = twin(LayerNorm, tnn.LayerNorm, [7, 7], dtype=dtype, **kw)
        for p, q in zip(mine.parameters(), th.parameters()):  # perturb torch's ones/zeros so grads are generic
            with torch.no_grad():
                q.add_(torch.tensor(arr(*q.shape, dtype=dtype)))
            p.data = tl.tensor(q.detach().numpy())
        run_module(mine, th, [arr(*IMG, dtype=dtype)], dtype=dtype)
        assert repr(mine) == repr(th)
        if dtype == "float32":
            break


@pytest.mark.parametrize("momentum,kind,shape,dtype", [
    (0.1, "2d", IMG, "float64"), (0.1, "1d", (5, 4), "float64"), (0.1, "1d", (3, 4, 2), "float64"),
    (None, "2d", IMG, "float64"), (None, "1d", (5, 4), "float64"), (0.1, "2d", IMG, "float32")])
def test_batch_norm_module_training_then_eval(momentum, kind, shape, dtype):
    """momentum None: the cumulative average 1 / num_batches_tracked."""
    cls_tl, cls_th = (BatchNorm2d, tnn.BatchNorm2d) if kind == "2d" else (BatchNorm1d, tnn.BatchNorm1d)
    mine, th = twin(cls_tl, cls_th, 4, momentum=momentum, dtype=dtype)
    rtol, atol = TOL[dtype]
    for step in range(3):  # running statistics after each training step
        x = arr(*shape, dtype=dtype) * (step + 1) + step
        run_module(mine, th, [x], dtype=dtype)
        for name, buf in th.named_buffers():
            assert_same(getattr(mine, name), buf, rtol, atol)
    assert int(mine.num_batches_tracked) == 3
    mine.eval(), th.eval()
    out, _ = run_module(mine, th, [arr(*shape, dtype=dtype)], dtype=dtype)  # normalised by the running stats
    assert out[0].grad_fn._saved_training is False
    assert int(mine.num_batches_tracked) == 3
    assert repr(mine) == repr(th)


def test_batch_norm_module_options():
    for kw in ({"track_running_stats": False}, {"affine": False}, {"bias": False, "eps": 1e-3}):
        mine, th = twin(BatchNorm2d, tnn.BatchNorm2d, 4, **kw)
        assert list(mine.state_dict()) == list(th.state_dict())
        run_module(mine, th, [arr(*IMG)])
        mine.eval(), th.eval()  # without running stats, eval still uses the batch's
        run_module(mine, th, [arr(*IMG)])
        assert repr(mine) == repr(th)
    mine = BatchNorm2d(4)
    assert _err(lambda: mine(tl.zeros(2, 4))) == _err(lambda: tnn.BatchNorm2d(4)(torch.zeros(2, 4)))
    assert _err(lambda: BatchNorm1d(4)(tl.zeros(2, 4, 3, 3))) == _err(
        lambda: tnn.BatchNorm1d(4)(torch.zeros(2, 4, 3, 3)))


def test_batch_norm_module_state_dict_round_trip():
    mine, th = twin(BatchNorm2d, tnn.BatchNorm2d, 4)
    run_module(mine, th, [arr(*IMG)])
    back = th.__class__(4, dtype=torch.float64)
    back.load_state_dict({k: torch.tensor(np.asarray(v._data)) for k, v in mine.state_dict().items()})
    for (k, a), (k2, b) in zip(back.state_dict().items(), th.state_dict().items()):
        assert k == k2
        assert_same(a, b)
    assert mine.state_dict()["num_batches_tracked"].dtype == tl.int64


def test_embedding_module():
    mine, th = twin(Embedding, tnn.Embedding, 5, 3, padding_idx=1)
    run_module(mine, th, [INDICES], rg=[False])
    assert not np.asarray(mine.weight.grad._data)[1].any()
    assert repr(mine) == repr(th)
    fresh = Embedding(5, 3, padding_idx=-1)
    assert fresh.padding_idx == 4 and not np.asarray(fresh.weight._data)[4].any()
    for kw in ({"padding_idx": 5}, {"padding_idx": -6}):
        assert _err(lambda: Embedding(5, 3, **kw)) == _err(lambda: tnn.Embedding(5, 3, **kw))


def test_embedding_from_pretrained():
    w = arr(5, 3)
    frozen = Embedding.from_pretrained(tl.tensor(w))
    assert not frozen.weight.requires_grad
    assert_same(frozen(tl.tensor(INDICES)), tnn.Embedding.from_pretrained(torch.tensor(w))(torch.tensor(INDICES)))
    mine = Embedding.from_pretrained(tl.tensor(w), freeze=False, padding_idx=2)
    th = tnn.Embedding.from_pretrained(torch.tensor(w), freeze=False, padding_idx=2)
    run_module(mine, th, [INDICES], rg=[False])
    assert repr(mine) == repr(th)
    assert _err(lambda: Embedding.from_pretrained(tl.zeros(5))) == _err(
        lambda: tnn.Embedding.from_pretrained(torch.zeros(5)))


# ----- MultiheadAttention ------------------------------------------------------------------------------------
EMB, HEADS, NB = 6, 2, 2  # embed_dim, num_heads, batch
KPM = np.array([[False, False, True, False, False, True], [False] * 6])  # key_padding_mask (N, S)
CAUSAL = np.triu(np.ones((L, S), bool), 1)


def _mha_call(inputs_mode, **fkw):
    """m(q, k, v, **fkw) with NumPy masks made tensors of m's library; inputs "self" (q, q, q), "kv" (q, k, k)."""
    def call(m, q, k=None, v=None):
        lib = tl if isinstance(m, MultiheadAttention) else torch
        kw = {n: (lib.tensor(a) if isinstance(a, np.ndarray) else a) for n, a in fkw.items()}
        if inputs_mode == "self":
            return m(q, q, q, **kw)
        if inputs_mode == "kv":
            return m(q, k, k, **kw)
        return m(q, k, v, **kw)
    return call


MHA = {
    # name: (constructor kwargs, input shapes, inputs mode, forward kwargs)
    "self_weights_masks": ({}, [(L, NB, EMB)], "self", {"attn_mask": np.triu(np.ones((L, L), bool), 1),
                                                        "key_padding_mask": KPM[:, :L]}),
    "unbatched_kv_per_head_weights": ({}, [(L, EMB), (S, EMB)], "kv",
                                      {"key_padding_mask": KPM[0], "average_attn_weights": False}),
    "batch_first_no_weights_causal": ({"batch_first": True}, [(NB, L, EMB), (NB, S, EMB), (NB, S, EMB)], "qkv",
                                      {"need_weights": False, "attn_mask": CAUSAL, "is_causal": True}),
    "kdim_vdim_nobias_bias_kv": ({"kdim": 4, "vdim": 3, "bias": False, "add_bias_kv": True},
                                 [(L, NB, EMB), (S, NB, 4), (S, NB, 3)], "qkv",
                                 {"attn_mask": arr(L, S), "key_padding_mask": KPM}),
    "no_weights_float_mask_3d_zero_attn": ({"add_zero_attn": True}, [(L, NB, EMB), (S, NB, EMB), (S, NB, EMB)],
                                           "qkv", {"need_weights": False, "attn_mask": arr(NB * HEADS, L, S)}),
}


@pytest.mark.parametrize("name", list(MHA))
def test_multihead_attention(name):
    ctor, shapes, mode, fkw = MHA[name]
    mine, th = twin(MultiheadAttention, tnn.MultiheadAttention, EMB, HEADS, **ctor)
    with torch.no_grad():  # non-zero biases, so their gradients and effects are generic
        for n, p in th.named_parameters():
            if "bias" in n:
                p.copy_(torch.tensor(arr(*p.shape)))
    mine.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in th.state_dict().items()})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out, ref = run_module(mine, th, [arr(*s) for s in shapes], call=_mha_call(mode, **fkw))
    assert (out[1] is None) == (ref[1] is None)  # attention weights compared by run_module when present
    # a bool key_padding_mask with a float attn_mask: torch's deprecation warning, from both libraries
    mixed = [w.filename for w in caught if "Support for mismatched key_padding_mask" in str(w.message)]
    assert len(mixed) == (2 if name == "kdim_vdim_nobias_bias_kv" else 0), mixed
    assert repr(mine) == repr(th)


def test_multihead_attention_float32_and_eval():
    mine, th = twin(MultiheadAttention, tnn.MultiheadAttention, EMB, HEADS, dropout=0.5, batch_first=True,
                    dtype="float32")
    mine.eval(), th.eval()  # no dropout in eval mode
    run_module(mine, th, [arr(NB, L, EMB, dtype="float32")], call=_mha_call("self", need_weights=False),
               dtype="float32")


def test_multihead_attention_checks():
    assert _err(lambda: MultiheadAttention(6, 4)) == _err(lambda: tnn.MultiheadAttention(6, 4))
    assert _err(lambda: MultiheadAttention(0, 2)) == _err(lambda: tnn.MultiheadAttention(0, 2))
    mine, th = twin(MultiheadAttention, tnn.MultiheadAttention, EMB, HEADS)
    for args in ([(L, NB, EMB), (S, EMB), (S, EMB)], [(L, NB, EMB), (S, NB, EMB), (S, NB, EMB), (L, L)],
                 [(L, NB, EMB), (S, NB, EMB), (S, NB, EMB), None, (NB, S - 1)]):
        shapes, masks = args[:3], args[3:]

        def call(m, lib):
            q, k, v = (lib.zeros(*s, dtype=lib.float64) for s in shapes)
            am = lib.zeros(*masks[0], dtype=lib.float64) if masks and masks[0] else None
            kpm = lib.zeros(*masks[1], dtype=lib.bool) if len(masks) > 1 else None
            return m(q, k, v, attn_mask=am, key_padding_mask=kpm)
        assert _err(lambda: call(mine, tl)) == _err(lambda: call(th, torch)) is not None
    x = tl.zeros(L, NB, EMB, dtype=tl.float64)
    assert _err(lambda: mine(x, x, x, is_causal=True)) == _err(
        lambda: th(*(torch.zeros(L, NB, EMB, dtype=torch.float64),) * 3, is_causal=True))


# ----- default initialisation --------------------------------------------------------------------------------
def _bounded_uniform(t, bound):
    a = np.asarray(t._data).ravel()
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound
    assert abs(a.std() - bound / np.sqrt(3)) < 0.06 * bound  # uniform(-b, b) has std b / sqrt(3)


def test_default_initialisations():
    conv = Conv2d(16, 32, 3)  # kaiming_uniform_(a=sqrt(5)): bound 1/sqrt(fan_in); bias uniform in the same bound
    _bounded_uniform(conv.weight, 1 / np.sqrt(16 * 9))
    assert np.abs(np.asarray(conv.bias._data)).max() <= 1 / np.sqrt(16 * 9)
    emb = Embedding(1000, 8)  # normal_(0, 1)
    w = np.asarray(emb.weight._data)
    assert abs(w.mean()) < 0.05 and abs(w.std() - 1) < 0.05
    for m in (LayerNorm([7, 7], dtype=tl.float64), BatchNorm2d(4, dtype=tl.float64)):  # ones / zeros
        assert (np.asarray(m.weight._data) == 1).all() and (np.asarray(m.bias._data) == 0).all()
    bn = BatchNorm1d(4, dtype=tl.float64)  # running stats 0 / 1
    assert (np.asarray(bn.running_mean._data) == 0).all() and (np.asarray(bn.running_var._data) == 1).all()
    # xavier_uniform_ in_proj (bound sqrt(6 / (fan_in + fan_out))), zero biases, kaiming-uniform out_proj
    mha = MultiheadAttention(EMB, HEADS, add_bias_kv=True, dtype=tl.float64)  # the shapes the tests above drew
    w = np.asarray(mha.in_proj_weight._data)
    assert np.abs(w).max() <= np.sqrt(6 / (EMB + 3 * EMB)) and w.std() > 0.2 * np.sqrt(6 / (EMB + 3 * EMB))
    assert not np.asarray(mha.in_proj_bias._data).any() and not np.asarray(mha.out_proj.bias._data).any()
    assert np.abs(np.asarray(mha.out_proj.weight._data)).max() <= 1 / np.sqrt(EMB)
    assert np.asarray(mha.bias_k._data).std() > 0 and np.asarray(mha.bias_v._data).std() > 0  # xavier_normal_


def test_flatten_and_unflatten_modules_as_torchs():
    x = np.arange(24.0).reshape(2, 3, 4)
    for make in (lambda m: m.nn.Flatten(), lambda m: m.nn.Flatten(0, 1), lambda m: m.nn.Unflatten(2, (2, 2)),
                 lambda m: m.nn.Sequential(m.nn.Flatten(), m.nn.Unflatten(1, [3, 4]))):
        outs = []
        for m in (torch, tl):
            mod = make(m)
            t = m.tensor(x, requires_grad=True)
            y = mod(t)
            y.sum().backward()
            outs.append((repr(mod), tuple(y.shape), y.grad_fn.name(), y.detach().numpy(), t.grad.numpy()))
        assert outs[0][:3] == outs[1][:3]
        np.testing.assert_array_equal(outs[0][3], outs[1][3])
        np.testing.assert_array_equal(outs[0][4], outs[1][4])
    for bad in ((1, [2.0]), (1, 6)):
        errs = []
        for m in (torch, tl):
            try:
                m.nn.Unflatten(*bad)
            except TypeError as e:
                errs.append(str(e))
        assert len(errs) == 2 and errs[0] == errs[1]


def test_transformer_encoder_zeroes_padding_as_torchs_fast_path():
    """In eval without gradients, with a left-aligned padding mask, torch's TransformerEncoder runs nested tensors
    and pads its output with zeros (then its norm); otherwise (training, gradients, a mask not left-aligned, the
    fast path switched off) the padded positions keep their values. Same inputs and weights in both libraries."""
    import torch
    rng = np.random.default_rng(0)
    weights = None
    x_np = rng.standard_normal((2, 3, 4)).astype(np.float32)
    runs = ((False, [[False, False, True], [False, True, True]], False),
            (False, [[False, True, False], [False, False, False]], False),
            (True, [[False, False, True], [False, True, True]], False),
            (False, [[False, False, True], [False, True, True]], True))
    seen = []
    for m in (tl, torch):
        layer = m.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True, dropout=0.0)
        weights = weights or [rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3 for p in layer.parameters()]
        with m.no_grad():
            for p, w in zip(layer.parameters(), weights):
                p.copy_(m.tensor(w))
        out = []
        for norm in (None, m.nn.LayerNorm(4)):
            enc = m.nn.TransformerEncoder(layer, 2, norm=norm, enable_nested_tensor=True)
            for train, mask, grad in runs:
                enc.train(train)
                with m.enable_grad() if grad else m.no_grad():
                    out.append(enc(m.tensor(x_np), src_key_padding_mask=m.tensor(mask)).detach().numpy())
        m.backends.mha.set_fastpath_enabled(False)
        enc.eval()
        with m.no_grad():
            out.append(enc(m.tensor(x_np), src_key_padding_mask=m.tensor(runs[0][1])).numpy())
        m.backends.mha.set_fastpath_enabled(True)
        seen.append(out)
    for a, b in zip(*seen):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert (seen[0][0][1, 1:] == 0).all() and (seen[0][-1][1, 1:] != 0).all()

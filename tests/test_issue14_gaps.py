"""Issue 14's remaining gaps against torch 2.13 on the same NumPy inputs: the saved attributes (``_saved_*`` names
and values) of the Upsample*, Im2Col/Col2Im, NativeGroupNorm, GridSampler, EmbeddingBag and CtcLoss nodes with
their gradients, torch.special and the top-level conv / pixel_shuffle names bound through the argument guard,
adaptive_max_pool3d, linalg.ldl_factor / ldl_factor_ex / ldl_solve, and view_as_real / view_as_complex views."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, assert_same_error, compare_graph

RNG = np.random.default_rng(1414)
X3 = RNG.standard_normal((1, 2, 4)).astype(np.float32)
X4 = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
X5 = RNG.standard_normal((1, 2, 3, 3, 3)).astype(np.float32)
W = RNG.standard_normal((10, 3)).astype(np.float32)
IDX = np.array([1, 2, 4, 5, 7])
LP = np.log(RNG.dirichlet(np.ones(4), (5, 2))).astype(np.float32)


def _f(m):
    return m.nn.functional


def _i(m, a):
    return m.tensor(np.asarray(a))


def _interp(mode, **kw):
    return lambda m, x: _f(m).interpolate(x, mode=mode, **kw)


def _ebag(mode, offsets=(0, 2, 2), **kw):
    return lambda m, w, *psw: _f(m).embedding_bag(_i(m, IDX), w, _i(m, offsets), mode=mode,
                                                  per_sample_weights=psw[0] if psw else None, **kw)


SAVED = {  # name: (function of lib and tensors, arrays, whether to check gradients to second order)
    **{f"{mode}{x.ndim}_{how}": (_interp(mode, **kw, **({} if mode.startswith("nearest") else
                                                        {"align_corners": how == "scale"})), [x], True)
       for mode, x in (("nearest", X3), ("nearest", X4), ("nearest", X5), ("nearest-exact", X4), ("linear", X3),
                       ("bilinear", X4), ("bicubic", X4), ("trilinear", X5))
       for how, kw in (("scale", {"scale_factor": 2}), ("size", {"size": (5,) * (x.ndim - 2)}),
                       ("recompute", {"scale_factor": 1.5, "recompute_scale_factor": True}))},
    "unfold": (lambda m, x: _f(m).unfold(x, 2, padding=1, stride=(1, 2)), [X4], True),
    "unfold_3d": (lambda m, x: _f(m).unfold(x, (2, 2), dilation=(1, 2)), [X4[0]], True),
    "fold": (lambda m, x: _f(m).fold(x, (3, 3), 2), [RNG.standard_normal((1, 8, 4)).astype(np.float32)], True),
    "group_norm": (lambda m, x: _f(m).group_norm(x, 2), [X4], True),
    "group_norm_affine": (lambda m, x, w, b: _f(m).group_norm(x, 1, w, b, eps=1e-3),
                          [X4, np.array([1.5, -0.5], np.float32), np.array([0.1, 0.2], np.float32)], True),
    "group_norm_weight": (lambda m, x, w: _f(m).group_norm(x.double(), 2, w.double()),
                          [X5, np.array([1.5, -0.5], np.float32)], True),
    "grid_sample_2d": (lambda m, x, g: _f(m).grid_sample(x, g, align_corners=False), 
                       [X4, RNG.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32)], True),
    "grid_sample_3d": (lambda m, x, g: _f(m).grid_sample(x, g, mode="nearest", padding_mode="border",
                                                        align_corners=True),
                       [X5, RNG.uniform(-1, 1, (1, 2, 2, 2, 3)).astype(np.float32)], False),
    **{f"embedding_bag_{mode}{tag}": (_ebag(mode, **kw), [W], True)
       for mode in ("sum", "mean", "max")
       for tag, kw in (("", {}), ("_pad", {"padding_idx": 4}),
                       ("_last", {"include_last_offset": True, "offsets": (0, 2, 2, 5)}),
                       ("_last_pad", {"include_last_offset": True, "padding_idx": 2, "offsets": (0, 2, 5)}))},
    "embedding_bag_double": (lambda m, w: _ebag("sum")(m, w.double()), [W], True),
    # (torch: "derivative for aten::_embedding_bag_per_sample_weights_backward is not implemented")
    "embedding_bag_psw": (_ebag("sum"), [W, RNG.standard_normal(5).astype(np.float32)], False),
    "embedding_bag_2d_max": (lambda m, w: _f(m).embedding_bag(_i(m, [[1, 2, 1], [4, 5, 9]]), w, mode="max"),
                             [W], True),
    "ctc_loss": (lambda m, lp: _f(m).ctc_loss(lp, _i(m, [[1, 2], [2, 3]]), [5, 5], [2, 2], reduction="none"),
                 [LP], False),
    "ctc_loss_tensor_lengths": (lambda m, lp: _f(m).ctc_loss(lp, _i(m, [[1, 1], [3, 3]]), _i(m, [5, 5]),
                                                             _i(m, [2, 2]), reduction="none", zero_infinity=True),
                                [LP], False),
    "ctc_loss_concatenated_targets": (lambda m, lp: _f(m).ctc_loss(lp, _i(m, [1, 2, 2, 3]), [5, 5], [2, 2],
                                                                   reduction="sum"), [LP], False),
    "ctc_loss_unbatched": (lambda m, lp: _f(m).ctc_loss(lp[:, 0], _i(m, [3, 1]), [5], [2], reduction="none"),
                           [LP], False),
}


def _call(m, name):
    fn, arrays, _ = SAVED[name]
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return xs, fn(m, *xs)


@pytest.mark.parametrize("name", SAVED)
def test_saved_attributes_and_grads(name):
    """Value, node name, every ``_saved_*`` name and value (tensors by value, numbers and tuples exactly), and the
    first- and second-order gradients."""
    (txs, tout), (lxs, lout) = _call(torch, name), _call(tl, name)
    assert_same(lout, tout, rtol=1e-4, atol=1e-5)
    compare_graph(lout.grad_fn, tout.grad_fn)
    weights = torch.tensor(RNG.standard_normal(tuple(tout.shape)))
    second = SAVED[name][2]
    tg = torch.autograd.grad((tout * weights.to(tout.dtype)).sum(), txs, create_graph=second)
    lg = tl.autograd.grad((lout * tl.tensor(weights.numpy()).to(lout.dtype)).sum(), lxs, create_graph=second)
    assert_same(lg, tg, rtol=1e-4, atol=1e-5)
    if second and any(g.requires_grad for g in tg):
        tused = [(x, g) for x, g in zip(txs, tg) if g.requires_grad]
        lused = [(x, g) for x, g in zip(lxs, lg) if g.requires_grad]
        tg2 = torch.autograd.grad(sum((g * g).sum() for _, g in tused), txs, allow_unused=True)
        lg2 = tl.autograd.grad(sum((g * g).sum() for _, g in lused), lxs, allow_unused=True)
        assert_same(lg2, tg2, rtol=1e-4, atol=1e-5)


def test_ctc_log_alpha_where_torch_writes_it():
    """Unequal lengths: torch's log_alpha (``_saved_result1``) is compared where its kernel writes it (t = 0, and
    t < input length with s < 2 * target length + 1; the rest of torch's buffer is uninitialised memory)."""
    il, tl_ = [5, 3], [2, 1]
    outs = [m.nn.functional.ctc_loss(m.tensor(LP, requires_grad=True), _i(m, [[1, 2], [3, 0]]), il, tl_,
                                     reduction="none") for m in (torch, tl)]
    assert_same(outs[1], outs[0])
    tal, lal = outs[0].grad_fn._saved_result1, outs[1].grad_fn._saved_result1
    assert tuple(lal.shape) == tuple(tal.shape) == (2, 5, 5)
    t, s = np.arange(5)[None, :, None], np.arange(5)[None, None, :]
    written = (t == 0) | ((t < np.array(il)[:, None, None]) & (s < 2 * np.array(tl_)[:, None, None] + 1))
    np.testing.assert_allclose(np.asarray(lal._data)[written], tal.numpy()[written], rtol=1e-5)
    assert_same(outs[1].grad_fn._saved_result0, outs[0].grad_fn._saved_result0)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_last_offset_short_of_the_end(mode):
    """include_last_offset with a last offset short of the end: torch's CPU values (sum / mean up to the last
    offset, mean divided by the bag size to the end, max to the end)."""
    outs = [m.nn.functional.embedding_bag(_i(m, IDX), m.tensor(W), _i(m, [0, 2, 4]), mode=mode,
                                          include_last_offset=True) for m in (torch, tl)]
    assert_same(outs[1], outs[0])


ARGUMENT_ERRORS = {  # torch.special and the spatial functions run inside the argument guard: torch's whole message
    "special_erfcx_str": lambda m: m.special.erfcx("a"),
    "special_zeta_str": lambda m: m.special.zeta(m.ones(3), "a"),
    "special_logsumexp_dim": lambda m: m.special.logsumexp(m.ones(3), "a"),
    "special_round_keyword": lambda m: m.special.round(m.ones(2), decimals="a"),
    "special_expit_unknown_keyword": lambda m: m.special.expit(m.ones(2), foo=1),
    "conv1d_strs": lambda m: m.conv1d("a", "b"),
    "conv2d_stride_str": lambda m: m.nn.functional.conv2d(m.ones(1, 1, 3, 3), m.ones(1, 1, 2, 2), stride="a"),
    "conv_transpose3d_groups": lambda m: m.conv_transpose3d(m.ones(1, 1, 2, 2, 2), m.ones(1, 1, 1, 1, 1), None, 1,
                                                            0, 0, 1.5),
    "pixel_shuffle_str": lambda m: m.pixel_shuffle(m.ones(1, 4, 2, 2), "a"),
    "F_channel_shuffle_float": lambda m: m.nn.functional.channel_shuffle(m.ones(1, 4, 2, 2), 2.0),
    "pairwise_distance_ndarray": lambda m: m.pairwise_distance(m.ones(3), np.ones(3)),
    "result_type_str": lambda m: m.result_type("a", 1),
}


@pytest.mark.parametrize("name", ARGUMENT_ERRORS)
def test_argument_errors_are_torchs(name):
    outcomes = []
    for m in (torch, tl):
        try:
            ARGUMENT_ERRORS[name](m)
            outcomes.append(None)
        except Exception as e:  # noqa: BLE001 - the exception itself is compared
            outcomes.append((type(e).__name__, str(e).replace("torch.Tensor", "Tensor")))
    assert outcomes[0] is not None and outcomes[1] == outcomes[0]


def test_special_names_are_torchs():
    assert {n: getattr(tl.special, n).__name__ for n in torch.special.__all__} == \
        {n: getattr(torch.special, n).__name__ for n in torch.special.__all__}


# ----- adaptive_max_pool3d -----------------------------------------------------------------------------------
X6 = RNG.standard_normal((2, 2, 5, 4, 6)).astype(np.float32)
X6[0, 0, 0, 0, :2] = 3.0  # (a tie: the first maximum wins)


@pytest.mark.parametrize("size", [(2, 3, 4), 2, (None, 1, 5), (5, 4, 6)])
@pytest.mark.parametrize("batched", [True, False])
def test_adaptive_max_pool3d(size, batched):
    outs = []
    for m in (torch, tl):
        x = m.tensor(X6 if batched else X6[0], requires_grad=True)
        out, idx = m.nn.functional.adaptive_max_pool3d(x, size, return_indices=True)
        outs.append(out.grad_fn)
        g, = m.autograd.grad((out * out).sum(), x, create_graph=True, retain_graph=True)
        g2, = m.autograd.grad((g * g).sum(), x, retain_graph=True)
        outs.append((out, idx, g, g2))
    compare_graph(outs[2], outs[0])
    assert_same(outs[3][:2], outs[1][:2])
    assert_same(outs[3][2:], outs[1][2:], rtol=1e-5, atol=1e-5)


def test_adaptive_max_pool3d_module_and_errors():
    results = []
    for m in (torch, tl):
        mod = m.nn.AdaptiveMaxPool3d((1, None, 2), return_indices=True)
        results.append((repr(mod), mod(m.tensor(X6))))
        assert not isinstance(m.nn.AdaptiveMaxPool3d(2)(m.tensor(X6)), tuple)
    assert results[0][0] == results[1][0]
    assert_same(results[1][1], results[0][1])
    assert_same_error(lambda m: m.nn.functional.adaptive_max_pool3d(m.ones(2, 3, 4), 2))
    assert_same_error(lambda m: m.nn.functional.adaptive_max_pool3d(m.ones(1, 2, 2, 3, 4, 5), 2))


# ----- linalg.ldl_factor / ldl_factor_ex / ldl_solve --------------------------------------------------------
def _sym(n, batch=(), dtype=np.float64, complex_=None, seed=0):
    r = np.random.default_rng(seed)
    a = r.standard_normal(batch + (n, n))
    if complex_:
        a = a + 1j * r.standard_normal(batch + (n, n))
    a = a + (np.conj(np.swapaxes(a, -1, -2)) if complex_ == "hermitian" else np.swapaxes(a, -1, -2))
    a[..., 0, 0] = 0.01  # (a small first pivot: Bunch-Kaufman swaps rows or takes a 2x2 block)
    return a.astype(dtype)


LDL = {  # name: (A, hermitian)
    "real": (_sym(5), False), "float32": (_sym(4, dtype=np.float32, seed=1), False),
    "batched": (_sym(4, (2, 3), seed=2), False), "real_hermitian_flag": (_sym(3, seed=3), True),
    "hermitian": (_sym(4, complex_="hermitian", dtype=np.complex128, seed=4), True),
    "complex_symmetric": (_sym(4, complex_="symmetric", dtype=np.complex64, seed=5), False),
    "singular": (np.zeros((2, 3, 3)), False), "empty": (np.zeros((0, 2, 2)), False),
    "empty_matrices": (np.zeros((2, 0, 0)), False),
}


@pytest.mark.parametrize("name", LDL)
def test_ldl_factor_and_solve(name):
    """LD and pivots are LAPACK's sytrf / hetrf, as torch's: compared by value (the same algorithm on the same
    input); solve results, and the reconstruction of A from them, compared as well."""
    a, hermitian = LDL[name]
    b = np.random.default_rng(9).standard_normal(a.shape[:-1] + (2,)).astype(a.dtype)
    res = []
    for m in (torch, tl):
        A = m.tensor(a, requires_grad=a.size > 0)
        ex = m.linalg.ldl_factor_ex(A, hermitian=hermitian)
        x = m.linalg.ldl_solve(ex.LD, ex.pivots, m.tensor(b), hermitian=hermitian)
        res.append((ex, x))
        assert type(ex).__name__ == "linalg_ldl_factor_ex" and len(ex) == 3 and ex.LD is ex[0] and ex.info is ex[2]
        if a.size:
            assert ex.LD.grad_fn.name() == x.grad_fn.name() == "torch::autograd::NotImplemented"
            assert not ex.pivots.requires_grad and not ex.info.requires_grad
    (tex, tx), (lex, lx) = res
    assert_same(lex.pivots, tex.pivots)
    assert_same(lex.info, tex.info)
    tol = dict(rtol=1e-4, atol=1e-5) if a.dtype in (np.float32, np.complex64) else dict(rtol=1e-10, atol=1e-12)
    assert_same(lex.LD, tex.LD, **tol)
    if not np.asarray(tex.info).any():
        assert_same(lx, tx, **{k: v * 10 for k, v in tol.items()})
        np.testing.assert_allclose(a @ np.asarray(lx._data), b, **{k: v * 100 for k, v in tol.items()})


def test_ldl_factor_errors_and_graph():
    eye = np.eye(3)
    for case in (lambda m: m.linalg.ldl_factor(m.zeros(3, 3)),
                 lambda m: m.linalg.ldl_factor_ex(m.zeros(2, 3, 3), check_errors=True),
                 lambda m: m.linalg.ldl_factor(m.ones(2, 3)), lambda m: m.linalg.ldl_factor(m.ones(3)),
                 lambda m: m.linalg.ldl_factor(m.ones(3, 3, dtype=m.int64)),
                 lambda m: m.linalg.ldl_factor(m.eye(3, dtype=m.float16)),
                 lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3)),
                 lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(2, 1)),
                 lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), m.ones(3, 1, dtype=m.float64)),
                 lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(2, dtype=m.int32), m.ones(3, 1)),
                 lambda m: m.linalg.ldl_factor(m.eye(3), upper=True),
                 lambda m: m.linalg.ldl_solve(m.eye(3), m.ones(3, dtype=m.int32), "a")):
        assert_same_error(case)
    for m in (torch, tl):  # (backward raises torch's error; batches broadcast in ldl_solve)
        A = m.tensor(eye * 2, requires_grad=True)
        LD, piv = m.linalg.ldl_factor(A)
        x = m.linalg.ldl_solve(LD.expand(2, 3, 3), piv.expand(2, 3), m.ones(3, 1, dtype=m.float64))
        assert tuple(x.shape) == (2, 3, 1) and np.allclose(np.asarray(x.detach().numpy()), 0.5)
    assert_same_error(lambda m: m.linalg.ldl_factor(m.tensor(eye, requires_grad=True))[0].sum().backward())
    assert_same_error(lambda m: m.linalg.ldl_solve(*m.linalg.ldl_factor(m.tensor(eye)),
                                                   m.ones(3, 1, requires_grad=True)).sum().backward())


# ----- view_as_real / view_as_complex: views of another element type ------------------------------------------
Z0 = (np.arange(6).reshape(2, 3) + 1j * np.arange(6).reshape(2, 3)[::-1] / 2).astype(np.complex128)


def _storage_story(m):
    z = m.tensor(Z0)
    r = m.view_as_real(z)
    r[0, 0] = 5.0
    c = m.view_as_complex(r[1:])
    c[0, 1] = 7 - 7j
    z.mul_(2)
    w = m.zeros(3, 2)
    m.view_as_complex(w).add_(1j)
    r2 = m.view_as_real(z[:, 1:])
    r2[..., 1].zero_()
    return [z, r, c, w, r2], [(t._is_view(), t._base is z, t._version, t.stride(), t.storage_offset())
                              for t in (r, c, r2)] + [(w._version,)]


def test_views_share_memory_as_torchs():
    (tv, tmeta), (lv, lmeta) = _storage_story(torch), _storage_story(tl)
    assert lmeta == tmeta
    assert_same(lv, tv)


def _grad_story(m, x0, w0):
    x = m.tensor(x0, requires_grad=True)
    w = m.tensor(w0, requires_grad=True)
    y = x * 1
    if x0.dtype.kind == "c":
        v = m.view_as_real(y)[1]  # (a view of a view: the chain is view_as_real, then select)
        base_write = lambda: y.mul_(2)  # noqa: E731
    else:
        v = m.view_as_complex(y)[1:].conj()  # (view_as_complex, a slice, then conj)
        base_write = lambda: y.add_(1)  # noqa: E731
    v.mul_(w)  # in place through the chain (CopySlices)
    base_write()  # the view's node is regenerated from the base's
    out = (y.abs() ** 2).sum() + (v * v).abs().sum()
    names = (y.grad_fn.name(), v.grad_fn.name(), [n.name() for n, _ in y.grad_fn.next_functions if n])
    g = m.autograd.grad(out, [x, w], create_graph=True)
    g2 = m.autograd.grad(sum(t.abs().sum() for t in g), [x, w])
    return names, [y, v], g, g2


@pytest.mark.parametrize("which", ["view_as_real", "view_as_complex"])
def test_views_record_as_torchs(which):
    """In place on a view through view_as_real / view_as_complex (torch's CopySlices with its view_fn), and its node
    regenerated after a write into the base: values, node names, first- and second-order gradients."""
    x0 = Z0 if which == "view_as_real" else np.arange(8.0).reshape(4, 2) / 3
    w0 = np.array([1.5, -0.5]) if which == "view_as_real" else np.array(0.5 + 2j)
    (tn, tv, tg, tg2), (ln, lv, lg, lg2) = _grad_story(torch, x0, w0), _grad_story(tl, x0, w0)
    assert ln == tn
    assert_same(lv, tv)
    assert_same(lg, tg, rtol=1e-9, atol=1e-9)
    assert_same(lg2, tg2, rtol=1e-9, atol=1e-9)


def test_view_errors_are_torchs():
    for case in (lambda m: m.view_as_real(m.tensor(Z0).conj()), lambda m: m.view_as_real(m.ones(2)),
                 lambda m: m.view_as_complex(m.ones(3, 4)[:, 1:3]), lambda m: m.view_as_complex(m.ones(2, 2).t()),
                 lambda m: m.view_as_complex(m.ones(7)[1:].view(3, 2)), lambda m: m.view_as_complex(m.ones(3, 3)),
                 lambda m: m.view_as_complex(m.ones(3, 2, dtype=m.int64)),
                 lambda m: m.view_as_complex(m.ones(3, 3, 2)[:, ::3].transpose(0, 1)[:, :, :1].expand(1, 3, 2))):
        assert_same_error(case)
    for m in (torch, tl):  # (odd strides but the others fine: torch's view)
        c = m.view_as_complex(m.ones(3, 2)[::2])
        assert c.stride() == (2,) and c._is_view()


def test_real_and_imag_are_views_as_torchs():
    results = []
    for m in (torch, tl):
        z = m.tensor(Z0.astype(np.complex64))
        re, im = z.real, m.imag(z)
        re[0, 0] = 9.0
        im[1].zero_()
        x = m.tensor(Z0, requires_grad=True)
        y = x * 1
        y.imag.mul_(3)
        results.append((z, (re._is_view(), re._base is z, re.stride(), im.storage_offset(), z._version),
                        y.grad_fn.name(), m.autograd.grad(y.abs().sum(), x)[0], x.conj().imag))
    (tz, tmeta, tname, tg, tci), (lz, lmeta, lname, lg, lci) = results
    assert (lmeta, lname) == (tmeta, tname)
    assert_same([lz, lg, lci], [tz, tg, tci])


@pytest.mark.parametrize("psw", [True, False, None])
def test_embedding_bag_second_order_raises_as_torchs(psw):
    """Under create_graph torch's gradients hang off EmbeddingBagBackwardBackward0 (weight's) and NotImplemented
    (per_sample_weights'): node names, edges, and the errors their backward raises."""
    results = []
    for m in (torch, tl):
        w = m.tensor(W, requires_grad=True)
        p = m.tensor(np.linspace(0.5, 1.5, 5, dtype=np.float32), requires_grad=bool(psw))
        out = _ebag("sum")(m, w, *([p] if psw is not None else []))
        grads = m.autograd.grad((out * out).sum(), [w, p] if psw else [w], create_graph=True)
        nodes = [(g.grad_fn.name(), [n and n.name() for n, _ in g.grad_fn.next_functions]) for g in grads]
        errors = []
        for g in grads:
            with pytest.raises((RuntimeError, NotImplementedError)) as e:
                m.autograd.grad(g.sum(), [w])
            errors.append((type(e.value).__name__, str(e.value)))
        results.append((nodes, errors, grads))
    assert results[1][:2] == results[0][:2]
    assert_same(results[1][2], results[0][2], rtol=1e-5, atol=1e-5)

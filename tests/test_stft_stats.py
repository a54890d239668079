"""torch.stft / torch.istft, torch.histogram / histogramdd, torch.gradient and the Tensor methods cov, corrcoef,
inner, vdot, histogram, stft, istft, against torch 2.13 on the same NumPy inputs: values, result types, the graphs
(node names and saved values, compare_graph), first-order gradients (second order: test_higher_order's
"other.stft_istft"), and bad input raising torch's exception type and leading message text.

A few shapes serve every case (each new shape or dtype is an XLA compile)."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike import _warnings
from oracle import assert_same, assert_same_error, compare_graph, error_of, pair

RNG = np.random.default_rng(11)
SIG = RNG.standard_normal((2, 64))  # two signals
WIN = np.hanning(17)[:16].copy()  # a periodic Hann window (zero at its first sample)
BUMP = np.hanning(18)[1:17].copy()  # a window without zeros (NOLA holds without centring)
Y = RNG.standard_normal((5, 4))
C0, C1 = np.cumsum(RNG.uniform(0.5, 1.5, 5)), np.cumsum(RNG.uniform(0.5, 1.5, 4))
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128}


def _quiet(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args)


def _outputs(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _outputs(o)]
    return [out]


def check(fn, arrays, grad=True, rtol=1e-4, atol=1e-5):
    """``fn(lib, *tensors)`` on both libraries: values, dtypes, graphs below every output, and the gradients of
    the floating inputs for a fixed cotangent of each output that requires grad."""
    pairs = [pair(a, requires_grad=grad and np.asarray(a).dtype.kind in "fc") for a in arrays]
    ours, theirs = (_quiet(fn, lib, *[p[k] for p in pairs]) for k, lib in ((0, tl), (1, torch)))
    assert type(ours).__name__ == type(theirs).__name__
    ours, theirs = _outputs(ours), _outputs(theirs)
    assert_same(ours, theirs, rtol, atol)
    for a, b in zip(ours, theirs):
        assert a.requires_grad == b.requires_grad
        compare_graph(a.grad_fn, b.grad_fn)
    diff = [(a, b) for a, b in zip(ours, theirs) if b.grad_fn is not None and b.grad_fn.name() != (
        "torch::autograd::NotImplemented")]
    leaves = [p for p in pairs if p[1].requires_grad]
    if not diff or not leaves:
        return
    rng = np.random.default_rng(3)
    cots = []
    for _, b in diff:
        c = rng.standard_normal(tuple(b.shape))
        if b.is_complex():
            c = c + 1j * rng.standard_normal(tuple(b.shape))
        cots.append(c.astype(np.asarray(b.detach().resolve_conj()).dtype))
    grads = [lib.autograd.grad([o[k] for o in diff], [leaf[k] for leaf in leaves], [lib.tensor(c) for c in cots],
                               allow_unused=True) for k, lib in ((0, tl), (1, torch))]
    assert [g is None for g in grads[0]] == [g is None for g in grads[1]]
    assert_same([g for g in grads[0] if g is not None], [g for g in grads[1] if g is not None], rtol * 10, atol * 10)


# ----- stft -------------------------------------------------------------------------------------------------------
STFT = {
    "batched": lambda m, x, w: m.stft(x, 16, hop_length=4, window=w, return_complex=True),
    "one_signal": lambda m, x, w: m.stft(x[0], 16, window=w, return_complex=True),
    "uncentred_two_sided": lambda m, x, w: m.stft(x, 16, hop_length=5, window=w, center=False, normalized=True,
                                                   onesided=False, return_complex=True),
    "short_window_constant": lambda m, x, w: m.stft(x, 16, 4, 8, w[4:12], pad_mode="constant", return_complex=True),
    "real_pairs": lambda m, x, w: m.stft(x[0], 16, window=w, return_complex=False),
    "replicate": lambda m, x, w: m.stft(x, 16, window=w, pad_mode="replicate", return_complex=True),
    "circular": lambda m, x, w: m.stft(x, 16, window=w, pad_mode="circular", return_complex=True),
    "method": lambda m, x, w: x.stft(16, 4, window=w, return_complex=True),
    "align_to_window": lambda m, x, w: m.stft(x, 16, 4, 8, w[4:12], center=False, align_to_window=True,
                                              return_complex=True),
    "complex_signal": lambda m, x, w: m.stft(x * (1 + 1j), 16, window=w, return_complex=True),
    "no_window": lambda m, x, w: m.stft(x, 16, return_complex=True) * w.sum(),
    "no_short_window": lambda m, x, w: m.stft(x, 16, win_length=10, return_complex=True) * w.sum(),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", STFT)
def test_stft(name, dtype):
    check(STFT[name], [SIG.astype(dtype), WIN.astype(dtype)])


def test_stft_mixed_dtypes():
    """A float64 window makes a float32 signal's transform complex128, an integer window a float one (torch's mul)."""
    check(lambda m, x, w: m.stft(x, 16, window=w.double(), return_complex=True), [SIG.astype(np.float32), WIN])
    check(lambda m, x, w: m.stft(x, 16, window=m.ones(16, dtype=m.long), return_complex=True) * w.sum(),
          [SIG.astype(np.float32), WIN.astype(np.float32)])


# ----- istft ------------------------------------------------------------------------------------------------------
def _spectrum(dtype, onesided=True, window=WIN):
    s = torch.stft(torch.tensor(SIG.astype(dtype)), 16, hop_length=4, window=torch.tensor(window.astype(dtype)),
                   return_complex=True, onesided=onesided)
    return s.numpy()


ISTFT = {
    "centred": (lambda m, s, w: m.istft(s, 16, hop_length=4, window=w), True, WIN),
    "length_longer": (lambda m, s, w: m.istft(s, 16, hop_length=4, window=w, length=90), True, WIN),
    "length_shorter": (lambda m, s, w: m.istft(s, 16, hop_length=4, window=w, length=50), True, WIN),
    "uncentred_one": (lambda m, s, w: m.istft(s[0], 16, hop_length=4, window=w, center=False), True, BUMP),
    "complex_result": (lambda m, s, w: m.istft(s, 16, hop_length=4, window=w, return_complex=True), False, WIN),
    "two_sided_normalized": (lambda m, s, w: m.istft(s, 16, hop_length=4, window=w, normalized=True,
                                                     onesided=False), False, WIN),
    "short_window": (lambda m, s, w: m.istft(s, 16, hop_length=4, win_length=8, window=w[4:12]), True, WIN),
    "method_no_window": (lambda m, s, w: s.istft(16, 4) * w.sum(), True, WIN),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ISTFT)
def test_istft(name, dtype):
    fn, onesided, window = ISTFT[name]
    check(fn, [_spectrum(dtype, onesided, window), window.astype(dtype)], rtol=1e-3)


def test_stft_istft_round_trip():
    x = tl.tensor(SIG)
    w = tl.hann_window(16, dtype=tl.float64)
    back = tl.istft(tl.stft(x, 16, 4, window=w, return_complex=True), 16, 4, window=w, length=64)
    np.testing.assert_allclose(np.asarray(back._data), SIG, atol=1e-12)


def test_warnings(monkeypatch):
    """torch's once-a-process warnings: no window (stft's and istft's), return_complex=False, a padded length."""
    monkeypatch.setattr(_warnings, "_warned", set())
    x = tl.tensor(SIG)
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will be applied,which"):
        s = tl.stft(x, 16, return_complex=True)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        tl.stft(x, 16, window=tl.ones(16, dtype=tl.float64), return_complex=False)
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will be applied.Please"):
        tl.istft(s, 16)
    with pytest.warns(UserWarning, match="The length of signal is shorter than the length parameter"):
        tl.istft(s, 16, window=tl.ones(16, dtype=tl.float64), length=90)


STFT_ERRORS = [
    lambda m, x, w: m.stft(x, 16, window=w),  # return_complex required for real input
    lambda m, x, w: m.stft(x.long(), 16, window=w, return_complex=True),
    lambda m, x, w: m.stft(x.long(), 16, window=w, return_complex=True, center=False),
    lambda m, x, w: m.stft(x[None], 16, window=w, return_complex=True),
    lambda m, x, w: m.stft(x[0, 0], 16, window=w, return_complex=True),  # (F.pad's error first)
    lambda m, x, w: m.stft(x, 200, return_complex=True, center=False),
    lambda m, x, w: m.stft(x, 200, return_complex=True),
    lambda m, x, w: m.stft(x, 0, return_complex=True),
    lambda m, x, w: m.stft(x, -2, return_complex=True, center=False),
    lambda m, x, w: m.stft(x, 16, hop_length=0, return_complex=True),
    lambda m, x, w: m.stft(x, 16, win_length=20, return_complex=True),
    lambda m, x, w: m.stft(x, 16, window=w[:8], return_complex=True),
    lambda m, x, w: m.stft(x, 16, window=w[None], return_complex=True),
    lambda m, x, w: m.stft(x * 1j, 16, window=w, onesided=True),
    lambda m, x, w: m.stft(x, 16, window=w, pad_mode="foo", return_complex=True),
    lambda m, x, w: m.stft(x, 16, window=w, return_complex=True, align_to_window=True),
    lambda m, x, w: m.stft(x.half(), 16, window=w.half(), return_complex=True),
    lambda m, x, w: m.stft(x.bfloat16(), 16, return_complex=True, center=False),
    lambda m, x, w: m.stft(x, "16", return_complex=True),
    lambda m, x, w: m.stft(x, 16, window=3, return_complex=True),
    lambda m, x, w: m.stft(x, 16, pad_mode=5, return_complex=True),
    lambda m, x, w: m.stft(x),
    lambda m, x, w: x.stft(),
    lambda m, x, w: x.stft(16, foo=1),
    lambda m, x, w: x.stft(16, hop_length="a", return_complex=True),
    lambda m, x, w: m.stft("x", 16),
]
ISTFT_ERRORS = [
    lambda m, s, w: m.istft(m.view_as_real(s), 16, window=w),
    lambda m, s, w: m.istft(s[0, :, 0], 16, window=w),
    lambda m, s, w: m.istft(s[None], 16, window=w),
    lambda m, s, w: m.istft(s[:, :, :0], 16, window=w),
    lambda m, s, w: m.istft(s, 18, window=m.ones(18)),
    lambda m, s, w: m.istft(s, 18, onesided=False),
    lambda m, s, w: m.istft(s, 16, hop_length=20, window=w),
    lambda m, s, w: m.istft(s, 16, win_length=20),
    lambda m, s, w: m.istft(s, 16, window=m.ones(8)),
    lambda m, s, w: m.istft(s, 16, window=w, return_complex=True),
    lambda m, s, w: m.istft(s, 16, window=w * 1j),
    lambda m, s, w: m.istft(s, 16, hop_length=16, window=w, center=False),  # NOLA
    lambda m, s, w: m.istft(s, 16, hop_length=16, window=w),
    lambda m, s, w: m.istft(s, "a"),
    lambda m, s, w: s.istft("a"),
    lambda m, s, w: s.istft(16, foo=2),
]


def test_stft_istft_errors():
    x32, w32 = SIG.astype(np.float32), WIN.astype(np.float32)
    for case in STFT_ERRORS:
        assert_same_error(lambda m: case(m, m.tensor(x32), m.tensor(w32)))
    s = _spectrum(np.float32)
    for case in ISTFT_ERRORS:
        assert_same_error(lambda m: case(m, m.tensor(s), m.tensor(w32)))
    # the whole NOLA message (torch prints the boolean tensor of its check)
    with pytest.raises(RuntimeError) as ours:
        tl.istft(tl.tensor(s), 16, 16, window=tl.tensor(w32))
    with pytest.raises(RuntimeError) as theirs:
        torch.istft(torch.tensor(s), 16, 16, window=torch.tensor(w32))
    assert str(ours.value) == str(theirs.value)


# ----- histogram, histogramdd ---------------------------------------------------------------------------------
HX = RNG.standard_normal(50)
HX[:5] = [0, 0.5, 1, -1, 2]  # values on edges
HW = RNG.uniform(size=50)
EDGES = np.array([-1, -0.3, 0, 0.5, 1, 2])
PTS, PW = RNG.standard_normal((30, 2)), RNG.uniform(size=30)

HIST = {
    "bins": lambda m, x, w, e, p, pw: m.histogram(x, 7),
    "range_weight_density": lambda m, x, w, e, p, pw: m.histogram(x, 4, range=(-1., 1.), weight=w, density=True),
    "edges_weight": lambda m, x, w, e, p, pw: m.histogram(x, e, weight=w),
    "edges_density": lambda m, x, w, e, p, pw: m.histogram(x, e, density=True),
    "method": lambda m, x, w, e, p, pw: x.histogram(5, weight=w),
    "2d_input": lambda m, x, w, e, p, pw: m.histogram(x.view(5, 10), bins=3),
    "empty_range": lambda m, x, w, e, p, pw: m.histogram(x, 4, range=(0.5, 0.5)),
    "dd_bins": lambda m, x, w, e, p, pw: m.histogramdd(p, [3, 4]),
    "dd_range_density": lambda m, x, w, e, p, pw: m.histogramdd(p, 3, range=[-1., 1., -2., 2.], weight=pw,
                                                                 density=True),
    "dd_edges": lambda m, x, w, e, p, pw: m.histogramdd(p, [e, e[1:4]], weight=pw),
    "dd_batched": lambda m, x, w, e, p, pw: m.histogramdd(p.view(3, 10, 2), 2),
    "dd_no_dims": lambda m, x, w, e, p, pw: m.histogramdd(p[:, :0], []),
}


@pytest.mark.parametrize("grads", [(), (0, 1, 2, 3, 4)])
@pytest.mark.parametrize("name", HIST)
def test_histogram(name, grads):
    """Counts, edges, return types; with inputs requiring grad, torch's NotImplemented node (edges to them) whose
    backward raises torch's error."""
    arrays = [a.astype(np.float32) for a in (HX, HW, EDGES, PTS, PW)]
    pairs = [pair(a, requires_grad=k in grads) for k, a in enumerate(arrays)]
    ours, theirs = (HIST[name](lib, *[p[k] for p in pairs]) for k, lib in ((0, tl), (1, torch)))
    assert type(ours).__name__ == type(theirs).__name__ and len(ours) == len(theirs) == 2
    assert isinstance(ours.bin_edges, tuple) == isinstance(theirs.bin_edges, tuple)
    a, b = _outputs(ours), _outputs(theirs)
    assert_same(a, b)
    for x, y in zip(a, b):
        assert x.requires_grad == y.requires_grad and (x.grad_fn is None) == (y.grad_fn is None)
        if y.grad_fn is not None:
            compare_graph(x.grad_fn, y.grad_fn)
            assert error_of(lambda: x.sum().backward()) == error_of(lambda: y.sum().backward())
    if len(b) > 1:
        assert (a[0].grad_fn is a[1].grad_fn) == (b[0].grad_fn is b[1].grad_fn)


def test_histogram_out():
    outs = [(lib.empty(0), lib.empty(0)) for lib in (tl, torch)]
    ours, theirs = (lib.histogram(lib.tensor(HX.astype(np.float32)), 3, out=o) for lib, o in zip((tl, torch), outs))
    assert type(ours).__name__ == type(theirs).__name__ == "histogram_out"
    assert_same(list(outs[0]), list(outs[1]))


HIST_ERRORS = [
    lambda m, x, p: m.histogram(x.long(), 3),
    lambda m, x, p: m.histogram(x.long(), 3, range=(0., 4.)),
    lambda m, x, p: m.histogram(x.long(), m.tensor([0, 2, 4])),
    lambda m, x, p: m.histogram(x.half(), 3),
    lambda m, x, p: m.histogram(x * 1j, 3),
    lambda m, x, p: m.histogram(x, 0),
    lambda m, x, p: m.histogram(x, 3, range=(0., 1., 2.)),
    lambda m, x, p: m.histogram(x, 3, range=(1., 0.)),
    lambda m, x, p: m.histogram(x, 3, range=(0., float("inf"))),
    lambda m, x, p: m.histogram(m.tensor([1., float("nan")]), 3),
    lambda m, x, p: m.histogram(x, 3, weight=m.ones(50, dtype=m.float64)),
    lambda m, x, p: m.histogram(x, 3, weight=m.ones(5)),
    lambda m, x, p: m.histogram(x, m.tensor([0., 1.], dtype=m.float64)),
    lambda m, x, p: m.histogram(x, m.zeros(2, 2)),
    lambda m, x, p: m.histogram(x, m.zeros(0)),
    lambda m, x, p: m.histogram(x, m.zeros(1)),
    lambda m, x, p: m.histogram(x, 3, out=(m.empty(0, dtype=m.float64), m.empty(0))),
    lambda m, x, p: m.histogram(x, bins="x"),
    lambda m, x, p: x.histogram("x"),
    lambda m, x, p: m.histogramdd(x, 3),
    lambda m, x, p: m.histogramdd(p, [3, 3, 3]),
    lambda m, x, p: m.histogramdd(p, [m.tensor([0., 1.])]),
    lambda m, x, p: m.histogramdd(p, 3, range=[0., 1.]),
    lambda m, x, p: m.histogramdd(p, 3, range=[0., 1., 1., 0.]),
    lambda m, x, p: m.histogramdd(p, [3, 0]),
    lambda m, x, p: m.histogramdd(p, 3, weight=m.ones(5)),
    lambda m, x, p: m.histogramdd(p.long(), 2),
    lambda m, x, p: m.histogramdd(p, [m.tensor([0., 1.]), m.tensor([0., 1.], dtype=m.float64)]),
    lambda m, x, p: m.histogramdd(p, [m.tensor([0., 1.]), m.zeros(1, 2)]),
    lambda m, x, p: m.histogramdd(p, [m.tensor([0., 1.]), m.zeros(0)]),
    lambda m, x, p: m.histogramdd("x", 3),
]


def test_histogram_errors():
    for case in HIST_ERRORS:
        assert_same_error(lambda m: case(m, m.tensor(HX.astype(np.float32)), m.tensor(PTS.astype(np.float32))))


# ----- gradient ---------------------------------------------------------------------------------------------------
GRADIENT = {
    "default": lambda m, y, c0, c1: m.gradient(y),
    "scalar_dim_order2": lambda m, y, c0, c1: m.gradient(y, spacing=2.0, dim=1, edge_order=2),
    "int_spacing": lambda m, y, c0, c1: m.gradient(y, spacing=2),
    "list_order2": lambda m, y, c0, c1: m.gradient(y, spacing=[1.5, 2], edge_order=2),
    "list_dim": lambda m, y, c0, c1: m.gradient(y, spacing=(3,), dim=-1),
    "dims": lambda m, y, c0, c1: m.gradient(y, dim=[1, 0]),
    "scalar_dims": lambda m, y, c0, c1: m.gradient(y, spacing=0.5, dim=[0]),
    "coordinates": lambda m, y, c0, c1: m.gradient(y, spacing=[c0, c1]),
    "coordinates_order2": lambda m, y, c0, c1: m.gradient(y, spacing=[c0, c1], edge_order=2),
    "coordinates_dim": lambda m, y, c0, c1: m.gradient(y, spacing=[c1], dim=1, edge_order=2),
    "tensor_spacing": lambda m, y, c0, c1: m.gradient(y, spacing=m.tensor(2.)),
    "1d": lambda m, y, c0, c1: m.gradient(y[0]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", GRADIENT)
def test_gradient(name, dtype):
    check(GRADIENT[name], [a.astype(dtype) for a in (Y, C0, C1)])


@pytest.mark.parametrize("name", list(GRADIENT)[:7])
def test_gradient_of_integers(name):
    """Integer samples give float32 derivatives (torch's true division), no graph."""
    check(GRADIENT[name], [np.arange(20).reshape(5, 4), C0, C1])


GRADIENT_ERRORS = [
    lambda m: m.gradient(m.ones(3, dtype=m.uint8)),
    lambda m: m.gradient(m.ones(3, 4), spacing=[1., 2., 3.]),
    lambda m: m.gradient(m.ones(3, 4), spacing=[1., 2., 3.], dim=[0, 1]),
    lambda m: m.gradient(m.ones(3, 4), edge_order=3),
    lambda m: m.gradient(m.ones(3, 4), dim=[0, 0]),
    lambda m: m.gradient(m.ones(3, 4), dim=2),
    lambda m: m.gradient(m.ones(3, 2), edge_order=2),
    lambda m: m.gradient(m.ones(3, 4), spacing=[m.ones(3), m.ones(2, 2)]),
    lambda m: m.gradient(m.ones(3, 4), spacing="a"),
    lambda m: m.gradient(m.ones(3, 4), spacing=m.ones(3)),
    lambda m: m.gradient(m.ones(3, 4), spacing=[1, m.ones(3)]),
    lambda m: m.gradient(m.ones(3, 4), dim=1.5),
    lambda m: m.gradient(m.ones(3, 4), 1.0),
    lambda m: m.gradient("a"),
    lambda m: m.gradient(m.ones(3, dtype=m.bool)),
]


def test_gradient_errors():
    for case in GRADIENT_ERRORS:
        assert_same_error(case)


# ----- cov, corrcoef, inner, vdot as Tensor methods; tensordot's contraction ------------------------------------
METHODS = {
    "cov": lambda m, x, v: x.cov(),
    "cov_weighted": lambda m, x, v: x.cov(correction=0, aweights=v),
    "corrcoef": lambda m, x, v: x.corrcoef(),
    "inner_vectors": lambda m, x, v: x[0].inner(x[1]),  # (a full contraction: dot)
    "inner": lambda m, x, v: x.inner(x),
    "inner_function": lambda m, x, v: m.inner(x, v),
    "vdot": lambda m, x, v: x[0].vdot(v),
    "vdot_complex": lambda m, x, v: (x[0] * (1 + 2j)).vdot(v * 1j),
    "tensordot_full": lambda m, x, v: m.tensordot(x, x, 2),
    "tensordot_noncontiguous": lambda m, x, v: m.tensordot(x.t(), x.t(), ([0, 1], [0, 1])),
    "tensordot_negative_dims": lambda m, x, v: m.tensordot(x, x.t(), ([-1], [0])),
}


@pytest.mark.parametrize("name", METHODS)
def test_methods(name):
    check(METHODS[name], [SIG[:, :6].copy(), RNG.uniform(size=6)], rtol=1e-6, atol=1e-8)


def test_method_argument_errors():
    for case in (lambda m: m.ones(3).cov(1), lambda m: m.ones(3).inner("a"), lambda m: m.ones(3).vdot("a"),
                 lambda m: m.ones(3).corrcoef(1), lambda m: m.ones(2, 3).cov(fweights=m.ones(3))):
        assert_same_error(case)

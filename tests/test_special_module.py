"""torchlike.special and the newer elementwise ops (ops/special.py, ops/elementwise.py) against torch 2.13 on the
same NumPy inputs: values, first- and second-order gradients, node names and saved values, dtypes (integer inputs
promoted), out=, and torch's errors."""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, assert_same_error, compare_graph, _dense

RNG = np.random.default_rng(3)
X = np.array([0.3, -0.6, 1.7, -2.2, 0.05, 1.1])  # one shape for every case (one compile per op)
POS = np.abs(X) + 0.4
UNIT = np.tanh(X) * 0.9
P01 = (UNIT + 1) / 2
INTS = np.array([0, 1, 2, 3, -1, 5])


def _grads(lib, out, xs, create_graph):
    live = [x for x in xs if x.requires_grad]
    total = (out.abs() if out.is_complex() else out)
    total = (total * total + total).sum()  # a non-constant incoming gradient
    return lib.autograd.grad(total, live, create_graph=create_graph, allow_unused=True)


def _check(fn, *arrays, rtol=1e-7, atol=1e-9, second=True, wrt=None):
    """fn(lib, *tensors): same value, dtype, graph (node names, saved values), gradients and second order."""
    wrt = range(len(arrays)) if wrt is None else wrt
    xs = {lib: [lib.tensor(a, requires_grad=i in wrt) for i, a in enumerate(arrays)] for lib in (tl, torch)}
    outs = {lib: fn(lib, *xs[lib]) for lib in (tl, torch)}
    assert_same(outs[tl], outs[torch], rtol, atol)
    compare_graph(outs[tl].grad_fn, outs[torch].grad_fn)
    res = {}
    for lib in (tl, torch):
        g1 = _grads(lib, outs[lib], xs[lib], second)
        g2 = None
        if second:
            live = [x for x in xs[lib] if x.requires_grad]
            s = sum((g * g).sum() for g in g1 if g is not None and g.requires_grad)
            g2 = lib.autograd.grad(s, live, allow_unused=True) if isinstance(s, lib.Tensor) else ()
        res[lib] = g1, g2
    (ga, gga), (gb, ggb) = res[tl], res[torch]
    assert_same(list(ga), [_dense(g) for g in gb], rtol, atol)
    if second:
        assert_same(list(gga), [_dense(g) for g in ggb], rtol, atol)


# ----- torch.special: differentiable ops and aliases ------------------------------------------------------------
S_UNARY = {
    "entr": (lambda m, x: m.special.entr(x), POS), "erfcx": (lambda m, x: m.special.erfcx(x), X),
    "i0": (lambda m, x: m.special.i0(x), X), "i0e": (lambda m, x: m.special.i0e(x), X),
    "i1": (lambda m, x: m.special.i1(x), X), "i1e": (lambda m, x: m.special.i1e(x), X),
    "log_ndtr": (lambda m, x: m.special.log_ndtr(x), X), "ndtri": (lambda m, x: m.special.ndtri(x), P01),
    "ndtr": (lambda m, x: m.special.ndtr(x), X), "expit": (lambda m, x: m.special.expit(x), X),
    "gammaln": (lambda m, x: m.special.gammaln(x), POS), "psi": (lambda m, x: m.special.psi(x), POS),
    "digamma": (lambda m, x: m.special.digamma(x), POS), "erf": (lambda m, x: m.special.erf(x), X),
    "erfc": (lambda m, x: m.special.erfc(x), X), "erfinv": (lambda m, x: m.special.erfinv(x), UNIT),
    "exp2": (lambda m, x: m.special.exp2(x), X), "expm1": (lambda m, x: m.special.expm1(x), X),
    "log1p": (lambda m, x: m.special.log1p(x), POS), "sinc": (lambda m, x: m.special.sinc(x), X),
    "logit": (lambda m, x: m.special.logit(x, 1e-3), P01), "round": (lambda m, x: m.special.round(x * 3) * x, X),
    "polygamma": (lambda m, x: m.special.polygamma(1, x), POS),
    "multigammaln": (lambda m, x: m.special.multigammaln(x + 1, 3), POS),
    "logsumexp": (lambda m, x: m.special.logsumexp(x.reshape(2, 3), 1, keepdim=True), X),
    "softmax": (lambda m, x: m.special.softmax(x.reshape(2, 3), 0), X),
    "log_softmax": (lambda m, x: m.special.log_softmax(x.reshape(2, 3), -1, dtype=m.float32), X),
    "torch_i0": (lambda m, x: m.i0(x) + x.i0() + (x * 1).i0_(), X),
}


@pytest.mark.parametrize("name", S_UNARY)
def test_special_unary(name):
    fn, a = S_UNARY[name]
    _check(fn, a, rtol=1e-5 if name == "log_softmax" else 1e-7)


@pytest.mark.parametrize("name", ["entr", "erfcx", "i0e", "i1", "i1e", "log_ndtr", "ndtri", "expit", "gammaln"])
def test_special_unary_dtypes(name):
    """Integer inputs become the default float; float32 stays float32."""
    ints = np.array([1, 2, 0, 3]) if name != "ndtri" else np.array([0, 1, 0, 1])
    for arr in (ints, ints.astype(np.float32) / 4):
        assert_same(getattr(tl.special, name)(tl.tensor(arr)), getattr(torch.special, name)(torch.tensor(arr)),
                    rtol=1e-5)


def test_i1_at_zero():
    """torch's i1/i1e backward: 0.5 at (and within eps of) 0."""
    _check(lambda m, x: m.special.i1(x) + m.special.i1e(x), np.array([0.0, 1e-20, -1e-20, 0.5]), second=False)


S_BINARY = {
    "xlog1py": (lambda m, x, y: m.special.xlog1py(x, y), [X, POS]),
    "xlog1py_zero": (lambda m, x, y: m.special.xlog1py(x * 0, y), [X, -POS - 1]),
    "xlog1py_scalars": (lambda m, x: m.special.xlog1py(2.0, x) + m.special.xlog1py(x, 0.5), [POS]),
    "xlogy": (lambda m, x, y: m.special.xlogy(x, y), [X, POS]),
    "zeta_other": (lambda m, x, q: m.special.zeta(x + 2, q), [POS, POS]),
    "zeta_scalar_self": (lambda m, q: m.special.zeta(3.0, q), [POS]),
    "gammainc": (lambda m, a, x: m.special.gammainc(a, x) + m.special.gammaincc(a, x * 2), [POS, POS]),
    "igamma": (lambda m, a, x: m.igamma(a, x) * a.igammac(x), [POS, POS]),
}


@pytest.mark.parametrize("name", S_BINARY)
def test_special_binary(name):
    fn, arrays = S_BINARY[name]
    wrt = {"zeta_other": (1,), "gammainc": (1,), "igamma": (1,)}.get(name)
    _check(fn, *arrays, wrt=wrt)


def test_special_binary_saved_scalars():
    for lib in (tl, torch):
        q = lib.tensor(POS, requires_grad=True)
        r = (lib.special.zeta(2.0, q), lib.special.xlog1py(2.0, q), lib.special.xlog1py(q, 3.0),
             lib.special.zeta(q, 2.0))
        if lib is tl:
            mine = r
    for a, b in zip(mine, r):
        compare_graph(a.grad_fn, b.grad_fn)


@pytest.mark.parametrize("case", [
    lambda m: m.special.zeta(m.tensor(POS, requires_grad=True) + 1, 2.0).sum().backward(),
    lambda m: m.special.zeta(m.tensor(POS, requires_grad=True) + 1, m.tensor(POS)).sum().backward(),
    lambda m: m.special.gammainc(m.tensor(POS, requires_grad=True), m.tensor(POS)).sum().backward(),
    lambda m: m.igammac(m.tensor(POS, requires_grad=True), m.tensor(POS)).sum().backward(),
    lambda m: m.igamma(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.special.gammainc(m.tensor([1.0]), 2),
    lambda m: m.special.i0e(1.5),
    lambda m: m.special.polygamma(-1, m.tensor(POS)),
], ids=["zeta_scalar_other", "zeta_self", "gammainc_input", "igammac_input", "igamma_long", "gammainc_scalar",
        "i0e_number", "polygamma_negative"])
def test_special_errors(case):
    assert_same_error(case)


NO_GRAD = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "spherical_bessel_j0"]


@pytest.mark.parametrize("name", NO_GRAD)
def test_special_no_derivative(name):
    """torch has no derivative: the result never requires grad; float32 and integer inputs as torch's."""
    a = POS if "_k" in name or "_y" in name else X
    tol = 1e-4 if name == "airy_ai" else 1e-12  # (scipy's airy and torch's kernel: 1.6e-5 apart at -2.2)
    for arr, rtol in ((a, tol), (a.astype(np.float32), max(tol, 1e-5)), (INTS[1:4], max(tol, 1e-6))):
        x, y = tl.tensor(arr, requires_grad=arr.dtype.kind == "f"), torch.tensor(arr, requires_grad=arr.dtype.kind == "f")
        r, e = getattr(tl.special, name)(x), getattr(torch.special, name)(y)
        assert_same(r, e, rtol=rtol, atol=1e-12)
        assert r.requires_grad is e.requires_grad is False


POLYNOMIALS = [n for n in dir(torch.special) if "polynomial" in n]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_special_polynomials(name):
    n = np.array([0, 1, 2, 3, 5, -1])
    x = UNIT if "shifted" not in name else P01
    cases = [(x, n), (x.astype(np.float32), n), (INTS, 2)]
    for a, b in cases:
        args = [(lib.tensor(a), lib.tensor(b) if isinstance(b, np.ndarray) else b) for lib in (tl, torch)]
        r, e = getattr(tl.special, name)(*args[0]), getattr(torch.special, name)(*args[1])
        assert_same(r, e, rtol=1e-5, atol=1e-6)
    assert_same(getattr(tl.special, name)(0.5, tl.tensor(n)), getattr(torch.special, name)(0.5, torch.tensor(n)))


def test_special_names():
    """Every public name of torch.special exists; the aliases run the torch-level functions."""
    missing = {n for n in dir(torch.special) if not n.startswith("_")} - set(dir(tl.special))
    assert missing <= {"Tensor", "torch", "common_args", "multi_dim_common"}, missing
    x = tl.tensor(X, requires_grad=True)
    assert tl.special.expit(x).grad_fn.name() == "SigmoidBackward0"
    # (the same functions, each bound in its own guard as torch's special_<name>, whose argument errors name it)
    assert tl.special.gammaln.__wrapped__ is tl.lgamma.__wrapped__
    assert tl.special.psi.__wrapped__ is tl.digamma.__wrapped__


def test_special_out():
    for name, args in (("i0e", (X,)), ("entr", (POS,)), ("xlog1py", (X, POS)), ("ndtr", (X,)), ("bessel_j0", (X,)),
                       ("zeta", (POS + 1, POS)), ("gammainc", (POS, POS)), ("ndtri", (P01,))):
        res = []
        for lib in (tl, torch):
            out = lib.empty(0, dtype=lib.float64)
            r = getattr(lib.special, name)(*[lib.tensor(a) for a in args], out=out)
            assert r is out
            res.append(out)
        assert_same(*res)
    assert_same_error(lambda m: m.special.i0e(m.tensor(X, requires_grad=True), out=m.empty(6, dtype=m.float64)))
    res = [lib.special.logsumexp(lib.tensor(X).reshape(2, 3), 1, out=lib.empty(2, dtype=lib.float64))
           for lib in (tl, torch)]
    assert_same(*res)


# ----- torch-level elementwise ops (ops/elementwise.py) ----------------------------------------------------------
Y = np.array([1.3, -0.6, -1.0, np.nan, 0.05, -0.0])
ZERO = np.array([0.0, -0.6, 0.0, 2.0, -0.0, 1.0])
ELEMENTWISE = {
    "copysign": (lambda m, x, y: m.copysign(x, y) + x.copysign(-1.5), [ZERO, Y]),
    "copysign_": (lambda m, x, y: (x * 1).copysign_(y) * (x * 1).copysign_(2), [ZERO, Y]),
    "nextafter": (lambda m, x, y: m.nextafter(x, y) + (x * 1).nextafter_(y), [X, np.where(ZERO == 0, X, Y)]),
    "fmax": (lambda m, x, y: m.fmax(x, y) * x.fmin(y), [X, np.where(ZERO == 0, X, Y)]),
    "ldexp": (lambda m, x, y: m.ldexp(x, y) + (x * 1).ldexp_(y), [X, UNIT]),
    "logaddexp2": (lambda m, x, y: m.logaddexp2(x, y), [X, UNIT]),
    "float_power": (lambda m, x, y: m.float_power(x, y) + x.float_power(2) + m.float_power(2, y), [POS, X]),
    "frexp": (lambda m, x: m.frexp(x * 7).mantissa * x.frexp()[0], [X]),
    "complex": (lambda m, x, y: m.complex(x, y) * m.polar(y.abs(), x), [X, UNIT]),
    "view_as_real": (lambda m, x, y: m.view_as_real(m.complex(x, y) * (1 + 2j)), [X, UNIT]),
    "view_as_complex": (lambda m, x, y: m.view_as_complex(m.stack([x, y], -1)) ** 2, [X, UNIT]),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise(name):
    fn, arrays = ELEMENTWISE[name]
    _check(fn, *arrays)


def test_elementwise_no_grad_and_dtypes():
    i, f = np.array([3, 0, -2, 5]), np.array([1.5, 0.0, -2.0, np.nan], np.float32)
    cases = [
        lambda m: m.copysign(m.tensor(i), m.tensor(i)), lambda m: m.copysign(m.tensor(i), -1),
        lambda m: m.heaviside(m.tensor(i), m.tensor(i)), lambda m: m.heaviside(m.tensor(f), m.tensor([0.5], dtype=m.float32)),
        lambda m: m.signbit(m.tensor(f)), lambda m: m.tensor(i).signbit(),
        lambda m: m.fmax(m.tensor(i), m.tensor(f)), lambda m: m.fmin(m.tensor(f), m.tensor(i)),
        lambda m: m.ldexp(m.tensor(i), m.tensor(i)), lambda m: m.ldexp(m.tensor(f), m.tensor(i)),
        lambda m: m.float_power(m.tensor(i), 2), lambda m: m.float_power(m.tensor(f), 1j),
        lambda m: m.nextafter(m.tensor(f), m.tensor(f[::-1].copy())),
        lambda m: m.frexp(m.tensor(f)).exponent, lambda m: m.i0(m.tensor(i)),
        lambda m: m.isin(m.tensor(i), m.tensor([0, 5, 9])), lambda m: m.isin(m.tensor(i), 5, invert=True),
        lambda m: m.isin(3, m.tensor(i)), lambda m: m.isin(m.tensor(f), m.tensor(i)),
        lambda m: m.logspace(0, 2, 5), lambda m: m.logspace(-1, 3, 7, base=2, dtype=m.int64),
        lambda m: m.logspace(m.tensor(1.0), 2, 4, dtype=m.float64), lambda m: m.logspace(0, 1, 1),
        lambda m: m.view_as_real(m.tensor([1 + 2j, 3j], dtype=m.complex64)),
    ]
    for case in cases:
        assert_same(case(tl), case(torch), rtol=1e-6)
    for a in (torch.float32, torch.int64, torch.bool, torch.complex64):
        for b in (torch.float64, torch.int32, torch.bool, torch.complex128):
            names = [str(d).split(".")[1] for d in (a, b)]
            assert tl.can_cast(getattr(tl, names[0]), getattr(tl, names[1])) == torch.can_cast(a, b)


@pytest.mark.parametrize("case", [
    lambda m: m.heaviside(m.tensor(X), m.tensor(X, requires_grad=True)).sum().backward(),
    lambda m: m.heaviside(m.tensor(X), m.tensor(X, dtype=m.float32)),
    lambda m: m.heaviside(m.tensor(X, dtype=m.complex64), m.tensor(X, dtype=m.complex64)),
    lambda m: m.signbit(m.tensor(X, dtype=m.complex64)),
    lambda m: m.fmax(m.tensor(X, dtype=m.complex64), m.tensor(X)),
    lambda m: m.copysign(m.tensor(X, dtype=m.complex64), m.tensor(X)),
    lambda m: m.frexp(m.tensor([1, 2])),
    lambda m: m.logaddexp2(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.nextafter(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.tensor(X, dtype=m.float32).float_power_(2),
    lambda m: m.tensor([1, 2]).copysign_(m.tensor([1.0, 2.0])),
    lambda m: m.complex(m.tensor(X, dtype=m.float32), m.tensor(X)),
    lambda m: m.polar(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.view_as_real(m.tensor(X)),
    lambda m: m.view_as_complex(m.ones(2, 3)),
    lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.float64).t()),
    lambda m: m.view_as_complex(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.logspace(0, 1, -1),
    lambda m: m.copysign(m.tensor(X, requires_grad=True), 1.0, out=m.empty(6, dtype=m.float64)),
], ids=["heaviside_backward", "heaviside_dtypes", "heaviside_complex", "signbit_complex", "fmax_complex",
        "copysign_complex", "frexp_int", "logaddexp2_int", "nextafter_int", "float_power_float32", "copysign_int_",
        "complex_dtypes", "polar_int", "view_as_real_real", "view_as_complex_size", "view_as_complex_stride",
        "view_as_complex_int", "logspace_steps", "copysign_out_grad"])
def test_elementwise_errors(case):
    assert_same_error(case)


def test_elementwise_out_and_inplace_versions():
    for lib in (tl, torch):
        x, y = lib.tensor(X), lib.tensor(UNIT)
        outs = [lib.empty(0, dtype=lib.float64) for _ in range(6)]
        lib.copysign(x, y, out=outs[0]), lib.fmax(x, y, out=outs[1]), lib.ldexp(x, y, out=outs[2])
        lib.logaddexp2(x, y, out=outs[3]), lib.float_power(x.abs(), y, out=outs[4])
        lib.nextafter(x, y, out=outs[5])
        m, e = lib.empty(0, dtype=lib.float64), lib.empty(0, dtype=lib.int32)
        r = lib.frexp(x, out=(m, e))
        assert r.mantissa is m and r.exponent is e
        z = x * 1
        versions = [z._version]
        for op, arg in (("copysign_", y), ("nextafter_", y), ("ldexp_", y), ("heaviside_", y), ("float_power_", 2)):
            getattr(z, op)(arg)
            versions.append(z._version)
        if lib is tl:
            mine = outs + [m, e, z], versions
        else:
            assert_same(mine[0], outs + [m, e, z])
            assert mine[1] == versions


def test_torch_level_inplace_functions():
    """torch.i0_ sinc_ logit_ xlogy_ and Tensor.mvlgamma_ (MvlgammaBackward0; integers refused as torch)."""
    for case in (lambda m: m.i0_(m.tensor(X)), lambda m: m.sinc_(m.tensor(X)), lambda m: m.logit_(m.tensor(P01), 0.2),
                 lambda m: m.xlogy_(m.tensor(X), m.tensor(POS)), lambda m: m.xlogy_(m.tensor(X), 2)):
        assert_same(case(tl), case(torch))
    _check(lambda m, x: (x * 1).mvlgamma_(2), POS + 1)
    assert_same_error(lambda m: m.tensor([1, 2]).mvlgamma_(2))


@pytest.mark.parametrize("dtype", ["int64", "complex128", "bool"])
@pytest.mark.parametrize("decimals", [0, 1])
def test_round_decimals_refusal(dtype, decimals):
    """round(decimals=0) refuses non-float dtypes with its own kernel's name (round_vml_cpu), other decimals with
    round_cpu (seeds 1133, 1192, 1252)."""
    assert_same_error(lambda m: m.special.round(m.ones(2, dtype=getattr(m, dtype)), decimals=decimals))
    assert_same_error(lambda m: m.ones(2, dtype=getattr(m, dtype)).round_(decimals=decimals))


def test_special_binary_and_low_precision_dtypes():
    cases = [lambda m: m.special.xlog1py(m.tensor([1, 2]), m.tensor([1, 2])),
             lambda m: m.special.zeta(m.tensor([2, 3]), 2), lambda m: m.special.gammainc(m.tensor([1.0]), m.tensor([1, 2])),
             lambda m: m.special.i0e(m.tensor([True, False])),
             lambda m: m.special.chebyshev_polynomial_t(m.tensor([1, 2]), m.tensor([1.0, 2.0], dtype=m.float64))]
    for case in cases:
        assert_same(case(tl), case(torch))
    for dtype in ("float16", "bfloat16", "complex64"):
        assert_same_error(lambda m: m.special.bessel_j0(m.ones(2, dtype=getattr(m, dtype))))
        assert_same_error(lambda m: m.special.hermite_polynomial_h(m.ones(2, dtype=getattr(m, dtype)), 2))

"""More classes of differences the random programs (tests/random_programs.py) found, each checked against torch on
the same inputs: the target's values, dtype, ``_version`` and node after the op (also after an error: a refused op
changes nothing), errors (type and leading message), gradients."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl


def _state(m, t):
    value = np.asarray(t.detach().tolist())
    value = value.round(9) if value.dtype.kind in "fc" else value  # (exp's last bit: XLA's, not Sleef's)
    return (repr(value.tolist()), str(t.dtype).split(".")[-1], t._version, t.requires_grad,
            None if t.grad_fn is None else t.grad_fn.name())


def _observe(m, make, act):
    """``act(m, x)`` on ``x = make(m)``: its result (or error: type and first line) and x's state after."""
    x = make(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = act(m, x)
            res = _state(m, out) if isinstance(out, m.Tensor) else out
        except Exception as e:  # noqa: BLE001
            res = ("error", type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    return res, _state(m, x)


def _same(make, act):
    a, b = _observe(tl, make, act), _observe(torch, make, act)
    assert a == b, (a, b)


def _f64(m):
    return m.arange(6.).reshape(2, 3)


def _setitem(key, value):
    def act(m, x):
        x[key(m, x)] = value(m, x)
    return act


# ----- x[index] = value where value shares x's memory: index_put_ refuses the overlap before the value's shape check
_KEYS = {"int": lambda m, x: m.tensor([0]), "mask": lambda m, x: m.tensor([True, False]),
         "slice_int": lambda m, x: (slice(None), m.tensor([0, 1])), "two_ints": lambda m, x: (m.tensor([0, 1]),) * 2,
         "dense_part": lambda m, x: (slice(1, None), m.tensor([0])),  # x[1:] is dense: overlap found
         "strided_part": lambda m, x: (m.tensor([0]), slice(None, 2)),  # x[:, :2] is not dense: torch does not look
         "out_of_range": lambda m, x: m.tensor([5])}
_VALUES = {"whole": lambda m, x: x, "row": lambda m, x: x[0], "one": lambda m, x: x[0, :1],
           "strided": lambda m, x: x[:, :2], "copy": lambda m, x: x.clone(), "cast": lambda m, x: x.to(m.int64)}


@pytest.mark.parametrize("key", sorted(_KEYS))
@pytest.mark.parametrize("value", sorted(_VALUES))
def test_setitem_overlap_before_shape(key, value):
    _same(_f64, _setitem(_KEYS[key], _VALUES[value]))


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_overlap_before_shape(accumulate):
    _same(_f64, lambda m, x: x.index_put_((m.tensor([0]),), x, accumulate=accumulate))
    _same(_f64, lambda m, x: x.index_put_((m.tensor([0]),), x[0], accumulate=accumulate))


def test_setitem_index_overlaps_target():
    ints = lambda m: m.arange(6).reshape(2, 3)  # noqa: E731
    _same(ints, _setitem(lambda m, x: x[0], lambda m, x: 1))
    _same(ints, _setitem(lambda m, x: (x[0, :2], x[1, :2]), lambda m, x: m.tensor([7, 8])))


# ----- numbers and one-element tensors written into a tensor of another dtype: torch's conversions and checks
_DTYPES = ["int64", "int32", "uint8", "bool", "float16", "bfloat16", "float32", "float64"]
_NUMBERS = [1 + 2j, 2 + 0j, 1e10, 300, -1, 70000., 1e39, float("inf"), 2 ** 63, 1.5]
_KEYS_N = {"basic": lambda m: 0, "all": lambda m: Ellipsis, "int": lambda m: m.tensor([0]),
           "mask": lambda m: m.tensor([True, False, True])}


def _zeros(dtype):
    return lambda m: m.zeros(3, dtype=getattr(m, dtype))


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("key", sorted(_KEYS_N))
def test_setitem_number_conversion(dtype, key):
    for v in _NUMBERS:
        _same(_zeros(dtype), _setitem(lambda m, x: _KEYS_N[key](m), lambda m, x: v))


_TENSORS = [(1 + 2j, "complex128"), (1 + 2j, "complex64"), (2 + 0j, "complex128"), (1e10, "float64"),
            (1e10, "float32"), (300., "float64"), (-1., "float64"), (-1, "int64"), (1e39, "float64"), (70000., "float32")]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("key", sorted(_KEYS_N))
def test_setitem_one_element_tensor(dtype, key):
    """A mask key runs as masked_fill_ with value.item() (checked); other keys copy the tensor in (a cast)."""
    for v, vdt in _TENSORS:
        _same(_zeros(dtype), _setitem(lambda m, x: _KEYS_N[key](m),
                                      lambda m, x: m.tensor(v, dtype=getattr(m, vdt))))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_fill_with_tensor_is_a_copy(dtype):
    """fill_(tensor) copies the value in (a cast as torch's on x86 for floats out of an integer dtype's range, the
    imaginary part dropped; no overflow check)."""
    for v, vdt in _TENSORS:
        _same(_zeros(dtype), lambda m, x: x.fill_(m.tensor(v, dtype=getattr(m, vdt))))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_fill_and_masked_fill_number_checks(dtype):
    for v in _NUMBERS[:-2]:
        _same(_zeros(dtype), lambda m, x: x.fill_(v))
        _same(_zeros(dtype), lambda m, x: x.masked_fill_(m.tensor([True, False, True]), v))


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "complex64"])
def test_index_fill_complex_value(dtype):
    for v in (1 + 2j, 1 + 0j, lambda m: m.tensor(1j), lambda m: m.tensor(1 + 0j, dtype=m.complex64),
              lambda m: m.tensor([1j]), lambda m: m.tensor(1.5)):
        value = v if callable(v) else (lambda m, v=v: v)
        _same(lambda m: m.zeros(2, 3, dtype=getattr(m, dtype)),
              lambda m, x: x.index_fill_(1, m.tensor([0]), value(m)))
        _same(lambda m: m.zeros(2, 3, dtype=getattr(m, dtype)),
              lambda m, x: x.index_fill_(1, m.tensor([5]), value(m)))  # (the value's checks come first)
        _same(lambda m: m.zeros(2, 3, dtype=getattr(m, dtype)),
              lambda m, x: x.index_fill(1, m.tensor([0]), value(m)))


# ----- softmax / log_softmax of empty tensors: torch runs no kernel, so any dtype goes (integers stay integers)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(0,), (0, 0), (1, 0), (0, 3), (3, 0)])
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool", "float32", "float64"])
def test_softmax_of_empty(name, shape, dtype):
    make = lambda m: m.zeros(shape, dtype=getattr(m, dtype))  # noqa: E731
    for dim in (0, -1):
        _same(make, lambda m, x: getattr(m, name)(x, dim))
        _same(make, lambda m, x: getattr(m.nn.functional, name)(x, dim))
        _same(make, lambda m, x: getattr(x, name)(dim, dtype=m.float32))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_empty_backward(name):
    got = []
    for m in (tl, torch):
        x = m.zeros(0, 3, dtype=m.float64, requires_grad=True)
        y = getattr(m, name)(x, 0)
        y.sum().backward()
        got.append((y.grad_fn.name(), tuple(x.grad.shape), str(x.grad.dtype).split(".")[-1]))
    assert got[0] == got[1]


def test_softmax_nonempty_integer_still_refused():
    _same(lambda m: m.zeros(2, 3, dtype=m.int64), lambda m, x: m.softmax(x, 0))
    _same(lambda m: m.zeros(3, dtype=m.bool), lambda m, x: m.log_softmax(x, 0))


# ----- out= of another dtype for ops whose result keeps the input's dtype: "Found dtype ..." before the kernel's
# own dtype refusals (floor of bool, frac of int, ...); neg's bool and sign's complex refusals come first
_SAME_DTYPE_OUT = ["floor", "ceil", "round", "trunc", "frac", "abs", "neg", "sign", "sgn", "bitwise_not",
                   "conj_physical", "signbit", "sin", "exp", "logical_not", "nan_to_num"]


@pytest.mark.parametrize("name", _SAME_DTYPE_OUT)
@pytest.mark.parametrize("dtype", ["bool", "int64", "float64", "complex64"])
def test_unary_out_dtype_refusal_order(name, dtype):
    for odt in ("bool", "int64", "int32", "float32", "float64", "complex64"):
        _same(lambda m: m.zeros(3, dtype=getattr(m, odt)),
              lambda m, out: getattr(m, name)(m.tensor([1, 0, 1]).to(getattr(m, dtype)), out=out))


def test_unary_out_autograd_refusal_first():
    _same(lambda m: m.zeros(1, dtype=m.int64), lambda m, out: m.abs(m.ones(1, requires_grad=True), out=out))


# ----- complex division by a zero: torch's c10::complex gives a.real / |b.real| + a.imag / |b.imag| j (the zeros'
# signs do not count); the gradients follow torch's formulas (grad / conj(b), -grad * conj(a / b / b))
def test_complex_division_by_signed_zeros():
    zeros = np.array([complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), 0j, 1 + 1j, 0j, 0.3 - 2j])
    nums = np.array([-1.421 + 1.038j, 2 - 1j, -1 - 1j, 0j, 1e308 + 1e308j, complex(0, 1), 0.7 + 1j])
    got = []
    for m in (tl, torch):
        seen = []
        for dt in ("complex64", "complex128"):
            a = m.tensor(nums, dtype=getattr(m, dt), requires_grad=True)
            b = m.tensor(zeros, dtype=getattr(m, dt), requires_grad=True)
            q = a / b
            seen.append(repr(np.asarray(q.tolist()).tolist()))
            seen.append(repr(np.asarray(m.div(a.detach(), b.detach()[0]).tolist()).tolist()))
            seen += [repr(np.asarray(g.tolist()).round(6).tolist()) for g in m.autograd.grad(q.real.sum(), (a, b))]
        got.append(seen)
    assert got[0] == got[1]


def test_complex_times_bool_then_divide():
    """A complex tensor times a bool mask holds signed zeros; dividing by it (random programs seed 30118)."""
    d = np.array([-1.421 + 1.038j, 0.916 + 1.389j, -0.057 - 0.513j])
    mask = np.array([[False, True, False], [True, False, True]])
    got = [repr(np.asarray(m.divide(m.tensor(d), m.multiply(m.tensor(d), m.tensor(mask))).tolist()).tolist())
           for m in (tl, torch)]
    assert got[0] == got[1]


# ----- an integer or bool tensor to a negative integer number power: torch refuses (before a cast check)
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float32"])
@pytest.mark.parametrize("how", ["pow", "pow_", "ipow", "dunder", "out"])
def test_integer_to_negative_integer_number_power(dtype, how):
    def act(m, x):
        for e in (-1, -2, 0, 2, -1.0):
            y = x.clone()
            if how == "pow":
                y = m.pow(y, e)
            elif how == "pow_":
                y.pow_(e)
            elif how == "ipow":
                y **= e
            elif how == "dunder":
                y = y ** e
            else:
                m.pow(y, e, out=y)
        return y
    _same(lambda m: m.tensor([0, 2, 3]).to(getattr(m, dtype)), act)


# ----- a second derivative through a formula that reads a saved result only through a comparison (norm for
# p = inf: grad * sgn(x) * (|x| == result) / count): no edge to the first graph, which backward() freed
@pytest.mark.parametrize("p", [float("inf"), 1, 2])
def test_second_order_after_freed_graph(p):
    d = np.array([[-0.927, 0.522, -1.312], [0.213, -0.124, -1.413]])
    got = []
    for m in (tl, torch):
        x = m.tensor(d, requires_grad=True)
        x.norm(p, -1).sum().backward(create_graph=True, retain_graph=False)
        g = x.grad
        try:
            second, = m.autograd.grad(g.sum(), x, allow_unused=True, materialize_grads=True)
            got.append((g.requires_grad, np.asarray(torch.zeros(2, 3) if getattr(second, "_is_zerotensor", lambda:
                                                                                  False)() else second.tolist())
                        .tolist()))
        except RuntimeError as e:
            got.append(str(e)[:40])
    assert got[0] == got[1]


# ----- TensorIterator's order in copy_, clamp_ with tensor bounds, masked_fill_: a partial overlap of the target
# with an operand is refused before the shapes are checked (random programs seed 31093); masked_fill_ names
# self as tensor a
_TARGETS = {"t": lambda x: x.t(), "cols": lambda x: x[:, :2], "reshape": lambda x: x.reshape(3, 2),
            "row": lambda x: x[:1], "flat": lambda x: x.view(6)[:3]}
_SOURCES = {"x": lambda x: x, "cols": lambda x: x[:, :2], "t": lambda x: x.t(), "row0": lambda x: x[0],
            "flat": lambda x: x.view(6)[1:4]}
_WRITES = {"copy_": lambda t, s: t.copy_(s), "clamp_": lambda t, s: t.clamp_(min=s),
           "masked_fill_": lambda t, s: t.masked_fill_(s > 2, 1.), "add_": lambda t, s: t.add_(s),
           "lerp_": lambda t, s: t.lerp_(s, 0.5)}


@pytest.mark.parametrize("write", sorted(_WRITES))
@pytest.mark.parametrize("target", sorted(_TARGETS))
def test_overlap_before_shape_in_place(write, target):
    for source in _SOURCES.values():
        _same(lambda m: m.arange(6.).reshape(2, 3),
              lambda m, x: _WRITES[write](_TARGETS[target](x), source(x)))


def test_complex_division_second_order():
    """(random programs seed 31299: the zero-divisor branch must not make NaN gradients where it is not taken)"""
    a0 = np.array([[0.3 + 1.1j, -1.2 + 0.4j, 0.5j], [1.5, -0.7 - 0.2j, 0.9 + 0.9j]])
    got = []
    for m in (tl, torch):
        a = m.tensor(a0, dtype=m.complex64, requires_grad=True)
        y = (a + a).div_(a).expm1() + 1 / a
        g, = m.autograd.grad(y.real.sum() + y.imag.sum(), a, create_graph=True)
        g2, = m.autograd.grad(g.real.sum() + g.imag.sum(), a)
        got.append(np.asarray(g2.tolist()).round(4).tolist())
    assert got[0] == got[1]


# ----- flip's result is empty_like(input): the input's strides when it is dense (random programs seed 31972)
@pytest.mark.parametrize("view", ["swap01", "swap02", "swap12", "cols", "expand", "t"])
def test_flip_keeps_dense_layout(view):
    views = {"swap01": lambda x: x.swapdims(0, 1), "swap02": lambda x: x.swapdims(0, 2),
             "swap12": lambda x: x.swapdims(1, 2), "cols": lambda x: x[:, :, :2], "expand": lambda x: x.expand(2, 2, 3),
             "t": lambda x: x[:, 0].t()}
    got = []
    for m in (tl, torch):
        y = views[view](m.arange(6.).reshape(2, 1, 3))
        got.append([(tuple(f.stride()), np.asarray(f.tolist()).round(5).tolist()) for f in (y.flip(0), y.flip(-1), m.flip(y, (0, 1)),
                                                               m.acosh(y + 2).flip(0))])
    assert got[0] == got[1]


# ----- a view torch forbids to modify (made in no_grad mode, or one of several outputs) written in place with an
# operand that requires grad: refused before the op's own checks, even though the view itself does not require
# grad (random programs seed 32124)
_MAKERS = {"split": lambda m, b: b.split(1)[0], "unbind": lambda m, b: b.unbind(0)[0][None],
           "no_grad": lambda m, b: _no_grad_view(m, b)}


def _no_grad_view(m, base):
    with m.no_grad():
        return base[:1]


_OPS = {"addcdiv_": lambda m, v, w: v.addcdiv_(w, w + 1), "add_": lambda m, v, w: v.add_(w),
        "div_": lambda m, v, w: v.div_(w), "floor_divide_": lambda m, v, w: v.floor_divide_(w),
        "copy_": lambda m, v, w: v.copy_(w), "lerp_": lambda m, v, w: v.lerp_(w, 0.5),
        "clamp_": lambda m, v, w: v.clamp_(min=w), "fill_": lambda m, v, w: v.fill_(w if w.numel() == 1 else w[0]),
        "masked_fill_": lambda m, v, w: v.masked_fill_(m.ones(w.shape, dtype=m.bool), w.sum()),
        "setitem": lambda m, v, w: v.__setitem__(Ellipsis, w),
        "index_add_": lambda m, v, w: v.index_add_(1, m.tensor([0]), w[:, :1]),
        "scatter_": lambda m, v, w: v.scatter_(1, m.tensor([[0]]), w[:, :1])}


@pytest.mark.parametrize("op", sorted(_OPS))
@pytest.mark.parametrize("maker", sorted(_MAKERS))
@pytest.mark.parametrize("shape", [(1, 3), (2, 2)])
def test_forbidden_view_refused_first(op, maker, shape):
    _same(lambda m: m.zeros(2, 3),
          lambda m, base: _OPS[op](m, _MAKERS[maker](m, base), m.ones(shape, requires_grad=True)))


# ----- x[key] = value on a leaf, a view of one, or a view torch forbids to modify: torch's autograd check of the
# target x[basic part] comes before index_put_'s own checks (after copy_'s expand of the value); random programs
# seed 40137
_SET_TARGETS = {"leaf": lambda m, x: x, "view_of_leaf": lambda m, x: x.movedim(0, 1).movedim(0, 1),
                "slice_of_leaf": lambda m, x: x[:, :], "no_grad_view": lambda m, x: _no_grad_view(m, x * 1),
                "split_view": lambda m, x: (x * 1).split(1)[0]}
_SET_KEYS = {"int": lambda m: m.tensor([0]), "mask": lambda m: m.tensor([True]), "basic": lambda m: 0,
             "basic_int": lambda m: (slice(None), m.tensor([0, 1])), "ellipsis": lambda m: Ellipsis,
             "none": lambda m: None}


@pytest.mark.parametrize("target", sorted(_SET_TARGETS))
@pytest.mark.parametrize("key", sorted(_SET_KEYS))
def test_setitem_autograd_check_order(target, key):
    for value in (lambda m: m.ones(3), lambda m: m.ones(2, 3, dtype=m.float64), lambda m: 2.0):
        _same(lambda m: m.zeros(1, 3, requires_grad=True),
              lambda m, x: _SET_TARGETS[target](m, x).__setitem__(_SET_KEYS[key](m), value(m)))


@pytest.mark.parametrize("name", ["clamp_max_", "clamp_min_"])
@pytest.mark.parametrize("bound", [1, 1j, 2.5])
def test_clamp_one_bound_leaf_check_first(name, bound):
    """(random programs seed 40594: the leaf error before clamp's complex refusal)"""
    _same(lambda m: m.ones(3, dtype=m.complex128, requires_grad=True), lambda m, x: getattr(x, name)(bound))
    _same(lambda m: m.ones(3, dtype=m.float64, requires_grad=True), lambda m, x: getattr(x, name)(bound))


# ----- a bool tensor times or divided by inf / nan / 0: IEEE's nan (XLA rewrites convert(bool) * y as a select,
# which gave 0; random programs seed 41327)
@pytest.mark.parametrize("other", [float("inf"), float("nan"), 0.0, "bool0"])
def test_bool_times_and_over_special_values(other):
    def act(m, a):
        o = m.tensor(False) if other == "bool0" else m.tensor(other)
        return [(a * o).tolist(), (o * a).tolist(), (a / o).tolist(), m.true_divide(a, o).tolist(),
                m.mul(a, o.expand(2)).tolist(), (a * (o + 1j)).tolist()]
    got = [_observe(m, lambda m: m.tensor([True, False]), act)[0] for m in (tl, torch)]
    assert repr(got[0]) == repr(got[1])


# ----- amax/amin over an empty dim name it as given (-1), as torch does (random programs seed 40905)
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_empty_dim_message(name):
    for shape, dim in (((0,), -1), ((2, 0), -1), ((2, 0), (0, -1)), ((2, 0), (-1, 0)), ((2, 0), 1)):
        _same(lambda m: m.zeros(shape), lambda m, x: getattr(m, name)(x, dim))


def test_integer_trunc_division_broadcasts():
    """(random programs seed 41816: lax.div does not broadcast; JAX's TypeError reached the user)"""
    def act(m, a):
        b = m.tensor([[[1, 2, 3]], [[3, 1, 2]]])
        return [m.div(a, b, rounding_mode="trunc").tolist(), m.div(b, a[1:], rounding_mode="trunc").tolist(),
                m.div(a, 2, rounding_mode="trunc").tolist(), m.div(5, b, rounding_mode="trunc").tolist()]
    got = [_observe(m, lambda m: m.tensor([[0], [-7]]), act)[0] for m in (tl, torch)]
    assert got[0] == got[1]


@pytest.mark.parametrize("op", ["addcdiv_", "addcdiv", "addcmul_"])
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_addcdiv_integer_check_order(op, shape):
    """(random programs seed 41276: addcdiv's integer refusal before TensorIterator's shape and cast checks)"""
    for x_dt, dt1, dt2 in (("float32", "int64", "int64"), ("int64", "bool", "int64"), ("float32", "float32", "int64"),
                           ("int64", "int64", "int64")):
        _same(lambda m: m.zeros(3, dtype=getattr(m, x_dt)),
              lambda m, x: getattr(x, op)(m.ones(shape, dtype=getattr(m, dt1)), m.ones(shape, dtype=getattr(m, dt2))))
    _same(lambda m: m.zeros(3, requires_grad=True),
          lambda m, x: getattr(x, op)(m.ones(shape, dtype=m.int64), m.ones(shape, dtype=m.int64)))


def test_unflatten_of_a_strided_tensor_is_a_view():
    """Seed 40947: splitting a dim is always a view in torch (ViewBackward0), whatever the input's strides."""
    x = np.random.default_rng(0).random((2, 1, 3))
    for f in (lambda t: t.mT.unflatten(1, (3, 1)), lambda t: t.permute(2, 1, 0).unflatten(-1, (2, 1))):
        a = f(torch.tensor(x, requires_grad=True))
        b = f(tl.tensor(x, requires_grad=True))
        assert (b.grad_fn.name(), b.stride(), b._is_view()) == (a.grad_fn.name(), a.stride(), a._is_view())
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())


@pytest.mark.parametrize("shapes", [((2, 2, 0), (2, 0, 3)), ((2, 0, 2), (2, 2, 3)), ((0, 2, 2), (0, 2, 3))])
def test_bmm_with_an_empty_result_or_inner_dim_runs_no_dtype_check(shapes):
    """Seed 44279: torch's bmm returns an empty or zero result before its kernel refuses bool."""
    a, b = (torch.bmm(torch.zeros(shapes[0], dtype=torch.bool), torch.zeros(shapes[1], dtype=torch.bool)),
            tl.bmm(tl.zeros(shapes[0], dtype=tl.bool), tl.zeros(shapes[1], dtype=tl.bool)))
    assert (tuple(b.shape), str(b.dtype)) == (tuple(a.shape), str(a.dtype).replace("torch", "torchlike"))
    np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("shape", [(), (3,)])
def test_setitem_with_a_0d_bool_tensor_index_refuses_its_own_memory(shape):
    """Seed 44031: a 0-d bool tensor index is torch's index_put_ with a mask: the value may not share self's memory."""
    for value in (lambda z: z, lambda z: z.clone()):
        outcome = []
        for m in (torch, tl):
            z = m.ones(shape)
            try:
                z[m.tensor(True)] = value(z)
                outcome.append(("ok", z.numpy().tolist(), z._version))
            except RuntimeError as e:
                outcome.append(("error", str(e), z._version))
        assert outcome[0] == outcome[1]

"""Classes of differences the random programs (tests/random_programs.py) found, each checked against torch on the
same inputs: values, dtypes, strides, gradients, node names, ``_version``, ``requires_grad``, errors (type and
leading message)."""
import numpy as np
import pytest
import torch

import torchlike as tl


def _observe(m, fn):
    """What a user sees of ``fn(m)``: each returned tensor's value, dtype, strides, requires_grad, node name and
    version, or the error (type and first line of the message)."""
    try:
        out = fn(m)
    except Exception as e:  # noqa: BLE001
        return ("error", type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    outs = out if isinstance(out, (tuple, list)) else (out,)
    seen = []
    for t in outs:
        if isinstance(t, (m.Tensor,)):
            seen.append((repr(np.asarray(t.detach().tolist()).tolist()), str(t.dtype).split(".")[-1], tuple(t.stride()),
                         t.requires_grad, None if t.grad_fn is None else t.grad_fn.name(), t._version))
        else:
            seen.append(t if not isinstance(t, np.ndarray) else t.tolist())
    return seen


def _same(fn):
    a, b = _observe(tl, fn), _observe(torch, fn)
    assert a == b, (a, b)


def _leaf(m, dtype="float64"):
    return m.tensor(np.arange(6.0).reshape(2, 3) / 4, dtype=getattr(m, dtype), requires_grad=True)


# ----- an in-place op on a leaf that requires grad: torch's autograd check comes before the op's own checks
LEAF_FIRST = {
    "index_add_range": lambda m: _leaf(m).index_add_(0, m.tensor([5]), m.ones(1, 3, dtype=m.float64)),
    "index_add_dtype": lambda m: _leaf(m).index_add_(0, m.tensor([0]), m.ones(1, 3)),
    "index_add_index_2d": lambda m: _leaf(m).index_add_(0, m.tensor([[0]]), m.ones(1, 3, dtype=m.float64)),
    "scatter_dtype": lambda m: _leaf(m).scatter_(0, m.zeros(2, 3, dtype=m.long), m.ones(2, 3)),
    "scatter_range": lambda m: _leaf(m).scatter_(0, m.full((2, 3), 7), m.ones(2, 3, dtype=m.float64)),
    "scatter_add_range": lambda m: _leaf(m).scatter_add_(0, m.full((2, 3), 7), m.ones(2, 3, dtype=m.float64)),
    "masked_fill_mask": lambda m: _leaf(m).masked_fill_(m.ones(2, 3), 1.),
    "masked_fill_shape": lambda m: _leaf(m).masked_fill_(m.ones(2, 2, 3, dtype=m.bool), 1.),
    "masked_fill_value": lambda m: _leaf(m).masked_fill_(m.ones(2, 3, dtype=m.bool), m.ones(2)),
    "fill_value": lambda m: _leaf(m).fill_(m.ones(2)),
    "copy_shape": lambda m: _leaf(m).copy_(m.ones(4)),
    "div_mode": lambda m: _leaf(m).div_(2, rounding_mode="bad"),
    "view_of_leaf": lambda m: _leaf(m)[0].index_add_(0, m.tensor([5]), m.ones(1, dtype=m.float64)),
}


@pytest.mark.parametrize("case", sorted(LEAF_FIRST))
def test_leaf_check_before_argument_checks(case):
    _same(LEAF_FIRST[case])


def _detach_in_inference(m, view):
    x = _leaf(m)
    t = x[0] if view else (x * 1 if view is None else x)
    with m.inference_mode():
        r = t.detach_()
    return r is t, t, x


@pytest.mark.parametrize("view", [False, True, None])
def test_detach_in_inference_mode_changes_nothing(view):
    _same(lambda m: _detach_in_inference(m, view))


# ----- an in-place op whose result type is promoted past self's dtype: torch's kernel refusal names the promoted
# dtype (complex64.div_(float64, floor): 'ComplexDouble'); clamp with number bounds names self's C++ type
_DTYPES = ["bool", "int64", "int32", "float32", "float64", "complex64", "complex128"]
_INPLACE = {
    "clamp_max_": lambda s, o: s.clamp_max_(o), "clamp_min_": lambda s, o: s.clamp_min_(o),
    "div_floor": lambda s, o: s.div_(o, rounding_mode="floor"), "div_trunc": lambda s, o: s.div_(o, rounding_mode="trunc"),
    "floor_divide_": lambda s, o: s.floor_divide_(o), "remainder_": lambda s, o: s.remainder_(o),
    "fmod_": lambda s, o: s.fmod_(o), "clamp_": lambda s, o: s.clamp_(o, o), "atan2_": lambda s, o: s.atan2_(o),
    "hypot_": lambda s, o: s.hypot_(o), "pow_": lambda s, o: s.pow_(o), "addcmul_": lambda s, o: s.addcmul_(o, o),
}


@pytest.mark.parametrize("name", sorted(_INPLACE))
def test_inplace_refusal_names_promoted_dtype(name):
    for a in _DTYPES:
        for b in _DTYPES:
            _same(lambda m: _INPLACE[name](m.ones(2, dtype=getattr(m, a)), m.ones(2, dtype=getattr(m, b))))


_CLAMP_NUMBER = {
    "clamp_max_": lambda m, s, v: s.clamp_max_(v), "clamp_min_": lambda m, s, v: s.clamp_min_(v),
    "clamp_": lambda m, s, v: s.clamp_(v, v), "clamp_min_kw": lambda m, s, v: s.clamp_(min=v),
    "clamp_out_self": lambda m, s, v: m.clamp(s, v, out=s) if not isinstance(v, complex) else None,
    "clamp_max_out_self": lambda m, s, v: m.clamp_max(s, v, out=s),
    "clamp_max_out": lambda m, s, v: m.clamp_max(s, v, out=m.ones(2, dtype=s.dtype)),
    "clamp_min_function": lambda m, s, v: m.clamp_min(s, v),
}


@pytest.mark.parametrize("name", sorted(_CLAMP_NUMBER))
def test_clamp_with_number_bounds_errors(name):
    for a in _DTYPES:
        for v in (2, -1.5, True, 1j):
            _same(lambda m: _CLAMP_NUMBER[name](m, m.ones(2, dtype=getattr(m, a)), v))


def test_allclose_isclose_shape_errors():
    for dt in ("bool", "float64", "int64"):
        _same(lambda m: m.allclose(m.ones(2, 3, dtype=getattr(m, dt)), m.ones(3, 3, dtype=getattr(m, dt))))
        _same(lambda m: m.isclose(m.ones(2, 3, dtype=getattr(m, dt)), m.ones(3, 3, dtype=getattr(m, dt))))


# ----- a node with trailing integer outputs (max(dim)'s indices): torch's node never registers them, so its hooks
# and _input_metadata see only the differentiable outputs
_MULTI = {"max_dim": lambda m, x: m.max(x, 1), "min_dim": lambda m, x: x.min(0), "sort": lambda m, x: x.sort(1),
          "topk": lambda m, x: x.topk(2), "kthvalue": lambda m, x: x.kthvalue(1), "median": lambda m, x: x.median(1),
          "mode": lambda m, x: x.mode(1), "aminmax": lambda m, x: m.aminmax(x, dim=1),
          "cummax": lambda m, x: x.cummax(1), "max_all": lambda m, x: x.max()}


def _hooked(m, name):
    x = m.tensor([[1., 3., 2.], [0.5, -1., 4.]], requires_grad=True)
    out = _MULTI[name](m, x)
    v = out[0] if isinstance(out, tuple) else out
    log = []
    v.grad_fn.register_prehook(lambda go: log.append(("pre", [None if g is None else g.tolist() for g in go])))
    v.grad_fn.register_hook(lambda gi, go: log.append(("post", [None if g is None else g.tolist() for g in gi],
                                                        [None if g is None else g.tolist() for g in go])))
    n_meta = len(v.grad_fn._input_metadata)
    (v * 2).sum().backward()
    return log, n_meta, x.grad.tolist()


@pytest.mark.parametrize("name", sorted(_MULTI))
def test_node_hooks_see_differentiable_outputs_only(name):
    _same(lambda m: _hooked(m, name))


# ----- a value that requires grad written in place into an integer or bool tensor: torch records the node on the
# integer tensor (FillBackward3, MaskedFillBackward1, EqBackward1, CopySlices; copy_ excepted), which then requires
# grad; a differentiable op with an integer result from it is refused, and a gradient reaching it is torch's engine
# assert
def _x(m):
    return m.tensor(1.5, requires_grad=True)


def _y(m):
    return m.tensor(np.arange(6.0).reshape(2, 3) / 5, requires_grad=True)


def _ints(m, dtype="long"):
    return m.zeros(2, 3, dtype=getattr(m, dtype))


def _mask(m):
    return m.tensor([[True, False, True], [False, False, True]])


_WRITES = {
    "fill_": lambda m: _ints(m, "bool").fill_(_x(m)),
    "masked_fill_": lambda m: _ints(m).masked_fill_(_mask(m), _x(m)),
    "eq_": lambda m: _ints(m).eq_(_y(m)),
    "lt_bool": lambda m: _ints(m, "bool").lt_(_x(m)),
    "ge_number_target_grad": lambda m: _ints(m).masked_fill_(_mask(m), _x(m)).ge_(1),
    "view_fill_": lambda m: (lambda i: (i[0].fill_(_x(m)), i)[1])(_ints(m)),
    "view_eq_": lambda m: (lambda i: (i[0].eq_(_x(m)), i)[1])(_ints(m)),
    "setitem_mask": lambda m: (lambda i: (i.__setitem__(_mask(m), _x(m)), i)[1])(_ints(m)),
    "setitem_fill": lambda m: (lambda i: (i.__setitem__((0,), _x(m)), i)[1])(_ints(m)),
    "setitem_copy": lambda m: (lambda i: (i.__setitem__(slice(None), _y(m)), i)[1])(_ints(m)),
    "setitem_copy_0d": lambda m: (lambda i: (i.__setitem__(0, _x(m)), i)[1])(m.zeros(3, dtype=m.long)),
    "copy_": lambda m: _ints(m, "bool").copy_(_y(m)),
    "where": lambda m: m.where(_mask(m), _ints(m), _y(m)),
}


@pytest.mark.parametrize("case", sorted(_WRITES))
def test_grad_value_written_into_integer_tensor(case):
    _same(_WRITES[case])


def _int_with_grad(m):
    return _ints(m).masked_fill_(_mask(m), _x(m))


_AFTER = {
    "mul_int": lambda i: i * 2, "mul_float": lambda i: i * 2.5, "sum": lambda i: i.sum(), "float": lambda i: i.float(),
    "neg": lambda i: -i, "gt": lambda i: i > 0, "view": lambda i: i.view(6), "t": lambda i: i.t(),
    "getitem": lambda i: i[0], "clone": lambda i: i.clone(), "detach": lambda i: i.detach(), "abs": lambda i: i.abs(),
    "sin": lambda i: i.sin(), "mean": lambda i: i.float().mean(), "where": lambda i: i.where(i > 0, 0),
    "expand": lambda i: i.expand(2, 2, 3), "repeat": lambda i: i.repeat(2, 1),
    "div": lambda i: i / 2, "max": lambda i: i.max(), "argmax": lambda i: i.argmax(), "mul_": lambda i: i.mul_(2),
    "add_": lambda i: i.add_(1), "fill_": lambda i: i.fill_(3), "zero_": lambda i: i.zero_(), "bool": lambda i: i.bool(),
    "long": lambda i: i.long(), "double": lambda i: i.double(), "pow": lambda i: i ** 2,
}


@pytest.mark.parametrize("case", sorted(_AFTER))
def test_ops_on_integer_tensor_that_requires_grad(case):
    _same(lambda m: _AFTER[case](_int_with_grad(m)))


_BACKWARD = {
    "to_double": lambda m, i, x: m.autograd.grad(i.double().sum(), x),
    "mul_float": lambda m, i, x: (i * 2.5).sum().backward(),
    "sin": lambda m, i, x: m.autograd.grad(i.sin().sum(), x),
    "other_path": lambda m, i, x: m.autograd.grad((x * 2).sum() + (i > 0).sum(), x),
    "view_base": lambda m, i, x: (lambda j: (j[0].fill_(x), m.autograd.grad(j.float().sum(), x))[1])(_ints(m)),
}


@pytest.mark.parametrize("case", sorted(_BACKWARD))
def test_backward_into_integer_tensor_asserts_as_torch(case):
    def run(m):
        x = _x(m)
        i = _ints(m).masked_fill_(_mask(m), x)
        return _BACKWARD[case](m, i, x)
    _same(run)


# ----- result layouts: pow(number, tensor) is row-major in torch; isfinite, xlogy(number, t), nan_to_num keep the
# input's layout (TensorIterator / preserve_format)
def _laid_out(m):
    return {"f": m.tensor([[0.5, 1., -2.], [0.3, -0.6, 0.9]], dtype=m.float64).t(),
            "i": m.tensor([[1, 0, 2], [0, 1, 1]]).argwhere(),
            "b": (m.tensor([[1, 0, 2], [0, 1, 1]]) > 0).t()}


_LAYOUT = {"rpow2": lambda m, t: 2 ** t, "rpow_half": lambda m, t: 0.5 ** t, "pow_number": lambda m, t: m.pow(3, t),
           "isfinite": lambda m, t: m.isfinite(t), "xlogy_number": lambda m, t: m.xlogy(2, t),
           "nan_to_num": lambda m, t: m.nan_to_num(t), "isinf": lambda m, t: m.isinf(t), "sgn": lambda m, t: m.sgn(t)}


@pytest.mark.parametrize("name", sorted(_LAYOUT))
@pytest.mark.parametrize("kind", ["f", "i", "b"])
def test_result_layout(name, kind):
    _same(lambda m: _LAYOUT[name](m, _laid_out(m)[kind]))


# ----- float -> integer conversion: torch truncates as x86 does (NaN, infinities and out-of-range values become
# the lowest int64/int32; narrower integers take the int32's low bits); JAX saturates
_VALUES = [float("nan"), float("inf"), -float("inf"), 1e20, -1e20, 3e9, -3e9, 300.5, -1.5, 70000.7, 2.5, -0.5]


@pytest.mark.parametrize("src", ["float64", "float32", "complex64"])
@pytest.mark.parametrize("dst", ["int64", "int32", "int16", "int8", "uint8", "bool"])
def test_float_to_integer_conversion(src, dst):
    def run(m):
        x = m.tensor(_VALUES, dtype=getattr(m, src))
        target = m.zeros(len(_VALUES), dtype=getattr(m, dst))
        return x.to(getattr(m, dst)), target.copy_(x), m.zeros(2, 6, dtype=getattr(m, dst)).copy_(x.reshape(2, 6)[0])
    _same(run)


def test_setitem_float_into_integer():
    def run(m):
        t = m.zeros(2, 6, dtype=m.long)
        t[0] = m.tensor(_VALUES[:6])
        t[1, m.tensor([0, 2])] = m.tensor([float("nan"), 3e9])
        return t
    _same(run)


# ----- out= that is also an input: TensorIterator refuses to resize it (as an in-place op); cat refuses any overlap
def _out_input(m, shape=(2, 3), dtype="float64"):
    full = (m.arange(6, dtype=getattr(m, dtype)) + 1).reshape(2, 3)
    return full[:shape[0], :shape[1]] * 1 if len(shape) == 2 else full[0] * 1


_OUT_ALIAS = {
    "add_out_a": lambda m: (lambda a, b: m.add(a, b, out=a))(_out_input(m), _out_input(m, (1, 3))),
    "add_out_b_grows": lambda m: (lambda a, b: m.add(a, b, out=b))(_out_input(m), _out_input(m, (1, 3))),
    "mul_out_a_grows": lambda m: (lambda a, b: m.mul(a, b, out=a))(_out_input(m, (1, 3)), _out_input(m)),
    "sub_out_b": lambda m: (lambda a, b: m.sub(a, b, out=b))(_out_input(m), _out_input(m)),
    "maximum_out_b_grows": lambda m: (lambda a, b: m.maximum(a, b, out=b))(_out_input(m), _out_input(m, (3,))),
    "pow_out_a": lambda m: (lambda a, b: m.pow(a, b, out=a))(_out_input(m), _out_input(m)),
    "max_out_a": lambda m: (lambda a, b: m.max(a, b, out=a))(_out_input(m), _out_input(m)),
    "where_out_a": lambda m: (lambda a, b: m.where(a > 2, a, b, out=a))(_out_input(m), _out_input(m) * 10),
    "where_out_b_grows": lambda m: (lambda a, b: m.where(a > 2, a, b, out=b))(_out_input(m), _out_input(m, (1, 3))),
    "cat_out_a": lambda m: (lambda a: m.cat([a, a], out=a))(_out_input(m)),
    "cat_out_other": lambda m: (lambda a, b: m.cat([a, b], out=b))(_out_input(m), _out_input(m)),
    "sin_out_a": lambda m: (lambda a: m.sin(a, out=a))(_out_input(m)),
    "clamp_out_a": lambda m: (lambda a: m.clamp(a, 2, 4, out=a))(_out_input(m)),
    # (mm into one of its own inputs: torch's values depend on the CPU's BLAS kernel (the product on Intel, zeros
    # on AMD, which clears out first), so the result's shape, dtype and strides are compared)
    "mm_out_square": lambda m: (lambda a: m.mm(a, a.t(), out=a).stride())(_out_input(m, (2, 2))),
}


@pytest.mark.parametrize("case", sorted(_OUT_ALIAS))
def test_out_that_is_an_input(case):
    _same(_OUT_ALIAS[case])


# ----- integer division by zero is refused after torch's leaf, shape and cast checks
def _longs(m, *shape):
    return m.ones(*shape, dtype=m.long)


_DIVISION = {
    "floor_divide_shape": lambda m: m.floor_divide(_longs(m, 2, 3), m.zeros(4, dtype=m.long)),
    "floor_divide_grows": lambda m: _longs(m, 2, 3).floor_divide_(m.zeros(2, 2, 3, dtype=m.long)),
    "remainder_grows": lambda m: _longs(m, 2, 3).remainder_(m.zeros(2, 2, 3, dtype=m.long)),
    "fmod_zero": lambda m: _longs(m, 2, 3).fmod_(m.zeros(3, dtype=m.long)),
    "div_trunc_zero": lambda m: _longs(m, 2, 3).div_(m.zeros(3, dtype=m.long), rounding_mode="trunc"),
    "div_floor_shape": lambda m: _longs(m, 2, 3).div_(m.zeros(4, dtype=m.long), rounding_mode="floor"),
    "bool_target_cast": lambda m: m.ones(2, 3, dtype=m.bool).floor_divide_(m.zeros(3, dtype=m.long)),
    "remainder_function_shape": lambda m: m.remainder(_longs(m, 2, 3), m.zeros(2, 2, dtype=m.long)),
}


@pytest.mark.parametrize("case", sorted(_DIVISION))
def test_integer_division_by_zero_check_order(case):
    _same(_DIVISION[case])


@pytest.mark.parametrize("decimals", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["complex128", "complex64", "bool", "int64", "float32"])
def test_round_decimals_refusal(decimals, dtype):
    _same(lambda m: m.round(m.ones(2, dtype=getattr(m, dtype)), decimals=decimals))
    _same(lambda m: m.ones(2, dtype=getattr(m, dtype)).round_(decimals=decimals))


# ----- an in-place op whose operand shares memory with self: TensorIterator refuses the overlap before it checks
# the shapes
_OVERLAP = {
    "add_": lambda m, v, w: v.add_(w), "mul_": lambda m, v, w: w.mul_(v[0]), "hypot_": lambda m, v, w: v.hypot_(w),
    "addcmul_": lambda m, v, w: v.addcmul_(w, w), "clamp_min_": lambda m, v, w: v.clamp_min_(w),
    "lerp_": lambda m, v, w: v.lerp_(w, 0.5), "same_shape": lambda m, v, w: v[0, 1:].sub_(w),
}


@pytest.mark.parametrize("case", sorted(_OVERLAP))
def test_inplace_overlap_before_shape(case):
    def run(m):
        a = m.arange(6.0)
        return _OVERLAP[case](m, a.view(2, 3), a[:2])
    _same(run)


# ----- a NaN or infinite gradient through amax/amin reaches every element (torch's grad * mask: NaN off the extremes)
@pytest.mark.parametrize("reduce", ["amin_all", "amin_dim", "amax_keepdim", "amax_empty_dims"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2.0])
def test_amax_amin_nonfinite_gradient(reduce, value):
    def run(m):
        x = m.tensor([[1., 2., 3.], [4., 5., 0.]], requires_grad=True)
        y = {"amin_all": lambda: x.amin((0, 1)), "amin_dim": lambda: x.amin(1), "amax_keepdim": lambda: x.amax(0, True),
             "amax_empty_dims": lambda: x.amax(())}[reduce]()
        return m.autograd.grad(y, x, m.full(y.shape, value, dtype=m.float32))
    _same(run)


@pytest.mark.parametrize("fn", ["sign", "sgn"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_sign_of_nan_is_zero(fn, dtype):
    _same(lambda m: getattr(m, fn)(m.tensor([float("nan"), -0., 1., -float("inf")], dtype=getattr(m, dtype))))


@pytest.mark.parametrize("shared", [True, False])
def test_index_add_overlap_before_bounds(shared):
    def run(m):
        x = m.ones(2, 1, 3, requires_grad=True) / 2
        return x.index_add_(0, m.tensor([5]), x[:1] if shared else x[:1] * 1)
    _same(run)

"""nn's unpooling, fractional max pooling, the *_with_indices poolings and the small legacy modules (Softmax2d,
NLLLoss2d, CrossMapLRN2d, Container) against torch 2.13.

Functional cases run on both libraries on the same NumPy inputs: values and indices, graphs with saved attributes,
first- and second-order gradients (tests/oracle.py's assert_case_matches); errors compare type and first line.
Shapes are few and shared (each new one is a compile).
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_case_matches, assert_same, assert_same_error, compare_graph, error_of

RNG = np.random.default_rng(21)
X1, X2, X3 = RNG.standard_normal((2, 3, 7)), RNG.standard_normal((2, 3, 6, 5)), RNG.standard_normal((2, 2, 5, 4, 4))
S2, S3 = RNG.random((2, 3, 2)), RNG.random((3, 2, 3))  # fractional pooling's samples (one batch row spare in 3-d)


def F(m):
    return m.nn.functional


def _unpool(nd, x, k, s=None, p=0, output_size=None, m=None):
    out, idx = getattr(F(m), f"max_pool{nd}d")(x, k, s, p, return_indices=True)
    return getattr(F(m), f"max_unpool{nd}d")(out, idx, k, s, p, output_size=output_size)


CASES = {
    "max_unpool1d": (lambda m, x: _unpool(1, x, 2, m=m), X1),
    "max_unpool1d_output_size": (lambda m, x: _unpool(1, x, 3, 2, 1, output_size=[2, 3, 7], m=m), X1),
    "max_unpool1d_unbatched": (lambda m, x: _unpool(1, x[0], 2, m=m), X1),
    "max_unpool2d": (lambda m, x: _unpool(2, x, 2, output_size=(6, 5), m=m), X2),
    "max_unpool2d_overlapping": (lambda m, x: _unpool(2, x, 3, (2, 1), 1, output_size=(6, 5), m=m), X2),
    "max_unpool2d_unbatched": (lambda m, x: _unpool(2, x[1], (2, 3), output_size=(6, 5), m=m), X2),
    "max_unpool3d": (lambda m, x: _unpool(3, x, 2, output_size=(5, 4, 4), m=m), X3),
    "max_unpool3d_padded": (lambda m, x: _unpool(3, x[0], 3, 2, 1, output_size=(5, 4, 4), m=m), X3),
    "max_pool1d_with_indices": (lambda m, x: F(m).max_pool1d_with_indices(x, 3, 2, 1, ceil_mode=True), X1),
    "max_pool2d_with_indices": (lambda m, x: F(m).max_pool2d_with_indices(x, 2, return_indices=False), X2),
    "max_pool3d_with_indices": (lambda m, x: F(m).max_pool3d_with_indices(x, (2, 1, 2), dilation=(1, 2, 1)), X3),
    "adaptive_max_pool1d_with_indices": (lambda m, x: F(m).adaptive_max_pool1d_with_indices(x, 3), X1),
    "adaptive_max_pool2d_with_indices": (lambda m, x: F(m).adaptive_max_pool2d_with_indices(x, (None, 3)), X2),
    "adaptive_max_pool3d_with_indices": (lambda m, x: F(m).adaptive_max_pool3d_with_indices(x, (2, 3, None)), X3),
    "fractional_max_pool2d": (lambda m, x: F(m).fractional_max_pool2d(x, 2, (4, 3), return_indices=True,
                                                                       _random_samples=m.tensor(S2)), X2),
    "fractional_max_pool2d_ratio_unbatched": (lambda m, x: F(m).fractional_max_pool2d_with_indices(
        x[0], (3, 2), output_ratio=(0.5, 0.7), _random_samples=m.tensor(S2[1:])), X2),
    "fractional_max_pool3d": (lambda m, x: F(m).fractional_max_pool3d(x, (2, 1, 2), 2, _random_samples=m.tensor(S3)),
                              X3),
    "fractional_max_pool3d_unbatched": (lambda m, x: F(m).fractional_max_pool3d_with_indices(
        x[1], 2, output_ratio=0.5, _random_samples=m.tensor(S3)), X3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_functional(name):
    fn, x = CASES[name]
    assert_case_matches(fn, [x], rtol=1e-7, atol=1e-9)


def test_nodes_and_saved_attributes():
    """torch's nodes below the results, with their saved attributes (the 1-d unpooling is torch's composite)."""
    for fn, a in ((lambda m, x: _unpool(1, x, 2, output_size=(7,), m=m), X1),
                  (lambda m, x: _unpool(2, x, 2, output_size=(6, 5), m=m), X2),
                  (lambda m, x: _unpool(3, x, 2, output_size=(5, 4, 4), m=m), X3),
                  (lambda m, x: F(m).fractional_max_pool2d(x, 2, 3, _random_samples=m.tensor(S2)), X2),
                  (lambda m, x: F(m).fractional_max_pool3d(x, 2, 2, _random_samples=m.tensor(S3)), X3)):
        ours, theirs = (fn(m, m.tensor(a, requires_grad=True)) for m in (tl, torch))
        compare_graph(ours.grad_fn, theirs.grad_fn)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_fractional_windows_as_torchs_in_each_dtype(dtype):
    """The window starts come from the samples in their own dtype, rounded as torch's Half / BFloat16 arithmetic:
    values and indices equal torch's exactly (many planes, uneven strides)."""
    x, s = RNG.standard_normal((1, 64, 23, 19)), RNG.random((1, 64, 2))
    got = [F(m).fractional_max_pool2d(m.tensor(x).to(getattr(m, dtype)), 2, (13, 7), return_indices=True,
                                      _random_samples=m.tensor(s).to(getattr(m, dtype))) for m in (tl, torch)]
    np.testing.assert_array_equal(got[0][1].numpy(), got[1][1].numpy())
    np.testing.assert_array_equal(got[0][0].float().numpy(), got[1][0].float().numpy())


def test_fractional_nan_and_empty_windows():
    """A window's NaN wins (the last one), as torch; a kernel of 0 gives -inf at the window's start."""
    x = X2.copy()
    x[:, :, 1:3, 1:3] = np.nan
    for fn in (lambda m, t: F(m).fractional_max_pool2d(t, 2, 3, return_indices=True, _random_samples=m.tensor(S2)),
               lambda m, t: F(m).fractional_max_pool2d(t, 0, 3, return_indices=True, _random_samples=m.tensor(S2))):
        ours, theirs = (fn(m, m.tensor(x)) for m in (tl, torch))
        assert_same(ours, theirs)


def test_fractional_samples_from_the_generator():
    """Without ``_random_samples``: drawn as torch draws them (rand(N, C, nd) in the input's dtype) from
    torchlike's generator; the windows are valid ones."""
    x = tl.tensor(X2, dtype=tl.float32)
    tl.manual_seed(5)
    out, idx = F(tl).fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    tl.manual_seed(5)
    same = F(tl).fractional_max_pool2d(x, 2, (3, 2), return_indices=True, _random_samples=tl.rand(2, 3, 2))
    assert_same(out, same[0]) and assert_same(idx, same[1])
    assert out.shape == idx.shape == (2, 3, 3, 2) and out.dtype == tl.float32 and idx.dtype == tl.int64
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(out.numpy(), np.take_along_axis(flat.numpy(), idx.reshape(2, 3, -1).numpy(),
                                                                  -1).reshape(out.shape))
    rows, cols = idx.numpy() // 5, idx.numpy() % 5
    assert (np.diff(rows, axis=2) >= 0).all() and (np.diff(cols, axis=3) >= 0).all()
    out3 = F(tl).fractional_max_pool3d(tl.tensor(X3)[0], 2, output_size=(2, 2, 1))
    assert out3.shape == (2, 2, 2, 1) and out3.dtype == tl.float64


def _x(m, *shape, dtype="float32"):
    return m.zeros(*shape, dtype=getattr(m, dtype))


def _pooled(m, nd, **kw):
    shape = {1: (2, 3, 8), 2: (2, 3, 4, 4), 3: (2, 3, 4, 4, 4)}[nd]
    return getattr(F(m), f"max_pool{nd}d")(m.arange(float(np.prod(shape))).reshape(shape), 2, return_indices=True)


def _bad(m, nd, value, at=-1):
    out, idx = _pooled(m, nd)
    idx = idx.clone()
    idx.view(-1)[at] = value
    return out, idx


ERRORS = {
    "unpool2d_rank": lambda m: F(m).max_unpool2d(*[t[0, 0] for t in _pooled(m, 2)], 2),
    "unpool2d_rank1": lambda m: F(m).max_unpool2d(*[t[0, 0, 0] for t in _pooled(m, 2)], 2),
    "unpool2d_index_high": lambda m: F(m).max_unpool2d(*_bad(m, 2, 100, 17), 2),
    "unpool2d_index_negative": lambda m: F(m).max_unpool2d(*_bad(m, 2, -7), 2),
    "unpool2d_index_channels_last": lambda m: F(m).max_unpool2d(
        _bad(m, 2, 99, 5)[0].contiguous(memory_format=m.channels_last), _bad(m, 2, 99, 5)[1], 2),
    "unpool2d_index_shape": lambda m: F(m).max_unpool2d(_pooled(m, 2)[0], _pooled(m, 2)[1][..., :1], 2),
    "unpool2d_index_dtype": lambda m: F(m).max_unpool2d(_pooled(m, 2)[0], _pooled(m, 2)[1].int(), 2),
    "unpool2d_long": lambda m: F(m).max_unpool2d(_pooled(m, 2)[0].long(), *_bad(m, 2, 100)[1:], 2),
    "unpool2d_bool_channels_last": lambda m: F(m).max_unpool2d(
        _pooled(m, 2)[0].bool().contiguous(memory_format=m.channels_last), _pooled(m, 2)[1], 2),
    "unpool2d_complex": lambda m: F(m).max_unpool2d(_pooled(m, 2)[0].to(m.complex64), _pooled(m, 2)[1], 2),
    "unpool2d_output_size_range": lambda m: F(m).max_unpool2d(*_pooled(m, 2), 2, output_size=[6, 5]),
    "unpool2d_output_size_len": lambda m: F(m).max_unpool2d(*_pooled(m, 2), 2, output_size=(5,)),
    "unpool2d_output_size_negative": lambda m: F(m).max_unpool2d(*_pooled(m, 2), 2, padding=3),
    "unpool2d_output_size_small": lambda m: F(m).max_unpool2d(*_pooled(m, 2), 2, output_size=m.Size([2, 3, 3, 3])),
    "unpool2d_kernel_len": lambda m: F(m).max_unpool2d(*_pooled(m, 2), (2, 2, 2)),
    "unpool2d_empty_channels": lambda m: F(m).max_unpool2d(*[t[:, :0] for t in _pooled(m, 2)], 2),
    "unpool3d_rank": lambda m: F(m).max_unpool3d(*[t[0, 0] for t in _pooled(m, 3)], 2),
    "unpool3d_index": lambda m: F(m).max_unpool3d(*_bad(m, 3, -200, 40), 2),
    "unpool3d_index_dtype": lambda m: F(m).max_unpool3d(_pooled(m, 3)[0], _pooled(m, 3)[1].int(), 2),
    "unpool3d_stride": lambda m: F(m).max_unpool3d(*_pooled(m, 3), 2, stride=0),
    "unpool3d_half_index": lambda m: F(m).max_unpool3d(_pooled(m, 3)[0].half(), _bad(m, 3, 64)[1], 2),
    "unpool3d_empty": lambda m: F(m).max_unpool3d(*[t[..., :0] for t in _pooled(m, 3)], 2),
    "unpool3d_int": lambda m: F(m).max_unpool3d(_pooled(m, 3)[0].int(), _pooled(m, 3)[1], 2),
    "unpool1d_index": lambda m: F(m).max_unpool1d(*_bad(m, 1, 8), 2),
    "unpool1d_output_size_int": lambda m: F(m).max_unpool1d(*_pooled(m, 1), 2, output_size=9),
    "unpool1d_rank": lambda m: F(m).max_unpool1d(*[t[0, 0] for t in _pooled(m, 1)], 2),
    "max_pool1d_indices_rank": lambda m: F(m).max_pool1d_with_indices(_x(m, 8), 2),
    "max_pool1d_indices_kernel_len": lambda m: F(m).max_pool1d_with_indices(_x(m, 2, 8), (2, 2)),
    "max_pool1d_indices_stride_len": lambda m: F(m).max_pool1d(_x(m, 2, 8), 2, (1, 1), return_indices=True),
    "max_pool1d_indices_too_small": lambda m: F(m).max_pool1d(_x(m, 2, 8), 20, return_indices=True),
    "max_pool1d_indices_stride_zero": lambda m: F(m).max_pool1d_with_indices(_x(m, 2, 8), 2, 0),
    "max_pool1d_indices_empty": lambda m: F(m).max_pool1d_with_indices(_x(m, 2, 0, 8), 2),
    "max_pool1d_indices_kernel_float": lambda m: F(m).max_pool1d(_x(m, 2, 8), 2.0, return_indices=True),
    "max_pool1d_indices_dilation_float": lambda m: F(m).max_pool1d_with_indices(_x(m, 2, 8), 2, dilation=[1, 2.0]),
    "adaptive_max1d_len": lambda m: F(m).adaptive_max_pool1d_with_indices(_x(m, 2, 8), (2, 2)),
    "adaptive_max1d_none": lambda m: F(m).adaptive_max_pool1d(_x(m, 2, 8), None),
    "adaptive_max1d_empty": lambda m: F(m).adaptive_max_pool1d(_x(m, 2, 3, 0), 2, True),
    "adaptive_max1d_negative": lambda m: F(m).adaptive_max_pool1d(_x(m, 2, 8), -1),
    "adaptive_max2d_len": lambda m: F(m).adaptive_max_pool2d_with_indices(_x(m, 2, 4, 4), (2,)),
    "adaptive_max2d_too_long": lambda m: F(m).adaptive_max_pool2d(_x(m, 2, 4, 4), (2, 2, 2, 2)),
    "adaptive_max2d_float": lambda m: F(m).adaptive_max_pool2d(_x(m, 2, 4, 4), (2.5, 2)),
    "adaptive_max2d_float_later": lambda m: F(m).adaptive_max_pool2d(_x(m, 2, 4, 4), [2, 2.5]),
    "adaptive_max2d_empty": lambda m: F(m).adaptive_max_pool2d(_x(m, 2, 0, 4, 4), 2),
    "adaptive_max3d_len": lambda m: F(m).adaptive_max_pool3d_with_indices(_x(m, 2, 4, 4, 4), (2, None)),
    "adaptive_max2d_empty_backward": lambda m: F(m).adaptive_max_pool2d(
        m.ones(2, 3, 4, 4, requires_grad=True), (0, 3)).sum().backward(),
    "fractional2d_no_size": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2),
    "fractional2d_ratio_float": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, output_ratio=0.5),
    "fractional2d_ratio_len": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, output_ratio=(.5, .5, .5)),
    "fractional2d_kernel_len": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), (2,), 3),
    "fractional2d_output_len": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, (3, 3, 3)),
    "fractional2d_kernel_float": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2.5, 3),
    "fractional2d_kernel_float_later": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), [2, 2.5], 3),
    "fractional2d_too_wide": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, (3, 6)),
    "fractional2d_too_high": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, (7, 6)),
    "fractional2d_negative": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, -1),
    "fractional2d_rank": lambda m: F(m).fractional_max_pool2d(_x(m, 7, 6), 2, 3, _random_samples=_x(m, 1, 1, 2)),
    "fractional2d_rank_drawn": lambda m: F(m).fractional_max_pool2d(_x(m, 7, 6), 2, 3),
    "fractional2d_empty": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 0, 7, 6), 2, 3),
    "fractional2d_samples_dtype": lambda m: F(m).fractional_max_pool2d(
        _x(m, 2, 3, 7, 6), 2, 3, _random_samples=_x(m, 2, 3, 2, dtype="float64")),
    "fractional2d_samples_rank": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, 3,
                                                                        _random_samples=_x(m, 3, 2)),
    "fractional2d_samples_batch": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, 3,
                                                                         _random_samples=_x(m, 1, 3, 2)),
    "fractional2d_samples_channels": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, 3,
                                                                            _random_samples=_x(m, 2, 2, 2)),
    "fractional2d_samples_last": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, 3,
                                                                        _random_samples=_x(m, 2, 3, 3)),
    "fractional2d_samples_grad": lambda m: F(m).fractional_max_pool2d(
        _x(m, 2, 3, 7, 6), 2, 3, _random_samples=m.zeros(2, 3, 2, requires_grad=True)),
    "fractional2d_long_drawn": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6, dtype="long"), 2, 3),
    "fractional2d_long": lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6, dtype="long"), 2, 3,
                                                                _random_samples=_x(m, 2, 3, 2, dtype="long")),
    "fractional3d_ratio_len": lambda m: F(m).fractional_max_pool3d(_x(m, 2, 3, 7, 6, 5), 2, output_ratio=(.5, .5)),
    "fractional3d_kernel_len": lambda m: F(m).fractional_max_pool3d(_x(m, 2, 3, 7, 6, 5), (2, 2), 3),
    "fractional3d_time": lambda m: F(m).fractional_max_pool3d(_x(m, 2, 3, 7, 6, 5), 2, (6, 3, 3)),
    "fractional3d_width_first": lambda m: F(m).fractional_max_pool3d(_x(m, 2, 3, 7, 6, 5), 2, (3, 6, 4)),
    "fractional3d_rank": lambda m: F(m).fractional_max_pool3d(_x(m, 3, 7, 6), 2, 3, _random_samples=_x(m, 1, 1, 3)),
    "fractional3d_empty": lambda m: F(m).fractional_max_pool3d(_x(m, 2, 3, 7, 0, 5), 2, 3),
    "fractional3d_samples_last": lambda m: F(m).fractional_max_pool3d(_x(m, 2, 3, 7, 6, 5), 2, 3,
                                                                        _random_samples=_x(m, 2, 3, 2)),
    "fractional3d_int": lambda m: F(m).fractional_max_pool3d(_x(m, 2, 3, 7, 6, 5, dtype="int32"), 2, 3,
                                                               _random_samples=_x(m, 2, 3, 3, dtype="int32")),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    assert_same_error(ERRORS[name])


def test_unpool_index_check_in_a_compiled_program():
    """Traced, the index check is part of the program: it raises after the call, with torch's message."""
    out, idx = _bad(tl, 2, 100, 17)
    fn = tl.compile(lambda o, i: F(tl).max_unpool2d(o, i, 2))
    assert error_of(lambda: fn(out, idx)) == error_of(lambda: F(torch).max_unpool2d(*_bad(torch, 2, 100, 17), 2))


def test_empty_results():
    """Empty results as torch: no kernel runs (so no dtype refusal), row-major strides."""
    for fn in (lambda m: F(m).max_unpool2d(*[t[:0] for t in _pooled(m, 2)], 2),
               lambda m: F(m).max_unpool2d(*[t[:0].long() for t in _pooled(m, 2)], 2),
               lambda m: F(m).fractional_max_pool2d(_x(m, 2, 3, 7, 6), 2, 0, return_indices=True,
                                                    _random_samples=_x(m, 2, 3, 2)),
               lambda m: F(m).fractional_max_pool2d(_x(m, 0, 3, 7, 6, dtype="long"), 2, 3,
                                                    _random_samples=_x(m, 0, 3, 2, dtype="long")),
               lambda m: F(m).adaptive_max_pool2d_with_indices(_x(m, 2, 3, 4, 4), (2, 0))):
        ours, theirs = fn(tl), fn(torch)
        for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (ours, theirs))):
            assert_same(a, b)
            assert a.stride() == b.stride()


def test_layouts():
    """max_unpool2d lays a channels-last input's result out channels-last (torch's kernel); fractional pooling and
    3-d unpooling give row-major results."""
    for fn in (lambda m, x: F(m).max_unpool2d(*F(m).max_pool2d(x.contiguous(memory_format=m.channels_last), 2,
                                                                 return_indices=True), 2, output_size=(6, 5)),
               lambda m, x: F(m).fractional_max_pool2d(x.contiguous(memory_format=m.channels_last), 2, 3,
                                                       _random_samples=m.tensor(S2)),
               lambda m, x: F(m).max_unpool3d(*F(m).max_pool3d(x.unsqueeze(0).contiguous(
                   memory_format=m.channels_last_3d), 2, return_indices=True), 2, output_size=(2, 6, 5))):
        ours, theirs = (fn(m, m.tensor(X2)) for m in (tl, torch))
        assert_same(ours, theirs)
        assert ours.stride() == theirs.stride()


# ----- modules -----------------------------------------------------------------------------------------------------
def _module_case(m, name):
    nn = m.nn
    x2, x3 = m.tensor(X2, requires_grad=True), m.tensor(X3, requires_grad=True)
    if name == "MaxUnpool1d":
        module = nn.MaxUnpool1d(2, padding=0)
        return module, module(*F(m).max_pool1d(m.tensor(X1, requires_grad=True), 2, return_indices=True),
                              output_size=[7])
    if name == "MaxUnpool2d":
        module = nn.MaxUnpool2d((2, 1), stride=(2, 1))
        return module, module(*F(m).max_pool2d(x2, (2, 1), return_indices=True))
    if name == "MaxUnpool3d":
        module = nn.MaxUnpool3d(2)
        return module, module(*F(m).max_pool3d(x3, 2, return_indices=True), output_size=x3.shape)
    if name == "FractionalMaxPool2d":
        module = nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True, _random_samples=m.tensor(S2))
        return module, module(x2)[0]
    if name == "FractionalMaxPool3d":
        module = nn.FractionalMaxPool3d((1, 2, 2), output_size=(2, 2, 1), _random_samples=m.tensor(S3))
        return module, module(x3)
    if name == "Softmax2d":
        module = nn.Softmax2d()
        return module, module(x2[0])
    if name == "NLLLoss2d":
        module = nn.NLLLoss2d(ignore_index=1)
        return module, module(x2, m.tensor(np.arange(60).reshape(2, 6, 5) % 3))
    module = nn.CrossMapLRN2d(3, 1e-2, 0.5, 2.0)
    return module, module(x2.permute(0, 3, 1, 2))


@pytest.mark.parametrize("name", ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
                                  "FractionalMaxPool3d", "Softmax2d", "NLLLoss2d", "CrossMapLRN2d"])
def test_modules(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (mine, ours), (theirs_module, theirs) = _module_case(tl, name), _module_case(torch, name)
    assert repr(mine) == repr(theirs_module)
    assert list(mine.state_dict()) == list(theirs_module.state_dict())
    assert_same(ours, theirs, rtol=1e-7, atol=1e-9)
    compare_graph(ours.grad_fn, theirs.grad_fn, check_saved=name != "CrossMapLRN2d")
    grads = [lib.autograd.grad((out * out).sum(), _leaf(out))[0] for lib, out in ((tl, ours), (torch, theirs))]
    assert_same(grads[0], grads[1], rtol=1e-7, atol=1e-9)


def _leaf(out):
    """The leaf input below ``out``'s graph."""
    node = out.grad_fn
    while not hasattr(node, "variable"):
        node = next(n for n, _ in node.next_functions if n is not None)
    return node.variable


MODULE_ERRORS = {
    "fractional2d_no_size": lambda m: m.nn.FractionalMaxPool2d(2),
    "fractional2d_both": lambda m: m.nn.FractionalMaxPool2d(2, 3, 0.5),
    "fractional2d_ratio": lambda m: m.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    "fractional3d_kernel": lambda m: m.nn.FractionalMaxPool3d(0, 3),
    "fractional3d_kernel_tuple": lambda m: m.nn.FractionalMaxPool3d((2, 0, 1), 3),
    "fractional3d_ratio": lambda m: m.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 0.5, 1)),
    "softmax2d_rank": lambda m: m.nn.Softmax2d()(_x(m, 4, 4)),
    "cross_map_lrn2d_rank": lambda m: m.nn.CrossMapLRN2d(3)(_x(m, 3, 4, 4)),
    "cross_map_lrn2d_size_one_backward": lambda m: m.nn.CrossMapLRN2d(1)(m.ones(1, 5, 2, 2, requires_grad=True))
    .sum().backward(),
    "cross_map_lrn2d_double_backward": lambda m: _lrn_double_backward(m),
    "unpool_module_output_size": lambda m: m.nn.MaxUnpool2d(2)(*_pooled(m, 2), output_size=(9, 9)),
}


def _lrn_double_backward(m):
    x = m.ones(1, 5, 2, 2, requires_grad=True)
    return m.autograd.grad(m.nn.CrossMapLRN2d(3)(x).sum(), x, create_graph=True)


@pytest.mark.parametrize("name", sorted(MODULE_ERRORS))
def test_module_errors(name):
    assert_same_error(MODULE_ERRORS[name])


def test_deprecated_modules():
    """NLLLoss2d and Container warn as torch's (typing_extensions.deprecated: made, or subclassed)."""
    def record(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            loss = m.nn.NLLLoss2d(reduction="sum")

            class Sub(m.nn.NLLLoss2d):
                pass
            Sub()
            container = m.nn.Container(act=m.nn.ReLU(), lin=m.nn.Linear(2, 3))
        return ([(w.category, str(w.message), w.filename) for w in caught], repr(loss), repr(container),
                list(dict(container.named_children())), m.nn.NLLLoss2d.__deprecated__, isinstance(loss, m.nn.NLLLoss))
    ours, theirs = record(tl), record(torch)
    assert ours == theirs and len(ours[0]) == 3

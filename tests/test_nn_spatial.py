"""Issue 14's spatial layers against torch 2.13: conv1d/3d, conv_transpose1d/2d/3d, the 1-d/3-d, adaptive and lp
poolings, pad, interpolate, grid_sample, affine_grid, unfold/fold, pixel/channel shuffles, group/instance/rms/local
response norms, channel and alpha dropout, embedding_bag, bilinear, pairwise_distance, cosine_similarity, and
their modules.

Functional cases run ``fn(F, *tensors)`` on both libraries on the same NumPy inputs and compare values, the graph's
node names (and ``_saved_*`` attributes where torchlike shows them all) and input gradients. Shapes are few and
shared: batch 2, channels 2-4, spatial 5-7.
"""
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import torchlike as tl
import torchlike.nn as nn
import torchlike.nn.functional as F
from oracle import assert_same, assert_same_error, compare_graph

RNG = np.random.default_rng(14)


def arr(*shape):
    return RNG.standard_normal(shape)


X1, X2, X3 = arr(2, 4, 7), arr(2, 4, 6, 7), arr(2, 4, 5, 6, 7)
W1, W2, W3 = arr(4, 2, 3), arr(4, 2, 3, 3), arr(4, 2, 3, 3, 3)  # groups=2 over 4 channels
WT1, WT2, WT3 = arr(4, 2, 3), arr(4, 2, 3, 3), arr(4, 2, 2, 3, 3)  # transposed: (C_in, C_out / groups, k...)
B3, B4 = arr(3), arr(4)
IDX = np.array([[0, 2, 1], [3, 3, 0]])


def _t(lib, a):
    a = np.asarray(a)
    return lib.tensor(a, requires_grad=a.dtype.kind == "f")


def run(fn, arrays, saved=True, rtol=1e-7, atol=1e-9, grads=True):
    """fn(F, *tensors) on both libraries: values, graph and input gradients."""
    tl_in, th_in = [_t(tl, a) for a in arrays], [_t(torch, a) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out_tl, out_th = fn(F, *tl_in), fn(TF, *th_in)
    if isinstance(out_th, tuple):
        assert_same(out_tl[1], out_th[1])
        out_tl, out_th = out_tl[0], out_th[0]
    assert_same(out_tl, out_th, rtol, atol)
    compare_graph(out_tl.grad_fn, out_th.grad_fn, check_saved=saved)
    if not grads:
        return
    cot = RNG.standard_normal(out_th.shape).astype(out_th.detach().numpy().dtype)
    out_tl.backward(tl.tensor(cot))
    out_th.backward(torch.tensor(cot))
    for a, b in zip(tl_in, th_in):
        if b.requires_grad:
            assert_same(a.grad, b.grad, rtol, atol)


CASES = {
    # convolutions
    "conv1d": (lambda m, x, w, b: m.conv1d(x, w, b, stride=2, padding=1, groups=2), [X1, W1, B4]),
    "conv1d_same_dil": (lambda m, x, w: m.conv1d(x, w, padding="same", dilation=2, groups=2), [X1, W1]),
    "conv1d_valid_unbatched": (lambda m, x, w: m.conv1d(x[0], w, padding="valid", groups=2), [X1, W1]),
    "conv3d": (lambda m, x, w, b: m.conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=2), [X3, W3, B4]),
    "conv_transpose1d": (lambda m, x, w, b: m.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1,
                                                               groups=2), [X1, WT1, B4]),
    "conv_transpose2d": (lambda m, x, w: m.conv_transpose2d(x, w, stride=(2, 1), padding=(0, 1), dilation=2,
                                                            groups=2), [X2, WT2]),
    "conv_transpose2d_unbatched": (lambda m, x, w: m.conv_transpose2d(x[0], w[:, :1], stride=3, output_padding=2),
                                   [X2, WT2]),
    "conv_transpose3d": (lambda m, x, w, b: m.conv_transpose3d(x, w, b, stride=2, groups=2), [X3, WT3, B4]),
    # pooling
    "max_pool1d": (lambda m, x: m.max_pool1d(x, 3, 2, 1, ceil_mode=True), [X1]),
    "max_pool1d_indices": (lambda m, x: m.max_pool1d(x, 2, return_indices=True), [X1]),
    "max_pool3d": (lambda m, x: m.max_pool3d(x, 2, (1, 2, 2), 1, dilation=(1, 1, 2)), [X3]),
    "max_pool3d_indices": (lambda m, x: m.max_pool3d(x, 3, 2, ceil_mode=True, return_indices=True), [X3]),
    "avg_pool1d": (lambda m, x: m.avg_pool1d(x, 3, 2, 1, count_include_pad=False), [X1]),
    "avg_pool3d": (lambda m, x: m.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [X3]),
    "avg_pool3d_divisor": (lambda m, x: m.avg_pool3d(x, 2, divisor_override=3), [X3]),
    "adaptive_avg_pool1d": (lambda m, x: m.adaptive_avg_pool1d(x, 3), [X1]),
    "adaptive_avg_pool2d": (lambda m, x: m.adaptive_avg_pool2d(x, (4, None)), [X2]),
    "adaptive_avg_pool3d": (lambda m, x: m.adaptive_avg_pool3d(x, (2, 4, 3)), [X3]),
    "adaptive_max_pool1d": (lambda m, x: m.adaptive_max_pool1d(x, 3, return_indices=True), [X1]),
    "adaptive_max_pool2d": (lambda m, x: m.adaptive_max_pool2d(x, (4, 3)), [X2]),
    "lp_pool1d": (lambda m, x: m.lp_pool1d(x.abs() + 0.1, 2, 3, 2), [X1]),
    "lp_pool2d": (lambda m, x: m.lp_pool2d(x.abs() + 0.1, 3, (2, 3)), [X2]),
    # padding
    "pad_constant": (lambda m, x: m.pad(x, (1, -2, 0, 3), value=1.5), [X2]),
    "pad_reflect1d": (lambda m, x: m.pad(x, (2, 3), mode="reflect"), [X1]),
    "pad_reflect2d": (lambda m, x: m.pad(x, (2, 1, -1, 3), mode="reflect"), [X2]),
    "pad_reflect3d": (lambda m, x: m.pad(x, (1, 1, 2, 0, 1, 2), mode="reflect"), [X3]),
    "pad_replicate1d": (lambda m, x: m.pad(x[0], (2, 3), mode="replicate"), [X1]),
    "pad_replicate2d": (lambda m, x: m.pad(x, (2, 1, 0, 3), mode="replicate"), [X2]),
    "pad_replicate3d": (lambda m, x: m.pad(x, (1, 1, 2, 0, 1, 2), mode="replicate"), [X3]),
    "pad_circular1d": (lambda m, x: m.pad(x, (2, 3), mode="circular"), [X1]),
    "pad_circular2d": (lambda m, x: m.pad(x, (2, -1, 0, 3), mode="circular"), [X2]),
    "pad_circular3d": (lambda m, x: m.pad(x[0], (1, 1, 2, 0, 1, 2), mode="circular"), [X3]),
    # interpolate
    "nearest1d": (lambda m, x: m.interpolate(x, scale_factor=1.7), [X1]),
    "nearest2d": (lambda m, x: m.interpolate(x, size=(4, 9)), [X2]),
    "nearest3d": (lambda m, x: m.interpolate(x, scale_factor=(1.5, 0.5, 2)), [X3]),
    "nearest_exact2d": (lambda m, x: m.interpolate(x, size=(9, 5), mode="nearest-exact"), [X2]),
    # a scale factor that a doubled (same) size contradicts: torch's channels-last kernel (a 2-d output of at most
    # 128 rows + columns) halves (copies) the index whatever the scale
    "nearest2d_contradicting_scale": (lambda m, x: m.interpolate(x, scale_factor=(2.01, 1.1)), [X2]),
    "linear": (lambda m, x: m.interpolate(x, scale_factor=1.6, mode="linear"), [X1]),
    "linear_align": (lambda m, x: m.interpolate(x, size=10, mode="linear", align_corners=True), [X1]),
    "bilinear": (lambda m, x: m.interpolate(x, scale_factor=(1.5, 0.6), mode="bilinear"), [X2]),
    "bilinear_recompute": (lambda m, x: m.interpolate(x, scale_factor=1.7, mode="bilinear",
                                                      recompute_scale_factor=True), [X2]),
    "bicubic": (lambda m, x: m.interpolate(x, size=(9, 4), mode="bicubic"), [X2]),
    "bicubic_align": (lambda m, x: m.interpolate(x, scale_factor=2, mode="bicubic", align_corners=True), [X2]),
    "trilinear": (lambda m, x: m.interpolate(x, size=(3, 8, 9), mode="trilinear", align_corners=True), [X3]),
    "area": (lambda m, x: m.interpolate(x, size=(4, 3), mode="area"), [X2]),
    # sampling and rearranging
    "grid_sample": (lambda m, x, g: m.grid_sample(x, g * 1.2, align_corners=False), [X2, arr(2, 3, 4, 2)]),
    "grid_sample_border": (lambda m, x, g: m.grid_sample(x, g, padding_mode="border", align_corners=True),
                           [X2, arr(2, 3, 4, 2)]),
    "grid_sample_reflect": (lambda m, x, g: m.grid_sample(x, g * 1.5, padding_mode="reflection",
                                                          align_corners=False), [X2, arr(2, 3, 4, 2)]),
    "grid_sample_nearest": (lambda m, x, g: m.grid_sample(x, g, mode="nearest", align_corners=False),
                            [X2, arr(2, 3, 4, 2)]),
    "grid_sample_bicubic": (lambda m, x, g: m.grid_sample(x, g * 1.3, mode="bicubic", align_corners=False),
                            [X2, arr(2, 3, 4, 2)]),
    "grid_sample_bicubic_reflect": (lambda m, x, g: m.grid_sample(x, g * 1.3, mode="bicubic",
                                                                  padding_mode="reflection", align_corners=True),
                                    [X2, arr(2, 3, 4, 2)]),
    "grid_sample_bicubic_border": (lambda m, x, g: m.grid_sample(x, g * 1.3, mode="bicubic", padding_mode="border",
                                                                 align_corners=False), [X2, arr(2, 3, 4, 2)]),
    "grid_sample3d": (lambda m, x, g: m.grid_sample(x, g, align_corners=True), [X3, arr(2, 2, 3, 4, 3)]),
    "affine_grid": (lambda m, t: m.affine_grid(t, (2, 4, 5, 6), align_corners=False), [arr(2, 2, 3)]),
    "affine_grid3d": (lambda m, t: m.affine_grid(t, (2, 4, 3, 5, 6), align_corners=True), [arr(2, 3, 4)]),
    "unfold": (lambda m, x: m.unfold(x, (2, 3), dilation=(2, 1), padding=1, stride=2), [X2]),
    "fold": (lambda m, x: m.fold(x, (5, 6), (2, 3), padding=1, stride=(2, 1)), [arr(2, 12, 18)]),
    "pixel_shuffle": (lambda m, x: m.pixel_shuffle(x, 2), [X2]),
    "pixel_unshuffle": (lambda m, x: m.pixel_unshuffle(x[..., :6], 2), [X2]),
    "channel_shuffle": (lambda m, x: m.channel_shuffle(x, 2), [X2]),
    # normalisation
    "group_norm": (lambda m, x, w, b: m.group_norm(x, 2, w, b), [X2, B4, B4]),
    "group_norm_3d": (lambda m, x: m.group_norm(x, 4, eps=1e-3), [X3]),
    "instance_norm": (lambda m, x, w, b: m.instance_norm(x, weight=w, bias=b), [X2, B4, B4]),
    "rms_norm": (lambda m, x, w: m.rms_norm(x, (6, 7), w), [X2, arr(6, 7)]),
    "rms_norm_eps": (lambda m, x: m.rms_norm(x, [7], eps=1e-3), [X1]),
    "local_response_norm3": (lambda m, x: m.local_response_norm(x, 3), [X1]),
    "local_response_norm4": (lambda m, x: m.local_response_norm(x, 2, alpha=0.1, beta=0.5, k=2.0), [X2]),
    # the rest
    "embedding_bag_2d_mean": (lambda m, w: m.embedding_bag(torch_or_tl(m).tensor(IDX), w), [arr(4, 3)]),
    "embedding_bag_sum_psw": (lambda m, w, p: m.embedding_bag(torch_or_tl(m).tensor([0, 2, 1, 3, 3]), w,
                                                                 torch_or_tl(m).tensor([0, 2, 2]), mode="sum",
                                                                 per_sample_weights=p), [arr(4, 3), arr(5)]),
    "embedding_bag_max_pad": (lambda m, w: m.embedding_bag(torch_or_tl(m).tensor([0, 2, 1, 3, 3]), w,
                                                              torch_or_tl(m).tensor([0, 3, 4]), mode="max",
                                                              padding_idx=1, include_last_offset=True),
                              [arr(4, 3)]),
    "embedding_bag_freq": (lambda m, w: m.embedding_bag(torch_or_tl(m).tensor([[0, 2], [3, 3]]), w, mode="sum",
                                                        scale_grad_by_freq=True), [arr(4, 3)]),
    "embedding_bag_mean_pad": (lambda m, w: m.embedding_bag(torch_or_tl(m).tensor(IDX), w, padding_idx=3),
                               [arr(4, 3)]),
    "bilinear_fn": (lambda m, a, b, w, c: m.bilinear(a, b, w, c), [arr(2, 3, 2), arr(2, 3, 4), arr(5, 2, 4), arr(5)]),
    "pairwise_distance": (lambda m, a, b: m.pairwise_distance(a, b, p=3.0), [arr(2, 5), arr(2, 5)]),
    "pairwise_distance_keep": (lambda m, a, b: m.pairwise_distance(a, b, keepdim=True), [arr(2, 5), arr(5)]),
    "cosine_similarity": (lambda m, a, b: m.cosine_similarity(a, b, dim=-1), [arr(2, 3, 4), arr(3, 4)]),
}
UNSAVED = {  # torchlike shows fewer _saved_ attributes on these nodes (the names match)
    "max_pool1d", "max_pool1d_indices", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "lp_pool1d",
    "lp_pool2d", "nearest1d", "nearest2d", "nearest3d", "nearest_exact2d", "nearest2d_contradicting_scale", "linear",
    "linear_align", "bilinear", "bilinear_recompute", "bicubic", "bicubic_align", "trilinear", "unfold", "rms_norm",
    "rms_norm_eps",
    "local_response_norm3", "local_response_norm4", "embedding_bag_2d_mean", "embedding_bag_sum_psw",
    "embedding_bag_max_pad", "embedding_bag_mean_pad", "embedding_bag_freq", "pairwise_distance", "pairwise_distance_keep",
    "cosine_similarity", "instance_norm", "group_norm", "group_norm_3d", "grid_sample", "grid_sample_border",
    "grid_sample_reflect", "grid_sample_nearest", "grid_sample_bicubic", "grid_sample_bicubic_reflect",
    "grid_sample_bicubic_border", "grid_sample3d", "affine_grid", "affine_grid3d", "fold",
    "bilinear_fn", "pad_constant",
}


def torch_or_tl(m):
    return torch if m is TF else tl


@pytest.mark.parametrize("name", sorted(CASES))
def test_functional(name):
    fn, arrays = CASES[name]
    run(fn, arrays, saved=name not in UNSAVED)


# ----- modules -----------------------------------------------------------------------------------------------
MODULES = {  # name: (constructor args, kwargs, input arrays)
    "Conv1d": ((4, 4, 3), dict(groups=2, padding=1, padding_mode="circular"), [X1]),
    "Conv3d": ((4, 2, (1, 2, 3)), dict(stride=2, bias=False), [X3]),
    "Conv2d": ((4, 2, 3), dict(padding="same", padding_mode="reflect"), [X2]),
    "ConvTranspose1d": ((4, 2, 3), dict(stride=2, groups=2), [X1]),
    "ConvTranspose2d": ((4, 2, 3), dict(stride=2, output_padding=1, dilation=2), [X2]),
    "ConvTranspose3d": ((4, 2, 2), dict(stride=(1, 2, 1), bias=False), [X3]),
    "MaxPool1d": ((3,), {}, [X1]),
    "MaxPool3d": ((2, 1, 1), dict(return_indices=True), [X3]),
    "AvgPool1d": ((3,), dict(stride=2, padding=1), [X1]),
    "AvgPool3d": ((2,), dict(ceil_mode=True, divisor_override=2), [X3]),
    "AdaptiveAvgPool1d": ((3,), {}, [X1]),
    "AdaptiveAvgPool2d": (((3, None),), {}, [X2]),
    "AdaptiveAvgPool3d": ((2,), {}, [X3]),
    "AdaptiveMaxPool1d": ((3,), {}, [X1]),
    "AdaptiveMaxPool2d": ((3,), dict(return_indices=True), [X2]),
    "LPPool1d": ((2, 3), {}, [np.abs(X1) + 0.1]),
    "LPPool2d": ((2.0, (2, 3)), dict(stride=1), [np.abs(X2) + 0.1]),
    "GroupNorm": ((2, 4), {}, [X2]),
    "InstanceNorm1d": ((4,), {}, [X1]),
    "InstanceNorm2d": ((4,), dict(affine=True, track_running_stats=True), [X2]),
    "InstanceNorm3d": ((4,), dict(affine=True), [X3[0]]),
    "RMSNorm": (((6, 7),), {}, [X2]),
    "LocalResponseNorm": ((3,), {}, [X2]),
    "BatchNorm3d": ((4,), {}, [X3]),
    "Upsample": ((), dict(scale_factor=2, mode="bilinear"), [X2]),
    "UpsamplingNearest2d": ((), dict(scale_factor=2), [X2]),
    "UpsamplingBilinear2d": ((), dict(size=(3, 4)), [X2]),
    "PixelShuffle": ((2,), {}, [X2]),
    "PixelUnshuffle": ((2,), {}, [X2[..., :6]]),
    "ChannelShuffle": ((2,), {}, [X2]),
    "Fold": (((5, 6), (2, 3)), dict(padding=1, stride=(2, 1)), [arr(2, 12, 18)]),
    "Unfold": ((2,), dict(padding=1), [X2]),
    "CosineSimilarity": ((), {}, [X2, X2[:1] + 1]),
    "PairwiseDistance": ((), dict(p=1.0, keepdim=True), [X1, X1[1]]),
    "ZeroPad1d": ((2,), {}, [X1]),
    "ZeroPad2d": (((1, 2, 3, 4),), {}, [X2]),
    "ZeroPad3d": ((1,), {}, [X3]),
    "ConstantPad1d": (((1, 2), 0.0), {}, [X1]),
    "ConstantPad2d": ((1, 2.5), {}, [X2]),
    "ConstantPad3d": ((1, 3.5), {}, [X3]),
    "ReflectionPad1d": ((2,), {}, [X1]),
    "ReflectionPad2d": (((1, 2, 0, 3),), {}, [X2]),
    "ReflectionPad3d": ((1,), {}, [X3]),
    "ReplicationPad1d": ((2,), {}, [X1]),
    "ReplicationPad2d": ((1,), {}, [X2]),
    "ReplicationPad3d": (((1, 1, 2, 2, 0, 0),), {}, [X3]),
    "CircularPad1d": ((1,), {}, [X1]),
    "CircularPad2d": (((1, 2, 0, 3),), {}, [X2]),
    "CircularPad3d": ((1,), {}, [X3]),
    "Bilinear": ((3, 4, 5), {}, [arr(2, 3), arr(2, 4)]),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module(name):
    args, kwargs, arrays = MODULES[name]
    torch.manual_seed(0)
    th = getattr(tnn, name)(*args, **kwargs).double()
    mine = getattr(nn, name)(*args, **kwargs)
    assert repr(mine) == repr(th)
    if list(th.state_dict()):
        mine = mine.double() if hasattr(mine, "double") else mine
        mine.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in th.state_dict().items()})
    tl_in, th_in = [_t(tl, a) for a in arrays], [_t(torch, a) for a in arrays]
    out_tl, out_th = mine(*tl_in), th(*th_in)
    if isinstance(out_th, tuple):
        assert_same(out_tl[1], out_th[1])
        out_tl, out_th = out_tl[0], out_th[0]
    assert_same(out_tl, out_th, 1e-7, 1e-9)
    assert out_tl.grad_fn.name() == out_th.grad_fn.name()
    cot = RNG.standard_normal(out_th.shape)
    out_tl.backward(tl.tensor(cot))
    out_th.backward(torch.tensor(cot))
    for (n, p), (n2, q) in zip(mine.named_parameters(), th.named_parameters()):
        assert n == n2
        assert_same(p.grad, q.grad, 1e-7, 1e-9)
    for a, b in zip(tl_in, th_in):
        assert_same(a.grad, b.grad, 1e-7, 1e-9)
    for k, v in th.state_dict().items():  # running statistics after a training step
        assert_same(mine.state_dict()[k], v, 1e-7, 1e-9)


# ----- errors ------------------------------------------------------------------------------------------------
def _f(m):
    return TF if m is torch else F


def _z(m, *shape):
    return m.zeros(*shape, dtype=m.float64)


ERRORS = {
    "conv1d_rank": lambda m: _f(m).conv1d(_z(m, 2, 4, 5, 5), _z(m, 4, 2, 3)),
    "conv3d_channels": lambda m: _f(m).conv3d(_z(m, 2, 3, 4, 4, 4), _z(m, 4, 2, 2, 2, 2)),
    "conv1d_kernel_too_big": lambda m: _f(m).conv1d(_z(m, 2, 4, 2), _z(m, 4, 4, 3)),
    "conv1d_stride_list": lambda m: _f(m).conv1d(_z(m, 2, 4, 5), _z(m, 4, 4, 3), stride=(1, 2)),
    "conv1d_same_strided": lambda m: _f(m).conv1d(_z(m, 2, 4, 5), _z(m, 4, 4, 3), stride=2, padding="same"),
    "conv_transpose_channels": lambda m: _f(m).conv_transpose2d(_z(m, 2, 3, 5, 5), _z(m, 4, 2, 3, 3)),
    "conv_transpose_bias": lambda m: _f(m).conv_transpose1d(_z(m, 2, 4, 5), _z(m, 4, 2, 3), _z(m, 3)),
    "conv_transpose_output_padding": lambda m: _f(m).conv_transpose1d(_z(m, 2, 4, 5), _z(m, 4, 2, 3),
                                                                      output_padding=1),
    "conv_transpose3d_output_padding": lambda m: _f(m).conv_transpose3d(_z(m, 1, 2, 3, 3, 3), _z(m, 2, 2, 2, 2, 2),
                                                                        output_padding=(0, 0, 2), stride=(1, 3, 1)),
    "max_pool3d_rank": lambda m: _f(m).max_pool3d(_z(m, 3, 4), 2),
    "max_pool3d_kernel_tuple": lambda m: _f(m).max_pool3d(_z(m, 2, 2, 4, 4, 4), (2, 2)),
    "max_pool3d_pad": lambda m: _f(m).max_pool3d(_z(m, 2, 2, 4, 4, 4), 2, padding=2),
    "max_pool3d_too_small": lambda m: _f(m).max_pool3d(_z(m, 2, 2, 4, 4, 4), 9),
    "avg_pool3d_too_small": lambda m: _f(m).avg_pool3d(_z(m, 2, 2, 4, 4, 4), 9),
    "avg_pool1d_rank": lambda m: _f(m).avg_pool1d(_z(m, 4), 2),
    "max_pool1d_rank": lambda m: _f(m).max_pool1d(_z(m, 4), 2),
    "adaptive_avg_pool2d_rank": lambda m: _f(m).adaptive_avg_pool2d(_z(m, 4), 2),
    "adaptive_max_pool2d_rank": lambda m: _f(m).adaptive_max_pool2d(_z(m, 4), 2),
    "pad_odd": lambda m: _f(m).pad(_z(m, 2, 3), (1, 1, 1)),
    "pad_too_long": lambda m: _f(m).pad(_z(m, 2, 3), (1,) * 6),
    "pad_reflect_size": lambda m: _f(m).pad(_z(m, 2, 3, 4), (5, 1), mode="reflect"),
    "pad_reflect_rank": lambda m: _f(m).pad(_z(m, 4), (1, 1), mode="reflect"),
    "pad_mode": lambda m: _f(m).pad(_z(m, 2, 3, 4), (1, 1), mode="foo"),
    "pad_value": lambda m: _f(m).pad(_z(m, 2, 3, 4), (1, 1), mode="reflect", value=1.0),
    "pad_circular_wrap": lambda m: _f(m).pad(_z(m, 2, 3, 4), (5, 1), mode="circular"),
    "interpolate_none": lambda m: _f(m).interpolate(_z(m, 2, 3, 5)),
    "interpolate_both": lambda m: _f(m).interpolate(_z(m, 2, 3, 5), size=3, scale_factor=2),
    "interpolate_align": lambda m: _f(m).interpolate(_z(m, 2, 3, 5), size=3, align_corners=True),
    "interpolate_mode_rank": lambda m: _f(m).interpolate(_z(m, 2, 3, 5), size=3, mode="bilinear"),
    "interpolate_rank": lambda m: _f(m).interpolate(_z(m, 2, 3), size=3),
    "interpolate_size_len": lambda m: _f(m).interpolate(_z(m, 2, 3, 5), size=(3, 3)),
    "grid_sample_last_dim": lambda m: _f(m).grid_sample(_z(m, 2, 3, 4, 4), _z(m, 2, 3, 3, 3)),
    "grid_sample_mode": lambda m: _f(m).grid_sample(_z(m, 2, 3, 4, 4), _z(m, 2, 3, 3, 2), mode="foo"),
    "affine_grid_size": lambda m: _f(m).affine_grid(_z(m, 2, 2, 3), (2, 3, 4)),
    "fold_blocks": lambda m: _f(m).fold(_z(m, 2, 12, 5), (3, 3), 2),
    "pixel_shuffle_channels": lambda m: _f(m).pixel_shuffle(_z(m, 2, 3, 2, 2), 2),
    "pixel_unshuffle_height": lambda m: _f(m).pixel_unshuffle(_z(m, 2, 3, 3, 4), 2),
    "channel_shuffle_groups": lambda m: _f(m).channel_shuffle(_z(m, 2, 3, 2, 2), 2),
    "group_norm_groups": lambda m: _f(m).group_norm(_z(m, 2, 3, 4), 2),
    "group_norm_rank": lambda m: _f(m).group_norm(_z(m, 2), 1),
    "group_norm_weight": lambda m: _f(m).group_norm(_z(m, 2, 4, 3), 2, _z(m, 3)),
    "rms_norm_shape": lambda m: _f(m).rms_norm(_z(m, 2, 3), (4,)),
    "rms_norm_weight": lambda m: _f(m).rms_norm(_z(m, 2, 3), (3,), _z(m, 2)),
    "instance_norm_spatial": lambda m: _f(m).instance_norm(_z(m, 2, 3, 1)),
    "local_response_norm_rank": lambda m: _f(m).local_response_norm(_z(m, 2, 3), 2),
    "dropout1d_rank": lambda m: _f(m).dropout1d(_z(m, 2, 3, 4, 5)),
    "dropout_p": lambda m: _f(m).alpha_dropout(_z(m, 2, 3), 1.5),
    "embedding_bag_offsets_2d": lambda m: _f(m).embedding_bag(m.tensor([[0, 1]]), _z(m, 3, 2), m.tensor([0])),
    "embedding_bag_no_offsets": lambda m: _f(m).embedding_bag(m.tensor([0, 1]), _z(m, 3, 2)),
    "embedding_bag_mode": lambda m: _f(m).embedding_bag(m.tensor([[0, 1]]), _z(m, 3, 2), mode="foo"),
    "embedding_bag_psw_mode": lambda m: _f(m).embedding_bag(m.tensor([[0, 1]]), _z(m, 3, 2),
                                                            per_sample_weights=_z(m, 1, 2)),
    "bilinear_sizes": lambda m: _f(m).bilinear(_z(m, 2, 3), _z(m, 2, 4), _z(m, 5, 4, 4)),
    "cosine_similarity_shapes": lambda m: _f(m).cosine_similarity(_z(m, 2, 3), _z(m, 2, 4)),
    "Conv1d_groups": lambda m: m.nn.Conv1d(3, 4, 3, groups=2),
    "ConvTranspose2d_padding_mode": lambda m: m.nn.ConvTranspose2d(3, 4, 3, padding_mode="reflect"),
    "GroupNorm_channels": lambda m: m.nn.GroupNorm(2, 3),
    "InstanceNorm1d_rank": lambda m: m.nn.InstanceNorm1d(3)(_z(m, 2, 3, 4, 5)),
    "BatchNorm3d_rank": lambda m: m.nn.BatchNorm3d(3)(_z(m, 2, 3, 4)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    assert_same_error(ERRORS[name])


def _zt(m, dtype, *shape, fmt=None):
    """Zeros of the dtype named ``dtype``, in the memory format named ``fmt`` if given."""
    x = m.zeros(*shape, dtype=getattr(m, dtype))
    return x if fmt is None else x.contiguous(memory_format=getattr(m, fmt))


REFUSED = {  # integer and bool inputs that torch's CPU kernels refuse (NotImplementedError naming the kernel, a
    # channels-last one for a channels-last input or a 2-d resize to at most 128 rows + columns; or mean's error)
    "interpolate_int16_bilinear": lambda m: _f(m).interpolate(_zt(m, "int16", 1, 2, 3, 3), size=4, mode="bilinear"),
    "interpolate_int16_bilinear_large": lambda m: _f(m).interpolate(_zt(m, "int16", 1, 2, 3, 3), size=70,
                                                                    mode="bilinear"),
    "interpolate_int32_bilinear_large_cl": lambda m: _f(m).interpolate(_zt(m, "int32", 1, 5, 3, 3, fmt="channels_last"),
                                                                       size=70, mode="bilinear"),
    "interpolate_int8_bicubic": lambda m: _f(m).interpolate(_zt(m, "int8", 1, 2, 3, 3), size=4, mode="bicubic",
                                                            align_corners=True),
    "interpolate_uint8_linear": lambda m: _f(m).interpolate(_zt(m, "uint8", 1, 2, 3), size=4, mode="linear"),
    "interpolate_bool_trilinear": lambda m: _f(m).interpolate(_zt(m, "bool", 1, 2, 3, 3, 3), size=4,
                                                              mode="trilinear"),
    "interpolate_int64_trilinear_cl": lambda m: _f(m).interpolate(
        _zt(m, "int64", 1, 5, 3, 3, 3, fmt="channels_last_3d"), size=4, mode="trilinear"),
    "interpolate_int64_nearest": lambda m: _f(m).interpolate(_zt(m, "int64", 1, 2, 3, 3), size=4),
    "interpolate_int64_nearest_large": lambda m: _f(m).interpolate(_zt(m, "int64", 1, 2, 3, 3), size=(60, 70)),
    "interpolate_bool_nearest1d": lambda m: _f(m).interpolate(_zt(m, "bool", 1, 2, 3), size=4),
    "interpolate_int8_nearest3d": lambda m: _f(m).interpolate(_zt(m, "int8", 1, 2, 3, 3, 3), size=4),
    "interpolate_int8_nearest3d_cl": lambda m: _f(m).interpolate(_zt(m, "int8", 1, 5, 3, 3, 3, fmt="channels_last_3d"),
                                                                 size=4),
    "interpolate_int16_nearest_exact": lambda m: _f(m).interpolate(_zt(m, "int16", 0, 2, 3, 3), size=4,
                                                                   mode="nearest-exact"),
    "interpolate_uint8_area": lambda m: _f(m).interpolate(_zt(m, "uint8", 1, 2, 3, 3), size=2, mode="area"),
    "interpolate_uint8_area_one": lambda m: _f(m).interpolate(_zt(m, "uint8", 1, 2, 3, 3), size=1, mode="area"),
    "interpolate_int32_area3d": lambda m: _f(m).interpolate(_zt(m, "int32", 1, 2, 3, 3, 3), size=2, mode="area"),
    "avg_pool1d_bool": lambda m: _f(m).avg_pool1d(_zt(m, "bool", 2, 4), 2),
    "avg_pool2d_uint8": lambda m: _f(m).avg_pool2d(_zt(m, "uint8", 1, 2, 4, 4), 2),
    "avg_pool2d_int32_cl": lambda m: _f(m).avg_pool2d(_zt(m, "int32", 1, 5, 4, 4, fmt="channels_last"), 2),
    "avg_pool3d_int8": lambda m: _f(m).avg_pool3d(_zt(m, "int8", 2, 4, 4, 4), 2),
    "adaptive_avg_pool1d_uint8": lambda m: _f(m).adaptive_avg_pool1d(_zt(m, "uint8", 2, 4), 2),
    "adaptive_avg_pool1d_int64_one": lambda m: _f(m).adaptive_avg_pool1d(_zt(m, "int64", 2, 4), 1),
    "adaptive_avg_pool2d_int64_cl": lambda m: _f(m).adaptive_avg_pool2d(_zt(m, "int64", 1, 5, 4, 4,
                                                                            fmt="channels_last"), 2),
    "adaptive_avg_pool3d_bool_empty": lambda m: _f(m).adaptive_avg_pool3d(_zt(m, "bool", 0, 2, 4, 4, 4), 2),
    "adaptive_avg_pool3d_int16_one": lambda m: _f(m).adaptive_avg_pool3d(_zt(m, "int16", 2, 4, 4, 4), 1),
    "adaptive_max_pool1d_int64": lambda m: _f(m).adaptive_max_pool1d(_zt(m, "int64", 2, 4), 2),
    "adaptive_max_pool2d_int8_cl": lambda m: _f(m).adaptive_max_pool2d(_zt(m, "int8", 1, 5, 4, 4, fmt="channels_last"),
                                                                       1),
    "adaptive_max_pool3d_uint8": lambda m: _f(m).adaptive_max_pool3d(_zt(m, "uint8", 2, 4, 4, 4), 2),
    "max_pool1d_int64": lambda m: _f(m).max_pool1d(_zt(m, "int64", 1, 2, 4), 2),
    "max_pool1d_bool_indices": lambda m: _f(m).max_pool1d(_zt(m, "bool", 1, 2, 4), 2, return_indices=True),
    "max_pool2d_bool": lambda m: _f(m).max_pool2d(_zt(m, "bool", 2, 4, 4), 2),
    "max_pool2d_bool_cl": lambda m: _f(m).max_pool2d(_zt(m, "bool", 1, 5, 4, 4, fmt="channels_last"), 2),
    "max_pool3d_bool_cl": lambda m: _f(m).max_pool3d(_zt(m, "bool", 1, 5, 4, 4, 4, fmt="channels_last_3d"), 2),
    "lp_pool2d_uint8": lambda m: _f(m).lp_pool2d(_zt(m, "uint8", 1, 2, 4, 4), 2, 2),
    "lp_pool3d_int16": lambda m: _f(m).lp_pool3d(_zt(m, "int16", 1, 2, 4, 4, 4), 1, 2),
    # and torch's checks before them
    "interpolate_bicubic_rank": lambda m: _f(m).interpolate(_zt(m, "uint8", 1, 2, 3), size=4, mode="bicubic"),
    "interpolate_zero_size1d": lambda m: _f(m).interpolate(_zt(m, "int8", 1, 2, 3), size=0),
    "interpolate_zero_size3d": lambda m: _f(m).interpolate(_zt(m, "float32", 1, 2, 3, 3, 3), size=(2, 0, 2),
                                                           mode="trilinear"),
    "interpolate_no_channels": lambda m: _f(m).interpolate(_zt(m, "int8", 1, 0, 3, 3), size=2, mode="bilinear"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_integer_inputs_refused_as_torch(name):
    assert_same_error(REFUSED[name])


def test_integer_pooling_of_empty_results_as_torch():
    """torch's 2-d adaptive average kernel is not reached for an empty result (no refusal); the adaptive max of an
    empty batch is empty."""
    for case in (lambda m: _f(m).adaptive_avg_pool2d(_zt(m, "int8", 0, 2, 4, 4), 2),
                 lambda m: _f(m).adaptive_avg_pool1d(_zt(m, "bool", 2, 4), 0),
                 lambda m: _f(m).adaptive_max_pool2d(_zt(m, "float64", 0, 2, 4, 4), 2, return_indices=True)):
        assert_same(case(tl), case(torch))


U8_RESIZES = {  # input shape, channels-last, interpolate's keywords
    "two_by_two": ((1, 1, 2, 2), False, dict(size=(3, 3))),
    "up_and_down": ((2, 3, 5, 6), False, dict(size=(9, 4))),
    "scale_factor": ((2, 3, 5, 6), False, dict(scale_factor=(1.3, 0.5))),
    # more than 4 channels: torch's generic kernel, whose vertical pass into a row-major output one column wide gives
    # every row the first row's weights (not into a channels-last one)
    "one_column": ((1, 5, 4, 6), False, dict(size=(7, 1))),
    "one_column_channels_last": ((1, 5, 4, 6), True, dict(size=(7, 1))),
}


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("case", list(U8_RESIZES))
def test_interpolate_uint8_as_torch(mode, align_corners, case):
    """uint8 images resize as torch's: int16 weights, each pass rounded and clamped to uint8."""
    shape, cl, kw = U8_RESIZES[case]
    rng = np.random.default_rng(8)
    images = [rng.integers(0, 256, shape, dtype=np.uint8), rng.integers(0, 256, shape, dtype=np.uint8),
              (rng.random(shape) < 0.5).astype(np.uint8) * 255]  # (edges overshoot: bicubic clamps)
    if case == "two_by_two":
        images[0] = np.array([[[[10, 20], [30, 40]]]], np.uint8)
    for x in images:
        out = []
        for m in (tl, torch):
            t = m.tensor(x)
            out.append(_f(m).interpolate(t.contiguous(memory_format=m.channels_last) if cl else t, mode=mode,
                                         align_corners=align_corners, **kw))
        assert_same(*out)


@pytest.mark.parametrize("case", ["2d", "3d_channels_last"])
def test_interpolate_uint8_nearest_as_torch(case):
    """torch's channels-last nearest kernel (a 2-d output of at most 128 rows + columns; a 3-d channels-last input of
    more than 3 channels) halves (copies) the index for a doubled (same) size, whatever the scale factor."""
    shape, fmt, scale = {"2d": ((2, 3, 5, 6), None, (2.01, 1.1)),
                         "3d_channels_last": ((1, 5, 3, 4, 5), "channels_last_3d", (2.01, 1.1, 0.7))}[case]
    x = np.random.default_rng(9).integers(0, 256, shape, dtype=np.uint8)
    out = []
    for m in (tl, torch):
        t = m.tensor(x)
        out.append(_f(m).interpolate(t if fmt is None else t.contiguous(memory_format=getattr(m, fmt)),
                                     scale_factor=scale))
    assert_same(*out)


def test_torch_level_names():
    """torch.conv1d, torch.cosine_similarity, ... are the functional ones (same values)."""
    x, w = X1, W1
    for name, args in (("conv1d", (x, w, None, 1, 0, 1, 2)), ("cosine_similarity", (x, x[::-1])), ("pairwise_distance", (x, x[::-1])),
                       ("pixel_shuffle", (X2, 2)), ("channel_shuffle", (X2, 2)), ("conv_transpose1d", (x, WT1[:, :1]))):
        ours = getattr(tl, name)(*[tl.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
        theirs = getattr(torch, name)(*[torch.tensor(a.copy()) if isinstance(a, np.ndarray) else a for a in args])
        assert_same(ours, theirs, 1e-7, 1e-9)


@pytest.mark.parametrize("name", ["conv2d", "max_pool3d", "interpolate", "group_norm"])
def test_float32(name):
    """float32 inputs keep float32 (and match torch within float32 rounding)."""
    fn, arrays = {"conv2d": (lambda m, x, w: m.conv2d(x, w, groups=2), [X2, W2]),
                  "max_pool3d": (lambda m, x: m.max_pool3d(x, 2), [X3]),
                  "interpolate": (lambda m, x: m.interpolate(x, scale_factor=2, mode="bilinear"), [X2]),
                  "group_norm": (lambda m, x: m.group_norm(x, 2), [X2])}[name]
    arrays = [a.astype(np.float32) for a in arrays]
    run(fn, arrays, saved=False, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout", "alpha_dropout"])
def test_dropouts(name):
    """Whole channels dropped (feature forms), kept ones scaled as torch, graph as torch's, identity in eval."""
    x = {"dropout1d": X1, "dropout2d": X2, "dropout3d": X3}.get(name, X2) + 3
    xt, xth = tl.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    fn, fth = getattr(F, name), getattr(TF, name)
    out, ref = fn(xt, 0.5, True), fth(xth, 0.5, True)
    assert [n for n in _names(out)] == [n for n in _names(ref)]
    y = np.asarray(out.detach()._data)
    if name.startswith("dropout"):
        kept = y != 0
        np.testing.assert_allclose(y[kept], 2 * x[kept])
    else:
        a = 1 / np.sqrt((1.7580993408473766 ** 2 * 0.5 + 1) * 0.5)
        dropped = np.isclose(y, -1.7580993408473766 * a + 1.7580993408473766 * a * 0.5)
        np.testing.assert_allclose(y[~dropped], a * x[~dropped] + 1.7580993408473766 * a * 0.5)
        kept = ~dropped
    if name != "alpha_dropout":  # per channel: all or nothing
        per_channel = kept.reshape(kept.shape[0], kept.shape[1], -1)
        assert (per_channel.all(-1) | ~per_channel.any(-1)).all()
    assert fn(xt, 0.5, False) is xt


def _names(t):
    node, names = t.grad_fn, []
    while node is not None and node.next_functions:
        names.append(node.name())
        node = node.next_functions[0][0]
    return names


@pytest.mark.parametrize("case", [
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x[:, :, 0], 1),
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x[:, :, 0].contiguous().to(memory_format=m.channels_last), 1),
    lambda m, x: m.nn.functional.adaptive_avg_pool3d(x, 1),
    lambda m, x: m.nn.functional.adaptive_avg_pool3d(x.to(memory_format=m.channels_last_3d), (1, 1, 1)),
    lambda m, x: m.nn.functional.adaptive_avg_pool1d(x[0, :, 0, 0], 1),
    lambda m, x: m.nn.AdaptiveAvgPool2d((1, 1))(x[0, :, 0]),
])
def test_adaptive_average_to_one_element_is_a_mean_as_torch(case):
    """torch computes adaptive average pooling to 1 x 1 (x 1) as a mean (MeanBackward1, its saved dims), laid out
    channels-last again by as_strided_ for a channels-last input: graph, strides, values and gradients."""
    x_np = np.random.default_rng(5).standard_normal((2, 3, 4, 4, 4)).astype(np.float32)
    seen = []
    for m in (tl, torch):
        x = m.tensor(x_np, requires_grad=True)
        y = case(m, x)
        y.square().sum().backward()
        seen.append((y.grad_fn.name(), tuple(y.stride()), y.detach().numpy(), x.grad.numpy()))
    assert seen[0][:2] == seen[1][:2]
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=1e-5, atol=1e-6)


_AA = [("bilinear", dict(size=(5, 6))), ("bilinear", dict(size=(22, 7))), ("bilinear", dict(scale_factor=(0.3, 2.5))),
       ("bilinear", dict(size=(5, 6), align_corners=True)), ("bicubic", dict(size=(4, 13))),
       ("bicubic", dict(scale_factor=0.45)), ("bicubic", dict(size=(5, 6), align_corners=True)),
       ("lanczos", dict(size=(5, 6))), ("lanczos", dict(size=(22, 7)))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("mode, kw", _AA)
def test_interpolate_antialias_as_torch(mode, kw, dtype):
    """Antialiased bilinear / bicubic / lanczos (torch's *2DAaBackward0): values, gradients, node and saved
    attributes, channels-last layout."""
    x = np.random.RandomState(0).randn(2, 3, 11, 13).astype(dtype)
    got = []
    for lib in (tl, torch):
        t = lib.tensor(x, requires_grad=True)
        r = lib.nn.functional.interpolate(t, mode=mode, antialias=True, **kw)
        (g,) = lib.autograd.grad((r * r).sum(), t)
        node = r.grad_fn
        cl = lib.nn.functional.interpolate(lib.tensor(x).to(memory_format=lib.channels_last), mode=mode,
                                           antialias=True, **kw)
        got.append((r.detach().numpy(), g.numpy(), node.name(), [getattr(node, f"_saved_{k}") for k in (
            "output_size", "align_corners", "scales_h", "scales_w", "self_sym_sizes")], cl.stride()))
    tol = 1e-13 if dtype == "float64" else 3e-6
    for a, b in zip(got[0][:2], got[1][:2]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    assert got[0][2:] == got[1][2:]


@pytest.mark.parametrize("case", [dict(mode="nearest", antialias=True), dict(mode="lanczos"),
                                  dict(mode="lanczos", antialias=True, align_corners=True),
                                  dict(mode="bilinear", antialias=True, dtype="int64")])
def test_interpolate_antialias_refusals_as_torch(case):
    case = dict(case)
    dtype = case.pop("dtype", "float64")
    outcomes = []
    for lib in (tl, torch):
        try:
            lib.nn.functional.interpolate(lib.zeros(1, 3, 11, 13, dtype=getattr(lib, dtype)), size=(5, 6), **case)
            outcomes.append(None)
        except (ValueError, NotImplementedError) as e:
            outcomes.append((type(e), str(e)))
    assert outcomes[0] == outcomes[1] and outcomes[0] is not None

"""Resampling and rearranging: interpolate (Upsample*Backward0; "area" is adaptive_avg_pool), grid_sample
(GridSampler{2,3}DBackward0), affine_grid (AffineGridGeneratorBackward0), unfold / fold (Im2ColBackward0,
Col2ImBackward0), pixel_shuffle / pixel_unshuffle / channel_shuffle. Backwards are jax.vjp of the forwards."""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import apply, layout, op
from .._tensor import channels_last, channels_last_3d
from ._pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "grid_sample", "affine_grid", "unfold",
           "fold", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"]

_HIGHEST = jax.lax.Precision.HIGHEST
_CUBIC_A = -0.75


def _linear_grad(fwd, grad, shape, dtype, **statics):
    """The backward of a linear forward: its transpose applied to ``grad``."""
    (g,) = jax.linear_transpose(lambda x: fwd(x, **statics), jax.ShapeDtypeStruct(shape, dtype))(grad)
    return g


# ----- interpolate -------------------------------------------------------------------------------------------
def _scale(n, o, align_corners, scale):
    if align_corners:
        return (n - 1) / (o - 1) if o > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else n / o


def _nearest_index(n, o, scale, exact, cl_kernel=False):
    """Source indices of one dim's nearest (-exact) resize. torch's channels-last kernel (``cl_kernel``) copies for
    a same size and halves the index for a doubled one, whatever the scale factor (its nearest_idx)."""
    if cl_kernel and not exact and o in (n, 2 * n):
        return np.arange(o) >> (o != n)
    s = np.float32(1.0 / scale if scale is not None and scale > 0 else n / o)
    dst = np.arange(o, dtype=np.float32) + (np.float32(0.5) if exact else 0)
    return np.minimum(np.floor(dst * s).astype(np.int64), n - 1)


def _cubic_weights(t):
    a = _CUBIC_A
    w = [((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a, ((a + 2) * t - (a + 3)) * t * t + 1,
         ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1]
    return w + [((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a]


def _interp_matrix(n, o, align_corners, scale, cubic):
    """(o, n) weights of one dim's linear or cubic interpolation, as torch's kernels compute them."""
    s = _scale(n, o, align_corners, scale)
    dst = np.arange(o, dtype=np.float64)
    src = s * dst if align_corners else s * (dst + 0.5) - 0.5
    m = np.zeros((o, n))
    rows = np.arange(o)
    if cubic:
        i0 = np.floor(src).astype(np.int64)
        for j, w in enumerate(_cubic_weights(src - i0)):
            np.add.at(m, (rows, np.clip(i0 - 1 + j, 0, n - 1)), w)
        return m
    src = np.maximum(src, 0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    lam = src - i0
    np.add.at(m, (rows, i0), 1 - lam)
    np.add.at(m, (rows, np.minimum(i0 + 1, n - 1)), lam)
    return m


def _aa_filter(mode):
    """torch's antialiasing filter of ``mode`` and its number of taps at scale 1 (interp_size)."""
    if mode == "bilinear":
        return 2, lambda x: np.maximum(0.0, 1.0 - np.abs(x))
    if mode == "bicubic":  # (Keys' cubic with a = -0.5, as PIL's)
        def cubic(x):
            x = np.abs(x)
            near = ((1.5 * x - 2.5) * x) * x + 1.0
            far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
            return np.where(x < 1.0, near, np.where(x < 2.0, far, 0.0))
        return 4, cubic
    return 6, lambda x: np.where(np.abs(x) < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)  # lanczos-3


def _aa_matrix(n, o, align_corners, scale, mode, dtype):
    """(o, n) weights of one dim's antialiased resize, as torch's _compute_indices_min_size_weights_aa computes
    them (in the input's float type): the filter widened by the scale when downsampling, each row normalised."""
    dtype = np.dtype(dtype)
    taps, fn = _aa_filter(mode)
    s = dtype.type(_scale(n, o, align_corners, scale))
    support = taps * 0.5 * s if s >= 1.0 else taps * 0.5
    invscale = dtype.type(1.0) / s if s >= 1.0 else dtype.type(1.0)
    most = int(math.ceil(support)) * 2 + 1
    m = np.zeros((o, n), dtype)
    for i in range(o):
        center = s * dtype.type(i + 0.5)
        lo = max(int(center - support + 0.5), 0)
        size = min(max(min(int(center + support + 0.5), n) - lo, 0), most)
        w = fn((np.arange(lo, lo + size, dtype=dtype) - center + dtype.type(0.5)) * invscale).astype(dtype)
        total = w.sum(dtype=dtype)
        m[i, lo:lo + size] = w / total if total != 0 else w
    return m


def _uint8_weights(n, o, align_corners, scale, cubic):
    """(o, n) integer weights of one dim's uint8 bilinear / bicubic resize and their precision in bits, as torch's
    _compute_index_ranges_int16_weights (antialias off): the weights of the taps (clamped to the input: those
    outside go to the first or last tap) in double, rounded to int16 with as many fraction bits as the largest
    weight leaves."""
    size, support = (4, 2) if cubic else (2, 1)
    s = _scale(n, o, align_corners, scale)
    rows, wt_max = [], 0.0
    for i in range(o):
        real = s * i if align_corners else s * (i + 0.5) - 0.5
        if not (cubic or align_corners) and real < 0:
            real = 0.0
        index = min(int(np.floor(np.float32(real))), n - 1)  # (torch's floorf: of the index rounded to float)
        lam = min(max(real - index, 0.0), 1.0)
        low = index - support + 1
        start = max(low, 0)
        count = min(max(min(index + support + 1, n) - start, 0), size)
        w, k = [0.0] * size, 0
        for j, v in enumerate(_cubic_weights(lam) if cubic else (1 - lam, 1 - abs(1 - lam))):
            k = 0 if low + j <= 0 else count - 1 if low + j >= n - 1 else k
            w[k] += v
            wt_max = max(wt_max, w[k])
            k += 1
        rows.append((start, count, w))
    bits = 0
    while bits < 22 and int(0.5 + wt_max * (1 << (bits + 1))) < (1 << 15):
        bits += 1
    m = np.zeros((o, n), np.int32)
    for i, (start, count, w) in enumerate(rows):
        for j in range(count):
            v = w[j] * (1 << bits)
            m[i, start + j] = int(v - 0.5) if v < 0 else int(v + 0.5)
    return m, bits


def _uint8_resize(self, output_size, scales, align_corners, cubic, kernel):
    """torch's uint8 bilinear / bicubic resize: one pass per resized dim, the last first, each a sum of int16
    weights times pixels rounded to its precision and clamped back to uint8 (its separable kernels). Its generic
    kernel (``kernel == "generic"``) writing a row-major output one column wide gives every output row of a
    vertical pass the first row's weights (its loop runs down the column with the weights of where it starts)."""
    out = self
    for ax in range(self.ndim - 1, 1, -1):
        n, o = self.shape[ax], output_size[ax - 2]
        if n == o:
            continue
        m, bits = _uint8_weights(n, o, align_corners, scales[ax - 2], cubic)
        if kernel == "generic" and ax < self.ndim - 1 and output_size[-1] == 1:
            m = np.broadcast_to(m[:1], m.shape)
        acc = jnp.tensordot(jnp.moveaxis(out, ax, -1).astype(jnp.int32), jnp.asarray(m.T), 1)
        out = jnp.moveaxis(jnp.clip((acc + (1 << (bits - 1))) >> bits, 0, 255).astype(jnp.uint8), -1, ax)
    return out


def _upsample_forward(self, output_size, scales, align_corners, mode, kernel):
    nd = len(output_size)
    if self.dtype == jnp.uint8 and mode in ("bilinear", "bicubic"):
        return _uint8_resize(self, output_size, scales, align_corners, mode == "bicubic", kernel)
    out = self
    if mode.endswith("-aa"):  # (torch's separable kernel: the last dim first)
        for j in reversed(range(nd)):
            ax = self.ndim - nd + j
            m = jnp.asarray(_aa_matrix(self.shape[ax], output_size[j], align_corners, scales[j], mode[:-3],
                                       self.dtype))
            out = jnp.moveaxis(jnp.tensordot(jnp.moveaxis(out, ax, -1), m.T, 1, precision=_HIGHEST), -1, ax)
        return out
    for j, (o, sc) in enumerate(zip(output_size, scales)):
        ax = self.ndim - nd + j
        n = self.shape[ax]
        if mode in ("nearest", "nearest-exact"):
            index = _nearest_index(n, o, sc, mode == "nearest-exact", kernel == "channels_last")
            out = jnp.take(out, index, axis=ax)
        else:
            m = jnp.asarray(_interp_matrix(n, o, align_corners, sc, mode == "bicubic"), self.dtype)
            out = jnp.moveaxis(jnp.tensordot(jnp.moveaxis(out, ax, -1), m.T, 1, precision=_HIGHEST), -1, ax)
    return out


def _upsample_refusal(mode, nd):
    """torch's refusal of an integer or bool input: its kernels take uint8 only for nearest, nearest-exact, bilinear
    and bicubic, and the refusal is named by the kernel that runs (static ``kernel``: see ``_upsample_kernel``)."""
    cl_name = {"nearest": f"upsample_nearest{nd}d_channels_last", "bilinear": "upsample_bilinear2d_channels_last",
               "trilinear": "upsample_trilinear3d_channels_last"}
    cl_name["nearest-exact"] = cl_name["nearest"]
    generic = "compute_indices_weights_" + ("cubic" if mode == "bicubic" else "nearest" if mode.startswith("nearest")
                                            else "linear")

    if mode.endswith("-aa"):
        return lambda statics, args: "compute_index_ranges_weights"

    def refusal(statics, args):
        if args[0].dtype == np.uint8 and mode not in ("linear", "trilinear"):
            return None
        return cl_name[mode] if statics["kernel"] == "channels_last" else generic
    return refusal


def _upsample_op(name, mode, nd):
    if mode.startswith("nearest"):
        def forward(self, *, output_size, kernel, scales):
            return _upsample_forward(self, output_size, scales, False, mode, kernel)
        attrs = ("output_size", "self_sym_sizes")
    else:
        def forward(self, *, output_size, align_corners, kernel, scales):
            return _upsample_forward(self, output_size, scales, align_corners, mode, kernel)
        attrs = ("output_size", "align_corners", "self_sym_sizes")
    # torch's scales_d / scales_h / scales_w (or scales in 1-d): the scale factors, None where a size was given
    words = ("scales",) if nd == 1 else ("scales_d", "scales_h", "scales_w")[3 - nd:]
    saved = {w: (lambda node, saved, j=j: node._statics[-1][j]) for j, w in enumerate(words)}
    fwd = op(name, save=(), attrs=attrs, saved=saved, layout=layout.suggested,
             refuse={"biu": _upsample_refusal(mode, nd)})(forward)

    @fwd.derivative
    def _(grad, self_shape, self_dtype, output_size, kernel, scales, align_corners=False):
        statics = {"output_size": output_size, "kernel": kernel, "scales": scales}
        if not mode.startswith("nearest"):
            statics["align_corners"] = align_corners
        return _linear_grad(forward, grad, self_shape, self_dtype, **statics)
    return fwd


_UPSAMPLE = {(m, nd): _upsample_op(f"Upsample{word}{nd}DBackward0", m, nd)
             for m, word, dims in (("nearest", "Nearest", (1, 2, 3)), ("nearest-exact", "NearestExact", (1, 2, 3)),
                                   ("linear", "Linear", (1,)), ("bilinear", "Bilinear", (2,)),
                                   ("bicubic", "Bicubic", (2,)), ("trilinear", "Trilinear", (3,)))
             for nd in dims}
for _mode in ("bilinear", "bicubic", "lanczos"):  # (torch's names: Upsample{Bilinear,Bicubic,Lanczos}2DAaBackward0)
    _UPSAMPLE[f"{_mode}-aa", 2] = _upsample_op(f"Upsample{_mode.capitalize()}2DAaBackward0", f"{_mode}-aa", 2)
_MODES_NEED = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5, "bilinear-aa": 4, "bicubic-aa": 4,
               "lanczos-aa": 4}


def _upsample_kernel(input, mode, output_size, scales):
    """The static ``kernel`` of an upsample op: which of torch's CPU kernels runs, where that shows in the result or
    in the refusal of an integer or bool input; else None (one program then serves every layout).

    "channels_last": cpu_upsample_{nearest,linear}_channels_last, which torch runs for a 2-d resize of a
    channels-last input of more than 3 channels or to at most 128 rows plus columns, and for a 3-d one of a
    channels-last input of more than 3 channels (nearest's indices then differ for a scale factor that a
    same or a doubled size contradicts); "generic": upsample_generic_Nd, and for uint8 bilinear / bicubic of more
    than 4 channels into a row-major output, separable_upsample_generic_Nd (see ``_uint8_resize``; x86 torch takes
    its AVX2 kernel for up to 4 channels). (torch also runs the channels-last kernel for a bilinear resize of 3
    channels with one intra-op thread: not followed.)"""
    dt = input._data.dtype
    if dt == np.uint8 and mode in ("bilinear", "bicubic"):
        return "generic" if input.shape[1] > 4 and layout.suggested_format(input) is None else None
    if dt.kind not in "biu" and not (mode == "nearest" and any(s is not None for s in scales)):
        return None
    nd = len(output_size)
    if nd == 1 or mode == "bicubic":
        return "generic"
    wide = input.shape[1] > 3 and input.is_contiguous(memory_format=channels_last if nd == 2 else channels_last_3d)
    return "channels_last" if wide or (nd == 2 and sum(output_size) <= 128) else "generic"


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dims of (N, C, *spatial) ``input`` to ``size`` or by ``scale_factor``, as torch.

    ``mode``: "nearest", "nearest-exact", "linear" (3-D), "bilinear" / "bicubic" (4-D), "trilinear" (5-D), "area".
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                             "bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        output_size = tuple(size) if isinstance(size, (list, tuple)) else (size,) * max(dim, 0)
        if isinstance(size, (list, tuple)) and len(size) != dim:
            raise ValueError(f"Input and output must have the same number of spatial dimensions, but got input with "
                             f"spatial dimensions of {list(input.shape[2:])} and output size of {size}. Please provide "
                             f"input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) "
                             f"format.")
        scales = (None,) * max(dim, 0)
    elif scale_factor is not None:
        scales = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * max(dim, 0)
        if isinstance(scale_factor, (list, tuple)) and len(scale_factor) != dim:
            raise ValueError(f"Input and scale_factor must have the same number of spatial dimensions, but got input "
                             f"with spatial dimensions of {list(input.shape[2:])} and scale_factor of shape "
                             f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                             f"scale_factor in (s1, s2, ...,sK) format.")
        output_size = tuple(math.floor(float(n) * s) for n, s in zip(input.shape[2:], scales))
        if recompute_scale_factor:
            scales = (None,) * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D "
                         "tensor as input")
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:
        if input._data.dtype == np.uint8:
            raise NotImplementedError("torchlike: antialiased interpolate of uint8 images (torch's int16 fixed-point "
                                      "weights) is not supported; convert to float first")
        mode = f"{mode}-aa"
    wrong = mode in _MODES_NEED and input.ndim != _MODES_NEED[mode]
    if dim not in (1, 2, 3) or mode not in ("nearest", "nearest-exact", "area") + tuple(_MODES_NEED) or wrong:
        if wrong and dim in (1, 2, 3) and mode != "bicubic":  # (torch names no need of bicubic's)
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {_MODES_NEED[mode]}D input")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
                                  f"nearest-exact (got {mode})")
    output_size = tuple(int(o) for o in output_size)
    scales = tuple(None if s is None else float(s) for s in scales)
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, output_size)
    spatial = tuple(input.shape[2:])
    if min(spatial + output_size) <= 0:  # (torch's upsample_{1,2,3}d_common_check)
        names = "DHW"[3 - dim:]
        given = ", ".join(f"{c}: {v}" for c, v in zip(names, spatial))
        wanted = ", ".join(f"{c}: {v}" for c, v in zip(names, output_size))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({given}) "
                           f"{'and ' if dim == 1 else ''}output ({wanted})")
    if input.numel() == 0 and math.prod(input.shape[1:]) == 0:
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with sizes "
                           f"{list(input.shape)}")
    kernel = _upsample_kernel(input, mode, output_size, scales)
    if mode.startswith("nearest"):
        return apply(_UPSAMPLE[mode, dim], (input,), (output_size, kernel, scales))
    return apply(_UPSAMPLE[mode, dim], (input,), (output_size, bool(align_corners), kernel, scales))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of interpolate (warns, as torch)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode="nearest")."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode="bilinear", align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ----- grid_sample / affine_grid -----------------------------------------------------------------------------
def _reflect(x, lo2, hi2):
    if lo2 == hi2:
        return jnp.zeros_like(x)
    lo, span = lo2 / 2, (hi2 - lo2) / 2
    x = jnp.abs(x - lo)
    extra = jnp.fmod(x, span)
    flips = jnp.floor(x / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _unnormalize(coord, n, align_corners):
    return ((coord + 1) / 2) * (n - 1) if align_corners else ((coord + 1) * n - 1) / 2


def _padded(x, n, padding_mode, align_corners):
    """torch's compute_coordinates: a source coordinate under the border / reflection padding modes."""
    if padding_mode == 1:  # border
        x = jnp.clip(x, 0, n - 1)
    elif padding_mode == 2:  # reflection
        x = _reflect(x, 0, 2 * (n - 1)) if align_corners else _reflect(x, -1, 2 * n - 1)
        x = jnp.clip(x, 0, n - 1)
    return x


def _grid_forward(input, grid, *, interpolation_mode, padding_mode, align_corners):
    N, C, *S = input.shape
    nd = len(S)
    O = grid.shape[1:-1]
    raw = [_unnormalize(grid[..., nd - 1 - j], S[j], align_corners) for j in range(nd)]  # D, H, W order
    src = [_padded(x, n, padding_mode, align_corners) for x, n in zip(raw, S)]
    flat = input.reshape(N, C, -1)
    strides = [math.prod(S[j + 1:]) for j in range(nd)]

    def gather(idx):  # idx: per dim int arrays (N, *O); out-of-range reads 0
        ok = jnp.ones(idx[0].shape, bool)
        f = jnp.zeros(idx[0].shape, jnp.int32)
        for j, i in enumerate(idx):
            ok = ok & (i >= 0) & (i < S[j])
            f = f + jnp.clip(i, 0, S[j] - 1).astype(jnp.int32) * strides[j]
        v = jnp.take_along_axis(flat, f.reshape(N, 1, -1), 2).reshape((N, C) + O)
        return jnp.where(ok[:, None], v, 0)

    if interpolation_mode == 1:  # nearest (round half to even, as nearbyint)
        return gather([jnp.round(s).astype(jnp.int32) for s in src])
    if interpolation_mode == 2:  # bicubic (2-d): 4 x 4 taps, each tap's coordinate padded
        lo = [jnp.floor(x) for x in raw]
        ws = [_cubic_weights(x - l) for x, l in zip(raw, lo)]
        out = 0
        for i in range(4):
            for j in range(4):
                taps = [_padded(lo[0] - 1 + i, S[0], padding_mode, align_corners),
                        _padded(lo[1] - 1 + j, S[1], padding_mode, align_corners)]
                out = out + gather([t.astype(jnp.int32) for t in taps]) * (ws[0][i] * ws[1][j])[:, None]
        return out
    lo = [jnp.floor(s) for s in src]
    out = 0
    for corner in range(2 ** nd):
        bits = [(corner >> (nd - 1 - j)) & 1 for j in range(nd)]
        w = 1
        for b, s, l in zip(bits, src, lo):
            w = w * (s - l if b else 1 - (s - l))
        out = out + gather([(l + b).astype(jnp.int32) for b, l in zip(bits, lo)]) * w[:, None]
    return out


_GRID = {nd: op(f"GridSampler{nd}DBackward0", save=("input", "grid"),
                attrs=("interpolation_mode", "padding_mode", "align_corners"))(_grid_forward) for nd in (2, 3)}


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) / (N, C, D, H, W) at ``grid``'s (x, y[, z]) points in [-1, 1]."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but "
                         f"got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    nd = input.ndim - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions and "
                           f"batch size, but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    pads = {"zeros": 0, "border": 1, "reflection": 2}
    return apply(_GRID[nd], (input, grid), (modes[mode], pads[padding_mode], bool(align_corners)))


def _base(n, align_corners):
    v = np.linspace(-1, 1, n) if n > 1 else np.zeros(1)
    return v if align_corners else v * (n - 1) / n


@op("AffineGridGeneratorBackward0", save=(), attrs=("align_corners", "size"))
def _affine_grid(theta, *, size, align_corners):
    spatial = size[2:]
    mesh = np.meshgrid(*[_base(n, align_corners) for n in spatial], indexing="ij")[::-1]  # x (W), y (H), z (D)
    base = np.stack(list(mesh) + [np.ones(spatial)], -1).reshape(-1, len(spatial) + 1)
    grid = jnp.einsum("pk,njk->npj", jnp.asarray(base, theta.dtype), theta, precision=_HIGHEST)
    return grid.reshape((size[0],) + tuple(spatial) + (len(spatial),))


@_affine_grid.derivative
def _(grad, theta_shape, theta_dtype, size, align_corners):
    return _linear_grad(_affine_grid.forward, grad, theta_shape, theta_dtype, size=size, align_corners=align_corners)


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) / (N, D, H, W, 3) sampling grid of affine matrices ``theta`` for grid_sample."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    if theta._data.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size torch.Size({list(size)})"
                             f". Got {theta.shape}.")
    elif len(size) == 5:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size torch.Size({list(size)})"
                             f". Got {theta.shape}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return apply(_affine_grid, (theta,), (size, bool(align_corners)))


# ----- unfold / fold -----------------------------------------------------------------------------------------
def _im2col(x, kernel_size, dilation, padding, stride):
    if x.ndim == 3:  # unbatched, as torch's im2col
        return _im2col(x[None], kernel_size, dilation, padding, stride)[0]
    p = jax.lax.conv_general_dilated_patches(x, kernel_size, stride, [(q, q) for q in padding],
                                             rhs_dilation=dilation, precision=_HIGHEST)
    return p.reshape(p.shape[:2] + (-1,))


@op("Im2ColBackward0", save=(), attrs=("kernel_size", "dilation", "padding", "stride"),
    saved={"self_sym_argsize_minus_1": lambda node, saved: node._in_meta[0].shape[-1],
           "self_sym_argsize_minus_2": lambda node, saved: node._in_meta[0].shape[-2]})
def _unfold(self, *, kernel_size, dilation, padding, stride):
    return _im2col(self, kernel_size, dilation, padding, stride)


@_unfold.derivative
def _(grad, self_shape, self_dtype, kernel_size, dilation, padding, stride):
    return _linear_grad(_im2col, grad, self_shape, self_dtype, kernel_size=kernel_size, dilation=dilation,
                        padding=padding, stride=stride)


@op("Col2ImBackward0", save=(), attrs=("kernel_size", "dilation", "padding", "stride"))
def _fold(self, *, output_size, kernel_size, dilation, padding, stride):
    if self.ndim == 2:  # unbatched, as torch's col2im
        return _fold.forward(self[None], output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                             padding=padding, stride=stride)[0]
    n, ck = self.shape[:2]
    c = ck // math.prod(kernel_size)
    shape = jax.ShapeDtypeStruct((n, c) + tuple(output_size), self.dtype)
    (out,) = jax.linear_transpose(lambda x: _im2col(x, kernel_size, dilation, padding, stride), shape)(self)
    return out


@_fold.derivative
def _(grad, kernel_size, dilation, padding, stride):
    return _im2col(grad, kernel_size, dilation, padding, stride)


def _pair(v, name=None):
    return (int(v),) * 2 if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding local blocks of (N, C, H, W) / (C, H, W) as columns (N, C*kH*kW, L) (Im2ColBackward0)."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions, but got: {list(input.shape)}")
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    shape = tuple(input.shape) if input.ndim == 4 else (1,) + tuple(input.shape)
    oh, ow = ((n + 2 * p_ - d_ * (k_ - 1) - 1) // s_ + 1 for n, k_, d_, p_, s_ in zip(shape[2:], k, d, p, s))
    if oh < 1 or ow < 1:
        raise RuntimeError(f"Given input with spatial size ({shape[2]}, {shape[3]}), kernel_size=({k[0]}, {k[1]}), "
                           f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of "
                           f"sliding blocks as ({oh}, {ow}), but its components must be at least one.")
    return apply(_unfold, (input,), (k, d, p, s))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns (N, C*kH*kW, L) / (C*kH*kW, L) back into (N, C, *output_size) (Col2ImBackward0)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions, but got: {list(input.shape)}")
    o, k, d, p, s = _pair(output_size), _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    shape = tuple(input.shape) if input.ndim == 3 else (1,) + tuple(input.shape)
    if shape[1] % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shape[1]} and kernel_size=({k[0]}, {k[1]}).")
    bh, bw = ((n + 2 * p_ - d_ * (k_ - 1) - 1) // s_ + 1 for n, k_, d_, p_, s_ in zip(o, k, d, p, s))
    if shape[2] != bh * bw:
        raise RuntimeError(f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, "
                           f"{d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {bh} * {bw} = {bh * bw}, "
                           f"but got input.size(2)={shape[2]}.")
    return apply(_fold, (input,), (o, k, d, p, s))


# ----- pixel_shuffle / pixel_unshuffle / channel_shuffle ----------------------------------------------------
@op("PixelShuffleBackward0", save=(), attrs=("upscale_factor",))
def _pixel_shuffle(self, *, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = self.shape
    x = self.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    n = len(lead)
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


@op("PixelUnshuffleBackward0", save=(), attrs=("downscale_factor",))
def _pixel_unshuffle(self, *, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = self.shape
    x = self.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    n = len(lead)
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


@op("ChannelShuffleBackward0", save=(), attrs=("groups",))
def _channel_shuffle(self, *, groups):
    n, c = self.shape[:2]
    x = self.reshape((n, groups, c // groups) + self.shape[2:])
    return jnp.swapaxes(x, 1, 2).reshape(self.shape)


def pixel_shuffle(input, upscale_factor):
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r) (PixelShuffleBackward0)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    if input.shape[-3] % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={input.shape[-3]} is not divisible by {r * r}")
    return apply(_pixel_shuffle, (input,), (r,))


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W) (PixelUnshuffleBackward0)."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({d})={input.shape[d]} is not divisible by {r}")
    return apply(_pixel_unshuffle, (input,), (r,))


def channel_shuffle(input, groups):
    """(N, g*k, *) -> channels regrouped as (N, k*g, *) (ChannelShuffleBackward0)."""
    g = int(groups)
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if input.shape[1] % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and {g} "
                           f"groups.")
    return apply(_channel_shuffle, (input,), (g,))


@_pixel_shuffle.derivative
def _(grad, upscale_factor):
    return _pixel_unshuffle.forward(grad, downscale_factor=upscale_factor)


@_pixel_unshuffle.derivative
def _(grad, downscale_factor):
    return _pixel_shuffle.forward(grad, upscale_factor=downscale_factor)


@_channel_shuffle.derivative
def _(grad, groups):
    return _channel_shuffle.forward(grad, groups=grad.shape[1] // groups)


native_channel_shuffle = channel_shuffle

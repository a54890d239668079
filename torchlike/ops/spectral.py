"""The table entries of torch.fft (torchlike/fft.py is the public module): torch's three nodes, FftC2CBackward0,
FftR2CBackward0 and FftC2RBackward0, with its normalization codes (0: none, 1: 1/sqrt(n), 2: 1/n) and its backward
formulas (each transform's adjoint); and torch.stft / torch.istft, composed of them as ATen composes them (padding,
as_strided frames, the window product, the transform, and for istft the overlap-add of unfold_backward), so their
graphs and gradients are those ops'."""
import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import _message_type
from .._warnings import warn_once
from ._bind import public
from ._registry import op, _apply
from .creation import ones, zeros
from .elementwise import view_as_complex, view_as_real
from .other import _unfold
from .padding import _constant_pad, pad
from .shape import _aten_slice


def _jnp_norm(normalization, forward):
    """jnp.fft's ``norm`` for torch's code of a forward (or inverse) transform."""
    return ("backward", "ortho", "forward")[normalization] if forward else ("forward", "ortho", "backward")[normalization]


@op("FftC2CBackward0", save=(), attrs=("dim", "forward", "normalization"), unsigned=("dim",))
def _c2c(self, *, dim, normalization, forward):
    fn = jnp.fft.fftn if forward else jnp.fft.ifftn
    return fn(self, axes=dim, norm=_jnp_norm(normalization, forward))


@_c2c.derivative
def _(grad, dim, normalization, forward):
    return _c2c.forward(grad, dim=dim, normalization=normalization, forward=not forward)


@op("FftR2CBackward0", save=("self",), attrs=("dim", "normalization", "onesided"), unsigned=("dim",))
def _r2c(self, *, dim, normalization, onesided):
    norm = _jnp_norm(normalization, True)
    return jnp.fft.rfftn(self, axes=dim, norm=norm) if onesided else jnp.fft.fftn(self, axes=dim, norm=norm)


@_r2c.derivative
def _(grad, self, dim, normalization, onesided):  # torch's fft_r2c_backward: the full spectrum, then c2c back
    last = dim[-1]
    if onesided and self.shape[last] > grad.shape[last]:
        widths = [(0, 0)] * grad.ndim
        widths[last] = (0, self.shape[last] - grad.shape[last])
        grad = jnp.pad(grad, widths)
    return jnp.real(_c2c.forward(grad, dim=dim, normalization=normalization, forward=False))


@op("FftC2RBackward0", save=(), attrs=("dim", "normalization"), unsigned=("dim",))
def _c2r(self, *, dim, normalization, last_dim_size):
    s = [self.shape[d] for d in dim[:-1]] + [last_dim_size]
    return jnp.fft.irfftn(self, s=s, axes=dim, norm=_jnp_norm(normalization, False))


@_c2r.derivative
def _(grad, dim, normalization, last_dim_size):  # torch's fft_c2r_backward: r2c, the doubled bins times 2
    gi = _r2c.forward(grad, dim=dim, normalization=normalization, onesided=True)
    last = dim[-1]
    double = grad.shape[last] - gi.shape[last]
    if double > 0:
        scale = jnp.ones(gi.shape[last], gi.real.dtype).at[1:1 + double].set(2)
        gi = gi * scale.reshape([-1 if a == last % gi.ndim else 1 for a in range(gi.ndim)])
    return gi


# ----- stft, istft ------------------------------------------------------------------------------------------------
@op("UnfoldBackwardBackward0", save=(), attrs=("dim", "size", "step"))
def _unfold_backward(grad_in, *, input_sizes, dim, size, step):
    """unfold's backward as an op (istft's overlap-add): the windows summed back into a tensor of input_sizes."""
    return _unfold.backward(grad_in, input_sizes, dim, size, step)


@_unfold_backward.derivative
def _(grad, dim, size, step):
    return _unfold.forward(grad, dimension=dim, size=size, step=step)


def _shown(t):
    """A tensor as torch's stft / istft messages show it: its type and sizes."""
    return f"{_message_type(t._data.dtype)}[{', '.join(map(str, t.shape))}]"


def _shown_window(window):
    return "None" if window is None else f"{_message_type(window._data.dtype)}{{{list(window.shape)}}}"


def _opt(value):
    return "None" if value is None else int(value)


@public
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """torch.stft: the short-time Fourier transform of a 1-D signal or a batch (2-D) of them: frames of ``n_fft``
    samples ``hop_length`` apart (a centred signal padded by ``n_fft // 2`` each side with ``pad_mode``), times the
    window, transformed (one-sided for a real signal and window). Complex (B?, bins, frames) result."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # torch's Python pads a centred signal (viewed as 3-D), then calls the overload without center
        signal_dim = input.dim()
        p = int(n_fft // 2)
        input = pad(input.view([1] * (3 - signal_dim) + list(input.shape)), [p, p], pad_mode)
        input = input.view(input.shape[-signal_dim:])
    if window is None:
        warn_once("stft window", "A window was not provided. A rectangular window will be applied,which is known to "
                  "cause spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                  "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                  "explicitly set `window=torch.ones(n_fft, device=<device>)`.", stacklevel=3)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    as_complex = return_complex if return_complex is not None else (
        input.is_complex() or window is not None and window.is_complex())
    if not as_complex:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        warn_once("stft return_complex", "stft with return_complex=False is deprecated. In a future pytorch release, "
                  "stft will return complex tensors for all inputs, and return_complex=False will raise an error.\n"
                  "Note: you can still call torch.view_as_real on the complex output to recover the old return "
                  "format.", stacklevel=3)
    shown = (f"stft({_shown(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window="
             f"{_shown_window(window)}, normalized={int(normalized)}, onesided={_opt(onesided)}, return_complex="
             f"{_opt(return_complex)}, align_to_window={_opt(align_to_window)}) ")
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(shown + ": expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise RuntimeError(shown + ": expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.ndim == 1 else input
    batch, length = x.shape
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(shown + f": expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(shown + f": expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(shown + f": expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(shown + f": expected a 1D window tensor of size equal to win_length={win}, but got window "
                           f"with size {list(window.shape)}")
    if win < n_fft:  # the window centred in n_fft zeros (copied in: CopySlices)
        centred = zeros(n_fft, dtype=(input if window is None else window).dtype)
        if window is None:
            centred.narrow(0, (n_fft - win) // 2, win).fill_(1)
        else:
            centred.narrow(0, (n_fft - win) // 2, win).copy_(window)
        window = centred
    if align_to_window:  # (frames start where the window's samples do)
        frames = 1 + (length - win) // hop
        x = pad(x, [(n_fft - win) // 2] * 2, "constant")
    else:
        frames = 1 + (length - n_fft) // hop
    x = x.as_strided((batch, frames, n_fft), (x.stride(0), hop * x.stride(1), x.stride(1)))
    if window is not None:
        x = x.mul(window)
    complex_fft = x.is_complex()
    onesided = not complex_fft if onesided is None else onesided
    if x._data.dtype.kind == "V" or x._data.dtype == np.float16:  # (torch's CPU transforms: no half types)
        half = "Half" if x._data.dtype == np.float16 else "BFloat16"
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {half}")
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _apply(_c2c, (x,), ((2,), int(bool(normalized)), True))
    else:
        out = _apply(_r2c, (x,), ((2,), int(bool(normalized)), bool(onesided)))
    out.transpose_(1, 2)
    if input.ndim == 1:
        out.squeeze_(0)
    return out if as_complex else view_as_real(out)


@public
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """torch.istft: the signal (B?, length) whose stft is ``input`` (B?, bins, frames): the inverse transforms times
    the window, overlap-added and divided by the overlap-added squared window (which must not vanish: NOLA)."""
    if window is None:
        warn_once("istft window", "A window was not provided. A rectangular window will be applied.Please provide "
                  "the same window used by stft to make the inversion lossless.To suppress this warning and use a "
                  "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.", stacklevel=3)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                        "return_complex=True.")
    x = view_as_real(input.resolve_conj())
    ndim = x.ndim
    frames, bins = x.size(-2), x.size(-3)
    expected = n_fft + hop * (frames - 1)
    shown = (f"istft({_shown(input)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, window="
             f"{_shown_window(window)}, center={int(center)}, normalized={int(normalized)}, onesided="
             f"{_opt(onesided)}, length={'None' if length is None else length}, return_complex={int(return_complex)}) ")
    if not x.numel():
        raise RuntimeError(shown + ": input tensor cannot be empty.")
    if ndim not in (3, 4):
        raise RuntimeError(shown + f": expected a tensor with 3 or 4 dimensions, but got {ndim}")
    onesided = bins != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != bins:
        raise RuntimeError(shown + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {bins}")
    if not onesided and n_fft != bins:
        raise RuntimeError(shown + ": expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {bins}")
    if not 0 < hop <= win:
        raise RuntimeError(shown + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(shown + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(shown + ": Invalid window shape. window has to be 1D and length of `win_length`")
    window_ = ones(win, dtype=x.dtype) if window is None else window
    if win != n_fft:  # the window centred in n_fft zeros
        left = (n_fft - win) // 2
        window_ = _apply(_constant_pad, (window_,), ((left, n_fft - win - left), 0))
    if ndim == 3:
        x = x.unsqueeze(0)
    x = view_as_complex(x.transpose(1, 2))  # (batch, frames, bins)
    norm = 1 if normalized else 2
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _apply(_c2c, (x,), ((2,), norm, False))
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _apply(_c2r, (x,), ((2,), norm, n_fft))
    y = _apply(_unfold_backward, (x * window_.view(1, 1, n_fft),), ((x.shape[0], expected), 1, n_fft, hop))
    envelope = _apply(_unfold_backward, (window_.pow(2).expand(1, frames, n_fft),), ((1, expected), 1, n_fft, hop))
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else expected
    y, envelope = _aten_slice(y, 1, start, end), _aten_slice(envelope, 1, start, end)
    lowest = envelope.abs().min()._data
    if not isinstance(lowest, jax.core.Tracer) and bool(lowest < 1e-11):  # (a host read, as torch's check)
        raise RuntimeError(shown + "window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > expected:
        warn_once("istft length", "The length of signal is shorter than the length parameter. Result is being padded "
                  "with zeros in the tail. Please check your center and hop_length settings.", stacklevel=3)
        y = _apply(_constant_pad, (y,), ((0, end - expected), 0))
    return y

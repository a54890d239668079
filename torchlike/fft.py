"""torchlike.fft: torch.fft's discrete Fourier transforms, recorded as torch records them (FftC2CBackward0,
FftR2CBackward0, FftC2RBackward0; a requested length pads (ConstantPadNdBackward0) or slices the input first)."""
import numpy as np

from . import _dtype
from ._internal import apply
from ._tensor import Tensor, _wrap_dim
from .ops import _registry, creation as _creation, pointwise as _pw, other as _other
from .ops.padding import _constant_pad
from .ops.spectral import _c2c, _r2c, _c2r

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_CODES = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _code(norm, forward, name):
    """torch's normalization code of ``norm`` for a forward (or inverse) transform."""
    if norm not in _CODES:
        raise RuntimeError(f"Invalid normalization mode: \"{norm}\"")
    code = _CODES[norm]
    return code if forward else (2 - code if code != 1 else 1)


def _float(x, name):
    """Integers and bools as the default float, as torch promotes them (float32 under autocast, as torch's)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    x, = _registry.autocast_args("fft_" + name, x)
    if x.dtype in (_dtype.float16, _dtype.bfloat16):  # (torch's CPU FFTs: pocketfft has no half types)
        raise RuntimeError(f"Unsupported dtype {_dtype._SCALAR_TYPE[x.dtype.name]}")
    return x if x._data.dtype.kind in "fcV" else x.to(_dtype.get_default_dtype())


def _complex(x):
    return x if x.is_complex() else x.to(_dtype.promote_types(x.dtype, _dtype.complex64)
                                         if x.dtype != _dtype.float64 else _dtype.complex128)


def _resize(x, dims, sizes, name):
    """``x`` sliced or zero-padded along ``dims`` to ``sizes`` (torch's resize_fft_input)."""
    pad = [0] * (2 * x.ndim)
    padded = False
    for d, n in zip(dims, sizes):
        if n == -1:
            continue
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
        if x.shape[d] > n:
            x = x.narrow(d, 0, n)
        elif x.shape[d] < n:
            pad[2 * (x.ndim - 1 - d) + 1] = n - x.shape[d]
            padded = True
    if padded:
        last = max(i for i, p in enumerate(pad) if p) + 1
        pad = pad[:last + (last % 2)]
        x = apply(_constant_pad, (x,), (tuple(pad), 0.0))
    return x


def _dims_sizes(x, s, dim, default_all, name):
    """torch's canonical (dims, sizes) of an n-dimensional transform."""
    if dim is None:
        dims = list(range(x.ndim)) if s is None else list(range(x.ndim - len(s), x.ndim))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [_wrap_dim(d, x.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is not None and len(s) != len(dims):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    return dims, [-1] * len(dims) if s is None else list(s)


def _one_dim(x, n, dim, name):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, x.ndim), -1 if n is None else n


# ----- complex to complex ------------------------------------------------------------------------------------------
def _c2c_n(name, forward):
    def fn(input, s=None, dim=None, norm=None, *, out=None):
        x = _complex(_float(input, name))
        dims, sizes = _dims_sizes(x, s, dim, True, name)
        x = _resize(x, dims, sizes, name)
        result = apply(_c2c, (x,), (tuple(dims), _code(norm, forward, name), forward))
        return result if out is None else out.copy_(result)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The {'' if forward else 'inverse '}n-dimensional discrete Fourier transform over ``dim``."
    return fn


def _c2c_1(name, forward, nd):
    def fn(input, n=None, dim=-1, norm=None, *, out=None):
        x = _float(input, name)
        d, size = _one_dim(x, n, dim, name)
        if x.is_complex():
            return nd(x, None if n is None else [size], [d], norm, out=out)
        # torch transforms a real input as r2c over the whole spectrum (the inverse: its conjugate)
        x = _resize(x, [d], [size], name)
        result = apply(_r2c, (x,), ((d,), _code(norm, forward, name), False))
        result = result if forward else _pw.conj(result)
        return result if out is None else out.copy_(result)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The {'' if forward else 'inverse '}one-dimensional discrete Fourier transform along ``dim``."
    return fn


def _c2c_2(name, nd):
    def fn(input, s=None, dim=(-2, -1), norm=None, *, out=None):
        return nd(input, s, dim, norm, out=out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{nd.__name__} over the last two dims."
    return fn


fftn, ifftn = _c2c_n("fftn", True), _c2c_n("ifftn", False)
fft, ifft = _c2c_1("fft", True, fftn), _c2c_1("ifft", False, ifftn)
fft2, ifft2 = _c2c_2("fft2", fftn), _c2c_2("ifft2", ifftn)


# ----- real to complex and back --------------------------------------------------------------------------------------
def _real(x, name):
    if x.is_complex():
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype._SCALAR_TYPE[x.dtype.name]}")
    return x


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional FFT of a real input, the last dim's non-negative frequencies only."""
    x = _real(_float(input, "rfftn"), "rfftn")
    dims, sizes = _dims_sizes(x, s, dim, True, "rfftn")
    x = _resize(x, dims, sizes, "rfftn")
    result = apply(_r2c, (x,), (tuple(dims), _code(norm, True, "rfftn"), True))
    return result if out is None else out.copy_(result)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of rfftn: a real output whose last dim has ``s[-1]`` (default 2 * (n - 1)) points."""
    x = _complex(_float(input, "irfftn"))
    dims, sizes = _dims_sizes(x, s, dim, True, "irfftn")
    last = sizes[-1] if sizes[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
    if last < 1:
        raise RuntimeError(f"Invalid number of data points ({last}) specified")
    x = _resize(x, dims, sizes[:-1] + [last // 2 + 1], "irfftn")
    result = apply(_c2r, (x,), (tuple(dims), _code(norm, False, "irfftn"), last))
    return result if out is None else out.copy_(result)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional FFT of a real input (non-negative frequencies)."""
    x = _real(_float(input, "rfft"), "rfft")
    d, size = _one_dim(x, n, dim, "rfft")
    return rfftn(x, None if n is None else [size], [d], norm, out=out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: ``n`` (default 2 * (m - 1)) real points."""
    x = _complex(_float(input, "irfft"))
    d, size = _one_dim(x, n, dim, "irfft")
    return irfftn(x, None if n is None else [size], [d], norm, out=out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """rfftn over the last two dims."""
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """irfftn over the last two dims."""
    return irfftn(input, s, dim, norm, out=out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of a Hermitian-symmetric signal given by its first half: a real output of ``n`` points."""
    x = _complex(_float(input, "hfft"))
    d, size = _one_dim(x, n, dim, "hfft")
    last = size if size != -1 else 2 * (x.shape[d] - 1)
    x = _resize(x, [d], [last // 2 + 1], "hfft").conj()
    result = apply(_c2r, (x,), ((d,), _code(norm, True, "hfft"), last))
    return result if out is None else out.copy_(result)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the first half of the Hermitian spectrum of a real signal."""
    x = _real(_float(input, "ihfft"), "ihfft")
    d, size = _one_dim(x, n, dim, "ihfft")
    x = _resize(x, [d], [size], "ihfft")
    result = _pw.conj(apply(_r2c, (x,), ((d,), _code(norm, False, "ihfft"), True)))
    return result if out is None else out.copy_(result)


# ----- frequencies and shifts -------------------------------------------------------------------------------------
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``."""
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    values = np.fft.fftfreq(n, d).astype(dt._np)
    return _creation.tensor(values, dtype=dt, device=device, requires_grad=requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """The non-negative sample frequencies of an ``n``-point rfft with sample spacing ``d``."""
    dt = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    values = np.fft.rfftfreq(n, d).astype(dt._np)
    return _creation.tensor(values, dtype=dt, device=device, requires_grad=requires_grad)


def _shift(name, inverse):
    def fn(input, dim=None):
        dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
        sizes = [input.shape[_wrap_dim(d, input.ndim)] for d in dims]
        return _other.roll(input, [(n + 1) // 2 if inverse else n // 2 for n in sizes], dims)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{'Undo fftshift: move' if inverse else 'Move'} the zero frequency to the "
                  f"{'start' if inverse else 'centre'} along ``dim`` (a roll).")
    return fn


fftshift, ifftshift = _shift("fftshift", False), _shift("ifftshift", True)

"""The table entries of torch.fft (torchlike/fft.py is the public module): torch's three nodes, FftC2CBackward0,
FftR2CBackward0 and FftC2RBackward0, with its normalization codes (0: none, 1: 1/sqrt(n), 2: 1/n) and its backward
formulas (each transform's adjoint); a padded length records ConstantPadNdBackward0."""
import jax.numpy as jnp
import numpy as np

from ._registry import op


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


@op("ConstantPadNdBackward0", save=(), attrs=("pad",))
def _constant_pad(self, *, pad, value):
    widths = [(0, 0)] * self.ndim
    for i in range(len(pad) // 2):
        widths[self.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return jnp.pad(self, widths, constant_values=np.asarray(value, self.dtype))


@_constant_pad.derivative
def _(grad, pad):
    index = [slice(None)] * grad.ndim
    for i in range(len(pad) // 2):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        index[grad.ndim - 1 - i] = slice(lo, grad.shape[grad.ndim - 1 - i] - hi)
    return grad[tuple(index)]

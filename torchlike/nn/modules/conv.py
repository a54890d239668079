"""Conv1d/2d/3d and ConvTranspose1d/2d/3d (torch.nn's): weight from kaiming_uniform_(a=sqrt(5)), bias uniform in
+-1/sqrt(fan_in), as torch; ``padding_mode`` "zeros", "reflect", "replicate" or "circular"."""
from .. import _conv as C
from .._padding import pad as _pad
from ...ops.creation import empty
from ..parameter import Parameter
from .linear import _reset_kaiming_uniform
from .module import Module
from .utils import _ntuple, _reverse_repeat_tuple

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None, transposed=False, output_padding=0):
        super().__init__()
        n = self._nd
        parse = _ntuple(n)
        kernel_size, stride, dilation = parse(kernel_size), parse(stride), parse(dilation)
        padding = padding if isinstance(padding, str) else parse(padding)
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            valid = {"same", "valid"}  # torch's message shows this set
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in modes:
            raise ValueError(f"padding_mode must be one of {modes}, but got padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = parse(output_padding)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):  # F.pad's (left, right) pairs from the last dim, for the non-zero modes
            rev = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    rev[2 * i], rev[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        shape = ((in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups))
        self.weight = Parameter(empty(shape + kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Re-draw weight and bias from torch's default distributions."""
        _reset_kaiming_uniform(self.weight, self.bias)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            return fn(_pad(input, self._reversed_padding_repeated_twice, self.padding_mode), weight, bias,
                      self.stride, (0,) * self._nd, self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or (C_in, L); weight (C_out, C_in // groups, k)."""
    _nd, _fn = 1, staticmethod(C.conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in // groups, kH, kW).

    ``padding``: int, pair, "valid" or "same"; ``padding_mode``: "zeros", "reflect", "replicate" or "circular".
    """
    _nd, _fn = 2, staticmethod(C.conv2d)


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W)."""
    _nd, _fn = 3, staticmethod(C.conv3d)


class _ConvTranspose(_ConvNd):
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device, dtype, True, output_padding)

    def _output_padding(self, input, output_size):
        """torch's: the output_padding that gives ``output_size`` (or the module's own without one)."""
        if output_size is None:
            return self.output_padding
        n = self._nd
        output_size = list(output_size)
        if len(output_size) == input.ndim:
            output_size = output_size[-n:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have {n} or "
                             f"{input.ndim} elements (got {len(output_size)})")
        res = []
        for d in range(n):
            min_size = ((input.shape[input.ndim - n + d] - 1) * self.stride[d] - 2 * self.padding[d]
                        + self.dilation[d] * (self.kernel_size[d] - 1) + 1)
            if not min_size <= output_size[d] <= min_size + self.stride[d] - 1:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes range from "
                                 f"{min_size} to {min_size + self.stride[d] - 1} (for an input of "
                                 f"{list(input.shape[2:])})")
            res.append(output_size[d] - min_size)
        return tuple(res)

    def forward(self, input, output_size=None):
        op_ = self._output_padding(input, output_size)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding, op_, self.groups,
                              self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """Transposed 1-D convolution; weight (C_in, C_out // groups, k)."""
    _nd, _fn = 1, staticmethod(C.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """Transposed 2-D convolution; weight (C_in, C_out // groups, kH, kW)."""
    _nd, _fn = 2, staticmethod(C.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """Transposed 3-D convolution; weight (C_in, C_out // groups, kD, kH, kW)."""
    _nd, _fn = 3, staticmethod(C.conv_transpose3d)

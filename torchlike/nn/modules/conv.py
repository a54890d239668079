"""Conv2d (torch.nn.Conv2d): weight from kaiming_uniform_(a=sqrt(5)), bias uniform in +-1/sqrt(fan_in), as torch."""
from .._layers import conv2d, _pad
from .linear import _reset_kaiming_uniform, _weight_and_bias
from .module import Module

__all__ = ["Conv2d"]


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


class Conv2d(Module):
    """2-D convolution over (N, C_in, H, W) or (C_in, H, W); weight (C_out, C_in // groups, kH, kW).

    ``padding``: int, pair, "valid" or "same"; ``padding_mode``: "zeros", "reflect", "replicate" or "circular".
    """

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        kernel_size, stride, dilation = _pair(kernel_size), _pair(stride), _pair(dilation)
        padding = padding if isinstance(padding, str) else _pair(padding)
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
        self.transposed = False
        self.output_padding = (0, 0)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):  # F.pad's (left, right) pairs from the last dim, for the non-zero modes
            rev = [0, 0] * 2
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, (1, 0)):
                    total = d * (k - 1)
                    rev[2 * i], rev[2 * i + 1] = total // 2, total - total // 2
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding) for _ in range(2)]
        _weight_and_bias(self, (out_channels, in_channels // groups, *kernel_size), bias, device, dtype)

    def reset_parameters(self):
        """Re-draw weight and bias from torch's default distributions."""
        _reset_kaiming_uniform(self.weight, self.bias)

    def _conv_forward(self, input, weight, bias):
        if self.padding_mode != "zeros":
            return conv2d(_pad(input, self._reversed_padding_repeated_twice, self.padding_mode), weight, bias,
                          self.stride, (0, 0), self.dilation, self.groups)
        return conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)

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

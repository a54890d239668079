"""Pooling modules (torch.nn's): MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
LPPool1d/2d/3d, MaxUnpool1d/2d/3d, FractionalMaxPool2d/3d; stride defaults to the kernel size."""
from .. import _pooling as P, _unpool as U
from .module import Module
from .utils import _pair, _single, _triple

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d"]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling; ``return_indices=True`` also returns each maximum's index."""
    _fn = staticmethod(P.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling; ``return_indices=True`` also returns each maximum's flat index within its plane."""
    _fn = staticmethod(P.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling; ``return_indices=True`` also returns each maximum's flat index within its volume."""
    _fn = staticmethod(P.max_pool3d)


class AvgPool1d(Module):
    """1-D average pooling (``count_include_pad`` as torch)."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        one = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
        self.kernel_size = one(kernel_size)
        self.stride = one(stride if stride is not None else kernel_size)
        self.padding = one(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return P.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling (``count_include_pad``, ``divisor_override`` as torch)."""
    _fn = staticmethod(P.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling (``count_include_pad``, ``divisor_override`` as torch)."""
    _fn = staticmethod(P.avg_pool3d)


class _AdaptivePool(Module):
    __constants__ = ["output_size"]
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveMaxPool(_AdaptivePool):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptivePool):
    """Average pooling to a fixed output length."""
    _fn = staticmethod(P.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptivePool):
    """Average pooling to a fixed (oH, oW); None keeps the input's size."""
    _fn = staticmethod(P.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptivePool):
    """Average pooling to a fixed (oD, oH, oW)."""
    _fn = staticmethod(P.adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptiveMaxPool):
    """Max pooling to a fixed output length."""
    _fn = staticmethod(P.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPool):
    """Max pooling to a fixed (oH, oW)."""
    _fn = staticmethod(P.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPool):
    """Max pooling to a fixed (oD, oH, oW)."""
    _fn = staticmethod(P.adaptive_max_pool3d)


class _LPPool(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """Power-average pooling over 1-D windows."""
    _fn = staticmethod(P.lp_pool1d)


class LPPool2d(_LPPool):
    """Power-average pooling over 2-D windows."""
    _fn = staticmethod(P.lp_pool2d)


class LPPool3d(_LPPool):
    """Power-average pooling over 3-D windows."""
    _fn = staticmethod(P.lp_pool3d)


class _MaxUnpoolNd(Module):
    _fn = _tuple = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        parse = type(self)._tuple
        self.kernel_size = parse(kernel_size)
        self.stride = parse(stride if stride is not None else kernel_size)
        self.padding = parse(padding)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """The partial inverse of MaxPool1d: each value to its index, zeros elsewhere."""
    _fn, _tuple = staticmethod(U.max_unpool1d), staticmethod(_single)


class MaxUnpool2d(_MaxUnpoolNd):
    """The partial inverse of MaxPool2d: each value to its index, zeros elsewhere."""
    _fn, _tuple = staticmethod(U.max_unpool2d), staticmethod(_pair)


class MaxUnpool3d(_MaxUnpoolNd):
    """The partial inverse of MaxPool3d: each value to its index, zeros elsewhere."""
    _fn, _tuple = staticmethod(U.max_unpool3d), staticmethod(_triple)


class _FractionalMaxPoolNd(Module):
    _fn = _tuple = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        parse, name = type(self)._tuple, type(self).__name__
        if name == "FractionalMaxPool3d" and not all(k > 0 for k in parse(kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = parse(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = parse(output_size) if output_size is not None else None
        self.output_ratio = parse(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                              _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (windows at pseudo-random starts; ``_random_samples`` fixes them)."""
    _fn, _tuple = staticmethod(U.fractional_max_pool2d), staticmethod(_pair)


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (windows at pseudo-random starts; ``_random_samples`` fixes them)."""
    _fn, _tuple = staticmethod(U.fractional_max_pool3d), staticmethod(_triple)

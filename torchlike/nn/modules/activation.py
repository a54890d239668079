"""Activation modules (torch.nn's): ReLU, GELU, SiLU, ..., PReLU, RReLU, GLU, Softmin."""
import warnings

from .. import functional as F
from .. import init
from ..parameter import Parameter
from ...ops import creation as _creation
from .module import Module

__all__ = ["ReLU", "GELU", "SiLU", "LeakyReLU", "Softplus", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "ReLU6",
           "PReLU", "ELU", "SELU", "CELU", "Mish", "Hardtanh", "Hardswish", "Hardsigmoid", "Softmin", "Softsign",
           "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "GLU", "LogSigmoid", "RReLU", "Softmax2d"]


class ReLU(Module):
    """max(x, 0), optionally in place."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` uses the tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class SiLU(Module):
    """x * sigmoid(x), optionally in place."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x if x >= 0 else negative_slope * x."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta (linear above ``threshold``)."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid."""

    def forward(self, input):
        return F.sigmoid(input)


class _SoftmaxAlongDim(Module):
    """Base of Softmax and LogSoftmax: ``_fn`` along ``dim`` (None: torch's legacy choice, with its warning)."""

    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax(_SoftmaxAlongDim):
    """Softmax along ``dim`` (None: torch's legacy choice, with its warning)."""

    _fn = staticmethod(F.softmax)


class LogSoftmax(_SoftmaxAlongDim):
    """Log-softmax along ``dim`` (None: torch's legacy choice, with its warning)."""

    _fn = staticmethod(F.log_softmax)


class Softmin(_SoftmaxAlongDim):
    """Softmin along ``dim`` (None: torch's legacy choice, with its warning)."""

    _fn = staticmethod(F.softmin)


class _Inplace(Module):
    """An activation with only an ``inplace`` flag: ``_fn(input, inplace)``."""

    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class SELU(_Inplace):
    """scale * elu(x, alpha) with the self-normalising constants."""

    _fn = staticmethod(F.selu)


class Mish(_Inplace):
    """x * tanh(softplus(x))."""

    _fn = staticmethod(F.mish)


class Hardswish(_Inplace):
    """x * relu6(x + 3) / 6."""

    _fn = staticmethod(F.hardswish)

    def extra_repr(self):
        return ""


class Hardsigmoid(_Inplace):
    """relu6(x + 3) / 6."""

    _fn = staticmethod(F.hardsigmoid)

    def extra_repr(self):
        return ""


class Hardtanh(Module):
    """clamp(x, min_val, max_val) with zero gradient at and beyond the bounds."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ELU(Module):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    __constants__ = ["alpha", "inplace"]
    _fn = staticmethod(F.elu)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    _fn = staticmethod(F.celu)


class _Shrink(Module):
    __constants__ = ["lambd"]

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, else 0."""

    _fn = staticmethod(F.softshrink)


class Hardshrink(_Shrink):
    """x where |x| > lambd, else 0."""

    _fn = staticmethod(F.hardshrink)


class Threshold(Module):
    """value where x <= threshold, else x."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class GLU(Module):
    """First half of ``dim`` times the sigmoid of the second half."""

    __constants__ = ["dim"]

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class _Stateless(Module):
    def forward(self, input):
        return type(self)._fn(input)


class Softsign(_Stateless):
    """x / (|x| + 1)."""

    _fn = staticmethod(F.softsign)


class Tanhshrink(_Stateless):
    """x - tanh(x)."""

    _fn = staticmethod(F.tanhshrink)


class LogSigmoid(_Stateless):
    """log(sigmoid(x))."""

    _fn = staticmethod(F.logsigmoid)


class PReLU(Module):
    """x where x > 0, else a * x with a learnable ``weight`` (one per channel, or shared)."""

    __constants__ = ["num_parameters"]

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Leaky relu with a random negative slope in [lower, upper] when training, their mean in eval."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    """Softmax over the channels at each location of a (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=5)

"""Activation modules: ReLU, GELU, SiLU, LeakyReLU, Softplus, Tanh, Sigmoid, Softmax, LogSoftmax."""
from .. import functional as F
from .module import Module

__all__ = ["ReLU", "GELU", "SiLU", "LeakyReLU", "Softplus", "Tanh", "Sigmoid", "Softmax", "LogSoftmax"]


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

"""torchlike.nn.modules: the Module classes (re-exported by torchlike.nn)."""
from .module import Module  # noqa: F401
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .linear import Identity, Linear, Bilinear  # noqa: F401
from .activation import ReLU, GELU, SiLU, LeakyReLU, Softplus, Tanh, Sigmoid, Softmax, LogSoftmax  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .loss import L1Loss, MSELoss, NLLLoss, CrossEntropyLoss, BCEWithLogitsLoss  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .pooling import MaxPool2d, AvgPool2d  # noqa: F401
from .normalization import LayerNorm  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .attention import MultiheadAttention  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity",
           "Linear", "Bilinear", "ReLU", "GELU", "SiLU", "LeakyReLU", "Softplus", "Tanh", "Sigmoid", "Softmax",
           "LogSoftmax", "Dropout", "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCEWithLogitsLoss",
           "Conv2d", "MaxPool2d", "AvgPool2d", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding",
           "MultiheadAttention", "Flatten", "Unflatten"]
from . import _spatial; from ._spatial import *; __all__ += [n for n in _spatial.__all__ if n not in __all__]  # noqa: E702,F401,F403,E402

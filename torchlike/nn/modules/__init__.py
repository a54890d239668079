"""torchlike.nn.modules: the Module classes (re-exported by torchlike.nn)."""
from .module import Module  # noqa: F401
from .container import Container, Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict  # noqa: F401
from .linear import Identity, Linear, Bilinear  # noqa: F401
from .activation import ReLU, GELU, SiLU, LeakyReLU, Softplus, Tanh, Sigmoid, Softmax, LogSoftmax  # noqa: F401
from .activation import *  # noqa: F401,F403  (activation and loss: every name of their __all__)
from .loss import *  # noqa: F401,F403
from .dropout import Dropout  # noqa: F401
from .loss import L1Loss, MSELoss, NLLLoss, CrossEntropyLoss, BCEWithLogitsLoss  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .pooling import MaxPool2d, AvgPool2d  # noqa: F401
from .normalization import LayerNorm  # noqa: F401
from .batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from .sparse import Embedding  # noqa: F401
from .attention import MultiheadAttention  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .transformer import (Transformer, TransformerEncoder, TransformerDecoder,  # noqa: F401
                          TransformerEncoderLayer, TransformerDecoderLayer)
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell  # noqa: F401

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity",
           "Linear", "Bilinear", "ReLU", "GELU", "SiLU", "LeakyReLU", "Softplus", "Tanh", "Sigmoid", "Softmax",
           "LogSoftmax", "Dropout", "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCEWithLogitsLoss",
           "Conv2d", "MaxPool2d", "AvgPool2d", "LayerNorm", "BatchNorm1d", "BatchNorm2d", "Embedding",
           "MultiheadAttention", "Flatten", "Unflatten",
           "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
           "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
           "TransformerDecoderLayer", "Container"]
__all__ += [n for n in activation.__all__ + loss.__all__ if n not in __all__]  # noqa: F405
from . import _spatial  # noqa: E402
from ._spatial import *  # noqa: E402,F401,F403  (issue 14's spatial layers: padding, pooling, conv, ...)
__all__ += [n for n in _spatial.__all__ if n not in __all__]
from . import lazy  # noqa: E402  (LazyModuleMixin stays in nn.modules.lazy, as torch's)
from .lazy import (LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,  # noqa: E402,F401
                   LazyConvTranspose2d, LazyConvTranspose3d, LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d,
                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
from .sync_batchnorm import SyncBatchNorm  # noqa: E402,F401
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402,F401
__all__ += lazy._LAYERS + ["SyncBatchNorm", "AdaptiveLogSoftmaxWithLoss"]

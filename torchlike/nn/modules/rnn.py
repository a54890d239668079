"""RNN, LSTM, GRU and their cells (torch.nn's): torch's parameter names, shapes and initialisation (uniform in
+-1/sqrt(hidden_size)), so state dicts load both ways.

Each layer and direction runs as one op whose time loop is a ``jax.lax.scan`` (nn/_rnn.py; node
MkldnnRnnLayerBackward0); the layers are joined as torch joins them: directions by ``cat`` (CatBackward0), dropout
between layers, final states by ``stack`` (StackBackward0), ``batch_first`` by a transpose, unbatched input by
unsqueeze / squeeze. The cells are torch's composites of linear, sigmoid / tanh, mul and add (the nodes torch
records on the CPU).
"""
import math
import numbers
import warnings

import numpy as np

from ...ops._registry import autocast_args
from ...ops.creation import empty, tensor, zeros
from ...ops.shape import cat, stack
from .. import functional as F, init
from .._rnn import _lstm_layer, _rnn_layer
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, _packed_index
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor, permutation, dim=1):
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """The parameters and the layer loop shared by RNN, LSTM and GRU."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout) if isinstance(dropout, numbers.Number) else dropout
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=2)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = {"weight_ih": (gate_size, layer_input_size), "weight_hh": (gate_size, real_hidden_size)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for base, shape in shapes.items():
                    names.append(f"{base}_l{layer}{suffix}")
                    setattr(self, names[-1], Parameter(empty(shape, **kw)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in weights] for weights in self._all_weights]

    def flatten_parameters(self):
        """No-op (cuDNN's weight packing has no counterpart here)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input, batch_sizes):
        if input.dtype != self._flat_weights[0].dtype:
            w, x = (f"torch.{str(t.dtype).rpartition('.')[2]}" for t in (self._flat_weights[0], input))
            raise ValueError(f"RNN input dtype ({x}) does not match weight dtype ({w}). Convert input: "
                             f"input.to({w}), or convert model: model.to({x})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes, size=None):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = size or (self.proj_size if self.proj_size > 0 else self.hidden_size)
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        state.setdefault("proj_size", 0)
        super().__setstate__(state)

    def _hidden_zeros(self, input, batch, size):
        num_directions = 2 if self.bidirectional else 1
        return zeros(self.num_layers * num_directions, batch, size, dtype=input.dtype, device=input.device)

    def _begin(self, input):
        """Common start of forward: (input or packed data, batch_sizes, sorted_indices, unsorted_indices,
        is_batched); unbatched input gets its batch dim."""
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            return data, batch_sizes, sorted_indices, unsorted_indices, True
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, None, None, None, is_batched

    def _layers(self, input, batch_sizes, hx, cx=None):
        """Run all layers: (output, h_n, c_n or None); ``input`` is the padded (batch_first as given) or the
        packed data."""
        lengths = None
        if batch_sizes is not None:  # packed: run padded and time-major, with the lengths; pack the output again
            sizes = np.asarray(batch_sizes.numpy(), np.int64)
            index, valid = _packed_index(sizes, len(sizes), int(sizes[0]))
            x = input[tensor(index)]
            lengths = tensor(valid.sum(0))
        else:
            x = input.transpose(0, 1) if self.batch_first else input
        weights = self._flat_weights
        if self.mode != "GRU":  # torch's CPU LSTM (mkldnn_rnn_layer) and RNN (its linears) run in autocast's lower
            # dtype, input, state and weights, as any lower-precision op ("mm"); its GRU's result stays float32
            x, hx, cx, *weights = autocast_args("mm", x, hx, cx, *weights)
        per = len(weights) // len(self._all_weights)
        directions = 2 if self.bidirectional else 1
        hs, cs = hx.unbind(0), (cx.unbind(0) if cx is not None else None)
        h_out, c_out = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                k = layer * directions + d
                w = weights[k * per:(k + 1) * per]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                if cs is not None:
                    w_hr = w[-1] if self.proj_size > 0 else None
                    out, h, c = _lstm_layer(x, w_ih, w_hh, b_ih, b_hh, hs[k], cs[k], w_hr, lengths, reverse=d == 1)
                    c_out.append(c)
                else:
                    out, h = _rnn_layer(x, w_ih, w_hh, b_ih, b_hh, hs[k], lengths, mode=self.mode, reverse=d == 1)
                outs.append(out)
                h_out.append(h)
            x = outs[0] if directions == 1 else cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        if batch_sizes is not None:
            t, b = np.nonzero(valid)
            x = x.reshape(-1, x.shape[-1])[tensor(t * valid.shape[1] + b)]
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, stack(h_out), (stack(c_out) if cs is not None else None)

    def _finish(self, orig_input, output, hidden, batch_sizes, sorted_indices, unsorted_indices, is_batched):
        if isinstance(orig_input, PackedSequence):
            return PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices), \
                self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple) else hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)

    def forward(self, input, hx=None):
        """(output, h_n): output (T, N, D * H) (``batch_first``: (N, T, D * H)) or a PackedSequence; h_n
        (num_layers * D, N, H)."""
        orig_input = input
        input, batch_sizes, sorted_indices, unsorted_indices, is_batched = self._begin(input)
        if hx is not None:
            if batch_sizes is None:
                if is_batched and hx.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
                if not is_batched:
                    if hx.dim() != 2:
                        raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                                           "tensor")
                    hx = hx.unsqueeze(1)
            hx = self.permute_hidden(hx, sorted_indices)
        else:
            batch = int(batch_sizes[0]) if batch_sizes is not None else input.size(0 if self.batch_first else 1)
            hx = self._hidden_zeros(input, batch, self.hidden_size)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden, _ = self._layers(input, batch_sizes, hx)
        return self._finish(orig_input, output, hidden, batch_sizes, sorted_indices, unsorted_indices, is_batched)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh (or relu) of x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory (gates i, f, g, o); with ``proj_size`` the hidden state is projected by weight_hr."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        return self.get_expected_hidden_size(input, batch_sizes, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        """(output, (h_n, c_n))."""
        orig_input = input
        input, batch_sizes, sorted_indices, unsorted_indices, is_batched = self._begin(input)
        if hx is None:
            batch = int(batch_sizes[0]) if batch_sizes is not None else input.size(0 if self.batch_first else 1)
            hx = (self._hidden_zeros(input, batch, self.proj_size or self.hidden_size),
                  self._hidden_zeros(input, batch, self.hidden_size))
        elif batch_sizes is None:
            dims = 3 if is_batched else 2
            if hx[0].dim() != dims or hx[1].dim() != dims:
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {dims}-D but got "
                                   f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not is_batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, batch_sizes)
        hx = self.permute_hidden(hx, sorted_indices)
        output, h, c = self._layers(input, batch_sizes, hx[0], hx[1])
        return self._finish(orig_input, output, (h, c), batch_sizes, sorted_indices, unsorted_indices, is_batched)


class GRU(RNNBase):
    """Gated recurrent unit (gates r, z, n)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """weight_ih (chunks * hidden, input), weight_hh (chunks * hidden, hidden) and the two biases."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    reset_parameters = RNNBase.reset_parameters

    def _gates(self, input, hx):
        return F.linear(input, self.weight_ih, self.bias_ih) + F.linear(hx, self.weight_hh, self.bias_hh)

    def _begin(self, input, hx, name):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        for i, h in enumerate(hx if isinstance(hx, tuple) else (hx,)):
            if h is not None and h.dim() not in (1, 2):
                what = f"hx[{i}]" if isinstance(hx, tuple) else "hidden"
                raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            hx = tuple(h.unsqueeze(0) for h in hx) if isinstance(hx, tuple) else _bind(hx, lambda h: h.unsqueeze(0))
        return input, hx, is_batched

    def _zeros(self, input):
        return zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class RNNCell(RNNCellBase):
    """One Elman step: tanh (or relu) of linear(input) + linear(hx)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._begin(input, hx, "RNNCell")
        if hx is None:
            hx = self._zeros(input)
        if self.nonlinearity == "tanh":
            ret = self._gates(input, hx).tanh()
        elif self.nonlinearity == "relu":
            ret = self._gates(input, hx).relu()
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: (h_1, c_1)."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._begin(input, hx if hx is None else tuple(hx), "LSTMCell")
        if hx is None:
            z = self._zeros(input)
            hx = (z, z)
        i, f, g, o = self._gates(input, hx[0]).chunk(4, 1)
        cy = f.sigmoid() * hx[1] + i.sigmoid() * g.tanh()
        hy = o.sigmoid() * cy.tanh()
        return (hy, cy) if is_batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._begin(input, hx, "GRUCell")
        if hx is None:
            hx = self._zeros(input)
        xr, xz, xn = F.linear(input, self.weight_ih, self.bias_ih).chunk(3, 1)
        hr, hz, hn = F.linear(hx, self.weight_hh, self.bias_hh).chunk(3, 1)
        r = (xr + hr).sigmoid()
        z = (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        ret = n + z * (hx - n)
        return ret if is_batched else ret.squeeze(0)


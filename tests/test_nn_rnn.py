"""nn.RNN / LSTM / GRU, the cells and nn.utils.rnn against torch 2.13: the torch module's state_dict is copied into
the torchlike module through NumPy, then outputs, final states, the gradients of the input, the initial states and
every parameter (and, for one configuration per mode, second-order gradients) are compared, with the nodes torch
records where the graphs agree (MkldnnRnnLayerBackward0 for a float32 LSTM layer, CatBackward0 joining
directions, StackBackward0 for the final states, TransposeBackward0 for batch_first, SqueezeBackward1 unbatched).
Shapes are few and shared: T=4 steps, batch 3, input 3, hidden 4.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, assert_same_error

RNG = np.random.default_rng(11)
T, B, I, H = 4, 3, 3, 4
X = RNG.standard_normal((T, B, I))
TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-5, atol=2e-6)}


def lib_of(mod):
    return torch if isinstance(mod, torch.nn.Module) else tl


def modules(cls, *args, dtype="float64", **kwargs):
    """The torch module (seeded) and a torchlike one with its state_dict."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = getattr(torch.nn, cls)(*args, **kwargs).to(getattr(torch, dtype))
        ours = getattr(tl.nn, cls)(*args, **kwargs).to(getattr(tl, dtype))
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def module_of(lib, cls, *args, **kwargs):
    """The seeded float64 module of ``lib`` (torch's weights in both): for test_higher_order's cases."""
    return modules(cls, *args, **kwargs)[lib is tl]


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out.data if hasattr(out, "batch_sizes") else out]


def run(mod, arrays, call, dtype="float64"):
    """Outputs, gradients of every input and parameter, for the sum of out * cotangent + out ** 3."""
    lib = lib_of(mod)
    xs = [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    outs = _flat(call(lib, mod, *xs))
    loss = sum((o * lib.tensor(np.cos(np.arange(o.numel())).reshape(tuple(o.shape)).astype(dtype))).sum()
               + (o ** 3).sum() for o in outs)
    grads = lib.autograd.grad(loss, xs + list(mod.parameters()), allow_unused=True)
    return outs, grads


def compare(cls, args, kwargs, arrays, call, dtype="float64", names=None):
    theirs, ours = modules(cls, *args, dtype=dtype, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    (o1, g1), (o2, g2) = run(ours, arrays, call, dtype), run(theirs, arrays, call, dtype)
    assert_same(o1, o2, **TOL[dtype])
    assert_same(g1, g2, **TOL[dtype])
    if names is not None:
        assert [o.grad_fn.name() for o in o1] == names


def plain(lib, mod, x, *state):
    if not state:
        return mod(x)
    lstm = isinstance(mod, (torch.nn.LSTM, tl.nn.LSTM, torch.nn.LSTMCell, tl.nn.LSTMCell))
    return mod(x, tuple(state) if lstm else state[0])


def h0(layers, size=H, batch=B):
    return RNG.standard_normal((layers, batch, size))


MODULE_CASES = {  # name: (class, args, kwargs, arrays, node names of output, h_n[, c_n])
    "rnn_tanh": ("RNN", (I, H), {}, [X], ["MkldnnRnnLayerBackward0", "StackBackward0"]),
    "rnn_relu_2layer_bidir_h0": ("RNN", (I, H, 2, "relu"), {"bidirectional": True}, [X, h0(4)],
                                 ["CatBackward0", "StackBackward0"]),
    "rnn_nobias_batch_first": ("RNN", (I, H), {"bias": False, "batch_first": True}, [X],
                               ["TransposeBackward0", "StackBackward0"]),
    "lstm": ("LSTM", (I, H), {}, [X], ["MkldnnRnnLayerBackward0", "StackBackward0", "StackBackward0"]),
    "lstm_2layer_bidir_h0c0": ("LSTM", (I, H), {"num_layers": 2, "bidirectional": True}, [X, h0(4), h0(4)],
                               ["CatBackward0", "StackBackward0", "StackBackward0"]),
    "lstm_proj_batch_first": ("LSTM", (I, H), {"proj_size": 2, "batch_first": True, "num_layers": 2},
                              [X.transpose(1, 0, 2), h0(2, 2), h0(2)], None),
    "lstm_proj_bidir": ("LSTM", (I, H), {"proj_size": 3, "bidirectional": True}, [X], None),
    "gru": ("GRU", (I, H), {}, [X], ["MkldnnRnnLayerBackward0", "StackBackward0"]),
    "gru_3layer_bidir_nobias_h0": ("GRU", (I, H, 3), {"bias": False, "bidirectional": True}, [X, h0(6)], None),
}


@pytest.mark.parametrize("name", MODULE_CASES)
def test_module_against_torch(name):
    cls, args, kwargs, arrays, names = MODULE_CASES[name]
    compare(cls, args, kwargs, arrays, plain, names=names)


def test_float32_lstm_records_torchs_one_node_per_layer():
    theirs, ours = modules("LSTM", I, H, num_layers=2, dtype="float32")
    compare("LSTM", (I, H), {"num_layers": 2}, [X], plain, "float32",
            ["MkldnnRnnLayerBackward0", "StackBackward0", "StackBackward0"])
    node = ours(tl.tensor(X.astype("float32"), requires_grad=True))[0].grad_fn
    expected = theirs(torch.tensor(X.astype("float32"), requires_grad=True))[0].grad_fn
    # torch's edges: input, weight_ih, weight_hh, bias_ih, bias_hh, hx, cx (then weight_hr, which torch's oneDNN
    # layer does not take)
    names = [[n.name() if n else None for n, _ in e.next_functions[:7]] for e in (node, expected)]
    assert names[0] == names[1] == ["MkldnnRnnLayerBackward0"] + ["torch::autograd::AccumulateGrad"] * 4 + [None] * 2


@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
def test_unbatched(cls):
    state = [RNG.standard_normal((2, H))] * (2 if cls == "LSTM" else 1)
    compare(cls, (I, H), {"num_layers": 2}, [X[:, 0]], plain, names=None)
    compare(cls, (I, H), {"num_layers": 2, "batch_first": True}, [X[:, 0]] + state, plain,
            names=["SqueezeBackward1"] * (3 if cls == "LSTM" else 2))


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_second_order(cls):
    theirs, ours = modules(cls, I, H, bidirectional=True)
    res = []
    for mod in (ours, theirs):
        lib = lib_of(mod)
        x = lib.tensor(X, requires_grad=True)
        out = _flat(mod(x))
        loss = sum((o.sin() * o).sum() for o in out)
        params = list(mod.parameters())
        g = lib.autograd.grad(loss, [x] + params, create_graph=True)
        gg = lib.autograd.grad(sum((a * a).sum() for a in g), [x] + params)
        res.append((g, gg))
    assert_same(res[0][0], res[1][0], **TOL["float64"])
    assert_same(res[0][1], res[1][1], rtol=1e-9, atol=1e-10)


def packed_call(lengths, enforce_sorted=True, batch_first=False, total_length=None):
    def call(lib, mod, x, *state):
        if batch_first:
            x = x.transpose(0, 1)
        p = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
        out, hidden = plain(lib, mod, p, *state)
        padded, lens = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first, padding_value=0.5,
                                                              total_length=total_length)
        assert lens.tolist() == list(lengths)
        return out.data, padded, hidden
    return call


@pytest.mark.parametrize("cls,kwargs,lengths,sort", [
    ("LSTM", {"bidirectional": True, "num_layers": 2}, [4, 2, 1], True),
    ("GRU", {"bidirectional": True}, [2, 4, 3], False),
    ("RNN", {"batch_first": True}, [3, 1, 4], False),
    ("LSTM", {"proj_size": 2, "batch_first": True}, [4, 4, 2], True),
])
def test_packed_input(cls, kwargs, lengths, sort):
    state = [h0(kwargs.get("bidirectional", False) + 1 + (kwargs.get("num_layers", 1) - 1) * 2,
                kwargs.get("proj_size") or H)]
    if cls == "LSTM":
        state.append(h0(len(state[0])))
    call = packed_call(lengths, sort, kwargs.get("batch_first", False), total_length=5)
    compare(cls, (I, H), kwargs, [X] + state, call)
    compare(cls, (I, H), kwargs, [X], call)


def test_packed_output_is_packedsequence():
    _, ours = modules("GRU", I, H)
    p = tl.nn.utils.rnn.pack_padded_sequence(tl.tensor(X), [3, 2, 1])
    out, h = ours(p)
    assert isinstance(out, tl.nn.utils.rnn.PackedSequence) and out.batch_sizes.tolist() == [3, 2, 1]
    assert out.sorted_indices is None and h.shape == (1, B, H)


def test_dropout_between_layers():
    """p=1 zeroes the second layer's input, deterministically; in eval mode dropout is off."""
    for train in (True, False):
        theirs, ours = modules("LSTM", I, H, num_layers=2, dropout=1.0)
        theirs.train(train), ours.train(train)
        a, b = ours(tl.tensor(X)), theirs(torch.tensor(X))
        assert_same(_flat(a), _flat(b), **TOL["float64"])


CELL_CASES = {  # name: (class, args, arrays, node names)
    "rnncell": ("RNNCell", (I, H), [X[0], h0(1)[0]], ["TanhBackward0"]),
    "rnncell_relu_nobias": ("RNNCell", (I, H, False, "relu"), [X[0]], ["ReluBackward0"]),
    "lstmcell": ("LSTMCell", (I, H), [X[0], h0(1)[0], h0(1)[0]], ["MulBackward0", "AddBackward0"]),
    "lstmcell_zero_state": ("LSTMCell", (I, H), [X[0]], ["MulBackward0", "AddBackward0"]),
    "grucell": ("GRUCell", (I, H), [X[0], h0(1)[0]], ["AddBackward0"]),
    "grucell_unbatched": ("GRUCell", (I, H), [X[0, 0], h0(1)[0, 0]], ["SqueezeBackward1"]),
    "lstmcell_unbatched": ("LSTMCell", (I, H), [X[0, 0]], ["SqueezeBackward1"] * 2),
}


@pytest.mark.parametrize("name", CELL_CASES)
def test_cells(name):
    cls, args, arrays, names = CELL_CASES[name]
    compare(cls, args, {}, arrays, plain, names=names)


def test_parameters_init_and_repr():
    torch.manual_seed(0)
    for cls, kw in (("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)), ("GRU", {"bias": False}),
                    ("RNN", {"nonlinearity": "relu", "batch_first": True, "dropout": 0.5, "num_layers": 2})):
        theirs, ours = modules(cls, I, H, **kw)
        assert repr(ours) == repr(theirs)
        assert ours._flat_weights_names == theirs._flat_weights_names
        assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
        fresh = getattr(tl.nn, cls)(I, H, **kw)
        for p in fresh.parameters():
            assert p.requires_grad and float(p.abs().max()) <= 0.5 and p.dtype == tl.float32
    for cls in ("RNNCell", "LSTMCell", "GRUCell"):
        theirs, ours = modules(cls, I, H, bias=False)
        assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(tl.nn.RNNCell(I, H, nonlinearity="relu")) == repr(torch.nn.RNNCell(I, H, nonlinearity="relu"))


def test_state_dict_loads_into_torch():
    theirs, ours = modules("LSTM", I, H, bidirectional=True)
    ours2 = tl.nn.LSTM(I, H, bidirectional=True).double()
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours2.state_dict().items()})
    assert_same(ours2(tl.tensor(X))[0], theirs(torch.tensor(X))[0], **TOL["float64"])


ERRORS = {
    "input_4d": lambda m: m.nn.LSTM(I, H)(m.zeros(1, 2, 3, I)),
    "input_size": lambda m: m.nn.GRU(I, H)(m.zeros(T, B, I + 1)),
    "hidden_size": lambda m: m.nn.GRU(I, H)(m.zeros(T, B, I), m.zeros(1, B, H + 1)),
    "hidden_dims": lambda m: m.nn.RNN(I, H)(m.zeros(T, B, I), m.zeros(B, H)),
    "unbatched_hidden_dims": lambda m: m.nn.RNN(I, H)(m.zeros(T, I), m.zeros(1, B, H)),
    "lstm_hx_dims": lambda m: m.nn.LSTM(I, H)(m.zeros(T, B, I), (m.zeros(B, H), m.zeros(B, H))),
    "lstm_cell_size": lambda m: m.nn.LSTM(I, H)(m.zeros(T, B, I), (m.zeros(1, B, H), m.zeros(1, B, H + 1))),
    "dtype": lambda m: m.nn.LSTM(I, H).float()(m.zeros(T, B, I, dtype=m.float64)),
    "proj_size_gru": lambda m: m.nn.GRU(I, H, proj_size=2),
    "proj_too_big": lambda m: m.nn.LSTM(I, H, proj_size=H),
    "nonlinearity": lambda m: m.nn.RNN(I, H, nonlinearity="gelu"),
    "dropout": lambda m: m.nn.RNN(I, H, dropout=2),
    "hidden_zero": lambda m: m.nn.RNN(I, 0),
    "bias_type": lambda m: m.nn.RNN(I, H, bias=1),
    "cell_input_3d": lambda m: m.nn.LSTMCell(I, H)(m.zeros(1, 2, I)),
    "cell_hidden_3d": lambda m: m.nn.GRUCell(I, H)(m.zeros(2, I), m.zeros(1, 2, H)),
    "lstmcell_hx_3d": lambda m: m.nn.LSTMCell(I, H)(m.zeros(2, I), (m.zeros(2, H), m.zeros(1, 2, H))),
    "pack_unsorted": lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(T, B, I), [1, 2, 3]),
    "pack_zero_length": lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(T, B, I), [3, 2, 0]),
    "pack_lengths_count": lambda m: m.nn.utils.rnn.pack_padded_sequence(m.zeros(T, B, I), [3, 2]),
    "pad_total_length": lambda m: m.nn.utils.rnn.pad_packed_sequence(
        m.nn.utils.rnn.pack_padded_sequence(m.zeros(T, B, I), [4, 2, 1]), total_length=3),
    "pad_sequence_shapes": lambda m: m.nn.utils.rnn.pad_sequence([m.zeros(2, 3), m.zeros(2, 4)]),
    "pad_sequence_side": lambda m: m.nn.utils.rnn.pad_sequence([m.zeros(2, 3)], padding_side="middle"),
    "pad_sequence_empty": lambda m: m.nn.utils.rnn.pad_sequence([]),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors(name):
    assert_same_error(ERRORS[name])


SEQS = [RNG.standard_normal((3, 2)), RNG.standard_normal((1, 2)), RNG.standard_normal((4, 2))]


@pytest.mark.parametrize("batch_first,side,value", [(False, "right", 0.0), (True, "left", -1.5), (True, "right", 2)])
def test_pad_sequence(batch_first, side, value):
    res = []
    for lib in (tl, torch):
        seqs = [lib.tensor(s, requires_grad=True) for s in SEQS]
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=value, padding_side=side)
        g = lib.autograd.grad((out * out.detach().cos()).sum(), seqs)
        res.append((out, g, out.grad_fn.name()))
    assert_same(res[0][0], res[1][0]) and assert_same(res[0][1], res[1][1])
    assert res[0][2] == res[1][2] == "torch::autograd::CopySlices"
    ints = [np.arange(3), np.arange(2)]
    assert_same(tl.nn.utils.rnn.pad_sequence([tl.tensor(a) for a in ints], padding_value=1.5),
                torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in ints], padding_value=1.5))


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_roundtrip(enforce_sorted):
    seqs = SEQS if not enforce_sorted else sorted(SEQS, key=len, reverse=True)
    res = []
    for lib in (tl, torch):
        R = lib.nn.utils.rnn
        xs = [lib.tensor(s, requires_grad=True) for s in seqs]
        p = R.pack_sequence(xs, enforce_sorted=enforce_sorted)
        parts = R.unpack_sequence(p)
        padded, lengths = R.pad_packed_sequence(p, batch_first=True)
        unpadded = R.unpad_sequence(padded, lengths, batch_first=True)
        g = lib.autograd.grad((p.data * p.data).sum() + sum((u ** 3).sum() for u in unpadded), xs)
        res.append(([p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices], parts, [padded, lengths], g,
                    p.data.grad_fn.name()))
    for a, b in zip(res[0][:4], res[1][:4]):
        assert_same(a, b)
    assert res[0][4] == res[1][4] == "PackPaddedSequenceBackward0"


def test_packed_sequence_methods():
    R = tl.nn.utils.rnn
    p = R.pack_sequence([tl.tensor(s) for s in SEQS], enforce_sorted=False)
    assert isinstance(p, tuple) and p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    q = p.float()
    assert q.data.dtype == tl.float32 and q.batch_sizes is p.batch_sizes and p.to(tl.float64) is p
    assert not p.is_cuda and not p.is_pinned()
    assert R.invert_permutation(tl.tensor([2, 0, 1])).tolist() == [1, 2, 0] and R.invert_permutation(None) is None
    assert R.PackedSequence((p.data, p.batch_sizes)).batch_sizes is p.batch_sizes


# ----- Transformer ------------------------------------------------------------------------------------------------
E, NH, FF = 6, 2, 8
SRC, TGT = RNG.standard_normal((5, 3, E)), RNG.standard_normal((4, 3, E))
KPM = np.zeros((3, 5), bool)
KPM[1, 3:] = True


def _mask(lib, kind, n):
    if kind == "causal":
        return lib.nn.Transformer.generate_square_subsequent_mask(n, dtype=lib.float64)
    if kind == "bool":
        return lib.tensor(np.triu(np.ones((n, n), bool), 1))
    return None


def _bf(a, batch_first):
    return a.transpose(1, 0, 2) if batch_first else a


def encoder_call(mask, causal, padding, batch_first):
    def call(lib, mod, src):
        kw = {"is_causal": causal} if causal is not None else {}
        return mod(src, _mask(lib, mask, 5), lib.tensor(KPM) if padding else None, **kw)
    return call


TRANSFORMER_CASES = {  # name: (class, args, kwargs, call, arrays)
    "encoder_layer_post_norm": ("TransformerEncoderLayer", (E, NH, FF, 0.0), {},
                                encoder_call("causal", True, False, False), [SRC]),
    "encoder_layer_pre_norm_gelu_bool_masks": ("TransformerEncoderLayer", (E, NH, FF, 0.0),
                                               {"norm_first": True, "activation": "gelu", "batch_first": True},
                                               encoder_call("bool", None, True, True), [_bf(SRC, True)]),
    "encoder_layer_callable_activation_nobias": ("TransformerEncoderLayer", (E, NH, FF, 0.0),
                                                 {"activation": torch.tanh, "bias": False},
                                                 encoder_call(None, None, True, False), [SRC]),
    "encoder_layer_unbatched": ("TransformerEncoderLayer", (E, NH, FF, 0.0), {},
                                lambda lib, mod, src: mod(src), [SRC[:, 0]]),
    "decoder_layer": ("TransformerDecoderLayer", (E, NH, FF, 0.0), {"norm_first": True},
                      lambda lib, mod, tgt, mem: mod(tgt, mem, _mask(lib, "causal", 4), None, None,
                                                     lib.tensor(KPM), tgt_is_causal=True), [TGT, SRC]),
    "transformer": ("Transformer", (E, NH, 2, 2, FF, 0.0), {"batch_first": True},
                    lambda lib, mod, src, tgt: mod(src, tgt, tgt_mask=_mask(lib, "causal", 4),
                                                   src_key_padding_mask=lib.tensor(KPM),
                                                   memory_key_padding_mask=lib.tensor(KPM)),
                    [_bf(SRC, True), _bf(TGT, True)]),
}


@pytest.mark.parametrize("name", TRANSFORMER_CASES)
def test_transformer_against_torch(name):
    cls, args, kwargs, call, arrays = TRANSFORMER_CASES[name]
    if callable(kwargs.get("activation")):  # the same function, each library's own
        compare_pair = modules(cls, *args, **{**kwargs, "activation": torch.tanh})[0], \
            modules(cls, *args, **{**kwargs, "activation": tl.tanh})[1]
        (o1, g1), (o2, g2) = run(compare_pair[1], arrays, call), run(compare_pair[0], arrays, call)
    else:
        (o1, g1), (o2, g2) = [run(m, arrays, call) for m in modules(cls, *args, **kwargs)[::-1]]
    assert_same(o1, o2, **TOL["float64"])
    assert_same(g1, g2, rtol=1e-9, atol=1e-11)
    assert [o.grad_fn.name() for o in o1] == [o.grad_fn.name() for o in o2]


def test_transformer_encoder_eval_fast_path_values():
    """torch's eval-mode fast path (no grad, nested tensors for the padding mask) gives the composite's values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(E, NH, FF, 0.0, batch_first=True)
        theirs = torch.nn.TransformerEncoder(layer, 2, torch.nn.LayerNorm(E)).double().eval()
        ours = tl.nn.TransformerEncoder(tl.nn.TransformerEncoderLayer(E, NH, FF, 0.0, batch_first=True), 2,
                                        tl.nn.LayerNorm(E)).double().eval()
    ours.load_state_dict({k: tl.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    assert ours.use_nested_tensor == theirs.use_nested_tensor
    with torch.no_grad(), tl.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = theirs(torch.tensor(_bf(SRC, True)), src_key_padding_mask=torch.tensor(KPM))
        b = ours(tl.tensor(_bf(SRC, True)), src_key_padding_mask=tl.tensor(KPM))
    keep = ~KPM[:, :, None]  # torch's nested path leaves padded positions 0
    assert_same(tl.tensor(np.where(keep, b.numpy(), 0)), np.where(keep, a.numpy(), 0), **TOL["float64"])


def test_transformer_structure_and_mask():
    theirs, ours = modules("Transformer", E, NH, 1, 2, FF, 0.1)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert repr(ours) == repr(theirs)
    assert_same(tl.nn.Transformer.generate_square_subsequent_mask(4),
                torch.nn.Transformer.generate_square_subsequent_mask(4))
    for lib in (tl, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.nn.TransformerEncoder(lib.nn.TransformerEncoderLayer(E, NH, FF), 2)
        assert len(w) == 1
        if lib is tl:
            message = str(w[0].message)
        else:
            assert str(w[0].message) == message


TRANSFORMER_ERRORS = {
    "activation": lambda m: m.nn.TransformerEncoderLayer(E, NH, activation="swish"),
    "batch": lambda m: m.nn.Transformer(E, NH, 1, 1, FF)(m.zeros(5, 3, E), m.zeros(4, 2, E)),
    "d_model": lambda m: m.nn.Transformer(E, NH, 1, 1, FF)(m.zeros(5, 3, E + 2), m.zeros(4, 3, E + 2)),
    "heads": lambda m: m.nn.TransformerEncoderLayer(E, 4),
}


@pytest.mark.parametrize("name", TRANSFORMER_ERRORS)
def test_transformer_errors(name):
    assert_same_error(TRANSFORMER_ERRORS[name])

"""torch.nn.utils.rnn: PackedSequence and packing / padding of variable-length sequences.

The index arithmetic runs on the host (lengths and batch sizes are CPU tensors, as in torch); the data moves in one
table op each way: packing is one gather (PackPaddedSequenceBackward0, as torch), padding one gather with a fill
(torch records a chain of slice copies ending in CopySlices; here one node of that name).
"""
import collections
from collections.abc import Iterable

import numpy as np

from ... import _dtype
from ..._tensor import Tensor
from ...ops.creation import as_tensor, tensor
from ...ops.shape import cat
from .._rnn import _gather_rows, _scatter_rows

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequence = collections.namedtuple("PackedSequence_", "data batch_sizes sorted_indices unsorted_indices")


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(_PackedSequence):
    """Packed time-major data of sequences sorted by length: ``data`` (sum of lengths, *), ``batch_sizes`` (how
    many sequences are alive at each step, int64 on the CPU), and the sorting permutation and its inverse."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: t.to(data.device))
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move), _bind(self.unsorted_indices, move))

    def cuda(self, *args, **kwargs):
        return self.to(*args, **{"device": "cuda", **kwargs})

    def cpu(self, *args, **kwargs):
        return self.to(*args, **{"device": "cpu", **kwargs})

    def pin_memory(self):
        return self

    def double(self):
        return self.to(dtype=_dt("float64"))

    def float(self):
        return self.to(dtype=_dt("float32"))

    def half(self):
        return self.to(dtype=_dt("float16"))

    def long(self):
        return self.to(dtype=_dt("int64"))

    def int(self):
        return self.to(dtype=_dt("int32"))

    def short(self):
        return self.to(dtype=_dt("int16"))

    def char(self):
        return self.to(dtype=_dt("int8"))

    def byte(self):
        return self.to(dtype=_dt("uint8"))

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _dt(name):
    return getattr(_dtype, name)


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None for None)."""
    if permutation is None:
        return None
    p = permutation.numpy()
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size)
    return tensor(inv, device=permutation.device)


def _host(values):
    return np.asarray(values.numpy() if isinstance(values, Tensor) else values, np.int64)


def _batch_sizes(lengths):
    """torch's batch_sizes of sorted ``lengths``: how many sequences are longer than each step."""
    return (lengths[None, :] > np.arange(lengths[0] if lengths.size else 0)[:, None]).sum(1)


def _packed_index(batch_sizes, steps, batch, batch_first=False):
    """The packed row of each (step, batch) slot of a padded batch (0 where empty), and which slots hold one."""
    offsets = np.concatenate([[0], np.cumsum(batch_sizes)[:-1]]).astype(np.int64)
    b = np.arange(batch)[None, :]
    sizes = np.zeros(steps, np.int64)
    sizes[:len(batch_sizes)] = batch_sizes
    valid = b < sizes[:, None]
    index = np.where(valid, np.concatenate([offsets, np.zeros(steps - len(offsets), np.int64)])[:, None] + b, 0)
    if batch_first:
        index, valid = index.T, valid.T
    return index, valid


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (``batch_first``: (B, T, *)) of sequences of ``lengths`` into a
    PackedSequence; ``enforce_sorted=False`` sorts them by decreasing length first."""
    lengths = _host(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = tensor(order, device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    batch = input.shape[0 if batch_first else 1]
    if lengths.size != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size} "
                           f"(batch_size={batch})")
    if lengths.size and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if np.any(np.diff(lengths) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    sizes = _batch_sizes(lengths)
    steps = input.shape[1 if batch_first else 0]
    t, b = np.nonzero(np.arange(batch)[None, :] < sizes[:, None])  # packed order: by step, then batch
    flat = b * steps + t if batch_first else t * batch + b
    data = _gather_rows(input, tensor(flat))
    return PackedSequence(data, tensor(sizes), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded batch, lengths), padded with ``padding_value`` to
    ``total_length`` steps (default: the longest sequence)."""
    sizes = _host(sequence.batch_sizes)
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch = int(sizes[0]) if steps else 0
    index, valid = _packed_index(sizes, steps, batch, batch_first)
    data = sequence.data
    padded = _scatter_rows(data, tensor(index), tensor(valid), tensor(padding_value, dtype=data.dtype))
    lengths = tensor((np.arange(batch)[:, None] < sizes[None, :]).sum(1))
    if sequence.unsorted_indices is not None:
        unsorted = sequence.unsorted_indices
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences (L_i, *) into one padded tensor (max L, B, *) (``batch_first``: (B, max L, *)), padded with
    ``padding_value`` on the ``padding_side``."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    trailing = sequences[0].shape[1:]
    for s in sequences[1:]:
        for d, (a, b) in enumerate(zip(trailing, s.shape[1:])):
            if a != b:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                   f"non-singleton dimension {d + 1}")
    lengths = np.array([s.shape[0] for s in sequences], np.int64)
    steps, batch = int(lengths.max()), len(sequences)
    t = np.arange(steps)[:, None]
    start = (steps - lengths)[None, :] if padding_side == "left" else np.zeros((1, batch), np.int64)
    valid = (t >= start) & (t < start + lengths[None, :])
    index = np.where(valid, np.concatenate([[0], np.cumsum(lengths)[:-1]])[None, :] + t - start, 0)
    if batch_first:
        index, valid = index.T, valid.T
    data = cat(sequences, 0)
    return _scatter_rows(data, tensor(index), tensor(valid), tensor(padding_value, dtype=data.dtype))


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences of ``lengths`` in a padded batch (inverse of pad_sequence)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    idx = as_tensor(np.arange(padded_sequences.shape[1]))
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """pack_padded_sequence of pad_sequence(sequences)."""
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences in a PackedSequence (inverse of pack_sequence)."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)

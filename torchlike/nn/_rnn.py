"""The recurrent layer op: one layer, one direction of an RNN / LSTM / GRU, its whole time loop one ``jax.lax.scan``
inside one jitted op entry (so an eager LSTM layer is one dispatch forward and one backward, not one op per gate
and step). Its gradient is the table's ``jax.vjp`` of the forward (scan's own transpose), so any order works.

Node name: ``MkldnnRnnLayerBackward0``, the one node torch's CPU LSTM records per layer and direction in float32
(``aten::mkldnn_rnn_layer`` takes the mode, so the same entry serves RNN and GRU here). Its edges are torch's:
(input, weight_ih, weight_hh, bias_ih, bias_hh, hx, cx), then weight_hr (projections) which torch's oneDNN layer
does not take. Where torch's graph differs: torch records per-step composites (StackBackward0 over MulBackward0 /
TanhBackward0 / AddBackward0 nodes) for RNN and GRU, for LSTM in float64 and for LSTM with ``proj_size``.

Packed sequences run padded, time-major, with the sequence ``lengths`` (an int input): a step past a sequence's
end leaves its state unchanged and outputs zero, so the final state is the one at each sequence's last step and
the reverse direction starts at each sequence's own last step, as torch's packed kernels.
"""
import jax
import jax.numpy as jnp

from .._internal import op

__all__ = []


def _scan(mode, reverse, input, w_ih, w_hh, b_ih, b_hh, hx, cx, w_hr, lengths):
    """(output (T, B, H'), hy, cy) of one layer over ``input`` (T, B, I); ``mode`` LSTM | GRU | RNN_TANH | RNN_RELU."""
    xg = jnp.einsum("tbi,gi->tbg", input, w_ih)
    if b_ih is not None:
        xg = xg + b_ih
    steps = jnp.arange(input.shape[0])
    if reverse:
        xg, steps = xg[::-1], steps[::-1]

    def step(carry, inp):
        h, c = carry
        gx, t = inp
        gh = h @ w_hh.T
        if b_hh is not None:
            gh = gh + b_hh
        if mode == "LSTM":
            i, f, g, o = jnp.split(gx + gh, 4, axis=-1)
            c2 = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h2 = jax.nn.sigmoid(o) * jnp.tanh(c2)
            if w_hr is not None:
                h2 = h2 @ w_hr.T
        elif mode == "GRU":
            xr, xz, xn = jnp.split(gx, 3, axis=-1)
            hr, hz, hn = jnp.split(gh, 3, axis=-1)
            r = jax.nn.sigmoid(xr + hr)
            z = jax.nn.sigmoid(xz + hz)
            n = jnp.tanh(xn + r * hn)
            h2, c2 = (1 - z) * n + z * h, c
        else:
            pre = gx + gh
            h2, c2 = (jnp.tanh(pre) if mode == "RNN_TANH" else jnp.maximum(pre, 0)), c
        if lengths is None:
            return (h2, c2), h2
        live = (t < lengths)[:, None]
        h2 = jnp.where(live, h2, h)
        return (h2, jnp.where(live, c2, c)), jnp.where(live, h2, 0)

    (hy, cy), out = jax.lax.scan(step, (hx, hx if cx is None else cx), (xg, steps))
    return (out[::-1] if reverse else out), hy, cy


@op("MkldnnRnnLayerBackward0", outputs=("output", "hy", "cy"), nondiff=("lengths",))
def _lstm_layer(input, weight0, weight1, weight2, weight3, hx, cx, weight_hr, lengths, *, reverse):
    return _scan("LSTM", reverse, input, weight0, weight1, weight2, weight3, hx, cx, weight_hr, lengths)


@op("MkldnnRnnLayerBackward0", outputs=("output", "hy"), nondiff=("lengths",))
def _rnn_layer(input, weight0, weight1, weight2, weight3, hx, lengths, *, mode, reverse):
    return _scan(mode, reverse, input, weight0, weight1, weight2, weight3, hx, None, None, lengths)[:2]


@op("PackPaddedSequenceBackward0", nondiff=("index",))
def _gather_rows(input, index):
    """Rows ``index`` of ``input`` flattened over its first two dims (packing a padded batch)."""
    return input.reshape((-1,) + input.shape[2:])[index]


@op("torch::autograd::CopySlices", nondiff=("index", "valid", "fill"), class_name="CopySlices")
def _scatter_rows(input, index, valid, fill):
    """A (T, B, ...) padded batch from rows of ``input``: ``input[index]`` where ``valid``, else ``fill``."""
    rows = input[index]
    return jnp.where(valid.reshape(valid.shape + (1,) * (rows.ndim - 2)), rows, fill.astype(rows.dtype))

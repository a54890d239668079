"""torch.backends.mha: whether TransformerEncoder may take torch's nested-tensor fast path (which zeroes the padded
positions of its output; torchlike computes the same values without nested tensors)."""
_enabled = [True]


def get_fastpath_enabled():
    """Whether the fast path is on (it runs only when every condition on the inputs holds)."""
    return _enabled[0]


def set_fastpath_enabled(value):
    """Turn the fast path on or off."""
    _enabled[0] = value

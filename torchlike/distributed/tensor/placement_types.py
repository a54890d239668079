"""Placements of a DTensor on one mesh dimension, as torch.distributed.tensor.placement_types: ``Shard(dim)``,
``Replicate()`` and ``Partial(reduce_op)``."""

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    """Base class of the placements."""

    def is_shard(self, dim=None):
        return isinstance(self, Shard) and (dim is None or self.dim == dim)

    def is_replicate(self):
        return isinstance(self, Replicate)

    def is_partial(self, reduce_op=None):
        return isinstance(self, Partial) and (reduce_op is None or self.reduce_op == reduce_op)


class Shard(Placement):
    """The tensor is split along ``dim`` over the mesh dimension (each device holds one piece)."""

    def __init__(self, dim):
        self.dim = dim

    def __eq__(self, other):
        return type(other) is Shard and other.dim == self.dim

    def __hash__(self):
        return hash(self.dim)

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class Replicate(Placement):
    """Every device of the mesh dimension holds the whole tensor."""

    def __eq__(self, other):
        return type(other) is Replicate

    def __hash__(self):
        return -1

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


class Partial(Placement):
    """The tensor is the reduction (``"sum"``, ``"avg"``, ``"min"``, ``"max"``) of the devices' values, pending."""

    def __init__(self, reduce_op="sum"):
        self.reduce_op = reduce_op

    def __eq__(self, other):
        return type(other) is Partial and other.reduce_op == self.reduce_op

    def __hash__(self):
        return 1 + hash(self.reduce_op)

    def __repr__(self):
        return f"Partial({self.reduce_op})"

    def __str__(self):
        return f"P({self.reduce_op})"

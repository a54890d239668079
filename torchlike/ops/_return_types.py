"""torch.return_types: the named result tuples of max, sort, topk, aminmax, frexp, linalg.svd, ... (torch's
structseqs). Each is made once, here, so ``torchlike.return_types.<name>`` finds it: results pickle and
``torch.save`` as torch's do."""
import collections

TYPES = {}


def structseq(name, fields):
    """The result type ``torchlike.return_types.<name>``: a named tuple of ``fields`` with torch's repr."""
    cls = TYPES.get(name)
    if cls is None:
        cls = TYPES[name] = collections.namedtuple(name, fields, module="torchlike.return_types")
        cls.__repr__ = lambda self: f"torchlike.return_types.{name}(\n" + ",\n".join(
            f"{f}={v!r}" for f, v in zip(self._fields, self)) + ")"
    return cls

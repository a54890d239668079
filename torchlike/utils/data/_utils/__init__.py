"""The DataLoader's internals, where torch keeps them (``_utils.collate.collate``, ``default_collate_fn_map``)."""
from . import collate, fetch, worker  # noqa: F401

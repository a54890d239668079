"""Indexing ops: __getitem__, index_select, gather, scatter_add, masked_fill, nonzero."""

__all__ = []

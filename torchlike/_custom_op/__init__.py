"""Mirrors ``torch._custom_op``: torch 2.13 still ships this older, deprecated custom-op API (see
``torchlike.library._legacy``). ``from torchlike._custom_op.impl import custom_op`` works as torch's."""

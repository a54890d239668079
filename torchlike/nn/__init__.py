"""torchlike.nn: neural-network building blocks (functional forms first)."""
from . import functional  # noqa: F401

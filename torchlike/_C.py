"""torch._C's Python-visible names that torchlike users meet: the exception classes."""
from .ops.linalg_module import LinAlgError as _LinAlgError  # noqa: F401  (torch._C._LinAlgError)

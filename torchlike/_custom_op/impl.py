"""``torch._custom_op.impl``: the legacy ``custom_op`` decorator and its ``CustomOp``."""
from ..library._legacy import _CustomOp as CustomOp, _legacy_custom_op as custom_op

__all__ = ["custom_op", "CustomOp"]

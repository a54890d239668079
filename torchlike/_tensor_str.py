"""torch-style repr of tensors."""
import numpy as np


def _str(t):
    arr = np.asarray(t._data)
    body = np.array2string(arr, separator=", ", prefix="tensor(")
    suffix = []
    if t._grad_fn is not None:
        suffix.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffix.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + s for s in suffix) + ")"

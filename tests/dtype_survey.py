"""Survey: every op of the random-program generator on every dtype (and pair of dtypes), in torch and torchlike;
prints where the outcome differs (one raises and the other not, or another error type / leading text).

    python tests/dtype_survey.py [--all] [--grad]     (--all: print every case; --grad: inputs require grad
                                                       where they can, and the result is backpropagated)
"""
import argparse
import operator
import sys

import numpy as np
import torch

import torchlike

DTYPES = ["float64", "float32", "int64", "bool", "complex128", "complex64"]
VALUES = {"float": [0.5, -1.5, 2.0], "int": [1, -2, 3], "bool": [True, False, True],
          "complex": [0.5 + 1j, -1.5 - 0.5j, 2.0 + 0.25j]}

UNARY = ["abs", "neg", "positive", "sgn", "sign", "square", "sin", "cos", "tan", "tanh", "sinh", "cosh", "atan",
         "asinh", "exp", "exp2", "expm1", "erf", "erfc", "sigmoid", "sinc", "floor", "ceil", "trunc", "fix", "frac",
         "round", "relu", "clone", "conj", "conj_physical", "resolve_conj", "resolve_neg", "angle", "isfinite",
         "isinf", "isnan", "isneginf", "isposinf", "isreal", "logical_not", "bitwise_not", "reciprocal", "log",
         "log2", "log10", "log1p", "sqrt", "rsqrt", "acos", "asin", "atanh", "acosh", "logit", "real", "imag",
         "arccos", "arcsin", "arctan", "arcsinh", "arccosh", "arctanh"]
INPLACE_UNARY = ["abs_", "neg_", "sin_", "cos_", "exp_", "tanh_", "sigmoid_", "sqrt_", "log_", "floor_", "ceil_",
                 "round_", "trunc_", "frac_", "relu_", "square_", "reciprocal_", "sign_", "sgn_", "erf_", "expm1_",
                 "log1p_", "rsqrt_", "logit_", "sinc_", "atan_", "exp2_", "asinh_", "cosh_", "fix_", "negative_"]
ACTIVATIONS = ["gelu", "silu", "softplus", "elu", "celu", "selu", "relu6", "leaky_relu", "hardtanh", "logsigmoid",
               "relu", "sigmoid", "tanh"]
BINARY = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "fmod", "remainder", "atan2", "hypot", "maximum",
          "minimum", "pow", "logaddexp", "rsub", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or",
          "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "isclose", "max", "min", "allclose", "equal",
          "clamp_min", "clamp_max", "lerp_s", "div_trunc", "div_floor"]
INPLACE_BINARY = ["add_", "sub_", "mul_", "div_", "pow_", "atan2_", "hypot_", "fmod_", "remainder_", "floor_divide_",
                  "clamp_min_", "clamp_max_", "eq_", "gt_", "lt_", "true_divide_"]
SCALARS = [2, 0.5, True, 1j]
SCALAR_OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
              "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "gt": operator.gt,
              "eq": operator.eq, "and": operator.and_, "or": operator.or_, "xor": operator.xor,
              "radd": lambda a, s: s + a, "rsub": lambda a, s: s - a, "rpow": lambda a, s: s ** a,
              "rtruediv": lambda a, s: s / a, "clamp": lambda a, s: a.clamp(s, None),
              "clamp_max": lambda a, s: a.clamp_max(s), "rsub_f": lambda a, s: a.rsub(s),
              "masked_fill": lambda a, s: a.masked_fill(a.real != 0 if a.is_complex() else a != 0, s),
              "fill_": lambda a, s: a.clone().fill_(s), "round_d": lambda a, s: a.round(decimals=1),
              "where": lambda a, s: a.where(a.real != 0 if a.is_complex() else a != 0, s)}
REDUCE = {"sum": lambda a: a.sum(), "mean": lambda a: a.mean(), "prod": lambda a: a.prod(), "amax": lambda a: a.amax(),
          "amin": lambda a: a.amin(), "max": lambda a: a.max(), "min": lambda a: a.min(), "max_d": lambda a: a.max(0),
          "argmax": lambda a: a.argmax(), "argmin": lambda a: a.argmin(0), "all": lambda a: a.all(),
          "any": lambda a: a.any(), "std": lambda a: a.std(), "var": lambda a: a.var(),
          "logsumexp": lambda a: a.logsumexp(0), "norm": lambda a: a.norm(), "norm1": lambda a: a.norm(1),
          "norminf": lambda a: a.norm(float("inf")), "cumsum": lambda a: a.cumsum(0),
          "softmax": lambda a: a.softmax(0), "log_softmax": lambda a: a.log_softmax(0), "nonzero": lambda a: a.nonzero(),
          "clamp": lambda a: a.clamp(-1, 1), "cumsum_f": lambda a: a.cumsum(0, dtype=a.dtype),
          "invert": lambda a: ~a, "abs_": lambda a: a.clone().abs_(), "masked_select": lambda a: a.masked_select(
              a.real != 0 if a.is_complex() else a != 0)}
TERNARY = ["where", "lerp", "addcmul", "addcdiv", "clamp", "scatter_add", "scatter", "index_add", "masked_fill_t"]


def _tensor(m, dtype, grad):
    kind = [k for k in VALUES if dtype.startswith(k)][0]
    t = m.tensor(VALUES[kind], dtype=getattr(m, dtype))
    return t.requires_grad_() if grad and kind in ("float", "complex") else t


def _binary(m, name, a, b):
    if name == "lerp_s":
        return m.lerp(a, b, 0.5)
    if name.startswith("div_"):
        return m.div(a, b, rounding_mode=name[4:])
    return getattr(m, name)(a, b)


def _ternary(m, name, a, b, c):
    if name == "where":
        return m.where(c.real != 0 if c.is_complex() else c != 0, a, b)
    if name in ("scatter_add", "scatter"):
        return getattr(m, name)(a, 0, m.tensor([2, 0, 1]), b)
    if name == "index_add":
        return m.index_add(a, 0, m.tensor([2, 0, 1]), b)
    if name == "masked_fill_t":
        return a.masked_fill(m.tensor([True, False, True]), b.sum())
    return getattr(m, name)(a, b, c)


def cases(grad):
    """(label, fn(m, grad)) for every survey case."""
    out = []
    for d in DTYPES:
        for n in UNARY:
            out.append((f"{n}({d})", lambda m, g, n=n, d=d: getattr(m, n)(_tensor(m, d, g))))
        for n in INPLACE_UNARY:
            out.append((f"{n}({d})", lambda m, g, n=n, d=d: getattr(_tensor(m, d, False), n)()))
        for n in ACTIVATIONS:
            out.append((f"F.{n}({d})", lambda m, g, n=n, d=d: getattr(m.nn.functional, n)(_tensor(m, d, g))))
        for n, f in REDUCE.items():
            out.append((f"{n}({d})", lambda m, g, f=f, d=d: f(_tensor(m, d, g))))
        for s in SCALARS:
            for n, f in SCALAR_OPS.items():
                out.append((f"{n}({d}, {s!r})", lambda m, g, f=f, d=d, s=s: f(_tensor(m, d, g), s)))
        for d2 in DTYPES:
            for n in BINARY:
                out.append((f"{n}({d}, {d2})", lambda m, g, n=n, d=d, d2=d2: _binary(
                    m, n, _tensor(m, d, g), _tensor(m, d2, g))))
            for n in INPLACE_BINARY:
                out.append((f"{n}({d}, {d2})", lambda m, g, n=n, d=d, d2=d2: getattr(
                    _tensor(m, d, False), n)(_tensor(m, d2, g))))
            for n in TERNARY:
                for d3 in (DTYPES if n in ("lerp", "addcmul", "addcdiv", "clamp") else DTYPES[:1]):
                    out.append((f"{n}({d}, {d2}, {d3})", lambda m, g, n=n, d=d, d2=d2, d3=d3: _ternary(
                        m, n, _tensor(m, d, g), _tensor(m, d2, g), _tensor(m, d3, g))))
    return out


def outcome(m, fn, grad):
    try:
        r = fn(m, grad)
        if grad and isinstance(r, m.Tensor) and r.requires_grad:
            s = (r.real.sum() + r.imag.sum()) if r.is_complex() else r.sum()
            s.backward()
        return "ok"
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0][:90] if str(e) else ''}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--all", action="store_true")
    p.add_argument("--grad", action="store_true")
    p.add_argument("--filter", default="")
    args = p.parse_args()
    n = 0
    for label, fn in cases(args.grad):
        if args.filter and not label.startswith(args.filter):
            continue
        t, tl = outcome(torch, fn, args.grad), outcome(torchlike, fn, args.grad)
        same = t == tl or (t != "ok" and tl != "ok" and t.split(":")[0] == tl.split(":")[0] and
                           tl.split(": ", 1)[1][:30] == t.split(": ", 1)[1][:30])
        if args.all or not same:
            n += not same
            print(f"{label:40} torch {t:60.60} | torchlike {tl}")
    print(f"{n} differences", file=sys.stderr)


if __name__ == "__main__":
    main()

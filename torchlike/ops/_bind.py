"""The binding pass: every public op is declared once, where it is defined, and ``bind()`` exposes it.

    def _abs_(self): ...                                  # the in-place variant

    @public(aliases=("absolute",), inplace=_abs_, dunders=("__abs__",))
    def abs(input): ...                                   # torch.abs, torch.absolute, Tensor.abs, Tensor.abs_, ...

A declaration names the function's public names (``name``, default the function's own, and ``aliases``), its
Tensor method (``method``: True for the function itself, ``property`` for it as a property, another function,
or False for none), its in-place variant (``inplace``: bound as ``Tensor.<n>_`` for the name and each alias),
Tensor dunders (``dunders``: names bound to the function itself, or ``(name, function)`` pairs), and whether it
is a torch-level function (``function=False``: a Tensor method only). It belongs to the module it is made in.
The op modules' factories (``_unary`` in pointwise, ``_cmp``, ...) declare the functions they generate this way.
Methods of other layers are declared the same way where they are implemented (``Tensor.backward`` in
``torchlike.autograd``), so ``Tensor`` itself holds only the data model.

``bind()`` runs once, from ``torchlike/__init__.py`` after every layer is imported: it sets the Tensor methods,
gives each op module its public names (aliases included) and its ``__all__`` (what ``torchlike`` re-exports), in
declaration order. No other code attaches Tensor methods. Each name is bound inside a guard that gives a call with
an argument of the wrong type torch's error (see "torch's argument errors" below); the guard also wraps the
Tensor methods of the data model that torch's argument parser checks (``size``, ``requires_grad_``, ...).
"""
import numbers
import operator
import sys
import types

import numpy as np

from .._warnings import warn_once
from .._device import device as _device
from .._dtype import dtype as _dtype
from .. import _grad_mode as _gm
from .._tensor import Tensor, _differentiable_dtype
from . import _autocast_lists, _registry

_declared = []


class _Public:
    __slots__ = ("module", "name", "fn", "aliases", "method", "inplace", "dunders", "function")


def public(fn=None, *, name=None, aliases=(), method=True, inplace=None, dunders=(), function=True, module=None):
    """Declare ``fn`` a public op of the calling module (see the module docstring); returns ``fn`` (a decorator
    without ``fn``)."""
    module = module or sys._getframe(1).f_globals["__name__"]

    def declare(fn):
        d = _Public()
        d.module = module
        d.name = name or fn.__name__
        d.fn = fn
        d.aliases = tuple(aliases)
        d.method = method
        d.inplace = inplace
        d.dunders = dict((n, fn) if isinstance(n, str) else n for n in dunders)
        d.function = function
        _declared.append(d)
        return fn
    return declare if fn is None else declare(fn)


_guarded = []  # (module, torch's name, the module's name) of the functions bound by ``guarded``


def guarded(namespace, names, prefix="", into=()):
    """Bind the functions ``names`` of ``namespace`` (a module's globals), defined where ``public`` cannot declare
    them (after ``bind()`` ran, or aliases of other ops), inside the guard as torch's function ``prefix + name``
    (torch.special's are torch's special_<name>); ``into``: other modules exposing the same function."""
    for n in names.split():
        fn = namespace[n]
        namespace[n] = g = _guard(getattr(fn, "__wrapped__", fn), prefix + n, False)
        for module in into:
            setattr(module, n, g)
        _guarded.append((namespace["__name__"], prefix + n, n))


def bind():
    """Expose every declaration: Tensor methods, in-place variants, dunders, module names and ``__all__``; each
    callable is bound inside a guard that raises torch's argument errors (see below)."""
    exported = {}
    for d in _declared:
        names = (d.name,) + d.aliases
        if d.function:
            mod = sys.modules[d.module]
            for n in names:
                setattr(mod, n, _guard(d.fn, n, False))
            exported.setdefault(d.module, []).extend(names)
        if d.method is not False:
            for n in names:
                setattr(Tensor, n, property(d.fn) if d.method is property else
                        _guard(d.fn if d.method is True else d.method, n, True))
        if d.inplace is not None:
            for n in names:
                setattr(Tensor, n + "_", _guard(d.inplace, n + "_", True))
        for n, fn in d.dunders.items():
            setattr(Tensor, n, _guard(fn, _UNARY_DUNDERS[n], True) if n in _UNARY_DUNDERS else
                    _binary_dunder(fn, n, d.name))
    for n, text in _TABLES[True].items():  # Tensor's own methods (the data model) that torch parses
        fn = vars(Tensor).get(n)
        if text is not None and isinstance(fn, types.FunctionType) and not hasattr(fn, "__wrapped__"):
            setattr(Tensor, n, _guard(fn, n, True))
    for module, names in exported.items():
        sys.modules[module].__all__ = list(dict.fromkeys(names))


# ----- torch's argument errors --------------------------------------------------------------------------------
# Every bound function, method and dunder runs inside a guard: when it raises (a JAX, NumPy or attribute error
# from an argument of the wrong type, or anything else), the call is parsed as torch's argument parser would parse
# it, against torch's signatures below, and the TypeError torch raises before running anything replaces the
# error; a call torch would accept re-raises what was raised. Binary dunders return NotImplemented instead, as
# torch's do, so Python raises its "unsupported operand type(s)". A call with a keyword is also parsed before it
# runs while that keyword has not been seen accepted with a value of that type (torchlike ignores some keywords
# torch checks: ``layout``, ``out=`` of a method, ...). A successful call costs one Python frame, and a set lookup
# per keyword; a positional argument where every overload of torch's wants a Tensor (an int) is checked to be one,
# and the number of positional arguments against torch's most.
# Left unchecked: other positional values of a wrong type that the op can use (a real torch tensor where some
# overload takes a number, a float in an int list), and a keyword of a type seen accepted in another form of the
# call.
#
# torch 2.13's Python signatures (torchgen's python bindings of native_functions.yaml, overloads in torch's order;
# "hidden": a deprecated overload, tried last and never listed). A Tensor method's signatures are its function's
# without ``Tensor input`` and ``out`` unless _METHODS gives them; "" is a method without arguments.
_OPTIONS = ("ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False, "
            "bool? requires_grad=False")  # "TensorOptions" in the tables
_FUNCTIONS = {
    "abs absolute acos acosh angle arccos arccosh arcsin arcsinh arctan arctanh asin asinh atan atanh "
    "bitwise_not ceil conj_physical cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 fix floor frac isneginf "
    "isposinf lgamma log log10 log1p log2 logical_not neg negative rad2deg reciprocal rsqrt sgn sigmoid sign sin sinc sinh "
    "sqrt square tan tanh trunc":
        "Tensor input, *, Tensor out=None",
    "add sub":
        "hidden Tensor input, Scalar alpha, Tensor other, *, Tensor out=None |"
        " Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None",
    "addcdiv addcmul":
        "hidden Tensor input, Scalar value, Tensor tensor1, Tensor tensor2, *, Tensor out=None |"
        " Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1, Tensor out=None",
    "addmm":
        "hidden Scalar beta, Tensor input, Scalar alpha, Tensor mat1, Tensor mat2, *, Tensor out=None |"
        " hidden Scalar beta, Tensor input, Tensor mat1, Tensor mat2, *, Tensor out=None |"
        " Tensor input, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor out=None |"
        " Tensor input, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1,"
        " Tensor out=None",
    "all any":
        "Tensor input, *, Tensor out=None |"
        " Tensor input, IntArrayRef? dim=None, bool keepdim=False, *, Tensor out=None |"
        " Tensor input, int64_t dim, bool keepdim=False, *, Tensor out=None",
    "allclose isclose": "Tensor input, Tensor other, double rtol=1e-05, double atol=1e-08, bool equal_nan=False",
    "amax amin": "Tensor input, IntArrayRef[1] dim=None, bool keepdim=False, *, Tensor out=None",
    "arange":
        "Scalar end, *, Tensor out=None, TensorOptions | Scalar start, Scalar end, *, TensorOptions |"
        " Scalar start, Scalar end, Scalar step=1, *, Tensor out=None, TensorOptions",
    "range": "Scalar start, Scalar end, Scalar step=1, *, Tensor out=None, ScalarType? dtype=None, "
             "Layout layout=torch.strided, Device? device=None, bool requires_grad=False",  # (torch's own binding)
    "arctan2 atan2 hypot logaddexp logical_and logical_or logical_xor matmul maximum minimum mul":
        "Tensor input, Tensor other, *, Tensor out=None",
    "argmax argmin": "Tensor input, int64_t? dim=None, bool keepdim=False, *, Tensor out=None",
    "adjoint argwhere conj detach imag isfinite isinf isnan isreal positive ravel real relu resolve_conj "
    "resolve_neg t":
        "Tensor input",
    "baddbmm":
        "hidden Scalar beta, Tensor input, Scalar alpha, Tensor batch1, Tensor batch2, *, Tensor out=None |"
        " hidden Scalar beta, Tensor input, Tensor batch1, Tensor batch2, *, Tensor out=None |"
        " Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor out=None |"
        " Tensor input, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1,"
        " Tensor out=None",
    "bitwise_and bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift remainder":
        "Tensor input, Tensor other, *, Tensor out=None | Scalar self, Tensor other |"
        " Tensor input, Scalar other, *, Tensor out=None",
    "bmm mm":
        "Tensor input, Tensor mat2, *, Tensor out=None |"
        " Tensor input, Tensor mat2, ScalarType out_dtype, *, Tensor out=None",
    "cat concat concatenate stack": "TensorList tensors, int64_t dim=0, *, Tensor out=None",
    "celu_": "Tensor input, Scalar alpha=1.0",
    # one torchlike function is torch.celu and F.celu (torch.selu and F.selu): torch's, with F's inplace
    "celu": "Tensor input, Scalar alpha=1.0, bool inplace=False", "selu": "Tensor input, bool inplace=False",
    "chunk": "Tensor input, int64_t chunks, int64_t dim=0",
    "clamp clip":
        "Tensor input, Tensor? min=None, Tensor? max=None, *, Tensor out=None |"
        " Tensor input, Scalar? min=None, Scalar? max=None, *, Tensor out=None",
    "clamp_max": "Tensor input, Tensor max, *, Tensor out=None | Tensor input, Scalar max, *, Tensor out=None",
    "clamp_min": "Tensor input, Tensor min, *, Tensor out=None | Tensor input, Scalar min, *, Tensor out=None",
    "clone": "Tensor input, *, MemoryFormat? memory_format=None",
    "cumsum": "Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None",
    "tensor":
        "PyObject* data, *, ScalarType? dtype=None, Device? device=None, bool pin_memory=False,"
        " bool requires_grad=False",
    "as_tensor": "PyObject* data, *, ScalarType? dtype=None, Device? device=None",
    "nonzero": "Tensor input, *, bool as_tuple=False, Tensor out=None",
    "diagonal": "Tensor input, int64_t offset=0, int64_t dim1=0, int64_t dim2=1",
    "div":
        "Tensor input, Tensor other, *, Tensor out=None |"
        " Tensor input, Tensor other, *, str? rounding_mode, Tensor out=None |"
        " Tensor input, Scalar other, *, str? rounding_mode",
    "divide":
        "Tensor input, Tensor other, *, Tensor out=None |"
        " Tensor input, Tensor other, *, str? rounding_mode, Tensor out=None | Tensor input, Scalar other |"
        " Tensor input, Scalar other, *, str? rounding_mode",
    "dot": "Tensor input, Tensor tensor, *, Tensor out=None",
    "empty": "SymIntArrayRef size, *, MemoryFormat? memory_format=None, Tensor out=None, TensorOptions",
    "empty_like ones_like zeros_like": "Tensor input, *, MemoryFormat? memory_format=None, TensorOptions",
    "eq fmod ge greater greater_equal gt le less less_equal lt ne not_equal":
        "Tensor input, Tensor other, *, Tensor out=None | Tensor input, Scalar other, *, Tensor out=None",
    "equal": "Tensor input, Tensor other",
    "eye": "SymInt n, *, Tensor out=None, TensorOptions | SymInt n, SymInt m, *, Tensor out=None, TensorOptions",
    "flatten": "Tensor input, int64_t start_dim=0, int64_t end_dim=-1",
    "flip permute": "Tensor input, IntArrayRef dims",
    "floor_divide multiply true_divide": "Tensor input, Tensor other, *, Tensor out=None | Tensor input, Scalar other",
    "full": "SymIntArrayRef size, Scalar fill_value, *, Tensor out=None, TensorOptions",
    "full_like": "Tensor input, Scalar fill_value, *, MemoryFormat? memory_format=None, TensorOptions",
    "gather": "Tensor input, int64_t dim, Tensor index, *, bool sparse_grad=False, Tensor out=None",
    "index_add": "Tensor input, int64_t dim, Tensor index, Tensor source, *, Scalar alpha=1, Tensor out=None",
    "index_select": "Tensor input, int64_t dim, Tensor index, *, Tensor out=None",
    "mvlgamma": "Tensor input, int64_t p, *, Tensor out=None",
    "polygamma": "int64_t n, Tensor input, *, Tensor out=None",
    "xlogy":
        "Tensor input, Tensor other, *, Tensor out=None | Scalar self, Tensor other, *, Tensor out=None |"
        " Tensor input, Scalar other, *, Tensor out=None",
    "lerp":
        "Tensor input, Tensor end, Tensor weight, *, Tensor out=None |"
        " Tensor input, Tensor end, Scalar weight, *, Tensor out=None",
    "linspace":
        "Tensor start, Tensor end, int64_t steps, *, Tensor out=None, TensorOptions |"
        " Scalar start, Tensor end, int64_t steps, *, Tensor out=None, TensorOptions |"
        " Tensor start, Scalar end, int64_t steps, *, Tensor out=None, TensorOptions |"
        " Scalar start, Scalar end, int64_t steps, *, Tensor out=None, TensorOptions",
    "log_softmax softmax": "Tensor input, int64_t dim, ScalarType? dtype=None, *, Tensor out=None",
    "logit": "Tensor input, double? eps=None, *, Tensor out=None",
    "logsumexp": "Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, Tensor out=None",
    "masked_fill": "Tensor input, Tensor mask, Tensor value | Tensor input, Tensor mask, Scalar value",
    "masked_select": "Tensor input, Tensor mask, *, Tensor out=None",
    "max min":
        "Tensor input, *, Tensor out=None | Tensor input, Tensor other, *, Tensor out=None |"
        " Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None",
    "mean":
        "Tensor input, *, ScalarType? dtype=None, Tensor out=None |"
        " Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None",
    "moveaxis movedim":
        "Tensor input, int64_t source, int64_t destination |"
        " Tensor input, IntArrayRef source, IntArrayRef destination",
    "mv": "Tensor input, Tensor vec, *, Tensor out=None",
    "narrow":
        "Tensor input, int64_t dim, Tensor start, SymInt length |"
        " Tensor input, int64_t dim, SymInt start, SymInt length",
    "normal":
        "Tensor mean, Tensor std, *, Generator? generator=None, Tensor out=None |"
        " Tensor mean, double std=1, *, Generator? generator=None, Tensor out=None |"
        " double mean, Tensor std, *, Generator? generator=None, Tensor out=None |"
        " double mean, double std, SymIntArrayRef size, *, Generator? generator=None, Tensor out=None,"
        " TensorOptions",
    "ones zeros": "SymIntArrayRef size, *, Tensor out=None, TensorOptions",
    "outer": "Tensor input, Tensor vec2, *, Tensor out=None",
    "pow":
        "Tensor input, Tensor exponent, *, Tensor out=None | Scalar self, Tensor exponent, *, Tensor out=None |"
        " Tensor input, Scalar exponent, *, Tensor out=None",
    "prod":
        "Tensor input, *, ScalarType? dtype=None |"
        " Tensor input, int64_t dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None",
    "rand randn":
        "SymIntArrayRef size, *, Generator? generator, Tensor out=None, TensorOptions |"
        " SymIntArrayRef size, *, Tensor out=None, TensorOptions",
    "rand_like randn_like":
        "Tensor input, *, Generator? generator, MemoryFormat? memory_format=None, TensorOptions |"
        " Tensor input, *, MemoryFormat? memory_format=None, TensorOptions",
    "randint":
        "SymInt high, SymIntArrayRef size, *, Generator? generator, Tensor out=None, TensorOptions |"
        " SymInt high, SymIntArrayRef size, *, Tensor out=None, TensorOptions |"
        " SymInt low, SymInt high, SymIntArrayRef size, *, Generator? generator, Tensor out=None, TensorOptions |"
        " SymInt low, SymInt high, SymIntArrayRef size, *, Tensor out=None, TensorOptions",
    "randint_like":
        "Tensor input, SymInt low, SymInt high, *, Generator? generator, MemoryFormat? memory_format=None,"
        " TensorOptions |"
        " Tensor input, SymInt low, SymInt high, *, MemoryFormat? memory_format=None, TensorOptions |"
        " Tensor input, Tensor high, *, Generator? generator, MemoryFormat? memory_format=None, TensorOptions |"
        " Tensor input, Tensor high, *, MemoryFormat? memory_format=None, TensorOptions |"
        " Tensor input, SymInt high, *, Generator? generator, MemoryFormat? memory_format=None, TensorOptions |"
        " Tensor input, SymInt high, *, MemoryFormat? memory_format=None, TensorOptions",
    "randperm":
        "SymInt n, *, Generator? generator, Tensor out=None, TensorOptions |"
        " SymInt n, *, Tensor out=None, TensorOptions",
    "reshape": "Tensor input, SymIntArrayRef shape",
    "round": "Tensor input, *, Tensor out=None | Tensor input, *, int64_t decimals, Tensor out=None",
    "rsub": "Tensor input, Tensor other, *, Scalar alpha=1 | Tensor input, Scalar other, Scalar alpha=1",
    "scatter":
        "Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None |"
        " Tensor input, int64_t dim, Tensor index, Tensor src, *, str reduce, Tensor out=None |"
        " Tensor input, int64_t dim, Tensor index, Scalar value, *, Tensor out=None |"
        " Tensor input, int64_t dim, Tensor index, Scalar value, *, str reduce, Tensor out=None",
    "scatter_add": "Tensor input, int64_t dim, Tensor index, Tensor src, *, Tensor out=None",
    "select": "Tensor input, int64_t dim, SymInt index",
    "squeeze": "Tensor input | Tensor input, int64_t dim | Tensor input, IntArrayRef dim",
    "std var":
        "Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False, *, Tensor out=None |"
        " Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor out=None |"
        " Tensor input, bool unbiased=True",
    "subtract":
        "Tensor input, Tensor other, *, Scalar alpha=1, Tensor out=None |"
        " Tensor input, Scalar other, Scalar alpha=1",
    "sum":
        "Tensor input, *, ScalarType? dtype=None |"
        " Tensor input, IntArrayRef[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None",
    "swapaxes": "Tensor input, int64_t axis0, int64_t axis1",
    "gcd lcm": "Tensor input, Tensor other, *, Tensor out=None",
    "fliplr flipud is_nonzero is_signed": "Tensor input",
    "split_with_sizes": "Tensor input, SymIntArrayRef split_sizes, int64_t dim=0",
    "tensor_split":
        "Tensor input, SymInt sections, int64_t dim=0 | Tensor input, SymIntArrayRef indices, int64_t dim=0 |"
        " Tensor input, Tensor tensor_indices_or_sections, int64_t dim=0",
    "dsplit hsplit vsplit": "Tensor input, int64_t sections | Tensor input, IntArrayRef indices",
    "is_same_size": "Tensor input, Tensor other",
    "ger": "Tensor input, Tensor vec2, *, Tensor out=None",
    "put": "Tensor input, Tensor index, Tensor source, bool accumulate=False",
    "index_reduce":
        "Tensor input, int64_t dim, Tensor index, Tensor source, str reduce, *, bool include_self=True,"
        " Tensor out=None",
    "select_scatter": "Tensor input, Tensor src, int64_t dim, SymInt index",
    "slice_scatter":
        "Tensor input, Tensor src, int64_t dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *,"
        " Tensor out=None",
    "diagonal_scatter": "Tensor input, Tensor src, int64_t offset=0, int64_t dim1=0, int64_t dim2=1",
    "as_strided_scatter":
        "Tensor input, Tensor src, SymIntArrayRef size, SymIntArrayRef stride, SymInt? storage_offset=None",
    "as_strided as_strided_":
        "Tensor input, SymIntArrayRef size, SymIntArrayRef stride, SymInt? storage_offset=None",
    "swapdims transpose": "Tensor input, int64_t dim0, int64_t dim1",
    "take_along_dim": "Tensor input, Tensor indices, int64_t? dim=None, *, Tensor out=None",
    "unbind": "Tensor input, int64_t dim=0",
    "unflatten": "Tensor input, int64_t dim, SymIntArrayRef sizes",
    "unsqueeze": "Tensor input, int64_t dim",
    "where":
        "Tensor condition | Tensor condition, Tensor input, Tensor other, *, Tensor out=None |"
        " Tensor condition, Scalar self, Tensor other | Tensor condition, Tensor input, Scalar other |"
        " Tensor condition, Scalar self, Scalar other",
    "sort":
        "Tensor input, *, bool? stable, int64_t dim=-1, bool descending=False, TensorList[2] out=None |"
        " Tensor input, int64_t dim=-1, bool descending=False, *, TensorList[2] out=None",
    "argsort":
        "Tensor input, *, bool stable, int64_t dim=-1, bool descending=False, Tensor out=None |"
        " Tensor input, int64_t dim=-1, bool descending=False",
    "msort":
        "Tensor input, *, Tensor out=None",
    "topk":
        "Tensor input, SymInt k, int64_t dim=-1, bool largest=True, bool sorted=True, *, TensorList[2] out=None",
    "kthvalue":
        "Tensor input, SymInt k, int64_t dim=-1, bool keepdim=False, *, TensorList[2] out=None",
    "median nanmedian":
        "Tensor input | Tensor input, int64_t dim, bool keepdim=False, *, TensorList[2] out=None",
    "mode":
        "Tensor input, int64_t dim=-1, bool keepdim=False, *, TensorList[2] out=None",
    "cummax cummin":
        "Tensor input, int64_t dim, *, TensorList[2] out=None",
    "searchsorted":
        "Tensor sorted_sequence, Tensor input, *, bool out_int32=False, bool right=False, str? side=None,"
        " Tensor? sorter=None, Tensor out=None |"
        " Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, str? side=None,"
        " Tensor? sorter=None, Tensor out=None",
    "bucketize":
        "Tensor input, Tensor boundaries, *, bool out_int32=False, bool right=False, Tensor out=None |"
        " Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False",
    "tril":
        "Tensor input, SymInt diagonal=0, *, Tensor out=None",
    "triu":
        "Tensor input, SymInt diagonal=0, *, Tensor out=None",
    "diag_embed":
        "Tensor input, int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1",
    "diag":
        "Tensor input, int64_t diagonal=0, *, Tensor out=None",
    "diagflat":
        "Tensor input, int64_t offset=0",
    "trace":
        "Tensor input",
    "roll":
        "Tensor input, SymIntArrayRef[1] shifts, IntArrayRef[1] dims=None",
    "rot90":
        "Tensor input, int64_t k=1, IntArrayRef dims={0,1}",
    "tile":
        "Tensor input, SymIntArrayRef dims",
    "broadcast_to":
        "Tensor input, SymIntArrayRef size",
    "hstack":
        "TensorList tensors, *, Tensor out=None",
    "vstack":
        "TensorList tensors, *, Tensor out=None",
    "row_stack":
        "TensorList tensors, *, Tensor out=None",
    "dstack":
        "TensorList tensors, *, Tensor out=None",
    "column_stack":
        "TensorList tensors, *, Tensor out=None",
    "kron":
        "Tensor input, Tensor other, *, Tensor out=None",
    "cross":
        "Tensor input, Tensor other, int64_t? dim=None, *, Tensor out=None",
    "diff":
        "Tensor input, int64_t n=1, int64_t dim=-1, Tensor? prepend=None, Tensor? append=None, *, Tensor out=None",
    "cumprod":
        "Tensor input, int64_t dim, *, ScalarType? dtype=None, Tensor out=None",
    "logcumsumexp":
        "Tensor input, int64_t dim, *, Tensor out=None",
    "nan_to_num":
        "Tensor input, double? nan=None, double? posinf=None, double? neginf=None, *, Tensor out=None",
    "count_nonzero":
        "Tensor input, int64_t? dim=None |"
        " Tensor input, IntArrayRef dim",
    "dist":
        "Tensor input, Tensor other, Scalar p=2",
    "bernoulli":
        "Tensor input, *, Generator? generator=None, Tensor out=None |"
        " Tensor input, double p, *, Generator? generator=None",
    "poisson":
        "Tensor input, Generator? generator=None",
    "multinomial":
        "Tensor input, SymInt num_samples, bool replacement=False, *, Generator? generator=None, Tensor out=None",
    "nansum":
        "Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None",
    "nanmean":
        "Tensor input, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None, Tensor out=None",
    "aminmax":
        "Tensor input, *, int64_t? dim=None, bool keepdim=False, TensorList[2] out=None",
    "var_mean":
        "Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False |"
        " Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False |"
        " Tensor input, bool unbiased=True",
    "std_mean":
        "Tensor input, IntArrayRef[1]? dim, bool unbiased=True, bool keepdim=False |"
        " Tensor input, IntArrayRef[1]? dim=None, *, Scalar? correction=None, bool keepdim=False |"
        " Tensor input, bool unbiased=True",

    # (linalg)
    "det logdet matrix_exp": "Tensor input",
    "matrix_power": "Tensor input, int64_t n, *, Tensor out=None",
    "pinverse": "Tensor input, double rcond=1e-15",
    "inverse": "Tensor input, *, Tensor out=None",
    "slogdet": "Tensor input, *, TensorList[2] out=None",
    "cdist": "Tensor x1, Tensor x2, double p=2, int64_t? compute_mode=None",
    "chain_matmul": "TensorList matrices, *, Tensor out=None",
    "addbmm":
        "hidden Scalar beta, Tensor input, Scalar alpha, Tensor batch1, Tensor batch2, *, Tensor out=None |"
        " hidden Scalar beta, Tensor input, Tensor batch1, Tensor batch2, *, Tensor out=None |"
        " Tensor input, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor out=None",
    "addmv":
        "hidden Scalar beta, Tensor input, Scalar alpha, Tensor mat, Tensor vec, *, Tensor out=None |"
        " hidden Scalar beta, Tensor input, Tensor mat, Tensor vec, *, Tensor out=None |"
        " Tensor input, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor out=None",
    "addr":
        "hidden Scalar beta, Tensor input, Scalar alpha, Tensor vec1, Tensor vec2, *, Tensor out=None |"
        " hidden Scalar beta, Tensor input, Tensor vec1, Tensor vec2, *, Tensor out=None |"
        " Tensor input, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1, Tensor out=None",
    # torch.linalg's functions, by their parser names
    "linalg_cholesky": "Tensor input, *, bool upper=False, Tensor out=None",
    "cholesky": "Tensor input, bool upper=False, *, Tensor out=None",
    "svd": "Tensor input, bool some=True, bool compute_uv=True, *, TensorList[3] out=None",
    "qr": "Tensor input, bool some=True, *, TensorList[2] out=None",
    "linalg_cholesky_ex": "Tensor input, *, bool upper=False, bool check_errors=False, TensorList[2] out=None",
    "cholesky_solve": "Tensor input, Tensor input2, bool upper=False, *, Tensor out=None",
    "cholesky_inverse": "Tensor input, bool upper=False, *, Tensor out=None",
    "lu_solve": "Tensor input, Tensor LU_data, Tensor LU_pivots, *, Tensor out=None",
    "lu_unpack":
        "Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True, *, TensorList[3] out=None",
    "triangular_solve":
        "Tensor input, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False, *,"
        " TensorList[2] out=None",
    "geqrf": "Tensor input, *, TensorList[2] out=None",
    "orgqr": "Tensor input, Tensor input2, *, Tensor out=None",
    "ormqr": "Tensor input, Tensor input2, Tensor input3, bool left=True, bool transpose=False, *, Tensor out=None",
    "nuclear_norm":
        "Tensor input, IntArrayRef[2] dim, bool keepdim=False, *, Tensor out=None |"
        " Tensor input, bool keepdim=False, *, Tensor out=None",
    "frobenius_norm": "Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, Tensor out=None",
    "linalg_cond": "Tensor input, Scalar? p=None, *, Tensor out=None | Tensor input, str p, *, Tensor out=None",
    "linalg_cross": "Tensor input, Tensor other, *, int64_t dim=-1, Tensor out=None",
    "linalg_diagonal": "Tensor A, *, int64_t offset=0, int64_t dim1=-2, int64_t dim2=-1",
    "linalg_matmul": "Tensor input, Tensor other, *, Tensor out=None",
    "linalg_det linalg_inv": "Tensor A, *, Tensor out=None",
    "linalg_eig": "Tensor input, *, TensorList[2] out=None",
    "linalg_eigh": "Tensor input, str UPLO=\"L\", *, TensorList[2] out=None",
    "linalg_eigvals": "Tensor input, *, Tensor out=None",
    "linalg_eigvalsh": "Tensor input, str UPLO=\"L\", *, Tensor out=None",
    "linalg_householder_product": "Tensor input, Tensor tau, *, Tensor out=None",
    "linalg_inv_ex": "Tensor A, *, bool check_errors=False, TensorList[2] out=None",
    "linalg_lstsq": "Tensor input, Tensor b, double? rcond=None, *, str? driver=None, TensorList[4] out=None",
    "linalg_lu": "Tensor A, *, bool pivot=True, TensorList[3] out=None",
    "linalg_lu_factor": "Tensor A, *, bool pivot=True, TensorList[2] out=None",
    "linalg_lu_factor_ex": "Tensor A, *, bool pivot=True, bool check_errors=False, TensorList[3] out=None",
    "linalg_lu_solve": "Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False, Tensor out=None",
    "linalg_matrix_exp": "Tensor input",
    "linalg_matrix_norm":
        "Tensor input, Scalar ord, IntArrayRef dim={-2,-1}, bool keepdim=False, *, ScalarType? dtype=None,"
        " Tensor out=None | Tensor input, str ord=\"fro\", IntArrayRef dim={-2,-1}, bool keepdim=False, *,"
        " ScalarType? dtype=None, Tensor out=None",
    "linalg_matrix_power": "Tensor input, int64_t n, *, Tensor out=None",
    "linalg_matrix_rank":
        "Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, Tensor out=None |"
        " Tensor input, *, double? atol=None, double? rtol=None, bool hermitian=False, Tensor out=None |"
        " Tensor input, Tensor tol, bool hermitian=False, *, Tensor out=None |"
        " Tensor input, double tol, bool hermitian=False, *, Tensor out=None",
    "linalg_multi_dot": "TensorList tensors, *, Tensor out=None",
    "linalg_norm":
        "Tensor input, Scalar? ord=None, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None,"
        " Tensor out=None | Tensor input, str ord, IntArrayRef[1]? dim=None, bool keepdim=False, *,"
        " ScalarType? dtype=None, Tensor out=None",
    "linalg_pinv":
        "Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False, Tensor out=None |"
        " Tensor input, *, double? atol=None, double? rtol=None, bool hermitian=False, Tensor out=None |"
        " Tensor input, Tensor rcond, bool hermitian=False, *, Tensor out=None |"
        " Tensor input, double rcond, bool hermitian=False, *, Tensor out=None",
    "linalg_qr": "Tensor A, str mode=\"reduced\", *, TensorList[2] out=None",
    "linalg_slogdet": "Tensor A, *, TensorList[2] out=None",
    "linalg_solve": "Tensor A, Tensor B, *, bool left=True, Tensor out=None",
    "linalg_solve_ex": "Tensor A, Tensor B, *, bool left=True, bool check_errors=False, TensorList[2] out=None",
    "linalg_solve_triangular":
        "Tensor input, Tensor B, *, bool upper, bool left=True, bool unitriangular=False, Tensor out=None",
    "linalg_svd": "Tensor A, bool full_matrices=True, *, str? driver=None, TensorList[3] out=None",
    "linalg_svdvals": "Tensor A, *, str? driver=None, Tensor out=None",
    "linalg_tensorinv": "Tensor input, int64_t ind=2, *, Tensor out=None",
    "linalg_tensorsolve": "Tensor input, Tensor other, IntArrayRef? dims=None, *, Tensor out=None",
    "linalg_vander": "Tensor x, *, SymInt? N=None",
    "linalg_vecdot": "Tensor x, Tensor y, *, int64_t dim=-1, Tensor out=None",
    "linalg_vector_norm":
        "Tensor input, Scalar ord=2, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None,"
        " Tensor out=None",

    # (special)
    "i0 signbit": "Tensor input, *, Tensor out=None",
    "fmax fmin igamma igammac ldexp logaddexp2 nextafter": "Tensor input, Tensor other, *, Tensor out=None",
    "copysign": "Tensor input, Tensor other, *, Tensor out=None | Tensor input, Scalar other, *, Tensor out=None",
    "heaviside": "Tensor input, Tensor values, *, Tensor out=None",
    "float_power":
        "Tensor input, Tensor exponent, *, Tensor out=None | Scalar self, Tensor exponent, *, Tensor out=None |"
        " Tensor input, Scalar exponent, *, Tensor out=None",
    "frexp": "Tensor input, *, TensorList[2] out=None",
    "complex": "Tensor real, Tensor imag, *, Tensor out=None",
    "polar": "Tensor abs, Tensor angle, *, Tensor out=None",
    "view_as_real view_as_complex": "Tensor input",
    "ldexp_": "Tensor input, Tensor other",
    "i0_ sinc_": "Tensor input",
    "logit_": "Tensor input, double? eps=None",
    "xlogy_": "Tensor input, Tensor other | Tensor input, Scalar other",
    "logspace":
        "Tensor start, Tensor end, int64_t steps, double base=10.0, *, Tensor out=None, TensorOptions |"
        " Scalar start, Tensor end, int64_t steps, double base=10.0, *, Tensor out=None, TensorOptions |"
        " Tensor start, Scalar end, int64_t steps, double base=10.0, *, Tensor out=None, TensorOptions |"
        " Scalar start, Scalar end, int64_t steps, double base=10.0, *, Tensor out=None, TensorOptions",
    "can_cast": "ScalarType from_, ScalarType to",
    "isin":
        "Tensor elements, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor out=None |"
        " Scalar element, Tensor test_elements, *, bool assume_unique=False, bool invert=False, Tensor out=None |"
        " Tensor elements, Scalar test_element, *, bool assume_unique=False, bool invert=False, Tensor out=None",

    # (ops)
    "take": "Tensor input, Tensor index, *, Tensor out=None",
    "index_copy": "Tensor input, int64_t dim, Tensor index, Tensor source, *, Tensor out=None",
    "index_fill": "Tensor input, int64_t dim, Tensor index, Tensor value | Tensor input, int64_t dim, Tensor index,"
                  " Scalar value",
    "index_put index_put_": "Tensor input, c10::List<::std::optional<Tensor>> indices, Tensor values,"
                            " bool accumulate=False",
    "masked_scatter": "Tensor input, Tensor mask, Tensor source",
    "scatter_reduce":
        "Tensor input, int64_t dim, Tensor index, Tensor src, str reduce, *, bool include_self=True, Tensor out=None",

    "unique_consecutive": "Tensor input, bool return_inverse=False, bool return_counts=False, int64_t? dim=None",
    "quantile nanquantile":
        "Tensor input, Tensor q, int64_t? dim=None, bool keepdim=False, *, str interpolation=\"linear\","
        " Tensor out=None | Tensor input, double q, int64_t? dim=None, bool keepdim=False, *,"
        " str interpolation=\"linear\", Tensor out=None",

    "histc": "Tensor input, int64_t bins=100, Scalar min=0, Scalar max=0, *, Tensor out=None",
    "bincount": "Tensor input, Tensor? weights=None, SymInt minlength=0",

    "repeat_interleave":
        "Tensor input, Tensor repeats, int64_t? dim=None, *, SymInt? output_size=None |"
        " Tensor repeats, *, SymInt? output_size=None |"
        " Tensor input, SymInt repeats, int64_t? dim=None, *, SymInt? output_size=None",
    "tril_indices triu_indices": "int64_t row, int64_t col, int64_t offset=0, *, TensorOptions",
    "combinations": "Tensor input, int64_t r=2, bool with_replacement=False",
    "renorm": "Tensor input, Scalar p, int64_t dim, Scalar maxnorm, *, Tensor out=None",
    "cosine_similarity": "Tensor x1, Tensor x2, int64_t dim=1, double eps=1e-08",

    # (nn)

    # (rnn)

    # (fixes)

    # (gaps14): torch.special's functions (torch's special_<name>), the spatial functions torchlike exposes from nn
    "special_airy_ai special_scaled_modified_bessel_k0 special_scaled_modified_bessel_k1 special_spherical_bessel_j0":
        "Tensor x, *, Tensor out=None",
    "special_bessel_j0 special_bessel_j1 special_bessel_y0 special_bessel_y1 special_digamma special_entr special_erf "
    "special_erfc special_erfcx special_erfinv special_exp2 special_expit special_expm1 special_gammaln special_i0 "
    "special_i0e special_i1 special_i1e special_log1p special_log_ndtr special_modified_bessel_i0 "
    "special_modified_bessel_i1 special_modified_bessel_k0 special_modified_bessel_k1 special_ndtr special_ndtri "
    "special_psi special_sinc":
        "Tensor input, *, Tensor out=None",
    "special_chebyshev_polynomial_t special_chebyshev_polynomial_u special_chebyshev_polynomial_v "
    "special_chebyshev_polynomial_w special_hermite_polynomial_h special_hermite_polynomial_he "
    "special_laguerre_polynomial_l special_legendre_polynomial_p special_shifted_chebyshev_polynomial_t "
    "special_shifted_chebyshev_polynomial_u special_shifted_chebyshev_polynomial_v "
    "special_shifted_chebyshev_polynomial_w":
        "Tensor x, Tensor n, *, Tensor out=None | Scalar x, Tensor n, *, Tensor out=None |"
        " Tensor x, Scalar n, *, Tensor out=None",
    "special_gammainc special_gammaincc": "Tensor input, Tensor other, *, Tensor out=None",
    "special_log_softmax": "Tensor input, int64_t dim, *, ScalarType? dtype=None",
    "special_logit": "Tensor input, double? eps=None, *, Tensor out=None",
    "special_logsumexp": "Tensor input, IntArrayRef[1] dim, bool keepdim=False, *, Tensor out=None",
    "special_multigammaln": "Tensor input, int64_t p, *, Tensor out=None",
    "special_polygamma": "int64_t n, Tensor input, *, Tensor out=None",
    "special_round": "Tensor input, *, int64_t decimals=0, Tensor out=None",
    "special_softmax": "Tensor input, int64_t dim, ScalarType? dtype=None",
    "special_xlog1py special_xlogy special_zeta":
        "Tensor input, Tensor other, *, Tensor out=None | Scalar self, Tensor other, *, Tensor out=None |"
        " Tensor input, Scalar other, *, Tensor out=None",
    **{f"conv{d}d": f"Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[{d}] stride=1, "
                    f"SymIntArrayRef[{d}] padding=0, SymIntArrayRef[{d}] dilation=1, SymInt groups=1 |"
                    f" Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[{d}] stride=1, "
                    f"str padding=\"valid\", SymIntArrayRef[{d}] dilation=1, SymInt groups=1" for d in (1, 2, 3)},
    **{f"conv_transpose{d}d": f"Tensor input, Tensor weight, Tensor? bias=None, SymIntArrayRef[{d}] stride=1, "
                              f"SymIntArrayRef[{d}] padding=0, SymIntArrayRef[{d}] output_padding=0, SymInt groups=1, "
                              f"SymIntArrayRef[{d}] dilation=1" for d in (1, 2, 3)},
    "pairwise_distance": "Tensor x1, Tensor x2, double p=2, double eps=1e-06, bool keepdim=False",
    "pixel_shuffle": "Tensor input, int64_t upscale_factor",
    "pixel_unshuffle": "Tensor input, int64_t downscale_factor",
    "channel_shuffle native_channel_shuffle": "Tensor input, SymInt groups",
    "is_complex is_floating_point": "Tensor input",
    "linalg_ldl_factor_ex": "Tensor input, *, bool hermitian=False, bool check_errors=False, TensorList[3] out=None",
    "linalg_ldl_factor": "Tensor input, *, bool hermitian=False, TensorList[2] out=None",
    "linalg_ldl_solve": "Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False, Tensor out=None",
    "result_type": "Tensor tensor, Tensor other | Scalar scalar, Tensor tensor | Tensor tensor, Scalar other |"
                   " Scalar scalar1, Scalar scalar2",
    "inner vdot": "Tensor input, Tensor other, *, Tensor out=None",
    "cov": "Tensor input, *, int64_t correction=1, Tensor? fweights=None, Tensor? aweights=None",
    "corrcoef": "Tensor input",
    "histogram":
        "Tensor input, Tensor bins, *, Tensor? weight=None, bool density=False, TensorList[2] out=None |"
        " Tensor input, int64_t bins=100, *, ArrayRef<double>? range=None, Tensor? weight=None, bool density=False,"
        " TensorList[2] out=None",
    "histogramdd": " | ".join(
        f"Tensor input, {bins} bins, ArrayRef<double>? range=None, Tensor? weight=None, bool density=False"
        for bins in ("int64_t", "IntArrayRef", "TensorList")),
    "stft":  # (_VF.stft's: torch.stft, a Python function, pads a centred signal, then calls the second)
        "Tensor input, int64_t n_fft, int64_t? hop_length=None, int64_t? win_length=None, Tensor? window=None,"
        " bool center=True, str pad_mode=\"reflect\", bool normalized=False, bool? onesided=None,"
        " bool? return_complex=None, bool? align_to_window=None |"
        " Tensor input, int64_t n_fft, int64_t? hop_length=None, int64_t? win_length=None, Tensor? window=None,"
        " bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None",
    "istft":
        "Tensor input, int64_t n_fft, int64_t? hop_length=None, int64_t? win_length=None, Tensor? window=None,"
        " bool center=True, bool normalized=False, bool? onesided=None, int64_t? length=None,"
        " bool return_complex=False",
}
_METHODS = {
    "uniform_":
        "double from=0, double to=1, *, Generator? generator=None",
    "normal_":
        "double mean=0, double std=1, *, Generator? generator=None",
    "random_":
        "*, Generator? generator=None |"
        " int64_t from, int64_t? to, *, Generator? generator=None |"
        " int64_t to, *, Generator? generator=None",
    "exponential_":
        "double lambd=1, *, Generator? generator=None",
    "bernoulli_":
        "Tensor p, *, Generator? generator=None |"
        " double p=0.5, *, Generator? generator=None",
    "geometric_":
        "double p, *, Generator? generator=None",
    "log_normal_":
        "double mean=1, double std=2, *, Generator? generator=None",
    "cauchy_":
        "double median=0, double sigma=1, *, Generator? generator=None",
    "addmm addmm_":
        "hidden Scalar beta, Scalar alpha, Tensor mat1, Tensor mat2 |"
        " hidden Scalar beta, Tensor mat1, Tensor mat2 |"
        " Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1",
    "baddbmm baddbmm_":
        "hidden Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2 |"
        " hidden Scalar beta, Tensor batch1, Tensor batch2 |"
        " Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1",
    "bmm mm": "Tensor mat2",
    "mvlgamma": "int64_t p",
    "polygamma polygamma_": "int64_t n",
    "xlogy xlogy_": "Tensor other | Scalar other",
    "expand": "SymIntArrayRef size, *, bool implicit=False",
    "squeeze_": " | int64_t dim | IntArrayRef dim",
    "cumprod_ cumsum_": "int64_t dim, *, ScalarType? dtype=None",
    "gcd gcd_ lcm lcm_": "Tensor other",
    "sum_to_size": "SymIntArrayRef size",
    "fill_diagonal_": "Scalar fill_value, bool wrap=False",
    "put put_": "Tensor index, Tensor source, bool accumulate=False",
    "unsqueeze_": "int64_t dim",
    "swapdims_ transpose_": "int64_t dim0, int64_t dim1",
    "swapaxes_": "int64_t axis0, int64_t axis1",
    "t_": "",
    "expand_as reshape_as type_as view_as": "Tensor other",
    "new_empty new_ones new_zeros": "SymIntArrayRef size, *, TensorOptions",
    "new_full": "SymIntArrayRef size, Scalar fill_value, *, TensorOptions",
    "repeat": "SymIntArrayRef repeats",
    "retain_grad": "",
    "view": "ScalarType dtype | SymIntArrayRef size",
    "__invert__ adjoint data_ptr detach_ dim element_size get_device is_complex is_conj is_floating_point item "
    "ndimension nelement numel storage_offset tolist untyped_storage": "",
    "size stride": "int64_t? dim=None",
    "requires_grad_": "bool requires_grad=True",
    "nonzero": " | *, bool as_tuple",
    "copy_": "Tensor other, bool non_blocking=False | hidden Tensor other, bool async=False",
    "is_contiguous contiguous": "*, MemoryFormat memory_format=contiguous_format",
    "bfloat16 bool byte cdouble cfloat char cpu double float half int long short":
        "*, MemoryFormat? memory_format=None",
    "numpy": "*, bool force=False",
    "cuda":
        "Device? device=None, bool non_blocking=False, *, MemoryFormat? memory_format=None |"
        " hidden Device? device=None, bool async=False, *, MemoryFormat? memory_format=None",
    "new_tensor": "PyObject* data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False",
    "type":
        "PyObject* dtype=None, bool non_blocking=False, *, MemoryFormat? memory_format=None |"
        " hidden PyObject* dtype=None, bool async=False, *, MemoryFormat? memory_format=None",
    "to":
        "Device? device=None, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, *,"
        " MemoryFormat? memory_format=None |"
        " ScalarType dtype, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None |"
        " Tensor tensor, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None",
    "fill_": "Tensor value | Scalar value",
    "zero_": "",
    "where": "Tensor condition, Tensor other | Tensor condition, Scalar other",

    # (linalg)
    "addbmm addbmm_":
        "hidden Scalar beta, Scalar alpha, Tensor batch1, Tensor batch2 |"
        " hidden Scalar beta, Tensor batch1, Tensor batch2 |"
        " Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1",
    "addmv addmv_":
        "hidden Scalar beta, Scalar alpha, Tensor mat, Tensor vec |"
        " hidden Scalar beta, Tensor mat, Tensor vec |"
        " Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1",
    "addr addr_":
        "hidden Scalar beta, Scalar alpha, Tensor vec1, Tensor vec2 |"
        " hidden Scalar beta, Tensor vec1, Tensor vec2 |"
        " Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1",

    # (special)
    "copysign copysign_": "Tensor other | Scalar other",
    "float_power float_power_": "Tensor exponent | Scalar exponent",

    # (ops)
    "unfold": "int64_t dimension, int64_t size, int64_t step",
    "pin_memory is_pinned": "Device? device=None",
    "map_": "Tensor other, PyObject* callable",

    # (nn)

    # (rnn)

    # (fixes)
}
# torch's Python functions: the C function each one calls (its name, arguments, and whether as a Tensor method),
# whose parser torch runs; or the error torch's Python code raises first
_INNER = {**{n: "Tensor input | TensorList tensors" for n in ("atleast_1d", "atleast_2d", "atleast_3d")},
          "broadcast_tensors": "TensorList tensors", "cartesian_prod": "TensorList tensors",
          "block_diag": "TensorList tensors",
          "_unique2": "Tensor input, bool sorted=True, bool return_inverse=False, bool return_counts=False",
          "unique_consecutive": "Tensor input, bool return_inverse=False, bool return_counts=False, int64_t? dim=None",
          "unique_dim":
              "Tensor input, int64_t dim, bool sorted=True, bool return_inverse=False, bool return_counts=False",
          "meshgrid": "TensorList tensors | TensorList tensors, *, str indexing",
          "split":
              "Tensor input, SymInt split_size, int64_t dim=0 | Tensor input, SymIntArrayRef split_size, int64_t dim=0",
          "split_with_sizes": "Tensor input, SymIntArrayRef split_sizes, int64_t dim=0",
          "einsum": "str equation, TensorList tensors, *, IntArrayRef? path=None",
          "chain_matmul": "TensorList matrices, *, Tensor out=None",
          "cdist": "Tensor x1, Tensor x2, double p=2, int64_t? compute_mode=None",
          "_lu_with_info": "Tensor input, bool pivot=True, bool check_errors=True",
          "linalg_vector_norm":
              "Tensor input, Scalar ord=2, IntArrayRef[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None,"
              " Tensor out=None",
          "linalg_matrix_norm":
              "Tensor input, Scalar ord, IntArrayRef dim={-2,-1}, bool keepdim=False, *, ScalarType? dtype=None,"
              " Tensor out=None | Tensor input, str ord=\"fro\", IntArrayRef dim={-2,-1}, bool keepdim=False, *,"
              " ScalarType? dtype=None, Tensor out=None"}


def _split(tensor, split_size_or_sections, dim=0):
    inner = "split" if _is_long(split_size_or_sections) else "split_with_sizes"
    return inner, (tensor, split_size_or_sections, dim), {}, None


def _einsum(*args):
    if len(args) < 2 or isinstance(args[0], Tensor):  # (the sublist format: torch's own Python errors)
        return None
    operands = args[1:]
    if len(operands) == 1 and isinstance(operands[0], (tuple, list)):
        operands = operands[0]
    if len(operands) >= 3:  # torch asks opt_einsum for the contraction path first: its errors come first
        import opt_einsum
        opt_einsum.contract_path(args[0], *operands)
    return "einsum", (args[0], operands), {}, None


def _norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):  # noqa: A002 - torch's names
    dims = [dim] if _is_long(dim) else dim
    keywords = {"dtype": dtype} if out is None else {"dtype": dtype, "out": out}
    if isinstance(p, str) and (p != "fro" or hasattr(dim, "__len__") and len(dim) > 2):
        if dim is None and isinstance(input, Tensor):
            dims = list(range(input.ndim))
        return "linalg_matrix_norm", (input, p, dims, keepdim), keywords, None
    return "linalg_vector_norm", (input, 2 if isinstance(p, str) else 2.0 if p is None else p, dims, keepdim), \
        keywords, None


def _unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    bool(return_inverse), bool(return_counts)  # (torch's boolean_dispatch tests them first)
    kw = {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts}
    return ("_unique2", (input,), kw, None) if dim is None else ("unique_dim", (input, dim), kw, None)


def _named_as(fn, name, qualname):
    """``fn`` named ``name`` (which the guard replaces in Python's argument errors), ``qualname`` in them."""
    out = types.FunctionType(fn.__code__, fn.__globals__, name, fn.__defaults__)
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__qualname__ = qualname
    return out


def _no_arguments(self):  # torch's Python methods without arguments (is_shared, share_memory_)
    return None


def _unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    bool(return_inverse), bool(return_counts)  # (torch's boolean_dispatch tests them first)
    kw = {"return_inverse": return_inverse, "return_counts": return_counts, "dim": dim}
    return "unique_consecutive", (input,), kw, None


def _apply_(self, *args, **kwargs):  # a METH_O method in torch
    if kwargs:
        return TypeError("TensorBase.apply_() takes no keyword arguments")
    return TypeError(f"TensorBase.apply_() takes exactly one argument ({len(args)} given)") if len(args) != 1 else None


def _cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    return "cdist", (x1, x2, p, None), {}, None


def _chain_matmul(*matrices, out=None):
    return "chain_matmul", (matrices,), {} if out is None else {"out": out}, None


def _unflatten(self, dim, sizes):
    if sizes is None or isinstance(sizes, (tuple, list)) and not sizes:
        return RuntimeError("unflatten: sizes must be non-empty")
    return "unflatten", (self, dim, sizes), {}, True


def _stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
          normalized=False, onesided=None, return_complex=None, align_to_window=None):
    if center:  # torch's Python pads a centred signal first (F.pad's parser), then calls the overload without center
        input.dim()
        int(n_fft // 2)
        if not isinstance(pad_mode, str):
            return TypeError(f"pad(): argument 'mode' (position 3) must be str, not {_type_name(pad_mode)}")
    return "stft", (input, n_fft, hop_length, win_length, window, normalized, onesided, return_complex,
                    align_to_window), {}, False


def _stft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
                 normalized=False, onesided=None, return_complex=None, align_to_window=None):
    return _stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided, return_complex,
                 align_to_window)


def _istft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
                  onesided=None, length=None, return_complex=False):  # (torch.istft's arguments, by position)
    return "istft", (self, n_fft, hop_length, win_length, window, center, normalized, onesided, length), \
        {"return_complex": return_complex}, False


def _variadic(name):
    """torch's Python functions of ``*tensors`` that pass them on as one TensorList (meshgrid takes one list as
    the tensors; the atleast_nd functions pass one argument on as it is)."""
    def adapter(*tensors, indexing=None):
        if len(tensors) == 1 and name.startswith("atleast"):
            return name, (tensors[0],), {}, None
        if len(tensors) == 1 and name == "meshgrid" and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return name, (tensors,), {} if indexing is None else {"indexing": indexing}, None
    adapter.__name__ = adapter.__qualname__ = name
    return adapter


def _lu_impl(A, pivot=True, get_infos=False, out=None):  # torch.lu's two functions (boolean_dispatch on get_infos)
    return "_lu_with_info", (A,), {"pivot": pivot, "check_errors": not get_infos}, None


_lu_with_infos, _lu_no_infos = (_named_as(_lu_impl, "lu", q) for q in ("_lu_with_infos", "_lu_no_infos"))


def _lu(*args, **kwargs):
    flag = kwargs["get_infos"] if "get_infos" in kwargs else args[2] if len(args) > 2 else False
    return (_lu_with_infos if flag else _lu_no_infos)(*args, **kwargs)


def _lu_method(self, pivot=True, get_infos=False):
    return "_lu_with_info", (self,), {"pivot": pivot, "check_errors": not get_infos}, None


def _removed_solve(input, A, *, out=None):  # noqa: A002 - the functions torch 2.x removed: their signatures
    return None  # (torch's Python stubs raise whatever they get)


def _removed_eig(self, eigenvectors=False, *, e=None, v=None):
    return None


def _removed_rank(input, tol=None, symmetric=False, *, out=None):  # noqa: A002
    return None


def _removed_symeig(input, eigenvectors=False, upper=True, *, out=None):  # noqa: A002
    return None


def _removed_method(self, other):
    return None


def _removed_eig_method(self, eigenvectors=False):
    return None


_PYTHON_FUNCTIONS = {**{(n, False): _variadic(n) for n in ("atleast_1d", "atleast_2d", "atleast_3d",
                                                            "broadcast_tensors", "meshgrid", "cartesian_prod",
                                                            "block_diag")},
                     ("split", False): _split, ("split", True): _split, ("einsum", False): _einsum,
                     ("norm", False): _norm, ("norm", True): _norm, ("unflatten", True): _unflatten,
                     ("unique", False): _named_as(_unique, "_unique", "_return_output"),
                     ("unique", True): _named_as(_unique, "unique", "unique"),
                     **{(n, True): _named_as(_no_arguments, n, n) for n in ("is_shared", "share_memory_", "storage")},
                     ("apply_", True): _apply_,
                     ("unique_consecutive", False): _named_as(_unique_consecutive, "_unique_consecutive",
                                                              "_consecutive_return_output"),
                     ("unique_consecutive", True): _named_as(_unique_consecutive, "unique_consecutive",
                                                             "unique_consecutive"),
                     ("cdist", False): _cdist, ("chain_matmul", False): _chain_matmul,
                     ("stft", False): _named_as(_stft, "stft", "stft"),
                     ("stft", True): _named_as(_stft_method, "stft", "stft"),
                     ("istft", True): _named_as(_istft_method, "istft", "istft"),
                     ("lu", False): _lu, ("lu", True): _named_as(_lu_method, "lu", "lu"),
                     ("matrix_rank", False): _named_as(_removed_rank, "matrix_rank", "matrix_rank"),
                     ("symeig", False): _named_as(_removed_symeig, "symeig", "_symeig"),
                     ("eig", False): _named_as(_removed_eig, "eig", "eig"),
                     **{(n, False): _named_as(_removed_solve, n, n) for n in ("solve", "lstsq")},
                     **{(n, True): _named_as(_removed_method, n, n) for n in ("solve", "lstsq")},
                     **{(n, True): _named_as(_removed_eig_method, n, n) for n in ("eig", "symeig")}}

# torch lets Python numbers bind to these functions' Tensor parameters
_NUMBERS_AS_TENSORS = {"add", "add_", "div", "div_", "divide", "divide_", "mul", "mul_", "multiply", "multiply_",
                       "sub", "sub_", "subtract", "subtract_", "true_divide", "true_divide_", "to", "copy_",
                       "floor_divide", "floor_divide_"}
_NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"), "other": ("x2",)}
_OPT_TENSORS = "c10::List<::std::optional<Tensor>>"  # (index_put's indices: torch's parser wants Tensors there too)
_TYPE_NAMES = {"Tensor": "Tensor", "Scalar": "Number", "int64_t": "int", "SymInt": "int", "double": "float",
               "bool": "bool", "TensorList": "tuple of Tensors", "IntArrayRef": "tuple of ints",
               "SymIntArrayRef": "tuple of ints", "ScalarType": "torch.dtype", "Layout": "torch.layout",
               "Device": "torch.device", "MemoryFormat": "torch.memory_format", "Generator": "torch.Generator",
               "str": "str", "PyObject*": "object", "Storage": "torch.Storage", _OPT_TENSORS: "tuple of Tensors",
               "ArrayRef<double>": "tuple of floats", "ArrayRef<Scalar>": "tuple of Scalars"}
_TABLES = {False: {}, True: {}, None: _INNER}  # method? (None: the C functions of torch's Python functions)
for _names, _sigs in _FUNCTIONS.items():
    for _n in _names.split():
        _TABLES[False][_n] = _sigs
for _names, _sigs in _METHODS.items():
    for _n in _names.split():
        _TABLES[True][_n] = _sigs
_parsed = {}


class _Param:
    __slots__ = ("type", "name", "size", "optional", "allow_none", "keyword_only", "default")


class _Signature:
    __slots__ = ("params", "hidden", "min_args", "max_args", "max_pos_args")

    def __init__(self, text, numbers_as_tensors):
        self.hidden = text.startswith("hidden ")
        self.params = []
        keyword_only = False
        for item in text.removeprefix("hidden ").replace("TensorOptions", _OPTIONS).split(", ") if text else ():
            if item == "*":
                keyword_only = True
                continue
            p = _Param()
            kind, _, rest = item.partition(" ")
            p.allow_none = kind.endswith("?")
            kind = kind.rstrip("?")
            kind, _, size = kind.partition("[")
            p.type, p.size = kind, int(size.rstrip("]") or 0)
            p.name, eq, p.default = rest.partition("=")
            p.optional = bool(eq)
            p.allow_none = p.allow_none or p.default == "None"
            p.keyword_only = keyword_only
            if kind == "Tensor" and numbers_as_tensors:
                p.type = "Tensor|Number"
            self.params.append(p)
        self.max_args = len(self.params)
        self.min_args = sum(1 for p in self.params if not p.optional)
        self.max_pos_args = sum(1 for p in self.params if not p.keyword_only)

    def text(self):
        """The signature as torch's error messages print it."""
        out, star = [], False
        for p in self.params:
            if p.keyword_only and not star:
                out.append("*")
                star = True
            kind = _TYPE_NAMES[p.type.partition("|")[0]]
            out.append(f"{kind} {p.name}" + (f" = {p.default}" if p.optional else ""))
        return "(" + ", ".join(out) + ")"


def _signatures(name, method):
    """torch's signatures of the function (or Tensor method) ``name``, None where torch has no parsed signature."""
    key = (name, method)
    sigs = _parsed.get(key, False)
    if sigs is False:
        text = _TABLES[method].get(name, False)
        if text is False:
            text = _method_signatures(name) if method else None
        numbers = name in _NUMBERS_AS_TENSORS
        sigs = None if text is None else [_Signature(s, numbers) for s in text.split(" | ")]
        if sigs is not None:
            sigs.sort(key=lambda s: s.hidden)  # torch tries deprecated overloads last
        _parsed[key] = sigs
    return sigs


def _method_signatures(name):
    """A method's signatures from its function's: without ``Tensor input`` (overloads without it are not methods)
    and without ``out``."""
    text = _TABLES[False].get(name) or (_TABLES[False].get(name[:-1]) if name.endswith("_") else None)
    if text is None:
        return None
    out = []
    for sig in text.split(" | "):
        hidden = sig.startswith("hidden ")
        items = sig.removeprefix("hidden ").split(", ")
        if items[0] != "Tensor input":
            continue
        items = [i for i in items[1:] if not (i.startswith("Tensor") and i.endswith(" out=None"))]
        if items and items[-1] == "*":
            items.pop()
        out.append(("hidden " if hidden else "") + ", ".join(items))
    return " | ".join(out)


class _ParseError(Exception):
    """torch's TypeError for one call (raised inside the parser, returned to the guard)."""


def _type_name(obj):
    """The type name torch's parser prints: CPython's tp_name (a class defined in Python: its name; a C type: with
    its module), torch's names for torchlike's dtype, device and Size, and torch.Tensor for a real torch tensor
    (where torch's parser would print "Tensor")."""
    cls = type(obj)
    module = cls.__module__
    if isinstance(obj, Tensor) or module == "builtins":
        return cls.__name__
    if module.split(".")[0] in ("torch", "torchlike"):
        return "torch." + cls.__name__
    return cls.__name__ if cls.__flags__ & (1 << 9) else f"{module}.{cls.__name__}"  # (1 << 9: a heap type)


def _is_long(obj):
    """An int as torch's parser takes one (a NumPy integer too, never a bool)."""
    return isinstance(obj, (int, np.integer)) and not isinstance(obj, (bool, np.bool_))


def _is_index(obj):
    """Anything with ``__index__`` but a bool (a SymInt parameter, an int list's first element)."""
    if isinstance(obj, bool):
        return False
    try:
        operator.index(obj)
    except Exception:  # noqa: BLE001 - anything that is not an index
        return False
    return True


def _is_double(obj):
    """A float parameter's value: a Python or NumPy real number."""
    return isinstance(obj, (float, int, np.number, np.bool_))


def _is_scalar(obj):
    """A Python or NumPy number (a Number parameter, or a Tensor one that takes numbers)."""
    return isinstance(obj, (float, int, complex, np.number, np.bool_))


def _is_0d(obj, integral=False):
    """A 0-d tensor without grad, which torch's parser takes for a number."""
    return isinstance(obj, Tensor) and not obj._requires_grad and obj._data.ndim == 0 and (
        not integral or obj._data.dtype.kind in "iu")


def _int_list(obj, size):
    """(ok, failed element index) of an int-list argument."""
    if isinstance(obj, (tuple, list)):
        if not obj or _is_index(obj[0]):
            return True, -1
        return False, 0
    return size > 0 and _is_long(obj), -1


def _check(p, obj, argnum):
    """(ok, failed element index) of one argument against one parameter, as torch's FunctionParameter::check."""
    kind = p.type
    if kind == "Tensor":
        return isinstance(obj, Tensor), -1
    if kind == "Tensor|Number":
        return isinstance(obj, Tensor) or _is_scalar(obj), -1
    if kind in ("Scalar", "double"):
        return _is_double(obj) or (kind == "Scalar" and isinstance(obj, complex)) or _is_0d(obj), -1
    if kind == "int64_t":
        return _is_long(obj) or _is_0d(obj, integral=True), -1
    if kind == "SymInt":
        return _is_index(obj), -1
    if kind in ("IntArrayRef", "SymIntArrayRef"):
        return _int_list(obj, p.size)
    if kind in ("TensorList", _OPT_TENSORS):
        if not isinstance(obj, (tuple, list)):
            return False, -1
        for i, t in enumerate(obj):
            if not isinstance(t, Tensor):  # torch raises this one even while trying overloads
                raise _ParseError(f"expected Tensor as element {i} in argument {argnum}, but got {_type_name(t)}")
        return True, -1
    if kind == "ArrayRef<double>":  # (its first element decides)
        return isinstance(obj, (tuple, list)) and (not obj or _is_double(obj[0]) or isinstance(obj[0], complex)), -1
    if kind == "ArrayRef<Scalar>":
        return isinstance(obj, (tuple, list)) and all(_is_scalar(o) for o in obj), -1
    if kind == "bool":
        return isinstance(obj, bool), -1
    if kind == "ScalarType":
        return isinstance(obj, _dtype) or any(obj is t for t in (float, int, bool, complex)), -1
    if kind == "Device":
        return _is_long(obj) or isinstance(obj, (str, _device)), -1
    if kind == "str":
        return isinstance(obj, str), -1
    if kind == "PyObject*":
        return True, -1
    if kind == "Generator":
        return type(obj).__name__ == "Generator" and type(obj).__module__.startswith("torchlike"), -1
    if kind == "MemoryFormat":
        return type(obj).__name__ == "memory_format" and type(obj).__module__ == "torchlike", -1
    return False, -1  # Layout: torchlike has no such objects (None is its only value)


_MISSING = object()


def _parse(name, sig, args, kwargs, raise_error):
    """The arguments bound to ``sig``'s parameters as torch's parser binds them (None if they do not bind); with
    ``raise_error``, its TypeError instead of None."""
    nargs = len(args)
    params = sig.params
    varargs_list = sig.max_pos_args == 1 and params[0].type in ("IntArrayRef", "SymIntArrayRef")
    if nargs > sig.max_pos_args and not varargs_list:
        return _too_many(name, sig, nargs) if raise_error else None
    remaining = len(kwargs)
    bound = {}
    pos = 0
    for i, p in enumerate(params):
        obj, is_kwd = _MISSING, False
        if pos < nargs:
            if p.keyword_only:
                return _too_many(name, sig, nargs) if raise_error else None
            obj = args[pos]
        elif kwargs:
            obj = kwargs.get(p.name, _MISSING)
            for alias in _NUMPY_NAMES.get(p.name, ()):
                if obj is _MISSING:
                    obj = kwargs.get(alias, _MISSING)
            is_kwd = True
        if (obj is _MISSING and p.optional) or (obj is None and p.allow_none):
            pass
        elif obj is _MISSING:
            if not raise_error:
                return None
            missing = [f'"{q.name}"' for q in params[i:] if not q.optional]
            raise _ParseError(f"{name}() missing {len(missing)} required positional argument"
                              f"{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")  # (sic, torch's text)
        else:
            ok, failed = _check(p, obj, i)
            if not ok and varargs_list and pos == 0 and not is_kwd:
                if _int_list(args, p.size)[0]:  # f(2, 3) for f((2, 3))
                    bound[p] = args
                    pos = nargs
                    continue
                if nargs > 1:
                    return _too_many(name, sig, nargs) if raise_error else None
            if not ok:
                if not raise_error:
                    return None
                kind = _TYPE_NAMES[p.type.partition("|")[0]]
                if is_kwd:
                    raise _ParseError(f"{name}(): argument '{p.name}' must be {kind}, not {_type_name(obj)}")
                if failed != -1:
                    raise _ParseError(f"{name}(): argument '{p.name}' (position {pos + 1}) must be {kind}, but "
                                      f"found element of type {_type_name(obj[failed])} at pos {failed}")
                raise _ParseError(f"{name}(): argument '{p.name}' (position {pos + 1}) must be {kind}, not "
                                  f"{_type_name(obj)}")
            bound[p] = obj
        if not is_kwd:
            pos += 1
        elif obj is not _MISSING:
            remaining -= 1
    if pos < nargs:  # after a single int-list parameter
        return _too_many(name, sig, nargs) if raise_error else None
    if remaining > 0:
        if not raise_error:
            return None
        names = [p.name for p in params]
        for key in kwargs:
            if key not in names:
                raise _ParseError(f"{name}() got an unexpected keyword argument '{key}'")
            if names.index(key) < nargs:
                raise _ParseError(f"{name}() got multiple values for argument '{key}'")
        raise _ParseError("invalid keyword arguments")
    return bound


def _unpack(name, bound):
    """torch's error when an int list that parsed (its first element is an int) holds something else later."""
    for p, obj in bound.items():
        if p.type in ("IntArrayRef", "SymIntArrayRef") and isinstance(obj, (tuple, list)):
            for i, item in enumerate(obj):
                if not _is_index(item):
                    raise _ParseError(f"{name}(): argument '{p.name}' failed to unpack the object at pos {i + 1} "
                                      f'with error "type must be tuple of ints,but got {_type_name(item)}"')


def _too_many(name, sig, nargs):
    """torch's TypeError for too many positional arguments."""
    lo, hi = sig.min_args, sig.max_pos_args
    if lo != hi:
        raise _ParseError(f"{name}() takes from {lo} to {hi} positional arguments but {nargs} were given")
    raise _ParseError(f"{name}() takes {hi} positional argument{'' if hi == 1 else 's'} but {nargs} "
                      f"{'was' if nargs == 1 else 'were'} given")


def _argument_error(name, method, args, kwargs):
    """torch's TypeError for calling the function (or Tensor method, ``args[0]`` its tensor) ``name`` with (args,
    kwargs), or None where torch's parser accepts them."""
    adapter = _PYTHON_FUNCTIONS.get((name, method))
    if adapter is not None:  # a Python function in torch: its own binding errors, then its C function's parser
        try:
            call = adapter(*args, **kwargs)
        except TypeError as e:
            return TypeError(str(e).replace(f"{adapter.__name__}()", f"Tensor.{name}()" if method else f"{name}()"))
        except Exception:  # noqa: BLE001 - torch's Python code fails on these too (its errors are not parse errors)
            return None
        if call is None or isinstance(call, Exception):
            return call
        name, args, kwargs, method = call
    if method:
        args = args[1:]
    if name == "from_numpy":  # a one-argument builtin
        if kwargs:
            return TypeError("torch._VariableFunctionsClass.from_numpy() takes no keyword arguments")
        if len(args) != 1:
            return TypeError(f"torch._VariableFunctionsClass.from_numpy() takes exactly one argument "
                             f"({len(args)} given)")
    sigs = _signatures(name, method)
    if sigs is None:
        return None
    if method and sigs[0].max_args == 0 and len(sigs) == 1:  # METH_NOARGS: Python's own checks
        if kwargs:
            return TypeError(f"TensorBase.{name}() takes no keyword arguments")
        return TypeError(f"TensorBase.{name}() takes no arguments ({len(args)} given)") if args else None
    try:
        if len(sigs) == 1:
            _unpack(name, _parse(name, sigs[0], args, kwargs, True))
            return None
        for sig in sigs:
            bound = _parse(name, sig, args, kwargs, False)
            if bound is not None:
                _unpack(name, bound)
                return None
        n = len(args) + len(kwargs)
        plausible = [s for s in sigs if s.min_args <= n <= s.max_args and not s.hidden]
        if len(plausible) == 1:
            _parse(name, plausible[0], args, kwargs, True)
        return TypeError(_invalid_combination(name, [s for s in sigs if not s.hidden], args, kwargs))
    except _ParseError as e:
        return TypeError(str(e))


def _invalid_combination(name, sigs, args, kwargs):
    """torch's "received an invalid combination of arguments" message (format_invalid_args)."""
    msg = f"{name}() received an invalid combination of arguments - "
    if len(sigs) == 1:
        option = sigs[0].text()
        arguments = _option_arguments(option)
        start = max(len(arguments) - len(kwargs), 0)
        unmatched = [k for k in kwargs if k not in [a[1] for a in arguments[start:]]]
        if unmatched:
            return msg + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        desc = (_formatted_desc(arguments, args, kwargs) if len(arguments) == len(args) + len(kwargs)
                else _arg_desc(args, kwargs))
        return msg + f"got {desc}, but expected {option}"
    msg += f"got {_arg_desc(args, kwargs)}, but expected one of:\n"
    for sig in sigs:
        option = sig.text()
        msg += f" * {option}\n"
        arguments = _option_arguments(option)
        if len(arguments) == len(args) + len(kwargs):
            start = max(len(arguments) - len(kwargs), 0)
            unmatched = [k for k in kwargs if k not in [a[1] for a in arguments[start:]]]
            if unmatched:
                msg += "      didn't match because some of the keywords were incorrect: " + ", ".join(unmatched) + "\n"
            else:
                msg += ("      didn't match because some of the arguments have invalid types: "
                        + _formatted_desc(arguments, args, kwargs) + "\n")
    return msg


def _option_arguments(option):
    """(type, name) pairs as torch's message formatter reads a printed signature (``*`` counts as one)."""
    out = []
    for item in option[1:-1].split(", ") if option != "()" else ():
        kind, _, name = item.rpartition(" ")
        out.append((kind, name))
    return out


def _arg_desc(args, kwargs):
    """The given argument types, as "got (...)" prints them."""
    parts = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + (")" if args or not kwargs else ", )")


def _formatted_desc(arguments, args, kwargs):
    """The argument types with the ones that do not match marked !type!."""
    parts = []
    for i in range(len(args) + len(kwargs)):
        kind, name = arguments[i]
        if i < len(args):
            arg, prefix = args[i], ""
        elif name in kwargs:
            arg, prefix = kwargs[name], name + "="
        else:
            return _arg_desc(args, kwargs)
        matching = _type_name(arg) in {"float": ("float", "int"), "int": ("int",)}.get(kind, (kind,))
        text = _type_name(arg)
        if isinstance(arg, (tuple, list)):
            inner = ", ".join(_type_name(a) for a in arg)
            text += " of " + (f"({inner}{',' if len(arg) == 1 else ''})" if isinstance(arg, tuple) else f"[{inner}]")
        parts.append(prefix + (text if matching else f"!{text}!"))
    return "(" + ", ".join(parts) + (")" if args or not kwargs else ", )")


_UNARY_DUNDERS = {"__neg__": "neg", "__abs__": "abs", "__pos__": "positive", "__invert__": "__invert__"}


def _guard(fn, name, method):
    """``fn`` bound as the function (or Tensor method) ``name``: torch's TypeError for an argument it rejects."""
    if not isinstance(fn, types.FunctionType):  # a class, a generator object, a staticmethod, a property
        return fn
    seen = {}  # keyword -> the value types a parse accepted (a keyword with another type: parse the call first)
    typed, most, least = _typed_positions(name, method)

    def call(*args, **kwargs):
        if len(args) > most or len(args) + len(kwargs) < least:
            _check_keywords(name, method, args, kwargs, seen)
        for i, types_ in typed:
            if i < len(args) and not isinstance(args[i], types_):
                _check_keywords(name, method, args, kwargs, seen)
                break
        if kwargs:
            for k, v in kwargs.items():
                if type(v) not in seen.get(k, ()):  # (NumPy's names are never seen: renamed before the parse)
                    if not _TORCH_NAME_OF.keys().isdisjoint(kwargs):
                        kwargs = _torch_names(name, method, kwargs)
                    _check_keywords(name, method, args, kwargs, seen)
                    break
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - torch parses the arguments before anything else can fail
            if isinstance(e, TypeError) and e.__traceback__.tb_next is None:  # (binding fn: not a call inside)
                old = _deprecated_form(name, method, args)
                if old is not None:
                    return fn(*old[0], **old[1], **kwargs)
            error = _argument_error(name, method, args, kwargs)
            if error is None and not isinstance(e, TypeError):
                error = _autograd_error(name, method, args, kwargs)
            if error is not None:
                raise error from None
            if isinstance(e, TypeError) and e.__traceback__.tb_next is None:  # binding fn: name torch's name
                raise TypeError(str(e).replace(f"{fn.__qualname__}()", f"{name}()", 1)) from None
            raise
    call._seen = seen
    if name in _autocast_lists.AT_ENTRY:
        call = _cast_at_entry(call, name)
    return _named(call, fn, name)


def _cast_at_entry(call, name):
    """An op of torch's autocast lists: while autocast is on, its tensor arguments cast before anything else runs
    (torch's autocast wraps the whole op, so its checks see the cast dtypes)."""
    def cast_call(*args, **kwargs):
        cast = _registry._composite_cast
        if cast is not None:
            args = cast(name, args)
            if kwargs:
                kwargs = dict(zip(kwargs, cast(name, tuple(kwargs.values()))))
        return call(*args, **kwargs)
    cast_call._seen = call._seen
    return cast_call


# torch functions with no derivative (they never record a node, so never read their inputs' grad_fn)
_NOT_DIFFERENTIABLE = frozenset(
    "eq ne lt le gt ge greater greater_equal less less_equal not_equal equal isclose allclose logical_and logical_or "
    "logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift "
    "isnan isinf isfinite isposinf isneginf isreal is_nonzero signbit argmax argmin argsort argwhere nonzero "
    "count_nonzero bucketize searchsorted unique unique_consecutive histc bincount __eq__ __ne__ __lt__ "
    "__le__ __gt__ __ge__ __and__ __or__ __xor__ __invert__ __lshift__ __rshift__".split())  # (floor_divide records
# torch's NotImplemented node, so its autograd kernel runs first)


_NOT_WRITES = frozenset((  # methods named as in-place ops that torch's autograd kernel does not check first
    "detach_", "requires_grad_", "share_memory_", "apply_", "map_", "map2_", "set_", "resize_", "resize_as_",
    "fill_diagonal_"))
_NUMBER_OPS = frozenset("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split())


def _autograd_error(name, method, args, kwargs):
    """The error torch's autograd kernel raises before the op's own checks (which failed here): an in-place write
    it refuses, or an input whose grad_fn torch will not rebuild (a no_grad/multi-output view after its base
    changed); None when the op records nothing. Only looked at on the error path, so it costs nothing otherwise."""
    if not _gm._state.grad_enabled or name.strip("_") in _NOT_DIFFERENTIABLE or name in _NOT_DIFFERENTIABLE:
        return None
    tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, Tensor)]
    tensors += [t for a in args if isinstance(a, (list, tuple)) for t in a if isinstance(t, Tensor)]
    if not any(t._requires_grad for t in tensors):
        return None
    inplace = method and (name.endswith("_") and not name.endswith("__") and name not in _NOT_WRITES or
                          name.startswith("__i") and name[3:-2] in _NUMBER_OPS)
    if inplace and name == "copy_" and not _differentiable_dtype(args[0]._data.dtype):
        return None  # (copy_ into an integer tensor is outside autograd)
    if inplace and "out" not in kwargs:
        try:
            _registry._check_autograd_inplace(args[0], tensors)
        except RuntimeError as e:
            return e
    for t in tensors:
        if t._view_error is not None:
            return RuntimeError(t._view_error[0])
    return None


def _typed_positions(name, method):
    """(position, types) where every overload of torch's that takes an argument there wants a Tensor, or an int,
    the most positional arguments an overload takes and the fewest arguments one needs (self counted for a
    method)."""
    sigs = None if (name, method) in _PYTHON_FUNCTIONS else _signatures(name, method)
    if not sigs:
        return (), float("inf"), 0
    most = max(float("inf") if s.max_pos_args == 1 and s.params[0].type in ("IntArrayRef", "SymIntArrayRef")
               else s.max_pos_args for s in sigs) + bool(method)
    out = []
    for i in range(max(s.max_pos_args for s in sigs)):
        kinds = {(s.params[i].type, s.params[i].allow_none) for s in sigs if s.max_pos_args > i}
        if kinds == {("Tensor", False)}:
            out.append((i + 1 if method else i, Tensor))
        elif kinds <= {("int64_t", False), ("SymInt", False)}:
            out.append((i + 1 if method else i, (int, np.integer)))
    return tuple(out), most, min(s.min_args for s in sigs) + bool(method)


_MM = "Tensor mat1, Tensor mat2"
_DEPRECATED = {  # torch's deprecated positional overloads (its deprecated.yaml), which old code still calls:
    # (function?, name) -> [(old signature, the call in today's form)]
    **{(f, n): [("Tensor input, Scalar alpha, Tensor other", lambda i, a, o: ((i, o), {"alpha": a}))]
       for n in ("add", "sub") for f in (True, False)},
    **{(f, n): [("Tensor input, Scalar value, Tensor tensor1, Tensor tensor2",
                 lambda i, v, t1, t2: ((i, t1, t2), {"value": v}))] for n in ("addcmul", "addcdiv") for f in (True, False)},
    **{(True, n): [(f"Scalar beta, Tensor input, Scalar alpha, {_MM}",
                    lambda b, i, a, x, y: ((i, x, y), {"beta": b, "alpha": a})),
                   (f"Scalar beta, Tensor input, {_MM}", lambda b, i, x, y: ((i, x, y), {"beta": b}))]
       for n in ("addmm", "addmv", "addr", "addbmm", "baddbmm")},
    **{(False, n): [(f"Tensor input, Scalar beta, Scalar alpha, {_MM}",
                     lambda s, b, a, x, y: ((s, x, y), {"beta": b, "alpha": a})),
                    (f"Tensor input, Scalar beta, {_MM}", lambda s, b, x, y: ((s, x, y), {"beta": b}))]
       for n in ("addmm", "addmv", "addr", "addbmm", "baddbmm")},
}


def _deprecated_form(name, method, args):
    """A call in one of torch's deprecated positional forms (``add(x, 2, y)``, ``addmm_(beta, alpha, m1, m2)``):
    (args, keywords) of today's form, after torch's once-a-process warning; else None."""
    base = name[:-1] if method and name.endswith("_") and not name.endswith("__") else name
    for text, convert in _DEPRECATED.get((not method, base), ()):
        kinds = [item.split(" ")[0] for item in text.split(", ")]
        if len(kinds) == len(args) and all(
                isinstance(a, Tensor) if k == "Tensor" else isinstance(a, numbers.Number) and not isinstance(a, Tensor)
                for k, a in zip(kinds, args)):
            old = text.removeprefix("Tensor input, ") if method else text + ", *, Tensor out=None"
            new = _signatures(name, method)
            warn_once("deprecated overload", f"This overload of {name} is deprecated:\n\t{name}"
                      f"{_Signature(old, False).text()}\nConsider using one of the following signatures instead:\n\t"
                      f"{name}{new[0].text() if new else '()'}", stacklevel=3)
            return convert(*args)
    return None


_TORCH_NAME_OF = {alias: name for name, aliases in _NUMPY_NAMES.items() for alias in aliases}


def _torch_names(name, method, kwargs):
    """torch's parser takes NumPy's names for four parameters (``sum(axis=0, keepdims=True)``,
    ``cat(..., axis=1)``, ``add(x1=, x2=)``): ``kwargs`` with torch's names where a signature has the parameter
    (given both names, the NumPy one stays, and the parse refuses it as torch does)."""
    sigs = _signatures(name, method)
    if not sigs:
        return kwargs
    params = {p.name for s in sigs for p in s.params}
    out = {}
    for k, v in kwargs.items():
        torch_name = _TORCH_NAME_OF.get(k)
        out[torch_name if torch_name in params and k not in params and torch_name not in kwargs else k] = v
    return out


def _check_keywords(name, method, args, kwargs, seen):
    """Parse a call with a keyword of a type not seen accepted, more positional arguments than torch takes, or one
    not of the type every overload of torch's wants there: torch's TypeError, else remember the keywords' types."""
    error = _argument_error(name, method, args, kwargs)
    if error is not None:
        raise error
    for k, v in kwargs.items():
        seen.setdefault(k, set()).add(type(v))


def _binary_dunder(fn, name, op_name):
    """A binary dunder: NotImplemented where torch's parser rejects the operand (Python then tries the other side
    and raises its "unsupported operand type(s)"), as torch's dunders turn their TypeErrors into NotImplemented."""
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001
            if isinstance(e, TypeError) or _argument_error(op_name, True, args, kwargs) is not None:
                return NotImplemented
            error = _autograd_error(name, True, args, kwargs)
            if error is not None:
                raise error from None
            raise
    return _named(call, fn, name)


def _named(call, fn, name):
    """The guard reads as ``fn`` (its name the bound name; ``inspect.signature`` follows ``__wrapped__``)."""
    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = fn.__doc__
    call.__module__ = fn.__module__
    call.__wrapped__ = fn
    return call

"""Custom operators, as ``torch.library``: ``custom_op`` and ``register_autograd``.

    @torchlike.library.custom_op("mylib::scaled_sin", mutates_args=())
    def scaled_sin(x: Tensor, k: float) -> Tensor:
        return jnp.sin(x) * k          # JAX on arrays, or torchlike ops (``x.sin() * k``): both work

    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos() * ctx.k, None

    scaled_sin.register_autograd(backward, setup_context=setup_context)
    y = scaled_sin(x, 2.0)             # also torchlike.ops.mylib.scaled_sin(x, 2.0) and its ``.default``

The op's body runs as ONE ``jax.jit``-compiled function per input signature (tensor shapes and dtypes plus
the values of the non-Tensor arguments, which are static; count them with ``op._trace_count``). Inside it the
tensor arguments are torchlike Tensors wrapping JAX tracers, so methods that exist in both APIs have torch's
meaning; if the body turns out to be JAX code (``jnp`` functions do not accept torchlike Tensors), it is
traced again on the raw tracers, and that choice is remembered per kernel. A torchlike body can still use JAX
through ``jnp.asarray(t)`` and ``torchlike.as_tensor(array)``. Output shapes come from that abstract trace (``jax.make_jaxpr``, what ``jax.eval_shape``
does), so no fake kernel is needed (``register_fake`` is validated and stored, as torch's API does). The body
must be traceable: no ``.item()``/NumPy on tensor values, no value-dependent shapes. Mutated arguments are
written back in place with torch's version bumps (one for each argument in ``mutates_args``, plus one per
in-place op the body did on it); a JAX body cannot mutate.

Autograd follows torch's ``make_autograd_impl``: an ``autograd.Function`` named
``GeneratedBackwardFor_{ns}_{op}_default`` whose forward takes the arguments (trailing ones equal to their
defaults dropped, as torch's dispatcher does) plus one metadata slot, is applied only if grad mode is on and
some argument requires grad, and whose backward calls the registered formula (or raises torch's
"no autograd formula" error). ``List[Tensor]`` arguments and returns are flattened as torch's
``supports_tensorlist`` does, with its structure check.

One file per part: ``_schema`` (infer_schema, parsing, argument checks), ``_namespace`` (``torchlike.ops.<ns>``),
``_custom_op`` (CustomOpDef, ``register_*``), ``_autograd`` (the generated Function), ``_pytree`` (torch's pytree
rules on ``jax.tree_util``) and ``_legacy`` (torch's older ``torch._custom_op`` API, ``_legacy_custom_op``).
"""
from ._schema import infer_schema
from ._custom_op import CustomOpDef, custom_op, register_autograd, register_fake, register_kernel
# private names other code and the tests reach through ``torchlike.library``
from ._pytree import _tree_map  # noqa: F401
from ._legacy import (_legacy_custom_op, _namedtuple_args, _mark_non_differentiable,  # noqa: F401
                      _validate_grad_inputs_dict, _grad_inputs_dict_to_flat_tuple)

__all__ = ["custom_op", "CustomOpDef", "register_autograd", "register_fake", "register_kernel", "infer_schema"]

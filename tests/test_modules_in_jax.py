"""A torchlike module trained inside a JAX program (issue 15, item 4): its parameters are a pytree of arrays passed
through ``functional_call``, so ``jax.jit(jax.value_and_grad(interop.as_jax(loss)))`` compiles the whole step and
optax updates the parameters; step for step equal to torch with torch.optim.Adam on the same data."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import torch

import interop
import torchlike as tl

RNG = np.random.default_rng(0)
X, Y = RNG.standard_normal((16, 4)), RNG.standard_normal((16, 1))


def _weights():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()
    return ref, {k: v.detach().numpy().copy() for k, v in ref.state_dict().items()}


def _torch_losses(steps):
    model, _ = _weights()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(torch.tensor(X)) - torch.tensor(Y)) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {k: v.detach().numpy() for k, v in model.state_dict().items()}


@pytest.mark.parametrize("steps", [12])
def test_optax_training_step_equals_torch(steps):
    _, weights = _weights()
    model = tl.nn.Sequential(tl.nn.Linear(4, 8), tl.nn.Tanh(), tl.nn.Linear(8, 1)).double()
    params = {k: jnp.asarray(v) for k, v in weights.items()}

    def loss_fn(p, x, y):
        return ((tl.func.functional_call(model, p, (x,)) - y) ** 2).mean()

    opt = optax.adam(0.05)
    state = opt.init(params)

    @jax.jit
    def step(params, state, x, y):
        loss, grads = jax.value_and_grad(interop.as_jax(loss_fn))(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state, jnp.asarray(X), jnp.asarray(Y))
        losses.append(float(loss))
    expected_losses, expected = _torch_losses(steps)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-9)
    for k in expected:
        np.testing.assert_allclose(np.asarray(params[k]), expected[k], rtol=1e-8, atol=1e-12)
    # the module's own parameters were never touched (no tracer assigned to p.data)
    assert all(type(p._data).__name__ == "ArrayImpl" for p in model.parameters())

"""SparseAdam: torch's constructor checks; torchlike has no sparse gradients, so ``step`` with a (dense) gradient
raises torch's error."""
from ._single import _check, _check_betas
from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """SparseAdam, as ``torch.optim.SparseAdam``: it only updates from sparse-layout gradients, which torchlike
    does not produce, so a step over any parameter with a gradient raises torch's ``RuntimeError``."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 < lr, "learning rate", lr)
        _check(0.0 < eps, "epsilon value", eps)
        _check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_params = [[i, j] for i, group in enumerate(self.param_groups)
                          for j, p in enumerate(group["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not support complex "
                             "parameters")

    def step(self, closure=None):
        """Evaluate ``closure``; any parameter with a (necessarily dense) gradient raises torch's error."""
        loss = self._eval_closure(closure)
        if any(self._params_with_grad(group) for group in self.param_groups):
            raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss

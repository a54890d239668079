"""What torch's deprecated ``functorch`` package imports (``torch._functorch``), so ``import functorch`` works
with torchlike standing in for torch (tools/as_torch.py): thin layers over torchlike.func."""

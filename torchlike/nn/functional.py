"""torchlike.nn.functional: linear, activations, softmax family and losses."""

__all__ = []

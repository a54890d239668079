"""torch.utils: helpers that are not ops (``hooks``, ``data``). Submodules are imported on their own, as torch's
(``import torchlike`` imports ``data``; this data-model package cannot import a public-API one)."""

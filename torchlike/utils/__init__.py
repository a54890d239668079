"""torch.utils: helpers that are not ops (``hooks`` today). Submodules are imported on their own, as torch's."""

"""torch.utils.model_zoo: ``load_url`` is ``torch.hub.load_state_dict_from_url`` (and ``tqdm`` is the hub's, which
torchvision imports from here)."""
from ..hub import load_state_dict_from_url as load_url, tqdm  # noqa: F401

"""Op definitions, one module per family; importing them fills the op table and the Tensor methods."""
from . import creation, pointwise, reduction, shape, linalg, indexing, sorting, other, sampling, padding, spectral, special, elementwise  # noqa: F401,E501
from . import statistics  # noqa: F401,E402  (cov, corrcoef, histogram, histogramdd)
from . import linalg_module  # noqa: F401,E402  (torch.linalg's ops; torchlike.linalg exposes them)
from . import legacy, storage, tensor_types  # noqa: F401,E402  (torch.range/svd/qr/cholesky; storages; torch.FloatTensor)
from . import lowrank  # noqa: F401,E402  (torch.svd_lowrank, pca_lowrank)

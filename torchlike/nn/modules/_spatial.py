"""Issue 14's spatial-layer modules, gathered for one import line in modules/__init__."""
from . import (batchnorm, channelshuffle, conv, distance, dropout, fold, instancenorm, normalization, padding,
               pixelshuffle, pooling, sparse, upsampling)

_FILES = (batchnorm, channelshuffle, conv, distance, dropout, fold, instancenorm, normalization, padding, pixelshuffle,
          pooling, sparse, upsampling)
globals().update({n: getattr(m, n) for m in _FILES for n in m.__all__})
__all__ = sorted({n for m in _FILES for n in m.__all__})

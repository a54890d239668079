"""torch.autograd.anomaly_mode: anomaly detection switches (kept in ``torchlike._anomaly_mode``, below the op
table, which records forward traces)."""
from .._anomaly_mode import (detect_anomaly, set_detect_anomaly, is_anomaly_enabled,  # noqa: F401
                             is_anomaly_check_nan_enabled)

__all__ = ["detect_anomaly", "set_detect_anomaly"]

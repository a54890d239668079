"""Loss modules (torch.nn's): L1Loss, MSELoss, NLLLoss, CrossEntropyLoss, BCEWithLogitsLoss, SmoothL1Loss, ..., CTCLoss."""
import warnings

from .. import functional as F
from .._losses import _pairwise_distance
from .module import Module
from .utils import _deprecated

__all__ = ["L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss", "BCELoss",
           "KLDivLoss", "CosineEmbeddingLoss", "MarginRankingLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
           "CTCLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss",
           "MultiMarginLoss", "SoftMarginLoss", "HingeEmbeddingLoss", "NLLLoss2d"]


def _legacy_reduction(size_average, reduce):
    """torch's _Reduction.legacy_get_string: the reduction the deprecated arguments ask for, with its warning."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=4)
    return ret


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = _legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean (or sum, or none) of |input - target|."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean (or sum, or none) of (input - target)^2."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class-index targets (input holds log-probabilities)."""

    __constants__ = ["ignore_index", "reduction"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + nll_loss (class indices, optionally label-smoothed) or soft-target cross entropy."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy, with optional per-element ``weight`` and per-class ``pos_weight``."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)



class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities, with an optional rescaling ``weight``."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class KLDivLoss(_Loss):
    """Pointwise KL divergence (input: log-probabilities; target: probabilities, or log ones with log_target)."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class _MarginLoss(_Loss):
    __constants__ = ["margin", "reduction"]

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, *inputs):
        return type(self)._fn(*inputs, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""

    _fn = staticmethod(F.cosine_embedding_loss)


class MarginRankingLoss(_MarginLoss):
    """max(0, -target * (x1 - x2) + margin)."""

    _fn = staticmethod(F.margin_ranking_loss)


class HingeEmbeddingLoss(_MarginLoss):
    """input where target is 1, max(0, margin - input) where target is -1."""

    _fn = staticmethod(F.hinge_embedding_loss)

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise p-distance."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class _PairwiseDistance(Module):
    """torch.nn.PairwiseDistance's default (p=2, eps=1e-6): TripletMarginWithDistanceLoss's default distance."""

    def forward(self, x1, x2):
        return _pairwise_distance(x1, x2)

    def _get_name(self):
        return "PairwiseDistance"


class TripletMarginWithDistanceLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)) for any distance function d (default the pairwise 2-distance)."""

    __constants__ = ["margin", "swap", "reduction"]

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} "
                             f"instead")
        self.distance_function = distance_function if distance_function is not None else _PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative, distance_function=self.distance_function,
                                                   margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss."""

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


class PoissonNLLLoss(_Loss):
    """Negative log likelihood of a Poisson target."""

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log likelihood of a Gaussian target with predicted mean and variance."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Mean over classes of the binary logistic losses, optionally weighted per class."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Hinge loss between each target label (up to the first -1) and each non-target class."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input))."""

    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss: sum over j != y of max(0, margin - x[y] + x[j])^p / C."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


@_deprecated("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
             "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.")
class NLLLoss2d(NLLLoss):
    """NLLLoss under its deprecated name (a FutureWarning when made)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, ignore_index, reduce, reduction)

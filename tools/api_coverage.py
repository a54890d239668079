"""Which of torch's public names exist in torchlike: the README's coverage section is generated from this.

    python tools/api_coverage.py            # print the section
    python tools/api_coverage.py --write    # rewrite it in README.md (between the coverage markers)

Two counts per module: the day-one names (those a PyTorch user reaches for in a first week of ordinary training
scripts and tutorials, issue 14's list), each listed when missing, and all of torch's public names (``dir()``
without ``_`` names, submodules and typing helpers), counted only. tests/test_api_coverage.py checks that the
README's section is the one this prints.
"""
import argparse
import importlib
import inspect
import pathlib
import re
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent
START, END = "<!-- api-coverage:start -->", "<!-- api-coverage:end -->"


def _expand(text):
    """Names from a space-separated list; ``a/b/c`` suffix forms (atleast_1d/2d/3d, AdaptiveAvgPool1d/2d/3d)
    expand to each name."""
    names = []
    for word in text.split():
        head, *alts = word.split("/")
        names.append(head)
        stem = re.sub(r"(\d?d)$", "", head) if re.search(r"\dd$", head) else head
        names.extend(stem + alt if re.fullmatch(r"\d?d", alt) else alt for alt in alts)
    return names


_PADS = [f"{kind}Pad{n}d" for kind in ("Zero", "Constant", "Reflection", "Replication", "Circular") for n in (1, 2, 3)]

DAY_ONE = {
    "torch": _expand(
        "multinomial bernoulli normal poisson topk sort argsort msort unique unique_consecutive cdist det inverse logdet "
        "slogdet tril triu meshgrid cumprod diff roll repeat_interleave tile nan_to_num count_nonzero median nanmedian "
        "quantile nanquantile mode kthvalue searchsorted bucketize histc bincount cross kron trace diag diag_embed "
        "diagflat triu_indices tril_indices logspace dist cosine_similarity get_rng_state set_rng_state can_cast "
        "broadcast_tensors broadcast_to broadcast_shapes atleast_1d/2d/3d block_diag cartesian_prod combinations rot90 "
        "polar complex view_as_real view_as_complex erfinv lgamma digamma polygamma mvlgamma sinc logit xlogy heaviside "
        "signbit copysign nextafter std_mean var_mean aminmax cummax cummin logcumsumexp renorm addbmm baddbmm addmv "
        "addr chain_matmul nansum nanmean clamp fmax fmin isin take take_along_dim flatten column_stack row_stack "
        "hstack vstack dstack swapaxes swapdims moveaxis unflatten index_add index_copy index_fill index_put "
        "masked_scatter scatter_reduce"),
    "torch.Tensor": _expand(
        "normal_ uniform_ random_ exponential_ bernoulli_ geometric_ log_normal_ cauchy_ index_fill_ index_put_ "
        "scatter_reduce scatter_reduce_ topk sort argsort unique cumprod repeat_interleave unfold apply_ map_ pin_memory "
        "share_memory_ tril tril_ triu triu_ diag nan_to_num nan_to_num_"),
    "torch.linalg": _expand(
        "norm vector_norm matrix_norm det slogdet inv inv_ex pinv solve solve_ex lstsq cholesky cholesky_ex qr eig "
        "eigvals eigh eigvalsh svd svdvals matrix_rank matrix_power matrix_exp cross multi_dot householder_product lu "
        "lu_factor lu_solve solve_triangular tensorinv tensorsolve vander vecdot"),
    "torch.fft": _expand(
        "fft ifft rfft irfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn hfft ihfft fftfreq rfftfreq fftshift "
        "ifftshift"),
    "torch.special": _expand(
        "erf erfc erfcx erfinv expit logit xlogy xlog1py gammaln digamma polygamma multigammaln i0 i0e i1 i1e ndtr "
        "ndtri log_ndtr sinc entr logsumexp softmax log_softmax zeta bessel_j0 bessel_j1"),
    "torch.nn": _expand(
        "Flatten Unflatten Identity Conv1d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d MaxPool1d MaxPool3d "
        "AvgPool1d AvgPool3d AdaptiveAvgPool1d/2d/3d AdaptiveMaxPool1d/2d LPPool2d GroupNorm InstanceNorm1d/2d RMSNorm "
        "LocalResponseNorm BatchNorm3d Dropout1d Dropout2d Dropout3d AlphaDropout EmbeddingBag RNN LSTM GRU RNNCell "
        "LSTMCell GRUCell Transformer TransformerEncoder TransformerEncoderLayer TransformerDecoder "
        "TransformerDecoderLayer ReLU6 PReLU ELU SELU CELU Mish Hardtanh Hardswish Hardsigmoid Softmin Softsign "
        "Tanhshrink Softshrink Hardshrink Threshold GLU LogSigmoid Upsample PixelShuffle PixelUnshuffle "
        "ChannelShuffle Fold Unfold CosineSimilarity PairwiseDistance ParameterList ParameterDict DataParallel "
        "SmoothL1Loss HuberLoss BCELoss KLDivLoss CosineEmbeddingLoss MarginRankingLoss TripletMarginLoss "
        "TripletMarginWithDistanceLoss CTCLoss PoissonNLLLoss GaussianNLLLoss MultiLabelSoftMarginLoss "
        "MultiLabelMarginLoss MultiMarginLoss SoftMarginLoss HingeEmbeddingLoss") + _PADS,
    "torch.nn.Module": _expand(
        "register_module get_submodule get_parameter to_empty requires_grad_ share_memory half bfloat16 double "
        "float extra_repr"),
    "torch.nn.functional": _expand(
        "bilinear conv1d conv3d conv_transpose1d/2d/3d adaptive_avg_pool1d/2d/3d adaptive_max_pool1d/2d lp_pool2d "
        "relu6 mish elu selu celu hardtanh hardswish hardsigmoid softmin softsign tanhshrink softshrink hardshrink glu "
        "logsigmoid threshold prelu rrelu dropout1d/2d/3d alpha_dropout pad interpolate upsample grid_sample "
        "affine_grid unfold fold normalize cosine_similarity pairwise_distance group_norm instance_norm rms_norm "
        "local_response_norm embedding_bag gumbel_softmax pixel_shuffle pixel_unshuffle one_hot "
        "multi_head_attention_forward smooth_l1_loss huber_loss binary_cross_entropy kl_div cosine_embedding_loss "
        "margin_ranking_loss triplet_margin_loss triplet_margin_with_distance_loss ctc_loss poisson_nll_loss "
        "gaussian_nll_loss multilabel_soft_margin_loss multilabel_margin_loss multi_margin_loss soft_margin_loss "
        "hinge_embedding_loss"),
    "torch.nn.utils": _expand(
        "parameters_to_vector vector_to_parameters clip_grad_value_ rnn weight_norm spectral_norm parametrize "
        "parametrizations stateless fusion"),
    "torch.nn.utils.rnn": _expand("pack_padded_sequence pad_packed_sequence pad_sequence pack_sequence"),
    "torch.optim": _expand("RMSprop Adagrad Adadelta Adamax NAdam RAdam LBFGS SparseAdam swa_utils"),
    "torch.optim.lr_scheduler": _expand(
        "MultiStepLR ExponentialLR CosineAnnealingWarmRestarts OneCycleLR CyclicLR LambdaLR MultiplicativeLR "
        "ReduceLROnPlateau LinearLR ConstantLR SequentialLR ChainedScheduler PolynomialLR LRScheduler"),
    "torch.optim.swa_utils": _expand("AveragedModel SWALR update_bn"),
    "torch.distributions": _expand(
        "Distribution Normal MultivariateNormal LowRankMultivariateNormal Independent Categorical OneHotCategorical "
        "Bernoulli Binomial Poisson Uniform Beta Gamma Exponential Laplace Dirichlet LogNormal StudentT Cauchy Gumbel "
        "RelaxedBernoulli RelaxedOneHotCategorical MixtureSameFamily TransformedDistribution kl_divergence"),
    "torch.testing": _expand("assert_close"),
}

# torch's modules whose whole public surface is counted (the day-one lists above are checked name by name)
SURFACE = ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
           "torch.optim", "torch.optim.lr_scheduler", "torch.autograd", "torch.autograd.graph",
           "torch.autograd.forward_ad", "torch.autograd.functional", "torch.linalg", "torch.fft", "torch.special",
           "torch.func", "torch.distributions", "torch.utils.data", "torch.testing", "torch.cuda", "torch.amp"]


def _resolve(lib, dotted):
    """``lib``'s object for torch's dotted name (torch.Tensor -> lib.Tensor), or None."""
    obj = lib
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            try:
                obj = importlib.import_module(f"{lib.__name__}.{dotted.split('.', 1)[1]}")
            except ImportError:
                return None
            break
    return obj


def _public(obj):
    """torch's public names of a module or class: no ``_`` names, submodules or typing helpers."""
    names = []
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails on this machine (no GPU)
            continue
        if isinstance(value, types.ModuleType) or getattr(value, "__module__", "") in ("typing", "typing_extensions"):
            continue
        names.append(name)
    return names


def coverage():
    """{module: (day-one names present, day-one names missing, surface present, surface total)}."""
    import torch
    import torchlike
    out = {}
    for module in sorted(set(DAY_ONE) | set(SURFACE), key=lambda m: (m.count("."), m)):
        theirs, ours = _resolve(torch, module), _resolve(torchlike, module)
        day_one = DAY_ONE.get(module, [])
        have = [n for n in day_one if ours is not None and hasattr(ours, n)]
        missing = [n for n in day_one if n not in have]
        surface = _public(theirs) if module in SURFACE and theirs is not None else []
        present = [n for n in surface if ours is not None and hasattr(ours, n)]
        out[module] = (have, missing, len(present), len(surface))
    return out


def render(cov):
    have = sum(len(h) for h, _, _, _ in cov.values())
    total = have + sum(len(m) for _, m, _, _ in cov.values())
    lines = [START, "",
             f"Day-one names (issue 14's list): **{have} of {total}** exist. Whole public surface of each torch module "
             "(`dir()` without `_` names and submodules), for scale. Generated by `python tools/api_coverage.py "
             "--write`; `tests/test_api_coverage.py` keeps it current.", "",
             "| module | day-one names | whole surface | day-one names still missing |", "|---|---:|---:|---|"]
    for module, (h, m, present, total_surface) in cov.items():
        day = f"{len(h)} / {len(h) + len(m)}" if h or m else ""
        surf = f"{present} / {total_surface}" if total_surface else ""
        lines.append(f"| `{module}` | {day} | {surf} | {' '.join(m) if m else ''} |")
    lines += ["", END]
    return "\n".join(lines)


def readme_section(text):
    start, end = text.find(START), text.find(END)
    return None if start < 0 or end < 0 else text[start:end + len(END)]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", action="store_true")
    args = p.parse_args()
    section = render(coverage())
    if not args.write:
        print(section)
        return
    readme = ROOT / "README.md"
    text = readme.read_text()
    old = readme_section(text)
    if old is None:
        sys.exit(f"README.md has no {START} ... {END} section")
    readme.write_text(text.replace(old, section))


if __name__ == "__main__":
    main()

"""torch's autocast op lists (its autocast_mode.cpp), by torch's op names: the ops autocast runs in the lower
precision dtype, in float32, or in their inputs' widest dtype. torchlike.amp casts by them; ``_bind`` casts the
arguments of the public functions so named where they enter (before their own checks, as torch's autocast wraps
the whole op), the op table those of the ops composites run."""
_CPU_LOWER = ("conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear convolution matmul "
              "conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention "
              "_scaled_dot_product_flash_attention_for_cpu")
_CPU_FP32 = (
    "avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile cdist trace view_as_complex "
    "cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d adaptive_avg_pool3d "
    "reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d replication_pad3d mse_loss "
    "cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy "
    "l1_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss kl_div "
    "multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn "
    "fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank "
    "linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product "
    "linalg_tensorinv linalg_tensorsolve geqrf qr svd triangular_solve adaptive_max_pool3d linalg_qr "
    "linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex")
_CUDA_LOWER = "mm bmm addmm baddbmm addbmm mv dot conv1d conv2d conv3d convolution linear matmul prelu " \
              "conv_transpose1d conv_transpose2d conv_transpose3d scaled_dot_product_attention " \
              "_scaled_dot_product_flash_attention_for_cpu"
_CUDA_FP32 = (
    "acos asin cosh exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus layer_norm "
    "native_layer_norm group_norm norm frobenius_norm nuclear_norm cosine_similarity poisson_nll_loss "
    "cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss "
    "mse_loss margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss "
    "binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp prod softmax log_softmax cumsum cumprod "
    "linalg_vector_norm sum cross_entropy ctc_loss binary_cross_entropy")
LOWER = {"cpu": frozenset(_CPU_LOWER.split()), "cuda": frozenset(_CUDA_LOWER.split())}
FP32 = {"cpu": frozenset(_CPU_FP32.split()), "cuda": frozenset(_CUDA_FP32.split())}
PROMOTE = {"cpu": frozenset(), "cuda": frozenset("addcdiv addcmul atan2 scatter_add".split())}
# (cuda's float32 list is left to the op table: its ops are table ops whose wrappers check nothing first, and
# hot ones (sum, exp, softmax) should not pay the entry check)
AT_ENTRY = frozenset().union(*LOWER.values(), FP32["cpu"])

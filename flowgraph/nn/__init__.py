"""The `tf.nn` namespace: re-exports only."""

from flowgraph.nn import rnn_cell
from flowgraph.ops.embedding_ops import (
    embedding_lookup,
    embedding_lookup_sparse,
    safe_embedding_lookup_sparse,
)
from flowgraph.ops.math_ops import sigmoid, tanh
from flowgraph.ops.nn_conv3d_ops import (
    avg_pool3d,
    conv3d,
    conv3d_transpose,
    max_pool3d,
)
from flowgraph.ops.nn_conv_ops import (
    atrous_conv2d,
    conv1d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    convolution,
    depthwise_conv2d_native,
    separable_conv2d,
)
from flowgraph.ops.nn_extra_ops import (
    approx_max_k,
    approx_min_k,
    atrous_conv2d_transpose,
    avg_pool1d,
    avg_pool_v2,
    compute_average_loss,
    conv1d_transpose,
    crelu,
    depth_to_space,
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
    max_pool1d,
    max_pool_v2,
    pool,
    relu_layer,
    scale_regularization_loss,
    space_to_depth,
    swish,
    xw_plus_b,
    zero_fraction,
)
from flowgraph.ops.nn_impl import batch_normalization, dropout
from flowgraph.ops.nn_loss_ops import (
    in_top_k,
    l2_loss,
    log_poisson_loss,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
    top_k,
    weighted_cross_entropy_with_logits,
)
from flowgraph.ops.nn_norm_ops import (
    batch_norm_with_global_normalization,
    fused_batch_norm,
    local_response_normalization,
    lrn,
    normalize_moments,
    sufficient_statistics,
    weighted_moments,
)
from flowgraph.ops.nn_ops import (
    avg_pool,
    bias_add,
    conv2d,
    depthwise_conv2d,
    elu,
    l2_normalize,
    leaky_relu,
    log_softmax,
    max_pool,
    moments,
    relu,
    relu6,
    selu,
    softmax,
    softplus,
    softsign,
)
from flowgraph.ops.nn_ops import avg_pool as avg_pool2d
from flowgraph.ops.nn_ops import max_pool as max_pool2d
from flowgraph.ops.quantize_nn_ops import (
    quantized_avg_pool,
    quantized_conv2d,
    quantized_max_pool,
    quantized_relu_x,
)
from flowgraph.ops.rnn import (
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)

silu = swish
depthwise_conv2d_native_backprop_filter = depthwise_conv2d_backprop_filter
depthwise_conv2d_native_backprop_input = depthwise_conv2d_backprop_input


def __getattr__(name: str):
    from flowgraph.framework.missing_api import missing_attribute

    raise missing_attribute("nn", name)

# Sampled losses and samplers, CTC helpers, window ops and more spellings (issue 15).
from flowgraph.nn import experimental  # noqa: E402
from flowgraph.ops.array_extra_ops import space_to_batch  # noqa: E402
from flowgraph.ops.candidate_sampling_ops import *  # noqa: E402
from flowgraph.ops.ctc_decode_ops import *  # noqa: E402
from flowgraph.ops.ctc_ops import ctc_loss, ctc_loss_v2  # noqa: E402
from flowgraph.ops.nn_compat_ops import *  # noqa: E402
from flowgraph.ops.nn_pool_fractional import fractional_avg_pool, fractional_max_pool  # noqa: E402
from flowgraph.ops.nn_sampled_loss import *  # noqa: E402
from flowgraph.ops.rnn_raw import raw_rnn, static_state_saving_rnn  # noqa: E402

"""The `tf.nn` namespace: re-exports only."""

from flowgraph.nn import rnn_cell
from flowgraph.ops.embedding_ops import (
    embedding_lookup,
    embedding_lookup_sparse,
    safe_embedding_lookup_sparse,
)
from flowgraph.ops.math_ops import sigmoid, tanh
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
from flowgraph.ops.rnn import (
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)

"""`tf.contrib.layers`: TF1's regularizers and initializers, the functional layers
(`fully_connected`, `conv2d`, `batch_norm`, `flatten` in `layers.py`; pooling, dropout,
transposed and separable convolutions, `layer_norm`, `repeat`, `stack`, ... in
`layers_more.py`; all built on `tf.layers` / `tf.nn` and usable in `arg_scope`),
`utils` (output collections and end points) and `optimize_loss` (`optimizers.py`).

Example
-------
>>> import flowgraph as tf
>>> reg = tf.contrib.layers.l2_regularizer(0.1)
>>> round(float(tf.Session().run(reg(tf.constant([2.0])))), 6)
0.2
"""

from flowgraph.contrib.layers import utils
from flowgraph.contrib.layers.feature_column_layers import (
    input_from_feature_columns,
    joint_weighted_sum_from_feature_columns,
    safe_embedding_lookup_sparse,
    weighted_sum_from_feature_columns,
)
from flowgraph.contrib.layers.feature_column_utils import (
    check_feature_columns,
    infer_real_valued_columns,
    make_place_holder_tensors_for_base_features,
    parse_feature_columns_from_examples,
)
from flowgraph.contrib.layers.layers import (
    batch_norm,
    conv2d,
    convolution2d,
    flatten,
    fully_connected,
)
from flowgraph.contrib.layers.layers_more import (
    avg_pool2d,
    bias_add,
    conv2d_transpose,
    convolution2d_transpose,
    dropout,
    elu,
    embed_sequence,
    layer_norm,
    linear,
    max_pool2d,
    one_hot_encoding,
    relu,
    relu6,
    repeat,
    separable_conv2d,
    separable_convolution2d,
    softmax,
    stack,
    unit_norm,
)
from flowgraph.contrib.layers.normalization import instance_norm
from flowgraph.contrib.layers.optimizers import (
    OPTIMIZER_CLS_NAMES,
    OPTIMIZER_SUMMARIES,
    optimize_loss,
)
from flowgraph.contrib.layers.recompute_grad import recompute_grad
from flowgraph.contrib.learn.learn_feature_columns import (  # TF1's first feature columns
    bucketized_column,
    create_feature_spec_for_parsing,
    crossed_column,
    embedding_column,
    one_hot_column,
    real_valued_column,
    shared_embedding_columns,
    sparse_column_with_hash_bucket,
    sparse_column_with_integerized_feature,
    sparse_column_with_keys,
    sparse_column_with_vocabulary_file,
    weighted_sparse_column,
)
from flowgraph.ops.init_ops import (
    contrib_variance_scaling_initializer as variance_scaling_initializer,
)
from flowgraph.ops.init_ops import xavier_initializer
from flowgraph.ops.init_ops import xavier_initializer as xavier_initializer_conv2d
from flowgraph.ops.regularizers import (
    apply_regularization,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    sum_regularizer,
)

__all__ = [
    "OPTIMIZER_CLS_NAMES",
    "OPTIMIZER_SUMMARIES",
    "apply_regularization",
    "avg_pool2d",
    "batch_norm",
    "bias_add",
    "bucketized_column",
    "check_feature_columns",
    "conv2d",
    "conv2d_transpose",
    "convolution2d",
    "convolution2d_transpose",
    "create_feature_spec_for_parsing",
    "crossed_column",
    "dropout",
    "elu",
    "embed_sequence",
    "embedding_column",
    "flatten",
    "fully_connected",
    "infer_real_valued_columns",
    "input_from_feature_columns",
    "instance_norm",
    "joint_weighted_sum_from_feature_columns",
    "l1_l2_regularizer",
    "l1_regularizer",
    "l2_regularizer",
    "layer_norm",
    "linear",
    "make_place_holder_tensors_for_base_features",
    "max_pool2d",
    "one_hot_column",
    "one_hot_encoding",
    "optimize_loss",
    "parse_feature_columns_from_examples",
    "real_valued_column",
    "recompute_grad",
    "relu",
    "relu6",
    "repeat",
    "safe_embedding_lookup_sparse",
    "separable_conv2d",
    "separable_convolution2d",
    "shared_embedding_columns",
    "softmax",
    "sparse_column_with_hash_bucket",
    "sparse_column_with_integerized_feature",
    "sparse_column_with_keys",
    "sparse_column_with_vocabulary_file",
    "stack",
    "sum_regularizer",
    "unit_norm",
    "utils",
    "variance_scaling_initializer",
    "weighted_sparse_column",
    "weighted_sum_from_feature_columns",
    "xavier_initializer",
    "xavier_initializer_conv2d",
]

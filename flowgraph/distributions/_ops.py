"""The op library as one namespace for the distributions (``o.log(x)``): imports only."""

from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.ops.array_extra_ops import broadcast_dynamic_shape
from flowgraph.ops.array_gen_ops import one_hot, range, sequence_mask
from flowgraph.ops.array_identity_ops import identity, stop_gradient
from flowgraph.ops.array_index_ops import where_v2 as where  # TF's distributions: SelectV2
from flowgraph.ops.array_join_ops import concat, stack, tile
from flowgraph.ops.array_shape_ops import (
    expand_dims,
    fill,
    ones,
    ones_like,
    rank,
    reshape,
    shape,
    transpose,
    zeros,
    zeros_like,
)
from flowgraph.ops.check_compat_ops import assert_near
from flowgraph.ops.check_ops import (
    Assert,
    assert_equal,
    assert_less,
    assert_less_equal,
    assert_non_negative,
    assert_positive,
)
from flowgraph.ops.control_flow_ops import with_dependencies
from flowgraph.ops.functional_ops import map_fn
from flowgraph.ops.math_composite import lbeta, log_sigmoid
from flowgraph.ops.math_ops import (
    abs,
    cast,
    equal,
    erf,
    exp,
    expm1,
    greater,
    is_nan,
    less,
    log,
    log1p,
    logical_not,
    logical_or,
    maximum,
    minimum,
    rsqrt,
    sigmoid,
    sign,
    sqrt,
    square,
    squared_difference,
)
from flowgraph.ops.math_reduce import (
    argmax,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_prod,
    reduce_sum,
)
from flowgraph.ops.math_special import betainc, digamma, erfc, igamma, lgamma, ndtri, xlogy
from flowgraph.ops.nn_loss_ops import (
    sigmoid_cross_entropy_with_logits,
    sparse_softmax_cross_entropy_with_logits,
)
from flowgraph.ops.nn_ops import log_softmax, softmax, softplus
from flowgraph.ops.random_extra_ops import random_gamma
from flowgraph.ops.random_ops import multinomial, random_normal, random_uniform
from flowgraph.ops.tensor_compat import broadcast_static_shape

__all__ = [
    "Assert",
    "abs",
    "argmax",
    "assert_equal",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_non_negative",
    "assert_positive",
    "betainc",
    "broadcast_dynamic_shape",
    "broadcast_static_shape",
    "cast",
    "concat",
    "constant",
    "constant_value",
    "control_dependencies",
    "convert_to_tensor",
    "digamma",
    "equal",
    "erf",
    "erfc",
    "exp",
    "expand_dims",
    "expm1",
    "fill",
    "greater",
    "identity",
    "igamma",
    "is_nan",
    "lbeta",
    "less",
    "lgamma",
    "log",
    "log1p",
    "log_sigmoid",
    "log_softmax",
    "logical_not",
    "logical_or",
    "map_fn",
    "maximum",
    "minimum",
    "multinomial",
    "name_scope",
    "ndtri",
    "one_hot",
    "ones",
    "ones_like",
    "random_gamma",
    "random_normal",
    "random_uniform",
    "range",
    "rank",
    "reduce_all",
    "reduce_any",
    "reduce_logsumexp",
    "reduce_max",
    "reduce_prod",
    "reduce_sum",
    "reshape",
    "rsqrt",
    "sequence_mask",
    "shape",
    "sigmoid",
    "sigmoid_cross_entropy_with_logits",
    "sign",
    "softmax",
    "softplus",
    "sparse_softmax_cross_entropy_with_logits",
    "sqrt",
    "square",
    "squared_difference",
    "stack",
    "stop_gradient",
    "tile",
    "transpose",
    "where",
    "with_dependencies",
    "xlogy",
    "zeros",
    "zeros_like",
]

"""The `tf.debugging` namespace: re-exports only."""

from flowgraph.ops.check_extra_ops import assert_near, assert_same_float_dtype, assert_shapes
from flowgraph.ops.check_ops import (
    Assert,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_rank_at_least,
    assert_scalar,
    assert_type,
    check_numerics,
    is_numeric_tensor,
)
from flowgraph.ops.check_ops import verify_tensor_all_finite as assert_all_finite
from flowgraph.ops.math_ops import is_finite, is_inf, is_nan

__all__ = [
    "Assert",
    "assert_all_finite",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_rank",
    "assert_rank_at_least",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_shapes",
    "assert_type",
    "check_numerics",
    "is_finite",
    "is_inf",
    "is_nan",
    "is_numeric_tensor",
]

"""The `tf.debugging` namespace: the assertion and check ops, plus the process-wide
debugging switches (device-placement logging, check-numerics, traceback filtering) kept in
`flowgraph.framework.context_settings`."""

import types as _types

from flowgraph.debugging.switches import (
    disable_check_numerics,
    disable_dump_debug_info,
    disable_traceback_filtering,
    enable_check_numerics,
    enable_dump_debug_info,
    enable_traceback_filtering,
    get_log_device_placement,
    is_traceback_filtering_enabled,
    set_log_device_placement,
)
from flowgraph.ops.check_compat_ops import (
    assert_near,
    assert_proper_iterable,
    assert_rank_in,
    assert_same_float_dtype,
)
from flowgraph.ops.check_extra_ops import assert_shapes
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
from flowgraph.ops.math_composite import is_non_decreasing, is_strictly_increasing
from flowgraph.ops.math_ops import is_finite, is_inf, is_nan

experimental = _types.SimpleNamespace(disable_dump_debug_info=disable_dump_debug_info,
                                      enable_dump_debug_info=enable_dump_debug_info)

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
    "assert_proper_iterable",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_shapes",
    "assert_type",
    "check_numerics",
    "disable_check_numerics",
    "disable_traceback_filtering",
    "enable_check_numerics",
    "enable_traceback_filtering",
    "experimental",
    "get_log_device_placement",
    "is_finite",
    "is_inf",
    "is_nan",
    "is_non_decreasing",
    "is_numeric_tensor",
    "is_strictly_increasing",
    "is_traceback_filtering_enabled",
    "set_log_device_placement",
]

"""More of `tf.debugging`: `assert_shapes`, composed from the assertions of
`flowgraph.ops.check_ops` (TF1's `assert_near` and `assert_same_float_dtype`, the same
functions under ``tf.`` and ``tf.debugging.``, live in `check_compat_ops`)."""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.framework.operation import Operation
from flowgraph.ops.array_shape_ops import shape as _shape
from flowgraph.ops.check_ops import assert_equal, assert_rank
from flowgraph.ops.control_flow_ops import no_op

__all__ = ["assert_shapes"]


def assert_shapes(shapes, data=None, summarize=None, message=None, name=None) -> Operation:
    """Assert that tensors have the given shapes, with dimensions named by strings equal
    across tensors: ``assert_shapes([(x, ("N", 3)), (y, ("N",))])``. Static mismatches
    raise ValueError when the graph is built; the rest are checked when the op runs.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [None, 3])
    >>> tf.debugging.assert_shapes([(x, ("N", 3))]).type
    'NoOp'
    """
    prefix = f"{message}.  " if message else ""  # TF's prefix of static-check messages
    with name_scope(name, "assert_shapes", []):
        checks, sizes = [], {}
        for tensor, spec in shapes:
            t = convert_to_tensor(tensor)
            spec = list(spec) if not isinstance(spec, str) else [spec]
            static = t.shape
            if static.ndims is not None and static.ndims != len(spec):
                raise ValueError(f"{prefix}Tensor {t.name} must have rank {len(spec)}.  "
                                 f"Received rank {static.ndims}, shape {static}")
            if static.ndims is None:
                checks.append(assert_rank(t, len(spec), message=message))
            dyn = _shape(t)
            for i, want in enumerate(spec):
                have = static[i].value if static.ndims is not None else None
                if isinstance(want, str):
                    if want not in sizes:
                        sizes[want] = (have, dyn[i], t.name, i)
                        continue
                    known, ref, ref_name, ref_dim = sizes[want]
                    if known is not None and have is not None and known != have:
                        raise ValueError(f"{prefix}Specified by tensor {ref_name} dimension "
                                         f"{ref_dim}.  Tensor {t.name} dimension {i} must have "
                                         f"size {known}.  Received size {have}, shape "
                                         f"{static}")
                    if known is None or have is None:
                        checks.append(assert_equal(dyn[i], ref, data=data,
                                                   summarize=summarize, message=message))
                elif want is not None:
                    if have is not None and have != int(want):
                        raise ValueError(f"{prefix}Specified explicitly.  Tensor {t.name} "
                                         f"dimension {i} must have size {int(want)}.  "
                                         f"Received size {have}, shape {static}")
                    if have is None:
                        checks.append(assert_equal(dyn[i], int(want), data=data,
                                                   summarize=summarize, message=message))
    with control_dependencies(checks):
        return no_op(name="group_deps")

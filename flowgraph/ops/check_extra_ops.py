"""More of `tf.debugging`: `assert_near`, `assert_same_float_dtype`, `assert_shapes`,
composed from the assertions of `flowgraph.ops.check_ops`."""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.framework.operation import Operation
from flowgraph.ops import math_ops, math_reduce
from flowgraph.ops.array_shape_ops import shape as _shape
from flowgraph.ops.check_ops import Assert, assert_equal, assert_rank
from flowgraph.ops.control_flow_ops import no_op

__all__ = ["assert_near", "assert_same_float_dtype", "assert_shapes"]


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None) -> Operation:
    """Assert ``|x - y| <= atol + rtol * |y|`` element-wise; both tolerances default to
    ten times the dtype's machine epsilon.

    Example
    -------
    >>> import flowgraph as tf
    >>> ok = tf.debugging.assert_near(tf.constant(1.0), tf.constant(1.0 + 1e-7))
    >>> tf.Session().run(ok)
    """
    with name_scope(name, "assert_near", [x, y, rtol, atol]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        eps = np.finfo(x.dtype.base_dtype.as_numpy_dtype).eps
        rtol = convert_to_tensor(10 * eps if rtol is None else rtol, name="rtol",
                                 dtype=x.dtype.base_dtype)
        atol = convert_to_tensor(10 * eps if atol is None else atol, name="atol",
                                 dtype=x.dtype.base_dtype)
        if data is None:
            data = [message or "", "x and y not equal to tolerance rtol = ", rtol,
                    ", atol = ", atol, f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        diff = math_ops.abs(math_ops.subtract(x, y))
        tol = math_ops.add(atol, math_ops.multiply(rtol, math_ops.abs(y)))
        return Assert(math_reduce.reduce_all(math_ops.less_equal(diff, tol)), data,
                      summarize=summarize)


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of `tensors` (and `dtype`); ValueError when they differ
    or are not floating; float32 when there is nothing to check.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.debugging.assert_same_float_dtype([tf.constant(1.0), tf.constant(2.0)])
    tf.float32
    """
    found = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
    for t in tensors or []:
        d = t.dtype.base_dtype
        if found is None:
            found = d
        elif d != found:
            raise ValueError(f"{t.name}, type={d}, must be of the same type ({found}).")
    if found is None:
        return _dtypes.float32
    if not found.is_floating:
        raise ValueError(f"Expected floating point type, got {found}.")
    return found


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
    with name_scope(name, "assert_shapes", []):
        checks, sizes = [], {}
        for tensor, spec in shapes:
            t = convert_to_tensor(tensor)
            spec = list(spec) if not isinstance(spec, str) else [spec]
            static = t.shape
            if static.ndims is not None and static.ndims != len(spec):
                raise ValueError(f"{message + ' ' if message else ''}Specified by tensor "
                                 f"{t.name} dimension 0. Tensor {t.name} must have rank "
                                 f"{len(spec)}. Received rank {static.ndims}, shape {static}")
            if static.ndims is None:
                checks.append(assert_rank(t, len(spec), message=message))
            dyn = _shape(t)
            for i, want in enumerate(spec):
                have = static[i].value if static.ndims is not None else None
                if isinstance(want, str):
                    if want not in sizes:
                        sizes[want] = (have, dyn[i], t.name)
                        continue
                    known, ref, ref_name = sizes[want]
                    if known is not None and have is not None and known != have:
                        raise ValueError(f"{message + ' ' if message else ''}Specified by "
                                         f"tensor {t.name} dimension {i}. Tensor {ref_name} "
                                         f"dimension '{want}' must have size {known}; got "
                                         f"{have}")
                    if known is None or have is None:
                        checks.append(assert_equal(dyn[i], ref, data=data,
                                                   summarize=summarize, message=message))
                elif want is not None:
                    if have is not None and have != int(want):
                        raise ValueError(f"{message + ' ' if message else ''}Specified by "
                                         f"tensor {t.name} dimension {i}. Tensor {t.name} "
                                         f"dimension {i} must have size {int(want)}. "
                                         f"Received size {have}, shape {static}")
                    if have is None:
                        checks.append(assert_equal(dyn[i], int(want), data=data,
                                                   summarize=summarize, message=message))
    with control_dependencies(checks):
        return no_op(name="group_deps")

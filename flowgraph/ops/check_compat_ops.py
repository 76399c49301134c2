"""More of TF1's assertions: `assert_near`, `assert_rank_in`, `assert_proper_iterable`,
`assert_same_float_dtype` and `assert_variables_initialized`.

Example
-------
>>> import flowgraph as tf
>>> check = tf.assert_near(tf.constant([1.0, 2.0]), [1.0, 2.0000001])
>>> tf.Session().run(check) is None
True
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.array_shape_ops import rank
from flowgraph.ops.check_ops import Assert, _with_message
from flowgraph.ops.math_ops import abs as _abs
from flowgraph.ops.math_ops import cast, equal, less, logical_or
from flowgraph.ops.math_reduce import reduce_all, reduce_any

__all__ = ["assert_near", "assert_proper_iterable", "assert_rank_in",
           "assert_same_float_dtype", "assert_variables_initialized"]


def assert_near(x, y, rtol=None, atol=None, data=None, summarize=None, message=None,
                name=None):
    """An op failing unless ``|x - y| < atol + rtol * |y|`` element-wise (default
    tolerances ``10 * eps`` of the dtype).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     try:
    ...         sess.run(tf.assert_near(tf.constant(1.0), 1.1))
    ...     except tf.errors.InvalidArgumentError:
    ...         print("not near")
    not near
    """
    with name_scope(name, "assert_near", [x, y, rtol, atol]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        dtype = x.dtype.base_dtype
        eps = float(np.finfo(dtype.as_numpy_dtype).eps) if dtype.is_floating else 0.0
        rtol_t = convert_to_tensor(10 * eps if rtol is None else rtol, dtype=dtype,
                                   name="rtol")
        atol_t = convert_to_tensor(10 * eps if atol is None else atol, dtype=dtype,
                                   name="atol")
        if data is None:
            data = [f"x and y not equal to tolerance rtol = {rtol_t}, atol = "
                    f"{atol_t}", f"x ({x.name}) = ", x, f"y ({y.name}) = ", y]
        data = _with_message(f"{message}.  " if message else None, data)  # TF's prefix
        tol = atol_t + rtol_t * _abs(y)
        close = less(_abs(x - y), tol)  # strictly less, as TF (zero tolerances never pass)
        # no check of constants while building: TF's assert_near fails when it runs
        return Assert(reduce_all(close), data, summarize=summarize)


def assert_rank_in(x, ranks, data=None, summarize=None, message=None, name=None):
    """An op failing unless the rank of `x` is one of `ranks`; a ValueError now when the
    ranks are known already.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.assert_rank_in(tf.zeros([2, 3]), [1, 2]).type
    'NoOp'
    """
    from flowgraph.ops.control_flow_ops import no_op

    with name_scope(name, "assert_rank_in", [x, *ranks]):
        x = convert_to_tensor(x, name="x")
        ranks_t = [convert_to_tensor(r, name="rank") for r in ranks]
        for r in ranks_t:
            if r.shape.ndims not in (None, 0):
                raise ValueError(f"assert_rank_in: each rank must be a scalar, got shape "
                                 f"{r.shape}")
        static = [constant_value(r) for r in ranks_t]
        if x.shape.ndims is not None and all(s is not None for s in static):
            wanted = [int(s) for s in static]
            if x.shape.ndims not in wanted:
                prefix = f"{message}.  " if message else ""
                raise ValueError(f"{prefix}Tensor {x.name} must have rank in {wanted}.  "
                                 f"Received rank {x.shape.ndims}, shape {x.shape}")
            return no_op(name="static_checks_determined_all_ok")
        if data is None:
            data = [f"Tensor {x.name} must have rank in", *ranks_t, "Received rank:",
                    rank(x)]
        data = _with_message(message, data)
        actual = rank(x)
        hits = [equal(actual, cast(r, _dtypes.int32)) for r in ranks_t]
        ok = hits[0]
        for h in hits[1:]:
            ok = logical_or(ok, h)
        return Assert(reduce_any(ok), data, summarize=summarize)


def assert_proper_iterable(values):
    """Raise TypeError unless `values` is an iterable of values, not a Tensor, an array
    or a string (which are iterable but usually passed by mistake).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.assert_proper_iterable([1, 2])
    >>> try:
    ...     tf.assert_proper_iterable("ab")
    ... except TypeError:
    ...     print("rejected")
    rejected
    """
    unintentional = (Tensor, SparseTensor, np.ndarray, np.generic, str, bytes)
    if isinstance(values, unintentional):
        raise TypeError("Expected argument \"values\" to be a \"proper\" iterable.  Found: "
                        f"{type(values)}")
    if not hasattr(values, "__iter__"):
        raise TypeError(f'Expected argument "values" to be iterable.  Found: {type(values)}')


def assert_same_float_dtype(tensors=None, dtype=None):
    """The common floating dtype of `tensors` (and `dtype`); a ValueError if they differ
    or are not floating. float32 when there is nothing to check.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.assert_same_float_dtype([tf.constant(1.0), tf.constant([2.0])]).name
    'float32'
    """
    found = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
    first = None  # the tensor that set `found` (named in TF's message)
    for t in tensors or []:
        if t is None:
            continue
        t_dtype = t.dtype.base_dtype
        if found is None:
            found, first = t_dtype, getattr(t, "name", str(t))
        elif t_dtype != found:
            as_first = f" as {first}" if first is not None else ""
            raise ValueError(f"{getattr(t, 'name', t)}, type={t_dtype}, must be of the same "
                             f"type ({found}){as_first}.")
    if found is None:
        return _dtypes.float32
    if not found.is_floating:
        raise ValueError(f"Expected floating point type, got {found}.")
    return found


def assert_variables_initialized(var_list=None):
    """An op that reads every variable of `var_list` (default: all global and local
    variables), failing with FailedPreconditionError for one not initialized; None when
    there are no variables.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable(1.0)
    >>> check = tf.assert_variables_initialized([v])
    >>> with tf.Session() as sess:
    ...     try:
    ...         sess.run(check)
    ...     except tf.errors.FailedPreconditionError:
    ...         print("uninitialized")
    uninitialized
    """
    from flowgraph.ops.array_identity_ops import identity
    from flowgraph.ops.control_flow_ops import group
    from flowgraph.ops.variables import global_variables, local_variables

    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    with name_scope(None, "assert_variables_initialized", []):
        return group(*[identity(v) for v in var_list])

"""TF1's older scope spellings and `init_scope`, plus the variable partitioners
(`fixed_size_partitioner`, `min_max_variable_partitioner`,
`variable_axis_size_partitioner`).

A partitioner is a function ``(shape, dtype) -> list of partitions per axis`` that
`tf.get_variable(partitioner=...)` calls; flowgraph creates one unpartitioned variable
(and warns) but the partition lists are computed as TensorFlow computes them, so code
that calls a partitioner itself gets TensorFlow's answer.

Example
-------
>>> import flowgraph as tf
>>> tf.fixed_size_partitioner(3)(shape=tf.TensorShape([10, 4]), dtype=tf.float32)
[3, 1]
"""

from __future__ import annotations

import contextlib
import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.framework.tensor_shape import as_shape
from flowgraph.ops.variable_scope import variable_scope

__all__ = ["fixed_size_partitioner", "init_scope", "min_max_variable_partitioner",
           "op_scope", "variable_axis_size_partitioner", "variable_op_scope"]


def op_scope(values, name, default_name=None):
    """The deprecated spelling of ``tf.name_scope(name, default_name, values)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.op_scope([], "layer") as scope:
    ...     print(scope)
    layer/
    """
    return name_scope(name, default_name, values)


def variable_op_scope(values, name_or_scope, default_name=None, initializer=None,
                      regularizer=None, caching_device=None, partitioner=None,
                      custom_getter=None, reuse=None, dtype=None, use_resource=None,
                      constraint=None):
    """The deprecated spelling of ``tf.variable_scope(name_or_scope, default_name,
    values, ...)``."""
    return variable_scope(name_or_scope, default_name=default_name, values=values,
                          initializer=initializer, regularizer=regularizer,
                          caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype,
                          use_resource=use_resource, constraint=constraint)


@contextlib.contextmanager
def init_scope():
    """A context for creating state (variables, initializers) from inside other code:
    the control dependencies in force are cleared. flowgraph has no function graphs or
    eager mode, so the default graph stays the default.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.control_dependencies([tf.no_op()]):
    ...     with tf.init_scope():
    ...         c = tf.constant(1.0)
    >>> c.op.control_inputs
    []
    """
    with get_default_graph().control_dependencies(None):
        yield


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner splitting `axis` into `num_shards` parts.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.fixed_size_partitioner(2, axis=1)(shape=[4, 6], dtype=tf.float32)
    [1, 2]
    """
    def partitioner(shape, **unused):
        shape = as_shape(shape)
        parts = [1] * shape.ndims
        parts[axis] = min(int(num_shards), shape.dims[axis].value)
        return parts

    return partitioner


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16,
                                   max_shards=None):
    """A partitioner splitting `axis` so that each shard holds at most `max_shard_bytes`
    (a string element counts `bytes_per_string_element`), capped at `max_shards`.

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.variable_axis_size_partitioner(max_shard_bytes=4 * 100)
    >>> p(shape=tf.TensorShape([1000, 2]), dtype=tf.float32)
    [20, 1]
    """
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be "
                         "positive.")
    if max_shards is not None and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def partitioner(shape, dtype, **unused):
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape must be fully defined to partition, got {shape}")
        dtype = _dtypes.as_dtype(dtype)
        if dtype.base_dtype == _dtypes.string:
            element = bytes_per_string_element
        else:
            element = dtype.size
        dims = shape.as_list()
        slice_elements = math.prod(d for i, d in enumerate(dims) if i != axis)
        slice_bytes = slice_elements * element
        slices_per_shard = max(1, max_shard_bytes // slice_bytes)
        shards = math.ceil(dims[axis] / slices_per_shard)
        if max_shards is not None:
            shards = min(shards, max_shards)
        parts = [1] * len(dims)
        parts[axis] = max(1, min(dims[axis], shards))
        return parts

    return partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10,
                                 bytes_per_string_element=16):
    """A partitioner splitting `axis` into as many parts as keep each at least
    `min_slice_size` bytes, at most `max_partitions`.

    Example
    -------
    >>> import flowgraph as tf
    >>> p = tf.min_max_variable_partitioner(max_partitions=4, min_slice_size=1024)
    >>> p(shape=[1000, 2], dtype=tf.float32)
    [4, 1]
    """
    def partitioner(shape, dtype, **unused):
        shape = as_shape(shape)
        if not shape.is_fully_defined():
            raise ValueError(f"shape must be fully defined to partition, got {shape}")
        dtype = _dtypes.as_dtype(dtype)
        element = bytes_per_string_element if dtype.base_dtype == _dtypes.string \
            else dtype.size
        dims = shape.as_list()
        total = math.prod(dims) * element
        parts_by_size = max(1, math.ceil(total / min_slice_size))
        parts = [1] * len(dims)
        parts[axis] = max(1, int(min(max_partitions, parts_by_size, dims[axis])))
        return parts

    return partitioner

"""The global step: the int64 scalar variable that counts training steps.

It is named ``global_step``, lives in ``GLOBAL_VARIABLES`` and ``GLOBAL_STEP``, is not
trainable, and is created with `tf.get_variable` (so at the current variable scope) at
the root name scope. Optimizers increment it; hooks and checkpoints read it.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     with tf.Session() as sess:
...         sess.run(step.initializer)
...         print(step.name, tf.train.global_step(sess, step))
global_step:0 0
"""

from __future__ import annotations

import logging

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.framework.operation import Tensor
from flowgraph.ops import init_ops, variable_scope
from flowgraph.ops.state_ops import read_variable_or_default
from flowgraph.ops.variables import Variable

__all__ = [
    "assert_global_step",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
]

_logger = logging.getLogger("tensorflow")
GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def global_step(sess, global_step_tensor) -> int:
    """The value of `global_step_tensor` in session `sess`, as a Python int.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.create_global_step()
    ...     with tf.Session() as sess:
    ...         _ = sess.run(tf.assign(step, 7))
    ...         print(tf.train.global_step(sess, step))
    7
    """
    return int(sess.run(global_step_tensor))


def get_global_step(graph=None):
    """The global step of `graph` (default graph): the one item of the ``GLOBAL_STEP``
    collection, else the tensor named ``global_step:0``, else None.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.train.get_global_step())
    None
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        _logger.error("Multiple tensors in global_step collection.")
        return None
    if found:
        step = found[0]
    else:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except (KeyError, ValueError):
            return None
    assert_global_step(step)
    return step


def create_global_step(graph=None) -> Variable:
    """Create the global step in `graph`; a ValueError if it already exists.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     step = tf.train.create_global_step()
    ...     print(step.dtype.base_dtype.name, step.shape, step.trainable)
    int64 () False
    """
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), graph.name_scope(None):
        return variable_scope.get_variable(
            GraphKeys.GLOBAL_STEP, shape=[], dtype=_dtypes.int64,
            initializer=init_ops.zeros_initializer(), trainable=False,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph=None):
    """The global step of `graph`, created first if there is none.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     a = tf.train.get_or_create_global_step()
    ...     print(a is tf.train.get_or_create_global_step())
    True
    """
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def assert_global_step(global_step_tensor) -> None:
    """TypeError unless `global_step_tensor` is a scalar integer Variable or Tensor.

    Example
    -------
    >>> import flowgraph as tf
    >>> try:
    ...     tf.train.assert_global_step(tf.constant(1.0))
    ... except TypeError as e:
    ...     print(e)
    Existing "global_step" does not have integer type: <dtype: 'float32'>
    """
    if not isinstance(global_step_tensor, Variable | Tensor):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: '
                        f"{global_step_tensor}.")
    dtype = global_step_tensor.dtype
    if not dtype.base_dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: '
                        f"<dtype: '{dtype.name}'>")
    shape = global_step_tensor.shape
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')


def _get_global_step_read(graph=None):
    """The cached read of the global step (a tensor), or None."""
    graph = graph or get_default_graph()
    cached = graph.get_collection(GLOBAL_STEP_READ_KEY)
    if len(cached) > 1:
        raise RuntimeError(f"There are multiple items in the {GLOBAL_STEP_READ_KEY} "
                           "collection.")
    return cached[0] if cached else None


def _get_or_create_global_step_read(graph=None):
    """A read of the global step that runs after its initializer, shared per graph;
    None when the graph has no global step."""
    graph = graph or get_default_graph()
    read = _get_global_step_read(graph)
    if read is not None:
        return read
    step = get_global_step(graph)
    if step is None:
        return None
    with graph.as_default(), graph.name_scope(None), graph.name_scope(
            step.op.name + "/"):
        value = step
        if isinstance(step, Variable):
            # Usable before the variable is initialized (Estimator builds model_fn
            # under a dependency on this read): the initial value until then.
            value = read_variable_or_default(step, step.initial_value)
        read = value + 0  # a fresh tensor under global_step/
        graph.add_to_collection(GLOBAL_STEP_READ_KEY, read)
    return read


def _increment_global_step(increment, graph=None):
    """An op adding `increment` to the global step (which must exist)."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    if step is None:
        raise ValueError("Global step tensor should be created by "
                         "tf.train.get_or_create_global_step before calling increment.")
    read = _get_or_create_global_step_read(graph)
    with graph.as_default(), graph.name_scope(read.op.name.rsplit("/", 1)[0] + "/"), \
            graph.control_dependencies([read]):
        return step.assign_add(increment)

"""The tensor functions of `tf.keras.backend` (``K.mean``, ``K.square``, ``K.function``,
...): thin, Keras-flavoured spellings of flowgraph ops, as custom losses and metrics in
TF1-era Keras code use them.

Keras conventions differ from the ops' in small ways kept here: ``axis`` / ``keepdims``
keyword names, reductions over all axes by default, `binary_crossentropy` and
`categorical_crossentropy` taking ``(target, output)`` and probabilities unless
``from_logits``, `int_shape` giving a tuple with None for unknown dimensions, and
`function` returning a callable that runs a session on a list of inputs.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> K = tf.keras.backend
>>> with tf.Graph().as_default():
...     x = K.placeholder(shape=(None, 2))
...     f = K.function([x], [K.sum(K.square(x), axis=1)])
...     print(K.int_shape(x), f([np.array([[1.0, 2.0]])])[0])
(None, 2) [5.]
"""

from __future__ import annotations

import builtins

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant as _constant
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.graph import name_scope as _name_scope
from flowgraph.keras import backend as _state
from flowgraph.keras import losses as _losses
from flowgraph.ops import (
    array_gen_ops,
    array_identity_ops,
    array_index_ops,
    array_join_ops,
    array_ops,
    array_shape_ops,
    math_composite,
    math_ops,
    math_reduce,
    nn_ops,
    random_ops,
    state_ops,
)
from flowgraph.ops import (
    gradients as _gradients,
)
from flowgraph.ops import variables as _variables

__all__ = [
    "abs", "all", "any", "arange", "argmax", "argmin", "batch_dot", "batch_flatten",
    "binary_crossentropy", "cast", "cast_to_floatx", "categorical_crossentropy", "clip",
    "concatenate", "constant", "cos", "count_params", "cumprod", "cumsum", "dot", "dtype",
    "elu", "equal", "eval", "exp", "expand_dims", "eye", "flatten", "function", "gather",
    "get_uid", "gradients", "greater", "greater_equal", "in_test_phase", "in_train_phase",
    "int_shape", "is_keras_tensor",
    "l2_normalize", "less", "less_equal", "log", "max", "maximum", "mean", "min",
    "minimum", "name_scope", "ndim", "not_equal", "one_hot", "ones", "ones_like",
    "permute_dimensions", "placeholder", "pow", "prod", "random_normal",
    "random_uniform", "relu", "repeat_elements", "reset_uids", "reshape", "reverse",
    "round", "shape", "sigmoid", "sign", "sin", "softmax", "softplus", "softsign",
    "sparse_categorical_crossentropy", "sqrt", "square", "squeeze", "stack", "std",
    "stop_gradient", "sum", "switch", "tanh", "tile", "transpose", "truncated_normal",
    "update", "update_add", "update_sub", "var", "variable", "zeros", "zeros_like",
]

name_scope = _name_scope
_uid_counters: dict = {}


def _t(x):
    return convert_to_tensor(x)


def _dt(dtype):
    return _dtypes.as_dtype(dtype or _state.floatx())


# -- creating tensors and variables --------------------------------------------------------
def variable(value, dtype=None, name=None, constraint=None):
    """A variable holding `value` (floatx unless `dtype`), initialized by `get_session`."""
    value = np.asarray(value, dtype=_dt(dtype).as_numpy_dtype)
    return _variables.Variable(value, dtype=_dt(dtype), name=name or "Variable",
                               use_resource=True)  # a resource variable, as TF 2.15's


def constant(value, dtype=None, shape=None, name=None):
    """A constant tensor of `value` (floatx unless `dtype`)."""
    return _constant(value, dtype=_dt(dtype), shape=shape, name=name or "Const")


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """A placeholder of `shape` (or of `ndim` unknown dimensions), floatx by default."""
    if shape is None and ndim is not None:
        shape = (None,) * ndim
    return array_ops.placeholder(_dt(dtype), shape=shape, name=name)


def _variable_of(value, dtype, name):
    """As Keras: a tensor of a known shape without empty dimensions becomes a variable
    holding it (named `name`, or ``Variable``); any other stays a tensor."""
    dims = value.shape.as_list() if value.shape.is_fully_defined() else [None]
    if not builtins.all(dims):
        return value
    return _variables.Variable(value, dtype=_dt(dtype), name=name or "Variable",
                               use_resource=True)


def zeros(shape, dtype=None, name=None):
    """A variable of zeros (a tensor if `shape` is not fully known), as Keras.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     print(tf.keras.backend.zeros((2, 2), name="z").name)
    z_1:0
    """
    return _variable_of(array_shape_ops.zeros(shape, dtype=_dt(dtype), name=name),
                        dtype, name)


def ones(shape, dtype=None, name=None):
    """A variable of ones (a tensor if `shape` is not fully known), as Keras."""
    return _variable_of(array_shape_ops.ones(shape, dtype=_dt(dtype), name=name),
                        dtype, name)


def eye(size, dtype=None, name=None):
    """A variable holding the identity matrix of `size` (rows, or (rows, columns))."""
    from flowgraph.ops.linalg_basic import eye as _eye

    rows, cols = (size, None) if isinstance(size, int) else size
    return _variable_of(_eye(rows, cols, dtype=_dt(dtype)), dtype, name)


def zeros_like(x, dtype=None, name=None):
    return array_shape_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return array_shape_ops.ones_like(x, dtype=dtype, name=name)


def arange(start, stop=None, step=1, dtype="int32"):
    if stop is None:
        start, stop = 0, start
    return array_gen_ops.range(start, stop, step, dtype=_dtypes.as_dtype(dtype))


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random_ops.random_normal(shape, mean, stddev, dtype=_dt(dtype), seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return random_ops.random_uniform(shape, minval, maxval, dtype=_dt(dtype), seed=seed)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random_ops.truncated_normal(shape, mean, stddev, dtype=_dt(dtype), seed=seed)


# -- inspecting ----------------------------------------------------------------------------
def int_shape(x) -> tuple | None:
    """The static shape as a tuple of ints and None; None if the rank is unknown."""
    shape = getattr(x, "shape", None)
    if shape is None:
        return None
    if isinstance(shape, tuple):
        return shape
    if getattr(shape, "dims", ()) is None:
        return None
    return tuple(shape.as_list())


def ndim(x) -> int | None:
    shape = int_shape(x)
    return None if shape is None else len(shape)


def dtype(x) -> str:
    return _dtypes.as_dtype(x.dtype).base_dtype.name


def shape(x):
    """The dynamic shape of `x` (an int32 tensor)."""
    return array_shape_ops.shape(x)


def count_params(x) -> int:
    return int(np.prod(int_shape(x)))


def is_keras_tensor(x) -> bool:
    """Whether `x` is the output of a Keras layer or `Input` (not a plain tensor)."""
    return getattr(x, "_keras_history", None) is not None


def eval(x):
    """The value of `x` in the Keras session."""
    return _state.get_session().run(x)


def get_uid(prefix: str = "") -> int:
    """1, 2, ... per `prefix` and graph: Keras's layer-name counter."""
    key = (id(get_default_graph()), prefix)
    _uid_counters[key] = _uid_counters.get(key, 0) + 1
    return _uid_counters[key]


def reset_uids() -> None:
    _uid_counters.clear()


def cast(x, dtype):
    return math_ops.cast(x, _dtypes.as_dtype(dtype))


def cast_to_floatx(x):
    return np.asarray(x, dtype=_state.floatx())


# -- reductions (over all axes by default) -------------------------------------------------
def _reducer(op, doc):
    def reduce(x, axis=None, keepdims=False):
        return op(x, axis=axis, keepdims=keepdims)
    reduce.__doc__ = doc
    return reduce


sum = _reducer(math_reduce.reduce_sum, "Sum of `x` over `axis` (all axes by default).")
mean = _reducer(math_reduce.reduce_mean, "Mean of `x` over `axis` (all by default).")
max = _reducer(math_reduce.reduce_max, "Maximum of `x` over `axis`.")
min = _reducer(math_reduce.reduce_min, "Minimum of `x` over `axis`.")
prod = _reducer(math_reduce.reduce_prod, "Product of `x` over `axis`.")
std = _reducer(math_composite.reduce_std, "Standard deviation of `x` over `axis`.")
var = _reducer(math_composite.reduce_variance, "Variance of `x` over `axis`.")


def any(x, axis=None, keepdims=False):
    return math_reduce.reduce_any(math_ops.cast(x, _dtypes.bool), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):
    return math_reduce.reduce_all(math_ops.cast(x, _dtypes.bool), axis=axis, keepdims=keepdims)


def argmax(x, axis=-1):
    return math_reduce.argmax(x, axis)


def argmin(x, axis=-1):
    return math_reduce.argmin(x, axis)


def cumsum(x, axis=0):
    return math_reduce.cumsum(x, axis=axis)


def cumprod(x, axis=0):
    return math_reduce.cumprod(x, axis=axis)


# -- element-wise ----------------------------------------------------------------------------
abs = math_ops.abs
square, sqrt, exp, log = math_ops.square, math_ops.sqrt, math_ops.exp, math_ops.log
sign, sin, cos, tanh = math_ops.sign, math_ops.sin, math_ops.cos, math_ops.tanh
sigmoid, round = math_ops.sigmoid, math_ops.round
softplus, softsign = nn_ops.softplus, nn_ops.softsign
equal, not_equal = math_ops.equal, math_ops.not_equal
greater, greater_equal = math_ops.greater, math_ops.greater_equal
less, less_equal = math_ops.less, math_ops.less_equal
maximum, minimum = math_ops.maximum, math_ops.minimum
stop_gradient = array_identity_ops.stop_gradient


def pow(x, a):
    return math_ops.pow(x, a)


def clip(x, min_value, max_value):
    """`x` clipped to ``[min_value, max_value]``."""
    if max_value is not None and min_value is not None and max_value < min_value:
        max_value = min_value
    return math_ops.clip_by_value(x, min_value, max_value)


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """``max(x, 0)``, with a leaky slope `alpha` and an optional cap `max_value`."""
    if alpha == 0 and max_value is None and threshold == 0:
        return nn_ops.relu(x)
    x = _t(x)
    out = math_ops.maximum(x, threshold) if threshold == 0 else math_ops.multiply(
        x, math_ops.cast(math_ops.greater(x, threshold), x.dtype))
    if alpha:
        out = math_ops.add(out, math_ops.multiply(alpha, math_ops.minimum(
            math_ops.subtract(x, threshold), 0.0)))
    if max_value is not None:
        out = math_ops.minimum(out, float(max_value))
    return out


def elu(x, alpha=1.0):
    out = nn_ops.elu(x)
    return out if alpha == 1 else array_index_ops.where(
        math_ops.greater(x, 0.0), out, math_ops.multiply(alpha, out))


def softmax(x, axis=-1):
    return nn_ops.softmax(x, axis=axis)


def l2_normalize(x, axis=None):
    return nn_ops.l2_normalize(x, axis=axis)


def switch(condition, then_expression, else_expression):
    """Element-wise choice between the two expressions (`condition` broadcast)."""
    then_t, else_t = _t(then_expression), _t(else_expression)
    cond = _t(condition)
    if cond.shape.ndims is not None and then_t.shape.ndims is not None \
            and cond.shape.ndims < then_t.shape.ndims:
        for _ in range(then_t.shape.ndims - cond.shape.ndims):
            cond = array_shape_ops.expand_dims(cond, -1)
        cond = math_ops.logical_and(cond, array_shape_ops.ones_like(then_t, dtype=_dtypes.bool))
    return array_index_ops.where(cond, then_t, else_t)


def in_train_phase(x, alt, training=None):
    """`x` in the training phase, else `alt` (each a tensor or a function making one):
    chosen now when `training` (default: the learning phase) is a Python 0/1/bool,
    else a `tf.cond` on it.

    Example
    -------
    >>> import flowgraph as tf
    >>> K = tf.keras.backend
    >>> float(K.eval(K.in_train_phase(tf.constant(2.0), tf.constant(3.0), training=1)))
    2.0
    """
    if training is None:
        training = _state.learning_phase()
    if training is True or (isinstance(training, int) and training == 1):
        return x() if callable(x) else x
    if training is False or (isinstance(training, int) and training == 0):
        return alt() if callable(alt) else alt
    from flowgraph.ops.control_flow_cond import cond

    pred = _t(training)
    if pred.dtype.base_dtype != _dtypes.bool:
        pred = math_ops.cast(pred, _dtypes.bool)
    return cond(pred, x if callable(x) else (lambda: array_ops.identity(_t(x))),
                alt if callable(alt) else (lambda: array_ops.identity(_t(alt))))


def in_test_phase(x, alt, training=None):
    """`x` in the inference phase, else `alt` (see `in_train_phase`)."""
    return in_train_phase(alt, x, training=training)


# -- shapes ------------------------------------------------------------------------------------
def reshape(x, shape):
    return array_shape_ops.reshape(x, shape)


def expand_dims(x, axis=-1):
    return array_shape_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return array_shape_ops.squeeze(x, [axis])


def flatten(x):
    return array_shape_ops.reshape(x, [-1])


def batch_flatten(x):
    """``(batch, everything else)``."""
    x = _t(x)
    rest = x.shape.as_list()[1:] if x.shape.ndims is not None else None
    if rest is not None and None not in rest:
        return array_shape_ops.reshape(x, [-1, int(np.prod(rest))])
    return array_shape_ops.reshape(x, array_join_ops.stack(
        [-1, math_reduce.reduce_prod(array_shape_ops.shape(x)[1:])]))


def transpose(x):
    return array_shape_ops.transpose(x)


def permute_dimensions(x, pattern):
    return array_shape_ops.transpose(x, perm=list(pattern))


def concatenate(tensors, axis=-1):
    return array_join_ops.concat(list(tensors), axis)


def stack(x, axis=0):
    return array_join_ops.stack(list(x), axis=axis)


def tile(x, n):
    return array_join_ops.tile(x, [n] if isinstance(n, int) else n)


def reverse(x, axes):
    return array_join_ops.reverse(x, [axes] if isinstance(axes, int) else list(axes))


def repeat_elements(x, rep, axis):
    """Each slice of `x` along `axis` repeated `rep` times (like ``np.repeat``)."""
    x = _t(x)
    ndims = x.shape.ndims
    axis = axis % ndims
    expanded = array_shape_ops.expand_dims(x, axis + 1)
    multiples = [1] * (ndims + 1)
    multiples[axis + 1] = rep
    tiled = array_join_ops.tile(expanded, multiples)
    dims = x.shape.as_list()
    if not builtins.any(d is None for d in dims):
        dims[axis] *= rep
        return array_shape_ops.reshape(tiled, dims)
    new_shape = array_shape_ops.shape(x) * np.array(
        [rep if i == axis else 1 for i in range(ndims)], np.int32)
    return array_shape_ops.reshape(tiled, new_shape)


def gather(reference, indices):
    return array_index_ops.gather(reference, indices)


def one_hot(indices, num_classes):
    return array_gen_ops.one_hot(indices, depth=num_classes, axis=-1)


# -- products --------------------------------------------------------------------------------
def dot(x, y):
    """Matrix product; for rank > 2 the last axis of `x` with the second-to-last of `y`."""
    x, y = _t(x), _t(y)
    if x.shape.ndims == 2 and y.shape.ndims == 2:
        return math_ops.matmul(x, y)
    xs, ys = x.shape.as_list(), y.shape.as_list()
    y_perm = list(range(len(ys)))
    y_perm = [y_perm[-2], *y_perm[:-2], y_perm[-1]]
    y2 = array_shape_ops.reshape(array_shape_ops.transpose(y, y_perm), [ys[-2], -1])
    out = math_ops.matmul(array_shape_ops.reshape(x, [-1, xs[-1]]), y2)
    return array_shape_ops.reshape(out, [-1 if d is None else d
                                         for d in xs[:-1] + ys[:-2] + ys[-1:]])


def batch_dot(x, y, axes=None):
    """Per-example dot products of two batches (``axes``: the axes summed over)."""
    x, y = _t(x), _t(y)
    if isinstance(axes, int):
        axes = (axes, axes)
    if axes is None:
        axes = (x.shape.ndims - 1, y.shape.ndims - 2 if y.shape.ndims > 2 else 1)
    if x.shape.ndims == 2 and y.shape.ndims == 2:
        return math_reduce.reduce_sum(math_ops.multiply(x, y), axis=axes[0], keepdims=True)
    adj_x = axes[0] != x.shape.ndims - 1
    adj_y = axes[1] == y.shape.ndims - 1
    return math_ops.matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y)


# -- losses ----------------------------------------------------------------------------------
def binary_crossentropy(target, output, from_logits=False):
    """Element-wise binary cross-entropy (no reduction) of probabilities `output`."""
    from flowgraph.ops import nn_loss_ops

    if from_logits:
        return nn_loss_ops.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = _state.epsilon()
    output = math_ops.clip_by_value(output, eps, 1.0 - eps)
    return math_ops.negative(math_ops.add(
        math_ops.multiply(target, math_ops.log(math_ops.add(output, eps))),
        math_ops.multiply(math_ops.subtract(1.0, target),
                          math_ops.log(math_ops.add(math_ops.subtract(1.0, output), eps)))))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy along `axis` of one-hot `target` and probabilities `output`."""
    from flowgraph.ops import nn_loss_ops

    if from_logits:
        return nn_loss_ops.softmax_cross_entropy_with_logits_v2(labels=target, logits=output,
                                                                axis=axis)
    output = math_ops.divide(output, math_reduce.reduce_sum(output, axis, keepdims=True))
    eps = _state.epsilon()
    output = math_ops.clip_by_value(output, eps, 1.0 - eps)
    return math_ops.negative(math_reduce.reduce_sum(
        math_ops.multiply(target, math_ops.log(output)), axis))


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of integer class ids `target` and probabilities `output`."""
    return _losses.sparse_categorical_crossentropy(target, output, from_logits=from_logits)


# -- gradients and updates ---------------------------------------------------------------------
def gradients(loss, variables):
    return _gradients.gradients(loss, variables)


def update(x, new_x):
    return state_ops.assign(x, new_x)


def update_add(x, increment):
    return state_ops.assign_add(x, increment)


def update_sub(x, decrement):
    return state_ops.assign_sub(x, decrement)


# -- K.function ------------------------------------------------------------------------------
class GraphExecutionFunction:
    """What `function` returns: call it with a list of input values, get a list of the
    output values (the `updates` run in the same step)."""

    def __init__(self, inputs, outputs, updates=None, name=None, **session_kwargs):
        if not isinstance(inputs, (list, tuple)):
            raise TypeError("`inputs` to a Keras backend function should be a list or tuple.")
        self.inputs = list(inputs)
        self._outputs_structure = outputs
        self.outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        self.name = name
        self._session_kwargs = session_kwargs
        ops = []
        for u in updates or []:
            ops.append(state_ops.assign(*u) if isinstance(u, tuple) else u)
        self._updates = ops

    def __call__(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise TypeError("The inputs of a Keras backend function must be a list or tuple.")
        if len(inputs) != len(self.inputs):
            raise ValueError(f"This function expects {len(self.inputs)} inputs, got "
                             f"{len(inputs)}.")
        feed = {}
        for tensor, value in zip(self.inputs, inputs, strict=True):
            if isinstance(tensor, int):  # a fixed learning phase passed in the list
                continue
            feed[tensor] = value
        sess = _state.get_session()
        values = sess.run(self.outputs + self._updates, feed_dict=feed, **self._session_kwargs)
        values = values[:len(self.outputs)]
        if isinstance(self._outputs_structure, (list, tuple)):
            return values
        return values[0]


def function(inputs, outputs, updates=None, name=None, **kwargs):
    """A callable ``f(list of input values) -> list of output values`` running the graph.

    Example
    -------
    >>> import flowgraph as tf
    >>> K = tf.keras.backend
    >>> with tf.Graph().as_default():
    ...     x = K.placeholder(shape=(2,))
    ...     print(K.function([x], [x * 2])([[1.0, 2.0]])[0])
    [2. 4.]
    """
    unknown = sorted(set(kwargs) - {"options", "run_metadata"})
    if unknown:
        raise ValueError(f"Invalid argument(s) {unknown} passed to K.function with "
                         f"TensorFlow backend")
    return GraphExecutionFunction(inputs, outputs, updates=updates, name=name, **kwargs)



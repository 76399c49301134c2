"""`tf.train.ExponentialMovingAverage`: shadow copies that trail variables.

``apply(var_list)`` creates, for each variable ``v``, a non-trainable shadow variable
``<v's op name>/<name>`` (default ``v/ExponentialMovingAverage``) initialized to ``v``'s
initial value (a tensor gets a zero-initialized shadow), and returns one op that moves
every shadow towards its value: ``shadow -= (1 - decay) * (shadow - value)``. With
``num_updates`` the decay used is ``min(decay, (1 + num_updates) / (10 + num_updates))``,
so early averages follow the values closely.

With ``zero_debias=True`` (it applies to tensors, whose shadows start at zero) the shadow
holds ``biased / (1 - decay ** t)``, where ``biased`` is the plain average started at zero
and ``t`` the number of updates so far; both are kept in non-trainable global variables
``<shadow>/biased`` and ``<shadow>/local_step``, as in TensorFlow.
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import (
    GraphKeys,
    add_to_collection,
    colocate_with,
    name_scope,
)
from flowgraph.ops.array_shape_ops import zeros
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.init_ops import zeros_initializer
from flowgraph.ops.math_ops import cast, minimum
from flowgraph.ops.math_ops import pow as _pow
from flowgraph.ops.state_ops import assign, assign_add, assign_sub
from flowgraph.ops.variable_scope import get_variable, variable_scope
from flowgraph.ops.variables import (
    Variable,
    global_variables,
    moving_average_variables,
    trainable_variables,
)
from flowgraph.train.slot_creator import create_slot

__all__ = ["ExponentialMovingAverage", "assign_moving_average"]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _initialized_value(var):
    """`var`'s value if initialized, else its initial value (as TF: a resource variable
    has no ``initialized_value``, so the cond is built here)."""
    if not hasattr(var, "handle"):
        return var.initialized_value()
    from flowgraph.ops.control_flow_cond import cond
    from flowgraph.ops.state_ops import is_variable_initialized

    graph = var.graph
    with graph.as_default(), graph.control_dependencies(None), graph.device(var.device):
        return cond(is_variable_initialized(var), var.read_value, lambda: var.initial_value)


class ExponentialMovingAverage:
    """Keep exponential moving averages of variables (or tensors) in shadow variables.

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable(0.0, name="v")
    >>> ema = tf.train.ExponentialMovingAverage(decay=0.9)
    >>> with tf.control_dependencies([tf.assign(v, 10.0)]):
    ...     update = ema.apply([v])
    >>> ema.average(v).op.name
    'v/ExponentialMovingAverage'
    >>> sess = tf.Session()
    >>> sess.run(tf.global_variables_initializer())
    >>> _ = sess.run(update)
    >>> round(float(sess.run(ema.average(v))), 4)
    1.0
    """

    def __init__(self, decay, num_updates=None, zero_debias=False,
                 name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict = {}
        self._debias: dict = {}

    @property
    def name(self) -> str:
        return self._name

    def _key(self, var):
        return var._ref() if isinstance(var, Variable) else var

    def apply(self, var_list=None):
        """Create the shadow variables of `var_list` and return the op updating them.

        `var_list` defaults to ``tf.trainable_variables()``; each entry must be a float
        Variable or Tensor; one seen before keeps its shadow variable.
        """
        if var_list is None:
            var_list = trainable_variables()
        var_list = list(var_list)
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"ExponentialMovingAverage.apply: the variables must be "
                                f"half, float, or double, but {var.name} is "
                                f"{var.dtype.base_dtype.name}")
            if self._key(var) in self._averages:
                continue  # as in TF 2.15: a second apply reuses the shadow variable
            if isinstance(var, Variable):
                avg = create_slot(var, _initialized_value(var), self._name)
                add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
            else:
                with colocate_with(var):
                    avg = create_slot(var, zeros(var.shape, var.dtype.base_dtype),
                                      self._name)
                if self._zero_debias:
                    self._debias[self._key(var)] = _debias_variables(avg)
            self._averages[self._key(var)] = avg
        with name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                n = cast(self._num_updates, _dtypes.float32)
                decay = minimum(decay, (1.0 + n) / (10.0 + n))
            updates = [self._update(var, decay) for var in var_list]
            return group(*updates, name=scope)

    def _update(self, var, decay):
        avg = self._averages[self._key(var)]
        # read here, so that control dependencies around apply() order the read
        value = var.read_value() if isinstance(var, Variable) else var
        dtype = avg.dtype.base_dtype
        if decay.dtype.base_dtype != dtype:
            # TF takes 1 - decay in float32 and then casts (float16 shadows differ otherwise)
            one_minus = cast(1.0 - decay, dtype)
            decay = cast(decay, dtype)
        else:
            one_minus = 1.0 - decay
        debias = self._debias.get(self._key(var))
        with colocate_with(avg.op):
            if debias is None:
                return assign_sub(avg, (avg.value() - value) * one_minus)
            biased, local_step = debias
            new_biased = assign_sub(biased, (biased.value() - value) * one_minus)
            new_step = assign_add(local_step, 1.0)
            return assign(avg, new_biased / (1.0 - _pow(decay, new_step)))

    def average(self, var):
        """The shadow variable of `var`, or None if `apply` has not seen it."""
        return self._averages.get(self._key(var))

    def average_name(self, var) -> str:
        """The name of `var`'s shadow variable (its checkpoint key), ``<op name>/<name>``.

        Works before `apply`, e.g. to build a `Saver` that restores averages.
        """
        if self._key(var) in self._averages:
            return self._averages[self._key(var)].op.name
        return f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables=None) -> dict:
        """A `Saver` var_list that loads each variable from its moving average.

        Maps ``average_name(v)`` to ``v`` for `moving_avg_variables` (default: the
        trainable and moving-average variables) and every other global variable's own
        name to itself.
        """
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        averaged = {self._key(v): v for v in moving_avg_variables}
        names = {self.average_name(v): v for v in averaged.values()}
        for v in global_variables():
            if self._key(v) not in averaged and v.op.name not in names:
                names[v.op.name] = v
        return names


def assign_moving_average(variable, value, decay, zero_debias: bool = True,
                          name: str | None = None):
    """Move `variable` towards `value`: ``variable -= (variable - value) * (1 - decay)``,
    returning the updated value (TensorFlow's ``moving_averages.assign_moving_average``,
    which hand-written batch-norm layers call).

    With `zero_debias` (the default) the variable instead receives ``biased / (1 -
    decay ** t)``, where ``biased`` (a zero-started average) and ``t`` live in the
    non-trainable global variables ``<variable>/biased`` and ``<variable>/local_step``,
    as TensorFlow names them. The op is named ``AssignMovingAvg`` (or `name`).

    >>> import flowgraph as tf
    >>> from flowgraph.train.moving_averages import assign_moving_average
    >>> with tf.Graph().as_default():
    ...     mean = tf.Variable([0.0, 0.0], name="moving_mean", trainable=False)
    ...     update = assign_moving_average(mean, [1.0, 2.0], 0.9, zero_debias=False)
    ...     with tf.Session() as sess:
    ...         sess.run(mean.initializer)
    ...         print(update.op.name, sess.run(update).round(3).tolist())
    AssignMovingAvg [0.1, 0.2]
    """
    with name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        dtype = variable.dtype.base_dtype
        one_minus = convert_to_tensor(1.0 - decay, name="decay")
        if one_minus.dtype.base_dtype != dtype:
            one_minus = cast(one_minus, dtype)
        value = convert_to_tensor(value, dtype=dtype)
        with colocate_with(variable.op):
            if not zero_debias:
                return assign_sub(variable, (variable.value() - value) * one_minus,
                                  name=scope)
            biased, local_step = _debias_variables(variable)
            new_biased = assign_sub(biased, (biased.value() - value) * one_minus)
            new_step = assign_add(local_step, 1.0)
            return assign(variable, new_biased / (1.0 - _pow(1.0 - one_minus, new_step)),
                          name=scope)


def _debias_variables(avg):
    """The ``biased`` accumulator and ``local_step`` counter of a zero-debiased shadow."""
    dtype = avg.dtype.base_dtype
    with variable_scope(avg.op.name):
        biased = get_variable("biased", shape=avg.shape, dtype=dtype,
                              initializer=zeros_initializer(), trainable=False)
        local_step = get_variable("local_step", shape=[], dtype=dtype,
                                  initializer=zeros_initializer(), trainable=False)
    return biased, local_step

"""`tf.nn.rnn_cell`: recurrent cells (one time step each). The combinations and wrappers
(`MultiRNNCell`, `DropoutWrapper`, `ResidualWrapper`, `DeviceWrapper`) are in
``rnn_cell_wrappers.py``.

A cell maps ``(inputs, state)`` to ``(output, new_state)`` for one time step; `state` may
be a nested structure (`LSTMStateTuple` for the LSTMs, a tuple of the layers' states
for `MultiRNNCell`). ``state_size`` and ``output_size`` describe those structures
without a batch dimension, and ``zero_state(batch_size, dtype)`` builds the all-zero
initial state. `tf.nn.static_rnn` and `tf.nn.dynamic_rnn` (``rnn.py``) run a cell over a
sequence.

Variables and their names
-------------------------
A cell owns a variable scope, captured on its first call exactly as TensorFlow 1.x's
layer-based cells do: ``variable_scope(None, default_name=<cell name>)`` inside the
variable scope in force (``rnn/basic_lstm_cell``, ``rnn/multi_rnn_cell/cell_0/gru_cell``,
``bidirectional_rnn/fw/lstm_cell``), or the `scope` passed to the call. Later calls
reuse those variables, so a cell called at every step of a sequence (or in a loop body)
has one set of weights. The variables are TensorFlow's, with their names, shapes and
default initializers, so checkpoints and name-based lookups carry over:

=============  ==========================================================================
cell           variables (inside the cell's scope)
=============  ==========================================================================
BasicRNNCell   ``kernel [in + units, units]``, ``bias [units]`` (zeros)
BasicLSTMCell  ``kernel [in + units, 4 units]``, ``bias [4 units]`` (zeros); gates i, j, f, o
LSTMCell       as BasicLSTMCell (``h`` has ``num_proj`` units with a projection), and
               ``w_f_diag``, ``w_i_diag``, ``w_o_diag`` (peepholes), ``projection/kernel``
GRUCell        ``gates/kernel [in + units, 2 units]``, ``gates/bias`` (ones),
               ``candidate/kernel [in + units, units]``, ``candidate/bias`` (zeros)
=============  ==========================================================================

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     cell = tf.nn.rnn_cell.BasicLSTMCell(4)
...     x = tf.placeholder(tf.float32, [2, 3])
...     out, state = cell(x, cell.zero_state(2, tf.float32))
...     print(out.shape, state.c.shape, [v.name for v in tf.global_variables()])
(2, 4) (2, 4) ['basic_lstm_cell/kernel:0', 'basic_lstm_cell/bias:0']
"""

from __future__ import annotations

import collections
import numbers
import re

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.object_names import unique_object_name
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import array_ops, init_ops, math_ops, nn_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.control_flow_cond import nest_flatten, nest_map

__all__ = ["BasicLSTMCell", "BasicRNNCell", "GRUCell", "LSTMCell", "LSTMStateTuple", "RNNCell"]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The state of an LSTM cell: the cell state `c` and the output (hidden) state `h`.

    Example
    -------
    >>> import flowgraph as tf
    >>> s = tf.nn.rnn_cell.LSTMStateTuple(tf.zeros([1, 2]), tf.ones([1, 2]))
    >>> s.dtype.name, s.h.shape
    ('float32', TensorShape([Dimension(1), Dimension(2)]))
    """

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _snake_case(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


def size_shape(size) -> TensorShape:
    """A cell's size (an int, a shape or a list of dims) as a `TensorShape`."""
    if isinstance(size, TensorShape):
        return size
    if isinstance(size, numbers.Integral):
        return TensorShape([int(size)])
    return as_shape(size)


def _concat_batch(batch_size, size) -> list:
    """``[batch_size] + size`` as a shape (a list, or a tensor when batch is one)."""
    dims = size_shape(size).as_list()
    static = constant_value(batch_size) if isinstance(batch_size, Tensor) else batch_size
    if static is not None:
        return [int(static), *dims]
    return array_ops.concat([array_ops.reshape(batch_size, [1]),
                             constant(dims, dtype=_dtypes.int32)], 0)


def zeros_for_size(size, batch_size, dtype):
    """A nested structure of zeros ``[batch_size, *s]`` for each leaf `s` of `size`."""
    def zeros(s):
        z = array_ops.zeros(_concat_batch(batch_size, s), dtype=dtype)
        static = constant_value(batch_size) if isinstance(batch_size, Tensor) else batch_size
        z.set_shape(TensorShape([None if static is None else int(static)])
                    .concatenate(size_shape(s)))
        return z

    return nest_map(zeros, size)


def _last_dim(shape: TensorShape, what: str) -> int:
    if shape.ndims is None or shape[-1].value is None:
        raise ValueError(f"{what}: the last dimension of the inputs must be known to "
                         f"build the cell's weights, got inputs of shape {shape}.")
    return shape[-1].value


# -- the base ---------------------------------------------------------------------------
class RNNCell:
    """The base of every cell: subclasses define ``state_size``, ``output_size``,
    ``build(inputs_shape)`` (create the weights with ``add_variable``) and
    ``call(inputs, state)``; calling the cell handles the variable scope.

    Example
    -------
    >>> import flowgraph as tf
    >>> class Doubler(tf.nn.rnn_cell.RNNCell):
    ...     state_size = property(lambda self: 1)
    ...     output_size = property(lambda self: 1)
    ...     def call(self, inputs, state):
    ...         return inputs * 2.0, state + inputs
    >>> with tf.Graph().as_default():
    ...     out, _ = Doubler()(tf.ones([3, 1]), tf.zeros([3, 1]))
    ...     print(out.shape)
    (3, 1)
    """

    def __init__(self, trainable: bool = True, name: str | None = None, dtype=None,
                 _reuse=None, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected keyword argument(s) "
                            f"{sorted(kwargs)}")
        self.trainable = bool(trainable)
        self.built = False
        self._dtype = None if dtype is None else _dtypes.as_dtype(dtype)
        self._reuse = _reuse
        self._base_name = name or _snake_case(type(self).__name__)
        # As TensorFlow: an unnamed cell is labelled ``lstm_cell_1``, ... per graph; its
        # variables' scope comes from the base name.
        self.name = name or unique_object_name(self._base_name, zero_based=False)
        self._scope = None
        self._variables: list = []

    # -- the cell's description -------------------------------------------------------
    @property
    def state_size(self):
        """The size(s) of the state, without the batch dimension (an int, a
        `TensorShape` or a nested structure of them)."""
        raise NotImplementedError(f"{type(self).__name__} must define state_size")

    @property
    def output_size(self):
        """The size of the output, without the batch dimension."""
        raise NotImplementedError(f"{type(self).__name__} must define output_size")

    @property
    def dtype(self):
        return self._dtype

    @property
    def scope_name(self):
        return self._scope.name if self._scope is not None else None

    @property
    def variables(self) -> list:
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self) -> list:
        return list(self._variables) if self.trainable else []

    trainable_weights = trainable_variables

    def zero_state(self, batch_size, dtype):
        """All-zero state for a batch: ``[batch_size, *s]`` for each size `s` of
        ``state_size``."""
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            return zeros_for_size(self.state_size, batch_size, dtype)

    # -- weights --------------------------------------------------------------------
    def build(self, inputs_shape) -> None:
        self.built = True

    def add_variable(self, name: str, shape, dtype=None, initializer=None,
                     trainable: bool = True, **kwargs):
        """`tf.get_variable(name, ...)` in the cell's scope."""
        var = vs.get_variable(name, shape=shape, dtype=dtype or self._dtype or _dtypes.float32,
                              initializer=initializer,
                              trainable=trainable and self.trainable, **kwargs)
        if not any(v is var for v in self._variables):
            self._variables.append(var)
        return var

    add_weight = add_variable

    def call(self, inputs, state):
        raise NotImplementedError(f"{type(self).__name__} must define call(inputs, state)")

    # -- calling --------------------------------------------------------------------
    def __call__(self, inputs, state, scope=None):
        """Run one step: ``(output, new_state)``.

        As in TF, a plain `RNNCell` (e.g. `MultiRNNCell` or a user's subclass) first
        re-enters the current variable scope, which opens a nested name scope of the
        same name: its ops are named ``rnn/rnn/multi_rnn_cell/...``. `LayerRNNCell`s
        (the built-in cells) skip that step.
        """
        if scope is not None:
            with vs.variable_scope(scope) as captured:
                return self._layer_call(inputs, state, captured)
        with vs.variable_scope(vs.get_variable_scope()):
            return self._layer_call(inputs, state, None)

    def _layer_call(self, inputs, state, scope):
        if self._scope is None:
            if scope is not None:
                with vs.variable_scope(scope) as captured:
                    self._scope = captured
            elif self._reuse:
                with vs.variable_scope(self._base_name) as captured:
                    self._scope = captured
            else:
                with vs.variable_scope(None, default_name=self._base_name) as captured:
                    self._scope = captured
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as sc:
            with name_scope(sc.original_name_scope):
                if not self.built:
                    first = nest_flatten(inputs)[0]
                    shape = first.shape if isinstance(first, Tensor) else \
                        convert_to_tensor(first).shape
                    if self._dtype is None and isinstance(first, Tensor):
                        self._dtype = first.dtype.base_dtype
                    self.build(shape)
                    self.built = True
                return self.call(inputs, state)


class LayerRNNCell(RNNCell):
    """An `RNNCell` that creates its weights in `build` (the built-in cells); calling it
    does not re-enter the caller's variable scope (see `RNNCell.__call__`)."""

    def __call__(self, inputs, state, scope=None):
        return self._layer_call(inputs, state, scope)


def _activation(fn):
    return math_ops.tanh if fn is None else fn


# -- cells ------------------------------------------------------------------------------
class BasicRNNCell(LayerRNNCell):
    """``h' = activation(W [x, h] + b)``; the output is the new state.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.rnn_cell.BasicRNNCell(5).state_size
    5
    """

    def __init__(self, num_units: int, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        self._kernel = self.add_variable("kernel", [depth + self._num_units, self._num_units])
        self._bias = self.add_variable("bias", [self._num_units],
                                       initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        pre = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        out = self._activation(nn_ops.bias_add(pre, self._bias))
        return out, out


class BasicLSTMCell(LayerRNNCell):
    """The LSTM of Zaremba et al. without peepholes or projection:
    ``i, j, f, o = split(W [x, h] + b)``, ``c' = c sigmoid(f + forget_bias) +
    sigmoid(i) tanh(j)``, ``h' = tanh(c') sigmoid(o)``. The state is
    ``LSTMStateTuple(c, h)`` (or their concatenation when ``state_is_tuple=False``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.rnn_cell.BasicLSTMCell(3).state_size
    LSTMStateTuple(c=3, h=3)
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(state, 2, axis=1)
        gates = nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        forget = math_ops.sigmoid(math_ops.add(f, math_ops.cast(self._forget_bias, f.dtype)))
        new_c = math_ops.add(math_ops.multiply(c, forget),
                             math_ops.multiply(math_ops.sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), math_ops.sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else \
            array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """The LSTM with optional peepholes (``use_peepholes``), cell clipping
    (``cell_clip``) and a projection of the output to ``num_proj`` units (clipped to
    ``proj_clip``). `initializer` initializes the kernels.

    Example
    -------
    >>> import flowgraph as tf
    >>> cell = tf.nn.rnn_cell.LSTMCell(4, num_proj=2)
    >>> cell.state_size, cell.output_size
    (LSTMStateTuple(c=4, h=2), 2)
    """

    def __init__(self, num_units: int, use_peepholes: bool = False, cell_clip=None,
                 initializer=None, num_proj=None, proj_clip=None, num_unit_shards=None,
                 num_proj_shards=None, forget_bias: float = 1.0, state_is_tuple: bool = True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = None if num_proj is None else int(num_proj)
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        h = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, h) if self._state_is_tuple else \
            self._num_units + h

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n = self._num_units
        h = self._num_proj or n
        self._kernel = self.add_variable("kernel", [depth + h, 4 * n],
                                         initializer=self._initializer)
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", [n], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", [n], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", [n], initializer=self._initializer)
        if self._num_proj is not None:
            self._proj_kernel = self.add_variable("projection/kernel", [n, self._num_proj],
                                                  initializer=self._initializer)
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        h = self._num_proj or n
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = array_ops.split(state, [n, h], axis=1)
        gates = nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel), self._bias)
        i, j, f, o = array_ops.split(gates, 4, axis=1)
        # Written with operators, as TensorFlow's cell is, so the op names match
        # (``lstm_cell/mul_2`` is the output).
        sigmoid, act = math_ops.sigmoid, self._activation
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * act(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * act(c)
        else:
            m = sigmoid(o) * act(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else \
            array_ops.concat([c, m], 1)
        return m, new_state


class GRUCell(LayerRNNCell):
    """The gated recurrent unit of Cho et al.: ``r, u = sigmoid(W_g [x, h] + b_g)``,
    ``c = tanh(W_c [x, r h] + b_c)``, ``h' = u h + (1 - u) c``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.rnn_cell.GRUCell(6).output_size
    6
    """

    def __init__(self, num_units: int, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs) -> None:
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = int(num_units)
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n = self._num_units
        self._gate_kernel = self.add_variable("gates/kernel", [depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n], initializer=self._bias_initializer
            or init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("candidate/kernel", [depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            "candidate/bias", [n], initializer=self._bias_initializer
            or init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = math_ops.sigmoid(nn_ops.bias_add(
            math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel),
            self._gate_bias))
        r, u = array_ops.split(gates, 2, axis=1)
        candidate = nn_ops.bias_add(math_ops.matmul(
            array_ops.concat([inputs, r * state], 1),
            self._candidate_kernel), self._candidate_bias)
        c = self._activation(candidate)
        new_h = u * state + (1 - u) * c  # operators, as in TF: the output is gru_cell/add
        return new_h, new_h

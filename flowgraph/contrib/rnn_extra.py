"""The rest of `tf.contrib.rnn` that TF1 programs use: the fused-cell interface
(`FusedRNNCell`, `FusedRNNCellAdaptor`, `TimeReversedFusedRNN`),
`LayerNormBasicLSTMCell`, `UGRNNCell`, `HighwayWrapper` and
`stack_bidirectional_dynamic_rnn` / `stack_bidirectional_rnn`, with TF 1.x's variable
names and default initializers.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.rnn.LayerNormBasicLSTMCell(3).state_size
LSTMStateTuple(c=3, h=3)
"""

from __future__ import annotations

from flowgraph.framework import nest
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, init_ops, math_ops, math_reduce, nn_impl, nn_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.math_tensordot import tensordot
from flowgraph.ops.rnn import (
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)
from flowgraph.ops.rnn_cell_impl import (
    LayerRNNCell,
    LSTMStateTuple,
    RNNCell,
    _last_dim,
)
from flowgraph.ops.rnn_cell_wrappers import _Wrapper

__all__ = [
    "AttentionCellWrapper",
    "FusedRNNCell",
    "FusedRNNCellAdaptor",
    "HighwayWrapper",
    "LayerNormBasicLSTMCell",
    "TimeReversedFusedRNN",
    "UGRNNCell",
    "stack_bidirectional_dynamic_rnn",
    "stack_bidirectional_rnn",
]


class FusedRNNCell:
    """The interface of contrib's whole-sequence cells: ``cell(inputs, initial_state=None,
    dtype=None, sequence_length=None, scope=None) -> (outputs, final_state)`` on
    time-major inputs ``[time, batch, depth]`` or a list of ``[batch, depth]``."""

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class FusedRNNCellAdaptor(FusedRNNCell):
    """An `RNNCell` used as a `FusedRNNCell`: `tf.nn.dynamic_rnn` (time-major) with
    ``use_dynamic_rnn=True``, else `tf.nn.static_rnn`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     fused = tf.contrib.rnn.FusedRNNCellAdaptor(tf.nn.rnn_cell.GRUCell(3), True)
    ...     out, _ = fused(tf.ones([5, 2, 4]), dtype=tf.float32)
    ...     print(out.shape)
    (5, 2, 3)
    """

    def __init__(self, cell, use_dynamic_rnn: bool = False) -> None:
        self._cell = cell
        self._use_dynamic_rnn = use_dynamic_rnn

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        is_list = isinstance(inputs, list)
        if self._use_dynamic_rnn:
            outputs, state = dynamic_rnn(
                self._cell, array_ops.stack(inputs) if is_list else inputs,
                sequence_length=sequence_length, initial_state=initial_state, dtype=dtype,
                time_major=True, scope=scope)
            return (array_ops.unstack(outputs) if is_list else outputs), state
        outputs, state = static_rnn(
            self._cell, inputs if is_list else array_ops.unstack(inputs),
            initial_state=initial_state, dtype=dtype, sequence_length=sequence_length,
            scope=scope)
        return (outputs if is_list else array_ops.stack(outputs)), state


class TimeReversedFusedRNN(FusedRNNCell):
    """Runs a `FusedRNNCell` backwards in time: the inputs are reversed (each sequence
    within its `sequence_length`), and the outputs reversed back.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     fw = tf.contrib.rnn.LSTMBlockFusedCell(3)
    ...     bw = tf.contrib.rnn.TimeReversedFusedRNN(tf.contrib.rnn.LSTMBlockFusedCell(3))
    ...     x = tf.ones([4, 2, 5])
    ...     out, _ = bw(x, dtype=tf.float32, sequence_length=[4, 2], scope="bw")
    ...     print(out.shape, tf.global_variables()[0].name)
    (4, 2, 3) bw/kernel:0
    """

    def __init__(self, cell) -> None:
        self._cell = cell

    @staticmethod
    def _reverse(t, lengths):
        if isinstance(t, list):
            return list(reversed(t))
        if lengths is None:
            return array_ops.reverse_v2(t, [0])
        return array_ops.reverse_sequence(t, lengths, seq_axis=0, batch_axis=1)

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        outputs, state = self._cell(self._reverse(inputs, sequence_length),
                                    initial_state=initial_state, dtype=dtype,
                                    sequence_length=sequence_length, scope=scope)
        return self._reverse(outputs, sequence_length), state


def _layer_norm(x, gamma, beta, epsilon: float = 1e-12):
    mean = math_reduce.reduce_mean(x, [-1], keepdims=True)
    var = math_reduce.reduce_mean(math_ops.square(x - mean), [-1], keepdims=True)
    return (x - mean) * math_ops.rsqrt(var + epsilon) * gamma + beta


class LayerNormBasicLSTMCell(LayerRNNCell):
    """A basic LSTM with layer normalization (Ba et al., 2016) of each gate's
    pre-activation and of the new cell state, and recurrent dropout on the candidate
    (Semeniuta et al., 2016). Variables: ``kernel``; with ``layer_norm`` the
    ``gamma``/``beta`` of ``input``, ``transform``, ``forget``, ``output`` and
    ``state``, else ``bias``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.contrib.rnn.LayerNormBasicLSTMCell(2)
    ...     _ = cell(tf.ones([1, 3]), cell.zero_state(1, tf.float32))
    ...     print([v.name for v in tf.global_variables()][:2])
    ['layer_norm_basic_lstm_cell/kernel:0', 'layer_norm_basic_lstm_cell/input/gamma:0']
    """

    _GATES = ("input", "transform", "forget", "output", "state")

    def __init__(self, num_units: int, forget_bias: float = 1.0, input_size=None,
                 activation=None, layer_norm: bool = True, norm_gain: float = 1.0,
                 norm_shift: float = 0.0, dropout_keep_prob=1.0, dropout_prob_seed=None,
                 reuse=None) -> None:
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._activation = activation or math_ops.tanh
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    state_size = property(lambda self: LSTMStateTuple(self._num_units, self._num_units))
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._norms = {}
        if self._layer_norm:
            for gate in self._GATES:
                self._norms[gate] = (
                    self.add_variable(f"{gate}/gamma", [n],
                                      initializer=init_ops.constant_initializer(self._norm_gain)),
                    self.add_variable(f"{gate}/beta", [n],
                                      initializer=init_ops.constant_initializer(self._norm_shift)))
        else:
            self._bias = self.add_variable("bias", [4 * n])
        self.built = True

    def _norm(self, x, gate: str):
        return _layer_norm(x, *self._norms[gate]) if self._layer_norm else x

    def call(self, inputs, state):
        c, h = state
        out = math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel)
        if not self._layer_norm:
            out = nn_ops.bias_add(out, self._bias)
        i, j, f, o = array_ops.split(out, 4, axis=1)
        i, j, f, o = (self._norm(i, "input"), self._norm(j, "transform"),
                      self._norm(f, "forget"), self._norm(o, "output"))
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = nn_impl.dropout(g, keep_prob=self._keep_prob, seed=self._seed)
        new_c = c * math_ops.sigmoid(f + self._forget_bias) + math_ops.sigmoid(i) * g
        new_c = self._norm(new_c, "state")
        new_h = self._activation(new_c) * math_ops.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class UGRNNCell(LayerRNNCell):
    """The update-gate RNN of Collins et al., 2016: ``g, c = split(W [x, h] + b)``,
    ``h' = sigmoid(g + forget_bias) h + (1 - sigmoid(g + forget_bias)) tanh(c)``.
    Variables ``kernel [in + units, 2 units]`` and ``bias`` (zeros).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.UGRNNCell(4).output_size
    4
    """

    def __init__(self, num_units: int, initializer=None, forget_bias: float = 1.0,
                 activation=None, reuse=None) -> None:
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._activation = activation or math_ops.tanh

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 2 * n],
                                         initializer=self._initializer)
        self._bias = self.add_variable("bias", [2 * n], initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        m = nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, state], 1),
                                            self._kernel), self._bias)
        g_act, c_act = array_ops.split(m, 2, axis=1)
        g = math_ops.sigmoid(g_act + self._forget_bias)
        new_state = g * state + (1.0 - g) * self._activation(c_act)
        return new_state, new_state


class HighwayWrapper(_Wrapper):
    """Highway connection around a cell (Srivastava et al., 2015): ``out = x carry +
    cell(x) transform`` with ``carry = sigmoid(x W_c + b_c)`` and ``transform = 1 -
    carry`` (or its own gate with ``couple_carry_transform_gates=False``). Variables
    ``carry_w``, ``carry_b`` (``transform_w``, ``transform_b``) in the caller's scope.
    The cell's output must have the input's size.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.contrib.rnn.HighwayWrapper(tf.nn.rnn_cell.GRUCell(3))
    ...     out, _ = cell(tf.ones([2, 3]), tf.zeros([2, 3]))
    ...     print(out.shape)
    (2, 3)
    """

    def __init__(self, cell, couple_carry_transform_gates: bool = True,
                 carry_bias_init: float = 1.0) -> None:
        super().__init__(cell)
        self._couple = couple_carry_transform_gates
        self._carry_bias_init = carry_bias_init

    def _highway(self, inp, out):
        size = _last_dim(inp.shape, "HighwayWrapper")
        carry_w = vs.get_variable("carry_w", [size, size], dtype=inp.dtype)
        carry_b = vs.get_variable("carry_b", [size], dtype=inp.dtype,
                                  initializer=init_ops.constant_initializer(
                                      self._carry_bias_init))
        carry = math_ops.sigmoid(nn_ops.bias_add(math_ops.matmul(inp, carry_w), carry_b))
        if self._couple:
            transform = 1 - carry
        else:
            transform_w = vs.get_variable("transform_w", [size, size], dtype=inp.dtype)
            transform_b = vs.get_variable("transform_b", [size], dtype=inp.dtype,
                                          initializer=init_ops.constant_initializer(
                                              -self._carry_bias_init))
            transform = math_ops.sigmoid(nn_ops.bias_add(math_ops.matmul(inp, transform_w),
                                                         transform_b))
        return inp * carry + out * transform

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self._cell(inputs, state, scope=scope)
        nest.assert_same_structure(inputs, outputs)

        def check(inp, out):
            if not inp.shape.is_compatible_with(out.shape):
                raise ValueError(f"HighwayWrapper: the cell's output {out.shape} must have "
                                 f"the shape of its input {inp.shape}.")

        nest.map_structure(check, inputs, outputs)
        return nest.map_structure(self._highway, inputs, outputs), new_state


def _linear(args, size: int, name: str = ""):
    """``concat(args) W + b`` with variables ``<name>/kernel`` and ``<name>/bias`` (zeros)
    in the current variable scope, as contrib's ``_Linear``."""
    x = array_ops.concat(args, 1) if len(args) > 1 else args[0]
    depth = _last_dim(x.shape, "AttentionCellWrapper")
    prefix = f"{name}/" if name else ""
    kernel = vs.get_variable(f"{prefix}kernel", [depth, size], dtype=x.dtype)
    bias = vs.get_variable(f"{prefix}bias", [size], dtype=x.dtype,
                           initializer=init_ops.zeros_initializer())
    return nn_ops.bias_add(math_ops.matmul(x, kernel), bias)


class AttentionCellWrapper(RNNCell):
    """Attention over the cell's last `attn_length` outputs (Bahdanau-style scoring of a
    sliding window), as TF 1.x's contrib wrapper: the inputs are mixed with the last
    attention vector (``kernel``, ``bias``), the cell runs, its state queries the window
    (``attention/attn_w [1, 1, attn_size, attn_vec_size]``, ``attention/attn_v``,
    ``attention/kernel``, ``attention/bias``) and ``[cell output, attention]`` is
    projected to the output (``attn_output_projection/kernel``, ``bias``), which joins
    the window. The state is ``(cell state, attention, flattened window)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.contrib.rnn.AttentionCellWrapper(tf.nn.rnn_cell.GRUCell(4), 3)
    ...     out, st = tf.nn.dynamic_rnn(cell, tf.ones([2, 5, 3]), dtype=tf.float32)
    ...     print(out.shape, st[2].shape)
    (2, 5, 4) (2, 12)
    """

    def __init__(self, cell, attn_length: int, attn_size=None, attn_vec_size=None,
                 input_size=None, state_is_tuple: bool = True, reuse=None) -> None:
        super().__init__(_reuse=reuse)
        if not isinstance(cell, RNNCell):
            raise TypeError(f"AttentionCellWrapper: the wrapped cell must be an RNNCell, got "
                            f"{cell!r}.")
        if attn_length <= 0:
            raise ValueError(f"attn_length should be greater than zero, got {attn_length}")
        if nest.flatten(cell.state_size) != [cell.state_size] and not state_is_tuple:
            raise ValueError("AttentionCellWrapper: a cell with a tuple state needs "
                             f"state_is_tuple=True, got state_size {cell.state_size}.")
        self._cell = cell
        self._attn_length = int(attn_length)
        self._attn_size = int(attn_size or cell.output_size)
        self._attn_vec_size = int(attn_vec_size or self._attn_size)
        self._input_size = input_size
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        size = (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)
        return size if self._state_is_tuple else sum(size)

    output_size = property(lambda self: self._attn_size)

    def _attention(self, query, window):
        a, n, v_size = self._attn_size, self._attn_length, self._attn_vec_size
        with vs.variable_scope("attention"):
            k = vs.get_variable("attn_w", [1, 1, a, v_size], dtype=query.dtype)
            v = vs.get_variable("attn_v", [v_size], dtype=query.dtype)
            features = tensordot(window, array_ops.reshape(k, [a, v_size]), 1)  # a 1x1 conv
            y = array_ops.expand_dims(_linear([query], v_size), 1)
            scores = math_reduce.reduce_sum(v * math_ops.tanh(features + y), [2])
            weights = nn_ops.softmax(scores)
            attns = math_reduce.reduce_sum(array_ops.expand_dims(weights, 2) * window, [1])
            return attns, array_ops.slice(window, [0, 1, 0], array_ops.stack([-1, n - 1, a]))

    def call(self, inputs, state):
        a, n = self._attn_size, self._attn_length
        if self._state_is_tuple:
            cell_state, attns, window = state
        else:
            c = self._cell.state_size
            cell_state = array_ops.slice(state, [0, 0], [-1, c])
            attns = array_ops.slice(state, [0, c], [-1, a])
            window = array_ops.slice(state, [0, c + a], [-1, a * n])
        window = array_ops.reshape(window, [-1, n, a])
        size = self._input_size or _last_dim(inputs.shape, "AttentionCellWrapper")
        inputs = _linear([inputs, attns], size)
        cell_output, new_cell_state = self._cell(inputs, cell_state)
        query = array_ops.concat(nest.flatten(new_cell_state), 1) \
            if self._state_is_tuple else new_cell_state
        new_attns, window = self._attention(query, window)
        with vs.variable_scope("attn_output_projection"):
            output = _linear([cell_output, new_attns], a)
        window = array_ops.concat([window, array_ops.expand_dims(output, 1)], 1)
        window = array_ops.reshape(window, [-1, n * a])
        new_state = (new_cell_state, new_attns, window)
        if not self._state_is_tuple:
            new_state = array_ops.concat(list(new_state), 1)
        return output, new_state


def _check_stack(cells_fw, cells_bw):
    if not cells_fw:
        raise ValueError("Must specify at least one fw cell for BidirectionalRNN.")
    if not cells_bw:
        raise ValueError("Must specify at least one bw cell for BidirectionalRNN.")
    if not isinstance(cells_fw, list) or not isinstance(cells_bw, list):
        raise ValueError("cells_fw and cells_bw must be lists of RNNCells (one per layer).")
    if len(cells_fw) != len(cells_bw):
        raise ValueError("Forward and Backward cells must have the same depth.")


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                                    initial_states_bw=None, dtype=None, sequence_length=None,
                                    parallel_iterations=None, time_major: bool = False,
                                    scope=None, swap_memory: bool = False):
    """Layers of `bidirectional_dynamic_rnn`, each reading the concatenated forward and
    backward outputs of the layer below. Returns ``(outputs, states_fw, states_bw)``;
    layer ``i`` lives in ``stack_bidirectional_rnn/cell_i/bidirectional_rnn/{fw,bw}``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cells = lambda: [tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.GRUCell(2)]
    ...     out, fw, bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
    ...         cells(), cells(), tf.ones([4, 5, 6]), dtype=tf.float32)
    ...     print(out.shape, len(fw), tf.global_variables()[0].name)
    (4, 5, 4) 2 stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/gates/kernel:0
    """
    _check_stack(cells_fw, cells_bw)
    states_fw, states_bw = [], []
    layer = inputs
    with vs.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with vs.variable_scope(f"cell_{i}"):
                outputs, (state_fw, state_bw) = bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, parallel_iterations=parallel_iterations,
                    dtype=dtype, swap_memory=swap_memory, time_major=time_major)
                layer = array_ops.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                            initial_states_bw=None, dtype=None, sequence_length=None,
                            scope=None):
    """`stack_bidirectional_dynamic_rnn` over a list of per-step inputs
    (`static_bidirectional_rnn` per layer).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     out, _, _ = tf.contrib.rnn.stack_bidirectional_rnn(
    ...         [tf.nn.rnn_cell.GRUCell(3)], [tf.nn.rnn_cell.GRUCell(3)],
    ...         [tf.ones([2, 4])] * 3, dtype=tf.float32)
    ...     print(len(out), out[0].shape)
    3 (2, 6)
    """
    _check_stack(cells_fw, cells_bw)
    states_fw, states_bw = [], []
    layer = inputs
    with vs.variable_scope(scope or "stack_bidirectional_rnn"):
        for i, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
            with vs.variable_scope(f"cell_{i}"):
                layer, state_fw, state_bw = static_bidirectional_rnn(
                    cell_fw, cell_bw, layer,
                    initial_state_fw=initial_states_fw[i] if initial_states_fw else None,
                    initial_state_bw=initial_states_bw[i] if initial_states_bw else None,
                    sequence_length=sequence_length, dtype=dtype)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer, tuple(states_fw), tuple(states_bw)

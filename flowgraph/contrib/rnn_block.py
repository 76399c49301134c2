"""`tf.contrib.rnn`'s block cells: `LSTMBlockCell`, `LSTMBlockWrapper` /
`LSTMBlockFusedCell`, `GRUBlockCell` and `GRUBlockCellV2`, built from TensorFlow's fused op
types (`flowgraph/ops/rnn_block_ops.py`) with TF 1.x's variable names and the values of
`LSTMCell` / `GRUCell`.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.rnn.LSTMBlockCell(3).state_size
LSTMStateTuple(c=3, h=3)
"""

from __future__ import annotations

from flowgraph.contrib.rnn_extra import FusedRNNCell
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, init_ops, math_ops, math_reduce
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.rnn_block_ops import block_lstm, gru_block_cell, lstm_block_cell
from flowgraph.ops.rnn_cell_impl import GRUCell, LSTMCell, LSTMStateTuple, _last_dim

__all__ = ["GRUBlockCell", "GRUBlockCellV2", "LSTMBlockCell", "LSTMBlockFusedCell",
           "LSTMBlockWrapper"]


class LSTMBlockCell(LSTMCell):
    """contrib's fused LSTM: one ``LSTMBlockCell`` op per step, on the variables of
    `LSTMCell` (``lstm_cell/kernel``, ``lstm_cell/bias``, peepholes ``w_i_diag``,
    ``w_f_diag``, ``w_o_diag``) with its values. ``cell_clip`` of None or a negative
    value disables clipping.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.LSTMBlockCell(3).state_size
    LSTMStateTuple(c=3, h=3)
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip=None,
                 use_peephole: bool = False, dtype=None, reuse=None,
                 name: str = "lstm_cell") -> None:
        clip = None if cell_clip is None or cell_clip < 0 else cell_clip
        super().__init__(num_units, use_peepholes=use_peephole, cell_clip=clip,
                         forget_bias=forget_bias, reuse=reuse, name=name, dtype=dtype)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n = self._num_units
        self._kernel = self.add_variable("kernel", [depth + n, 4 * n])
        self._bias = self.add_variable("bias", [4 * n],
                                       initializer=init_ops.constant_initializer(0.0))
        if self._use_peepholes:  # TF's order: i, f, o
            self._w_i_diag = self.add_variable("w_i_diag", [n])
            self._w_f_diag = self.add_variable("w_f_diag", [n])
            self._w_o_diag = self.add_variable("w_o_diag", [n])
        self.built = True

    def call(self, inputs, state):
        if len(state) != 2:
            raise ValueError("Expecting state to be a tuple with length 2.")
        if self._use_peepholes:
            peep = {"wci": self._w_i_diag, "wcf": self._w_f_diag, "wco": self._w_o_diag}
        else:
            zeros = array_ops.zeros([self._num_units], dtype=inputs.dtype.base_dtype)
            peep = {"wci": zeros, "wcf": zeros, "wco": zeros}
        cs_prev, h_prev = state
        _, cs, _, _, _, _, h = lstm_block_cell(
            inputs, cs_prev, h_prev, self._kernel, self._bias, **peep,
            forget_bias=self._forget_bias, cell_clip=self._cell_clip,
            use_peephole=self._use_peepholes)
        return h, LSTMStateTuple(cs, h)


class GRUBlockCellV2(GRUCell):
    """contrib's fused GRU: one ``GRUBlockCell`` op per step, on the variables of
    `GRUCell` (``gru_cell/gates/kernel``, ``gates/bias`` initialized to 1,
    ``candidate/kernel``, ``candidate/bias``), with its values.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.GRUBlockCellV2(5).state_size
    5
    """

    def __init__(self, num_units=None, cell_size=None, reuse=None, name: str = "gru_cell",
                 dtype=None) -> None:
        units = cell_size if num_units is None else num_units
        if units is None:
            raise ValueError(f"{type(self).__name__}: give num_units (or cell_size).")
        super().__init__(units, reuse=reuse, name=name, dtype=dtype)

    def call(self, inputs, state):
        *_, new_h = gru_block_cell(inputs, state, self._gate_kernel, self._candidate_kernel,
                                   self._gate_bias, self._candidate_bias)
        return new_h, new_h


class GRUBlockCell(GRUBlockCellV2):
    """contrib's first fused GRU: `GRUBlockCellV2` with the variables named ``w_ru``,
    ``b_ru`` (initialized to 1), ``w_c`` and ``b_c``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.contrib.rnn.GRUBlockCell(2)
    ...     _ = cell(tf.ones([1, 3]), cell.zero_state(1, tf.float32))
    ...     print([v.name for v in tf.global_variables()])
    ['gru_cell/w_ru:0', 'gru_cell/b_ru:0', 'gru_cell/w_c:0', 'gru_cell/b_c:0']
    """

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n = self._num_units
        self._gate_kernel = self.add_variable("w_ru", [depth + n, 2 * n])
        self._gate_bias = self.add_variable("b_ru", [2 * n],
                                            initializer=init_ops.constant_initializer(1.0))
        self._candidate_kernel = self.add_variable("w_c", [depth + n, n])
        self._candidate_bias = self.add_variable("b_c", [n],
                                                 initializer=init_ops.constant_initializer(0.0))
        self.built = True


class LSTMBlockWrapper(FusedRNNCell):
    """contrib's base of whole-sequence LSTMs: a subclass gives ``num_units``, creates
    its variables in ``_build(depth, dtype)`` (inside the cell's variable scope) and runs
    the sequence in ``_call_cell(inputs, initial_cell_state, initial_output, dtype,
    sequence_length) -> (cell_states, outputs)``, both ``[time, batch, num_units]``.
    Calling it returns ``(outputs, LSTMStateTuple)``: with `sequence_length`, outputs past
    each length are zeroed and the final state is the one at that length.

    Example
    -------
    >>> import flowgraph as tf
    >>> issubclass(tf.contrib.rnn.LSTMBlockFusedCell, tf.contrib.rnn.LSTMBlockWrapper)
    True
    """

    def __init__(self, name: str = "lstm_block_wrapper", reuse=None) -> None:
        self._name = name
        self._reuse = reuse
        self._scope = None
        self.built = False

    @property
    def num_units(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define num_units")

    def _build(self, depth: int, dtype) -> None:
        self.built = True

    def _call_cell(self, inputs, initial_cell_state, initial_output, dtype, sequence_length):
        raise NotImplementedError(f"{type(self).__name__} must define _call_cell")

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        is_list = isinstance(inputs, list)
        inputs = array_ops.stack(inputs) if is_list else inputs
        inputs = convert_to_tensor(inputs, name="inputs")
        if inputs.shape.ndims != 3 or inputs.shape[2].value is None:
            raise ValueError(f"{type(self).__name__}: expecting inputs [time, batch, depth] "
                             f"with a known depth, got shape {inputs.shape}.")
        if initial_state is None and dtype is None:
            raise ValueError("Either initial_state or dtype needs to be specified")
        if initial_state is not None and len(initial_state) != 2:
            raise ValueError("Expecting initial_state to be a tuple with length 2 or None")
        dtype = dtype or initial_state[0].dtype
        if self._scope is None:
            with vs.variable_scope(scope, default_name=self._name) as captured:
                self._scope = captured
        with vs.variable_scope(self._scope, reuse=True if self.built else self._reuse):
            if not self.built:
                self._build(inputs.shape[2].value, dtype)
            outputs, final = self._run(inputs, initial_state, dtype, sequence_length)
        if is_list:
            outputs = array_ops.unstack(outputs)
        return outputs, final

    def _run(self, inputs, initial_state, dtype, sequence_length):
        time = inputs.shape[0].value
        time = array_ops.shape(inputs)[0] if time is None else time
        batch = inputs.shape[1].value
        batch = array_ops.shape(inputs)[1] if batch is None else batch
        if initial_state is None:
            zeros = array_ops.zeros(array_ops.stack([batch, self.num_units]), dtype=dtype)
            initial_state = (zeros, zeros)
        c0, h0 = initial_state
        if sequence_length is not None:
            sequence_length = convert_to_tensor(sequence_length)
        cs, h = self._call_cell(inputs, c0, h0, dtype, sequence_length)
        if sequence_length is None:
            return h, LSTMStateTuple(cs[-1], h[-1])
        mask = array_ops.transpose(array_ops.sequence_mask(sequence_length, time, dtype=dtype),
                                   [1, 0])
        h = h * array_ops.tile(array_ops.expand_dims(mask, -1), [1, 1, self.num_units])
        # Prepend the initial state, so that a length of 0 selects it.
        all_cs = array_ops.concat([array_ops.expand_dims(c0, 0), cs], 0)
        all_h = array_ops.concat([array_ops.expand_dims(h0, 0), h], 0)
        at = array_ops.stack([sequence_length, array_ops.range(batch)], axis=1)
        return h, LSTMStateTuple(array_ops.gather_nd(all_cs, at), array_ops.gather_nd(all_h, at))


class LSTMBlockFusedCell(LSTMBlockWrapper):
    """contrib's whole-sequence LSTM: called on time-major inputs ``[time, batch,
    depth]`` (or a list of ``[batch, depth]``), it returns ``(outputs, final_state)``
    with an `LSTMStateTuple` final state, the values of `LSTMCell` (forget bias 1, no
    clipping by default). Variables ``lstm_fused_cell/kernel``, ``bias`` (and the
    peepholes ``w_i_diag``, ``w_f_diag``, ``w_o_diag``), computed by one ``BlockLSTM``
    op over the whole sequence.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     lstm = tf.contrib.rnn.LSTMBlockFusedCell(4)
    ...     out, state = lstm(tf.ones([5, 2, 3]), dtype=tf.float32, sequence_length=[5, 2])
    ...     print(out.shape, state.h.shape, tf.global_variables()[0].name)
    (5, 2, 4) (2, 4) lstm_fused_cell/kernel:0
    """

    def __init__(self, num_units: int, forget_bias: float = 1.0, cell_clip=None,
                 use_peephole: bool = False, reuse=None, dtype=None,
                 name: str = "lstm_fused_cell") -> None:
        super().__init__(name=name, reuse=reuse)
        self._num_units = int(num_units)
        self.forget_bias = forget_bias
        self.cell_clip = cell_clip
        self.use_peephole = use_peephole
        self._dtype = dtype

    num_units = property(lambda self: self._num_units)

    def _build(self, depth: int, dtype) -> None:
        n = self.num_units
        self.kernel = vs.get_variable("kernel", [depth + n, 4 * n], dtype=dtype)
        self.bias = vs.get_variable("bias", [4 * n], dtype=dtype,
                                    initializer=init_ops.zeros_initializer())
        if self.use_peephole:
            self.w_i_diag = vs.get_variable("w_i_diag", [n], dtype=dtype)
            self.w_f_diag = vs.get_variable("w_f_diag", [n], dtype=dtype)
            self.w_o_diag = vs.get_variable("w_o_diag", [n], dtype=dtype)
        self.built = True

    def _call_cell(self, inputs, initial_cell_state, initial_output, dtype, sequence_length):
        if self.use_peephole:
            wci, wcf, wco = self.w_i_diag, self.w_f_diag, self.w_o_diag
        else:
            wci = wcf = wco = array_ops.zeros([self.num_units], dtype=dtype)
        if sequence_length is None:
            time = inputs.shape[0].value
            time = array_ops.shape(inputs)[0] if time is None else time
            steps = math_ops.cast(time, _dtypes.int64)
        else:
            steps = math_ops.cast(math_reduce.reduce_max(sequence_length), _dtypes.int64)
        clip = -1.0 if self.cell_clip is None else self.cell_clip
        _, cs, _, _, _, _, h = block_lstm(steps, inputs, initial_cell_state, initial_output,
                                          self.kernel, wci, wcf, wco, self.bias,
                                          forget_bias=self.forget_bias, cell_clip=clip,
                                          use_peephole=self.use_peephole)
        return cs, h

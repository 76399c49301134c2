"""`tf.contrib.cudnn_rnn`: the cuDNN RNN layers (`CudnnLSTM`, `CudnnGRU`, `CudnnRNNTanh`,
`CudnnRNNRelu`) and their CPU-side twins (`CudnnCompatibleLSTMCell`,
`CudnnCompatibleGRUCell`).

A cuDNN layer keeps all its weights in one flat ``opaque_kernel`` variable (layout:
`flowgraph/contrib/cudnn_rnn_params.py`) and runs on any device here: flowgraph unpacks
the vector and computes cuDNN's equations with ordinary ops (so gradients flow to the
vector). Inputs are time-major ``[time, batch, input_size]`` unless
``time_major=False``; outputs ``[time, batch, num_dirs * num_units]`` and final states
``[num_layers * num_dirs, batch, num_units]`` (``(h, c)`` for an LSTM, ``(h,)``
otherwise). A default `tf.train.Saver` writes the weights under the compatible cells'
names (``cudnn_lstm/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/kernel`` ...)
besides the opaque vector, so a graph of compatible cells restores them for inference.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     lstm = tf.contrib.cudnn_rnn.CudnnLSTM(num_layers=2, num_units=4)
...     outputs, (h, c) = lstm(tf.ones([5, 3, 6]))
...     print(outputs.shape, h.shape, lstm.kernel.name)
(5, 3, 4) (2, 3, 4) cudnn_lstm/opaque_kernel:0
"""

from __future__ import annotations

from flowgraph.contrib.cudnn_rnn_params import (
    CUDNN_GRU,
    CUDNN_INPUT_AUTO_MODE,
    CUDNN_INPUT_LINEAR_MODE,
    CUDNN_INPUT_SKIP_MODE,
    CUDNN_LSTM,
    CUDNN_RNN_BIDIRECTION,
    CUDNN_RNN_RELU,
    CUDNN_RNN_TANH,
    CUDNN_RNN_UNIDIRECTION,
    PARAMS_PER_LAYER,
    CudnnGRUSaveable,
    CudnnLSTMSaveable,
    CudnnOpaqueParamsSaveable,
    CudnnParamsFormatConverterGRU,
    CudnnParamsFormatConverterLSTM,
    CudnnParamsFormatConverterRelu,
    CudnnParamsFormatConverterTanh,
    CudnnRNNReluSaveable,
    CudnnRNNTanhSaveable,
    _Shapes,
    canonical_to_params,
    check_direction,
    check_input_mode,
    check_linear_input,
    params_to_canonical,
)
from flowgraph.contrib.rnn import LSTMBlockCell
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, add_to_collection, name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers.core import Layer
from flowgraph.ops import init_ops, math_ops, nn_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_join_ops import concat, split, stack, unstack
from flowgraph.ops.array_shape_ops import shape as _shape
from flowgraph.ops.array_shape_ops import transpose, zeros
from flowgraph.ops.nn_impl import dropout as _dropout
from flowgraph.ops.rnn import bidirectional_dynamic_rnn, dynamic_rnn
from flowgraph.ops.rnn_cell_impl import GRUCell, RNNCell, _last_dim

__all__ = [
    "CUDNN_GRU",
    "CUDNN_INPUT_AUTO_MODE",
    "CUDNN_INPUT_LINEAR_MODE",
    "CUDNN_INPUT_SKIP_MODE",
    "CUDNN_LSTM",
    "CUDNN_RNN_BIDIRECTION",
    "CUDNN_RNN_RELU",
    "CUDNN_RNN_TANH",
    "CUDNN_RNN_UNIDIRECTION",
    "CudnnCompatibleGRUCell",
    "CudnnCompatibleLSTMCell",
    "CudnnGRU",
    "CudnnGRUSaveable",
    "CudnnLSTM",
    "CudnnLSTMSaveable",
    "CudnnOpaqueParamsSaveable",
    "CudnnParamsFormatConverterGRU",
    "CudnnParamsFormatConverterLSTM",
    "CudnnParamsFormatConverterRelu",
    "CudnnParamsFormatConverterTanh",
    "CudnnRNNRelu",
    "CudnnRNNReluSaveable",
    "CudnnRNNTanh",
    "CudnnRNNTanhSaveable",
]


# -- the CPU-side cells ----------------------------------------------------------------------
class CudnnCompatibleLSTMCell(LSTMBlockCell):
    """An LSTM cell with cuDNN's equations (no forget bias, no peepholes, no clipping):
    the weights a `CudnnLSTM` saves restore into it (``cudnn_compatible_lstm_cell/kernel``
    ``[input + units, 4 * units]`` in gate order i, c, f, o, and ``.../bias``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.cudnn_rnn.CudnnCompatibleLSTMCell(8).state_size
    LSTMStateTuple(c=8, h=8)
    """

    def __init__(self, num_units: int, reuse=None) -> None:
        super().__init__(num_units, forget_bias=0, cell_clip=None, use_peephole=False,
                         reuse=reuse, name="cudnn_compatible_lstm_cell")


class CudnnCompatibleGRUCell(GRUCell):
    """A GRU cell with cuDNN's candidate, ``tanh(W_h x + b_Wh + r * (R_h h + b_Rh))``
    (the reset gate scales the projected state, not the state), so that a `CudnnGRU`'s
    saved weights restore into it: ``gates/kernel`` ``[input + units, 2 * units]`` (r, u),
    ``gates/bias``, ``candidate/input_projection/{kernel,bias}`` and
    ``candidate/hidden_projection/{kernel,bias}``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.cudnn_rnn.CudnnCompatibleGRUCell(8).output_size
    8
    """

    def __init__(self, num_units: int, reuse=None, kernel_initializer=None) -> None:
        super().__init__(num_units, activation=None, reuse=reuse,
                         kernel_initializer=kernel_initializer,
                         name="cudnn_compatible_gru_cell")

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        n, kinit, binit = self._num_units, self._kernel_initializer, self._bias_initializer
        self._gate_kernel = self.add_variable("gates/kernel", [depth + n, 2 * n],
                                              initializer=kinit)
        self._gate_bias = self.add_variable(
            "gates/bias", [2 * n], initializer=binit or init_ops.constant_initializer(1.0))
        self._input_kernel = self.add_variable("candidate/input_projection/kernel",
                                               [depth, n], initializer=kinit)
        self._hidden_kernel = self.add_variable("candidate/hidden_projection/kernel",
                                                [n, n], initializer=kinit)
        self._input_bias = self.add_variable("candidate/input_projection/bias", [n],
                                             initializer=binit or init_ops.zeros_initializer())
        self._hidden_bias = self.add_variable("candidate/hidden_projection/bias", [n],
                                              initializer=binit or init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = math_ops.sigmoid(nn_ops.bias_add(
            math_ops.matmul(concat([inputs, state], 1), self._gate_kernel), self._gate_bias))
        r, u = split(gates, 2, axis=1)
        hi = nn_ops.bias_add(math_ops.matmul(inputs, self._input_kernel), self._input_bias)
        hh = r * nn_ops.bias_add(math_ops.matmul(state, self._hidden_kernel),
                                 self._hidden_bias)
        c = self._activation(hi + hh)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


# -- one layer and direction of the opaque model ---------------------------------------------
class _OpaqueCell(RNNCell):
    """One cuDNN layer-direction as a cell over given canonical tensors (no variables):
    W ``[gates * n, in]``, R ``[gates * n, n]``, b ``[gates * n]`` (both biases summed
    except for the GRU candidate's recurrent bias, kept apart as cuDNN applies it
    inside the reset gate)."""

    def __init__(self, mode: str, num_units: int, ws, bs, dtype) -> None:
        super().__init__(name=f"cudnn_{mode}_cell", dtype=dtype)
        gates = PARAMS_PER_LAYER[mode] // 2
        self._mode, self._n = mode, num_units
        self._w = concat(ws[:gates], axis=0)
        self._r = concat(ws[gates:], axis=0)
        self._bw = concat(bs[:gates], axis=0)
        self._br = concat(bs[gates:], axis=0)

    @property
    def state_size(self):
        return (self._n, self._n) if self._mode == CUDNN_LSTM else self._n

    @property
    def output_size(self):
        return self._n

    def __call__(self, inputs, state, scope=None):
        return self.call(inputs, state)

    def call(self, inputs, state):
        x = math_ops.matmul(inputs, self._w, transpose_b=True) + self._bw
        if self._mode == CUDNN_LSTM:
            c, h = state
            z = x + math_ops.matmul(h, self._r, transpose_b=True) + self._br
            i, f, g, o = split(z, 4, axis=1)
            new_c = math_ops.sigmoid(f) * c + math_ops.sigmoid(i) * math_ops.tanh(g)
            new_h = math_ops.sigmoid(o) * math_ops.tanh(new_c)
            return new_h, (new_c, new_h)
        h = state
        hz = math_ops.matmul(h, self._r, transpose_b=True) + self._br
        if self._mode == CUDNN_GRU:
            xr, xu, xh = split(x, 3, axis=1)
            hr, hu, hh = split(hz, 3, axis=1)
            r = math_ops.sigmoid(xr + hr)
            u = math_ops.sigmoid(xu + hu)
            cand = math_ops.tanh(xh + r * hh)
            new_h = u * h + (1 - u) * cand
        elif self._mode == CUDNN_RNN_TANH:
            new_h = math_ops.tanh(x + hz)
        else:
            new_h = nn_ops.relu(x + hz)
        return new_h, new_h


def _unit_params(ws, bs, per_layer: int, unit: int):
    return (ws[unit * per_layer:(unit + 1) * per_layer],
            bs[unit * per_layer:(unit + 1) * per_layer])


def _forward(mode, shapes: _Shapes, params, inputs, h, c, sequence_lengths, training,
             dropout, seed, dtype):
    """cuDNN's forward pass over time-major `inputs`: (outputs, final h, final c or None)."""
    ws, bs = params_to_canonical(params, shapes)
    per = PARAMS_PER_LAYER[mode]
    x = inputs
    hs, cs = [], []
    for layer in range(shapes.num_layers):
        if layer > 0 and training and dropout > 0:
            x = _dropout(x, rate=dropout, seed=seed)
        units = [layer * shapes.num_dirs + d for d in range(shapes.num_dirs)]
        cells, states = [], []
        for u in units:
            w, b = _unit_params(ws, bs, per, u)
            cells.append(_OpaqueCell(mode, shapes.num_units, w, b, dtype))
            states.append((c[u], h[u]) if mode == CUDNN_LSTM else h[u])
        with vs.variable_scope(f"layer_{layer}"):
            if shapes.num_dirs == 1:
                x, final = dynamic_rnn(cells[0], x, sequence_length=sequence_lengths,
                                       initial_state=states[0], time_major=True)
                finals = [final]
            else:
                (fw, bw), finals = bidirectional_dynamic_rnn(
                    cells[0], cells[1], x, sequence_length=sequence_lengths,
                    initial_state_fw=states[0], initial_state_bw=states[1], time_major=True)
                x = concat([fw, bw], axis=2)
        for final in finals:
            if mode == CUDNN_LSTM:
                cs.append(final[0])
                hs.append(final[1])
            else:
                hs.append(final)
    return x, stack(hs), (stack(cs) if mode == CUDNN_LSTM else None)


# -- the layers ------------------------------------------------------------------------------
class _CudnnRNN(Layer):
    """Base of the cuDNN layers: one opaque params variable, cuDNN's equations."""

    _rnn_mode = CUDNN_LSTM
    _saveable_cls = CudnnLSTMSaveable

    def __init__(self, num_layers, num_units, input_mode=CUDNN_INPUT_LINEAR_MODE,
                 direction=CUDNN_RNN_UNIDIRECTION, dropout=0.0, seed=None,
                 dtype=_dtypes.float32, kernel_initializer=None, bias_initializer=None,
                 name=None) -> None:
        super().__init__(dtype=dtype, name=name)
        check_direction(direction)
        check_input_mode(input_mode)
        dtype = _dtypes.as_dtype(dtype)
        if dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
            raise ValueError(f"Only support float16, float32, float64, provided {dtype}")
        self._plain_dtype = dtype
        self._num_layers = int(num_layers)
        self._num_units = int(num_units)
        self._input_mode = input_mode
        self._direction = direction
        self._dropout = float(dropout)
        self._seed = seed
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer
        self._input_size = None
        self._saveable = None
        self.kernel = None

    num_layers = property(lambda self: self._num_layers)
    num_units = property(lambda self: self._num_units)
    input_mode = property(lambda self: self._input_mode)
    rnn_mode = property(lambda self: self._rnn_mode)
    direction = property(lambda self: self._direction)
    num_dirs = property(lambda self: 1 if self._direction == CUDNN_RNN_UNIDIRECTION else 2)
    saveable = property(lambda self: self._saveable)

    @property
    def input_size(self) -> int:
        if not self._input_size:
            raise ValueError("'input_size' is unknown since layer has not been built.")
        return self._input_size

    def _shapes(self) -> _Shapes:
        if not self._input_size:
            raise RuntimeError(f"{type(self).__name__}: canonical shapes asked for before the "
                               "input shape is known (call or build the layer first)")
        return _Shapes(self._rnn_mode, self._num_layers, self._num_units, self._input_size,
                       self._direction)

    @property
    def canonical_weight_shapes(self) -> list:
        """cuDNN canonical weight shapes, in cuDNN order."""
        return [tuple(s) for s in self._shapes().weight_shapes]

    @property
    def canonical_bias_shapes(self) -> list:
        """cuDNN canonical bias shapes, in cuDNN order."""
        return self._shapes().bias_shapes

    def build(self, input_shape) -> None:
        if self.built:
            return
        input_shape = TensorShape(input_shape)
        if input_shape.ndims != 3:
            raise ValueError(f"Expecting input_shape with 3 dims, got {input_shape.ndims}")
        if input_shape[-1].value is None:
            raise ValueError("The last dimension of the inputs to `CudnnRNN` should be "
                             "defined. Found `None`.")
        self._input_size = input_shape[-1].value
        check_linear_input(self._input_mode, self._input_size, self._num_units)
        dtype = self._plain_dtype
        kinit = self._kernel_initializer or init_ops.glorot_uniform_initializer(
            seed=self._seed, dtype=dtype)
        binit = self._bias_initializer or init_ops.constant_initializer(0.0, dtype=dtype)
        shapes = self._shapes()
        with name_scope("opaque_params_init"):
            weights = [kinit(list(s), dtype=dtype) for s in shapes.weight_shapes]
            biases = [binit(list(s), dtype=dtype) for s in shapes.bias_shapes]
            opaque = canonical_to_params(weights, biases, shapes)
        self.kernel = vs.get_variable("opaque_kernel", dtype=dtype, initializer=opaque)
        self._trainable_weights.append(self.kernel)
        scope = self._current_scope
        if self._saveable is None and scope is not None and scope.reuse is not True:
            self._saveable = self._saveable_cls(
                self.kernel, self._num_layers, self._num_units, self._input_size,
                input_mode=self._input_mode, direction=self._direction, scope=scope.name,
                name=f"{self.kernel.op.name}_saveable")
            add_to_collection(GraphKeys.SAVEABLE_OBJECTS, self._saveable)
        self.built = True

    def state_shape(self, batch_size):
        """The shapes of the initial/final states: ``[layers * dirs, batch, units]``."""
        one = [self._num_layers * self.num_dirs, batch_size, self._num_units]
        return (one, one) if self._rnn_mode == CUDNN_LSTM else (one,)

    def _zero_state(self, batch_size):
        return tuple(zeros(s, dtype=self._plain_dtype) for s in self.state_shape(batch_size))

    def call(self, inputs, initial_state=None, sequence_lengths=None, time_major=True,
             training=True):
        """``(outputs, output_states)`` for `inputs` (see the module docstring)."""
        if initial_state is not None and not isinstance(initial_state, tuple):
            raise TypeError(f"Invalid initial_state type: {initial_state}, expecting tuple.")
        dtype = self._plain_dtype
        inputs = convert_to_tensor(inputs, dtype=dtype)
        if not time_major:
            inputs = transpose(inputs, [1, 0, 2])
        if initial_state is None:
            initial_state = self._zero_state(_shape(inputs)[1])
        if self._rnn_mode == CUDNN_LSTM:
            h, c = (convert_to_tensor(s, dtype=dtype) for s in initial_state)
        else:
            (h,) = (convert_to_tensor(s, dtype=dtype) for s in initial_state)
            c = None
        units = self._num_layers * self.num_dirs
        h_list = unstack(h, num=units)
        c_list = unstack(c, num=units) if c is not None else None
        if sequence_lengths is not None:
            sequence_lengths = convert_to_tensor(sequence_lengths, dtype=_dtypes.int32)
        outputs, out_h, out_c = _forward(
            self._rnn_mode, self._shapes(), self.kernel, inputs, h_list, c_list,
            sequence_lengths, training, self._dropout, self._seed, dtype)
        if not time_major:
            outputs = transpose(outputs, [1, 0, 2])
        if self._rnn_mode == CUDNN_LSTM:
            return outputs, (out_h, out_c)
        return outputs, (out_h,)


class CudnnLSTM(_CudnnRNN):
    """A cuDNN LSTM layer (see the module docstring); states ``(h, c)``."""

    _rnn_mode = CUDNN_LSTM
    _saveable_cls = CudnnLSTMSaveable


class CudnnGRU(_CudnnRNN):
    """A cuDNN GRU layer (see the module docstring); state ``(h,)``."""

    _rnn_mode = CUDNN_GRU
    _saveable_cls = CudnnGRUSaveable


class CudnnRNNTanh(_CudnnRNN):
    """A cuDNN plain RNN layer with tanh; state ``(h,)``."""

    _rnn_mode = CUDNN_RNN_TANH
    _saveable_cls = CudnnRNNTanhSaveable


class CudnnRNNRelu(_CudnnRNN):
    """A cuDNN plain RNN layer with relu; state ``(h,)``."""

    _rnn_mode = CUDNN_RNN_RELU
    _saveable_cls = CudnnRNNReluSaveable

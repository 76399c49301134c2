"""Keras recurrent layers for graph mode: `SimpleRNN`, `LSTM`, `GRU` (the TF 1.x Keras
cells: weights ``<layer>/<cell>/kernel``, ``recurrent_kernel``, ``bias``; LSTM gates in
the order i, f, c, o; GRU gates z, r, h, with or without ``reset_after``; recurrent activation
``hard_sigmoid`` by default), and `Bidirectional`. Re-exported by `flowgraph.keras.layers`.

The time loop is a `tf.while_loop` over the time-major input, writing each step's output
to a `TensorArray`::

    x (batch, T, d) ──transpose──> (T, batch, d) ──while t < T: h, c = cell(x[t], h, c)──>
        outputs (batch, T, units) if return_sequences else the last h

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input((7, 3))
...     seq, h, c = keras.layers.LSTM(4, return_sequences=True, return_state=True)(x)
...     print(seq.shape, h.shape, [w.name for w in seq._keras_history[0].weights])
(?, 7, 4) (?, 4) ['lstm/lstm_cell/kernel:0', 'lstm/lstm_cell/recurrent_kernel:0', \
'lstm/lstm_cell/bias:0']
"""

from __future__ import annotations

import copy

from flowgraph.keras.layers import Layer, _check_ndim, get_activation
from flowgraph.ops import (
    array_join_ops,
    array_shape_ops,
    control_flow_loops,
    math_ops,
)
from flowgraph.ops.tensor_array import TensorArray

__all__ = ["GRU", "LSTM", "Bidirectional", "SimpleRNN"]


def hard_sigmoid(x):
    """Keras's piecewise-linear sigmoid: ``clip(0.2 * x + 0.5, 0, 1)``."""
    return math_ops.clip_by_value(math_ops.add(math_ops.multiply(x, 0.2), 0.5), 0.0, 1.0)


def _activation(identifier):
    if identifier == "hard_sigmoid":
        return hard_sigmoid
    return get_activation(identifier)


class _RNN(Layer):
    """The shared loop; subclasses define the weights (`_build_cell`), the number of
    states and one step (`_step`)."""

    _cell_name = "rnn_cell"
    _gates = 1
    _n_states = 1

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0,
                 return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 implementation: int = 1, time_major: bool = False, **kwargs) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if time_major:
            raise NotImplementedError(f"{type(self).__name__}(time_major=True) is not "
                                      "supported by flowgraph; transpose the input to "
                                      "(batch, time, features).")
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}(stateful=True) is not supported "
                                      "by flowgraph; feed the state as initial_state.")
        if dropout or recurrent_dropout:
            raise NotImplementedError(f"{type(self).__name__}: dropout/recurrent_dropout are "
                                      "not supported by flowgraph; add a Dropout layer.")
        self.units = int(units)
        self._activation_ids = (activation, recurrent_activation)
        self.implementation = int(implementation)
        self.activation = _activation(activation)
        self.recurrent_activation = _activation(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.recurrent_regularizer = recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.constraints = (kernel_constraint, recurrent_constraint, bias_constraint)
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards = go_backwards

    def _bias_initializer(self):
        return self.bias_initializer

    def get_config(self) -> dict:
        """TF 1.x Keras's keys for a recurrent layer (`implementation` and `time_major`
        are accepted and reported; flowgraph has one implementation)."""
        kernel_c, recurrent_c, bias_c = self.constraints
        config = {**super().get_config(), "units": self.units,
                  "activation": self._activation_ids[0],
                  "recurrent_activation": self._activation_ids[1],
                  "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                  "recurrent_initializer": self.recurrent_initializer,
                  "bias_initializer": self.bias_initializer,
                  "kernel_regularizer": self.kernel_regularizer,
                  "recurrent_regularizer": self.recurrent_regularizer,
                  "bias_regularizer": self.bias_regularizer,
                  "activity_regularizer": self.activity_regularizer,
                  "kernel_constraint": kernel_c, "recurrent_constraint": recurrent_c,
                  "bias_constraint": bias_c, "dropout": 0.0, "recurrent_dropout": 0.0,
                  "return_sequences": self.return_sequences,
                  "return_state": self.return_state, "go_backwards": self.go_backwards,
                  "stateful": False, "unroll": False, "time_major": False,
                  "implementation": self.implementation}
        return config

    def build(self, input_shape) -> None:
        shape = _check_ndim(self, input_shape, ndim=3)
        dim = shape[-1].value
        if dim is None:
            raise ValueError(f"The last dimension of the inputs to `{type(self).__name__}` "
                             f"should be defined (layer {self.name}, input shape {shape}).")
        n = self._gates * self.units
        cell = self._cell_name
        self.kernel = self.add_weight(f"{cell}/kernel", [dim, n],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.constraints[0])
        self.recurrent_kernel = self.add_weight(f"{cell}/recurrent_kernel", [self.units, n],
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.constraints[1])
        self.bias = self.add_weight(f"{cell}/bias", self._bias_shape(n),
                                    initializer=self._bias_initializer(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.constraints[2]) if self.use_bias else None

    def _bias_shape(self, n: int) -> list[int]:
        return [n]

    def _initial_states(self, inputs):
        batch = array_shape_ops.shape(inputs)[0]
        zeros = array_shape_ops.zeros(array_join_ops.stack([batch, self.units]),
                                      dtype=inputs.dtype.base_dtype)
        return [zeros] * self._n_states

    def call(self, inputs, initial_state=None):
        dims = inputs.shape.as_list()
        states = list(initial_state) if initial_state is not None else \
            self._initial_states(inputs)
        if len(states) != self._n_states:
            raise ValueError(f"{type(self).__name__} ({self.name}) expects "
                             f"{self._n_states} initial state tensor(s), got {len(states)}")
        x_tm = array_shape_ops.transpose(inputs, [1, 0, 2])
        if self.go_backwards:
            x_tm = array_join_ops.reverse_v2(x_tm, [0])
        steps = array_shape_ops.shape(x_tm)[0]
        dtype = inputs.dtype.base_dtype
        inputs_ta = TensorArray(dtype, size=steps).unstack(x_tm)
        out_ta = TensorArray(dtype, size=steps)

        def body(t, ta, *st):
            out, new = self._step(inputs_ta.read(t), list(st))
            return (t + 1, ta.write(t, out), *new)

        result = control_flow_loops.while_loop(
            lambda t, ta, *st: t < steps, body, [0, out_ta, *states])
        final = list(result[2:])
        for s in final:
            s.set_shape([dims[0], self.units])
        if self.return_sequences:
            out = array_shape_ops.transpose(result[1].stack(), [1, 0, 2])
            out.set_shape([dims[0], dims[1], self.units])
        else:
            out = final[0]
        return [out, *final] if self.return_state else out

    def _gate_inputs(self, x):
        z = math_ops.matmul(x, self.kernel)
        return math_ops.add(z, self.bias) if self.use_bias else z


class SimpleRNN(_RNN):
    """``h = activation(x W + h U + b)``."""

    _cell_name = "simple_rnn_cell"
    _config_omits = ("recurrent_activation", "implementation")

    def __init__(self, units, activation="tanh", **kwargs) -> None:
        kwargs.pop("recurrent_activation", None)
        super().__init__(units, activation=activation, **kwargs)

    def get_config(self) -> dict:
        config = super().get_config()
        for key in self._config_omits:
            del config[key]
        return config

    def _step(self, x, states):
        h = self.activation(math_ops.add(self._gate_inputs(x),
                                         math_ops.matmul(states[0], self.recurrent_kernel)))
        return h, [h]


class LSTM(_RNN):
    """Long short-term memory; states ``[h, c]``; ``unit_forget_bias`` starts the forget
    gate's bias at 1."""

    _cell_name = "lstm_cell"
    _gates = 4
    _n_states = 2

    def __init__(self, units, unit_forget_bias: bool = True, **kwargs) -> None:
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def get_config(self) -> dict:
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        from flowgraph.keras.layers import get_initializer

        base = get_initializer(self.bias_initializer)
        units = self.units

        def init(shape, dtype=None, partition_info=None):
            parts = [base([units], dtype=dtype), array_shape_ops.ones([units], dtype=dtype),
                     base([2 * units], dtype=dtype)]
            return array_join_ops.concat(parts, 0)

        return init

    def _step(self, x, states):
        h, c = states
        z = math_ops.add(self._gate_inputs(x), math_ops.matmul(h, self.recurrent_kernel))
        zi, zf, zc, zo = array_join_ops.split(z, 4, axis=1)
        i = self.recurrent_activation(zi)
        f = self.recurrent_activation(zf)
        c = math_ops.add(math_ops.multiply(f, c), math_ops.multiply(i, self.activation(zc)))
        o = self.recurrent_activation(zo)
        h = math_ops.multiply(o, self.activation(c))
        return h, [h, c]


class GRU(_RNN):
    """Gated recurrent unit. ``reset_after=False`` (the TF 1.x default): the reset gate
    applies before the recurrent kernel; ``reset_after=True``: after it, with a bias of
    shape ``(2, 3 * units)`` (input row, recurrent row)."""

    _cell_name = "gru_cell"
    _gates = 3

    def __init__(self, units, reset_after: bool = False, **kwargs) -> None:
        super().__init__(units, **kwargs)
        self.reset_after = bool(reset_after)

    def get_config(self) -> dict:
        return {**super().get_config(), "reset_after": self.reset_after}

    def _bias_shape(self, n: int) -> list[int]:
        # reset_after: one row for the input projection, one for the recurrent one
        return [2, n] if self.reset_after else [n]

    def _step(self, x, states):
        h = states[0]
        if self.reset_after:
            return self._step_reset_after(x, h)
        xz, xr, xh = array_join_ops.split(self._gate_inputs(x), 3, axis=1)
        uz, ur, uh = array_join_ops.split(self.recurrent_kernel, 3, axis=1)
        z = self.recurrent_activation(math_ops.add(xz, math_ops.matmul(h, uz)))
        r = self.recurrent_activation(math_ops.add(xr, math_ops.matmul(h, ur)))
        hh = self.activation(math_ops.add(xh, math_ops.matmul(math_ops.multiply(r, h), uh)))
        return self._mix(z, h, hh)

    def _step_reset_after(self, x, h):
        """The cuDNN-compatible form: the reset gate scales the recurrent projection
        (with its own bias row) after the matmul."""
        gx = math_ops.matmul(x, self.kernel)
        gh = math_ops.matmul(h, self.recurrent_kernel)
        if self.use_bias:
            b_in, b_rec = array_join_ops.unstack(self.bias)
            gx, gh = math_ops.add(gx, b_in), math_ops.add(gh, b_rec)
        xz, xr, xh = array_join_ops.split(gx, 3, axis=1)
        hz, hr, hh = array_join_ops.split(gh, 3, axis=1)
        z = self.recurrent_activation(math_ops.add(xz, hz))
        r = self.recurrent_activation(math_ops.add(xr, hr))
        cand = self.activation(math_ops.add(xh, math_ops.multiply(r, hh)))
        return self._mix(z, h, cand)

    @staticmethod
    def _mix(z, h, cand):
        new = math_ops.add(math_ops.multiply(z, h), math_ops.multiply(math_ops.subtract(1.0, z),
                                                                      cand))
        return new, [new]


class Bidirectional(Layer):
    """Run `layer` forwards and a copy of it backwards; merge the outputs ('concat',
    'sum', 'mul', 'ave' or None for a list)."""

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs) -> None:
        if not isinstance(layer, _RNN):
            raise ValueError(f"Bidirectional needs a recurrent layer, got {layer!r}")
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(f"Invalid merge mode {merge_mode!r}; use 'concat', 'sum', 'mul', "
                             "'ave' or None")
        super().__init__(**kwargs)
        self.merge_mode = merge_mode
        self.forward_layer = layer
        if backward_layer is None:  # the same configuration, reading time backwards
            backward_layer = copy.copy(layer)
            backward_layer._trainable_weights, backward_layer._non_trainable_weights = [], []
            backward_layer._updates, backward_layer._losses = [], []
            backward_layer._inbound_nodes = []
            backward_layer.built, backward_layer._graph = False, None
            backward_layer.go_backwards = not layer.go_backwards
            backward_layer.name = f"{self.name}/backward_{layer.name}"
        self.backward_layer = backward_layer
        layer.name = f"{self.name}/forward_{layer.name}"  # weights under this layer's name

    @property
    def trainable_weights(self) -> list:
        return self.forward_layer.trainable_weights + self.backward_layer.trainable_weights

    @property
    def non_trainable_weights(self) -> list:
        return []

    def call(self, inputs):
        fwd = self.forward_layer._invoke(inputs, {})
        bwd = self.backward_layer._invoke(inputs, {})
        states = []
        if self.forward_layer.return_state:
            fwd, states = fwd[0], fwd[1:] + bwd[1:]
            bwd = bwd[0]
        if self.forward_layer.return_sequences:
            bwd = array_join_ops.reverse_v2(bwd, [1])
        if self.merge_mode == "concat":
            out = array_join_ops.concat([fwd, bwd], -1)
        elif self.merge_mode == "sum":
            out = math_ops.add(fwd, bwd)
        elif self.merge_mode == "mul":
            out = math_ops.multiply(fwd, bwd)
        elif self.merge_mode == "ave":
            out = math_ops.multiply(math_ops.add(fwd, bwd), 0.5)
        else:
            out = [fwd, bwd]
        if states:
            return (out if isinstance(out, list) else [out]) + states
        return out


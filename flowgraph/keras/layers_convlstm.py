"""Convolutional LSTM layers: `ConvLSTM1D`, `ConvLSTM2D`, `ConvLSTM3D`, an `RNN` over a
`ConvLSTMCell` whose gates are convolutions (the input's with `kernel_size`, `strides`,
`padding`, `dilation_rate`; the state's with 'same' padding). Weights
``<layer>/kernel`` ``(*kernel_size, channels, 4 * filters)``, ``recurrent_kernel``
``(*kernel_size, filters, 4 * filters)``, ``bias`` ``(4 * filters,)``, gates i, f, c, o as
in `LSTMCell`. Inputs ``(batch, time, *spatial, channels)`` (or channels first, which
the layer transposes). Re-exported by `flowgraph.keras.layers`.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     x = keras.Input((4, 8, 8, 1))
...     y = keras.layers.ConvLSTM2D(2, 3, padding="same")(x)
...     print(y.shape, [w.name for w in y._keras_history[0].weights][:1])
(?, 8, 8, 2) ['conv_lstm2d/kernel:0']
"""

from __future__ import annotations

from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras.layers import _check_ndim, _data_format
from flowgraph.keras.layers_recurrent import RNN
from flowgraph.keras.layers_rnn_cells import (
    AbstractRNNCell,
    _activation,
    _masks,
    build_cell,
    forget_bias_initializer,
    lstm_update,
)
from flowgraph.layers.core import normalize_padding, normalize_tuple
from flowgraph.ops import array_join_ops, array_shape_ops, math_ops, math_reduce, nn_ops
from flowgraph.ops.nn_conv_ops import convolution

__all__ = ["ConvLSTM1D", "ConvLSTM2D", "ConvLSTM3D"]


def _out_length(n, k: int, padding: str, stride: int, dilation: int):
    if n is None:
        return None
    k = (k - 1) * dilation + 1
    n = n - k + 1 if padding == "valid" else n
    return (n + stride - 1) // stride


class ConvLSTMCell(AbstractRNNCell):
    """One step of a convolutional LSTM over `rank` spatial dimensions (channels last)."""

    _config_omits: tuple = ()
    _weights_in_parent = True

    def __init__(self, rank: int, filters, kernel_size, strides=1, padding="valid",
                 dilation_rate=1, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias: bool = True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self._masks: tuple = (None, None)
        self.rank, self.filters = rank, int(filters)
        self.kernel_size = normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = normalize_tuple(strides, rank, "strides")
        self.padding = normalize_padding(padding)
        self.dilation_rate = normalize_tuple(dilation_rate, rank, "dilation_rate")
        self._activation_ids = (activation, recurrent_activation)
        self.activation = _activation(activation)
        self.recurrent_activation = _activation(recurrent_activation)
        self.use_bias, self.unit_forget_bias = use_bias, unit_forget_bias
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.recurrent_regularizer = recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.constraints = (kernel_constraint, recurrent_constraint, bias_constraint)
        self._spatial_out: list | None = None

    @property
    def state_size(self):
        shape = TensorShape([*(self._spatial_out or [None] * self.rank), self.filters])
        return [shape, shape]

    @property
    def output_size(self):
        return TensorShape([*(self._spatial_out or [None] * self.rank), self.filters])

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        channels = shape[-1].value
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs should be defined. Found "
                             f"`None` (layer {self.name}, input shape {shape}).")
        self._spatial_out = [
            _out_length(shape[1 + i].value, self.kernel_size[i], self.padding,
                        self.strides[i], self.dilation_rate[i]) for i in range(self.rank)]
        n = 4 * self.filters
        self.kernel = self.add_weight("kernel", [*self.kernel_size, channels, n],
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.constraints[0])
        self.recurrent_kernel = self.add_weight(
            "recurrent_kernel", [*self.kernel_size, self.filters, n],
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.constraints[1])
        if self.use_bias:
            bias_init = forget_bias_initializer(self.bias_initializer, self.filters) \
                if self.unit_forget_bias else self.bias_initializer
            self.bias = self.add_weight("bias", [n], initializer=bias_init,
                                        regularizer=self.bias_regularizer,
                                        constraint=self.constraints[2])
        else:
            self.bias = None

    def input_conv(self, x, kernel, padding=None):
        out = convolution(x, kernel, (padding or self.padding).upper(),
                          strides=list(self.strides), dilation_rate=list(self.dilation_rate))
        return nn_ops.bias_add(out, self.bias) if self.use_bias and padding is None else out

    def prepare_dropout(self, inputs, training) -> None:
        """This call's dropout masks, one per gate (see `LSTMCell.prepare_dropout`)."""
        state = None
        if self.recurrent_dropout:
            shape = [*self.kernel_size, inputs.shape[-1].value, self.filters]
            state = array_shape_ops.ones_like(convolution(
                inputs, array_shape_ops.zeros(shape, dtype=inputs.dtype), self.padding.upper(),
                strides=list(self.strides), dilation_rate=list(self.dilation_rate)))
        self._masks = (_masks(array_shape_ops.ones_like(inputs), self.dropout, 4, training),
                       _masks(state, self.recurrent_dropout, 4, training)
                       if state is not None else None)

    def clear_dropout(self) -> None:
        self._masks = (None, None)

    def _gate_sums(self, inputs, h):
        """The four gates' pre-activations, each input and state with its own mask."""
        dp, rec = self._masks
        ks = array_join_ops.split(self.kernel, 4, axis=-1)
        us = array_join_ops.split(self.recurrent_kernel, 4, axis=-1)
        bs = array_join_ops.split(self.bias, 4) if self.use_bias else [None] * 4
        out = []
        for g in range(4):
            x = math_ops.multiply(inputs, dp[g]) if dp is not None else inputs
            hg = math_ops.multiply(h, rec[g]) if rec is not None else h
            z = convolution(x, ks[g], self.padding.upper(), strides=list(self.strides),
                            dilation_rate=list(self.dilation_rate))
            if bs[g] is not None:
                z = nn_ops.bias_add(z, bs[g])
            out.append(math_ops.add(z, convolution(hg, us[g], "SAME")))
        return out

    def call(self, inputs, states):
        h, c = states
        if any(m is not None for m in self._masks):
            zi, zf, zc, zo = self._gate_sums(inputs, h)
        else:
            z = math_ops.add(self.input_conv(inputs, self.kernel),
                             convolution(h, self.recurrent_kernel, "SAME"))
            zi, zf, zc, zo = array_join_ops.split(z, 4, axis=-1)
        return lstm_update(self, zi, zf, zc, zo, c)


class _ConvLSTM(RNN):
    """`RNN` over a `ConvLSTMCell`, with its weights directly under the layer's name."""

    _rank = 2

    @classmethod
    def _default_name(cls) -> str:
        return f"conv_lstm{cls._rank}d"

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias: bool = True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs) -> None:
        kwargs.pop("time_major", None)
        kwargs.pop("unroll", None)
        cell = ConvLSTMCell(self._rank, filters, kernel_size, strides=strides, padding=padding,
                            dilation_rate=dilation_rate, activation=activation,
                            recurrent_activation=recurrent_activation, use_bias=use_bias,
                            kernel_initializer=kernel_initializer,
                            recurrent_initializer=recurrent_initializer,
                            bias_initializer=bias_initializer,
                            unit_forget_bias=unit_forget_bias,
                            kernel_regularizer=kernel_regularizer,
                            recurrent_regularizer=recurrent_regularizer,
                            bias_regularizer=bias_regularizer,
                            kernel_constraint=kernel_constraint,
                            recurrent_constraint=recurrent_constraint,
                            bias_constraint=bias_constraint, dropout=dropout,
                            recurrent_dropout=recurrent_dropout, name="conv_lstm_cell",
                            dtype=kwargs.get("dtype"))
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful,
                         activity_regularizer=activity_regularizer, **kwargs)
        self.data_format = _data_format(data_format)
        self._ndim = self._rank + 3

    _config_omits = ("cell",)

    def get_config(self) -> dict:
        base = super().get_config()
        base.pop("cell")
        cell = self.cell
        kernel_c, recurrent_c, bias_c = cell.constraints
        return {**base, "filters": cell.filters, "kernel_size": cell.kernel_size,
                "strides": cell.strides, "padding": cell.padding,
                "data_format": self.data_format, "dilation_rate": cell.dilation_rate,
                "activation": cell._activation_ids[0],
                "recurrent_activation": cell._activation_ids[1], "use_bias": cell.use_bias,
                "kernel_initializer": cell.kernel_initializer,
                "recurrent_initializer": cell.recurrent_initializer,
                "bias_initializer": cell.bias_initializer,
                "unit_forget_bias": cell.unit_forget_bias,
                "kernel_regularizer": cell.kernel_regularizer,
                "recurrent_regularizer": cell.recurrent_regularizer,
                "bias_regularizer": cell.bias_regularizer,
                "activity_regularizer": self.activity_regularizer,
                "kernel_constraint": kernel_c, "recurrent_constraint": recurrent_c,
                "bias_constraint": bias_c, "dropout": cell.dropout,
                "recurrent_dropout": cell.recurrent_dropout}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        return cls(**config)

    def _channels_last(self, shape) -> TensorShape:
        shape = TensorShape(shape)
        if self.data_format == "channels_first" and shape.ndims is not None:
            dims = shape.as_list()
            return TensorShape([dims[0], dims[1], *dims[3:], dims[2]])
        return shape

    def build(self, input_shape) -> None:
        if isinstance(input_shape, list):
            input_shape = input_shape[0]
        shape = self._channels_last(_check_ndim(self, input_shape, ndim=self._ndim))
        parent = getattr(self, "_weight_scope", None) or \
            (self.name + "/" if "/" in self.name else None)
        if parent is None:
            scope = get_default_graph().get_name_scope()
            parent = f"{scope}/" if scope else ""
        # the cell's weights go straight under the layer's name: `conv_lstm2d/kernel`
        build_cell(self.cell, TensorShape([shape[0]]).concatenate(shape[2:]), self._dtype,
                   parent)

    def _initial_states(self, inputs) -> list:
        """Zeros shaped as the input convolution's output (TF's way: the input's sum
        over time convolved with a zero kernel)."""
        cell = self.cell
        first = math_reduce.reduce_sum(array_shape_ops.zeros_like(inputs), axis=1)
        shape = [*cell.kernel_size, inputs.shape[-1].value, cell.filters]
        zero = cell.input_conv(first, array_shape_ops.zeros(shape, dtype=inputs.dtype),
                               padding=cell.padding)
        return [zero, zero]

    def _zero_output(self, inputs, dtype, states=None):
        return array_shape_ops.zeros_like(states[0])

    def call(self, inputs, mask=None, training=None, initial_state=None):
        first = self.data_format == "channels_first"
        rank = self._rank
        if first:
            perm = [0, 1, *range(3, 3 + rank), 2]
            inputs = array_shape_ops.transpose(inputs, perm)
            if initial_state is not None:
                back = [0, *range(2, 2 + rank), 1]
                initial_state = [array_shape_ops.transpose(s, back) for s in initial_state]
        out = super().call(inputs, mask=mask, training=training, initial_state=initial_state)
        if not first:
            return out

        def to_first(t):
            n = t.shape.ndims
            return array_shape_ops.transpose(t, [0, *range(1, n - rank - 1), n - 1,
                                                 *range(n - rank - 1, n - 1)])

        return [to_first(t) for t in out] if isinstance(out, list) else to_first(out)


class ConvLSTM1D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, time, steps, channels)`` sequences."""

    _rank = 1


class ConvLSTM2D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, time, rows, cols, channels)`` sequences."""

    _rank = 2


class ConvLSTM3D(_ConvLSTM):
    """Convolutional LSTM over ``(batch, time, depth, rows, cols, channels)``
    sequences."""

    _rank = 3

"""Keras recurrent layers for graph mode: `RNN` (any cell run over time), and `SimpleRNN`,
`LSTM`, `GRU` (an `RNN` over `SimpleRNNCell`, `LSTMCell`, `GRUCell`: weights
``<layer>/<cell>/kernel``, ``recurrent_kernel``, ``bias``; LSTM gates in the order i, f, c,
o; GRU gates z, r, h, with or without ``reset_after``; recurrent activation
``hard_sigmoid`` by default), and `Bidirectional`. Re-exported by `flowgraph.keras.layers`.

The time loop is a `tf.while_loop` over the time-major input, writing each step's output
to a `TensorArray`::

    x (batch, T, d) ──transpose──> (T, batch, d) ──while t < T: out, states = cell(x[t], states)──>
        outputs (batch, T, units) if return_sequences else the last output

With a mask (``mask=`` or the input's ``_keras_mask``: ``(batch, T)`` booleans), a masked
step keeps the previous output and states, as TensorFlow does.

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

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras.layers import Layer, _check_ndim, is_keras_tensor, trainable_passed_to
from flowgraph.keras.layers_rnn_cells import (
    GRUCell,
    LSTMCell,
    SimpleRNNCell,
    StackedRNNCells,
    _flatten,
    build_cell,
    flat_state_sizes,
    output_size_of,
    zero_states,
)
from flowgraph.ops import (
    array_index_ops,
    array_join_ops,
    array_shape_ops,
    control_flow_loops,
    math_ops,
)
from flowgraph.ops.tensor_array import TensorArray

__all__ = ["GRU", "LSTM", "RNN", "Bidirectional", "SimpleRNN"]


class RNN(Layer):
    """Run `cell` (a cell, or a list of cells: a `StackedRNNCells`) over the time axis of
    ``(batch, time, ...)`` inputs.

    Call with ``initial_state=`` (one tensor per state) or ``inputs=[x, *states]``, and
    ``mask=`` (``(batch, time)`` booleans). Returns the last output, or all of them with
    `return_sequences`; with `return_state`, followed by the final states.
    """

    _ndim: int | None = None  # the input rank the layer requires (None: at least 3)

    def __init__(self, cell, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 time_major: bool = False, **kwargs) -> None:
        zero_output = kwargs.pop("zero_output_for_mask", False)
        if isinstance(cell, list | tuple):
            cell = StackedRNNCells(cell)
        if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
            raise ValueError(f"Argument `cell` should have a `call` method and a "
                             f"`state_size` attribute. Received: cell={cell!r}")
        super().__init__(**kwargs)
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}(stateful=True) is not supported "
                                      "by flowgraph; feed the state as initial_state.")
        self.cell = cell
        self.return_sequences, self.return_state = bool(return_sequences), bool(return_state)
        self.go_backwards, self.unroll = bool(go_backwards), bool(unroll)
        self.time_major = bool(time_major)
        self._zero_output_for_mask = bool(zero_output)

    def compute_mask(self, inputs, mask=None):
        """The input's mask on the sequence output (with `return_sequences`), none on
        the last output and the states, as TF."""
        if isinstance(mask, list):
            mask = mask[0]
        out = mask if self.return_sequences else None
        if self.return_state:
            return [out] + [None] * len(flat_state_sizes(self.cell.state_size))
        return out

    @property
    def states(self) -> list:
        return [None] * len(flat_state_sizes(self.cell.state_size))

    @property
    def trainable_weights(self) -> list:
        return self.cell.trainable_weights if self.trainable else []

    @property
    def non_trainable_weights(self) -> list:
        return self.cell.non_trainable_weights if self.trainable else self.cell.weights

    @property
    def losses(self) -> list:
        return list(self._losses) + list(self.cell.losses)

    def get_config(self) -> dict:
        config = {**super().get_config(), "return_sequences": self.return_sequences,
                  "return_state": self.return_state, "go_backwards": self.go_backwards,
                  "stateful": False, "unroll": self.unroll, "time_major": self.time_major}
        if self._zero_output_for_mask:
            config["zero_output_for_mask"] = True
        config["cell"] = {"class_name": type(self.cell).__name__,
                          "config": self.cell.get_config()}
        return config

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        cell = config.pop("cell")
        if isinstance(cell, dict):
            from flowgraph.keras.saving import layer_from_config

            cell = layer_from_config(cell, custom_objects)
        return cls(cell, **config)

    def build(self, input_shape) -> None:
        if isinstance(input_shape, list):  # [x, *initial states]
            input_shape = input_shape[0]
        if self._ndim is not None:
            shape = _check_ndim(self, input_shape, ndim=self._ndim)
        else:
            shape = _check_ndim(self, input_shape, min_ndim=3)
        batch = shape[1] if self.time_major else shape[0]
        parent = getattr(self, "_weight_scope", None) or \
            (self.name + "/" if "/" in self.name else None)  # Bidirectional's halves
        build_cell(self.cell, TensorShape([batch]).concatenate(shape[2:]), self._dtype, parent)

    def _initial_states(self, inputs) -> list:
        """Zero states for the batch of `inputs` (batch-major)."""
        batch = array_shape_ops.shape(inputs)[0]
        dtype = inputs.dtype.base_dtype
        if hasattr(self.cell, "get_initial_state"):
            return _flatten(self.cell.get_initial_state(batch_size=batch, dtype=dtype))
        return zero_states(self.cell, batch, dtype)

    def call(self, inputs, mask=None, training=None, initial_state=None):
        if isinstance(inputs, list):
            inputs, rest = inputs[0], inputs[1:]
            initial_state = initial_state if initial_state is not None else (rest or None)
        if mask is None:
            mask = getattr(inputs, "_keras_mask", None)
        n_states = len(flat_state_sizes(self.cell.state_size))
        batch_major = array_shape_ops.transpose(inputs, _swap01(inputs)) \
            if self.time_major else inputs
        states = _flatten(initial_state) if initial_state is not None else \
            self._initial_states(batch_major)
        if len(states) != n_states:
            raise ValueError(f"{type(self).__name__} ({self.name}) expects {n_states} initial "
                             f"state tensor(s), got {len(states)}")
        dims = inputs.shape.as_list()
        batch_dim = dims[1] if self.time_major else dims[0]
        x_tm = inputs if self.time_major else array_shape_ops.transpose(inputs, _swap01(inputs))
        if self.go_backwards:
            x_tm = array_join_ops.reverse_v2(x_tm, [0])
        steps = array_shape_ops.shape(x_tm)[0]
        dtype = inputs.dtype.base_dtype
        inputs_ta = TensorArray(dtype, size=steps).unstack(x_tm)
        out_ta = TensorArray(dtype, size=steps)
        step_shape = TensorShape([batch_dim, *dims[2:]])
        mask_ta = None
        if mask is not None:
            mask_tm = array_shape_ops.transpose(math_ops.cast(mask, _dtypes.bool), [1, 0])
            if self.go_backwards:
                mask_tm = array_join_ops.reverse_v2(mask_tm, [0])
            mask_ta = TensorArray(_dtypes.bool, size=steps).unstack(mask_tm)
        shapes = {}

        def body(t, ta, last, *st):
            x = inputs_ta.read(t)
            x.set_shape(step_shape)
            out, new = self.cell.call(x, list(st))
            new = _flatten(new)
            shapes["out"], shapes["states"] = out.shape, [s.shape for s in new]
            if mask_ta is not None:
                keep = mask_ta.read(t)
                out_keep = _expand_to(keep, out)
                new = [array_index_ops.where_v2(_expand_to(keep, s), s, old)
                       for s, old in zip(new, st, strict=True)]
                last = array_index_ops.where_v2(out_keep, out, last)
                out = last if not self._zero_output_for_mask else \
                    array_index_ops.where_v2(out_keep, out, array_shape_ops.zeros_like(out))
            else:
                last = out
            return (t + 1, ta.write(t, out), last, *new)

        last0 = self._zero_output(batch_major, dtype, states)
        dropout_cells = _prepare_dropout(self.cell, batch_major, training)
        try:
            result = control_flow_loops.while_loop(
                lambda t, ta, last, *st: t < steps, body, [0, out_ta, last0, *states])
        finally:
            for cell in dropout_cells:
                cell.clear_dropout()
        final = list(result[3:])
        for s, shape in zip(final, shapes["states"], strict=True):
            s.set_shape(shape)
        if self.return_sequences:
            out = result[1].stack()
            if not self.time_major:
                out = array_shape_ops.transpose(out, _swap01(out))
            time = dims[0] if self.time_major else dims[1]
            lead = [time, batch_dim] if self.time_major else [batch_dim, time]
            out.set_shape(TensorShape(lead).concatenate(shapes["out"][1:]))
            if mask is not None:
                out._keras_mask = mask
        else:
            out = result[2]
            out.set_shape(shapes["out"])
        if not self.return_state:
            return out
        if is_keras_tensor(inputs):  # a functional model's node holds a flat list
            return [out, *final]
        return [out, *_pack_like(self.cell.state_size, final)]

    def _zero_output(self, inputs, dtype, states=None):
        """Zeros shaped as one step's output, for a batch of `inputs` (batch-major)."""
        size = output_size_of(self.cell)
        size = TensorShape(size).as_list() if not isinstance(size, int) else [size]
        batch = array_shape_ops.shape(inputs)[:1]
        return array_shape_ops.zeros(array_join_ops.concat([batch, size], 0), dtype=dtype)


def _prepare_dropout(cell, inputs, training) -> list:
    """Draw the dropout masks of `cell` (and of a stack's cells) for this call, before
    the time loop; the cells that hold masks (cleared after the loop)."""
    if not hasattr(cell, "prepare_dropout") and not hasattr(cell, "cells"):
        return []
    template = inputs[:, 0]
    prepared = []
    for sub in getattr(cell, "cells", [cell]):
        if hasattr(sub, "prepare_dropout") and (sub.dropout or sub.recurrent_dropout):
            sub.prepare_dropout(template, training)
            prepared.append(sub)
        size = output_size_of(sub)
        if isinstance(size, int):
            batch = array_shape_ops.shape(inputs)[:1]
            template = array_shape_ops.zeros(array_join_ops.concat([batch, [size]], 0),
                                             dtype=inputs.dtype.base_dtype)
    return prepared


def _pack_like(state_size, flat: list) -> list:
    """The final states grouped as the cell's `state_size` (a stack of cells returns
    ``[[h1, c1], h2]``), as TensorFlow returns them."""
    if not isinstance(state_size, tuple):
        return flat
    out = []
    for size in state_size:
        n = len(flat_state_sizes(size))
        out.append(flat[:n] if isinstance(size, list | tuple) else flat[0])
        flat = flat[n:]
    return out


def _swap01(x) -> list[int]:
    rank = x.shape.ndims
    return [1, 0, *range(2, rank)]


def _expand_to(keep, x):
    """``keep`` (batch,) reshaped to broadcast against `x` (batch, ...)."""
    rank = x.shape.ndims or 2
    return array_shape_ops.reshape(keep, [-1] + [1] * (rank - 1))


# The cell's configuration, readable on the layer (``lstm.units``), as in TensorFlow.
_CELL_ATTRIBUTES = ("units", "activation", "recurrent_activation", "use_bias",
                    "kernel_initializer", "recurrent_initializer", "bias_initializer",
                    "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
                    "implementation", "unit_forget_bias", "reset_after", "kernel",
                    "recurrent_kernel", "bias")


class _CellLayer(RNN):
    """A recurrent layer over one Keras cell (`SimpleRNN`, `LSTM`, `GRU`): the cell's
    arguments are the layer's, and its config is the cell's plus the `RNN` keys."""

    _cell_class: type = SimpleRNNCell
    _cell_name = "rnn_cell"
    _config_omits: tuple = ("cell",)
    _ndim = 3

    def __init__(self, units, return_sequences: bool = False, return_state: bool = False,
                 go_backwards: bool = False, stateful: bool = False, unroll: bool = False,
                 time_major: bool = False, activity_regularizer=None, **kwargs) -> None:
        layer_keys = ("name", "trainable", "dtype", "input_shape", "batch_input_shape",
                      "batch_size", "input_dim", "zero_output_for_mask")
        layer_kwargs = {k: kwargs.pop(k) for k in layer_keys if k in kwargs}
        cell = self._cell_class(units, name=self._cell_name, dtype=layer_kwargs.get("dtype"),
                                trainable=layer_kwargs.get("trainable", True), **kwargs)
        super().__init__(cell, return_sequences=return_sequences,
                         return_state=return_state, go_backwards=go_backwards,
                         stateful=stateful, unroll=unroll, time_major=time_major,
                         activity_regularizer=activity_regularizer, **layer_kwargs)

    def get_config(self) -> dict:
        config = super().get_config()
        cell = config.pop("cell")["config"]
        for key in ("name", "trainable", "dtype"):
            cell.pop(key, None)
        return {**config, **cell, "activity_regularizer": self.activity_regularizer}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        return cls(**config)


for _attr in _CELL_ATTRIBUTES:
    setattr(_CellLayer, _attr, property(lambda self, _a=_attr: getattr(self.cell, _a)))


class SimpleRNN(_CellLayer):
    """``h = activation(x W + h U + b)``: an `RNN` over a `SimpleRNNCell`."""

    _cell_class = SimpleRNNCell
    _cell_name = "simple_rnn_cell"
    _config_omits = ("cell", "recurrent_activation", "implementation")


class LSTM(_CellLayer):
    """Long short-term memory, an `RNN` over an `LSTMCell`; states ``[h, c]``."""

    _cell_class = LSTMCell
    _cell_name = "lstm_cell"


class GRU(_CellLayer):
    """Gated recurrent unit, an `RNN` over a `GRUCell` (``reset_after=False`` by
    default, as TF 1.x Keras)."""

    _cell_class = GRUCell
    _cell_name = "gru_cell"


class Bidirectional(Layer):
    """Run `layer` forwards and a copy of it backwards; merge the outputs ('concat',
    'sum', 'mul', 'ave' or None for a list)."""

    def __init__(self, layer, merge_mode="concat", backward_layer=None, **kwargs) -> None:
        if not isinstance(layer, RNN) and not hasattr(layer, "go_backwards"):
            raise ValueError(f"Bidirectional needs a recurrent layer, got {layer!r}")
        if merge_mode not in ("concat", "sum", "mul", "ave", None):
            raise ValueError(f"Invalid merge mode {merge_mode!r}; use 'concat', 'sum', 'mul', "
                             "'ave' or None")
        super().__init__(**kwargs)
        self.merge_mode = merge_mode
        self.forward_layer = layer
        if backward_layer is None and not isinstance(layer, RNN):  # CuDNNLSTM & co.
            config = {**layer.get_config(), "go_backwards": not layer.go_backwards,
                      "name": f"{self.name}/backward_{layer.name}"}
            backward_layer = type(layer).from_config(config)
        if backward_layer is None:  # the same configuration, reading time backwards
            backward_layer = copy.copy(layer)
            cell = layer.cell
            backward_layer.cell = type(cell).from_config(cell.get_config())
            backward_layer._trainable_weights, backward_layer._non_trainable_weights = [], []
            backward_layer._updates, backward_layer._losses = [], []
            backward_layer._inbound_nodes = []
            backward_layer.built, backward_layer._graph = False, None
            backward_layer.go_backwards = not layer.go_backwards
            backward_layer._name = f"{self.name}/backward_{layer.name}"
        self.backward_layer = backward_layer
        # as Keras: both directions give zeros at masked steps when returning sequences
        # (the inner layer's config keeps what the program asked for)
        self._inner_zero_output = getattr(layer, "_zero_output_for_mask", None)
        for part in (layer, backward_layer):
            if getattr(part, "_zero_output_for_mask", None) is not None:
                part._zero_output_for_mask = bool(part.return_sequences)
        self._inner_name = layer.name
        layer._name = f"{self.name}/forward_{layer.name}"  # weights under this layer's name

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, list):
            mask = mask[0]
        out = mask if self.forward_layer.return_sequences else None
        if self.forward_layer.return_state:
            n = 2 * (len(self.forward_layer.states) if hasattr(self.forward_layer, "states")
                     else 1)
            return ([out] if self.merge_mode is not None else [out, out]) + [None] * n
        return out

    def get_config(self) -> dict:
        inner = self.forward_layer.get_config()
        inner["name"] = self._inner_name
        if not self._inner_zero_output:
            inner.pop("zero_output_for_mask", None)
        return {**super().get_config(), "merge_mode": self.merge_mode,
                "layer": {"class_name": type(self.forward_layer).__name__, "config": inner}}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        config = dict(config)
        layer = config.pop("layer")
        if isinstance(layer, dict):
            from flowgraph.keras.saving import layer_from_config

            layer = layer_from_config(layer, custom_objects)
        config.pop("backward_layer", None)
        return cls(layer, **config)

    # As Keras: `trainable` set here is set on both directions (not at construction); a
    # frozen Bidirectional lists all their weights as non-trainable.
    trainable = trainable_passed_to("forward_layer", "backward_layer")

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return self.forward_layer.trainable_weights + self.backward_layer.trainable_weights

    @property
    def non_trainable_weights(self) -> list:
        if not self.trainable:
            return self.forward_layer.weights + self.backward_layer.weights
        return (self.forward_layer.non_trainable_weights
                + self.backward_layer.non_trainable_weights)

    def call(self, inputs, mask=None):
        extra = {} if mask is None else {"mask": mask}
        fwd = self.forward_layer._invoke(inputs, extra)
        bwd = self.backward_layer._invoke(inputs, dict(extra))
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


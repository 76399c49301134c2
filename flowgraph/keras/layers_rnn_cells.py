"""Keras recurrent cells: one time step of a recurrent layer (`SimpleRNNCell`, `LSTMCell`,
`GRUCell`), `StackedRNNCells` (several cells as one) and `AbstractRNNCell` (the base of a
user's cell). `flowgraph.keras.layers_recurrent.RNN` runs a cell over time; `LSTM`, `GRU`
and `SimpleRNN` are an `RNN` over the matching cell. Re-exported by
`flowgraph.keras.layers`.

A cell has ``state_size`` (an int, or a list of ints for a cell with several states:
LSTM's ``[h, c]``), ``output_size`` and ``call(inputs, states) -> (output, new_states)``.
Its weights are ``<cell>/kernel``, ``<cell>/recurrent_kernel``, ``<cell>/bias``: under
the RNN layer's name when an `RNN` builds it (``rnn/lstm_cell/kernel``), under the cell's
own name when it is called alone (``lstm_cell/kernel``). LSTM gates are in the order
i, f, c, o; GRU gates z, r, h.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     cell = keras.layers.LSTMCell(3)
...     h, (h2, c) = cell(tf.zeros([2, 5]), [tf.zeros([2, 3]), tf.zeros([2, 3])])
...     print(h.shape, cell.state_size, [w.name for w in cell.weights][:1])
(2, 3) [3, 3] ['lstm_cell/kernel:0']
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import get_default_graph, name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.keras.layers import Layer, get_activation, get_initializer, to_list
from flowgraph.layers.core import smart_cond
from flowgraph.ops import array_join_ops, array_shape_ops, math_ops, random_ops

__all__ = ["AbstractRNNCell", "GRUCell", "LSTMCell", "SimpleRNNCell", "StackedRNNCells"]


def hard_sigmoid(x):
    """Keras's piecewise-linear sigmoid: ``clip(0.2 * x + 0.5, 0, 1)``."""
    return math_ops.clip_by_value(math_ops.add(math_ops.multiply(x, 0.2), 0.5), 0.0, 1.0)


def _activation(identifier):
    if identifier == "hard_sigmoid":
        return hard_sigmoid
    return get_activation(identifier)


def flat_state_sizes(state_size) -> list[int]:
    """The state sizes of a cell as a flat list (``4`` -> ``[4]``; nested lists
    flattened, as a stack of cells has; a `TensorShape` is one state)."""
    out = []
    for s in to_list(state_size):
        if isinstance(s, list | tuple):
            out += flat_state_sizes(s)
        elif isinstance(s, TensorShape):  # a state of several dimensions (ConvLSTM's)
            out.append(s)
        else:
            out.append(int(s.value if hasattr(s, "value") else s))
    return out


def zero_states(cell, batch, dtype) -> list:
    """Zero tensors, one per state of `cell`, for a batch of `batch` (an int or a
    scalar tensor)."""
    return [array_shape_ops.zeros(array_join_ops.stack([batch, n]) if not isinstance(
        batch, int) else [batch, n], dtype=dtype) for n in flat_state_sizes(cell.state_size)]


def output_size_of(cell):
    """The cell's `output_size`, or its first state's size when it defines none (as a
    user's `AbstractRNNCell` may not)."""
    try:
        size = getattr(cell, "output_size", None)
    except NotImplementedError:
        size = None
    return size if size is not None else flat_state_sizes(cell.state_size)[0]


def build_cell(cell, input_shape, dtype=None, parent=None) -> None:
    """Build `cell` for inputs of `input_shape` (one time step), its weights under
    `parent` (a scope ending in '/'; default: the current name scope) plus the cell's
    name (``rnn/lstm_cell/kernel``)."""
    if cell.built:
        return
    if parent is None:
        scope = get_default_graph().get_name_scope()
        parent = f"{scope}/" if scope else ""
    # a cell whose weights sit directly under the layer's name (ConvLSTM2D's `kernel`)
    own = not getattr(cell, "_weights_in_parent", False)
    cell._weight_scope = f"{parent}{cell.name}/" if own else parent
    with name_scope(cell._weight_scope):
        if cell._dtype is None:
            cell._dtype = dtype or _dtypes.float32
        cell._graph = get_default_graph()
        cell.build(TensorShape(input_shape))
    cell.built = True


def forget_bias_initializer(bias_initializer, units: int):
    """An LSTM bias initializer: `bias_initializer` for the i, c, o gates, ones for the
    forget gate (``unit_forget_bias``)."""
    base = get_initializer(bias_initializer)

    def init(shape, dtype=None, partition_info=None):
        parts = [base([units], dtype=dtype), array_shape_ops.ones([units], dtype=dtype),
                 base([2 * units], dtype=dtype)]
        return array_join_ops.concat(parts, 0)

    return init


class AbstractRNNCell(Layer):
    """The base of a recurrent cell: subclasses define ``state_size``, ``output_size``,
    ``build`` and ``call(inputs, states) -> (output, new_states)``; `RNN` runs them over
    time. Called alone, ``cell(inputs, states)`` builds the cell and runs one step."""

    @property
    def state_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define `state_size`.")

    @property
    def output_size(self):
        raise NotImplementedError(f"{type(self).__name__} must define `output_size`.")

    def __call__(self, inputs, states=None, **kwargs):
        if states is None:
            raise ValueError(f"{type(self).__name__} ({self.name}) is called with "
                             f"`cell(inputs, states)`; `states` is missing.")
        return super().__call__(inputs, states=states, **kwargs)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """Zero states for `batch_size` examples (or as many as `inputs` has)."""
        if inputs is not None:
            batch = array_shape_ops.shape(inputs)[0]
            dtype = dtype or inputs.dtype.base_dtype
        else:
            batch = batch_size
        states = zero_states(self, batch, dtype or "float32")
        return states if isinstance(self.state_size, list | tuple) else states[0]


class _GatedCell(AbstractRNNCell):
    """The weights and configuration shared by the three Keras cells."""

    _gates = 1
    _config_omits: tuple = ()

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid",
                 use_bias: bool = True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 dropout=0.0, recurrent_dropout=0.0, implementation: int = 1,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        if int(units) <= 0:
            raise ValueError(f"Received an invalid value for argument `units`, expected a "
                             f"positive integer, got {units}.")
        self.units = int(units)
        self._activation_ids = (activation, recurrent_activation)
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
        self.implementation = int(implementation)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        if self.recurrent_dropout and self._gates > 1:
            self.implementation = 1  # as TF: implementation 2 has no recurrent dropout
        self._masks: tuple = (None, None)  # (input masks, recurrent masks) of this call

    @property
    def state_size(self):
        return self.units

    def prepare_dropout(self, inputs, training) -> None:
        """Draw this call's dropout masks (kept for every time step, as TF does): one per
        gate (``implementation=2`` uses the first); ``(batch, features)`` for the inputs,
        ``(batch, units)`` for the state; ones outside training."""
        count = self._gates
        batch = array_shape_ops.shape(inputs)[0]
        state = array_shape_ops.ones(array_join_ops.stack([batch, self.units]),
                                     dtype=inputs.dtype.base_dtype)
        self._masks = (_masks(array_shape_ops.ones_like(inputs), self.dropout, count,
                              training),
                       _masks(state, self.recurrent_dropout, count, training))

    def clear_dropout(self) -> None:
        self._masks = (None, None)

    def _masked(self, x, which: int, gate: int):
        masks = self._masks[which]
        if masks is None:
            return x
        return math_ops.multiply(x, masks[gate if self.implementation == 1 else 0])

    def _per_gate(self, x, h, kernel_parts, recurrent_parts):
        """``[x_g @ W_g + h_g @ U_g]`` with each gate's dropout mask (TF's
        implementation 1 under dropout)."""
        out = []
        for g, (w, u) in enumerate(zip(kernel_parts, recurrent_parts, strict=True)):
            out.append(math_ops.add(math_ops.matmul(self._masked(x, 0, g), w),
                                    math_ops.matmul(self._masked(h, 1, g), u)))
        return out

    @property
    def output_size(self):
        return self.units

    def get_config(self) -> dict:
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
                  "kernel_constraint": kernel_c, "recurrent_constraint": recurrent_c,
                  "bias_constraint": bias_c, "dropout": self.dropout,
                  "recurrent_dropout": self.recurrent_dropout,
                  "implementation": self.implementation}
        for key in self._config_omits:
            del config[key]
        return config

    def build(self, input_shape) -> None:
        dim = TensorShape(input_shape)[-1].value
        if dim is None:
            raise ValueError(f"The last dimension of the inputs to `{type(self).__name__}` "
                             f"should be defined (cell {self.name}, input shape "
                             f"{TensorShape(input_shape)}).")
        n = self._gates * self.units
        self.kernel = self.add_weight("kernel", [dim, n], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.constraints[0])
        self.recurrent_kernel = self.add_weight("recurrent_kernel", [self.units, n],
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.constraints[1])
        self.bias = self.add_weight("bias", self._bias_shape(n),
                                    initializer=self._bias_initializer(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.constraints[2]) if self.use_bias else None

    def _bias_shape(self, n: int) -> list[int]:
        return [n]

    def _bias_initializer(self):
        return self.bias_initializer

    def _gate_inputs(self, x):
        z = math_ops.matmul(x, self.kernel)
        return math_ops.add(z, self.bias) if self.use_bias else z


class SimpleRNNCell(_GatedCell):
    """``h = activation(x W + h U + b)``; one state, the output."""

    _config_omits = ("recurrent_activation", "implementation")

    def __init__(self, units, activation="tanh", **kwargs) -> None:
        kwargs.pop("recurrent_activation", None)
        super().__init__(units, activation=activation, **kwargs)

    def call(self, inputs, states):
        h = self._masked(to_list(states)[0], 1, 0)
        out = self.activation(math_ops.add(self._gate_inputs(self._masked(inputs, 0, 0)),
                                           math_ops.matmul(h, self.recurrent_kernel)))
        return out, [out]


class LSTMCell(_GatedCell):
    """Long short-term memory; states ``[h, c]``; ``unit_forget_bias`` starts the forget
    gate's bias at 1."""

    _gates = 4

    def __init__(self, units, unit_forget_bias: bool = True, **kwargs) -> None:
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    @property
    def state_size(self):
        return [self.units, self.units]

    def get_config(self) -> dict:
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}

    def _bias_initializer(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        return forget_bias_initializer(self.bias_initializer, self.units)

    def call(self, inputs, states):
        h, c = states
        if any(m is not None for m in self._masks) and self.implementation == 1:
            zi, zf, zc, zo = self._per_gate(
                inputs, h, array_join_ops.split(self.kernel, 4, axis=1),
                array_join_ops.split(self.recurrent_kernel, 4, axis=1))
            if self.use_bias:
                bi, bf, bc, bo = array_join_ops.split(self.bias, 4)
                zi, zf = math_ops.add(zi, bi), math_ops.add(zf, bf)
                zc, zo = math_ops.add(zc, bc), math_ops.add(zo, bo)
        else:
            # as TF's implementation 2, which leaves the state without recurrent dropout
            z = math_ops.add(self._gate_inputs(self._masked(inputs, 0, 0)),
                             math_ops.matmul(h, self.recurrent_kernel))
            zi, zf, zc, zo = array_join_ops.split(z, 4, axis=1)
        return lstm_update(self, zi, zf, zc, zo, c)


def lstm_update(cell, zi, zf, zc, zo, c):
    """``(h, [h, c])``: an LSTM step from its four gates' pre-activations and the previous
    carry `c`, with `cell`'s ``activation`` and ``recurrent_activation`` (`LSTMCell` and
    `ConvLSTMCell` alike)."""
    i = cell.recurrent_activation(zi)
    f = cell.recurrent_activation(zf)
    c = math_ops.add(math_ops.multiply(f, c), math_ops.multiply(i, cell.activation(zc)))
    o = cell.recurrent_activation(zo)
    h = math_ops.multiply(o, cell.activation(c))
    return h, [h, c]


class GRUCell(_GatedCell):
    """Gated recurrent unit. ``reset_after=False`` (the TF 1.x default): the reset gate
    applies before the recurrent kernel; ``reset_after=True``: after it, with a bias of
    shape ``(2, 3 * units)`` (input row, recurrent row)."""

    _gates = 3

    def __init__(self, units, reset_after: bool = False, **kwargs) -> None:
        super().__init__(units, **kwargs)
        self.reset_after = bool(reset_after)

    def get_config(self) -> dict:
        return {**super().get_config(), "reset_after": self.reset_after}

    def _bias_shape(self, n: int) -> list[int]:
        # reset_after: one row for the input projection, one for the recurrent one
        return [2, n] if self.reset_after else [n]

    def call(self, inputs, states):
        h = to_list(states)[0]
        if self.reset_after:
            return self._step_reset_after(inputs, h)
        kz, kr, kh = array_join_ops.split(self.kernel, 3, axis=1)
        xz, xr, xh = (math_ops.matmul(self._masked(inputs, 0, g), k)
                      for g, k in enumerate((kz, kr, kh)))
        if self.use_bias:
            bz, br, bh = array_join_ops.split(self.bias, 3)
            xz, xr, xh = math_ops.add(xz, bz), math_ops.add(xr, br), math_ops.add(xh, bh)
        uz, ur, uh = array_join_ops.split(self.recurrent_kernel, 3, axis=1)
        z = self.recurrent_activation(math_ops.add(xz, math_ops.matmul(self._masked(h, 1, 0),
                                                                       uz)))
        r = self.recurrent_activation(math_ops.add(xr, math_ops.matmul(self._masked(h, 1, 1),
                                                                       ur)))
        hh = self.activation(math_ops.add(xh, math_ops.matmul(
            math_ops.multiply(r, self._masked(h, 1, 2)), uh)))
        return self._mix(z, h, hh)

    def _step_reset_after(self, x, h):
        """The cuDNN-compatible form: the reset gate scales the recurrent projection
        (with its own bias row) after the matmul."""
        if any(m is not None for m in self._masks) and self.implementation == 1:
            ks = array_join_ops.split(self.kernel, 3, axis=1)
            us = array_join_ops.split(self.recurrent_kernel, 3, axis=1)
            gx = [math_ops.matmul(self._masked(x, 0, g), k) for g, k in enumerate(ks)]
            gh = [math_ops.matmul(self._masked(h, 1, g), u) for g, u in enumerate(us)]
            if self.use_bias:
                b_in, b_rec = array_join_ops.unstack(self.bias)
                gx = [math_ops.add(a, b) for a, b in zip(gx, array_join_ops.split(b_in, 3),
                                                         strict=True)]
                gh = [math_ops.add(a, b) for a, b in zip(gh, array_join_ops.split(b_rec, 3),
                                                         strict=True)]
            (xz, xr, xh), (hz, hr, hh) = gx, gh
        else:
            gx = math_ops.matmul(self._masked(x, 0, 0), self.kernel)
            gh = math_ops.matmul(self._masked(h, 1, 0), self.recurrent_kernel)
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


class StackedRNNCells(AbstractRNNCell):
    """Several cells as one: each step feeds each cell's output to the next; the states
    are all the cells' states, in order; the output is the last cell's."""

    def __init__(self, cells, **kwargs) -> None:
        super().__init__(**kwargs)
        for cell in cells:
            if not hasattr(cell, "call") or not hasattr(cell, "state_size"):
                raise ValueError(f"All cells must have a `call` method and a `state_size` "
                                 f"attribute. Received cells: {cells}")
        self.cells = list(cells)

    @property
    def state_size(self):
        return tuple(c.state_size for c in self.cells)

    @property
    def output_size(self):
        return output_size_of(self.cells[-1])

    @property
    def trainable_weights(self) -> list:
        if not self.trainable:
            return []
        return [w for c in self.cells for w in c.trainable_weights]

    @property
    def non_trainable_weights(self) -> list:
        if self.trainable:
            return [w for c in self.cells for w in c.non_trainable_weights]
        return [w for c in self.cells for w in c.weights]

    @property
    def losses(self) -> list:
        return [loss for c in self.cells for loss in c.losses]

    def get_config(self) -> dict:
        return {**super().get_config(), "cells": [
            {"class_name": type(c).__name__, "config": c.get_config()} for c in self.cells]}

    @classmethod
    def from_config(cls, config: dict, custom_objects=None):
        from flowgraph.keras.saving import layer_from_config

        config = dict(config)
        cells = [c if isinstance(c, Layer) else layer_from_config(c, custom_objects)
                 for c in config.pop("cells")]
        return cls(cells, **config)

    def build(self, input_shape) -> None:
        shape = TensorShape(input_shape)
        for cell in self.cells:
            build_cell(cell, shape, self._dtype, self._weight_scope)
            shape = TensorShape([shape[0].value, int(output_size_of(cell))])

    def call(self, inputs, states):
        flat = _flatten(states)
        out, new = inputs, []
        for cell in self.cells:
            n = len(flat_state_sizes(cell.state_size))
            mine, flat = flat[:n], flat[n:]
            out, cell_new = cell.call(out, mine)
            new += _flatten(cell_new)
        return out, new


def _masks(ones, rate: float, count: int, training):
    """`count` dropout masks shaped as `ones` (zeros at `rate`, the rest ``1 / (1 -
    rate)``) while `training`; ones otherwise; None when `rate` is 0."""
    if not rate:
        return None
    def drop():
        noise = random_ops.random_uniform(array_shape_ops.shape(ones),
                                          dtype=ones.dtype.base_dtype)
        keep = math_ops.cast(math_ops.greater_equal(noise, rate), ones.dtype.base_dtype)
        return math_ops.multiply(keep, 1.0 / (1.0 - rate))

    return [smart_cond(training, drop, lambda: ones) for _ in range(count)]


def _flatten(states) -> list:
    out = []
    for s in to_list(states):
        out += _flatten(s) if isinstance(s, list | tuple) else [s]
    return out

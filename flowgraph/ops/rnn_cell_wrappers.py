"""The cells that combine or wrap other cells: `MultiRNNCell` (layers),
`DropoutWrapper`, `ResidualWrapper`, `DeviceWrapper` (`tf.nn.rnn_cell`).

A wrapper has no variable scope of its own: the wrapped cell's variables keep the names
they would have without it (``rnn/basic_lstm_cell/kernel`` under a `DropoutWrapper`).
`MultiRNNCell` is a cell with a scope (``multi_rnn_cell``) in which layer k's cell is
called inside ``cell_k``. `tf.contrib.rnn`'s `OutputProjectionWrapper` and
`InputProjectionWrapper` own a scope too, holding their projection's ``kernel`` and
``bias`` and the wrapped cell's variables.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(3)] * 1)
...     _ = tf.nn.dynamic_rnn(cell, tf.zeros([1, 2, 4]), dtype=tf.float32)
...     print(tf.global_variables()[0].name)
rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel:0
"""

from __future__ import annotations

import hashlib
import numbers

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import array_ops, init_ops, math_ops, random_ops
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.control_flow_cond import nest_flatten, nest_pack
from flowgraph.ops.rnn_cell_impl import LSTMStateTuple, RNNCell, size_shape, zeros_for_size

__all__ = ["DeviceWrapper", "DropoutWrapper", "InputProjectionWrapper", "MultiRNNCell",
           "OutputProjectionWrapper", "ResidualWrapper"]


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: each layer's output is the next one's input; the state
    is the tuple of the layers' states. Layer k's variables live in ``cell_k``.

    Example
    -------
    >>> import flowgraph as tf
    >>> cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(3),
    ...                                     tf.nn.rnn_cell.GRUCell(2)])
    >>> cell.state_size, cell.output_size
    ((3, 2), 2)
    """

    def __init__(self, cells, state_is_tuple: bool = True) -> None:
        super().__init__()
        cells = list(cells)
        if not cells:
            raise ValueError("MultiRNNCell: must specify at least one cell.")
        self._cells = cells
        self._state_is_tuple = state_is_tuple

    @property
    def state_size(self):
        sizes = tuple(c.state_size for c in self._cells)
        if self._state_is_tuple:
            return sizes
        return sum(sum(size_shape(s).as_list()[-1:]) for s in nest_flatten(sizes))

    output_size = property(lambda self: self._cells[-1].output_size)

    @property
    def variables(self) -> list:
        out = []
        for c in self._cells:
            out += [v for v in c.variables if not any(v is o for o in out)]
        return out

    weights = variables
    trainable_variables = variables
    trainable_weights = variables

    def zero_state(self, batch_size, dtype):
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
            return zeros_for_size(self.state_size, batch_size, dtype)

    def build(self, inputs_shape) -> None:
        self.built = True

    def call(self, inputs, state):
        out = inputs
        new_states = []
        offset = 0
        for k, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{k}"):
                if self._state_is_tuple:
                    cur = state[k]
                else:
                    size = size_shape(cell.state_size).as_list()[-1]
                    cur = state[:, offset:offset + size]
                    offset += size
                out, new = cell(out, cur)
                new_states.append(new)
        if self._state_is_tuple:
            return out, tuple(new_states)
        return out, array_ops.concat(new_states, 1)


class _Wrapper(RNNCell):
    """A cell that delegates to `cell` (no scope of its own)."""

    def __init__(self, cell, name=None) -> None:
        super().__init__(name=name)
        if not isinstance(cell, RNNCell):
            raise TypeError(f"{type(self).__name__}: the wrapped cell must be an RNNCell, "
                            f"got {cell!r}.")
        self._cell = cell

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)
    variables = property(lambda self: self._cell.variables)
    weights = variables
    trainable_variables = property(lambda self: self._cell.trainable_variables)
    trainable_weights = trainable_variables
    wrapped_cell = property(lambda self: self._cell)
    cell = wrapped_cell  # TF 2.15's compat.v1 wrappers name it both ways

    def zero_state(self, batch_size, dtype):
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        return self.call(inputs, state, scope)


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and (new) state, with keep probabilities
    `input_keep_prob`, `output_keep_prob`, `state_keep_prob` (floats or scalar tensors).
    With ``variational_recurrent=True`` one mask per sequence (drawn once, when the
    wrapper is built) is used at every time step; it needs `dtype`, and `input_size`
    when inputs are dropped. By default the `c` part of an `LSTMStateTuple` is never
    dropped (`dropout_state_filter_visitor` decides, leaf by leaf).

    Example
    -------
    >>> import flowgraph as tf
    >>> cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(3), output_keep_prob=0.5)
    >>> cell.output_size
    3
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent: bool = False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None) -> None:
        super().__init__(cell)
        for what, p in (("input", input_keep_prob), ("output", output_keep_prob),
                        ("state", state_keep_prob)):
            if isinstance(p, numbers.Real) and not 0.0 < float(p) <= 1.0:
                raise ValueError(f"DropoutWrapper: Parameter {what}_keep_prob must be "
                                 f"between 0 and 1: {p}")
        self._input_keep_prob = input_keep_prob
        self._output_keep_prob = output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._variational = variational_recurrent
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor
        self._masks: dict[str, object] = {}
        if variational_recurrent:
            if dtype is None:
                raise ValueError("DropoutWrapper: when variational_recurrent=True, dtype "
                                 "must be provided")
            dtype = _dtypes.as_dtype(dtype)

            def noise(size, which):
                leaves = [random_ops.random_uniform(
                    [1, *size_shape(s).as_list()], dtype=dtype, seed=self._gen_seed(which, i))
                    for i, s in enumerate(nest_flatten(size))]
                return nest_pack(size, leaves)

            if not _is_one(input_keep_prob):
                if input_size is None:
                    raise ValueError("DropoutWrapper: when variational_recurrent=True and "
                                     "input_keep_prob < 1.0, input_size must be provided")
                self._masks["input"] = noise(input_size, "input")
            self._masks["state"] = noise(cell.state_size, "state")
            self._masks["output"] = noise(cell.output_size, "output")

    def _gen_seed(self, which: str, index: int):
        """The op seed of leaf `index` of the `which` ("input", "state", "output")
        dropout: TensorFlow's, the first 32 bits of the MD5 of ``f"{seed}{which}_{index}"``
        (None without a seed, so that the graph seed decides)."""
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{which}_{index}".encode()).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _drop(self, values, keep_prob, which: str, keep_leaf=None):
        if _is_one(keep_prob):
            return values
        flat = nest_flatten(values)
        masks = nest_flatten(self._masks[which]) if self._variational else [None] * len(flat)
        keep = keep_leaf or [True] * len(flat)
        out = []
        for i, (v, mask, k) in enumerate(zip(flat, masks, keep)):
            if not k:
                out.append(v)
            elif mask is None:
                out.append(_dropout(v, keep_prob, self._gen_seed(which, i)))
            else:
                p = math_ops.cast(keep_prob, v.dtype)
                out.append(math_ops.multiply(math_ops.truediv(v, p),
                                             math_ops.floor(math_ops.add(p, mask))))
        return nest_pack(values, out)

    def _state_leaves(self, state) -> list[bool]:
        if self._state_filter is not None:
            return [bool(self._state_filter(s)) for s in nest_flatten(state)]
        keep = []

        def visit(s):
            if isinstance(s, LSTMStateTuple):
                keep.extend([False, True])  # never drop c
            elif isinstance(s, list | tuple):
                for x in s:
                    visit(x)
            else:
                keep.append(True)

        visit(state)
        return keep

    def call(self, inputs, state, scope=None):
        inputs = self._drop(inputs, self._input_keep_prob, "input")
        output, new_state = self._cell(inputs, state, scope=scope)
        new_state = self._drop(new_state, self._state_keep_prob, "state",
                               self._state_leaves(new_state))
        output = self._drop(output, self._output_keep_prob, "output")
        return output, new_state


def _is_one(p) -> bool:
    return isinstance(p, numbers.Real) and float(p) == 1.0


def _dropout(x, keep_prob, seed):
    from flowgraph.ops.nn_impl import dropout

    return dropout(x, keep_prob=keep_prob, seed=seed)


class ResidualWrapper(_Wrapper):
    """Adds the cell's inputs to its outputs (``residual_fn(inputs, outputs)``, default
    their sum, leaf by leaf).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(3)).output_size
    3
    """

    def __init__(self, cell, residual_fn=None) -> None:
        super().__init__(cell)
        self._residual_fn = residual_fn

    def call(self, inputs, state, scope=None):
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state
        flat = [math_ops.add(convert_to_tensor(a), b)
                for a, b in zip(nest_flatten(inputs), nest_flatten(output))]
        return nest_pack(output, flat), new_state


class DeviceWrapper(_Wrapper):
    """Runs the cell's ops on `device`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.GRUCell(2), "/cpu:0").state_size
    2
    """

    def __init__(self, cell, device: str) -> None:
        super().__init__(cell)
        self._device = device

    def call(self, inputs, state, scope=None):
        from flowgraph.framework.graph import device

        with device(self._device):
            return self._cell(inputs, state, scope=scope)


class _CellWithVariables(RNNCell):
    """A wrapper of `self._cell` (set by the subclass) with variables of its own in a
    scope of its own: its variables list those, then the wrapped cell's; its zero state
    is the wrapped cell's, under ``<ClassName>ZeroState``."""

    state_size = property(lambda self: self._cell.state_size)

    @property
    def variables(self) -> list:
        return self._variables + [v for v in self._cell.variables
                                  if not any(v is o for o in self._variables)]

    weights = variables
    trainable_variables = variables
    trainable_weights = variables

    def zero_state(self, batch_size, dtype):
        with name_scope(f"{type(self).__name__}ZeroState", values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)


class _Projection(_CellWithVariables):
    """A cell with a scope of its own, wrapping `cell` and a dense projection whose
    ``kernel`` and ``bias`` (zeros) live in that scope (``output_projection_wrapper``)."""

    def __init__(self, cell, num_units: int, activation=None, reuse=None) -> None:
        super().__init__(_reuse=reuse)
        if not isinstance(cell, RNNCell):
            raise TypeError(f"{type(self).__name__}: the wrapped cell must be an RNNCell, "
                            f"got {cell!r}.")
        if not isinstance(num_units, numbers.Integral) or num_units < 1:
            raise ValueError(f"{type(self).__name__}: the projection size must be a "
                             f"positive integer, got {num_units!r}.")
        self._cell = cell
        self._num_units = int(num_units)
        self._activation = activation
        self._kernel = None

    def _project(self, x):
        x = convert_to_tensor(x)
        if self._kernel is None:
            depth = x.shape[-1].value if x.shape.ndims else None
            if depth is None:
                raise ValueError(f"{type(self).__name__}: the last dimension of the value "
                                 f"to project must be known, got shape {x.shape}.")
            self._kernel = self.add_variable("kernel", [depth, self._num_units])
            self._bias = self.add_variable("bias", [self._num_units],
                                           initializer=init_ops.zeros_initializer())
        out = math_ops.add(math_ops.matmul(x, self._kernel), self._bias)
        return out if self._activation is None else self._activation(out)


class OutputProjectionWrapper(_Projection):
    """Projects the cell's output to `output_size` units (`tf.contrib.rnn`).

    Example
    -------
    >>> import flowgraph as tf
    >>> cell = tf.contrib.rnn.OutputProjectionWrapper(tf.nn.rnn_cell.GRUCell(8), 1)
    >>> cell.output_size, cell.state_size
    (1, 8)
    """

    def __init__(self, cell, output_size: int, activation=None, reuse=None) -> None:
        super().__init__(cell, output_size, activation, reuse)

    output_size = property(lambda self: self._num_units)

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        return self._project(output), new_state


class InputProjectionWrapper(_Projection):
    """Projects the inputs to `num_proj` units before the cell (`tf.contrib.rnn`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.InputProjectionWrapper(tf.nn.rnn_cell.GRUCell(8), 4).output_size
    8
    """

    def __init__(self, cell, num_proj: int, activation=None, input_size=None,
                 reuse=None) -> None:
        super().__init__(cell, num_proj, activation, reuse)

    output_size = property(lambda self: self._cell.output_size)

    def call(self, inputs, state):
        return self._cell(self._project(inputs), state)

"""More of `tf.contrib.rnn`'s cells: `NASCell`, `CoupledInputForgetGateLSTMCell`,
`IntersectionRNNCell`, `LayerNormBasicGRUCell` and the convolutional LSTMs
(`ConvLSTMCell`, `Conv1DLSTMCell`, `Conv2DLSTMCell`, `Conv3DLSTMCell`), each with TF
1.15 contrib's variables (names, shapes, default initializers) and step function.

Example
-------
>>> import flowgraph as tf
>>> tf.contrib.rnn.Conv2DLSTMCell(input_shape=[8, 8, 3], output_channels=4,
...                               kernel_shape=[3, 3]).output_size
TensorShape([Dimension(8), Dimension(8), Dimension(4)])
"""

from __future__ import annotations

from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, init_ops, math_ops, math_reduce, nn_ops
from flowgraph.ops.nn_conv3d_ops import conv3d
from flowgraph.ops.nn_conv_ops import conv1d
from flowgraph.ops.rnn_cell_impl import LayerRNNCell, LSTMStateTuple, RNNCell, _last_dim

__all__ = [
    "Conv1DLSTMCell",
    "Conv2DLSTMCell",
    "Conv3DLSTMCell",
    "ConvLSTMCell",
    "CoupledInputForgetGateLSTMCell",
    "IntersectionRNNCell",
    "LayerNormBasicGRUCell",
    "NASCell",
]


def _norm(x, gamma, beta):
    """contrib's ``layer_norm`` over the last axis (epsilon 1e-12)."""
    mean = math_reduce.reduce_mean(x, [-1], keepdims=True)
    var = math_reduce.reduce_mean(math_ops.square(x - mean), [-1], keepdims=True)
    return (x - mean) * math_ops.rsqrt(var + 1e-12) * gamma + beta


class NASCell(LayerRNNCell):
    """The recurrent cell found by Neural Architecture Search (Zoph and Le, 2017): eight
    input and recurrent branches combined in a fixed tree. Variables
    ``recurrent_kernel [proj, 8 units]``, ``kernel [in, 8 units]``, ``bias`` (with
    ``use_biases``), ``projection_weights`` (with ``num_proj``).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.NASCell(4, num_proj=2).state_size
    LSTMStateTuple(c=4, h=2)
    """

    def __init__(self, num_units: int, num_proj=None, use_biases: bool = False,
                 reuse=None) -> None:
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._num_proj = num_proj
        self._use_biases = use_biases

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_proj or self._num_units)

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), "NASCell")
        n, proj = self._num_units, self._num_proj or self._num_units
        self._recurrent_kernel = self.add_variable("recurrent_kernel", [proj, 8 * n])
        self._kernel = self.add_variable("kernel", [depth, 8 * n])
        if self._use_biases:
            self._bias = self.add_variable("bias", [8 * n],
                                           initializer=init_ops.zeros_initializer())
        if self._num_proj is not None:
            self._projection = self.add_variable("projection_weights", [n, self._num_proj])
        self.built = True

    def call(self, inputs, state):
        sigmoid, tanh, relu = math_ops.sigmoid, math_ops.tanh, nn_ops.relu
        c_prev, m_prev = state
        m = math_ops.matmul(m_prev, self._recurrent_kernel)
        x = math_ops.matmul(inputs, self._kernel)
        if self._use_biases:
            m = nn_ops.bias_add(m, self._bias)
        ms, xs = array_ops.split(m, 8, axis=1), array_ops.split(x, 8, axis=1)
        l1 = [sigmoid(xs[0] + ms[0]), relu(xs[1] + ms[1]), sigmoid(xs[2] + ms[2]),
              relu(xs[3] * ms[3]), tanh(xs[4] + ms[4]), sigmoid(xs[5] + ms[5]),
              tanh(xs[6] + ms[6]), sigmoid(xs[7] + ms[7])]
        l2_0 = tanh(tanh(l1[0] * l1[1]) + c_prev)  # the cell is injected here
        l2_1 = tanh(l1[2] + l1[3])
        l2_2 = tanh(l1[4] * l1[5])
        l2_3 = sigmoid(l1[6] + l1[7])
        new_c = l2_0 * l2_1
        new_m = tanh(new_c * tanh(l2_2 + l2_3))
        if self._num_proj is not None:
            new_m = math_ops.matmul(new_m, self._projection)
        return new_m, LSTMStateTuple(new_c, new_m)


class CoupledInputForgetGateLSTMCell(LayerRNNCell):
    """An LSTM whose input gate is one minus its forget gate (Greff et al., 2015), with
    optional peepholes, projection and layer normalization. Variables (contrib's
    sharded names with one shard): ``W_0 [in + proj, 3 units]``, ``B``, ``W_F_diag``,
    ``W_O_diag``, ``W_P_0``; with ``layer_norm``, ``transform``/``forget``/``output``/
    ``state`` ``gamma`` and ``beta``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.contrib.rnn.CoupledInputForgetGateLSTMCell(3)
    ...     _ = cell(tf.ones([2, 4]), cell.zero_state(2, tf.float32))
    ...     print([v.name for v in tf.global_variables()])
    ['coupled_input_forget_gate_lstm_cell/W_0:0', 'coupled_input_forget_gate_lstm_cell/B:0']
    """

    def __init__(self, num_units: int, use_peepholes: bool = False, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards: int = 1,
                 num_proj_shards: int = 1, forget_bias: float = 1.0,
                 state_is_tuple: bool = True, activation=None, reuse=None,
                 layer_norm: bool = False, norm_gain: float = 1.0,
                 norm_shift: float = 0.0) -> None:
        super().__init__(_reuse=reuse)
        if num_unit_shards != 1 or num_proj_shards != 1:
            raise NotImplementedError("CoupledInputForgetGateLSTMCell: sharded weights "
                                      "(num_unit_shards, num_proj_shards > 1) are not "
                                      "supported; use one shard.")
        self._num_units = int(num_units)
        self._use_peepholes = use_peepholes
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation or math_ops.tanh
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self):
        n, p = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, p) if self._state_is_tuple else n + p

    output_size = property(lambda self: self._num_proj or self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), "CoupledInputForgetGateLSTMCell")
        n, p = self._num_units, self._num_proj or self._num_units
        init = self._initializer
        self._w = self.add_variable("W_0", [depth + p, 3 * n], initializer=init)
        self._b = self.add_variable("B", [3 * n], initializer=init_ops.zeros_initializer())
        self._norms = {}
        if self._layer_norm:
            for gate in ("transform", "forget", "output", "state"):
                self._norms[gate] = (
                    self.add_variable(f"{gate}/gamma", [n], initializer=init_ops
                                      .constant_initializer(self._norm_gain)),
                    self.add_variable(f"{gate}/beta", [n], initializer=init_ops
                                      .constant_initializer(self._norm_shift)))
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("W_F_diag", [n], initializer=init)
            self._w_o_diag = self.add_variable("W_O_diag", [n], initializer=init)
        if self._num_proj is not None:
            self._w_p = self.add_variable("W_P_0", [n, self._num_proj], initializer=init)
        self.built = True

    def _maybe_norm(self, x, gate):
        return _norm(x, *self._norms[gate]) if self._layer_norm else x

    def call(self, inputs, state):
        n, p = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, p])
        lstm = math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._w)
        if not self._layer_norm:
            lstm = nn_ops.bias_add(lstm, self._b)
        j, f, o = array_ops.split(lstm, 3, axis=1)
        j, f, o = (self._maybe_norm(j, "transform"), self._maybe_norm(f, "forget"),
                   self._maybe_norm(o, "output"))
        if self._use_peepholes:
            f_act = math_ops.sigmoid(f + self._forget_bias + self._w_f_diag * c_prev)
        else:
            f_act = math_ops.sigmoid(f + self._forget_bias)
        c = f_act * c_prev + (1 - f_act) * self._activation(j)
        c = self._maybe_norm(c, "state")
        if self._use_peepholes:
            m = math_ops.sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = math_ops.sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._w_p)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else \
            array_ops.concat([c, m], 1)
        return m, new_state


class IntersectionRNNCell(LayerRNNCell):
    """The intersection RNN (+RNN) of Collins et al., 2017: a gate through time and a
    gate through depth; the input size must equal `num_units` unless `num_in_proj`
    projects it (``in_projection/kernel``). Variables ``kernel [units + units, 4
    units]`` and ``bias``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.IntersectionRNNCell(5, num_in_proj=5).output_size
    5
    """

    def __init__(self, num_units: int, num_in_proj=None, initializer=None,
                 forget_bias: float = 1.0, y_activation=None, reuse=None) -> None:
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._num_in_proj = num_in_proj
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._y_activation = y_activation or nn_ops.relu

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), "IntersectionRNNCell")
        n, init = self._num_units, self._initializer
        self._project = depth != n
        if self._project:
            if not self._num_in_proj:
                raise ValueError("Must have input size == output size for Intersection RNN. "
                                 "To fix, num_in_proj should be set to num_units at cell "
                                 f"init (inputs have {depth} features, num_units={n}).")
            self._in_kernel = self.add_variable("in_projection/kernel", [depth, n],
                                                initializer=init)
            self._in_bias = self.add_variable("in_projection/bias", [n],
                                              initializer=init_ops.zeros_initializer())
        self._kernel = self.add_variable("kernel", [2 * n, 4 * n], initializer=init)
        self._bias = self.add_variable("bias", [4 * n], initializer=init_ops.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        if self._project:
            inputs = nn_ops.bias_add(math_ops.matmul(inputs, self._in_kernel), self._in_bias)
        m = nn_ops.bias_add(math_ops.matmul(array_ops.concat([inputs, state], 1),
                                            self._kernel), self._bias)
        gh_act, h_act, gy_act, y_act = array_ops.split(m, [n, n, n, n], axis=1)
        gh = math_ops.sigmoid(gh_act + self._forget_bias)
        gy = math_ops.sigmoid(gy_act + self._forget_bias)
        new_state = gh * state + (1.0 - gh) * math_ops.tanh(h_act)
        new_y = gy * inputs + (1.0 - gy) * self._y_activation(y_act)
        return new_y, new_state


class LayerNormBasicGRUCell(LayerRNNCell):
    """A GRU with layer normalization of its gates and candidate parts. Variables
    ``update_gate/kernel``, ``reset_gate/kernel``, ``candidate_linear_x/kernel``,
    ``candidate_linear_h/kernel`` and, with ``layer_norm``, each part's ``gamma``
    and ``beta`` (else ``bias``). Note contrib's update rule ``h' = (1 - z) h + z c``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.contrib.rnn.LayerNormBasicGRUCell(3).state_size
    3
    """

    _PARTS = ("update_gate", "reset_gate", "candidate_linear_x", "candidate_linear_h")

    def __init__(self, num_units: int, activation=None, layer_norm: bool = True,
                 norm_gain: float = 1.0, norm_shift: float = 0.0, reuse=None) -> None:
        super().__init__(_reuse=reuse)
        self._num_units = int(num_units)
        self._activation = activation or math_ops.tanh
        self._layer_norm = layer_norm
        self._g, self._b = norm_gain, norm_shift

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), "LayerNormBasicGRUCell")
        n = self._num_units
        self._norms = {}
        if self._layer_norm:
            for part in self._PARTS:
                self._norms[part] = (
                    self.add_variable(f"{part}/gamma", [n],
                                      initializer=init_ops.constant_initializer(self._g)),
                    self.add_variable(f"{part}/beta", [n],
                                      initializer=init_ops.constant_initializer(self._b)))
        shapes = {"update_gate": depth + n, "reset_gate": depth + n,
                  "candidate_linear_x": depth, "candidate_linear_h": n}
        self._kernels = {p: self.add_variable(f"{p}/kernel", [shapes[p], n])
                         for p in self._PARTS}
        self._biases = {} if self._layer_norm else \
            {p: self.add_variable(f"{p}/bias", [n]) for p in self._PARTS}
        self.built = True

    def _part(self, x, part):
        out = math_ops.matmul(x, self._kernels[part])
        if self._layer_norm:
            return _norm(out, *self._norms[part])
        return nn_ops.bias_add(out, self._biases[part])

    def call(self, inputs, state):
        args = array_ops.concat([inputs, state], 1)
        z = math_ops.sigmoid(self._part(args, "update_gate"))
        r = math_ops.sigmoid(self._part(args, "reset_gate"))
        candidate = self._activation(self._part(inputs, "candidate_linear_x")
                                     + r * self._part(state, "candidate_linear_h"))
        new_h = (1 - z) * state + z * candidate
        return new_h, new_h


def _conv_nd(x, kernel, ndims: int):
    if ndims == 1:
        return conv1d(x, kernel, 1, "SAME")
    if ndims == 2:
        return nn_ops.conv2d(x, kernel, [1, 1, 1, 1], "SAME")
    return conv3d(x, kernel, [1, 1, 1, 1, 1], "SAME")


class ConvLSTMCell(RNNCell):
    """The convolutional LSTM of Shi et al., 2015: the LSTM's matrix products become
    ``SAME`` convolutions over the spatial axes of ``input_shape`` (without the
    batch). Variables (scope ``conv_lstm_cell``, as in TF 1.15, for every
    dimensionality): ``kernel [*kernel_shape, in + out channels, 4 out]`` and
    ``biases`` (zeros, with ``use_bias``).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     cell = tf.contrib.rnn.Conv1DLSTMCell(input_shape=[6, 2], output_channels=3,
    ...                                          kernel_shape=[3])
    ...     out, _ = tf.nn.dynamic_rnn(cell, tf.ones([4, 5, 6, 2]), dtype=tf.float32)
    ...     print(out.shape, tf.global_variables()[0].shape)
    (4, 5, 6, 3) (3, 5, 12)
    """

    def __init__(self, conv_ndims: int, input_shape, output_channels: int, kernel_shape,
                 use_bias: bool = True, skip_connection: bool = False,
                 forget_bias: float = 1.0, initializers=None,
                 name: str = "conv_lstm_cell") -> None:
        super().__init__(name=name)
        input_shape = list(input_shape)
        if conv_ndims != len(input_shape) - 1:
            raise ValueError(f"Invalid input_shape {input_shape} for conv_ndims={conv_ndims}.")
        self._ndims = conv_ndims
        self._input_shape = input_shape
        self._output_channels = int(output_channels)
        self._kernel_shape = list(kernel_shape)
        self._use_bias = use_bias
        self._forget_bias = forget_bias
        self._skip_connection = skip_connection
        total = self._output_channels + (input_shape[-1] if skip_connection else 0)
        state = TensorShape([*input_shape[:-1], self._output_channels])
        self._state_size = LSTMStateTuple(state, state)
        self._output_size = TensorShape([*input_shape[:-1], total])

    state_size = property(lambda self: self._state_size)
    output_size = property(lambda self: self._output_size)

    def build(self, inputs_shape) -> None:
        depth = _last_dim(TensorShape(inputs_shape), type(self).__name__)
        out = self._output_channels
        self._kernel = self.add_variable(
            "kernel", [*self._kernel_shape, depth + out, 4 * out])
        if self._use_bias:
            self._bias = self.add_variable("biases", [4 * out],
                                           initializer=init_ops.zeros_initializer())
        self.built = True

    def __call__(self, inputs, state, scope=None):
        return self._layer_call(inputs, state, scope)

    def call(self, inputs, state):
        cell, hidden = state
        z = _conv_nd(array_ops.concat([inputs, hidden], self._ndims + 1), self._kernel,
                     self._ndims)
        if self._use_bias:
            z = z + self._bias
        i, j, f, o = array_ops.split(z, 4, axis=self._ndims + 1)
        new_cell = math_ops.sigmoid(f + self._forget_bias) * cell \
            + math_ops.sigmoid(i) * math_ops.tanh(j)
        output = math_ops.tanh(new_cell) * math_ops.sigmoid(o)
        if self._skip_connection:
            output = array_ops.concat([output, inputs], -1)
        return output, LSTMStateTuple(new_cell, output)


class Conv1DLSTMCell(ConvLSTMCell):
    """`ConvLSTMCell` over one spatial axis (``input_shape = [width, channels]``)."""

    def __init__(self, name: str = "conv_1d_lstm_cell", **kwargs) -> None:
        super().__init__(conv_ndims=1, **kwargs)  # TF 1.15 drops `name` here too


class Conv2DLSTMCell(ConvLSTMCell):
    """`ConvLSTMCell` over two spatial axes (``input_shape = [h, w, channels]``)."""

    def __init__(self, name: str = "conv_2d_lstm_cell", **kwargs) -> None:
        super().__init__(conv_ndims=2, **kwargs)


class Conv3DLSTMCell(ConvLSTMCell):
    """`ConvLSTMCell` over three spatial axes (``input_shape = [d, h, w, channels]``)."""

    def __init__(self, name: str = "conv_3d_lstm_cell", **kwargs) -> None:
        super().__init__(conv_ndims=3, **kwargs)

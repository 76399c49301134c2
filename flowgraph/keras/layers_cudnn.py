"""`CuDNNLSTM` and `CuDNNGRU`: TF 1.x Keras's GPU-only recurrent layers. They build as in
TensorFlow (weights ``cu_dnnlstm/kernel`` ``(features, 4 * units)``,
``recurrent_kernel`` ``(units, 4 * units)``, ``bias`` ``(8 * units,)`` holding the input
and recurrent biases; GRU: 3 gates, ``(6 * units,)``) and add one ``CudnnRNNV2`` op, whose
only kernels in TensorFlow are cuDNN's. Running it fails as TF 2.15 does on a machine
without a GPU: ``InvalidArgumentError`` "No OpKernel was registered to support Op
'CudnnRNNV2'". For CPU inference, load the weights into `LSTM(...,
recurrent_activation='sigmoid')` with the two bias halves summed, or into `GRU(...,
reset_after=True, recurrent_activation='sigmoid')` with the bias as its two rows.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph import keras
>>> with tf.Graph().as_default():
...     layer = keras.layers.CuDNNLSTM(4, return_sequences=True)
...     y = layer(keras.Input((5, 3)))
...     print(y.shape, [w.shape.as_list() for w in layer.weights])
(?, 5, 4) [[3, 16], [4, 16], [32]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.keras.layers import Layer, _check_ndim, get_initializer
from flowgraph.ops import array_join_ops, array_shape_ops
from flowgraph.ops.cudnn_rnn_ops import cudnn_rnn

__all__ = ["CuDNNGRU", "CuDNNLSTM"]


class _CuDNNRNN(Layer):
    """The weights, configuration and ``CudnnRNNV2`` call shared by the two layers."""

    _gates = 4
    _mode = "lstm"
    _n_states = 2

    def __init__(self, units, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, return_sequences: bool = False,
                 return_state: bool = False, go_backwards: bool = False,
                 stateful: bool = False, time_major: bool = False, **kwargs) -> None:
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}(stateful=True) is not "
                                      f"supported by flowgraph.")
        self.units = int(units)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.recurrent_regularizer = recurrent_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.recurrent_constraint = recurrent_constraint
        self.bias_constraint = bias_constraint
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards, self.time_major = go_backwards, time_major

    def get_config(self) -> dict:
        keys = ("units", "kernel_initializer", "recurrent_initializer", "bias_initializer",
                "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
                "activity_regularizer", "kernel_constraint", "recurrent_constraint",
                "bias_constraint", "return_sequences", "return_state", "go_backwards",
                "time_major")
        return {**super().get_config(), **{k: getattr(self, k) for k in keys},
                "stateful": False}

    def _bias_init(self):
        return self.bias_initializer

    def build(self, input_shape) -> None:
        shape = _check_ndim(self, input_shape, ndim=3)
        dim = shape[-1].value
        if dim is None:
            raise ValueError(f"The last dimension of the inputs to `{type(self).__name__}` "
                             f"should be defined (layer {self.name}).")
        n = self._gates * self.units
        self.kernel = self.add_weight("kernel", [dim, n], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", [self.units, n],
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = self.add_weight("bias", [2 * n], initializer=self._bias_init(),
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint)

    def _gate_order(self) -> list[int]:
        return list(range(self._gates))

    def _params(self):
        """The weights flattened in cuDNN's canonical order (each gate's matrix
        transposed, then the biases)."""
        order = self._gate_order()
        k = array_join_ops.split(self.kernel, self._gates, axis=1)
        r = array_join_ops.split(self.recurrent_kernel, self._gates, axis=1)
        b = array_join_ops.split(self.bias, 2 * self._gates)
        mats = [k[i] for i in order] + [r[i] for i in order]
        biases = [b[i] for i in order] + [b[self._gates + i] for i in order]
        flat = [array_shape_ops.reshape(array_shape_ops.transpose(m), [-1]) for m in mats]
        return array_join_ops.concat(flat + biases, 0)

    def call(self, inputs, initial_state=None):
        x = inputs if self.time_major else array_shape_ops.transpose(inputs, [1, 0, 2])
        if self.go_backwards:
            x = array_join_ops.reverse_v2(x, [0])
        if initial_state is None:
            batch = array_shape_ops.shape(inputs)[1 if self.time_major else 0]
            zeros = array_shape_ops.zeros(array_join_ops.stack([batch, self.units]),
                                          dtype=inputs.dtype.base_dtype)
            initial_state = [zeros] * self._n_states
        h0 = array_shape_ops.expand_dims(initial_state[0], 0)
        c0 = array_shape_ops.expand_dims(initial_state[1], 0) if self._n_states == 2 else \
            array_shape_ops.zeros([], dtype=_dtypes.float32)
        out, h, c, _, _ = cudnn_rnn(x, h0, c0, self._params(), rnn_mode=self._mode)
        if self.return_sequences:
            output = out if self.time_major else array_shape_ops.transpose(out, [1, 0, 2])
        else:
            output = out[-1]
        states = [h[0], c[0]] if self._n_states == 2 else [h[0]]
        return [output, *states] if self.return_state else output


class CuDNNLSTM(_CuDNNRNN):
    """A cuDNN LSTM (sigmoid gates; separate input and recurrent biases)."""

    @classmethod
    def _default_name(cls) -> str:
        return "cu_dnnlstm"

    def __init__(self, units, unit_forget_bias: bool = True, **kwargs) -> None:
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias

    def get_config(self) -> dict:
        return {**super().get_config(), "unit_forget_bias": self.unit_forget_bias}

    def _bias_init(self):
        if not self.unit_forget_bias:
            return self.bias_initializer
        # the recurrent forget-gate bias starts at 1: 5 units of the base, 1, then 2
        base = get_initializer(self.bias_initializer)
        units = self.units

        def init(shape, dtype=None, partition_info=None):
            return array_join_ops.concat([base([5 * units], dtype=dtype),
                                          array_shape_ops.ones([units], dtype=dtype),
                                          base([2 * units], dtype=dtype)], 0)

        return init


class CuDNNGRU(_CuDNNRNN):
    """A cuDNN GRU (reset gate after the recurrent matmul, sigmoid gates)."""

    _gates = 3
    _mode = "gru"
    _n_states = 1

    @classmethod
    def _default_name(cls) -> str:
        return "cu_dnngru"

    def _gate_order(self) -> list[int]:
        return [1, 0, 2]  # cuDNN's r, z, h

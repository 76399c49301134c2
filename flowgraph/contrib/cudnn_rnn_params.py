"""The cuDNN RNN parameter formats of `tf.contrib.cudnn_rnn`, on any device.

Three layouts of one model's weights:

* **opaque**: one flat vector (the ``opaque_kernel`` variable of a `CudnnLSTM` ...):
  every weight matrix of every layer and direction flattened row-major, in the order
  of the cuDNN canonical list, then every bias. (On GPUs cuDNN may pad or reorder its
  buffer; flowgraph runs the math itself, so this documented order is the layout.)
* **cuDNN canonical**: per layer, per direction (forward first), the matrices applied
  to the layer input, one per gate, then those applied to the recurrent state; each is
  ``[num_units, input_width]`` / ``[num_units, num_units]``; the biases likewise (two per
  gate: input side, recurrent side). Gate order: LSTM ``i, f, c, o``; GRU ``r, u, h``;
  plain RNN one gate.
* **TF canonical**: what `CudnnCompatibleLSTMCell`, `CudnnCompatibleGRUCell` and
  `BasicRNNCell` hold: a kernel ``[input_width + num_units, gates * num_units]`` (input
  rows first, TF gate order LSTM ``i, c, f, o``) and the input- and recurrent-side
  biases summed (restoring splits a sum in halves).

`CudnnOpaqueParamsSaveable` writes the TF canonical tensors under the names the
compatible cells use (``rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/kernel``
...), so a checkpoint of a cuDNN layer restores into a graph of compatible cells and back.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> p = tf.contrib.cudnn_rnn.CudnnParamsFormatConverterLSTM(1, 2, 3)
>>> w = [tf.ones([2, 3])] * 4 + [tf.ones([2, 2])] * 4
>>> b = [tf.zeros([2])] * 8
>>> with tf.Session() as sess:      # 4 * (2 * 3) + 4 * (2 * 2) weights, 8 * 2 biases
...     print(sess.run(tf.size(p.canonical_to_opaque(w, b))))
56
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_index_ops import slice as _slice
from flowgraph.ops.array_join_ops import concat, split
from flowgraph.ops.array_shape_ops import reshape, transpose
from flowgraph.ops.state_ops import assign

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
    "CudnnGRUSaveable",
    "CudnnLSTMSaveable",
    "CudnnOpaqueParamsSaveable",
    "CudnnParamsFormatConverterGRU",
    "CudnnParamsFormatConverterLSTM",
    "CudnnParamsFormatConverterRelu",
    "CudnnParamsFormatConverterTanh",
    "CudnnRNNReluSaveable",
    "CudnnRNNTanhSaveable",
    "SaveSpec",
]

CUDNN_RNN_UNIDIRECTION = "unidirectional"
CUDNN_RNN_BIDIRECTION = "bidirectional"
CUDNN_LSTM = "lstm"
CUDNN_GRU = "gru"
CUDNN_RNN_RELU = "rnn_relu"
CUDNN_RNN_TANH = "rnn_tanh"
CUDNN_INPUT_LINEAR_MODE = "linear_input"
CUDNN_INPUT_SKIP_MODE = "skip_input"
CUDNN_INPUT_AUTO_MODE = "auto_select"

# matrices (and biases) per layer and direction: half on the input, half recurrent
PARAMS_PER_LAYER = {CUDNN_LSTM: 8, CUDNN_GRU: 6, CUDNN_RNN_TANH: 2, CUDNN_RNN_RELU: 2}
CELL_NAMES = {CUDNN_LSTM: "cudnn_compatible_lstm_cell", CUDNN_GRU: "cudnn_compatible_gru_cell",
              CUDNN_RNN_TANH: "basic_rnn_cell", CUDNN_RNN_RELU: "basic_rnn_cell"}


def check_direction(direction: str) -> None:
    if direction not in (CUDNN_RNN_UNIDIRECTION, CUDNN_RNN_BIDIRECTION):
        raise ValueError(f"Invalid direction: {direction}, expecting "
                         f"{CUDNN_RNN_UNIDIRECTION} or {CUDNN_RNN_BIDIRECTION}")


def check_input_mode(input_mode: str) -> None:
    if input_mode not in (CUDNN_INPUT_LINEAR_MODE, CUDNN_INPUT_SKIP_MODE,
                          CUDNN_INPUT_AUTO_MODE):
        raise ValueError(f"Invalid input_mode: {input_mode}, expecting one of "
                         f"[{CUDNN_INPUT_LINEAR_MODE}, {CUDNN_INPUT_SKIP_MODE}, "
                         f"{CUDNN_INPUT_AUTO_MODE}]")


def check_linear_input(input_mode: str, input_size: int, num_units: int) -> None:
    """flowgraph computes the 'linear_input' model only ('auto_select' is that model
    when input_size != num_units)."""
    check_input_mode(input_mode)
    skip = input_mode == CUDNN_INPUT_SKIP_MODE or (
        input_mode == CUDNN_INPUT_AUTO_MODE and input_size == num_units)
    if skip:
        raise NotImplementedError(
            f"cuDNN RNN input_mode={input_mode!r} with input_size={input_size} and "
            f"num_units={num_units} is the 'skip_input' model (no input projection), "
            "which flowgraph does not implement; use input_mode='linear_input'")


class _Shapes:
    """Canonical shapes of a model: `weight_shapes` and `bias_shapes` in cuDNN order."""

    def __init__(self, rnn_mode, num_layers, num_units, input_size, direction) -> None:
        check_direction(direction)
        if rnn_mode not in PARAMS_PER_LAYER:
            raise ValueError(f"Invalid rnn_mode: {rnn_mode}, expecting one of "
                             f"{sorted(PARAMS_PER_LAYER)}")
        self.rnn_mode = rnn_mode
        self.num_layers = int(num_layers)
        self.num_units = int(num_units)
        self.input_size = int(input_size)
        self.direction = direction
        self.num_dirs = 1 if direction == CUDNN_RNN_UNIDIRECTION else 2
        self.per_layer = PARAMS_PER_LAYER[rnn_mode]

    def input_width(self, layer: int) -> int:
        return self.input_size if layer == 0 else self.num_units * self.num_dirs

    @property
    def weight_shapes(self) -> list[list[int]]:
        gates, n = self.per_layer // 2, self.num_units
        out = []
        for layer in range(self.num_layers):
            one = [[n, self.input_width(layer)]] * gates + [[n, n]] * gates
            out += one * self.num_dirs
        return out

    @property
    def bias_shapes(self) -> list[list[int]]:
        return [[self.num_units]] * (self.per_layer * self.num_layers * self.num_dirs)

    @property
    def num_params(self) -> int:
        size = sum(a * b for a, b in self.weight_shapes)
        return size + sum(s[0] for s in self.bias_shapes)


def canonical_to_params(weights, biases, shapes: _Shapes, name=None):
    """The opaque vector of cuDNN canonical `weights` and `biases` (lists in cuDNN order)."""
    if len(weights) != len(shapes.weight_shapes) or len(biases) != len(shapes.bias_shapes):
        raise ValueError(
            f"canonical_to_params ({shapes.rnn_mode}, {shapes.num_layers} layer(s), "
            f"{shapes.direction}): expected {len(shapes.weight_shapes)} weights and "
            f"{len(shapes.bias_shapes)} biases, got {len(weights)} and {len(biases)}")
    with name_scope(name, "canonical_to_params"):
        parts = [reshape(convert_to_tensor(w), [-1]) for w in weights]
        parts += [reshape(convert_to_tensor(b), [-1]) for b in biases]
        return concat(parts, axis=0)


def params_to_canonical(params, shapes: _Shapes, name=None):
    """``(weights, biases)``: the cuDNN canonical tensors packed in opaque `params`."""
    with name_scope(name, "params_to_canonical"):
        params = convert_to_tensor(params)
        n = params.shape[0] if params.shape.ndims == 1 else None
        if n is not None and n.value is not None and n.value != shapes.num_params:
            raise ValueError(
                f"params_to_canonical: the params vector has {n.value} elements but a "
                f"{shapes.num_layers}-layer {shapes.direction} {shapes.rnn_mode} with "
                f"num_units={shapes.num_units}, input_size={shapes.input_size} needs "
                f"{shapes.num_params}")
        offset, weights, biases = 0, [], []
        for shape in shapes.weight_shapes:
            size = shape[0] * shape[1]
            weights.append(reshape(_slice(params, [offset], [size]), shape))
            offset += size
        for shape in shapes.bias_shapes:
            biases.append(_slice(params, [offset], [shape[0]]))
            offset += shape[0]
        return weights, biases


class _Converter(_Shapes):
    """Converts cuDNN canonical params <-> TF canonical params of one model kind."""

    rnn_mode = CUDNN_LSTM

    def __init__(self, num_layers, num_units, input_size, num_proj=None,
                 input_mode=CUDNN_INPUT_LINEAR_MODE, direction=CUDNN_RNN_UNIDIRECTION,
                 dtype=None) -> None:
        super().__init__(type(self).rnn_mode, num_layers, num_units, input_size, direction)
        if num_proj is not None:
            raise NotImplementedError(f"{type(self).__name__}: num_proj (LSTM projections) "
                                      "is not supported by flowgraph's cuDNN RNNs")
        check_input_mode(input_mode)
        self.input_mode = input_mode
        self.dtype = dtype

    # -- one layer and direction --------------------------------------------------------
    def _to_tf(self, ws, bs) -> tuple[list, list]:
        raise NotImplementedError

    def _to_cudnn(self, layer: int, tf_ws, tf_bs) -> tuple[list, list]:
        raise NotImplementedError

    def _tf_counts(self) -> tuple[int, int]:
        """TF canonical weights and biases per layer and direction."""
        return 1, 1

    # -- whole models ---------------------------------------------------------------------
    def opaque_to_tf_canonical(self, opaque_params):
        """``(weights, biases)`` in TF canonical form (per layer, fw then bw)."""
        ws, bs = params_to_canonical(opaque_params, self)
        return self._cudnn_to_tf(ws, bs)

    def tf_canonical_to_opaque(self, tf_canonicals, weights_proj=None):
        """The opaque vector of TF canonical tensors (all weights, then all biases)."""
        ws, bs = self._tf_to_cudnn(tf_canonicals)
        return canonical_to_params(ws, bs, self)

    def canonical_to_opaque(self, cu_weights, cu_biases):
        return canonical_to_params(cu_weights, cu_biases, self)

    def opaque_to_canonical(self, opaque_params):
        return params_to_canonical(opaque_params, self)

    def _cudnn_to_tf(self, ws, bs):
        k = self.per_layer
        tf_ws, tf_bs = [], []
        for unit in range(self.num_layers * self.num_dirs):
            w, b = self._to_tf(ws[unit * k:(unit + 1) * k], bs[unit * k:(unit + 1) * k])
            tf_ws += w
            tf_bs += b
        return tf_ws, tf_bs

    def _tf_to_cudnn(self, tf_canonicals):
        nw, nb = self._tf_counts()
        units = self.num_layers * self.num_dirs
        if len(tf_canonicals) != units * (nw + nb):
            raise ValueError(f"{type(self).__name__}: expected {units * (nw + nb)} TF "
                             f"canonical tensors, got {len(tf_canonicals)}")
        tf_ws, tf_bs = tf_canonicals[:units * nw], tf_canonicals[units * nw:]
        ws, bs = [], []
        for unit in range(units):
            w, b = self._to_cudnn(unit // self.num_dirs, tf_ws[unit * nw:(unit + 1) * nw],
                                  tf_bs[unit * nb:(unit + 1) * nb])
            ws += w
            bs += b
        return ws, bs

    def _split_kernel(self, layer: int, kernel, gates: int) -> tuple[list, list]:
        """A TF kernel ``[in + n, gates * n]`` as cuDNN's per-gate ``W`` and ``R``."""
        k = transpose(kernel)
        ws, rs = [], []
        for g in split(k, gates, axis=0):
            w, r = split(g, [self.input_width(layer), self.num_units], axis=1)
            ws.append(w)
            rs.append(r)
        return ws, rs


class CudnnParamsFormatConverterLSTM(_Converter):
    """LSTM params: TF gate order ``i, c, f, o`` vs cuDNN ``i, f, c, o``."""

    rnn_mode = CUDNN_LSTM

    def _to_tf(self, ws, bs):
        w_i, w_f, w_c, w_o, r_i, r_f, r_c, r_o = ws
        rows = [concat([w, r], axis=1) for w, r in ((w_i, r_i), (w_c, r_c), (w_f, r_f),
                                                   (w_o, r_o))]
        kernel = transpose(concat(rows, axis=0))
        b = [bs[g] + bs[g + 4] for g in (0, 2, 1, 3)]
        return [kernel], [concat(b, axis=0)]

    def _to_cudnn(self, layer, tf_ws, tf_bs):
        (wi, wc, wf, wo), (ri, rc, rf, ro) = self._split_kernel(layer, tf_ws[0], 4)
        bi, bc, bf, bo = (x * 0.5 for x in split(tf_bs[0], 4, axis=0))
        return [wi, wf, wc, wo, ri, rf, rc, ro], [bi, bf, bc, bo, bi, bf, bc, bo]


class CudnnParamsFormatConverterGRU(_Converter):
    """GRU params: TF holds ``gates/kernel`` (r, u), ``candidate/input_projection`` and
    ``candidate/hidden_projection`` kernels and biases."""

    rnn_mode = CUDNN_GRU

    def _tf_counts(self):
        return 3, 3

    def _to_tf(self, ws, bs):
        w_r, w_u, w_h, r_r, r_u, r_h = ws
        gates = transpose(concat([concat([w_r, r_r], axis=1), concat([w_u, r_u], axis=1)],
                                 axis=0))
        gate_bias = concat([bs[0] + bs[3], bs[1] + bs[4]], axis=0)
        return [gates, transpose(w_h), transpose(r_h)], [gate_bias, bs[2], bs[5]]

    def _to_cudnn(self, layer, tf_ws, tf_bs):
        (w_r, w_u), (r_r, r_u) = self._split_kernel(layer, tf_ws[0], 2)
        b_r, b_u = (x * 0.5 for x in split(tf_bs[0], 2, axis=0))
        return ([w_r, w_u, transpose(tf_ws[1]), r_r, r_u, transpose(tf_ws[2])],
                [b_r, b_u, tf_bs[1], b_r, b_u, tf_bs[2]])


class CudnnParamsFormatConverterTanh(_Converter):
    """Plain RNN params: one kernel ``[in + n, n]`` and one summed bias."""

    rnn_mode = CUDNN_RNN_TANH

    def _to_tf(self, ws, bs):
        return [transpose(concat([ws[0], ws[1]], axis=1))], [bs[0] + bs[1]]

    def _to_cudnn(self, layer, tf_ws, tf_bs):
        (w,), (r,) = self._split_kernel(layer, tf_ws[0], 1)
        half = tf_bs[0] * 0.5
        return [w, r], [half, half]


class CudnnParamsFormatConverterRelu(CudnnParamsFormatConverterTanh):
    rnn_mode = CUDNN_RNN_RELU


# -- checkpoints ------------------------------------------------------------------------------
class SaveSpec:
    """One tensor a saveable writes: `tensor` under checkpoint key `name`."""

    def __init__(self, tensor, slice_spec: str, name: str) -> None:
        self.tensor, self.slice_spec, self.name = tensor, slice_spec, name


class CudnnOpaqueParamsSaveable:
    """Saves an opaque params variable as TF canonical tensors named for the compatible
    cells (``<scope>/rnn/multi_rnn_cell/cell_<k>/<cell>/kernel`` ..., or
    ``<scope>/stack_bidirectional_rnn/cell_<k>/bidirectional_rnn/{fw,bw}/<cell>/...``);
    restoring packs them back. Add it to ``GraphKeys.SAVEABLE_OBJECTS`` (the cuDNN layers
    do) and a default `tf.train.Saver` saves and restores it.
    """

    _converter = CudnnParamsFormatConverterLSTM

    def __init__(self, opaque_params, num_layers, num_units, input_size,
                 input_mode=CUDNN_INPUT_LINEAR_MODE, direction=CUDNN_RNN_UNIDIRECTION,
                 scope=None, name="cudnn_rnn_saveable") -> None:
        self._variables = opaque_params
        self._conv = self._converter(num_layers, num_units, input_size,
                                     input_mode=input_mode, direction=direction)
        scope = getattr(scope, "name", scope)
        self._scope = scope or None
        self.name = name
        with name_scope(name.replace(":", "_") + "_canonical"):
            weights, biases = self._conv.opaque_to_tf_canonical(opaque_params)
        names = self._tf_names()
        self.op = opaque_params
        self.specs = [SaveSpec(t, "", n) for t, n in zip(weights + biases, names)]

    def _prefix(self, layer: int, fw: bool) -> str:
        cell = CELL_NAMES[self._conv.rnn_mode]
        if self._conv.direction == CUDNN_RNN_UNIDIRECTION:
            p = f"rnn/multi_rnn_cell/cell_{layer}/{cell}"
        else:
            p = (f"stack_bidirectional_rnn/cell_{layer}/bidirectional_rnn/"
                 f"{'fw' if fw else 'bw'}/{cell}")
        return f"{self._scope}/{p}" if self._scope else p

    def _tf_names(self) -> list[str]:
        if self._conv.rnn_mode == CUDNN_GRU:
            w = ["gates/kernel", "candidate/input_projection/kernel",
                 "candidate/hidden_projection/kernel"]
            b = ["gates/bias", "candidate/input_projection/bias",
                 "candidate/hidden_projection/bias"]
        else:
            w, b = ["kernel"], ["bias"]
        prefixes = [self._prefix(layer, d == 0) for layer in range(self._conv.num_layers)
                    for d in range(self._conv.num_dirs)]
        return ([f"{p}/{x}" for p in prefixes for x in w]
                + [f"{p}/{x}" for p in prefixes for x in b])

    def restore(self, restored_tensors, restored_shapes=None):
        """The op assigning the opaque vector packed from TF canonical tensors."""
        opaque = self._conv.tf_canonical_to_opaque(
            [convert_to_tensor(t) for t in restored_tensors])
        return assign(self._variables, opaque, validate_shape=False)


class CudnnLSTMSaveable(CudnnOpaqueParamsSaveable):
    _converter = CudnnParamsFormatConverterLSTM


class CudnnGRUSaveable(CudnnOpaqueParamsSaveable):
    _converter = CudnnParamsFormatConverterGRU


class CudnnRNNTanhSaveable(CudnnOpaqueParamsSaveable):
    _converter = CudnnParamsFormatConverterTanh


class CudnnRNNReluSaveable(CudnnOpaqueParamsSaveable):
    _converter = CudnnParamsFormatConverterRelu


"""Registry-wide cases for the fused recurrent op types of `flowgraph/ops/rnn_block_ops.py`
(``LSTMBlockCell``, ``BlockLSTM``, ``BlockLSTMV2``, ``GRUBlockCell`` and their gradient
ops): `GRADIENT_CASES` merge into `test_gradient_registry.CASES` (finite differences on
every input, peepholes on and off), `CONTRACT_CASES` are the contract-only cases of the
gradient ops, `NO_GRADIENT_LIKE_TENSORFLOW` the op types TensorFlow registers no gradient
for (tf.gradients raises LookupError)."""

from __future__ import annotations

import numpy as np

import flowgraph as tf
from flowgraph.ops.op_util import make_op

R = np.random.RandomState(2018)
VALUE_DEPENDENT: set[str] = set()

NO_GRADIENT_LIKE_TENSORFLOW = frozenset({
    "LSTMBlockCellGrad", "BlockLSTMGrad", "BlockLSTMGradV2", "GRUBlockCellGrad"})

T, B, D, N = 3, 2, 3, 2


def _x(*shape, scale=1.0):
    return R.standard_normal(shape) * scale


def _lstm_inputs(time_major: bool):
    x = _x(T, B, D) if time_major else _x(B, D)
    return [x, _x(B, N), _x(B, N), _x(D + N, 4 * N, scale=0.5), _x(N), _x(N), _x(N), _x(4 * N)]


def _cell(peephole: bool, clip: float = -1.0):
    def build(x, cs, h, w, wci, wcf, wco, b):
        out = make_op("LSTMBlockCell", [x, cs, h, w, wci, wcf, wco, b], {
            "forget_bias": 0.7, "cell_clip": clip, "use_peephole": peephole}).outputs
        return [out[1], out[6]]

    return build


def _block(op_type: str, peephole: bool, steps: int = T):
    attrs = {"cell_clip": 0.0, "use_peephole": peephole}
    if op_type == "BlockLSTM":
        attrs["forget_bias"] = 0.3

    def build(x, cs, h, w, wci, wcf, wco, b):
        seq = tf.constant(steps, tf.int64)
        out = make_op(op_type, [seq, x, cs, h, w, wci, wcf, wco, b], attrs).outputs
        return [out[1][:steps], out[6][:steps]]

    return build


def _gru(x, h, w_ru, w_c, b_ru, b_c):
    return make_op("GRUBlockCell", [x, h, w_ru, w_c, b_ru, b_c]).outputs[3]


def _gru_inputs():
    return [_x(B, D), _x(B, N), _x(D + N, 2 * N), _x(D + N, N), _x(2 * N), _x(N)]


GRADIENT_CASES = {
    "LSTMBlockCell": [(_lstm_inputs(False), _cell(False)), (_lstm_inputs(False), _cell(True)),
                      (_lstm_inputs(False), _cell(True, clip=50.0))],
    "BlockLSTM": [(_lstm_inputs(True), _block("BlockLSTM", False)),
                  (_lstm_inputs(True), _block("BlockLSTM", True, steps=2))],
    "BlockLSTMV2": [(_lstm_inputs(True), _block("BlockLSTMV2", True))],
    "GRUBlockCell": [(_gru_inputs(), _gru)],
}


def _cell_grad(x, cs, h, w, wci, wcf, wco, b):
    out = make_op("LSTMBlockCell", [x, cs, h, w, wci, wcf, wco, b],
                  {"use_peephole": True}).outputs
    return make_op("LSTMBlockCellGrad", [x, cs, h, w, wci, wcf, wco, b, *out[:6], cs * 0.5, h],
                   {"use_peephole": True}).outputs


def _block_grad(fwd: str, grad: str):
    def build(x, cs, h, w, wci, wcf, wco, b):
        seq = tf.constant(T, tf.int64)
        ins = [seq, x, cs, h, w, wci, wcf, wco, b]
        out = make_op(fwd, ins, {"use_peephole": True}).outputs
        return make_op(grad, [*ins, *out, tf.sin(x[:, :, :N]), tf.cos(x[:, :, :N])],
                       {"use_peephole": True}).outputs

    return build


def _gru_grad(x, h, w_ru, w_c, b_ru, b_c):
    r, u, c, new_h = make_op("GRUBlockCell", [x, h, w_ru, w_c, b_ru, b_c]).outputs
    return make_op("GRUBlockCellGrad", [x, h, w_ru, w_c, b_ru, b_c, r, u, c, new_h]).outputs


CONTRACT_CASES = {
    "LSTMBlockCellGrad": [(_lstm_inputs(False), _cell_grad, {})],
    "BlockLSTMGrad": [(_lstm_inputs(True), _block_grad("BlockLSTM", "BlockLSTMGrad"), {})],
    "BlockLSTMGradV2": [(_lstm_inputs(True), _block_grad("BlockLSTMV2", "BlockLSTMGradV2"),
                         {})],
    "GRUBlockCellGrad": [(_gru_inputs(), _gru_grad, {})],
}

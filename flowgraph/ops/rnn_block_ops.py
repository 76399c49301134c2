"""The fused recurrent op types of TF 1.x's ``tf.contrib.rnn``: ``LSTMBlockCell`` (one
LSTM step), ``BlockLSTM`` / ``BlockLSTMV2`` (a whole sequence), ``GRUBlockCell`` (one GRU
step), and the gradient ops TensorFlow runs for them (``LSTMBlockCellGrad``,
``BlockLSTMGrad``, ``BlockLSTMGradV2``, ``GRUBlockCellGrad``).

An LSTM step computes, from ``xh = [x, h_prev]`` and ``z = xh @ w + b`` split into four
``cell_size`` blocks (``i, ci, f, o`` in that order; ``i, f, ci, o`` for ``BlockLSTMV2``,
Keras's order)::

    i  = sigmoid(z_i + wci * cs_prev)          (peephole terms only with use_peephole)
    f  = sigmoid(z_f + forget_bias + wcf * cs_prev)
    ci = tanh(z_ci)
    cs = clip(i * ci + f * cs_prev, cell_clip) (no clipping when cell_clip <= 0)
    o  = sigmoid(z_o + wco * cs)
    co = tanh(cs);  h = o * co

and returns all seven of ``i, cs, f, o, ci, co, h``: the gradient ops read them back
instead of recomputing. ``BlockLSTM`` runs the step over ``x [time, batch, depth]`` for
the first ``seq_len_max`` steps and leaves zeros after them. ``BlockLSTMV2`` has no
forget bias and no clipping by default. A GRU step::

    r, u = split(sigmoid([x, h_prev] @ w_ru + b_ru))
    c    = tanh([x, r * h_prev] @ w_c + b_c);   h = u * h_prev + (1 - u) * c

The gradients of the fused ops follow TensorFlow: the cell ops' gradient ops give the
gradients of the gate pre-activations (``dicfo``, ``d_r_bar_u_bar``, ``d_c_bar``) and
the weight gradients are matrix products of those; the cell clip is not differentiated
(as in TensorFlow, the gradient is that of the unclipped cell).

Example
-------
>>> import numpy as np, flowgraph as tf
>>> x, c, h = tf.ones([1, 2]), tf.zeros([1, 3]), tf.zeros([1, 3])
>>> w, b, p = tf.zeros([5, 12]), tf.zeros([12]), tf.zeros([3])
>>> out = tf.raw_ops.LSTMBlockCell(x=x, cs_prev=c, h_prev=h, w=w, wci=p, wcf=p, wco=p, b=b)
>>> [t.shape.as_list() for t in out][:2]
[[1, 3], [1, 3]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape
from flowgraph.ops import array_ops, array_shape_ops, math_ops, math_reduce
from flowgraph.ops.op_util import make_op

__all__ = ["block_lstm", "gru_block_cell", "lstm_block_cell"]

_LSTM_ATTRS = {"forget_bias": 1.0, "cell_clip": 3.0, "use_peephole": False}


# -- shape helpers ----------------------------------------------------------------------
# As TensorFlow's, the shape functions check ranks and take the batch size from ``x`` and
# the cell size from the state; the kernels check that the other dimensions agree.
def _rank(op, shape: TensorShape, rank: int, name: str) -> TensorShape:
    if shape.ndims not in (None, rank):
        raise op.shape_error(f"{name} must be rank {rank}, got shape {shape}")
    return shape if shape.ndims is not None else TensorShape([None] * rank)


def _lstm_dims(op, x, cs_prev, h_prev, w, wci, wcf, wco, b, time_major: bool):
    """(time, batch, cell_size) of an LSTM op's inputs."""
    x = _rank(op, x, 3 if time_major else 2, "x")
    cs_prev = _rank(op, cs_prev, 2, "cs_prev")
    for s, n in ((h_prev, "h_prev"), (w, "w")):
        _rank(op, s, 2, n)
    for s, n in ((wci, "wci"), (wcf, "wcf"), (wco, "wco"), (b, "b")):
        _rank(op, s, 1, n)
    if time_major:  # BlockLSTM takes the cell size from b, which must divide by 4
        b = _rank(op, b, 1, "b")
        if b[0].value is not None and b[0].value % 4:
            raise op.shape_error(f"b must have a multiple of 4 elements, got shape {b}")
        return x[0], x[1], Dimension(None if b[0].value is None else b[0].value // 4)
    return None, x[0], cs_prev[1]


# -- LSTMBlockCell ----------------------------------------------------------------------
@register_op("LSTMBlockCell", attrs=dict(_LSTM_ATTRS), num_outputs=7, cost=OpCost.BLAS)
def _lstm_block_cell_shape(op, *shapes):
    _, batch, cell = _lstm_dims(op, *shapes, time_major=False)
    return [TensorShape([batch, cell])] * 7


@register_op("LSTMBlockCellGrad", attrs={"use_peephole": False}, num_outputs=5,
             cost=OpCost.BLAS)
def _lstm_block_cell_grad_shape(op, x, cs_prev, h_prev, w, wci, wcf, wco, b, *rest):
    _, batch, cell = _lstm_dims(op, x, cs_prev, h_prev, w, wci, wcf, wco, b, False)
    vec = TensorShape([cell])
    four = Dimension(None if cell.value is None else 4 * cell.value)
    return [TensorShape([batch, cell]), TensorShape([batch, four]), vec, vec, vec]


def _zeros_if_none(grad, like):
    return array_ops.zeros_like(like) if grad is None else grad


@register_gradient("LSTMBlockCell")
def _lstm_block_cell_grad(op, *grads):
    x, cs_prev, h_prev, w, wci, wcf, wco, b = op.inputs
    i, cs, f, o, ci, co, _ = op.outputs
    cs_grad = _zeros_if_none(grads[1], cs)
    h_grad = _zeros_if_none(grads[6], op.outputs[6])
    grad_op = make_op("LSTMBlockCellGrad",
                      [x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co,
                       cs_grad, h_grad], {"use_peephole": op.attrs["use_peephole"]})
    cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad = grad_op.outputs
    xh_grad = math_ops.matmul(dicfo, w, transpose_b=True)
    depth = array_shape_ops.shape(x)[1:2]
    x_grad, h_prev_grad = array_ops.split(
        xh_grad, array_ops.concat([depth, array_shape_ops.shape(h_prev)[1:2]], 0), axis=1,
        num=2)
    w_grad = math_ops.matmul(array_ops.concat([x, h_prev], 1), dicfo, transpose_a=True)
    b_grad = math_reduce.reduce_sum(dicfo, [0])
    return [x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad]


# -- BlockLSTM, BlockLSTMV2 -------------------------------------------------------------
def _block_lstm_shape(op, seq_len_max, *shapes):
    if seq_len_max.ndims not in (None, 0):
        raise op.shape_error(f"seq_len_max must be a scalar, got shape {seq_len_max}")
    time, batch, cell = _lstm_dims(op, *shapes, time_major=True)
    return [TensorShape([time, batch, cell])] * 7


def _block_lstm_grad_shape(op, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b, *rest):
    _block_lstm_shape(op, seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b)
    return [x, cs_prev, h_prev, w, wci, wcf, wco, b]


def _x_dtype(count: int):
    return lambda op: [op.inputs[1].dtype.base_dtype] * count


register_op("BlockLSTM", attrs=dict(_LSTM_ATTRS), num_outputs=7, dtype_fn=_x_dtype(7),
            cost=OpCost.BLAS)(_block_lstm_shape)
register_op("BlockLSTMV2", attrs={"cell_clip": 0.0, "use_peephole": False}, num_outputs=7,
            dtype_fn=_x_dtype(7), cost=OpCost.BLAS)(_block_lstm_shape)
register_op("BlockLSTMGrad", attrs={"use_peephole": False}, num_outputs=8,
            dtype_fn=_x_dtype(8), cost=OpCost.BLAS)(_block_lstm_grad_shape)
register_op("BlockLSTMGradV2", attrs={"use_peephole": False}, num_outputs=8,
            dtype_fn=_x_dtype(8), cost=OpCost.BLAS)(_block_lstm_grad_shape)


def _block_lstm_grad_fn(grad_type: str):
    def grad(op, *grads):
        outs = op.outputs
        cs_grad = _zeros_if_none(grads[1], outs[1])
        h_grad = _zeros_if_none(grads[6], outs[6])
        grad_op = make_op(grad_type, [*op.inputs, *outs, cs_grad, h_grad],
                          {"use_peephole": op.attrs["use_peephole"]})
        return [None, *grad_op.outputs]

    return grad


register_gradient("BlockLSTM")(_block_lstm_grad_fn("BlockLSTMGrad"))
register_gradient("BlockLSTMV2")(_block_lstm_grad_fn("BlockLSTMGradV2"))


# -- GRUBlockCell -----------------------------------------------------------------------
def _gru_dims(op, x, h_prev, w_ru, w_c, b_ru, b_c):
    x, h_prev = _rank(op, x, 2, "x"), _rank(op, h_prev, 2, "h_prev")
    for s, n in ((w_ru, "w_ru"), (w_c, "w_c")):
        _rank(op, s, 2, n)
    for s, n in ((b_ru, "b_ru"), (b_c, "b_c")):
        _rank(op, s, 1, n)
    return x, x[0], h_prev[1]


@register_op("GRUBlockCell", num_outputs=4, cost=OpCost.BLAS)
def _gru_block_cell_shape(op, *shapes):
    _, batch, cell = _gru_dims(op, *shapes)
    return [TensorShape([batch, cell])] * 4


@register_op("GRUBlockCellGrad", num_outputs=4, cost=OpCost.BLAS)
def _gru_block_cell_grad_shape(op, x, h_prev, w_ru, w_c, b_ru, b_c, *rest):
    x, batch, cell = _gru_dims(op, x, h_prev, w_ru, w_c, b_ru, b_c)
    two = Dimension(None if cell.value is None else 2 * cell.value)
    return [x, TensorShape([batch, cell]), TensorShape([batch, cell]),
            TensorShape([batch, two])]


@register_gradient("GRUBlockCell")
def _gru_block_cell_grad(op, *grads):
    x, h_prev, w_ru, w_c, b_ru, b_c = op.inputs
    r, u, c, h = op.outputs
    d_h = _zeros_if_none(grads[3], h)
    d_x, d_h_prev, d_c_bar, d_r_bar_u_bar = make_op(
        "GRUBlockCellGrad", [x, h_prev, w_ru, w_c, b_ru, b_c, r, u, c, d_h]).outputs
    d_w_ru = math_ops.matmul(array_ops.concat([x, h_prev], 1), d_r_bar_u_bar,
                             transpose_a=True)
    d_w_c = math_ops.matmul(array_ops.concat([x, h_prev * r], 1), d_c_bar, transpose_a=True)
    return [d_x, d_h_prev, d_w_ru, d_w_c, math_reduce.reduce_sum(d_r_bar_u_bar, [0]),
            math_reduce.reduce_sum(d_c_bar, [0])]


# -- wrappers ---------------------------------------------------------------------------
def _tensors(values, dtype):
    return [convert_to_tensor(v, dtype=dtype) for v in values]


def _zeros_vec(cell_size, dtype):
    return array_ops.zeros([cell_size], dtype=dtype)


def lstm_block_cell(x, cs_prev, h_prev, w, b, wci=None, wcf=None, wco=None,
                    forget_bias: float = 1.0, cell_clip=None, use_peephole: bool = False,
                    name=None):
    """One fused LSTM step (op ``LSTMBlockCell``): returns its seven outputs
    ``(i, cs, f, o, ci, co, h)``. Missing peephole weights are zeros; ``cell_clip`` of
    None disables clipping.

    Example
    -------
    >>> import flowgraph as tf
    >>> out = lstm_block_cell(tf.ones([2, 3]), tf.zeros([2, 4]), tf.zeros([2, 4]),
    ...                       tf.zeros([7, 16]), tf.zeros([16]))
    >>> len(out), out[6].shape.as_list()
    (7, [2, 4])
    """
    x = convert_to_tensor(x, name="x")
    cs_prev = convert_to_tensor(cs_prev, name="cs_prev")
    if wci is None:
        cell = cs_prev.shape[1].value if cs_prev.shape.ndims == 2 else None
        n = cell if cell is not None else array_shape_ops.shape(cs_prev)[1:2]
        wci = wcf = wco = _zeros_vec(n, x.dtype.base_dtype)
    ins = _tensors([x, cs_prev, h_prev, w, wci, wcf, wco, b], x.dtype.base_dtype)
    op = make_op("LSTMBlockCell", ins, {
        "forget_bias": float(forget_bias),
        "cell_clip": -1.0 if cell_clip is None else float(cell_clip),
        "use_peephole": bool(use_peephole)}, name=name or "LSTMBlockCell")
    return tuple(op.outputs)


def block_lstm(seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b,
               forget_bias: float = 1.0, cell_clip: float = 3.0, use_peephole: bool = False,
               name=None):
    """A fused LSTM over a whole time-major sequence (op ``BlockLSTM``): returns
    ``(i, cs, f, o, ci, co, h)``, each ``[time, batch, cell_size]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> z = tf.zeros([4])
    >>> out = block_lstm(tf.constant(3, tf.int64), tf.ones([3, 2, 1]), tf.zeros([2, 4]),
    ...                  tf.zeros([2, 4]), tf.zeros([5, 16]), z, z, z, tf.zeros([16]))
    >>> out[6].shape.as_list()
    [3, 2, 4]
    """
    seq = math_ops.cast(seq_len_max, _dtypes.int64)
    x = convert_to_tensor(x, name="x")
    ins = _tensors([x, cs_prev, h_prev, w, wci, wcf, wco, b], x.dtype.base_dtype)
    op = make_op("BlockLSTM", [seq, *ins], {
        "forget_bias": float(forget_bias), "cell_clip": float(cell_clip),
        "use_peephole": bool(use_peephole)}, name=name or "BlockLSTM")
    return tuple(op.outputs)


def gru_block_cell(x, h_prev, w_ru, w_c, b_ru, b_c, name=None):
    """One fused GRU step (op ``GRUBlockCell``): returns ``(r, u, c, h)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> r, u, c, h = gru_block_cell(tf.ones([2, 3]), tf.zeros([2, 4]), tf.zeros([7, 8]),
    ...                             tf.zeros([7, 4]), tf.zeros([8]), tf.zeros([4]))
    >>> h.shape.as_list()
    [2, 4]
    """
    x = convert_to_tensor(x, name="x")
    ins = _tensors([x, h_prev, w_ru, w_c, b_ru, b_c], x.dtype.base_dtype)
    op = make_op("GRUBlockCell", ins,
                 name=name or "GRUBlockCell")
    return tuple(op.outputs)

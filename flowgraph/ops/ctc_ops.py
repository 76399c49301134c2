"""Connectionist temporal classification: `tf.nn.ctc_loss` (op ``CTCLoss``).

For each sequence, the loss is ``-log p(labels | inputs)``, summing over every frame
alignment that collapses (merge repeats, drop blanks) to the labels. The last class is
the blank. The kernel runs the forward-backward recursions in log space over the labels
interleaved with blanks (``b l1 b l2 b ...``); its second output is the gradient of the
loss with respect to the (pre-softmax) inputs, which the registered gradient scales::

    inputs [max_time, batch, classes] (time-major logits), labels SparseTensor [batch, L]
      ──CTCLoss──> loss [batch], gradient [max_time, batch, classes]

Example
-------
>>> import numpy as np, flowgraph as tf
>>> labels = tf.SparseTensor([[0, 0]], tf.constant([0], tf.int32), [1, 1])
>>> logits = tf.zeros([2, 1, 2])        # two frames, classes {0, blank}
>>> round(float(tf.Session().run(tf.nn.ctc_loss(labels, logits, [2]))[0]), 4)  # -log(3/4)
0.2877
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import register_gradient, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_shape_ops, math_ops
from flowgraph.ops.op_util import make_op

__all__ = ["ctc_loss"]


@register_op("CTCLoss", attrs={"preprocess_collapse_repeated": False,
                               "ctc_merge_repeated": True,
                               "ignore_longer_outputs_than_inputs": False},
             num_outputs=2, dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype] * 2)
def _ctc_loss_shape(op, inputs, labels_indices, labels_values, sequence_length):
    if inputs.ndims not in (None, 3):
        raise op.shape_error(f"inputs must be 3-D [max_time, batch, classes], got {inputs}")
    batch = inputs.dims[1] if inputs.ndims == 3 else None
    return [TensorShape([batch]), inputs]


@register_gradient("CTCLoss")
def _ctc_loss_grad(op, grad_loss, _grad_gradient):
    scale = array_shape_ops.reshape(grad_loss, [1, -1, 1])
    return [math_ops.multiply(op.outputs[1], scale), None, None, None]


def ctc_loss(labels, inputs=None, sequence_length=None, preprocess_collapse_repeated=False,
             ctc_merge_repeated=True, ignore_longer_outputs_than_inputs=False,
             time_major=True, logits=None):
    """The CTC loss of each sequence: `labels` an int32 `SparseTensor` ``[batch, L]`` of
    class ids below ``classes - 1`` (the last class is the blank), `inputs` logits
    ``[max_time, batch, classes]`` (``[batch, max_time, classes]`` when not
    `time_major`), `sequence_length` int32 ``[batch]``. Returns ``[batch]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> labels = tf.SparseTensor([[0, 0], [0, 1]], tf.constant([1, 2], tf.int32), [1, 2])
    >>> tf.nn.ctc_loss(labels, tf.zeros([5, 1, 4]), [5]).shape.as_list()
    [1]
    """
    if inputs is None:
        inputs = logits
    if not isinstance(labels, SparseTensor):
        raise TypeError(f"tf.nn.ctc_loss: labels must be a SparseTensor, got "
                        f"{type(labels).__name__}")
    with name_scope(None, "CTCLoss", [inputs, labels.values]):
        x = convert_to_tensor(inputs, name="inputs")
        if not time_major:
            x = array_shape_ops.transpose(x, [1, 0, 2])
        values = labels.values
        if values.dtype.base_dtype != _dtypes.int32:
            values = math_ops.cast(values, _dtypes.int32)
        lengths = convert_to_tensor(sequence_length, dtype=_dtypes.int32,
                                    name="sequence_length")
        op = make_op("CTCLoss", [x, labels.indices, values, lengths],
                     {"preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
                      "ctc_merge_repeated": bool(ctc_merge_repeated),
                      "ignore_longer_outputs_than_inputs":
                          bool(ignore_longer_outputs_than_inputs)}, name="CTCLoss")
        return op.outputs[0]

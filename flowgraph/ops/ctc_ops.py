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
    if not time_major:  # TF transposes before the op's scope
        inputs = array_shape_ops.transpose(inputs, [1, 0, 2])
    # TF's raw op: named `CTCLoss` itself, its converted inputs inside that scope
    with name_scope(None, "CTCLoss", [inputs, labels.values]) as scope:
        x = convert_to_tensor(inputs, name="inputs")
        values = labels.values
        if values.dtype.base_dtype != _dtypes.int32:
            values = math_ops.cast(values, _dtypes.int32)
        lengths = convert_to_tensor(sequence_length, dtype=_dtypes.int32,
                                    name="sequence_length")
        op = make_op("CTCLoss", [x, labels.indices, values, lengths],
                     {"preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
                      "ctc_merge_repeated": bool(ctc_merge_repeated),
                      "ignore_longer_outputs_than_inputs":
                          bool(ignore_longer_outputs_than_inputs)}, name=scope)
        return op.outputs[0]


def _blank_last(logits, labels_values, blank_index: int, num_classes):
    """Move class `blank_index` of `logits` to the end (where `CTCLoss` expects the blank)
    and renumber the labels above it."""
    from flowgraph.ops.array_index_ops import where
    from flowgraph.ops.array_join_ops import concat

    if num_classes is not None and blank_index == num_classes - 1:
        return logits, labels_values
    logits = concat([logits[:, :, :blank_index], logits[:, :, blank_index + 1:],
                     logits[:, :, blank_index:blank_index + 1]], axis=2)
    shifted = math_ops.subtract(labels_values, 1)
    labels_values = where(math_ops.less(labels_values, blank_index), labels_values, shifted)
    return logits, labels_values


def ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                unique=None, blank_index=None, name=None):
    """The CTC loss of each sequence, with dense or sparse labels and any blank class.

    `labels` is an int ``[batch, max_label_length]`` tensor (the first `label_length`
    entries of each row count) or a `SparseTensor` (then `blank_index` must be given);
    `logits` are ``[frames, batch, classes]`` (``[batch, frames, classes]`` unless
    `logits_time_major`); `logit_length` is the number of frames of each sequence.
    `blank_index` defaults to 0 for dense labels; a negative one counts from the end.
    `unique` (an optimization hint in TensorFlow) does not change the result. Returns the
    ``[batch]`` negative log-likelihoods.

    Example
    -------
    >>> import flowgraph as tf
    >>> loss = tf.nn.ctc_loss_v2(tf.constant([[1, 2]]), tf.zeros([5, 1, 4]), [2], [5])
    >>> loss.shape.as_list()
    [1]
    """
    from flowgraph.ops.array_gen_ops import sequence_mask
    from flowgraph.ops.array_index_ops import gather_nd, where

    del unique
    with name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        logits = convert_to_tensor(logits, name="logits")
        if not logits_time_major:
            logits = array_shape_ops.transpose(logits, [1, 0, 2])
        num_classes = logits.shape[2].value if logits.shape.ndims == 3 else None
        if isinstance(labels, SparseTensor):
            if blank_index is None:
                raise ValueError("Argument `blank_index` must be provided when labels is a "
                                 "SparseTensor.")
            indices, values, dense_shape = labels.indices, labels.values, labels.dense_shape
        else:
            labels = convert_to_tensor(labels, name="labels")
            if blank_index is None:
                blank_index = 0
            label_length = convert_to_tensor(label_length, name="label_length")
            width = array_shape_ops.shape(labels, out_type=label_length.dtype)[1]
            indices = where(sequence_mask(label_length, width))
            values = gather_nd(labels, indices)
            dense_shape = array_shape_ops.shape(labels, out_type=_dtypes.int64)
        if values.dtype.base_dtype != _dtypes.int32:
            values = math_ops.cast(values, _dtypes.int32)
        if blank_index < 0:
            if num_classes is None:
                raise ValueError("ctc_loss_v2: a negative blank_index needs the number of "
                                 "classes (the last dimension of logits) known statically")
            blank_index += num_classes
        logits, values = _blank_last(logits, values, blank_index, num_classes)
        return ctc_loss(SparseTensor(indices, values, dense_shape), logits,
                        sequence_length=logit_length)

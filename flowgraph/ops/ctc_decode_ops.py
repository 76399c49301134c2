"""CTC beam-search decoding (TensorFlow's ``CTCBeamSearchDecoder`` op) and
`ctc_unique_labels`.

The decoder runs prefix beam search on time-major logits ``[max_time, batch,
num_classes]`` (the last class is the blank), turning each step's logits into
log-probabilities first, and keeps `beam_width` prefixes; it returns the `top_paths` best
label sequences as SparseTensors and their log-probabilities ``[batch, top_paths]``.
With `merge_repeated` repeated labels in a decoded path are merged as well (TensorFlow
1.x's default for `ctc_beam_search_decoder`; `ctc_beam_search_decoder_v2` does not).

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> probs = np.array([[0.6, 0.1, 0.3], [0.1, 0.1, 0.8], [0.2, 0.7, 0.1]], np.float32)
>>> logits = np.log(probs)[:, None, :]          # 3 steps, batch 1, blank = class 2
>>> (path,), log_p = tf.nn.ctc_beam_search_decoder(logits, [3], beam_width=4, top_paths=1)
>>> tf.Session().run(path.values).tolist()
[0, 1]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.math_ops import cast
from flowgraph.ops.op_util import make_op

__all__ = ["ctc_beam_search_decoder", "ctc_beam_search_decoder_v2", "ctc_unique_labels"]


def _decoder_dtypes(op):
    k = op.attrs["top_paths"]
    return [_dtypes.int64] * k + [_dtypes.int64] * k + [_dtypes.int64] * k + \
        [op.inputs[0].dtype.base_dtype]


@register_op("CTCBeamSearchDecoder",
             attrs={"beam_width": 100, "top_paths": 1, "merge_repeated": True},
             num_outputs=lambda op: 3 * op.attrs["top_paths"] + 1, dtype_fn=_decoder_dtypes)
def _decoder_shape(op, inputs, sequence_length):
    k = op.attrs["top_paths"]
    if inputs.ndims not in (None, 3):
        raise op.shape_error(f"inputs must be [max_time, batch, num_classes], got {inputs}")
    batch = inputs.dims[1] if inputs.ndims == 3 else None
    return ([TensorShape([None, 2])] * k + [TensorShape([None])] * k
            + [TensorShape([2])] * k + [TensorShape([batch, k])])


not_differentiable("CTCBeamSearchDecoder")


def ctc_beam_search_decoder(inputs, sequence_length, beam_width=100, top_paths=1,
                            merge_repeated=True):
    """``(decoded, log_probabilities)``: `top_paths` SparseTensors ``[batch, max_len]``
    of label ids, best first, and their log-probabilities ``[batch, top_paths]``."""
    if top_paths < 1 or beam_width < top_paths:
        raise ValueError(f"tf.nn.ctc_beam_search_decoder: need 1 <= top_paths <= "
                         f"beam_width, got top_paths={top_paths}, beam_width={beam_width}")
    with name_scope(None, "CTCBeamSearchDecoder", [inputs, sequence_length]) as scope:
        x = convert_to_tensor(inputs, name="inputs")
        lengths = cast(convert_to_tensor(sequence_length, name="sequence_length"),
                       _dtypes.int32)
        op = make_op("CTCBeamSearchDecoder", [x, lengths],
                     {"beam_width": int(beam_width), "top_paths": int(top_paths),
                      "merge_repeated": bool(merge_repeated)}, name=scope)
        k = int(top_paths)
        out = op.outputs
        decoded = [SparseTensor(out[i], out[k + i], out[2 * k + i]) for i in range(k)]
        return decoded, out[3 * k]


def ctc_beam_search_decoder_v2(inputs, sequence_length, beam_width=100, top_paths=1):
    """`ctc_beam_search_decoder` without merging repeated labels (TensorFlow 2's form).

    Example
    -------
    >>> import numpy as np
    >>> import flowgraph as tf
    >>> logits = np.log(np.eye(3, dtype=np.float32)[[0, 2, 0]] + 1e-3)[:, None, :]
    >>> (path,), _ = tf.nn.ctc_beam_search_decoder_v2(logits, [3])
    >>> tf.Session().run(path.values).tolist()
    [0, 0]
    """
    return ctc_beam_search_decoder(inputs, sequence_length, beam_width, top_paths,
                                   merge_repeated=False)


def ctc_unique_labels(labels, name=None):
    """For each row of `labels` ``[batch, max_len]``: its distinct labels in order of
    first appearance (zero padded) and, for every label, the index of its value among
    them. Returns ``(unique, idx)``, both ``[batch, max_len]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> u, idx = tf.nn.ctc_unique_labels([[3, 4, 4, 3]])
    >>> tf.Session().run([u, idx])
    [array([[3, 4, 0, 0]], dtype=int32), array([[0, 1, 1, 0]], dtype=int32)]
    """
    from flowgraph.ops.array_join_ops import pad
    from flowgraph.ops.array_shape_ops import shape
    from flowgraph.ops.functional_ops import map_fn

    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")
        width = shape(labels)[1]

        def row(x):
            from flowgraph.ops.array_gen_ops import unique

            values, idx = unique(x)
            padded = pad(values, [[0, width - shape(values)[0]]])
            return padded, cast(idx, labels.dtype.base_dtype)

        u, idx = map_fn(row, labels, dtype=(labels.dtype.base_dtype,
                                             labels.dtype.base_dtype))
        u.set_shape(labels.shape)
        idx.set_shape(labels.shape)
        return u, idx


@register_op("CTCGreedyDecoder", attrs={"merge_repeated": False, "blank_index": -1},
             num_outputs=4, dtype_fn=lambda op: [_dtypes.int64] * 3 + [
                 op.inputs[0].dtype.base_dtype])
def _greedy_decoder_shape(op, inputs, sequence_length):
    if inputs.ndims not in (None, 3):
        raise op.shape_error(f"inputs must be [max_time, batch, num_classes], got {inputs}")
    batch = inputs.dims[1] if inputs.ndims == 3 else None
    return [TensorShape([None, 2]), TensorShape([None]), TensorShape([2]),
            TensorShape([batch, 1])]


not_differentiable("CTCGreedyDecoder")

"""``CudnnRNNV2`` and ``CudnnRNNBackpropV2``: the cuDNN recurrent ops behind Keras's
`CuDNNLSTM` / `CuDNNGRU`. As in TensorFlow, they have GPU kernels only: flowgraph has
none, so a graph holding them builds (shapes, gradients) and running them fails with
TensorFlow's "no kernel" error, as TF 2.15 on a CPU-only machine does.

Inputs of ``CudnnRNNV2``: ``input`` (time, batch, features), ``input_h`` and
``input_c`` (layers * directions, batch, units), ``params`` (the weights and biases
flattened in cuDNN's canonical order). Outputs: ``output`` (time, batch, units),
``output_h``, ``output_c``, ``reserve_space``, ``host_reserved``.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.cudnn_rnn_ops import cudnn_rnn
>>> out, h, c, _, _ = cudnn_rnn(tf.zeros([7, 2, 3]), tf.zeros([1, 2, 4]),
...                             tf.zeros([1, 2, 4]), tf.zeros([144]))
>>> out.shape.as_list(), h.shape.as_list()
([7, 2, 4], [1, 2, 4])
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.registry import (
    OpCost,
    register_gradient,
    register_op,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_op

__all__ = ["cudnn_rnn"]

_ATTRS = {"rnn_mode": "lstm", "input_mode": "linear_input", "direction": "unidirectional",
          "dropout": 0.0, "seed": 0, "seed2": 0}


def _cudnn_dtypes(op):
    t = op.inputs[0].dtype.base_dtype
    return [t, t, t, t, _dtypes.int8]


@register_op("CudnnRNNV2", attrs={**_ATTRS, "is_training": True}, num_outputs=5,
             dtype_fn=_cudnn_dtypes, stateful=True, cost=OpCost.BLAS)
def _cudnn_rnn_shape(op, x, h, c, params):
    units = h[2].value if h.ndims == 3 else None
    seq = TensorShape([x[0].value, x[1].value, units]) if x.ndims == 3 else TensorShape(None)
    return [seq, h, c, TensorShape([None]), TensorShape([None])]


@register_op("CudnnRNNBackpropV2", attrs=dict(_ATTRS), num_outputs=4, stateful=True,
             cost=OpCost.BLAS)
def _cudnn_rnn_backprop_shape(op, x, h, c, params, *rest):
    return [x, h, c, params]


# Left without a gradient, as TensorFlow leaves CudnnRNNBackpropV2 (no second derivative):
# tf.gradients raises LookupError when a gradient reaches one.


@register_gradient("CudnnRNNV2")
def _cudnn_rnn_grad(op, d_out, d_h, d_c, d_reserve, d_host):
    x, h, c, params = op.inputs
    out, out_h, out_c, reserve, host = op.outputs
    grads = make_op("CudnnRNNBackpropV2",
                    [x, h, c, params, out, out_h, out_c, d_out, d_h, d_c, reserve, host],
                    {k: op.attrs[k] for k in _ATTRS})
    return list(grads.outputs)


def cudnn_rnn(input, input_h, input_c, params, rnn_mode: str = "lstm",
              is_training: bool = True, name=None):
    """The ``CudnnRNNV2`` op (a GPU-only kernel in TensorFlow; none in flowgraph)."""
    op = make_op("CudnnRNNV2", [input, input_h, input_c, params],
                 {**_ATTRS, "rnn_mode": rnn_mode, "is_training": is_training},
                 name=name or "CudnnRNNV2")
    return op.outputs

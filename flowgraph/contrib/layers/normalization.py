"""TF1's ``tf.contrib.layers.instance_norm``: normalization of each example's channels
over their spatial positions (CycleGAN, fast style transfer), with learned ``beta`` and
``gamma`` per channel.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     y = tf.contrib.layers.instance_norm(tf.reshape(tf.range(8.0), [1, 2, 2, 2]))
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         print(y.op.name, sess.run(y)[0, :, :, 0].astype(float).round(3).tolist())
InstanceNorm/instancenorm/add_1 [[-1.342, -0.447], [0.447, 1.342]]
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import add_arg_scope
from flowgraph.contrib.framework.variables import model_variable
from flowgraph.contrib.layers.utils import collect_named_outputs, get_variable_collections
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.ops import array_shape_ops, init_ops, nn_impl, nn_ops
from flowgraph.ops import variable_scope as vs

__all__ = ["instance_norm"]

_FORMATS = ("NHWC", "NCHW")


def _param(name, shape, dtype, initializers, default, variables_collections, trainable,
           broadcast):
    var = model_variable(name, shape=shape, dtype=dtype,
                         initializer=initializers.get(name, default),
                         collections=get_variable_collections(variables_collections, name),
                         trainable=trainable)
    return array_shape_ops.reshape(var, broadcast) if broadcast else var


@add_arg_scope
def instance_norm(inputs, center: bool = True, scale: bool = True, epsilon=1e-6,
                  activation_fn=None, param_initializers=None, reuse=None,
                  variables_collections=None, outputs_collections=None,
                  trainable: bool = True, data_format="NHWC", scope=None):
    """Instance normalization (scope ``InstanceNorm``): the moments of each example and
    channel over every other axis but the batch, ``beta``/``gamma`` of shape ``[C]``
    (reshaped to ``[1, C, 1, ...]`` for ``NCHW``), epsilon 1e-6; the result is
    ``InstanceNorm/instancenorm/add_1`` (``tf.nn.batch_normalization``).

    >>> import flowgraph as tf
    >>> y = tf.contrib.layers.instance_norm(tf.zeros([2, 4, 4, 3]), scope="in")
    >>> [v.op.name for v in tf.global_variables()][-2:], y.shape
    (['in/beta', 'in/gamma'], TensorShape([Dimension(2), Dimension(4), Dimension(4), Dimension(3)]))
    """
    inputs = convert_to_tensor(inputs)
    shape = inputs.shape
    rank = shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {inputs.name} has undefined rank.")
    if data_format not in _FORMATS:
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with vs.variable_scope(scope, "InstanceNorm", [inputs], reuse=reuse) as sc:
        channel_axis = 1 if data_format == "NCHW" else rank - 1
        broadcast = None
        if data_format == "NCHW":
            broadcast = [1, shape[1].value] + [1] * (rank - 2)
        axes = [a for a in range(1, rank) if a != channel_axis]
        params_shape = shape[channel_axis:channel_axis + 1]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name} has undefined channels dimension "
                             f"{params_shape}.")
        dtype = inputs.dtype.base_dtype
        inits = param_initializers or {}
        beta = gamma = None
        if center:
            beta = _param("beta", params_shape, dtype, inits, init_ops.zeros_initializer(),
                          variables_collections, trainable, broadcast)
        if scale:
            gamma = _param("gamma", params_shape, dtype, inits, init_ops.ones_initializer(),
                           variables_collections, trainable, broadcast)
        mean, variance = nn_ops.moments(inputs, axes, keep_dims=True)
        outputs = nn_impl.batch_normalization(inputs, mean, variance, beta, gamma, epsilon,
                                              name="instancenorm")
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, sc.name, outputs)

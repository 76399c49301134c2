"""Gradients of the neural-network ops, and the backward ops they are built from.

Activations use fused backward ops (``ReluGrad(gradients, features)`` and friends: one
kernel instead of a compare, a select and a zeros), convolutions and pooling use the
``*Backprop*`` / ``*PoolGrad`` ops of TensorFlow, with the same inputs and attributes.
Every backward op has a gradient itself (or is linear in its gradient input), so second
derivatives work; softmax, log-softmax and l2_normalize are differentiated with plain ops.

    op                       backward op(s)                       inputs
    Relu, Relu6, LeakyRelu   ReluGrad, Relu6Grad, LeakyReluGrad   (gradients, features)
    Softsign                 SoftsignGrad                         (gradients, features)
    Softplus                 grad * Sigmoid(features), as TF 2.x builds it
    Elu, Selu                EluGrad, SeluGrad                    (gradients, outputs)
    BiasAdd                  BiasAddGrad                          (out_backprop)
    Conv2D                   Conv2DBackpropInput                  (input_sizes, filter, dy)
                             Conv2DBackpropFilter                 (input, filter_sizes, dy)
    DepthwiseConv2dNative    DepthwiseConv2dNativeBackpropInput / ...BackpropFilter (same)
    MaxPool                  MaxPoolGrad (→ MaxPoolGradGrad)      (input, output, dy)
    AvgPool                  AvgPoolGrad                          (input_shape, dy)

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([-1.0, 2.0])
>>> with tf.Session() as sess:
...     print(sess.run(tf.gradients(tf.nn.relu(x), x)[0]))
[0. 1.]
"""

from __future__ import annotations

from flowgraph.framework.constant_op import constant_value_as_shape
from flowgraph.framework.registry import OpCost, register_gradient, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops as _a
from flowgraph.ops import math_ops as _m
from flowgraph.ops import math_reduce as _r
from flowgraph.ops import nn_impl, nn_loss_ops  # noqa: F401  (register FusedBatchNorm*, losses)
from flowgraph.ops import nn_ops as _nn
from flowgraph.ops.array_grad import shape_of
from flowgraph.ops.op_util import make_op, make_tensor

__all__: list[str] = []

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _first_shape(op, *shapes):
    return [shapes[0]]


# -- activations ----------------------------------------------------------------------
_ACTIVATION_GRADS = ("ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "SoftplusGrad",
                     "SoftsignGrad")
for _name in _ACTIVATION_GRADS:
    register_op(_name)(_first_shape)
register_op("LeakyReluGrad", attrs={"alpha": 0.2})(_first_shape)


def _act_grad(op_type, grad, t, **attrs):
    return make_tensor(op_type, [grad, t], attrs or None, name=op_type)


@register_gradient("Relu")
def _relu_grad(op, grad):
    # From Relu's output, as TensorFlow does (same mask: y > 0 exactly where x > 0), so
    # that Relu's input is free once Relu ran and Relu may overwrite it.
    return [_act_grad("ReluGrad", grad, op.outputs[0])]


@register_gradient("Relu6")
def _relu6_grad(op, grad):
    return [_act_grad("Relu6Grad", grad, op.inputs[0])]


@register_gradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    return [_act_grad("LeakyReluGrad", grad, op.inputs[0], alpha=op.attrs["alpha"])]


@register_gradient("Elu")
def _elu_grad(op, grad):
    return [_act_grad("EluGrad", grad, op.outputs[0])]


@register_gradient("Selu")
def _selu_grad(op, grad):
    return [_act_grad("SeluGrad", grad, op.outputs[0])]


@register_gradient("Softplus")
def _softplus_grad(op, grad):
    # TF 2.x builds `grad * sigmoid(x)` here (not the SoftplusGrad kernel)
    return [grad * _m.sigmoid(op.inputs[0])]


@register_gradient("Softsign")
def _softsign_grad(op, grad):
    return [_act_grad("SoftsignGrad", grad, op.inputs[0])]


# Second derivatives. The backward ops are linear in `gradients`; the derivative with
# respect to piecewise-constant features (Relu, Relu6, LeakyRelu) is zero.
@register_gradient("ReluGrad")
@register_gradient("Relu6Grad")
def _relu_grad_grad(op, grad):
    return [_act_grad(op.type, grad, op.inputs[1]), _a.zeros_like(op.inputs[1])]


@register_gradient("LeakyReluGrad")
def _leaky_relu_grad_grad(op, grad):
    return [_act_grad("LeakyReluGrad", grad, op.inputs[1], alpha=op.attrs["alpha"]),
            _a.zeros_like(op.inputs[1])]


@register_gradient("EluGrad")
@register_gradient("SeluGrad")
def _elu_grad_grad(op, grad):
    g, y = op.inputs
    zeros = _a.zeros_like(y)
    return [_act_grad(op.type, grad, y), _a.where_v2(_m.less(y, zeros), grad * g, zeros)]


@register_gradient("SoftplusGrad")
def _softplus_grad_grad(op, grad):
    g, x = op.inputs
    s = _m.sigmoid(x)
    return [_act_grad("SoftplusGrad", grad, x), grad * g * s * (1 - s)]


@register_gradient("SoftsignGrad")
def _softsign_grad_grad(op, grad):
    g, x = op.inputs
    d = 1 + _m.abs(x)
    return [_act_grad("SoftsignGrad", grad, x), grad * g * (-2 * _m.sign(x)) / (d * d * d)]


# -- softmax, l2_normalize --------------------------------------------------------------
@register_gradient("Softmax")
def _softmax_grad(op, grad):
    y = op.outputs[0]
    axis = op.attrs["axis"]
    return [(grad - _r.reduce_sum(grad * y, axis, keepdims=True)) * y]


@register_gradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    axis = op.attrs["axis"]
    return [grad - _r.reduce_sum(grad, axis, keepdims=True) * _m.exp(op.outputs[0])]


@register_gradient("L2Normalize")
def _l2_normalize_grad(op, grad):
    x, y = op.inputs[0], op.outputs[0]
    axis = op.attrs["axis"]
    eps = _m.cast(op.attrs["epsilon"], x.dtype.base_dtype)
    sq = _r.reduce_sum(x * x, axis, keepdims=True)
    norm = _m.sqrt(_m.maximum(sq, eps))
    dot = _r.reduce_sum(grad * y, axis, keepdims=True)
    # Below epsilon the norm is the constant sqrt(eps): only the first term remains.
    proj = _a.where_v2(_m.greater(sq, eps), y * dot, _a.zeros_like(y))
    return [(grad - proj) / norm]


# -- bias_add ---------------------------------------------------------------------------
@register_op("BiasAddGrad", attrs={"data_format": "NHWC"})
def _bias_add_grad_shape(op, dy):
    if dy.ndims is None:
        return [TensorShape([None])]
    return [TensorShape([dy[1] if op.attrs["data_format"] == "NCHW" else dy[-1]])]


@register_gradient("BiasAdd")
def _bias_add_grad(op, grad):
    fmt = op.attrs["data_format"]
    return [grad, make_tensor("BiasAddGrad", [grad], {"data_format": fmt},
                              name="BiasAddGrad")]


@register_gradient("BiasAddGrad")
def _bias_add_grad_grad(op, grad):
    # BiasAddGrad sums over all but the channel axis; its adjoint broadcasts back.
    dy = op.inputs[0]
    fmt = op.attrs["data_format"]
    return [_nn.bias_add(_a.zeros_like(dy), grad, data_format=fmt)]


# -- convolutions -----------------------------------------------------------------------
def _conv_attrs(op):
    keys = ("strides", "padding", "explicit_paddings", "dilations", "data_format")
    return {k: op.attrs[k] for k in keys}


_CONV_ATTRS = {"strides": None, "padding": "VALID", "explicit_paddings": [],
               "dilations": [1, 1, 1, 1], "data_format": "NHWC"}


def _backprop_input_shape(op, sizes, f, dy):
    return [constant_value_as_shape(op.inputs[0]).merge_with(TensorShape([None] * 4))]


def _conv2d_backprop_input_shape(op, sizes, f, dy):
    # TF 2.15 takes Conv2DBackpropInput's batch from the gradient (`dy`), not `sizes`.
    shape = _backprop_input_shape(op, sizes, f, dy)[0]
    batch = dy.dims[0].value if dy.ndims == 4 else None
    given = shape.dims[0].value
    if batch is not None and given is not None and batch != given:
        raise op.shape_error(f"Dimensions must be equal, but are {given} and {batch}: the "
                             f"output shape's batch and the gradient's")
    return [TensorShape([batch, *shape.dims[1:]])]


def _backprop_filter_shape(op, x, sizes, dy):
    return [constant_value_as_shape(op.inputs[1]).merge_with(TensorShape([None] * 4))]


for _kind, _cost in (("Conv2D", OpCost.BLAS), ("DepthwiseConv2dNative", OpCost.EXPENSIVE)):
    register_op(f"{_kind}BackpropInput", attrs=dict(_CONV_ATTRS), cost=_cost,
                dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])(
        _conv2d_backprop_input_shape if _kind == "Conv2D" else _backprop_input_shape)
    register_op(f"{_kind}BackpropFilter", attrs=dict(_CONV_ATTRS), cost=_cost)(
        _backprop_filter_shape)


def _conv(kind, x, f, attrs):
    return make_tensor(kind, [x, f], attrs, name=kind)


def _backprop_input(kind, sizes, f, dy, attrs):
    return make_tensor(f"{kind}BackpropInput", [sizes, f, dy], attrs,
                       name=f"{kind}BackpropInput")


def _backprop_filter(kind, x, sizes, dy, attrs):
    return make_tensor(f"{kind}BackpropFilter", [x, sizes, dy], attrs,
                       name=f"{kind}BackpropFilter")


def _register_conv_grads(kind: str) -> None:
    @register_gradient(kind)
    def _conv_grad(op, grad):
        x, f = op.inputs
        attrs = _conv_attrs(op)
        # One ShapeN of both inputs, as TensorFlow (folded to constants at plan time
        # whenever the shapes are known).
        sx, sf = _a.shape_n([x, f])
        return [_backprop_input(kind, sx, f, grad, attrs),
                _backprop_filter(kind, x, sf, grad, attrs)]

    @register_gradient(f"{kind}BackpropInput")
    def _backprop_input_grad(op, grad):
        _, f, dy = op.inputs
        attrs = _conv_attrs(op)
        return [None, _backprop_filter(kind, grad, shape_of(f), dy, attrs),
                _conv(kind, grad, f, attrs)]

    @register_gradient(f"{kind}BackpropFilter")
    def _backprop_filter_grad(op, grad):
        x, _, dy = op.inputs
        attrs = _conv_attrs(op)
        return [_backprop_input(kind, shape_of(x), grad, dy, attrs), None,
                _conv(kind, x, grad, attrs)]


_register_conv_grads("Conv2D")
_register_conv_grads("DepthwiseConv2dNative")


# -- pooling ----------------------------------------------------------------------------
_POOL_ATTRS = {"ksize": None, "strides": None, "padding": "VALID", "data_format": "NHWC"}


@register_op("MaxPoolGrad", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE)
def _max_pool_grad_shape(op, x, y, dy):
    return [x]


@register_op("MaxPoolGradGrad", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE)
def _max_pool_grad_grad_shape(op, x, y, ddx):
    return [y]


@register_op("AvgPoolGrad", attrs=dict(_POOL_ATTRS), cost=OpCost.EXPENSIVE,
             dtype_fn=lambda op: [op.inputs[1].dtype.base_dtype])
def _avg_pool_grad_shape(op, sizes, dy):
    return [constant_value_as_shape(op.inputs[0]).merge_with(TensorShape([None] * 4))]


def _pool_attrs(op):
    return {k: op.attrs[k] for k in _POOL_ATTRS}


@register_gradient("MaxPool")
def _max_pool_grad(op, grad):
    return [make_tensor("MaxPoolGrad", [op.inputs[0], op.outputs[0], grad], _pool_attrs(op),
                        name="MaxPoolGrad")]


@register_gradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [None, None, make_tensor("MaxPoolGradGrad", [x, y, grad], _pool_attrs(op),
                                    name="MaxPoolGradGrad")]


@register_gradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return [None, None, make_tensor("MaxPoolGrad", [x, y, grad], _pool_attrs(op),
                                    name="MaxPoolGrad")]


@register_gradient("AvgPool")
def _avg_pool_grad(op, grad):
    return [make_tensor("AvgPoolGrad", [shape_of(op.inputs[0]), grad], _pool_attrs(op),
                        name="AvgPoolGrad")]


@register_gradient("AvgPoolGrad")
def _avg_pool_grad_grad(op, grad):
    return [None, make_tensor("AvgPool", [grad], _pool_attrs(op), name="AvgPool")]


# -- fused losses (flowgraph/ops/nn_loss_ops.py) ------------------------------------------
def _broadcast_mul(vec, mat):
    """``vec[..., None] * mat``: a per-example loss gradient times a per-class matrix."""
    return _a.expand_dims(vec, -1) * mat


@register_gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_grad(op, grad_loss, grad_backprop):
    # d loss / d logits = backprop (softmax - labels); d loss / d labels = -log_softmax.
    # The second-order term runs only when something differentiates the backprop output
    # (not for the zeros `tf.gradients` passes for an unused output).
    backprop = op.outputs[1]
    logits = op.inputs[0]
    grad_logits = _broadcast_mul(grad_loss, backprop)
    second = grad_backprop is not None and not getattr(grad_backprop, "_is_zeros_tensor",
                                                       False)
    if second:  # backprop = softmax(logits) - labels
        sm = _a.stop_gradient(backprop) + op.inputs[1]
        grad_logits += (grad_backprop - _r.reduce_sum(grad_backprop * sm, -1,
                                                      keepdims=True)) * sm
    grad_labels = _broadcast_mul(grad_loss, _m.negative(_nn.log_softmax(logits)))
    if second:
        grad_labels -= grad_backprop
    return [grad_logits, grad_labels]


@register_gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_grad(op, grad_loss, grad_backprop):
    grad_logits = _broadcast_mul(grad_loss, op.outputs[1])
    if grad_backprop is not None and not getattr(grad_backprop, "_is_zeros_tensor", False):
        # second order: backprop = softmax(logits) - onehot(labels), whose Jacobian
        # w.r.t. the logits is diag(sm) - sm sm^T (a differentiable softmax, as TF's)
        sm = _nn.softmax(op.inputs[0])
        grad_logits += (grad_backprop - _r.reduce_sum(grad_backprop * sm, -1,
                                                      keepdims=True)) * sm
    return [grad_logits, None]


@register_gradient("L2Loss")
def _l2_loss_grad(op, grad):
    return [op.inputs[0] * grad]


@register_gradient("TopKV2")
def _top_k_grad(op, grad_values, grad_indices):
    x = op.inputs[0]
    indices = op.outputs[1]
    n = _a.shape(x)[-1]
    onehot = _a.one_hot(indices, n, dtype=grad_values.dtype.base_dtype)  # [..., k, n]
    return [_r.reduce_sum(_a.expand_dims(grad_values, -1) * onehot, -2), None]


def _fused_batch_norm_grad(op, grad_y, *unused):
    # The statistics outputs are treated as constants (TensorFlow does the same): only y
    # carries a gradient, to x, scale and offset.
    if grad_y is None:
        return [None] * 5
    v = op.type[len("FusedBatchNorm"):]
    reserve = [op.outputs[3], op.outputs[4]] if op.attrs["is_training"] else \
        [op.inputs[3], op.inputs[4]]
    if v == "V3":
        reserve.append(op.outputs[5])
    attrs = {k: op.attrs[k] for k in ("T", "epsilon", "data_format", "is_training")}
    if v:
        attrs["U"] = op.attrs["U"]
    grads = make_op(f"FusedBatchNormGrad{v}", [grad_y, op.inputs[0], op.inputs[1], *reserve],
                    attrs).outputs
    return [grads[0], grads[1], grads[2], None, None]


for _bn in ("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"):
    register_gradient(_bn)(_fused_batch_norm_grad)


def _fused_batch_norm_grad_grad(op, *grads):
    # As TensorFlow: rebuild the first-order gradient from primitive ops (training mode
    # recomputes the statistics from x) and differentiate it; reserve spaces get None.
    from flowgraph.ops.gradients import gradients

    dy, x, scale, mean, var = op.inputs[:5]
    # Fresh leaves, as the tensors TensorFlow's GradientTape watches here: dy usually
    # depends on x through the forward graph, and the inner tf.gradients must not walk
    # back into it (the outer pass already carries g_dy there).
    dy, x, scale = (_a.identity(t) for t in (dy, x, scale))
    nchw = op.attrs["data_format"] in ("NCHW", b"NCHW")
    work = _m.cast(x, "float32") if x.dtype.base_dtype.name in ("float16", "bfloat16") else x
    dyw = _m.cast(dy, work.dtype) if dy.dtype != work.dtype else dy
    if nchw:
        work, dyw = _a.transpose(work, [0, 2, 3, 1]), _a.transpose(dyw, [0, 2, 3, 1])
    axes = [0, 1, 2]
    if op.attrs["is_training"]:
        mean, var = _nn.moments(work, axes)
    rstd = _m.rsqrt(var + op.attrs["epsilon"])
    xhat = (work - mean) * rstd
    d_offset = _r.reduce_sum(dyw, axes)
    d_scale = _r.reduce_sum(dyw * xhat, axes)
    if op.attrs["is_training"]:
        n = _m.cast(_a.size(work), work.dtype) / _m.cast(_a.size(d_offset), work.dtype)
        dx = (dyw - d_offset / n - xhat * (d_scale / n)) * (scale * rstd)
    else:
        dx = dyw * (scale * rstd)
    if nchw:
        dx = _a.transpose(dx, [0, 3, 1, 2])
    dx = _m.cast(dx, x.dtype.base_dtype) if dx.dtype != x.dtype.base_dtype else dx
    outs, weights = [], []
    for out, g in zip((dx, d_scale, d_offset), grads[:3]):
        if g is not None:
            outs.append(out)
            weights.append(g)
    if not outs:
        return [None] * len(op.inputs)
    g_dy, g_x, g_scale = gradients(outs, [dy, x, scale], grad_ys=weights)
    return [g_dy, g_x, g_scale] + [None] * (len(op.inputs) - 3)


for _bn in ("FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"):
    register_gradient(_bn)(_fused_batch_norm_grad_grad)

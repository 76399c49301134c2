"""More of TF1's ``tf.contrib.layers`` (``slim``) layers: pooling, dropout, transposed
and separable convolutions, layer normalization, bias, one-hot, softmax, unit norm,
embeddings, and the `repeat` / `stack` combinators slim networks are written with.

Every layer takes part in `arg_scope` and files its output in `outputs_collections`
under its scope's name (see `utils.collect_named_outputs`). Variables are made with
contrib's names (``weights``, ``biases``, ``beta``, ``gamma``, ...) in
``GraphKeys.MODEL_VARIABLES`` as well as the global variables.

Example
-------
>>> import flowgraph as tf
>>> slim = tf.contrib.slim
>>> with tf.Graph().as_default():
...     net = tf.zeros([2, 8, 8, 3])
...     net = slim.repeat(net, 2, slim.conv2d, 4, [3, 3], scope="conv1")
...     net = slim.max_pool2d(net, [2, 2], scope="pool1")
...     print(net.shape, [v.op.name for v in slim.get_model_variables()][:2])
(2, 4, 4, 4) ['conv1/conv1_1/weights', 'conv1/conv1_1/biases']
"""

from __future__ import annotations

import functools

from flowgraph.contrib.framework.arg_scope import add_arg_scope
from flowgraph.contrib.framework.variables import model_variable
from flowgraph.contrib.layers.layers import fully_connected, regularized_variable
from flowgraph.contrib.layers.utils import (
    collect_named_outputs,
    get_variable_collections,
    last_dimension,
)
from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, name_scope
from flowgraph.layers import core as core_layers
from flowgraph.layers.convolutional_extra import deconv_output_shape
from flowgraph.ops import (
    array_ops,
    array_shape_ops,
    embedding_ops,
    init_ops,
    math_ops,
    math_reduce,
    nn_conv_ops,
    nn_impl,
    nn_ops,
)
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_gen_ops import one_hot

_XAVIER = init_ops.xavier_initializer()
_ZEROS = init_ops.zeros_initializer()

__all__ = [
    "avg_pool2d",
    "bias_add",
    "conv2d_transpose",
    "convolution2d_transpose",
    "dropout",
    "elu",
    "embed_sequence",
    "layer_norm",
    "linear",
    "max_pool2d",
    "one_hot_encoding",
    "relu",
    "relu6",
    "repeat",
    "separable_conv2d",
    "separable_convolution2d",
    "softmax",
    "stack",
    "unit_norm",
]


def _pair(value, what: str) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    value = tuple(value)
    if len(value) != 2:
        raise ValueError(f"{what} must be an int or a list of 2 ints, got {value!r}")
    return int(value[0]), int(value[1])


def _check_format(data_format: str) -> None:
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format has to be either NCHW or NHWC.")


def _pool(kind, inputs, kernel_size, stride, padding, data_format, outputs_collections,
          scope, default_name):
    _check_format(data_format)
    with name_scope(scope, default_name, [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        kh, kw = _pair(kernel_size, "kernel_size")
        sh, sw = _pair(stride, "stride")
        if data_format == "NHWC":
            ksize, strides = [1, kh, kw, 1], [1, sh, sw, 1]
        else:
            ksize, strides = [1, 1, kh, kw], [1, 1, sh, sw]
        fn = nn_ops.max_pool if kind == "max" else nn_ops.avg_pool
        outputs = fn(inputs, ksize, strides, padding.upper(), data_format=data_format,
                     name="MaxPool" if kind == "max" else "AvgPool")
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """2-D max pooling (scope ``MaxPool2D``); `kernel_size` and `stride` an int or a
    pair, ``VALID`` padding by default."""
    return _pool("max", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope, "MaxPool2D")


@add_arg_scope
def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    """2-D average pooling (scope ``AvgPool2D``), as `max_pool2d`."""
    return _pool("avg", inputs, kernel_size, stride, padding, data_format,
                 outputs_collections, scope, "AvgPool2D")


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True,
            outputs_collections=None, scope=None, seed=None):
    """Dropout keeping each element with probability `keep_prob` while `is_training` (a
    Python bool or a bool tensor), scope ``Dropout``."""
    with vs.variable_scope(scope, "Dropout", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        if keep_prob == 1 and is_training is True:
            # TF1's slim: `tf.nn.dropout` with rate 0 gives the input back and takes an
            # op seed (the layer's own shortcut would take none)
            outputs = nn_impl.dropout(inputs, rate=0.0, seed=seed)
        else:
            layer = core_layers.Dropout(rate=1 - keep_prob, noise_shape=noise_shape,
                                        seed=seed, name=sc.name, _scope=sc)
            outputs = layer.apply(inputs, training=is_training)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


def _finish(outputs, normalizer_fn, normalizer_params, activation_fn):
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return outputs


def _weights(name, shape, initializer, regularizer, trainable, variables_collections,
             kind, dtype, layer_name=None):
    cols = [*(get_variable_collections(variables_collections, kind) or []),
            GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES]
    return regularized_variable(name, shape, dtype, initializer, regularizer, trainable,
                                list(dict.fromkeys(cols)), layer_name)


def _channels(inputs, data_format: str, layer: str) -> int:
    shape = inputs.shape
    if shape.ndims != 4:
        raise ValueError(f"{layer} expects 4-D inputs, got shape {shape}.")
    channels = shape[1 if data_format == "NCHW" else 3].value
    if channels is None:
        raise ValueError(f"The channel dimension of the inputs should be defined "
                         f"(shape {shape}).")
    return channels


@add_arg_scope
def convolution2d_transpose(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                            data_format="NHWC", activation_fn=nn_ops.relu,
                            normalizer_fn=None, normalizer_params=None,
                            weights_initializer=_XAVIER, weights_regularizer=None,
                            biases_initializer=_ZEROS, biases_regularizer=None, reuse=None,
                            variables_collections=None, outputs_collections=None,
                            trainable: bool = True, scope=None):
    """Transposed 2-D convolution (scope ``Conv2d_transpose``) with ``weights``
    ``[kh, kw, num_outputs, in_channels]`` and ``biases``; the output's spatial size is
    the input's times `stride` (``SAME``) or plus the kernel overhang (``VALID``)."""
    _check_format(data_format)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    with vs.variable_scope(scope, "Conv2d_transpose", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        channels = _channels(inputs, data_format, "Conv2d_transpose")
        weights = _weights("weights", [kh, kw, num_outputs, channels], weights_initializer,
                           weights_regularizer, trainable, variables_collections,
                           "weights", dtype, "kernel")
        fmt = "channels_last" if data_format == "NHWC" else "channels_first"
        output_shape, known = deconv_output_shape(inputs, num_outputs, (kh, kw), (sh, sw),
                                                  padding.lower(), fmt)
        strides = [1, sh, sw, 1] if data_format == "NHWC" else [1, 1, sh, sw]
        outputs = nn_conv_ops.conv2d_transpose(inputs, weights, output_shape, strides,
                                               padding=padding.upper(),
                                               data_format=data_format)
        outputs.set_shape(known)
        if normalizer_fn is None and biases_initializer is not None:
            biases = _weights("biases", [num_outputs], biases_initializer,
                              biases_regularizer, trainable, variables_collections,
                              "biases", dtype, "bias")
            outputs = nn_ops.bias_add(outputs, biases, data_format=data_format)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


conv2d_transpose = convolution2d_transpose


@add_arg_scope
def separable_convolution2d(inputs, num_outputs, kernel_size, depth_multiplier=1, stride=1,
                            padding="SAME", data_format="NHWC", rate=1,
                            activation_fn=nn_ops.relu, normalizer_fn=None,
                            normalizer_params=None, weights_initializer=_XAVIER,
                            pointwise_initializer=None, weights_regularizer=None,
                            biases_initializer=_ZEROS, biases_regularizer=None, reuse=None,
                            variables_collections=None, outputs_collections=None,
                            trainable: bool = True, scope=None):
    """Depthwise-separable 2-D convolution (scope ``SeparableConv2d``):
    ``depthwise_weights`` ``[kh, kw, in, depth_multiplier]`` then, unless `num_outputs`
    is None (depthwise only), ``pointwise_weights`` ``[1, 1, in * depth_multiplier,
    num_outputs]``; then ``biases``."""
    _check_format(data_format)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride, "stride")
    rh, rw = _pair(rate, "rate")
    if pointwise_initializer is None:
        pointwise_initializer = weights_initializer
    with vs.variable_scope(scope, "SeparableConv2d", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        channels = _channels(inputs, data_format, "SeparableConv2d")
        strides = [1, sh, sw, 1] if data_format == "NHWC" else [1, 1, sh, sw]
        depthwise = _weights("depthwise_weights", [kh, kw, channels, depth_multiplier],
                             weights_initializer, weights_regularizer, trainable,
                             variables_collections, "weights", dtype, "depthwise_kernel")
        if num_outputs is not None:
            pointwise = _weights("pointwise_weights",
                                 [1, 1, channels * depth_multiplier, num_outputs],
                                 pointwise_initializer, weights_regularizer, trainable,
                                 variables_collections, "weights", dtype, "pointwise_kernel")
            outputs = nn_conv_ops.separable_conv2d(inputs, depthwise, pointwise, strides,
                                                   padding.upper(), rate=[rh, rw],
                                                   data_format=data_format)
            n_biases = num_outputs
        else:
            outputs = nn_ops.depthwise_conv2d(inputs, depthwise, strides, padding.upper(),
                                              rate=[rh, rw], data_format=data_format)
            n_biases = channels * depth_multiplier
        if normalizer_fn is None and biases_initializer is not None:
            biases = _weights("biases", [n_biases], biases_initializer, biases_regularizer,
                              trainable, variables_collections, "biases", dtype, "bias")
            outputs = nn_ops.bias_add(outputs, biases, data_format=data_format)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


separable_conv2d = separable_convolution2d


@add_arg_scope
def layer_norm(inputs, center: bool = True, scale: bool = True, activation_fn=None,
               reuse=None, variables_collections=None, outputs_collections=None,
               trainable: bool = True, begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Layer normalization (scope ``LayerNorm``): moments over the axes from
    `begin_norm_axis` on, ``beta``/``gamma`` of the shape of the axes from
    `begin_params_axis` on, epsilon 1e-12."""
    with vs.variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = inputs.shape
        rank = shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        dtype = inputs.dtype.base_dtype
        if begin_norm_axis < 0:
            begin_norm_axis += rank
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis "
                             f"({begin_norm_axis}) must be < rank(inputs) ({rank})")
        params_shape = shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] "
                             f"is not fully defined: {params_shape}")
        beta = gamma = None
        if center:
            beta = _weights("beta", params_shape, init_ops.zeros_initializer(), None,
                            trainable, variables_collections, "beta", dtype)
        if scale:
            gamma = _weights("gamma", params_shape, init_ops.ones_initializer(), None,
                             trainable, variables_collections, "gamma", dtype)
        mean, variance = nn_ops.moments(inputs, list(range(begin_norm_axis, rank)),
                                        keep_dims=True)
        outputs = nn_impl.batch_normalization(inputs, mean, variance, offset=beta,
                                              scale=gamma, variance_epsilon=1e-12)
        outputs.set_shape(shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def bias_add(inputs, activation_fn=None, initializer=_ZEROS, regularizer=None, reuse=None,
             variables_collections=None, outputs_collections=None, trainable: bool = True,
             data_format="NHWC", scope=None):
    """Add a learned ``biases`` vector over the channel axis (scope ``BiasAdd``)."""
    _check_format(data_format)
    with vs.variable_scope(scope, "BiasAdd", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError("Dims of shape must be known but is None")
        if rank < 2:
            raise ValueError(f"rank of shape must be at least 2 not: {rank}")
        axis = 1 if data_format == "NCHW" and rank > 2 else -1
        n = inputs.shape[axis].value
        if n is None:
            raise ValueError("`C` dimension must be known but is None")
        biases = _weights("biases", [n], initializer, regularizer, trainable,
                          variables_collections, "biases", inputs.dtype.base_dtype)
        outputs = nn_ops.bias_add(inputs, biases, data_format=data_format)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def one_hot_encoding(labels, num_classes, on_value=1.0, off_value=0.0,
                     outputs_collections=None, scope=None):
    """One-hot float rows of `num_classes` for integer `labels` (scope
    ``OneHotEncoding``)."""
    with name_scope(scope, "OneHotEncoding", [labels, num_classes]) as sc:
        labels = convert_to_tensor(labels)
        if labels.dtype == dtypes.int32:
            labels = math_ops.cast(labels, dtypes.int64)
        outputs = one_hot(labels, num_classes, on_value=on_value, off_value=off_value)
    return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def softmax(logits, scope=None):
    """Softmax over the last axis of logits of any rank >= 2 (scope ``softmax``)."""
    with vs.variable_scope(scope, "softmax", [logits]):
        logits = convert_to_tensor(logits)
        n = last_dimension(logits.shape, min_rank=2)
        flat = array_shape_ops.reshape(logits, [-1, n])
        outputs = array_shape_ops.reshape(nn_ops.softmax(flat), array_shape_ops.shape(logits))
        outputs.set_shape(logits.shape)
        return outputs


@add_arg_scope
def unit_norm(inputs, dim, epsilon=1e-7, scope=None):
    """`inputs` divided by their L2 norm along `dim` (scope ``UnitNorm``)."""
    with vs.variable_scope(scope, "UnitNorm", [inputs]):
        inputs = convert_to_tensor(inputs)
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError("The input rank must be known.")
        if dim < 0 or dim >= rank:
            raise ValueError("dim must be positive but less than the input rank.")
        lengths = math_ops.sqrt(epsilon + math_reduce.reduce_sum(
            math_ops.square(inputs), dim, keepdims=True))
        return math_ops.divide(inputs, lengths, name="div")


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique: bool = False,
                   initializer=None, regularizer=None, trainable: bool = True, scope=None,
                   reuse=None):
    """Embed integer `ids` (``[batch, time]``) with a ``[vocab_size, embed_dim]``
    ``embeddings`` model variable (scope ``EmbedSequence``)."""
    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError(f"Must specify vocab size and embedding dimension when not "
                         f"reusing. Got vocab_size={vocab_size} and embed_dim={embed_dim}")
    with vs.variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        shape = [vocab_size, embed_dim] if vocab_size and embed_dim else None
        embeddings = model_variable("embeddings", shape=shape, initializer=initializer,
                                    regularizer=regularizer, trainable=trainable)
        if unique:
            values, index = array_ops.unique(array_shape_ops.reshape(ids, [-1]))
            looked = embedding_ops.embedding_lookup(embeddings, values)
            flat = array_ops.gather(looked, index)
            out_shape = array_ops.concat([array_shape_ops.shape(ids), [embed_dim]], 0)
            return array_shape_ops.reshape(flat, out_shape)
        return embedding_ops.embedding_lookup(embeddings, ids)


def _layer_name(layer) -> str:
    for candidate in (layer, getattr(layer, "func", None)):
        name = getattr(candidate, "__name__", None)
        if name:
            return name
    raise ValueError(f"Could not determine the scope from layer {layer!r}")


def repeat(inputs, repetitions, layer, *args, **kwargs):
    """Apply `layer(outputs, *args, **kwargs)` `repetitions` times, the i-th call in the
    scope ``<scope>/<scope>_<i>`` (`scope` from the keywords, else the layer's name).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     y = repeat(tf.ones([1, 4]), 3, fully_connected, 4, scope="fc")
    ...     print(y.op.name)
    fc/fc_3/Relu
    """
    scope = kwargs.pop("scope", None)
    with vs.variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        base = scope if scope is not None else _layer_name(layer)
        for i in range(repetitions):
            kwargs["scope"] = f"{base}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs, layer, stack_args, **kwargs):
    """Apply `layer` once per entry of `stack_args` (its positional arguments: one value
    or a tuple), chained, the i-th call in the scope ``<scope>/<scope>_<i>``.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     y = stack(tf.ones([1, 4]), fully_connected, [8, 6, 2], scope="fc")
    ...     print(y.shape, y.op.name)
    (1, 2) fc/fc_3/Relu
    """
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, list | tuple):
        raise ValueError("stack_args need to be a list or tuple")
    with vs.variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        base = scope if scope is not None else _layer_name(layer)
        for i, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{base}_{i + 1}"
            if not isinstance(layer_args, list | tuple):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs


linear = functools.partial(fully_connected, activation_fn=None)
relu = functools.partial(fully_connected, activation_fn=nn_ops.relu)
relu6 = functools.partial(fully_connected, activation_fn=nn_ops.relu6)
elu = functools.partial(fully_connected, activation_fn=nn_ops.elu)

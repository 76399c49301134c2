"""TF1's functional `tf.contrib.layers` building blocks on top of `tf.layers` / `tf.nn`.

`fully_connected`, `conv2d` and `batch_norm` open a variable scope (``fully_connected``,
``Conv`` and ``BatchNorm`` by default, made unique like TF1's) and create their
variables in it with TF1 contrib's names: ``weights`` and ``biases`` for the first two
(``beta``, ``gamma``, ``moving_mean``, ``moving_variance`` for `batch_norm`). Every
variable also goes to ``GraphKeys.MODEL_VARIABLES`` and to `variables_collections`
(a list of collection names, or a dict keyed by variable kind); the output goes to
`outputs_collections`. A `normalizer_fn` replaces the bias, as in TF1.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     y = tf.contrib.layers.fully_connected(tf.ones([2, 3]), 4)
...     print([v.name for v in tf.global_variables()], y.shape)
['fully_connected/weights:0', 'fully_connected/biases:0'] (2, 4)
"""

from __future__ import annotations

from flowgraph.contrib.framework.arg_scope import add_arg_scope
from flowgraph.contrib.layers.utils import collect_named_outputs
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import (
    GraphKeys,
    add_to_collection,
    add_to_collections,
    get_collection_ref,
    name_scope,
)
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.layers import core as core_layers
from flowgraph.layers.normalization import BatchNormalization
from flowgraph.ops import array_shape_ops, control_flow_ops, init_ops, math_ops, nn_ops
from flowgraph.ops import variable_scope as vs

_XAVIER = init_ops.xavier_initializer()
_ZEROS = init_ops.zeros_initializer()

__all__ = [
    "batch_norm",
    "conv2d",
    "convolution2d",
    "flatten",
    "fully_connected",
]


def _collections_for(variables_collections, kind: str) -> list:
    if isinstance(variables_collections, dict):
        variables_collections = variables_collections.get(kind)
    if not variables_collections:
        return []
    if isinstance(variables_collections, str):
        return [variables_collections]
    return list(variables_collections)


def _model_variable(name, shape, initializer, regularizer, trainable, collections, dtype,
                    layer_name=None):
    """`get_variable` that also files the variable under ``MODEL_VARIABLES`` (and the
    given collections) when it is created. A `regularizer`'s loss is named after
    `layer_name` (``kernel``/``bias``: TF1 builds these layers on `tf.layers`, which
    name the weights so before contrib renames them) when given."""
    cols = [GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES, *collections]
    return regularized_variable(name, shape, dtype, initializer, regularizer, trainable,
                                list(dict.fromkeys(cols)), layer_name)


def regularized_variable(name, shape, dtype, initializer, regularizer, trainable,
                         collections, layer_name=None):
    """`get_variable`, its regularizer's loss in ``<layer_name>/Regularizer`` (under the
    current name scope) when `layer_name` is given, else in get_variable's place."""
    if layer_name is None or regularizer is None:
        return vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                               regularizer=regularizer, trainable=trainable,
                               collections=collections)
    reusing = vs.get_variable_scope().reuse
    var = vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                          trainable=trainable, collections=collections)
    if not reusing:
        with name_scope(f"{layer_name}/Regularizer"):
            loss = regularizer(var)
        if loss is not None:
            add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return var


def _finish(outputs, normalizer_fn, normalizer_params, activation_fn):
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return outputs


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    """Reshape ``[batch, d1, d2, ...]`` to ``[batch, d1*d2*...]`` (under the name scope
    `scope`, default ``Flatten``); `tf.layers.flatten` does the work."""
    with name_scope(scope or "Flatten") as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims < 2:
            raise ValueError(f"Inputs must have a least 2 dimensions, got shape "
                             f"{inputs.shape}.")
        outputs = core_layers.flatten(inputs)
    return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=nn_ops.relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=_XAVIER,
                    weights_regularizer=None, biases_initializer=_ZEROS,
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable: bool = True, scope=None):
    """``activation_fn(normalizer_fn(inputs @ weights) or inputs @ weights + biases)``.

    `weights` (``[in, num_outputs]``, Xavier-uniform by default) and `biases` (zeros by
    default; not created with a `normalizer_fn` or with ``biases_initializer=None``)
    live in ``<scope>/weights`` and ``<scope>/biases``, scope
    ``fully_connected`` by default. Inputs of rank > 2 are contracted on the last axis.
    """
    if not isinstance(num_outputs, int) or isinstance(num_outputs, bool):
        raise ValueError(f"num_outputs should be int, got {num_outputs!r}.")
    with vs.variable_scope(scope, default_name="fully_connected", values=[inputs],
                           reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        dtype = inputs.dtype.base_dtype
        in_dim = inputs.shape[-1].value if inputs.shape.ndims else None
        if in_dim is None:
            raise ValueError(f"The last dimension of the inputs to `fully_connected` "
                             f"should be defined. Found `None` (shape {inputs.shape}).")
        weights = _model_variable(
            "weights", [in_dim, num_outputs],
            weights_initializer, weights_regularizer,
            trainable, _collections_for(variables_collections, "weights"), dtype, "kernel")
        biases = None
        if normalizer_fn is None and biases_initializer is not None:
            biases = _model_variable(
                "biases", [num_outputs], biases_initializer,
                biases_regularizer, trainable,
                _collections_for(variables_collections, "biases"), dtype, "bias")
        if inputs.shape.ndims == 2:
            outputs = math_ops.matmul(inputs, weights, name="MatMul")
        else:
            outputs = core_layers._contract_last_axis(inputs, weights, num_outputs)
        if biases is not None:
            outputs = nn_ops.bias_add(outputs, biases)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


@add_arg_scope
def convolution2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME",
                  data_format=None, rate=1, activation_fn=nn_ops.relu, normalizer_fn=None,
                  normalizer_params=None, weights_initializer=_XAVIER, weights_regularizer=None,
                  biases_initializer=_ZEROS, biases_regularizer=None, reuse=None,
                  variables_collections=None, outputs_collections=None,
                  trainable: bool = True, scope=None):
    """2-D convolution with ``<scope>/weights`` (``[kh, kw, in, num_outputs]``,
    Xavier-uniform by default) and ``<scope>/biases``, scope ``Conv`` by default;
    ``padding='SAME'``, `stride` and `rate` (dilation) an int or a pair, `data_format`
    ``'NHWC'`` (default) or ``'NCHW'``."""
    fmt = data_format or "NHWC"
    if fmt not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format!r}.")
    kh, kw = core_layers.normalize_tuple(kernel_size, 2, "kernel_size")
    sh, sw = core_layers.normalize_tuple(stride, 2, "stride")
    rh, rw = core_layers.normalize_tuple(rate, 2, "rate")
    with vs.variable_scope(scope, default_name="Conv", values=[inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        shape = TensorShape(inputs.shape)
        if shape.ndims != 4:
            raise ValueError(f"Convolution expects 4-D inputs for conv2d, got shape "
                             f"{shape}.")
        channels = shape[1 if fmt == "NCHW" else 3].value
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs should be defined "
                             f"(shape {shape}).")
        dtype = inputs.dtype.base_dtype
        weights = _model_variable(
            "weights", [kh, kw, channels, num_outputs],
            weights_initializer, weights_regularizer,
            trainable, _collections_for(variables_collections, "weights"), dtype, "kernel")
        if fmt == "NHWC":
            strides, dilations = [1, sh, sw, 1], [1, rh, rw, 1]
        else:
            strides, dilations = [1, 1, sh, sw], [1, 1, rh, rw]
        biases = None
        if normalizer_fn is None and biases_initializer is not None:
            biases = _model_variable(
                "biases", [num_outputs], biases_initializer,
                biases_regularizer, trainable,
                _collections_for(variables_collections, "biases"), dtype, "bias")
        outputs = nn_ops.conv2d(inputs, weights, strides=strides, padding=padding.upper(),
                                data_format=fmt, dilations=dilations, name="Conv2D")
        if biases is not None:
            outputs = nn_ops.bias_add(outputs, biases, data_format=fmt)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
    return collect_named_outputs(outputs_collections, sc.name, outputs)


conv2d = convolution2d


def _beta_before_gamma(layer) -> None:
    """TF 1.x's fused contrib batch norm (2-D inputs, or updates outside ``UPDATE_OPS``)
    makes ``beta`` before ``gamma``; the core layer makes ``gamma`` first. Swap them in
    every collection listing both, so ``tf.global_variables()`` reads as in TF 1.x."""
    beta, gamma = getattr(layer, "beta", None), getattr(layer, "gamma", None)
    if beta is None or gamma is None:
        return
    graph = beta.graph
    for key in graph.get_all_collection_keys():
        items = graph.get_collection_ref(key)
        if beta in items and gamma in items:
            i, j = items.index(gamma), items.index(beta)
            if i < j:
                items[i], items[j] = beta, gamma


@add_arg_scope
def batch_norm(inputs, decay=0.999, center: bool = True, scale: bool = False,
               epsilon=0.001, activation_fn=None, param_initializers=None,
               param_regularizers=None, updates_collections=GraphKeys.UPDATE_OPS,
               is_training=True, reuse=None, variables_collections=None,
               outputs_collections=None, trainable: bool = True, fused=None,
               data_format="NHWC", scope=None):
    """Batch normalization with TF1 contrib's defaults (``decay=0.999``, no ``gamma``,
    ``is_training=True``) in the scope ``BatchNorm``; `tf.layers.BatchNormalization`
    does the work (``momentum=decay``; the channel axis is the last one, or 1 for
    ``data_format='NCHW'``).

    The moving-average updates go to `updates_collections` (``UPDATE_OPS`` by default,
    to run with the train op); with ``updates_collections=None`` they run with the
    output instead. `param_initializers` / `param_regularizers` are dicts keyed by
    ``beta``, ``gamma``, ``moving_mean``, ``moving_variance``.

    Where TF 1.x takes its fused path (2-D inputs, or updates outside ``UPDATE_OPS``),
    ``beta`` is listed before ``gamma``; 2-D inputs are normalized as ``[N, 1, 1, C]``
    by the fused kernel, so the moving variance gets the unbiased batch variance.
    """
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format!r}.")
    inits = dict(param_initializers or {})
    regs = dict(param_regularizers or {})
    with vs.variable_scope(scope, default_name="BatchNorm", values=[inputs],
                           reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        ndims = inputs.shape.ndims
        if ndims is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        axis = 1 if data_format == "NCHW" and ndims > 2 else -1
        original = inputs
        if ndims == 2 and fused is not False:
            # TF 1.x runs 2-D inputs through its fused kernel as [N, 1, 1, C] (or
            # [N, C, 1, 1]): the moving variance then gets the unbiased batch variance.
            channels = inputs.shape[-1].value
            if channels is None:
                raise ValueError("`C` dimension must be known but is None")
            axis = 1 if data_format == "NCHW" else -1
            inputs = array_shape_ops.reshape(
                inputs, [-1, channels, 1, 1] if data_format == "NCHW" else [-1, 1, 1, channels])
            fused = True
        layer = BatchNormalization(
            axis=axis, momentum=decay, epsilon=epsilon, center=center, scale=scale,
            beta_initializer=inits.get("beta"), gamma_initializer=inits.get("gamma"),
            moving_mean_initializer=inits.get("moving_mean"),
            moving_variance_initializer=inits.get("moving_variance"),
            beta_regularizer=regs.get("beta"), gamma_regularizer=regs.get("gamma"),
            fused=fused, trainable=trainable, name=sc.name, _scope=sc, _reuse=reuse)
        update_ops = get_collection_ref(GraphKeys.UPDATE_OPS)
        n_before = len(update_ops)
        outputs = layer.apply(inputs, training=is_training)
        new_updates = [u for u in update_ops[n_before:] if u in layer.updates]
        for var in layer.variables:
            kind = var.op.name.rsplit("/", 1)[-1]
            if var not in get_collection_ref(GraphKeys.MODEL_VARIABLES):
                add_to_collection(GraphKeys.MODEL_VARIABLES, var)
            for col in _collections_for(variables_collections, kind):
                if var not in get_collection_ref(col):
                    add_to_collection(col, var)
        if ndims == 2 or updates_collections != GraphKeys.UPDATE_OPS:
            _beta_before_gamma(layer)
        if updates_collections != GraphKeys.UPDATE_OPS and new_updates:
            for u in new_updates:
                update_ops.remove(u)
            if updates_collections is None:
                outputs = control_flow_ops.with_dependencies(new_updates, outputs)
            else:
                cols = [updates_collections] if isinstance(updates_collections, str) \
                    else list(updates_collections)
                for u in new_updates:
                    add_to_collections(cols, u)
        if inputs is not original:
            outputs = array_shape_ops.reshape(outputs, array_shape_ops.shape(original))
        if activation_fn is not None:
            outputs = activation_fn(outputs)
    return collect_named_outputs(outputs_collections, sc.name, outputs)

"""The neural-network functions of `tf.keras.backend`: convolutions, pooling, padding,
resizing, batch normalization, CTC, focal cross-entropies and random masks, in Keras'
spelling (``data_format='channels_last'|'channels_first'``, tuples of strides, ``'causal'``
padding for `conv1d`). Re-exported by `flowgraph.keras.backend`.

``channels_first`` inputs are transposed to channels-last around the op (a CPU has no
NCHW kernels), as Keras does when no GPU is present.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> K = tf.keras.backend
>>> with tf.Graph().as_default():
...     x = K.constant(np.arange(16.0).reshape(1, 4, 4, 1))
...     y = K.pool2d(x, (2, 2), strides=(2, 2), pool_mode="avg")
...     print(K.get_session().run(y)[0, :, :, 0].tolist())
[[2.5, 4.5], [10.5, 12.5]]
"""

from __future__ import annotations

import itertools

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant as _constant
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.keras import backend as _state
from flowgraph.ops import (
    array_identity_ops,
    array_index_ops,
    array_join_ops,
    array_ops,
    array_shape_ops,
    ctc_decode_ops,
    ctc_ops,
    functional_ops,
    image_ops,
    logging_ops,
    math_ops,
    math_reduce,
    nn_compat_ops,
    nn_conv3d_ops,
    nn_conv_ops,
    nn_impl,
    nn_loss_ops,
    nn_norm_ops,
    nn_ops,
    random_ops,
    sparse_ops,
)
from flowgraph.ops import variables as _variables

__all__ = [
    "batch_normalization", "bias_add", "binary_focal_crossentropy",
    "categorical_focal_crossentropy", "conv1d", "conv2d", "conv2d_transpose", "conv3d",
    "ctc_batch_cost", "ctc_decode", "ctc_label_dense_to_sparse", "depthwise_conv2d",
    "dropout", "foldl", "foldr", "hard_sigmoid", "in_top_k", "is_sparse", "local_conv1d",
    "local_conv2d", "map_fn", "moving_average_update", "normalize_batch_in_training",
    "pool2d", "pool3d", "print_tensor", "random_bernoulli", "random_binomial",
    "random_normal_variable", "random_uniform_variable", "repeat", "resize_images",
    "resize_volumes", "rnn", "separable_conv2d", "spatial_2d_padding",
    "spatial_3d_padding", "temporal_padding", "to_dense",
]


def _t(x):
    return convert_to_tensor(x)


def _format(data_format):
    data_format = data_format or _state.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def _padding(padding, allowed=("same", "valid")):
    if padding not in allowed:
        raise ValueError(f"Invalid padding: {padding}")
    return padding.upper()


def _to_last(x, data_format, rank):
    """`x` (``channels_first``) transposed to channels-last."""
    if data_format == "channels_first":
        return array_ops.transpose(x, [0, *range(2, rank), 1])
    return x


def _from_last(x, data_format, rank):
    if data_format == "channels_first":
        return array_ops.transpose(x, [0, rank - 1, *range(1, rank - 1)])
    return x


def _tuple(value, n):
    return (int(value),) * n if np.ndim(value) == 0 else tuple(int(v) for v in value)


# -- convolutions ------------------------------------------------------------------------
def _conv(x, kernel, strides, padding, data_format, dilation_rate, rank):
    data_format = _format(data_format)
    x = _to_last(_t(x), data_format, rank)
    if rank == 5:
        y = nn_conv3d_ops.conv3d(x, _t(kernel), (1, *_tuple(strides, 3), 1),
                                 _padding(padding),
                                 dilations=(1, *_tuple(dilation_rate, 3), 1))
    else:
        y = nn_conv_ops.convolution(x, _t(kernel), _padding(padding),
                                    strides=_tuple(strides, rank - 2),
                                    dilation_rate=_tuple(dilation_rate, rank - 2))
    return _from_last(y, data_format, rank)


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """1-D convolution of ``(batch, steps, channels)`` by ``(width, in, out)``;
    ``padding='causal'`` pads only the start, so step t sees steps up to t."""
    data_format = _format(data_format)
    kernel = _t(kernel)
    if padding == "causal":
        if data_format != "channels_last":
            raise ValueError("When using causal padding in `conv1d`, `data_format` must be "
                             '"channels_last" (temporal data).')
        left = int(_tuple(dilation_rate, 1)[0]) * (kernel.shape.as_list()[0] - 1)
        x = temporal_padding(x, (left, 0))
        padding = "valid"
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 3)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1)):
    """2-D convolution of images by a ``(height, width, in, out)`` kernel."""
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 4)


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None,
           dilation_rate=(1, 1, 1)):
    """3-D convolution of volumes by a ``(depth, height, width, in, out)`` kernel."""
    return _conv(x, kernel, strides, padding, data_format, dilation_rate, 5)


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    """The transpose (gradient) of `conv2d`: kernel ``(height, width, out, in)``,
    `output_shape` the full output shape in `data_format`."""
    data_format = _format(data_format)
    x = _to_last(_t(x), data_format, 4)
    if isinstance(output_shape, (tuple, list)):
        if data_format == "channels_first":
            output_shape = (output_shape[0], output_shape[2], output_shape[3],
                            output_shape[1])
        output_shape = [int(d) if d is not None else -1 for d in output_shape]
        if output_shape[0] == -1:
            output_shape = array_join_ops.stack(
                [array_shape_ops.shape(x)[0], *output_shape[1:]])
    strides = (1, *_tuple(strides, 2), 1)
    dilations = _tuple(dilation_rate, 2)
    y = nn_conv_ops.conv2d_transpose(x, kernel, output_shape, strides,
                                     padding=_padding(padding),
                                     dilations=(1, *dilations, 1))
    return _from_last(y, data_format, 4)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """Each input channel convolved by its own ``(height, width, in, multiplier)``
    filters."""
    data_format = _format(data_format)
    x = _to_last(_t(x), data_format, 4)
    y = nn_ops.depthwise_conv2d(x, _t(depthwise_kernel), (1, *_tuple(strides, 2), 1),
                                _padding(padding), rate=_tuple(dilation_rate, 2))
    return _from_last(y, data_format, 4)


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid",
                     data_format=None, dilation_rate=(1, 1)):
    """`depthwise_conv2d` followed by a 1x1 convolution with `pointwise_kernel`."""
    data_format = _format(data_format)
    x = _to_last(_t(x), data_format, 4)
    y = nn_conv_ops.separable_conv2d(x, _t(depthwise_kernel), _t(pointwise_kernel),
                                     (1, *_tuple(strides, 2), 1), _padding(padding),
                                     rate=_tuple(dilation_rate, 2))
    return _from_last(y, data_format, 4)


def _local_conv(inputs, kernel, kernel_size, strides, output_shape, data_format):
    """Unshared-weight convolution: one ``(features, filters)`` matrix per output
    position (``kernel`` is ``(positions, features, filters)``)."""
    data_format = _format(data_format)
    inputs, kernel = _t(inputs), _t(kernel)
    feature_dim, filters = kernel.shape.as_list()[1], kernel.shape.as_list()[-1]
    ndims = len(output_shape)
    patches = []
    for position in itertools.product(*(range(n) for n in output_shape)):
        index = [slice(None)]
        if data_format == "channels_first":
            index.append(slice(None))
        index += [slice(p * s, p * s + k)
                  for p, s, k in zip(position, strides, kernel_size, strict=True)]
        if data_format == "channels_last":
            index.append(slice(None))
        patches.append(array_shape_ops.reshape(inputs[tuple(index)], (1, -1, feature_dim)))
    stacked = array_join_ops.concat(patches, axis=0)          # (positions, batch, features)
    out = math_ops.matmul(stacked, kernel)                    # (positions, batch, filters)
    out = array_shape_ops.reshape(out, (*output_shape, -1, filters))
    if data_format == "channels_first":
        order = [ndims, ndims + 1, *range(ndims)]
    else:
        order = [ndims, *range(ndims), ndims + 1]
    return array_ops.transpose(out, order)


def local_conv1d(inputs, kernel, kernel_size, strides, data_format=None):
    """1-D convolution with a different kernel at each output step."""
    output_length = _t(kernel).shape.as_list()[0]
    return _local_conv(inputs, kernel, _tuple(kernel_size, 1), _tuple(strides, 1),
                       (output_length,), data_format)


def local_conv2d(inputs, kernel, kernel_size, strides, output_shape, data_format=None):
    """2-D convolution with a different kernel at each output pixel."""
    return _local_conv(inputs, kernel, _tuple(kernel_size, 2), _tuple(strides, 2),
                       tuple(int(d) for d in output_shape), data_format)


# -- pooling, padding, resizing --------------------------------------------------------------
def _pool(x, pool_size, strides, padding, data_format, pool_mode, rank):
    n = rank - 2
    if len(pool_size) != n:
        raise ValueError(f"`pool_size` must be a tuple of {n} integers.")
    if len(strides) != n:
        raise ValueError(f"`strides` must be a tuple of {n} integers.")
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pooling mode: {pool_mode}")
    data_format = _format(data_format)
    x = _to_last(_t(x), data_format, rank)
    ksize, stride = (1, *pool_size, 1), (1, *strides, 1)
    if rank == 4:
        fn = nn_ops.max_pool if pool_mode == "max" else nn_ops.avg_pool
    else:
        fn = nn_conv3d_ops.max_pool3d if pool_mode == "max" else nn_conv3d_ops.avg_pool3d
    return _from_last(fn(x, ksize, stride, _padding(padding)), data_format, rank)


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    """Max or average pooling (``pool_mode``) over windows of `pool_size`."""
    return _pool(x, tuple(pool_size), tuple(strides), padding, data_format, pool_mode, 4)


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None,
           pool_mode="max"):
    """Max or average pooling over 3-D windows of `pool_size`."""
    return _pool(x, tuple(pool_size), tuple(strides), padding, data_format, pool_mode, 5)


def _pad_spatial(x, padding, data_format, n):
    if len(padding) != n or any(len(p) != 2 for p in padding):
        raise ValueError(f"`padding` should be {n} pairs of integers; got {padding}.")
    pairs = [list(map(int, p)) for p in padding]
    if _format(data_format) == "channels_first":
        pattern = [[0, 0], [0, 0], *pairs]
    else:
        pattern = [[0, 0], *pairs, [0, 0]]
    return array_join_ops.pad(_t(x), pattern)


def temporal_padding(x, padding=(1, 1)):
    """Zeros added before and after the steps of ``(batch, steps, channels)``."""
    if len(padding) != 2:
        raise ValueError(f"`padding` should be a pair of integers; got {padding}.")
    return array_join_ops.pad(_t(x), [[0, 0], [int(padding[0]), int(padding[1])], [0, 0]])


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    """Zeros around the rows and columns of images."""
    return _pad_spatial(x, padding, data_format, 2)


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    """Zeros around the three spatial axes of volumes."""
    return _pad_spatial(x, padding, data_format, 3)


_RESIZE = {"nearest": "nearest", "bilinear": "bilinear"}
_RESIZE_NAMES = ("area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5",
                 "mitchellcubic", "nearest")


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Images scaled up by integer factors (nearest or bilinear interpolation)."""
    if data_format == "channels_first":
        rows = 2
    elif data_format == "channels_last":
        rows = 1
    else:
        raise ValueError(f"Invalid `data_format` argument: {data_format}")
    if interpolation not in _RESIZE_NAMES:
        names = '", "'.join(_RESIZE_NAMES)
        raise ValueError(f'`interpolation` argument should be one of: "{names}". '
                         f'Received: "{interpolation}".')
    if interpolation not in _RESIZE:
        raise NotImplementedError(f"resize_images: interpolation={interpolation!r} is not "
                                  f"supported by flowgraph; use 'nearest' or 'bilinear'.")
    x = _t(x)
    dims = x.shape[rows:rows + 2]
    if dims.is_fully_defined():
        size = _constant(dims.as_list(), _dtypes.int32)
    else:
        size = array_shape_ops.shape(x)[rows:rows + 2]
    size = math_ops.multiply(size, _constant(np.array([height_factor, width_factor],
                                                      np.int32)))
    if data_format == "channels_first":
        x = array_ops.transpose(x, [0, 2, 3, 1])
    resize = (image_ops.resize_nearest_neighbor if interpolation == "nearest"
              else image_ops.resize_bilinear)
    with name_scope(None, "resize"):  # TF 2's tf.image.resize: "resize/ResizeBilinear"
        x = resize(x, size, half_pixel_centers=True)
    if data_format == "channels_first":
        x = array_ops.transpose(x, [0, 3, 1, 2])
    return x


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    """Volumes scaled up by repeating each voxel along the three spatial axes."""
    from flowgraph.keras.backend_ops import repeat_elements

    if data_format == "channels_first":
        first = 2
    elif data_format == "channels_last":
        first = 1
    else:
        raise ValueError(f"Invalid data_format: {data_format}")
    x = repeat_elements(x, depth_factor, axis=first)
    x = repeat_elements(x, height_factor, axis=first + 1)
    return repeat_elements(x, width_factor, axis=first + 2)


def repeat(x, n):
    """``(batch, features)`` repeated to ``(batch, n, features)``."""
    x = _t(x)
    if x.shape.ndims != 2:
        raise ValueError(f"`repeat` expects a 2-D tensor (batch, features); got shape "
                         f"{x.shape}.")
    return array_ops.tile(array_shape_ops.expand_dims(x, 1), [1, n, 1])


# -- normalization and bias ------------------------------------------------------------------
def bias_add(x, bias, data_format=None):
    """`bias` (one value per channel, or a full ``x.shape[1:]`` array) added to `x`."""
    data_format = _format(data_format)
    x, bias = _t(x), _t(bias)
    bias_rank, x_rank = bias.shape.ndims, x.shape.ndims
    if bias_rank not in (1, x_rank - 1):
        raise ValueError(f"Unexpected bias dimensions {bias_rank}, expect to be 1 or "
                         f"{x_rank - 1} dimensions")
    if bias_rank == 1:
        fmt = "NCHW" if data_format == "channels_first" and x_rank >= 3 else "NHWC"
        if fmt == "NCHW" and x_rank != 4:
            shape = [1, -1] + [1] * (x_rank - 2)
            return math_ops.add(x, array_shape_ops.reshape(bias, shape))
        return nn_ops.bias_add(x, bias, data_format=fmt)
    if data_format == "channels_first":
        order = [bias_rank - 1, *range(bias_rank - 1)]
        bias = array_ops.transpose(bias, order)
    return math_ops.add(x, array_shape_ops.expand_dims(bias, 0))


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """``gamma * (x - mean) / sqrt(var + epsilon) + beta`` with given statistics."""
    return nn_impl.batch_normalization(_t(x), mean, var, beta, gamma, epsilon)


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """`x` normalized by its own mean and variance over `reduction_axes`; returns
    ``(normalized, mean, variance)``."""
    x = _t(x)
    ndim = x.shape.ndims
    axes = list(reduction_axes)
    if ndim == 4 and axes in ([0, 1, 2], [0, 2, 3]):
        channel = 1 if axes == [0, 2, 3] else 3
        width = x.shape.as_list()[channel]
        gamma = (_constant(1.0, x.dtype.base_dtype, shape=[width]) if gamma is None
                 else gamma)
        beta = (_constant(0.0, x.dtype.base_dtype, shape=[width]) if beta is None
                else beta)
        if channel == 1:
            x = array_ops.transpose(x, [0, 2, 3, 1])
        y, mean, var = nn_norm_ops.fused_batch_norm(x, gamma, beta, epsilon=epsilon)[:3]
        if channel == 1:
            y = array_ops.transpose(y, [0, 3, 1, 2])
        return y, mean, var
    mean, var = nn_ops.moments(x, axes, None, None, False)
    if sorted(axes) == list(range(ndim))[:-1]:
        return nn_impl.batch_normalization(x, mean, var, beta, gamma, epsilon), mean, var
    target = [1 if a in axes else -1 for a in range(ndim)]

    def shaped(v):
        return None if v is None else array_shape_ops.reshape(v, target)

    normed = nn_impl.batch_normalization(x, shaped(mean), shaped(var), shaped(beta),
                                         shaped(gamma), epsilon)
    return normed, mean, var


def moving_average_update(x, value, momentum):
    """An op moving variable `x` towards `value`: ``x = momentum * x + (1 - momentum) *
    value``, zero-debiased as Keras does."""
    from flowgraph.train.moving_averages import assign_moving_average

    return assign_moving_average(x, value, momentum, zero_debias=True)


# -- activations and losses ------------------------------------------------------------------
def hard_sigmoid(x):
    """``clip(0.2 * x + 0.5, 0, 1)``."""
    from flowgraph.keras.activations import hard_sigmoid as _hard_sigmoid

    return _hard_sigmoid(_t(x))


def binary_focal_crossentropy(target, output, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False):
    """Element-wise binary cross-entropy scaled by ``(1 - p_t) ** gamma`` (and by
    ``alpha`` / ``1 - alpha`` with `apply_class_balancing`), Lin et al. 2017."""
    from flowgraph.keras.backend_ops import binary_crossentropy

    output = _t(output)
    target = math_ops.cast(_t(target), output.dtype.base_dtype)
    prob = math_ops.sigmoid(output) if from_logits else output
    p_t = math_ops.add(math_ops.multiply(target, prob),
                       math_ops.multiply(math_ops.subtract(1.0, target),
                                         math_ops.subtract(1.0, prob)))
    factor = math_ops.pow(math_ops.subtract(1.0, p_t), gamma)
    loss = math_ops.multiply(factor, binary_crossentropy(target, output, from_logits))
    if apply_class_balancing:
        weight = math_ops.add(math_ops.multiply(target, alpha),
                              math_ops.multiply(math_ops.subtract(1.0, target), 1.0 - alpha))
        loss = math_ops.multiply(weight, loss)
    return loss


def categorical_focal_crossentropy(target, output, alpha=0.25, gamma=2.0, from_logits=False,
                                   axis=-1):
    """Categorical cross-entropy with each class's term scaled by
    ``alpha * (1 - p) ** gamma``, summed along `axis`."""
    output = _t(output)
    target = math_ops.cast(_t(target), output.dtype.base_dtype)
    if from_logits:
        output = nn_ops.softmax(output, axis=axis)
    output = math_ops.divide(output, math_reduce.reduce_sum(output, axis, keepdims=True))
    eps = _state.epsilon()
    output = math_ops.clip_by_value(output, eps, 1.0 - eps)
    ce = math_ops.negative(math_ops.multiply(target, math_ops.log(output)))
    weight = math_ops.multiply(math_ops.pow(math_ops.subtract(1.0, output), gamma), alpha)
    return math_reduce.reduce_sum(math_ops.multiply(weight, ce), axis=axis)


def in_top_k(predictions, targets, k):
    """Whether each target class is among the `k` highest predictions of its row."""
    return nn_loss_ops.in_top_k(predictions, targets, k)


# -- CTC ---------------------------------------------------------------------------------------
def ctc_label_dense_to_sparse(labels, label_lengths):
    """The first ``label_lengths[i]`` labels of each row of `labels`, as a SparseTensor
    (int64 indices, the dense shape of `labels`)."""
    labels = _t(labels)
    lengths = math_ops.cast(_t(label_lengths), _dtypes.int32)
    width = array_shape_ops.shape(labels)[1]
    mask = array_ops.sequence_mask(lengths, maxlen=width)
    indices = array_index_ops.where(mask)
    values = array_index_ops.gather_nd(labels, indices)
    dense_shape = math_ops.cast(array_shape_ops.shape(labels), _dtypes.int64)
    return SparseTensor(indices, values, dense_shape)


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """The CTC loss of each sample, ``(batch, 1)``: `y_pred` softmax outputs
    ``(batch, steps, classes)`` (last class the blank), `y_true` padded labels, the
    lengths ``(batch, 1)``."""
    label_length = math_ops.cast(array_shape_ops.squeeze(_t(label_length), axis=[-1]),
                                 _dtypes.int32)
    input_length = math_ops.cast(array_shape_ops.squeeze(_t(input_length), axis=[-1]),
                                 _dtypes.int32)
    sparse = ctc_label_dense_to_sparse(y_true, label_length)
    sparse = SparseTensor(sparse.indices, math_ops.cast(sparse.values, _dtypes.int32),
                          sparse.dense_shape)
    logits = math_ops.log(math_ops.add(array_ops.transpose(_t(y_pred), [1, 0, 2]),
                                       _state.epsilon()))
    loss = ctc_ops.ctc_loss(sparse, logits, input_length)
    return array_shape_ops.expand_dims(loss, 1)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """Best paths of softmax outputs `y_pred` ``(batch, steps, classes)``: a list of
    `top_paths` dense ``(batch, steps)`` label arrays padded with -1, and their log
    probabilities."""
    y_pred = _t(y_pred)
    dims = array_shape_ops.shape(y_pred)
    logits = math_ops.log(math_ops.add(array_ops.transpose(y_pred, [1, 0, 2]),
                                       _state.epsilon()))
    input_length = math_ops.cast(_t(input_length), _dtypes.int32)
    if greedy:
        decoded, log_prob = nn_compat_ops.ctc_greedy_decoder(logits, input_length)
    else:
        decoded, log_prob = ctc_decode_ops.ctc_beam_search_decoder(
            logits, input_length, beam_width=beam_width, top_paths=top_paths)
    shape = math_ops.cast(dims[:2], _dtypes.int64)
    dense = [sparse_ops.sparse_tensor_to_dense(SparseTensor(st.indices, st.values, shape),
                                               default_value=-1) for st in decoded]
    return dense, log_prob


# -- control flow, printing, sparse ------------------------------------------------------------
def map_fn(fn, elems, name=None, dtype=None):
    """`fn` applied to each row of `elems` (``tf.map_fn``)."""
    return functional_ops.map_fn(fn, elems, name=name, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    """``fn(acc, row)`` folded over the rows of `elems` from the first."""
    return functional_ops.foldl(fn, elems, initializer=initializer, name=name)


def foldr(fn, elems, initializer=None, name=None):
    """``fn(acc, row)`` folded over the rows of `elems` from the last."""
    return functional_ops.foldr(fn, elems, initializer=initializer, name=name)


def print_tensor(x, message="", summarize=3):
    """`x`, passed through an identity that prints `message` and its value (stdout)
    whenever it is computed."""
    import sys

    x = _t(x)
    printed = logging_ops.print(message, x, output_stream=sys.stdout, summarize=summarize)
    with control_dependencies([printed]):
        return array_identity_ops.identity(x)


def is_sparse(tensor) -> bool:
    """Whether `tensor` is a `SparseTensor`."""
    return isinstance(tensor, SparseTensor)


def to_dense(tensor):
    """A SparseTensor made dense (other tensors returned as they are)."""
    if is_sparse(tensor):
        return sparse_ops.sparse_tensor_to_dense(tensor)
    return tensor


# -- random ------------------------------------------------------------------------------------
def _seed(seed, high):
    return int(np.random.randint(high)) if seed is None else seed


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    """0/1 values, each 1 with probability `p`."""
    dtype = _dtypes.as_dtype(dtype or _state.floatx())
    draw = random_ops.random_uniform(shape, dtype=dtype, seed=_seed(seed, 10**7))
    ones = array_shape_ops.ones(shape, dtype=dtype)
    return array_index_ops.where_v2(math_ops.less_equal(draw, p), ones,
                                    array_shape_ops.zeros(shape, dtype=dtype))


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    """Deprecated spelling of `random_bernoulli`."""
    import warnings

    warnings.warn("`tf.keras.backend.random_binomial` is deprecated; use "
                  "`tf.keras.backend.random_bernoulli` instead.", DeprecationWarning,
                  stacklevel=2)
    return random_bernoulli(shape, p=p, dtype=dtype, seed=seed)


def _random_variable(draw, shape, dtype, name):
    dtype = _dtypes.as_dtype(dtype or _state.floatx())
    return _variables.Variable(draw(dtype), dtype=dtype, name=name or "Variable",
                               use_resource=True)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A variable initialized from a normal distribution."""
    seed = _seed(seed, 10**9)
    return _random_variable(lambda dt: random_ops.random_normal(
        shape, mean, scale, dtype=dt, seed=seed), shape, dtype, name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A variable initialized from a uniform distribution on ``[low, high)``."""
    seed = _seed(seed, 10**9)
    return _random_variable(lambda dt: random_ops.random_uniform(
        shape, low, high, dtype=dt, seed=seed), shape, dtype, name)


def dropout(x, level, noise_shape=None, seed=None):
    """`x` with a fraction `level` of entries zeroed and the rest scaled by
    ``1 / (1 - level)``."""
    return nn_impl.dropout(_t(x), rate=level, noise_shape=noise_shape, seed=seed)


# -- rnn ---------------------------------------------------------------------------------------
def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None,
        unroll=False, input_length=None, time_major=False, zero_output_for_mask=False,
        return_all_outputs=True):
    """Run ``step_function(input_t, states) -> (output_t, new_states)`` over the time
    axis of `inputs`; returns ``(last_output, outputs, new_states)``.

    Masked steps (``mask`` ``(batch, time)`` False) keep the previous states and repeat
    the previous output (or give zeros with `zero_output_for_mask`). The loop is
    unrolled in the graph; the number of steps must be known when it is built.
    """
    inputs = _t(inputs)
    rank = inputs.shape.ndims
    if rank is None or rank < 3:
        raise ValueError(f"rnn: `inputs` should be at least 3-D (batch, time, ...); got "
                         f"shape {inputs.shape}.")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, *range(2, rank)])
    steps = inputs.shape.as_list()[0]
    if steps is None:
        raise ValueError("rnn: the number of timesteps must be known when the graph is "
                         "built (flowgraph unrolls the loop); give `inputs` a static time "
                         "dimension.")
    if mask is not None:
        mask = math_ops.cast(_t(mask), _dtypes.bool)
        if mask.shape.ndims == 2:
            mask = array_shape_ops.expand_dims(mask, -1)
        if not time_major:
            mask = array_ops.transpose(mask, [1, 0, *range(2, mask.shape.ndims)])
    constants = list(constants or [])
    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    states = list(initial_states)
    outputs, prev = [], None
    for t in order:
        out, new_states = step_function(inputs[t], states + constants)
        new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
        if mask is not None:
            m = mask[t]
            fallback = (array_shape_ops.zeros_like(out) if prev is None or zero_output_for_mask
                        else prev)
            out = array_index_ops.where(_broadcast_mask(m, out), out, fallback)
            new_states = [array_index_ops.where(_broadcast_mask(m, ns), ns, s)
                          for ns, s in zip(new_states, states, strict=True)]
        outputs.append(out)
        states, prev = new_states, out
    last = outputs[-1]
    if not return_all_outputs:
        outputs = outputs[-1:]
    stacked = array_join_ops.stack(outputs)
    if not time_major:
        stacked = array_ops.transpose(stacked, [1, 0, *range(2, stacked.shape.ndims)])
    return last, stacked, states


def _broadcast_mask(mask, like):
    """A ``(batch, 1)`` mask tiled to the shape of `like`."""
    while mask.shape.ndims < like.shape.ndims:
        mask = array_shape_ops.expand_dims(mask, -1)
    return math_ops.logical_and(mask, array_shape_ops.ones_like(like, dtype=_dtypes.bool))

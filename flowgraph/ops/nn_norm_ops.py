"""TF 1.x `tf.nn` normalization helpers: `lrn` / `local_response_normalization`,
`fused_batch_norm` (TF's ``FusedBatchNormV3`` op, `nn_impl`), `batch_norm_with_global_
normalization`, and the moments helpers `sufficient_statistics`, `normalize_moments`,
`weighted_moments`.

Example
-------
>>> import flowgraph as tf
>>> y, mean, var = tf.nn.fused_batch_norm(tf.ones([2, 1, 1, 3]), tf.ones([3]), tf.zeros([3]))
>>> y.name
'FusedBatchNormV3:0'
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import (
    array_identity_ops,
    array_join_ops,
    array_shape_ops,
    math_ops,
    math_reduce,
    nn_impl,
)
from flowgraph.ops.op_util import make_op


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
                                 name=None):
    """``input / (bias + alpha * s) ** beta``, where ``s`` sums the squares of the
    ``2 * depth_radius + 1`` neighbouring channels (last axis) of each entry: one ``LRN``
    op, whose gradient is one ``LRNGrad``.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.lrn(tf.ones([1, 1, 1, 3]), depth_radius=1, bias=0.0, alpha=1.0, beta=1.0)
    >>> tf.Session().run(y).reshape(-1)
    array([0.5       , 0.33333334, 0.5       ], dtype=float32)
    """
    x = convert_to_tensor(input, name="input")
    attrs = {"depth_radius": int(depth_radius), "bias": float(bias), "alpha": float(alpha),
             "beta": float(beta)}
    return make_op("LRN", [x], attrs, name=name or "LRN").outputs[0]


lrn = local_response_normalization


def _check_fused_bn_dtype(t, arg: str, allowed: tuple) -> None:
    # TensorFlow's FusedBatchNormV3 has no float64 kernel: x is half/bfloat16/float32,
    # its statistics and affine parameters float32 (or bfloat16).
    if t.dtype.base_dtype.name not in allowed:
        raise TypeError(
            f"Value passed to parameter '{arg}' has DataType {t.dtype.base_dtype.name} not in "
            f"list of allowed values: {', '.join(allowed)} (tf.nn.fused_batch_norm; cast it, "
            "e.g. tf.cast(x, tf.float32))")


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None,
                     exponential_avg_factor=1.0):
    """Batch normalization of a 4-D `x` per channel: ``(y, batch_mean, batch_variance)``.

    Training (`is_training`): normalizes with the batch's mean and (biased) variance and
    returns them, the variance with Bessel's correction ``n / (n - 1)`` as TensorFlow's
    kernel does; with ``exponential_avg_factor < 1`` the returned statistics are
    ``(1 - f) * mean + f * batch_mean`` (likewise the variance). Inference: normalizes
    with `mean` and `variance` and returns them. `epsilon` is raised to at least
    1.001e-5, as in TensorFlow. Builds one ``FusedBatchNormV3`` op (named `name`, by
    default ``FusedBatchNormV3``), whose gradient is one ``FusedBatchNormGradV3``.

    Example
    -------
    >>> import flowgraph as tf
    >>> y, m, v = tf.nn.fused_batch_norm(tf.ones([2, 1, 1, 3]), tf.ones([3]), tf.zeros([3]))
    >>> y.shape.as_list(), m.shape.as_list()
    ([2, 1, 1, 3], [3])
    """
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"fused_batch_norm: data_format must be 'NHWC' or 'NCHW', got "
                         f"{data_format!r}")
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None
                                                                or variance is None):
        raise ValueError("fused_batch_norm: both 'mean' and 'variance' must be given (1-D "
                         "tensors) when is_training is False or exponential_avg_factor != "
                         f"1.0; got mean={mean!r}, variance={variance!r}")
    eps = max(float(epsilon), 1.001e-5)
    x = convert_to_tensor(x, name="x")
    _check_fused_bn_dtype(x, "x", ("float16", "bfloat16", "float32"))
    if x.shape.ndims not in (None, 4):
        raise ValueError(f"Shape must be rank 4 but is rank {x.shape.ndims} for "
                         f"'{name or 'FusedBatchNormV3'}' (FusedBatchNormV3): "
                         "fused_batch_norm needs a 4-D x")
    vectors = []
    for arg, value in (("scale", scale), ("offset", offset), ("mean", mean),
                       ("variance", variance)):
        # Training without given statistics reads empty vectors (TensorFlow's Const_1,
        # Const_2); they are used only when exponential_avg_factor < 1.
        t = convert_to_tensor([] if value is None else value, _dtypes.float32
                              if value is None else None)
        if value is not None:
            _check_fused_bn_dtype(t, arg, ("bfloat16", "float32"))
        vectors.append(t)
    attrs = {"T": x.dtype.base_dtype, "U": vectors[0].dtype.base_dtype, "epsilon": eps,
             "exponential_avg_factor": float(exponential_avg_factor),
             "data_format": data_format, "is_training": bool(is_training)}
    op = make_op("FusedBatchNormV3", [x, *vectors], attrs, name=name)
    return op.outputs[0], op.outputs[1], op.outputs[2]


def batch_norm_with_global_normalization(t=None, m=None, v=None, beta=None, gamma=None,
                                         variance_epsilon=None,
                                         scale_after_normalization=None, name=None,
                                         input=None, mean=None, variance=None):
    """`batch_normalization` with TF1's old argument names; `gamma` is used only when
    `scale_after_normalization`.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.nn.batch_norm_with_global_normalization(
    ...     tf.ones([1, 2]), [1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [2.0, 2.0], 0.0, False)
    >>> tf.Session().run(y)
    array([[0., 0.]], dtype=float32)
    """
    t = input if t is None else t
    m = mean if m is None else m
    v = variance if v is None else v
    return nn_impl.batch_normalization(t, m, v, beta,
                                       gamma if scale_after_normalization else None,
                                       variance_epsilon, name=name or "batchnorm")


def _axes_count(x, axes):
    shape = array_shape_ops.shape(x)
    static = [x.shape[a].value for a in axes] if x.shape.ndims is not None else [None]
    if None not in static:
        total = 1
        for d in static:
            total *= d
        return convert_to_tensor(float(total), x.dtype.base_dtype)
    return math_ops.cast(math_reduce.reduce_prod(array_join_ops.stack(
        [shape[a] for a in axes])), x.dtype.base_dtype)


def sufficient_statistics(x, axes, shift=None, keep_dims=None, name=None, keepdims=None):
    """``(count, sum(x - shift), sum((x - shift) ** 2), shift)`` over `axes`, from which
    `normalize_moments` gives the mean and variance (``shift`` None: no shift, and
    None is returned for it).

    Example
    -------
    >>> import flowgraph as tf
    >>> c, s, ss, _ = tf.nn.sufficient_statistics([[1.0, 3.0]], [0, 1])
    >>> [float(v) for v in tf.Session().run([c, s, ss])]
    [2.0, 4.0, 10.0]
    """
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        axes = [int(a) % x.shape.ndims if x.shape.ndims else int(a) for a in axes]
        count = array_identity_ops.identity(_axes_count(x, axes), name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, x.dtype.base_dtype, name="shift")
            centered = math_ops.subtract(x, shift)
        else:
            centered = x
        m_ss = math_reduce.reduce_sum(centered, axes, keepdims=keep, name="mean_ss")
        v_ss = math_reduce.reduce_sum(math_ops.square(centered), axes, keepdims=keep,
                                      name="var_ss")
        return count, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """Mean and variance from `sufficient_statistics`' sums.

    Example
    -------
    >>> import flowgraph as tf
    >>> m, v = tf.nn.normalize_moments(2.0, 4.0, 10.0, None)
    >>> [float(t) for t in tf.Session().run([m, v])]
    [2.0, 1.0]
    """
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = math_ops.reciprocal(convert_to_tensor(counts, name="counts"),
                                      name="divisor")
        shifted_mean = math_ops.multiply(mean_ss, divisor, name="shifted_mean")
        mean = shifted_mean if shift is None else math_ops.add(shifted_mean, shift,
                                                               name="mean")
        variance = math_ops.subtract(math_ops.multiply(variance_ss, divisor),
                                     math_ops.square(shifted_mean), name="variance")
        return mean, variance


def weighted_moments(x, axes, frequency_weights, name=None, keep_dims=None, keepdims=None):
    """Mean and variance of `x` over `axes`, each entry counted `frequency_weights` times
    (broadcast against `x`); a zero total weight gives 0.

    Example
    -------
    >>> import flowgraph as tf
    >>> m, v = tf.nn.weighted_moments([1.0, 3.0], [0], [3.0, 1.0])
    >>> [float(t) for t in tf.Session().run([m, v])]
    [1.5, 0.75]
    """
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        w = math_ops.cast(frequency_weights, x.dtype.base_dtype)
        weighted_sum = math_reduce.reduce_sum(w * x, axes, keepdims=True)
        total = math_reduce.reduce_sum(w + array_shape_ops.zeros_like(x), axes,
                                       keepdims=True)
        mean = math_ops.div_no_nan(weighted_sum, total)
        distsq = math_reduce.reduce_sum(w * math_ops.squared_difference(x, mean), axes,
                                        keepdims=True)
        variance = math_ops.div_no_nan(distsq, total)
        if not keep:
            mean = array_shape_ops.squeeze(mean, axes)
            variance = array_shape_ops.squeeze(variance, axes)
        return mean, variance

"""`tf.math` functions that TensorFlow 1.x builds from other ops: `log_sigmoid`, `lbeta`,
`reduce_variance`/`reduce_std`/`reduce_euclidean_norm`, the ``*_no_nan`` products,
`count_nonzero`, `zero_fraction`, `confusion_matrix`, `bessel_i0`/`bessel_i1`,
`scalar_mul`, `erfcinv`, `polyval`, `cumulative_logsumexp`, `is_non_decreasing` and
`is_strictly_increasing`. They register no op types: their gradients come from the ops they use.

Example
-------
>>> import flowgraph as tf
>>> with tf.Session() as sess:
...     print(sess.run(tf.confusion_matrix([0, 1, 1], [0, 1, 0])))
[[1 0]
 [1 1]]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.ops import array_ops as _a
from flowgraph.ops import check_ops as _check
from flowgraph.ops import math_ops as _m
from flowgraph.ops import math_reduce as _r
from flowgraph.ops import math_special as _s
from flowgraph.ops import nn_ops as _nn
from flowgraph.ops import segment_ops as _seg
from flowgraph.ops.math_raw import (  # the op types TensorFlow emits
    cumulative_logsumexp,
    multiply_no_nan,
    reduce_euclidean_norm,
)

__all__ = [
    "bessel_i0", "bessel_i1", "confusion_matrix", "count_nonzero", "cumulative_logsumexp",
    "erfcinv", "is_non_decreasing", "is_strictly_increasing", "lbeta", "log_sigmoid",
    "multiply_no_nan", "polyval", "reciprocal_no_nan", "reduce_euclidean_norm", "reduce_std",
    "reduce_variance", "scalar_mul", "zero_fraction",
]


def _keep(keepdims, keep_dims):
    return bool(keep_dims if keepdims is None else keepdims)


def log_sigmoid(x, name=None):
    """``log(sigmoid(x)) = -softplus(-x)``, stable for large ``|x|``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.log_sigmoid([0.0])))
    [-0.6931472]
    """
    with name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        # TensorFlow's composition: its gradient is sigmoid(-x) everywhere, 0.5 at x = 0
        return _m.negative(_nn.softplus(_m.negative(x)), name=scope)


def lbeta(x, name=None):
    """``log|B(x)|`` along the last axis: ``sum(lgamma(x)) - lgamma(sum(x))``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(round(float(sess.run(tf.lbeta([1.0, 2.0]))), 6))
    -0.693147
    """
    with name_scope(name, "lbeta", [x]):
        x = convert_to_tensor(x)
        return (_r.reduce_sum(_s.lgamma(x), -1)
                - _s.lgamma(_r.reduce_sum(x, -1)))


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """Population variance across `axis` (mean of squared deviations).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.reduce_variance([[1.0, 2.0], [3.0, 4.0]])))
    1.25
    """
    with name_scope(name, "reduce_variance", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        if not (x.dtype.is_floating or x.dtype.is_complex):
            raise TypeError(f"reduce_variance: input_tensor must be floating or complex, "
                            f"got {x.dtype.name}; cast it with tf.cast first")
        mean = _r.reduce_mean(x, axis, keepdims=True)
        dev = x - mean
        if x.dtype.is_complex:
            dev = _m.abs(dev)
        sq = dev * dev
        return _r.reduce_mean(sq, axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """Population standard deviation across `axis`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.reduce_std([1.0, 3.0])))
    1.0
    """
    with name_scope(name, "reduce_std", [input_tensor]):
        return _m.sqrt(reduce_variance(input_tensor, axis, keepdims))




def reciprocal_no_nan(x, name=None):
    """``1 / x``, 0 where ``x == 0``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.reciprocal_no_nan([0.0, 2.0])))
    [0.  0.5]
    """
    with name_scope(name, "reciprocal_no_nan", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        one = convert_to_tensor(1, dtype=x.dtype.base_dtype, name="one")
        return _m.div_no_nan(one, x, name=scope)




def count_nonzero(input_tensor=None, axis=None, keepdims=None, dtype=_dtypes.int64,
                  name=None, reduction_indices=None, keep_dims=None, input=None):
    """Number of non-zero elements across `axis` (TensorFlow 1.x's signature).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.count_nonzero([[0, 1], [2, 0]], axis=1)))
    [1 1]
    """
    if input is not None:  # TF 2's name of `input_tensor`
        if input_tensor is not None:
            raise ValueError("Cannot specify both 'input' and 'input_tensor'")
        input_tensor = input
    if axis is None:
        axis = reduction_indices
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor)
        zero = _a.zeros_like(x)
        nonzero = _m.cast(_m.not_equal(x, zero), _dtypes.int64)
        return _m.cast(_r.reduce_sum(nonzero, axis, keepdims=_keep(keepdims, keep_dims)),
                       dtype)


def zero_fraction(value, name=None):
    """The fraction of `value`'s elements that are zero, as a float32 scalar.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.zero_fraction([0.0, 1.0, 0.0, 2.0])))
    0.5
    """
    with name_scope(name, "zero_fraction", [value]):
        x = convert_to_tensor(value)
        zeros = _m.cast(_m.equal(x, _a.zeros_like(x)), _dtypes.float32)
        return _r.reduce_mean(zeros)


def confusion_matrix(labels, predictions, num_classes=None, dtype=_dtypes.int32, name=None,
                     weights=None):
    """``cm[i, j]`` = (weighted) number of examples with label ``i`` predicted as ``j``.
    Without `num_classes` the matrix is ``max(labels, predictions) + 1`` wide.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.confusion_matrix([1, 2], [2, 2], num_classes=3)))
    [[0 0 0]
     [0 0 1]
     [0 0 1]]
    """
    with name_scope(name, "confusion_matrix", [labels, predictions, num_classes, weights]):
        labels = _m.cast(convert_to_tensor(labels), _dtypes.int64)
        predictions = _m.cast(convert_to_tensor(predictions), _dtypes.int64)
        if labels.shape.ndims not in (None, 1) or predictions.shape.ndims not in (None, 1):
            raise ValueError(f"confusion_matrix: labels and predictions must be vectors, got "
                             f"shapes {labels.shape} and {predictions.shape}")
        # As TensorFlow: run-time checks that every class id is in [0, num_classes).
        checks = [_check.assert_non_negative(labels, message="`labels` contains negative "
                                             "values"),
                  _check.assert_non_negative(predictions, message="`predictions` contains "
                                             "negative values")]
        if num_classes is None:
            n = _m.maximum(_r.reduce_max(labels), _r.reduce_max(predictions)) + 1
        else:
            n = _m.cast(convert_to_tensor(num_classes), _dtypes.int64)
            checks += [_check.assert_less(labels, n, message="`labels` out of bound"),
                       _check.assert_less(predictions, n,
                                          message="`predictions` out of bound")]
        with control_dependencies(checks):
            labels = _a.identity(labels)
        values = (_a.ones_like(labels, dtype=dtype) if weights is None
                  else _m.cast(convert_to_tensor(weights), dtype))
        flat = _seg.unsorted_segment_sum(values, labels * n + predictions, n * n)
        return _a.reshape(flat, _a.stack([n, n]))


def bessel_i0(x, name=None):
    """Modified Bessel function of the first kind, order 0.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.bessel_i0([0.0])))
    [1.]
    """
    with name_scope(name, "bessel_i0", [x]):
        x = convert_to_tensor(x)
        return _s.bessel_i0e(x) * _m.exp(_m.abs(x))


def bessel_i1(x, name=None):
    """Modified Bessel function of the first kind, order 1.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.bessel_i1([0.0])))
    [0.]
    """
    with name_scope(name, "bessel_i1", [x]):
        x = convert_to_tensor(x)
        return _s.bessel_i1e(x) * _m.exp(_m.abs(x))


def scalar_mul(scalar, x, name=None):
    """``scalar * x`` for a scalar `scalar` (a 0-d tensor or a number).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.scalar_mul(2.0, [1.0, 3.0])))
    [2. 6.]
    """
    with name_scope(name, "scalar_mul", [scalar, x]):
        x = convert_to_tensor(x)
        s = convert_to_tensor(scalar, dtype=x.dtype.base_dtype)
        if s.shape.ndims not in (None, 0):
            raise ValueError(f"scalar_mul: scalar must be a 0-d tensor, got shape {s.shape}")
        return s * x


def erfcinv(x, name=None):
    """Inverse of `erfc`: ``-ndtri(x / 2) / sqrt(2)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.erfcinv([1.0])))
    [-0.]
    """
    with name_scope(name, "erfcinv", [x]):
        x = convert_to_tensor(x)
        half = _a.ones_like(x) * 0.5
        return _s.ndtri(x * half) * (-0.7071067811865476)


def polyval(coeffs, x, name=None):
    """The polynomial ``coeffs[0] * x**(n-1) + ... + coeffs[n-1]`` at `x` (Horner's rule);
    `coeffs` is a list of tensors broadcastable with `x`. No coefficients give zeros.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.polyval([1.0, 0.0, -2.0], tf.constant([2.0, 3.0]))))
    [2. 7.]
    """
    if not isinstance(coeffs, list | tuple):
        raise ValueError(f"polyval: coeffs must be a list of tensors, got {type(coeffs)}")
    with name_scope(name, "polyval", [*coeffs, x]):
        x = convert_to_tensor(x)
        if not coeffs:
            return _a.zeros_like(x)
        p = convert_to_tensor(coeffs[0], dtype=x.dtype.base_dtype)
        for c in coeffs[1:]:
            p = convert_to_tensor(c, dtype=x.dtype.base_dtype) + p * x
        return p




def _monotone(x, name, default, strict):
    with name_scope(name, default, [x]):
        x = convert_to_tensor(x)
        if not (x.dtype.is_floating or x.dtype.is_integer):
            raise TypeError(f"{default}: expected a numeric tensor, got {x.dtype.name} "
                            f"({x.name})")
        flat = _a.reshape(x, [-1])
        before, after = flat[:-1], flat[1:]
        ok = _m.less(before, after) if strict else _m.less_equal(before, after)
        return _r.reduce_all(ok)


def is_non_decreasing(x, name=None):
    """True when the elements of `x`, in row-major order, never decrease (also for fewer
    than two elements).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.is_non_decreasing([1, 1, 2])))
    True
    """
    return _monotone(x, name, "is_non_decreasing", strict=False)


def is_strictly_increasing(x, name=None):
    """True when the elements of `x`, in row-major order, strictly increase (also for
    fewer than two elements).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.math.is_strictly_increasing([1, 1, 2])))
    False
    """
    return _monotone(x, name, "is_strictly_increasing", strict=True)

"""`tf.nn.dropout` and `tf.nn.batch_normalization`, composites of existing ops (their
gradients come from those ops'), and the ``FusedBatchNorm`` ops (V1, V2, V3) with their
gradient ops ``FusedBatchNormGrad`` (V1-V3): definitions and shape functions here, CPU
kernels in `flowgraph/backends/cpu/kernels_batch_norm.py`, gradients in `nn_grad`, the
wrapper `tf.nn.fused_batch_norm` in `nn_norm_ops`.
"""

from __future__ import annotations

import numbers

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_seed, name_scope
from flowgraph.framework.registry import OpCost, register_op
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["batch_normalization", "dropout"]


def _check_rate(rate) -> None:
    if isinstance(rate, numbers.Real) and not isinstance(rate, bool):
        if not 0 <= rate < 1:
            raise ValueError(f"tf.nn.dropout: rate must be a float in the range [0, 1), "
                             f"got {rate!r} (rate = 1 - keep_prob)")


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """Zero each element of `x` with probability ``rate = 1 - keep_prob``; scale the kept
    ones by ``1 / keep_prob`` so the expected sum is unchanged.

    TF1's signature: give exactly one of `keep_prob` (probability of keeping) or `rate`
    (probability of dropping); either may be a float or a scalar tensor, e.g. a
    placeholder fed 1.0 at evaluation time. Unlike `tf.layers.dropout` there is no
    `training` switch: the mask is drawn on every run.

    Parameters
    ----------
    x : floating tensor
    keep_prob, rate : float or scalar tensor
        ``keep_prob`` in (0, 1] or ``rate`` in [0, 1).
    noise_shape : 1-D int list or tensor, optional
        Shape of the random keep mask, broadcast against ``x`` (e.g. ``[batch, 1]`` drops
        whole rows).
    seed : int, optional
        Op seed; with the graph seed it makes the masks reproducible.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     kp = tf.placeholder(tf.float32, [])
    ...     y = tf.nn.dropout(tf.ones([2, 1000]), kp, seed=1)
    ...     v = tf.Session().run(y, {kp: 0.5})
    ...     print(sorted(set(v.ravel().tolist())), 0.45 < (v > 0).mean() < 0.55)
    [0.0, 2.0] True
    """
    from flowgraph.ops import array_index_ops, array_ops, math_ops, random_ops

    if keep_prob is not None and rate is not None:
        raise ValueError("tf.nn.dropout: cannot specify both 'rate' and 'keep_prob'; "
                         "pass one of them (rate = 1 - keep_prob)")
    if keep_prob is None and rate is None:
        raise ValueError("tf.nn.dropout: you must provide 'keep_prob' or 'rate'")
    if keep_prob is not None:
        if isinstance(keep_prob, numbers.Real) and not isinstance(keep_prob, bool):
            if not 0 < keep_prob <= 1:
                raise ValueError(f"tf.nn.dropout: keep_prob must be a float in the range "
                                 f"(0, 1], got {keep_prob!r}")
            rate = 1.0 - keep_prob
        else:
            # TF1's wrapper computes ``1. - keep_prob`` outside the dropout scope.
            rate = 1.0 - convert_to_tensor(keep_prob)
    with name_scope(name, "dropout", [x]):
        x = convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        if not dtype.is_floating:
            raise ValueError(f"tf.nn.dropout: x has dtype {dtype.name}, but dropout scales "
                             f"its input and only works on floating tensors; cast x first")
        if isinstance(rate, numbers.Real) and not isinstance(rate, bool):
            _check_rate(rate)
            if rate == 0:
                # nothing is dropped: TF returns the input itself, after taking the op
                # seed a mask would have used (later random ops keep TF's numbers)
                get_seed(seed)
                return x
            scaled = math_ops.multiply(x, convert_to_tensor(1.0 / (1.0 - rate), dtype=dtype))
        else:
            rate = convert_to_tensor(rate)
            if not rate.shape.is_compatible_with([]):
                raise ValueError(f"tf.nn.dropout: rate/keep_prob must be a scalar, got shape "
                                 f"{rate.shape}")
            if rate.dtype.base_dtype != dtype:
                raise ValueError(f"tf.nn.dropout: rate (or keep_prob) has dtype "
                                 f"{rate.dtype.base_dtype.name} but x has {dtype.name}; give "
                                 f"it the dtype of x")
            one = convert_to_tensor(1, dtype=dtype)
            scaled = math_ops.realdiv(x, math_ops.subtract(one, rate))
        shape = array_ops.shape(x) if noise_shape is None else noise_shape
        noise = random_ops.random_uniform(shape, dtype=dtype, seed=seed)
        keep = math_ops.greater_equal(noise, rate)
        out = array_index_ops.where_v2(keep, scaled, convert_to_tensor(0, dtype=dtype))
        if noise_shape is None:
            out.set_shape(x.shape)
        return out


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """Normalize `x` with the given statistics: ``scale * (x - mean) / sqrt(variance +
    variance_epsilon) + offset``.

    `mean`, `variance`, `offset` and `scale` broadcast against `x` (typically the output
    of `tf.nn.moments`); `offset` and `scale` may be None (no shift, no scaling).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([[1.0, 2.0], [3.0, 6.0]])
    ...     mean, var = tf.nn.moments(x, axes=[0])
    ...     y = tf.nn.batch_normalization(x, mean, var, None, None, 1e-12)
    ...     print(tf.Session().run(y).round(3).tolist())
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    from flowgraph.ops import math_ops

    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        # TensorFlow's expression, so that its op names and constants follow: Python
        # numbers are combined in Python (``rsqrt(1.001)`` is one constant "Rsqrt/x").
        x = convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        scaled = x * math_ops.cast(inv, dtype)
        shift = offset - mean * inv if offset is not None else -mean * inv
        return scaled + math_ops.cast(shift, dtype)


# --- FusedBatchNorm (V1, V2, V3) and their gradients ------------------------------------
# x and y are T (half, bfloat16 or float32); the per-channel vectors are U (float32). The
# outputs after y: batch_mean, batch_variance, then the statistics the gradient reuses
# (reserve_space_1 = mean, reserve_space_2 = the biased variance used to normalize) and,
# for V3, an empty reserve_space_3.
_BN_ATTRS = {"T": _dtypes.float32, "epsilon": 1e-4, "exponential_avg_factor": 1.0,
             "data_format": "NHWC", "is_training": True}


def _bn_u(op):
    return _dtypes.as_dtype(op.attrs.get("U", op.attrs["T"]))


def _bn_channels(op, x):
    if x.ndims not in (None, 4):
        raise op.shape_error(f"x must be 4-D (N, H, W, C or N, C, H, W), got rank {x.ndims}")
    if x.ndims is None:
        return TensorShape([None])
    return TensorShape([x[3] if op.attrs["data_format"] in ("NHWC", b"NHWC") else x[1]])


def _bn_shape(op, x, *vectors):
    c = _bn_channels(op, x)
    names = ("scale", "offset", "mean", "variance")
    for name, v in zip(names, vectors[:2] if op.attrs["is_training"] else vectors):
        if v.ndims not in (None, 1):
            raise op.shape_error(f"{name} must be 1-D, got shape {v}")
        if not c.is_compatible_with(v):
            raise op.shape_error(f"Dimensions must be equal, but are {c[0]} and {v[0]}: x "
                                 f"has {c[0]} channels, {name} has shape {v}")
        c = c.merge_with(v)
    return [x, c, c, c, c] + ([TensorShape([0])] if op.type == "FusedBatchNormV3" else [])


def _bn_grad_shape(op, dy, x, scale, *reserve):
    c = _bn_channels(op, x)
    return [x.merge_with(dy), c, c, TensorShape([]), TensorShape([])]


for _name, _n in (("FusedBatchNorm", 5), ("FusedBatchNormV2", 5), ("FusedBatchNormV3", 6)):
    register_op(_name, attrs=dict(_BN_ATTRS, **({} if _name == "FusedBatchNorm" else
                                                {"U": _dtypes.float32})),
                num_outputs=_n, cost=OpCost.EXPENSIVE,
                dtype_fn=lambda op, n=_n: [op.inputs[0].dtype.base_dtype] + [_bn_u(op)] * (n - 1)
                )(_bn_shape)
    register_op(_name.replace("Norm", "NormGrad"),
                attrs={k: v for k, v in _BN_ATTRS.items() if k != "exponential_avg_factor"}
                | ({} if _name == "FusedBatchNorm" else {"U": _dtypes.float32}),
                num_outputs=5, cost=OpCost.EXPENSIVE,
                dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype] + [_bn_u(op)] * 4
                )(_bn_grad_shape)

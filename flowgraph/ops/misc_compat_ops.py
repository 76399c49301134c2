"""Assorted TF1 names: `approx_top_k` (with ``tf.math.approx_max_k``/``approx_min_k``;
flowgraph returns the exact top k, which meets any recall target), `fingerprint`
(TensorFlow's ``Fingerprint`` op, FarmHash64), `random_poisson` (``RandomPoissonV2``),
`extract_volume_patches`, `conv` (the generic convolution op's spelling) and
`create_partitioned_variables`.

Example
-------
>>> import flowgraph as tf
>>> values, indices = tf.approx_top_k([[1.0, 5.0, 3.0]], 2)
>>> tf.Session().run(indices).tolist()
[[1, 2]]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import attr_dtype, fixed_dtype, make_op, make_tensor, op_scope

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k", "conv",
           "create_partitioned_variables", "extract_volume_patches", "fingerprint",
           "random_poisson"]


@register_op("Fingerprint", attrs={"method": "farmhash64"},
             dtype_fn=fixed_dtype(_dtypes.uint8))
def _fingerprint_shape(op, data, method):
    if data.ndims == 0:
        raise op.shape_error("data must have rank >= 1 (one fingerprint per row)")
    return [TensorShape([data.dims[0] if data.ndims else None, 8])]


@register_op("RandomPoissonV2", attrs={"seed": 0, "seed2": 0, "dtype": _dtypes.int64},
             dtype_fn=attr_dtype("dtype"), stateful=True)
def _poisson_shape(op, shape, rate):
    from flowgraph.framework.constant_op import constant_value_as_shape

    out = constant_value_as_shape(op.inputs[0])
    return [out.concatenate(rate) if out.ndims is not None and rate.ndims is not None
            else TensorShape(None)]


# Left without a gradient, as TensorFlow leaves RandomPoissonV2:
# tf.gradients raises LookupError when a gradient reaches one.
not_differentiable("Fingerprint")


def fingerprint(data, method="farmhash64", name=None):
    """An 8-byte FarmHash64 fingerprint of each row (dimension 0) of `data` (of its bytes;
    for strings, of the row's per-string fingerprints), as uint8 ``[rows, 8]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.fingerprint(tf.constant([[1, 2]]))).tolist()
    [[76, 18, 253, 133, 168, 204, 240, 10]]
    """
    if method != "farmhash64":
        raise ValueError(f"tf.fingerprint: method must be 'farmhash64', got {method!r}")
    return make_tensor("Fingerprint", [convert_to_tensor(data, name="data"),
                                       convert_to_tensor(method, name="method")],
                       name=name or "Fingerprint")


def random_poisson(lam, shape, dtype=_dtypes.float32, seed=None, name=None):
    """Samples of Poisson distributions with rates `lam`: shape ``shape + lam.shape``.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.random_poisson([1.0, 5.0], [10]).shape.as_list()
    [10, 2]
    """
    from flowgraph.ops.random_ops import _shape_tensor, op_seeds

    seed1, seed2 = op_seeds(seed)
    with name_scope(name, "random_poisson", [lam, shape]):
        shape = _shape_tensor(shape)
        with op_scope(None, "RandomPoissonV2", (lam,)) as scope:
            rate = convert_to_tensor(lam, name="rate")
            return make_tensor("RandomPoissonV2", [shape, rate],
                               {"seed": seed1, "seed2": seed2,
                                "dtype": _dtypes.as_dtype(dtype)}, name=scope)


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """``(values, indices)`` of the `k` largest (or, without `is_max_k`, smallest)
    entries along `reduction_dimension`, sorted (op ``ApproxTopK``, as TensorFlow emits;
    flowgraph's kernel is exact, so its recall is 1)."""
    x = convert_to_tensor(input, name="input")
    op = make_op("ApproxTopK", [x], {
        "k": int(k), "reduction_dimension": int(reduction_dimension),
        "recall_target": float(recall_target), "is_max_k": bool(is_max_k),
        "reduction_input_size_override": int(reduction_input_size_override),
        "aggregate_to_topk": bool(aggregate_to_topk)}, name=name or "ApproxTopK")
    return op.outputs[0], op.outputs[1]


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """The `k` largest entries and their indices along `reduction_dimension`.

    Example
    -------
    >>> import flowgraph as tf
    >>> v, i = tf.nn.approx_max_k([[1.0, 5.0, 3.0]], 2)
    >>> tf.Session().run(i)
    array([[1, 2]], dtype=int32)
    """
    return approx_top_k(operand, k, reduction_dimension, recall_target, True, name=name)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """The `k` smallest entries and their indices along `reduction_dimension`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.math.approx_min_k([3.0, 1.0, 2.0], 2)[0]).tolist()
    [1.0, 2.0]
    """
    return approx_top_k(operand, k, reduction_dimension, recall_target, False, name=name)


def extract_volume_patches(input, ksizes, strides, padding, name=None):
    """The 3-D patches of a ``[batch, planes, rows, cols, depth]`` volume, flattened into
    the depth: ``[batch, out_planes, out_rows, out_cols, kp * kr * kc * depth]``
    (one ``ExtractVolumePatches`` op; differentiable, like `tf.extract_image_patches`).

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.reshape(tf.range(8.0), [1, 2, 2, 2, 1])
    >>> p = tf.extract_volume_patches(v, [1, 2, 2, 2, 1], [1, 1, 1, 1, 1], "VALID")
    >>> tf.Session().run(p).ravel().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    """
    from flowgraph.ops.op_util import make_tensor

    for arg, v in (("ksizes", ksizes), ("strides", strides)):
        if len(v) != 5 or v[0] != 1 or v[4] != 1:
            raise ValueError(f"tf.extract_volume_patches: {arg} must be [1, p, r, c, 1], got "
                             f"{v}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"tf.extract_volume_patches: padding must be 'SAME' or 'VALID', "
                         f"got {padding!r}")
    x = convert_to_tensor(input, name="input")
    attrs = {"ksizes": [int(v) for v in ksizes], "strides": [int(v) for v in strides],
             "padding": padding}
    return make_tensor("ExtractVolumePatches", [x], attrs, name=name or "ExtractVolumePatches")


def conv(input, filter, strides, padding, explicit_paddings=(), data_format="CHANNELS_LAST",
         dilations=(), batch_dims=1, groups=1, name=None):
    """The generic N-D convolution (TensorFlow's ``Conv`` op spelling): channels-last
    `input` ``[batch, *spatial, in]`` with `filter` ``[*spatial, in, out]``; `strides` and
    `dilations` have one entry per input dimension.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = tf.conv(tf.ones([1, 4, 4, 2]), tf.ones([2, 2, 2, 3]), [1, 1, 1, 1], "VALID")
    >>> y.shape.as_list()
    [1, 3, 3, 3]
    """
    from flowgraph.ops.nn_conv_ops import convolution

    if data_format != "CHANNELS_LAST" or batch_dims != 1 or groups != 1 or explicit_paddings:
        raise ValueError("tf.conv: flowgraph supports data_format='CHANNELS_LAST', "
                         "batch_dims=1, groups=1 and no explicit_paddings; use "
                         "tf.nn.convolution for other layouts")
    strides = list(strides)[1:-1]
    dilations = list(dilations)[1:-1] if dilations else None
    return convolution(input, filter, padding, strides=strides, dilation_rate=dilations,
                       name=name)


def create_partitioned_variables(shape, slicing, initializer, dtype=_dtypes.float32,
                                 trainable=True, collections=None, name=None, reuse=None):
    """Variables holding the slices of a `shape` tensor cut into ``slicing[d]`` parts
    along each dimension (at most one dimension cut), named ``<name>/part_<i>``; each is
    initialized with the matching slice of `initializer` (an array, or an initializer
    called with the full shape).

    Example
    -------
    >>> import numpy as np
    >>> import flowgraph as tf
    >>> parts = tf.create_partitioned_variables([5, 2], [2, 1], np.arange(10.0).reshape(5, 2),
    ...                                         name="emb")
    >>> [p.shape.as_list() for p in parts]
    [[3, 2], [2, 2]]
    """
    from flowgraph.ops.variable_scope import variable_scope
    from flowgraph.ops.variables import Variable

    shape = [int(d) for d in shape]
    slicing = [int(s) for s in slicing]
    if len(shape) != len(slicing):
        raise ValueError(f"create_partitioned_variables: slicing {slicing} must have one "
                         f"entry per dimension of shape {shape}")
    cut = [d for d, s in enumerate(slicing) if s > 1]
    if len(cut) > 1:
        raise ValueError(f"create_partitioned_variables: only one dimension can be "
                         f"partitioned, got slicing {slicing}")
    if callable(initializer):
        with name_scope(None, "init"):
            full = initializer(shape, dtype=_dtypes.as_dtype(dtype))
    else:
        full = convert_to_tensor(np.asarray(initializer), dtype=dtype)
    axis = cut[0] if cut else 0
    n = slicing[axis] if cut else 1
    base, extra = divmod(shape[axis], n)
    out = []
    with variable_scope(name, default_name="PartitionedVariable", reuse=reuse):
        start = 0
        for i in range(n):
            length = base + (1 if i < extra else 0)
            begin = [0] * len(shape)
            size = list(shape)
            begin[axis], size[axis] = start, length
            from flowgraph.ops.array_index_ops import slice as _slice

            part = _slice(full, begin, size)
            out.append(Variable(part, name=f"part_{i}", dtype=dtype, trainable=trainable,
                                collections=collections))
            start += length
    return out

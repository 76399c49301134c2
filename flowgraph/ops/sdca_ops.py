"""The SDCA helpers of `tf.train`: `sdca_fprint` (128-bit fingerprints of feature
strings, TensorFlow's bytes) and `sdca_shrink_l1` (soft-thresholding of weights in
place). Kernels: `flowgraph/backends/cpu/kernels_sdca.py`.

Example
-------
>>> import flowgraph as tf
>>> fp = tf.train.sdca_fprint(tf.constant(["abc"]))
>>> fp.shape.as_list(), fp.dtype
([1, 2], tf.int64)
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__ = ["sdca_fprint", "sdca_optimizer", "sdca_shrink_l1"]


@register_op("SdcaFprint", dtype_fn=fixed_dtype(_dtypes.int64))
def _sdca_fprint_shape(op, input):
    if input.ndims is not None and input.ndims != 1:
        raise op.shape_error(f"input must be a vector of strings, got shape {input}")
    n = input[0].value if input.ndims == 1 else None
    return [TensorShape([n, 2])]


@register_op("SdcaShrinkL1", attrs={"num_features": 0, "l1": 0.0, "l2": 0.0},
             num_outputs=0, dtype_fn=fixed_dtype(), stateful=True, ref_inputs="all")
def _sdca_shrink_l1_shape(op, *weights):
    return []


not_differentiable("SdcaFprint", "SdcaShrinkL1")


def sdca_fprint(input, name=None):
    """``[n, 2]`` int64: the low and high 64 bits of FarmHash's 128-bit fingerprint of
    each string of the vector `input` (what TensorFlow's SDCA uses to hash features).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.Session().run(tf.train.sdca_fprint(tf.constant(["abc"]))).tolist()
    [[4143508125394299908, -6879828354153669051]]
    """
    t = convert_to_tensor(input, dtype=_dtypes.string, name="input")
    return make_tensor("SdcaFprint", [t], name=name or "SdcaFprint")


def sdca_shrink_l1(weights, l1, l2, name=None):
    """Soft-threshold each variable of `weights` in place by ``l1 / l2``:
    ``w <- sign(w) * max(|w| - l1 / l2, 0)``; returns the op.

    Example
    -------
    >>> import flowgraph as tf
    >>> w = tf.Variable([0.5, -0.05, 2.0])
    >>> shrink = tf.train.sdca_shrink_l1([w], l1=0.1, l2=1.0)
    >>> with tf.Session() as sess:
    ...     sess.run(w.initializer); sess.run(shrink)
    ...     print([round(float(v), 4) for v in sess.run(w)])
    [0.4, -0.0, 1.9]
    """
    refs = [w._ref() if hasattr(w, "_ref") else w for w in weights]
    for r in refs:
        if not r.dtype.is_ref_dtype or r.dtype.base_dtype != _dtypes.float32:
            raise TypeError(f"sdca_shrink_l1: weights must be float32 variables, got "
                            f"{r.name} of dtype {r.dtype.name}")
    return make_op("SdcaShrinkL1", refs, {"num_features": len(refs), "l1": float(l1),
                                          "l2": float(l2)}, name=name or "SdcaShrinkL1")


# -- the solver --------------------------------------------------------------------------
_LOSSES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss",
           "poisson_loss")


def _sdca_outputs(op) -> int:
    return 1 + int(op.attrs["num_sparse_features"]) + int(op.attrs["num_dense_features"])


@register_op("SdcaOptimizer",
             attrs={"loss_type": "logistic_loss", "adaptative": False,
                    "num_sparse_features": 0, "num_sparse_features_with_values": 0,
                    "num_dense_features": 0, "l1": 0.0, "l2": 0.0,
                    "num_loss_partitions": 1, "num_inner_iterations": 1},
             num_outputs=_sdca_outputs,
             dtype_fn=lambda op: [_dtypes.float32] * _sdca_outputs(op), cost="expensive")
def _sdca_optimizer_shape(op, *shapes):
    nsf = int(op.attrs["num_sparse_features"])
    nsv = int(op.attrs["num_sparse_features_with_values"])
    ndf = int(op.attrs["num_dense_features"])
    sparse_weights = shapes[3 * nsf - (nsf - nsv) + ndf + 2 + nsf:][:nsf]
    dense_weights = shapes[3 * nsf - (nsf - nsv) + ndf + 2 + 2 * nsf:][:ndf]
    state = shapes[-1]
    if state.ndims is not None and (state.ndims != 2 or state[1].value not in (None, 4)):
        raise op.shape_error(f"example_state_data must be [num_examples, 4], got {state}")
    return [TensorShape([state[0].value if state.ndims else None, 4]), *sparse_weights,
            *dense_weights]


not_differentiable("SdcaOptimizer")


def sdca_optimizer(sparse_example_indices, sparse_feature_indices, sparse_feature_values,
                   dense_features, example_weights, example_labels, sparse_indices,
                   sparse_weights, dense_weights, example_state_data, loss_type, l1, l2,
                   num_loss_partitions, num_inner_iterations, adaptative=True, name=None):
    """One SDCA (stochastic dual coordinate ascent) pass set over a linear model: returns
    ``(out_example_state_data, out_delta_sparse_weights, out_delta_dense_weights)``.

    Each example's dual variable is updated in turn (`loss_type`: logistic, squared,
    hinge, smooth hinge or Poisson loss, with TensorFlow's closed forms and Newton
    steps) against the weights plus the deltas so far, shrunk by ``l1 / l2``; the
    state rows hold ``[dual, primal loss, dual loss, example weight]``. TensorFlow
    visits the examples in a random (or, with `adaptative`, importance-sampled, with
    replacement) order that differs from run to run; flowgraph visits them in order,
    so results are deterministic (and equal to TensorFlow's for one example).

    Example
    -------
    >>> import flowgraph as tf
    >>> state, sw, dw = tf.train.sdca_optimizer(
    ...     [], [], [], [tf.constant([[1.0, 2.0]])], [1.0], [3.0], [], [],
    ...     [tf.constant([0.0, 0.0])], tf.zeros([1, 4]), "squared_loss", l1=0.0, l2=1.0,
    ...     num_loss_partitions=1, num_inner_iterations=1)
    >>> [round(float(v), 4) for v in tf.Session().run(dw[0])]
    [0.5, 1.0]
    """
    if loss_type not in _LOSSES:
        raise ValueError(f"sdca_optimizer: unsupported loss_type {loss_type!r}; expected "
                         f"one of {', '.join(_LOSSES)}")
    f32, i64 = _dtypes.float32, _dtypes.int64
    groups = [[convert_to_tensor(t, dtype=i64) for t in sparse_example_indices],
              [convert_to_tensor(t, dtype=i64) for t in sparse_feature_indices],
              [convert_to_tensor(t, dtype=f32) for t in sparse_feature_values],
              [convert_to_tensor(t, dtype=f32) for t in dense_features],
              [convert_to_tensor(example_weights, dtype=f32)],
              [convert_to_tensor(example_labels, dtype=f32)],
              [convert_to_tensor(t, dtype=i64) for t in sparse_indices],
              [convert_to_tensor(t, dtype=f32) for t in sparse_weights],
              [convert_to_tensor(t, dtype=f32) for t in dense_weights],
              [convert_to_tensor(example_state_data, dtype=f32)]]
    nsf, ndf = len(groups[0]), len(groups[3])
    if not (len(groups[1]) == len(groups[6]) == len(groups[7]) == nsf) \
            or len(groups[8]) != ndf or len(groups[2]) > nsf:
        raise ValueError("sdca_optimizer: the sparse lists (example indices, feature "
                         "indices, indices, weights) must have one entry per sparse feature "
                         "group and dense_weights one per dense_features entry")
    op = make_op("SdcaOptimizer", [t for g in groups for t in g], {
        "loss_type": loss_type, "adaptative": bool(adaptative), "num_sparse_features": nsf,
        "num_sparse_features_with_values": len(groups[2]), "num_dense_features": ndf,
        "l1": float(l1), "l2": float(l2), "num_loss_partitions": int(num_loss_partitions),
        "num_inner_iterations": int(num_inner_iterations)}, name=name or "SdcaOptimizer")
    outs = op.outputs
    return outs[0], list(outs[1:1 + nsf]), list(outs[1 + nsf:])

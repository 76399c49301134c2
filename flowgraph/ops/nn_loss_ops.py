"""Neural-network loss ops: softmax / sigmoid cross-entropies, `l2_loss`, `log_poisson_loss`,
and the ranking ops `top_k` / `in_top_k`.

Fused ops (with CPU kernels in ``backends/cpu/kernels_nn_loss.py``), as in TensorFlow:

    SoftmaxCrossEntropyWithLogits(features [B, C], labels [B, C]) -> (loss [B], backprop [B, C])
    SparseSoftmaxCrossEntropyWithLogits(features [B, C], labels [B] int) -> (loss, backprop)
    L2Loss(t) -> sum(t ** 2) / 2
    TopKV2(input [..., n], k) -> (values [..., k], indices [..., k] int32)
    InTopKV2(predictions [B, C] float32, targets [B], k) -> bool [B]

The cross-entropies use the log-sum-exp shift (``logits - max(logits)``), so logits of
±1000 give finite losses. The wrappers reshape inputs of any rank to the 2-D form the fused
ops take and reshape the loss back. `sigmoid_cross_entropy_with_logits`,
`weighted_cross_entropy_with_logits` and `log_poisson_loss` are compositions of elementwise
ops, as in TensorFlow.

None of these is exposed at the top level: they are ``tf.nn.*`` (see `flowgraph.nn`).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.ops.nn_loss_ops import sparse_softmax_cross_entropy_with_logits
>>> loss = sparse_softmax_cross_entropy_with_logits(labels=[0], logits=[[1000.0, 0.0]])
>>> float(tf.Session().run(loss)[0])
0.0
"""

from __future__ import annotations

import collections
import math

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.registry import OpCost, not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.nn_ops import FLOATS, REALS, _check_dtype, relu
from flowgraph.ops.op_util import fixed_dtype, make_op, make_tensor

__all__: list[str] = []  # tf.nn.* only; see flowgraph/nn/__init__.py

_INDEX_DTYPES = (_dtypes.int32, _dtypes.int64)


def _ensure_given(fn_name: str, labels, logits) -> None:
    # TF 1.x refused positional calls with a leading `_sentinel` argument; TF 2.15's
    # compat.v1 functions take `labels` and `logits` by position, as these do.
    if labels is None or logits is None:
        raise ValueError(f"{fn_name}: both labels and logits must be provided.")


def _batch_dim(op, a: TensorShape, b: TensorShape, what: str):
    if not a[0].is_compatible_with(b[0]):
        raise op.shape_error(f"{what} must have the same batch size ({a[0]} vs {b[0]})")
    return a[0].merge_with(b[0])


# -- SoftmaxCrossEntropyWithLogits ----------------------------------------------------------
@register_op("SoftmaxCrossEntropyWithLogits", num_outputs=2, cost=OpCost.EXPENSIVE)
def _softmax_xent_shape(op, features, labels):
    for what, s in (("features (logits)", features), ("labels", labels)):
        if s.ndims is not None and s.ndims != 2:
            raise op.shape_error(f"{what} must be 2-D [batch, classes] but has shape {s}")
    if features.ndims is None or labels.ndims is None:
        known = features if features.ndims is not None else labels
        if known.ndims is None:
            return [TensorShape([None]), TensorShape([None, None])]
        return [TensorShape([known[0]]), known]
    if not features.is_compatible_with(labels):
        raise op.shape_error(
            f"logits and labels must be broadcastable: logits_size={features.as_list()} "
            f"labels_size={labels.as_list()}")
    merged = features.merge_with(labels)
    return [TensorShape([merged[0]]), merged]


@register_op("SparseSoftmaxCrossEntropyWithLogits", num_outputs=2, cost=OpCost.EXPENSIVE)
def _sparse_softmax_xent_shape(op, features, labels):
    if features.ndims is not None and features.ndims != 2:
        raise op.shape_error(f"features (logits) must be 2-D but has shape {features}")
    if labels.ndims is not None and labels.ndims != 1:
        raise op.shape_error(f"labels must be 1-D but has shape {labels}")
    if features.ndims is None:
        n = labels[0] if labels.ndims is not None else None
        return [TensorShape([n]), TensorShape([n, None])]
    n = features[0] if labels.ndims is None else _batch_dim(op, features, labels,
                                                             "logits and labels")
    return [TensorShape([n]), TensorShape([n, features[1]])]


def _move_axis_last(x, axis: int, rank: int):
    perm = [*[i for i in range(rank) if i != axis], axis]
    return array_ops.transpose(x, perm)


def _rank(x):
    """TF's ``array_ops.rank``: a constant named "Rank" when the rank is static."""
    if x.shape.ndims is not None:
        return constant(x.shape.ndims, _dtypes.int32, name="Rank")
    return array_ops.rank(x)


def _shape(x):
    """TF's ``array_ops.shape``: a constant named "Shape" when the shape is static."""
    if x.shape.is_fully_defined():
        return constant(x.shape.as_list(), _dtypes.int32, name="Shape")
    return array_ops.shape(x)


def _flatten_outer_dims(x):
    """``x`` reshaped to ``[-1, classes]`` with TF's ops (Rank, Shape, Sub, Slice, concat,
    Reshape), the static shape kept where it is known."""
    rank = _rank(x)
    last = array_ops.slice(_shape(x), [math_ops.subtract(rank, 1)], [1])
    out = array_ops.reshape(x, array_ops.concat([[-1], last], 0))
    dims = x.shape.dims
    if dims is not None and all(d.value is not None for d in dims[:-1]):
        out.set_shape([math.prod(d.value for d in dims[:-1]), dims[-1].value])
    elif dims is not None:
        out.set_shape([None, dims[-1].value])
    return out


def _flatten_classes(x):
    """``x`` as ``[-1, classes]``, with the number of classes taken at run time."""
    if x.shape.ndims == 2:
        return x
    classes = array_ops.shape(x)[-1:]
    return array_ops.reshape(x, array_ops.concat([[-1], classes], 0))


def _xent_float(x, what: str):
    t = convert_to_tensor(x, name=what)
    _check_dtype(t, FLOATS, "SoftmaxCrossEntropyWithLogits", what)
    return t


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """Cross-entropy ``-sum(labels * log_softmax(logits), axis)`` between a probability
    distribution `labels` and unnormalized `logits`, computed stably.

    `labels` has the shape of `logits` (each slice along `axis` a distribution, e.g.
    one-hot); the result has that shape without `axis` (default -1). Gradients flow into
    both `labels` and `logits`. `dim` is the deprecated alias of `axis`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import softmax_cross_entropy_with_logits_v2
    >>> x = softmax_cross_entropy_with_logits_v2(labels=[[0.0, 1.0]], logits=[[0.0, 0.0]])
    >>> print(tf.Session().run(x).round(4))
    [0.6931]
    """
    if dim is not None:
        if axis is not None and axis != dim:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    axis = -1 if axis is None else int(axis)
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = _xent_float(logits, "logits")
        labels = convert_to_tensor(labels, name="labels")
        # Half-precision logits run the op in float32; the loss is cast back at the end.
        half = logits.dtype.base_dtype
        half = half if half in (_dtypes.float16, _dtypes.bfloat16) else None
        if half:
            logits = math_ops.cast(logits, _dtypes.float32)
        if labels.dtype.base_dtype != logits.dtype.base_dtype:
            if not (labels.dtype.is_floating or labels.dtype.is_integer
                    or labels.dtype.base_dtype == _dtypes.bool):
                raise TypeError(f"softmax_cross_entropy_with_logits: labels of dtype "
                                f"{labels.dtype.name} cannot be used with {logits.dtype.name} "
                                "logits")
            labels = math_ops.cast(labels, logits.dtype.base_dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(
                f"`logits` and `labels` must have the same shape, received "
                f"({logits.shape} vs {labels.shape}) in '{scope[:-1]}'.")
        rank = logits.shape.ndims
        if rank == 0:
            raise ValueError(f"'{scope[:-1]}': logits must have rank at least 1, got a scalar")
        if rank is not None:
            if not -rank <= axis < rank:
                raise ValueError(f"'{scope[:-1]}': axis {axis} is out of range for logits of "
                                 f"rank {rank}")
            axis %= rank
            if axis != rank - 1:
                logits = _move_axis_last(logits, axis, rank)
                labels = _move_axis_last(labels, axis, rank)
        elif axis != -1:
            raise ValueError(f"'{scope[:-1]}': axis={axis} needs logits of known rank")
        # TF's layout, so the names match ("<scope>/Reshape_2" is the loss): flatten both
        # inputs to [-1, classes], run the op, reshape back to the batch shape.
        static = logits.shape.merge_with(labels.shape)
        input_rank = _rank(logits)
        input_shape = _shape(logits)
        op = make_op("SoftmaxCrossEntropyWithLogits",
                     [_flatten_outer_dims(logits), _flatten_outer_dims(labels)], name=scope)
        output_shape = array_ops.slice(input_shape, [0],
                                       [math_ops.subtract(input_rank, 1)])
        loss = array_ops.reshape(op.outputs[0], output_shape)
        if static.ndims is not None:
            loss.set_shape(static[:-1])
        return math_ops.cast(loss, half) if half else loss


def softmax_cross_entropy_with_logits(labels=None, logits=None, dim=-1, name=None,
                                      axis=None):
    """TF1's ``tf.nn.softmax_cross_entropy_with_logits``: like
    `softmax_cross_entropy_with_logits_v2`, but no gradient flows into `labels` (they are
    wrapped in ``stop_gradient``).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import softmax_cross_entropy_with_logits
    >>> x = softmax_cross_entropy_with_logits(labels=[[1.0, 0.0]], logits=[[1000.0, 0.0]])
    >>> tf.Session().run(x)
    array([0.], dtype=float32)
    """
    _ensure_given("softmax_cross_entropy_with_logits", labels, logits)
    if axis is not None and dim != -1 and axis != dim:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis,
                                                name=scope)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Cross-entropy between integer class `labels` and unnormalized `logits`:
    ``-log_softmax(logits)[..., label]``, computed stably.

    `labels` (int32 or int64) has the shape of `logits` without the last dimension; each
    must be in ``[0, num_classes)``, else running the op raises InvalidArgumentError naming
    the offending value. The result has the shape of `labels` and the dtype of `logits`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import sparse_softmax_cross_entropy_with_logits
    >>> x = sparse_softmax_cross_entropy_with_logits(labels=[1], logits=[[0.0, 0.0]])
    >>> print(tf.Session().run(x).round(4))
    [0.6931]
    """
    _ensure_given("sparse_softmax_cross_entropy_with_logits", labels, logits)
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        labels = convert_to_tensor(labels, name="labels")
        logits = convert_to_tensor(logits, name="logits")
        _check_dtype(logits, FLOATS, "SparseSoftmaxCrossEntropyWithLogits", "features")
        _check_dtype(labels, _INDEX_DTYPES, "SparseSoftmaxCrossEntropyWithLogits", "labels")
        lr, gr = labels.shape.ndims, logits.shape.ndims
        if gr == 0:
            raise ValueError(f"Logits cannot be scalars - received shape {logits.shape}.")
        if lr is not None and gr is not None:
            if lr != gr - 1:
                raise ValueError(
                    f"Rank mismatch: Rank of labels (received {lr}, shape {labels.shape}) "
                    f"should equal rank of logits minus 1 (received {gr}, shape "
                    f"{logits.shape}) in '{scope[:-1]}'.")
            if not labels.shape.is_compatible_with(logits.shape[:-1]):
                raise ValueError(
                    f"Shape mismatch: The shape of labels (received {labels.shape}) should "
                    f"equal the shape of logits except for the last dimension (received "
                    f"{logits.shape}) in '{scope[:-1]}'.")
        # TF's layout: inside the scope, the op carries `name` (default: its type), so
        # the loss is "SparseSoftmaxCrossEntropyWithLogits/SparseSoftmaxCrossEntropyWithLogits".
        op_name = name or "SparseSoftmaxCrossEntropyWithLogits"
        # float16 logits run the op in float32; the loss is cast back at the end.
        half = logits.dtype.base_dtype == _dtypes.float16
        precise = math_ops.cast(logits, _dtypes.float32) if half else logits
        labels_shape = array_ops.shape(labels)
        if gr == 2:
            out = make_op("SparseSoftmaxCrossEntropyWithLogits", [precise, labels],
                          name=op_name).outputs[0]
            return math_ops.cast(out, _dtypes.float16) if half else out
        flat_logits = _flatten_classes(precise)
        flat_labels = array_ops.reshape(labels, [-1])
        op = make_op("SparseSoftmaxCrossEntropyWithLogits", [flat_logits, flat_labels],
                     name=op_name)
        out = array_ops.reshape(op.outputs[0], labels_shape)
        if lr is not None:
            out.set_shape(labels.shape.merge_with(logits.shape[:-1]) if gr is not None
                          else labels.shape)
        return math_ops.cast(out, _dtypes.float16) if half else out


# -- elementwise compositions ------------------------------------------------------------------
def _same_shape_floats(fn_name: str, a, b, a_name: str, b_name: str):
    x = convert_to_tensor(b, name=b_name)
    _check_dtype(x, FLOATS, fn_name, b_name)
    y = convert_to_tensor(a, dtype=x.dtype.base_dtype, name=a_name)
    if not x.shape.is_compatible_with(y.shape):
        raise ValueError(f"{b_name} and {a_name} must have the same shape "
                         f"({x.shape} vs {y.shape})")
    return y, x


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Elementwise logistic loss of `logits` against `labels` in [0, 1]:
    ``max(x, 0) - x * z + log(1 + exp(-|x|))`` (stable for large ``|x|``).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import sigmoid_cross_entropy_with_logits
    >>> x = sigmoid_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[0.0, -1000.0])
    >>> print(tf.Session().run(x).round(4))
    [0.6931 0.    ]
    """
    _ensure_given("sigmoid_cross_entropy_with_logits", labels, logits)
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        z, x = _same_shape_floats("sigmoid_cross_entropy_with_logits", labels, logits,
                                  "labels", "logits")
        zeros = array_ops.zeros_like(x)
        positive = math_ops.greater_equal(x, zeros)
        relu_x = array_ops.where(positive, x, zeros)
        neg_abs_x = array_ops.where(positive, -x, x)
        return math_ops.add(relu_x - x * z, math_ops.log1p(math_ops.exp(neg_abs_x)),
                            name=scope)


def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """Logistic loss with the positive term weighted by `pos_weight`:
    ``(1 - z) * x + (1 + (q - 1) * z) * log(1 + exp(-x))``, computed stably.

    `targets` is TF1's deprecated name for `labels`.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import weighted_cross_entropy_with_logits
    >>> x = weighted_cross_entropy_with_logits(labels=[1.0], logits=[0.0], pos_weight=2.0)
    >>> print(tf.Session().run(x).round(4))
    [1.3863]
    """
    if targets is not None:
        if labels is not None:
            raise ValueError("Cannot specify both 'labels' and 'targets'")
        labels = targets
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("weighted_cross_entropy_with_logits: labels, logits and pos_weight "
                         "must all be given")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        z, x = _same_shape_floats("weighted_cross_entropy_with_logits", labels, logits,
                                  "labels", "logits")
        # TensorFlow's expression (a Python pos_weight stays a Python number: "mul/x")
        log_weight = 1 + (pos_weight - 1) * z
        return math_ops.add(
            (1 - z) * x,
            log_weight * (math_ops.log1p(math_ops.exp(-math_ops.abs(x))) + relu(-x)),
            name=scope)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """Poisson negative log-likelihood given the log of the rate:
    ``exp(log_input) - log_input * targets``.

    With `compute_full_loss`, Stirling's approximation of ``log(targets!)``,
    ``t * log(t) - t + 0.5 * log(2 * pi * t)``, is added where ``targets > 1``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import log_poisson_loss
    >>> print(tf.Session().run(log_poisson_loss([1.0], [0.0])))
    [1.]
    """
    with name_scope(name, "log_poisson_loss", [log_input, targets]) as scope:
        t, x = _same_shape_floats("log_poisson_loss", targets, log_input, "targets",
                                  "log_input")
        result = math_ops.exp(x) - x * t
        if not compute_full_loss:
            return result
        zeros = array_ops.zeros_like(t)
        ones = array_ops.ones_like(t)
        # log(0) at t == 0 is masked below; keep the argument positive to avoid -inf * 0.
        safe_t = array_ops.where(math_ops.greater(t, zeros), t, ones)
        stirling = (t * math_ops.log(safe_t) - t
                    + 0.5 * math_ops.log(2.0 * math.pi * safe_t))
        small = math_ops.logical_and(math_ops.greater_equal(t, zeros),
                                     math_ops.less_equal(t, ones))
        return math_ops.add(result, array_ops.where(small, zeros, stirling), name=scope)


# -- L2Loss ----------------------------------------------------------------------------------
@register_op("L2Loss")
def _l2_loss_shape(op, t):
    return [TensorShape([])]


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``, a scalar of the dtype of `t` (a floating tensor).

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import l2_loss
    >>> float(tf.Session().run(l2_loss([1.0, 2.0])))
    2.5
    """
    x = convert_to_tensor(t, name="t")
    _check_dtype(x, FLOATS, "L2Loss", "t")
    return make_tensor("L2Loss", [x], name=name or "L2Loss")


# -- TopKV2 / InTopKV2 ---------------------------------------------------------------------------
def _top_k_dtypes(op):
    return [op.inputs[0].dtype.base_dtype,
            _dtypes.as_dtype(op.attrs.get("index_type", _dtypes.int32))]


@register_op("TopKV2", attrs={"sorted": True, "index_type": _dtypes.int32}, num_outputs=2,
             dtype_fn=_top_k_dtypes)
def _top_k_shape(op, x, k_shape):
    if k_shape.ndims not in (None, 0):
        raise op.shape_error(f"k must be a scalar but has shape {k_shape}")
    k = constant_value(op.inputs[1])
    k = None if k is None else int(k)
    if k is not None and k < 0:
        raise op.shape_error(f"k must be non-negative but is {k}")
    if x.ndims is None:
        return [TensorShape(None)] * 2
    if x.ndims < 1:
        raise op.shape_error(f"input must be at least 1-D but has shape {x}")
    last = x[-1].value
    if k is not None and last is not None and last < k:
        raise op.shape_error(f"input must have last dimension >= k = {k} but is {last}")
    out = TensorShape([*x.dims[:-1], k])
    return [out, out]


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])
TopKV2.__doc__ = "The ``(values, indices)`` pair returned by `top_k`."


def top_k(input, k=1, sorted=True, index_type=_dtypes.int32, name=None):
    """The `k` largest entries along the last dimension of `input` and their indices.

    Returns ``(values, indices)`` (indices of `index_type`: int16, int32 or int64),
    largest first; equal values keep their
    order (the lower index first); NaN counts as the largest value. `sorted=False` is
    accepted and returns the same sorted result.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import top_k
    >>> values, indices = tf.Session().run(top_k([3.0, 1.0, 3.0, 2.0], k=2))
    >>> values, indices
    (array([3., 3.], dtype=float32), array([0, 2], dtype=int32))
    """
    with name_scope(name, "TopKV2", [input]) as scope:
        x = convert_to_tensor(input, name="input")
        _check_dtype(x, REALS, "TopKV2", "input")
        kt = convert_to_tensor(k, dtype=_dtypes.int32, name="k")
        index_type = _dtypes.as_dtype(index_type).base_dtype
        if index_type not in (_dtypes.int16, _dtypes.int32, _dtypes.int64):
            raise TypeError(f"TopKV2: index_type must be int16, int32 or int64, got "
                            f"{index_type.name}")
    op = make_op("TopKV2", [x, kt], {"sorted": bool(sorted), "index_type": index_type},
                 name=scope)
    return TopKV2(op.outputs[0], op.outputs[1])


@register_op("InTopKV2", dtype_fn=fixed_dtype(_dtypes.bool))
def _in_top_k_shape(op, predictions, targets, k):
    if predictions.ndims is not None and predictions.ndims != 2:
        raise op.shape_error(f"predictions must be 2-D but has shape {predictions}")
    if targets.ndims is not None and targets.ndims != 1:
        raise op.shape_error(f"targets must be 1-D but has shape {targets}")
    if k.ndims not in (None, 0):
        raise op.shape_error(f"k must be a scalar but has shape {k}")
    if predictions.ndims is None:
        return [TensorShape([targets[0] if targets.ndims is not None else None])]
    if targets.ndims is None:
        return [TensorShape([predictions[0]])]
    return [TensorShape([_batch_dim(op, predictions, targets, "predictions and targets")])]


not_differentiable("InTopKV2")


def in_top_k(predictions, targets, k, name=None):
    """Whether ``targets[i]`` is among the top `k` classes of ``predictions[i]``.

    A target is in the top `k` when fewer than `k` classes have a strictly larger
    prediction (so ties are all in); a non-finite prediction for the target or a target
    outside ``[0, classes)`` gives False. `predictions` is float32 ``[batch, classes]``,
    `targets` int32/int64 ``[batch]``.

    Example
    -------
    >>> import flowgraph as tf
    >>> from flowgraph.ops.nn_loss_ops import in_top_k
    >>> tf.Session().run(in_top_k([[0.1, 0.9], [0.8, 0.2]], [1, 1], k=1))
    array([ True, False])
    """
    with name_scope(name, "in_top_k", [predictions, targets]):
        p = convert_to_tensor(predictions, preferred_dtype=_dtypes.float32,
                              name="predictions")
        if p.dtype.base_dtype != _dtypes.float32:
            if isinstance(predictions, Tensor) or p.dtype.is_floating:
                raise TypeError(f"Input 'predictions' of 'InTopKV2' Op has type "
                                f"{p.dtype.base_dtype.name} that does not match expected type "
                                "of float32; cast it with tf.cast first.")
            p = math_ops.cast(p, _dtypes.float32)
        t = convert_to_tensor(targets, preferred_dtype=_dtypes.int32, name="targets")
        _check_dtype(t, _INDEX_DTYPES, "InTopKV2", "targets")
        with name_scope(None, "InTopKV2") as op_name:  # TF: "in_top_k/InTopKV2/k"
            kt = convert_to_tensor(k, dtype=t.dtype.base_dtype, name="k")
            return make_tensor("InTopKV2", [p, t, kt], name=op_name)


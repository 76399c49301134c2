"""Label ops for the estimator heads: string labels to class ids and back, and the
run-time checks a head makes when shapes or values are only known when the graph runs.

There is no `tf.lookup` yet, so the heads carry their own small ops:

=====================  =========================================================
op type                what it does
=====================  =========================================================
``LabelVocabLookup``   string labels -> int64 ids from a fixed vocabulary; a label
                       outside the vocabulary is an InvalidArgumentError naming the
                       head
``ClassIdToString``    int class ids -> strings (``vocabulary[id]``, or ``str(id)``
                       without a vocabulary)
``HeadAssertShape``    no outputs; fails unless ``x.shape`` is
                       ``logits.shape[:-1] + [d]`` for one of the allowed ``d``
``HeadAssertRange``    no outputs; fails unless every value is in ``[low, high]``
=====================  =========================================================

The checks have no outputs: a head runs them as control dependencies of an `identity`
of the checked tensor, so gradients still flow through the identity. None of these ops
is differentiable. The op types are declared in `flowgraph/ops/head_ops.py`, their
kernels are in `flowgraph/backends/cpu/kernels_head.py`.

The second half of the module holds the heads' argument and label checks built on these
ops (logits, labels, weights, `loss_fn`): shapes known when the graph is built are
checked then (ValueError naming the expected and found shapes); the rest at run time.

Example
-------
>>> import flowgraph as tf
>>> ids = label_vocab_lookup(tf.constant([["b"], ["a"]]), ["a", "b"], head_name="h")
>>> with tf.Session() as sess:
...     print(sess.run(ids).ravel().tolist())
[1, 0]
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops
from flowgraph.ops.op_util import make_op, make_tensor

__all__ = ["assert_range", "assert_shape_matches_logits", "class_id_to_string",
           "label_vocab_lookup"]


def _vocab_attr(vocabulary: Sequence | None) -> list[str]:
    out = []
    for v in vocabulary or ():
        out.append(v.decode("utf-8") if isinstance(v, bytes) else str(v))
    return out


# -- LabelVocabLookup -------------------------------------------------------------------
def label_vocab_lookup(labels, vocabulary: Sequence, head_name: str | None = None,
                       name: str | None = None):
    """Map string `labels` to their int64 index in `vocabulary` (same shape).

    A label that is not in the vocabulary fails the step with an InvalidArgumentError
    naming the head, the label and the vocabulary.

    Example
    -------
    >>> import flowgraph as tf
    >>> ids = label_vocab_lookup(tf.constant(["pos", "neg"]), ["neg", "pos"])
    >>> with tf.Session() as sess:
    ...     print(sess.run(ids).tolist())
    [1, 0]
    """
    labels = convert_to_tensor(labels)
    if labels.dtype.base_dtype != _dtypes.string:
        raise ValueError(
            f"Labels dtype should be string if there is a vocabulary. Instead got "
            f"{labels.dtype.name} (head {head_name!r}, labels {labels.name})."
        )
    attrs = {"vocabulary": _vocab_attr(vocabulary), "head_name": head_name or ""}
    return make_tensor("LabelVocabLookup", [labels], attrs, name=name or "class_id_lookup")


# -- ClassIdToString --------------------------------------------------------------------
def class_id_to_string(class_ids, vocabulary: Sequence | None = None,
                       name: str | None = None):
    """Strings (bytes) for integer `class_ids`: ``vocabulary[id]``, or ``str(id)``.

    An id outside the vocabulary gives ``b"UNK"``, as TensorFlow's index-to-string
    tables do by default.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(class_id_to_string(tf.constant([2, 0]))).tolist())
    [b'2', b'0']
    """
    ids = convert_to_tensor(class_ids)
    return make_tensor("ClassIdToString", [ids], {"vocabulary": _vocab_attr(vocabulary)},
                       name=name or "class_string_lookup")


# -- HeadAssertShape, HeadAssertRange ---------------------------------------------------
def assert_shape_matches_logits(x, logits, last_dims: Sequence[int], what: str,
                                message: str, name: str | None = None):
    """`x` unchanged (an identity), after a run-time check that its shape is
    ``logits.shape[:-1] + [d]`` for some `d` in `last_dims`; else InvalidArgumentError
    with `message` and both shapes.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = assert_shape_matches_logits(tf.zeros([4, 1]), tf.zeros([4, 3]), [1],
    ...                                 "labels", "labels must be [batch, 1]")
    >>> y.shape.as_list()
    [4, 1]
    """
    x = convert_to_tensor(x)
    with name_scope(name, "assert_shape", [x, logits]):
        check = make_op("HeadAssertShape", [x, convert_to_tensor(logits)],
                        {"last_dims": [int(d) for d in last_dims], "what": what,
                         "message": message})
        with control_dependencies([check]):
            return array_ops.identity(x)


def assert_range(x, low: float, high: float, message: str, name: str | None = None):
    """`x` unchanged (an identity), after a run-time check that every value lies in
    ``[low, high]``; else InvalidArgumentError with `message` and the offending values.

    Example
    -------
    >>> import flowgraph as tf
    >>> y = assert_range(tf.constant([0, 2]), 0, 2, "Labels must be <= n_classes - 1")
    >>> with tf.Session() as sess:
    ...     print(sess.run(y).tolist())
    [0, 2]
    """
    x = convert_to_tensor(x)
    with name_scope(name, "check_label_range", [x]):
        check = make_op("HeadAssertRange", [x],
                        {"low": float(low), "high": float(high), "message": message})
        with control_dependencies([check]):
            return array_ops.identity(x)


# -- checks of head arguments -----------------------------------------------------------
_LABEL_NONE_ERR_MSG = (
    "You must provide a labels Tensor. Given: None. Labels are required in TRAIN and EVAL "
    "modes: check that your data contains the label feature and that your input_fn "
    "returns (features, labels)."
)


def _label_shape_msg(dim: int) -> str:
    return (f"labels shape must be [D0, D1, ... DN, {dim}] (or [D0, D1, ... DN] when "
            f"{dim} == 1), where logits have shape [D0, D1, ... DN, logits_dimension]. "
            f"Suggested fix: check the n_classes / label_dimension of the head and the "
            f"shape of your labels.")


def _in(head_name) -> str:
    return f" (head {head_name!r})" if head_name else ""


def check_logits_final_dim(logits, expected_logits_dimension: int, head_name=None):
    """`logits` as float32, checked to have shape ``[D0, ... DN, expected]``."""
    with name_scope(None, "logits", [logits]):
        logits = math_ops.cast(convert_to_tensor(logits), _dtypes.float32)
        shape = logits.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(
                f"logits shape must be [D0, D1, ... DN, logits_dimension] with rank at least "
                f"2, got {shape}{_in(head_name)}.")
        last = shape[-1].value if shape.ndims is not None else None
        if last is not None:
            if last != expected_logits_dimension:
                raise ValueError(
                    f"logits shape must be [D0, D1, ... DN, logits_dimension], got {shape}; "
                    f"logits_dimension of the head{_in(head_name)} is "
                    f"{expected_logits_dimension}.")
            return logits
        return assert_shape_matches_logits(
            logits, logits, [expected_logits_dimension], "logits",
            f"logits shape must be [D0, D1, ... DN, logits_dimension]{_in(head_name)}.")


def _static_check(x: TensorShape, logits: TensorShape, last_dims, what: str, msg: str):
    """True when the shape check is settled statically (raises if it fails)."""
    if x.ndims is None or logits.ndims is None:
        return False
    options = [logits[:-1].concatenate([d]) for d in last_dims]
    if not any(x.is_compatible_with(o) for o in options):
        expected = " or ".join(str(o) for o in options)
        raise ValueError(f"{msg} Expected {what} shape {expected}, found {x}.")
    return x.is_fully_defined() and logits[:-1].is_fully_defined()


def check_dense_labels_match_logits_and_reshape(labels, logits, expected_labels_dimension,
                                                head_name=None):
    """`labels` checked against `logits` and reshaped to ``[D0, ... DN, dim]``.

    Labels of shape ``[D0, ... DN]`` get a trailing dimension of 1. A mismatch known
    when the graph is built is a ValueError; otherwise an InvalidArgumentError at run
    time. Both name the expected and the found shapes.
    """
    if labels is None:
        raise ValueError(_LABEL_NONE_ERR_MSG)
    if hasattr(labels, "indices") and hasattr(labels, "dense_shape"):
        raise ValueError(
            f"SparseTensor labels are not supported{_in(head_name)}. Labels must be a dense "
            f"Tensor of shape [D0, D1, ... DN, {expected_labels_dimension}], e.g. "
            f"[batch_size, {expected_labels_dimension}].")
    dim = expected_labels_dimension
    with name_scope(None, "labels", [labels, logits]):
        labels = convert_to_tensor(labels)
        if (labels.shape.ndims is not None and logits.shape.ndims is not None
                and labels.shape.ndims == logits.shape.ndims - 1):
            labels = array_ops.expand_dims(labels, -1)
        shape = labels.shape
        if shape.ndims is not None and shape.ndims < 2:
            raise ValueError(f"{_label_shape_msg(dim)} Found labels shape {shape} and logits "
                             f"shape {logits.shape}{_in(head_name)}.")
        if shape.ndims is not None and shape[-1].value not in (None, dim):
            raise ValueError(
                f"Mismatched label shape. Expected labels dimension={dim}. Received "
                f"{shape[-1].value} (labels shape {shape}, logits shape {logits.shape})"
                f"{_in(head_name)}. If your head expects one value per example, check "
                f"n_classes / label_dimension and the shape of your labels.")
        msg = f"{_label_shape_msg(dim)}{_in(head_name)}"
        if _static_check(shape, logits.shape, [dim], "labels", msg):
            return labels
        return assert_shape_matches_logits(labels, logits, [dim], "labels", msg)


def check_label_range(labels, n_classes: int, message: str | None = None, head_name=None):
    """`labels` after a run-time check that they lie in ``[0, n_classes - 1]``."""
    message = message or (f"Labels must be <= n_classes - 1 and >= 0, with n_classes="
                          f"{n_classes}{_in(head_name)}")
    return assert_range(labels, 0, n_classes - 1, message)


def get_weights_and_check_match_logits(features, weight_column, logits,
                                       allow_per_logit_weights: bool = False,
                                       head_name=None):
    """The example weights from `features` as float32 ``[D0, ... DN, 1]`` (or
    ``[D0, ... DN, logits_dimension]`` when `allow_per_logit_weights`), or 1.0 without a
    `weight_column` (a feature name or a column with a ``key``)."""
    if weight_column is None:
        return 1.0
    if isinstance(weight_column, str):
        key, normalizer = weight_column, None
    elif hasattr(weight_column, "key"):
        key, normalizer = weight_column.key, getattr(weight_column, "normalizer_fn", None)
    else:
        raise TypeError(f"Weight column must be either a string or NumericColumn. Given "
                        f"type: {type(weight_column)}.")
    if not features or key not in features:
        raise ValueError(
            f"weight_column {key!r} is not in features{_in(head_name)}; features have keys "
            f"{sorted(features or {})}.")
    last = logits.shape[-1].value if logits.shape.ndims else None
    allowed = [1, last] if allow_per_logit_weights else [1]
    err = ("weights shape must be [D0, D1, ... DN], [D0, D1, ... DN, 1]"
           + (" or [D0, D1, ... DN, logits_dimension]" if allow_per_logit_weights else "")
           + _in(head_name) + ".")
    with name_scope(None, "weights", [logits]):
        weights = convert_to_tensor(features[key])
        if normalizer is not None:
            weights = convert_to_tensor(normalizer(weights))
        if not (weights.dtype.is_floating or weights.dtype.is_integer):
            raise ValueError(f"Weight column should be castable to float. Given dtype: "
                             f"{weights.dtype.name}{_in(head_name)}.")
        weights = math_ops.cast(weights, _dtypes.float32)
        if (weights.shape.ndims is not None and logits.shape.ndims is not None
                and weights.shape.ndims == logits.shape.ndims - 1):
            weights = array_ops.expand_dims(weights, -1)
            allowed = [1]
        if allowed[-1] is None:
            allowed = allowed[:1]
        if _static_check(weights.shape, logits.shape, allowed, "weights", err):
            return weights
        return assert_shape_matches_logits(weights, logits, allowed, "weights", err)


def fn_args(fn) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return ()


def validate_loss_fn_args(loss_fn) -> None:
    """`loss_fn` takes ``labels`` and ``logits``, optionally ``features`` and
    ``loss_reduction``, and nothing else."""
    args = fn_args(loss_fn)
    for required in ("labels", "logits"):
        if required not in args:
            raise ValueError(f"loss_fn must contain argument: {required}. Given arguments: "
                             f"{args}")
    invalid = [a for a in args if a not in ("labels", "logits", "features", "loss_reduction")]
    if invalid:
        raise ValueError(f"loss_fn has unexpected args: {invalid}")


def call_loss_fn(loss_fn, labels, logits, features, expected_loss_dim: int = 1,
                 head_name=None):
    """``loss_fn(labels=, logits=[, features=])``, checked to have shape
    ``[D0, ... DN, expected_loss_dim]``."""
    kwargs = {"features": features} if "features" in fn_args(loss_fn) else {}
    with name_scope(None, "call_loss_fn", [labels, logits]):
        loss = convert_to_tensor(loss_fn(labels=labels, logits=logits, **kwargs))
        msg = (f"loss_fn must return Tensor of shape [D0, D1, ... DN, {expected_loss_dim}]"
               f"{_in(head_name)}.")
        if _static_check(loss.shape, logits.shape, [expected_loss_dim], "loss", msg):
            return loss
        return assert_shape_matches_logits(loss, logits, [expected_loss_dim], "loss", msg)


def all_class_ids(logits, n_classes: int):
    """int32 ``[batch, n_classes]``: ``range(n_classes)`` on every row."""
    batch = array_ops.shape(logits)[0:1]
    ids = array_ops.expand_dims(array_ops.range(n_classes), 0)
    return array_ops.tile(ids, array_ops.concat([batch, [1]], 0))


def all_classes(logits, n_classes: int, label_vocabulary=None):
    """string ``[batch, n_classes]``: the vocabulary (or ``str(id)``) on every row."""
    names = _vocab_attr(label_vocabulary) or [str(i) for i in range(n_classes)]
    batch = array_ops.shape(logits)[0:1]
    row = constant([[n.encode("utf-8") for n in names]], dtype=_dtypes.string)
    return array_ops.tile(row, array_ops.concat([batch, [1]], 0))

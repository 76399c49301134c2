"""The ``tf.estimator.export`` namespace: serving input receivers and export outputs.

A *serving input receiver function* builds, in the export graph, the placeholders a
client feeds (``receiver_tensors``) and the ``features`` the model_fn receives; an
*export output* turns the model_fn's tensors into a signature (predict, classify or
regress) for `Estimator.export_saved_model`.

Example
-------
>>> import flowgraph as tf
>>> fn = build_raw_serving_input_receiver_fn(
...     {"x": tf.placeholder(tf.float32, [None, 3], name="x")})
>>> with tf.Graph().as_default():
...     receiver = fn()
...     print(sorted(receiver.receiver_tensors), receiver.features["x"].shape.as_list())
['x'] [None, 3]
"""

from __future__ import annotations

import abc
import collections

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.operation import Tensor
from flowgraph.saved_model import constants as sc
from flowgraph.saved_model import signature_def_utils as sdu

__all__ = [
    "ClassificationOutput",
    "ExportOutput",
    "PredictOutput",
    "RegressionOutput",
    "ServingInputReceiver",
    "TensorServingInputReceiver",
    "build_parsing_serving_input_receiver_fn",
    "build_raw_serving_input_receiver_fn",
]

SINGLE_FEATURE_DEFAULT_NAME = "feature"
SINGLE_RECEIVER_DEFAULT_NAME = "input"
SINGLE_LABEL_DEFAULT_NAME = "label"


def _is_tensor_like(value) -> bool:
    return isinstance(value, Tensor) or type(value).__name__ in ("SparseTensor",
                                                                 "RaggedTensor")


def _wrap_and_check_tensors(tensors, default_name: str, what: str) -> dict:
    if tensors is None:
        raise ValueError(f"{what}s must be defined.")
    if not isinstance(tensors, dict):
        tensors = {default_name: tensors}
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise ValueError(f"{what} keys must be strings: {name!r}.")
        if not _is_tensor_like(tensor):
            raise ValueError(f"{what} {name!r} must be a Tensor or SparseTensor; got "
                             f"{type(tensor).__name__}.")
    return tensors


def _check_alternatives(alternatives) -> dict | None:
    if alternatives is None:
        return None
    if not isinstance(alternatives, dict):
        raise ValueError(f"receiver_tensors_alternatives must be a dict: {alternatives!r}.")
    return {name: _wrap_and_check_tensors(tensors, SINGLE_RECEIVER_DEFAULT_NAME,
                                          "receiver_tensor")
            for name, tensors in alternatives.items()}


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """What a serving input receiver function returns.

    `features` (a Tensor or dict of them; a single Tensor becomes ``{"feature": t}``)
    go to the model_fn; `receiver_tensors` (a Tensor, becoming ``{"input": t}``, or a
    dict) are what a client feeds; `receiver_tensors_alternatives` maps names to further
    receiver tensor dicts, each giving its own signatures (``"name:output_key"``).
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _wrap_and_check_tensors(features, SINGLE_FEATURE_DEFAULT_NAME, "feature")
        receiver_tensors = _wrap_and_check_tensors(receiver_tensors,
                                                   SINGLE_RECEIVER_DEFAULT_NAME,
                                                   "receiver_tensor")
        return super().__new__(cls, features, receiver_tensors,
                               _check_alternatives(receiver_tensors_alternatives))


class TensorServingInputReceiver(collections.namedtuple(
        "TensorServingInputReceiver",
        ["features", "receiver_tensors", "receiver_tensors_alternatives"])):
    """Like `ServingInputReceiver`, but the model_fn receives `features` as the single
    Tensor it is, not wrapped in a dict."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        if not _is_tensor_like(features):
            raise ValueError(f"features must be a Tensor or SparseTensor; got "
                             f"{type(features).__name__}.")
        receiver = ServingInputReceiver(features, receiver_tensors,
                                        receiver_tensors_alternatives)
        return super().__new__(cls, receiver.features[SINGLE_FEATURE_DEFAULT_NAME],
                               receiver.receiver_tensors,
                               receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn feeding serialized ``tf.train.Example`` strings.

    The receiver tensor is ``{"examples": <string placeholder [default_batch_size]>}``
    (named ``input_example_tensor``); the features are ``tf.io.parse_example`` of it with
    `feature_spec` (feature name -> ``tf.io.FixedLenFeature`` / ``VarLenFeature``).
    """

    def serving_input_receiver_fn():
        from flowgraph.ops import parsing_ops
        from flowgraph.ops.array_ops import placeholder

        serialized = placeholder(dtype=_dtypes.string, shape=[default_batch_size],
                                 name="input_example_tensor")
        features = parsing_ops.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


def _placeholder_like(tensor, default_batch_size):
    from flowgraph.framework.tensor_shape import TensorShape
    from flowgraph.ops.array_ops import placeholder

    shape = tensor.shape
    if shape.ndims is None:
        new_shape = TensorShape(None)
    elif shape.ndims == 0:
        new_shape = shape
    else:
        new_shape = TensorShape([default_batch_size]).concatenate(shape[1:])
    return placeholder(dtype=tensor.dtype.base_dtype, shape=new_shape, name=tensor.op.name)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn whose placeholders mirror `features` (a Tensor or dict of them,
    from any graph): same dtypes and names, shapes with the batch dimension replaced by
    `default_batch_size`; the placeholders are both the receiver tensors and the
    features."""

    def serving_input_receiver_fn():
        if isinstance(features, dict):
            receiver = {name: _placeholder_like(t, default_batch_size)
                        for name, t in features.items()}
        else:
            receiver = _placeholder_like(features, default_batch_size)
        return ServingInputReceiver(receiver, receiver)

    return serving_input_receiver_fn


# -- export outputs -----------------------------------------------------------------------------
class ExportOutput(abc.ABC):
    """Base of the outputs a model_fn puts in ``EstimatorSpec.export_outputs``."""

    _SEPARATOR = "/"

    @abc.abstractmethod
    def as_signature_def(self, receiver_tensors):
        """The `SignatureDef` of this output fed from `receiver_tensors` (a dict)."""

    def _check_output_key(self, key, error_label: str) -> str:
        if isinstance(key, tuple):
            key = self._SEPARATOR.join(key)
        if not isinstance(key, str):
            raise ValueError(f"{error_label} output key must be a string; got {key!r}.")
        return key

    def _wrap_and_check_outputs(self, outputs, single_output_default_name: str,
                                error_label: str) -> dict:
        if not isinstance(outputs, dict):
            outputs = {single_output_default_name: outputs}
        out = {}
        for key, value in outputs.items():
            key = self._check_output_key(key, error_label)
            if not isinstance(value, Tensor):
                raise ValueError(f"{error_label} output value must be a Tensor; got "
                                 f"{value!r} for key {key!r}.")
            out[key] = value
        return out


def _single_string_input(receiver_tensors, api: str) -> Tensor:
    if len(receiver_tensors) != 1:
        raise ValueError(
            f"{api} signatures can only accept a single tensor input of type tf.string; "
            f"the serving_input_receiver_fn gave {sorted(receiver_tensors)}. Use one string "
            "placeholder and tf.io.parse_example to get several features from it.")
    (examples,) = receiver_tensors.values()
    if examples.dtype.base_dtype != _dtypes.string:
        raise ValueError(
            f"{api} signatures can only accept a single tensor input of type tf.string; "
            f"'{examples.name}' is {examples.dtype.base_dtype.name}.")
    return examples


class ClassificationOutput(ExportOutput):
    """A classify signature: float `scores` and/or string `classes` (both [batch, n])."""

    def __init__(self, scores=None, classes=None) -> None:
        if scores is not None and not (isinstance(scores, Tensor)
                                       and scores.dtype.base_dtype.is_floating):
            raise ValueError(f"Classification scores must be a float32 Tensor; got {scores!r}")
        if classes is not None and not (isinstance(classes, Tensor)
                                        and classes.dtype.base_dtype == _dtypes.string):
            raise ValueError(f"Classification classes must be a string Tensor; got "
                             f"{classes!r}")
        if scores is None and classes is None:
            raise ValueError("Cannot create a ClassificationOutput with empty arguments. At "
                             "least one of `scores` and `classes` must be defined.")
        self._scores = scores
        self._classes = classes

    @property
    def scores(self):
        return self._scores

    @property
    def classes(self):
        return self._classes

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Classification")
        return sdu.classification_signature_def(examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    """A regress signature: one float `value` per example."""

    def __init__(self, value) -> None:
        if not (isinstance(value, Tensor) and value.dtype.base_dtype.is_floating):
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value!r}")
        self._value = value

    @property
    def value(self):
        return self._value

    def as_signature_def(self, receiver_tensors):
        examples = _single_string_input(receiver_tensors, "Regression")
        return sdu.regression_signature_def(examples, self.value)


class PredictOutput(ExportOutput):
    """A predict signature: a Tensor (key ``output``) or a dict of Tensors."""

    _SINGLE_OUTPUT_DEFAULT_NAME = "output"

    def __init__(self, outputs) -> None:
        self._outputs = self._wrap_and_check_outputs(outputs, self._SINGLE_OUTPUT_DEFAULT_NAME,
                                                     "Prediction")

    @property
    def outputs(self) -> dict:
        return self._outputs

    def as_signature_def(self, receiver_tensors):
        return sdu.predict_signature_def(receiver_tensors, self.outputs)


def _signature_key_of(key) -> str:
    return f"{key or 'None'}"


def _flat_tensors(values) -> list:
    flat = []
    for v in values:
        if hasattr(v, "indices") and hasattr(v, "dense_shape"):  # a SparseTensor
            flat += [v.indices, v.values, v.dense_shape]
        elif isinstance(v, Tensor):
            flat.append(v)
    return flat


def _ensure_servable(receiver_tensors: dict, signature) -> None:
    """Raise ValueError, as TF does, when the signature's outputs depend on a placeholder
    that is not one of its inputs (e.g. a receiver alternative that does not feed the
    model), walking back from the outputs and stopping at the inputs."""
    inputs = _flat_tensors(receiver_tensors.values())
    if not inputs:
        return
    graph = inputs[0].graph
    outputs = [graph.get_tensor_by_name(info.name)
               for info in signature.outputs.values() if info.name]
    fed = {id(t) for t in inputs}
    seen, stack = set(), [t.op for t in outputs if id(t) not in fed]
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type == "Placeholder" and not all(id(t) in fed for t in op.outputs):
            raise ValueError(
                f"The signature's input tensors {[t.name for t in inputs]} are insufficient "
                f"to compute its output keys {list(signature.outputs)} (respectively, "
                f"tensors {[t.name for t in outputs]}) because of the dependency on "
                f"`{op.name}` which is not given as a signature input.")
        stack.extend(t.op for t in op.inputs if id(t) not in fed)


def build_all_signature_defs(receiver_tensors, export_outputs, receiver_tensors_alternatives=None,
                             serving_only: bool = True) -> dict:
    """Signature key -> SignatureDef for every export output and receiver alternative.

    Outputs whose signature cannot be built from the receiver (e.g. a classification
    output fed by float placeholders) are left out, with a log line saying why.
    """
    import logging

    logger = logging.getLogger("tensorflow")
    if not isinstance(receiver_tensors, dict):
        receiver_tensors = {SINGLE_RECEIVER_DEFAULT_NAME: receiver_tensors}
    if not isinstance(export_outputs, dict):
        raise ValueError(f"`export_outputs` must be a dict; got {export_outputs!r}")
    out, excluded = {}, {}
    receivers = [("", receiver_tensors)] + [
        (name, alt if isinstance(alt, dict) else {SINGLE_RECEIVER_DEFAULT_NAME: alt})
        for name, alt in (receiver_tensors_alternatives or {}).items()]
    for receiver_name, tensors in receivers:
        for output_key, export_output in export_outputs.items():
            key = _signature_key_of(output_key)
            if receiver_name:
                key = f"{receiver_name}:{key}"
            try:
                signature = export_output.as_signature_def(tensors)
                _ensure_servable(tensors, signature)
                out[key] = signature
            except ValueError as e:
                excluded[key] = str(e)
    for key, why in sorted(excluded.items()):
        logger.warning("Export signature '%s' left out: %s", key, why)
    if serving_only:
        out = {k: v for k, v in out.items() if sdu.is_valid_signature(v)}
    if sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY not in out and serving_only:
        logger.warning("Export includes no default signature ('%s').",
                       sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY)
    return out

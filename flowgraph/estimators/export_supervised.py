"""Signatures of the supervised graphs a SavedModel may hold beside the serving one.

`Estimator.experimental_export_all_saved_models` (and `export_saved_model` with
``experimental_mode``) writes the model_fn's TRAIN and EVAL graphs too, each with one
signature over the receiver's features and labels: `TrainOutput` (method
``tensorflow/supervised/training``, key ``train``) and `EvalOutput`
(``tensorflow/supervised/eval``, key ``eval``), whose outputs are the loss, the
predictions and the metrics' value and update tensors.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     loss = tf.constant(1.0)
...     out = EvalOutput(loss=loss, predictions={"y": tf.constant([2.0])})
...     sorted(out.as_signature_def({"x": tf.placeholder(tf.float32)}).outputs)
['loss', 'predictions/y']
"""

from __future__ import annotations

from flowgraph.estimators.export import ExportOutput
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.saved_model import signature_def_utils as sdu

__all__ = ["EvalOutput", "TrainOutput"]


class EvalOutput(ExportOutput):
    """An eval signature (method ``tensorflow/supervised/eval``) of a loss, predictions
    and ``tf.metrics`` results; outputs are keyed ``loss``, ``predictions/<key>``,
    ``metrics/<key>/value`` and ``metrics/<key>/update_op``."""

    METHOD_NAME = "tensorflow/supervised/eval"

    LOSS_NAME = "loss"
    PREDICTIONS_NAME = "predictions"
    METRICS_NAME = "metrics"
    METRIC_VALUE_SUFFIX = "value"
    METRIC_UPDATE_SUFFIX = "update_op"

    def __init__(self, loss=None, predictions=None, metrics=None) -> None:
        self._loss = self._prefixed(self.LOSS_NAME, loss)
        self._predictions = self._prefixed(self.PREDICTIONS_NAME, predictions)
        self._metrics = {}
        for key, pair in (metrics or {}).items():
            key = self._check_output_key(key, "metrics")
            if not isinstance(pair, tuple) or len(pair) != 2:
                raise ValueError(f"Metric {key} must be a (value, update_op) tuple; got "
                                 f"{pair!r}.")
            value, update = pair
            update = update.outputs[0] if isinstance(update, Operation) and update.outputs \
                else update
            if isinstance(update, Operation):  # an op without outputs: a constant stand-in
                from flowgraph.framework.constant_op import constant
                from flowgraph.framework.graph import control_dependencies

                with control_dependencies([update]):
                    update = constant(0.0, name="metric_update_op")
            base = f"{self.METRICS_NAME}/{key}"
            for suffix, tensor in ((self.METRIC_VALUE_SUFFIX, value),
                                   (self.METRIC_UPDATE_SUFFIX, update)):
                if not isinstance(tensor, Tensor):
                    raise ValueError(f"metrics output value must be a Tensor; got {tensor!r}.")
                self._metrics[f"{base}/{suffix}"] = tensor

    def _prefixed(self, prefix: str, outputs) -> dict:
        if outputs is None:
            return {}
        if not isinstance(outputs, dict):
            if not isinstance(outputs, Tensor):
                raise ValueError(f"{prefix} output value must be a Tensor; got {outputs}.")
            return {prefix: outputs}
        out = {}
        for key, value in outputs.items():
            key = self._check_output_key(key, prefix)
            if not isinstance(value, Tensor):
                raise ValueError(f"{prefix} output value must be a Tensor; got {value}.")
            out[f"{prefix}/{key}"] = value
        return out

    @property
    def loss(self) -> dict:
        return self._loss

    @property
    def predictions(self) -> dict:
        return self._predictions

    @property
    def metrics(self) -> dict:
        return self._metrics

    def as_signature_def(self, receiver_tensors):
        outputs = {**self._loss, **self._predictions, **self._metrics}
        return sdu.build_signature_def(
            {k: sdu.build_tensor_info(v) for k, v in receiver_tensors.items()},
            {k: sdu.build_tensor_info(v) for k, v in outputs.items()},
            self.METHOD_NAME)


class TrainOutput(EvalOutput):
    """A training signature (method ``tensorflow/supervised/training``), keyed as
    `EvalOutput`'s: what a SavedModel exported in TRAIN mode serves
    (`Estimator.experimental_export_all_saved_models`)."""

    METHOD_NAME = "tensorflow/supervised/training"

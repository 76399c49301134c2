"""`MultiHead`: several named heads trained together on one model (multi-objective
learning).

Logits are a dict keyed by head name, or one tensor whose last dimension is split among
the heads in order. Labels are a dict keyed by head name. The training loss is the sum
of the heads' losses (times `head_weights`); predictions are keyed ``(head_name, key)``;
eval metrics are the heads' own (their keys end in ``/head_name``) plus
``loss/head_name``; serving uses the first head by default.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> from flowgraph.estimators.head import MultiHead, MultiLabelHead, RegressionHead
>>> head = MultiHead([MultiLabelHead(n_classes=2, name="tags"),
...                   RegressionHead(name="price")], head_weights=[1.0, 0.5])
>>> head.logits_dimension
3
>>> logits = {"tags": np.zeros([2, 2], np.float32), "price": np.ones([2, 1], np.float32)}
>>> labels = {"tags": np.array([[1, 0], [0, 1]]), "price": np.array([[1.0], [3.0]])}
>>> loss = head.loss(labels, logits)
>>> with tf.Session() as sess:   # log(2) + 0.5 * (0 + 4) / 2
...     print(round(float(sess.run(loss)), 4))
1.6931
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops import control_flow_ops, math_ops, math_reduce

from .base_head import (
    DEFAULT_SERVING_KEY,
    PREDICT_SERVING_KEY,
    Head,
    HeadMetric,
    MetricKeys,
    _estimator_spec,
    _mode_keys,
    add_regularization,
    create_estimator_spec_summary,
    create_estimator_spec_train_op,
    metric_ops,
)

__all__ = ["MultiHead"]


def _no_op_train_fn(loss):
    del loss
    return control_flow_ops.no_op()


def _default_export_output(export_outputs: dict, head_name):
    if len(export_outputs) == 1:
        return next(iter(export_outputs.values()))
    try:
        return export_outputs[DEFAULT_SERVING_KEY]
    except KeyError:
        raise ValueError(
            f"{head_name} did not specify default export_outputs. Given: {export_outputs}. "
            f"Suggested fix: use one of the heads in tf.estimator, or include the key "
            f"{DEFAULT_SERVING_KEY!r} in export_outputs.") from None


class MultiHead(Head):
    """A head combining named `heads` (each with a `name`); see the module docstring.

    `head_weights` (same length as `heads`) scale each head's loss in the total. All
    heads must use the same `loss_reduction`. Extra `regularization_losses` given to
    `create_estimator_spec` are added once to the merged loss.

    Example
    -------
    >>> from flowgraph.estimators.head import BinaryClassHead, MultiClassHead
    >>> head = MultiHead([MultiClassHead(3, name="a"), BinaryClassHead(name="b")])
    >>> head.name, head.logits_dimension
    ('a_b', 4)
    """

    def __init__(self, heads, head_weights=None):
        if not heads:
            raise ValueError(f"Must specify heads. Given: {heads}")
        if head_weights and len(head_weights) != len(heads):
            raise ValueError(
                f"heads and head_weights must have the same size. Given len(heads): "
                f"{len(heads)}. Given len(head_weights): {len(head_weights)}.")
        names = []
        for head in heads:
            if head.name is None:
                raise ValueError(f"All given heads must have name specified. Given: {head}")
            names.append(head.name)
        if len(set(names)) != len(names):
            raise ValueError(f"Head names must be unique. Given: {names}")
        self._heads = tuple(heads)
        self._head_weights = tuple(head_weights) if head_weights else ()
        self._logits_dimension = sum(h.logits_dimension for h in self._heads)
        self._loss_keys = tuple(f"{MetricKeys.LOSS}/{h.name}" for h in self._heads)

    @property
    def name(self):
        return "_".join(h.name for h in self._heads)

    @property
    def logits_dimension(self):
        return self._logits_dimension

    @property
    def loss_reduction(self):
        reductions = [h.loss_reduction for h in self._heads]
        if len(set(reductions)) > 1:
            raise ValueError(f"The loss_reduction must be the same for different heads. "
                             f"Given: {reductions}")
        return reductions[0]

    def _split_logits(self, logits) -> dict:
        dims = [h.logits_dimension for h in self._heads]
        with name_scope(None, "split_logits", [logits]):
            logits = convert_to_tensor(logits)
            shape = logits.shape
            last = shape[-1].value if shape.ndims else None
            if last is not None and last != sum(dims):
                raise ValueError(
                    f"Could not split logits of shape {shape.as_list()} among the heads with "
                    f"individual logits dimensions: {dims}. The last dimension of the logits "
                    f"tensor should equal {sum(dims)} but is {last}.")
            out, begin = {}, 0
            for head, d in zip(self._heads, dims):
                out[head.name] = logits[..., begin:begin + d]
                begin += d
        return out

    def _check_logits_and_labels(self, logits, labels=None) -> dict:
        names = [h.name for h in self._heads]
        if isinstance(logits, dict):
            missing = [n for n in names if n not in logits]
            if missing:
                raise ValueError(f"logits has missing values for head(s): {missing}")
            logits_dict = logits
        else:
            logits_dict = self._split_logits(logits)
        if labels is not None:
            if not isinstance(labels, dict):
                raise ValueError(f"labels must be a dict keyed by head name {names}. Given: "
                                 f"{labels}")
            missing = [n for n in names if n not in labels]
            if missing:
                raise ValueError(f"labels has missing values for head(s): {missing}")
        return logits_dict

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """Sum of the heads' losses (times `head_weights`) plus `regularization_losses`."""
        logits_dict = self._check_logits_and_labels(logits, labels)
        losses = [h.loss(labels=labels[h.name], logits=logits_dict[h.name],
                         features=features, mode=mode) for h in self._heads]
        with name_scope(None, "merge_losses", losses):
            if self._head_weights:
                losses = [math_ops.multiply(loss, float(w))
                          for loss, w in zip(losses, self._head_weights)]
            total = losses[0] if len(losses) == 1 else math_reduce.add_n(losses)
            return add_regularization(total, regularization_losses)

    def predictions(self, logits, keys=None):
        """``{(head_name, key): tensor}`` over all heads (restricted to `keys`: pairs or
        plain prediction keys)."""
        logits_dict = self._check_logits_and_labels(logits)
        out = {}
        with name_scope(None, "merge_pred", []):
            for head in self._heads:
                for k, v in head.predictions(logits_dict[head.name]).items():
                    if not keys or k in keys or (head.name, k) in keys:
                        out[(head.name, k)] = v
        return out

    def metrics(self, regularization_losses=None):
        """Fresh ``loss/<head_name>`` means (and ``regularization_loss``); the heads'
        own metrics are added by `update_metrics`."""
        m = {}
        if regularization_losses is not None:
            m[MetricKeys.LOSS_REGULARIZATION] = HeadMetric("mean",
                                                           MetricKeys.LOSS_REGULARIZATION)
        for key in self._loss_keys:
            m[key] = HeadMetric("mean", key)
        return m

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        """Update `eval_metrics` and add every head's updated metrics."""
        del mode
        logits_dict = self._check_logits_and_labels(logits, labels)
        if regularization_losses is not None:
            eval_metrics[MetricKeys.LOSS_REGULARIZATION].update_state(
                values=math_reduce.add_n(list(regularization_losses)))
        for head, key in zip(self._heads, self._loss_keys):
            head_logits, head_labels = logits_dict[head.name], labels[head.name]
            loss = head.loss(logits=head_logits, labels=head_labels, features=features)
            eval_metrics[key].update_state(values=loss)
            updated = head.update_metrics(head.metrics(), features, head_logits, head_labels)
            eval_metrics.update(updated or {})
        return eval_metrics

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        """The merged `EstimatorSpec` (see `Head.create_estimator_spec`)."""
        mode_keys = _mode_keys()
        if mode not in (mode_keys.TRAIN, mode_keys.EVAL, mode_keys.PREDICT):
            raise ValueError(f"mode={mode} unrecognized")
        with name_scope(self.name, "multi_head"):
            logits_dict = self._check_logits_and_labels(logits, labels)
            predictions = self.predictions(logits_dict)
            if mode == mode_keys.PREDICT:
                specs = [h.create_estimator_spec(features=features, mode=mode,
                                                 logits=logits_dict[h.name],
                                                 train_op_fn=_no_op_train_fn)
                         for h in self._heads]
                return _estimator_spec(mode=mode, predictions=predictions,
                                       export_outputs=self._merge_export_outputs(specs))
            loss = self.loss(labels, logits_dict, features, mode, regularization_losses)
            if mode == mode_keys.EVAL:
                updated = self.update_metrics(self.metrics(regularization_losses), features,
                                              logits_dict, labels,
                                              regularization_losses=regularization_losses)
                return _estimator_spec(mode=mode, predictions=predictions, loss=loss,
                                       eval_metric_ops=metric_ops(updated))
            _ = self.loss_reduction  # as TF: training needs one reduction shared by the heads
            train_op = create_estimator_spec_train_op(
                self.name, optimizer=optimizer, trainable_variables=trainable_variables,
                train_op_fn=train_op_fn, update_ops=update_ops,
                regularized_training_loss=loss)
        create_estimator_spec_summary(loss, regularization_losses)
        return _estimator_spec(mode=mode, predictions=predictions, loss=loss,
                               train_op=train_op)

    def _merge_export_outputs(self, specs) -> dict:
        from flowgraph.estimators import export

        out = {DEFAULT_SERVING_KEY: _default_export_output(specs[0].export_outputs,
                                                           self._heads[0].name)}
        merged = {}
        for head, spec in zip(self._heads, specs):
            for k, v in (spec.export_outputs or {}).items():
                out[head.name if k == DEFAULT_SERVING_KEY else f"{head.name}/{k}"] = v
                if k == PREDICT_SERVING_KEY and isinstance(v, export.PredictOutput):
                    for kp, vp in v.outputs.items():
                        merged[f"{head.name}/{kp}"] = vp
        out[PREDICT_SERVING_KEY] = export.PredictOutput(merged)
        return out

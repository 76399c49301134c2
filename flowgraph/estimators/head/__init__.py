"""Estimator heads (`tf.estimator.*Head`): the top of a model that turns logits into
predictions, a loss, eval metrics, a train op and export outputs. See docs/heads.md.

Example
-------
>>> from flowgraph.estimators.head import BinaryClassHead, MultiHead, RegressionHead
>>> head = MultiHead([BinaryClassHead(name="click"), RegressionHead(name="dwell")])
>>> head.logits_dimension
2
"""

from flowgraph.estimators.head.base_head import Head, HeadMetric, MetricKeys, PredictionKeys
from flowgraph.estimators.head.binary_class_head import BinaryClassHead
from flowgraph.estimators.head.multi_class_head import MultiClassHead
from flowgraph.estimators.head.multi_head import MultiHead
from flowgraph.estimators.head.multi_label_head import MultiLabelHead
from flowgraph.estimators.head.regression_head import (
    LogisticRegressionHead,
    PoissonRegressionHead,
    RegressionHead,
)

__all__ = [
    "BinaryClassHead",
    "Head",
    "LogisticRegressionHead",
    "MultiClassHead",
    "MultiHead",
    "MultiLabelHead",
    "PoissonRegressionHead",
    "RegressionHead",
]

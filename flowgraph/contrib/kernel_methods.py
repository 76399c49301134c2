"""`tf.contrib.kernel_methods`: linear models on explicit kernel features, as TF 1.x's
"Improving linear models using explicit kernel methods" tutorial builds them.

- `RandomFourierFeatureMapper(input_dim, output_dim, stddev, seed)`: random Fourier
  features of the Gaussian (RBF) kernel: ``map(x) = sqrt(2 / D) * cos(x @ omega + b)``
  with ``omega ~ N(0, 1 / stddev**2)`` of shape ``[input_dim, D]`` and ``b ~ U(0, 2 pi)``,
  drawn from NumPy's generator seeded with `seed` (the normals first, then the uniforms,
  as TF 1.x drew them), so the inner product of two mapped points approximates
  ``exp(-|x - y|**2 / (2 * stddev**2))``.
- `KernelLinearClassifier`: contrib.learn's `LinearClassifier` whose real-valued columns
  listed in `kernel_mappers` are replaced by their mapped features (several mappers of
  one column are concatenated) under the column ``<name>_MAPPED``.
- `sparse_multiclass_hinge_loss`: the Crammer-Singer multiclass hinge loss.

Example
-------
>>> import numpy as np
>>> import flowgraph as tf
>>> mapper = tf.contrib.kernel_methods.RandomFourierFeatureMapper(2, 4000, stddev=1.0)
>>> with tf.Graph().as_default():
...     z = mapper.map(tf.constant([[0.0, 0.0], [1.0, 0.0]]))
...     k = tf.Session().run(tf.reduce_sum(z[0] * z[1]))
>>> bool(abs(k - np.exp(-0.5)) < 0.05)
True
"""

from __future__ import annotations

import math

import numpy as np

from flowgraph.contrib.learn.learn_canned import LinearClassifier
from flowgraph.contrib.learn.learn_feature_columns import real_valued_column
from flowgraph.feature_column.feature_column_dense import NumericColumn
from flowgraph.framework import dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import GraphKeys, name_scope
from flowgraph.losses.util import Reduction, compute_weighted_loss
from flowgraph.ops import array_ops, math_ops, math_reduce, nn_ops

__all__ = ["KernelLinearClassifier", "RandomFourierFeatureMapper",
           "sparse_multiclass_hinge_loss"]


class RandomFourierFeatureMapper:
    """Maps ``[batch, input_dim]`` float tensors to ``[batch, output_dim]`` random Fourier
    features of the Gaussian kernel of width `stddev` (see the module docstring).

    Example
    -------
    >>> m = RandomFourierFeatureMapper(input_dim=3, output_dim=8, stddev=2.0, seed=7)
    >>> m.name, m.input_dim, m.output_dim
    ('RandomFourierFeatureMapper', 3, 8)
    """

    def __init__(self, input_dim: int, output_dim: int, stddev: float = 1.0, seed: int = 1,
                 name: str | None = None) -> None:
        for what, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if int(value) <= 0:
                raise ValueError(f"RandomFourierFeatureMapper: {what} must be positive, "
                                 f"got {value}")
        if not stddev > 0:
            raise ValueError(f"RandomFourierFeatureMapper: stddev must be positive, got "
                             f"{stddev}")
        self._input_dim, self._output_dim = int(input_dim), int(output_dim)
        self._stddev, self._seed = float(stddev), seed
        self._name = name or "RandomFourierFeatureMapper"

    @property
    def name(self) -> str:
        return self._name

    @property
    def input_dim(self) -> int:
        return self._input_dim

    @property
    def output_dim(self) -> int:
        return self._output_dim

    def map(self, input_tensor):
        """The ``[batch, output_dim]`` float32 features of `input_tensor`."""
        x = convert_to_tensor(input_tensor)
        shape = x.shape
        if shape.ndims is not None and shape.ndims != 2:
            raise ValueError(f"RandomFourierFeatureMapper {self._name}: the input must be a "
                             f"[batch, {self._input_dim}] matrix, got shape {shape}")
        if shape.ndims == 2 and shape[1].value is not None and \
                shape[1].value != self._input_dim:
            raise ValueError(f"Invalid dimension: expected {self._input_dim} input "
                             f"features, got {shape[1].value} instead.")
        rng = np.random.RandomState(self._seed)
        omega = rng.normal(scale=1.0 / self._stddev, size=[self._input_dim, self._output_dim])
        bias = rng.uniform(low=0.0, high=2 * np.pi, size=[self._output_dim])
        with name_scope(self._name):
            omega_t = constant(omega, dtype=dtypes.float32, name="omega")
            bias_t = constant(bias, dtype=dtypes.float32, name="bias")
            x = math_ops.cast(x, dtypes.float32)
            projected = nn_ops.bias_add(math_ops.matmul(x, omega_t), bias_t)
            return math.sqrt(2.0 / self._output_dim) * math_ops.cos(projected)


def _column_name(column) -> str:
    return getattr(column, "name", None) or getattr(column, "key", "")


def _mapped_columns(feature_columns, kernel_mappers):
    """``(columns with the mapped ones replaced, {name: (mapped name, mappers)})``."""
    if not kernel_mappers:
        raise ValueError("KernelLinearClassifier: kernel_mappers must map at least one "
                         "real-valued column to a list of kernel mappers")
    columns = list(feature_columns) if feature_columns is not None else list(kernel_mappers)
    plan = {}
    for column, mappers in kernel_mappers.items():
        if not isinstance(column, NumericColumn):
            raise ValueError(f"KernelLinearClassifier: kernel mappers apply to real-valued "
                             f"columns only; {_column_name(column)!r} is a "
                             f"{type(column).__name__}")
        mappers = list(mappers) if isinstance(mappers, list | tuple) else [mappers]
        width = int(np.prod(column.shape))
        for mapper in mappers:
            if mapper.input_dim != width:
                raise ValueError(f"KernelLinearClassifier: mapper {mapper.name} takes "
                                 f"{mapper.input_dim} features but column "
                                 f"{column.key!r} has {width}")
        plan[column.key] = (f"{column.key}_MAPPED", mappers)
    mapped = []
    for column in columns:
        key = getattr(column, "key", None)
        if isinstance(column, NumericColumn) and key in plan:
            name, mappers = plan[key]
            mapped.append(real_valued_column(name, dimension=sum(m.output_dim
                                                                 for m in mappers)))
        else:
            mapped.append(column)
    return mapped, plan


class KernelLinearClassifier(LinearClassifier):
    """A linear classifier (contrib.learn's, FTRL by default) over the features that
    `kernel_mappers` (``{real_valued_column: [mapper, ...]}``) make of their columns; the
    other `feature_columns` are used as they are.

    Example
    -------
    >>> import flowgraph as tf
    >>> col = tf.contrib.layers.real_valued_column("x", dimension=2)
    >>> rff = tf.contrib.kernel_methods.RandomFourierFeatureMapper(2, 16)
    >>> est = tf.contrib.kernel_methods.KernelLinearClassifier(
    ...     feature_columns=[col], kernel_mappers={col: [rff]})
    >>> [c.key for c in est.feature_columns]
    ['x_MAPPED']
    """

    def __init__(self, feature_columns=None, model_dir=None, n_classes=2,
                 weight_column_name=None, optimizer=None, kernel_mappers=None, config=None):
        columns, plan = _mapped_columns(feature_columns, kernel_mappers)
        super().__init__(feature_columns=columns, model_dir=model_dir, n_classes=n_classes,
                         weight_column_name=weight_column_name, optimizer=optimizer,
                         config=config, feature_engineering_fn=_mapping_fn(plan))
        self.kernel_mappers = kernel_mappers


def _mapping_fn(plan):
    def map_features(features, labels):
        if not isinstance(features, dict):
            raise ValueError("KernelLinearClassifier: the input_fn must give a dict of "
                             "features keyed by column name")
        features = dict(features)
        for key, (mapped_name, mappers) in plan.items():
            if key not in features:
                raise ValueError(f"KernelLinearClassifier: feature {key!r} (mapped by "
                                 f"{[m.name for m in mappers]}) is not in the input_fn's "
                                 f"features {sorted(features)}")
            raw = math_ops.cast(features.pop(key), dtypes.float32)
            raw = array_ops.reshape(raw, [-1, mappers[0].input_dim])
            outs = [m.map(raw) for m in mappers]
            features[mapped_name] = outs[0] if len(outs) == 1 else \
                array_ops.concat(outs, axis=1)
        return features, labels
    return map_features


def sparse_multiclass_hinge_loss(labels, logits, weights=1.0, scope=None,
                                 loss_collection=GraphKeys.LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """The Crammer-Singer multiclass hinge loss of integer `labels` ``[batch]`` (or
    ``[batch, 1]``) and `logits` ``[batch, n_classes]``: per example
    ``max(0, max over j != label of (1 + logits[j] - logits[label]))``, weighted and
    reduced as `tf.losses` losses are.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     loss = sparse_multiclass_hinge_loss(
    ...         tf.constant([0, 2]), tf.constant([[2.0, 0.5, 1.8], [0.0, 1.0, 3.0]]),
    ...         reduction=tf.losses.Reduction.NONE)
    ...     print([round(float(v), 3) for v in tf.Session().run(loss)])
    [0.8, 0.0]
    """
    with name_scope(scope or "hinge_loss"):
        logits = convert_to_tensor(logits)
        labels = convert_to_tensor(labels)
        if not labels.dtype.is_integer:
            raise ValueError(f"sparse_multiclass_hinge_loss: labels must be integer class "
                             f"ids, got dtype {labels.dtype.name}")
        if logits.shape.ndims is not None and logits.shape.ndims != 2:
            raise ValueError(f"sparse_multiclass_hinge_loss: logits must be [batch, "
                             f"n_classes], got shape {logits.shape}")
        if labels.shape.ndims == 2 and labels.shape[1].value == 1:
            labels = array_ops.squeeze(labels, axis=[1])
        elif labels.shape.ndims is not None and labels.shape.ndims != 1:
            raise ValueError(f"sparse_multiclass_hinge_loss: labels must be [batch] or "
                             f"[batch, 1], got shape {labels.shape}")
        one_hot = array_ops.one_hot(labels, array_ops.shape(logits)[1], dtype=logits.dtype)
        label_logits = math_reduce.reduce_sum(one_hot * logits, axis=1, keepdims=True)
        margins = nn_ops.relu(logits - label_logits + 1.0) * (1.0 - one_hot)
        losses = math_reduce.reduce_max(margins, axis=1)
        return compute_weighted_loss(losses, weights, scope=None,
                                     loss_collection=loss_collection, reduction=reduction)

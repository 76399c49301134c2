"""`tf.contrib.learn` (TF 1.0-1.4): the scikit-learn style Estimator API of TF1 tutorials.

- `Estimator` with the old ``model_fn(features, targets, mode)`` returning `ModelFnOps` or
  ``(predictions, loss, train_op)``; `SKCompat`; `MetricSpec`; `NotFittedError`.
- The canned `DNNClassifier`, `DNNRegressor`, `LinearClassifier`, `LinearRegressor`,
  `DNNLinearCombinedClassifier`/`Regressor`: ``fit(x=, y=)`` or ``fit(input_fn=)``,
  ``evaluate``, ``predict`` generators, contrib.learn's defaults (see `learn_canned`).
- `infer_real_valued_columns_from_input`, `io.numpy_input_fn`/`pandas_input_fn`,
  `preprocessing.VocabularyProcessor`, `ModeKeys` (``INFER``), `RunConfig`.
- `Experiment` and `learn_runner.run` (in-process schedules only);
  `monitors.ValidationMonitor` for ``fit(monitors=[...])``.
- `utils.input_fn_utils.build_parsing_serving_input_fn` (for `export_savedmodel`),
  `datasets.base.load_csv_with_header` / `load_csv_without_header` (the iris tutorial's).

Example
-------
>>> import flowgraph as tf
>>> vp = tf.contrib.learn.preprocessing.VocabularyProcessor(3)
>>> [row.tolist() for row in vp.fit_transform(["a b", "b c d"])]
[[1, 2, 0], [2, 3, 4]]
"""

from flowgraph.contrib.learn import datasets, io, monitors, preprocessing, utils
from flowgraph.contrib.learn.learn_canned import (
    DNNClassifier,
    DNNLinearCombinedClassifier,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearClassifier,
    LinearRegressor,
)
from flowgraph.contrib.learn.learn_estimator import (
    Estimator,
    InputFnOps,
    MetricSpec,
    ModeKeys,
    ModelFnOps,
    NotFittedError,
    SKCompat,
    infer_real_valued_columns_from_input,
)
from flowgraph.contrib.learn.learn_experiment import Experiment, learn_runner
from flowgraph.estimators import RunConfig

__all__ = [
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "Estimator",
    "Experiment",
    "InputFnOps",
    "LinearClassifier",
    "LinearRegressor",
    "MetricSpec",
    "ModeKeys",
    "ModelFnOps",
    "NotFittedError",
    "RunConfig",
    "SKCompat",
    "datasets",
    "infer_real_valued_columns_from_input",
    "io",
    "learn_runner",
    "monitors",
    "preprocessing",
    "utils",
]

"""Canned estimators (tensorflow_estimator 2.15 names): an `Estimator` whose `model_fn` is
a head on a preset model of feature columns. See docs/canned-estimators.md.

| model | classifier | regressor | any head |
| --- | --- | --- | --- |
| bias only | `BaselineClassifier` | `BaselineRegressor` | `BaselineEstimator` |
| linear | `LinearClassifier` | `LinearRegressor` | `LinearEstimator` |
| feed-forward network | `DNNClassifier` | `DNNRegressor` | `DNNEstimator` |
| wide and deep | `DNNLinearCombinedClassifier` | `DNNLinearCombinedRegressor` | `...Estimator` |
| boosted trees | `BoostedTreesClassifier` | `BoostedTreesRegressor` | `BoostedTreesEstimator` |

Example
-------
>>> from flowgraph.estimators.canned import DNNClassifier, LinearRegressor
>>> DNNClassifier.__mro__[1].__name__
'Estimator'
"""

from flowgraph.estimators.canned.baseline import (
    BaselineClassifier,
    BaselineEstimator,
    BaselineRegressor,
)
from flowgraph.estimators.canned.boosted_trees import (
    BoostedTreesClassifier,
    BoostedTreesEstimator,
    BoostedTreesRegressor,
)
from flowgraph.estimators.canned.dnn import (
    DNNClassifier,
    DNNEstimator,
    DNNRegressor,
    dnn_logit_fn_builder,
)
from flowgraph.estimators.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifier,
    DNNLinearCombinedEstimator,
    DNNLinearCombinedRegressor,
)
from flowgraph.estimators.canned.linear import (
    LinearClassifier,
    LinearEstimator,
    LinearRegressor,
    linear_logit_fn_builder,
)

__all__ = [
    "BaselineClassifier",
    "BaselineEstimator",
    "BaselineRegressor",
    "BoostedTreesClassifier",
    "BoostedTreesEstimator",
    "BoostedTreesRegressor",
    "DNNClassifier",
    "DNNEstimator",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedEstimator",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearEstimator",
    "LinearRegressor",
]

"""scikit-learn estimators on flowgraph's canned models (needs scikit-learn; pandas for
DataFrames with categorical columns). See docs/sklearn.md.

Each class follows scikit-learn's contract (``__init__`` only stores; ``fit`` /
``partial_fit`` / ``predict`` / ``score`` / ``get_params`` / ``set_params``; works in
``Pipeline``, ``GridSearchCV`` and ``cross_val_score``; clones and pickles) and trains
the canned `tf.estimator` model of the same name, reachable as ``estimator_``.

Example
-------
>>> from flowgraph.estimators.sklearn import DNNClassifier
>>> DNNClassifier(hidden_units=(16,)).get_params()["hidden_units"]
(16,)
"""

from flowgraph.estimators.sklearn.classifier import (
    BaselineClassifier,
    DNNClassifier,
    DNNLinearCombinedClassifier,
    LinearClassifier,
)
from flowgraph.estimators.sklearn.regressor import (
    BaselineRegressor,
    DNNLinearCombinedRegressor,
    DNNRegressor,
    LinearRegressor,
)

__all__ = [
    "BaselineClassifier",
    "BaselineRegressor",
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "DNNLinearCombinedRegressor",
    "DNNRegressor",
    "LinearClassifier",
    "LinearRegressor",
]

"""scikit-learn regressors on the canned models: `DNNRegressor`, `LinearRegressor`,
`DNNLinearCombinedRegressor`.

A 1-d `y` predicts shape ``(n_samples,)``; a 2-d `y` of k columns trains one model with
``label_dimension=k`` and predicts ``(n_samples, k)``. The loss is the squared error, so
targets of large magnitude train faster standardized (e.g. with
`sklearn.compose.TransformedTargetRegressor`).

Example
-------
>>> import numpy as np
>>> from flowgraph.estimators.sklearn import LinearRegressor
>>> X = np.random.RandomState(0).randn(200, 3)
>>> y = X @ [1.0, -2.0, 0.5] + 0.3
>>> reg = LinearRegressor(n_epochs=40, random_state=0).fit(X, y)
>>> bool(reg.score(X, y) > 0.95)
True
"""

from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin

from flowgraph.estimators.sklearn.base import (
    BaselineParams,
    FlowgraphModel,
    activation_of,
    optimizer_of,
)

__all__ = ["BaselineRegressor", "DNNLinearCombinedRegressor", "DNNRegressor", "LinearRegressor"]


class _Regressor(RegressorMixin, FlowgraphModel):
    _y_numeric = True
    _multi_output = True
    _prediction_key = "predictions"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": False, "multioutput": True}

    def _label_setup(self, y, classes=None):
        y = np.asarray(y)
        self._y_2d = y.ndim == 2
        self._n_outputs = y.shape[1] if y.ndim == 2 else 1
        return self._encode_y(y)

    def _encode_y(self, y) -> np.ndarray:
        y = np.asarray(y, dtype=np.float32)
        k = y.shape[1] if y.ndim == 2 else 1
        if k != self._n_outputs:
            raise ValueError(f"y has {k} target column(s) but {type(self).__name__} was "
                             f"fitted with {self._n_outputs}.")
        return y.reshape(len(y), self._n_outputs) if self._n_outputs > 1 else y.reshape(-1)

    def fit(self, X, y, sample_weight=None):
        """Train on ``(X, y)`` for `n_epochs` epochs (or `steps` steps); from scratch
        unless `warm_start` and the data have the fitted model's features and targets.

        Returns self."""
        if self.warm_start and self._can_continue(X) and (
                np.asarray(y).shape[1:2] or (1,))[0] == self._n_outputs:
            return self._fit(X, y, sample_weight, reset=False, epochs=self.n_epochs)
        return self._fit(X, y, sample_weight, reset=True, epochs=self.n_epochs)

    def partial_fit(self, X, y, sample_weight=None):
        """One more epoch (or `steps` steps) on ``(X, y)``.

        Returns self."""
        return self._fit(X, y, sample_weight, reset=not hasattr(self, "_model"), epochs=1,
                         warm=True)

    def predict(self, X) -> np.ndarray:
        """Predicted targets, float64: ``(n_samples,)`` or ``(n_samples, k)``."""
        out = self._raw_predictions(X)
        return out if self._y_2d else out[:, 0]

    def _canned_head_args(self) -> dict:
        return {"label_dimension": self._n_outputs, "weight_column": "__sample_weight__",
                # the per-example mean keeps learning rates independent of batch_size
                "loss_reduction": "weighted_sum_over_batch_size"}


class DNNRegressor(_Regressor):
    """A feed-forward neural network regressor with scikit-learn's API, trained by
    `flowgraph.estimators.DNNRegressor`.

    Parameters are those of `flowgraph.estimators.sklearn.DNNClassifier`.

    Example
    -------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).uniform(-2, 2, (300, 1))
    >>> reg = DNNRegressor(hidden_units=(32, 32), optimizer="Adam", learning_rate=0.01,
    ...                    n_epochs=60, random_state=0).fit(X, np.sin(X[:, 0]))
    >>> bool(reg.score(X, np.sin(X[:, 0])) > 0.9)
    True
    """

    def __init__(self, hidden_units=(64,), activation_fn="relu", dropout=None,
                 batch_norm=False, optimizer="Adagrad", learning_rate=None, batch_size=32,
                 n_epochs=20, steps=None, warm_start=False, random_state=None) -> None:
        self.hidden_units = hidden_units
        self.activation_fn = activation_fn
        self.dropout = dropout
        self.batch_norm = batch_norm
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.steps = steps
        self.warm_start = warm_start
        self.random_state = random_state

    def _canned(self, linear_columns, dnn_columns, model_dir, config, n_outputs):
        from flowgraph.estimators.canned import DNNRegressor as Canned

        return Canned(tuple(self.hidden_units), dnn_columns, model_dir=model_dir,
                      optimizer=optimizer_of(self.optimizer, self.learning_rate),
                      activation_fn=activation_of(self.activation_fn), dropout=self.dropout,
                      batch_norm=bool(self.batch_norm), config=config,
                      **self._canned_head_args())


class LinearRegressor(_Regressor):
    """Linear regression (squared error) with scikit-learn's API, trained by
    `flowgraph.estimators.LinearRegressor`.

    Parameters are those of `flowgraph.estimators.sklearn.LinearClassifier`.

    Example
    -------
    >>> import numpy as np
    >>> X = np.arange(40.0).reshape(20, 2) / 40
    >>> LinearRegressor(n_epochs=5).fit(X, X.sum(axis=1)).predict(X[:2]).shape
    (2,)
    """

    def __init__(self, optimizer="Ftrl", learning_rate=None, sparse_combiner="sum",
                 batch_size=32, n_epochs=20, steps=None, warm_start=False,
                 random_state=None) -> None:
        self.optimizer = optimizer
        self.learning_rate = learning_rate
        self.sparse_combiner = sparse_combiner
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.steps = steps
        self.warm_start = warm_start
        self.random_state = random_state

    def _canned(self, linear_columns, dnn_columns, model_dir, config, n_outputs):
        from flowgraph.estimators.canned import LinearRegressor as Canned

        return Canned(linear_columns, model_dir=model_dir,
                      optimizer=optimizer_of(self.optimizer, self.learning_rate),
                      sparse_combiner=self.sparse_combiner, config=config,
                      **self._canned_head_args())


class DNNLinearCombinedRegressor(_Regressor):
    """A wide-and-deep regressor with scikit-learn's API, trained by
    `flowgraph.estimators.DNNLinearCombinedRegressor`.

    Parameters are those of `flowgraph.estimators.sklearn.DNNLinearCombinedClassifier`.

    Example
    -------
    >>> import numpy as np
    >>> X = np.random.RandomState(0).randn(100, 3)
    >>> reg = DNNLinearCombinedRegressor(n_epochs=5, random_state=0).fit(X, X[:, 0])
    >>> reg.predict(X).shape
    (100,)
    """

    def __init__(self, dnn_hidden_units=(64,), dnn_activation_fn="relu", dnn_dropout=None,
                 batch_norm=False, dnn_optimizer="Adagrad", dnn_learning_rate=0.05,
                 linear_optimizer="Ftrl", linear_learning_rate=0.2,
                 linear_sparse_combiner="sum", batch_size=32, n_epochs=20, steps=None,
                 warm_start=False, random_state=None) -> None:
        self.dnn_hidden_units = dnn_hidden_units
        self.dnn_activation_fn = dnn_activation_fn
        self.dnn_dropout = dnn_dropout
        self.batch_norm = batch_norm
        self.dnn_optimizer = dnn_optimizer
        self.dnn_learning_rate = dnn_learning_rate
        self.linear_optimizer = linear_optimizer
        self.linear_learning_rate = linear_learning_rate
        self.linear_sparse_combiner = linear_sparse_combiner
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.steps = steps
        self.warm_start = warm_start
        self.random_state = random_state

    def _canned(self, linear_columns, dnn_columns, model_dir, config, n_outputs):
        from flowgraph.estimators.canned import DNNLinearCombinedRegressor as Canned

        return Canned(
            model_dir=model_dir, linear_feature_columns=linear_columns,
            linear_optimizer=optimizer_of(self.linear_optimizer, self.linear_learning_rate,
                                          "linear_optimizer"),
            dnn_feature_columns=dnn_columns,
            dnn_optimizer=optimizer_of(self.dnn_optimizer, self.dnn_learning_rate,
                                       "dnn_optimizer"),
            dnn_hidden_units=tuple(self.dnn_hidden_units),
            dnn_activation_fn=activation_of(self.dnn_activation_fn, "dnn_activation_fn"),
            dnn_dropout=self.dnn_dropout, batch_norm=bool(self.batch_norm),
            linear_sparse_combiner=self.linear_sparse_combiner, config=config,
            **self._canned_head_args())


class BaselineRegressor(BaselineParams, _Regressor):
    """A regressor that predicts the (weighted) mean of the training labels, ignoring the
    features, with scikit-learn's API; trained by `flowgraph.estimators.BaselineRegressor`
    (like scikit-learn's ``DummyRegressor(strategy='mean')``).

    Parameters are those of `flowgraph.estimators.sklearn.BaselineClassifier`.

    Example
    -------
    >>> import numpy as np
    >>> X, y = np.zeros((40, 2)), np.linspace(0.0, 2.0, 40)
    >>> reg = BaselineRegressor(n_epochs=200, random_state=0).fit(X, y)
    >>> bool(abs(reg.predict(X[:1])[0] - 1.0) < 0.1)
    True
    """

    _canned_name = "BaselineRegressor"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # it ignores the features by design
        return tags

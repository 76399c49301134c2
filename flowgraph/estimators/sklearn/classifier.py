"""scikit-learn classifiers on the canned models: `DNNClassifier`, `LinearClassifier`,
`DNNLinearCombinedClassifier`.

Labels may be any values `numpy.unique` sorts (ints, strings, ...); ``classes_`` holds
them and the model is trained on their indices (`BinaryClassHead` for two classes,
`MultiClassHead` for more). ``decision_function`` returns the logits (one column for two
classes); ``predict_proba`` their sigmoid / softmax, computed in float64.

Example
-------
>>> from sklearn.datasets import load_iris
>>> from flowgraph.estimators.sklearn import LinearClassifier
>>> X, y = load_iris(return_X_y=True)
>>> clf = LinearClassifier(n_epochs=30, random_state=0).fit(X, y)
>>> clf.classes_.tolist(), bool(clf.score(X, y) > 0.9)
([0, 1, 2], True)
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets

from flowgraph.estimators.sklearn.base import (
    BaselineParams,
    FlowgraphModel,
    activation_of,
    optimizer_of,
)

__all__ = [
    "BaselineClassifier",
    "DNNClassifier",
    "DNNLinearCombinedClassifier",
    "LinearClassifier",
]


class _Classifier(ClassifierMixin, FlowgraphModel):
    _y_numeric = False
    _multi_output = False

    def _label_setup(self, y, classes=None):
        check_classification_targets(y)
        self.classes_ = np.unique(y if classes is None else np.asarray(classes))
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in the data, "
                f"but the data contains only one class: {self.classes_[0]!r}")
        self._n_outputs = 1 if len(self.classes_) == 2 else len(self.classes_)
        return self._encode_y(y)

    def _encode_y(self, y) -> np.ndarray:
        check_classification_targets(y)
        unknown = ~np.isin(y, self.classes_)
        if unknown.any():
            raise ValueError(f"y contains labels not in classes_ {self.classes_.tolist()}: "
                             f"{np.unique(np.asarray(y)[unknown]).tolist()}")
        return np.searchsorted(self.classes_, y).astype(np.int64)

    @property
    def _n_classes(self) -> int:
        return len(self.classes_)

    # -- training -------------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        """Train on ``(X, y)`` for `n_epochs` epochs (or `steps` steps); from scratch
        unless `warm_start` and the data have the fitted model's features and classes.

        Returns self."""
        if self.warm_start and self._can_continue(X) and np.isin(
                np.unique(np.asarray(y)), self.classes_).all():
            return self._fit(X, y, sample_weight, reset=False, epochs=self.n_epochs)
        return self._fit(X, y, sample_weight, reset=True, epochs=self.n_epochs)

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One more epoch (or `steps` steps) on ``(X, y)``; the first call needs `classes`,
        every label that will ever appear.

        Returns self."""
        first = not hasattr(self, "_model")
        if first and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        if not first and classes is not None and not np.array_equal(
                self.classes_, np.unique(np.asarray(classes))):
            raise ValueError(f"`classes={np.unique(np.asarray(classes)).tolist()}` is not the "
                             f"same as on the first call to partial_fit: "
                             f"{self.classes_.tolist()}.")
        return self._fit(X, y, sample_weight, reset=first, epochs=1, classes=classes,
                         warm=True)

    # -- predicting -----------------------------------------------------------------------
    def decision_function(self, X) -> np.ndarray:
        """The logits: shape ``(n_samples,)`` for two classes (positive: ``classes_[1]``),
        ``(n_samples, n_classes)`` otherwise."""
        logits = self._raw_predictions(X)
        return logits[:, 0] if self._n_classes == 2 else logits

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, shape ``(n_samples, n_classes)``, columns in ``classes_``
        order."""
        logits = self._raw_predictions(X)
        if self._n_classes == 2:
            p = expit(logits[:, 0])
            return np.column_stack([1.0 - p, p])
        return softmax(logits, axis=1)

    def predict_log_proba(self, X) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X) -> np.ndarray:
        logits = self._raw_predictions(X)
        if self._n_classes == 2:
            return self.classes_[(logits[:, 0] > 0).astype(np.int64)]
        return self.classes_[np.argmax(logits, axis=1)]

    def _canned_head_args(self) -> dict:
        return {"n_classes": self._n_classes, "weight_column": "__sample_weight__",
                # the per-example mean keeps learning rates independent of batch_size
                "loss_reduction": "weighted_sum_over_batch_size"}


class DNNClassifier(_Classifier):
    """A feed-forward neural network classifier with scikit-learn's API, trained by
    `flowgraph.estimators.DNNClassifier`.

    Parameters
    ----------
    hidden_units : tuple of int, default (64,)
        Units per hidden layer.
    activation_fn : str or callable, default 'relu'
        'relu', 'tanh', 'sigmoid', 'elu', 'selu', 'softplus', 'relu6', 'leaky_relu',
        'softsign', 'identity', or a function of a Tensor.
    dropout : float, optional
        Probability of dropping a hidden unit while training.
    batch_norm : bool, default False
    optimizer : str, Optimizer or callable, default 'Adagrad'
    learning_rate : float, optional
        With an optimizer name; None trains at the canned default (0.05).
    batch_size : int, default 32
    n_epochs : int, default 20
        Passes over the data per `fit` (`partial_fit` makes one).
    steps : int, optional
        Train exactly this many steps per `fit` / `partial_fit` instead.
    warm_start : bool, default False
        Continue from the fitted weights in `fit` when the data allow it.
    random_state : int, RandomState or None
        Seeds initialization, shuffling and dropout.

    Attributes
    ----------
    classes_, n_features_in_, feature_names_in_, n_iter_ (epochs trained),
    estimator_ (the canned `tf.estimator.DNNClassifier`).

    Example
    -------
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(200, noise=0.1, random_state=0)
    >>> clf = DNNClassifier(hidden_units=(32, 32), optimizer="Adam", learning_rate=0.01,
    ...                     n_epochs=40, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
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
        from flowgraph.estimators.canned import DNNClassifier as Canned

        return Canned(tuple(self.hidden_units), dnn_columns, model_dir=model_dir,
                      optimizer=optimizer_of(self.optimizer, self.learning_rate),
                      activation_fn=activation_of(self.activation_fn), dropout=self.dropout,
                      batch_norm=bool(self.batch_norm), config=config,
                      **self._canned_head_args())


class LinearClassifier(_Classifier):
    """A linear classifier (logistic / softmax regression) with scikit-learn's API,
    trained by `flowgraph.estimators.LinearClassifier`.

    Parameters
    ----------
    optimizer : str, Optimizer or callable, default 'Ftrl'
    learning_rate : float, optional
        With an optimizer name; None trains at the canned default (0.2).
    sparse_combiner : {'sum', 'mean', 'sqrtn'}, default 'sum'
    batch_size, n_epochs, steps, warm_start, random_state
        As for `DNNClassifier`.

    Example
    -------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), LinearClassifier(random_state=0)).fit(X, y)
    >>> bool(clf.score(X, y) > 0.95)
    True
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
        from flowgraph.estimators.canned import LinearClassifier as Canned

        return Canned(linear_columns, model_dir=model_dir,
                      optimizer=optimizer_of(self.optimizer, self.learning_rate),
                      sparse_combiner=self.sparse_combiner, config=config,
                      **self._canned_head_args())


class DNNLinearCombinedClassifier(_Classifier):
    """A wide-and-deep classifier with scikit-learn's API, trained by
    `flowgraph.estimators.DNNLinearCombinedClassifier`.

    Every input feature feeds both parts; categorical DataFrame columns enter the linear
    part directly and the DNN part as indicator or embedding columns.

    Parameters
    ----------
    dnn_hidden_units : tuple of int, default (64,)
    dnn_activation_fn : str or callable, default 'relu'
    dnn_dropout : float, optional
    batch_norm : bool, default False
    dnn_optimizer : str, Optimizer or callable, default 'Adagrad'
    dnn_learning_rate : float or None, default 0.05
        None trains at TF's combined-model default (0.001).
    linear_optimizer : str, Optimizer or callable, default 'Ftrl'
    linear_learning_rate : float or None, default 0.2
        None trains at TF's combined-model default (``min(0.005, 1/sqrt(n_columns))``).
    linear_sparse_combiner : {'sum', 'mean', 'sqrtn'}, default 'sum'
    batch_size, n_epochs, steps, warm_start, random_state
        As for `DNNClassifier`.

    Example
    -------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(300, n_features=6, random_state=0)
    >>> clf = DNNLinearCombinedClassifier(random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.85)
    True
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
        from flowgraph.estimators.canned import DNNLinearCombinedClassifier as Canned

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


class BaselineClassifier(BaselineParams, _Classifier):
    """A classifier that predicts the (weighted) class frequencies of the training labels,
    ignoring the features, with scikit-learn's API; trained by
    `flowgraph.estimators.BaselineClassifier`. A floor to compare other models against,
    like scikit-learn's ``DummyClassifier(strategy='prior')``.

    Parameters
    ----------
    optimizer : str, Optimizer or callable, default 'Ftrl'
    learning_rate : float, optional
        With an optimizer name; None trains at the canned default.
    batch_size, n_epochs, steps, warm_start, random_state
        As for `DNNClassifier`.

    Example
    -------
    >>> import numpy as np
    >>> X, y = np.zeros((40, 2)), np.array([0] * 30 + [1] * 10)
    >>> clf = BaselineClassifier(n_epochs=100, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:1]).round(1).tolist()
    [[0.8, 0.2]]
    """

    _canned_name = "BaselineClassifier"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # it ignores the features by design
        return tags

"""The Baseline facade classes: class priors and label means, weighted by sample_weight,
as scikit-learn's Dummy estimators compute them."""

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.dummy import DummyClassifier, DummyRegressor

from flowgraph.estimators import sklearn as fs

X = np.random.default_rng(0).normal(size=(60, 3))
Y_CLASS = np.array([0] * 30 + [1] * 20 + [2] * 10)


def test_baseline_classifier_learns_the_class_prior():
    clf = fs.BaselineClassifier(optimizer="Adam", learning_rate=0.05, n_epochs=150,
                                random_state=0).fit(X, Y_CLASS)
    dummy = DummyClassifier(strategy="prior").fit(X, Y_CLASS)
    np.testing.assert_allclose(clf.predict_proba(X[:3]), dummy.predict_proba(X[:3]),
                               atol=0.03)
    assert clf.predict(X[:2]).tolist() == [0, 0]
    assert clf.classes_.tolist() == [0, 1, 2]


def test_baseline_regressor_sample_weight_gives_the_weighted_mean():
    y = np.concatenate([np.zeros(30), np.full(30, 3.0)])
    weight = np.concatenate([np.full(30, 3.0), np.ones(30)])
    kwargs = {"optimizer": "Adam", "learning_rate": 0.1, "n_epochs": 120, "random_state": 0}
    plain = fs.BaselineRegressor(**kwargs).fit(X, y)
    weighted = fs.BaselineRegressor(**kwargs).fit(X, y, sample_weight=weight)
    want_plain = DummyRegressor().fit(X, y).predict(X[:1])[0]                   # 1.5
    want_weighted = DummyRegressor().fit(X, y, sample_weight=weight).predict(X[:1])[0]  # 0.75
    assert abs(plain.predict(X[:1])[0] - want_plain) < 0.1
    assert abs(weighted.predict(X[:1])[0] - want_weighted) < 0.1

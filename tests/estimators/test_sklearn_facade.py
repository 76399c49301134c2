"""The scikit-learn facade beyond the common checks: pipelines, model selection, pickling,
DataFrames, sparse input, partial_fit and warm_start."""

import logging
import os
import pickle

import numpy as np
import pytest

pytest.importorskip("sklearn")
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_classification
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from flowgraph.estimators import sklearn as fs

logging.getLogger("tensorflow").setLevel(logging.WARNING)


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=150, centers=3, n_features=4, random_state=0)
    return StandardScaler().fit_transform(X), y


def test_init_only_stores_and_get_set_params():
    clf = fs.DNNClassifier(hidden_units=(8, 4), learning_rate=0.1)
    assert vars(clf) == clf.get_params()
    clf.set_params(hidden_units=(3,), n_epochs=2)
    assert clf.hidden_units == (3,) and clf.n_epochs == 2
    assert not hasattr(clf, "classes_")


def test_string_labels_and_probabilities(blobs):
    X, y = blobs
    labels = np.array(["ant", "bee", "cat"])[y]
    clf = fs.DNNClassifier(hidden_units=(16,), n_epochs=10, random_state=0).fit(X, labels)
    assert clf.classes_.tolist() == ["ant", "bee", "cat"]
    proba = clf.predict_proba(X)
    assert proba.shape == (150, 3) and proba.dtype == np.float64
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= set(clf.classes_)
    assert clf.decision_function(X).shape == (150, 3)
    assert clf.score(X, labels) > 0.9
    assert clf.n_features_in_ == 4


def test_binary_decision_function_is_the_logit(blobs):
    X, y = blobs
    X, y = X[y < 2], y[y < 2]
    clf = fs.LinearClassifier(n_epochs=5, random_state=0).fit(X, y)
    d = clf.decision_function(X)
    assert d.shape == (len(X),)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], 1 / (1 + np.exp(-d)))
    np.testing.assert_array_equal(clf.predict(X), (d > 0).astype(int))


def test_estimator_is_the_canned_model_with_tf_variable_names(blobs):
    X, y = blobs
    clf = fs.DNNClassifier(hidden_units=(5,), n_epochs=1, random_state=0).fit(X, y)
    names = clf.estimator_.get_variable_names()
    assert "dnn/hiddenlayer_0/kernel" in names and "dnn/logits/kernel" in names
    assert clf.estimator_.get_variable_value("dnn/hiddenlayer_0/kernel").shape == (4, 5)
    lin = fs.LinearClassifier(n_epochs=1, random_state=0).fit(X, y)
    assert lin.estimator_.get_variable_value("linear/linear_model/x/weights").shape == (4, 3)


def test_same_random_state_same_model(blobs):
    X, y = blobs
    a = fs.DNNClassifier(hidden_units=(8,), n_epochs=3, random_state=7).fit(X, y)
    b = fs.DNNClassifier(hidden_units=(8,), n_epochs=3, random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_pickle_carries_weights_not_paths(blobs):
    X, y = blobs
    clf = fs.LinearClassifier(n_epochs=3, random_state=0).fit(X, y)
    model_dir = clf.estimator_.model_dir
    state = clf.__getstate__()
    assert "_model" not in state
    assert all(isinstance(v, np.ndarray) for v in state["_model_arrays"].values())
    assert model_dir not in repr(state)
    copy = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(copy.predict_proba(X), clf.predict_proba(X))
    assert copy.estimator_.model_dir != model_dir
    # The original still works, and an unpickled copy pickles again.
    again = pickle.loads(pickle.dumps(copy))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))


def test_temporary_model_dir_removed_with_the_estimator(blobs):
    import gc

    X, y = blobs
    clf = fs.LinearRegressor(n_epochs=1, random_state=0).fit(X, y.astype(float))
    model_dir = clf.estimator_.model_dir
    assert os.path.isdir(model_dir)
    del clf
    gc.collect()
    assert not os.path.exists(model_dir)


def test_clone_gives_an_unfitted_copy(blobs):
    X, y = blobs
    clf = fs.LinearClassifier(n_epochs=2, random_state=0).fit(X, y)
    c = clone(clf)
    assert c.get_params() == clf.get_params() and not hasattr(c, "_model")


@pytest.mark.slow
def test_pipeline_cross_val_and_grid_search_with_two_jobs():
    X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    pipe = make_pipeline(StandardScaler(), fs.LinearClassifier(n_epochs=5, random_state=0))
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.mean() > 0.8
    grid = GridSearchCV(fs.DNNClassifier(hidden_units=(8,), n_epochs=3, random_state=0),
                        {"learning_rate": [0.05, 0.2]}, cv=2, n_jobs=2)
    grid.fit(X, y)
    assert grid.best_params_["learning_rate"] in (0.05, 0.2)
    assert grid.score(X, y) > 0.8


def test_sparse_input_matches_dense(blobs):
    X, y = blobs
    dense = fs.LinearClassifier(n_epochs=3, random_state=0).fit(X, y)
    sparse = fs.LinearClassifier(n_epochs=3, random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.predict_proba(sp.csc_matrix(X)), dense.predict_proba(X),
                               rtol=1e-6)


def test_partial_fit_needs_classes_then_continues(blobs):
    X, y = blobs
    clf = fs.LinearClassifier(random_state=0)
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(X, y)
    clf.partial_fit(X[:50], y[:50], classes=[0, 1, 2])
    step1 = clf.estimator_.get_variable_value("global_step")
    clf.partial_fit(X[50:], y[50:])
    assert clf.estimator_.get_variable_value("global_step") > step1
    assert clf.n_iter_ == 2
    with pytest.raises(ValueError, match="not in classes_"):
        clf.partial_fit(X[:3], np.array([0, 1, 5]))
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(X[:, :3], y)


def test_partial_fit_keeps_one_session_and_saves_before_reads(blobs):
    X, y = blobs
    clf = fs.DNNClassifier(hidden_units=(8,), batch_size=32, random_state=0)
    clf.partial_fit(X, y, classes=[0, 1, 2])
    trainer = clf._warm[1]
    clf.partial_fit(X, y)
    assert clf._warm[1] is trainer  # same graph and session: no rebuild per call
    # Nothing has been written since the first call; reading the model writes it.
    assert clf.estimator_.get_variable_value("global_step") == 2 * 5
    proba = clf.predict_proba(X)
    copy = pickle.loads(pickle.dumps(clf))
    assert not hasattr(copy, "_warm")
    np.testing.assert_allclose(copy.predict_proba(X), proba, rtol=1e-6)
    copy.partial_fit(X, y)  # an unpickled model trains on from its arrays
    assert copy.estimator_.get_variable_value("global_step") == 3 * 5
    # New parameters rebuild the session, from the trained weights.
    clf.set_params(learning_rate=0.01)
    clf.partial_fit(X, y)
    assert clf._warm[1] is not trainer
    assert clf.estimator_.get_variable_value("global_step") == 3 * 5
    # fit() trains through Estimator.train after saving and closing the session.
    clf.set_params(warm_start=True, n_epochs=1)
    clf.fit(X, y)
    assert not hasattr(clf, "_warm")
    assert clf.estimator_.get_variable_value("global_step") == 4 * 5


def test_partial_fit_matches_between_runs(blobs):
    X, y = blobs
    runs = []
    for _ in range(2):
        reg = fs.DNNRegressor(hidden_units=(4,), random_state=3)
        for _ in range(3):
            reg.partial_fit(X, y.astype(float))
        runs.append(reg.predict(X))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_warm_start_continues_and_cold_start_restarts(blobs):
    X, y = blobs
    warm = fs.DNNRegressor(hidden_units=(4,), n_epochs=1, warm_start=True, random_state=0)
    warm.fit(X, y.astype(float))
    s1 = warm.estimator_.get_variable_value("global_step")
    warm.fit(X, y.astype(float))
    assert warm.estimator_.get_variable_value("global_step") == 2 * s1
    cold = fs.DNNRegressor(hidden_units=(4,), n_epochs=1, random_state=0)
    cold.fit(X, y.astype(float)).fit(X, y.astype(float))
    assert cold.estimator_.get_variable_value("global_step") == s1


def test_multi_output_regression(blobs):
    X, _ = blobs
    Y = np.column_stack([X[:, 0] + X[:, 1], X[:, 2] - X[:, 3]])
    reg = fs.LinearRegressor(n_epochs=30, learning_rate=0.5, random_state=0).fit(X, Y)
    assert reg.predict(X).shape == (150, 2)
    assert reg.score(X, Y) > 0.9


def test_steps_parameter_trains_exactly_that_many_steps(blobs):
    X, y = blobs
    clf = fs.LinearClassifier(steps=7, random_state=0).fit(X, y)
    assert clf.estimator_.get_variable_value("global_step") == 7


def test_bad_parameters_raise_at_fit(blobs):
    X, y = blobs
    for params in ({"batch_size": 0}, {"n_epochs": -1}, {"activation_fn": "swishy"},
                   {"optimizer": "Nesterov", "learning_rate": 0.1}):
        clf = fs.DNNClassifier(**params)  # __init__ never validates
        with pytest.raises(ValueError):
            clf.fit(X, y)


def test_dataframes_numeric_and_categorical():
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    n = 200
    color = rng.choice(["red", "green", "blue"], n)
    size = rng.randn(n)
    y = ((color == "red") ^ (size > 0)).astype(int)
    df = pd.DataFrame({"color name": pd.Categorical(color), "size": size,
                       "shop": rng.choice(["a", "b"], n).astype(object)})
    for cls in (fs.LinearClassifier, fs.DNNClassifier, fs.DNNLinearCombinedClassifier):
        clf = cls(n_epochs=20, random_state=0).fit(df, y)
        assert clf.feature_names_in_.tolist() == ["color name", "size", "shop"]
        assert clf.predict(df).shape == (n,)
    assert clf.score(df, y) > 0.9
    names = clf.estimator_.get_variable_names()
    assert "linear/linear_model/color_name/weights" in names
    # unseen category: the out-of-vocabulary bucket, no error
    unseen = df.head(3).assign(shop=["zzz", "a", "b"])
    assert clf.predict(unseen).shape == (3,)
    with pytest.raises(ValueError, match="feature names"):
        clf.predict(df[["size", "color name", "shop"]])
    lin = fs.LinearRegressor(n_epochs=2, random_state=0).fit(df[["size"]], size)
    assert lin.feature_names_in_.tolist() == ["size"]


@pytest.mark.slow
def test_module_doctests():
    import doctest

    from flowgraph.estimators.sklearn import base, classifier, regressor

    for module in (fs, base, classifier, regressor):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__

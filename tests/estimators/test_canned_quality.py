"""Canned estimators reach known-good quality on real and synthetic data (fixed seeds)."""

import logging

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from flowgraph import feature_column as fc
from flowgraph.estimators import canned
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.estimators.run_config import RunConfig
from flowgraph.train import AdamOptimizer, FtrlOptimizer

logging.getLogger("tensorflow").setLevel(logging.WARNING)


def _config():
    return RunConfig(tf_random_seed=0, save_summary_steps=None, log_step_count_steps=None)


def _train_predict(est, x_train, y_train, x_test, steps, key, batch_size=32):
    est.train(numpy_input_fn(x_train, y_train, batch_size=batch_size, num_epochs=None,
                             shuffle=True), steps=steps)
    batches = est.predict(numpy_input_fn(x_test, batch_size=4096, shuffle=False),
                          predict_keys=[key], yield_single_examples=False)
    return np.concatenate([b[key] for b in batches])


def _scaled_split(X, y, **kw):
    x_tr, x_te, y_tr, y_te = train_test_split(X, y, **kw)
    scaler = StandardScaler().fit(x_tr)
    return (scaler.transform(x_tr).astype(np.float32), scaler.transform(x_te).astype(np.float32),
            y_tr, y_te)


def test_dnn_classifier_digits(tmp_path):
    X, y = load_digits(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split((X / 16.0).astype(np.float32), y,
                                              test_size=0.25, random_state=0)
    est = canned.DNNClassifier([128, 64], [fc.numeric_column("x", [64])], n_classes=10,
                               optimizer=lambda: AdamOptimizer(0.003), model_dir=str(tmp_path),
                               config=_config())
    ids = _train_predict(est, {"x": x_tr}, y_tr, {"x": x_te}, 1500, "class_ids")
    assert (ids.ravel() == y_te).mean() >= 0.96


def test_linear_classifier_breast_cancer(tmp_path):
    X, y = load_breast_cancer(return_X_y=True)
    x_tr, x_te, y_tr, y_te = _scaled_split(X, y, test_size=0.25, random_state=0, stratify=y)
    est = canned.LinearClassifier([fc.numeric_column("x", [30])], model_dir=str(tmp_path),
                                  config=_config())
    ids = _train_predict(est, {"x": x_tr}, y_tr, {"x": x_te}, 1000, "class_ids")
    assert (ids.ravel() == y_te).mean() >= 0.96


@pytest.mark.parametrize("kind", ["linear", "dnn"])
def test_regressors_diabetes(kind, tmp_path):
    X, y = load_diabetes(return_X_y=True)
    x_tr, x_te, y_tr, y_te = _scaled_split(X, y, test_size=0.2, random_state=42)
    mean, std = y_tr.mean(), y_tr.std()
    columns = [fc.numeric_column("x", [10])]
    if kind == "linear":
        est, steps = canned.LinearRegressor(columns, model_dir=str(tmp_path),
                                            config=_config()), 1000
    else:
        est, steps = canned.DNNRegressor([16], columns, model_dir=str(tmp_path),
                                         config=_config()), 300
    pred = _train_predict(est, {"x": x_tr}, ((y_tr - mean) / std).astype(np.float32),
                          {"x": x_te}, steps, "predictions")
    assert r2_score(y_te, pred.ravel() * std + mean) >= 0.40


# -- wide and deep on click-through data --------------------------------------------------
def _click_data(n, seed=0):
    """Clicks driven by a memorizable (site x ad) effect table, which the crossed column
    of a linear model learns, plus a low-rank (user . category) affinity, which
    embeddings in a DNN generalize."""
    table = np.random.RandomState(100)
    site_ad = table.normal(0.0, 1.5, (20, 30))
    users, cats = table.normal(0.0, 1.0, (100, 3)), table.normal(0.0, 1.0, (20, 3))
    rng = np.random.RandomState(seed)
    site, ad = rng.randint(20, size=n), rng.randint(30, size=n)
    user, cat = rng.randint(100, size=n), rng.randint(20, size=n)
    logit = site_ad[site, ad] + 1.5 * np.sum(users[user] * cats[cat], axis=1) - 0.5
    click = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(np.int64)
    as_str = lambda prefix, v: np.array([f"{prefix}{i}" for i in v], dtype=object)  # noqa: E731
    features = {"site": as_str("s", site), "ad": as_str("a", ad), "user": as_str("u", user),
                "category": as_str("c", cat)}
    return features, click


def _ctr_columns():
    site = fc.categorical_column_with_hash_bucket("site", 50)
    ad = fc.categorical_column_with_hash_bucket("ad", 60)
    user = fc.categorical_column_with_hash_bucket("user", 200)
    category = fc.categorical_column_with_hash_bucket("category", 40)
    wide = [site, ad, user, category, fc.crossed_column(["site", "ad"], 2000)]
    deep = [fc.embedding_column(site, 4), fc.embedding_column(ad, 4),
            fc.embedding_column(user, 6), fc.embedding_column(category, 6)]
    return wide, deep


@pytest.mark.slow
def test_wide_and_deep_beats_each_half_on_click_through_auc(tmp_path):
    x_tr, y_tr = _click_data(20000, seed=1)
    x_te, y_te = _click_data(5000, seed=2)
    wide, deep = _ctr_columns()
    steps = 1500

    def linear_opt():
        return FtrlOptimizer(0.1)

    def dnn_opt():
        return AdamOptimizer(0.01)

    models = {
        "linear": canned.LinearClassifier(wide, optimizer=linear_opt,
                                          model_dir=str(tmp_path / "l"), config=_config()),
        "dnn": canned.DNNClassifier([32], deep, optimizer=dnn_opt,
                                    model_dir=str(tmp_path / "d"), config=_config()),
        "combined": canned.DNNLinearCombinedClassifier(
            linear_feature_columns=wide, linear_optimizer=linear_opt,
            dnn_feature_columns=deep, dnn_optimizer=dnn_opt, dnn_hidden_units=[32],
            model_dir=str(tmp_path / "c"), config=_config()),
    }
    auc = {}
    for name, est in models.items():
        p = _train_predict(est, x_tr, y_tr, x_te, steps, "logistic", batch_size=64)
        auc[name] = roc_auc_score(y_te, p.ravel())
    print("click-through AUC", auc)
    assert auc["combined"] > auc["linear"] and auc["combined"] > auc["dnn"], auc

"""BoostedTreesClassifier / BoostedTreesRegressor (TF 1.x's layer-by-layer boosting).

TensorFlow 2.15 has neither the estimators nor the kernels (tensorflow_estimator 2.15 has
no ``BoostedTrees*`` and the ``BoostedTrees*`` raw ops have no registered kernel), so the
expected values are derived by hand from TF 1.x's algorithm: per-example gradients and
hessians of the SUM_OVER_BATCH_SIZE loss, leaf weight ``-g/(h+l2)``, gain ``g**2/(h+l2)``,
children valued parent + learning_rate * weight. Each test spells out the arithmetic.
"""

import doctest
import json
import logging
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators.canned import (
    boosted_trees,
    boosted_trees_core,
    boosted_trees_features,
)
from flowgraph.estimators.inputs import numpy_input_fn
from flowgraph.estimators.run_config import RunConfig

logging.getLogger("tensorflow").setLevel(logging.WARNING)

fc = tf.feature_column
X4 = np.array([0., 1., 2., 3.] * 5, np.float32)  # buckets 0..3, five rows each
Y4 = (X4 >= 2).astype(np.int64)
COL4 = fc.bucketized_column(fc.numeric_column("x"), [0.5, 1.5, 2.5])
# Tree 1 (logits 0, p=.5, N=20): left g=.25 h=.125 -> -2, right +2, gain 1.
# Tree 2: p=sigmoid(-2) on the left, weight -1/(1-p) = -1.1353353; gain p/(1-p).
P2 = 1 / (1 + np.exp(2.0))
TWO_TREES = -2 - 1 / (1 - P2)        # -3.1353353


def _config():
    return RunConfig(tf_random_seed=1, save_summary_steps=None, log_step_count_steps=None)


def _input(x, y=None, batch_size=20, epochs=None):
    return numpy_input_fn(x, y, batch_size=batch_size, shuffle=False, num_epochs=epochs)


def _logits(est, x, key="logits"):
    return np.array([p[key][0] for p in est.predict(_input(x, epochs=1))])


def _classifier(tmp_path, **kw):
    kw = {"n_batches_per_layer": 1, "n_trees": 2, "max_depth": 1, "learning_rate": 1.0,
          **kw}
    return tf.estimator.BoostedTreesClassifier([COL4], model_dir=str(tmp_path),
                                               config=_config(), **kw)


def test_exported_under_estimator_and_compat_v1():
    assert tf.estimator.BoostedTreesClassifier is boosted_trees.BoostedTreesClassifier
    assert tf.compat.v1.estimator.BoostedTreesRegressor is boosted_trees.BoostedTreesRegressor


def test_classifier_grows_two_stumps_and_stops_by_itself(tmp_path):
    est = _classifier(tmp_path)
    est.train(_input({"x": X4}, Y4))                      # no steps: stops after 2 trees
    assert int(est.get_variable_value("global_step")) == 2
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}),
                               [TWO_TREES, TWO_TREES, -TWO_TREES, -TWO_TREES], rtol=1e-6)
    pred = next(est.predict(_input({"x": X4[:1]}, epochs=1)))
    assert sorted(pred) == ["all_class_ids", "all_classes", "class_ids", "classes",
                            "logistic", "logits", "probabilities"]
    np.testing.assert_allclose(pred["logistic"], [0.041673], atol=1e-6)
    assert pred["class_ids"] == [0]
    metrics = est.evaluate(_input({"x": X4}, Y4, epochs=1))
    assert metrics["accuracy"] == 1.0 and metrics["global_step"] == 2
    # SUM_OVER_BATCH_SIZE: the loss is the mean log loss
    assert metrics["loss"] == pytest.approx(np.log1p(np.exp(TWO_TREES)), rel=1e-5)
    assert metrics["loss"] == pytest.approx(metrics["average_loss"])


def test_boosted_trees_estimator_takes_a_head(tmp_path):
    # a BinaryClassHead with the classifier's loss reduction grows the same trees
    head = tf.estimator.BinaryClassHead(loss_reduction=tf.losses.Reduction.SUM_OVER_BATCH_SIZE)
    est = tf.estimator.BoostedTreesEstimator(
        [COL4], n_batches_per_layer=1, head=head, n_trees=2, max_depth=1,
        learning_rate=1.0, model_dir=str(tmp_path), config=_config())
    est.train(_input({"x": X4}, Y4))
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}),
                               [TWO_TREES, TWO_TREES, -TWO_TREES, -TWO_TREES], rtol=1e-5)
    with pytest.raises(ValueError, match="logits_dimension 3"):
        tf.estimator.BoostedTreesEstimator([COL4], 1, tf.estimator.MultiClassHead(3))


def test_feature_importances_sum_split_gains(tmp_path):
    est = _classifier(tmp_path)
    est.train(_input({"x": X4}, Y4))
    imp = est.experimental_feature_importances()
    assert list(imp) == ["x_bucketized"]
    assert imp["x_bucketized"] == pytest.approx(1 + P2 / (1 - P2), rel=1e-5)
    assert est.experimental_feature_importances(normalize=True)["x_bucketized"] == 1.0


def test_training_resumes_from_the_checkpoint_and_a_new_estimator_predicts_the_same(
        tmp_path):
    _classifier(tmp_path).train(_input({"x": X4}, Y4), steps=1)
    est = _classifier(tmp_path)                           # a fresh estimator, same dir
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}), [-2, -2, 2, 2])
    est.train(_input({"x": X4}, Y4))
    assert int(est.get_variable_value("global_step")) == 2
    again = _classifier(tmp_path)
    np.testing.assert_allclose(_logits(again, {"x": X4[:4]}),
                               [TWO_TREES, TWO_TREES, -TWO_TREES, -TWO_TREES], rtol=1e-6)


def test_statistics_are_averaged_over_n_batches_per_layer(tmp_path):
    # two batches of 10: each batch's gradients carry 1/10, the average over both
    # equals one batch of 20, so the trees are those of the one-batch test
    est = _classifier(tmp_path, n_batches_per_layer=2)
    est.train(_input({"x": X4}, Y4, batch_size=10))
    assert int(est.get_variable_value("global_step")) == 4
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}),
                               [TWO_TREES, TWO_TREES, -TWO_TREES, -TWO_TREES], rtol=1e-6)


def test_label_vocabulary_takes_the_gradients_path(tmp_path):
    labels = np.where(Y4 == 1, "yes", "no")
    est = _classifier(tmp_path, label_vocabulary=["no", "yes"])
    est.train(_input({"x": X4}, labels))
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}),
                               [TWO_TREES, TWO_TREES, -TWO_TREES, -TWO_TREES], rtol=1e-5)
    assert next(est.predict(_input({"x": X4[3:4]}, epochs=1)))["classes"] == [b"yes"]


def test_regressor_center_bias_then_split(tmp_path):
    # y = 2x + 1: bias = -mean(g)/mean(h) = mean(y) = 4 (1st step), 2nd step's update
    # is 0 (< 1% of the bias): centered. Then per bucket g = (4 - y)/2, h = .5:
    # split after bucket 1, weights -/+2 -> leaves 2 and 6.
    y = (2 * X4 + 1).astype(np.float32)
    est = tf.estimator.BoostedTreesRegressor(
        [COL4], n_batches_per_layer=1, n_trees=1, max_depth=1, learning_rate=1.0,
        center_bias=True, model_dir=str(tmp_path), config=_config())
    est.train(_input({"x": X4}, y))
    assert int(est.get_variable_value("global_step")) == 3
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}, "predictions"), [2, 2, 6, 6],
                               rtol=1e-6)
    metrics = est.evaluate(_input({"x": X4}, y, epochs=1))
    assert metrics["average_loss"] == pytest.approx(1.0, rel=1e-6)   # errors of +-1


def test_regressor_weights_give_weighted_leaf_means(tmp_path):
    x = {"x": np.array([0., 0., 1., 1.], np.float32),
         "w": np.array([1., 3., 1., 1.], np.float32)}
    y = np.array([1., 3., 5., 9.], np.float32)
    col = fc.bucketized_column(fc.numeric_column("x"), [0.5])
    est = tf.estimator.BoostedTreesRegressor(
        [col], n_batches_per_layer=1, n_trees=1, max_depth=1, learning_rate=1.0,
        weight_column="w", model_dir=str(tmp_path), config=_config())
    est.train(_input(x, y, batch_size=4))
    np.testing.assert_allclose(_logits(est, x, "predictions"), [2.5, 2.5, 7, 7], rtol=1e-6)


def test_indicator_columns_split_on_one_category(tmp_path):
    # 6 rows r,g,b,r,g,b, y = (color == r): splitting on "r" gains 1 - 1/9, on "g"
    # 1/3 - 1/9; leaves -2 (not r) and +2 (r)
    color = fc.indicator_column(fc.categorical_column_with_vocabulary_list(
        "color", ["r", "g", "b"]))
    x = {"color": np.array(["r", "g", "b"] * 2)}
    y = np.array([1, 0, 0] * 2)
    est = tf.estimator.BoostedTreesClassifier(
        [color], n_batches_per_layer=1, n_trees=1, max_depth=1, learning_rate=1.0,
        model_dir=str(tmp_path), config=_config())
    est.train(_input(x, y, batch_size=6))
    np.testing.assert_allclose(_logits(est, x), [2, -2, -2] * 2, rtol=1e-6)
    imp = est.experimental_feature_importances()
    assert list(imp) == ["color"] and imp["color"] == pytest.approx(8 / 9, rel=1e-5)


A2 = np.array([0., 0., 1., 1.] * 5, np.float32)      # y = a; b carries no signal
B2 = np.array([0., 1., 0., 1.] * 5, np.float32)


def _two_feature_classifier(tmp_path, **kw):
    cols = [fc.bucketized_column(fc.numeric_column(k), [0.5]) for k in ("b", "a")]
    return tf.estimator.BoostedTreesClassifier(
        cols, n_batches_per_layer=1, n_trees=1, max_depth=2, learning_rate=1.0,
        model_dir=str(tmp_path), config=_config(), **kw)


def test_no_pruning_keeps_zero_gain_splits(tmp_path):
    est = _two_feature_classifier(tmp_path)
    est.train(_input({"a": A2, "b": B2}, A2.astype(np.int64)))
    assert est.get_variable_value("boosted_trees/ensemble/tree_meta")[0].tolist() == [7, 2, 1]
    np.testing.assert_allclose(_logits(est, {"a": A2[:4], "b": B2[:4]}),
                               [TWO_TREES, TWO_TREES, -TWO_TREES, -TWO_TREES], rtol=1e-6)
    assert list(est.experimental_feature_importances()) == ["a_bucketized", "b_bucketized"]
    # the NumPy kernels' prediction agrees with the graph's (features sorted: a, b)
    state = {k: est.get_variable_value(f"boosted_trees/ensemble/{k}")
             for k in ("feature", "threshold", "left", "value", "growing")}
    buckets = np.stack([A2[:4], B2[:4]], axis=1).astype(np.int32)
    np.testing.assert_allclose(boosted_trees_core.predict(state, buckets),
                               [TWO_TREES, TWO_TREES, -TWO_TREES, -TWO_TREES], rtol=1e-6)


def test_post_pruning_removes_negative_gain_splits(tmp_path):
    est = _two_feature_classifier(tmp_path, pruning_mode="post", tree_complexity=0.01)
    est.train(_input({"a": A2, "b": B2}, A2.astype(np.int64)))
    assert int(est.get_variable_value("global_step")) == 2
    assert est.get_variable_value("boosted_trees/ensemble/tree_meta")[0].tolist() == [3, 2, 1]
    np.testing.assert_allclose(_logits(est, {"a": A2[:4], "b": B2[:4]}), [-2, -2, 2, 2],
                               rtol=1e-6)


def test_pre_pruning_refuses_negative_gains_and_stops_after_twice_the_layers(tmp_path):
    # the second layer never splits: attempts go on until they exceed
    # 2 * n_trees * max_depth = 4, i.e. 5 steps
    est = _two_feature_classifier(tmp_path, pruning_mode="pre", tree_complexity=0.01)
    est.train(_input({"a": A2, "b": B2}, A2.astype(np.int64)))
    assert int(est.get_variable_value("global_step")) == 5
    growing = est.get_variable_value("boosted_trees/ensemble/growing")
    assert growing[boosted_trees_core.LAYERS_ATTEMPTED] == 5
    np.testing.assert_allclose(_logits(est, {"a": A2[:4], "b": B2[:4]}), [-2, -2, 2, 2],
                               rtol=1e-6)


def test_directional_feature_contributions_of_a_regressor(tmp_path):
    # y = 2a + b: bias = mean(y) = 1.5, then a splits (+-1), then b (+-.5)
    est = tf.estimator.BoostedTreesRegressor(
        [fc.bucketized_column(fc.numeric_column(k), [0.5]) for k in ("b", "a")],
        n_batches_per_layer=1, n_trees=1, max_depth=2, learning_rate=1.0, center_bias=True,
        model_dir=str(tmp_path), config=_config())
    est.train(_input({"a": A2, "b": B2}, (2 * A2 + B2).astype(np.float32)))
    preds = list(est.experimental_predict_with_explanations(
        _input({"a": A2[:4], "b": B2[:4]}, epochs=1), predict_keys=["predictions"]))
    assert [sorted(p) for p in preds] == [["bias", "dfc", "predictions"]] * 4
    assert [p["bias"] for p in preds] == pytest.approx([1.5] * 4)
    assert [list(p["dfc"].items()) for p in preds] == [
        [("a_bucketized", -1.0), ("b_bucketized", -0.5)],
        [("a_bucketized", -1.0), ("b_bucketized", 0.5)],
        [("a_bucketized", 1.0), ("b_bucketized", -0.5)],
        [("a_bucketized", 1.0), ("b_bucketized", 0.5)]]


def test_classifier_contributions_add_up_to_the_probability(tmp_path):
    # bias centering iterates to the prior logit: bias = P(y=1) = .75
    est = _two_feature_classifier(tmp_path, center_bias=True)
    est.train(_input({"a": A2, "b": B2}, ((A2 + B2) >= 1).astype(np.int64)))
    for p in est.experimental_predict_with_explanations(
            _input({"a": A2[:4], "b": B2[:4]}, epochs=1)):
        assert p["bias"] == pytest.approx(0.75, abs=1e-3)
        assert p["bias"] + sum(p["dfc"].values()) == pytest.approx(
            float(p["probabilities"][1]), abs=1e-6)
    with pytest.raises(ValueError, match="center_bias must be enabled"):
        next(_classifier(tmp_path / "other").experimental_predict_with_explanations(
            _input({"x": X4}, epochs=1)))


def test_min_node_weight_blocks_light_nodes(tmp_path):
    # the root's averaged hessian sum is 20 * .25 / 20 = .25 < .3: nothing splits
    est = _classifier(tmp_path, n_trees=1, min_node_weight=0.3)
    est.train(_input({"x": X4}, Y4))
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}), [0, 0, 0, 0])


def test_weights_and_gains_with_l1_l2():
    w, g = boosted_trees_core.weights_and_gains(np.float32(-0.4), np.float32(0.2), 0.1, 0.1)
    assert (float(w), float(g)) == pytest.approx((1.0, 0.3))          # g+l1=-.3, h+l2=.3
    w, g = boosted_trees_core.weights_and_gains(np.float32(0.05), np.float32(0.2), 0.1, 0.)
    assert (float(w), float(g)) == (0.0, 0.0)                          # |g| <= l1
    w, g = boosted_trees_core.weights_and_gains(np.float32(0.5), np.float32(0.0), 0., 0.)
    assert (float(w), float(g)) == (0.0, 0.0)                          # no hessian


def test_l2_shrinks_the_leaves(tmp_path):
    # left g=.25, h=.125: weight -.25/(.125+.125) = -1
    est = _classifier(tmp_path, n_trees=1, l2_regularization=0.125)
    est.train(_input({"x": X4}, Y4))
    np.testing.assert_allclose(_logits(est, {"x": X4[:4]}), [-1, -1, 1, 1], rtol=1e-6)


@pytest.mark.slow
def test_export_saved_model_serves_the_ensemble(tmp_path):
    est = _classifier(tmp_path / "model")
    est.train(_input({"x": X4}, Y4))
    path = est.export_saved_model(
        str(tmp_path / "export"), tf.estimator.export.build_raw_serving_input_receiver_fn(
            {"x": tf.placeholder(tf.float32, [None, 1])}))
    with tf.Graph().as_default(), tf.Session() as sess:
        sig = tf.saved_model.loader.load(sess, ["serve"], path).signature_def["predict"]
        logits = sess.run(sig.outputs["logits"].name,
                          {sig.inputs["x"].name: np.array([[0.], [3.]], np.float32)})
    np.testing.assert_allclose(logits[:, 0], [TWO_TREES, -TWO_TREES], rtol=1e-6)
    served = subprocess.run([sys.executable, "-c", (
        "import json, sys, numpy as np, flowgraph as tf\n"
        "with tf.Graph().as_default(), tf.Session() as sess:\n"
        "    sig = tf.saved_model.loader.load(sess, ['serve'], sys.argv[1])"
        ".signature_def['predict']\n"
        "    out = sess.run(sig.outputs['logits'].name,\n"
        "                   {sig.inputs['x'].name: np.array([[0.], [3.]], np.float32)})\n"
        "print(json.dumps(out[:, 0].tolist()))\n"), path.decode() if isinstance(path, bytes)
        else str(path)], capture_output=True, text=True, timeout=120, check=True)
    np.testing.assert_allclose(json.loads(served.stdout.strip().splitlines()[-1]),
                               [TWO_TREES, -TWO_TREES], rtol=1e-6)  # a fresh interpreter


@pytest.mark.parametrize("kwargs, message", [
    ({"n_classes": 3}, "only binary classification"),
    ({"pruning_mode": "pre"}, "tree_complexity must be positive"),
    ({"tree_complexity": 0.1}, "no effect unless pruning mode"),
    ({"pruning_mode": "full", "tree_complexity": 0.1}, "pruning_mode must be one of"),
    ({"train_in_memory": True, "n_batches_per_layer": 2}, "n_batches_per_layer should be"),
])
def test_bad_arguments_raise_value_error(kwargs, message):
    kw = {"n_batches_per_layer": 1, **kwargs}
    with pytest.raises(ValueError, match=message):
        tf.estimator.BoostedTreesClassifier([COL4], **kw)


def test_numeric_columns_are_refused_with_a_hint():
    with pytest.raises(ValueError, match="bucketized_column"):
        tf.estimator.BoostedTreesRegressor([fc.numeric_column("x")], n_batches_per_layer=1)


def test_defaults_are_tf1s():
    import inspect

    sig = inspect.signature(tf.estimator.BoostedTreesClassifier.__init__)
    defaults = {k: p.default for k, p in sig.parameters.items()
                if p.default is not inspect.Parameter.empty}
    assert defaults == {
        "model_dir": None, "n_classes": 2, "weight_column": None, "label_vocabulary": None,
        "n_trees": 100, "max_depth": 6, "learning_rate": 0.1, "l1_regularization": 0.,
        "l2_regularization": 0., "tree_complexity": 0., "min_node_weight": 0.,
        "config": None, "center_bias": False, "pruning_mode": "none",
        "quantile_sketch_epsilon": 0.01, "train_in_memory": False}


def test_module_docstrings_run():
    for mod in (boosted_trees, boosted_trees_core, boosted_trees_features):
        assert doctest.testmod(mod).failed == 0


@pytest.mark.slow
def test_breast_cancer_quality(tmp_path):
    datasets = pytest.importorskip("sklearn.datasets")
    data = datasets.load_breast_cancer()
    x, y = data.data.astype(np.float32), data.target.astype(np.int64)
    rng = np.random.RandomState(0)
    order = rng.permutation(len(y))
    train, test = order[:400], order[400:]
    cols, feats = [], {}
    for i in range(x.shape[1]):
        key = f"f{i:02d}"
        bounds = sorted(set(np.quantile(x[train, i], np.linspace(0.05, 0.95, 19)).tolist()))
        cols.append(fc.bucketized_column(fc.numeric_column(key), bounds))
        feats[key] = x[:, i]
    est = tf.estimator.BoostedTreesClassifier(
        cols, n_batches_per_layer=1, n_trees=20, max_depth=3, learning_rate=0.3,
        center_bias=True, model_dir=str(tmp_path), config=_config())
    est.train(_input({k: v[train] for k, v in feats.items()}, y[train], batch_size=400))
    metrics = est.evaluate(_input({k: v[test] for k, v in feats.items()}, y[test],
                                  batch_size=len(test), epochs=1))
    assert metrics["accuracy"] > 0.93

"""MultiHead, and the TRAIN / PREDICT specs of every head: train ops (optimizer,
train_op_fn, update_ops, regularization), summaries, export outputs and mode/argument
errors."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators import export
from flowgraph.estimators.head import (
    BinaryClassHead,
    LogisticRegressionHead,
    MultiClassHead,
    MultiHead,
    MultiLabelHead,
    PoissonRegressionHead,
    RegressionHead,
)

HEADS = {
    "binary": (BinaryClassHead, {}, np.array([[1], [0]])),
    "multi_class": (MultiClassHead, {"n_classes": 3}, np.array([[2], [0]])),
    "multi_label": (MultiLabelHead, {"n_classes": 2}, np.array([[1, 0], [1, 1]])),
    "regression": (RegressionHead, {}, np.array([[1.5], [-2.0]], np.float32)),
    "poisson": (PoissonRegressionHead, {}, np.array([[1.0], [3.0]], np.float32)),
    "logistic": (LogisticRegressionHead, {}, np.array([[1.0], [0.2]], np.float32)),
}


def _model(head):
    """A linear model with one variable; logits [2, logits_dimension]."""
    x = tf.constant([[1.0, 2.0, -1.0], [0.5, -1.0, 3.0]])
    w = tf.Variable(np.full([3, head.logits_dimension], 0.1, np.float32), name="w")
    return w, tf.matmul(x, w)


@pytest.mark.parametrize("kind", sorted(HEADS))
def test_train_op_fn_and_update_ops(sess, kind):
    cls, kwargs, labels = HEADS[kind]
    head = cls(**kwargs)
    w, logits = _model(head)
    counter = tf.Variable(0, name="counter")
    seen = []

    def train_op_fn(loss):
        seen.append(loss)
        return tf.assign_add(w, tf.ones_like(w) * 0.01).op

    spec = head.create_estimator_spec(
        features={}, mode="train", logits=logits, labels=labels, train_op_fn=train_op_fn,
        update_ops=[tf.assign_add(counter, 1).op],
        regularization_losses=[tf.constant(0.25)])
    assert seen == [spec.loss] and spec.mode == "train"
    plain = head.loss(labels=labels, logits=logits)
    sess.run(tf.global_variables_initializer())
    assert sess.run(spec.loss) == pytest.approx(sess.run(plain) + 0.25, rel=1e-5)
    before = sess.run(w)
    sess.run(spec.train_op)
    np.testing.assert_allclose(sess.run(w), before + 0.01, rtol=1e-6)
    assert sess.run(counter) == 1
    summaries = tf.get_collection(tf.GraphKeys.SUMMARIES)
    assert len(summaries) == 2  # loss and regularization_loss
    assert sorted(spec.predictions) == sorted(head.predictions(logits))


# MultiClassHead is left out until SparseSoftmaxCrossEntropyWithLogits has a gradient.
@pytest.mark.parametrize("kind", ["binary", "multi_label", "regression", "poisson"])
def test_train_with_gradient_descent_optimizer(sess, kind):
    if not hasattr(tf.train, "GradientDescentOptimizer"):
        pytest.skip("tf.train.GradientDescentOptimizer is not available yet")
    cls, kwargs, labels = HEADS[kind]
    head = cls(**kwargs)
    _, logits = _model(head)
    step = tf.train.get_or_create_global_step()
    spec = head.create_estimator_spec(
        features={}, mode="train", logits=logits, labels=labels,
        optimizer=tf.train.GradientDescentOptimizer(0.1))
    sess.run(tf.global_variables_initializer())
    loss0 = sess.run(spec.loss)
    for _ in range(3):
        sess.run(spec.train_op)
    assert sess.run(spec.loss) < loss0
    assert sess.run(step) == 3


def test_train_argument_errors():
    head = BinaryClassHead()
    logits = tf.constant([[1.0]])
    labels = np.array([[1]])
    with pytest.raises(ValueError, match="train_op_fn and optimizer cannot both be None"):
        head.create_estimator_spec(features={}, mode="train", logits=logits, labels=labels)

    class Opt:
        def minimize(self, loss, **kwargs):
            return tf.no_op()

    with pytest.raises(ValueError, match="train_op_fn and optimizer cannot both be set"):
        head.create_estimator_spec(features={}, mode="train", logits=logits, labels=labels,
                                   optimizer=Opt(), train_op_fn=lambda loss: tf.no_op())
    with pytest.raises(ValueError, match="update_ops should be a list or a tuple"):
        head.create_estimator_spec(features={}, mode="train", logits=logits, labels=labels,
                                   train_op_fn=lambda loss: tf.no_op(), update_ops=tf.no_op())
    with pytest.raises(ValueError, match="You must provide a labels Tensor"):
        head.create_estimator_spec(features={}, mode="eval", logits=logits)
    with pytest.raises(ValueError, match="mode=fit unrecognized"):
        head.create_estimator_spec(features={}, mode="fit", logits=logits, labels=labels)


def test_optimizer_gets_global_step_and_trainable_variables():
    calls = {}

    class Opt:
        def minimize(self, loss, global_step=None, var_list=None):
            calls.update(loss=loss, global_step=global_step, var_list=var_list)
            return tf.no_op()

    head = RegressionHead()
    w, logits = _model(head)
    step = tf.train.get_or_create_global_step()
    spec = head.create_estimator_spec(features={}, mode="train", logits=logits,
                                      labels=np.zeros([2, 1], np.float32), optimizer=Opt(),
                                      trainable_variables=[w])
    assert calls == {"loss": spec.loss, "global_step": step, "var_list": [w]}


# -- PREDICT and export outputs -------------------------------------------------------------
@pytest.mark.parametrize("kind", sorted(HEADS))
def test_predict_spec_export_outputs(sess, kind):
    cls, kwargs, _ = HEADS[kind]
    head = cls(**kwargs)
    _, logits = _model(head)
    spec = head.create_estimator_spec(features={}, mode="infer", logits=logits)
    assert spec.loss is None and spec.train_op is None
    outs = spec.export_outputs
    assert isinstance(outs["predict"], export.PredictOutput)
    if kind in ("binary", "multi_class", "multi_label"):
        expected = {"serving_default", "classification", "predict"}
        if kind == "binary":
            expected.add("regression")
            assert isinstance(outs["regression"], export.RegressionOutput)
        assert set(outs) == expected
        assert isinstance(outs["serving_default"], export.ClassificationOutput)
        assert outs["classification"] is outs["serving_default"]
    else:
        assert set(outs) == {"serving_default", "regression", "predict"}
        assert isinstance(outs["serving_default"], export.RegressionOutput)


# -- MultiHead ------------------------------------------------------------------------------
def _two_heads(**kwargs):
    return MultiHead([MultiClassHead(3, name="a"), RegressionHead(name="b")], **kwargs)


LOGITS = np.array([[1.0, 2.0, 0.5, 1.5], [0.3, -1.0, 2.0, -2.0]], np.float32)
LABELS = {"a": np.array([[1], [2]]), "b": np.array([[1.0], [-1.0]], np.float32)}


def _ce(x, y):
    e = np.exp(x - x.max(-1, keepdims=True))
    return -np.log(e[np.arange(len(y)), y.ravel()] / e.sum(-1))


def test_multi_head_loss_predictions_and_split(sess):
    head = _two_heads(head_weights=[1.0, 0.5])
    assert (head.name, head.logits_dimension) == ("a_b", 4)
    loss = head.loss(LABELS, LOGITS)
    ce = _ce(LOGITS[:, :3], LABELS["a"]).mean()
    sq = ((LOGITS[:, 3:] - LABELS["b"]) ** 2).mean()
    np.testing.assert_allclose(sess.run(loss), ce + 0.5 * sq, rtol=1e-5)
    as_dict = head.loss(LABELS, {"a": LOGITS[:, :3], "b": LOGITS[:, 3:]})
    np.testing.assert_allclose(sess.run(as_dict), ce + 0.5 * sq, rtol=1e-5)
    preds = sess.run(head.predictions(LOGITS))
    assert sorted(preds) == [("a", "all_class_ids"), ("a", "all_classes"), ("a", "class_ids"),
                             ("a", "classes"), ("a", "logits"), ("a", "probabilities"),
                             ("b", "predictions")]
    np.testing.assert_array_equal(preds[("b", "predictions")], LOGITS[:, 3:])
    np.testing.assert_array_equal(preds[("a", "class_ids")], [[1], [2]])


def test_multi_head_eval_metrics(sess):
    head = _two_heads()
    spec = head.create_estimator_spec(features={}, mode="eval", logits=LOGITS, labels=LABELS,
                                      regularization_losses=[tf.constant(0.5)])
    assert sorted(spec.eval_metric_ops) == [
        "accuracy/a", "average_loss/a", "average_loss/b", "label/mean/b", "loss/a", "loss/b",
        "prediction/mean/b", "regularization_loss"]
    sess.run(tf.local_variables_initializer())
    sess.run({k: v[1] for k, v in spec.eval_metric_ops.items()})
    got = sess.run({k: v[0] for k, v in spec.eval_metric_ops.items()})
    ce = _ce(LOGITS[:, :3], LABELS["a"]).mean()
    sq = ((LOGITS[:, 3:] - LABELS["b"]) ** 2).mean()
    np.testing.assert_allclose([got["loss/a"], got["loss/b"], got["accuracy/a"]],
                               [ce, sq, 1.0], rtol=1e-5)
    np.testing.assert_allclose(sess.run(spec.loss), ce + sq + 0.5, rtol=1e-5)


def test_multi_head_predict_export_outputs(sess):
    head = _two_heads()
    spec = head.create_estimator_spec(features={}, mode="infer", logits=LOGITS)
    outs = spec.export_outputs
    assert sorted(outs) == ["a", "a/classification", "a/predict", "b", "b/predict",
                            "b/regression", "predict", "serving_default"]
    assert outs["serving_default"] is outs["a"]
    assert isinstance(outs["b"], export.RegressionOutput)
    assert sorted(outs["predict"].outputs) == [
        "a/all_class_ids", "a/all_classes", "a/class_ids", "a/classes", "a/logits",
        "a/probabilities", "b/predictions"]


def test_multi_head_train(sess):
    head = MultiHead([BinaryClassHead(name="a"), MultiLabelHead(2, name="b")])
    w = tf.Variable(np.zeros([3], np.float32))
    logits = tf.reshape(tf.tile(w, [2]), [2, 3])
    spec = head.create_estimator_spec(
        features={}, mode="train", logits=logits,
        labels={"a": np.array([[1], [0]]), "b": np.array([[1, 0], [0, 1]])},
        train_op_fn=lambda loss: tf.assign(w, w + 1.0).op)
    sess.run(tf.global_variables_initializer())
    assert sess.run(spec.loss) == pytest.approx(2 * np.log(2.0), rel=1e-5)
    sess.run(spec.train_op)
    np.testing.assert_array_equal(sess.run(w), [1.0, 1.0, 1.0])


def test_multi_head_errors():
    with pytest.raises(ValueError, match="Must specify heads"):
        MultiHead([])
    with pytest.raises(ValueError, match="All given heads must have name specified"):
        MultiHead([RegressionHead()])
    with pytest.raises(ValueError, match="heads and head_weights must have the same size"):
        _two_heads(head_weights=[1.0])
    head = _two_heads()
    with pytest.raises(ValueError, match=r"Could not split logits of shape \[2, 5\].*\[3, 1\]"):
        head.predictions(np.zeros([2, 5], np.float32))
    with pytest.raises(ValueError, match=r"logits has missing values for head\(s\): \['b'\]"):
        head.predictions({"a": LOGITS[:, :3]})
    with pytest.raises(ValueError, match="labels must be a dict"):
        head.loss(np.zeros([2, 1]), LOGITS)
    with pytest.raises(ValueError, match=r"labels has missing values for head\(s\): \['a'\]"):
        head.loss({"b": LABELS["b"]}, LOGITS)
    mixed = MultiHead([RegressionHead(name="x"),
                       RegressionHead(name="y", loss_reduction="weighted_sum")])
    with pytest.raises(ValueError, match="loss_reduction must be the same"):
        _ = mixed.loss_reduction

"""MultiClassHead, RegressionHead, PoissonRegressionHead and LogisticRegressionHead against
NumPy / scikit-learn references. Values marked "TF 2.15" were read off
tensorflow_estimator 2.15 with the same inputs."""

import math

import numpy as np
import pytest
from sklearn.metrics import accuracy_score

import flowgraph as tf
from flowgraph.estimators.head import (
    LogisticRegressionHead,
    MultiClassHead,
    PoissonRegressionHead,
    RegressionHead,
)
from flowgraph.framework.errors import InvalidArgumentError


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax_ce(labels, logits):
    return -np.log(softmax(logits)[np.arange(len(labels)), labels.ravel()])


def stream_eval(sess, head, batches, labels_dtype, labels_dim=1):
    logits = tf.placeholder(tf.float32, [None, head.logits_dimension])
    labels = tf.placeholder(labels_dtype, [None, labels_dim])
    weights = tf.placeholder(tf.float32, [None, 1])
    spec = head.create_estimator_spec(features={"w": weights}, mode="eval", logits=logits,
                                      labels=labels)
    sess.run(tf.local_variables_initializer())
    for b in batches:
        sess.run({k: v[1] for k, v in spec.eval_metric_ops.items()},
                 {logits: b["logits"], labels: b["labels"], weights: b["w"]})
    return sess.run({k: v[0] for k, v in spec.eval_metric_ops.items()})


def _cat(key, *batches):
    return np.concatenate([b[key] for b in batches])


M1 = {"logits": np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0], [2.0, 1.0, 0.0]], np.float32),
      "labels": np.array([[1], [0], [0]]), "w": np.array([[1.0], [2.0], [3.0]], np.float32)}
M2 = {"logits": np.array([[0.0, 0.0, 1.0], [3.0, 1.0, 1.0]], np.float32),
      "labels": np.array([[2], [1]]), "w": np.array([[0.5], [1.0]], np.float32)}


# -- MultiClassHead -------------------------------------------------------------------------
def test_multi_class_predictions_match_numpy(sess):
    head = MultiClassHead(3)
    preds = head.predictions(M1["logits"])
    out = sess.run(preds)
    assert sorted(out) == ["all_class_ids", "all_classes", "class_ids", "classes", "logits",
                           "probabilities"]
    np.testing.assert_allclose(out["probabilities"], softmax(M1["logits"]), rtol=1e-5)
    ids = M1["logits"].argmax(-1)[:, None]
    np.testing.assert_array_equal(out["class_ids"], ids)
    assert out["class_ids"].dtype == np.int64 and out["all_class_ids"].dtype == np.int32
    assert out["classes"].tolist() == [[b"1"], [b"2"], [b"0"]]
    assert out["all_classes"].tolist() == [[b"0", b"1", b"2"]] * 3
    assert preds["probabilities"].shape.as_list() == [3, 3]


def test_multi_class_vocabulary_predictions_and_labels(sess):
    head = MultiClassHead(3, label_vocabulary=["cat", "dog", "eel"], name="pet")
    preds = sess.run(head.predictions(M1["logits"], keys=["classes", "all_classes"]))
    assert preds["classes"].ravel().tolist() == [b"dog", b"eel", b"cat"]
    assert preds["all_classes"][0].tolist() == [b"cat", b"dog", b"eel"]
    labels = tf.placeholder(tf.string, [None])
    loss = head.loss(labels=labels, logits=M1["logits"])
    got = sess.run(loss, {labels: ["dog", "cat", "cat"]})
    np.testing.assert_allclose(got, softmax_ce(M1["labels"], M1["logits"]).mean(), rtol=1e-5)
    with pytest.raises(InvalidArgumentError, match=r"'cow'.*head 'pet'.*\['cat', 'dog', 'eel'\]"):
        sess.run(loss, {labels: ["dog", "cow", "cat"]})


def test_multi_class_weighted_loss_and_batch_shaped_labels(sess):
    head = MultiClassHead(3, weight_column="w")
    loss = head.loss(labels=M1["labels"][:, 0], logits=M1["logits"],
                     features={"w": M1["w"]})
    expected = (M1["w"][:, 0] * softmax_ce(M1["labels"], M1["logits"])).sum() / 3
    np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-5)


def test_multi_class_eval_metrics_two_batches(sess):
    got = stream_eval(sess, MultiClassHead(3, weight_column="w"), [M1, M2], tf.int64)
    x, y, w = _cat("logits", M1, M2), _cat("labels", M1, M2), _cat("w", M1, M2)[:, 0]
    assert sorted(got) == ["accuracy", "average_loss"]
    np.testing.assert_allclose(got["average_loss"], (w * softmax_ce(y, x)).sum() / w.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(got["accuracy"],
                               accuracy_score(y.ravel(), x.argmax(-1), sample_weight=w),
                               rtol=1e-6)
    np.testing.assert_allclose([got["average_loss"], got["accuracy"]], [1.0693994, 0.6],
                               rtol=1e-5)  # TF 2.15


def test_multi_class_label_errors(sess):
    head = MultiClassHead(3, name="h")
    logits = np.zeros([2, 3], np.float32)
    with pytest.raises(ValueError, match=r"Labels dtype should be integer\. Instead got float"):
        head.loss(labels=np.array([[1.0], [0.0]]), logits=logits)
    with pytest.raises(ValueError, match="Labels dtype should be string if there is a vocab"):
        MultiClassHead(3, label_vocabulary=["a", "b", "c"]).loss(labels=np.array([[1], [0]]),
                                                                 logits=logits)
    labels = tf.placeholder(tf.int32, [None, 1])
    loss = head.loss(labels=labels, logits=logits)
    with pytest.raises(InvalidArgumentError, match=r"Labels must be <= n_classes - 1.*\[3\]"):
        sess.run(loss, {labels: [[3], [0]]})
    with pytest.raises(InvalidArgumentError, match=r"\[-1\]"):
        sess.run(loss, {labels: [[-1], [0]]})
    with pytest.raises(ValueError, match=r"Expected labels shape \(2, 1\), found \(3, 1\)"):
        head.loss(labels=np.zeros([3, 1], np.int64), logits=logits)


def test_multi_class_constructor_validation():
    with pytest.raises(ValueError, match=r"n_classes must be > 2: 2\."):
        MultiClassHead(2)
    with pytest.raises(ValueError, match="n_classes cannot be None"):
        MultiClassHead(None)
    with pytest.raises(ValueError, match='"label_vocabulary" does not have "n_classes" items'):
        MultiClassHead(3, label_vocabulary=["a", "b"])
    assert MultiClassHead(np.int64(4)).logits_dimension == 4


# -- RegressionHead -------------------------------------------------------------------------
R1 = {"logits": np.array([[1.0, 2.0], [3.0, -1.0]], np.float32),
      "labels": np.array([[1.5, 2.0], [2.0, 0.0]], np.float32),
      "w": np.array([[1.0], [2.0]], np.float32)}
R2 = {"logits": np.array([[0.0, 1.0]], np.float32),
      "labels": np.array([[1.0, 1.0]], np.float32), "w": np.array([[3.0]], np.float32)}


def test_regression_loss_with_weights(sess):
    head = RegressionHead(label_dimension=2, weight_column="w")
    sq = (R1["logits"] - R1["labels"]) ** 2
    for w in (R1["w"], R1["w"][:, 0], np.array([[1.0, 0.5], [2.0, 0.0]], np.float32)):
        loss = head.loss(labels=R1["labels"], logits=R1["logits"], features={"w": w})
        wb = w if w.ndim == 2 else w[:, None]
        np.testing.assert_allclose(sess.run(loss), (wb * sq).sum() / 4, rtol=1e-6)
    with pytest.raises(ValueError, match=r"weights shape must be.*logits_dimension"):
        head.loss(labels=R1["labels"], logits=R1["logits"],
                  features={"w": np.ones([2, 3], np.float32)})


def test_regression_predictions_and_inverse_link(sess):
    out = sess.run(RegressionHead(2).predictions(R1["logits"]))
    assert sorted(out) == ["predictions"]
    np.testing.assert_array_equal(out["predictions"], R1["logits"])
    out = sess.run(RegressionHead(2, inverse_link_fn=tf.exp).predictions(R1["logits"]))
    np.testing.assert_allclose(out["predictions"], np.exp(R1["logits"]), rtol=1e-6)
    np.testing.assert_array_equal(out["logits"], R1["logits"])


def test_regression_eval_metrics_two_batches(sess):
    got = stream_eval(sess, RegressionHead(2, weight_column="w"), [R1, R2], tf.float32, 2)
    x, y, w = _cat("logits", R1, R2), _cat("labels", R1, R2), _cat("w", R1, R2)
    wb = np.broadcast_to(w, x.shape)
    expected = {"average_loss": (wb * (x - y) ** 2).sum() / wb.sum(),
                "label/mean": (wb * y).sum() / wb.sum(),
                "prediction/mean": (wb * x).sum() / wb.sum()}
    assert sorted(got) == sorted(expected)
    for k, v in expected.items():
        np.testing.assert_allclose(got[k], v, rtol=1e-6, err_msg=k)
    np.testing.assert_allclose([got["average_loss"], got["prediction/mean"], got["label/mean"]],
                               [0.6041667, 0.8333333, 1.125], rtol=1e-6)  # TF 2.15


def test_regression_label_checks(sess):
    head = RegressionHead(label_dimension=2)
    with pytest.raises(ValueError, match=r"Mismatched label shape. Expected labels dimension=2"
                                         r". Received 1"):
        head.loss(labels=np.zeros([2, 1]), logits=np.zeros([2, 2], np.float32))
    with pytest.raises(ValueError, match="numeric"):
        head.loss(labels=tf.constant([["a", "b"]]), logits=np.zeros([1, 2], np.float32))
    with pytest.raises(ValueError, match="Invalid label_dimension 0"):
        RegressionHead(0)
    labels = tf.placeholder(tf.float32, None)
    loss = head.loss(labels=labels, logits=np.zeros([2, 2], np.float32))
    assert sess.run(loss, {labels: np.ones([2, 2])}) == pytest.approx(1.0)
    with pytest.raises(InvalidArgumentError, match=r"Expected labels shape \[2, 2\]"):
        sess.run(loss, {labels: np.ones([2, 3])})


# -- PoissonRegressionHead, LogisticRegressionHead ------------------------------------------
P1 = {"logits": np.array([[0.5], [1.0], [-1.0]], np.float32),
      "labels": np.array([[1.0], [3.0], [0.0]], np.float32),
      "w": np.array([[1.0], [2.0], [1.0]], np.float32)}


def poisson_loss(z, c, full=True):
    loss = np.exp(c) - z * c
    if full:
        zs = np.where(z > 1, z, 1.0)
        loss = loss + np.where(z > 1, zs * np.log(zs) - zs + 0.5 * np.log(2 * math.pi * zs), 0)
    return loss


def test_poisson_head(sess):
    head = PoissonRegressionHead(weight_column="w")
    got = stream_eval(sess, head, [P1], tf.float32)
    w, z, c = P1["w"], P1["labels"], P1["logits"]
    np.testing.assert_allclose(got["average_loss"], (w * poisson_loss(z, c)).sum() / w.sum(),
                               rtol=1e-5)
    np.testing.assert_allclose(got["prediction/mean"], (w * np.exp(c)).sum() / w.sum(), 1e-6)
    np.testing.assert_allclose([got["average_loss"], got["prediction/mean"]],
                               [1.1203319, 1.863291], rtol=1e-5)  # TF 2.15
    short = PoissonRegressionHead(compute_full_loss=False).loss(labels=z, logits=c)
    np.testing.assert_allclose(sess.run(short), poisson_loss(z, c, False).mean(), rtol=1e-6)
    preds = sess.run(head.predictions(c))
    np.testing.assert_allclose(preds["predictions"], np.exp(c), rtol=1e-6)


def test_logistic_regression_head(sess):
    g1 = {"logits": P1["logits"], "labels": np.array([[1.0], [0.3], [0.0]], np.float32),
          "w": P1["w"]}
    head = LogisticRegressionHead(weight_column="w")
    got = stream_eval(sess, head, [g1], tf.float32)
    np.testing.assert_allclose([got["average_loss"], got["prediction/mean"], got["label/mean"]],
                               [0.7034655, 0.5883795, 0.4], rtol=1e-5)  # TF 2.15
    x, z = g1["logits"], g1["labels"]
    ce = np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(got["average_loss"], (g1["w"] * ce).sum() / 4, rtol=1e-5)
    labels = tf.placeholder(tf.float32, [None, 1])
    loss = head.loss(labels=labels, logits=x, features={"w": g1["w"]})
    with pytest.raises(InvalidArgumentError, match=r"Labels must be in range \[0, 1\]"):
        sess.run(loss, {labels: [[1.0], [1.5], [0.0]]})
    preds = sess.run(head.predictions(x))
    np.testing.assert_allclose(preds["predictions"], sigmoid(x), rtol=1e-6)

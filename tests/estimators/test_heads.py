"""BinaryClassHead and MultiLabelHead, the heads' label ops, and behaviour every head
shares (loss reduction, label/logits/weights checks, loss_fn), against NumPy and
scikit-learn references. Values marked "TF 2.15" were read off tensorflow_estimator 2.15
with the same inputs."""

import numpy as np
import pytest
from sklearn.metrics import precision_score, recall_score

import flowgraph as tf
from flowgraph.estimators.head import BinaryClassHead, MultiLabelHead, vocab_ops
from flowgraph.estimators.head.base_head import (
    MEAN,
    SUM,
    SUM_BY_NONZERO_WEIGHTS,
    SUM_OVER_BATCH_SIZE,
)
from flowgraph.framework.errors import InvalidArgumentError


# -- references ---------------------------------------------------------------------------
def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def sigmoid_ce(z, x):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def confusion(y, p, w):
    """Weighted tp, fp, fn at the 200 thresholds of streaming AUC."""
    t = np.array([-1e-7] + [(i + 1) / 199 for i in range(198)] + [1 + 1e-7])
    pos = p.reshape(-1, 1) > t
    y, w = y.reshape(-1, 1).astype(float), w.reshape(-1, 1)
    return ((w * y * pos).sum(0), (w * (1 - y) * pos).sum(0), (w * y * ~pos).sum(0),
            (w * (1 - y) * ~pos).sum(0))


def roc_auc(y, p, w):
    tp, fp, fn, tn = confusion(y, p, w)
    tpr, fpr = tp / (tp + fn), fp / (fp + tn)
    return np.sum((fpr[:-1] - fpr[1:]) * (tpr[:-1] + tpr[1:]) / 2)


def pr_auc(y, p, w):
    """Precision-recall AUC with Davis & Goadrich interpolation between thresholds."""
    tp, fp, fn, _ = confusion(y, p, w)
    pp = tp + fp
    dtp, dp = tp[:-1] - tp[1:], pp[:-1] - pp[1:]
    slope = np.divide(dtp, dp, out=np.zeros_like(dtp), where=dp > 0)
    intercept = tp[1:] - slope * pp[1:]
    ratio = np.where((pp[:-1] > 0) & (pp[1:] > 0),
                     pp[:-1] / np.where(pp[1:] > 0, pp[1:], 1), 1.0)
    den = tp[1:] + fn[1:]
    num = slope * (dtp + intercept * np.log(ratio))
    return np.sum(np.divide(num, den, out=np.zeros_like(num), where=den > 0))


def stream_eval(sess, head, batches, labels_dtype=tf.int64, labels_shape=(None, 1)):
    """Build an EVAL spec on placeholders, stream `batches`, return (metrics, spec)."""
    logits = tf.placeholder(tf.float32, [None, head.logits_dimension])
    labels = tf.placeholder(labels_dtype, list(labels_shape))
    weights = tf.placeholder(tf.float32, [None, 1])
    spec = head.create_estimator_spec(features={"w": weights}, mode="eval", logits=logits,
                                      labels=labels)
    sess.run(tf.local_variables_initializer())
    updates = {k: v[1] for k, v in spec.eval_metric_ops.items()}
    for b in batches:
        sess.run(updates, {logits: b["logits"], labels: b["labels"], weights: b["w"]})
    return sess.run({k: v[0] for k, v in spec.eval_metric_ops.items()}), spec


B1 = {"logits": np.array([[1.5], [-0.3], [0.2], [-2.0], [0.7]], np.float32),
      "labels": np.array([[1], [0], [0], [1], [1]]),
      "w": np.array([[1.0], [2.0], [0.5], [1.0], [3.0]], np.float32)}
B2 = {"logits": np.array([[0.1], [-1.0], [2.5]], np.float32),
      "labels": np.array([[0], [0], [1]]),
      "w": np.array([[1.0], [1.0], [2.0]], np.float32)}


def _cat(key, *batches):
    return np.concatenate([b[key] for b in batches])


# -- BinaryClassHead: predictions -----------------------------------------------------------
def test_binary_predictions_match_numpy(sess):
    head = BinaryClassHead()
    x = B1["logits"]
    preds = head.predictions(x)
    assert sorted(preds) == ["all_class_ids", "all_classes", "class_ids", "classes",
                             "logistic", "logits", "probabilities"]
    out = sess.run(preds)
    np.testing.assert_allclose(out["logistic"], sigmoid(x), rtol=1e-6)
    np.testing.assert_allclose(out["probabilities"],
                               np.hstack([1 - sigmoid(x), sigmoid(x)]), rtol=1e-5, atol=1e-7)
    ids = (x > 0).astype(np.int64)
    np.testing.assert_array_equal(out["class_ids"], ids)
    assert out["class_ids"].dtype == np.int64 and out["all_class_ids"].dtype == np.int32
    assert out["classes"].tolist() == [[str(i).encode()] for i in ids.ravel()]
    assert out["all_classes"].tolist() == [[b"0", b"1"]] * 5
    np.testing.assert_array_equal(out["all_class_ids"], [[0, 1]] * 5)
    assert preds["classes"].dtype == tf.string and preds["logistic"].shape.as_list() == [5, 1]


def test_binary_predictions_keys_and_vocabulary(sess):
    head = BinaryClassHead(label_vocabulary=["neg", "pos"])
    logits = tf.placeholder(tf.float32, [None, 1])
    preds = head.predictions(logits, keys=["classes", "all_classes"])
    assert sorted(preds) == ["all_classes", "classes"]
    out = sess.run(preds, {logits: [[2.0], [-1.0], [0.5]]})
    assert out["classes"].ravel().tolist() == [b"pos", b"neg", b"pos"]
    assert out["all_classes"].tolist() == [[b"neg", b"pos"]] * 3
    with pytest.raises(ValueError, match="Prediction key must be in PredictionKeys"):
        head.predictions(logits, keys=["predictions"])


# -- BinaryClassHead: loss ------------------------------------------------------------------
@pytest.mark.parametrize("reduction", [SUM_OVER_BATCH_SIZE, SUM, MEAN, SUM_BY_NONZERO_WEIGHTS,
                                       "sum_over_batch_size"])
def test_binary_weighted_loss_reductions(sess, reduction):
    w = B1["w"].copy()
    w[2] = 0.0
    head = BinaryClassHead(weight_column="w", loss_reduction=reduction)
    loss = head.loss(labels=B1["labels"], logits=B1["logits"], features={"w": w[:, 0]})
    terms = w * sigmoid_ce(B1["labels"], B1["logits"])
    den = {SUM: 1.0, MEAN: w.sum(), SUM_BY_NONZERO_WEIGHTS: 4.0}.get(reduction, 5.0)
    value = sess.run(loss)
    assert value.dtype == np.float32 and loss.shape.as_list() == []
    np.testing.assert_allclose(value, terms.sum() / den, rtol=1e-5)


def test_binary_loss_example_and_regularization(sess):
    head = BinaryClassHead()
    logits = np.array([[45.0], [-41.0]], np.float32)
    loss = head.loss(labels=np.array([[1], [1]]), logits=logits,
                     regularization_losses=[tf.constant(1.0), tf.constant(0.25)])
    np.testing.assert_allclose(sess.run(loss), 41 / 2 + 1.25, rtol=1e-6)


def test_binary_string_labels_need_vocabulary():
    # TF fails casting the strings to float: UnimplementedError (tf-oracle)
    with pytest.raises(tf.errors.UnimplementedError, match="label_vocabulary"):
        BinaryClassHead().loss(labels=tf.constant([["a"]]), logits=tf.constant([[1.0]]))


def test_binary_label_vocabulary_lookup_and_unknown_label(sess):
    head = BinaryClassHead(label_vocabulary=["neg", "pos"], name="clicks")
    labels = tf.placeholder(tf.string, [None, 1])
    loss = head.loss(labels=labels, logits=tf.constant([[1.0], [-2.0]]))
    expected = (sigmoid_ce(1.0, 1.0) + sigmoid_ce(0.0, -2.0)) / 2
    np.testing.assert_allclose(sess.run(loss, {labels: [["pos"], ["neg"]]}), expected, 1e-6)
    np.testing.assert_allclose(sess.run(loss, {labels: [[b"pos"], [b"neg"]]}), expected, 1e-6)
    with pytest.raises(InvalidArgumentError, match=r"'maybe'.*head 'clicks'"):
        sess.run(loss, {labels: [["pos"], ["maybe"]]})


def test_binary_labels_out_of_range_fail_at_run_time(sess):
    labels = tf.placeholder(tf.float32, [None, 1])
    loss = BinaryClassHead().loss(labels=labels, logits=tf.constant([[1.0], [2.0]]))
    assert np.isfinite(sess.run(loss, {labels: [[0.25], [1.0]]}))  # soft labels are fine
    with pytest.raises(InvalidArgumentError, match=r"Labels must be <= n_classes - 1.*\[2.0\]"):
        sess.run(loss, {labels: [[0.0], [2.0]]})


# -- label / logits / weights shapes --------------------------------------------------------
def test_labels_of_shape_batch_are_accepted(sess):
    head = BinaryClassHead()
    a = head.loss(labels=np.array([1, 0]), logits=np.array([[0.5], [0.5]], np.float32))
    b = head.loss(labels=np.array([[1], [0]]), logits=np.array([[0.5], [0.5]], np.float32))
    np.testing.assert_allclose(*sess.run([a, b]))


def test_static_label_shape_mismatch_names_both_shapes():
    head = BinaryClassHead()
    with pytest.raises(ValueError, match=r"Mismatched label shape.*dimension=1. Received 2"):
        head.loss(labels=np.zeros([3, 2]), logits=np.zeros([3, 1], np.float32))
    with pytest.raises(ValueError, match=r"Expected labels shape \(3, 1\), found \(4, 1\)"):
        head.loss(labels=np.zeros([4, 1]), logits=np.zeros([3, 1], np.float32))
    with pytest.raises(ValueError, match="You must provide a labels Tensor"):
        head.loss(labels=None, logits=np.zeros([3, 1], np.float32))


def test_dynamic_label_shape_mismatch_fails_at_run_time(sess):
    labels = tf.placeholder(tf.float32, [None, None])
    logits = tf.placeholder(tf.float32, [None, 1])
    loss = BinaryClassHead().loss(labels=labels, logits=logits)
    with pytest.raises(InvalidArgumentError, match=r"Expected labels shape \[2, 1\].*found "
                                                   r"labels shape \[3, 1\]"):
        sess.run(loss, {labels: np.zeros([3, 1]), logits: np.zeros([2, 1])})


def test_logits_shape_is_checked(sess):
    with pytest.raises(ValueError, match=r"logits shape must be \[D0, D1, ... DN, "
                                         r"logits_dimension\], got \(2, 3\)"):
        BinaryClassHead().predictions(np.zeros([2, 3], np.float32))
    with pytest.raises(ValueError, match="rank at least 2"):
        BinaryClassHead().predictions(np.zeros([2], np.float32))
    logits = tf.placeholder(tf.float32, [None, None])
    preds = BinaryClassHead().predictions(logits, keys=["logistic"])
    with pytest.raises(InvalidArgumentError, match="logits"):
        sess.run(preds, {logits: np.zeros([2, 2])})


def test_weights_shape_and_feature_errors(sess):
    head = BinaryClassHead(weight_column="w")
    logits = np.zeros([3, 1], np.float32)
    with pytest.raises(ValueError, match=r"weights shape must be.*found \(3, 2\)"):
        head.loss(labels=np.zeros([3, 1]), logits=logits, features={"w": np.ones([3, 2])})
    with pytest.raises(ValueError, match="'w' is not in features"):
        head.loss(labels=np.zeros([3, 1]), logits=logits, features={"x": np.ones([3])})
    with pytest.raises(ValueError, match="castable to float"):
        head.loss(labels=np.zeros([3, 1]), logits=logits,
                  features={"w": tf.constant(["a", "b", "c"])})


def test_weight_column_object_with_key(sess):
    class Column:
        key = "importance"

        @staticmethod
        def normalizer_fn(x):
            return x * 2.0

    head = BinaryClassHead(weight_column=Column(), loss_reduction=SUM)
    loss = head.loss(labels=np.array([[1], [0]]), logits=np.zeros([2, 1], np.float32),
                     features={"importance": np.array([1.0, 3.0], np.float32)})
    np.testing.assert_allclose(sess.run(loss), 8 * np.log(2.0), rtol=1e-6)


# -- custom loss_fn -------------------------------------------------------------------------
def test_custom_loss_fn_with_features(sess):
    def loss_fn(labels, logits, features):
        return tf.abs(labels - logits) * features["scale"]

    head = BinaryClassHead(loss_fn=loss_fn)
    loss = head.loss(labels=np.array([[1], [0]]), logits=np.array([[0.5], [2.0]], np.float32),
                     features={"scale": tf.constant([[2.0], [1.0]])})
    np.testing.assert_allclose(sess.run(loss), (1.0 + 2.0) / 2, rtol=1e-6)


def test_loss_fn_arguments_and_shape_are_validated(sess):
    with pytest.raises(ValueError, match="loss_fn must contain argument: logits"):
        BinaryClassHead(loss_fn=lambda labels: labels)
    with pytest.raises(ValueError, match=r"loss_fn has unexpected args: \['name'\]"):
        BinaryClassHead(loss_fn=lambda labels, logits, name: labels)

    def wrong_shape(labels, logits):
        return tf.reduce_sum(logits, axis=-1)

    with pytest.raises(ValueError, match=r"loss_fn must return Tensor of shape"):
        BinaryClassHead(loss_fn=wrong_shape).loss(labels=np.zeros([2, 1]),
                                                  logits=np.zeros([2, 1], np.float32))
    n = tf.placeholder(tf.int32, [1])
    logits = tf.placeholder(tf.float32, [None, 1])
    loss = BinaryClassHead(loss_fn=lambda labels, logits: tf.tile(logits, tf.concat(
        [[1], n], 0))).loss(labels=np.zeros([2, 1], np.float32), logits=logits)
    assert sess.run(loss, {logits: np.ones([2, 1]), n: [1]}) == pytest.approx(1.0)
    with pytest.raises(InvalidArgumentError, match=r"loss_fn must return Tensor of shape.*"
                                                   r"found loss shape \[2, 2\]"):
        sess.run(loss, {logits: np.ones([2, 1]), n: [2]})


def test_binary_constructor_validation():
    with pytest.raises(ValueError, match=r"thresholds not in \(0, 1\)"):
        BinaryClassHead(thresholds=[0.5, 1.0])
    with pytest.raises(ValueError, match="label_vocabulary should be a list or a tuple"):
        BinaryClassHead(label_vocabulary="ab")
    with pytest.raises(ValueError, match="Invalid loss_reduction: none"):
        BinaryClassHead(loss_reduction="none")
    head = BinaryClassHead(name="ctr")
    # TF 2.15's heads report tf.keras's spelling of SUM_OVER_BATCH_SIZE (oracle).
    assert (head.name, head.logits_dimension, head.loss_reduction) == ("ctr", 1,
                                                                       "sum_over_batch_size")


# -- BinaryClassHead: eval metrics ----------------------------------------------------------
def test_binary_eval_metrics_two_batches_weighted(sess):
    head = BinaryClassHead(weight_column="w", thresholds=[0.3, 0.6])
    got, spec = stream_eval(sess, head, [B1, B2])
    x, y, w = _cat("logits", B1, B2), _cat("labels", B1, B2), _cat("w", B1, B2)
    p, ids, ww = sigmoid(x), (x > 0).astype(int), w.ravel()
    lm = (w * y).sum() / w.sum()
    expected = {
        "average_loss": (w * sigmoid_ce(y, x)).sum() / w.sum(),
        "accuracy": (w * (ids == y)).sum() / w.sum(),
        "precision": precision_score(y.ravel(), ids.ravel(), sample_weight=ww),
        "recall": recall_score(y.ravel(), ids.ravel(), sample_weight=ww),
        "prediction/mean": (w * p).sum() / w.sum(),
        "label/mean": lm,
        "accuracy_baseline": max(lm, 1 - lm),
        "auc": roc_auc(y, p, w),
        "auc_precision_recall": pr_auc(y, p, w),
    }
    for t in (0.3, 0.6):
        pred_t = (p > t).astype(int)
        expected[f"accuracy/positive_threshold_{t:g}"] = (w * (pred_t == y)).sum() / w.sum()
        expected[f"precision/positive_threshold_{t:g}"] = precision_score(
            y.ravel(), pred_t.ravel(), sample_weight=ww)
        expected[f"recall/positive_threshold_{t:g}"] = recall_score(
            y.ravel(), pred_t.ravel(), sample_weight=ww)
    assert sorted(got) == sorted(expected)
    for k in expected:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, err_msg=k)
    # TF 2.15: auc 0.85714287, auc_precision_recall 0.9415182, accuracy 0.7826087
    np.testing.assert_allclose([got["auc"], got["auc_precision_recall"], got["accuracy"]],
                               [0.85714287, 0.9415182, 0.7826087], rtol=1e-5)
    assert spec.loss is not None and spec.train_op is None


def test_binary_eval_metrics_unweighted_and_named(sess):
    head = BinaryClassHead(name="ctr", weight_column=None)
    got, _ = stream_eval(sess, head, [B1, B2])
    # TF 2.15 with the same batches
    expected = {"average_loss": 0.6525712, "accuracy": 0.625, "precision": 0.6, "recall": 0.75,
                "prediction/mean": 0.5373024, "label/mean": 0.5, "accuracy_baseline": 0.5,
                "auc": 0.75, "auc_precision_recall": 0.86646855}
    assert sorted(got) == sorted(f"{k}/ctr" for k in expected)
    for k, v in expected.items():
        np.testing.assert_allclose(got[f"{k}/ctr"], v, rtol=1e-5, err_msg=k)


def test_binary_eval_with_regularization_loss(sess):
    head = BinaryClassHead()
    spec = head.create_estimator_spec(features={}, mode="eval", logits=B1["logits"],
                                      labels=B1["labels"],
                                      regularization_losses=[tf.constant(0.5)])
    sess.run(tf.local_variables_initializer())
    sess.run({k: v[1] for k, v in spec.eval_metric_ops.items()})
    got = sess.run({k: v[0] for k, v in spec.eval_metric_ops.items()})
    assert got["regularization_loss"] == pytest.approx(0.5)
    base = sigmoid_ce(B1["labels"], B1["logits"]).mean()
    assert sess.run(spec.loss) == pytest.approx(base + 0.5, rel=1e-5)
    assert got["average_loss"] == pytest.approx(base, rel=1e-5)


# -- label ops ------------------------------------------------------------------------------
def test_vocab_lookup_shapes_and_errors(sess):
    labels = tf.placeholder(tf.string, [None, 2])
    ids = vocab_ops.label_vocab_lookup(labels, ["x", "y", "z"], head_name="h")
    assert ids.dtype == tf.int64 and ids.shape.as_list() == [None, 2]
    out = sess.run(ids, {labels: [["z", "x"], ["y", "y"], ["x", "z"]]})
    np.testing.assert_array_equal(out, [[2, 0], [1, 1], [0, 2]])
    with pytest.raises(ValueError, match="should be string"):
        vocab_ops.label_vocab_lookup(tf.constant([1, 2]), ["a"])


def test_class_id_to_string(sess):
    ids = tf.placeholder(tf.int64, [None, 1])
    named = vocab_ops.class_id_to_string(ids, ["a", "b"])
    plain = vocab_ops.class_id_to_string(ids)
    assert named.dtype == tf.string and named.shape.as_list() == [None, 1]
    a, b = sess.run([named, plain], {ids: [[1], [0], [7]]})
    assert a.ravel().tolist() == [b"b", b"a", b"UNK"]
    assert b.ravel().tolist() == [b"1", b"0", b"7"]


def test_label_ops_are_not_differentiable():
    x = tf.placeholder(tf.float32, [None, 1])
    y = vocab_ops.assert_range(x, 0, 1, "m") * 2.0
    assert tf.gradients(y, x)[0] is not None  # the identity carries the gradient
    from flowgraph.framework.registry import get_op_def

    for op in ("LabelVocabLookup", "ClassIdToString", "HeadAssertShape", "HeadAssertRange"):
        assert get_op_def(op).differentiable is False


# -- MultiLabelHead -------------------------------------------------------------------------
L1 = {"logits": np.array([[1.0, -2.0, 0.5], [0.3, -1.0, 2.0], [2.0, 1.0, -0.4]], np.float32),
      "labels": np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0]]),
      "w": np.array([[1.0], [2.0], [3.0]], np.float32)}
L2 = {"logits": np.array([[0.2, 0.1, 1.0], [-3.0, 1.0, 1.5]], np.float32),
      "labels": np.array([[0, 1, 1], [0, 1, 0]]),
      "w": np.array([[0.5], [1.0]], np.float32)}


def test_multi_label_predictions_and_loss(sess):
    head = MultiLabelHead(n_classes=3, label_vocabulary=["a", "b", "c"])
    preds = sess.run(head.predictions(L1["logits"]))
    assert sorted(preds) == ["classes", "logits", "probabilities"]
    np.testing.assert_allclose(preds["probabilities"], sigmoid(L1["logits"]), rtol=1e-6)
    assert preds["classes"].tolist() == [[b"a", b"b", b"c"]] * 3
    loss = head.loss(labels=L1["labels"], logits=L1["logits"])
    expected = sigmoid_ce(L1["labels"], L1["logits"]).mean(axis=1).mean()
    np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-5)
    # the docstring example of tensorflow_estimator: average loss 1.13
    loss = MultiLabelHead(2).loss(labels=np.array([[1, 0], [1, 1]]),
                                  logits=np.array([[-1.0, 1.0], [-1.5, 1.5]], np.float32))
    assert sess.run(loss) == pytest.approx(1.1323, abs=1e-4)


def test_multi_label_eval_metrics(sess):
    head = MultiLabelHead(3, weight_column="w", thresholds=[0.5],
                          classes_for_class_based_metrics=[1])
    got, _ = stream_eval(sess, head, [L1, L2], labels_shape=(None, 3))
    x, y, w = _cat("logits", L1, L2), _cat("labels", L1, L2), _cat("w", L1, L2)
    p, wb = sigmoid(x), np.broadcast_to(w, x.shape)
    pred = (p > 0.5).astype(int)
    expected = {
        "average_loss": (w[:, 0] * sigmoid_ce(y, x).mean(1)).sum() / w.sum(),
        "auc": roc_auc(y, p, wb), "auc_precision_recall": pr_auc(y, p, wb),
        "accuracy/positive_threshold_0.5": (wb * (pred == y)).sum() / wb.sum(),
        "precision/positive_threshold_0.5": (wb * pred * y).sum() / (wb * pred).sum(),
        "recall/positive_threshold_0.5": (wb * pred * y).sum() / (wb * y).sum(),
        "probability_mean/class1": (w[:, 0] * p[:, 1]).sum() / w.sum(),
        "auc/class1": roc_auc(y[:, 1], p[:, 1], w),
        "auc_precision_recall/class1": pr_auc(y[:, 1], p[:, 1], w),
    }
    assert sorted(got) == sorted(expected)
    for k in expected:
        np.testing.assert_allclose(got[k], expected[k], rtol=1e-5, err_msg=k)
    # TF 2.15 with the same batches
    np.testing.assert_allclose([got["average_loss"], got["auc"], got["auc_precision_recall"]],
                               [0.41351697, 0.9345238, 0.92927223], rtol=1e-5)


def test_multi_label_label_checks(sess):
    head = MultiLabelHead(3, name="tags")
    labels = tf.placeholder(tf.int64, [None, 3])
    loss = head.loss(labels=labels, logits=np.zeros([2, 3], np.float32))
    with pytest.raises(InvalidArgumentError, match=r"indicator Tensor.*\[0, 1\]"):
        sess.run(loss, {labels: [[0, 2, 1], [0, 0, 1]]})
    with pytest.raises(ValueError, match="Mismatched label shape"):
        head.loss(labels=np.zeros([2, 2]), logits=np.zeros([2, 3], np.float32))
    with pytest.raises(ValueError, match="n_classes must be > 1"):
        MultiLabelHead(1)
    with pytest.raises(ValueError, match="Length of label_vocabulary must be n_classes"):
        MultiLabelHead(3, label_vocabulary=["a", "b"])
    with pytest.raises(ValueError, match="must be in range"):
        MultiLabelHead(3, classes_for_class_based_metrics=[3])
    named = MultiLabelHead(2, label_vocabulary=["x", "y"], classes_for_class_based_metrics=["y"])
    assert "auc/y" in named.metrics()


def test_every_head_reports_tf_2_15s_default_loss_reduction():
    """Recorded with the oracle: TF 2.15's six heads all report 'sum_over_batch_size'."""
    import flowgraph as tf

    heads = [tf.estimator.BinaryClassHead(), tf.estimator.MultiClassHead(3),
             tf.estimator.MultiLabelHead(3), tf.estimator.RegressionHead(),
             tf.estimator.PoissonRegressionHead(), tf.estimator.LogisticRegressionHead()]
    assert {h.loss_reduction for h in heads} == {"sum_over_batch_size"}

"""tf.metrics: each metric streamed through its update op in uneven batches (7, 13, 1, 29)
and checked against scikit-learn (or NumPy) on the concatenated data, with and without
weights; variables, names, collections, re-initialization and errors. Values marked "TF"
were printed by TensorFlow 2.15 (tf.compat.v1)."""

import numpy as np
import pytest
from sklearn import metrics as skm

import flowgraph as tf
from flowgraph import metrics

BATCHES = (7, 13, 1, 29)
N = sum(BATCHES)
RNG = np.random.default_rng(11)
Y = (RNG.random(N) > 0.55).astype(np.int64)
SCORES = np.clip(RNG.random(N) * 0.7 + Y * 0.25, 0.0, 1.0).astype(np.float32)
W = (RNG.random(N) * 2.0 * (RNG.random(N) > 0.2)).astype(np.float32)
K = 4
CY = RNG.integers(0, K, N)
CP = np.where(RNG.random(N) < 0.5, CY, RNG.integers(0, K, N))
REG_Y = RNG.standard_normal(N).astype(np.float32)
REG_P = (REG_Y + RNG.standard_normal(N) * 0.5).astype(np.float32)


def stream(sess, update, feeds: dict, init=True):
    """Run `update` over BATCHES slices of the arrays in `feeds` ({placeholder: array});
    return the last update's result."""
    if init:
        sess.run(tf.local_variables_initializer())
    start, out = 0, None
    for size in BATCHES:
        out = sess.run(update, {p: a[start:start + size] for p, a in feeds.items()})
        start += size
    return out


def ph(dtype, shape=(None,)):
    return tf.placeholder(dtype, list(shape))


@pytest.fixture(params=[False, True], ids=["unweighted", "weighted"])
def weighted(request):
    return request.param


def weights_feed(weighted):
    w = ph(tf.float32) if weighted else None
    return w, ({w: W} if weighted else {}), (W if weighted else None)


# -- mean family --------------------------------------------------------------------------------
def test_mean(sess, weighted):
    x = ph(tf.float32)
    w, feed, sw = weights_feed(weighted)
    value, update = metrics.mean(x, weights=w)
    last = stream(sess, update, {x: REG_P, **feed})
    want = np.average(REG_P, weights=sw)
    np.testing.assert_allclose([last, sess.run(value)], [want, want], rtol=1e-5)


def test_mean_tensor(sess, weighted):
    x = ph(tf.float32, (3, 2))
    w = ph(tf.float32, (3, 1)) if weighted else None
    value, update = metrics.mean_tensor(x, weights=w)
    assert value.shape.as_list() == [3, 2]
    sess.run(tf.local_variables_initializer())
    xs = RNG.standard_normal((5, 3, 2)).astype(np.float32)
    ws = RNG.random((5, 3, 1)).astype(np.float32)
    for i in range(5):
        sess.run(update, {x: xs[i], **({w: ws[i]} if weighted else {})})
    want = np.average(xs, axis=0, weights=np.broadcast_to(ws, xs.shape) if weighted else None)
    np.testing.assert_allclose(sess.run(value), want, rtol=1e-5)
    with pytest.raises(ValueError, match="fully defined"):
        metrics.mean_tensor(ph(tf.float32))


def test_accuracy(sess, weighted):
    labels, preds = ph(tf.int64), ph(tf.int64)
    w, feed, sw = weights_feed(weighted)
    value, update = metrics.accuracy(labels, preds, weights=w)
    last = stream(sess, update, {labels: CY, preds: CP, **feed})
    want = skm.accuracy_score(CY, CP, sample_weight=sw)
    np.testing.assert_allclose([last, sess.run(value)], [want, want], rtol=1e-5)


def test_accuracy_casts_predictions_and_squeezes(sess):
    labels = ph(tf.int64, (None, 1))
    preds = ph(tf.float32)
    _, update = metrics.accuracy(labels, preds)
    last = stream(sess, update, {labels: CY[:, None], preds: CP.astype(np.float32)})
    np.testing.assert_allclose(last, skm.accuracy_score(CY, CP), rtol=1e-6)


@pytest.mark.parametrize("kind", ["mse", "rmse", "mae"])
def test_regression_errors(sess, weighted, kind):
    labels, preds = ph(tf.float32), ph(tf.float32)
    w, feed, sw = weights_feed(weighted)
    fn = {"mse": metrics.mean_squared_error, "rmse": metrics.root_mean_squared_error,
          "mae": metrics.mean_absolute_error}[kind]
    value, update = fn(labels, preds, weights=w)
    last = stream(sess, update, {labels: REG_Y, preds: REG_P, **feed})
    want = {"mse": lambda: skm.mean_squared_error(REG_Y, REG_P, sample_weight=sw),
            "rmse": lambda: np.sqrt(skm.mean_squared_error(REG_Y, REG_P, sample_weight=sw)),
            "mae": lambda: skm.mean_absolute_error(REG_Y, REG_P, sample_weight=sw)}[kind]()
    np.testing.assert_allclose([last, sess.run(value)], [want, want], rtol=1e-5)


def test_mean_relative_error_and_percentage_below(sess, weighted):
    labels, preds, norm = ph(tf.float32), ph(tf.float32), ph(tf.float32)
    w, feed, sw = weights_feed(weighted)
    normalizer = np.where(RNG.random(N) < 0.2, 0.0, RNG.random(N) + 0.5).astype(np.float32)
    mre, mre_update = metrics.mean_relative_error(labels, preds, norm, weights=w)
    below, below_update = metrics.percentage_below(preds, 0.25, weights=w)
    stream(sess, [mre_update, below_update], {labels: REG_Y, preds: REG_P, norm: normalizer,
                                              **feed})
    rel = np.where(normalizer == 0, 0.0, np.abs(REG_Y - REG_P) / np.where(normalizer == 0, 1,
                                                                         normalizer))
    np.testing.assert_allclose(sess.run(mre), np.average(rel, weights=sw), rtol=1e-5)
    np.testing.assert_allclose(sess.run(below), np.average(REG_P < 0.25, weights=sw),
                               rtol=1e-5)


# -- confusion counts, precision, recall ------------------------------------------------------
def test_precision_recall(sess, weighted):
    labels, preds = ph(tf.int64), ph(tf.bool)
    w, feed, sw = weights_feed(weighted)
    p_value, p_update = metrics.precision(labels, preds, weights=w)
    r_value, r_update = metrics.recall(labels, preds, weights=w)
    decisions = SCORES > 0.5
    last = stream(sess, [p_update, r_update], {labels: Y, preds: decisions, **feed})
    want = [skm.precision_score(Y, decisions, sample_weight=sw),
            skm.recall_score(Y, decisions, sample_weight=sw)]
    np.testing.assert_allclose(last, want, rtol=1e-5)
    np.testing.assert_allclose(sess.run([p_value, r_value]), want, rtol=1e-5)


def test_counts(sess, weighted):
    labels, preds = ph(tf.int64), ph(tf.float32)
    w, feed, sw = weights_feed(weighted)
    fns = [metrics.true_positives, metrics.false_positives, metrics.true_negatives,
           metrics.false_negatives]
    pairs = [fn(labels, preds, weights=w) for fn in fns]
    decisions = (SCORES > 0.5).astype(np.float32)
    stream(sess, [u for _, u in pairs], {labels: Y, preds: decisions, **feed})
    sw = np.ones(N) if sw is None else sw
    y, d = Y.astype(bool), decisions.astype(bool)
    want = [sw[y & d].sum(), sw[~y & d].sum(), sw[~y & ~d].sum(), sw[y & ~d].sum()]
    np.testing.assert_allclose(sess.run([v for v, _ in pairs]), want, rtol=1e-5)
    cm = skm.confusion_matrix(Y, d, sample_weight=sw)
    np.testing.assert_allclose(want, [cm[1, 1], cm[0, 1], cm[0, 0], cm[1, 0]], rtol=1e-5)


THRESHOLDS = [0.0, 0.2, 0.5, 0.55, 0.9, 1.0]


def np_counts_at(thresholds, sw=None):
    sw = np.ones(N) if sw is None else sw
    pos = SCORES[:, None] > np.asarray(thresholds, np.float32)[None, :]
    y = Y.astype(bool)[:, None]
    c = {"tp": pos & y, "fp": pos & ~y, "tn": ~pos & ~y, "fn": ~pos & y}
    return {k: (v * sw[:, None]).sum(0) for k, v in c.items()}


def test_counts_and_ratios_at_thresholds(sess, weighted):
    labels, preds = ph(tf.int64), ph(tf.float32)
    w, feed, sw = weights_feed(weighted)
    got = {
        "tp": metrics.true_positives_at_thresholds(labels, preds, THRESHOLDS, weights=w),
        "fp": metrics.false_positives_at_thresholds(labels, preds, THRESHOLDS, weights=w),
        "tn": metrics.true_negatives_at_thresholds(labels, preds, THRESHOLDS, weights=w),
        "fn": metrics.false_negatives_at_thresholds(labels, preds, THRESHOLDS, weights=w),
        "p": metrics.precision_at_thresholds(labels, preds, THRESHOLDS, weights=w),
        "r": metrics.recall_at_thresholds(labels, preds, THRESHOLDS, weights=w),
    }
    stream(sess, [u for _, u in got.values()], {labels: Y, preds: SCORES, **feed})
    values = sess.run({k: v for k, (v, _) in got.items()})
    want = np_counts_at(THRESHOLDS, sw)
    for k in ("tp", "fp", "tn", "fn"):
        np.testing.assert_allclose(values[k], want[k], rtol=1e-5, err_msg=k)
    tp, fp, fn = want["tp"], want["fp"], want["fn"]
    np.testing.assert_allclose(values["p"], tp / (tp + fp + 1e-7), rtol=1e-5)
    np.testing.assert_allclose(values["r"], tp / (tp + fn + 1e-7), rtol=1e-5)
    # The thresholded precision at 0.5 is sklearn's precision of the decision > 0.5.
    np.testing.assert_allclose(values["p"][2], skm.precision_score(Y, SCORES > 0.5,
                                                                   sample_weight=sw), rtol=1e-5)


# -- AUC ------------------------------------------------------------------------------------------
def np_auc(curve, method, num_thresholds=200, sw=None):
    """TensorFlow's thresholded AUC formulas, in float64."""
    inner = [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    c = np_counts_at([-1e-7, *inner, 1 + 1e-7], sw)
    tp, fp, tn, fn = (c[k].astype(np.float64) for k in ("tp", "fp", "tn", "fn"))
    eps = 1e-6
    if curve == "PR" and method == "careful_interpolation":
        p = tp + fp
        dtp = tp[:-1] - tp[1:]
        dp = np.maximum(p[:-1] - p[1:], 0)
        slope = np.divide(dtp, dp, out=np.zeros_like(dtp), where=dp != 0)
        intercept = tp[1:] - slope * p[1:]
        ok = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(ok, p[:-1] / np.where(ok, p[1:], 1), 1)
        den = tp[1:] + fn[1:]
        num = slope * (dtp + intercept * np.log(ratio))
        return np.sum(np.divide(num, den, out=np.zeros_like(num), where=den != 0))
    rec = (tp + eps) / (tp + fn + eps)
    x, y = (fp / (fp + tn + eps), rec) if curve == "ROC" else (rec, (tp + eps) / (tp + fp + eps))
    height = {"trapezoidal": (y[:-1] + y[1:]) / 2, "careful_interpolation": (y[:-1] + y[1:]) / 2,
              "minoring": np.minimum(y[:-1], y[1:]), "majoring": np.maximum(y[:-1], y[1:])}
    return np.sum((x[:-1] - x[1:]) * height[method])


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_auc_against_sklearn(sess, weighted, curve):
    labels, preds = ph(tf.int64), ph(tf.float32)
    w, feed, sw = weights_feed(weighted)
    method = "careful_interpolation" if curve == "PR" else "trapezoidal"
    value, update = metrics.auc(labels, preds, weights=w, curve=curve, summation_method=method)
    last = stream(sess, update, {labels: Y, preds: SCORES, **feed})
    np.testing.assert_allclose(sess.run(value), last, rtol=1e-6)
    # TF 2.15 names the careful-interpolation PR AUC after its last op
    names = (("auc/value:0", "auc/update_op:0") if curve == "ROC" else
             ("auc/interpolate_pr_auc:0", "auc/interpolate_pr_auc_1:0"))
    assert (value.name, update.name) == names
    if curve == "ROC":
        exact = skm.roc_auc_score(Y, SCORES, sample_weight=sw)
        assert abs(last - exact) < 5e-3
    else:
        exact = skm.average_precision_score(Y, SCORES, sample_weight=sw)
        assert abs(last - exact) < 3e-2
    np.testing.assert_allclose(last, np_auc(curve, method, sw=sw), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("method", ["trapezoidal", "careful_interpolation", "minoring",
                                    "majoring"])
@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_auc_summation_methods_match_tf_formula(sess, curve, method):
    labels, preds = ph(tf.int64), ph(tf.float32)
    value, update = metrics.auc(labels, preds, num_thresholds=9, curve=curve,
                                summation_method=method)
    stream(sess, update, {labels: Y, preds: SCORES})
    np.testing.assert_allclose(sess.run(value), np_auc(curve, method, 9), rtol=1e-4,
                               atol=1e-6)


def test_auc_tf_values(sess):
    labels = tf.constant([1, 0, 1, 1])
    scores = tf.constant([0.9, 0.2, 0.4, 0.7])
    roc = metrics.auc(labels, scores)
    pr = metrics.auc(labels, scores, curve="PR")
    custom = metrics.auc(labels, scores, thresholds=[0.5, 0.3])
    sess.run(tf.local_variables_initializer())
    sess.run([roc[1], pr[1], custom[1]])
    np.testing.assert_allclose(sess.run([roc[0], pr[0]]), [0.99999905, 0.99999964],
                               rtol=1e-6)  # TF
    assert [v.name for v in tf.local_variables()[:4]] == [
        "auc/true_positives:0", "auc/false_negatives:0", "auc/true_negatives:0",
        "auc/false_positives:0"]
    assert tf.local_variables()[8].shape.as_list() == [4]  # 2 thresholds + the 2 ends
    assert 0.0 < sess.run(custom[0]) <= 1.0


# -- per-class metrics ---------------------------------------------------------------------------
def test_mean_per_class_accuracy(sess, weighted):
    labels, preds = ph(tf.int64), ph(tf.int64)
    w, feed, sw = weights_feed(weighted)
    value, update = metrics.mean_per_class_accuracy(labels, preds, K + 1, weights=w)
    per_class = stream(sess, update, {labels: CY, preds: CP, **feed})
    cm = skm.confusion_matrix(CY, CP, labels=range(K + 1), sample_weight=sw)
    rows = cm.sum(1)
    want = np.divide(np.diag(cm), rows, out=np.zeros(K + 1), where=rows != 0)
    np.testing.assert_allclose(per_class, want, rtol=1e-5)
    # TF averages over all num_classes: the absent class K counts as 0.
    np.testing.assert_allclose(sess.run(value), want.mean(), rtol=1e-5)
    balanced = skm.balanced_accuracy_score(CY, CP, sample_weight=sw)
    np.testing.assert_allclose(sess.run(value) * (K + 1) / K, balanced, rtol=1e-5)


def test_mean_iou(sess, weighted):
    labels, preds = ph(tf.int64), ph(tf.int64)
    w, feed, sw = weights_feed(weighted)
    cp = np.where(CP == 2, 3, CP)  # class 2 is never predicted, class 5 never appears
    value, update = metrics.mean_iou(labels, preds, K + 2, weights=w)
    cm = stream(sess, update, {labels: CY, preds: cp, **feed})
    np.testing.assert_allclose(cm, skm.confusion_matrix(CY, cp, labels=range(K + 2),
                                                        sample_weight=sw), rtol=1e-5)
    present = sorted(set(CY) | set(cp))
    want = skm.jaccard_score(CY, cp, labels=present, average="macro", sample_weight=sw)
    np.testing.assert_allclose(sess.run(value), want, rtol=1e-5)


def test_per_class_tf_values(sess):
    lab = tf.constant([1, 0, 1, 1])
    pred = tf.cast(tf.constant([0.9, 0.2, 0.4, 0.7]) > 0.5, tf.int32)
    mpca = metrics.mean_per_class_accuracy(lab, pred, 3)
    miou = metrics.mean_iou(lab, pred, 3)
    sess.run(tf.local_variables_initializer())
    np.testing.assert_allclose(sess.run(mpca[1]), [1.0, 0.6666667, 0.0], rtol=1e-6)  # TF
    sess.run(miou[1])
    np.testing.assert_allclose(sess.run([mpca[0], miou[0]]), [0.5555556, 0.5833334],
                               rtol=1e-6)  # TF
    assert miou[1].dtype.base_dtype == tf.float64


def test_multidimensional_inputs_are_flattened(sess):
    labels = ph(tf.int64, (None, 2))
    preds = ph(tf.int64, (None, 2))
    w = ph(tf.float32, (None, 1))
    value, update = metrics.mean_iou(labels, preds, K, weights=w)
    sess.run(tf.local_variables_initializer())
    ly, lp = CY[:48].reshape(24, 2), CP[:48].reshape(24, 2)
    lw = W[:24, None]
    sess.run(update, {labels: ly, preds: lp, w: lw})
    sw = np.repeat(lw[:, 0], 2)
    want = skm.jaccard_score(ly.ravel(), lp.ravel(), labels=sorted(set(ly.ravel()) |
                                                                   set(lp.ravel())),
                             average="macro", sample_weight=sw)
    np.testing.assert_allclose(sess.run(value), want, rtol=1e-5)


# -- variables, names, collections, re-initialization ----------------------------------------
def test_variables_names_and_collections():
    lab, pred = tf.constant([1, 0]), tf.constant([1, 1])
    acc, acc_update = metrics.accuracy(lab, pred)
    acc2, _ = metrics.accuracy(lab, pred)
    prec, prec_update = metrics.precision(lab, pred)
    named, _ = metrics.mean([1.0], name="my_mean")
    local = tf.local_variables()
    assert [v.name for v in local] == [
        "accuracy/total:0", "accuracy/count:0", "accuracy_1/total:0", "accuracy_1/count:0",
        "precision/true_positives/count:0", "precision/false_positives/count:0",
        "my_mean/total:0", "my_mean/count:0"]
    assert local == tf.get_collection(tf.GraphKeys.METRIC_VARIABLES)
    assert not tf.global_variables() and not tf.trainable_variables()
    assert all(isinstance(v, tf.Variable) and not v.trainable for v in local)
    assert acc.name == "accuracy/value:0" and acc_update.name == "accuracy/update_op:0"
    assert acc2.name == "accuracy_1/value:0"
    assert prec.name == "precision/value:0" and prec_update.name == "precision/update_op:0"
    assert named.name == "my_mean/value:0"


def test_metrics_and_updates_collections():
    value, update = metrics.recall([1, 0], [1, 1], metrics_collections=["m"],
                                   updates_collections=["u", tf.GraphKeys.UPDATE_OPS])
    assert tf.get_collection("m") == [value]
    assert tf.get_collection("u") == [update] == tf.get_collection(tf.GraphKeys.UPDATE_OPS)


ALL_METRICS = {
    "accuracy": lambda y, p, s: metrics.accuracy(y, tf.cast(p > 0.5, tf.int64)),
    "mean": lambda y, p, s: metrics.mean(p),
    "precision": lambda y, p, s: metrics.precision(y, p > 0.5),
    "recall": lambda y, p, s: metrics.recall(y, p > 0.5),
    "auc": lambda y, p, s: metrics.auc(y, p),
    "auc_pr": lambda y, p, s: metrics.auc(y, p, curve="PR",
                                          summation_method="careful_interpolation"),
    "mse": lambda y, p, s: metrics.mean_squared_error(tf.cast(y, tf.float32), p),
    "rmse": lambda y, p, s: metrics.root_mean_squared_error(tf.cast(y, tf.float32), p),
    "mae": lambda y, p, s: metrics.mean_absolute_error(tf.cast(y, tf.float32), p),
    "mpca": lambda y, p, s: metrics.mean_per_class_accuracy(y, tf.cast(p > 0.5, tf.int64), 2),
    "miou": lambda y, p, s: metrics.mean_iou(y, tf.cast(p > 0.5, tf.int64), 2),
    "pat": lambda y, p, s: metrics.precision_at_thresholds(y, p, [0.3, 0.6]),
    "rat": lambda y, p, s: metrics.recall_at_thresholds(y, p, [0.3, 0.6]),
    "tp": lambda y, p, s: metrics.true_positives(y, p > 0.5),
    "fnat": lambda y, p, s: metrics.false_negatives_at_thresholds(y, p, [0.3]),
    "pb": lambda y, p, s: metrics.percentage_below(p, 0.5),
    "mre": lambda y, p, s: metrics.mean_relative_error(tf.cast(y, tf.float32), p, s),
}


def test_zero_before_data_and_reinitialization_resets(sess):
    labels, preds, norm = ph(tf.int64), ph(tf.float32), ph(tf.float32)
    built = {k: fn(labels, preds, norm) for k, fn in ALL_METRICS.items()}
    values = {k: v for k, (v, _) in built.items()}
    updates = [u for _, u in built.values()]
    sess.run(tf.local_variables_initializer())
    for k, v in sess.run(values).items():
        np.testing.assert_array_equal(v, np.zeros_like(v), err_msg=k)
    feeds = {labels: Y, preds: SCORES, norm: SCORES + 1.0}
    stream(sess, updates, feeds, init=False)
    first = sess.run(values)
    stream(sess, updates, feeds, init=False)  # the same data again: same ratios
    second = sess.run(values)
    assert second["tp"] == 2 * first["tp"]
    np.testing.assert_allclose(second["accuracy"], first["accuracy"], rtol=1e-6)
    sess.run(tf.local_variables_initializer())
    for k, v in sess.run(values).items():
        np.testing.assert_array_equal(v, np.zeros_like(v), err_msg=k)
    stream(sess, updates, feeds, init=False)
    for k, v in sess.run(values).items():
        np.testing.assert_allclose(v, first[k], rtol=1e-6, err_msg=k)
    # An empty batch changes nothing and keeps every value finite.
    sess.run(updates, {labels: Y[:0], preds: SCORES[:0], norm: SCORES[:0]})
    for k, v in sess.run(values).items():
        np.testing.assert_allclose(v, first[k], rtol=1e-6, err_msg=k)


def test_errors():
    lab, pred = tf.constant([1, 0, 1]), tf.constant([0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"Curve must be either ROC or PR\. Curve XY is unknown"):
        metrics.auc(lab, pred, curve="XY")
    with pytest.raises(ValueError, match="summation_method"):
        metrics.auc(lab, pred, summation_method="simpson")
    with pytest.raises(TypeError, match="num_thresholds"):
        metrics.auc(lab, pred, num_thresholds=2.5)
    with pytest.raises(ValueError, match="num_classes"):
        metrics.mean_iou(lab, lab, num_classes=tf.constant(3))
    with pytest.raises(ValueError, match="compatible shapes"):
        metrics.accuracy(lab, tf.constant([1, 0]))
    with pytest.raises(ValueError, match="broadcast"):
        metrics.mean(tf.zeros([3, 2]), weights=tf.ones([2, 2]))
    with pytest.raises(TypeError, match="thresholds"):
        metrics.precision_at_thresholds(lab, pred, tf.constant([0.5]))

"""Evaluation programs of TF1 code bases: `tf.metrics` in streaming eval loops and the
rest of TF 1.x's `tf.contrib.metrics`.

Programs checked under TensorFlow 2.15 (`tf.compat.v1`, the oracle): binary-classifier
evaluation with 24 metrics (accuracy, precision/recall, AUC with every summation method,
counts at thresholds, sensitivity/specificity, regression errors, means), a
multi-class ranking evaluation (mean IoU, per-class accuracy, precision/recall at k,
average precision at k), and an epoch loop that resets a scope's metric variables.
They matched, but for one class of discrepancy, fixed:

- the top-k metrics (`precision_at_k`, `recall_at_k`, `average_precision_at_k` and the
  ``*_at_top_k`` forms) built their top-k, matching and counting ops at the graph's
  root (``TopKV2``, ``Equal_3``, ``Const_24``...), so every later op of the program got
  another number than in TF; TF builds them under the metric's scope
  (``precision_at_2/TopKV2``). `average_precision_at_k`'s variables are listed in TF's
  order (``max_1`` before ``total``), and `mean_cosine_distance`'s product is ``Mul``.

TF 2.15 has no `tf.contrib`: 28 of the 29 contrib metrics flowgraph lacked (covariance,
Pearson correlation, Cohen's kappa, count, concat, F1, recall at precision, precision at
recall, curve points, dynamic AUC, histogram AUC, equal-threshold precision/recall,
false-positive/negative rates, aliases) follow TF 1.x's documented definitions and are
checked against NumPy and scikit-learn references. Left: `auc_with_confidence_intervals`.
"""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score, roc_auc_score

import flowgraph as tf

cm = tf.contrib.metrics


def _stream(metric_fn, batches, feeds_of):
    """Run `metric_fn`'s update over `batches`; return (last update, final value)."""
    with tf.Graph().as_default():
        placeholders, (value, update) = metric_fn()
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            last = None
            for b in batches:
                last = sess.run(update, feeds_of(placeholders, b))
            return last, sess.run(value)


# -- tf.metrics under TF's scopes (oracle) -------------------------------------------

def test_top_k_metrics_build_under_their_scope_as_tf():
    g = tf.Graph()
    with g.as_default():
        labels = tf.placeholder(tf.int64, [None])
        logits = tf.placeholder(tf.float32, [None, 5])
        root_before = {o.name for o in g.get_operations()}

        def new_root_ops(fn):
            nonlocal root_before
            out = fn()
            now = {o.name for o in g.get_operations()}
            made = sorted(n for n in now - root_before if "/" not in n)
            root_before = now
            return out, made

        (v, u), made = new_root_ops(lambda: tf.metrics.precision_at_k(labels, logits, 2))
        assert (v.name, u.name, made) == ("precision_at_2:0", "precision_at_2/update:0",
                                          ["precision_at_2"])
        assert g.get_operation_by_name("precision_at_2/TopKV2").type == "TopKV2"
        (v, u), made = new_root_ops(
            lambda: tf.metrics.recall_at_k(labels, logits, 3, class_id=2))
        assert made == ["recall_at_3_class2"]
        (v, u), made = new_root_ops(
            lambda: tf.metrics.average_precision_at_k(labels, logits, 3))
        assert (v.name, u.name, made) == ("average_precision_at_3/mean:0",
                                          "average_precision_at_3:0",
                                          ["average_precision_at_3"])
        (v, u), made = new_root_ops(
            lambda: tf.metrics.precision_at_top_k(labels, tf.nn.top_k(logits, 2).indices))
        assert made == ["TopKV2", "precision_at_k"]  # the user's top_k stays at the root
        (v, u), made = new_root_ops(
            lambda: tf.metrics.precision_at_k(labels, logits, 2, name="myprec"))
        assert (v.name, u.name, made) == ("myprec:0", "myprec/update:0", ["myprec"])
        with tf.name_scope("eval"):
            v, u = tf.metrics.precision_at_k(labels, logits, 2)
        assert (v.name, u.name) == ("eval/precision_at_2:0", "eval/precision_at_2/update:0")
        # TF's names of the constants a program makes next: nothing was left at the root
        assert tf.constant(0.0).name == "Const:0"
        assert [x.name for x in tf.local_variables()] == [
            "precision_at_2/true_positive_at_2:0", "precision_at_2/false_positive_at_2:0",
            "recall_at_3_class2/true_positive_at_3_class2:0",
            "recall_at_3_class2/false_negative_at_3_class2:0",
            "average_precision_at_3/max_1:0", "average_precision_at_3/total:0",
            "precision_at_k/true_positive_at_k:0", "precision_at_k/false_positive_at_k:0",
            "myprec/true_positive_at_2:0", "myprec/false_positive_at_2:0",
            "eval/precision_at_2/true_positive_at_2:0",
            "eval/precision_at_2/false_positive_at_2:0"]


def test_ranking_evaluation_values_match_tf():
    rng = np.random.RandomState(1)
    lab = rng.randint(0, 5, (3, 16)).astype(np.int64)
    logit = rng.randn(3, 16, 5).astype(np.float32)
    with tf.Graph().as_default():
        labels = tf.placeholder(tf.int64, [None])
        logits = tf.placeholder(tf.float32, [None, 5])
        pred = tf.argmax(logits, 1)
        ms = {
            "miou": tf.metrics.mean_iou(labels, pred, 5),
            "mpca": tf.metrics.mean_per_class_accuracy(labels, pred, 5),
            "p_at_k": tf.metrics.precision_at_k(labels, logits, 2),
            "r_at_k": tf.metrics.recall_at_k(labels, logits, 3),
            "r_at_k_cls": tf.metrics.recall_at_k(labels, logits, 3, class_id=2),
            "p_at_topk": tf.metrics.precision_at_top_k(labels, tf.nn.top_k(logits, 2).indices),
            "ap_at_k": tf.metrics.average_precision_at_k(labels, logits, 3),
            "sap_at_k": tf.metrics.sparse_average_precision_at_k(labels, logits, 2),
            "r_at_topk": tf.metrics.recall_at_top_k(labels, tf.nn.top_k(logits, 3).indices),
            "cos": tf.metrics.mean_cosine_distance(
                tf.nn.l2_normalize(tf.one_hot(labels, 5), 1), tf.nn.l2_normalize(logits, 1),
                dim=1),
        }
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            first = None
            for i in range(3):
                ups = sess.run({k: m[1] for k, m in ms.items()},
                               {labels: lab[i], logits: logit[i]})
                first = first or ups
            final = sess.run({k: m[0] for k, m in ms.items()})
    # TensorFlow 2.15's printed values
    tf_first = {"ap_at_k": 0.38542, "cos": 1.03637, "p_at_k": 0.25, "p_at_topk": 0.25,
                "r_at_k": 0.625, "r_at_k_cls": 0.0, "r_at_topk": 0.625, "sap_at_k": 0.34375}
    tf_final = {"ap_at_k": 0.43403, "cos": 0.99457, "miou": 0.12583, "mpca": 0.20556,
                "p_at_k": 0.26042, "p_at_topk": 0.26042, "r_at_k": 0.66667,
                "r_at_k_cls": 0.66667, "r_at_topk": 0.66667, "sap_at_k": 0.38542}
    for k, want in tf_first.items():
        assert np.round(first[k], 5) == want, k
    np.testing.assert_array_equal(np.round(first["mpca"], 5),
                                  np.float32([0, 0, 0, 0, 0.6]))
    for k, want in tf_final.items():
        assert np.round(final[k], 5) == want, k


def test_cosine_distance_product_is_named_mul_as_tf():
    with tf.Graph().as_default() as g:
        a = tf.constant([[1.0, 0.0]])
        tf.metrics.mean_cosine_distance(a, a, dim=1)
        root = [o.name for o in g.get_operations() if "/" not in o.name]
    assert root == ["Const", "Mul", "Sum", "Sub", "Sub_1"]


def test_epoch_loop_with_reset_of_a_scopes_metric_variables_matches_tf():
    rng = np.random.RandomState(3)
    x_np = rng.randn(96, 6).astype(np.float32)
    y_np = (x_np[:, 0] + 0.5 * x_np[:, 1] > 0).astype(np.int64)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        with tf.variable_scope("model"):
            w = tf.get_variable("w", [6, 2], initializer=tf.truncated_normal_initializer(
                stddev=0.1, seed=1))
            b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        logits = tf.matmul(x, w) + b
        probs = tf.nn.softmax(logits)
        pred = tf.argmax(logits, axis=1)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.name_scope("streaming"):
            acc, acc_up = tf.metrics.accuracy(y, pred, name="acc")
            auc, auc_up = tf.metrics.auc(y, probs[:, 1], name="auc")
            mloss, mloss_up = tf.metrics.mean(loss, name="loss")
            prec, prec_up = tf.metrics.precision(y, pred)
            rec, rec_up = tf.metrics.recall(y, pred)
            mpca, mpca_up = tf.metrics.mean_per_class_accuracy(y, pred, 2)
            miou, miou_up = tf.metrics.mean_iou(y, pred, 2)
        running = tf.get_collection(tf.GraphKeys.LOCAL_VARIABLES, scope="streaming")
        assert [v.name for v in running] == [
            "streaming/acc/total:0", "streaming/acc/count:0",
            "streaming/auc/true_positives:0", "streaming/auc/false_negatives:0",
            "streaming/auc/true_negatives:0", "streaming/auc/false_positives:0",
            "streaming/loss/total:0", "streaming/loss/count:0",
            "streaming/precision/true_positives/count:0",
            "streaming/precision/false_positives/count:0",
            "streaming/recall/true_positives/count:0",
            "streaming/recall/false_negatives/count:0",
            "streaming/mean_accuracy/total:0", "streaming/mean_accuracy/count:0",
            "streaming/mean_iou/total_confusion_matrix:0"]
        reset = tf.variables_initializer(var_list=running)
        ups = tf.group(acc_up, auc_up, mloss_up, prec_up, rec_up, mpca_up, miou_up)
        epochs = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                for i in range(0, 96, 32):
                    sess.run(train, {x: x_np[i:i + 32], y: y_np[i:i + 32]})
                sess.run(reset)
                for i in range(0, 96, 24):
                    sess.run(ups, {x: x_np[i:i + 24], y: y_np[i:i + 24]})
                epochs.append(np.round(sess.run([acc, auc, mloss, prec, rec, mpca, miou]), 5))
    # TensorFlow 2.15's printed values
    np.testing.assert_array_equal(epochs, np.float32([
        [0.96875, 0.99761, 0.38129, 1.0, 0.9375, 0.96875, 0.93934],
        [0.96875, 0.9987, 0.30303, 1.0, 0.9375, 0.96875, 0.93934],
        [0.97917, 0.9987, 0.2612, 1.0, 0.95833, 0.97917, 0.95917]]))


# -- tf.contrib.metrics: statistics ---------------------------------------------------------

def _pairs(seed=0, n=3, size=20):
    rng = np.random.RandomState(seed)
    p = rng.randn(n, size).astype(np.float32)
    return p, (0.6 * p + rng.randn(n, size)).astype(np.float32), \
        rng.randint(1, 4, (n, size)).astype(np.float32)


@pytest.mark.parametrize("weighted", [False, True])
def test_streaming_covariance_and_pearson_match_numpy_over_batches(weighted):
    p, lab, w = _pairs()

    def build():
        ph = (tf.placeholder(tf.float32, [None]), tf.placeholder(tf.float32, [None]),
              tf.placeholder(tf.float32, [None]))
        weights = ph[2] if weighted else None
        return ph, (cm.streaming_covariance(ph[0], ph[1], weights),
                    cm.streaming_pearson_correlation(ph[0], ph[1], weights))

    with tf.Graph().as_default():
        ph, ((cov, cov_up), (r, r_up)) = build()
        names = [v.name for v in tf.local_variables()]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert np.isnan(sess.run(cov))  # no example yet
            for i in range(3):
                got_cov, got_r = sess.run([cov_up, r_up], {ph[0]: p[i], ph[1]: lab[i],
                                                           ph[2]: w[i]})
            final = sess.run([cov, r])
    assert names[:4] == ["covariance/count:0", "covariance/mean_prediction:0",
                         "covariance/mean_label:0", "covariance/comoment:0"]
    assert names[4] == "pearson_r/covariance/count:0"
    fw = w.reshape(-1).astype(int) if weighted else None
    want_cov = np.cov(p.reshape(-1), lab.reshape(-1), fweights=fw)
    want_r = want_cov[0, 1] / np.sqrt(want_cov[0, 0] * want_cov[1, 1])
    np.testing.assert_allclose([got_cov, final[0]], want_cov[0, 1], rtol=2e-5)
    np.testing.assert_allclose([got_r, final[1]], want_r, rtol=2e-5)


@pytest.mark.parametrize("weighted", [False, True])
def test_cohen_kappa_matches_scikit_learn(weighted):
    rng = np.random.RandomState(4)
    lab = rng.randint(0, 4, (3, 30))
    pred = np.where(rng.rand(3, 30) < 0.6, lab, rng.randint(0, 4, (3, 30)))
    w = rng.randint(1, 3, (3, 30))
    with tf.Graph().as_default():
        y = tf.placeholder(tf.int64, [None, 1])  # rank 2 labels are squeezed, as in TF
        p = tf.placeholder(tf.int64, [None])
        wt = tf.placeholder(tf.int64, [None])
        kappa, update = cm.cohen_kappa(y, p, 4, weights=wt if weighted else None)
        assert kappa.dtype == tf.float64
        assert [v.name for v in tf.local_variables()] == [
            "cohen_kappa/po:0", "cohen_kappa/pe_row:0", "cohen_kappa/pe_col:0"]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(3):
                sess.run(update, {y: lab[i][:, None], p: pred[i], wt: w[i]})
            got = sess.run(kappa)
    want = cohen_kappa_score(lab.reshape(-1), pred.reshape(-1),
                             sample_weight=w.reshape(-1) if weighted else None)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_cohen_kappa_refuses_a_bad_class_count():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="num_classes"):
        cm.cohen_kappa(tf.constant([0]), tf.constant([0]), 0)


def test_count_counts_values_or_sums_weights():
    def run(weights):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 3])
            n, update = cm.count(x, weights=None if weights is None else weights(x))
            with tf.Session() as sess:
                sess.run(tf.local_variables_initializer())
                sess.run(update, {x: np.zeros((2, 3))})
                return n.name, sess.run(update, {x: np.zeros((4, 3))})

    assert run(None)[1] == 18.0
    # rank-1 weights of a rank-2 value get a trailing dimension (one weight per row)
    assert run(lambda x: x[:, 0] + 2.0)[1] == 36.0  # 6 rows x 3 values x weight 2


def test_streaming_concat_keeps_every_batch_up_to_max_size():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [None, 2])
        seen, update = cm.streaming_concat(x)
        capped, capped_update = cm.streaming_concat(x, max_size=3)
        cols, cols_update = cm.streaming_concat(tf.transpose(x), axis=1)
        assert seen.shape.as_list() == [None, 2] and cols.shape.as_list() == [2, None]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(seen).shape == (0, 2)
            for batch in ([[1, 2], [3, 4]], [[5, 6]], [[7, 8], [9, 10]]):
                sess.run([update, capped_update, cols_update], {x: batch})
            got, got_capped, got_cols = sess.run([seen, capped, cols])
    np.testing.assert_array_equal(got, np.arange(1, 11).reshape(5, 2))
    np.testing.assert_array_equal(got_capped, np.arange(1, 7).reshape(3, 2))
    np.testing.assert_array_equal(got_cols, np.arange(1, 11).reshape(5, 2).T)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="must be known"):
        cm.streaming_concat(tf.placeholder(tf.float32, [None, None]))


# -- tf.contrib.metrics: curves of thresholds -------------------------------------------

def _scores(seed=5, n=3, size=40):
    rng = np.random.RandomState(seed)
    lab = rng.randint(0, 2, (n, size))
    s = np.clip(lab * 0.35 + rng.rand(n, size) * 0.65, 0, 1).astype(np.float32)
    return lab, np.round(s, 2)  # rounded: ties between examples


def _counts(lab, s, thresholds):
    pos = s[:, None] > np.asarray(thresholds, np.float32)[None, :]
    lab = lab.astype(bool)[:, None]
    return {"tp": (pos & lab).sum(0), "fp": (pos & ~lab).sum(0),
            "fn": (~pos & lab).sum(0), "tn": (~pos & ~lab).sum(0)}


def _thresholds(n):
    return [-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7]


def _run_curve_metric(fn, lab, s):
    def build():
        ph = (tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None]))
        return ph, fn(ph[0], ph[1])

    return _stream(build, range(len(lab)), lambda ph, i: {ph[0]: lab[i], ph[1]: s[i]})


def test_f1_score_is_the_best_f1_over_the_thresholds():
    lab, s = _scores()
    last, value = _run_curve_metric(lambda y, p: cm.f1_score(y, p, num_thresholds=50), lab, s)
    c = _counts(lab.reshape(-1), s.reshape(-1), _thresholds(50))
    eps = 1e-7
    prec = c["tp"] / (eps + c["tp"] + c["fp"])
    rec = c["tp"] / (eps + c["tp"] + c["fn"])
    want = np.max(2 * prec * rec / (prec + rec + eps))
    np.testing.assert_allclose([last, value], want, rtol=1e-6)


@pytest.mark.parametrize("strict", [False, True])
def test_recall_at_precision_and_precision_at_recall(strict):
    lab, s = _scores()
    c = _counts(lab.reshape(-1), s.reshape(-1), _thresholds(200))
    eps = 1e-7
    precisions = c["tp"] / (c["tp"] + c["fp"] + eps)
    recalls = c["tp"] / (c["tp"] + c["fn"] + eps)
    target = 0.9
    if strict:
        gap = np.where(precisions - target >= 0, precisions - target, np.inf)
        at = int(np.argmin(gap))
        want_r = recalls[at] if precisions[at] >= target else 0.0
    else:
        at = int(np.argmin(np.abs(precisions - target)))
        want_r = c["tp"][at] / (c["tp"][at] + c["fn"][at] + eps)
    _, got_r = _run_curve_metric(
        lambda y, p: cm.recall_at_precision(y, p, target, strict_mode=strict), lab, s)
    np.testing.assert_allclose(got_r, want_r, rtol=1e-6)
    # TF 1.x's documented rule: among the thresholds whose recall reaches the target, the
    # one whose recall is closest to it
    at = int(np.argmin(np.where(recalls >= 0.5, recalls - 0.5, np.inf)))
    _, got_p = _run_curve_metric(lambda y, p: cm.precision_at_recall(y, p, 0.5), lab, s)
    np.testing.assert_allclose(got_p, c["tp"][at] / (c["tp"][at] + c["fp"][at] + eps),
                               rtol=1e-6)


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_streaming_curve_points_match_the_counts(curve):
    lab, s = _scores()
    _, points = _run_curve_metric(
        lambda y, p: cm.streaming_curve_points(y, p, num_thresholds=30, curve=curve), lab, s)
    c = _counts(lab.reshape(-1), s.reshape(-1), _thresholds(30))
    eps = 1e-6
    rec = (c["tp"] + eps) / (c["tp"] + c["fn"] + eps)
    if curve == "ROC":
        want = np.stack([c["fp"] / (c["fp"] + c["tn"] + eps), rec], 1)
    else:
        want = np.stack([rec, (c["tp"] + eps) / (c["tp"] + c["fp"] + eps)], 1)
    assert points.shape == (30, 2)
    np.testing.assert_allclose(points, want, rtol=1e-5)


def _dynamic_auc_reference(lab, s, w, curve):
    order = np.argsort(-s, kind="stable")
    s, lab, w = s[order], lab[order].astype(float), w[order]
    cuts = np.r_[0, np.flatnonzero(np.diff(s)) + 1, len(s)]
    tp = np.r_[0, np.cumsum(lab * w)][cuts]
    fp = np.r_[0, np.cumsum((1 - lab) * w)][cuts]
    if curve == "ROC":
        x, y = fp / fp[-1], tp / tp[-1]
    else:
        called = tp + fp
        x = tp / tp[-1]
        y = np.where(called > 0, tp / np.where(called > 0, called, 1), 1.0)
    return np.sum((y[1:] + y[:-1]) / 2 * np.abs(np.diff(x)))


@pytest.mark.parametrize("curve", ["ROC", "PR"])
def test_streaming_dynamic_auc_is_exact(curve):
    lab, s = _scores()
    rng = np.random.RandomState(6)
    w = rng.randint(1, 3, lab.shape).astype(np.float32)
    for weighted in (False, True):
        def build(weighted=weighted):
            ph = (tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None]),
                  tf.placeholder(tf.float32, [None]))
            return ph, cm.streaming_dynamic_auc(ph[0], ph[1], curve=curve,
                                                weights=ph[2] if weighted else None)

        last, value = _stream(build, range(3),
                              lambda ph, i: {ph[0]: lab[i], ph[1]: s[i], ph[2]: w[i]})
        ww = w.reshape(-1) if weighted else np.ones(lab.size)
        want = _dynamic_auc_reference(lab.reshape(-1), s.reshape(-1).astype(np.float64),
                                      ww, curve)
        np.testing.assert_allclose([last, value], want, rtol=1e-12)
        if curve == "ROC":  # ties count one half, as scikit-learn's
            np.testing.assert_allclose(value, roc_auc_score(
                lab.reshape(-1), s.reshape(-1), sample_weight=ww), rtol=1e-12)


def test_streaming_dynamic_auc_of_one_class_is_zero_and_labels_are_checked():
    with tf.Graph().as_default():
        y = tf.placeholder(tf.int64, [None])
        p = tf.placeholder(tf.float32, [None])
        _, update = cm.streaming_dynamic_auc(y, p)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(update, {y: [1, 1], p: [0.2, 0.7]}) == 0.0
            with pytest.raises(tf.errors.InvalidArgumentError, match="must be 0 or 1"):
                sess.run(update, {y: [2], p: [0.5]})


def test_false_positive_and_negative_rates():
    lab, s = _scores()
    pred = (s > 0.5).astype(np.int64)
    for fn, bad, good in ((cm.streaming_false_positive_rate, "fp", "tn"),
                          (cm.streaming_false_negative_rate, "fn", "tp")):
        def build(fn=fn):
            ph = (tf.placeholder(tf.int64, [None]), tf.placeholder(tf.int64, [None]))
            return ph, fn(ph[1], ph[0])

        _, value = _stream(build, range(3), lambda ph, i: {ph[0]: lab[i], ph[1]: pred[i]})
        c = _counts(lab.reshape(-1), s.reshape(-1), [0.5])
        np.testing.assert_allclose(value, c[bad][0] / (c[bad][0] + c[good][0]), rtol=1e-6)
    for fn, bad, good in ((cm.streaming_false_positive_rate_at_thresholds, "fp", "tn"),
                          (cm.streaming_false_negative_rate_at_thresholds, "fn", "tp")):
        def build(fn=fn):
            ph = (tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None]))
            return ph, fn(ph[1], ph[0], [0.3, 0.6])

        _, value = _stream(build, range(3), lambda ph, i: {ph[0]: lab[i], ph[1]: s[i]})
        c = _counts(lab.reshape(-1), s.reshape(-1), [0.3, 0.6])
        np.testing.assert_allclose(value, c[bad] / (c[bad] + c[good] + 1e-7), rtol=1e-6)
    with tf.Graph().as_default():  # no negative example yet: 0, not NaN
        _, update = cm.streaming_false_positive_rate(tf.constant([1]), tf.constant([1]))
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            assert sess.run(update) == 0.0


def test_contrib_aliases():
    lab, s = _scores()
    thresholds = [0.25, 0.5]
    for name in ("true_positives", "false_positives", "true_negatives", "false_negatives"):
        fn = getattr(cm, f"streaming_{name}_at_thresholds")

        def build(fn=fn):
            ph = (tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None]))
            return ph, fn(ph[1], ph[0], thresholds)

        _, value = _stream(build, range(3), lambda ph, i: {ph[0]: lab[i], ph[1]: s[i]})
        key = {"true_positives": "tp", "false_positives": "fp", "true_negatives": "tn",
               "false_negatives": "fn"}[name]
        np.testing.assert_array_equal(
            value, _counts(lab.reshape(-1), s.reshape(-1), thresholds)[key])
    assert cm.set_intersection is tf.sets.set_intersection
    assert cm.set_union is tf.sets.set_union and cm.set_size is tf.sets.set_size
    assert cm.set_difference is tf.sets.set_difference
    assert cm.confusion_matrix is tf.confusion_matrix


def test_sparse_top_k_aliases_equal_the_core_metrics():
    rng = np.random.RandomState(7)
    lab = rng.randint(0, 6, (2, 12, 2)).astype(np.int64)
    logit = rng.randn(2, 12, 6).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.placeholder(tf.int64, [None, 2])
        x = tf.placeholder(tf.float32, [None, 6])
        top = tf.nn.top_k(x, 3).indices
        pairs = [(cm.streaming_sparse_precision_at_top_k(top, y),
                  tf.metrics.precision_at_k(y, x, 3)),
                 (cm.sparse_recall_at_top_k(y, top), tf.metrics.recall_at_k(y, x, 3)),
                 (cm.streaming_sparse_average_precision_at_top_k(top, y),
                  tf.metrics.average_precision_at_k(y, x, 3))]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(2):
                sess.run([[a[1], b[1]] for a, b in pairs], {y: lab[i], x: logit[i]})
            for a, b in pairs:
                va, vb = sess.run([a[0], b[0]])
                assert va == vb and 0 < va < 1


def test_precision_recall_at_equal_thresholds_bins_every_prediction_once():
    lab, s = _scores()
    rng = np.random.RandomState(8)
    w = rng.rand(*lab.shape).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.placeholder(tf.bool, [None])
        p = tf.placeholder(tf.float32, [None])
        wt = tf.placeholder(tf.float32, [None])
        data, update = cm.precision_recall_at_equal_thresholds(y, p, wt, num_thresholds=11)
        assert [v.name for v in tf.local_variables()] == [
            "precision_recall_at_equal_thresholds/tp_buckets:0",
            "precision_recall_at_equal_thresholds/fp_buckets:0"]
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(3):
                sess.run(update, {y: lab[i].astype(bool), p: s[i], wt: w[i]})
            got = sess.run(data)
    flat_s, flat_l, flat_w = s.reshape(-1), lab.reshape(-1).astype(bool), w.reshape(-1)
    bins = np.floor(flat_s * np.float32(10)).astype(int)
    tp = np.array([flat_w[flat_l & (bins >= i)].sum() for i in range(11)])
    fp = np.array([flat_w[~flat_l & (bins >= i)].sum() for i in range(11)])
    np.testing.assert_allclose(got.tp, tp, rtol=1e-5)
    np.testing.assert_allclose(got.fp, fp, rtol=1e-5)
    np.testing.assert_allclose(got.fn, tp[0] - tp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got.tn, fp[0] - fp, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got.precision, tp / np.maximum(tp + fp, 1e-7), rtol=1e-5)
    np.testing.assert_allclose(got.recall, tp / tp[0], rtol=1e-5)
    np.testing.assert_allclose(got.thresholds, np.linspace(0, 1, 11), rtol=1e-6)


def test_auc_using_histogram_approaches_the_exact_auc():
    lab, s = _scores()
    with tf.Graph().as_default():
        y = tf.placeholder(tf.bool, [None])
        p = tf.placeholder(tf.float32, [None])
        auc, update = cm.auc_using_histogram(y, p, [0.0, 1.0], nbins=200)
        coarse, coarse_update = cm.auc_using_histogram(y, p, [0.0, 1.0], nbins=4)
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for i in range(3):
                sess.run([update, coarse_update], {y: lab[i].astype(bool), p: s[i]})
            got, got_coarse = sess.run([auc, coarse])
    flat_s, flat_l = s.reshape(-1), lab.reshape(-1).astype(bool)
    # with bins finer than the scores' 0.01 steps, only ties inside a bin are merged
    np.testing.assert_allclose(got, roc_auc_score(flat_l, flat_s), atol=2e-3)
    h_t = np.histogram(flat_s[flat_l], 4, (0, 1))[0][::-1] / flat_l.sum()
    h_f = np.histogram(flat_s[~flat_l], 4, (0, 1))[0][::-1] / (~flat_l).sum()
    tpr = np.cumsum(h_t)
    want = h_f[0] * tpr[0] / 2 + np.sum(h_f[1:] * (tpr[1:] + tpr[:-1]) / 2)
    np.testing.assert_allclose(got_coarse, want, rtol=1e-12)

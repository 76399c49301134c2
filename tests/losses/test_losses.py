"""tf.losses: every loss against its NumPy formula, for each reduction and weights shape;
names, collections, get_total_loss and the error cases. Values marked "TF" were printed by
TensorFlow 2.15 (tf.compat.v1)."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import losses
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.losses import Reduction

RNG = np.random.default_rng(3)
N, C = 4, 3
LABELS = RNG.random((N, C)).astype(np.float32)
PREDS = RNG.random((N, C)).astype(np.float32)
BINARY = (RNG.random((N, C)) > 0.5).astype(np.float32)

WEIGHTS = {
    "scalar": 1.0,
    "scalar_tensor": np.float32(2.5),
    "per_example": np.array([[1.0], [0.0], [2.0], [0.5]], np.float32),
    "per_column": np.array([[1.0, 0.0, 2.0]], np.float32),
    "full": (RNG.random((N, C)) > 0.4).astype(np.float32) * 1.5,
    "zeros": np.zeros((N, C), np.float32),
}
REDUCTIONS = [Reduction.NONE, Reduction.SUM, Reduction.MEAN, Reduction.SUM_OVER_BATCH_SIZE,
              Reduction.SUM_BY_NONZERO_WEIGHTS]


def reduce_np(elementwise, weights, reduction):
    """The reference reduction of `compute_weighted_loss`."""
    w = np.broadcast_to(np.asarray(weights, np.float64), elementwise.shape)
    weighted = elementwise * w
    if reduction == Reduction.NONE:
        return weighted
    total = weighted.sum()
    den = {Reduction.SUM: 1.0, Reduction.MEAN: w.sum(),
           Reduction.SUM_OVER_BATCH_SIZE: elementwise.size,
           Reduction.SUM_BY_NONZERO_WEIGHTS: float((w != 0).sum())}[reduction]
    return 0.0 if den == 0 else total / den


def sigmoid_xent(z, x):
    return np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))


def log_softmax(x):
    z = x - x.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def huber(e, delta):
    a = np.abs(e)
    q = np.minimum(a, delta)
    return 0.5 * q ** 2 + delta * (a - q)


L, P, B = (x.astype(np.float64) for x in (LABELS, PREDS, BINARY))
ELEMENTWISE = {
    "mean_squared_error": (lambda **k: losses.mean_squared_error(LABELS, PREDS, **k),
                           (P - L) ** 2),
    "absolute_difference": (lambda **k: losses.absolute_difference(LABELS, PREDS, **k),
                            np.abs(P - L)),
    "huber_loss": (lambda **k: losses.huber_loss(LABELS, PREDS * 3, delta=0.7, **k),
                   huber(P * 3 - L, 0.7)),
    "log_loss": (lambda **k: losses.log_loss(LABELS, PREDS, **k),
                 -L * np.log(P + 1e-7) - (1 - L) * np.log(1 - P + 1e-7)),
    "hinge_loss": (lambda **k: losses.hinge_loss(BINARY, PREDS * 2 - 1, **k),
                   np.maximum(0, 1 - (2 * B - 1) * (P * 2 - 1))),
    "sigmoid_cross_entropy": (
        lambda **k: losses.sigmoid_cross_entropy(BINARY, PREDS * 4 - 2, label_smoothing=0.2,
                                                 **k),
        sigmoid_xent(B * 0.8 + 0.1, P * 4 - 2)),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weights", sorted(WEIGHTS))
@pytest.mark.parametrize("loss", sorted(ELEMENTWISE))
def test_elementwise_losses_match_numpy(sess, loss, weights, reduction):
    build, elementwise = ELEMENTWISE[loss]
    w = WEIGHTS[weights]
    t = build(weights=w, reduction=reduction)
    out = sess.run(t)
    want = reduce_np(elementwise, w, reduction)
    assert t.dtype == tf.float32
    assert out.shape == np.shape(want)
    np.testing.assert_allclose(out, want, rtol=2e-5, atol=1e-6)


def test_default_reduction_and_weights(sess):
    assert Reduction.SUM_OVER_NONZERO_WEIGHTS == Reduction.SUM_BY_NONZERO_WEIGHTS
    assert set(Reduction.all()) == {"none", "weighted_sum", "weighted_mean",
                                    "weighted_sum_over_batch_size",
                                    "weighted_sum_by_nonzero_weights"}
    t = losses.mean_squared_error(LABELS, PREDS)
    np.testing.assert_allclose(sess.run(t), ((P - L) ** 2).mean(), rtol=1e-6)
    w = WEIGHTS["per_example"]
    t = losses.mean_squared_error(LABELS, PREDS, weights=w)
    want = ((P - L) ** 2 * w).sum() / 9  # three of four rows weigh, 3 columns each
    np.testing.assert_allclose(sess.run(t), want, rtol=1e-6)


def test_tf_values(sess):
    l1 = losses.mean_squared_error([[1.0, 2.0], [3.0, 4.0]], [[1.5, 2.0], [3.0, 5.0]],
                                   weights=[[1.0], [0.0]])
    l2 = losses.softmax_cross_entropy([[0, 1.0], [1, 0]], [[1.0, 2.0], [3.0, 4.0]],
                                      label_smoothing=0.1)
    l3 = losses.sparse_softmax_cross_entropy([1, 0], [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(sess.run([l1, l2, l3]), [0.125, 0.81326163, 0.8132616],
                               rtol=1e-6)  # TF


def test_names_and_loss_collection():
    g = tf.get_default_graph()
    a = losses.mean_squared_error(LABELS, PREDS)
    b = losses.softmax_cross_entropy(np.eye(3)[[0, 2, 1, 2]], PREDS)
    c = losses.sparse_softmax_cross_entropy([0, 2, 1, 2], PREDS)
    d = losses.mean_squared_error(LABELS, PREDS, reduction=Reduction.NONE)
    e = losses.huber_loss(LABELS, PREDS, scope="my_loss", loss_collection="mine")
    assert a.name == "mean_squared_error/value:0"
    assert b.name == "softmax_cross_entropy_loss/value:0"
    assert c.name == "sparse_softmax_cross_entropy_loss/value:0"
    assert d.name.startswith("mean_squared_error_1/") and d.shape.as_list() == [N, C]
    assert e.name == "my_loss/value:0"
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [a, b, c, d]
    assert losses.get_losses() == [a, b, c, d] and losses.get_losses(loss_collection="mine")
    assert losses.get_losses(scope="softmax") == [b]
    names = {op.name for op in g.get_operations()}
    assert "softmax_cross_entropy_loss/xentropy" in names
    assert "sparse_softmax_cross_entropy_loss/xentropy/xentropy" in names
    none = losses.log_loss(LABELS, PREDS, loss_collection=None)
    assert none not in losses.get_losses()


def test_softmax_cross_entropy_losses(sess):
    onehot = np.eye(C, dtype=np.float32)[[0, 2, 1, 2]]
    logits = (PREDS * 5).astype(np.float32)
    lsm = log_softmax(logits.astype(np.float64))
    for w in (1.0, np.array([1.0, 0.0, 2.0, 3.0], np.float32)):
        for red in REDUCTIONS:
            smooth = onehot * 0.9 + 0.1 / C
            got = sess.run(losses.softmax_cross_entropy(onehot, logits, w, label_smoothing=0.1,
                                                        reduction=red))
            np.testing.assert_allclose(got, reduce_np(-(smooth * lsm).sum(-1), w, red),
                                       rtol=1e-5, atol=1e-7)
            for labels in ([0, 2, 1, 2], [[0], [2], [1], [2]]):
                got = sess.run(losses.sparse_softmax_cross_entropy(labels, logits, w,
                                                                   reduction=red))
                want = reduce_np(-lsm[np.arange(N), [0, 2, 1, 2]], w, red)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    per_example = np.array([[1.0], [0.0], [2.0], [3.0]], np.float32)
    got = sess.run(losses.sparse_softmax_cross_entropy([0, 2, 1, 2], logits, per_example))
    np.testing.assert_allclose(got, reduce_np(-lsm[np.arange(N), [0, 2, 1, 2]],
                                              per_example[:, 0], Reduction.SUM_BY_NONZERO_WEIGHTS),
                               rtol=1e-5)
    big = losses.softmax_cross_entropy([[1.0, 0.0]], [[1000.0, -1000.0]])
    assert sess.run(big) == 0.0


def test_sparse_softmax_cross_entropy_bad_label_at_run_time(sess):
    t = losses.sparse_softmax_cross_entropy([0, 3], [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    with pytest.raises(InvalidArgumentError, match="label value of 3"):
        sess.run(t)


def test_cosine_distance(sess):
    a = LABELS / np.linalg.norm(LABELS, axis=1, keepdims=True)
    b = PREDS / np.linalg.norm(PREDS, axis=1, keepdims=True)
    elementwise = 1 - (a.astype(np.float64) * b).sum(1, keepdims=True)
    for w in (1.0, WEIGHTS["per_example"]):
        for red in REDUCTIONS:
            got = sess.run(losses.cosine_distance(a, b, axis=1, weights=w, reduction=red))
            np.testing.assert_allclose(got, reduce_np(elementwise, w, red), rtol=1e-5,
                                       atol=1e-7)
    got = sess.run(losses.cosine_distance(a, b, dim=1))
    np.testing.assert_allclose(got, elementwise.mean(), rtol=1e-5)
    assert losses.cosine_distance(a, b, axis=1).name == "cosine_distance_loss_11/value:0"
    with pytest.raises(ValueError, match="axis"):
        losses.cosine_distance(a, b)
    with pytest.raises(ValueError, match="broadcast"):
        losses.cosine_distance(a, b, axis=1, weights=WEIGHTS["full"])


def mpse_np(labels, preds, weights):
    d = (preds - labels).reshape(len(labels), -1).astype(np.float64)
    w = np.broadcast_to(np.asarray(weights, np.float64).reshape(-1, *[1] * (d.ndim - 1)),
                        (len(labels), 1))[:, 0]
    total = 0.0
    for row, wi in zip(d, w, strict=True):
        n = row.size if wi != 0 else 0
        if n < 2:
            continue
        pairs = [(row[i] - row[j]) ** 2 for i in range(n) for j in range(n) if i != j]
        total += wi * np.mean(pairs)
    return total


def test_mean_pairwise_squared_error(sess):
    for w in (1.0, WEIGHTS["per_example"], np.array([[1.0], [0.0], [2.0], [3.0]], np.float32)):
        got = sess.run(losses.mean_pairwise_squared_error(LABELS, PREDS, w))
        np.testing.assert_allclose(got, mpse_np(LABELS, PREDS, w), rtol=1e-5)
    got = sess.run(losses.mean_pairwise_squared_error(LABELS, PREDS, 0.0))
    assert got == 0.0
    # TF names both terms and the result "value": the loss is value_2
    assert losses.mean_pairwise_squared_error(LABELS, PREDS).name == \
        "mean_pairwise_squared_error_4/value_2:0"
    with pytest.raises(ValueError, match="weights can not be broadcast"):  # [batch]: rank 1
        losses.mean_pairwise_squared_error(LABELS, PREDS, np.ones([4], np.float32))


def test_compute_weighted_loss_and_input_dtype(sess):
    l64 = np.array([[1.0, 2.0, 6.0]], np.float64)
    t = losses.compute_weighted_loss(l64, weights=[[1.0, 1.0, 0.0]])
    assert t.dtype == tf.float64 and sess.run(t) == 1.5
    assert t.op.name.startswith("weighted_loss/")
    f32 = losses.compute_weighted_loss([1.0, 2.0])
    assert f32.name == "weighted_loss_1/value:0"
    assert losses.get_losses() == [t, f32]
    s = losses.compute_weighted_loss([1.0, 3.0], 2.0, reduction=Reduction.SUM)
    assert sess.run(s) == 8.0
    m = losses.compute_weighted_loss([1.0, 3.0], [1.0, 3.0], reduction=Reduction.MEAN)
    assert sess.run(m) == 2.5
    empty = losses.compute_weighted_loss(tf.zeros([0, 3]))
    assert sess.run(empty) == 0.0


def test_partial_shapes(sess):
    lab = tf.placeholder(tf.float32, [None, C])
    pred = tf.placeholder(tf.float32, [None, C])
    w = tf.placeholder(tf.float32, [None, 1])
    t = losses.absolute_difference(lab, pred, w)
    assert t.shape.as_list() == []
    none = losses.absolute_difference(lab, pred, w, reduction=Reduction.NONE)
    assert none.shape.as_list() == [None, C]
    got = sess.run(t, {lab: LABELS, pred: PREDS, w: WEIGHTS["per_example"]})
    want = reduce_np(np.abs(P - L), WEIGHTS["per_example"], Reduction.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    unknown = losses.mean_squared_error(tf.placeholder(tf.float32), tf.placeholder(tf.float32))
    assert unknown.shape.as_list() == []


def test_errors():
    with pytest.raises(ValueError, match="Invalid Reduction Key foo"):
        losses.mean_squared_error(LABELS, PREDS, reduction="foo")
    with pytest.raises(ValueError, match="compatible shapes"):
        losses.mean_squared_error(LABELS, PREDS[:2])
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        losses.mean_squared_error(LABELS, PREDS, weights=np.ones([N], np.float32))
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        losses.mean_squared_error(LABELS, PREDS, weights=np.ones([2, C], np.float32))
    with pytest.raises(ValueError, match="`labels` must not be None"):
        losses.log_loss(None, PREDS)
    with pytest.raises(ValueError, match="`logits` must not be None"):
        losses.hinge_loss(BINARY, None)
    with pytest.raises(ValueError, match="Rank mismatch"):
        losses.sparse_softmax_cross_entropy([[[0]]], PREDS)
    with pytest.raises(ValueError, match="compatible shapes"):
        losses.softmax_cross_entropy(np.eye(2), PREDS)


def test_total_and_regularization_losses(sess):
    with pytest.raises(ValueError, match="no losses"):
        losses.get_total_loss()
    assert sess.run(losses.get_regularization_loss()) == 0.0
    a = losses.mean_squared_error([0.0, 0.0], [1.0, 3.0])
    b = losses.absolute_difference([0.0, 0.0], [1.0, 3.0])
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.25))
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.5))
    total = losses.get_total_loss()
    assert total.name == "total_loss:0"
    assert sess.run(total) == 5.0 + 2.0 + 0.75
    assert sess.run(losses.get_total_loss(add_regularization_losses=False)) == 7.0
    reg = losses.get_regularization_loss()
    assert reg.name == "total_regularization_loss:0" and sess.run(reg) == 0.75
    assert losses.get_regularization_losses() == tf.get_collection(
        tf.GraphKeys.REGULARIZATION_LOSSES)
    assert losses.get_losses() == [a, b]
    losses.add_loss(tf.constant(1.0))
    assert sess.run(losses.get_total_loss()) == 8.75
    losses.mean_squared_error(LABELS, PREDS, reduction=Reduction.NONE)
    with pytest.raises(ValueError, match="one shape"):
        losses.get_total_loss()

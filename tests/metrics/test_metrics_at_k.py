"""tf.metrics top-k metrics: values recorded from TensorFlow 2.15 (tf.compat.v1) with the
tf-oracle for a batch with repeated, negative and out-of-range labels, weights and class
ids; streaming over two batches; dtypes and argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

PRED = np.array([[0.1, 0.5, 0.2, 0.9, 0.0], [0.3, 0.1, 0.8, 0.0, 0.6],
                 [0.5, 0.4, 0.3, 0.2, 0.1]], np.float32)
LAB = np.array([[3, 1, 1], [4, -1, 9], [0, 2, 3]], np.int64)
TOP = np.array([[3, 1], [2, 4], [1, 0]], np.int64)
W = np.array([1.0, 2.0, 0.5], np.float32)

CASES = {  # name: (builder, TensorFlow's value)
    "p_k2": (lambda: tf.metrics.precision_at_k(LAB, PRED, 2), 0.66667),
    "sp_k2_c3": (lambda: tf.metrics.sparse_precision_at_k(LAB, PRED, 2, class_id=3), 1.0),
    "p_k3_w": (lambda: tf.metrics.precision_at_k(LAB, PRED, 3, weights=W), 0.47619),
    "p_k1_lab1": (lambda: tf.metrics.precision_at_k(np.array([3, 0, 4]), PRED, 1), 0.33333),
    "r_k2": (lambda: tf.metrics.recall_at_k(LAB, PRED, 2), 0.5),
    "r_k2_c4": (lambda: tf.metrics.recall_at_k(LAB, PRED, 2, class_id=4), 1.0),
    "r_k3_w": (lambda: tf.metrics.recall_at_k(LAB, PRED, 3, weights=W), 0.52632),
    "ap_k3": (lambda: tf.metrics.average_precision_at_k(LAB, PRED, 3), 0.57407),
    "sap_k2_w": (lambda: tf.metrics.sparse_average_precision_at_k(LAB, PRED, 2, weights=W),
                 0.64286),
    "ap_lab1": (lambda: tf.metrics.average_precision_at_k(np.array([3, 0, 4]), PRED, 2),
                0.33333),
    "ptop": (lambda: tf.metrics.precision_at_top_k(LAB, TOP), 0.66667),
    "rtop": (lambda: tf.metrics.recall_at_top_k(LAB, TOP, class_id=1), 1.0),
    "p_c2": (lambda: tf.metrics.precision_at_k(LAB, PRED, 1, class_id=2), 0.0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    build, want = CASES[name]
    value, update = build()
    assert value.dtype == tf.float64 and update.dtype == tf.float64
    assert value.shape.as_list() == []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        first = sess.run(update)
        second = sess.run(update)  # the same batch again: the ratio does not change
        np.testing.assert_allclose([first, second, sess.run(value)], [want] * 3, atol=1e-5)


@pytest.mark.parametrize(("labels", "want"), [
    ([4, -1, 9], [0.0, 0.5, 0.5]), ([4, 4, 4], [0.0, 0.25, 1 / 6]),
    ([2, 4, 4], [1.0, 1.0, 2 / 3]), ([0, 2, 3], [1.0, 0.5, 0.55556])])
def test_average_precision_counts_labels_like_tensorflow(labels, want):
    # TensorFlow divides by min(k, labels in [0, num_classes)), repeats included.
    pred = PRED[1:2]
    ms = [tf.metrics.average_precision_at_k(np.array([labels]), pred, k)[1]
          for k in (1, 2, 3)]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        np.testing.assert_allclose(sess.run(ms), want, atol=1e-5)


def test_streams_over_batches_and_collections():
    labels = tf.placeholder(tf.int64, [None, 1])
    pred = tf.placeholder(tf.float32, [None, 3])
    value, update = tf.metrics.recall_at_k(labels, pred, 1, metrics_collections=["m"],
                                           updates_collections=["u"])
    assert tf.get_collection("m") == [value] and tf.get_collection("u") == [update]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(update, {labels: [[0], [1]], pred: [[0.9, 0.1, 0.0], [0.8, 0.1, 0.1]]})
        sess.run(update, {labels: [[2]], pred: [[0.0, 0.1, 0.9]]})
        assert sess.run(value) == pytest.approx(2 / 3)


def test_argument_errors():
    with pytest.raises(ValueError, match="k must be"):
        tf.metrics.precision_at_k(LAB, PRED, 0)
    with pytest.raises(ValueError, match="rank"):
        tf.metrics.recall_at_k(np.zeros((3, 1, 1, 1), np.int64), PRED, 1)

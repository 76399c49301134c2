"""sensitivity_at_specificity, specificity_at_sensitivity and mean_cosine_distance:
values recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle, dtypes, errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _metrics(r):
    lab = r.rand(40) > 0.4
    pred = r.rand(40).astype(np.float32)
    w = r.rand(40).astype(np.float32)
    return [
        tf.metrics.sensitivity_at_specificity(lab, pred, 0.7),
        tf.metrics.sensitivity_at_specificity(lab, pred, 0.3, weights=w, num_thresholds=11),
        tf.metrics.specificity_at_sensitivity(lab, pred, 0.6),
        tf.metrics.specificity_at_sensitivity(lab, pred, 0.9, weights=w, num_thresholds=7),
        tf.metrics.sensitivity_at_specificity([True, False, True, False],
                                              tf.constant([0.9, 0.2, 0.6, 0.7]), 0.5),
        tf.metrics.sensitivity_at_specificity([True, True, False],
                                              tf.constant([0.8, 0.3, 0.5]), 1.0),
        tf.metrics.specificity_at_sensitivity([True, True, False],
                                              tf.constant([0.8, 0.3, 0.5]), 0.5),
        tf.metrics.mean_cosine_distance([[1.0, 0.0], [0.0, 1.0]],
                                        tf.constant([[1.0, 0.0], [1.0, 0.0]]), dim=1),
        tf.metrics.mean_cosine_distance(tf.constant(r.rand(3, 4)), tf.constant(r.rand(3, 4)),
                                        dim=0, weights=[[1.0, 0.0, 2.0, 1.0]]),
    ]


def test_match_tensorflow():
    ms = _metrics(np.random.RandomState(0))  # the oracle script's data
    want = [0.09375, 0.36836, 0.375, 0.0, 1.0, 0.5, 1.0, 0.5, 0.12994]
    assert all(v.dtype == tf.float32 and u.dtype == tf.float32 for v, u in ms)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        np.testing.assert_allclose(sess.run([u for _, u in ms]), want, atol=1e-5)
        np.testing.assert_allclose(sess.run([v for v, _ in ms]), want, atol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="specificity"):
        tf.metrics.sensitivity_at_specificity([True], [0.5], 1.5)
    with pytest.raises(ValueError, match="num_thresholds"):
        tf.metrics.specificity_at_sensitivity([True], [0.5], 0.5, num_thresholds=1)
    with pytest.raises(ValueError, match="compatible"):
        tf.metrics.mean_cosine_distance([[1.0, 0.0]], [[1.0, 0.0, 0.0]], dim=1)

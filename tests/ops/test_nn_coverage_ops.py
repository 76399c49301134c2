"""tf.nn names added for TF1 API coverage (issue 15): candidate samplers and sampled
losses, CTC decoders and helpers, window ops, conv spellings. Expected values were
recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle on the same inputs
(``np.random.RandomState(0)``)."""

from __future__ import annotations

import numpy as np
import pytest
from module_examples import assert_examples_pass

import flowgraph as tf

MODULES = ["flowgraph.ops.candidate_sampling_ops", "flowgraph.ops.nn_sampled_loss",
           "flowgraph.ops.nn_compat_ops", "flowgraph.ops.ctc_decode_ops"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    assert_examples_pass(name)


def test_ctc_decoders_match_tensorflow():
    logits = np.random.RandomState(0).randn(6, 2, 4).astype(np.float32)
    with tf.Graph().as_default():
        dec, lp = tf.nn.ctc_beam_search_decoder(logits, [6, 4], beam_width=8, top_paths=2)
        (greedy,), neg = tf.nn.ctc_greedy_decoder(logits, [6, 4])
        with tf.Session() as sess:
            got = sess.run({"dec": [(d.indices, d.values, d.dense_shape) for d in dec],
                            "lp": lp, "g": (greedy.indices, greedy.values,
                                            greedy.dense_shape), "neg": neg})
    (i0, v0, s0), (_, v1, s1) = got["dec"]
    assert i0.tolist() == [[0, 0], [1, 0], [1, 1], [1, 2]] and v0.tolist() == [0, 0, 2, 1]
    assert s0.tolist() == [2, 3] and v1.tolist() == [2, 0, 0, 1] and s1.tolist() == [2, 2]
    np.testing.assert_allclose(got["lp"], [[-2.1485, -2.3011], [-1.9906, -2.1512]],
                               atol=1e-4)
    gi, gv, gs = got["g"]
    assert gi.tolist() == [[0, 0], [1, 0], [1, 1], [1, 2]] and gv.tolist() == [0, 0, 2, 0]
    assert gs.tolist() == [2, 3]
    np.testing.assert_allclose(got["neg"].ravel(), [-9.5661, -5.0258], atol=1e-4)


def test_ctc_label_helpers_match_tensorflow():
    with tf.Graph().as_default():
        collapsed, lengths = tf.nn.collapse_repeated([[1, 1, 2, 2, 3, 0], [4, 4, 4, 5, 5, 5]],
                                                     [5, 4])
        unique, idx = tf.nn.ctc_unique_labels([[3, 4, 4, 3, 0], [1, 1, 2, 0, 0]])
        rows, ids, weights = tf.nn.compute_accidental_hits([[1, 2], [5, 1]], [1, 5, 3, 2], 2)
        with tf.Session() as sess:
            c, n, u, i, r, d, w = sess.run([collapsed, lengths, unique, idx, rows, ids,
                                            weights])
    assert c.tolist() == [[1, 2, 3], [4, 5, 0]] and n.tolist() == [3, 2]
    assert u.tolist() == [[3, 4, 0, 0, 0], [1, 2, 0, 0, 0]]
    assert i.tolist() == [[0, 1, 1, 0, 2], [0, 0, 1, 2, 2]]
    assert r.tolist() == [0, 0, 1, 1] and d.tolist() == [0, 3, 1, 0]
    assert np.all(w == -np.finfo(np.float32).max)


def test_window_ops_and_gradients():
    rng = np.random.RandomState(0)
    rng.randn(6, 2, 4)  # the oracle script drew the CTC logits first
    x_np = rng.randn(2, 5, 5, 3).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(x_np)
        pooled, arg = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID",
                                                 include_batch_in_index=True)
        (grad,) = tf.gradients(tf.reduce_sum(pooled), x)
        with tf.Session() as sess:
            p, a, g = sess.run([pooled, arg, grad])
    assert a.tolist() == [[[[3, 19, 17], [24, 22, 26]], [[45, 49, 47], [36, 37, 38]]],
                          [[[75, 79, 80], [96, 97, 83]], [[120, 124, 122], [114, 127, 113]]]]
    np.testing.assert_array_equal(p.ravel(), x_np.ravel()[a.ravel()])
    # The gradient reaches exactly the maxima.
    assert g.sum() == p.size and np.all(g.ravel()[a.ravel()] == 1.0)


def test_samplers_expected_counts():
    with tf.Graph().as_default():
        s, t, _ = tf.nn.log_uniform_candidate_sampler([[1, 4], [7, 0]], 2, 5, False, 30)
        _, t2, _ = tf.nn.fixed_unigram_candidate_sampler(
            [[1]], 1, 4, False, 5, unigrams=[2.0, 3.0, 4.0, 5.0], distortion=0.5,
            num_reserved_ids=1)
        us, ut, ue = tf.nn.uniform_candidate_sampler([[3]], 1, 6, True, 8, seed=4)
        with tf.Session() as sess:
            sampled, true_count, t2v, uniq, ut_v, ue_v = sess.run([s, t, t2, us, ut, ue])
    p = np.log((np.arange(30) + 2.0) / (np.arange(30) + 1.0)) / np.log(31.0)
    np.testing.assert_allclose(true_count, 5 * p[[[1, 4], [7, 0]]], rtol=1e-5)
    np.testing.assert_allclose(t2v, [[0.7663]], atol=1e-4)  # TensorFlow's value
    assert len(set(uniq.tolist())) == 6 and np.all((sampled >= 0) & (sampled < 30))
    # unique: 1 - (1 - 1/8)^tries, with tries >= 6 draws
    assert ut_v[0, 0] >= 1 - (7 / 8) ** 6 - 1e-6 and np.allclose(ue_v, ut_v[0, 0])
    with pytest.raises(ValueError, match="unique classes"):
        tf.nn.uniform_candidate_sampler([[0]], 1, 5, True, 3)


def test_sampled_losses_train_and_match_full_softmax_with_all_classes():
    rng = np.random.RandomState(1)
    w_np = rng.randn(6, 3).astype(np.float32)
    x_np = rng.randn(4, 3).astype(np.float32)
    labels = np.array([[0], [3], [5], [2]])
    with tf.Graph().as_default():
        w = tf.constant(w_np)
        b = tf.zeros([6])
        x = tf.constant(x_np)
        every = tf.nn.all_candidate_sampler(labels, 1, 6, True)
        sampled = tf.nn.sampled_softmax_loss(w, b, labels, x, 6, 6, sampled_values=every,
                                             remove_accidental_hits=True)
        full = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=labels[:, 0], logits=tf.matmul(x, w, transpose_b=True))
        nce = tf.nn.nce_loss(w, b, labels, x, 6, 6, sampled_values=every)
        (gw,) = tf.gradients(tf.reduce_sum(nce), w)
        with tf.Session() as sess:
            s, f, n, g = sess.run([sampled, full, nce, tf.convert_to_tensor(gw)])
    np.testing.assert_allclose(s, f, rtol=1e-5)
    logits = x_np @ w_np.T
    sig = 1.0 / (1.0 + np.exp(-logits))
    want = -np.log(sig[np.arange(4), labels[:, 0]]) - np.log(1.0 - sig).sum(1)
    np.testing.assert_allclose(n, want, rtol=1e-4)
    assert g.shape == (6, 3) and np.all(np.isfinite(g))


def test_conv_spellings():
    with tf.Graph().as_default():
        x = tf.constant(np.random.RandomState(2).randn(1, 4, 4, 4, 2).astype(np.float32))
        dy = tf.ones([1, 3, 3, 3, 5])
        df = tf.nn.conv3d_backprop_filter_v2(x, [2, 2, 2, 2, 5], dy, [1] * 5, "VALID")
        f = tf.Variable(tf.zeros([2, 2, 2, 2, 5]))
        (want,) = tf.gradients(tf.nn.conv3d(x, f, [1] * 5, "VALID"), f, grad_ys=dy)
        y2 = tf.ones([1, 3, 3, 2])
        k = tf.ones([2, 2, 2, 2])
        same = tf.nn.conv2d_backprop_input(tf.constant([1, 4, 4, 2]), k, y2, [1, 1, 1, 1],
                                           "VALID")
        v2 = tf.conv2d_backprop_input_v2(tf.zeros([1, 4, 4, 2]), k, y2, [1, 1, 1, 1],
                                         "VALID")
        with tf.Session() as sess:
            sess.run(f.initializer)
            a, b, c, d = sess.run([df, want, same, v2])
    np.testing.assert_allclose(a, b, rtol=1e-5)
    np.testing.assert_allclose(c, d)
    assert tf.nn.conv_transpose(tf.ones([1, 3, 2]), tf.ones([2, 4, 2]), [1, 6, 4],
                                2).shape.as_list() == [1, 6, 4]


def test_fake_quant_matches_tensorflow():
    """Values and straight-through gradients recorded from TensorFlow 2.15."""
    x_np = np.linspace(-2.5, 3.1, 13).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.constant(x_np)
        lo, hi = tf.constant(-1.0), tf.constant(1.0)
        y1 = tf.fake_quant_with_min_max_args(x, -1.3, 2.1, num_bits=5)
        y2 = tf.fake_quant_with_min_max_vars(x, lo, hi, num_bits=4)
        w = tf.constant(np.arange(13, dtype=np.float32))
        gx, glo, ghi = tf.gradients(tf.reduce_sum(y2 * w), [x, lo, hi])
        with tf.Session() as sess:
            a, b, c, d, e = sess.run([y1, y2, gx, glo, ghi])
    np.testing.assert_allclose(a, [-1.31613, -1.31613, -1.31613, -1.09677, -0.65806, -0.21935,
                                   0.32903, 0.76774, 1.20645, 1.75484, 2.08387, 2.08387,
                                   2.08387], atol=1e-5)
    np.testing.assert_allclose(b[[0, 3, 4, 5, 6, 7, 8, 12]],
                               [-0.93333, -0.93333, -0.66667, -0.13333, 0.26667, 0.8, 1.06667,
                                1.06667], atol=1e-5)
    assert c.tolist() == [0.0] * 4 + [4.0, 5.0, 6.0, 7.0] + [0.0] * 5
    assert (float(d), float(e)) == (6.0, 50.0)

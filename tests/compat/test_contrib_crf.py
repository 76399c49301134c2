"""`tf.contrib.crf`: values against TensorFlow Addons' `tfa.text.crf_*` (the contrib code
ported to TF 2; numbers below recorded with tensorflow-addons 0.23 on TF 2.15), against
brute-force enumeration in NumPy, gradients against finite differences, and a small
NER-style tagger that trains."""

import doctest
import importlib
import itertools

import numpy as np
import pytest

import flowgraph as tf

MODULES = ["flowgraph.contrib.crf"]

crf = tf.contrib.crf


def _inputs():
    rng = np.random.RandomState(0)
    x = rng.randn(3, 4, 5).astype(np.float32)
    tags = rng.randint(0, 5, (3, 4)).astype(np.int32)
    lengths = np.array([4, 2, 1], np.int32)
    trans = rng.randn(5, 5).astype(np.float32)
    return x, tags, lengths, trans


def test_values_match_tensorflow_addons():
    x, tags, lengths, trans = _inputs()
    with tf.Graph().as_default():
        X, T = tf.constant(x), tf.constant(trans)
        ll, _ = crf.crf_log_likelihood(X, tags, lengths, T)
        fetches = [ll, crf.crf_sequence_score(X, tags, lengths, T),
                   crf.crf_log_norm(X, lengths, T), crf.crf_unary_score(tags, lengths, X),
                   crf.crf_binary_score(tags, lengths, T), *crf.crf_decode(X, T, lengths),
                   *tf.gradients(tf.reduce_sum(ll), [X, T])]
        ll, sc, ln, un, bi, dt, bs, gx, gt = tf.Session().run(fetches)
    # TensorFlow Addons 0.23 (tfa.text) on these inputs:
    np.testing.assert_allclose(ll, [-6.6047, -3.78041, -0.17847], rtol=1e-4)
    np.testing.assert_allclose(sc, [4.6059, 1.96939, 1.95078], rtol=1e-4)
    np.testing.assert_allclose(ln, [11.2106, 5.7498, 2.12925], rtol=1e-4)
    np.testing.assert_allclose(un, [3.33865, 0.79061, 1.95078], rtol=1e-4)
    np.testing.assert_allclose(bi, [1.26724, 1.17878, 0.0], rtol=1e-4, atol=1e-6)
    assert dt.tolist() == [[3, 1, 1, 1], [4, 3, 0, 0], [3, 0, 0, 0]]
    assert dt.dtype == np.int32
    np.testing.assert_allclose(bs, [8.43227, 5.02498, 1.95078], rtol=1e-4)
    np.testing.assert_allclose(gx[1], [[-0.0054, -0.0393, -0.1501, 0.9562, -0.7614],
                                       [-0.0043, -0.1178, -0.0304, 0.3935, -0.2410],
                                       [0, 0, 0, 0, 0], [0, 0, 0, 0, 0]], atol=2e-4)
    np.testing.assert_allclose(gt[1], [-0.02767, -0.45373, 0.95004, -0.07707, -0.07188],
                               atol=2e-4)
    assert crf.viterbi_decode(x[0], trans)[0] == [3, 1, 1, 1]
    np.testing.assert_allclose(crf.viterbi_decode(x[0], trans)[1], 8.43227, rtol=1e-5)


def test_single_step_and_empty_sequences():
    x, tags, _, trans = _inputs()
    with tf.Graph().as_default():
        T = tf.constant(trans)
        dt, bs = crf.crf_decode(tf.constant(x[:, :1]), T, [1, 1, 1])
        ll, _ = crf.crf_log_likelihood(tf.constant(x[:, :1]), tags[:, :1], [1, 1, 0], T)
        dt, bs, ll = tf.Session().run([dt, bs, ll])
    assert dt.tolist() == [[3], [4], [3]]
    np.testing.assert_allclose(bs, [2.24089, 2.26975, 1.95078], rtol=1e-4)
    np.testing.assert_allclose(ll, [-1.01194, -3.41818, 0.0], rtol=1e-4, atol=1e-6)


def _brute(x, lengths, trans):
    """log Z and the best path by enumerating every tag sequence."""
    out = []
    for b, n in enumerate(lengths):
        scores = {}
        for path in itertools.product(range(x.shape[2]), repeat=int(n)):
            s = sum(x[b, t, k] for t, k in enumerate(path))
            s += sum(trans[path[t - 1], path[t]] for t in range(1, len(path)))
            scores[path] = s
        vals = np.array(list(scores.values()), np.float64)
        best = max(scores, key=scores.get)
        out.append((np.log(np.exp(vals - vals.max()).sum()) + vals.max(), list(best),
                    scores[best]))
    return out


def test_log_norm_and_decode_against_enumeration():
    rng = np.random.RandomState(3)
    x = rng.randn(4, 5, 3)
    trans = rng.randn(3, 3)
    lengths = np.array([5, 3, 1, 4], np.int32)
    with tf.Graph().as_default():
        ln = crf.crf_log_norm(tf.constant(x), lengths, tf.constant(trans))
        tags, best = crf.crf_decode(tf.constant(x), tf.constant(trans), lengths)
        seq = crf.crf_multitag_sequence_score(tf.constant(x), np.ones(x.shape, bool), lengths,
                                              tf.constant(trans))
        ln, tags, best, seq = tf.Session().run([ln, tags, best, seq])
    for b, (logz, path, score) in enumerate(_brute(x, lengths, trans)):
        np.testing.assert_allclose(ln[b], logz, rtol=1e-10)
        np.testing.assert_allclose(seq[b], logz, rtol=1e-10)  # all tags allowed
        assert tags[b, :lengths[b]].tolist() == path
        assert not tags[b, lengths[b]:].any()
        np.testing.assert_allclose(best[b], score, rtol=1e-10)
        v_path, v_score = crf.viterbi_decode(x[b, :lengths[b]], trans)
        assert v_path == path
        np.testing.assert_allclose(v_score, score, rtol=1e-10)


def test_gradient_matches_finite_differences():
    rng = np.random.RandomState(1)
    x0 = rng.randn(2, 4, 3)
    t0 = rng.randn(3, 3)
    tags = rng.randint(0, 3, (2, 4))
    lengths = np.array([4, 2], np.int32)
    direction_x, direction_t = rng.randn(*x0.shape), rng.randn(*t0.shape)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, x0.shape)
        t = tf.placeholder(tf.float64, t0.shape)
        ll, _ = crf.crf_log_likelihood(x, tags, lengths, t)
        loss = tf.reduce_sum(ll)
        gx, gt = tf.gradients(loss, [x, t])
        with tf.Session() as sess:
            analytic = sess.run([gx, gt], {x: x0, t: t0})
            eps = 1e-6
            up = sess.run(loss, {x: x0 + eps * direction_x, t: t0 + eps * direction_t})
            down = sess.run(loss, {x: x0 - eps * direction_x, t: t0 - eps * direction_t})
    numeric = (up - down) / (2 * eps)
    along = (analytic[0] * direction_x).sum() + (analytic[1] * direction_t).sum()
    np.testing.assert_allclose(along, numeric, rtol=1e-6)


def test_transitions_variable_and_errors():
    with tf.Graph().as_default():
        with tf.variable_scope("crf_layer"):
            _, trans = crf.crf_log_likelihood(tf.zeros([2, 3, 4]), tf.zeros([2, 3], tf.int32),
                                              [3, 2])
        assert trans.name == "crf_layer/transitions:0"
        assert trans.shape.as_list() == [4, 4]
        with pytest.raises(ValueError, match="number of tags"):
            crf.crf_log_likelihood(tf.placeholder(tf.float32, [2, 3, None]),
                                   tf.zeros([2, 3], tf.int32), [3, 2])
        with pytest.raises(ValueError, match=r"\[batch_size, max_seq_len, num_tags\]"):
            crf.crf_log_norm(tf.zeros([2, 3]), [3, 2], tf.zeros([3, 3]))
        with pytest.raises(ValueError, match="viterbi_decode"):
            crf.viterbi_decode(np.zeros([3, 4]), np.zeros([3, 3]))


def test_dynamic_time_dimension():
    x, tags, lengths, trans = _inputs()
    with tf.Graph().as_default():
        X = tf.placeholder(tf.float32, [None, None, 5])
        ll, _ = crf.crf_log_likelihood(X, tf.placeholder_with_default(tags, [None, None]),
                                       lengths, tf.constant(trans))
        dt, _ = crf.crf_decode(X, tf.constant(trans), lengths)
        with tf.Session() as sess:
            ll_v, dt_v = sess.run([ll, dt], {X: x})
            one = sess.run(dt, {X: x[:, :1]})
    np.testing.assert_allclose(ll_v, [-6.6047, -3.78041, -0.17847], rtol=1e-4)
    assert dt_v.tolist() == [[3, 1, 1, 1], [4, 3, 0, 0], [3, 0, 0, 0]]
    assert one.tolist() == [[3], [4], [3]]


def test_ner_style_tagger_trains():
    """Embedding + BiLSTM + dense + CRF on a toy tagging task (tag = word class, with the
    transition B->I learned); the loss falls and the decoded tags become right."""
    rng = np.random.RandomState(0)
    vocab, n_tags, batch, steps = 20, 3, 16, 7
    words = rng.randint(0, vocab, (batch, steps)).astype(np.int32)
    tags = (words % n_tags).astype(np.int32)
    lengths = rng.randint(3, steps + 1, batch).astype(np.int32)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        w = tf.placeholder(tf.int32, [None, None])
        y = tf.placeholder(tf.int32, [None, None])
        n = tf.placeholder(tf.int32, [None])
        emb = tf.get_variable("emb", [vocab, 8])
        (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(
            tf.nn.rnn_cell.LSTMCell(8), tf.nn.rnn_cell.LSTMCell(8),
            tf.nn.embedding_lookup(emb, w), sequence_length=n, dtype=tf.float32)
        logits = tf.layers.dense(tf.concat([fw, bw], -1), n_tags)
        ll, trans = crf.crf_log_likelihood(logits, y, n)
        loss = tf.reduce_mean(-ll)
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        pred, _ = crf.crf_decode(logits, trans, n)
        feed = {w: words, y: tags, n: lengths}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss, feed)
            for _ in range(40):
                sess.run(train, feed)
            last, p = sess.run([loss, pred], feed)
    assert last < first * 0.2
    mask = np.arange(steps)[None, :] < lengths[:, None]
    assert (p[mask] == tags[mask]).mean() > 0.95


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0, f"{module}: {result}"

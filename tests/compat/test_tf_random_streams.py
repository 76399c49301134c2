"""Seeded TF1 programs print TensorFlow's numbers: the stateful random ops
(``RandomUniform``, ``RandomUniformInt``, ``RandomStandardNormal``, ``TruncatedNormal``,
``RandomShuffle``) and ``tf.data``'s shuffle draw TensorFlow's Philox streams, seeded as
TensorFlow seeds them (graph seed, op seed, the graph's counter of seedless random ops
from 0). Every value below is what TensorFlow 2.15 printed for the same program
(tf-oracle), rounded as printed."""

import numpy as np
import pytest

import flowgraph as tf


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def _r(x, d=4):
    return np.round(np.asarray(x, np.float64), d).tolist()


def test_initializers_and_random_ops_match_tensorflow():
    tf.set_random_seed(42)
    a = tf.random_normal([4])
    b = tf.random_uniform([3], seed=7)
    c = tf.truncated_normal([3], seed=1)
    w = tf.get_variable("w", [2, 3], initializer=tf.glorot_uniform_initializer())
    d = tf.layers.dense(tf.ones([1, 3]), 2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = [_r(sess.run(t)) for t in (a, b, c, w, d)]
    assert got == [[-0.301, 0.5186, -0.1569, -1.1761], [0.8628, 0.6568, 0.9905],
                   [-1.4999, -1.242, 0.5228],
                   [[-0.7665, 0.3066, 0.6964], [-0.338, 1.088, 0.3101]],
                   [[2.5266, -1.2165]]]


def test_runs_continue_the_stream_and_a_new_session_restarts_it():
    tf.set_random_seed(1234)
    a = tf.random_normal([3], dtype=tf.float64)
    b = tf.random_uniform([5], maxval=10, dtype=tf.int32)
    b64 = tf.random_uniform([3], minval=-5, maxval=1 << 40, dtype=tf.int64)
    c = tf.truncated_normal([1000], seed=3)
    h = tf.random_uniform([3], dtype=tf.float16)
    dropped = tf.nn.dropout(tf.ones([8]), rate=0.5)
    e = tf.random_normal([2, 2], mean=3.0, stddev=0.5, seed=9)
    with tf.Session() as sess:
        first = [_r(sess.run(a), 5), sess.run(b).tolist(), sess.run(b64).tolist()]
        cv = sess.run(c)
        assert round(float(cv.sum()), 3) == -24.855 and np.abs(cv).max() < 2
        assert _r(cv[:3]) == [-0.1386, -0.2479, -0.2218]
        assert sess.run(h).tolist() == [0.16015625, 0.7939453125, 0.9052734375]
        assert sess.run(dropped).tolist() == [0.0, 0.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0]
        assert _r(sess.run(e)) == [[2.3011, 2.9172], [2.6156, 3.6639]]
        second = [_r(sess.run(a), 5), sess.run(b).tolist(), sess.run(b64).tolist()]
        assert _r(sess.run(c)[:3]) == [-0.1208, -0.0224, -0.1944]
    assert first == [[1.44176, 2.04424, 0.08361], [6, 5, 3, 7, 3],
                     [1063115912717, 710544189943, 920440402120]]
    assert second == [[1.7086, 0.98937, 0.05942], [5, 9, 8, 0, 1],
                      [744712855827, 80282439004, 699536751737]]
    with tf.Session() as sess:
        assert _r(sess.run(a), 5) == [1.44176, 2.04424, 0.08361]


def test_a_seeded_mlp_with_dropout_trains_to_tensorflows_loss():
    tf.set_random_seed(0)
    x = tf.constant(np.linspace(-1, 1, 32, dtype=np.float32).reshape(16, 2))
    y = tf.constant(np.arange(16) % 2)
    h = tf.layers.dense(x, 8, activation=tf.nn.relu)
    h = tf.layers.dropout(h, 0.3, training=True)
    logits = tf.layers.dense(h, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(20):
            _, value = sess.run([train, loss])
    assert round(float(value), 5) == 0.65042


def test_seeds_follow_tensorflows_rule():
    tf.set_random_seed(3)
    r = tf.random_normal([2])
    u = tf.random_uniform([2], seed=5)
    v = tf.get_variable("v", [2], initializer=tf.glorot_uniform_initializer())
    seeds = [(o.get_attr("seed"), o.get_attr("seed2"))
             for o in tf.get_default_graph().get_operations()
             if o.type.startswith("Random")]
    assert seeds == [(3, 0), (3, 5), (3, 1)]
    assert (r, u, v) is not None
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        assert tf.get_seed(None) == (0, 2**31 - 1)  # (0, 0) would mean unseeded
        assert tf.get_seed(2**31 + 5) == (0, 6)


def test_random_shuffle_matches_tensorflow():
    tf.set_random_seed(5)
    a = tf.random_shuffle(tf.range(10))
    b = tf.random_shuffle(tf.reshape(tf.range(12), [6, 2]), seed=3)
    with tf.Session() as sess:
        got = [(sess.run(a).tolist(), sess.run(b)[:, 0].tolist()) for _ in range(3)]
    assert got == [([7, 4, 5, 9, 1, 2, 8, 6, 0, 3], [4, 0, 8, 10, 2, 6]),
                   ([6, 4, 9, 0, 3, 5, 2, 1, 7, 8], [0, 10, 2, 4, 6, 8]),
                   ([7, 1, 8, 3, 4, 5, 0, 2, 6, 9], [0, 10, 6, 8, 4, 2])]


def _drain(sess, nxt):
    out = []
    while True:
        try:
            out.append(sess.run(nxt).tolist())
        except tf.errors.OutOfRangeError:
            return out


def test_dataset_shuffle_matches_tensorflow():
    tf.set_random_seed(7)
    it = tf.data.make_initializable_iterator(tf.data.Dataset.range(10).shuffle(4))
    nxt = it.get_next()
    fixed = tf.data.Dataset.range(8).shuffle(3, seed=11, reshuffle_each_iteration=False)
    nxt2 = tf.data.make_one_shot_iterator(fixed.repeat(2)).get_next()
    it3 = tf.data.make_initializable_iterator(
        tf.data.Dataset.range(6).shuffle(6, seed=2).repeat(2).batch(4))
    nxt3 = it3.get_next()
    with tf.Session() as sess:
        for _ in range(2):  # a new initialization starts the same order, as in TF
            sess.run(it.initializer)
            assert _drain(sess, nxt) == [3, 4, 5, 6, 0, 7, 8, 9, 2, 1]
        assert _drain(sess, nxt2) == [2, 3, 0, 1, 6, 4, 5, 7, 2, 3, 0, 1, 6, 4, 5, 7]
        sess.run(it3.initializer)  # each repeat epoch reshuffles
        assert _drain(sess, nxt3) == [[2, 3, 4, 1], [5, 0, 1, 4], [3, 2, 0, 5]]
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert _drain(sess, nxt) == [3, 4, 5, 6, 0, 7, 8, 9, 2, 1]


def test_large_buffers_and_shuffle_and_repeat_match_tensorflow():
    ds = tf.data.Dataset.range(6).apply(tf.data.experimental.shuffle_and_repeat(4, 2, seed=3))
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    nxt2 = tf.data.make_one_shot_iterator(
        tf.data.Dataset.range(20).shuffle(100, seed=1).batch(5)).get_next()
    with tf.Session() as sess:
        assert _drain(sess, nxt) == [0, 3, 2, 1, 4, 5, 0, 4, 1, 5, 3, 2]
        assert _drain(sess, nxt2) == [[0, 12, 9, 8, 13], [1, 17, 19, 6, 10],
                                      [7, 2, 14, 18, 15], [4, 5, 3, 11, 16]]

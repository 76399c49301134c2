"""Queue-based input producers and limit_epochs through tf.train: order, epochs and the
OutOfRangeError at the end, shuffling as a permutation per epoch, shapes and errors."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _drain(fetch, sess, limit=100):
    out = []
    try:
        for _ in range(limit):
            out.append(sess.run(fetch))
    except tf.errors.OutOfRangeError:
        return out
    raise AssertionError(f"no OutOfRangeError after {limit} reads")


def _session_with_runners(fn):
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord=coord)
        try:
            return fn(sess)
        finally:
            coord.request_stop()
            coord.join(threads)


def test_string_input_producer_epochs_in_order():
    q = tf.train.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False)
    name = q.dequeue()
    assert name.dtype == tf.string and name.shape.as_list() == []
    got = _session_with_runners(lambda s: _drain(name, s))
    assert got == [b"a", b"b", b"c"] * 2


def test_shuffled_epochs_are_permutations():
    q = tf.train.range_input_producer(6, num_epochs=3, shuffle=True, seed=5)
    got = _session_with_runners(lambda s: _drain(q.dequeue(), s))
    assert len(got) == 18
    for e in range(3):
        assert sorted(got[6 * e:6 * e + 6]) == list(range(6))
    assert got[:6] != list(range(6)) or got[6:12] != list(range(6))


def test_slice_input_producer_keeps_rows_together():
    x = np.arange(8.0).reshape(4, 2)
    y = np.array([10, 11, 12, 13])
    xs, ys = tf.train.slice_input_producer([x, y], num_epochs=1, shuffle=True, seed=1)
    assert xs.shape.as_list() == [2] and ys.shape.as_list() == []
    got = _session_with_runners(lambda s: _drain([xs, ys], s))
    assert sorted(int(b) for _, b in got) == [10, 11, 12, 13]
    for a, b in got:
        np.testing.assert_array_equal(a, x[b - 10])


def test_input_producer_without_limit_keeps_cycling_and_batches():
    q = tf.train.input_producer(tf.constant([[1, 2], [3, 4]]), shuffle=False, capacity=4)
    batch = tf.train.batch([q.dequeue()], batch_size=3)
    got = _session_with_runners(lambda s: [s.run(batch) for _ in range(2)])
    np.testing.assert_array_equal(np.concatenate(got), [[1, 2], [3, 4]] * 3)


def test_limit_epochs_and_count_up_to():
    x = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=2)
    assert tf.train.limit_epochs(x) is x
    v = tf.Variable(0)
    step = tf.count_up_to(v, 1)
    with tf.Session() as sess:
        sess.run([tf.local_variables_initializer(), v.initializer])
        assert len(_drain(x, sess)) == 2
        assert sess.run(step) == 0
        with pytest.raises(tf.errors.OutOfRangeError, match="limit of 1"):
            sess.run(step)


def test_errors():
    with pytest.raises(ValueError, match="element_shape"):
        tf.train.input_producer(tf.placeholder(tf.float32, [None, None]))
    with pytest.raises(ValueError, match="num_epochs"):
        tf.train.limit_epochs(tf.constant(1), num_epochs=0)
    with pytest.raises(TypeError, match="variable"):
        tf.count_up_to(tf.constant(1), 3)
    q = tf.train.string_input_producer(tf.placeholder(tf.string, [None]))
    assert q.dequeue().dtype == tf.string


def test_match_filenames_once_feeds_string_input_producer(tmp_path):
    for n in ("b.csv", "a.csv", "c.txt"):
        (tmp_path / n).write_text("x")
    names = tf.train.match_filenames_once(str(tmp_path / "*.csv"))
    assert names.op.name == "matching_filenames" and names.dtype.base_dtype == tf.string
    assert names in tf.local_variables()
    q = tf.train.string_input_producer(names, num_epochs=1, shuffle=False)
    got = _session_with_runners(lambda s: _drain(q.dequeue(), s))
    assert [p.decode().rsplit("/", 1)[1] for p in got] == ["a.csv", "b.csv"]
    both = tf.matching_files([str(tmp_path / "*.txt"), str(tmp_path / "a*")])
    none = tf.matching_files(str(tmp_path / "*.zip"))
    with tf.Session() as sess:
        b, n = sess.run([both, none])
    assert [p.decode().rsplit("/", 1)[1] for p in b] == ["a.csv", "c.txt"] and n.shape == (0,)

"""tf.train.batch / shuffle_batch / batch_join / shuffle_batch_join, run with real threads."""

import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _exhausted_source(values, dtype=tf.int64, shape=()):
    """A dequeue tensor yielding `values` one by one, then OutOfRangeError."""
    values = np.asarray(values)
    src = tf.FIFOQueue(max(len(values), 1), dtype, shapes=[list(shape)])
    return src.dequeue(), [src.enqueue_many([values]), src.close()]


def _run_setup(sess, ops):
    for op in ops:
        sess.run(op)


def _drain(sess, fetch):
    """Run `fetch` until the pipeline is exhausted; return the results and the threads."""
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    out = []
    try:
        while True:
            out.append(sess.run(fetch))
    except errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads, stop_grace_period_secs=5)
    return out


def _no_runner_threads():
    return not [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]


def test_batch_list_shapes_and_names():
    x = tf.constant([1.0, 2.0, 3.0])
    y = tf.constant(4)
    bx, by = tf.train.batch([x, y], batch_size=5)
    assert bx.shape.as_list() == [5, 3] and by.shape.as_list() == [5]
    assert (bx.dtype, by.dtype) == (tf.float32, tf.int32)
    assert bx.op.name == "batch"
    (qr,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert qr.name == "batch/fifo_queue"
    single = tf.train.batch([x], batch_size=2)
    assert isinstance(single, tf.Tensor)  # one component: a tensor, as in TensorFlow
    small = tf.train.batch([x], batch_size=2, allow_smaller_final_batch=True)
    assert small.shape.as_list() == [None, 3]


def test_batch_values_in_order_with_smaller_final_batch():
    elem, setup = _exhausted_source(np.arange(10))
    b = tf.train.batch([elem], batch_size=4, allow_smaller_final_batch=True)
    with tf.Session() as sess:
        _run_setup(sess, setup)
        out = _drain(sess, b)
    assert [v.tolist() for v in out] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert _no_runner_threads()


def test_batch_drops_incomplete_final_batch_by_default():
    elem, setup = _exhausted_source(np.arange(10))
    b = tf.train.batch([elem], batch_size=4)
    with tf.Session() as sess:
        _run_setup(sess, setup)
        out = _drain(sess, b)
    assert [v.tolist() for v in out] == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_batch_dict_and_enqueue_many():
    features = {"x": tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                "label": tf.constant([0, 1, 2])}
    b = tf.train.batch(features, batch_size=4, enqueue_many=True, capacity=10)
    assert set(b) == {"x", "label"}
    assert b["x"].shape.as_list() == [4, 2] and b["label"].shape.as_list() == [4]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = sess.run(b)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    np.testing.assert_array_equal(got["label"], [0, 1, 2, 0])
    np.testing.assert_array_equal(got["x"][3], [1.0, 2.0])
    assert got["x"].dtype == np.float32


def test_batch_many_threads_lose_nothing():
    elem, setup = _exhausted_source(np.arange(40))
    b = tf.train.batch([elem], batch_size=5, num_threads=4, capacity=6)
    (qr,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert len(qr.enqueue_ops) == 4
    with tf.Session() as sess:
        _run_setup(sess, setup)
        out = _drain(sess, b)
    assert sorted(np.concatenate(out).tolist()) == list(range(40))
    assert _no_runner_threads()


def test_batch_dynamic_pad():
    src = tf.PaddingFIFOQueue(5, tf.int32, shapes=[[None]])
    pieces = [[1], [2, 2], [3, 3, 3]]
    setup = [src.enqueue(tf.constant(p)) for p in pieces] + [src.close()]
    b = tf.train.batch([src.dequeue()], batch_size=3, dynamic_pad=True)
    assert b.shape.as_list() == [3, None]
    with tf.Session() as sess:
        _run_setup(sess, setup)
        out = _drain(sess, b)
    np.testing.assert_array_equal(out[0], [[1, 0, 0], [2, 2, 0], [3, 3, 3]])


def test_batch_argument_errors():
    with pytest.raises(ValueError, match="at least one tensor"):
        tf.train.batch([], batch_size=2)
    v = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match="fully defined"):
        tf.train.batch([v], batch_size=2)
    u = tf.placeholder(tf.float32)
    with pytest.raises(ValueError, match="rank"):
        tf.train.batch([u], batch_size=2)
    b = tf.train.batch([u], batch_size=2, shapes=[[3]])
    assert b.shape.as_list() == [2, 3]


def test_shuffle_batch_mixes_and_covers_everything():
    elem, setup = _exhausted_source(np.arange(60))
    b = tf.train.shuffle_batch([elem], batch_size=6, capacity=30, min_after_dequeue=10,
                               seed=7, allow_smaller_final_batch=True)
    assert b.op.name == "shuffle_batch"
    with tf.Session() as sess:
        _run_setup(sess, setup)
        out = _drain(sess, b)
    flat = np.concatenate(out).tolist()
    assert sorted(flat) == list(range(60))
    assert flat != list(range(60))
    assert _no_runner_threads()


def test_shuffle_batch_dict_keeps_components_together():
    x = tf.constant([[0.0], [1.0], [2.0], [3.0]])
    y = tf.constant([0, 10, 20, 30])
    b = tf.train.shuffle_batch({"x": x, "y": y}, batch_size=8, capacity=20,
                               min_after_dequeue=4, enqueue_many=True, num_threads=2)
    assert b["x"].shape.as_list() == [8, 1]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = sess.run(b)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    np.testing.assert_array_equal(got["x"][:, 0] * 10, got["y"])


def test_shuffle_batch_capacity_must_exceed_min_after_dequeue():
    with pytest.raises(ValueError, match="must be bigger than min_after_dequeue"):
        tf.train.shuffle_batch([tf.constant(1)], batch_size=2, capacity=5, min_after_dequeue=5)


def test_batch_join_one_thread_per_input():
    a, setup_a = _exhausted_source(np.arange(0, 6))
    b, setup_b = _exhausted_source(np.arange(100, 106))
    joined = tf.train.batch_join([[a], [b]], batch_size=3, allow_smaller_final_batch=True)
    (qr,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
    assert len(qr.enqueue_ops) == 2
    with tf.Session() as sess:
        _run_setup(sess, setup_a + setup_b)
        out = _drain(sess, joined)
    assert sorted(np.concatenate(out).tolist()) == [*range(6), *range(100, 106)]
    with pytest.raises(TypeError, match="same types"):
        tf.train.batch_join([[tf.constant(1)], [tf.constant(1.0)]], batch_size=2)


def test_shuffle_batch_join():
    a = tf.constant([1, 2])
    b = tf.constant([3, 4])
    out = tf.train.shuffle_batch_join([{"v": a}, {"v": b}], batch_size=4, capacity=10,
                                      min_after_dequeue=2, enqueue_many=True, seed=1)
    assert out["v"].shape.as_list() == [4]
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        got = sess.run(out["v"])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert set(got.tolist()) <= {1, 2, 3, 4}

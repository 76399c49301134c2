"""tf.train.QueueRunner, add_queue_runner and start_queue_runners with real threads."""

import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _runner_threads():
    return [t for t in threading.enumerate() if t.name.startswith("QueueRunnerThread")]


def _source_queue(values, name="source"):
    """A closed queue holding `values`: dequeuing past them raises OutOfRangeError."""
    src = tf.FIFOQueue(len(values), tf.int64, shapes=[[]], name=name)
    fill = src.enqueue_many([np.asarray(values, np.int64)])
    return src, [fill, src.close()]


def test_threads_feed_while_consumer_trains_then_stop_cleanly():
    counter = tf.Variable(np.int64(0))
    q = tf.FIFOQueue(8, tf.int64, shapes=[[]])
    # One thread enqueues 1, 2, 3, ... ; two more enqueue constant 1000s.
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(tf.assign_add(counter, 1))]))
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(np.int64(1000))] * 2))
    total = tf.Variable(np.int64(0))
    batch = q.dequeue_many(4)
    train = tf.assign_add(total, tf.reduce_sum(batch))
    seen = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        assert len(threads) == 5  # 3 enqueue threads + one cancel thread per runner
        assert all(t.daemon for t in threads)
        for _ in range(25):
            values, _ = sess.run([batch, train])
            seen.extend(values.tolist())
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
        assert sess.run(total) == sum(seen)
        counted = sorted(v for v in seen if v < 1000)
        assert counted == list(range(1, len(counted) + 1))  # in order, none lost
        assert sess.run(q.is_closed())
    assert not any(t.is_alive() for t in threads)
    assert _runner_threads() == []


def test_runner_closes_queue_when_input_is_exhausted():
    values = list(range(1, 31))
    src, setup = _source_queue(values)
    q = tf.FIFOQueue(4, tf.int64, shapes=[[]])
    qr = tf.train.QueueRunner(q, [q.enqueue(src.dequeue())] * 3)
    tf.train.add_queue_runner(qr)
    batch = q.dequeue_up_to(7)
    total = 0
    with tf.Session() as sess:
        for op in setup:
            sess.run(op)
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        steps = 0
        with coord.stop_on_exception():
            while not coord.should_stop():
                total += int(sess.run(batch).sum())
                steps += 1
        coord.join(threads)
        assert total == sum(values) and steps >= 5
        assert qr.exceptions_raised == []
    assert _runner_threads() == []


def test_stop_wakes_a_blocked_consumer_and_producer():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    gate = tf.FIFOQueue(1, tf.float32, shapes=[[]])  # stays empty: the producer blocks
    cancel = tf.group(q.close(cancel_pending_enqueues=True), gate.close())
    qr = tf.train.QueueRunner(q, [q.enqueue(gate.dequeue())], cancel_op=cancel)
    assert qr.cancel_op is cancel
    tf.train.add_queue_runner(qr)
    deq = q.dequeue()
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        holder = {}

        def consume():
            with coord.stop_on_exception():
                holder["value"] = sess.run(deq)

        consumer = threading.Thread(target=consume)
        consumer.start()
        time.sleep(0.1)
        assert consumer.is_alive() and all(t.is_alive() for t in threads)
        coord.request_stop()
        coord.join([*threads, consumer], stop_grace_period_secs=5)
        assert "value" not in holder  # the consumer saw OutOfRangeError: a clean stop
        assert sess.run(q.is_closed()) and sess.run(gate.is_closed())
    assert _runner_threads() == []


def test_enqueue_error_is_reported_through_the_coordinator():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    p = tf.placeholder(tf.float32, [])  # never fed: the enqueue op fails
    qr = tf.train.QueueRunner(q, [q.enqueue(p)])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, start=True)
        with pytest.raises(errors.InvalidArgumentError):
            coord.join(threads, stop_grace_period_secs=5)
        assert sess.run(q.is_closed())  # the cancel thread closed it


def test_without_coordinator_errors_are_collected():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    p = tf.placeholder(tf.float32, [])
    qr = tf.train.QueueRunner(q, [q.enqueue(p)])
    with tf.Session() as sess:
        threads = qr.create_threads(sess)
        assert len(threads) == 1 and not threads[0].is_alive()
        old_hook = threading.excepthook  # the thread re-raises; keep the log quiet
        threading.excepthook = lambda args: None
        try:
            threads[0].start()
            threads[0].join(5)
        finally:
            threading.excepthook = old_hook
        assert len(qr.exceptions_raised) == 1
        assert isinstance(qr.exceptions_raised[0], errors.InvalidArgumentError)


def test_create_threads_options_and_no_duplicates():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    qr = tf.train.QueueRunner(q, [q.enqueue(1.0)] * 2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = qr.create_threads(sess, coord=coord, daemon=True, start=False)
        assert len(threads) == 3 and not any(t.is_alive() for t in threads)
        assert all(t.daemon for t in threads)
        for t in threads:
            t.start()
        assert qr.create_threads(sess, coord=coord) == []  # already running in sess
        time.sleep(0.05)
        assert sess.run(q.size()) == 2
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert _runner_threads() == []


def test_properties_and_argument_errors():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]], name="props")
    enq = q.enqueue(1.0)
    qr = tf.train.QueueRunner(q, [enq])
    assert qr.queue is q and qr.enqueue_ops == [enq] and qr.name == "props"
    assert qr.close_op.type == "QueueCloseV2" and qr.cancel_op.type == "QueueCloseV2"
    assert qr.cancel_op.get_attr("cancel_pending_enqueues") is True
    assert qr.queue_closed_exception_types == (errors.OutOfRangeError,)
    with pytest.raises(ValueError, match="enqueue_ops"):
        tf.train.QueueRunner(q, [])
    with pytest.raises(TypeError, match="queue_closed_exception_types"):
        tf.train.QueueRunner(q, [enq], queue_closed_exception_types=(ValueError,))


def test_start_queue_runners_uses_default_session_and_collection():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(2.0)]), collection="mine")
    with pytest.raises(ValueError, match="default session"):
        tf.train.start_queue_runners()
    with tf.Session() as sess:
        assert tf.train.start_queue_runners(sess) == []  # nothing in QUEUE_RUNNERS
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord, collection="mine")
        assert len(threads) == 2
        np.testing.assert_array_equal(sess.run(q.dequeue_many(3)), [2.0, 2.0, 2.0])
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=5)
    assert _runner_threads() == []

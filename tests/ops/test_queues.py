"""Queues through the public API: construction, shapes, blocking, timeouts, closing."""

import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _run_in_thread(fn):
    """Start `fn` in a thread; return (thread, result dict with 'value' or 'error')."""
    out = {}

    def target():
        try:
            out["value"] = fn()
        except BaseException as e:
            out["error"] = e

    t = threading.Thread(target=target, daemon=True)
    t.start()
    return t, out


def _opts(ms):
    return tf.RunOptions(timeout_in_ms=ms)


# -- construction and static shapes --------------------------------------------------------
def test_fifo_properties_and_default_names():
    q = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [3]])
    assert q.name == "fifo_queue"
    assert q.dtypes == [tf.int32, tf.float32]
    assert [s.as_list() for s in q.shapes] == [[], [3]]
    assert q.names is None
    assert q.queue_ref.op.type == "FIFOQueueV2"
    assert q.enqueue([1, [1.0, 2.0, 3.0]]).name == "fifo_queue_enqueue"
    a, b = q.dequeue()
    assert a.op.name == "fifo_queue_Dequeue"
    assert (a.dtype, b.dtype) == (tf.int32, tf.float32)
    assert q.size().dtype == tf.int32 and q.is_closed().dtype == tf.bool
    q2 = tf.FIFOQueue(5, tf.float32, name="inputs")
    assert q2.name == "inputs" and q2.dequeue().shape.ndims is None


def test_single_shape_given_as_dimension_list():
    q = tf.FIFOQueue(2, tf.float32, shapes=[2, 3])
    assert [s.as_list() for s in q.shapes] == [[2, 3]]
    q = tf.FIFOQueue(2, tf.float32, shapes=tf.TensorShape([4]))
    assert q.dequeue().shape.as_list() == [4]


def test_dequeue_shape_inference():
    q = tf.FIFOQueue(10, [tf.float32, tf.int64], shapes=[[2, 3], []])
    x, y = q.dequeue_many(4)
    assert x.shape.as_list() == [4, 2, 3] and y.shape.as_list() == [4]
    n = tf.placeholder(tf.int32, [])
    x, _ = q.dequeue_many(n)
    assert x.shape.as_list() == [None, 2, 3]
    x, _ = q.dequeue_up_to(4)
    assert x.shape.as_list() == [None, 2, 3]
    p = tf.PaddingFIFOQueue(10, tf.float32, shapes=[[None, 5]])
    assert p.dequeue().shape.as_list() == [None, 5]
    assert p.dequeue_many(7).shape.as_list() == [7, None, 5]
    u = tf.FIFOQueue(10, tf.float32)
    assert u.dequeue_many(3).shape.ndims is None


def test_constructor_errors():
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, tf.float32, shapes=[[None, 2]])
    with pytest.raises(ValueError, match="same length as dtypes"):
        tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2]])
    with pytest.raises(ValueError, match="same length as dtypes"):
        tf.FIFOQueue(3, [tf.float32], names=["a", "b"])
    with pytest.raises(ValueError, match="list of shapes"):
        tf.PaddingFIFOQueue(3, tf.float32, shapes=[None, 2])
    with pytest.raises(ValueError, match="defined rank"):
        tf.PaddingFIFOQueue(3, tf.float32, shapes=[tf.TensorShape(None)])
    with pytest.raises(TypeError):
        tf.PaddingFIFOQueue(3, tf.float32)  # shapes are required
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    with pytest.raises(ValueError, match="n must be >= 0"):
        q.dequeue_many(-1)


def test_enqueue_graph_errors_name_queue_and_both_sides():
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []], name="pairs")
    bad_dtype = tf.placeholder(tf.int32, [2])
    with pytest.raises(ValueError) as e:
        q.enqueue([bad_dtype, 1])
    msg = str(e.value)
    assert "pairs" in msg and "float32" in msg and "int32" in msg and "Placeholder" in msg
    bad_shape = tf.placeholder(tf.float32, [3])
    with pytest.raises(ValueError) as e:
        q.enqueue([bad_shape, 1])
    msg = str(e.value)
    assert "pairs" in msg and "(2,)" in msg and "(3,)" in msg
    with pytest.raises(ValueError, match="2 components"):
        q.enqueue([1.0])
    with pytest.raises(ValueError, match="batch dimension"):
        q.enqueue_many([tf.placeholder(tf.float32, []), [1]])
    with pytest.raises(ValueError, match="batch sizes differ"):
        q.enqueue_many([tf.placeholder(tf.float32, [4, 2]), tf.placeholder(tf.int32, [5])])
    with pytest.raises(TypeError, match="pairs"):
        q.enqueue([["a", "b"], 1])


def test_names_make_components_dicts():
    q = tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=[[], [2]], names=["label", "x"])
    assert q.names == ["label", "x"]
    with pytest.raises(ValueError, match="dictionary"):
        q.enqueue([1, [1.0, 2.0]])
    with pytest.raises(ValueError, match="do not match"):
        q.enqueue({"label": 1, "y": [1.0, 2.0]})
    plain = tf.FIFOQueue(4, tf.int32)
    with pytest.raises(ValueError, match="no names"):
        plain.enqueue({"a": 1})
    enq = q.enqueue({"x": [1.0, 2.0], "label": 7})
    enq_many = q.enqueue_many({"x": [[3.0, 4.0], [5.0, 6.0]], "label": [8, 9]})
    one = q.dequeue()
    batch = q.dequeue_many(2)
    assert set(one) == {"label", "x"} and batch["x"].shape.as_list() == [2, 2]
    with tf.Session() as sess:
        sess.run([enq])
        sess.run(enq_many)
        got = sess.run(one)
        assert got["label"] == 7 and got["label"].dtype == np.int32
        np.testing.assert_array_equal(got["x"], np.array([1.0, 2.0], np.float32))
        got = sess.run(batch)
        np.testing.assert_array_equal(got["label"], [8, 9])
        assert got["x"].dtype == np.float32


# -- values ------------------------------------------------------------------------------
def test_fifo_order_size_and_dtypes(sess):
    q = tf.FIFOQueue(10, [tf.int32, tf.float64], shapes=[[], [2]])
    sess.run(q.enqueue((1, [1.0, 2.0])))
    sess.run(q.enqueue_many(([2, 3, 4], [[3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])))
    assert sess.run(q.size()) == 4
    a, b = sess.run(q.dequeue())
    assert a == 1 and a.dtype == np.int32
    np.testing.assert_array_equal(b, [1.0, 2.0])
    a, b = sess.run(q.dequeue_many(3))
    np.testing.assert_array_equal(a, [2, 3, 4])
    assert b.shape == (3, 2) and b.dtype == np.float64
    np.testing.assert_array_equal(b[2], [7.0, 8.0])
    assert sess.run(q.size()) == 0


def test_enqueued_feed_is_copied(sess):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[3]])
    p = tf.placeholder(tf.float32, [3])
    value = np.array([1.0, 2.0, 3.0], np.float32)
    sess.run(q.enqueue(p), {p: value})
    value[:] = 0.0
    np.testing.assert_array_equal(sess.run(q.dequeue()), [1.0, 2.0, 3.0])


def test_runtime_shape_mismatch_is_invalid_argument(sess):
    q = tf.FIFOQueue(4, tf.float32, shapes=[[3]], name="vecs")
    p = tf.placeholder(tf.float32)
    with pytest.raises(errors.InvalidArgumentError, match=r"vecs.*Expected \[3\], got \[2\]"):
        sess.run(q.enqueue(p), {p: [1.0, 2.0]})
    assert sess.run(q.size()) == 0


def test_dequeue_many_requires_shapes_and_zero_is_empty(sess):
    u = tf.FIFOQueue(4, tf.float32)
    sess.run(u.enqueue(1.0))
    with pytest.raises(errors.InvalidArgumentError, match="specified shapes"):
        sess.run(u.dequeue_many(1))
    q = tf.FIFOQueue(4, [tf.float32, tf.int32], shapes=[[2, 3], []])
    a, b = sess.run(q.dequeue_many(0))
    assert a.shape == (0, 2, 3) and a.dtype == np.float32 and b.shape == (0,)


def test_dequeue_many_larger_than_capacity(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    p = tf.placeholder(tf.int32, [])
    enq = q.enqueue(p)
    deq = q.dequeue_many(5)
    t, out = _run_in_thread(lambda: sess.run(deq))
    for i in range(5):
        sess.run(enq, {p: i})
    t.join(5)
    np.testing.assert_array_equal(out["value"], np.arange(5))


def test_random_shuffle_queue_is_a_permutation(sess):
    q = tf.RandomShuffleQueue(20, 0, tf.int32, shapes=[[]], seed=3)
    sess.run(q.enqueue_many([np.arange(10)]))
    got = sess.run(q.dequeue_many(10))
    assert sorted(got.tolist()) == list(range(10))
    assert got.tolist() != list(range(10))


def test_random_shuffle_queue_seeded_order_repeats():
    tf.set_random_seed(5)
    q = tf.RandomShuffleQueue(20, 0, tf.int32, shapes=[[]])
    enq = q.enqueue_many([np.arange(12)])
    deq = q.dequeue_many(12)
    orders = []
    for _ in range(2):
        with tf.Session() as s:  # each private session has its own queue
            s.run(enq)
            orders.append(s.run(deq).tolist())
    assert orders[0] == orders[1]


def test_random_shuffle_min_after_dequeue(sess):
    q = tf.RandomShuffleQueue(10, 2, tf.int32, shapes=[[]], seed=1)
    sess.run(q.enqueue_many([[1, 2, 3]]))
    first = sess.run(q.dequeue())
    with pytest.raises(errors.DeadlineExceededError):
        sess.run(q.dequeue(), options=_opts(100))
    assert sess.run(q.size()) == 2
    sess.run(q.close())
    rest = sess.run(q.dequeue_up_to(5))
    assert sorted([first, *rest.tolist()]) == [1, 2, 3]


def test_padding_fifo_queue_pads_batches(sess):
    q = tf.PaddingFIFOQueue(5, [tf.int32, tf.string], shapes=[[None, 2], [None]])
    sess.run(q.enqueue(([[1, 2]], ["a"])))
    sess.run(q.enqueue(([[3, 4], [5, 6], [7, 8]], ["b", "c"])))
    sess.run(q.enqueue(([[9, 9], [9, 9]], [])))
    x, s = sess.run(q.dequeue())
    np.testing.assert_array_equal(x, [[1, 2]])
    assert s.tolist() == [b"a"]
    x, s = sess.run(q.dequeue_many(2))
    assert x.shape == (2, 3, 2) and x.dtype == np.int32
    np.testing.assert_array_equal(x[1], [[9, 9], [9, 9], [0, 0]])
    assert s.tolist() == [[b"b", b"c"], [b"", b""]]
    with pytest.raises(ValueError, match="expects shape"):
        q.enqueue(([[1, 2, 3]], ["x"]))
    p = tf.placeholder(tf.int32)
    with pytest.raises(errors.InvalidArgumentError, match="Shape mismatch"):
        sess.run(q.enqueue((p, ["x"])), {p: [[1, 2, 3]]})


def test_priority_queue_orders_by_priority(sess):
    q = tf.PriorityQueue(10, [tf.string, tf.float32], shapes=[[], [2]])
    assert q.dtypes[0] == tf.int64
    assert [s.as_list() for s in q.shapes] == [[], [], [2]]
    sess.run(q.enqueue_many(([5, -1, 3], ["five", "minus", "three"],
                             [[5.0, 5.0], [-1.0, -1.0], [3.0, 3.0]])))
    sess.run(q.enqueue((2, "two", [2.0, 2.0])))
    pri, name, vec = sess.run(q.dequeue_many(3))
    np.testing.assert_array_equal(pri, [-1, 2, 3])
    assert name.tolist() == [b"minus", b"two", b"three"]
    np.testing.assert_array_equal(vec[1], [2.0, 2.0])
    pri, name, _ = sess.run(q.dequeue())
    assert (pri, name) == (5, b"five") and pri.dtype == np.int64
    with pytest.raises(ValueError, match="int64"):
        q.enqueue((tf.constant(1.0), "x", [0.0, 0.0]))


def test_priority_queue_with_names(sess):
    q = tf.PriorityQueue(4, [tf.int32], shapes=[[]], names=["priority", "value"])
    sess.run(q.enqueue({"priority": 9, "value": 90}))
    sess.run(q.enqueue({"priority": 1, "value": 10}))
    got = sess.run(q.dequeue())
    assert (got["priority"], got["value"]) == (1, 10)


# -- blocking, timeouts ------------------------------------------------------------------------
def test_dequeue_blocks_until_an_element_arrives(sess):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    deq = q.dequeue()
    t, out = _run_in_thread(lambda: sess.run(deq))
    time.sleep(0.1)
    assert t.is_alive()
    sess.run(q.enqueue(4.5))
    t.join(5)
    assert out["value"] == 4.5


def test_enqueue_blocks_while_full(sess):
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    sess.run(q.enqueue_many([[1, 2]]))
    enq = q.enqueue(3)
    t, out = _run_in_thread(lambda: sess.run(enq))
    time.sleep(0.1)
    assert t.is_alive() and sess.run(q.size()) == 2
    assert sess.run(q.dequeue()) == 1
    t.join(5)
    assert "error" not in out
    np.testing.assert_array_equal(sess.run(q.dequeue_many(2)), [2, 3])


def test_blocked_dequeue_does_not_stop_other_threads_runs(sess):
    q = tf.FIFOQueue(3, tf.float32, shapes=[[]])
    deq = q.dequeue()
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.matmul(x, tf.constant(np.ones((3, 4), np.float32))) + 1.0
    t, out = _run_in_thread(lambda: sess.run(deq))
    time.sleep(0.05)
    for _ in range(20):  # the session keeps serving other threads
        np.testing.assert_array_equal(sess.run(y, {x: np.ones((2, 3))}), np.full((2, 4), 4.0))
    assert t.is_alive()
    other = threading.Thread(target=lambda: sess.run(q.size()), daemon=True)
    other.start()
    other.join(5)
    assert not other.is_alive()
    sess.run(q.enqueue(2.0))
    t.join(5)
    assert out["value"] == 2.0


def test_dequeue_timeout_loses_no_element(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    deq = q.dequeue()
    with pytest.raises(errors.DeadlineExceededError):
        sess.run(deq, options=_opts(50))
    sess.run(q.enqueue(11))
    assert sess.run(q.size()) == 1
    assert sess.run(deq) == 11


def test_dequeue_many_timeout_gives_elements_back_in_order(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    sess.run(q.enqueue_many([[1, 2]]))
    with pytest.raises(errors.DeadlineExceededError):
        sess.run(q.dequeue_many(3), options=_opts(50))
    assert sess.run(q.size()) == 2
    sess.run(q.enqueue(3))
    np.testing.assert_array_equal(sess.run(q.dequeue_many(3)), [1, 2, 3])


def test_waiters_of_a_failed_step_take_and_add_nothing(sess):
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    vectors = tf.FIFOQueue(3, tf.float32, shapes=[[2]])
    p = tf.placeholder(tf.float32)
    failing = vectors.enqueue(p)  # fails at run time: a scalar is not a [2] vector
    with pytest.raises(errors.InvalidArgumentError):
        sess.run([q.dequeue(), failing], {p: 1.0})
    sess.run(q.enqueue(5.0))
    assert sess.run(q.size()) == 1  # the failed step's dequeue took nothing
    with pytest.raises(errors.InvalidArgumentError):
        sess.run([q.enqueue(6.0), failing], {p: 1.0})  # blocks (full), then its step fails
    assert sess.run(q.dequeue()) == 5.0
    assert sess.run(q.size()) == 0  # ... so its element never went in


def test_enqueue_timeout_when_full(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess.run(q.enqueue(1))
    with pytest.raises(errors.DeadlineExceededError):
        sess.run(q.enqueue(2), options=_opts(50))
    sess.run(q.dequeue())
    assert sess.run(q.size()) == 0


def test_operation_timeout_from_config():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    deq = q.dequeue()
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=60)) as s:
        with pytest.raises(errors.DeadlineExceededError):
            s.run(deq)


# -- closing -------------------------------------------------------------------------------------
def test_closed_queue_semantics(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]], name="closing")
    sess.run(q.enqueue_many([[1, 2, 3]]))
    assert not sess.run(q.is_closed())
    sess.run(q.close())
    assert sess.run(q.is_closed())
    with pytest.raises(errors.CancelledError, match="closing' is closed"):
        sess.run(q.enqueue(4))
    with pytest.raises(errors.OutOfRangeError, match="insufficient elements"):
        sess.run(q.dequeue_many(4))
    assert sess.run(q.size()) == 3  # the failed dequeue_many took nothing
    assert sess.run(q.dequeue()) == 1
    np.testing.assert_array_equal(sess.run(q.dequeue_up_to(5)), [2, 3])
    with pytest.raises(errors.OutOfRangeError):
        sess.run(q.dequeue_up_to(5))
    with pytest.raises(errors.OutOfRangeError, match="closed"):
        sess.run(q.dequeue())


def test_close_wakes_blocked_dequeues(sess):
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    sess.run(q.enqueue(1))
    many = q.dequeue_many(3)
    up_to = q.dequeue_up_to(3)
    t1, out1 = _run_in_thread(lambda: sess.run(many))
    time.sleep(0.05)
    t2, out2 = _run_in_thread(lambda: sess.run(up_to))
    time.sleep(0.05)
    assert t1.is_alive() and t2.is_alive()
    sess.run(q.close())
    t1.join(5)
    t2.join(5)
    assert isinstance(out1["error"], errors.OutOfRangeError)
    np.testing.assert_array_equal(out2["value"], [1])  # handed back by the failed one


def test_close_cancel_pending_enqueues(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess.run(q.enqueue(1))
    enq = q.enqueue(2)
    t, out = _run_in_thread(lambda: sess.run(enq))
    time.sleep(0.05)
    sess.run(q.close(cancel_pending_enqueues=True))
    t.join(5)
    assert isinstance(out["error"], errors.CancelledError)
    assert sess.run(q.dequeue()) == 1


def test_close_keeps_pending_enqueues_without_cancel(sess):
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    sess.run(q.enqueue(1))
    enq = q.enqueue(2)
    t, out = _run_in_thread(lambda: sess.run(enq))
    time.sleep(0.05)
    sess.run(q.close())
    assert t.is_alive()
    np.testing.assert_array_equal(sess.run(q.dequeue_up_to(2)), [1])
    t.join(5)
    assert "error" not in out
    assert sess.run(q.dequeue()) == 2


# -- sharing --------------------------------------------------------------------------------------
def test_sessions_on_one_target_share_queues():
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared_q")
    enq, deq = q.enqueue(42), q.dequeue()
    try:
        with tf.Session("local://queues_test") as a, tf.Session("local://queues_test") as b:
            a.run(enq)
            assert b.run(deq) == 42
        with tf.Session() as private:
            with pytest.raises(errors.DeadlineExceededError):
                private.run(deq, options=_opts(30))
    finally:
        tf.Session.reset("local://queues_test")


def test_shared_name_with_other_dtypes_is_an_error():
    g = tf.get_default_graph()
    q1 = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="clash")
    q2 = tf.FIFOQueue(5, tf.float32, shapes=[[]], shared_name="clash")
    with tf.Session(graph=g) as s:
        s.run(q1.size())
        with pytest.raises(errors.InvalidArgumentError, match="clash"):
            s.run(q2.size())


def test_many_producers_and_consumers_lose_nothing(sess):
    q = tf.FIFOQueue(4, tf.int32, shapes=[[]])
    p = tf.placeholder(tf.int32, [])
    enq = q.enqueue(p)
    deq = q.dequeue_many(2)
    got, lock = [], threading.Lock()

    def produce(base):
        for i in range(20):
            sess.run(enq, {p: base + i})

    def consume():
        for _ in range(20):
            v = sess.run(deq)
            with lock:
                got.extend(v.tolist())

    threads = [threading.Thread(target=produce, args=(100 * k,)) for k in range(4)]
    threads += [threading.Thread(target=consume) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert sorted(got) == sorted(100 * k + i for k in range(4) for i in range(20))

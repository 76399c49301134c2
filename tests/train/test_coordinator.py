"""tf.train.Coordinator and LooperThread."""

import sys
import threading
import time

import pytest

import flowgraph as tf
from flowgraph.framework import errors


def _stopper(coord, delay):
    time.sleep(delay)
    coord.request_stop()


def _wait_loop(coord, done):
    while not coord.should_stop():
        time.sleep(0.001)
    done.set()


def test_request_stop_and_join():
    coord = tf.train.Coordinator()
    assert not coord.should_stop() and not coord.joined
    events = [threading.Event() for _ in range(3)]
    threads = [threading.Thread(target=_wait_loop, args=(coord, ev)) for ev in events]
    threads.append(threading.Thread(target=_stopper, args=(coord, 0.02)))
    for t in threads:
        t.start()
    coord.join(threads)
    assert coord.should_stop() and coord.joined
    assert all(ev.is_set() for ev in events)
    assert not any(t.is_alive() for t in threads)


def test_join_returns_when_threads_end_without_stop():
    coord = tf.train.Coordinator()
    t = threading.Thread(target=lambda: None)
    t.start()
    coord.join([t])
    assert not coord.should_stop()


def test_registered_threads_are_joined():
    coord = tf.train.Coordinator()
    ev = threading.Event()
    t = threading.Thread(target=_wait_loop, args=(coord, ev))
    coord.register_thread(t)
    t.start()
    coord.request_stop()
    coord.join()
    assert ev.is_set() and not t.is_alive()


def test_exception_is_reraised_by_join():
    coord = tf.train.Coordinator()

    def fail():
        with coord.stop_on_exception():
            raise RuntimeError("input broke")

    def wait():
        coord.wait_for_stop()

    threads = [threading.Thread(target=fail), threading.Thread(target=wait)]
    for t in threads:
        t.start()
    with pytest.raises(RuntimeError, match="input broke"):
        coord.join(threads)
    assert coord.should_stop()


def test_only_first_exception_is_kept():
    coord = tf.train.Coordinator()
    coord.request_stop(ValueError("first"))
    coord.request_stop(TypeError("second"))
    with pytest.raises(ValueError, match="first"):
        coord.raise_requested_exception()
    with pytest.raises(ValueError, match="first"):
        coord.join([])


def test_exc_info_tuple_is_accepted():
    coord = tf.train.Coordinator()
    try:
        raise KeyError("k")
    except KeyError:
        coord.request_stop(sys.exc_info())
    with pytest.raises(KeyError):
        coord.join()


def test_out_of_range_is_a_clean_stop():
    coord = tf.train.Coordinator()
    with coord.stop_on_exception():
        raise errors.OutOfRangeError(None, None, "queue is empty")
    assert coord.should_stop()
    coord.join([])  # does not raise
    custom = tf.train.Coordinator(clean_stop_exception_types=(ValueError,))
    custom.request_stop(ValueError("fine"))
    custom.raise_requested_exception()
    custom.join()


def test_request_stop_after_join_raises_immediately():
    coord = tf.train.Coordinator()
    coord.request_stop()
    coord.join()
    with pytest.raises(RuntimeError, match="late"):
        coord.request_stop(RuntimeError("late"))
    coord.request_stop()  # no exception: nothing to raise


def test_clear_stop_resets():
    coord = tf.train.Coordinator()
    coord.request_stop(ValueError("x"))
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined
    coord.raise_requested_exception()  # nothing recorded any more
    assert not coord.wait_for_stop(0.01)


def test_wait_for_stop():
    coord = tf.train.Coordinator()
    assert coord.wait_for_stop(0.01) is False
    t = threading.Thread(target=_stopper, args=(coord, 0.02))
    t.start()
    assert coord.wait_for_stop(5) is True
    t.join()


def test_join_reports_stragglers():
    coord = tf.train.Coordinator()
    release = threading.Event()
    t = threading.Thread(target=release.wait, name="stuck-thread", daemon=True)
    t.start()
    coord.request_stop()
    with pytest.raises(RuntimeError, match="stuck-thread"):
        coord.join([t], stop_grace_period_secs=0.05)
    coord.clear_stop()
    coord.request_stop()
    coord.join([t], stop_grace_period_secs=0.01, ignore_live_threads=True)
    release.set()
    t.join()


def test_looper_thread_runs_until_stop():
    coord = tf.train.Coordinator()
    calls = []
    looper = coord.loop(0.005, calls.append, args=(1,))
    time.sleep(0.05)
    coord.request_stop()
    coord.join([looper])
    assert len(calls) >= 2 and not looper.is_alive()


def test_looper_thread_reports_errors():
    coord = tf.train.Coordinator()

    def boom():
        raise ValueError("looper failed")

    looper = tf.train.LooperThread.loop(coord, None, boom)
    with pytest.raises(ValueError, match="looper failed"):
        coord.join([looper])

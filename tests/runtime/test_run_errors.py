"""Run-time errors: failing kernels, uninitialized variables, closed sessions, timeouts."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops.op_util import make_tensor


def test_failing_kernel_names_op_and_inputs(sess, testops):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    bad = make_tensor("TestFail", [tf.sin(x)], name="checker")  # this line is reported
    after = testops.stateful(bad, name="after")
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        sess.run(after, {x: -np.ones((2, 3))})
    msg = str(info.value)
    assert "TestFail got a negative value" in msg
    assert "checker (TestFail)" in msg and "device:CPU:0" in msg
    assert "(2, 3) float32" in msg
    assert "The op was created at test_run_errors.py:" in msg
    assert 'make_tensor("TestFail", [tf.sin(x)], name="checker")' in msg
    assert info.value.op is bad.op
    # The step was cancelled at the failure: nothing downstream ran.
    assert testops.counts["after"] == 0
    # ... and the session is still usable.
    np.testing.assert_array_equal(sess.run(after, {x: np.ones((2, 3))}),
                                  np.sin(np.ones((2, 3), np.float32)) + 1)


def test_uninitialized_variable(sess):
    v = tf.Variable([1.0, 2.0], name="weights")
    y = v * 2.0
    with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value weights"):
        sess.run(y)
    with pytest.raises(tf.errors.FailedPreconditionError, match="weights"):
        sess.run(v)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])


def test_closed_session_raises_runtime_error():
    c = tf.constant(1.0)
    s = tf.Session()
    assert s.run(c) == 1.0
    s.close()
    s.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed Session"):
        s.run(c)
    with pytest.raises(RuntimeError, match="closed Session"):
        s.partial_run_setup([c])


def test_timeout_on_blocking_kernel(sess, testops):
    x = tf.placeholder(tf.float32, [2])
    y = testops.block(x)
    t0 = time.perf_counter()
    with pytest.raises(tf.errors.DeadlineExceededError, match="Timed out after 100 ms"):
        sess.run(y, {x: [1.0, 2.0]}, options=tf.RunOptions(timeout_in_ms=100))
    assert time.perf_counter() - t0 < 5.0
    # Next step works once the kernel is released.
    testops.release.set()
    np.testing.assert_array_equal(sess.run(y, {x: [1.0, 2.0]}), [1.0, 2.0])


def test_timeout_on_async_kernel_that_never_completes(sess, testops):
    x = tf.placeholder(tf.float32, [2])
    y = testops.async_never(x)
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(y, {x: [1.0, 2.0]}, options=tf.RunOptions(timeout_in_ms=50))
    # Unrelated steps still work.
    assert sess.run(x, {x: [3.0, 4.0]}).tolist() == [3.0, 4.0]


def test_operation_timeout_in_config(testops):
    x = tf.placeholder(tf.float32, [2])
    y = testops.block(x)
    z = x * 2.0
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=80)) as s:
        for _ in range(200):  # deadlines that do not fire are cheap and cleaned up
            s.run(z, {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(y, {x: [1.0, 2.0]})


def test_timeout_does_not_fire_for_fast_steps(sess):
    x = tf.placeholder(tf.float32, [2])
    opts = tf.RunOptions(timeout_in_ms=30)
    for _ in range(20):
        sess.run(x * 2.0, {x: [1.0, 2.0]}, options=opts)
    time.sleep(0.06)  # a stale deadline must not cancel anything later
    assert sess.run(x * 2.0, {x: [1.0, 2.0]}, options=opts).tolist() == [2.0, 4.0]


def test_error_in_one_thread_does_not_leak_into_another(sess, testops):
    x = tf.placeholder(tf.float32, [2])
    bad = testops.fail(x)
    results = []

    def worker():
        for _ in range(50):
            results.append(sess.run(x * 3.0, {x: [1.0, 1.0]}).tolist())

    t = threading.Thread(target=worker)
    t.start()
    for _ in range(50):
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(bad, {x: [-1.0, 0.0]})
    t.join(10)
    assert not t.is_alive() and results == [[3.0, 3.0]] * 50

"""A session waits for the cluster's tasks that are not up yet, as TensorFlow's session
creation does (TF 2.15, checked with the oracle: a chief whose ps started 2 s after its
first ``run`` ran after 2 s), but only until the operation deadline, with a clear error
then; `MonitoredSession`, which retries for ``max_wait_secs`` itself, does not wait inside
(`flowgraph.distributed.remote_session.no_start_wait`)."""

import threading
import time

import pytest
from conftest import free_port

import flowgraph as tf
from flowgraph.distributed import replica_device_setter
from flowgraph.distributed.remote_session import no_start_wait
from flowgraph.framework import errors


def _model(cluster):
    with tf.device(replica_device_setter(cluster=cluster)):
        v = tf.Variable(3.0, name="v")
        return v, v.assign_add(1.0)


def test_a_ps_that_starts_after_the_first_run_is_waited_for(servers):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    worker = servers(cluster, "worker", 0)
    timer = threading.Timer(0.6, lambda: servers(cluster, "ps", 0))
    timer.start()
    try:
        with tf.Graph().as_default():
            v, inc = _model(cluster)
            start = time.monotonic()
            with tf.Session(worker.target) as sess:
                sess.run(v.initializer)
                assert sess.run(inc) == 4.0
            assert time.monotonic() - start >= 0.5
    finally:
        timer.join()


def test_a_session_target_that_starts_late_is_waited_for(servers):
    cluster = {"worker": [f"localhost:{free_port()}"]}
    timer = threading.Timer(0.5, lambda: servers(cluster, "worker", 0))
    timer.start()
    try:
        with tf.Graph().as_default():
            total = tf.constant(2.0) + 3.0
            with tf.Session(f"grpc://{cluster['worker'][0]}") as sess:
                assert sess.run(total) == 5.0
    finally:
        timer.join()


def test_a_task_that_never_starts_fails_at_the_operation_deadline(servers):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    worker = servers(cluster, "worker", 0)  # nothing ever listens on the ps's port
    config = tf.ConfigProto(operation_timeout_in_ms=700)
    with tf.Graph().as_default():
        v, _ = _model(cluster)
        start = time.monotonic()
        with tf.Session(worker.target, config=config) as sess:
            with pytest.raises(errors.UnavailableError,
                               match=r"Task /job:ps/replica:0/task:0 .*waited \d\.\d s for "
                                     r"it to start"):
                sess.run(v.initializer)
        assert 0.6 <= time.monotonic() - start < 5


def test_no_start_wait_fails_at_once(servers):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    worker = servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        v, _ = _model(cluster)
        with tf.Session(worker.target) as sess, no_start_wait():
            start = time.monotonic()
            with pytest.raises(errors.UnavailableError, match="/job:ps/replica:0/task:0"):
                sess.run(v.initializer)
            assert time.monotonic() - start < 2


def test_a_task_that_went_down_after_it_was_reached_fails_at_once(servers):
    cluster = {"ps": [f"localhost:{free_port()}"], "worker": [f"localhost:{free_port()}"]}
    ps, worker = servers(cluster, "ps", 0), servers(cluster, "worker", 0)
    with tf.Graph().as_default():
        v, inc = _model(cluster)
        with tf.Session(worker.target) as sess:
            sess.run(v.initializer)
            ps.stop()
            start = time.monotonic()
            with pytest.raises(errors.UnavailableError):
                sess.run(inc)
            assert time.monotonic() - start < 10

"""Session lifecycle, default sessions, shared targets and device listing."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends import list_local_devices


def test_context_manager_sets_default_session_and_graph():
    g = tf.Graph()
    with g.as_default():
        c = tf.constant(3.0)
    with tf.Session(graph=g) as s:
        assert tf.get_default_session() is s
        assert tf.get_default_graph() is g
        assert c.eval() == 3.0
    assert tf.get_default_session() is None
    with pytest.raises(RuntimeError):
        s.run(c)


def test_as_default_does_not_close(sess):
    c = tf.constant(2.0)
    with sess.as_default():
        assert c.eval() == 2.0
    assert sess.run(c) == 2.0


def test_interactive_session_installs_itself():
    v = tf.Variable([1.0, 2.0], name="iv")
    s = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is s
        v.initializer.run()
        np.testing.assert_array_equal((v * 2.0).eval(), [2.0, 4.0])
        tf.assign_add(v, [1.0, 1.0]).op.run()
        np.testing.assert_array_equal(v.eval(), [2.0, 3.0])
    finally:
        s.close()
    assert tf.get_default_session() is None


def test_eval_without_default_session_raises():
    c = tf.constant(1.0)
    with pytest.raises(ValueError):
        c.eval()


def test_session_properties(sess):
    assert sess.graph is tf.get_default_graph()
    assert sess.sess_str == b""  # TF: bytes
    with pytest.raises(TypeError):
        tf.Session(graph="nope")
    with pytest.raises(TypeError):
        tf.Session(config={"device_count": {"CPU": 2}})
    with pytest.raises(tf.errors.NotFoundError, match="not supported"):  # TF's type
        tf.Session("http://x")


def test_local_targets_share_variables_and_reset_clears():
    v = tf.Variable([1.0, 2.0], name="shared_v")
    inc = tf.assign_add(v, [10.0, 10.0])
    target = "local://test_session_shared"
    with tf.Session(target) as s1:
        s1.run(v.initializer)
        s1.run(inc)
    with tf.Session(target) as s2:  # a later session on the same name sees the value
        np.testing.assert_array_equal(s2.run(v), [11.0, 12.0])
        with tf.Session(target) as s3:  # and concurrent ones share it
            s3.run(inc)
            np.testing.assert_array_equal(s2.run(v), [21.0, 22.0])
    with tf.Session() as private:  # '' is private
        with pytest.raises(tf.errors.FailedPreconditionError):
            private.run(v)
    tf.Session.reset(target)
    with tf.Session(target) as s4:
        with pytest.raises(tf.errors.FailedPreconditionError):
            s4.run(v)


def test_reset_named_containers_only():
    target = "local://test_session_containers"
    a = tf.Variable(1.0, name="a")
    with tf.Session(target) as s:
        s.run(a.initializer)
    tf.Session.reset(target, ["some_other_container"])
    with tf.Session(target) as s:
        assert s.run(a) == 1.0
    tf.Session.reset(target, [""])
    with tf.Session(target) as s:
        with pytest.raises(tf.errors.FailedPreconditionError):
            s.run(a)


def test_reset_default_target_closes_local_sessions(monkeypatch):
    # TensorFlow 2.15: reset("") returns None and closes every in-process session (only
    # this test's ones here).
    import weakref

    from flowgraph.runtime import session as session_module

    monkeypatch.setattr(session_module, "_LOCAL_SESSIONS", weakref.WeakSet())
    v = tf.Variable(1.0, name="r")
    with tf.Session() as s:
        s.run(v.initializer)
        assert tf.Session.reset("") is None
        with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
            s.run(v)


def test_private_sessions_are_isolated():
    v = tf.Variable(5.0, name="p")
    with tf.Session() as s1, tf.Session() as s2:
        s1.run(v.initializer)
        assert s1.run(v) == 5.0
        with pytest.raises(tf.errors.FailedPreconditionError):
            s2.run(v)


def test_list_devices_and_local_devices():
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3, "GPU": 0})) as s:
        devs = s.list_devices()
    assert [d.device_type for d in devs] == ["CPU"] * 3
    assert devs[2].name.endswith("/device:CPU:2")
    local = list_local_devices()
    assert local[0].name == "/job:localhost/replica:0/task:0/device:CPU:0"
    assert local[0].device_type == "CPU" and isinstance(local[0].memory_limit, int)
    assert len(list_local_devices(tf.ConfigProto(device_count={"CPU": 2}))) >= 2


def test_session_without_devices_is_an_error():
    with pytest.raises(tf.errors.InvalidArgumentError, match="No devices"):
        tf.Session(config=tf.ConfigProto(device_count={"CPU": 0, "GPU": 0}))

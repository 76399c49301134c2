"""tf.make_template (issue 15); names and values checked under TF 2.15's tf.compat.v1."""

from __future__ import annotations

import pytest

import flowgraph as tf


def _scale(x, k=1.0):
    w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0))
    return x * w * k


def test_calls_share_variables_and_bind_kwargs():
    t = tf.make_template("scale", _scale, k=3.0)
    assert t.variable_scope is None and t.name == "scale"
    a, b = t(tf.constant(1.0)), t(tf.constant(1.0))
    assert (a.name, b.name) == ("scale/mul_1:0", "scale_1/mul_1:0")
    assert [v.name for v in tf.global_variables()] == ["scale/w:0"]
    assert t.variable_scope.name == "scale" and t.variable_scope_name == "scale/"
    assert [v.name for v in t.trainable_variables] == ["scale/w:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([a, b]) == [6.0, 6.0]


def test_create_scope_now_and_nesting():
    tf.make_template("scale", _scale)(1.0)
    now = tf.make_template("scale", _scale, create_scope_now_=True)
    assert now.variable_scope_name == "scale_1/"
    with tf.variable_scope("outer"):
        c = now(tf.constant(1.0))
        d = tf.make_template("inner", _scale)(1.0)
    assert (c.name, d.name) == ("outer/scale_1/mul_1:0", "outer/inner/mul_1:0")
    assert [v.name for v in tf.global_variables()] == [
        "scale/w:0", "scale_1/w:0", "outer/inner/w:0"]


def test_custom_getter_and_unique_name():
    seen = []

    def getter(getter, name, *args, **kwargs):
        seen.append(name)
        return getter(name, *args, **kwargs)

    t = tf.make_template("ignored", _scale, unique_name_="fixed", custom_getter_=getter)
    t(1.0)
    t(2.0)
    assert seen == ["fixed/w", "fixed/w"]


def test_new_trainable_variable_on_later_call_raises():
    t = tf.make_template("bad", lambda: tf.Variable(1.0))
    t()
    with pytest.raises(ValueError, match=r"tf\.get_variable"):
        t()

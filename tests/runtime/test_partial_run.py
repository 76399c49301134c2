"""partial_run_setup / partial_run: one step fed and fetched over several calls."""

from __future__ import annotations

import pytest

import flowgraph as tf


@pytest.fixture
def abcd(testops):
    """
        a ─> b = stateful(a) ──┐
                               ├─> c = b * d ─> e = stateful(c)
        d ─────────────────────┘
    """
    a = tf.placeholder(tf.float32, [], name="a")
    d = tf.placeholder(tf.float32, [], name="d")
    b = testops.stateful(a, name="b")
    c = tf.multiply(b, d, name="c")
    e = testops.stateful(c, name="e")
    return a, b, c, d, e


def test_feeds_and_fetches_over_calls(sess, testops, abcd):
    a, b, c, d, e = abcd
    h = sess.partial_run_setup([b, c, e], [a, d])
    assert isinstance(h, str)
    assert sess.partial_run(h, b, {a: 1.0}) == 2.0
    assert sess.partial_run(h, [c], {d: 3.0}) == [6.0]
    assert sess.partial_run(h, {"e": e}) == {"e": 7.0}
    # No stateful op ran twice in the partial run.
    assert testops.counts["b"] == 1 and testops.counts["e"] == 1


def test_fetch_several_at_once_and_targets(sess, testops, abcd):
    a, b, _c, d, e = abcd
    h = sess.partial_run_setup([b, e.op], [a, d])
    assert sess.partial_run(h, [b], {a: 2.0}) == [3.0]
    assert sess.partial_run(h, e.op, {d: 1.0}) is None
    assert testops.counts["b"] == 1 and testops.counts["e"] == 1


def test_rules(sess, abcd):
    a, b, c, d, e = abcd
    h = sess.partial_run_setup([b, c], [a, d])
    with pytest.raises(tf.errors.InvalidArgumentError, match="was not specified"):
        sess.partial_run(h, e, {a: 1.0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="can't be computed"):
        sess.partial_run(h, c, {a: 1.0})
    with pytest.raises(tf.errors.InvalidArgumentError, match="already been fed"):
        sess.partial_run(h, b, {a: 1.0})
    h2 = sess.partial_run_setup([b, c], [a, d])
    assert sess.partial_run(h2, b, {a: 1.0}) == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError, match="already been fetched"):
        sess.partial_run(h2, b)
    with pytest.raises(tf.errors.InvalidArgumentError, match="feed d:0 was not specified"):
        h3 = sess.partial_run_setup([c], [a])
        sess.partial_run(h3, c, {d: 1.0})


def test_variables_in_partial_run(sess):
    v = tf.Variable(1.0, name="pv")
    x = tf.placeholder(tf.float32, [])
    y = v * x
    inc = tf.assign_add(v, 1.0)
    sess.run(v.initializer)
    h = sess.partial_run_setup([y, inc], [x])
    assert sess.partial_run(h, inc) == 2.0
    assert sess.partial_run(h, y, {x: 3.0}) == 6.0
    assert sess.run(v) == 2.0


def test_unknown_handle(sess):
    with pytest.raises(tf.errors.InvalidArgumentError, match="unknown"):
        sess.partial_run("partial_run:nope", [])

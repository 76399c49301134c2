"""The per-step shortcuts of the hooked session (train/monitored_session.py): a flat
tuple or list of fetches picked straight from the merged values, and the feeds and
options of hooks read again whenever a request could carry any."""

import numpy as np

import flowgraph as tf
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook


class _SameArgs(SessionRunHook):
    """Returns one `SessionRunArgs` object every step and records the results."""

    def __init__(self, args):
        self.args = args
        self.results = []

    def before_run(self, run_context):
        return self.args

    def after_run(self, run_context, run_values):
        self.results.append(run_values.results)


def test_flat_tuple_and_list_fetches_with_ops_and_repeats():
    step = tf.train.get_or_create_global_step()
    x = tf.cast(step, tf.float32) * 2.0
    bump = tf.assign_add(step, 1).op
    hook = _SameArgs(SessionRunArgs(step))
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        fetches = (bump, x, x)
        first = sess.run(fetches)
        second = sess.run(fetches)
        listed = sess.run([x, bump])
    assert type(first) is tuple and first[0] is None and first[1] == first[2]
    assert second[1] in (first[1], first[1] + 2.0)  # read before or after the bump
    assert type(listed) is list and listed[1] is None
    assert len(hook.results) == 3


def test_feeds_of_a_reused_request_are_read_every_step():
    x = tf.placeholder_with_default(0.0, [])
    y = x + 1.0
    feeds = {}
    hook = _SameArgs(SessionRunArgs(y, feed_dict=feeds))  # filled in place later
    plain = _SameArgs(SessionRunArgs(y))
    with tf.train.MonitoredSession(hooks=[plain, hook]) as sess:
        assert sess.run(y) == 1.0
        feeds[x] = 4.0
        assert sess.run(y) == 5.0
        hook.args = SessionRunArgs(y, feed_dict={x: 7.0})  # a new request object
        assert sess.run(y) == 8.0
        hook.args = SessionRunArgs(y)
        assert sess.run(y) == 1.0
        assert sess.run(y) == 1.0
    np.testing.assert_array_equal(hook.results, [1.0, 5.0, 8.0, 1.0, 1.0])
    np.testing.assert_array_equal(plain.results, hook.results)


def test_options_of_a_request_apply_after_plain_steps():
    step = tf.train.get_or_create_global_step()
    y = tf.sin(tf.cast(step, tf.float32))  # read from a variable: nothing folds away
    traced = []

    class Tracer(SessionRunHook):
        def __init__(self):
            self.args = SessionRunArgs(y)

        def before_run(self, run_context):
            return self.args

        def after_run(self, run_context, run_values):
            traced.append(bool(run_values.run_metadata.step_stats.dev_stats))

    tracer = Tracer()
    with tf.train.MonitoredSession(hooks=[tracer]) as sess:
        sess.run(y)
        sess.run(y)
        tracer.args = SessionRunArgs(
            y, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
        sess.run(y)
        sess.run(y)
    assert traced == [False, False, True, True]

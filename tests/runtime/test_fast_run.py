"""A repeated plain `Session.run` takes its signature's `FastRun` (runtime/step.py).

Every test runs a signature once (the general path, which caches the `FastRun`) and
then again, and checks that the second run behaves exactly like the first: same
values, same conversions, same errors, same cancellation.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.runtime.session import Session


@pytest.fixture
def executes(monkeypatch):
    """Counts the runs that took the general path (`Session._execute`)."""
    calls = []
    real = Session._execute

    def counted(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Session, "_execute", counted)
    return calls


def test_repeated_run_takes_the_fast_path_with_the_same_values(executes):
    x = tf.placeholder(tf.float32, [3])
    y = tf.sin(x)
    v = np.array([0.0, 0.5, 1.0], np.float32)
    with tf.Session() as sess:
        first = sess.run(y, {x: v})
        second = sess.run(y, {x: v + 1})
        assert len(executes) == 1
    np.testing.assert_array_equal(first, np.sin(v))
    np.testing.assert_array_equal(second, np.sin(v + 1))
    assert second.dtype == np.float32 and second.flags.writeable


def test_fetch_structures_scalars_and_read_only_constants(executes):
    x = tf.placeholder(tf.float64, [])
    c = tf.constant([1.0, 2.0])
    fetches = {"sq": x * x, "c": c}
    pair_fetches = [c, x + 1.0]
    with tf.Session() as sess:
        for value in (2.0, 3.0):
            out = sess.run(fetches, {x: np.float64(value)})
            assert isinstance(out["sq"], np.float64) and out["sq"] == value * value
            out["c"][0] = 99.0  # a fetched constant is a writable copy
            pair = sess.run(pair_fetches, {x: np.float64(value)})
            assert pair[1] == value + 1.0 and pair[0][0] == 1.0
        assert len(executes) == 2
        np.testing.assert_array_equal(sess.run(c), [1.0, 2.0])


def test_other_values_go_through_the_full_conversion(executes):
    x = tf.placeholder(tf.float32, [None, 2])
    y = x * 2.0
    with tf.Session() as sess:
        sess.run(y, {x: np.ones((1, 2), np.float32)})
        out = sess.run(y, {x: [[1, 2], [3, 4], [5, 6]]})  # a list, another batch size
        assert out.dtype == np.float32 and out.shape == (3, 2)
        out = sess.run(y, {x: np.ones((2, 2), np.float64)})  # cast as on the first run
        assert out.dtype == np.float32
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 3\)"):
            sess.run(y, {x: np.ones((2, 3), np.float32)})
        with pytest.raises(TypeError, match="cannot be a tf\\.Tensor"):
            sess.run(y, {x: tf.constant([[1.0, 2.0]])})
        assert len(executes) == 1


def test_feeds_by_name_and_other_key_sets_are_separate_signatures(executes):
    x = tf.placeholder(tf.float32, [], name="fx")
    k = tf.placeholder_with_default(1.0, [], name="fk")
    y = x * k
    with tf.Session() as sess:
        assert sess.run(y, {x: np.float32(2)}) == 2.0
        assert sess.run(y, {"fx:0": np.float32(3)}) == 3.0
        assert sess.run(y, {x: np.float32(2), k: np.float32(5)}) == 10.0
        assert len(executes) == 3
        assert sess.run(y, {"fx:0": np.float32(4)}) == 4.0
        assert sess.run(y, {x: np.float32(2), k: np.float32(6)}) == 12.0
        assert len(executes) == 3


def test_runs_with_options_or_a_deadline_keep_the_general_path(executes):
    x = tf.placeholder(tf.float32, [2])
    y = x + 1.0
    v = np.zeros(2, np.float32)
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    with tf.Session() as sess:
        for _ in range(2):
            metadata = tf.RunMetadata()
            sess.run(y, {x: v}, options=options, run_metadata=metadata)
            assert metadata.step_stats.dev_stats  # traced every time
        assert len(executes) == 2
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=10_000)) as sess:
        sess.run(y, {x: v})
        sess.run(y, {x: v})
        assert len(executes) == 4


def test_variables_read_fresh_each_run():
    v = tf.Variable([1.0, 2.0])
    bump = tf.assign_add(v, [1.0, 1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        sess.run(bump)
        sess.run(bump)
        np.testing.assert_array_equal(before, [1.0, 2.0])
        np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])


def test_kernel_errors_are_the_same_on_a_repeated_run(testops):
    x = tf.placeholder(tf.float64, [2])
    y = testops.fail(x, name="checked")
    with tf.Session() as sess:
        sess.run(y, {x: np.ones(2)})
        with pytest.raises(tf.errors.OpError, match="checked") as info:
            sess.run(y, {x: -np.ones(2)})
    with tf.Session() as sess:
        with pytest.raises(type(info.value), match="checked"):
            sess.run(y, {x: -np.ones(2)})


def test_closing_the_session_cancels_a_repeated_run(testops):
    """A blocked second run of a signature still ends when the session closes."""
    x = tf.placeholder(tf.float64, [1])
    y = testops.block(x)
    sess = tf.Session()
    testops.release.set()
    sess.run(y, {x: np.ones(1)})
    testops.release.clear()
    caught = []

    def second():
        try:
            sess.run(y, {x: np.ones(1)})
        except tf.errors.CancelledError as e:
            caught.append(e)

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(0.1)
    sess.close()
    thread.join(5)
    assert not thread.is_alive() and len(caught) == 1
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(y, {x: np.ones(1)})


def test_flat_fetch_lists_and_tuples_with_ops_and_repeats(executes):
    v = tf.Variable(1.0)
    x = tf.placeholder(tf.float32, [])
    y = x * 2.0
    bump = tf.assign_add(v, 1.0).op
    as_list, as_tuple = [y, bump, y], (bump,)
    with tf.Session() as sess:
        sess.run(v.initializer)
        for value in (2.0, 3.0):
            out = sess.run(as_list, {x: np.float32(value)})
            assert type(out) is list and out[1] is None and out[0] == out[2] == 2 * value
        sess.run(v.initializer)
        assert sess.run(as_tuple) == (None,)
        assert sess.run(as_tuple) == (None,)
        assert len(executes) == 3  # the initializer, the list, the tuple
        assert sess.run(v) == 3.0  # the tuple ran the bump twice


def test_a_run_under_a_thread_limit_takes_the_fast_path_too(executes):
    x = tf.placeholder(tf.float32, [2])
    y = x * 3.0
    config = tf.ConfigProto(intra_op_parallelism_threads=1)
    with tf.Session(config=config) as sess:
        for value in (1.0, 2.0):
            np.testing.assert_array_equal(sess.run(y, {x: np.full(2, value, np.float32)}),
                                          [3 * value] * 2)
        assert len(executes) == 1


def test_fetched_variables_are_keyed_and_read_like_the_general_path():
    """`sess.run([train_op, global_step])`: a Variable in the fetches used to make the
    structure unkeyable (a new fetch mapper every run, no fast path)."""
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0])
        step = tf.train.get_or_create_global_step()
        inc = tf.group(tf.assign_add(v, [1.0, 1.0]), tf.assign_add(step, 1))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            outs = [sess.run([inc, v, step]) for _ in range(4)]
            assert (list, inc, v, step) in {k[0] for k in sess._fast_runs}
            assert [int(o[2]) for o in outs] == [1, 2, 3, 4]
            assert [o[1].tolist() for o in outs] == [[2.0, 3.0], [3.0, 4.0], [4.0, 5.0],
                                                   [5.0, 6.0]]
            assert isinstance(outs[-1][2], np.integer)  # a NumPy scalar, as TF returns
            kept = sess.run(v)
            kept_again = sess.run(v)  # the fast path: still a copy of the value
            sess.run(inc)
            assert kept.tolist() == kept_again.tolist() == [5.0, 6.0]
            assert sess.run({"v": v})["v"].tolist() == [6.0, 7.0]

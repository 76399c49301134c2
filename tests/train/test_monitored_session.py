"""tf.train.MonitoredSession, SingularMonitoredSession, MonitoredTrainingSession, Scaffold:
fetch merging, stopping, closing, recovery from preemption, queue runners."""

import collections
import doctest
import glob
import os
import threading

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework import errors
from flowgraph.framework.registry import has_op_def, register_op
from flowgraph.ops.op_util import make_op
from flowgraph.train import monitored_session
from flowgraph.train import scaffold as scaffold_lib

# -- a test-only op that fails on its N-th run (simulates a preempted task) ----------------------
_CALLS: collections.Counter = collections.Counter()
_ERRORS = {"aborted": errors.AbortedError, "unavailable": errors.UnavailableError,
           "invalid": errors.InvalidArgumentError, "interrupt": KeyboardInterrupt}

if not has_op_def("TestOnlyFailOnNthRun"):
    @register_op("TestOnlyFailOnNthRun", attrs={"n": 1, "error": "aborted", "key": ""},
                 num_outputs=0, dtype_fn=lambda op: [], stateful=True)
    def _fail_shape(op):
        return []

    @cpu_kernel("TestOnlyFailOnNthRun")
    def _fail_kernel(*, n, error, key):
        _CALLS[key] += 1
        if _CALLS[key] == n:
            if error == "interrupt":
                raise KeyboardInterrupt
            raise _ERRORS[error](None, None, f"simulated {error} error (run {n} of {key})")


def _fail_on_run(n, error="aborted", key=None):
    key = key or f"{error}-{n}-{len(_CALLS)}-{id(object())}"
    _CALLS[key] = 0
    return make_op("TestOnlyFailOnNthRun", [], {"n": n, "error": error, "key": key})


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


class Recorder(tf.train.SessionRunHook):
    def __init__(self):
        self.calls = collections.Counter()
        self.sessions = []

    def begin(self):
        self.calls["begin"] += 1

    def after_create_session(self, session, coord):
        self.calls["after_create_session"] += 1
        self.sessions.append(session)
        self.coord = coord

    def before_run(self, run_context):
        self.calls["before_run"] += 1

    def after_run(self, run_context, run_values):
        self.calls["after_run"] += 1

    def end(self, session):
        self.calls["end"] += 1


def _counting_graph(fail=None):
    """A global step and a train op incrementing it (after the `fail` op, if any)."""
    step = tf.train.get_or_create_global_step()
    deps = [fail] if fail is not None else []
    with tf.control_dependencies(deps):
        train = step.assign_add(1)
    return step, train


# -- running -------------------------------------------------------------------------------------
def test_fetch_structures_like_session_run():
    a = tf.constant(1.0, name="a")
    b = tf.constant([2, 3], name="b")
    Pair = collections.namedtuple("Pair", "x y")
    v = tf.Variable(4.0)
    with tf.train.MonitoredSession() as sess:
        assert sess.run(a) == 1.0
        assert sess.run("a:0") == 1.0
        assert sess.run(a.op) is None
        out = sess.run({"a": a, "nested": [b, (a, "b:0")], "pair": Pair(a, b)})
        assert out["a"] == 1.0
        np.testing.assert_array_equal(out["nested"][1][1], [2, 3])
        assert isinstance(out["pair"], Pair) and out["pair"].x == 1.0
        assert sess.run([v, a]) == [4.0, 1.0]
        assert sess.run(b, feed_dict={b: [7, 8]}).tolist() == [7, 8]
        with pytest.raises(TypeError, match="Fetch argument None"):
            sess.run(None)
        with tf.Graph().as_default():
            other = tf.constant(1.0)
        with pytest.raises(ValueError, match="not an element of this graph"):
            sess.run(other)


def test_reused_fetches_tuple_and_nested_containers():
    """The key of a flat tuple fetched again is reused; a tuple holding a list is not
    (the list may change between runs)."""
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    step, train = _counting_graph()
    train = train.op
    flat = (train, a)
    nested_list = [a]
    nested = (train, nested_list)
    with tf.train.MonitoredSession() as sess:
        assert sess.run(flat) == (None, 1.0)
        assert sess.run(flat) == (None, 1.0)
        assert sess.run((train, b)) == (None, 2.0)
        assert sess.run(nested) == (None, [1.0])
        nested_list.append(b)
        assert sess.run(nested) == (None, [1.0, 2.0])
        assert sess.run(flat) == (None, 1.0)
        assert sess.run(step) == 6


def test_graph_is_finalized_while_running_and_unfinalized_after():
    graph = tf.get_default_graph()
    v = tf.Variable(1.0)
    sess = tf.train.MonitoredSession()
    assert graph.finalized and sess.graph is graph
    with pytest.raises(RuntimeError, match="Graph is finalized"):
        tf.constant(2.0)
    assert sess.run(v) == 1.0
    sess.close()
    assert not graph.finalized
    tf.constant(2.0)


def test_hooks_lifecycle_and_end_on_clean_close():
    rec = Recorder()
    x = tf.constant(1)
    with tf.train.MonitoredSession(hooks=[rec]) as sess:
        sess.run(x)
        sess.run(x)
    assert rec.calls == {"begin": 1, "after_create_session": 1, "before_run": 2,
                         "after_run": 2, "end": 1}


def test_out_of_range_ends_the_with_block_cleanly():
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    fill = q.enqueue_many([[1, 2, 3]])
    close = q.close()
    item = q.dequeue()
    rec = Recorder()
    seen = []
    with tf.train.MonitoredSession(hooks=[rec]) as sess:
        sess.run(fill)
        sess.run(close)
        while not sess.should_stop():
            seen.append(sess.run(item))
    assert seen == [1, 2, 3]
    assert rec.calls["end"] == 1  # OutOfRangeError is the normal end of the input


def test_other_errors_propagate_without_end_and_close_the_session():
    rec = Recorder()
    bad = _fail_on_run(1, "invalid")
    sess = tf.train.MonitoredSession(hooks=[rec])
    raw = sess._tf_sess()
    with pytest.raises(tf.errors.InvalidArgumentError, match="simulated invalid"):
        with sess:
            sess.run(bad)
    assert rec.calls["end"] == 0
    assert sess.should_stop() and raw._closed
    with pytest.raises(RuntimeError, match="Attempted to use a closed Session"):
        raw.run(tf.get_default_graph().get_operations()[0])


def test_keyboard_interrupt_propagates_and_close_still_works():
    rec = Recorder()
    interrupt = _fail_on_run(2, "interrupt")
    _step, train = _counting_graph(interrupt)
    sess = tf.train.MonitoredSession(hooks=[rec])
    assert sess.run(train) == 1
    with pytest.raises(KeyboardInterrupt):
        sess.run(train)
    assert not sess.should_stop()
    sess.close()  # a plain close(): hooks end, the session is released
    assert rec.calls["end"] == 1
    assert sess.should_stop()


def test_keyboard_interrupt_in_with_block_skips_end():
    rec = Recorder()
    interrupt = _fail_on_run(1, "interrupt")
    with pytest.raises(KeyboardInterrupt):
        with tf.train.MonitoredSession(hooks=[rec]) as sess:
            sess.run(interrupt)
    assert rec.calls["end"] == 0 and sess.should_stop()


def test_close_twice_raises():
    sess = tf.train.MonitoredSession()
    sess.close()
    with pytest.raises(RuntimeError, match="Session is already closed"):
        sess.close()


def test_hook_exception_propagates():
    class Broken(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            raise ValueError("broken hook")

    x = tf.constant(1)
    with pytest.raises(ValueError, match="broken hook"):
        with tf.train.MonitoredSession(hooks=[Broken()]) as sess:
            sess.run(x)


# -- recovery ------------------------------------------------------------------------------------
@pytest.mark.parametrize("error", ["aborted", "unavailable"])
def test_preempted_run_recreates_session_and_restores_checkpoint(tmp_path, error):
    _step, train = _counting_graph(_fail_on_run(4, error))
    rec = Recorder()
    hooks = [tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2), rec]
    creator = tf.train.ChiefSessionCreator(checkpoint_dir=str(tmp_path))
    with tf.train.MonitoredSession(session_creator=creator, hooks=hooks) as sess:
        values = [int(sess.run(train)) for _ in range(6)]
    # Run 4 fails; the new session restores model.ckpt-2 and the same run is retried.
    assert values == [1, 2, 3, 3, 4, 5]
    assert rec.calls["after_create_session"] == 2
    assert rec.calls["begin"] == 1 and rec.calls["end"] == 1
    assert rec.sessions[0] is not rec.sessions[1] and rec.sessions[0]._closed
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("model.ckpt-5")


def test_monitored_training_session_recovers_too(tmp_path):
    _step, train = _counting_graph(_fail_on_run(3))
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path),
                                           save_checkpoint_steps=1) as sess:
        values = [int(sess.run(train)) for _ in range(4)]
    assert values == [1, 2, 3, 4]


def test_singular_monitored_session_does_not_recover():
    _step, train = _counting_graph(_fail_on_run(2))
    with pytest.raises(tf.errors.AbortedError):
        with tf.train.SingularMonitoredSession() as sess:
            sess.run(train)
            sess.run(train)


def test_preemption_while_creating_the_session_is_retried():
    class Flaky(tf.train.ChiefSessionCreator):
        attempts = 0

        def create_session(self):
            Flaky.attempts += 1
            if Flaky.attempts == 1:
                raise tf.errors.UnavailableError(None, None, "ps task restarting")
            return super().create_session()

    x = tf.constant(3)
    with tf.train.MonitoredSession(session_creator=Flaky()) as sess:
        assert sess.run(x) == 3
    assert Flaky.attempts == 2


def test_preemption_reported_to_coordinator_recreates_session():
    x = tf.constant(1)

    class ReportOnce(Recorder):
        def after_run(self, run_context, run_values):
            if len(self.sessions) == 1:
                self.coord.request_stop(tf.errors.AbortedError(None, None, "worker lost"))

    hook = ReportOnce()
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(x)
        assert not sess.should_stop()  # a new session was created instead
        assert sess.run(x) == 1
    assert hook.calls["after_create_session"] == 2


# -- queue runners and the coordinator ------------------------------------------------------------
def test_queue_runners_are_started_and_stopped():
    q = tf.FIFOQueue(4, tf.int64, shapes=[[]])
    counter = tf.Variable(np.int64(0))
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(tf.assign_add(counter, 1))]))
    item = q.dequeue()
    with tf.train.MonitoredSession() as sess:
        got = [int(sess.run(item)) for _ in range(5)]
    assert got == [1, 2, 3, 4, 5]
    assert not [t for t in threading.enumerate()
                if t.name.startswith("QueueRunnerThread") and t.is_alive()]


def test_queue_runner_error_surfaces_at_close():
    q = tf.FIFOQueue(4, tf.float32, shapes=[[]])
    bad = tf.placeholder(tf.float32, [])
    tf.train.add_queue_runner(tf.train.QueueRunner(q, [q.enqueue(bad)]))
    x = tf.constant(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        with tf.train.MonitoredSession() as sess:
            while not sess.should_stop():
                sess.run(x)


# -- run_step_fn ---------------------------------------------------------------------------------
def test_run_step_fn():
    step, train = _counting_graph()
    rec = Recorder()

    def step_fn(step_context):
        raw = step_context.session.run(step)
        return raw, step_context.run_with_hooks(train)

    with tf.train.MonitoredSession(hooks=[rec]) as sess:
        assert sess.run_step_fn(step_fn) == (0, 1)
        assert rec.calls["before_run"] == 1  # only run_with_hooks ran the hooks

        class Trainer:
            def step(self, step_context):
                return step_context.run_with_hooks(train)

        assert sess.run_step_fn(Trainer().step) == 2
        with pytest.raises(ValueError, match="`step_fn` may either have one `step_context`"):
            sess.run_step_fn(lambda ctx: None)


def test_run_step_fn_request_stop_ends_the_with_block():
    rec = Recorder()
    with tf.train.MonitoredSession(hooks=[rec]) as sess:
        def step_fn(step_context):
            step_context.request_stop()

        while not sess.should_stop():
            sess.run_step_fn(step_fn)
            pytest.fail("request_stop() should have raised StopIteration")
    assert rec.calls["end"] == 1 and sess.should_stop()


def test_run_step_fn_recovers_from_preemption():
    _step, train = _counting_graph(_fail_on_run(2))

    def step_fn(step_context):
        return step_context.run_with_hooks(train)

    with tf.train.MonitoredSession() as sess:
        assert sess.run_step_fn(step_fn) == 1
        assert sess.run_step_fn(step_fn) == 1  # new session, no checkpoint: from scratch


# -- MonitoredTrainingSession --------------------------------------------------------------------
def _hook_types(sess):
    return [type(h).__name__ for h in sess._hooks]


def test_monitored_training_session_default_hooks(tmp_path):
    tf.train.get_or_create_global_step()
    with tf.train.MonitoredTrainingSession() as sess:
        assert _hook_types(sess) == []
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path)) as sess:
        assert _hook_types(sess) == ["StepCounterHook", "SummarySaverHook",
                                     "CheckpointSaverHook"]
        saver_hook = sess._hooks[2]
        assert saver_hook._timer._every_secs == 600 and saver_hook._timer._every_steps is None
        summary_hook = sess._hooks[1]
        assert summary_hook._timer._every_steps == 100


def test_monitored_training_session_options(tmp_path):
    tf.train.get_or_create_global_step()
    extra = tf.train.StopAtStepHook(last_step=1)
    chief_only = tf.train.StepCounterHook()
    with tf.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path / "ckpt"), summary_dir=str(tmp_path / "sum"),
            hooks=[extra], chief_only_hooks=[chief_only], save_checkpoint_steps=7,
            save_summaries_secs=30, log_step_count_steps=None) as sess:
        hooks = sess._hooks
        assert hooks[0] is chief_only and hooks[-1] is extra
        assert _hook_types(sess) == ["StepCounterHook", "SummarySaverHook",
                                     "CheckpointSaverHook", "StopAtStepHook"]
        assert hooks[1]._timer._every_secs == 30 and hooks[1]._output_dir.endswith("sum")
        assert hooks[2]._timer._every_steps == 7 and hooks[2]._timer._every_secs is None
    with tf.train.MonitoredTrainingSession(checkpoint_dir=str(tmp_path / "c2"),
                                           save_checkpoint_secs=0,
                                           save_summaries_steps=0) as sess:
        assert _hook_types(sess) == ["StepCounterHook"]


def test_monitored_training_session_resumes_from_checkpoint(tmp_path):
    _step, train = _counting_graph()
    for expected in ([1, 2, 3], [4, 5, 6]):
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path),
                hooks=[tf.train.StopAtStepHook(num_steps=3)]) as sess:
            got = []
            while not sess.should_stop():
                got.append(int(sess.run(train)))
        assert got == expected
    assert os.path.exists(str(tmp_path / "checkpoint"))
    assert glob.glob(str(tmp_path / "events.out.tfevents.*"))


def test_non_chief_waits_for_the_chief():
    target = "local://mts_worker_test"
    v = tf.Variable(5.0)
    try:
        with pytest.raises(tf.errors.DeadlineExceededError, match="not ready"):
            tf.train.MonitoredTrainingSession(master=target, is_chief=False, max_wait_secs=0)
        with tf.train.MonitoredTrainingSession(master=target) as chief:
            with tf.train.MonitoredTrainingSession(master=target, is_chief=False) as worker:
                assert worker.run(v) == 5.0 and chief.run(v) == 5.0
    finally:
        tf.Session.reset(target)


# -- Scaffold ------------------------------------------------------------------------------------
def test_scaffold_finalize_fills_defaults_and_finalizes_graph():
    v = tf.Variable(1.0, name="v")
    local = tf.Variable(2.0, name="local", collections=[tf.GraphKeys.LOCAL_VARIABLES])
    scaffold = tf.train.Scaffold()
    assert scaffold.init_op is None and scaffold.saver is None
    scaffold.finalize()
    graph = tf.get_default_graph()
    assert graph.finalized
    assert scaffold.summary_op is None  # no summaries in the graph
    assert isinstance(scaffold.saver, tf.train.Saver)
    assert graph.get_collection(tf.GraphKeys.SAVERS) == [scaffold.saver]
    assert graph.get_collection(tf.GraphKeys.INIT_OP) == [scaffold.init_op]
    with tf.Session() as sess:
        assert sorted(sess.run(scaffold.ready_op)) == [b"local", b"v"]
        assert list(sess.run(scaffold.ready_for_local_init_op)) == [b"v"]
        sess.run(scaffold.init_op)
        assert list(sess.run(scaffold.ready_op)) == [b"local"]
        sess.run(scaffold.local_init_op)
        assert sess.run([v, local]) == [1.0, 2.0]
    graph._unsafe_unfinalize()


def test_scaffold_uses_collections_and_rejects_ambiguity():
    tf.Variable(1.0)
    mine = tf.no_op(name="my_init")
    tf.add_to_collection(tf.GraphKeys.INIT_OP, mine)
    tf.summary.scalar("s", tf.constant(1.0))
    table_init = tf.no_op(name="table_init")
    tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, table_init)
    scaffold = tf.train.Scaffold().finalize()
    assert scaffold.init_op is mine
    assert scaffold.summary_op.op.type == "MergeSummary"
    assert table_init in scaffold.local_init_op.control_inputs
    tf.get_default_graph()._unsafe_unfinalize()
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.constant([b""]))
    tf.add_to_collection(tf.GraphKeys.READY_OP, tf.constant([b""]))
    with pytest.raises(RuntimeError, match=r"tf.Scaffold\(ready_op=item to use\)"):
        tf.train.Scaffold().finalize()


def test_scaffold_copy_and_init_fn():
    v = tf.Variable(1.0)
    set_v = v.assign(7.0)
    seen = []

    def init_fn(scaffold, session):
        seen.append(scaffold)
        session.run(set_v)

    unused = tf.placeholder(tf.float32, [])
    base = tf.train.Scaffold(init_fn=init_fn, init_feed_dict={unused: 1.0})
    copy = tf.train.Scaffold(copy_from_scaffold=base, local_init_op=tf.no_op())
    assert copy.init_feed_dict == {unused: 1.0}
    with pytest.raises(TypeError, match="copy_from_scaffold is not a Scaffold instance"):
        tf.train.Scaffold(copy_from_scaffold=object())
    with tf.train.SingularMonitoredSession(scaffold=copy) as sess:
        assert sess.run(v) == 7.0
    assert seen == [copy]


def test_monitored_session_restores_instead_of_initializing(tmp_path):
    v = tf.Variable(1.0, name="v")
    bump = v.assign_add(10.0)
    with tf.train.SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as sess:
        sess.run(bump)
        scaffold_saver = tf.get_collection(tf.GraphKeys.SAVERS)[0]
        scaffold_saver.save(sess.raw_session(), str(tmp_path / "model.ckpt"), global_step=1)
    with tf.train.SingularMonitoredSession(checkpoint_dir=str(tmp_path)) as sess:
        assert sess.run(v) == 11.0
    path = tf.train.latest_checkpoint(str(tmp_path))
    with tf.train.SingularMonitoredSession(checkpoint_filename_with_path=path) as sess:
        assert sess.run(v) == 11.0


def test_docstring_examples():
    for module in (monitored_session, scaffold_lib):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0

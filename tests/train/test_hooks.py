"""tf.train's SessionRunHook protocol and the basic hooks, run in monitored sessions."""

import doctest
import glob
import json
import logging
import os
import re
import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.train import (
    basic_hooks_checkpoint,
    basic_hooks_logging,
    basic_hooks_summary,
    basic_hooks_timers,
    basic_session_run_hooks,
    session_run_hook,
)


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


@pytest.fixture
def fg_log(caplog):
    caplog.set_level(logging.INFO, logger="tensorflow")
    return caplog


def _messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "tensorflow"]


def _counting_graph():
    """A global step and a train op incrementing it."""
    step = tf.train.get_or_create_global_step()
    return step, step.assign_add(1)


def _train(hooks, train, steps=None, **kwargs):
    """Run `train` in a SingularMonitoredSession until a hook stops it (or `steps`)."""
    results = []
    with tf.train.SingularMonitoredSession(hooks=hooks, **kwargs) as sess:
        while not sess.should_stop() and (steps is None or len(results) < steps):
            results.append(sess.run(train))
    return results


def _events(logdir):
    events = []
    for path in sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*"))):
        events.extend(tf.train.summary_iterator(path))
    return events


class Recorder(tf.train.SessionRunHook):
    """Records every call it receives."""

    def __init__(self, fetches=None, feed_dict=None, options=None):
        self.calls = []
        self.args = (fetches, feed_dict, options)
        self.values = []

    def begin(self):
        self.calls.append("begin")

    def after_create_session(self, session, coord):
        self.calls.append("after_create_session")
        self.coord = coord

    def before_run(self, run_context):
        self.calls.append("before_run")
        self.original_args = run_context.original_args
        if self.args == (None, None, None):
            return None
        return tf.train.SessionRunArgs(*self.args)

    def after_run(self, run_context, run_values):
        self.calls.append("after_run")
        self.values.append(run_values)

    def end(self, session):
        self.calls.append("end")


# -- the protocol --------------------------------------------------------------------------------
def test_session_run_args_values_and_context():
    args = tf.train.SessionRunArgs("x")
    assert (args.fetches, args.feed_dict, args.options) == ("x", None, None)
    values = tf.train.SessionRunValues(results=1, options=None, run_metadata=None)
    assert values.results == 1
    ctx = tf.train.SessionRunContext(original_args=args, session="s")
    assert ctx.original_args is args and ctx.session == "s" and not ctx.stop_requested
    ctx.request_stop()
    assert ctx.stop_requested


def test_base_hook_methods_are_noops():
    hook = tf.train.SessionRunHook()
    hook.begin()
    hook.after_create_session(None, None)
    assert hook.before_run(None) is None
    hook.after_run(None, None)
    hook.end(None)


def test_hook_call_order_and_results():
    x = tf.constant(2.0)
    y = tf.constant([1, 2, 3])
    rec = Recorder(fetches={"y": y, "both": [x, y]})
    plain = Recorder()
    with tf.train.MonitoredSession(hooks=[rec, plain]) as sess:
        assert rec.calls == ["begin", "after_create_session"]
        assert sess.run(x, feed_dict=None) == 2.0
        assert rec.original_args == tf.train.SessionRunArgs(x, None)
        sess.run(x)
    assert rec.calls == ["begin", "after_create_session"] + ["before_run", "after_run"] * 2 + [
        "end"]
    results = rec.values[0].results
    np.testing.assert_array_equal(results["y"], [1, 2, 3])
    assert results["both"][0] == 2.0
    np.testing.assert_array_equal(results["both"][1], [1, 2, 3])
    assert plain.values[0].results is None
    assert plain.values[0].options is not None and plain.values[0].run_metadata is not None


def test_hook_fetch_by_name_and_changing_requests():
    x = tf.constant(3.0, name="x")
    y = tf.constant(4.0, name="y")

    class Alternating(tf.train.SessionRunHook):
        def begin(self):
            self.n, self.seen = 0, []

        def before_run(self, run_context):
            self.n += 1
            return tf.train.SessionRunArgs("x:0" if self.n % 2 else [y, "y:0", "y"])

        def after_run(self, run_context, run_values):
            self.seen.append(run_values.results)

    hook = Alternating()
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for _ in range(4):
            sess.run(x)
    assert hook.seen == [3.0, [4.0, 4.0, None], 3.0, [4.0, 4.0, None]]  # "y": the op


def test_request_stop_makes_should_stop_true_and_further_runs_fail():
    x = tf.constant(1)

    class StopNow(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            run_context.request_stop()

    sess = tf.train.MonitoredSession(hooks=[StopNow()])
    assert not sess.should_stop()
    sess.run(x)
    assert sess.should_stop()
    with pytest.raises(RuntimeError, match="Run called even after should_stop requested"):
        sess.run(x)
    sess.close()


def test_feeds_from_hooks_merge_and_conflicts_raise():
    a = tf.placeholder(tf.float32, [])
    b = tf.placeholder(tf.float32, [])
    total = a + b
    with tf.train.MonitoredSession(hooks=[tf.train.FeedFnHook(lambda: {a: 1.5})]) as sess:
        assert sess.run(total, feed_dict={b: 2.0}) == 3.5
        with pytest.raises(RuntimeError, match="Same tensor is fed by a SessionRunHook and user"):
            sess.run(total, feed_dict={a: 2.0, b: 1.0})
    hooks = [tf.train.FeedFnHook(lambda: {a: 1.0}), tf.train.FeedFnHook(lambda: {a: 2.0})]
    with tf.train.MonitoredSession(hooks=hooks) as sess:
        with pytest.raises(RuntimeError, match="Same tensor is fed by two hooks"):
            sess.run(total, feed_dict={b: 0.0})


def test_hook_options_are_merged_and_run_metadata_shared():
    x = tf.sin(tf.Variable(1.0))  # not constant-folded: a node runs and is traced
    tracer = Recorder(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    other = Recorder(fetches=x)
    with tf.train.MonitoredSession(hooks=[tracer, other]) as sess:
        sess.run(x)
    values = other.values[0]
    assert values.options.trace_level == tf.RunOptions.FULL_TRACE
    assert values.run_metadata is tracer.values[0].run_metadata
    assert values.run_metadata.step_stats.dev_stats


def test_user_options_and_run_metadata_reach_hooks():
    x = tf.constant(1.0)
    rec = Recorder()
    options = tf.RunOptions(timeout_in_ms=5000)
    metadata = tf.RunMetadata()
    with tf.train.MonitoredSession(hooks=[rec]) as sess:
        sess.run(x, options=options, run_metadata=metadata)
    assert rec.values[0].options is options
    assert rec.values[0].run_metadata is metadata


# -- timers --------------------------------------------------------------------------------------
def test_second_or_step_timer_steps():
    timer = tf.train.SecondOrStepTimer(every_steps=10)
    assert timer.last_triggered_step() is None
    assert timer.should_trigger_for_step(1)
    assert timer.update_last_triggered_step(1) == (None, None)
    assert not timer.should_trigger_for_step(1)
    assert not timer.should_trigger_for_step(10)
    assert timer.should_trigger_for_step(11)
    elapsed_secs, elapsed_steps = timer.update_last_triggered_step(15)
    assert elapsed_steps == 14 and elapsed_secs >= 0
    timer.reset()
    assert timer.last_triggered_step() is None


def test_second_or_step_timer_seconds(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(basic_hooks_timers.time, "time", lambda: now[0])
    timer = tf.train.SecondOrStepTimer(every_secs=5)
    timer.update_last_triggered_step(3)
    now[0] += 4.9
    assert not timer.should_trigger_for_step(4)
    now[0] += 0.2
    assert timer.should_trigger_for_step(4)
    assert not timer.should_trigger_for_step(3)  # the step of the last trigger
    assert timer.update_last_triggered_step(4) == pytest.approx((5.1, 1))


def test_second_or_step_timer_errors():
    with pytest.raises(ValueError, match="Either every_secs or every_steps should be provided"):
        tf.train.SecondOrStepTimer()
    with pytest.raises(ValueError, match="Can not provide both every_secs and every_steps"):
        tf.train.SecondOrStepTimer(every_secs=1, every_steps=1)


# -- StopAtStepHook ------------------------------------------------------------------------------
def test_stop_at_step_last_step():
    _, train = _counting_graph()
    assert _train([tf.train.StopAtStepHook(last_step=4)], train) == [1, 2, 3, 4]


def test_stop_at_step_num_steps_counts_from_the_start_step(tmp_path):
    step, train = _counting_graph()
    set_ten = step.assign(10)
    init = tf.train.Scaffold(init_fn=lambda scaffold, sess: sess.run(set_ten))
    hooks = [tf.train.StopAtStepHook(num_steps=3)]
    assert _train(hooks, train, scaffold=init) == [11, 12, 13]


def test_stop_at_step_errors():
    with pytest.raises(ValueError, match="One of num_steps or last_step must be specified"):
        tf.train.StopAtStepHook()
    with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
        tf.train.StopAtStepHook(num_steps=1, last_step=2)
    with pytest.raises(RuntimeError, match="Global step should be created to use StopAtStepHook"):
        tf.train.StopAtStepHook(num_steps=1).begin()


# -- CheckpointSaverHook -------------------------------------------------------------------------
class ListenerLog(tf.train.CheckpointSaverListener):
    def __init__(self, stop_after=None):
        self.calls = []
        self.stop_after = stop_after

    def begin(self):
        self.calls.append(("begin",))

    def before_save(self, session, global_step_value):
        self.calls.append(("before_save", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after_save", global_step_value))
        return self.stop_after is not None and global_step_value >= self.stop_after

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_checkpoint_saver_hook_every_n_steps_with_listener(tmp_path, fg_log):
    _step, train = _counting_graph()
    listener = ListenerLog()
    hooks = [tf.train.CheckpointSaverHook(str(tmp_path), save_steps=2, listeners=[listener]),
             tf.train.StopAtStepHook(last_step=5)]
    _train(hooks, train)
    saved = [c[1] for c in listener.calls if c[0] == "after_save"]
    assert saved == [0, 2, 4, 5]  # at creation, every 2 steps, and the final step
    assert listener.calls[0] == ("begin",)
    assert listener.calls[-1] == ("end", 5)
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-5")
    assert tf.train.load_variable(str(tmp_path), "global_step") == 5
    assert f"Saving checkpoints for 2 into {tmp_path / 'model.ckpt'}." in _messages(fg_log)
    tf.summary.FileWriterCache.get(str(tmp_path)).flush()
    checkpoint_logs = [e.step for e in _events(str(tmp_path)) if e.HasField("session_log")]
    assert checkpoint_logs == [0, 2, 4, 5]


def test_checkpoint_saver_hook_every_n_secs(tmp_path, monkeypatch):
    now = [0.0]
    monkeypatch.setattr(basic_hooks_timers.time, "time", lambda: now[0])
    _step, train = _counting_graph()
    listener = ListenerLog()
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_secs=60, listeners=[listener],
                                        checkpoint_basename="m.ckpt")
    with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
        sess.run(train)
        sess.run(train)
        now[0] = 61.0
        sess.run(train)
        sess.run(train)
    saved = [c[1] for c in listener.calls if c[0] == "after_save"]
    assert saved == [0, 3, 4]
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("m.ckpt-4")


def test_checkpoint_listener_can_stop_training(tmp_path):
    _, train = _counting_graph()
    listener = ListenerLog(stop_after=2)
    hooks = [tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, listeners=[listener])]
    assert _train(hooks, train, steps=100) == [1, 2]


def test_checkpoint_saver_hook_errors_and_saver_lookup(tmp_path):
    _, train = _counting_graph()
    with pytest.raises(ValueError, match="cannot provide both saver and scaffold"):
        tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1, saver=object(),
                                     scaffold=tf.train.Scaffold())
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.CheckpointSaverHook(str(tmp_path))
    tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver())
    tf.add_to_collection(tf.GraphKeys.SAVERS, tf.train.Saver())
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1)
    with pytest.raises(RuntimeError, match="More than one item in collection savers"):
        _train([hook], train, scaffold=tf.train.Scaffold(saver=tf.train.Saver()))


def test_checkpoint_saver_hook_uses_the_given_saver(tmp_path):
    step, train = _counting_graph()
    other = tf.Variable(1.0, name="other")
    saver = tf.train.Saver([step])
    hooks = [tf.train.CheckpointSaverHook(str(tmp_path), save_steps=10, saver=saver)]
    _train(hooks, train, steps=2)
    names = [name for name, _ in tf.train.list_variables(str(tmp_path))]
    assert names == ["global_step"] and other.op.name not in names


def test_checkpoint_saver_hook_requires_a_global_step(tmp_path):
    hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=1)
    with pytest.raises(RuntimeError, match="Global step should be created"):
        hook.begin()


# -- SummarySaverHook ----------------------------------------------------------------------------
def test_summary_saver_hook_every_n_steps(tmp_path):
    step, train = _counting_graph()
    tf.summary.scalar("doubled", tf.cast(step, tf.float32) * 2.0)
    hooks = [tf.train.SummarySaverHook(save_steps=2, output_dir=str(tmp_path),
                                       summary_op=tf.summary.merge_all()),
             tf.train.StopAtStepHook(last_step=5)]
    _train(hooks, train)
    events = _events(str(tmp_path))
    starts = [e.step for e in events if e.HasField("session_log")]
    summaries = [(e.step, e.summary.value[0].tag) for e in events if e.HasField("summary")]
    assert starts == [1]
    assert summaries == [(1, "doubled"), (3, "doubled"), (5, "doubled")]


def test_summary_saver_hook_with_scaffold_and_writer(tmp_path):
    step, train = _counting_graph()
    tf.summary.scalar("value", tf.cast(step, tf.float32))
    scaffold = tf.train.Scaffold()
    writer = tf.summary.FileWriter(str(tmp_path))
    hooks = [tf.train.SummarySaverHook(save_steps=3, summary_writer=writer, scaffold=scaffold),
             tf.train.StopAtStepHook(last_step=4)]
    _train(hooks, train, scaffold=scaffold)
    writer.close()
    steps = [e.step for e in _events(str(tmp_path)) if e.HasField("summary")]
    assert steps == [1, 4]


def test_summary_saver_hook_errors():
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1)
    with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
        tf.train.SummarySaverHook(save_steps=1, scaffold=tf.train.Scaffold(),
                                  summary_op=tf.constant(b""))
    with pytest.raises(RuntimeError, match="Global step should be created"):
        tf.train.SummarySaverHook(save_steps=1, summary_op=tf.constant(b"")).begin()


# -- StepCounterHook -----------------------------------------------------------------------------
def test_step_counter_hook_logs_and_writes_steps_per_sec(tmp_path, fg_log):
    _, train = _counting_graph()
    hooks = [tf.train.StepCounterHook(every_n_steps=2, output_dir=str(tmp_path)),
             tf.train.StopAtStepHook(last_step=9)]
    _train(hooks, train)
    # (no flush here: the hook's end flushes, as TF's programs find the rates in the
    # event file right after the training loop)
    logged = [m for m in _messages(fg_log) if m.startswith("global_step/sec: ")]
    assert len(logged) >= 3
    assert all(float(m.split(": ")[1]) > 0 for m in logged)
    values = [(e.step, v.tag, v.simple_value) for e in _events(str(tmp_path))
              if e.HasField("summary") for v in e.summary.value]
    assert len(values) == len(logged)
    assert all(tag == "global_step/sec" and rate > 0 for _, tag, rate in values)


def test_step_counter_hook_warns_when_the_step_does_not_move(fg_log):
    tf.train.get_or_create_global_step()
    noop = tf.no_op()
    _train([tf.train.StepCounterHook(every_n_steps=1)], noop, steps=8)
    warnings = [m for m in _messages(fg_log) if "global step" in m and "not been" in m]
    assert len(warnings) == 5  # like TF: only the first few times


def test_step_counter_hook_errors():
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=None)
    with pytest.raises(ValueError, match="exactly one of every_n_steps and every_n_secs"):
        tf.train.StepCounterHook(every_n_steps=1, every_n_secs=1)


# -- LoggingTensorHook ---------------------------------------------------------------------------
def test_logging_tensor_hook_every_n_iter_format(fg_log):
    loss = tf.placeholder(tf.float32, [], name="loss")
    step = tf.constant(200, name="step")
    hook = tf.train.LoggingTensorHook({"step": step, "loss": loss}, every_n_iter=2)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for i in range(5):
            sess.run(loss, feed_dict={loss: 0.31 + i})
    logged = [m for m in _messages(fg_log) if m.startswith("loss")]
    assert logged[0] == "loss = 0.31, step = 200"  # sorted tags, no timing the first time
    assert re.fullmatch(r"loss = 2\.31, step = 200 \(\d+\.\d{3} sec\)", logged[1])
    assert re.fullmatch(r"loss = 4\.31, step = 200 \(\d+\.\d{3} sec\)", logged[2])
    assert len(logged) == 3


def test_logging_tensor_hook_list_of_names_at_end_and_formatter(fg_log):
    a = tf.constant([1.5, 2.5], name="a")
    tf.constant(7, name="b")
    hook = tf.train.LoggingTensorHook(["b", "a:0"], at_end=True)
    custom = tf.train.LoggingTensorHook({"a": a}, every_n_iter=1,
                                        formatter=lambda values: f"custom {values['a'][1]}")
    with tf.train.MonitoredSession(hooks=[hook, custom]) as sess:
        sess.run(a)
        sess.run(a)
    messages = _messages(fg_log)
    assert messages.count("custom 2.5") == 2
    assert [m for m in messages if m.startswith("b = ")] == ["b = 7, a:0 = [1.5 2.5]"]


def test_logging_tensor_hook_every_n_secs(fg_log, monkeypatch):
    now = [0.0]
    monkeypatch.setattr(basic_hooks_timers.time, "time", lambda: now[0])
    x = tf.constant(1, name="x")
    hook = tf.train.LoggingTensorHook({"x": x}, every_n_secs=10)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        for t in (0.0, 5.0, 9.0, 11.0, 12.0):
            now[0] = t
            sess.run(x)
    assert [m for m in _messages(fg_log) if m.startswith("x =")] == [
        "x = 1", "x = 1 (11.000 sec)"]


def test_logging_tensor_hook_errors():
    x = tf.constant(1.0)
    with pytest.raises(ValueError, match="either at_end and/or exactly one of"):
        tf.train.LoggingTensorHook([x])
    with pytest.raises(ValueError, match="either at_end and/or exactly one of"):
        tf.train.LoggingTensorHook([x], every_n_iter=1, every_n_secs=1)
    with pytest.raises(ValueError, match="invalid every_n_iter=0"):
        tf.train.LoggingTensorHook([x], every_n_iter=0)
    parts = tf.split(tf.constant([1.0, 2.0]), 2, name="parts")
    assert len(parts) == 2
    with pytest.raises(ValueError, match="Name parts is ambiguous"):
        tf.train.LoggingTensorHook(["parts"], every_n_iter=1).begin()
    with tf.Graph().as_default():
        other = tf.constant(1.0)
    with pytest.raises(ValueError, match="should have graph attribute"):
        tf.train.LoggingTensorHook({"o": other}, every_n_iter=1).begin()


# -- NanTensorHook -------------------------------------------------------------------------------
def test_nan_tensor_hook_raises(fg_log):
    loss = tf.placeholder(tf.float32, [])
    rec = Recorder()
    with pytest.raises(tf.train.NanLossDuringTrainingError) as info:
        with tf.train.MonitoredSession(hooks=[tf.train.NanTensorHook(loss), rec]) as sess:
            sess.run(loss, feed_dict={loss: 1.0})
            sess.run(loss, feed_dict={loss: float("nan")})
    assert isinstance(info.value, RuntimeError)
    assert str(info.value) == "NaN loss during training."
    assert "Model diverged with loss = NaN." in _messages(fg_log)
    assert "end" not in rec.calls  # an error: hooks' end() is not called


def test_nan_tensor_hook_can_just_stop():
    loss = tf.placeholder(tf.float32, [])
    hook = tf.train.NanTensorHook(loss, fail_on_nan_loss=False)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(loss, feed_dict={loss: 1.0})
        assert not sess.should_stop()
        sess.run(loss, feed_dict={loss: np.nan})
        assert sess.should_stop()


# -- FinalOpsHook, FeedFnHook --------------------------------------------------------------------
def test_final_ops_hook_runs_at_end_with_feed():
    v = tf.Variable(5.0)
    scale = tf.placeholder(tf.float32, [])
    hook = tf.train.FinalOpsHook({"scaled": v * scale, "v": v}, {scale: 3.0})
    bump = v.assign_add(1.0)
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(bump)
        assert hook.final_ops_values is None
    assert hook.final_ops_values == {"scaled": 18.0, "v": 6.0}


def test_final_ops_hook_out_of_range_warns_and_raises(fg_log):
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    close = q.close()
    hook = tf.train.FinalOpsHook(q.dequeue())
    sess = tf.train.MonitoredSession(hooks=[hook])
    sess.run(close)
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.close()
    assert any("FinalOpsHook" in m for m in _messages(fg_log))


def test_feed_fn_hook_feeds_every_run():
    x = tf.placeholder(tf.int32, [])
    counter = iter(range(10))
    hook = tf.train.FeedFnHook(lambda: {x: next(counter)})
    y = x * 10
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        assert [sess.run(y) for _ in range(3)] == [0, 10, 20]


# -- ProfilerHook --------------------------------------------------------------------------------
def test_profiler_hook_writes_chrome_traces(tmp_path):
    _step, train = _counting_graph()
    hooks = [tf.train.ProfilerHook(save_steps=2, output_dir=str(tmp_path)),
             tf.train.StopAtStepHook(last_step=6)]
    _train(hooks, train)
    files = sorted(os.path.basename(p) for p in glob.glob(str(tmp_path / "timeline-*.json")))
    assert files == ["timeline-2.json", "timeline-4.json", "timeline-6.json"]
    trace = json.loads((tmp_path / "timeline-4.json").read_text())
    assert any(e.get("ph") == "X" for e in trace["traceEvents"])
    tf.summary.FileWriterCache.get(str(tmp_path)).flush()
    tags = [e.tagged_run_metadata.tag for e in _events(str(tmp_path))
            if e.HasField("tagged_run_metadata")]
    assert tags == ["step_2", "step_4", "step_6"]


# -- GlobalStepWaiterHook ------------------------------------------------------------------------
def test_global_step_waiter_hook_waits_for_the_step():
    step, train = _counting_graph()
    x = tf.constant(1)
    with tf.train.SingularMonitoredSession(
            hooks=[tf.train.GlobalStepWaiterHook(wait_until_step=3)]) as sess:
        raw = sess.raw_session()

        def bump():
            time.sleep(0.05)
            for _ in range(3):
                raw.run(train)

        worker = threading.Thread(target=bump)
        worker.start()
        start = time.time()
        assert sess.run(x) == 1
        worker.join()
        assert raw.run(step) == 3 and time.time() - start < 5
        sess.run(x)  # started: no more waiting


def test_global_step_waiter_hook_zero_does_not_wait():
    tf.train.get_or_create_global_step()
    x = tf.constant(1)
    with tf.train.MonitoredSession(hooks=[tf.train.GlobalStepWaiterHook(0)]) as sess:
        assert sess.run(x) == 1


# -- the Estimators paper's example --------------------------------------------------------------
TRAIN_TIME = 0.2


class TimeBasedStopHook(tf.train.SessionRunHook):
    def begin(self):
        self.started_at = time.time()

    def after_run(self, run_context, run_values):
        if time.time() - self.started_at >= TRAIN_TIME:
            run_context.request_stop()


def test_paper_time_based_stop_hook():
    _, train = _counting_graph()
    start = time.time()
    steps = _train([TimeBasedStopHook()], train)
    elapsed = time.time() - start
    assert len(steps) > 1 and steps == list(range(1, len(steps) + 1))
    assert TRAIN_TIME <= elapsed < TRAIN_TIME + 5


# -- module surface ------------------------------------------------------------------------------
def test_nan_error_is_exported_and_a_runtime_error():
    assert issubclass(tf.train.NanLossDuringTrainingError, RuntimeError)
    assert tf.train.NanLossDuringTrainingError is basic_hooks_logging.NanLossDuringTrainingError


@pytest.mark.parametrize("module", [session_run_hook, basic_session_run_hooks,
                                    basic_hooks_timers, basic_hooks_checkpoint,
                                    basic_hooks_summary, basic_hooks_logging],
                         ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0

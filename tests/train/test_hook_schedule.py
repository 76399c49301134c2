"""The hook schedule (train/hook_schedule.py): flowgraph's periodic hooks are skipped on
the steps where they have nothing to do, and do exactly what they do when called on
every step. Each scenario runs twice, with the built-in hooks (scheduled) and with
trivial subclasses of them (ordinary hooks, called on every step), and compares
everything the hooks did."""

import logging

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.train import basic_session_run_hooks as hooks_lib
from flowgraph.train.hook_schedule import is_scheduled


class _Writer:
    """Records what a hook writes (the FileWriter interface the hooks use)."""

    def __init__(self):
        self.events = []

    def add_summary(self, summary, global_step=None):
        self.events.append(("summary", int(global_step)))

    def add_session_log(self, log, global_step=None):
        self.events.append(("log", int(global_step)))

    def flush(self):
        self.events.append(("flush",))


class _Listener(tf.train.CheckpointSaverListener):
    def __init__(self):
        self.saves = []

    def before_save(self, session, global_step_value):
        self.saves.append(global_step_value)


def _plain(cls):
    """A subclass: the same behaviour, called on every step."""
    return type("Plain" + cls.__name__, (cls,), {})


class _Clock(tf.train.SessionRunHook):
    """Moves a fake `time.time` on by `tick` seconds in its before_run or after_run."""

    def __init__(self, monkeypatch, tick, when):
        self.now, self.tick, self.when = 1000.0, tick, when
        monkeypatch.setattr("time.time", lambda: self.now)

    def before_run(self, run_context):
        if self.when == "before":
            self.now += self.tick

    def after_run(self, run_context, run_values):
        if self.when == "after":
            self.now += self.tick


def _train(ckpt_dir, scheduled: bool, last_step=57, nan_at=None, stall_every=None,
           clock=None):
    """Train with every built-in periodic hook (every N steps, or every N seconds of
    `clock`); returns what each of them did."""
    kinds = {name: getattr(hooks_lib, name) for name in (
        "StopAtStepHook", "LoggingTensorHook", "CheckpointSaverHook", "SummarySaverHook",
        "StepCounterHook", "NanTensorHook")}
    if not scheduled:
        kinds = {name: _plain(cls) for name, cls in kinds.items()}
    logged, writer, counter_writer, listener = [], _Writer(), _Writer(), _Listener()
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        runs = tf.Variable(0, dtype=tf.int64, name="runs")
        count = tf.assign_add(runs, 1)
        if stall_every:  # the step does not move on every `stall_every`-th run
            bump = tf.cast(tf.not_equal(count % stall_every, 0), tf.int64)
        else:
            bump = tf.constant(1, tf.int64) + 0 * count
        train = tf.assign_add(step, bump)
        loss = tf.cast(step, tf.float32) * 0.5
        if nan_at is not None:
            loss = tf.where(step >= nan_at, loss * np.nan, loss)
        tf.summary.scalar("loss", loss)
        by_steps = clock is None
        hooks = [
            kinds["StopAtStepHook"](last_step=last_step),
            kinds["LoggingTensorHook"]({"step": step}, every_n_iter=7 if by_steps else None,
                                       every_n_secs=None if by_steps else 2.0,
                                       formatter=lambda values: logged.append(
                                           int(values["step"])) or ""),
            kinds["CheckpointSaverHook"](ckpt_dir, save_steps=10 if by_steps else None,
                                         save_secs=None if by_steps else 3,
                                         listeners=[listener]),
            kinds["SummarySaverHook"](save_steps=5 if by_steps else None,
                                      save_secs=None if by_steps else 2,
                                      summary_writer=writer,
                                      summary_op=tf.summary.merge_all()),
            kinds["StepCounterHook"](every_n_steps=9 if by_steps else None,
                                     every_n_secs=None if by_steps else 1.5,
                                     summary_writer=counter_writer),
            kinds["NanTensorHook"](loss, fail_on_nan_loss=False),
        ]
        logging_hook = hooks[1]
        if clock is not None:
            hooks.insert(0, clock)
        results = []
        with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
            assert all(is_scheduled(h) == scheduled for h in hooks if h is not clock)
            while not sess.should_stop():
                results.append(sess.run([train, loss])[1])
            final = int(sess.raw_session().run(step))
    return {"final": final, "runs": len(results), "logged": logged,
            "summaries": writer.events, "counter": [s for _, *s in counter_writer.events],
            "saves": listener.saves, "iter": logging_hook._iter_count}


@pytest.mark.parametrize("case", [
    {"last_step": 57},
    {"last_step": 1},
    {"last_step": 40, "nan_at": 23},
    {"last_step": 45, "stall_every": 4},
])
def test_scheduled_hooks_do_what_hooks_called_every_step_do(tmp_path, case, caplog):
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        every_step = _train(str(tmp_path / "a"), scheduled=False, **case)
        warnings_every_step = [r.getMessage()[:100] for r in caplog.records]
        caplog.clear()
        scheduled = _train(str(tmp_path / "b"), scheduled=True, **case)
        warnings_scheduled = [r.getMessage()[:100] for r in caplog.records]
    assert scheduled == every_step
    assert warnings_scheduled == warnings_every_step
    if "nan_at" in case:
        assert every_step["final"] == case["nan_at"] + 1  # stopped at the first NaN
    if "stall_every" in case:
        assert any("has not been increased" in w for w in warnings_scheduled)


@pytest.mark.parametrize("when", ["before", "after"])
def test_time_triggered_hooks_act_on_the_same_steps(tmp_path, monkeypatch, when):
    """Time passing inside another hook's before_run or after_run counts as it does for
    a hook called after that one."""
    every_step = _train(str(tmp_path / "a"), scheduled=False, last_step=60,
                        clock=_Clock(monkeypatch, 0.35, when))
    scheduled = _train(str(tmp_path / "b"), scheduled=True, last_step=60,
                       clock=_Clock(monkeypatch, 0.35, when))
    assert scheduled == every_step
    assert len(every_step["logged"]) > 5 and len(every_step["saves"]) > 3


def test_a_quiet_step_calls_no_builtin_hook(monkeypatch):
    calls = []
    real = hooks_lib.StopAtStepHook.after_run

    def counted(self, run_context, run_values):
        calls.append(int(run_values.results))
        return real(self, run_context, run_values)

    monkeypatch.setattr(hooks_lib.StopAtStepHook, "after_run", counted)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        hook = hooks_lib.StopAtStepHook(last_step=200)
        with tf.train.MonitoredSession(hooks=[hook]) as sess:
            while not sess.should_stop():
                last = sess.run(train)
    assert int(last) == 200
    assert len(calls) <= 3  # the first run and the last one or two, not 200


def test_user_hooks_and_subclasses_are_called_on_every_step():
    class Counting(tf.train.SessionRunHook):
        def begin(self):
            self.before = self.after = 0

        def before_run(self, run_context):
            self.before += 1

        def after_run(self, run_context, run_values):
            self.after += 1

    class MyStop(tf.train.StopAtStepHook):
        def begin(self):
            super().begin()
            self.seen = 0

        def after_run(self, run_context, run_values):
            self.seen += 1
            super().after_run(run_context, run_values)

    counting, my_stop = Counting(), MyStop(last_step=30)
    assert not is_scheduled(my_stop) and not is_scheduled(counting)
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        stop = tf.train.StopAtStepHook(last_step=40)
        with tf.train.MonitoredSession(hooks=[counting, my_stop, stop]) as sess:
            while not sess.should_stop():
                sess.run(train)
    assert counting.before == counting.after == my_stop.seen == 30


def test_logging_hook_counts_skipped_runs_before_end(caplog):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        hook = tf.train.LoggingTensorHook({"step": step}, every_n_iter=1000, at_end=True)
        with caplog.at_level(logging.INFO, logger="tensorflow"):
            with tf.train.MonitoredSession(hooks=[hook]) as sess:
                for _ in range(25):
                    sess.run(train)
    assert hook._iter_count == 25
    assert any("step = 25" in r.getMessage() for r in caplog.records)


def test_hooks_that_do_not_read_the_step_are_skipped_too(monkeypatch, caplog):
    """Without a hook fetching the global step, logging (every N runs) and the NaN
    guard are still skipped on quiet steps, and still act on their steps."""
    calls = []
    for cls in (hooks_lib.LoggingTensorHook, hooks_lib.NanTensorHook):
        real = cls.after_run
        monkeypatch.setattr(cls, "after_run", lambda self, c, v, real=real, name=cls.__name__:
                            calls.append(name) or real(self, c, v))
    with tf.Graph().as_default():
        x = tf.Variable(0.0)
        bump = tf.assign_add(x, 1.0)
        loss = tf.where(x > 40.0, x * np.nan, x)
        hooks = [tf.train.LoggingTensorHook({"x": x}, every_n_iter=10),
                 tf.train.NanTensorHook(loss, fail_on_nan_loss=False)]
        runs = 0
        with caplog.at_level(logging.INFO, logger="tensorflow"):
            with tf.train.MonitoredSession(hooks=hooks) as sess:
                while not sess.should_stop():
                    sess.run([bump, loss])
                    runs += 1
    assert runs in (41, 42)  # stopped by the NaN guard (x read before or after the bump)
    assert calls.count("LoggingTensorHook") == 5  # runs 0, 10, 20, 30, 40
    assert calls.count("NanTensorHook") == 2  # the first run, and the NaN
    assert sum("x = " in r.getMessage() for r in caplog.records) == 5


class _FakeHook:
    """A scheduled hook for `HookSchedule` alone: its thresholds are given."""

    _pure_before_run = True

    def __init__(self, request, wake):
        self._idle_request, self._global_step_tensor, self.wake = request, None, wake

    def _catch_up(self, runs, step):
        pass

    def _wake(self):
        return self.wake() if callable(self.wake) else self.wake


def test_record_quiet_agrees_with_due_after_and_finish_run(monkeypatch):
    """`record_quiet` records exactly the runs `due_after` finds no hook due after (and
    records them as `finish_run(None)` does); on any other run it records nothing.
    Random steps, stalls, NaN losses, values that are not numbers, thresholds in steps
    and seconds; two schedules fed the same runs."""
    from flowgraph.train.hook_schedule import HookSchedule, Wake

    now = [100.0]
    monkeypatch.setattr("time.time", lambda: now[0])
    step_tensor, loss_tensor = object(), object()
    step = 0
    # thresholds that move on each time the hook is called, as a timer's do
    stop = _FakeHook(tf.train.SessionRunArgs(step_tensor), lambda: Wake(after_step=step + 25))
    stop._global_step_tensor = step_tensor
    timed = _FakeHook(tf.train.SessionRunArgs(step_tensor),
                      lambda: Wake(after_time=now[0] + 10.0))
    timed._global_step_tensor = step_tensor
    nan = _FakeHook(tf.train.SessionRunArgs(loss_tensor), Wake(nan=True))
    stall = _FakeHook(None, Wake(stall=True))
    hooks = [stop, timed, nan, stall]
    getters = [2, 2, 1, None]  # flat values: (train op, loss, step)
    fast, slow = HookSchedule(hooks, [0, 1, 2, 3]), HookSchedule(hooks, [0, 1, 2, 3])
    rng = np.random.default_rng(7)
    recorded = 0
    for _ in range(400):
        step += int(rng.random() > 0.1)  # some runs do not move the step
        loss = np.float32(np.nan) if rng.random() < 0.05 else np.float32(rng.random())
        value = np.int64(step) if rng.random() > 0.03 else np.array([step, step])
        values = [None, loss, value]
        now[0] += 0.25
        state = (fast.runs, fast.prev_step)
        if fast.record_quiet(values, getters):
            recorded += 1
            due = slow.due_after(values, getters, None)
            assert due is None
            slow.finish_run(due)
        else:
            assert (fast.runs, fast.prev_step) == state  # nothing recorded
            for schedule in (fast, slow):
                due = schedule.due_after(values, getters, None)
                schedule.finish_run(due)  # with `called(due)`: new thresholds
        assert (fast.runs, fast.prev_step) == (slow.runs, slow.prev_step)
        assert fast._prev_value is slow._prev_value
        assert fast.wake == slow.wake
    assert 200 < recorded < 380


def test_docstring_examples():
    import doctest

    from flowgraph.train import (
        basic_hooks_timers,
        hook_fetches,
        hook_schedule,
        hooked_session,
        meta_graph_export,
        session_wrappers,
    )

    for module in (hook_schedule, hooked_session, hook_fetches, session_wrappers,
                   basic_hooks_timers, meta_graph_export):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0, module.__name__

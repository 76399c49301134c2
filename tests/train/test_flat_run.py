"""The flat path of a monitored session's run (train/flat_run.py): quiet steps skip the
recoverable and coordinated layers and the hooked session's request handling, with the
same results, hooks, stops and recovery as the layered path. Each scenario runs with the
flat path and with it switched off, and the runs it took are counted, so that a test
passing because the flat path was never taken is caught."""

import doctest
import logging

import numpy as np
import pytest
from test_hook_schedule import _Listener, _Writer

import flowgraph as tf
from flowgraph.train import basic_session_run_hooks as hooks_lib
from flowgraph.train import flat_run
from flowgraph.train.hooked_session import _HookedSession


@pytest.fixture(autouse=True)
def _close_cached_writers():
    yield
    tf.summary.FileWriterCache.clear()


@pytest.fixture
def counted(monkeypatch):
    """Counts the runs taken by the flat path and by the layered hooked session."""
    counts = {"flat": 0, "layered": 0, "tried": 0}
    real_quiet, real_run = _HookedSession.run_quiet, _HookedSession.run

    def run_quiet(self, fetches):
        counts["tried"] += 1
        result = real_quiet(self, fetches)
        if result is not flat_run.LAYERED:
            counts["flat"] += 1
        return result

    def run(self, *args, **kwargs):
        counts["layered"] += 1
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(_HookedSession, "run_quiet", run_quiet)
    monkeypatch.setattr(_HookedSession, "run", run)
    return counts


def _layered_only(monkeypatch):
    monkeypatch.setattr(flat_run.FlatPath, "run", lambda self, fetches: flat_run.LAYERED)


class _Watch(tf.train.SessionRunHook):
    """A user hook with only an `after_run` (the flat path still applies): counts its
    calls, moves a fake clock on, and requests a stop on its `stop_at`-th call."""

    def __init__(self, step, stop_at=None, clock=None, tick=0.0):
        self.step, self.stop_at, self.clock, self.tick = step, stop_at, clock, tick
        self.seen = []

    def begin(self):
        self.seen = []

    def after_create_session(self, session, coord):
        self.coord = coord

    def after_run(self, run_context, run_values):
        assert run_values.results is None  # nothing requested
        self.seen.append(len(self.seen) + 1)
        if self.clock is not None:
            self.clock[0] += self.tick
        if self.stop_at is not None and self.seen[-1] >= self.stop_at:
            run_context.request_stop()


def _train(ckpt_dir, last_step=57, nan_at=None, stall_every=None, stop_at=None,
           clock=None, user_hook="first"):
    """Train with every built-in periodic hook and a user `after_run` hook (`user_hook`:
    "first", "last" or None); returns what each of them did and the values each run
    returned."""
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
        watch = _Watch(step, stop_at=stop_at, clock=clock, tick=0.35)
        hooks = [watch] if user_hook == "first" else []
        hooks += [
            hooks_lib.StopAtStepHook(last_step=last_step),
            hooks_lib.LoggingTensorHook({"step": step}, every_n_iter=7 if by_steps else None,
                                        every_n_secs=None if by_steps else 2.0,
                                        formatter=lambda values: logged.append(
                                            int(values["step"])) or ""),
            hooks_lib.CheckpointSaverHook(ckpt_dir, save_steps=10 if by_steps else None,
                                          save_secs=None if by_steps else 3,
                                          listeners=[listener]),
            hooks_lib.SummarySaverHook(save_steps=5 if by_steps else None,
                                       save_secs=None if by_steps else 2,
                                       summary_writer=writer,
                                       summary_op=tf.summary.merge_all()),
            hooks_lib.StepCounterHook(every_n_steps=9 if by_steps else None,
                                      every_n_secs=None if by_steps else 1.5,
                                      summary_writer=counter_writer),
            hooks_lib.NanTensorHook(loss, fail_on_nan_loss=False),
        ]
        if user_hook == "last":
            hooks.append(watch)
        results = []
        fetches = (train, loss)  # one tuple: what the flat path repeats
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop() and len(results) < 200:  # a stop lost: no hang
                value = sess.run(fetches)
                results.append((int(value[0]), str(float(value[1]))))  # NaN == NaN
            final = int(sess._tf_sess().run(step))
    return {"final": final, "results": results, "logged": logged,
            "summaries": writer.events, "counter": [s for _, *s in counter_writer.events],
            "saves": listener.saves, "watched": watch.seen}


@pytest.mark.parametrize("case", [
    {"last_step": 57},
    {"last_step": 1},
    {"last_step": 40, "nan_at": 23},
    {"last_step": 45, "stall_every": 4},
    {"last_step": 60, "stop_at": 33},
])
def test_flat_path_does_what_the_layered_path_does(tmp_path, monkeypatch, counted, case,
                                                   caplog):
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        flat = _train(str(tmp_path / "a"), **case)
        warnings_flat = [r.getMessage()[:100] for r in caplog.records]
        taken = dict(counted)
        caplog.clear()
        with monkeypatch.context() as m:
            _layered_only(m)
            layered = _train(str(tmp_path / "b"), **case)
        warnings_layered = [r.getMessage()[:100] for r in caplog.records]
    assert flat == layered
    assert warnings_flat == warnings_layered
    runs = len(flat["results"])
    if runs > 20:  # most runs were flat, the others are the steps a hook acted on
        assert taken["flat"] > runs // 2 and taken["flat"] + taken["layered"] == runs
    if "stop_at" in case:  # stopped right after the run that requested it
        assert flat["watched"][-1] == case["stop_at"] and flat["final"] == case["stop_at"]
    if "nan_at" in case:
        assert flat["final"] == case["nan_at"] + 1


@pytest.mark.parametrize("case", [
    {"last_step": 57},
    {"last_step": 2},
    {"last_step": 40, "nan_at": 23},
    {"last_step": 45, "stall_every": 4},
])
def test_without_user_hooks_quiet_runs_are_recorded_in_one_call(tmp_path, monkeypatch,
                                                                counted, case, caplog):
    """With only built-in hooks (an Estimator's case), a quiet flat run is recorded by
    `HookSchedule.record_quiet` alone; the hooks do what they do on the layered path."""
    from flowgraph.train.hook_schedule import HookSchedule

    recorded = []
    real_record = HookSchedule.record_quiet

    def record_quiet(self, values, getters):
        result = real_record(self, values, getters)
        recorded.append(result)
        return result

    monkeypatch.setattr(HookSchedule, "record_quiet", record_quiet)
    with caplog.at_level(logging.WARNING, logger="tensorflow"):
        flat = _train(str(tmp_path / "a"), user_hook=None, **case)
        warnings_flat = [r.getMessage()[:100] for r in caplog.records]
        caplog.clear()
        with monkeypatch.context() as m:
            _layered_only(m)
            layered = _train(str(tmp_path / "b"), user_hook=None, **case)
        warnings_layered = [r.getMessage()[:100] for r in caplog.records]
    assert flat == layered
    assert warnings_flat == warnings_layered
    runs = len(flat["results"])
    if runs > 20:  # hooks act every 5-10 steps here; the run after one goes the long way
        assert recorded.count(True) >= (runs // 4 if len(case) == 1 else 1)
        assert counted["flat"] + counted["layered"] == 2 * runs  # both trainings


@pytest.mark.parametrize("user_hook", ["first", "last"])
def test_time_triggered_hooks_act_on_the_same_steps(tmp_path, monkeypatch, counted,
                                                    user_hook):
    """A clock moved on inside a user hook's after_run: the hooks timed in seconds fire
    on the same runs with and without the flat path, whether they come after the user
    hook (checked at their turn) or before it (the run is recorded before it is
    called, an Estimator's order)."""
    def train():
        clock = [1000.0]
        with monkeypatch.context() as m:
            m.setattr("time.time", lambda: clock[0])
            return _train(str(tmp_path / str(len(runs))), last_step=60, clock=clock,
                          user_hook=user_hook)

    runs = []
    runs.append(train())
    assert counted["flat"] > 10
    with monkeypatch.context() as m:
        _layered_only(m)
        runs.append(train())
    assert runs[0] == runs[1]
    assert len(runs[0]["logged"]) > 5 and len(runs[0]["saves"]) > 3


def test_a_due_hook_is_never_skipped(counted):
    """A StopAtStepHook due after run 25 ends the loop there, and a logging hook runs
    every 10 runs, while all the runs between are flat."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        logged = []
        hooks = [tf.train.StopAtStepHook(last_step=25),
                 tf.train.LoggingTensorHook({"step": step}, every_n_iter=10,
                                            formatter=lambda v: logged.append(int(v["step"]))
                                            or "")]
        with tf.train.MonitoredSession(hooks=hooks) as sess:
            n = 0
            while not sess.should_stop():
                sess.run(train)
                n += 1
    assert n == 25
    assert len(logged) == 3 and np.diff(logged).tolist() == [10, 10]  # runs 0, 10, 20
    assert counted["flat"] >= 20


def _preempted_once(ckpt_dir):
    """Five runs, a preemption on the sixth (retried on a new session that restores
    the checkpoint of step 4), three more; the values and the sessions created."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        created = []

        class Created(tf.train.SessionRunHook):
            def after_create_session(self, session, coord):
                created.append(session)

        hooks = [_Watch(step), Created(),
                 tf.train.CheckpointSaverHook(ckpt_dir, save_steps=4)]
        creator = tf.train.ChiefSessionCreator(checkpoint_dir=ckpt_dir)
        with tf.train.MonitoredSession(session_creator=creator, hooks=hooks) as sess:
            values = [int(sess.run(train)) for _ in range(5)]
            raw = created[-1]
            raw.run = _fail_once(raw.run, tf.errors.AbortedError(None, None, "ps restarted"))
            values += [int(sess.run(train)) for _ in range(4)]
        assert raw._closed
    return values, len(created)


def test_preemption_on_a_flat_step_recreates_the_session(tmp_path, monkeypatch, counted):
    flat = _preempted_once(str(tmp_path / "a"))
    assert counted["flat"] >= 5
    with monkeypatch.context() as m:
        _layered_only(m)
        layered = _preempted_once(str(tmp_path / "b"))
    assert flat == layered == ([1, 2, 3, 4, 5, 5, 6, 7, 8], 2)


def test_preemption_on_a_flat_step_without_recovery_raises(counted):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        with pytest.raises(tf.errors.UnavailableError):
            with tf.train.SingularMonitoredSession(hooks=[_Watch(step)]) as sess:
                for _ in range(4):
                    sess.run(train)
                raw = sess.raw_session()
                raw.run = _fail_once(raw.run, tf.errors.UnavailableError(None, None, "gone"))
                sess.run(train)
    assert counted["flat"] >= 2


def test_a_thread_preemption_replaces_the_run_error_and_is_recovered(counted):
    """As _CoordinatedSession.run: a run that fails while a thread has reported a
    preemption error raises that error instead, and the session is recreated."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        watch = _Watch(step)
        with tf.train.MonitoredSession(hooks=[watch]) as sess:
            for _ in range(4):
                sess.run(train)
            before = dict(counted)
            old_coord = watch.coord
            old_coord.request_stop(tf.errors.AbortedError(None, None, "worker lost"))
            raw = sess._tf_sess()
            raw.run = _fail_once(raw.run, ValueError("input broke"))
            # recovered: a new session, initialized again (no checkpoint), runs it
            assert int(sess.run(train)) == 1
            assert watch.coord is not old_coord and raw._closed
            assert not sess.should_stop()
        # tried flat, failed there, run again by the recoverable layer
        assert counted["tried"] == before["tried"] + 1
        assert counted["flat"] == before["flat"]
        assert counted["layered"] == before["layered"] + 1


def test_a_thread_error_surfaces_in_should_stop_after_flat_steps(counted):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)
        watch = _Watch(step)
        with pytest.raises(ValueError, match="reader thread"):
            with tf.train.MonitoredSession(hooks=[watch]) as sess:
                for _ in range(5):
                    sess.run(train)
                assert counted["flat"] >= 3 and not sess.should_stop()
                watch.coord.request_stop(ValueError("reader thread failed"))
                sess.should_stop()


def test_a_coordinator_stop_ends_the_loop(counted):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        train = tf.assign_add(step, 1)

        class StopAt(_Watch):
            def after_run(self, run_context, run_values):
                super().after_run(run_context, run_values)
                if self.seen[-1] == 12:  # the 12th run
                    self.coord.request_stop()  # as a queue runner at the end of its input

        watch = StopAt(step)
        with tf.train.MonitoredSession(hooks=[watch]) as sess:
            while not sess.should_stop():
                sess.run(train)
    assert watch.seen[-1] == 12
    assert counted["flat"] >= 9


def test_anything_else_takes_the_layered_path(counted):
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.int64, [])
        train = tf.assign_add(step, 1)
        fed = tf.assign_add(step, x)
        with tf.train.MonitoredSession(hooks=[_Watch(step)]) as sess:
            for _ in range(3):
                sess.run(train)
            flat = counted["flat"]
            sess.run(fed, feed_dict={x: 2})
            sess.run(train, options=tf.RunOptions(), run_metadata=tf.RunMetadata())
            sess.run([train])  # a list can change between runs: never flat
            sess.run([train])
            sess.run((train,))
            sess.run((train,))  # another tuple each time: layered too
            assert counted["flat"] == flat
            assert int(sess.run(train)) == 11  # layered: the last quiet run was another
            assert int(sess.run(train)) == 12
        assert counted["flat"] == flat + 1


def test_a_hook_with_before_run_disables_the_flat_path(counted):
    class Before(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return None

    with tf.Graph().as_default():
        train = tf.assign_add(tf.train.get_or_create_global_step(), 1)
        with tf.train.MonitoredSession(hooks=[Before()]) as sess:
            for _ in range(5):
                sess.run(train)
    assert counted["flat"] == 0 and counted["layered"] == 5


def test_estimator_trains_the_same_with_and_without_the_flat_path(tmp_path, monkeypatch,
                                                                  counted):
    from flowgraph import estimators

    rng = np.random.RandomState(0)
    x = rng.rand(64, 3).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32)).reshape(-1, 1)

    def model_fn(features, labels, mode):
        pred = tf.layers.dense(features, 1)
        loss = tf.reduce_mean(tf.square(pred - labels))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            loss, global_step=tf.train.get_global_step())
        return estimators.EstimatorSpec(mode, loss=loss, train_op=train)

    def train(model_dir):
        config = estimators.RunConfig(model_dir=model_dir, tf_random_seed=3,
                                      save_checkpoints_steps=40, log_step_count_steps=25)
        est = estimators.Estimator(model_fn, config=config)
        fn = estimators.inputs.numpy_input_fn(x, y, batch_size=16, num_epochs=None,
                                              shuffle=False)
        est.train(fn, steps=120)
        return est.get_variable_value("dense/kernel"), est.latest_checkpoint()

    kernel, ckpt = train(str(tmp_path / "flat"))
    assert counted["flat"] > 100
    with monkeypatch.context() as m:
        _layered_only(m)
        kernel_layered, ckpt_layered = train(str(tmp_path / "layered"))
    np.testing.assert_array_equal(kernel, kernel_layered)
    assert ckpt.endswith("model.ckpt-120") and ckpt_layered.endswith("model.ckpt-120")


def test_docstring_examples():
    result = doctest.testmod(flat_run, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def _fail_once(run, error):
    """`run`, failing with `error` on its first call."""
    state = {"failed": False}

    def failing(*args, **kwargs):
        if not state["failed"]:
            state["failed"] = True
            raise error
        return run(*args, **kwargs)

    return failing

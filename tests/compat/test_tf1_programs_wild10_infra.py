"""TF1 training-infrastructure programs from the wild, sweep 10 (session 20).

The programs: ``MonitoredTrainingSession`` loops with every built-in hook (stop, NaN,
logging with a formatter, feed function, checkpoint saving with listeners, final ops,
summary saving, step counting, profiling, global-step waiting), ``SingularMonitoredSession``
with image/audio/text summaries merged from a collection, ``Saver`` edge cases
(renaming dicts, sharded, ``keep_checkpoint_every_n_hours``, a ``latest_filename`` of
its own, ``checkpoint_exists``, ``get_checkpoint_mtimes``, subset restores and their
errors), ``import_meta_graph`` then training on through collections, SavedModels with
several meta graphs, assets and a vocabulary table, and profiling scripts that turn
``RunMetadata`` into a Chrome trace with ``timeline.Timeline``.

Classes of discrepancy found (TensorFlow 2.15's printed values inline):

- ``CheckpointSaverHook`` did not write the graph and a meta graph (with the saver's
  def) to the event file after the session was made, as TensorFlow does;
- ``import_meta_graph`` of a ``.meta`` without a saver def left out the old saver's
  nodes (with a warning naming them as missing ops); TensorFlow imports every node;
- ``saved_model.loader.load`` restored only the variables' collections: user
  collections, losses, table initializers, the main op and the assets were lost;
- ``SavedModelBuilder`` wrote ``saved_model_assets`` as a node list, not TF1's
  ``Any``-wrapped ``AssetFileDef`` list; the unknown-tags error had other words;
- ``index_table_from_file`` refused a string tensor as the vocabulary file;
- traced step stats had no ``output`` (dtype, shape, bytes per output), their
  ``all_start_nanos`` were not since the epoch, labels did not name the inputs, and
  ``Timeline`` wrote another layout (no ``Allocators``/``Tensors`` processes, lanes,
  dataflow arrows, tensor objects or memory counters, no ``analyze_step_stats``).
"""

import glob
import json
import os
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.event_messages import TensorShapeProto
from flowgraph.python.client import timeline
from flowgraph.runtime.config import (
    AllocationDescription,
    DeviceStepStats,
    NodeExecStats,
    NodeOutput,
    StepStats,
    TensorDescription,
)


def _events(path):
    out = []
    for e in tf.train.summary_iterator(path):
        what = e.WhichOneof("what")
        if what == "summary":
            out.append((e.step, [(v.tag, v.WhichOneof("value")) for v in e.summary.value]))
        elif what == "session_log":
            out.append((e.step, "session_log", e.session_log.status))
        else:
            out.append((e.step, what))
    return out


# -- MonitoredTrainingSession with every hook ------------------------------------------------
def test_monitored_training_session_with_every_hook_matches_tensorflow(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.get_variable("w", [3, 1], initializer=tf.constant_initializer(0.1))
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
        gs = tf.train.get_or_create_global_step()
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("w", w)
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        rng = np.random.RandomState(0)
        X = rng.rand(8, 3).astype(np.float32)
        Y = X.sum(1, keepdims=True)
        logged, formatted = [], []

        class Listener(tf.train.CheckpointSaverListener):
            def begin(self):
                logged.append("begin")

            def before_save(self, session, global_step_value):
                logged.append(("before", int(global_step_value)))

            def after_save(self, session, global_step_value):
                logged.append(("after", int(global_step_value)))

            def end(self, session, global_step_value):
                logged.append(("end", int(global_step_value)))

        def formatter(values):
            formatted.append(sorted((k, round(float(v), 4)) for k, v in values.items()))
            return "x"

        final = tf.train.FinalOpsHook(final_ops={"w": w, "loss": loss},
                                      final_ops_feed_dict={x: X, y: Y})
        hooks = [tf.train.StopAtStepHook(last_step=7), tf.train.NanTensorHook(loss),
                 tf.train.LoggingTensorHook({"loss": loss, "step": gs}, every_n_iter=3,
                                            formatter=formatter),
                 tf.train.FeedFnHook(lambda: {x: X, y: Y}),
                 tf.train.CheckpointSaverHook(d, save_steps=3, listeners=[Listener()]),
                 final]
        losses = []
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=d, hooks=hooks, save_summaries_steps=2,
                save_checkpoint_secs=None, log_step_count_steps=4) as sess:
            while not sess.should_stop():
                _, value, step = sess.run([train, loss, gs])
                losses.append((int(step), round(float(value), 5)))
    assert losses == [(1, 2.90093), (2, 0.95485), (3, 0.3317), (4, 0.13186), (5, 0.0675),
                      (6, 0.04649), (7, 0.03937)]
    assert logged == ["begin", ("before", 0), ("after", 0), ("before", 3), ("after", 3),
                      ("before", 6), ("after", 6), ("before", 7), ("after", 7), ("end", 7)]
    assert formatted == [[("loss", 2.9009), ("step", 1.0)], [("loss", 0.1319), ("step", 4.0)],
                         [("loss", 0.0394), ("step", 7.0)]]
    np.testing.assert_allclose(final.final_ops_values["w"].ravel(),
                               [0.5352699756622314, 0.6344699859619141, 0.6276999711990356],
                               rtol=1e-5)
    assert round(float(final.final_ops_values["loss"]), 5) == 0.03669
    assert os.path.basename(tf.train.latest_checkpoint(d)) == "model.ckpt-7"
    state = tf.train.get_checkpoint_state(d)
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-0", "model.ckpt-3", "model.ckpt-6", "model.ckpt-7"]
    assert os.path.exists(os.path.join(d, "graph.pbtxt"))
    (events,) = glob.glob(os.path.join(d, "events.out.tfevents.*"))
    # TensorFlow: the cached writer's graph and meta graph, then the CheckpointSaverHook's
    summaries = [("loss_1", "simple_value"), ("w_1", "histo")]
    assert _events(events) == [
        (0, "file_version"), (0, "graph_def"), (0, "meta_graph_def"), (0, "graph_def"),
        (0, "meta_graph_def"), (0, "session_log", 3), (1, "session_log", 1), (1, summaries),
        (3, summaries), (3, "session_log", 3), (5, [("global_step/sec", "simple_value")]),
        (5, summaries), (6, "session_log", 3), (7, summaries)]


def test_checkpoint_saver_hook_writes_a_meta_graph_holding_its_saver(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(1.0, name="v")
        tf.train.get_or_create_global_step()
        saver = tf.train.Saver(name="my_saver")
        hook = tf.train.CheckpointSaverHook(str(tmp_path), save_steps=10, saver=saver,
                                            save_graph_def=False)
        with tf.train.SingularMonitoredSession(hooks=[hook]):
            pass
    (events,) = glob.glob(str(tmp_path / "events.out.tfevents.*"))
    metas = [e.meta_graph_def for e in tf.train.summary_iterator(events)
             if e.WhichOneof("what") == "meta_graph_def"]
    assert len(metas) == 2  # the writer's (without a saver), then the hook's
    last = tf.MetaGraphDef.FromString(metas[-1])
    assert last.saver_def.restore_op_name == "my_saver/restore_all"
    assert not os.path.exists(tmp_path / "graph.pbtxt")  # save_graph_def=False: no file


def _square_model():
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(2.0, name="w")
    loss = tf.square(w - 5.0, name="loss")
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
    return gs, loss, train


def test_run_step_fn_scaffold_init_fn_nan_and_at_end_hooks_as_tensorflow(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        gs, loss, train = _square_model()
        init_calls, seen = [], []
        scaffold = tf.train.Scaffold(
            init_fn=lambda scaffold, sess: init_calls.append(type(scaffold).__name__),
            saver=tf.train.Saver(max_to_keep=2))
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=d, scaffold=scaffold, save_checkpoint_steps=2,
                save_summaries_steps=None, save_summaries_secs=None,
                hooks=[tf.train.StopAtStepHook(num_steps=5)],
                log_step_count_steps=None) as sess:
            def step_fn(step_context):
                step_context.run_with_hooks(train)
                step = step_context.session.run(gs)
                seen.append(int(step))
                if step == 3:
                    step_context.request_stop()
                return step
            while not sess.should_stop():
                result = sess.run_step_fn(step_fn)
        assert (init_calls, seen, result) == (["Scaffold"], [1, 2, 3], 2)
    assert sorted(f for f in os.listdir(d) if f.endswith("index")) == [
        "model.ckpt-2.index", "model.ckpt-3.index"]
    with tf.Graph().as_default():
        gs, loss, train = _square_model()
        logged = []
        nan_hook = tf.train.NanTensorHook(tf.sqrt(-loss - 1.0), fail_on_nan_loss=False)
        log_hook = tf.train.LoggingTensorHook(
            [loss, "w:0"], every_n_iter=100, at_end=True,
            formatter=lambda v: logged.append(sorted(
                (getattr(k, "name", k), round(float(x), 4)) for k, x in v.items())) or "")
        ran = 0
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=d, hooks=[tf.train.StopAtStepHook(num_steps=2), nan_hook,
                                         log_hook],
                save_summaries_steps=None, save_summaries_secs=None,
                log_step_count_steps=None, save_checkpoint_secs=None) as sess:
            assert sess.run(gs) == 3  # restored; NaN: a stop is requested, no error
            while not sess.should_stop():
                sess.run(train)
                ran += 1
        assert ran == 0
        assert logged == [[("loss:0", 2.3593), ("w:0", 3.464)]] * 2  # first step, and at end
    with tf.Graph().as_default():
        gs, loss, train = _square_model()
        creator = tf.train.ChiefSessionCreator(checkpoint_dir=d)
        hooks = [tf.train.NanTensorHook(tf.constant(float("nan")))]
        with pytest.raises(tf.train.NanLossDuringTrainingError,
                           match=r"NaN loss during training\."):
            with tf.train.MonitoredSession(session_creator=creator, hooks=hooks) as sess:
                sess.run(gs)
        for make, message in [
                (lambda: tf.train.StopAtStepHook(),
                 "One of num_steps or last_step must be specified."),
                (lambda: tf.train.CheckpointSaverHook(d),
                 "Either every_secs or every_steps should be provided."),
                (lambda: tf.train.LoggingTensorHook([loss]),
                 "either at_end and/or exactly one of every_n_iter and every_n_secs must be "
                 "provided."),
                (lambda: tf.train.SummarySaverHook(save_steps=1),
                 "Exactly one of scaffold or summary_op must be provided.")]:
            with pytest.raises(ValueError) as info:
                make()
            assert str(info.value) == message


# -- SingularMonitoredSession, summaries of every kind ---------------------------------------
def test_singular_monitored_session_with_summary_hooks_matches_tensorflow(tmp_path):
    sd, pd = str(tmp_path / "sum"), str(tmp_path / "prof")
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        gs = tf.train.get_or_create_global_step()
        x = tf.random_normal([4, 6, 6, 3], seed=1, name="img")
        v = tf.Variable(tf.truncated_normal([3, 2], seed=2), name="v")
        loss = tf.reduce_mean(tf.square(tf.tensordot(x, v, 1)), name="l")
        s_img = tf.summary.image("imgs", x, max_outputs=2, collections=["extra"])
        s_aud = tf.summary.audio("aud", tf.reshape(x[:, :, :, 0], [4, 36]), 8000,
                                 max_outputs=1, collections=["extra"])
        s_txt = tf.summary.text("txt", tf.constant(["hello", "world"]), collections=["extra"])
        s_sc = tf.summary.scalar("loss", loss)
        merged = tf.summary.merge_all(key="extra")
        assert (merged.op.type, merged.name) == ("MergeSummary", "Merge/MergeSummary:0")
        assert [i.name for i in merged.op.inputs] == ["imgs:0", "aud:0", "txt:0"]
        assert (s_img.op.type, s_aud.op.type, s_txt.op.type, s_sc.op.type) == (
            "ImageSummary", "AudioSummaryV2", "TensorSummaryV2", "ScalarSummary")
        assert [i.name for i in s_txt.op.inputs] == [
            "txt/tag:0", "Const_1:0", "txt/serialized_summary_metadata:0"]
        train = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=gs)
        hooks = [tf.train.StopAtStepHook(num_steps=6),
                 tf.train.SummarySaverHook(save_steps=3, output_dir=sd,
                                           summary_op=[merged, s_sc]),
                 tf.train.StepCounterHook(every_n_steps=2, output_dir=sd),
                 tf.train.ProfilerHook(save_steps=4, output_dir=pd, show_memory=False),
                 tf.train.GlobalStepWaiterHook(wait_until_step=0)]
        values = []
        with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
            assert type(sess.raw_session()).__name__ == "Session"
            while not sess.should_stop():
                values.append(round(float(sess.run(loss)), 5))
                sess.run(train)
    assert values == [2.98196, 3.11893, 2.7232, 2.39432, 2.48059, 2.119]
    # Two traces (TensorFlow names them by a global step its hook reads racily)
    traces = sorted(glob.glob(os.path.join(pd, "timeline-*.json")))
    assert len(traces) == 2
    with open(traces[0]) as f:
        trace = json.load(f)
    assert sorted(trace) == ["traceEvents"]
    assert {e["ph"] for e in trace["traceEvents"]} >= {"M", "X"}
    (events,) = glob.glob(os.path.join(sd, "events*"))
    records = []
    for e in tf.train.summary_iterator(events):
        if e.WhichOneof("what") != "summary":
            records.append((e.step, e.WhichOneof("what")))
            continue
        out = []
        for val in e.summary.value:
            kind = val.WhichOneof("value")
            extra = ""
            if kind == "image":
                extra = (val.image.height, val.image.width, val.image.colorspace)
            if kind == "audio":
                extra = (val.audio.sample_rate, val.audio.num_channels,
                         val.audio.length_frames, val.audio.content_type)
            if kind == "tensor":
                extra = (val.tensor.dtype, [d.size for d in val.tensor.tensor_shape.dim],
                         val.metadata.plugin_data.plugin_name)
            out.append((val.tag, kind, extra))
        records.append((e.step, out))
    extra = [("imgs/image/0", "image", (6, 6, 3)), ("imgs/image/1", "image", (6, 6, 3)),
             ("aud/audio", "audio", (8000.0, 1, 36, "audio/wav"))]
    first = [*extra, ("txt", "tensor", (7, [2], "text"))]
    later = [*extra, ("txt", "tensor", (7, [2], ""))]
    scalar = [("loss", "simple_value", "")]
    rate = [("global_step/sec", "simple_value", "")]
    assert records == [
        (0, "file_version"), (0, "graph_def"), (0, "meta_graph_def"), (0, "session_log"),
        (0, first), (0, scalar), (2, later), (2, scalar), (2, rate), (4, later), (4, scalar),
        (4, rate), (6, later), (6, scalar), (6, rate)]


# -- Supervisor with app flags, and its services --------------------------------------------
def test_app_flags_main_with_a_supervisor_writes_tensorflows_events(tmp_path):
    flags = tf.app.flags
    flag_values = flags.FlagValues()
    flags.DEFINE_integer("steps", 6, "steps", flag_values=flag_values)
    flags.DEFINE_float("lr", 0.5, "learning rate", flag_values=flag_values)
    flags.DEFINE_boolean("fake", True, "fake data", flag_values=flag_values)
    flags.DEFINE_list("layers", ["4", "2"], "sizes", flag_values=flag_values)
    flags.DEFINE_enum("opt", "sgd", ["sgd", "adam"], "optimizer", flag_values=flag_values)
    rest = flag_values(["prog", "--steps=5", "--layers=8,3,1", "--opt=adam", "--nofake",
                        "extra"])
    assert rest[1:] == ["extra"]
    assert (flag_values.steps, flag_values.lr, flag_values.fake, flag_values.layers,
            flag_values.opt) == (5, 0.5, False, ["8", "3", "1"], "adam")
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        x = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2))
        w = tf.Variable(tf.ones([2, 1]), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
        gs = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(flag_values.lr / 100).minimize(
            loss, global_step=gs)
        tf.summary.scalar("loss", loss)
        merged = tf.summary.merge_all()
        sv = tf.train.Supervisor(logdir=logdir, global_step=gs, save_model_secs=0,
                                 save_summaries_secs=0, summary_op=None)
        assert (sv.is_chief, sv.global_step.name, sv.summary_op, type(sv.saver).__name__,
                sv.save_path) == (True, "global_step:0", None, "Saver",
                                  os.path.join(logdir, "model.ckpt"))
        with sv.managed_session() as sess:
            for i in range(flag_values.steps):
                _, value = sess.run([train, loss])
                if i == 2:
                    sv.summary_computed(sess, sess.run(merged))
            assert (round(float(value), 4), sess.run(gs)) == (5.6475, 5)
            sv.saver.save(sess, sv.save_path, global_step=gs)
        assert sv.should_stop()
    (events,) = glob.glob(os.path.join(logdir, "events*"))
    # TensorFlow: the graph once the session is ready, START at the global step, STOP at 0
    assert [(e.step, e.WhichOneof("what")) for e in tf.train.summary_iterator(events)] == [
        (0, "file_version"), (0, "graph_def"), (0, "meta_graph_def"), (0, "session_log"),
        (3, "summary"), (0, "session_log")]
    assert "graph.pbtxt" in os.listdir(logdir)
    with tf.Graph().as_default():
        w = tf.Variable(tf.zeros([2, 1]), name="w")
        gs = tf.train.get_or_create_global_step()
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, summary_op=None)
        with sv.managed_session() as sess:
            np.testing.assert_allclose(sess.run(w).ravel(), [0.5327730774879456,
                                                             0.39837855100631714])
            assert sess.run(gs) == 5


def test_supervisor_services_start_right_away_and_log_to_the_event_file(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        w = tf.Variable(3.0, name="w")
        gs = tf.train.get_or_create_global_step()
        loss = tf.square(w, name="loss")
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        tf.summary.scalar("loss", loss)
        sv = tf.train.Supervisor(logdir=d, save_summaries_secs=60, save_model_secs=60)
        with sv.managed_session() as sess:
            time.sleep(0.3)
            for _ in range(3):
                sess.run(train)
            assert sorted(f for f in os.listdir(d) if f.startswith("model")) == [
                "model.ckpt-0.data-00000-of-00001", "model.ckpt-0.index", "model.ckpt-0.meta"]
    (events,) = glob.glob(os.path.join(d, "events*"))
    out = []
    for e in tf.train.summary_iterator(events):
        kind = e.WhichOneof("what")
        if kind == "summary":
            out.append((e.step, [v.tag for v in e.summary.value]))
        elif kind == "session_log":
            out.append((e.step, "log", e.session_log.status,
                        os.path.basename(e.session_log.checkpoint_path)))
        else:
            out.append((e.step, kind))
    assert out == [(0, "file_version"), (0, "graph_def"), (0, "meta_graph_def"),
                   (0, "log", 1, ""), (0, ["loss_1"]), (0, ["global_step/sec"]),
                   (0, "log", 3, "model.ckpt"), (0, "log", 2, "")]
    metas = [e.meta_graph_def for e in tf.train.summary_iterator(events)
             if e.WhichOneof("what") == "meta_graph_def"]
    assert tf.MetaGraphDef.FromString(metas[0]).saver_def.restore_op_name == "save/restore_all"
    with tf.Graph().as_default():
        tf.Variable(1.0)
        sv = tf.train.Supervisor(logdir=None)
        sess = sv.prepare_or_wait_for_session()
        assert sv.start_standard_services(sess) is None  # TensorFlow: a warning, nothing
        sv.stop()
        sess.close()


def test_looper_thread_runs_its_target_right_away():
    coord = tf.train.Coordinator()
    calls = []
    looper = tf.train.LooperThread.loop(coord, 30.0, lambda: calls.append(1))
    deadline = time.time() + 5
    while not calls and time.time() < deadline:
        time.sleep(0.01)
    coord.request_stop()
    coord.join([looper])
    assert calls == [1]  # TensorFlow: the first call when the thread starts


# -- Saver edge cases ------------------------------------------------------------------------
def test_saver_renames_shards_own_state_files_and_subset_restores(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("enc"):
            a = tf.get_variable("a", [2, 3], initializer=tf.constant_initializer(1.5))
            b = tf.get_variable("b", [3], initializer=tf.constant_initializer(-2.0),
                                dtype=tf.float64)
        with tf.variable_scope("dec"):
            c = tf.get_variable("c", [4], initializer=tf.constant_initializer([1, 2, 3, 4]),
                                dtype=tf.int32)
        gs = tf.train.get_or_create_global_step()
        inc = tf.assign_add(gs, 5)
        s1 = tf.train.Saver({"encoder/alpha": a, "encoder/beta": b, "step": gs},
                            max_to_keep=2, sharded=True)
        s2 = tf.train.Saver([c], keep_checkpoint_every_n_hours=0.0001, max_to_keep=1,
                            save_relative_paths=True, filename="dec_state")
        sd = s1.saver_def
        assert (sd.sharded, sd.max_to_keep, sd.version, sd.save_tensor_name,
                sd.restore_op_name, sd.filename_tensor_name) == (
            True, 2, 2, "save/Identity:0", "save/restore_all", "save/Const:0")
        assert s2.saver_def.save_tensor_name == "save_1/control_dependency:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths = []
            for _ in range(3):
                sess.run(inc)
                paths.append(s1.save(sess, os.path.join(d, "enc"), global_step=gs))
            p2 = s2.save(sess, os.path.join(d, "dec"), global_step=7,
                         latest_filename="dec_state", write_meta_graph=False)
    assert [os.path.basename(p) for p in [*paths, p2]] == ["enc-5", "enc-10", "enc-15", "dec-7"]
    assert [os.path.basename(p) for p in s1.last_checkpoints] == ["enc-10", "enc-15"]
    assert sorted(os.listdir(d)) == [
        "checkpoint", "dec-7.data-00000-of-00001", "dec-7.index", "dec_state",
        "enc-10.data-00000-of-00001", "enc-10.index", "enc-10.meta",
        "enc-15.data-00000-of-00001", "enc-15.index", "enc-15.meta"]
    assert os.path.basename(tf.train.latest_checkpoint(d)) == "enc-15"
    assert os.path.basename(tf.train.latest_checkpoint(d, "dec_state")) == "dec-7"
    assert (tf.train.checkpoint_exists(paths[-1]), tf.train.checkpoint_exists(paths[0]),
            tf.train.checkpoint_exists(os.path.join(d, "nope"))) == (True, False, False)
    mtimes = tf.train.get_checkpoint_mtimes([paths[-1], paths[1], os.path.join(d, "nope")])
    assert len(mtimes) == 2 and all(abs(m - time.time()) < 100 for m in mtimes)
    with open(os.path.join(d, "dec_state")) as f:
        assert f.read() == ('model_checkpoint_path: "dec-7"\n'
                            'all_model_checkpoint_paths: "dec-7"\n')
    assert sorted(tf.train.list_variables(paths[-1])) == [
        ("encoder/alpha", [2, 3]), ("encoder/beta", [3]), ("step", [])]
    reader = tf.train.NewCheckpointReader(paths[-1])
    assert sorted((k, v.name) for k, v in reader.get_variable_to_dtype_map().items()) == [
        ("encoder/alpha", "float32"), ("encoder/beta", "float64"), ("step", "int64")]
    assert not reader.has_tensor("enc/a")
    with tf.Graph().as_default():
        a2 = tf.get_variable("a_new", [2, 3])
        gs2 = tf.Variable(0, dtype=tf.int64, name="gstep")
        saver = tf.train.Saver({"encoder/alpha": a2, "step": gs2})
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(d))
            assert sess.run(a2).tolist() == [[1.5] * 3] * 2 and sess.run(gs2) == 15
            with pytest.raises(tf.errors.NotFoundError,
                               match=r"(?s)Restoring from checkpoint failed.*"
                                     r"Key missing not found"):
                tf.train.Saver({"missing": a2}).restore(sess, tf.train.latest_checkpoint(d))
            with pytest.raises(ValueError, match="The passed save_path is not a valid checkpoint"):
                saver.restore(sess, os.path.join(d, "nothing-here"))
        with pytest.raises(ValueError, match="The same saveable will be restored with two names"):
            tf.train.Saver({"x": a2, "y": a2})
        with pytest.raises(ValueError, match="At least two variables have the same name: a_new"):
            tf.train.Saver([a2, a2])


def test_sharded_saver_over_two_devices_writes_one_data_file_per_device(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            a = tf.Variable([1.0, 2.0], name="a")
        with tf.device("/cpu:1"):
            b = tf.Variable([[3]], name="b")
            c = tf.Variable("s", name="c")
        saver = tf.train.Saver(sharded=True, max_to_keep=1)
        assert sorted({(o.type, o.device) for o in g.get_operations()
                       if o.name.startswith("save/") and o.type in (
                           "SaveV2", "RestoreV2", "MergeV2Checkpoints", "ShardedFilename")}) == [
            ("MergeV2Checkpoints", "/device:CPU:0"), ("RestoreV2", "/device:CPU:0"),
            ("SaveV2", "/device:CPU:0"), ("ShardedFilename", "/device:CPU:0")]
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, os.path.join(d, "m"), global_step=3)
            assert sorted(os.listdir(d)) == [
                "checkpoint", "m-3.data-00000-of-00002", "m-3.data-00001-of-00002",
                "m-3.index", "m-3.meta"]
            sess.run(a.assign([0.0, 0.0]))
            saver.restore(sess, path)
            assert (sess.run(a).tolist(), sess.run(b).tolist(), sess.run(c)) == (
                [1.0, 2.0], [[3]], b"s")
    assert sorted(tf.train.list_variables(path)) == [("a", [2]), ("b", [1, 1]), ("c", [])]


def test_moving_averages_restored_for_evaluation_then_frozen(tmp_path):
    d = str(tmp_path)
    rng = np.random.RandomState(1)
    X = rng.rand(8, 3).astype(np.float32)
    Y = X.sum(1, keepdims=True)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.variable_scope("model"):
            w = tf.get_variable("w", [3, 1], initializer=tf.zeros_initializer())
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.losses.mean_squared_error(y, tf.add(tf.matmul(x, w), b, name="pred"))
        gs = tf.train.get_or_create_global_step()
        step = tf.train.GradientDescentOptimizer(0.2).minimize(loss, global_step=gs)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=gs, zero_debias=False)
        with tf.control_dependencies([step]):
            train = ema.apply(tf.trainable_variables())
        assert (ema.average_name(w), ema.average(w).name) == (
            "model/w/ExponentialMovingAverage", "model/w/ExponentialMovingAverage:0")
        assert sorted((k, v.name) for k, v in ema.variables_to_restore().items()) == [
            ("global_step", "global_step:0"), ("model/b/ExponentialMovingAverage", "model/b:0"),
            ("model/w/ExponentialMovingAverage", "model/w:0")]
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                sess.run(train, {x: X, y: Y})
            np.testing.assert_allclose(sess.run(w).ravel(), [0.46268, 0.34445, 0.42636],
                                       atol=1e-5)
            saver.save(sess, os.path.join(d, "m"))
    averaged = [0.4462699890136719, 0.3392699956893921, 0.41220998764038086]
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        with tf.variable_scope("model"):
            w = tf.get_variable("w", [3, 1])
            b = tf.get_variable("b", [1])
        tf.add(tf.matmul(x, w), b, name="pred")
        restore_map = tf.train.ExponentialMovingAverage(0.9).variables_to_restore()
        assert sorted(restore_map) == ["model/b/ExponentialMovingAverage",
                                       "model/w/ExponentialMovingAverage"]
        with tf.Session() as sess:
            tf.train.Saver(restore_map).restore(sess, os.path.join(d, "m"))
            np.testing.assert_allclose(sess.run(w).ravel(), averaged, atol=1e-5)  # (5 places)
            frozen = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                                  ["pred"])
    assert sorted({n.op for n in frozen.node}) == [
        "AddV2", "Const", "Identity", "MatMul", "Placeholder"]
    assert sorted(n.name for n in frozen.node if n.op == "Const") == ["model/b", "model/w"]
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="prefix")
        with tf.Session() as sess:
            np.testing.assert_allclose(
                sess.run("prefix/pred:0", {"prefix/x:0": X[:2]}).ravel(),
                [1.1878900527954102, 0.9801200032234192], atol=1e-5)


# -- import_meta_graph, then training on -----------------------------------------------------
def test_import_meta_graph_trains_on_through_collections(tmp_path, caplog):
    d = str(tmp_path)
    rng = np.random.RandomState(0)
    X = rng.rand(16, 4).astype(np.float32)
    Y = X @ np.array([[1.0], [-2.0], [3.0], [0.5]], np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.device("/cpu:0"):
            w = tf.Variable(tf.random_normal([4, 1], seed=1), name="w")
        b = tf.Variable(0.0, name="b")
        pred = tf.add(tf.matmul(x, w), b, name="pred")
        loss = tf.reduce_mean(tf.square(pred - y), name="loss")
        gs = tf.train.get_or_create_global_step()
        lr = tf.train.exponential_decay(0.1, gs, 10, 0.5, staircase=True)
        train_op = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, global_step=gs,
                                                               name="train")
        tf.add_to_collection("train_op", train_op)
        tf.add_to_collection("inputs", x)
        tf.add_to_collection("inputs", y)
        tf.add_to_collection("outputs", pred)
        tf.add_to_collection("hparams", tf.constant(0.9, name="mom"))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {x: X, y: Y})
            assert round(float(sess.run(loss, {x: X, y: Y})), 5) == 0.98668
            saver.save(sess, os.path.join(d, "m"), global_step=gs)
            mg = tf.train.export_meta_graph(os.path.join(d, "m_limited.meta"),
                                            clear_devices=True,
                                            collection_list=["train_op", "inputs", "outputs"])
            assert sorted(mg.collection_def) == ["inputs", "outputs", "train_op"]
    with tf.Graph().as_default() as g:
        restorer = tf.train.import_meta_graph(os.path.join(d, "m-3.meta"))
        assert sorted(g.get_all_collection_keys()) == [
            "global_step", "hparams", "inputs", "outputs", "train_op", "trainable_variables",
            "variables"]
        train_op = tf.get_collection("train_op")[0]
        x, y = tf.get_collection("inputs")
        assert (train_op.type, x.name, tf.get_collection("outputs")[0].name,
                tf.get_collection("hparams")[0].name) == ("AssignAdd", "x:0", "pred:0", "mom:0")
        assert [v.name for v in tf.global_variables()] == [
            "w:0", "b:0", "global_step:0", "w/Momentum:0", "b/Momentum:0"]
        assert g.get_tensor_by_name("w:0").device == "/device:CPU:0"
        with tf.Session() as sess:
            restorer.restore(sess, tf.train.latest_checkpoint(d))
            for _ in range(12):
                sess.run(train_op, {x: X, y: Y})
            assert round(float(sess.run("loss:0", {x: X, y: Y})), 5) == 0.23553
            assert sess.run(tf.train.get_global_step()) == 15
            assert sess.run("ExponentialDecay:0") == pytest.approx(0.05)
    with tf.Graph().as_default() as g:
        restorer = tf.train.import_meta_graph(os.path.join(d, "m-3.meta"), import_scope="imp",
                                              clear_devices=True)
        assert g.get_tensor_by_name("imp/w:0").device == ""
        with tf.Session() as sess:
            restorer.restore(sess, os.path.join(d, "m-3"))
            np.testing.assert_allclose(sess.run("imp/w:0").ravel(),
                                       [-0.1588, 1.1984, 1.5738, -0.6018], atol=1e-4)
    caplog.clear()
    with tf.Graph().as_default() as g:
        # no saver def in the file: its save/ nodes are plain nodes, all imported
        assert tf.train.import_meta_graph(os.path.join(d, "m_limited.meta")) is None
        assert sorted(g.get_all_collection_keys()) == ["inputs", "outputs", "train_op"]
        assert sorted(o.name for o in g.get_operations() if o.name.startswith("save"))[:6] == [
            "save/Assign", "save/Assign_1", "save/Assign_2", "save/Assign_3", "save/Assign_4",
            "save/Const"]
    assert "left out" not in caplog.text


# -- SavedModels: several meta graphs, assets, collections -----------------------------------
def test_saved_model_with_two_meta_graphs_assets_and_a_table(tmp_path):
    exp = str(tmp_path / "export")
    vocab = str(tmp_path / "vocab.txt")
    with open(vocab, "w") as f:
        f.write("a\nb\nc\n")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        vf = tf.constant(vocab, name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, vf)
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            vf, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), -1)
        words = tf.placeholder(tf.string, [None], name="words")
        ids = table.lookup(words)
        sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        sig2 = tf.saved_model.signature_def_utils.build_signature_def(
            inputs={"w": tf.saved_model.utils.build_tensor_info(words)},
            outputs={"ids": tf.saved_model.utils.build_tensor_info(ids)},
            method_name=tf.saved_model.signature_constants.PREDICT_METHOD_NAME)
        assets = tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)
        assert [t.name for t in assets] == ["vocab_path:0", "vocab_path:0"]
        builder = tf.saved_model.builder.SavedModelBuilder(exp)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.tables_initializer())
            builder.add_meta_graph_and_variables(
                sess, [tf.saved_model.tag_constants.SERVING],
                signature_def_map={"serving_default": sig, "lookup": sig2},
                assets_collection=assets, main_op=tf.tables_initializer(),
                strip_default_attrs=True)
            builder.add_meta_graph(["train", "gpu"], signature_def_map={"t": sig},
                                   assets_collection=assets)
        builder.save(as_text=False)
    assert sorted(os.path.relpath(os.path.join(r, f), exp)
                  for r, _, fs in os.walk(exp) for f in fs) == [
        "assets/vocab.txt", "saved_model.pb", "variables/variables.data-00000-of-00001",
        "variables/variables.index"]
    for tags, keys in ((["serve"], ["lookup", "serving_default"]), (["train", "gpu"], ["t"])):
        with tf.Graph().as_default(), tf.Session() as sess:
            mg = tf.saved_model.loader.load(sess, tags, exp)
            assert sorted(mg.signature_def) == keys
            assert sorted(mg.collection_def) == [
                "asset_filepaths", "saved_model_assets", "saved_model_main_op",
                "table_initializer", "trainable_variables", "variables"]
            # TF1's builder: each AssetFileDef wrapped in an Any
            anys = mg.collection_def["saved_model_assets"].any_list.value
            assert [a.type_url for a in anys] == [
                "type.googleapis.com/tensorflow.AssetFileDef"] * 2
            s = mg.signature_def[keys[-1]]
            assert s.method_name == "tensorflow/serving/predict"
            assert sess.run(s.outputs["y"].name, {s.inputs["x"].name: [[1, 1], [2, 3]]}
                            ).ravel().tolist() == [3.0, 8.0]
            if "lookup" in mg.signature_def:
                lookup = mg.signature_def["lookup"]
                assert sess.run(lookup.outputs["ids"].name,
                                {lookup.inputs["w"].name: ["c", "a", "zz"]}
                                ).tolist() == [2, 0, -1]
            # the collections come back as TensorFlow's loader restores them
            paths = [sess.run(t) for t in tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)]
            # (TensorFlow's constant still names the file that was exported, ../vocab.txt;
            # flowgraph's loader points asset constants into the export's assets/)
            assert [os.path.basename(p.decode()) for p in paths] == ["vocab.txt"] * 2
            assert len(tf.get_collection("saved_model_assets")) == 2
            assert [op.name for op in tf.get_collection(tf.GraphKeys.TABLE_INITIALIZERS)] == [
                "text_file_init/InitializeTableFromTextFileV2"]
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError) as info:
            tf.saved_model.loader.load(sess, ["nope"], exp)
    message = str(info.value)
    assert message.startswith("MetaGraphDef associated with tags 'nope' could not be found in "
                              "SavedModel, with available tags '[{'serve'}, {")
    assert message.endswith("}]'. To inspect available tag-sets in the SavedModel, please use "
                            "the SavedModel CLI: `saved_model_cli`.")
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(exp)


def test_loaded_saved_model_gives_back_user_collections_with_the_import_scope(tmp_path):
    exp = str(tmp_path / "export")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        v = tf.Variable(2.0, name="v")
        y = tf.multiply(x, v, name="y")
        tf.add_to_collection("inputs", x)
        tf.add_to_collection("outputs", y)
        tf.add_to_collection("names", "hello")
        tf.add_to_collection("nums", 3)
        tf.add_to_collection(tf.GraphKeys.LOSSES, y)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = tf.saved_model.builder.SavedModelBuilder(exp)
            builder.add_meta_graph_and_variables(sess, ["serve"])
            builder.save()
    for scope, prefix, name in ((None, "", b"hello"), ("m", "m/", "m/hello")):
        with tf.Graph().as_default() as g, tf.Session() as sess:
            tf.saved_model.loader.load(sess, ["serve"], exp, import_scope=scope)
            assert sorted(g.get_all_collection_keys()) == [
                "inputs", "losses", "names", "nums", "outputs", "trainable_variables",
                "variables"]
            assert [t.name for t in tf.get_collection("inputs")] == [f"{prefix}x:0"]
            assert [t.name for t in tf.get_collection("outputs")] == [f"{prefix}y:0"]
            assert [t.name for t in tf.get_collection(tf.GraphKeys.LOSSES)] == [f"{prefix}y:0"]
            assert tf.get_collection("names") == [name]  # TensorFlow: scoped as a name
            assert tf.get_collection("nums") == [3]
            assert [v.name for v in tf.global_variables()] == [f"{prefix}v:0"]
            out = tf.get_collection("outputs")[0]
            assert sess.run(out, {tf.get_collection("inputs")[0]: [1.0, 3.0]}).tolist() == [
                2.0, 6.0]


def test_index_table_from_file_takes_a_string_tensor(tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_text("x\ny\n")
    with tf.Graph().as_default():
        path = tf.constant(str(vocab), name="vocab_path")
        table = tf.contrib.lookup.index_table_from_file(path, num_oov_buckets=1)
        ids = table.lookup(tf.constant(["y", "x", "q"]))
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            assert sess.run(ids).tolist() == [1, 0, 2]
        with pytest.raises(ValueError, match="vocabulary_file"):
            tf.contrib.lookup.index_table_from_file("")


# -- RunMetadata and timeline ----------------------------------------------------------------
def test_traced_step_stats_describe_each_output_as_tensorflow(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(tf.ones([3, 2]), name="w")
        y = tf.nn.relu(tf.matmul(x, w), name="y")
        parts = tf.split(y, 2, axis=1, name="sp")
        z = tf.add(parts[0], parts[1], name="z")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            md = tf.RunMetadata()
            sess.run(z, {x: [[1, 2, 3], [4, 5, 6]]},
                     options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
            writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
            writer.add_run_metadata(md, "step1", global_step=1)
            with pytest.raises(ValueError,
                               match="The provided tag was already used for this event type"):
                writer.add_run_metadata(md, "step1")
            writer.close()
    stats = {n.node_name: n for d in md.step_stats.dev_stats for n in d.node_stats}
    split = stats["sp"]
    assert split.timeline_label == "sp = Split(sp/split_dim, y)"  # TensorFlow's label
    assert [(o.slot, o.tensor_description.dtype, [d.size for d in o.tensor_description.shape.dim],
             o.tensor_description.allocation_description.requested_bytes,
             o.tensor_description.allocation_description.allocator_name)
            for o in split.output] == [(0, 1, [2, 1], 8, "cpu"), (1, 1, [2, 1], 8, "cpu")]
    assert [(o.slot, [d.size for d in o.tensor_description.shape.dim])
            for o in stats["y"].output] == [(0, [2, 2])]
    for n in stats.values():  # nanoseconds since the epoch, as the microseconds are
        assert abs(n.all_start_nanos // 1000 - n.all_start_micros) < 2
        assert n.all_end_rel_nanos >= 0
    again = tf.RunMetadata()
    again.ParseFromString(md.SerializeToString())
    back = {n.node_name: n for d in again.step_stats.dev_stats for n in d.node_stats}["sp"]
    assert [(o.slot, [d.size for d in o.tensor_description.shape.dim])
            for o in back.output] == [(0, [2, 1]), (1, [2, 1])]
    (events,) = glob.glob(str(tmp_path / "events*"))
    tagged = [e for e in tf.train.summary_iterator(events)
              if e.WhichOneof("what") == "tagged_run_metadata"]
    assert [(e.step, e.tagged_run_metadata.tag) for e in tagged] == [(1, "step1")]
    read = tf.RunMetadata()
    read.ParseFromString(tagged[0].tagged_run_metadata.run_metadata)
    read_split = {n.node_name: n for d in read.step_stats.dev_stats
                  for n in d.node_stats}["sp"]
    assert [(o.slot, o.tensor_description.dtype) for o in read_split.output] == [(0, 1), (1, 1)]
    trace = json.loads(timeline.Timeline(md.step_stats).generate_chrome_trace_format(
        show_memory=True))
    kinds = {e["ph"] for e in trace["traceEvents"]}
    assert {"M", "X", "N", "O", "D", "C"} <= kinds
    (split_event,) = [e for e in trace["traceEvents"]
                      if e["ph"] == "X" and e["args"]["name"] == "sp"]
    assert split_event["args"] == {"name": "sp", "op": "Split", "input0": "sp/split_dim",
                                   "input1": "y"}


CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"


def _out(slot, dims, nbytes, allocator="cpu"):
    shape = TensorShapeProto()
    for size in dims:
        shape.dim.add(size=size)
    return NodeOutput(slot=slot, tensor_description=TensorDescription(
        dtype=1, shape=shape, allocation_description=AllocationDescription(
            requested_bytes=nbytes, allocated_bytes=nbytes, allocator_name=allocator)))


def _node(name, start, dur, label, outputs):
    return NodeExecStats(node_name=name, all_start_micros=start, all_end_rel_micros=dur,
                         op_end_rel_micros=dur, timeline_label=label, output=outputs)


def _step_stats():
    return StepStats(dev_stats=[
        DeviceStepStats(device=CPU0, node_stats=[
            _node("x", 1000, 5, "x = Placeholder()", [_out(0, [2, 3], 24)]),
            _node("w", 1001, 2, "w = VariableV2()", [_out(0, [3, 4], 48)]),
            _node("mm", 1006, 10, "mm = MatMul(x, w)", [_out(0, [2, 4], 32)]),
            _node("sp", 1008, 4, "sp = Split(split_dim, mm)",
                  [_out(0, [1, 4], 16), _out(1, [1, 4], 16)]),
            _node("add", 1020, 3, "add = AddV2(sp, sp:1, ^w)", [_out(0, [1, 4], 16)])]),
        DeviceStepStats(device=CPU1, node_stats=[
            _node("neg", 1021, 2, "neg = Neg(add)", [_out(0, [1, 4], 16, "cpu1")]),
            _node("RecvTensor", 1019, 1, "weird", [])])])


def test_timeline_writes_tensorflows_chrome_trace():
    """The same step stats give TensorFlow's trace event for event (values printed by
    TensorFlow 2.15's ``timeline.Timeline`` on these stats)."""
    stats = _step_stats()
    text = timeline.Timeline(stats).generate_chrome_trace_format(show_memory=True)
    assert len(text.splitlines()) == 611  # indented as TensorFlow's
    events = json.loads(text)["traceEvents"]
    assert [(e["args"]["name"], e["pid"]) for e in events if e["ph"] == "M"] == [
        ("Allocators", 0), (f"{CPU0} Compute", 1), (f"{CPU0} Tensors", 2),
        (f"{CPU1} Compute", 3), (f"{CPU1} Tensors", 4)]
    compact = [(e["ph"], e["name"], e["pid"], e["tid"], e["ts"], e.get("dur", e.get("id")))
               for e in events if e["ph"] not in "MO"]
    assert compact == [
        ("N", "x", 2, 0, 1000, 0), ("N", "w", 2, 1, 1001, 1), ("N", "mm", 2, 0, 1006, 2),
        ("N", "sp", 2, 1, 1008, 3), ("N", "sp:1", 2, 1, 1008, 4), ("N", "add", 2, 0, 1020, 5),
        ("N", "neg", 4, 0, 1021, 6), ("X", "Placeholder", 1, 0, 1000, 5),
        ("X", "VariableV2", 1, 1, 1001, 2), ("X", "MatMul", 1, 0, 1006, 10),
        ("s", "w", 1, 1, 1003, 0), ("t", "w", 1, 0, 1006, 0), ("X", "Split", 1, 1, 1008, 4),
        ("s", "mm", 1, 0, 1016, 1), ("t", "mm", 1, 1, 1008, 1), ("X", "AddV2", 1, 0, 1020, 3),
        ("s", "sp", 1, 1, 1012, 2), ("t", "sp", 1, 0, 1020, 2), ("s", "sp:1", 1, 1, 1012, 3),
        ("t", "sp:1", 1, 0, 1020, 3), ("X", "Neg", 3, 0, 1021, 2), ("s", "add", 1, 0, 1023, 4),
        ("t", "add", 3, 0, 1021, 4), ("X", "RecvTensor", 3, 1, 1019, 1),
        ("D", "x", 2, 0, 1015, 0), ("D", "w", 2, 0, 1015, 1), ("D", "mm", 2, 0, 1016, 2),
        ("D", "sp", 2, 0, 1022, 3), ("D", "sp:1", 2, 0, 1022, 4), ("D", "add", 2, 0, 1023, 5),
        ("D", "neg", 4, 0, 1023, 6), ("C", "cpu", 0, 0, 1000, None),
        ("C", "cpu", 0, 0, 1001, None), ("C", "cpu", 0, 0, 1006, None),
        ("C", "cpu", 0, 0, 1008, None), ("C", "cpu", 0, 0, 1008, None),
        ("C", "cpu", 0, 0, 1015, None), ("C", "cpu", 0, 0, 1015, None),
        ("C", "cpu", 0, 0, 1016, None), ("C", "cpu", 0, 0, 1020, None),
        ("C", "cpu", 0, 0, 1022, None), ("C", "cpu", 0, 0, 1022, None),
        ("C", "cpu", 0, 0, 1023, None), ("C", "cpu1", 0, 0, 1021, None),
        ("C", "cpu1", 0, 0, 1023, None)]
    assert [next(iter(e["args"].values())) for e in events if e["ph"] == "C"] == [
        24, 72, 104, 120, 136, 88, 64, 32, 48, 32, 16, 0, 16, 0]
    (matmul,) = [e for e in events if e["ph"] == "X" and e["name"] == "MatMul"]
    assert (matmul["cat"], matmul["args"]) == (
        "Op", {"name": "mm", "op": "MatMul", "input0": "x", "input1": "w"})
    (snapshot,) = [e for e in events if e["ph"] == "O" and e["name"] == "sp:1"]
    assert snapshot["args"]["snapshot"]["tensor_description"] == (
        "dtype: DT_FLOAT\nshape {\n  dim {\n    size: 1\n  }\n  dim {\n    size: 4\n  }\n}\n"
        "allocation_description {\n  requested_bytes: 16\n  allocated_bytes: 16\n"
        "  allocator_name: cpu\n}\n")
    # As TensorFlow: the lanes were written to the step stats' thread ids
    assert [n.thread_id for n in stats.dev_stats[0].node_stats] == [0, 1, 0, 1, 0]
    plain = json.loads(timeline.Timeline(_step_stats()).generate_chrome_trace_format(
        show_dataflow=False))["traceEvents"]
    assert sorted({e["ph"] for e in plain}) == ["M", "X"]


def test_analyze_step_stats_reports_each_allocators_peak():
    analysis = timeline.Timeline(_step_stats()).analyze_step_stats()
    assert sorted((k, v.timestamp, v.num_bytes, sorted(v.tensors))
                  for k, v in analysis.allocator_maximums.items()) == [
        ("cpu", 1008, 136, ["mm", "sp", "sp:1", "w", "x"]), ("cpu1", 1021, 16, ["neg"])]
    assert analysis.chrome_trace.format_to_string().startswith(
        '{"traceEvents":[{"name":"process_name","ph":"M","pid":0,"args":{"name":"Allocato')
    assert isinstance(analysis, timeline.StepStatsAnalysis)


# -- tf.profiler: the printed reports and the op view ----------------------------------------
_OPTIONS_FLOPS = """
=========================Options=============================
-max_depth                  10000
-min_bytes                  0
-min_peak_bytes             0
-min_residual_bytes         0
-min_output_bytes           0
-min_micros                 0
-min_accelerator_micros     0
-min_cpu_micros             0
-min_params                 0
-min_float_ops              1
-min_occurrence             0
-step                       -1
-order_by                   float_ops
-account_type_regexes       .*
-start_name_regexes         .*
-trim_name_regexes          
-show_name_regexes          .*
-hide_name_regexes          
-account_displayed_op_only  true
-select                     float_ops
-output                     stdout:

==================Model Analysis Report======================

Doc:
"""


def _profiled_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [8, 16], name="x")
        w = tf.Variable(tf.ones([16, 4]), name="w")
        b = tf.Variable(tf.zeros([4]), name="b")
        tf.nn.relu(tf.matmul(x, w) + b, name="y")
        img = tf.placeholder(tf.float32, [2, 8, 8, 3], name="img")
        k = tf.Variable(tf.ones([3, 3, 3, 5]), name="k")
        tf.nn.conv2d(img, k, [1, 1, 1, 1], "SAME", name="conv")
    return g


def test_profiler_prints_tfprofs_reports(capsys):
    g = _profiled_graph()
    builder = tf.profiler.ProfileOptionBuilder
    flops = tf.profiler.profile(g, options=builder.float_operation())
    assert flops.total_float_ops == 35616
    assert capsys.readouterr().out == _OPTIONS_FLOPS + (
        "scope: The nodes in the model graph are organized by their names, which is "
        "hierarchical like filesystem.\n"
        "flops: Number of float operations. Note: Please read the implementation for the "
        "math behind it.\n\n"
        "Profile:\nnode name | # float_ops\n_TFProfRoot (--/35.62k flops)\n"
        "  conv (34.56k/34.56k flops)\n  MatMul (1.02k/1.02k flops)\n  add (32/32 flops)\n\n"
        "======================End of Report==========================\n")
    params = tf.profiler.profile(g)  # TensorFlow's default: the trainable parameters
    assert params.total_parameters == 203
    out = capsys.readouterr().out
    assert "-account_type_regexes       _trainable_variables\n" in out
    assert out.endswith(
        "param: Number of parameters (in the Variable).\n\nProfile:\n"
        "node name | # parameters\n_TFProfRoot (--/203 params)\n  b (4, 4/4 params)\n"
        "  k (3x3x3x5, 135/135 params)\n  w (16x4, 64/64 params)\n\n"
        "======================End of Report==========================\n")
    default = tf.profiler.ProfileOptionBuilder().build()
    assert (default["max_depth"], default["account_displayed_op_only"]) == (100, False)


def test_profiler_op_view_chains_op_types_as_tensorflow(capsys):
    g = _profiled_graph()
    with g.as_default():
        x, w = g.get_tensor_by_name("x:0"), g.get_tensor_by_name("w/read:0")
        tf.matmul(x, w) * 2.0
    builder = tf.profiler.ProfileOptionBuilder
    root = tf.profiler.profile(g, cmd="op", options=builder.float_operation())
    assert capsys.readouterr().out.endswith(
        "Profile:\nnode name | # float_ops\n"
        "Conv2D                   34.56k float_ops (100.00%, 94.24%)\n"
        "MatMul                   2.05k float_ops (5.76%, 5.58%)\n"
        "AddV2                       32 float_ops (0.17%, 0.09%)\n"
        "Mul                         32 float_ops (0.09%, 0.09%)\n\n"
        "======================End of Report==========================\n")

    def chain(node):
        out = []
        while node.children:
            (node,) = node.children
            out.append((type(node).__name__, node.name, node.float_ops, node.total_float_ops,
                        [(n.name, n.float_ops) for n in node.graph_nodes]))
        return out

    assert (type(root).__name__, root.total_float_ops) == ("MultiGraphNodeProto", 36672)
    assert chain(root) == [
        ("MultiGraphNodeProto", "Conv2D", 34560, 36672, [("conv", 34560)]),
        ("MultiGraphNodeProto", "MatMul", 2048, 2112, [("MatMul", 1024), ("MatMul_1", 1024)]),
        ("MultiGraphNodeProto", "AddV2", 32, 64, [("add", 32)]),
        ("MultiGraphNodeProto", "Mul", 32, 32, [("mul", 32)])]
    by_name = tf.profiler.profile(g, cmd="op", options=builder(
        builder.float_operation()).order_by("name").with_empty_output().build())
    assert capsys.readouterr().out == ""
    # by name, the types before the last with flops are kept (their totals count it)
    assert [(n, f, t) for _, n, f, t, _ in chain(by_name)] == [
        ("AddV2", 32, 36672), ("Assign", 0, 36640), ("Const", 0, 36640),
        ("Conv2D", 34560, 36640), ("Identity", 0, 2080), ("MatMul", 2048, 2080),
        ("Mul", 32, 32)]

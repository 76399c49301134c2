"""TF 1.0-1.6 era training infrastructure, sweep 12 (area ``legacy``), run under
TensorFlow 2.15 and flowgraph with the tf-oracle; TensorFlow's printed values are inline.

The programs (2016-2018 tutorial and research-code style): a linear model trained
under ``tf.train.Supervisor`` (``managed_session``, ``should_stop``,
``save_model_secs=0``, ``summary_computed``, ``sv.saver``) and again over a queue
input pipeline (``slice_input_producer``/``batch``) with an ``init_fn`` restoring
pretrained weights and a ``local_init_op``; a small dense net in a
``MonitoredTrainingSession`` with ``checkpoint_dir``, StopAtStep/NanTensor/
LoggingTensor (formatter)/CheckpointSaver (a listener)/FinalOps hooks and a custom
hook, its event file read back with ``summary_iterator``; the checkpoint utilities
(``max_to_keep`` deletion, ``last_checkpoints``, ``checkpoint_exists``,
``get_checkpoint_mtimes``, ``latest_filename``, ``list_variables``,
``load_variable``, ``NewCheckpointReader`` maps, ``update_checkpoint_state``,
``recover_last_checkpoints``); ``export_meta_graph``/``import_meta_graph`` with
``clear_devices``, ``export_scope``, ``import_scope``, collections and
``write_graph``; ``SessionManager`` (``prepare_session``, ``recover_session``,
``wait_for_session``) with the variable helpers (``model_variables``,
``local_variables``, ``report_uninitialized_variables``,
``is_variable_initialized``, ``variables_initializer``); a ``FileWriter`` with
scalar, histogram, image, audio and text summaries, run metadata and a session log;
``ExponentialMovingAverage`` with ``variables_to_restore``; sharded, dict and renamed
Savers with ``keep_checkpoint_every_n_hours`` and ``init_from_checkpoint``; a
``SingularMonitoredSession`` with FeedFn/SummarySaver/Profiler/StepCounter hooks; and the
global step helpers with ``as_saver_def``/``to_proto``/``from_proto``,
``generate_checkpoint_state_proto`` and ``write_graph`` read back as text; relative
paths with padded step numbers in a moved directory (``remove_checkpoint``, a state file
naming a removed checkpoint, ``latest_filename``); and a ``Scaffold`` with an
``init_fn`` and its own Saver, resumed by a second ``MonitoredTrainingSession`` and by a
``ChiefSessionCreator`` from a checkpoint file.

Classes of discrepancy found and fixed (one focused test each below):

* ``NewCheckpointReader(...).get_tensor``, ``load_checkpoint`` readers and
  ``load_variable`` gave a scalar as a 0-d array; TensorFlow gives a NumPy scalar
  (``np.int32``, ``np.float32``, ``np.bool_``; ``bytes`` for a string).
* ``export_meta_graph(export_scope=...)`` dropped every input coming from outside the
  scope, so the scoped graph did not import (``MatMul takes 2 inputs``). TensorFlow
  renames such an input ``$unbound_inputs_<name>``, records it in the graph's
  ``unbound_inputs`` collection (exported with the others), and
  ``import_meta_graph`` raises ValueError ("Graph contains unbound inputs") unless an
  ``input_map`` binds exactly those names; it binds them (``import_graph_def`` accepts
  an ``input_map`` key naming an input the graph def has no node for) and the
  collection is not imported.
* A scoped export wrote a collection whose items all lay outside the scope as an empty
  collection, and kept string items outside it; TensorFlow takes a string item for a
  node name, filters it by the scope, and leaves an emptied collection out.
* ``Saver(saver_def=...)``/``Saver.from_proto`` given the SaverDef of a flowgraph Saver of
  the same graph built a second ``save_1/...`` subgraph; TensorFlow builds no ops and
  drives the named ones (the checkpoints to keep come from the SaverDef).
* ``import_meta_graph`` restored collections in file order; TensorFlow restores
  ``trainable_variables`` first, then the others sorted by key (the order
  ``get_all_collection_keys`` shows).

Left as is (oracle evidence in the report): TensorFlow builds
``report_uninitialized_variables`` as IsVariableInitialized/stack/LogicalNot/
boolean_mask (its tensor is ``report_uninitialized_variables/boolean_mask/GatherV2:0``)
and ``Scaffold.finalize`` as ``group_deps`` init ops and ``concat`` ready ops; flowgraph
keeps its single ``ReportUninitializedVariables`` op (which the distributed runtime
splits by task), so those names differ while the values match. A failed
``import_graph_def`` in TensorFlow still uses up its scope name (the next import gets
``copy_1``); flowgraph checks first and leaves the name free. ``Saver.to_proto()`` is a
``SaverDefProto`` (TensorFlow: ``SaverDef``), with the same fields.
``report_uninitialized_variables([tf.constant(1.0)])`` raises TypeError naming what it
expected (TensorFlow: an AttributeError from deep inside).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf


def _names(paths):
    return [os.path.basename(p) for p in paths]


# -- programs ----------------------------------------------------------------------------
def test_supervisor_linear_regression(tmp_path):
    logdir = str(tmp_path)
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(1)
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        with tf.variable_scope("model"):
            w = tf.get_variable("w", [3, 1],
                                initializer=tf.truncated_normal_initializer(stddev=0.1))
            b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
        gs = tf.train.get_or_create_global_step()
        assert (gs.op.name, str(gs.dtype), gs.shape.as_list()) == (
            "global_step", "<dtype: 'int64_ref'>", [])
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=gs)
        s = tf.summary.scalar("loss", loss)
        h = tf.summary.histogram("w_hist", w)
        merged = tf.summary.merge_all()
        assert (s.op.name, h.op.name, merged.op.name) == ("loss_1", "w_hist",
                                                          "Merge/MergeSummary")
        sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0,
                                 global_step=gs)
        assert type(sv.saver).__name__ == "Saver" and sv.is_chief
        assert (sv.init_op.name, sv.init_op.type) == ("init", "NoOp")
        assert sv._local_init_op.name == "group_deps"
        rng = np.random.RandomState(0)
        X = rng.rand(8, 3).astype(np.float32)
        Y = X.sum(1, keepdims=True)
        losses = []
        with sv.managed_session() as sess:
            while not sv.should_stop() and len(losses) < 5:
                _, lv, step = sess.run([train_op, loss, gs], {x: X, y: Y})
                losses.append((round(float(lv), 5), int(step)))
            sv.summary_computed(sess, sess.run(merged, {x: X, y: Y}))
            sv.saver.save(sess, sv.save_path, global_step=gs)
            w_val = sess.run(w).ravel()
            sv.request_stop()
            assert sv.should_stop()
        assert losses == [(3.27421, 1), (1.07769, 2), (0.37435, 3), (0.14881, 4),
                          (0.07617, 5)]
        np.testing.assert_allclose(w_val, [0.4678, 0.59333, 0.57948], atol=1e-5)
        assert sorted(f for f in os.listdir(logdir) if not f.startswith("events")) == [
            "checkpoint", "graph.pbtxt", "model.ckpt-5.data-00000-of-00001",
            "model.ckpt-5.index", "model.ckpt-5.meta"]
        assert os.path.basename(sv.save_path) == "model.ckpt" and g.finalized


def test_monitored_training_session_hooks_and_events(tmp_path):
    ckdir = str(tmp_path)
    logged = []

    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            logged.append("begin")

        def before_save(self, session, global_step_value):
            logged.append(("before", int(global_step_value)))

        def after_save(self, session, global_step_value):
            logged.append(("after", int(global_step_value)))

        def end(self, session, global_step_value):
            logged.append(("end", int(global_step_value)))

    class Counter(tf.train.SessionRunHook):
        def begin(self):
            self.n = 0
            logged.append("hook_begin")

        def after_create_session(self, session, coord):
            logged.append("created")

        def before_run(self, run_context):
            return tf.train.SessionRunArgs({"loss": loss_t})

        def after_run(self, run_context, run_values):
            self.n += 1
            if self.n == 2:
                logged.append(("loss2", round(float(run_values.results["loss"]), 5)))

        def end(self, session):
            logged.append(("hook_end", self.n))

    with tf.Graph().as_default():
        tf.set_random_seed(42)
        gs = tf.train.get_or_create_global_step()
        x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0)
        y = tf.constant([[1.0], [0.0], [1.0], [0.0]])
        with tf.variable_scope("net"):
            h = tf.layers.dense(x, 4, activation=tf.nn.relu, name="h")
            logits = tf.layers.dense(h, 1, name="out")
        loss_t = tf.losses.sigmoid_cross_entropy(y, logits)
        tf.summary.scalar("loss", loss_t)
        train_op = tf.train.AdamOptimizer(0.01).minimize(loss_t, global_step=gs)
        fmt = lambda d: "L={:.4f} step={}".format(d["loss"], d["gs"])  # noqa: E731
        final = tf.train.FinalOpsHook([loss_t, gs])
        hooks = [tf.train.StopAtStepHook(last_step=7), tf.train.NanTensorHook(loss_t),
                 tf.train.LoggingTensorHook({"loss": loss_t, "gs": gs}, every_n_iter=3,
                                            formatter=fmt),
                 tf.train.CheckpointSaverHook(ckdir, save_steps=3, listeners=[Listener()]),
                 Counter(), final]
        steps = 0
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=ckdir, hooks=hooks, save_checkpoint_secs=None,
                save_summaries_steps=2, log_step_count_steps=None) as sess:
            while not sess.should_stop():
                _, lv = sess.run([train_op, loss_t])
                steps += 1
        assert (steps, round(float(lv), 5)) == (7, 0.65708)
        assert round(float(final.final_ops_values[0]), 5) == 0.65494
        assert final.final_ops_values[1] == 7
        assert logged == ["begin", "hook_begin", ("before", 0), ("after", 0), "created",
                          ("loss2", 0.6732), ("before", 3), ("after", 3), ("before", 6),
                          ("after", 6), ("before", 7), ("after", 7), ("end", 7),
                          ("hook_end", 7)]
        st = tf.train.get_checkpoint_state(ckdir)
        assert _names(st.all_model_checkpoint_paths) == [
            "model.ckpt-0", "model.ckpt-3", "model.ckpt-6", "model.ckpt-7"]
        ev = [f for f in os.listdir(ckdir) if f.startswith("events")]
        assert len(ev) == 1
        tags = []
        for e in tf.train.summary_iterator(os.path.join(ckdir, ev[0])):
            tags += [(e.step, v.tag) for v in e.summary.value]
            if e.HasField("graph_def"):
                tags.append(("graph", e.step))
            if e.HasField("meta_graph_def"):
                tags.append(("meta", e.step))
            if e.HasField("session_log"):
                tags.append(("slog", e.session_log.status, e.step))
        assert tags == [("graph", 0), ("meta", 0), ("graph", 0), ("meta", 0),
                        ("slog", 3, 0), ("slog", 1, 1), (1, "loss"), (3, "loss"),
                        ("slog", 3, 3), (5, "loss"), ("slog", 3, 6), (7, "loss")]


def test_checkpoint_utilities_program(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        with tf.variable_scope("enc"):
            tf.get_variable("emb", [5, 2], initializer=tf.constant_initializer(
                np.arange(10).reshape(5, 2)))
            tf.get_variable("count", [], dtype=tf.int32,
                            initializer=tf.constant_initializer(3))
        with tf.variable_scope("dec"):
            tf.get_variable("w", [2, 3], dtype=tf.float64, initializer=tf.ones_initializer())
        gs = tf.train.get_or_create_global_step()
        inc = tf.assign_add(gs, 1)
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            paths = []
            for _ in range(4):
                s.run(inc)
                paths.append(saver.save(s, os.path.join(d, "model"), global_step=gs))
            assert _names(saver.last_checkpoints) == ["model-3", "model-4"]
            assert [tf.train.checkpoint_exists(p) for p in paths] == [False, False, True,
                                                                      True]
            assert len(tf.train.get_checkpoint_mtimes(saver.last_checkpoints)) == 2
            p2 = saver.save(s, os.path.join(d, "other"), latest_filename="other_ckpt")
            assert os.path.basename(p2) == "other"
    assert sorted(os.listdir(d)) == [
        "checkpoint", "model-4.data-00000-of-00001", "model-4.index", "model-4.meta",
        "other.data-00000-of-00001", "other.index", "other.meta", "other_ckpt"]
    assert os.path.basename(tf.train.latest_checkpoint(d)) == "model-4"
    assert os.path.basename(tf.train.latest_checkpoint(d, latest_filename="other_ckpt")) \
        == "other"
    ck = tf.train.latest_checkpoint(d)
    assert tf.train.list_variables(ck) == [("dec/w", [2, 3]), ("enc/count", []),
                                           ("enc/emb", [5, 2]), ("global_step", [])]
    assert tf.train.load_variable(ck, "enc/emb").tolist() == [
        [0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [6.0, 7.0], [8.0, 9.0]]
    assert tf.train.load_variable(d, "global_step") == 4
    r = tf.train.NewCheckpointReader(ck)
    assert sorted((k, v.name) for k, v in r.get_variable_to_dtype_map().items()) == [
        ("dec/w", "float64"), ("enc/count", "int32"), ("enc/emb", "float32"),
        ("global_step", "int64")]
    assert (r.has_tensor("dec/w"), r.has_tensor("nope")) == (True, False)
    with pytest.raises(tf.errors.NotFoundError):
        r.get_tensor("nope")
    with pytest.raises(tf.errors.NotFoundError):
        tf.train.load_variable(ck, "nope")
    tf.train.update_checkpoint_state(
        d, os.path.join(d, "model-3"),
        all_model_checkpoint_paths=[os.path.join(d, "model-3"), os.path.join(d, "model-4")])
    st = tf.train.get_checkpoint_state(d)
    assert os.path.basename(st.model_checkpoint_path) == "model-3"
    assert _names(st.all_model_checkpoint_paths) == ["model-3", "model-4", "model-3"]
    assert tf.train.latest_checkpoint(os.path.join(d, "nodir")) is None
    with tf.Graph().as_default():
        v = tf.get_variable("enc/emb", [5, 2])
        sv2 = tf.train.Saver({"enc/emb": v}, max_to_keep=3)
        sv2.recover_last_checkpoints([os.path.join(d, "model-3"),
                                      os.path.join(d, "model-4")])
        assert _names(sv2.last_checkpoints) == ["model-4"]
        with tf.Session() as s:
            with pytest.raises(ValueError, match="not a valid checkpoint"):
                sv2.restore(s, os.path.join(d, "model-3"))
            sv2.restore(s, os.path.join(d, "model-4"))
            assert s.run(v).sum() == 45.0
            for i in range(3):
                sv2.save(s, os.path.join(d, "again"), global_step=i)
            assert _names(sv2.last_checkpoints) == ["again-0", "again-1", "again-2"]
    assert sorted(f for f in os.listdir(d) if "index" in f) == [
        "again-0.index", "again-1.index", "again-2.index", "other.index"]


def test_meta_graph_round_trip_program(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default() as g:
        tf.set_random_seed(7)
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [None, 4], name="input")
            with tf.name_scope("tower"):
                w = tf.Variable(tf.random_normal([4, 2], seed=3), name="w")
                b = tf.Variable(tf.zeros([2]), name="b")
                logits = tf.nn.xw_plus_b(x, w, b, name="logits")
            probs = tf.nn.softmax(logits, name="probs")
        tf.add_to_collection("inputs", x)
        tf.add_to_collection("outputs", probs)
        tf.add_to_collection("lr", tf.constant(0.5, name="lr"))
        tf.add_to_collection("names", "hello")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            np.testing.assert_allclose(s.run(w), [[0.9447, -0.9668], [0.8052, 1.3033],
                                                  [0.2149, -0.7347], [0.8828, -0.7745]],
                                       atol=1e-4)
            saver.save(s, os.path.join(d, "m"))
        mg = tf.train.export_meta_graph(os.path.join(d, "cleared.meta"), clear_devices=True)
        assert sorted({n.device for n in mg.graph_def.node}) == [""]
        assert sorted(mg.collection_def.keys()) == [
            "inputs", "lr", "names", "outputs", "trainable_variables", "variables"]
        sub = tf.train.export_meta_graph(export_scope="tower")
        assert sorted(n.name for n in sub.graph_def.node)[:5] == [
            "b", "b/Assign", "b/read", "logits", "logits/MatMul"]
        assert sorted(sub.collection_def.keys()) == [
            "trainable_variables", "unbound_inputs", "variables"]
        tf.train.write_graph(g.as_graph_def(), d, "g.pb", as_text=False)
    with tf.Graph().as_default() as g2:
        s2 = tf.train.import_meta_graph(os.path.join(d, "m.meta"), import_scope="imp")
        assert [o.name for o in g2.get_operations()][:2] == [
            "imp/input", "imp/tower/random_normal/shape"]
        assert [t.name for t in tf.get_collection("inputs")] == ["imp/input:0"]
        assert tf.get_collection("names") == ["imp/hello"]
        assert [v.name for v in tf.global_variables()] == ["imp/tower/w:0", "imp/tower/b:0"]
        with tf.Session() as s:
            s2.restore(s, os.path.join(d, "m"))
            out = s.run("imp/probs:0", {"imp/input:0": np.ones((2, 4))})
        np.testing.assert_allclose(out, [[0.9824, 0.0176]] * 2, atol=1e-4)
    with tf.Graph().as_default() as g3:
        s3 = tf.train.import_meta_graph(os.path.join(d, "cleared.meta"))
        assert sorted({o.device for o in g3.get_operations()}) == ["", "/device:CPU:0"]
        with tf.Session() as s:
            s3.restore(s, tf.train.latest_checkpoint(d))
            out = s.run(tf.get_collection("outputs")[0],
                        {tf.get_collection("inputs")[0]: np.ones((1, 4))})
        np.testing.assert_allclose(out, [[0.9824, 0.0176]], atol=1e-4)
    with tf.Graph().as_default() as g4:
        gd = tf.GraphDef()
        with open(os.path.join(d, "g.pb"), "rb") as f:
            gd.ParseFromString(f.read())
        tf.import_graph_def(gd, name="")
        assert len(g4.get_operations()) == 32
        assert g4.get_tensor_by_name("tower/logits:0").shape.as_list() == [None, 2]


def test_session_manager_and_variable_helpers(tmp_path):
    d = str(tmp_path)

    def build():
        tf.set_random_seed(5)
        with tf.variable_scope("m"):
            w = tf.get_variable("w", [2, 2],
                                initializer=tf.random_uniform_initializer(-1, 1))
            b = tf.get_variable("b", [2], initializer=tf.zeros_initializer(),
                                collections=[tf.GraphKeys.GLOBAL_VARIABLES,
                                             tf.GraphKeys.MODEL_VARIABLES])
            acc = tf.get_variable("acc", [], initializer=tf.zeros_initializer(),
                                  trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
            tf.Variable(0.0, name="tot", collections=[tf.GraphKeys.LOCAL_VARIABLES],
                        trainable=False)
        return w, b, acc, tf.train.get_or_create_global_step()

    with tf.Graph().as_default():
        w, b, acc, gs = build()
        assert [v.name for v in tf.model_variables()] == ["m/b:0"]
        assert [v.name for v in tf.local_variables()] == ["m/acc:0", "m/tot:0"]
        assert [v.name for v in tf.global_variables()] == ["m/w:0", "m/b:0",
                                                           "global_step:0"]
        assert [v.name for v in tf.trainable_variables()] == ["m/w:0", "m/b:0"]
        rep = tf.report_uninitialized_variables()
        assert (rep.dtype, rep.shape.as_list()) == (tf.string, [None])
        init_b = tf.is_variable_initialized(b)
        assert (init_b.name, init_b.dtype) == ("IsVariableInitialized:0", tf.bool)
        vi = tf.variables_initializer([w, b], name="wb_init")
        assert (vi.name, vi.type, tf.variables_initializer([]).type) == ("wb_init", "NoOp",
                                                                        "NoOp")
        li = tf.local_variables_initializer()
        assert (li.name, tf.global_variables_initializer().name) == ("init_1", "init_2")
        sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables(
            tf.global_variables()), local_init_op=li)
        saver = tf.train.Saver()
        with tf.Session() as s:
            assert sorted(s.run(rep).tolist()) == [b"global_step", b"m/acc", b"m/b",
                                                   b"m/tot", b"m/w"]
            s.run(vi)
            assert sorted(s.run(rep).tolist()) == [b"global_step", b"m/acc", b"m/tot"]
            assert s.run(init_b)
        sess = sm.prepare_session("", init_op=tf.global_variables_initializer(),
                                  saver=saver, checkpoint_dir=d)
        sess.run(tf.assign_add(gs, 3))
        sess.run(tf.assign(acc, 2.5))
        np.testing.assert_allclose(sess.run(w), [[-0.63427, 0.37998], [0.34645, -0.09555]],
                                   atol=1e-5)
        saver.save(sess, os.path.join(d, "model.ckpt"), global_step=gs)
        sess.close()
        sess2, ok = sm.recover_session("", saver=saver, checkpoint_dir=d)
        assert (ok, tf.train.global_step(sess2, gs), sess2.run(acc)) == (True, 3, 0.0)
        sess2.close()
        with pytest.raises(tf.errors.DeadlineExceededError,
                           match="Session was not ready after waiting 0 secs"):
            sm.wait_for_session("", max_wait_secs=0.2)
    with tf.Graph().as_default():
        build()
        sm2 = tf.train.SessionManager()
        with pytest.raises(RuntimeError, match="Model is not initialized and no init_op"):
            sm2.prepare_session("", saver=tf.train.Saver(),
                                checkpoint_dir=os.path.join(d, "none"))
        _, ok = sm2.recover_session("", saver=tf.train.Saver(),
                                    checkpoint_dir=os.path.join(d, "none"))
        assert not ok


def _summary_value(v, kind):
    if kind == "simple_value":
        return round(v.simple_value, 4)
    if kind == "histo":
        h = v.histo
        return (round(h.min, 3), round(h.max, 3), h.num, round(h.sum, 3), len(h.bucket))
    if kind == "image":
        return (v.image.height, v.image.width, v.image.colorspace)
    if kind == "audio":
        return (v.audio.sample_rate, v.audio.num_channels, v.audio.length_frames,
                v.audio.content_type)
    return (v.metadata.plugin_data.plugin_name, tf.make_ndarray(v.tensor).tolist())


def test_file_writer_summaries_read_back(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        with tf.name_scope("stats"):
            ss = [tf.summary.scalar("mean", tf.reduce_mean(x)),
                  tf.summary.histogram("values", x),
                  tf.summary.image("img", tf.reshape(x, [-1, 2, 2, 1]), max_outputs=2),
                  tf.summary.audio("snd", x, sample_rate=8000, max_outputs=1),
                  tf.summary.text("note", tf.constant("hello"))]
        assert [s.op.name for s in ss] == ["stats/mean_1", "stats/values", "stats/img",
                                           "stats/snd", "stats/note"]
        assert [s.op.type for s in ss] == ["ScalarSummary", "HistogramSummary",
                                           "ImageSummary", "AudioSummaryV2",
                                           "TensorSummaryV2"]
        merged = tf.summary.merge_all()
        assert tf.summary.merge(ss[:2], name="part").op.name == "part/part"
        writer = tf.summary.FileWriter(d, g)
        with tf.Session() as sess:
            for step in range(2):
                X = np.linspace(0, 1, 8).reshape(2, 4).astype(np.float32) * (step + 1)
                md = tf.RunMetadata()
                summ = sess.run(merged, {x: X}, run_metadata=md, options=tf.RunOptions(
                    trace_level=tf.RunOptions.FULL_TRACE))
                writer.add_summary(summ, step)
                if step == 1:
                    writer.add_run_metadata(md, "step1", global_step=step)
            writer.add_summary(tf.Summary(value=[tf.Summary.Value(
                tag="manual", simple_value=1.5)]), 10)
            writer.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 11)
        writer.close()
    files = [f for f in os.listdir(d) if f.startswith("events.out.tfevents")]
    assert len(files) == 1
    seen = []
    for e in tf.train.summary_iterator(os.path.join(d, files[0])):
        what = e.WhichOneof("what")
        if what != "summary":
            extra = e.tagged_run_metadata.tag if what == "tagged_run_metadata" else (
                e.session_log.status if what == "session_log" else None)
            seen.append((e.step, what, extra))
            continue
        for v in e.summary.value:
            kind = v.WhichOneof("value")
            extra = _summary_value(v, kind)
            seen.append((e.step, v.tag, extra))
    assert seen == [
        (0, "file_version", None), (0, "graph_def", None), (0, "meta_graph_def", None),
        (0, "stats/mean_1", 0.5), (0, "stats/values", (0.0, 1.0, 8.0, 4.0, 16)),
        (0, "stats/img/image/0", (2, 2, 1)), (0, "stats/img/image/1", (2, 2, 1)),
        (0, "stats/snd/audio", (8000.0, 1, 4, "audio/wav")),
        (0, "stats/note", ("text", b"hello")),
        (1, "stats/mean_1", 1.0), (1, "stats/values", (0.0, 2.0, 8.0, 8.0, 17)),
        (1, "stats/img/image/0", (2, 2, 1)), (1, "stats/img/image/1", (2, 2, 1)),
        (1, "stats/snd/audio", (8000.0, 1, 4, "audio/wav")),
        (1, "stats/note", ("", b"hello")), (1, "tagged_run_metadata", "step1"),
        (10, "manual", 1.5), (11, "session_log", 1)]


def test_moving_average_shadow_restore(tmp_path):
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.placeholder(tf.float32, [None, 3])
        y = tf.placeholder(tf.float32, [None])
        with tf.variable_scope("lin"):
            w = tf.get_variable("w", [3], initializer=tf.random_normal_initializer(seed=1))
            b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.reduce_sum(x * w, 1) + b - y))
        gs = tf.train.get_or_create_global_step()
        step = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss, global_step=gs)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=gs, zero_debias=False)
        with tf.control_dependencies([step]):
            train_op = ema.apply(tf.trainable_variables())
        assert (train_op.name, train_op.type) == ("ExponentialMovingAverage", "NoOp")
        assert ema.average(w).name == "lin/w/ExponentialMovingAverage:0"
        assert ema.average_name(b) == "lin/b/ExponentialMovingAverage"
        assert ema.average(loss) is None
        assert [v.name for v in tf.moving_average_variables()] == ["lin/w:0", "lin/b:0"]
        assert sorted(ema.variables_to_restore()) == [
            "global_step", "lin/b/ExponentialMovingAverage", "lin/b/Momentum",
            "lin/w/ExponentialMovingAverage", "lin/w/Momentum"]
        assert sorted(ema.variables_to_restore([gs]))[:2] == [
            "global_step/ExponentialMovingAverage", "lin/b"]
        rng = np.random.RandomState(1)
        X = rng.randn(16, 3).astype(np.float32)
        Y = X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            for _ in range(6):
                _, lv = s.run([train_op, loss], {x: X, y: Y})
            assert round(float(lv), 4) == 0.1022
            np.testing.assert_allclose(s.run(w), [1.4681, -1.8729, 0.5687], atol=1e-4)
            np.testing.assert_allclose(s.run(ema.average(w)), [1.2782, -1.7098, 0.6057],
                                       atol=1e-4)
            p = tf.train.Saver().save(s, str(tmp_path / "m"), global_step=gs)
    with tf.Graph().as_default():
        with tf.variable_scope("lin"):
            w = tf.get_variable("w", [3])
            b = tf.get_variable("b", [])
        r = tf.train.Saver(tf.train.ExponentialMovingAverage(0.9).variables_to_restore())
        with tf.Session() as s:
            r.restore(s, p)
            np.testing.assert_allclose(s.run(w), [1.2782, -1.7098, 0.6057], atol=1e-4)
            assert round(float(s.run(b)), 4) == 0.1758
        ema2 = tf.train.ExponentialMovingAverage(0.5, name="Avg")
        a = ema2.apply([w])
        assert (ema2.name, ema2.average(w).name, a.name) == ("Avg", "lin/w/Avg:0", "Avg")


def test_sharded_dict_renamed_savers_and_init_from_checkpoint(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        with tf.device("/cpu:0"), tf.variable_scope("enc"):
            a = tf.get_variable("a", [3], initializer=tf.constant_initializer([1., 2., 3.]))
        with tf.device("/cpu:1"), tf.variable_scope("dec"):
            c = tf.get_variable("c", [2, 2], initializer=tf.constant_initializer(0.5))
        sh = tf.train.Saver(sharded=True, max_to_keep=1, keep_checkpoint_every_n_hours=1e-9)
        sd = sh.saver_def
        assert (sd.sharded, sd.filename_tensor_name, sd.save_tensor_name,
                sd.restore_op_name) == (True, "save/Const:0", "save/Identity:0",
                                        "save/restore_all")
        ds = tf.train.Saver({"renamed/a": a, "renamed/c": c}, name="dict_saver")
        assert (ds.saver_def.save_tensor_name, ds.saver_def.restore_op_name) == (
            "dict_saver/control_dependency:0", "dict_saver/restore_all")
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as s:
            s.run(tf.global_variables_initializer())
            sh.save(s, os.path.join(d, "sh"), global_step=1)
            p2 = sh.save(s, os.path.join(d, "sh"), global_step=2)
            p3 = ds.save(s, os.path.join(d, "dict.ckpt"))
            assert _names(sh.last_checkpoints) == ["sh-2"]
    assert sorted(os.listdir(d)) == [
        "checkpoint", "dict.ckpt.data-00000-of-00001", "dict.ckpt.index", "dict.ckpt.meta",
        "sh-1.data-00000-of-00002", "sh-1.data-00001-of-00002", "sh-1.index", "sh-1.meta",
        "sh-2.data-00000-of-00002", "sh-2.data-00001-of-00002", "sh-2.index", "sh-2.meta"]
    assert tf.train.list_variables(p3) == [("renamed/a", [3]), ("renamed/c", [2, 2])]
    with tf.Graph().as_default():
        a2 = tf.get_variable("new_a", [3])
        c2 = tf.get_variable("new_c", [2, 2])
        with tf.Session() as s:
            tf.train.Saver({"renamed/a": a2, "renamed/c": c2}).restore(s, p3)
            assert (s.run(a2).tolist(), s.run(c2).tolist()) == (
                [1.0, 2.0, 3.0], [[0.5, 0.5], [0.5, 0.5]])
            tf.train.Saver({"enc/a": a2}).restore(s, p2)
            with pytest.raises(tf.errors.NotFoundError, match="missing"):
                tf.train.Saver({"missing": c2}).restore(s, p2)
        with pytest.raises(TypeError):
            tf.train.Saver({"x": 3})
        with pytest.raises(ValueError, match="At least two variables have the same name"):
            tf.train.Saver([a2, a2])
    with tf.Graph().as_default():
        with tf.variable_scope("model"):
            with tf.variable_scope("enc"):
                ea = tf.get_variable("a", [3], initializer=tf.zeros_initializer())
            with tf.variable_scope("dec"):
                dc = tf.get_variable("c", [2, 2], initializer=tf.zeros_initializer())
            other = tf.get_variable("other", [1], initializer=tf.ones_initializer())
        tf.train.init_from_checkpoint(p2, {"enc/": "model/enc/", "dec/c": "model/dec/c"})
        assert ea.initial_value.op.type == "RestoreV2"
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert (s.run(ea).tolist(), s.run(dc).tolist(), s.run(other).tolist()) == (
                [1.0, 2.0, 3.0], [[0.5, 0.5], [0.5, 0.5]], [1.0])
        with pytest.raises(ValueError, match="Tensor enc/zz is not found in"):
            tf.train.init_from_checkpoint(p2, {"enc/zz": "model/other"})


def test_singular_monitored_session_feed_and_summary_hooks(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.set_random_seed(11)
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        y = tf.placeholder(tf.float32, [None, 1], name="y")
        w = tf.Variable(tf.truncated_normal([2, 1], stddev=0.5), name="w")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y), name="mse")
        gs = tf.train.get_or_create_global_step()
        train_op = tf.train.RMSPropOptimizer(0.05).minimize(loss, global_step=gs)
        summ = tf.summary.scalar("mse", loss)
        data = iter([(np.array([[1., 2.]], np.float32), np.array([[3.]], np.float32))] * 20)

        def feed_fn():
            a, b = next(data)
            return {x: a, y: b}

        hooks = [tf.train.FeedFnHook(feed_fn),
                 tf.train.SummarySaverHook(save_steps=2, output_dir=d, summary_op=summ),
                 tf.train.ProfilerHook(save_steps=3, output_dir=d),
                 tf.train.StepCounterHook(every_n_steps=2, output_dir=d),
                 tf.train.StopAtStepHook(num_steps=5)]
        vals = []
        with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
            while not sess.should_stop():
                _, lv, s = sess.run([train_op, loss, gs])
                vals.append((int(s), round(float(lv), 4)))
        assert vals == [(1, 6.9644), (2, 4.8284), (3, 3.6003), (4, 2.7586), (5, 2.1394)]
        assert sorted(f.split(".")[0] if f.startswith("events") else f
                      for f in os.listdir(d)) == ["events", "timeline-3.json"]
        tags = []
        for f in os.listdir(d):
            if f.startswith("events"):
                for e in tf.train.summary_iterator(os.path.join(d, f)):
                    tags += [(e.step, v.tag) for v in e.summary.value]
        assert sorted(tags) == [(1, "mse_1"), (3, "global_step/sec"), (3, "mse_1"),
                                (5, "global_step/sec"), (5, "mse_1")]
        with pytest.raises(ValueError, match="Only one of num_steps or last_step"):
            tf.train.StopAtStepHook(num_steps=1, last_step=2)
        with pytest.raises(ValueError, match="Exactly one of scaffold or summary_op"):
            tf.train.SummarySaverHook(save_steps=1, output_dir=d)
        with pytest.raises(ValueError, match="exactly one of every_n_iter and every_n_secs"):
            tf.train.LoggingTensorHook([loss])


def test_global_step_saver_def_and_write_graph_program(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default() as g:
        assert tf.train.get_global_step() is None
        gs = tf.train.create_global_step()
        assert tf.train.get_global_step() is gs and tf.train.get_or_create_global_step() is gs
        with pytest.raises(ValueError, match='"global_step" already exists'):
            tf.train.create_global_step()
        tf.get_variable("v", [2], initializer=tf.constant_initializer([1.0, 2.0]))
        q = tf.Variable(5, name="q", dtype=tf.int64)
        saver = tf.train.Saver(max_to_keep=None, name="my_saver")
        sd = saver.as_saver_def()
        assert (sd.max_to_keep, sd.filename_tensor_name, sd.restore_op_name, sd.version) == (
            0, "my_saver/Const:0", "my_saver/restore_all", 2)
        proto = saver.to_proto()
        assert proto.save_tensor_name == "my_saver/control_dependency:0"
        assert tf.train.Saver.from_proto(proto).saver_def.restore_op_name == \
            "my_saver/restore_all"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert (tf.train.global_step(sess, gs), tf.train.global_step(sess, q)) == (0, 5)
            for i in range(3):
                saver.save(sess, os.path.join(d, "ck"), global_step=i, write_meta_graph=False)
            assert saver.last_checkpoints == []
            mp = saver.export_meta_graph(os.path.join(d, "x.meta"),
                                         collection_list=["variables"])
            assert sorted(mp.collection_def) == ["variables"]
            p = saver.save(sess, os.path.join(d, "final"), global_step=tf.constant(7))
            assert os.path.basename(p) == "final-7"
            with pytest.raises(ValueError):
                saver.save(sess, os.path.join(d, "nodir", "deep", "x"))
            with pytest.raises(ValueError, match="Can't load save_path when it is None"):
                saver.restore(sess, None)
        st = tf.train.generate_checkpoint_state_proto(
            d, os.path.join(d, "final-7"), all_model_checkpoint_paths=[os.path.join(d, "ck-2")])
        assert os.path.basename(st.model_checkpoint_path) == "final-7"
        assert _names(st.all_model_checkpoint_paths) == ["ck-2", "final-7"]
        tf.train.write_graph(g, d, "g.pbtxt")
        from google.protobuf import text_format

        gd = tf.GraphDef()
        with open(os.path.join(d, "g.pbtxt")) as f:
            text_format.Merge(f.read(), gd)
        # TensorFlow: 28 nodes (from_proto builds none), the first the global step's zeros
        assert (len(gd.node), gd.node[0].name, gd.node[0].op) == (
            28, "global_step/Initializer/zeros", "Const")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(d, "x.meta"))
        assert [v.name for v in tf.global_variables()] == ["global_step:0", "v:0", "q:0"]
        assert saver.saver_def.restore_op_name == "my_saver/restore_all"
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(d, "ck-2"))
            assert sess.run("v:0").tolist() == [1.0, 2.0] and sess.run("q:0") == 5


def test_supervisor_queue_input_with_init_fn(tmp_path):
    d, pre = str(tmp_path / "log"), str(tmp_path / "pre")
    with tf.Graph().as_default():
        tf.Variable(tf.fill([2], 3.0), name="emb")
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            tf.train.Saver().save(s, os.path.join(pre, "pre"))
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        data = np.arange(20, dtype=np.float32).reshape(10, 2)
        labels = (data.sum(1) > 18).astype(np.float32)
        x1, y1 = tf.train.slice_input_producer([data, labels], shuffle=False)
        xb, yb = tf.train.batch([x1, y1], batch_size=4)
        assert (xb.name, xb.shape.as_list(), yb.shape.as_list()) == ("batch:0", [4, 2], [4])
        emb = tf.get_variable("emb", [2], initializer=tf.zeros_initializer())
        logits = tf.reduce_sum(xb * emb, 1) / 10.0
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=yb,
                                                                      logits=logits))
        gs = tf.train.get_or_create_global_step()
        train = tf.train.AdagradOptimizer(0.1).minimize(loss, global_step=gs)
        counter = tf.Variable(0, name="counter", trainable=False,
                              collections=[tf.GraphKeys.LOCAL_VARIABLES])
        inc = tf.assign_add(counter, 1)
        pre_saver = tf.train.Saver([emb])
        assert [qr.name for qr in tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)] == [
            "input_producer/input_producer", "batch/fifo_queue"]
        sv = tf.train.Supervisor(
            logdir=d, init_fn=lambda sess: pre_saver.restore(sess, os.path.join(pre, "pre")),
            summary_op=None, save_model_secs=0, local_init_op=tf.local_variables_initializer())
        assert type(sv.summary_writer).__name__ == "FileWriter" and sv.summary_op is None
        with sv.managed_session() as sess:
            assert sess.run(emb).tolist() == [3.0, 3.0]
            losses = []
            for _ in range(4):
                _, lv, c = sess.run([train, loss, inc])
                losses.append(round(float(lv), 5))
            assert (losses, c) == ([2.31021, 1.24717, 0.6257, 2.82966], 4)
            assert sess.run(xb).tolist() == [[12.0, 13.0], [14.0, 15.0], [16.0, 17.0],
                                             [18.0, 19.0]]
            assert tf.train.global_step(sess, gs) == 4
            sv.stop()
        assert sv.should_stop()
        assert sorted(f for f in os.listdir(d) if not f.startswith("events")) == [
            "graph.pbtxt"]


def test_relative_paths_padded_steps_and_moved_directory(tmp_path):
    root = str(tmp_path)
    d = os.path.join(root, "run1")
    with tf.Graph().as_default():
        v = tf.Variable([1.5, 2.5], name="v")
        s1 = tf.train.Saver(save_relative_paths=True, pad_step_number=True, max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in (5, 10, 15):
                p = s1.save(sess, os.path.join(d, "model.ckpt"), global_step=i)
        assert os.path.basename(p) == "model.ckpt-00000015"
        with open(os.path.join(d, "checkpoint")) as f:
            assert f.read() == ('model_checkpoint_path: "model.ckpt-00000015"\n'
                                'all_model_checkpoint_paths: "model.ckpt-00000010"\n'
                                'all_model_checkpoint_paths: "model.ckpt-00000015"\n')
        nd = os.path.join(root, "moved")
        os.rename(d, nd)
        lc = tf.train.latest_checkpoint(nd)
        assert lc == os.path.join(nd, "model.ckpt-00000015")
        assert [os.path.relpath(x, root) for x in tf.train.get_checkpoint_state(
            nd).all_model_checkpoint_paths] == ["moved/model.ckpt-00000010",
                                                "moved/model.ckpt-00000015"]
        tf.train.remove_checkpoint(lc)
        assert sorted(os.listdir(nd)) == [
            "checkpoint", "model.ckpt-00000010.data-00000-of-00001",
            "model.ckpt-00000010.index", "model.ckpt-00000010.meta"]
        assert not tf.train.checkpoint_exists(lc)
        with tf.Session() as sess:
            s1.restore(sess, os.path.join(nd, "model.ckpt-00000010"))
            assert sess.run(v).tolist() == [1.5, 2.5]
        assert tf.train.latest_checkpoint(nd) is None  # the state names a removed one
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().save(sess, os.path.join(nd, "plain"), global_step=3,
                                  latest_filename="ck_state")
        with open(os.path.join(nd, "ck_state")) as f:
            assert f.read().replace(nd, "ND") == ('model_checkpoint_path: "ND/plain-3"\n'
                                                  'all_model_checkpoint_paths: "ND/plain-3"\n')
        assert tf.train.get_checkpoint_state(nd, "ck_state").model_checkpoint_path == \
            os.path.join(nd, "plain-3")


def test_scaffold_init_fn_saver_and_resume(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default() as g:
        tf.set_random_seed(9)
        gs = tf.train.get_or_create_global_step()
        with tf.variable_scope("layer"):
            w = tf.get_variable("w", [3], initializer=tf.random_normal_initializer(seed=4))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(
            tf.reduce_sum(tf.square(w - 1.0)), global_step=gs)
        called = []
        set_w = w.assign([0.5, 0.5, 0.5])

        def init_fn(scaffold, sess):
            called.append(type(scaffold).__name__)
            sess.run(set_w)

        saver = tf.train.Saver(max_to_keep=1)
        sc = tf.train.Scaffold(init_fn=init_fn, saver=saver)
        with tf.train.MonitoredTrainingSession(
                checkpoint_dir=d, scaffold=sc, save_checkpoint_steps=2,
                save_summaries_steps=None, save_summaries_secs=None,
                hooks=[tf.train.StopAtStepHook(last_step=5)]) as sess:
            while not sess.should_stop():
                _, step = sess.run([train, gs])
        assert (called, step, sc.saver is saver) == (["Scaffold"], 5, True)
        assert not g.finalized  # TensorFlow: closing the session unfinalizes the graph
        assert sorted(f for f in os.listdir(d) if not f.startswith("events")) == [
            "checkpoint", "graph.pbtxt", "model.ckpt-5.data-00000-of-00001",
            "model.ckpt-5.index", "model.ckpt-5.meta"]
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        with tf.variable_scope("layer"):
            w = tf.get_variable("w", [3], initializer=tf.zeros_initializer())
        with tf.train.MonitoredTrainingSession(checkpoint_dir=d, save_checkpoint_secs=None,
                                               save_summaries_steps=None) as sess:
            np.testing.assert_allclose(sess.run(w), [0.83616] * 3, atol=1e-5)
            assert sess.run(gs) == 5
        creator = tf.train.ChiefSessionCreator(
            checkpoint_filename_with_path=os.path.join(d, "model.ckpt-5"))
        with tf.train.MonitoredSession(session_creator=creator) as sess:
            np.testing.assert_allclose(sess.run(w), [0.83616] * 3, atol=1e-5)
        creator = tf.train.ChiefSessionCreator(
            checkpoint_filename_with_path=os.path.join(d, "model.ckpt-4"))
        with pytest.raises(ValueError, match="not a valid checkpoint"):
            tf.train.MonitoredSession(session_creator=creator)


# -- focused tests, one per fixed class ----------------------------------------------------
def test_checkpoint_readers_give_scalars_as_numpy_scalars(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(3, name="i")
        tf.Variable(2.5, name="f")
        tf.Variable("hi", name="s")
        tf.Variable(True, name="t")
        tf.Variable([1, 2], name="vec")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            p = tf.train.Saver().save(sess, str(tmp_path / "m"))
    r = tf.train.NewCheckpointReader(p)
    # TensorFlow: numpy.int32 3, numpy.float32 2.5, bytes b'hi', numpy.bool_ True, and
    # an ndarray for the vector (the same from load_variable)
    for read in (r.get_tensor, lambda n: tf.train.load_variable(p, n),
                 tf.train.load_checkpoint(str(tmp_path)).get_tensor):
        i, f, s, t, vec = (read(n) for n in ("i", "f", "s", "t", "vec"))
        assert type(i) is np.int32 and i == 3
        assert type(f) is np.float32 and f == 2.5
        assert s == b"hi" and type(s) is bytes
        assert type(t) is np.bool_ and t
        assert isinstance(vec, np.ndarray) and vec.tolist() == [1, 2]
    with tf.train.load_checkpoint(p) as reader:
        assert reader.get_variable_to_shape_map()["vec"] == [2]


def _scoped_block():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    with tf.variable_scope("block"):
        h = tf.layers.dense(x, 3, kernel_initializer=tf.ones_initializer(), name="fc")
        out = tf.identity(h, name="out")
    tf.add_to_collection("outs", out)
    tf.add_to_collection("all", x)
    tf.add_to_collection("all", out)
    return x, out


def test_scoped_export_records_unbound_inputs():
    with tf.Graph().as_default() as g:
        x, out = _scoped_block()
        with tf.control_dependencies([x.op]):
            tf.identity(out, name="block/ctl")
        sub = tf.train.export_meta_graph(export_scope="block")
        # TensorFlow: the graph's own collection lists both refs; only the data one is
        # exported (a control ref does not start with the prefix)
        assert g.get_collection("unbound_inputs") == ["$unbound_inputs_x",
                                                      "^$unbound_inputs_x"]
    assert sorted(sub.collection_def) == ["all", "outs", "trainable_variables",
                                          "unbound_inputs", "variables"]
    assert list(sub.collection_def["unbound_inputs"].bytes_list.value) == [
        b"$unbound_inputs_x"]
    assert list(sub.collection_def["all"].node_list.value) == ["out:0"]
    inputs = {n.name: list(n.input) for n in sub.graph_def.node}
    assert inputs["fc/MatMul"] == ["$unbound_inputs_x", "fc/kernel/read"]
    assert inputs["ctl"] == ["out", "^$unbound_inputs_x"]


def test_import_binds_unbound_inputs_through_input_map():
    with tf.Graph().as_default():
        _scoped_block()
        sub = tf.train.export_meta_graph(export_scope="block")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Graph contains unbound inputs: "
                           r"\$unbound_inputs_x\. Must provide these inputs through "
                           "input_map"):
            tf.train.import_meta_graph(sub)
        with pytest.raises(ValueError, match="Graph contains unbound inputs"):
            tf.train.import_meta_graph(sub, input_map={"other": tf.zeros([1, 2])})
    with tf.Graph().as_default() as g:
        z = tf.placeholder(tf.float32, [None, 2], name="z")
        tf.train.import_meta_graph(sub, import_scope="copy",
                                   input_map={"$unbound_inputs_x": z})
        assert [o.name for o in g.get_operations()][:3] == [
            "z", "copy/fc/kernel/Initializer/ones", "copy/fc/kernel"]
        assert g.get_collection("unbound_inputs") == []
        assert [t.name for t in tf.get_collection("all")] == ["copy/out:0"]
        o = tf.get_collection("outs")[0]
        assert (o.name, o.shape.as_list()) == ("copy/out:0", [None, 3])
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run(o, {z: [[1.0, 2.0]]}).tolist() == [[3.0, 3.0, 3.0]]


def test_import_graph_def_maps_an_input_without_node():
    gd = tf.GraphDef()
    node = gd.node.add(name="y", op="Identity")
    node.input.append("$unbound_inputs_x")
    node.attr["T"].type = tf.float32.as_datatype_enum
    with tf.Graph().as_default():
        (y,) = tf.import_graph_def(gd, input_map={"$unbound_inputs_x": tf.constant([2.0])},
                                   return_elements=["y:0"], name="m")
        with tf.Session() as s:
            assert s.run(y).tolist() == [2.0]
        with pytest.raises(ValueError):  # TensorFlow: Attempted to map inputs that were
            tf.import_graph_def(gd, input_map={"$unbound_inputs_x": tf.constant([2.0]),
                                               "nowhere:0": tf.constant(1.0)})
        with pytest.raises(ValueError):  # an unmapped input without node
            tf.import_graph_def(gd)


def test_scoped_export_filters_collections_by_scope():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="input")
        with tf.name_scope("tower"):
            w = tf.Variable(tf.ones([4, 2]), name="w")
            y = tf.matmul(x, w, name="y")
        tf.add_to_collection("inputs", x)
        tf.add_to_collection("names", "hello")
        tf.add_to_collection("names2", "tower/hello")
        tf.add_to_collection("ints", 3)
        tf.add_to_collection("ops", y.op)
        sub = tf.train.export_meta_graph(export_scope="tower")
    # TensorFlow: "inputs" (emptied) and "names" (a string outside the scope) are left out
    assert sorted(sub.collection_def) == ["ints", "names2", "ops", "trainable_variables",
                                          "unbound_inputs", "variables"]
    assert list(sub.collection_def["names2"].bytes_list.value) == [b"tower/hello"]
    assert list(sub.collection_def["ints"].int64_list.value) == [3]
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(sub, import_scope="new", input_map={
            "$unbound_inputs_input": tf.zeros([3, 4], name="z")})
        assert tf.get_collection("names2") == ["new/tower/hello"]
        assert g.get_tensor_by_name("new/y:0").shape.as_list() == [3, 2]


def test_import_restores_trainable_variables_first_then_sorted_keys(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        tf.add_to_collection("zeta", v.value())
        tf.add_to_collection("alpha", 1)
        path = str(tmp_path / "m.meta")
        tf.train.export_meta_graph(path)
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(path)
        # TensorFlow 2.15: ['trainable_variables', 'alpha', 'variables', 'zeta']
        assert g.get_all_collection_keys() == ["trainable_variables", "alpha", "variables",
                                               "zeta"]


def test_saver_from_its_own_saver_def_shares_the_subgraph(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v")
        s1 = tf.train.Saver(max_to_keep=3)
        n = len(g.get_operations())
        s2 = tf.train.Saver(saver_def=s1.as_saver_def())
        sd = tf.train.SaverDef()
        sd.CopyFrom(s1.as_saver_def())
        sd.max_to_keep = 1
        s3 = tf.train.Saver.from_proto(sd)
        # TensorFlow: no new ops, s3 keeps one checkpoint, the next Saver is save_1
        assert len(g.get_operations()) == n
        assert (s3.saver_def.max_to_keep, s2.saver_def.restore_op_name) == (
            1, "save/restore_all")
        assert tf.train.Saver().saver_def.restore_op_name == "save_1/restore_all"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(3):
                s3.save(sess, os.path.join(d, "m"), global_step=i)
            assert sorted(f for f in os.listdir(d) if f.endswith("index")) == ["m-2.index"]
            assert _names(s3.last_checkpoints) == ["m-2"]
            sess.run(v.assign([5.0, 6.0]))
            s2.restore(sess, os.path.join(d, "m-2"))
            assert sess.run(v).tolist() == [1.0, 2.0]

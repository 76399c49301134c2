"""tf.contrib round 2: `tf.contrib.staging`, `tf.contrib.summary`, `tf.contrib.cudnn_rnn`
and `tf.contrib.factorization` (k-means), checked against TensorFlow 2.15.

TensorFlow 2.15 has no ``contrib``; the expected values come from its maintained
equivalents, printed by the oracle scripts ``/tmp/s16/wild/c2_*.py``:
``tensorflow.python.ops.data_flow_ops.StagingArea``, ``summary_ops_v2`` (the
``tf.contrib.summary`` functions TF 2.15 keeps), ``tf.nn.rnn_cell.LSTMCell(forget_bias=0)``
and Keras's ``GRU(reset_after=True)`` for the cuDNN-compatible cells, and
``tf.compat.v1.estimator.experimental.KMeans``.
"""

from __future__ import annotations

import glob
import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import flowgraph as tf

cudnn = tf.contrib.cudnn_rnn


# -- staging ---------------------------------------------------------------------------------
def test_staging_area_ops_names_and_values():
    with tf.Graph().as_default():
        a = tf.contrib.staging.StagingArea(dtypes=[tf.float32, tf.int32], shapes=[[2], []],
                                           capacity=3)
        assert (a.name, a.names, a.capacity, a.memory_limit) == ("StagingArea", None, 3, 0)
        x = tf.placeholder(tf.float32, [2])
        i = tf.placeholder(tf.int32, [])
        put = a.put([x, i])
        # TF: StagingArea_put Stage [...] with attrs capacity, container, dtypes, ...
        assert (put.name, put.type) == ("StagingArea_put", "Stage")
        assert [t.name for t in put.inputs] == ["Placeholder:0", "Placeholder_1:0"]
        assert put.get_attr("capacity") == 3 and put.get_attr("memory_limit") == 0
        assert put.get_attr("shared_name") in (b"StagingArea", "StagingArea")
        got = a.get()
        assert [t.name for t in got] == ["StagingArea_get:0", "StagingArea_get:1"]
        assert [t.shape.as_list() for t in got] == [[2], []] and got[0].op.type == "Unstage"
        peek = a.peek(0)
        assert [t.name for t in peek] == ["StagingArea_peek:0", "StagingArea_peek:1"]
        assert peek[0].op.type == "StagePeek"
        size, clear = a.size(), a.clear()
        assert (size.name, size.dtype, clear.name, clear.type) == (
            "StagingArea_size:0", tf.int32, "StagingArea_clear", "StageClear")
        with tf.Session() as sess:
            sess.run(put, {x: [1, 2], i: 3})
            sess.run(put, {x: [3, 4], i: 5})
            assert sess.run(size) == 2
            v, n = sess.run(peek)
            np.testing.assert_array_equal(v, [1, 2])
            assert n == 3
            v, n = sess.run(got)
            np.testing.assert_array_equal(v, [1, 2])
            assert sess.run(size) == 1
            sess.run(clear)
            assert sess.run(size) == 0
        assert tf.contrib.staging.StagingArea([tf.float32]).name == "StagingArea_1"


def test_staging_area_names_and_errors():
    with tf.Graph().as_default():
        b = tf.contrib.staging.StagingArea([tf.float32, tf.float32], names=["a", "b"],
                                           shared_name="named")
        pb = b.put({"a": tf.constant(1.0), "b": tf.constant(2.0)})
        gb = b.get()
        assert (pb.name, sorted(gb), gb["a"].name) == ("named_put", ["a", "b"], "named_get:0")
        with tf.Session() as sess:
            sess.run(pb)
            assert sess.run(gb) == {"a": 1.0, "b": 2.0}
        a = tf.contrib.staging.StagingArea([tf.float32, tf.int32], shapes=[[2], []])
        with pytest.raises(ValueError, match=r"Shapes \(3,\) and \(2,\) are incompatible"):
            a.put([tf.constant([1.0, 2.0, 3.0]), tf.constant(1)])
        with pytest.raises(ValueError, match=re.escape(
                "Datatypes do not match. Received val.dtype <dtype: 'int32'> and dtype "
                "<dtype: 'float32'>")):
            a.put([tf.constant([1, 2]), tf.constant(1)])
        with pytest.raises(ValueError, match="StagingArea names must be the same length"):
            tf.contrib.staging.StagingArea([tf.float32], names=["a", "b"])
        with pytest.raises(ValueError, match="You must enqueue a dictionary in a staging "
                                             "area with names"):
            b.put([1.0, 2.0])
        with pytest.raises(ValueError, match="must have names to enqueue a dictionary"):
            a.put({"a": 1.0})


def test_staging_area_blocks_and_partial_elements():
    with tf.Graph().as_default():
        a = tf.contrib.staging.StagingArea([tf.float32], capacity=1)
        x = tf.placeholder(tf.float32, [])
        put, get = a.put([x]), a.get()
        with tf.Session() as sess:
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(get, options=tf.RunOptions(timeout_in_ms=100))
            sess.run(put, {x: 1.0})
            done = []
            t = threading.Thread(target=lambda: done.append(sess.run(put, {x: 2.0})))
            t.start()
            t.join(0.3)
            assert t.is_alive()  # at capacity: the second put waits for a get
            assert sess.run(get) == [1.0]
            t.join(5)
            assert not t.is_alive() and sess.run(get) == [2.0]
        b = tf.contrib.staging.StagingArea([tf.float32, tf.float32])
        partial = b.put([tf.constant(1.0)])  # TF allows staging fewer components
        assert partial.get_attr("dtypes") == [tf.float32]
        with tf.Session() as sess:
            sess.run(partial)
            with pytest.raises(tf.errors.InvalidArgumentError, match="has 1 components"):
                sess.run(b.get())


# -- tf.contrib.summary ----------------------------------------------------------------------
def _events(logdir):
    files = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    assert len(files) == 1 and files[0].endswith(".v2")
    out = []
    for e in tf.train.summary_iterator(files[0]):
        if e.HasField("summary"):
            for v in e.summary.value:
                out.append((e.step, v.tag, v.WhichOneof("value")))
        else:
            out.append((e.step, e.WhichOneof("what"), None))
    return out, files[0]


def test_contrib_summary_writes_the_events_tensorflow_writes(tmp_path):
    cs = tf.contrib.summary
    with tf.Graph().as_default():
        gs = tf.train.get_or_create_global_step()
        w = cs.create_file_writer(str(tmp_path), flush_millis=1000)
        assert [o.name for o in tf.get_default_graph().get_operations()][-5:] == [
            "Const_1", "SummaryWriter", "CreateSummaryFileWriter/logdir",
            "CreateSummaryFileWriter/flush_millis", "CreateSummaryFileWriter"]
        with w.as_default(), cs.always_record_summaries():
            x = tf.placeholder(tf.float32, [])
            s1 = cs.scalar("loss", x)
            with tf.name_scope("grp"):
                s2 = cs.histogram("weights", tf.constant([1.0, 2.0, 2.5, -1.0]),
                                  family="fam")
            s3 = cs.image("img", tf.zeros([2, 4, 4, 3], tf.uint8), max_images=1)
            s4 = cs.generic("gen", tf.constant([1, 2, 3]), step=7)
            s5 = cs.scalar("intval", tf.constant(3), step=tf.constant(5, tf.int64))
            s6 = cs.audio("aud", tf.zeros([1, 10, 1]), 8000, 1)
            # TF: loss/Const:0 Const grp/fam/weights/Const:0 gen/Const_2:0
            assert (s1.name, s1.op.type, s2.name, s4.name) == (
                "loss/Const:0", "Const", "grp/fam/weights/Const:0", "gen/Const_2:0")
        with w.as_default(), cs.never_record_summaries():
            s7 = cs.scalar("never", 1.0)
        assert s7.name == "Const_6:0"  # TF: the "not recorded" constant at the root
        with w.as_default(), cs.record_summaries_every_n_global_steps(2):
            s8 = cs.scalar("every2", tf.cast(gs, tf.float32))
        s9 = cs.scalar("nowriter", 1.0)
        assert s9.type == "NoOp"
        assert [o.name for o in cs.all_summary_ops()][:6] == [
            "loss/Const:0", "grp/fam/weights/Const:0", "img/Const_1:0", "gen/Const_2:0",
            "intval/Const:0", "aud/Const:0"]
        assert s8.op.type == "Merge"
        assert [o.type for o in cs.summary_writer_initializer_op()] == [
            "CreateSummaryFileWriter"]
        types = {o.type for o in tf.get_default_graph().get_operations()}
        assert {"SummaryWriter", "WriteScalarSummary", "WriteHistogramSummary",
                "WriteImageSummary", "WriteAudioSummary", "WriteSummary",
                "FlushSummaryWriter"} <= types
        inc = tf.assign_add(gs, 1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with w.as_default():
                cs.initialize(graph=tf.get_default_graph(), session=sess)
            recorded = []
            for k in range(4):
                recorded.append(sess.run([s1, s8], {x: 0.5 * k}))
                sess.run([s2, s3, s4, s5, s6, s7])
                sess.run(inc)
            sess.run(w.flush())
        assert [[bool(v) for v in r] for r in recorded] == [[True, True], [True, False]] * 2
    events, path = _events(str(tmp_path))
    assert events[:2] == [(0, "file_version", None), (0, "graph_def", None)]
    # TF (events sorted per step): every step writes loss, img/image, fam/grp/fam/weights,
    # aud/audio; gen at step 7 and intval at step 5 each time; every2 at steps 0 and 2.
    want = []
    for k in range(4):
        want += [(k, "loss", "simple_value"), (7, "gen", "tensor"),
                 (5, "intval", "simple_value"), (k, "img/image", "image"),
                 (k, "fam/grp/fam/weights", "histo"), (k, "aud/audio", "audio")]
        if k % 2 == 0:
            want.append((k, "every2", "simple_value"))
    assert sorted(events[2:]) == sorted(want)
    values = {}
    for e in tf.train.summary_iterator(path):
        for v in e.summary.value:
            values.setdefault(v.tag, []).append(v)
    assert [v.simple_value for v in values["loss"]] == [0.0, 0.5, 1.0, 1.5]
    assert [v.simple_value for v in values["every2"]] == [0.0, 2.0]
    h = values["fam/grp/fam/weights"][0].histo
    assert (h.min, h.max, h.num, h.sum, len(h.bucket)) == (-1.0, 2.5, 4.0, 4.5, 9)
    im = values["img/image"][0].image
    assert (im.height, im.width, im.colorspace) == (4, 4, 3)
    au = values["aud/audio"][0].audio
    assert (au.sample_rate, au.num_channels, au.length_frames) == (8000.0, 1, 10)
    assert tf.make_ndarray(values["gen"][0].tensor).tolist() == [1, 2, 3]
    assert values["intval"][0].simple_value == 3.0


def test_contrib_summary_errors_and_helpers(tmp_path):
    cs = tf.contrib.summary
    with tf.Graph().as_default():
        with pytest.raises(RuntimeError, match=r"No default tf\.contrib\.summary\.SummaryWriter"):
            cs.initialize()
        w = cs.create_file_writer(str(tmp_path / "a"))
        with w.as_default():
            with pytest.raises(ValueError, match="session must be passed"):
                cs.initialize()
            with pytest.raises(TypeError, match=r"needs a argument `param` to be tf\.Tensor"):
                cs.graph(b"bytes")
            with cs.always_record_summaries():
                s = cs.scalar("x", 1.0, step=0)
            ev = tf.placeholder(tf.string, [])
            imp = cs.import_event(ev)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
                sess.run(s)
            sess.run(cs.summary_writer_initializer_op())
            sess.run(s)
            e = tf.Event(step=42, wall_time=1.0)
            e.summary.value.add(tag="imported", simple_value=9.0)
            sess.run(imp, {ev: e.SerializeToString()})
            sess.run(w.close())
        events, _ = _events(str(tmp_path / "a"))
        assert (0, "x", "simple_value") in events and (42, "imported", "simple_value") in events
    with pytest.raises(NotImplementedError, match="event files only"):
        cs.create_db_writer("/tmp/x.sqlite")
    assert cs.eval_dir("/m") == "/m/eval" and cs.eval_dir("/m", "v") == "/m/eval_v"
    with tf.Graph().as_default():
        null = cs.create_file_writer(None)
        with null.as_default():
            assert cs.flush().type == "NoOp"


# -- cudnn_rnn -------------------------------------------------------------------------------
def test_cudnn_compatible_lstm_cell_matches_tensorflow():
    rng = np.random.RandomState(0)
    t, b, i, n = 4, 2, 3, 5
    x = rng.randn(t, b, i).astype(np.float32)
    kernel = (rng.randn(i + n, 4 * n) * 0.3).astype(np.float32)
    bias = (rng.randn(4 * n) * 0.3).astype(np.float32)
    with tf.Graph().as_default():
        cell = cudnn.CudnnCompatibleLSTMCell(n)
        with tf.variable_scope("enc"):
            out, (st,) = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell([cell]), tf.constant(x),
                                           time_major=True, dtype=tf.float32)
        vs = tf.global_variables()
        assert [v.name for v in vs] == [
            "enc/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/kernel:0",
            "enc/rnn/multi_rnn_cell/cell_0/cudnn_compatible_lstm_cell/bias:0"]
        with tf.Session() as sess:
            sess.run([vs[0].assign(kernel), vs[1].assign(bias)])
            o, c = sess.run([out, st.c])
    # TF 2.15, LSTMCell(forget_bias=0.0) with the same weights
    np.testing.assert_allclose(o[-1], [[0.44263, -0.334079, 0.043071, -0.208468, -0.035637],
                                       [0.37852, -0.195859, 0.087117, -0.184288, -0.351686]],
                               atol=2e-6)
    np.testing.assert_allclose(c, [[0.927201, -0.475628, 0.143786, -0.473421, -0.038943],
                                   [0.829035, -0.421876, 0.26987, -0.516137, -0.584544]],
                               atol=2e-6)


def test_cudnn_compatible_gru_cell_matches_keras_reset_after_gru():
    rng = np.random.RandomState(1)
    t, b, i, n = 4, 2, 3, 5
    x = rng.randn(b, t, i).astype(np.float32)
    wz, wr, wh = [(rng.randn(i, n) * 0.4).astype(np.float32) for _ in range(3)]
    rz, rr, rh = [(rng.randn(n, n) * 0.4).astype(np.float32) for _ in range(3)]
    bxz, bxr, bxh, bhz, bhr, bhh = [(rng.randn(n) * 0.3).astype(np.float32) for _ in range(6)]
    vals = {"gates/kernel": np.concatenate([np.concatenate([wr, wz], 1),
                                            np.concatenate([rr, rz], 1)], 0),
            "gates/bias": np.concatenate([bxr + bhr, bxz + bhz]),
            "candidate/input_projection/kernel": wh, "candidate/input_projection/bias": bxh,
            "candidate/hidden_projection/kernel": rh, "candidate/hidden_projection/bias": bhh}
    with tf.Graph().as_default():
        _, h = tf.nn.dynamic_rnn(cudnn.CudnnCompatibleGRUCell(n), tf.constant(x),
                                   dtype=tf.float32)
        with tf.Session() as sess:
            for v in tf.global_variables():
                sess.run(v.assign(vals[v.op.name.split("cudnn_compatible_gru_cell/")[1]]))
            got = sess.run(h)
    # TF 2.15: keras GRU(reset_after=True, recurrent_activation="sigmoid"), same weights
    np.testing.assert_allclose(got, [[-0.288852, -0.21535, 0.08412, -0.228272, -0.913452],
                                     [-0.017615, -0.179374, 0.471645, 0.490008, -0.255885]],
                               atol=2e-6)


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def _numpy_cudnn(mode, x, ws, bs, layers, dirs, n, lengths=None):
    """cuDNN's equations in NumPy over time-major `x` (canonical ws/bs in cuDNN order)."""
    per = {"lstm": 8, "gru": 6, "rnn_tanh": 2, "rnn_relu": 2}[mode]
    g = per // 2
    t_max, batch = x.shape[:2]
    lengths = np.full(batch, t_max) if lengths is None else np.asarray(lengths)
    inp, hs = x.astype(np.float64), []
    for layer in range(layers):
        outs = []
        for d in range(dirs):
            u = layer * dirs + d
            w, b = ws[u * per:(u + 1) * per], bs[u * per:(u + 1) * per]
            ys = np.zeros((t_max, batch, n))
            h_final = np.zeros((batch, n))
            for j in range(batch):
                h, c = np.zeros(n), np.zeros(n)
                steps = range(lengths[j]) if d == 0 else range(lengths[j] - 1, -1, -1)
                for s in steps:
                    gx = [inp[s, j] @ w[k].T + b[k] for k in range(g)]
                    gh = [h @ w[g + k].T + b[g + k] for k in range(g)]
                    if mode == "lstm":
                        c = _sig(gx[1] + gh[1]) * c + _sig(gx[0] + gh[0]) * np.tanh(gx[2] + gh[2])
                        h = _sig(gx[3] + gh[3]) * np.tanh(c)
                    elif mode == "gru":
                        r, z = _sig(gx[0] + gh[0]), _sig(gx[1] + gh[1])
                        h = z * h + (1 - z) * np.tanh(gx[2] + r * gh[2])
                    elif mode == "rnn_tanh":
                        h = np.tanh(gx[0] + gh[0])
                    else:
                        h = np.maximum(gx[0] + gh[0], 0.0)
                    ys[s, j] = h
                h_final[j] = h
            outs.append(ys)
            hs.append(h_final)
        inp = np.concatenate(outs, axis=2)
    return inp, np.stack(hs)


@pytest.mark.parametrize("cls", [cudnn.CudnnLSTM, cudnn.CudnnGRU, cudnn.CudnnRNNTanh,
                                 cudnn.CudnnRNNRelu])
@pytest.mark.parametrize("direction", ["unidirectional", "bidirectional"])
def test_cudnn_layers_compute_cudnn_equations(cls, direction):
    from flowgraph.contrib.cudnn_rnn_params import params_to_canonical

    rng = np.random.RandomState(0)
    t, b, i, n = 5, 3, 6, 4
    x = rng.randn(t, b, i).astype(np.float32)
    lengths = [5, 2, 3]
    with tf.Graph().as_default():
        layer = cls(num_layers=2, num_units=n, direction=direction,
                    bias_initializer=tf.random_normal_initializer(seed=1))
        out, states = layer(tf.constant(x), sequence_lengths=lengths)
        ws, bs = params_to_canonical(layer.kernel, layer._shapes())
        dirs = layer.num_dirs
        assert out.shape.as_list() == [t, b, dirs * n]
        assert states[0].shape.as_list() == [2 * dirs, b, n]
        assert len(states) == (2 if cls is cudnn.CudnnLSTM else 1)
        assert layer.kernel.name == f"{layer.scope_name}/opaque_kernel:0"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, st, w, bb = sess.run([out, states, ws, bs])
    want_o, want_h = _numpy_cudnn(layer.rnn_mode, x, w, bb, 2, dirs, n, lengths)
    np.testing.assert_allclose(o, want_o, atol=1e-5)
    np.testing.assert_allclose(st[0], want_h, atol=1e-5)


def test_cudnn_lstm_gradient_matches_finite_differences():
    rng = np.random.RandomState(3)
    x = rng.randn(3, 2, 3)
    with tf.Graph().as_default():
        layer = cudnn.CudnnLSTM(1, 2, dtype=tf.float64, direction="bidirectional")
        xt = tf.constant(x)
        out, (_, c) = layer(xt, time_major=False)
        loss = tf.reduce_sum(out * out) + tf.reduce_sum(c)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            err = tf.test.compute_gradient_error([xt, layer.kernel], [[3, 2, 3],
                                                 layer.kernel.shape.as_list()], loss, [])
    assert err < 1e-4


def test_cudnn_shapes_converters_and_errors():
    with tf.Graph().as_default():
        lstm = cudnn.CudnnLSTM(2, 3, direction="bidirectional")
        with pytest.raises(ValueError, match="'input_size' is unknown"):
            _ = lstm.input_size
        lstm.build([None, None, 5])
        assert lstm.canonical_weight_shapes[:2] == [(3, 5), (3, 5)]
        assert lstm.canonical_weight_shapes[16] == (3, 6)  # layer 1 reads fw + bw outputs
        assert lstm.canonical_bias_shapes == [[3]] * 32
        assert lstm.state_shape(7) == ([4, 7, 3], [4, 7, 3])
        with pytest.raises(TypeError, match="Invalid initial_state type"):
            lstm(tf.ones([2, 1, 5]), initial_state=[tf.zeros([4, 1, 3])] * 2)
        with pytest.raises(ValueError, match="Invalid direction"):
            cudnn.CudnnGRU(1, 2, direction="both")
        with pytest.raises(ValueError, match="Expecting input_shape with 3 dims"):
            cudnn.CudnnGRU(1, 2)(tf.ones([2, 3]))
        with pytest.raises(NotImplementedError, match="skip_input"):
            cudnn.CudnnGRU(1, 4, input_mode="skip_input")(tf.ones([2, 1, 4]))
        conv = cudnn.CudnnParamsFormatConverterGRU(1, 2, 3)
        w = [tf.constant(np.arange(k * 100, k * 100 + s[0] * s[1], dtype=np.float32)
                         .reshape(s)) for k, s in enumerate([[2, 3]] * 3 + [[2, 2]] * 3)]
        b = [tf.fill([2], float(k)) for k in range(6)]
        opaque = conv.canonical_to_opaque(w, b)
        tf_w, tf_b = conv.opaque_to_tf_canonical(opaque)
        back = conv.tf_canonical_to_opaque(tf_w + tf_b)
        with tf.Session() as sess:
            o, tw, tb, bk = sess.run([opaque, tf_w, tf_b, back])
    assert o.shape == (42,)  # 3 [2, 3] + 3 [2, 2] weights, 6 [2] biases
    assert [a.shape for a in tw] == [(5, 4), (3, 2), (2, 2)]
    np.testing.assert_array_equal(tb[0], [0 + 3, 0 + 3, 1 + 4, 1 + 4])  # r, u biases summed
    np.testing.assert_array_equal(bk[:30], o[:30])  # weights round-trip exactly


_CKPT_LOAD = textwrap.dedent("""
    import sys
    import numpy as np
    import flowgraph as tf
    path, kind, direction, n, layers = sys.argv[1], sys.argv[2], sys.argv[3], 4, 2
    x = np.load(path + ".x.npy")
    def cell():
        if kind == "lstm":
            return tf.contrib.cudnn_rnn.CudnnCompatibleLSTMCell(n)
        return tf.contrib.cudnn_rnn.CudnnCompatibleGRUCell(n)
    with tf.variable_scope("cudnn_" + kind):
        if direction == "unidirectional":
            out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell([cell() for _ in range(2)]),
                                       tf.constant(x), time_major=True, dtype=tf.float32)
        else:
            out, _, _ = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
                [cell() for _ in range(2)], [cell() for _ in range(2)], tf.constant(x),
                time_major=True, dtype=tf.float32)
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, path)
        np.save(path + ".out.npy", sess.run(out))
""")


@pytest.mark.parametrize("kind,direction", [("lstm", "unidirectional"),
                                            ("gru", "bidirectional")])
def test_cudnn_checkpoint_restores_into_compatible_cells(tmp_path, kind, direction):
    rng = np.random.RandomState(0)
    x = rng.randn(5, 3, 6).astype(np.float32)
    cls = cudnn.CudnnLSTM if kind == "lstm" else cudnn.CudnnGRU
    with tf.Graph().as_default():
        layer = cls(2, 4, direction=direction,
                    bias_initializer=tf.random_normal_initializer(seed=3))
        out, _ = layer(tf.constant(x))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(out)
            path = saver.save(sess, str(tmp_path / "model"))
    names = sorted(name for name, _ in tf.train.list_variables(path))
    cell = f"cudnn_compatible_{kind}_cell"
    if direction == "unidirectional":
        assert names == [f"cudnn_{kind}/opaque_kernel"] + [
            f"cudnn_{kind}/rnn/multi_rnn_cell/cell_{k}/{cell}/{v}"
            for k in range(2) for v in ("bias", "kernel")]
    else:
        assert f"cudnn_{kind}/stack_bidirectional_rnn/cell_1/bidirectional_rnn/bw/{cell}/" \
               "candidate/hidden_projection/kernel" in names
        assert len(names) == 1 + 2 * 2 * 6
    np.save(path + ".x.npy", x)
    subprocess.run([sys.executable, "-c", _CKPT_LOAD, path, kind, direction], check=True,
                   cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    np.testing.assert_allclose(np.load(path + ".out.npy"), want, atol=1e-5)
    # and back: a fresh cuDNN layer restored from the saveable alone
    with tf.Graph().as_default():
        layer = cls(2, 4, direction=direction)
        out, _ = layer(tf.constant(x))
        saver = tf.train.Saver(tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            saver.restore(sess, path)
            np.testing.assert_allclose(sess.run(out), want, atol=1e-6)


def test_split_into_one_part_returns_the_array():
    with tf.Graph().as_default(), tf.Session() as sess:
        a, = sess.run(tf.split(tf.ones([2, 3]), 1, axis=0))
        b, = sess.run(tf.split(tf.ones([2, 3]), [3], axis=1))
    assert a.shape == (2, 3) and b.shape == (2, 3)


# -- k-means ---------------------------------------------------------------------------------
def _kmeans_points():
    rng = np.random.RandomState(0)
    return np.concatenate([rng.randn(20, 2) * 0.3 + c
                           for c in ([0, 0], [5, 5], [0, 6])]).astype(np.float32)


def _sorted_centers(c):
    order = np.lexsort(c.T[::-1])
    return c[order], order


@pytest.mark.parametrize("kw,centers,score,names", [
    (dict(use_mini_batch=False, initial_clusters="given"),
     [[0.0667, 6.2087], [0.158, 0.0295], [4.8366, 4.9392]], 9.903,
     ["clusters", "global_step", "initialized"]),
    (dict(use_mini_batch=False, seed=3),
     [[-0.1241, 5.7758], [-0.031, 0.1232], [4.7983, 4.8921]], 15.343,
     ["clusters", "global_step", "initialized"]),
    (dict(use_mini_batch=True, seed=5),
     [[-0.1241, 5.7758], [-0.031, 0.1232], [4.7983, 4.8921]], 15.343,
     ["Variable", "clusters", "global_step", "initialized"]),
    (dict(use_mini_batch=True, mini_batch_steps_per_iteration=2, seed=7),
     [[-0.1241, 5.7758], [-0.031, 0.1232], [4.7983, 4.8921]], 15.343,
     ["Variable", "clusters", "clusters_updated", "global_step", "initialized",
      "update_in_steps"]),
    (dict(use_mini_batch=False, distance_metric="cosine", initial_clusters="given+1"),
     [[-0.0756, 0.9971], [0.7015, 0.7127], [0.89, -0.4559]], 4.97,
     ["clusters", "global_step", "initialized"]),
])
def test_kmeans_estimator_matches_tensorflow(tmp_path, kw, centers, score, names):
    pts = _kmeans_points()
    if kw.get("initial_clusters") == "given":
        kw["initial_clusters"] = pts[[0, 20, 40]]
    elif kw.get("initial_clusters") == "given+1":
        kw["initial_clusters"] = pts[[0, 20, 40]] + 1

    def input_fn():
        return tf.train.limit_epochs(tf.constant(pts), num_epochs=1)

    km = tf.compat.v1.estimator.experimental.KMeans(3, model_dir=str(tmp_path), **kw)
    km.train(input_fn, max_steps=5)
    got, _ = _sorted_centers(km.cluster_centers())
    np.testing.assert_allclose(got, centers, atol=1e-4)
    assert km.score(input_fn) == pytest.approx(score, abs=1e-3)
    idx = list(km.predict_cluster_index(input_fn))
    assert len(idx) == 60 and np.asarray(idx).dtype == np.int64
    assert sorted(n for n, _ in tf.train.list_variables(str(tmp_path))) == names
    first = next(km.predict(input_fn))
    assert sorted(first) == ["all_distances", "cluster_index"]
    assert first["all_distances"].dtype == np.float32
    assert next(km.transform(input_fn)).shape == (3,)


def test_kmeans_plus_plus_and_api_surface(tmp_path):
    pts = _kmeans_points()

    def input_fn():
        return tf.train.limit_epochs(tf.constant(pts), num_epochs=1)

    # kmeans++ draws from TF's Philox stream (tests/compat/test_tf1_programs_wild15_trees.py
    # checks the indices); here the three blobs give TF's centers within their spread.
    km = tf.contrib.factorization.KMeansClustering(
        3, model_dir=str(tmp_path), initial_clusters="kmeans_plus_plus", seed=1,
        use_mini_batch=False)
    km.train(input_fn, max_steps=5)
    got, _ = _sorted_centers(km.cluster_centers())
    np.testing.assert_allclose(got, [[0.0137, -0.0562], [0.2842, 5.9535], [4.9915, 5.1285]],
                               atol=0.5)
    with pytest.raises(ValueError, match="Unsupported initialization algorithm 'kmc2'"):
        tf.compat.v1.estimator.experimental.KMeans(3, initial_clusters="kmc2")
    with pytest.raises(ValueError, match="Unsupported distance metric 'l1'"):
        tf.compat.v1.estimator.experimental.KMeans(3, distance_metric="l1")
    k = tf.contrib.factorization.KMeansClustering
    assert (k.SCORE, k.CLUSTER_INDEX, k.ALL_DISTANCES, k.CLUSTER_CENTERS_VAR_NAME,
            k.RANDOM_INIT, k.KMEANS_PLUS_PLUS_INIT, k.COSINE_DISTANCE,
            k.SQUARED_EUCLIDEAN_DISTANCE) == (
        "score", "cluster_index", "all_distances", "clusters", "random",
        "kmeans_plus_plus", "cosine", "squared_euclidean")


def test_kmeans_graph_class_and_nearest_neighbors():
    with tf.Graph().as_default():
        pts = tf.constant([[0.0, 0.0], [0.1, 0.0], [5.0, 5.0], [5.1, 5.0]])
        km = tf.contrib.factorization.KMeans(
            pts, 2, initial_clusters=np.array([[0.0, 0.1], [5.0, 4.9]], np.float32))
        _, idx, _, initialized, init_op, train_op = km.training_graph()
        from flowgraph.ops.clustering_ops import nearest_neighbors
        nn_idx, nn_d = nearest_neighbors(pts, tf.constant([[5.0, 5.0], [0.0, 0.0]]), 2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(init_op)
            assert sess.run(initialized)
            sess.run(train_op)
            np.testing.assert_array_equal(sess.run(idx[0]), [0, 0, 1, 1])
            centers = sess.run(tf.global_variables()[0])
            i, d = sess.run([nn_idx, nn_d])
    np.testing.assert_allclose(centers, [[0.05, 0.0], [5.05, 5.0]], atol=1e-5)
    np.testing.assert_array_equal(i, [[1, 0], [1, 0], [0, 1], [0, 1]])
    # float32 in TensorFlow's order (half norms minus dot products): ~1e-6 cancellation
    np.testing.assert_allclose(d[:, 0], [0.0, 0.01, 0.0, 0.01], atol=1e-5)


def test_kmeans_mini_batch_with_feature_columns_matches_tensorflow(tmp_path):
    rng = np.random.RandomState(7)
    a = np.concatenate([rng.randn(30) * 0.2, rng.randn(30) * 0.2 + 4]).astype(np.float32)
    b = np.concatenate([rng.randn(30) * 0.2 + 1, rng.randn(30) * 0.2 - 3]).astype(np.float32)

    def train_fn():
        ds = tf.data.Dataset.from_tensor_slices({"a": a[:, None], "b": b[:, None]})
        return tf.data.make_one_shot_iterator(ds.repeat().batch(20)).get_next()

    def eval_fn():
        return {"a": tf.constant(a[:, None]), "b": tf.constant(b[:, None])}

    cols = [tf.feature_column.numeric_column("a"), tf.feature_column.numeric_column("b")]
    km = tf.compat.v1.estimator.experimental.KMeans(
        2, model_dir=str(tmp_path), initial_clusters=np.array([[0.5, 0.5], [3.0, -2.0]],
                                                              np.float32),
        use_mini_batch=True, mini_batch_steps_per_iteration=3, relative_tolerance=1e-4,
        feature_columns=cols)
    km.train(train_fn, steps=30)
    # TF 2.15 (c2_prog_kmeans_minibatch_fc.py)
    np.testing.assert_allclose(km.cluster_centers(), [[-0.01, 1.01], [3.99, -2.96]],
                               atol=5e-3)
    ev = km.evaluate(eval_fn, steps=1)
    assert sorted(ev) == ["global_step", "loss", "score"]
    assert ev["score"] == pytest.approx(4.74, abs=5e-3)
    first = next(km.predict(lambda: tf.data.Dataset.from_tensor_slices(
        {"a": a[:, None], "b": b[:, None]}).batch(60)))
    np.testing.assert_allclose(first["all_distances"], [0.13, 28.48], atol=5e-3)


# -- tf.contrib.training bucketing -----------------------------------------------------------
def test_bucket_by_sequence_length_pads_per_bucket():
    rng = np.random.RandomState(0)
    lengths = rng.randint(1, 9, size=23).astype(np.int32)
    seqs = np.zeros((23, 8), np.int32)
    for k, n in enumerate(lengths):
        seqs[k, :n] = k + 1
    with tf.Graph().as_default():
        n, seq = tf.train.slice_input_producer([tf.constant(lengths), tf.constant(seqs)],
                                               num_epochs=1, shuffle=False)
        seq = seq[:n]  # a variable-length example
        size, batch = tf.contrib.training.bucket_by_sequence_length(
            n, {"tokens": seq}, batch_size=[3, 4], bucket_boundaries=[5],
            dynamic_pad=True, allow_smaller_final_batch=True)
        assert batch["tokens"].shape.as_list() == [None, None]
        assert size.shape.as_list() == [None]
        seen = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            try:
                while True:
                    s, t = sess.run([size, batch["tokens"]])
                    assert len(set(s >= 5)) == 1  # one bucket per batch
                    assert t.shape == (len(s), s.max())  # padded to the batch's longest
                    for row, k in zip(t, s):
                        assert (row[:k] != 0).all() and (row[k:] == 0).all()
                    seen += s.tolist()
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    assert sorted(seen) == sorted(lengths.tolist())
    with pytest.raises(ValueError, match="bucket_boundaries must be a sorted list"):
        tf.contrib.training.bucket_by_sequence_length(tf.constant(1), [tf.constant(1)], 2,
                                                      [5, 3])
    with pytest.raises(ValueError, match="batch_size must be an int or a list of 3"):
        tf.contrib.training.bucket_by_sequence_length(tf.constant(1), [tf.constant(1)],
                                                      [2, 2], [3, 5])


def test_bucket_with_fixed_batches_and_keep_input():
    with tf.Graph().as_default():
        x, = tf.train.slice_input_producer([tf.range(12)], num_epochs=1, shuffle=False)
        which, (value,) = tf.contrib.training.bucket(
            [x], which_bucket=x % 2, batch_size=2, num_buckets=2,
            keep_input=tf.not_equal(x, 4))
        assert value.shape.as_list() == [2]
        got = []
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            for _ in range(5):
                w, v = sess.run([which, value])
                assert (v % 2 == w).all()
                got += v.tolist()
            coord.request_stop()
            coord.join(threads, ignore_live_threads=True)
    assert 4 not in got and len(got) == 10


def test_unstack_into_one_part_returns_the_array_and_cudnn_meta_graph_round_trip(tmp_path):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [1, 2, 3])
        (a,) = tf.unstack(p, num=1)
        with tf.Session() as sess:
            assert sess.run(a + 1, {p: np.zeros([1, 2, 3])}).shape == (2, 3)
        lstm = cudnn.CudnnLSTM(1, 3)
        out, _ = lstm(tf.ones([4, 2, 5]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(out)
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            saver.restore(sess, path)
            got = sess.run(tf.get_default_graph().get_tensor_by_name(out.name))
    np.testing.assert_allclose(got, want, atol=1e-6)

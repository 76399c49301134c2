"""Graph defs holding `tf.while_loop`s import and run: `import_graph_def` builds each
``Merge`` before the ``NextIteration`` feeding it (the loop's back edge) and rewires
that input afterwards.

Expected values are the loops' own results before the round trip (TensorFlow 2.15
gives the same numbers for these programs). tests/data/tf_formats/tf215_models/
frozen_lstm.pb is TensorFlow 2.15's ``convert_variables_to_constants`` of a
``dynamic_rnn`` over an ``LSTMCell(4)`` (``tf.set_random_seed(2)``), fetching ``h`` (the
last hidden state); more TF-written loops are in
tests/saved_model/test_tf_written_models.py.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.importer import ImportGraphDefError


def _round_trip(build, feeds: dict, freeze: bool = False):
    """Values of `build()`'s tensors before and after as_graph_def -> import_graph_def."""
    g = tf.Graph()
    with g.as_default():
        outs = build()
        with tf.Session() as sess:
            init = tf.global_variables_initializer()
            sess.run(init)
            before = sess.run(outs, {g.get_tensor_by_name(k): v for k, v in feeds.items()})
            gd = g.as_graph_def()
            if freeze:
                gd = tf.graph_util.convert_variables_to_constants(
                    sess, gd, [t.op.name for t in outs])
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        if freeze:
            assert not [o for o in g2.get_operations() if o.type == "VariableV2"]
        with tf.Session() as sess:
            if not freeze:
                sess.run(init.name)  # the variables' initial values are in the graph
            after = sess.run([t.name for t in outs], feeds)
    return before, after


def _assert_same(before, after):
    assert len(before) == len(after)
    for a, b in zip(before, after):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_while_loop_round_trips():
    def build():
        x = tf.placeholder(tf.float32, [None], name="x")
        return [tf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * 1.5 + 1.0),
                              [0, x])[1]]

    before, after = _round_trip(build, {"x:0": np.array([1.0, 2.0], np.float32)})
    _assert_same(before, after)
    np.testing.assert_allclose(after[0], [20.78125, 28.375])


def test_nested_while_loop_round_trips():
    def build():
        x = tf.placeholder(tf.float32, [], name="x")

        def outer(i, a):
            inner = tf.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, b + 1.0), [0, a])
            return i + 1, inner[1]

        return [tf.while_loop(lambda i, a: i < 4, outer, [0, x])[1]]

    before, after = _round_trip(build, {"x:0": np.float32(1.0)})
    _assert_same(before, after)
    assert after[0] == 7.0  # 1 + (0 + 1 + 2 + 3)


def _lstm():
    x = tf.placeholder(tf.float32, [None, 4, 3], name="x")
    cell = tf.nn.rnn_cell.LSTMCell(5, initializer=tf.constant_initializer(0.1))
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    return [out, state.h]


X_SEQ = (np.arange(24, dtype=np.float32).reshape(2, 4, 3) / 24.0)


def test_dynamic_rnn_round_trips():
    before, after = _round_trip(_lstm, {"x:0": X_SEQ})
    _assert_same(before, after)
    np.testing.assert_allclose(after[0][:, -1], after[1])


def test_frozen_lstm_graph_imports_and_runs():
    before, after = _round_trip(_lstm, {"x:0": X_SEQ}, freeze=True)
    _assert_same(before, after)


def test_lstm_frozen_by_tensorflow_imports_and_runs():
    path = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats",
                        "tf215_models", "frozen_lstm.pb")
    with open(path, "rb") as f:
        message = tf.GraphDef.FromString(f.read())
    with tf.Graph().as_default():
        tf.import_graph_def(message, name="")
        with tf.Session() as sess:
            h = sess.run("h:0", {"x:0": X_SEQ})
    np.testing.assert_allclose(h, [[0.188469, 0.047563, -0.095669, 0.033265],
                                   [0.51676, 0.07866, -0.181883, 0.085331]], atol=2e-6)


def test_tensor_array_while_loop_round_trips():
    def build():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        n = tf.shape(x)[0]
        ta = tf.TensorArray(tf.float32, size=n)

        def body(i, ta):
            return i + 1, ta.write(i, tf.reduce_sum(x[i]) * tf.cast(i, tf.float32))

        return [tf.while_loop(lambda i, ta: i < n, body, [0, ta])[1].stack()]

    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 4.0
    before, after = _round_trip(build, {"x:0": x})
    _assert_same(before, after)
    np.testing.assert_allclose(after[0], [0.0, 3.0, 10.5, 22.5])


def test_imported_loop_keeps_frame_names_and_runs_twice_under_prefixes():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), [0, x])
    gd = g.as_graph_def()
    frames = {n["attr"]["frame_name"] for n in gd["node"] if n["op"] == "Enter"}
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="a")
        enters = [o for o in g2.get_operations() if o.type == "Enter"]
        assert enters and {o.get_attr("frame_name").decode() for o in enters} == frames
        merges = [o for o in g2.get_operations() if o.type == "Merge"]
        assert all(o.inputs[1].op.type == "NextIteration" for o in merges)
        with tf.Session() as sess:
            assert sess.run("a/while/Exit_1:0", {"a/x:0": 1.5}) == 12.0


def test_cycle_outside_a_loop_is_still_refused():
    from flowgraph.framework.serialization import encode_attr

    const = {"value": encode_attr(np.float32(1.0)), "dtype": {"dtype": "float32"}}
    gd = {"node": [
        {"name": "c", "op": "Const", "input": [], "attr": const},
        {"name": "a", "op": "AddV2", "input": ["c:0", "b:0"], "attr": {}},
        {"name": "b", "op": "AddV2", "input": ["c:0", "a:0"], "attr": {}}]}
    with tf.Graph().as_default(), pytest.raises(ImportGraphDefError, match="cycle"):
        tf.import_graph_def(gd, name="")


@pytest.mark.slow
def test_session_on_a_local_server_runs_a_while_loop():
    server = tf.train.Server.create_local_server()
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2.0), [0, x])[1]
        with tf.Session(server.target) as sess:
            assert sess.run(r, {x: 1.5}) == 12.0


def test_loop_variable_changing_shape_keeps_a_relaxed_static_shape():
    with tf.Graph().as_default() as g:
        x = tf.constant([1.0], name="x")
        r = tf.while_loop(lambda i, a: i < 3,
                          lambda i, a: (i + 1, tf.concat([a, a * 2.0], 0)), [0, x],
                          shape_invariants=[tf.TensorShape([]), tf.TensorShape([None])])[1]
    gd = g.as_graph_def()
    for n in gd["node"]:
        n.pop("output_shapes", None)  # as a TensorFlow file without _output_shapes
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="")
        merge = g2.get_operation_by_name("while/Merge_1")
        assert not merge.outputs[0].shape.is_fully_defined()  # not the Enter's [1]
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(r.name), [1, 2, 2, 4, 2, 4, 4, 8])

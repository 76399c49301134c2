"""The ``while_context``/``cond_context`` collections of a ``.meta`` file
(flowgraph/train/meta_graph_contexts.py): rebuilt on import so that gradients through an
imported loop or cond are TensorFlow's, and written on export so that TensorFlow's
import does the same with flowgraph's files. Expected values from TensorFlow 2.15
(tests/data/tf_formats/saver_by_name/make_fixture.py, and the oracle)."""

from pathlib import Path

import numpy as np

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import (
    CondContextDefProto,
    ControlFlowContextDefProto,
    WhileContextDefProto,
)
from flowgraph.ops.control_flow_cond import CondContext
from flowgraph.ops.control_flow_loops import WhileContext

CONTROL = str(Path(__file__).parents[1] / "data" / "tf_formats" / "saver_by_name" /
              "control" / "model.ckpt-0")


def test_gradients_through_a_tensorflow_written_loop_and_cond():
    # TF: loss = (sum of x*v or x+v) * v^3; TF's values from the fixture's own run.
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(CONTROL + ".meta")
        assert [type(c) for c in g.get_collection("while_context")] == [WhileContext]
        assert [type(c) for c in g.get_collection("cond_context")] == [CondContext] * 2
        loss, v, x = (g.get_tensor_by_name(n) for n in ("loss:0", "v:0", "x:0"))
        gv, gx = tf.gradients(loss, [v, x])
        train = tf.train.GradientDescentOptimizer(0.001).minimize(loss)
        with tf.Session() as sess:
            saver.restore(sess, CONTROL)
            feed = {x: np.arange(4, dtype=np.float32)}
            out = sess.run([loss, gv, gx], feed)
            np.testing.assert_allclose(out[:2], [96.0, 192.0])
            np.testing.assert_allclose(out[2], [16.0] * 4)
            out = sess.run([loss, gv, gx], {**feed, "pred:0": False})
            np.testing.assert_allclose(out[:2], [112.0, 200.0])
            np.testing.assert_allclose(out[2], [8.0] * 4)
            sess.run(train, feed)
            np.testing.assert_allclose(sess.run(v), 1.808, rtol=1e-6)


def _nested_program():
    x = tf.placeholder(tf.float32, [], name="x")
    v = tf.Variable(1.5, name="v")

    def body(i, a):
        return i + 1, tf.cond(a < 5.0, lambda: a * v, lambda: a + v)

    _, out = tf.while_loop(lambda i, a: i < 4, body, [0, x], name="outer")
    tf.identity(tf.cond(x > 0, lambda: out * 2.0, lambda: out, name="top"), name="y")
    return v


def test_written_contexts_nest_and_name_the_frame_as_tensorflow_reads_them():
    with tf.Graph().as_default():
        _nested_program()
        meta = tf.train.export_meta_graph()
    (raw,) = meta.collection_def["while_context"].bytes_list.value
    loop = WhileContextDefProto.FromString(raw)
    # TensorFlow takes the context's name for the loop's frame name
    frame = {n.attr["frame_name"].s for n in meta.graph_def.node if n.op == "Enter"}
    assert frame == {loop.context_name.encode()} == {b"outer"}
    assert loop.pivot_name == "outer/LoopCond:0" and loop.back_prop
    assert loop.loop_enter_names == ["outer/Enter:0", "outer/Enter_1:0"]
    # TensorFlow 2.15 names the Enter after its consumer (inside the cond branch)
    assert loop.values_def.external_values == {"v/read:0": "outer/cond/mul/Enter:0"}
    nested = [ControlFlowContextDefProto.FromString(n) for n in loop.nested_contexts]
    assert sorted(n.cond_ctxt.branch for n in nested) == [0, 1]
    top = [CondContextDefProto.FromString(r)
           for r in meta.collection_def["cond_context"].bytes_list.value]
    assert [(c.context_name, c.branch) for c in top] == [("top/cond_text", 1),
                                                         ("top/cond_text_1", 0)]


def test_a_flowgraph_written_nested_loop_differentiates_after_import(tmp_path):
    with tf.Graph().as_default():
        v = _nested_program()
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(v.initializer)
            path = saver.save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path + ".meta")
        y = g.get_tensor_by_name("y:0")
        gv, gx = tf.gradients(y, [g.get_tensor_by_name("v:0"), g.get_tensor_by_name("x:0")])
        with tf.Session() as sess:
            saver.restore(sess, path)
            # TensorFlow, importing this file: [29.0, 6.75, 16.5]
            np.testing.assert_allclose(sess.run([gv, gx, y], {"x:0": 2.0}), [29.0, 6.75, 16.5])


def test_a_context_that_does_not_match_the_graph_is_left_out(caplog):
    bad = WhileContextDefProto(context_name="gone/while_context", pivot_name="gone/LoopCond:0",
                               loop_enter_names=["gone/Enter:0"])
    with tf.Graph().as_default():
        tf.constant(1.0, name="c")
        meta = tf.train.export_meta_graph()
    meta.collection_def["while_context"].bytes_list.value.append(bad.SerializeToString())
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        assert g.get_collection("while_context") == []
    assert any("while_context" in r.getMessage() and "left out" in r.getMessage()
               for r in caplog.records)


def test_tensorflow_dataset_ops_are_left_out_with_a_warning(caplog):
    # Not yet TensorFlow's behaviour (TF runs its tf.data ops): flowgraph's tf.data has
    # its own op types, so a TF-written iterator imports without its dataset and its
    # initializer, named in the warning; the `iterators` collection keeps the handle.
    meta = str(Path(CONTROL).parents[1] / "iterator" / "graph.meta")
    with tf.Graph().as_default() as g:
        assert tf.train.import_meta_graph(meta) is None
        assert [t.name for t in g.get_collection("iterators")] == ["IteratorV2:0"]
    assert any("TensorSliceDataset, BatchDatasetV2, MakeIterator" in r.getMessage()
               for r in caplog.records)

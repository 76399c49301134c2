"""`tf.train.import_meta_graph` / `export_meta_graph` and `Saver.save(write_meta_graph=
True)`: TensorFlow's MetaGraphDef (.meta) read and written.

The fixture tests/data/tf_formats/meta/ (model.ckpt-3.meta/.index/.data) was written
once by TensorFlow 2.15's tf.compat.v1 with its make_fixture.py: a one-layer ReLU
model trained three GradientDescent steps, its train op in the "train_op" collection.
The expected values below are what TensorFlow computed with it.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.event_format import TensorProto, shape_proto
from flowgraph.framework.tf_formats.meta_graph_messages import MetaGraphDefProto

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats", "meta")
PREFIX = os.path.join(DATA, "model.ckpt-3")
X = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
T = np.array([[1, 0], [0, 1]], np.float32)
# TensorFlow 2.15: y after restoring, and after one more step of the imported train op.
Y_TF = [[0.8353539109230042, 0.33988943696022034], [0.2974107265472412, 0.3874616324901581]]
Y_TF_STEP4 = [[0.8547447323799133, 0.2993607819080353], [0.26209598779678345, 0.4599185883998871]]
TF_PYTHON = os.environ.get("TF_ORACLE_PYTHON", "/tmp/tf-oracle-venv/bin/python")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_a_tensorflow_meta_file_imports_restores_and_trains_on_as_in_tensorflow():
    with tf.Graph().as_default() as g, tf.Session() as sess:
        saver = tf.train.import_meta_graph(PREFIX + ".meta")
        saver.restore(sess, PREFIX)
        np.testing.assert_allclose(sess.run(g.get_tensor_by_name("y:0"), {"x:0": X}), Y_TF,
                                   rtol=1e-6)
        assert [v.op.name for v in tf.global_variables()] == ["w", "b", "global_step"]
        assert [v.op.name for v in tf.trainable_variables()] == ["w", "b"]
        assert tf.train.get_global_step().op.name == "global_step"
        train = tf.get_collection("train_op")[0]
        assert train.name == "train"
        sess.run(train, {"x:0": X, "t:0": T})
        np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), Y_TF_STEP4, rtol=1e-6)
        assert sess.run(tf.train.get_global_step()) == 4


def test_tensorflow_saver_nodes_are_kept_and_run_by_name():
    # As TensorFlow: the file's save/ subgraph is imported and the returned Saver (and a
    # program naming its ops) runs it.
    mg = MetaGraphDefProto.FromString(open(PREFIX + ".meta", "rb").read())
    assert mg.saver_def.restore_op_name == "save/restore_all"
    assert mg.meta_info_def.tensorflow_version == "2.15.1"
    assert "SaveV2" in [op.name for op in mg.meta_info_def.stripped_op_list.op]
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(mg)
        ops = {op.type for op in g.get_operations()}
        assert {"SaveV2", "RestoreV2"} <= ops
        assert saver.saver_def.restore_op_name == "save/restore_all"
        with tf.Session() as sess:
            sess.run("save/restore_all", {"save/Const:0": PREFIX})
            np.testing.assert_allclose(sess.run("y:0", {"x:0": X}), Y_TF, rtol=1e-6)


def _train_and_save(d, fmt="flowgraph", var_list=None):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        t = tf.placeholder(tf.float32, [None, 2], name="t")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
        b = tf.Variable(np.zeros(2, np.float32), name="b")
        y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
        loss = tf.reduce_mean(tf.square(y - t), name="loss")
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step,
                                                               name="train")
        tf.add_to_collection("train_op", train)
        saver = tf.train.Saver(var_list({"w": w, "b": b, "step": step}) if var_list
                               else None, format=fmt)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train, {x: X, t: T})
            return saver.save(sess, os.path.join(d, "model.ckpt"), global_step=step)


def test_train_save_then_import_restore_and_run_in_a_fresh_process(tmp_path):
    """The classic TF1 flow: the second process has none of the model's code."""
    prefix = _train_and_save(str(tmp_path))
    assert os.path.isfile(prefix + ".meta")
    script = textwrap.dedent(f"""
        import numpy as np
        import flowgraph as tf
        with tf.Session() as sess:
            saver = tf.train.import_meta_graph({prefix + '.meta'!r})
            saver.restore(sess, {prefix!r})
            y = tf.get_default_graph().get_tensor_by_name("y:0")
            print(sess.run(y, {{"x:0": np.array({X.tolist()}, np.float32)}}).tolist())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, cwd=REPO, check=True).stdout
    np.testing.assert_allclose(eval(out.strip().splitlines()[-1]), Y_TF, rtol=1e-5)


def test_custom_checkpoint_keys_and_text_format_round_trip(tmp_path):
    prefix = _train_and_save(str(tmp_path), var_list=lambda d: d)
    text = str(tmp_path / "graph.pbtxt")
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta", import_scope="net")
        saver.restore(sess, prefix)
        np.testing.assert_allclose(sess.run("net/y:0", {"net/x:0": X}), Y_TF, rtol=1e-5)
        saver.export_meta_graph(text, as_text=True)
    assert open(text).read().startswith("meta_info_def {")
    with tf.Graph().as_default(), tf.Session() as sess:
        saver = tf.train.import_meta_graph(text)
        saver.restore(sess, prefix)  # keys "w", "b", "step" kept through both files
        assert sess.run("net/global_step:0") == 3
        np.testing.assert_allclose(sess.run("net/y:0", {"net/x:0": X}), Y_TF, rtol=1e-5)


def test_export_scope_clear_devices_and_collections():
    with tf.Graph().as_default():
        with tf.name_scope("tower"), tf.device("/cpu:0"):
            v = tf.Variable([1.0, 2.0], name="v")
            out = tf.multiply(v, 2.0, name="out")
        tf.add_to_collection("outputs", out)
        tf.add_to_collection("lr", 0.5)
        tf.add_to_collection("steps", 7)
        tf.add_to_collection("objects", object())
        meta = tf.train.export_meta_graph(export_scope="tower", clear_devices=True)
    assert {n.name for n in meta.graph_def.node} >= {"v", "out"}
    assert all(not n.name.startswith("tower/") and not n.device for n in meta.graph_def.node)
    assert list(meta.collection_def["outputs"].node_list.value) == ["out:0"]
    assert list(meta.collection_def["lr"].float_list.value) == [0.5]
    assert list(meta.collection_def["steps"].int64_list.value) == [7]
    assert "objects" not in meta.collection_def
    with tf.Graph().as_default(), tf.Session() as sess:
        assert tf.train.import_meta_graph(meta) is not None
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(tf.get_collection("outputs")[0]), [2.0, 4.0])
        assert tf.get_collection("lr") == [0.5] and tf.get_collection("steps") == [7]


def test_write_meta_graph_false_and_graph_without_variables(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        with tf.Session() as sess:
            sess.run(v.initializer)
            prefix = tf.train.Saver().save(sess, str(tmp_path / "m"), write_meta_graph=False)
    assert not os.path.exists(prefix + ".meta")
    with tf.Graph().as_default():
        tf.constant(1.0, name="c")
        meta = tf.train.export_meta_graph(str(tmp_path / "c.meta"))
    assert not meta.HasField("saver_def")
    with tf.Graph().as_default() as g:
        assert tf.train.import_meta_graph(str(tmp_path / "c.meta")) is None
        assert g.get_tensor_by_name("c:0").op.type == "Const"


def test_missing_corrupt_and_oversized_files_raise_errors_naming_them(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="does not exist"), \
            tf.Graph().as_default():
        tf.train.import_meta_graph(str(tmp_path / "none.meta"))
    bad = tmp_path / "bad.meta"
    bad.write_bytes(open(PREFIX + ".meta", "rb").read()[:-300])
    with pytest.raises(tf.errors.DataLossError, match=r"bad\.meta"), tf.Graph().as_default():
        tf.train.import_meta_graph(str(bad))
    # A 1-value constant declaring 2**31 elements: refused before anything is allocated.
    node = tf.NodeDef(name="c", op="Const", attr={
        "dtype": tf.AttrValue(type=1), "value": tf.AttrValue(tensor=TensorProto(
            dtype=1, tensor_shape=shape_proto([1 << 31]), float_val=[0.0]))})
    huge = tmp_path / "huge.meta"
    huge.write_bytes(MetaGraphDefProto(graph_def=tf.GraphDef(node=[node])).SerializeToString())
    with pytest.raises(tf.errors.DataLossError, match="node 'c' \\(Const\\)"), \
            tf.Graph().as_default():
        tf.train.import_meta_graph(str(huge))


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(TF_PYTHON), reason="no TensorFlow (tf-oracle venv)")
def test_tensorflow_imports_restores_and_trains_a_flowgraph_meta_file(tmp_path):
    for as_text in (False, True):
        prefix = _train_and_save(str(tmp_path), fmt="tensorflow")
        if as_text:
            with tf.Graph().as_default():
                saver = tf.train.import_meta_graph(prefix + ".meta")
                saver.export_meta_graph(prefix + ".meta", as_text=True)
        script = textwrap.dedent(f"""
            import numpy as np, tensorflow.compat.v1 as tf
            tf.disable_v2_behavior()
            X, T = np.array({X.tolist()}, np.float32), np.array({T.tolist()}, np.float32)
            with tf.Session() as sess:
                saver = tf.train.import_meta_graph({prefix + '.meta'!r})
                saver.restore(sess, {prefix!r})
                sess.run(tf.get_collection("train_op")[0], {{"x:0": X, "t:0": T}})
                print(sess.run("y:0", {{"x:0": X}}).tolist())
        """)
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        out = subprocess.run([TF_PYTHON, "-c", script], capture_output=True, text=True,
                             timeout=300, env=env, check=True).stdout
        np.testing.assert_allclose(eval(out.strip().splitlines()[-1]), Y_TF_STEP4, rtol=1e-5)
        shutil.rmtree(tmp_path)
        os.makedirs(tmp_path)


def test_module_doctests():
    import doctest

    from flowgraph.framework.tf_formats import (
        meta_graph,
        meta_graph_messages,
        saver_graph,
        text_parse,
    )
    from flowgraph.train import meta_graph_export, meta_graph_import

    for module in (meta_graph, meta_graph_messages, saver_graph, text_parse,
                   meta_graph_export, meta_graph_import):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_ops_reading_the_writing_process_are_left_out_with_a_warning(tmp_path, caplog):
    """numpy_input_fn's source reads arrays of the process that built the graph."""
    with tf.Graph().as_default():
        features, _ = tf.estimator.inputs.numpy_input_fn(
            {"x": X}, T, batch_size=2, shuffle=False)()
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        tf.matmul(features["x"], w, name="from_input")
        tf.matmul(tf.placeholder(tf.float32, [None, 3], name="x"), w, name="y")
        with tf.Session() as sess:
            sess.run(w.initializer)
            prefix = tf.train.Saver().save(sess, str(tmp_path / "m"))
    with tf.Graph().as_default() as g, tf.Session() as sess:
        saver = tf.train.import_meta_graph(prefix + ".meta")
        saver.restore(sess, prefix)
        assert "from_input" in caplog.text and "left out" in caplog.text
        assert "from_input" not in [op.name for op in g.get_operations()]
        assert sess.run("y:0", {"x:0": X}).tolist() == (X @ np.ones((3, 2))).tolist()

"""TF1 deployment and graph-surgery programs (freeze scripts, checkpoint inspection,
meta graphs, SavedModel signatures), each checked against what TensorFlow 2.15's
``tf.compat.v1`` printed for the same program (recorded inline; the programs are
/tmp/s13/wild/D*.py of session 13)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.train import inspect_checkpoint


def _names_ops(graph_def):
    return [(n.name, n.op) for n in graph_def.node]


# -- tf.graph_util -------------------------------------------------------------------------
def _dense_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
        b = tf.Variable([0.5, -0.5], name="b")
        h = tf.nn.relu(tf.matmul(x, w) + b, name="h")
        tf.identity(h, name="y")
        tf.reduce_sum(h, name="loss")
    return g


def test_freeze_with_whitelist_and_blacklist_then_import():
    g = _dense_graph()
    with g.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gd = g.as_graph_def()
        frozen = tf.graph_util.convert_variables_to_constants(sess, gd, ["y"])
        only_w = tf.graph_util.convert_variables_to_constants(
            sess, gd, ["y"], variable_names_whitelist=["w"])
        not_w = tf.graph_util.convert_variables_to_constants(
            sess, gd, ["y"], variable_names_blacklist=["w"])
        with pytest.raises(AssertionError, match="nope is not in graph"):
            tf.graph_util.convert_variables_to_constants(sess, gd, ["nope"])
        with pytest.raises(TypeError, match="dest_nodes must be an iterable of strings, but "
                                            "got type <class 'str'>"):
            tf.graph_util.convert_variables_to_constants(sess, gd, "y")
    assert [(n.name, n.op, list(n.input)) for n in frozen.node] == [
        ("x", "Placeholder", []), ("w", "Const", []), ("w/read", "Identity", ["w"]),
        ("b", "Const", []), ("b/read", "Identity", ["b"]),
        ("MatMul", "MatMul", ["x", "w/read"]), ("add", "AddV2", ["MatMul", "b/read"]),
        ("h", "Relu", ["add"]), ("y", "Identity", ["h"])]
    assert [op for name, op in _names_ops(only_w) if name in ("w", "b")] == \
        ["Const", "VariableV2"]
    assert [op for name, op in _names_ops(not_w) if name in ("w", "b")] == \
        ["VariableV2", "Const"]
    w = next(n for n in frozen.node if n.name == "w")
    assert sorted(w.attr.keys()) == ["dtype", "value"] and w.attr["dtype"].type == 1
    assert tf.make_ndarray(w.attr["value"].tensor).tolist() == \
        [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            y = sess.run("y:0", {"x:0": np.ones((2, 3), np.float32)})
        assert tf.global_variables() == []
    np.testing.assert_allclose(y, [[6.5, 8.5], [6.5, 8.5]])
    assert [op.name for op in g2.get_operations()] == \
        ["x", "w", "w/read", "b", "b/read", "MatMul", "add", "h", "y"]


def test_freeze_variables_read_in_cond_and_while_loop():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        u = tf.Variable(2.0, name="u")
        v = tf.Variable(3.0, name="rv")
        c = tf.cond(x > 0, lambda: v * x, lambda: u * x, name="cnd")
        tf.identity(c, name="out")
        r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a + u),
                          [tf.constant(0), x], name="loop")
        tf.identity(r[1], name="out2")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(
                sess, g.as_graph_def(), ["out", "out2"])
    ops = sorted({n.op for n in frozen.node})
    assert ops == ["AddV2", "Const", "Enter", "Exit", "Greater", "Identity", "Less",
                   "LoopCond", "Merge", "Mul", "NextIteration", "Placeholder", "Switch"]
    assert [(n.name, n.op) for n in frozen.node if n.name.startswith("u")] == \
        [("u", "Const"), ("u/read", "Identity")]
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.import_graph_def(frozen, name="")
        np.testing.assert_allclose(sess.run(["out:0", "out2:0"], {"x:0": 2.0}), [6.0, 8.0])
        np.testing.assert_allclose(sess.run(["out:0", "out2:0"], {"x:0": -1.0}), [-2.0, 5.0])


def _training_graph():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2], name="a")
        b = tf.identity(a, name="b")
        b2 = tf.identity(b, name="b2")
        ck = tf.check_numerics(b2, "bad", name="ck")
        c = tf.multiply(ck, 2.0, name="c")
        with tf.control_dependencies([c]):
            d = tf.identity(c, name="d")
        tf.add(d, 1.0, name="e")
        tf.constant(5.0, name="unrelated")
    return g


def test_extract_sub_graph_and_its_errors():
    gd = _training_graph().as_graph_def()
    assert [n.name for n in tf.graph_util.extract_sub_graph(gd, ["c"]).node] == \
        ["a", "b", "b2", "ck", "c/y", "c"]
    assert [n.name for n in tf.graph_util.extract_sub_graph(gd, ["e", "unrelated"]).node] \
        == ["a", "b", "b2", "ck", "c/y", "c", "d", "e/y", "e", "unrelated"]
    with pytest.raises(AssertionError, match="zzz is not in graph"):
        tf.graph_util.extract_sub_graph(gd, ["zzz"])
    with pytest.raises(TypeError, match=r"graph_def must be a graph_pb2\.GraphDef proto, but "
                                        r"got type <class 'list'>"):
        tf.graph_util.extract_sub_graph([1], ["e"])


def test_remove_training_nodes_follows_tensorflow_quirks():
    gd = _training_graph().as_graph_def()
    out = tf.graph_util.remove_training_nodes(gd)
    # TensorFlow drops the CheckNumerics input of 'c' instead of rewiring it.
    assert [(n.name, n.op, list(n.input)) for n in out.node] == [
        ("a", "Placeholder", []), ("c/y", "Const", []), ("c", "Mul", ["c/y"]),
        ("e/y", "Const", []), ("e", "AddV2", ["c", "e/y"]), ("unrelated", "Const", [])]
    assert type(out).__name__ == "GraphDef"
    kept = tf.graph_util.remove_training_nodes(gd, protected_nodes=["b"])
    assert [(n.name, n.op, list(n.input)) for n in kept.node][:2] == [
        ("a", "Placeholder", []), ("b", "Identity", ["a"])]
    # An Identity used as a control input (or with one) stays.
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, name="x")
        i = tf.identity(x, name="i")
        with tf.control_dependencies([i]):
            tf.negative(x, name="n")
    assert [n.name for n in tf.graph_util.remove_training_nodes(g.as_graph_def()).node] == \
        ["x", "i", "n"]


def test_must_run_on_cpu_and_tensor_shape_from_node_def_name():
    g = _training_graph()
    assert not any(tf.graph_util.must_run_on_cpu(n) for n in g.as_graph_def().node)
    with tf.Graph().as_default() as g2:
        v = tf.Variable(1.0, name="v")
        tf.constant(["x"], name="s")
        tf.constant(3, name="i")
    flags = {n.name: (tf.graph_util.must_run_on_cpu(n), tf.graph_util.must_run_on_cpu(n, True))
             for n in g2.as_graph_def().node}
    assert flags == {"v/initial_value": (False, False), "v": (False, True),
                     "v/Assign": (False, True), "v/read": (False, False),
                     "s": (True, True), "i": (True, True)}
    assert (tf.graph_util.must_run_on_cpu(v.op), tf.graph_util.must_run_on_cpu(v.op, True)) \
        == (False, True)
    assert repr(tf.graph_util.tensor_shape_from_node_def_name(g, "a")) == \
        "TensorShape([Dimension(2)])"
    assert str(tf.graph_util.tensor_shape_from_node_def_name(g, "c:0")) == "(2,)"
    with pytest.raises(KeyError, match="zz"):
        tf.graph_util.tensor_shape_from_node_def_name(g, "zz")
    assert tf.compat.v1.graph_util.remove_training_nodes is tf.graph_util.remove_training_nodes


def _frozen_classifier():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="input")
        w = tf.Variable([[1.0], [2.0]], name="w")
        tf.nn.sigmoid(tf.matmul(x, w, name="logits"), name="prob")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                                ["prob"])


def test_import_frozen_graph_with_input_map_and_return_elements():
    frozen = _frozen_classifier()
    with tf.Graph().as_default() as g:
        z = tf.constant([[1.0, 1.0], [0.0, -1.0]], name="myin")
        prob, logits = tf.graph_util.import_graph_def(
            frozen, input_map={"input:0": z}, return_elements=["prob:0", "logits"], name="")
        assert (prob.name, logits.name, type(logits).__name__) == \
            ("prob:0", "logits", "Operation")
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(prob), [[0.9526], [0.1192]], atol=1e-4)
        assert [op.name for op in g.get_operations()] == \
            ["myin", "input", "w", "w/read", "logits", "prob"]
    with tf.Graph().as_default() as g:
        names = [tf.import_graph_def(frozen, return_elements=["prob:0"])[0].name
                 for _ in range(2)]
        names.append(tf.import_graph_def(frozen, return_elements=["prob:0"], name="m")[0].name)
        assert names == ["import/prob:0", "import_1/prob:0", "m/prob:0"]
        assert tf.import_graph_def(frozen, name="m") is None
        with pytest.raises(ValueError, match="Requested return tensor 'nope:0' not found in "
                                             "graph def"):
            tf.import_graph_def(frozen, return_elements=["nope:0"])
        with pytest.raises(ValueError, match=r"Attempted to map inputs that were not found "
                                             r"in graph_def: \[nope:0\]"):
            tf.import_graph_def(frozen, input_map={"nope:0": tf.constant([[1.0, 1.0]])})
        with pytest.raises(ValueError, match="Input 0 of node import_4/logits was passed "
                                             "int32 from Const_1:0 incompatible with "
                                             "expected float\\."):
            tf.import_graph_def(frozen, input_map={"input:0": tf.constant([1, 2])})
        with pytest.raises(ValueError, match="'bad name!' is not a valid root scope name"):
            tf.import_graph_def(frozen, name="bad name!")
        # TensorFlow: 4 imports of 5 nodes, the failed return-element import's 5 nodes
        # (it fails after importing), 2 constants; the wrong-dtype map adds nothing.
        assert len(g.get_operations()) == 27


# -- checkpoints ---------------------------------------------------------------------------
def test_saver_state_file_holds_paths_as_given(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable(1.0, name="v")
        inc = tf.assign_add(v, 1.0)
        saver = tf.train.Saver(max_to_keep=2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            paths = []
            for i in range(4):
                sess.run(inc)
                paths.append(saver.save(sess, d + "/model", global_step=i * 10))
    assert sorted(os.listdir(d)) == [
        "checkpoint", "model-20.data-00000-of-00001", "model-20.index", "model-20.meta",
        "model-30.data-00000-of-00001", "model-30.index", "model-30.meta"]
    assert open(d + "/checkpoint").read().replace(d, "D").splitlines() == [
        'model_checkpoint_path: "D/model-30"', 'all_model_checkpoint_paths: "D/model-20"',
        'all_model_checkpoint_paths: "D/model-30"']
    tf.train.update_checkpoint_state(d, paths[1], all_model_checkpoint_paths=[paths[1]])
    assert open(d + "/checkpoint").read().replace(d, "D").splitlines() == [
        'model_checkpoint_path: "D/model-10"', 'all_model_checkpoint_paths: "D/model-10"']
    assert tf.train.latest_checkpoint(d) is None  # model-10 was deleted
    tf.train.update_checkpoint_state(d, "relative-ckpt")
    assert open(d + "/checkpoint").read().splitlines() == [
        'model_checkpoint_path: "relative-ckpt"', 'all_model_checkpoint_paths: "relative-ckpt"']


def test_saver_save_directory_rules_and_var_list_errors(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(2.0, name="b")
        renamed = tf.train.Saver({"renamed_a": a, "b_new": b})
        plain = tf.train.Saver([a])
        sharded = tf.train.Saver(sharded=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            p1 = renamed.save(sess, d + "/r/ck")  # one missing level is made
            assert tf.train.list_variables(p1) == [("b_new", []), ("renamed_a", [])]
            plain.save(sess, d + "/x/ck", write_meta_graph=False, write_state=False)
            assert sorted(os.listdir(d + "/x")) == ["ck.data-00000-of-00001", "ck.index"]
            with pytest.raises(ValueError, match=r"Parent directory of .*/sh/ck doesn't exist, "
                                                 r"can't save"):
                sharded.save(sess, d + "/sh/ck", global_step=3)
            with pytest.raises(ValueError, match=r"Parent directory of .*/new/deeper/ck "
                                                 r"doesn't exist"):
                plain.save(sess, d + "/new/deeper/ck")
            assert not os.path.exists(d + "/new")
            with pytest.raises(tf.errors.NotFoundError, match="Restoring from checkpoint "
                                                              "failed"):
                tf.train.Saver({"nothere": a}).restore(sess, p1)
            with pytest.raises(ValueError, match="At least two variables have the same "
                                                 "name: a"):
                tf.train.Saver([a, a])
            with pytest.raises(ValueError, match="The same saveable will be restored with "
                                                 "two names: y"):
                tf.train.Saver({"x": a, "y": a})
    with tf.Graph().as_default():
        a = tf.Variable([1.0, 2.0], name="a")
        with tf.Session() as sess, pytest.raises(
                tf.errors.InvalidArgumentError,
                match=r"Restoring from checkpoint failed\. This is most likely due to a "
                      r"mismatch between the current graph and the graph from the checkpoint"):
            tf.train.Saver({"renamed_a": a}).restore(sess, p1)


def test_max_to_keep_none_and_zero_keep_everything_but_list_the_last(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.Variable(0, name="v")
        keep_0, keep_none = tf.train.Saver(max_to_keep=0), tf.train.Saver(max_to_keep=None)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for i in range(3):
                keep_0.save(sess, d + "/a/ck", global_step=i)
                keep_none.save(sess, d + "/b/ck", global_step=i)
    files = ["checkpoint"] + [f"ck-{i}.{s}" for i in range(3)
                              for s in ("data-00000-of-00001", "index", "meta")]
    assert sorted(os.listdir(d + "/a")) == files and sorted(os.listdir(d + "/b")) == files
    assert open(d + "/a/checkpoint").read().replace(d, "D").splitlines() == [
        'model_checkpoint_path: "D/a/ck-2"', 'all_model_checkpoint_paths: "D/a/ck-2"']
    assert keep_0.last_checkpoints == [] and keep_none.last_checkpoints == []


def test_print_tensors_in_checkpoint_file_output(tmp_path, capsys):
    with tf.Graph().as_default():
        tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="a")
        tf.Variable(3, name="b")
        tf.Variable([True, False], name="scope/c")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, str(tmp_path / "m"))
    pt = inspect_checkpoint.print_tensors_in_checkpoint_file
    pt(path, tensor_name="", all_tensors=False)
    assert capsys.readouterr().out.splitlines() == [
        "a (DT_FLOAT) [2,2]", "b (DT_INT32) []", "scope/c (DT_BOOL) [2]", "",
        "# Total number of params: 7"]
    pt(path, tensor_name="a", all_tensors=False)
    assert capsys.readouterr().out.splitlines() == [
        "tensor: a (float32) [2, 2]", "[[1. 2.]", " [3. 4.]]", "# Total number of params: 7"]
    pt(path, tensor_name="", all_tensors=True)
    assert capsys.readouterr().out.splitlines() == [
        "tensor: a (float32) [2, 2]", "[[1. 2.]", " [3. 4.]]", "tensor: b (int32) []", "3",
        "tensor: scope/c (bool) [2]", "[ True False]", "# Total number of params: 7"]
    pt(path, tensor_name="", all_tensors=False, all_tensor_names=True)
    assert capsys.readouterr().out.splitlines() == [
        "tensor: a (float32) [2, 2]", "tensor: b (int32) []", "tensor: scope/c (bool) [2]",
        "# Total number of params: 7"]
    pt(path, tensor_name="zz", all_tensors=False)
    assert capsys.readouterr().out == "Tensor zz not found in checkpoint\n"
    pt(str(tmp_path / "nothing"), tensor_name="", all_tensors=False)
    assert capsys.readouterr().out.startswith(
        "Unsuccessful TensorSliceReader constructor: Failed to find any matching files for "
        f"{tmp_path / 'nothing'}")


# -- meta graphs ---------------------------------------------------------------------------
def test_export_meta_graph_fields_users_read(tmp_path):
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            x = tf.placeholder(tf.float32, [None, 2], name="x")
            v = tf.Variable([[1.0], [2.0]], name="v")
        y = tf.matmul(x, v, name="y")
        tf.add_to_collection("outputs", y)
        tf.add_to_collection("my_strings", "hello")
        mg = tf.train.export_meta_graph(filename=str(tmp_path / "m.meta"),
                                        clear_devices=True, strip_default_attrs=True)
        plain = tf.train.export_meta_graph()
    assert sorted(mg.collection_def.keys()) == \
        ["my_strings", "outputs", "trainable_variables", "variables"]
    assert [n.device for n in mg.graph_def.node][:3] == ["", "", ""]
    assert sorted(o.name for o in mg.meta_info_def.stripped_op_list.op) == \
        ["Assign", "Const", "Identity", "MatMul", "Placeholder", "VariableV2"]
    assert list(mg.collection_def["my_strings"].bytes_list.value) == [b"hello"]
    assert [n.device for n in plain.graph_def.node][:2] == ["/device:CPU:0"] * 2
    attrs = {n.name: sorted(n.attr.keys()) for n in mg.graph_def.node}
    plain_attrs = {n.name: sorted(n.attr.keys()) for n in plain.graph_def.node}
    assert attrs["y"] == ["T", "_output_shapes"]
    assert plain_attrs["y"] == ["T", "_output_shapes", "transpose_a", "transpose_b"]
    shapes = next(n for n in plain.graph_def.node if n.name == "y").attr["_output_shapes"]
    assert [d.size for d in shapes.list.shape[0].dim] == [-1, 1]
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(str(tmp_path / "m.meta"), import_scope="net")
        assert [op.name for op in g.get_operations()][:6] == \
            ["net/x", "net/v/initial_value", "net/v", "net/v/Assign", "net/v/read", "net/y"]
        assert {op.name for op in g.get_operations()} >= {"save/Const", "save/restore_all"}
        assert tf.get_collection("my_strings") == ["net/hello"]
        assert [v.name for v in tf.global_variables()] == ["net/v:0"]
        assert type(saver).__name__ == "Saver"
    with tf.Graph().as_default():
        tf.train.import_meta_graph(mg)
        assert tf.get_collection("my_strings") == [b"hello"]


def test_freeze_graph_script_from_meta_and_checkpoint(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="input_x")
        with tf.variable_scope("dense"):
            w = tf.get_variable("kernel", initializer=tf.constant(
                np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)))
            b = tf.get_variable("bias", initializer=tf.constant([0.1, -0.1]))
        logits = tf.add(tf.matmul(x, w), b, name="logits")
        tf.nn.softmax(logits, name="output")
        gs = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(logits),
                                                                global_step=gs)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: np.ones((1, 4), np.float32)})
            ck = saver.save(sess, d + "/model.ckpt", global_step=gs)
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(ck + ".meta", clear_devices=True)
        with tf.Session() as sess:
            saver.restore(sess, ck)
            out = tf.graph_util.convert_variables_to_constants(sess, g.as_graph_def(),
                                                               ["output"])
    assert [n.name for n in out.node] == [
        "input_x", "dense/kernel", "dense/kernel/read", "dense/bias", "dense/bias/read",
        "MatMul", "logits", "output"]
    assert [n.op for n in out.node] == ["Placeholder", "Const", "Identity", "Const",
                                        "Identity", "MatMul", "AddV2", "Softmax"]
    with open(d + "/frozen.pb", "wb") as f:
        f.write(out.SerializeToString())
    gd = tf.GraphDef.FromString(open(d + "/frozen.pb", "rb").read())
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="prefix")
        with tf.Session() as sess:
            probs = sess.run("prefix/output:0",
                             {"prefix/input_x:0": np.arange(8, dtype=np.float32).reshape(2, 4)})
    assert g2.get_operations()[0].name == "prefix/input_x"
    np.testing.assert_allclose(probs, [[0.1803, 0.8197], [0.0023, 0.9977]], atol=1e-4)


# -- SavedModel ----------------------------------------------------------------------------
def test_saved_model_tensor_info_from_a_loaded_meta_graph(tmp_path):
    export_dir = str(tmp_path / "export")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
            pred = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
            builder.add_meta_graph_and_variables(sess, ["serve"],
                                                 signature_def_map={"serving_default": pred},
                                                 strip_default_attrs=True)
            builder.add_meta_graph(["extra"])
            builder.save()
            with pytest.raises(AssertionError, match="Graph state including variables and "
                                                     "assets has already been saved"):
                builder.add_meta_graph_and_variables(sess, ["x"])
    with pytest.raises(AssertionError, match="already exists, and isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(export_dir)
    with tf.Graph().as_default() as g, tf.Session() as sess:
        mg = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = mg.signature_def["serving_default"]
        xi = tf.saved_model.utils.get_tensor_from_tensor_info(sig.inputs["x"])
        yo = tf.saved_model.utils.get_tensor_from_tensor_info(sig.outputs["y"], g)
        assert (xi.name, yo.name) == ("x:0", "y:0")
        np.testing.assert_allclose(sess.run(yo, {xi: [[1, 2, 3]]}), [[6.0, 6.0]])


def test_signature_def_errors_name_tensorflows_phrases():
    sdu = tf.saved_model.signature_def_utils
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        ex = tf.placeholder(tf.string, [None], name="examples")
        classes, scores = tf.constant([["a", "b"]]), tf.constant([[0.3, 0.7]], name="scores")
        c = sdu.classification_signature_def(ex, classes, scores)
        assert (c.method_name, sorted(c.inputs), sorted(c.outputs), c.inputs["inputs"].name,
                c.outputs["scores"].name) == ("tensorflow/serving/classify", ["inputs"],
                                              ["classes", "scores"], "examples:0", "scores:0")
        r = sdu.regression_signature_def(ex, tf.constant([[1.5]]))
        assert (r.method_name, sorted(r.inputs), sorted(r.outputs)) == \
            ("tensorflow/serving/regress", ["inputs"], ["outputs"])
        with pytest.raises(ValueError, match="Classification `classes` and `scores` cannot "
                                             "both be None"):
            sdu.classification_signature_def(ex, None, None)
        with pytest.raises(ValueError, match=r"Classification input tensors must be of type "
                                             r"string\. Found tensors of type 1"):
            sdu.classification_signature_def(x, classes, scores)
        with pytest.raises(ValueError, match=r"Regression output tensors must be of type "
                                             r"float\. Found tensors with type 7"):
            sdu.regression_signature_def(ex, tf.constant([["s"]]))
        with pytest.raises(ValueError, match="Prediction `inputs` cannot be None or empty"):
            sdu.predict_signature_def({}, {"y": x})


def test_saver_def_messages_and_padded_step_numbers(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        v = tf.Variable(3.0, name="v")
        gs = tf.train.get_or_create_global_step()
        padded = tf.train.Saver(pad_step_number=True)
        named = tf.train.Saver([v], name="my_saver")
        sd = padded.as_saver_def()
        assert (sd.max_to_keep, sd.sharded, sd.version, sd.keep_checkpoint_every_n_hours,
                sd.filename_tensor_name, sd.restore_op_name) == \
            (5, False, 2, 10000.0, "save/Const:0", "save/restore_all")
        proto = named.to_proto()
        assert proto.restore_op_name == "my_saver/restore_all"
        assert named.to_proto(export_scope="my_saver").restore_op_name == "restore_all"
        assert named.to_proto(export_scope="elsewhere") is None
        assert type(tf.train.Saver.from_proto(proto)).__name__ == "Saver"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert os.path.basename(padded.save(sess, d + "/m", global_step=7)) == "m-00000007"
            assert os.path.basename(padded.save(sess, d + "/m", global_step=gs)) == "m-00000000"
    assert tf.train.checkpoint_exists(d + "/m-00000007")
    assert not tf.train.checkpoint_exists(d + "/m-7")


def test_checkpoint_reader_debug_string_is_tensorflows_listing(tmp_path):
    with tf.Graph().as_default():
        tf.Variable(np.zeros((2, 3), np.float32), name="w")
        tf.Variable("x", name="s")
        saver = tf.train.Saver(format="flowgraph")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
    # TensorFlow: sorted names, DT_ enum names, shapes without spaces
    assert tf.train.NewCheckpointReader(path).debug_string() == \
        b"s (DT_STRING) []\nw (DT_FLOAT) [2,3]\n"

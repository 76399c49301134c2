"""The names, op types and inputs of the graph structure TF1 programs and deploy tools find
by name: a while loop's nodes (``while/Exit:0``), a sharded Saver's save/restore subgraph
(``save/restore_all``, ``save/Identity:0``) and a SavedModel's saver. Every expected value
was printed by TensorFlow 2.15 (``tf.compat.v1``, graph mode) running the same program."""

import glob
import os

import numpy as np

import flowgraph as tf


def _ops(graph=None, prefix=""):
    graph = graph or tf.get_default_graph()
    return [(op.name, op.type, [t.name for t in op.inputs],
             ["^" + c.name for c in op.control_inputs])
            for op in graph.get_operations() if op.name.startswith(prefix)]


# -- tf.while_loop ---------------------------------------------------------------------------
def test_a_single_loop_has_tensorflows_nodes_in_tensorflows_order():
    with tf.Graph().as_default() as g:
        i = tf.constant(0)
        r = tf.while_loop(lambda i: i < 10, lambda i: i + 1, [i])
        assert _ops(g) == [
            ("Const", "Const", [], []),
            ("while/Enter", "Enter", ["Const:0"], []),
            ("while/Merge", "Merge", ["while/Enter:0", "while/NextIteration:0"], []),
            ("while/Less/y", "Const", [], ["^while/Merge"]),
            ("while/Less", "Less", ["while/Merge:0", "while/Less/y:0"], []),
            ("while/LoopCond", "LoopCond", ["while/Less:0"], []),
            ("while/Switch", "Switch", ["while/Merge:0", "while/LoopCond:0"], []),
            ("while/Identity", "Identity", ["while/Switch:1"], []),
            ("while/add/y", "Const", [], ["^while/Identity"]),
            ("while/add", "AddV2", ["while/Identity:0", "while/add/y:0"], []),
            ("while/NextIteration", "NextIteration", ["while/add:0"], []),
            ("while/Exit", "Exit", ["while/Switch:0"], []),
        ]
        exit_ = g.get_tensor_by_name("while/Exit:0")
        assert exit_ is r
        with tf.Session() as sess:
            assert sess.run(exit_) == 10


def test_a_named_loop_enters_a_captured_tensor_under_its_consumer():
    with tf.Graph().as_default() as g:
        i = tf.constant(0)
        x = tf.constant(2.0)
        tf.while_loop(lambda i, a: i < 10, lambda i, a: (i + 1, a * x),
                      [i, tf.constant(1.0)], name="myloop")
        assert [(n, t) for n, t, _, _ in _ops(g, "myloop/")] == [
            ("myloop/Enter", "Enter"), ("myloop/Enter_1", "Enter"),
            ("myloop/Merge", "Merge"), ("myloop/Merge_1", "Merge"),
            ("myloop/Less/y", "Const"), ("myloop/Less", "Less"),
            ("myloop/LoopCond", "LoopCond"),
            ("myloop/Switch", "Switch"), ("myloop/Switch_1", "Switch"),
            ("myloop/Identity", "Identity"), ("myloop/Identity_1", "Identity"),
            ("myloop/add/y", "Const"), ("myloop/add", "AddV2"),
            ("myloop/mul", "Mul"), ("myloop/mul/Enter", "Enter"),
            ("myloop/NextIteration", "NextIteration"),
            ("myloop/NextIteration_1", "NextIteration"),
            ("myloop/Exit", "Exit"), ("myloop/Exit_1", "Exit"),
        ]
        assert [t.name for t in g.get_operation_by_name("myloop/mul").inputs] == \
            ["myloop/Identity_1:0", "myloop/mul/Enter:0"]
        assert g.get_operation_by_name("myloop/mul/Enter").inputs[0].name == "Const_1:0"
        with tf.Session() as sess:
            assert sess.run(g.get_tensor_by_name("myloop/Exit_1:0")) == 1024.0


def test_nested_loops_enter_outer_values_outermost_first():
    with tf.Graph().as_default() as g:
        def body(i):
            j = tf.while_loop(lambda j: j < i, lambda j: j + 1, [tf.constant(0)])
            return i + j

        tf.while_loop(lambda i: i < 10, body, [tf.constant(0)])
        ops = {n: (t, inputs) for n, t, inputs, _ in _ops(g)}
        assert ops["while/while/Less"] == ("Less", ["while/while/Merge:0",
                                                    "while/while/Less/Enter:0"])
        assert ops["while/while/Less/Enter"] == ("Enter", ["while/Identity:0"])
        assert ops["while/while/Exit"] == ("Exit", ["while/while/Switch:0"])
        assert ops["while/add"] == ("AddV2", ["while/Identity:0", "while/while/Exit:0"])
        assert [n for n, *_ in _ops(g)][-3:] == ["while/add", "while/NextIteration",
                                                 "while/Exit"]

    with tf.Graph().as_default() as g:  # a value from outside both loops
        x = tf.placeholder(tf.float32, [], name="x")

        def body2(i):
            j = tf.while_loop(lambda j: j < i, lambda j: j + tf.cast(x, tf.int32), [0],
                              name="inner")
            return i + j

        out = tf.while_loop(lambda i: i < 10, body2, [1], name="o2")
        enters = [(n, inputs) for n, t, inputs, _ in _ops(g, "o2/") if t == "Enter"]
        assert enters == [("o2/Enter", ["o2/Const:0"]),
                          ("o2/inner/Enter", ["o2/inner/Const:0"]),
                          ("o2/inner/Less/Enter", ["o2/Identity:0"]),
                          ("o2/inner/Cast/Enter", ["x:0"]),
                          ("o2/inner/Cast/Enter_1", ["o2/inner/Cast/Enter:0"])]
        with tf.Session() as sess:
            assert sess.run(out, {x: 2.0}) == 15  # 1 -> 1+2 -> 3+4 -> 7+8 (TensorFlow: 15)


def test_a_cond_in_a_loop_and_a_loop_in_a_cond_gate_outer_values_first():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        v = tf.Variable(1.5, name="v")

        def body(i, a):
            return i + 1, tf.cond(a < 5.0, lambda: a * v, lambda: a + v)

        _, out = tf.while_loop(lambda i, a: i < 4, body, [0, x], name="outer")
        gates = [(n, inputs) for n, t, inputs, _ in _ops(g, "outer/")
                 if t in ("Enter", "Switch")]
        assert gates == [
            ("outer/Enter", ["outer/Const:0"]), ("outer/Enter_1", ["x:0"]),
            ("outer/Switch", ["outer/Merge:0", "outer/LoopCond:0"]),
            ("outer/Switch_1", ["outer/Merge_1:0", "outer/LoopCond:0"]),
            ("outer/cond/Switch", ["outer/Less_1:0", "outer/Less_1:0"]),
            ("outer/cond/mul/Switch", ["outer/Identity_1:0", "outer/cond/pred_id:0"]),
            ("outer/cond/mul/Enter", ["v/read:0"]),
            ("outer/cond/mul/Switch_1", ["outer/cond/mul/Enter:0", "outer/cond/pred_id:0"]),
            ("outer/cond/add/Switch", ["outer/Identity_1:0", "outer/cond/pred_id:0"]),
            ("outer/cond/add/Switch_1", ["outer/cond/mul/Enter:0", "outer/cond/pred_id:0"]),
        ]
        with tf.Session() as sess:
            sess.run(v.initializer)
            # 2 -> 3 -> 4.5 -> 6.75 -> 8.25 (TensorFlow: 8.25)
            assert sess.run(out, {x: 2.0}) == 8.25

    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.int32, [], name="x")
        k = tf.constant(3, name="k")
        y = tf.cond(x > 3, lambda: tf.while_loop(lambda i: i < x * 2, lambda i: i + k, [x]),
                    lambda: tf.constant(-1))
        ops = {n: inputs for n, _, inputs, _ in _ops(g, "cond/while/")}
        assert ops["cond/while/Switch"] == ["x:0", "cond/pred_id:0"]
        assert ops["cond/while/Enter"] == ["cond/while/Switch:1"]
        assert ops["cond/while/mul/Enter"] == ["cond/while/Switch:1"]
        assert ops["cond/while/Switch_1"] == ["cond/while/Merge:0", "cond/while/LoopCond:0"]
        assert ops["cond/while/Exit"] == ["cond/while/Switch_1:0"]
        with tf.Session() as sess:
            assert sess.run(y, {x: 5}) == 11 and sess.run(y, {x: 1}) == -1
            assert sess.run(g.get_tensor_by_name("cond/while/Exit:0"), {x: 5}) == 11


def test_the_forward_loop_of_a_differentiated_loop_keeps_tensorflows_names():
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        r = tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x),
                          [tf.constant(0), tf.constant(1.0)])
        (dx,) = tf.gradients(r[1], x)
        mul = g.get_operation_by_name("while/mul")
        assert [t.name for t in mul.inputs] == ["while/Identity_1:0", "while/mul/Enter:0"]
        assert g.get_operation_by_name("while/mul/Enter").inputs[0].name == "x:0"
        with tf.Session() as sess:
            out, slope = sess.run([g.get_tensor_by_name("while/Exit_1:0"), dx], {x: 2.0})
        assert (out, slope) == (8.0, 12.0)  # x**3 and 3 x**2


# -- tf.train.Saver(sharded=True) ------------------------------------------------------------
_SHARDED_ONE_DEVICE = [  # TensorFlow's nodes: v on no device, w on /cpu:0 (two shards)
    ("save/filename/input", "Const", [], ""),
    ("save/filename", "PlaceholderWithDefault", ["save/filename/input"], ""),
    ("save/Const", "PlaceholderWithDefault", ["save/filename"], ""),
    ("save/StaticRegexFullMatch", "StaticRegexFullMatch", ["save/Const"], "/device:CPU:*"),
    ("save/Const_1", "Const", [], "/device:CPU:*"),
    ("save/Const_2", "Const", [], "/device:CPU:*"),
    ("save/Select", "Select", ["save/StaticRegexFullMatch", "save/Const_1", "save/Const_2"],
     "/device:CPU:*"),
    ("save/StringJoin", "StringJoin", ["save/Const", "save/Select"], "/device:CPU:*"),
    ("save/num_shards", "Const", [], ""),
    ("save/ShardedFilename/shard", "Const", [], "/device:CPU:0"),
    ("save/ShardedFilename", "ShardedFilename",
     ["save/StringJoin", "save/ShardedFilename/shard", "save/num_shards"], "/device:CPU:0"),
    ("save/SaveV2/tensor_names", "Const", [], "/device:CPU:0"),
    ("save/SaveV2/shape_and_slices", "Const", [], "/device:CPU:0"),
    ("save/SaveV2", "SaveV2", ["save/ShardedFilename", "save/SaveV2/tensor_names",
                               "save/SaveV2/shape_and_slices", "v"], "/device:CPU:0"),
    ("save/control_dependency", "Identity", ["save/ShardedFilename", "^save/SaveV2"],
     "/device:CPU:0"),
    ("save/ShardedFilename_1/shard", "Const", [], "/device:CPU:0"),
    ("save/ShardedFilename_1", "ShardedFilename",
     ["save/StringJoin", "save/ShardedFilename_1/shard", "save/num_shards"], "/device:CPU:0"),
    ("save/SaveV2_1/tensor_names", "Const", [], "/device:CPU:0"),
    ("save/SaveV2_1/shape_and_slices", "Const", [], "/device:CPU:0"),
    ("save/SaveV2_1", "SaveV2", ["save/ShardedFilename_1", "save/SaveV2_1/tensor_names",
                                 "save/SaveV2_1/shape_and_slices", "w"], "/device:CPU:0"),
    ("save/control_dependency_1", "Identity", ["save/ShardedFilename_1", "^save/SaveV2_1"],
     "/device:CPU:0"),
    ("save/MergeV2Checkpoints/checkpoint_prefixes", "Pack",
     ["save/ShardedFilename", "save/ShardedFilename_1", "^save/control_dependency",
      "^save/control_dependency_1"], "/device:CPU:0"),
    ("save/MergeV2Checkpoints", "MergeV2Checkpoints",
     ["save/MergeV2Checkpoints/checkpoint_prefixes", "save/Const"], "/device:CPU:0"),
    ("save/Identity", "Identity", ["save/Const", "^save/MergeV2Checkpoints",
                                   "^save/control_dependency", "^save/control_dependency_1"],
     "/device:CPU:0"),
    ("save/RestoreV2/tensor_names", "Const", [], "/device:CPU:0"),
    ("save/RestoreV2/shape_and_slices", "Const", [], "/device:CPU:0"),
    ("save/RestoreV2", "RestoreV2", ["save/Const", "save/RestoreV2/tensor_names",
                                     "save/RestoreV2/shape_and_slices"], "/device:CPU:0"),
    ("save/Assign", "Assign", ["v", "save/RestoreV2"], ""),
    ("save/restore_shard", "NoOp", ["^save/Assign"], ""),
    ("save/RestoreV2_1/tensor_names", "Const", [], "/device:CPU:0"),
    ("save/RestoreV2_1/shape_and_slices", "Const", [], "/device:CPU:0"),
    ("save/RestoreV2_1", "RestoreV2", ["save/Const", "save/RestoreV2_1/tensor_names",
                                       "save/RestoreV2_1/shape_and_slices"], "/device:CPU:0"),
    ("save/Assign_1", "Assign", ["w", "save/RestoreV2_1"], "/device:CPU:0"),
    ("save/restore_shard_1", "NoOp", ["^save/Assign_1"], "/device:CPU:0"),
    ("save/restore_all/NoOp", "NoOp", ["^save/restore_shard"], ""),
    ("save/restore_all/NoOp_1", "NoOp", ["^save/restore_shard_1"], "/device:CPU:0"),
    ("save/restore_all", "NoOp", ["^save/restore_all/NoOp", "^save/restore_all/NoOp_1"], ""),
]


def test_a_sharded_savers_meta_graph_holds_tensorflows_sharded_subgraph():
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="v")
        with tf.device("/cpu:0"):
            tf.Variable(3, name="w")
        saver = tf.train.Saver(sharded=True)
        meta = saver.export_meta_graph()
    nodes = [(n.name, n.op, list(n.input), n.device) for n in meta.graph_def.node
             if n.name.startswith("save/")]
    assert nodes == _SHARDED_ONE_DEVICE
    sd = meta.saver_def
    assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name, sd.max_to_keep,
            sd.sharded, sd.keep_checkpoint_every_n_hours, sd.version) == \
        ("save/Const:0", "save/Identity:0", "save/restore_all", 5, True, 10000.0, 2)
    by_name = {n.name: n for n in meta.graph_def.node}
    assert by_name["save/StaticRegexFullMatch"].attr["pattern"].s == b"^s3://.*"
    assert [by_name[c].attr["value"].tensor.string_val[0] for c in ("save/Const_1",
                                                                     "save/Const_2")] == \
        [b".part", b"_temp/part"]
    # the in-memory Saver's own SaverDef is not rewritten by the export
    assert saver.saver_def.restore_op_name == "save/restore_all"


def test_shards_per_device_name_resource_restores_as_tensorflow():
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            tf.Variable([1.0, 2.0], name="v")
        with tf.device("/job:ps/task:1"):
            tf.Variable(3, name="w")
            tf.get_variable("r", [2], use_resource=True)
        meta = tf.train.Saver(sharded=True).export_meta_graph()
    nodes = {n.name: (n.op, list(n.input), n.device) for n in meta.graph_def.node
             if n.name.startswith("save/")}
    assert nodes["save/SaveV2_1"] == (
        "SaveV2", ["save/ShardedFilename_1", "save/SaveV2_1/tensor_names",
                   "save/SaveV2_1/shape_and_slices", "r/Read/ReadVariableOp", "w"],
        "/job:ps/task:1/device:CPU:0")
    assert nodes["save/Identity_1"] == ("Identity", ["save/RestoreV2_1"], "/job:ps/task:1")
    assert nodes["save/AssignVariableOp"] == ("AssignVariableOp", ["r", "save/Identity_1"],
                                              "/job:ps/task:1")
    assert nodes["save/Assign_1"] == ("Assign", ["w", "save/RestoreV2_1:1"], "/job:ps/task:1")
    assert nodes["save/Identity"][2] == "/job:ps/task:1/device:CPU:0"
    assert nodes["save/restore_all"] == (
        "NoOp", ["^save/restore_all/NoOp", "^save/restore_all/NoOp_1"], "")


def test_a_sharded_checkpoint_restores_and_saves_by_the_saver_defs_names(tmp_path):
    d = str(tmp_path)
    with tf.Graph().as_default():
        tf.Variable([1.0, 2.0], name="v")
        tf.get_variable("r", [2], initializer=tf.ones_initializer(), use_resource=True)
        saver = tf.train.Saver(sharded=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, os.path.join(d, "model"), global_step=3)
    assert sorted(os.path.basename(f) for f in glob.glob(d + "/*")) == [
        "checkpoint", "model-3.data-00000-of-00001", "model-3.index", "model-3.meta"]
    with tf.Graph().as_default():  # as a C++ loader: the graph, then the SaverDef's names
        sd = tf.train.import_meta_graph(path + ".meta").saver_def
        assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name,
                sd.sharded) == ("save/Const:0", "save/Identity:0", "save/restore_all", True)
        with tf.Session() as sess:
            sess.run(sd.restore_op_name, {sd.filename_tensor_name: path})
            v, r = sess.run(["v:0", "r/Read/ReadVariableOp:0"])
            again = sess.run(sd.save_tensor_name, {sd.filename_tensor_name: d + "/again"})
    np.testing.assert_array_equal(v, [1.0, 2.0])
    np.testing.assert_array_equal(r, [1.0, 1.0])
    assert again == (d + "/again").encode()
    assert sorted(os.path.basename(f) for f in glob.glob(d + "/again*")) == [
        "again.data-00000-of-00001", "again.index"]
    assert sorted(tf.train.list_variables(d + "/again")) == [("r", [2]), ("v", [2])]


def test_the_programs_own_graph_holds_tensorflows_saver_ops(tmp_path):
    d = str(tmp_path)
    for sharded in (False, True):
        with tf.Graph().as_default() as g:
            with tf.device("/cpu:0"):
                v = tf.Variable([1.0, 2.0], name="v")
                tf.Variable(3, name="w")
            saver = tf.train.Saver(sharded=sharded)
            ops = _ops(g, "save/")
            sd = saver.saver_def
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                path = saver.save(sess, os.path.join(d, f"model{int(sharded)}"))
                sess.run(tf.assign(v, [0.0, 0.0]))
                sess.run(sd.restore_op_name, {sd.filename_tensor_name: path})  # by name
                np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
                out = sess.run(sd.save_tensor_name, {sd.filename_tensor_name: d + "/m2"})
            assert out == (d + "/m2").encode()
            assert sorted(os.path.basename(f) for f in glob.glob(d + "/m2*")) == [
                "m2.data-00000-of-00001", "m2.index"]
        tail = [("save/RestoreV2/tensor_names", "Const", [], []),
                ("save/RestoreV2/shape_and_slices", "Const", [], []),
                ("save/RestoreV2", "RestoreV2", ["save/Const:0", "save/RestoreV2/tensor_names:0",
                                                 "save/RestoreV2/shape_and_slices:0"], []),
                ("save/Assign", "Assign", ["v:0", "save/RestoreV2:0"], []),
                ("save/Assign_1", "Assign", ["w:0", "save/RestoreV2:1"], [])]
        head = [("save/filename/input", "Const", [], []),
                ("save/filename", "PlaceholderWithDefault", ["save/filename/input:0"], []),
                ("save/Const", "PlaceholderWithDefault", ["save/filename:0"], [])]
        if not sharded:
            assert (sd.save_tensor_name, sd.sharded) == ("save/control_dependency:0", False)
            assert ops == [
                *head,
                ("save/SaveV2/tensor_names", "Const", [], []),
                ("save/SaveV2/shape_and_slices", "Const", [], []),
                ("save/SaveV2", "SaveV2", ["save/Const:0", "save/SaveV2/tensor_names:0",
                                           "save/SaveV2/shape_and_slices:0", "v:0", "w:0"], []),
                ("save/control_dependency", "Identity", ["save/Const:0"], ["^save/SaveV2"]),
                *tail,
                ("save/restore_all", "NoOp", [], ["^save/Assign", "^save/Assign_1"])]
            continue
        assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name,
                sd.sharded) == ("save/Const:0", "save/Identity:0", "save/restore_all", True)
        assert ops == [
            *head,
            ("save/StaticRegexFullMatch", "StaticRegexFullMatch", ["save/Const:0"], []),
            ("save/Const_1", "Const", [], []), ("save/Const_2", "Const", [], []),
            ("save/Select", "Select", ["save/StaticRegexFullMatch:0", "save/Const_1:0",
                                       "save/Const_2:0"], []),
            ("save/StringJoin", "StringJoin", ["save/Const:0", "save/Select:0"], []),
            ("save/num_shards", "Const", [], []),
            ("save/ShardedFilename/shard", "Const", [], []),
            ("save/ShardedFilename", "ShardedFilename", [
                "save/StringJoin:0", "save/ShardedFilename/shard:0", "save/num_shards:0"], []),
            ("save/SaveV2/tensor_names", "Const", [], []),
            ("save/SaveV2/shape_and_slices", "Const", [], []),
            ("save/SaveV2", "SaveV2", ["save/ShardedFilename:0", "save/SaveV2/tensor_names:0",
                                       "save/SaveV2/shape_and_slices:0", "v:0", "w:0"], []),
            ("save/control_dependency", "Identity", ["save/ShardedFilename:0"],
             ["^save/SaveV2"]),
            ("save/MergeV2Checkpoints/checkpoint_prefixes", "Pack",
             ["save/ShardedFilename:0"], ["^save/control_dependency"]),
            ("save/MergeV2Checkpoints", "MergeV2Checkpoints",
             ["save/MergeV2Checkpoints/checkpoint_prefixes:0", "save/Const:0"], []),
            ("save/Identity", "Identity", ["save/Const:0"],
             ["^save/control_dependency", "^save/MergeV2Checkpoints"]),
            *tail,
            ("save/restore_shard", "NoOp", [], ["^save/Assign", "^save/Assign_1"]),
            ("save/restore_all", "NoOp", [], ["^save/restore_shard"])]


# -- SavedModel ------------------------------------------------------------------------------
_SAVED_MODEL_SAVER = [
    ("save/filename/input", "Const"), ("save/filename", "PlaceholderWithDefault"),
    ("save/Const", "PlaceholderWithDefault"),
    ("save/StaticRegexFullMatch", "StaticRegexFullMatch"), ("save/Const_1", "Const"),
    ("save/Const_2", "Const"), ("save/Select", "Select"), ("save/StringJoin", "StringJoin"),
    ("save/num_shards", "Const"), ("save/ShardedFilename/shard", "Const"),
    ("save/ShardedFilename", "ShardedFilename"), ("save/SaveV2/tensor_names", "Const"),
    ("save/SaveV2/shape_and_slices", "Const"), ("save/SaveV2", "SaveV2"),
    ("save/control_dependency", "Identity"),
    ("save/MergeV2Checkpoints/checkpoint_prefixes", "Pack"),
    ("save/MergeV2Checkpoints", "MergeV2Checkpoints"), ("save/Identity", "Identity"),
    ("save/RestoreV2/tensor_names", "Const"), ("save/RestoreV2/shape_and_slices", "Const"),
    ("save/RestoreV2", "RestoreV2"), ("save/Assign", "Assign"),
    ("save/restore_shard", "NoOp"), ("save/restore_all", "NoOp"),
]


def _export_and_load(path, how):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        v = tf.Variable([[1.0], [2.0]], name="v")
        y = tf.matmul(x, v, name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            if how == "simple_save":
                tf.saved_model.simple_save(sess, path, {"x": x}, {"y": y})
            else:
                builder = tf.saved_model.builder.SavedModelBuilder(path)
                sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x},
                                                                               {"y": y})
                builder.add_meta_graph_and_variables(
                    sess, ["serve"], signature_def_map={"serving_default": sig})
                builder.save()
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], path)
        out = sess.run("y:0", {"x:0": [[1.0, 1.0]]})
    return meta, out


def test_a_saved_models_saver_is_sharded_as_tensorflows(tmp_path):
    for how in ("simple_save", "builder"):
        path = str(tmp_path / how)
        meta, out = _export_and_load(path, how)
        np.testing.assert_allclose(out, [[3.0]])
        sd = meta.saver_def
        assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name,
                sd.max_to_keep, sd.sharded, sd.version) == \
            ("save/Const:0", "save/Identity:0", "save/restore_all", 5, True, 2), how
        assert [(n.name, n.op) for n in meta.graph_def.node
                if n.name.startswith("save/")] == _SAVED_MODEL_SAVER, how
        assert sorted(meta.collection_def) == ["trainable_variables", "variables"]
        sig = meta.signature_def["serving_default"]
        assert (sig.method_name, sig.inputs["x"].name, sig.outputs["y"].name) == \
            ("tensorflow/serving/predict", "x:0", "y:0")
        assert sorted(os.path.relpath(f, path) for f in glob.glob(path + "/**",
                                                                  recursive=True)) == [
            ".", "saved_model.pb", "variables", "variables/variables.data-00000-of-00001",
            "variables/variables.index"]

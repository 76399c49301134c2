"""TF1 deploy and graph-surgery programs from the wild, sweep 9 (session 18).

The programs: "C++-style" deploy scripts that import a ``.meta`` and drive the saver by
name (``sess.run("save/restore_all", {"save/Const:0": path})``, ``saver_def``'s
``save_tensor_name``), serving loaders that restore through ``saver_def``, sharded and
partitioned savers, freezing (``convert_variables_to_constants`` with ref and resource
variables, ``extract_sub_graph``, ``remove_training_nodes``, ``write_graph`` pb/pbtxt,
``import_graph_def`` with ``input_map``/``return_elements``/``name=""``), Saver options
(var_list dicts and lists, ``max_to_keep``, ``keep_checkpoint_every_n_hours``,
``pad_step_number``, renamed variables, ``init_from_checkpoint`` scope maps,
``list_variables``/``load_variable``/``NewCheckpointReader``, checkpoint state files),
SavedModelBuilder with ``main_op``/``legacy_init_op`` and several tag sets,
``simple_save`` and signature lookups, and gradients through an imported while loop.

Classes of discrepancy found (one test each; TensorFlow 2.15's printed values inline):

- the saver subgraph of an imported ``.meta`` was replaced by flowgraph's own (fed from
  Python), so driving it by name failed; now TensorFlow's ``save/`` nodes are kept and
  the returned Saver runs them;
- ``SaveV2`` refused the parts of a partitioned variable (one key, several slices);
- a second Saver's ``.meta`` (``save/restore_all_1``: a SavedModel exported after
  ``import_meta_graph``, the classic checkpoint-to-SavedModel script) was written with
  TensorFlow's saver nodes over the first saver's and names its SaverDef did not give;
- gradients through a ``tf.while_loop`` of an imported ``.meta`` were None (the
  ``while_context``/``cond_context`` collections were ignored and never written);
- ``SavedModelBuilder`` accepted a second main op for one graph (TensorFlow refuses);
- ``print(tensor_info)``/``print(signature_def)`` showed dataclass reprs, not protobuf's
  text format;
- ``saver_def.keep_checkpoint_every_n_hours`` was not rounded to the proto's float32.
"""

import os

import numpy as np
import pytest

import flowgraph as tf


def _deploy_model(d):
    """A small model trained 5 Adam steps and saved (the program's training half)."""
    x = tf.placeholder(tf.float32, [None, 4], name="input_x")
    y_ = tf.placeholder(tf.float32, [None, 1], name="input_y")
    h = tf.layers.dense(x, 3, activation=tf.nn.tanh, name="h",
                        kernel_initializer=tf.constant_initializer(0.1))
    out = tf.layers.dense(h, 1, name="out", kernel_initializer=tf.constant_initializer(-0.2))
    tf.identity(out, name="prediction")
    loss = tf.losses.mean_squared_error(y_, out)
    train = tf.train.AdamOptimizer(0.05).minimize(loss, name="train_op")
    saver = tf.train.Saver(max_to_keep=1)
    X = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    Y = X.sum(1, keepdims=True)
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        for _ in range(5):
            s.run(train, {x: X, y_: Y})
        return saver.save(s, os.path.join(d, "model"), global_step=5), X, Y


def test_a_cpp_style_deploy_script_restores_trains_and_saves_by_name(tmp_path):
    with tf.Graph().as_default():
        path, X, Y = _deploy_model(str(tmp_path))
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as s:
            s.run("save/restore_all", feed_dict={"save/Const:0": path})
            np.testing.assert_allclose(s.run("prediction:0", {"input_x:0": X}).ravel(),
                                       [-0.0431, 0.0003, 0.047, 0.0898], atol=1e-4)
            for _ in range(3):
                s.run("train_op", {"input_x:0": X, "input_y:0": Y})
            s.run("save/control_dependency:0", {"save/Const:0": str(tmp_path / "cont")})
            assert sorted(f for f in os.listdir(tmp_path) if f.startswith("cont")) == [
                "cont.data-00000-of-00001", "cont.index"]
            names = sorted(n for n, _ in tf.train.list_variables(str(tmp_path / "cont")))
            assert names[:6] == ["beta1_power", "beta2_power", "h/bias", "h/bias/Adam",
                                 "h/bias/Adam_1", "h/kernel"]
            saver2 = tf.train.Saver()  # a second Saver beside the imported one
            assert (saver2.saver_def.restore_op_name,
                    saver2.saver_def.filename_tensor_name) == ("save/restore_all_1",
                                                               "save/Const_1:0")
    with tf.Graph().as_default() as g, tf.Session() as s:
        tf.train.import_meta_graph(path + ".meta").restore(
            s, tf.train.latest_checkpoint(str(tmp_path)))
        np.testing.assert_allclose(s.run("prediction:0", {"input_x:0": X}).ravel(),
                                   [-0.0431, 0.0003, 0.047, 0.0898], atol=1e-4)
        assert (len(g.get_collection(tf.GraphKeys.TRAIN_OP)), len(tf.trainable_variables()),
                len(tf.global_variables())) == (1, 4, 14)


def test_save_v2_writes_the_parts_of_a_partitioned_variable_as_one_entry(tmp_path):
    with tf.Graph().as_default():
        with tf.device("/job:localhost/replica:0/task:0/device:CPU:0"):
            tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
        tf.get_variable("p", [4, 2], initializer=tf.constant_initializer(1.5),
                        partitioner=tf.fixed_size_partitioner(2))
        saver = tf.train.Saver(sharded=True, max_to_keep=2)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            path = saver.save(s, str(tmp_path / "m.ckpt"), global_step=5)
    with tf.Graph().as_default() as g:
        sd = tf.train.import_meta_graph(path + ".meta").saver_def
        with tf.Session() as s:
            s.run(sd.restore_op_name, {sd.filename_tensor_name: path})
            assert s.run("p/part_1:0").tolist() == [[1.5, 1.5], [1.5, 1.5]]
            s.run(tf.assign(g.get_tensor_by_name("w:0"), [[0.5, 0.5], [0.5, 0.5]]))
            s.run(sd.save_tensor_name, {sd.filename_tensor_name: str(tmp_path / "x")})
    assert tf.train.list_variables(str(tmp_path / "x")) == [("p", [4, 2]), ("w", [2, 2])]
    assert tf.train.load_variable(str(tmp_path / "x"), "w").tolist() == [[0.5, 0.5],
                                                                         [0.5, 0.5]]


def test_a_checkpoint_converted_to_a_saved_model_after_import_meta_graph(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        tf.matmul(x, w, name="y")
        with tf.Session() as s:
            s.run(w.initializer)
            path = tf.train.Saver().save(s, str(tmp_path / "ck" / "model"), global_step=1)
    export = str(tmp_path / "export")
    with tf.Graph().as_default() as g, tf.Session() as s:
        tf.train.import_meta_graph(path + ".meta").restore(s, path)
        b = tf.saved_model.builder.SavedModelBuilder(export)
        sig = tf.saved_model.signature_def_utils.predict_signature_def(
            {"x": g.get_tensor_by_name("x:0")}, {"y": g.get_tensor_by_name("y:0")})
        b.add_meta_graph_and_variables(s, ["serve"], signature_def_map={
            "serving_default": sig}, strip_default_attrs=True)
        b.save()
    with tf.Graph().as_default(), tf.Session() as s:
        meta = tf.saved_model.loader.load(s, ["serve"], export)
        assert (meta.saver_def.restore_op_name, meta.saver_def.filename_tensor_name) == (
            "save/restore_all_1", "save/Const_1:0")
        assert s.run("y:0", {"x:0": [[1.0, 1.0]]}).tolist() == [[3.0]]
        nodes = {n.name for n in meta.graph_def.node}
        assert {"save/restore_all", "save/restore_all_1", "save/Const", "save/Const_1"} <= nodes


def test_gradients_through_an_imported_loop_with_a_cond_inside(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [], name="x")
        v = tf.Variable(1.5, name="v")

        def body(i, a):
            return i + 1, tf.cond(a < 5.0, lambda: a * v, lambda: a + v)

        _, out = tf.while_loop(lambda i, a: i < 4, body, [0, x], name="outer")
        tf.identity(out, name="y")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(v.initializer)
            path = saver.save(s, str(tmp_path / "m"))
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path + ".meta")
        assert [type(c).__name__ for c in g.get_collection("while_context")] == [
            "WhileContext"]
        y = g.get_tensor_by_name("y:0")
        gv, gx = tf.gradients(y, [g.get_tensor_by_name("v:0"), g.get_tensor_by_name("x:0")])
        with tf.Session() as s:
            saver.restore(s, path)
            np.testing.assert_allclose(s.run([y, gv, gx], {"x:0": 2.0}), [8.25, 14.5, 3.375])


def test_a_graph_holds_one_main_op(tmp_path):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int64, [None], name="x")
        table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
            tf.constant([1, 2, 3], tf.int64), tf.constant([10.0, 20.0, 30.0])), -1.0)
        w = tf.Variable(2.0, name="w")
        y = tf.multiply(table.lookup(x), w, name="y")
        legacy = tf.group(tf.tables_initializer(), name="legacy_init_op")
        sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        b = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "m"))
        with tf.Session() as s:
            s.run(w.initializer)
            b.add_meta_graph_and_variables(s, ["serve"], {"predict": sig},
                                           legacy_init_op=legacy)
            with pytest.raises(ValueError) as e:
                b.add_meta_graph(["train"], {"predict": sig}, legacy_init_op=legacy)
            assert str(e.value) == ("Graph already contains one or more main ops under the "
                                    "collection saved_model_main_op.")
            b.add_meta_graph(["train"], {"predict": sig})
        b.save()
    with tf.Graph().as_default(), tf.Session() as s:
        meta = tf.saved_model.loader.load(s, ["serve"], str(tmp_path / "m"),
                                          import_scope="imp")
        sig = meta.signature_def["predict"]
        assert s.run("imp/" + sig.outputs["y"].name,
                     {"imp/" + sig.inputs["x"].name: [1, 3, 9]}).tolist() == [20.0, 60.0, -2.0]


def test_tensor_infos_and_signatures_print_as_protobuf_text():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        info = tf.saved_model.utils.build_tensor_info(x)
        sig = tf.saved_model.signature_def_utils.predict_signature_def({"in": x}, {"out": x})
    shape = "  dim {\n    size: -1\n  }\n  dim {\n    size: 2\n  }\n"
    assert str(info) == f'name: "x:0"\ndtype: DT_FLOAT\ntensor_shape {{\n{shape}}}\n'
    assert str(info.tensor_shape) == "dim {\n  size: -1\n}\ndim {\n  size: 2\n}\n"
    assert str(sig).endswith('method_name: "tensorflow/serving/predict"\n')
    assert str(sig).startswith('inputs {\n  key: "in"\n  value {\n    name: "x:0"\n')


def test_keep_checkpoint_every_n_hours_reads_back_as_a_float32():
    with tf.Graph().as_default():
        tf.Variable(0, name="v")
        sd = tf.train.Saver(max_to_keep=2, keep_checkpoint_every_n_hours=1e-7).saver_def
    assert (sd.keep_checkpoint_every_n_hours, sd.max_to_keep) == (1.0000000116860974e-07, 2)

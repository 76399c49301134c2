"""What ``tf.saved_model.loader.load`` returns: TensorFlow's ``MetaGraphDef`` message.

Expected values come from the tf-oracle (TensorFlow 2.15, ``tf.compat.v1``) loading the
same exports (script: ``simple_save`` of ``y = x @ w``; a ``DNNClassifier`` with
``hidden_units=[4]`` on a 2-wide numeric column, 3 steps, parsing receiver).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import (
    AssetFileDefProto,
    SavedModelProto,
    VariableDefProto,
)

W_DEF = ("w:0", "w/Assign", "w/read:0", "w/initial_value:0", True)  # TensorFlow's, both lists


def _simple_save(path, format=None):
    with tf.Graph().as_default(), tf.Session() as s:
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.matmul(x, w, name="y")
        s.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(s, path, {"x": x}, {"y": y}, format=format)


def _load(path, **kwargs):
    with tf.Graph().as_default(), tf.Session() as s:
        meta = tf.saved_model.loader.load(s, [tf.saved_model.tag_constants.SERVING], path,
                                          **kwargs)
        sig = meta.signature_def["serving_default"]
        scope = kwargs["import_scope"] + "/" if "import_scope" in kwargs else ""
        y = s.run(scope + sig.outputs["y"].name, {scope + sig.inputs["x"].name: [[1.0, 1.0]]})
    return meta, y


def _variables(meta, key):
    col = meta.collection_def[key]
    assert not col.node_list.value
    return [(d.variable_name, d.initializer_name, d.snapshot_name, d.initial_value_name,
             d.trainable) for d in map(VariableDefProto.FromString, col.bytes_list.value)]


def _tensor(info):
    return info.name, info.dtype, [d.size for d in info.tensor_shape.dim], \
        info.tensor_shape.unknown_rank


def _check_simple_save_meta(meta):
    assert isinstance(meta, tf.MetaGraphDef)
    sig = meta.signature_def["serving_default"]
    assert sig.method_name == "tensorflow/serving/predict"
    assert _tensor(sig.inputs["x"]) == ("x:0", 1, [-1, 2], False)
    assert _tensor(sig.outputs["y"]) == ("y:0", 1, [-1, 1], False)
    assert sorted(meta.collection_def) == ["trainable_variables", "variables"]
    assert _variables(meta, "variables") == [W_DEF]
    assert _variables(meta, "trainable_variables") == [W_DEF]
    info = meta.meta_info_def
    assert list(info.tags) == ["serve"]
    assert info.tensorflow_version == "2.15.1" and info.meta_graph_version == ""
    sd = meta.saver_def
    assert meta.HasField("saver_def")
    assert (sd.restore_op_name, sd.filename_tensor_name, sd.version) == \
        ("save/restore_all", "save/Const:0", 2)
    nodes = {n.name: n.op for n in meta.graph_def.node}
    assert nodes["save/RestoreV2"] == "RestoreV2" and nodes["y"] == "MatMul"
    assert list(meta.asset_file_def) == []


def test_tf_format_export_returns_the_files_message(tmp_path):
    path = str(tmp_path / "m")
    _simple_save(path)
    meta, y = _load(path)
    np.testing.assert_allclose(y, [[3.0]])
    _check_simple_save_meta(meta)
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        stored = SavedModelProto.FromString(f.read()).meta_graphs[0]
    assert meta.SerializeToString() == stored.SerializeToString()
    assert tf.MetaGraphDef.FromString(meta.SerializeToString()) == meta


def test_resource_variables_stay_in_the_message_as_the_file_has_them():
    """A TensorFlow export with resource variables: flowgraph's graph keeps them, the
    message returned is the file's, unmodified (as TensorFlow returns)."""
    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats",
                        "resource_meta", "saved_model")
    with tf.Graph().as_default() as g, tf.Session() as s:
        meta = tf.saved_model.loader.load(s, ["serve"], path)
        # TF: the loaded graph keeps its resource variables (VarHandleOp, not VariableV2)
        assert g.get_operation_by_name("model/w").type == "VarHandleOp"
    assert "VarHandleOp" in {n.op for n in meta.graph_def.node}
    assert sorted(meta.collection_def) == ["global_step", "train_op", "trainable_variables",
                                           "variables"]
    assert [(d.variable_name, d.is_resource) for d in map(
        VariableDefProto.FromString, meta.collection_def["variables"].bytes_list.value)] == \
        [("model/w:0", True), ("model/b:0", True), ("model/emb:0", True),
         ("global_step:0", False)]
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        stored = SavedModelProto.FromString(f.read()).meta_graphs[0]
    assert meta.SerializeToString() == stored.SerializeToString()


def test_flowgraph_format_export_builds_the_same_message(tmp_path):
    _simple_save(str(tmp_path / "tf"))
    _simple_save(str(tmp_path / "fg"), format="flowgraph")
    assert os.path.isfile(tmp_path / "fg" / "saved_model.json")
    meta, y = _load(str(tmp_path / "fg"))
    np.testing.assert_allclose(y, [[3.0]])
    _check_simple_save_meta(meta)
    tf_meta, _ = _load(str(tmp_path / "tf"))
    for field in ("meta_info_def", "graph_def", "collection_def", "signature_def",
                  "saver_def"):
        assert getattr(meta, field) == getattr(tf_meta, field), field
    assert meta.SerializeToString() == tf_meta.SerializeToString()


def test_partitioned_variable_message_is_the_same_in_both_formats(tmp_path):
    metas = {}
    for fmt in ("tensorflow", "flowgraph"):
        path = str(tmp_path / fmt)
        with tf.Graph().as_default(), tf.Session() as s:
            x = tf.placeholder(tf.float32, [None, 4], name="x")
            w = tf.get_variable("w", [4, 2], partitioner=tf.fixed_size_partitioner(2))
            s.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(s, path, {"x": x}, {"y": tf.matmul(x, w, name="y")},
                                       format=fmt)
        with tf.Graph().as_default(), tf.Session() as s:
            metas[fmt] = tf.saved_model.loader.load(s, ["serve"], path)
    meta = metas["flowgraph"]
    infos = [VariableDefProto.FromString(raw).save_slice_info_def
             for raw in meta.collection_def["variables"].bytes_list.value]
    assert [(i.full_name, list(i.full_shape), list(i.var_offset), list(i.var_shape))
            for i in infos] == [("w", [4, 2], [0, 0], [2, 2]), ("w", [4, 2], [2, 0], [2, 2])]
    names = {n.name: n for n in meta.graph_def.node}
    assert list(names["save/RestoreV2/tensor_names"].attr["value"].tensor.string_val) == \
        [b"w", b"w"]  # TensorFlow's keys: the whole variable, with each part's slice
    assert meta.SerializeToString() == metas["tensorflow"].SerializeToString()


@pytest.mark.parametrize("format", ["tensorflow", "flowgraph"])
def test_message_names_are_the_exports_under_an_import_scope(tmp_path, format):
    path = str(tmp_path / "m")
    _simple_save(path, format=format)
    meta, y = _load(path, import_scope="net")
    np.testing.assert_allclose(y, [[3.0]])
    assert meta.signature_def["serving_default"].inputs["x"].name == "x:0"
    assert _variables(meta, "variables") == [W_DEF]


def test_message_imports_as_a_meta_graph(tmp_path):
    path = str(tmp_path / "m")
    _simple_save(path, format="flowgraph")
    meta, _ = _load(path)
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        assert [v.op.name for v in tf.global_variables()] == ["w"]
        assert g.get_tensor_by_name("y:0").shape.as_list() == [None, 1]


def test_main_op_train_op_and_assets_are_collections(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a\nb\n")
    path = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as s:
        v = tf.Variable(1.0, name="v")
        asset = tf.constant(str(vocab), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        s.run(tf.global_variables_initializer())
        b = tf.saved_model.builder.SavedModelBuilder(path, format="flowgraph")
        b.add_meta_graph_and_variables(
            s, ["serve"], main_op=tf.no_op(name="init_all"),
            assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
            signature_def_map={"serving_default": tf.saved_model.predict_signature_def(
                {"p": asset}, {"v": v.value()})})
        b.save()
    with tf.Graph().as_default(), tf.Session() as s:
        meta = tf.saved_model.loader.load(s, ["serve"], path)
    assert list(meta.collection_def["saved_model_main_op"].node_list.value) == ["init_all"]
    # TensorFlow 1's builder: an Any holding each AssetFileDef
    (item,) = meta.collection_def["saved_model_assets"].any_list.value
    assert item.type_url == "type.googleapis.com/tensorflow.AssetFileDef"
    asset_def = AssetFileDefProto.FromString(item.value)
    assert (asset_def.tensor_info.name, asset_def.filename) == ("vocab_path:0", "vocab.txt")
    assert list(meta.asset_file_def) == []  # as TF1's builder leaves it


def test_stripped_op_list_is_present(tmp_path):
    path = str(tmp_path / "m")
    _simple_save(path)
    meta, _ = _load(path)
    assert meta.meta_info_def.HasField("stripped_op_list")  # TensorFlow: True
    assert len(meta.meta_info_def.stripped_op_list.op) > 0


def test_list_fields_in_field_number_order(tmp_path):
    path = str(tmp_path / "m")
    _simple_save(path)
    meta, _ = _load(path)
    assert [f.name for f, _ in meta.ListFields()] == \
        ["meta_info_def", "graph_def", "saver_def", "collection_def", "signature_def"]
    assert [f.number for f, _ in meta.ListFields()] == [1, 2, 3, 4, 5]


@pytest.mark.xfail(strict=True, reason="the message class is named MetaGraphDefProto "
                   "(meta_graph_messages; the protobuf engine names messages from it)")
def test_type_name(tmp_path):
    path = str(tmp_path / "m")
    _simple_save(path)
    meta, _ = _load(path)
    assert type(meta).__name__ == "MetaGraphDef"


def test_tensor_shape_from_a_tensor_info_shape(tmp_path):
    path = str(tmp_path / "m")
    _simple_save(path)
    meta, _ = _load(path)
    info = meta.signature_def["serving_default"].inputs["x"]
    shape = tf.TensorShape(info.tensor_shape)  # as TensorFlow accepts a TensorShapeProto
    assert shape.rank == len(info.tensor_shape.dim)
    assert shape.as_list() == [None if d.size == -1 else d.size
                               for d in info.tensor_shape.dim]


def test_dnn_classifier_export(tmp_path):
    cols = [tf.feature_column.numeric_column("x", shape=[2])]
    est = tf.estimator.DNNClassifier(hidden_units=[4], feature_columns=cols,
                                     model_dir=str(tmp_path / "md"),
                                     config=tf.estimator.RunConfig(tf_random_seed=1))
    xs = np.random.RandomState(0).uniform(-1, 1, (16, 2)).astype(np.float32)
    ys = (xs[:, 0] > 0).astype(np.int64).reshape(-1, 1)
    est.train(tf.estimator.inputs.numpy_input_fn({"x": xs}, ys, batch_size=8,
                                                 num_epochs=None, shuffle=True), steps=3)
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        {"x": tf.io.FixedLenFeature([2], tf.float32)})
    path = est.export_saved_model(str(tmp_path / "exp"), receiver)
    with tf.Graph().as_default(), tf.Session() as s:
        meta = tf.saved_model.loader.load(s, ["serve"], path)
    sigs = meta.signature_def
    assert {k: s.method_name for k, s in sigs.items()} == {
        "classification": "tensorflow/serving/classify",
        "predict": "tensorflow/serving/predict",
        "regression": "tensorflow/serving/regress",
        "serving_default": "tensorflow/serving/classify"}
    examples = ("input_example_tensor:0", 7, [-1], False)
    assert _tensor(sigs["predict"].inputs["examples"]) == examples
    assert _tensor(sigs["serving_default"].inputs["inputs"]) == examples
    assert {k: _tensor(v) for k, v in sigs["predict"].outputs.items()
            if k != "all_classes"} == {
        "all_class_ids": ("dnn/head/predictions/Tile:0", 3, [-1, 2], False),
        "class_ids": ("dnn/head/predictions/ExpandDims:0", 9, [-1, 1], False),
        "classes": ("dnn/head/predictions/str_classes:0", 7, [-1, 1], False),
        "logistic": ("dnn/head/predictions/logistic:0", 1, [-1, 1], False),
        "logits": ("dnn/logits/BiasAdd:0", 1, [-1, 1], False),
        "probabilities": ("dnn/head/predictions/probabilities:0", 1, [-1, 2], False)}
    assert _tensor(sigs["regression"].outputs["outputs"]) == \
        ("dnn/head/predictions/logistic:0", 1, [-1, 1], False)
    # TensorFlow also has cond_context (flowgraph has no cond contexts to record)
    assert sorted(meta.collection_def) == ["global_step", "saved_model_main_op", "summaries",
                                           "trainable_variables", "variables"]
    assert list(meta.collection_def["saved_model_main_op"].node_list.value) == ["group_deps"]
    assert list(meta.collection_def["summaries"].node_list.value) == [
        "dnn/dnn/hiddenlayer_0/fraction_of_zero_values:0",
        "dnn/dnn/hiddenlayer_0/activation:0",
        "dnn/dnn/logits/fraction_of_zero_values:0", "dnn/dnn/logits/activation:0"]
    assert _variables(meta, "global_step") == [
        ("global_step:0", "global_step/Assign", "global_step/read:0",
         "global_step/Initializer/zeros:0", False)]
    # TensorFlow's canned DNN partitions (".../kernel/part_0:0", so are we) and uses
    # resource variables; the initial values' names are the same.
    assert [d[3] for d in _variables(meta, "trainable_variables")] == [
        "dnn/hiddenlayer_0/kernel/part_0/Initializer/random_uniform:0",
        "dnn/hiddenlayer_0/bias/part_0/Initializer/zeros:0",
        "dnn/logits/kernel/part_0/Initializer/random_uniform:0",
        "dnn/logits/bias/part_0/Initializer/zeros:0"]
    assert _variables(meta, "variables") == \
        _variables(meta, "global_step") + _variables(meta, "trainable_variables")
    assert list(meta.meta_info_def.tags) == ["serve"]
    assert (meta.saver_def.restore_op_name, meta.saver_def.filename_tensor_name) == \
        ("save/restore_all", "save/Const:0")

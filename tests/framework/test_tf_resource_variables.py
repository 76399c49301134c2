"""TensorFlow's resource variables in graph files (`tf_formats.resource_variables`):
kept as resource variables where flowgraph runs all their ops (by ``import_meta_graph``
and the SavedModel loader alike), else read as reference variables.

The fixtures in tests/data/tf_formats/resource_meta were written once by TensorFlow 2.15
(tf.compat.v1, ``make_fixture.py`` there): variables under
``variable_scope(use_resource=True)``, a ``tf.gather`` of one of them (``ResourceGather``,
whose gradient updates it by ``ResourceScatterAdd``), three GradientDescent steps
(``ResourceApplyGradientDescent``), a checkpoint with its ``.meta`` file and a
SavedModel. TensorFlow printed the predictions below, and the loss 0.069042474 after
a fourth step.
"""

import os

import numpy as np

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph import read_meta_graph_file
from flowgraph.framework.tf_formats.meta_graph_messages import VariableDefProto
from flowgraph.framework.tf_formats.resource_variables import meta_graph_as_refs

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats",
                    "resource_meta")
X = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
IDS = np.array([1, 3], np.int32)
T = np.array([[1, 0], [0, 1]], np.float32)
TF_Y = [[0.8345261812210083, 0.2578570246696472], [0.2985563278198242, 0.5347630977630615]]
TF_LOSS_AFTER_4TH_STEP = 0.069042474


def test_the_meta_file_keeps_its_resource_variables():
    """flowgraph runs every resource op of the file, so it reads as TensorFlow wrote it."""
    mg = read_meta_graph_file(os.path.join(DATA, "model.ckpt-3.meta"))
    ops = {n.op for n in mg.graph_def.node}
    assert {"VarHandleOp", "ReadVariableOp", "AssignVariableOp",
            "ResourceApplyGradientDescent", "ResourceGather", "ResourceScatterAdd"} <= ops
    defs = [VariableDefProto.FromString(raw)
            for raw in mg.collection_def["variables"].bytes_list.value]
    assert [d.is_resource for d in defs] == [True, True, True, False]  # global_step: ref


def test_forced_conversion_reads_resource_variables_as_reference_variables():
    mg = read_meta_graph_file(os.path.join(DATA, "model.ckpt-3.meta"))
    meta_graph_as_refs(mg, force=True)
    ops = {n.op for n in mg.graph_def.node}
    assert not ops & {"VarHandleOp", "ReadVariableOp", "AssignVariableOp",
                      "ResourceApplyGradientDescent", "ResourceGather", "ResourceScatterAdd"}
    assert {"VariableV2", "ApplyGradientDescent", "Gather", "ScatterAdd"} <= ops
    defs = [VariableDefProto.FromString(raw)
            for raw in mg.collection_def["variables"].bytes_list.value]
    assert [d.is_resource for d in defs] == [False] * 4


def test_import_meta_graph_restores_and_trains_as_tensorflow():
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(os.path.join(DATA, "model.ckpt-3.meta"))
        assert [v.op.name for v in tf.trainable_variables()] == ["model/w", "model/b",
                                                                 "model/emb"]
        # TF: ResourceVariables, as the file holds them
        assert [type(v).__name__ for v in tf.trainable_variables()] == \
            ["ResourceVariable"] * 3
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(DATA, "model.ckpt-3"))
            np.testing.assert_allclose(sess.run("y:0", {"x:0": X, "ids:0": IDS}), TF_Y,
                                       rtol=1e-6)
            feed = {"x:0": X, "ids:0": IDS, "t:0": T}
            sess.run(tf.get_collection("train_op")[0], feed)
            np.testing.assert_allclose(sess.run("loss:0", feed), TF_LOSS_AFTER_4TH_STEP,
                                       rtol=1e-6)
            assert sess.run("global_step:0") == 4


def test_a_saved_model_with_resource_variables_loads():
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], os.path.join(DATA, "saved_model"))
        sig = meta.signature_def["serving_default"]
        y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: X,
                                             sig.inputs["ids"].name: IDS})
    np.testing.assert_allclose(y, TF_Y, rtol=1e-6)


def test_use_resource_variables_export_as_resource_variables(tmp_path):
    """``use_resource=True`` builds a resource variable; the ``.meta`` file says so, as
    TensorFlow's does (``is_resource``, the snapshot is ``Read/ReadVariableOp``)."""
    with tf.Graph().as_default():
        with tf.variable_scope("m", use_resource=True):
            v = tf.get_variable("v", [2], initializer=tf.ones_initializer())
        meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
    assert v.op.type == "VarHandleOp"
    defs = [VariableDefProto.FromString(raw)
            for raw in meta.collection_def["variables"].bytes_list.value]
    assert [(d.variable_name, d.is_resource, d.snapshot_name) for d in defs] == \
        [("m/v:0", True, "m/v/Read/ReadVariableOp:0")]

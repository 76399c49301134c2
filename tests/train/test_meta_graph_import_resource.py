"""``tf.train.import_meta_graph`` of an in-memory MetaGraphDef with resource variables
(the TF 2.15-written fixture of tests/data/tf_formats/resource_meta, read as a message
rather than a file), as TensorFlow accepts both."""

import os

import numpy as np

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import (
    MetaGraphDefProto,
    VariableDefProto,
)

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats",
                    "resource_meta")
X = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
IDS = np.array([1, 3], np.int32)
T = np.array([[1, 0], [0, 1]], np.float32)
# Printed by TensorFlow 2.15 for this checkpoint (see make_fixture.py there).
TF_Y = [[0.8345261812210083, 0.2578570246696472], [0.2985563278198242, 0.5347630977630615]]
TF_LOSS_AFTER_4TH_STEP = 0.069042474


def _message():
    with open(os.path.join(DATA, "model.ckpt-3.meta"), "rb") as f:
        mg = MetaGraphDefProto.FromString(f.read())
    defs = [VariableDefProto.FromString(raw)
            for raw in mg.collection_def["variables"].bytes_list.value]
    assert sum(d.is_resource for d in defs) == 3  # the raw message has resource variables
    return mg


def test_in_memory_meta_graph_with_resource_variables_restores_and_trains():
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(_message())
        assert [v.op.name for v in tf.trainable_variables()] == ["model/w", "model/b",
                                                                 "model/emb"]
        assert len(tf.global_variables()) == 4
        with tf.Session() as sess:
            saver.restore(sess, os.path.join(DATA, "model.ckpt-3"))
            np.testing.assert_allclose(sess.run("y:0", {"x:0": X, "ids:0": IDS}), TF_Y,
                                       rtol=1e-6)
            feed = {"x:0": X, "ids:0": IDS, "t:0": T}
            sess.run(tf.get_collection("train_op")[0], feed)
            np.testing.assert_allclose(sess.run("loss:0", feed), TF_LOSS_AFTER_4TH_STEP,
                                       rtol=1e-6)


def test_in_memory_message_is_not_modified():
    mg = _message()
    before = mg.SerializeToString()
    with tf.Graph().as_default():
        tf.train.import_meta_graph(mg)
    assert mg.SerializeToString() == before

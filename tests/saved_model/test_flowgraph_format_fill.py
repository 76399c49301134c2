"""A flowgraph-format SavedModel holding a uniform constant (``tf.constant(v, shape=)``,
written in the compact "fill" encoding) validates and loads."""

import numpy as np

import flowgraph as tf


def test_uniform_constant_round_trips_through_flowgraph_format(tmp_path):
    export_dir = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.add(x, tf.constant(0.25, shape=[3]), name="y")
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir, format="flowgraph")
        sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, ["serve"],
                                             signature_def_map={"serving_default": sig})
        builder.save()
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        out = sess.run("y:0", {"x:0": np.ones((2, 3), np.float32)})
    np.testing.assert_array_equal(out, np.full((2, 3), 1.25, np.float32))

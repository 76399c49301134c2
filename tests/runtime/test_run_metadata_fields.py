"""`RunMetadata.HasField` as TensorFlow answers it (values from TF 2.15)."""

import pytest

import flowgraph as tf


def test_has_field_before_and_after_a_traced_run():
    md = tf.RunMetadata()
    assert (md.HasField("step_stats"), md.HasField("cost_graph")) == (False, False)
    for name in ("partition_graphs", "nope"):
        with pytest.raises(ValueError):
            md.HasField(name)
    p = tf.placeholder(tf.float32)
    with tf.Session() as sess:
        sess.run(p * 2.0, {p: 1.0}, run_metadata=md,
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
    assert (md.HasField("step_stats"), md.HasField("cost_graph")) == (True, False)


def test_partition_graphs_are_graph_defs_whose_nodes_name_their_device():
    """TF 2.15 (tf-oracle): ``RunMetadata.partition_graphs`` holds ``GraphDef`` messages
    (serializable, ``node[i].op``/``.device``)."""
    with tf.Graph().as_default():
        x = tf.random_normal([4, 4], seed=1)
        y = tf.reduce_sum(tf.matmul(x, x))
        md = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(y, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
    (part,) = md.partition_graphs
    assert isinstance(part, tf.GraphDef)
    assert {n.op for n in part.node} >= {"RandomStandardNormal", "MatMul", "Sum"}
    assert all(n.device.endswith("device:CPU:0") for n in part.node)
    again = tf.GraphDef.FromString(part.SerializeToString())
    assert [n.name for n in again.node] == [n.name for n in part.node]

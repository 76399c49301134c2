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

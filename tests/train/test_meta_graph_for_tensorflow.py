"""A ``.meta`` file that flowgraph's monitored session writes holds TensorFlow's ops only,
so TensorFlow imports it (checked with tf-oracle: TF 2.15's `import_meta_graph` of this
file printed the values asserted below), and flowgraph reads it back alike."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import textwrap

import flowgraph as tf
from flowgraph.framework.tf_formats.meta_graph_messages import MetaGraphDefProto
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS

_WRITE = textwrap.dedent("""
    import sys
    import flowgraph as tf
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0]])
        w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer())
        loss = tf.reduce_sum(tf.matmul(x, w))
        step = tf.train.get_or_create_global_step()
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
        with tf.train.MonitoredTrainingSession(checkpoint_dir=sys.argv[1],
                                               save_checkpoint_steps=2) as sess:
            for _ in range(3):
                sess.run(train)
""")


def test_a_monitored_sessions_meta_file_holds_only_tensorflows_ops(tmp_path):
    subprocess.run([sys.executable, "-c", _WRITE, str(tmp_path)], check=True, timeout=120)
    meta = sorted(glob.glob(os.path.join(tmp_path, "model.ckpt-*.meta")))[-1]
    with open(meta, "rb") as f:
        message = MetaGraphDefProto.FromString(f.read())
    types = {node.op for node in message.graph_def.node}
    assert {"Merge", "RefSwitch", "Where", "IsVariableInitialized"} <= types
    assert sorted(t for t in types if t not in OP_DEFS) == []

    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(meta)
        reports = [op.outputs[0] for op in g.get_operations()
                   if op.name.startswith("report_uninitialized_variables")
                   and op.type == "GatherV2"]
        read = g.get_tensor_by_name("global_step/ReadVariableOrDefault:0")
        with tf.Session() as sess:
            # TF 2.15 on this file: [b'global_step', b'w'] twice, then 0
            assert [sorted(sess.run(r).tolist()) for r in reports] == [
                [b"global_step", b"w"]] * 2
            assert sess.run(read) == 0  # the default: the step is not initialized yet
            saver.restore(sess, meta[:-len(".meta")])
            assert [sess.run(r).tolist() for r in reports] == [[], []]
            assert sess.run(read) == 3  # TF 2.15: 3

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


def _label_checks():
    """A graph with the canned heads' two label checks on fed labels and logits."""
    from flowgraph.ops.op_util import make_op

    labels = tf.placeholder(tf.float32, None, name="labels")  # any rank
    logits = tf.placeholder(tf.float32, [None, 3], name="logits")
    in_range = make_op("HeadAssertRange", [labels],
                       {"low": 0.0, "high": 1.0, "message": "labels"}, name="range")
    shaped = make_op("HeadAssertShape", [labels, logits],
                     {"last_dims": [1, 3], "what": "labels", "message": "bad"}, name="shape")
    with tf.control_dependencies([in_range, shaped]):
        return tf.identity(labels, name="checked")


def test_the_heads_label_checks_are_written_as_asserts_that_check_alike():
    import numpy as np
    import pytest

    with tf.Graph().as_default():
        _label_checks()
        meta = tf.train.export_meta_graph()
    types = {node.op for node in meta.graph_def.node}
    assert "Assert" in types and not types & {"HeadAssertRange", "HeadAssertShape"}
    assert sorted(t for t in types if t not in OP_DEFS) == []
    cases = [((4, 1), 0.5, True), ((4, 3), 0.0, True), ((4, 3), 1.0, True),
             ((4, 2), 0.5, False), ((3, 1), 0.5, False), ((4,), 0.5, False),
             ((4, 1, 1), 0.5, False), ((1,), 0.5, False), ((4, 1), 1.5, False),
             ((4, 1), -0.5, False)]
    for graph_of in ("original", "imported"):
        with tf.Graph().as_default() as g:
            if graph_of == "original":
                _label_checks()
            else:
                tf.train.import_meta_graph(meta)
            checked = g.get_tensor_by_name("checked:0")
            with tf.Session() as sess:
                for shape, value, ok in cases:
                    feed = {"labels:0": np.full(shape, value, np.float32),
                            "logits:0": np.zeros((4, 3), np.float32)}
                    if ok:
                        sess.run(checked, feed)
                        continue
                    with pytest.raises(tf.errors.InvalidArgumentError):
                        sess.run(checked, feed)


def test_a_canned_estimators_meta_file_holds_only_tensorflows_op_types(tmp_path):
    """(Its op types only: TensorFlow still cannot import it, since the input pipeline's
    iterator carries no dataset function, TensorFlow's form of a tf.data graph.)"""
    import numpy as np

    def input_fn():
        x = np.random.RandomState(0).rand(16, 2).astype(np.float32)
        y = (x[:, :1] > 0.5).astype(np.int64)
        return tf.data.Dataset.from_tensor_slices(({"a": x}, y)).repeat().batch(4)

    est = tf.estimator.DNNClassifier([3], [tf.feature_column.numeric_column("a", [2])],
                                     model_dir=str(tmp_path))
    est.train(input_fn, steps=2)
    meta = sorted(glob.glob(os.path.join(tmp_path, "model.ckpt-*.meta")))[-1]
    with open(meta, "rb") as f:
        message = MetaGraphDefProto.FromString(f.read())
    assert sorted({n.op for n in message.graph_def.node} - set(OP_DEFS)) == []


def test_a_sparse_gradient_descent_step_is_written_as_tensorflows_scatter(tmp_path):
    """An embedding trained by GradientDescentOptimizer: TF 2.15 imports the ``.meta``
    (ScatterSub / ResourceScatterSub), restores and trains it to these values."""
    import numpy as np

    for use_resource in (False, True):
        prefix = str(tmp_path / f"resource{int(use_resource)}" / "model")
        with tf.Graph().as_default():
            emb = tf.get_variable("emb", initializer=tf.constant(
                [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), use_resource=use_resource)
            ids = tf.placeholder(tf.int32, [None], name="ids")
            loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids)))
            tf.train.GradientDescentOptimizer(0.1).minimize(loss, name="train")
            saver = tf.train.Saver()
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                saver.save(sess, prefix)
        with open(prefix + ".meta", "rb") as f:
            types = {n.op for n in MetaGraphDefProto.FromString(f.read()).graph_def.node}
        assert ("ResourceScatterSub" if use_resource else "ScatterSub") in types
        assert sorted(types - set(OP_DEFS)) == []
        with tf.Graph().as_default():
            saver = tf.train.import_meta_graph(prefix + ".meta")
            with tf.Session() as sess:
                saver.restore(sess, prefix)
                for _ in range(2):
                    sess.run("train", {"ids:0": [0, 2, 2]})
                emb = next(v for v in tf.global_variables() if v.op.name == "emb")
                np.testing.assert_allclose(sess.run(emb), [[0.64, 1.28], [3.0, 4.0],
                                                           [1.8, 2.16]], rtol=1e-6)

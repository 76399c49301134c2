"""A graph with Adam on a sparse gradient, written for TensorFlow: `SparseApplyAdam` (a
flowgraph op) becomes TensorFlow's own update ops (`op_rewrites_adam`), so TF 2.15 imports
the `.meta` and trains on to the same values (checked with the oracle's TensorFlow when
it is installed here; TF's numbers are inline)."""

import ast
import os
import subprocess
import textwrap

import numpy as np
import pytest

import flowgraph as tf

# TF 2.15: import_meta_graph of the file below, restore, 3 steps on ids [1, 3, 1]
TF_AFTER_3_STEPS = [[0.0, 1.0, 2.0], [2.700383, 3.700275, 4.700214], [6.0, 7.0, 8.0],
                    [8.700113, 9.700102, 10.700092]]
ORACLE_PYTHON = "/tmp/tf-oracle-venv/bin/python"


def _train_and_save(directory):
    with tf.Graph().as_default():
        emb = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3), name="emb")
        ids = tf.placeholder(tf.int64, [None], name="ids")
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids)), name="loss")
        train = tf.train.AdamOptimizer(0.1).minimize(loss, name="train")
        assert "SparseApplyAdam" in {op.type for op in tf.get_default_graph().get_operations()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"))
            for _ in range(3):
                sess.run(train, {ids: [1, 3, 1]})
            return path, sess.run(emb)


def test_meta_graph_has_tensorflow_ops_and_trains_the_same(tmp_path):
    path, trained = _train_and_save(str(tmp_path))
    np.testing.assert_allclose(trained, TF_AFTER_3_STEPS, rtol=1e-6)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(path + ".meta")
        types = {op.type for op in tf.get_default_graph().get_operations()}
        assert "SparseApplyAdam" not in types and {"Unique", "ScatterAdd"} <= types
        with tf.Session() as sess:
            saver.restore(sess, path)
            for _ in range(3):
                sess.run("train", {"ids:0": [1, 3, 1]})
            np.testing.assert_allclose(sess.run("emb:0"), trained, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(ORACLE_PYTHON), reason="TensorFlow oracle not here")
def test_tensorflow_trains_the_exported_meta_graph(tmp_path):
    path, trained = _train_and_save(str(tmp_path))
    script = textwrap.dedent(f"""
        import numpy as np
        import tensorflow.compat.v1 as tf
        tf.disable_v2_behavior()
        saver = tf.train.import_meta_graph({path + '.meta'!r})
        with tf.Session() as s:
            saver.restore(s, {path!r})
            for _ in range(3):
                s.run("train", {{"ids:0": [1, 3, 1]}})
            print(repr(s.run("emb:0").tolist()))
    """)
    out = subprocess.run([ORACLE_PYTHON, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    got = ast.literal_eval(out.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(got, trained, rtol=1e-6)

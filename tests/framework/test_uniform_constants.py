"""One value over a shape (``tf.constant(0.1, shape=...)``, an optimizer slot's initial
value) is held as a view of that value, written compactly in every graph format (TF's
one value and a shape), and laid out densely only when a plan runs it."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.constant_op import dense_constant, is_uniform_view
from flowgraph.framework.serialization import decode_attr, encode_attr
from flowgraph.framework.tf_formats.graph_def import tensor_proto, tensor_value
from flowgraph.runtime.config import RewriterConfig


def test_constant_with_shape_holds_one_value_and_runs_dense():
    with tf.Graph().as_default():
        c = tf.constant(0.5, shape=[300, 300])
        held = c.op.attrs["value"]  # the held array (get_attr gives a TensorProto)
        assert is_uniform_view(held) and held.strides == (0, 0)
        with tf.Session() as sess:
            out = sess.run(c)
    assert out.shape == (300, 300) and out.flags.c_contiguous
    np.testing.assert_array_equal(out, np.full((300, 300), 0.5, np.float32))


def test_uniform_constant_without_constant_folding():
    off = tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=RewriterConfig(
        constant_folding=RewriterConfig.OFF, arithmetic_optimization=RewriterConfig.OFF)))
    with tf.Graph().as_default():
        c = tf.constant(3, shape=[4, 5], dtype=tf.int32)
        y = tf.matmul(tf.cast(c, tf.float32), tf.ones([5, 2]))
        with tf.Session(config=off) as sess:
            out, m = sess.run([c, y])
    assert out.flags.c_contiguous
    np.testing.assert_array_equal(m, np.full((4, 2), 15.0, np.float32))


def test_adagrad_slots_keep_the_meta_graph_small(tmp_path):
    """The slot's initial value (0.1 over the variable's shape) used to be written in
    full: a 1000x1000 variable made a 4.4 MB .meta file."""
    prefix = os.path.join(tmp_path, "model")
    with tf.Graph().as_default():
        w = tf.get_variable("w", [1000, 1000], initializer=tf.ones_initializer())
        train = tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(w * w))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            expected = sess.run(w)
            tf.train.Saver().save(sess, prefix, write_meta_graph=True)
    assert os.path.getsize(prefix + ".meta") < 20_000
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            slot_init = sess.run("w/Adagrad:0")
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run("w:0"), expected)
    np.testing.assert_array_equal(slot_init, np.full((1000, 1000), 0.1, np.float32))
    # and in a fresh interpreter, as a user loading the files elsewhere would
    program = (
        "import sys, numpy as np, flowgraph as tf\n"
        "saver = tf.train.import_meta_graph(sys.argv[1] + '.meta')\n"
        "with tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n"
        "    assert (sess.run('w/Adagrad:0') == np.float32(0.1)).all()\n"
        "    saver.restore(sess, sys.argv[1])\n"
        "    print(float(sess.run('w:0').sum()))\n")
    done = subprocess.run([sys.executable, "-c", program, prefix], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout.split()[-1]) == pytest.approx(float(expected.sum()), rel=1e-6)


def test_graph_def_writes_tensorflows_compact_form():
    with tf.Graph().as_default() as g:
        tf.constant(0.25, shape=[64, 64], name="quarter")
        tf.constant([[1.0, 2.0]], name="pair")
        nodes = {n.name: n for n in g.as_graph_def().node}
    quarter = nodes["quarter"].attr["value"].tensor
    assert list(quarter.float_val) == [0.25] and not quarter.tensor_content
    assert [d.size for d in quarter.tensor_shape.dim] == [64, 64]
    assert nodes["pair"].attr["value"].tensor.tensor_content  # a plain array: in full


def test_compact_forms_read_back_as_views_without_allocating():
    proto = tensor_proto(np.broadcast_to(np.float32(2.0), (3, 4)))
    back = tensor_value(proto)
    assert is_uniform_view(back) and back.shape == (3, 4) and float(back[2, 3]) == 2.0
    huge = encode_attr(np.broadcast_to(np.int64(7), (2, 3)))
    huge["shape"] = [1 << 20, 1 << 20]  # declared 8 TB: nothing is allocated on reading
    view = decode_attr(huge)
    assert view.shape == (1 << 20, 1 << 20) and int(view[5, 9]) == 7
    assert not view.flags.writeable


@pytest.mark.parametrize("bad", [
    {"fill": "AAAA", "dtype": "<f4", "shape": [2, -1]},
    {"fill": "AAAAAAAA", "dtype": "<f4", "shape": [2, 2]},  # two values, not one
    {"fill": "AAAA", "dtype": "<f4", "shape": "2"},
    {"fill": "AAAA", "dtype": "<f4", "shape": [1 << 40, 1 << 40]},  # beyond any memory
])
def test_malformed_compact_arrays_are_refused(bad):
    with pytest.raises(ValueError, match="filled array"):
        decode_attr(bad)


def test_dense_constant_leaves_other_values_alone():
    a = np.arange(4.0)
    assert dense_constant(a) is a
    scalar = np.float32(1.0)
    assert dense_constant(scalar) is scalar
    dense = dense_constant(np.broadcast_to(np.float64(1.5), (2, 2)))
    assert dense.strides == (16, 8) and not dense.flags.writeable


def test_graph_events_write_uniform_constants_compactly(tmp_path):
    from flowgraph.framework.event_format import GraphDef, summary_iterator

    with tf.Graph().as_default() as g:
        tf.constant(0.5, shape=[1000, 1000], name="half")
        writer = tf.summary.FileWriter(str(tmp_path), g)
        writer.close()
    (name,) = os.listdir(tmp_path)
    assert os.path.getsize(tmp_path / name) < 10_000
    graphs = [GraphDef.FromString(e.graph_def) for e in summary_iterator(str(tmp_path / name))
              if e.HasField("graph_def")]
    (half,) = [n for n in graphs[0].node if n.name == "half"]
    assert list(half.attr["value"].tensor.float_val) == [0.5]

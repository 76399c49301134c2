"""Partitioned variables in checkpoints, as TensorFlow saves them: ONE entry under the
full name with its slices (flowgraph/framework/tf_formats/bundle_slices.py), restored into
any partitioning or none.

The fixture tests/data/tf_formats/partitioned was written by TensorFlow 2.15 (tf-oracle):
``w`` [200, 3] in 3 parts (``fixed_size_partitioner(3)``, random values saved in
full.npy) and ``e`` [130, 2] of ones in 4 parts (``min_max_variable_partitioner(4, 64)``),
``tf.train.Saver().save(sess, d + "/model.ckpt", global_step=1)``.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.framework.tf_formats.meta_graph_messages import (
    MetaGraphDefProto,
    VariableDefProto,
)
from flowgraph.framework.tf_formats.table import read_table, write_table
from flowgraph.train.checkpoint_utils import write_checkpoint

HERE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats",
                    "partitioned")
FULL = np.load(os.path.join(HERE, "full.npy"))


def _build(parts_w, parts_e=4, init=None):
    kw = {"partitioner": tf.fixed_size_partitioner(parts_w)} if parts_w else {}
    w = tf.get_variable("w", [200, 3], initializer=init or tf.zeros_initializer(), **kw)
    e = tf.get_variable("e", [130, 2], initializer=tf.zeros_initializer(),
                        partitioner=tf.min_max_variable_partitioner(
                            max_partitions=parts_e, min_slice_size=64))
    return w, e


def _whole(sess, v):
    return sess.run(tf.convert_to_tensor(v))


def test_tensorflows_partitioned_checkpoint_lists_and_reads_whole_tensors():
    assert tf.train.list_variables(HERE) == [("e", [130, 2]), ("w", [200, 3])]
    reader = tf.train.load_checkpoint(HERE)
    np.testing.assert_array_equal(reader.get_tensor("w"), FULL)
    np.testing.assert_array_equal(reader.get_tensor("e"), np.ones((130, 2), np.float32))
    assert not reader.has_tensor("w/part_0")


@pytest.mark.parametrize("parts", [3, 2, 5, None])
def test_restore_tensorflows_checkpoint_into_any_partitioning(parts):
    with tf.Graph().as_default():
        w, e = _build(parts)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(HERE))
            np.testing.assert_array_equal(_whole(sess, w) if parts else sess.run(w), FULL)
            assert _whole(sess, e).sum() == 260.0


def test_import_tensorflows_meta_graph_and_restore():
    prefix = os.path.join(HERE, "model.ckpt-1")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta")
        parts = {v.op.name: v for v in tf.global_variables()}
        assert parts["w/part_1"]._save_slice_info.spec == "200 3 67,67:0,3"
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(parts["w/part_1"]), FULL[67:134])


def test_flowgraph_writes_tensorflows_keys_and_restores_any_partitioning(tmp_path):
    with tf.Graph().as_default():
        w, _ = _build(3, init=tf.random_uniform_initializer(seed=1))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=1)
            full = _whole(sess, w)
    ours = read_table(open(path + ".index", "rb").read())
    theirs = read_table(open(os.path.join(HERE, "model.ckpt-1.index"), "rb").read())
    assert [k for k, _ in ours] == [k for k, _ in theirs]  # same keys, parts included
    assert dict(ours)[b"w"] == dict(theirs)[b"w"]  # same full entry: dtype, shape, slices
    assert tf.train.list_variables(str(tmp_path)) == [("e", [130, 2]), ("w", [200, 3])]
    for parts in (2, None):
        with tf.Graph().as_default():
            w2, _ = _build(parts, parts_e=2)
            saver = tf.train.Saver()
            with tf.Session() as sess:
                saver.restore(sess, path)
                np.testing.assert_array_equal(_whole(sess, w2) if parts else sess.run(w2),
                                              full)
    # and a whole variable saved is restored into a partitioned one
    with tf.Graph().as_default():
        _build(None, init=tf.constant_initializer(2.0))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            whole = tf.train.Saver().save(sess, str(tmp_path / "whole"))
    with tf.Graph().as_default():
        w3, _ = _build(4)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, whole)
            assert (_whole(sess, w3) == 2.0).all()


def test_dict_var_list_with_a_partitioned_variable_and_flowgraph_format(tmp_path):
    with tf.Graph().as_default():
        w, _ = _build(3, init=tf.random_uniform_initializer(seed=2))
        saver = tf.train.Saver({"renamed": w}, format="flowgraph")  # one-file: whole tensors
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "m"))
            full = _whole(sess, w)
    assert tf.train.list_variables(path) == [("renamed", [200, 3])]
    np.testing.assert_array_equal(tf.train.load_variable(path, "renamed"), full)


def test_an_older_flowgraph_checkpoint_with_one_entry_per_part_restores(tmp_path):
    path = str(tmp_path / "old")
    write_checkpoint(path, {"w/part_0": FULL[:67], "w/part_1": FULL[67:134],
                            "w/part_2": FULL[134:], "e": np.ones((130, 2), np.float32)})
    with tf.Graph().as_default():
        w, _ = _build(3)
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            np.testing.assert_array_equal(_whole(sess, w), FULL)


def test_the_full_shape_must_match(tmp_path):
    with tf.Graph().as_default():
        tf.get_variable("w", [100, 3], partitioner=tf.fixed_size_partitioner(2))
        tf.get_variable("e", [130, 2])
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                                 match=r"full shape \[100, 3\].*\[200, 3\]"):
            tf.train.Saver().restore(sess, os.path.join(HERE, "model.ckpt-1"))


@pytest.mark.parametrize("damage", ["drop_part", "bad_slice"])
def test_a_damaged_partitioned_entry_is_data_loss(tmp_path, damage):
    shutil.copytree(HERE, tmp_path / "p")
    index = tmp_path / "p" / "model.ckpt-1.index"
    items = read_table(index.read_bytes())
    if damage == "drop_part":
        items = [(k, v) for k, v in items if not k.startswith(b"\x00w")]
    else:  # the slice list of 'w' claims an extent past the tensor's end
        items = [(k, v.replace(b"\x0a\x04\x08\x43\x10\x43", b"\x0a\x04\x08\x43\x10\x7f"))
                 if k == b"w" else (k, v) for k, v in items]
    index.write_bytes(write_table(items))
    reader = tf.train.NewCheckpointReader(str(tmp_path / "p" / "model.ckpt-1"))
    with pytest.raises(errors.DataLossError, match="'w'"):
        reader.get_tensor("w")


@pytest.mark.parametrize("how", ["scope", "name", "object"])
def test_init_from_checkpoint_into_a_partitioned_variable(how):
    with tf.Graph().as_default():
        with tf.variable_scope("new"):
            w = tf.get_variable("w", [200, 3], partitioner=tf.fixed_size_partitioner(4))
        target = {"scope": ("/", "new/"), "name": ("w", "new/w"), "object": ("w", w)}[how]
        tf.train.init_from_checkpoint(HERE, dict([target]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(_whole(sess, w), FULL)


@pytest.mark.parametrize("fmt", ["flowgraph", "tensorflow"])
def test_saved_model_with_a_partitioned_variable(tmp_path, fmt):
    """flowgraph's SavedModel format keeps one key per part (its loader restores each
    variable by key); TensorFlow's writes the variable as TensorFlow does, with slices."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.get_variable("w", [3, 2], initializer=tf.random_uniform_initializer(seed=1),
                            partitioner=tf.fixed_size_partitioner(3, axis=0))
        y = tf.matmul(x, tf.convert_to_tensor(w), name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(y, {x: [[1.0, 2.0, 3.0]]})
            tf.saved_model.simple_save(sess, str(tmp_path / "m"), {"x": x}, {"y": y},
                                       format=fmt)
            full = _whole(sess, w)
    variables = str(tmp_path / "m" / "variables" / "variables")
    if fmt == "tensorflow":
        assert tf.train.list_variables(variables) == [("w", [3, 2])]
        np.testing.assert_array_equal(tf.train.load_variable(variables, "w"), full)
    else:
        assert [k for k, _ in tf.train.list_variables(variables)] == [
            "w/part_0", "w/part_1", "w/part_2"]
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], str(tmp_path / "m"))
        np.testing.assert_allclose(sess.run("y:0", {"x:0": [[1.0, 2.0, 3.0]]}), want)


def _variable_defs(meta: MetaGraphDefProto) -> list[bytes]:
    return list(meta.collection_def["variables"].bytes_list.value)


def test_meta_graph_writes_tensorflows_variable_defs_for_the_parts():
    """Each part's VariableDef carries its save_slice_info_def: the bytes are those of
    TensorFlow's .meta of the same graph (the fixture's)."""
    with open(os.path.join(HERE, "model.ckpt-1.meta"), "rb") as f:
        theirs = MetaGraphDefProto.FromString(f.read())
    with tf.Graph().as_default():
        tf.get_variable("w", [200, 3], partitioner=tf.fixed_size_partitioner(3))
        tf.get_variable("e", [130, 2], initializer=tf.ones_initializer(),
                        partitioner=tf.min_max_variable_partitioner(4, min_slice_size=64))
        ours = tf.train.export_meta_graph()
    assert _variable_defs(ours) == _variable_defs(theirs)
    info = VariableDefProto.FromString(_variable_defs(ours)[1]).save_slice_info_def
    assert (info.full_name, list(info.full_shape), list(info.var_offset),
            list(info.var_shape)) == ("w", [200, 3], [67, 0], [67, 3])


def test_export_scope_strips_the_full_name_too():
    with tf.Graph().as_default():
        with tf.variable_scope("tower"):
            tf.get_variable("w", [4, 2], partitioner=tf.fixed_size_partitioner(2))
        meta = tf.train.export_meta_graph(export_scope="tower")
    vd = VariableDefProto.FromString(_variable_defs(meta)[0])
    assert (vd.variable_name, vd.save_slice_info_def.full_name) == ("w/part_0:0", "w")


def _save_partitioned(tmp_path, seed=4):
    with tf.Graph().as_default():
        w, _ = _build(3, init=tf.random_uniform_initializer(seed=seed))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            prefix = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=1)
            return prefix, _whole(sess, w)


def test_import_flowgraphs_own_meta_graph_and_restore(tmp_path):
    """The parts are placed by their VariableDefs' save_slice_info_def, which a graph
    imported without its saver has as well (its new Saver keys them by full name)."""
    prefix, full = _save_partitioned(tmp_path)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(prefix + ".meta")
        parts = {v.op.name: v for v in tf.global_variables()}
        assert parts["w/part_1"]._save_slice_info.spec == "200 3 67,67:0,3"
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(parts["w/part_2"]), full[134:])
    meta = MetaGraphDefProto.FromString(open(prefix + ".meta", "rb").read())
    meta.ClearField("saver_def")
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(meta)  # a new Saver, keyed by the VariableDefs
        parts = {v.op.name: v for v in tf.global_variables()}
        assert parts["e/part_3"]._save_slice_info.spec == "130 2 98,32:0,2"
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(parts["w/part_0"]), full[:67])


def test_a_meta_graph_without_save_slice_info_falls_back_to_the_savers_slices(tmp_path):
    """.meta files written by flowgraph before it wrote save_slice_info_def: the saver's
    shape_and_slices (``"200 3 67,67:0,3"``) says where each part sits."""
    prefix, full = _save_partitioned(tmp_path, seed=5)
    meta = MetaGraphDefProto.FromString(open(prefix + ".meta", "rb").read())
    for key in ("variables", "trainable_variables"):
        values = meta.collection_def[key].bytes_list.value
        stripped = []
        for raw in values:
            vd = VariableDefProto.FromString(raw)
            vd.ClearField("save_slice_info_def")
            stripped.append(vd.SerializeToString())
        del values[:]
        values.extend(stripped)
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(meta)
        parts = {v.op.name: v for v in tf.global_variables()}
        assert parts["w/part_1"]._save_slice_info.spec == "200 3 67,67:0,3"
        with tf.Session() as sess:
            saver.restore(sess, prefix)
            np.testing.assert_array_equal(sess.run(parts["w/part_2"]), full[134:])

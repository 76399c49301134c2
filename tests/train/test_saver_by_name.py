"""A `.meta` file's saver subgraph driven by name, as deploy scripts and serving loaders
do (``sess.run(saver_def.restore_op_name, {saver_def.filename_tensor_name: path})``):
`tf.train.import_meta_graph` keeps TensorFlow's ``save/`` nodes and its returned Saver
runs them (flowgraph/train/saver_by_name.py). Fixtures written by TensorFlow 2.15
(tests/data/tf_formats/saver_by_name/make_fixture.py); expected values from the oracle."""

import logging
import os
from pathlib import Path

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors

DATA = Path(__file__).parents[1] / "data" / "tf_formats" / "saver_by_name"
PLAIN = str(DATA / "plain" / "model.ckpt-3")
SHARDED = str(DATA / "sharded" / "model.ckpt-5")

# TensorFlow 2.15's saver ops after import_meta_graph of plain/ (a ref and a resource
# variable) and their SaverDef names.
PLAIN_SAVER_OPS = [
    ("save/filename/input", "Const"), ("save/filename", "PlaceholderWithDefault"),
    ("save/Const", "PlaceholderWithDefault"), ("save/SaveV2/tensor_names", "Const"),
    ("save/SaveV2/shape_and_slices", "Const"), ("save/SaveV2", "SaveV2"),
    ("save/control_dependency", "Identity"), ("save/RestoreV2/tensor_names", "Const"),
    ("save/RestoreV2/shape_and_slices", "Const"), ("save/RestoreV2", "RestoreV2"),
    ("save/Identity", "Identity"), ("save/AssignVariableOp", "AssignVariableOp"),
    ("save/Assign", "Assign"), ("save/restore_all", "NoOp")]


def _values(sess):
    return [sess.run(v).tolist() for v in tf.global_variables()]


def test_tensorflow_saver_ops_import_and_run_by_name(tmp_path):
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(PLAIN + ".meta")
        sd = saver.saver_def
        assert (sd.filename_tensor_name, sd.save_tensor_name, sd.restore_op_name,
                sd.sharded, sd.max_to_keep) == ("save/Const:0", "save/control_dependency:0",
                                                "save/restore_all", False, 5)
        assert [(o.name, o.type) for o in g.get_operations()
                if o.name.startswith("save/")] == PLAIN_SAVER_OPS
        with tf.Session() as sess:
            sess.run(sd.restore_op_name, {sd.filename_tensor_name: PLAIN})
            np.testing.assert_allclose(sess.run("y:0", {"x:0": [[1.0, 1.0]]}), [[9.0, 12.0]])
            sess.run(tf.assign(g.get_tensor_by_name("w:0"), [[0.5, 0.5], [0.5, 0.5]]))
            out = str(tmp_path / "byname")
            assert sess.run(sd.save_tensor_name, {sd.filename_tensor_name: out}) == \
                out.encode()
            assert sorted(os.listdir(tmp_path)) == ["byname.data-00000-of-00001",
                                                    "byname.index"]
            sess.run("save/restore_all", {"save/Const:0": PLAIN})
            np.testing.assert_allclose(sess.run("y:0", {"x:0": [[1.0, 1.0]]}), [[9.0, 12.0]])
            sess.run("save/restore_all", {"save/Const:0": out})
            np.testing.assert_allclose(sess.run("y:0", {"x:0": [[1.0, 1.0]]}), [[6.0, 7.0]])


def test_the_returned_saver_runs_the_imported_ops(tmp_path):
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(PLAIN + ".meta")
        n_ops = len(g.get_operations())
        with tf.Session() as sess:
            saver.restore(sess, PLAIN)
            assert _values(sess) == [[[1.0, 2.0], [3.0, 4.0]], [5.0, 6.0]]
            for step in range(3):
                path = saver.save(sess, str(tmp_path / "again"), global_step=step)
            assert len(g.get_operations()) == n_ops == 28  # as TF: no saver ops of its own
            assert sorted(os.listdir(tmp_path)) == [
                *sorted(f"again-{k}.{ext}" for k in range(3)
                        for ext in ("data-00000-of-00001", "index", "meta")), "checkpoint"]
            assert tf.train.latest_checkpoint(str(tmp_path)) == path
            assert tf.train.list_variables(path) == [("r", [2]), ("w", [2, 2])]
            sess.run(tf.global_variables_initializer())
            saver.restore(sess, path)
            assert _values(sess) == [[[1.0, 2.0], [3.0, 4.0]], [5.0, 6.0]]
    # the .meta it wrote holds the same saver subgraph, driven by name again
    with tf.Graph().as_default(), tf.Session() as sess:
        sd = tf.train.import_meta_graph(path + ".meta").saver_def
        sess.run(sd.restore_op_name, {sd.filename_tensor_name: path})
        assert _values(sess) == [[[1.0, 2.0], [3.0, 4.0]], [5.0, 6.0]]


def test_a_sharded_tensorflow_saver_merges_its_shards(tmp_path):
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(SHARDED + ".meta")
        sd = saver.saver_def
        assert (sd.save_tensor_name, sd.sharded, sd.max_to_keep) == (
            "save/Identity:0", True, 2)
        assert sorted(v.op.name for v in tf.global_variables()) == ["p/part_0", "p/part_1",
                                                                    "w"]
        with tf.Session() as sess:
            sess.run(sd.restore_op_name, {sd.filename_tensor_name: SHARDED})
            expected = [[[1.0, 2.0], [3.0, 4.0]], [[1.5, 1.5], [1.5, 1.5]],
                        [[1.5, 1.5], [1.5, 1.5]]]
            assert _values(sess) == expected
            out = str(tmp_path / "byname")
            sess.run(sd.save_tensor_name, {sd.filename_tensor_name: out})
            assert sorted(os.listdir(tmp_path)) == [
                "byname.data-00000-of-00002", "byname.data-00001-of-00002", "byname.index"]
            assert tf.train.list_variables(out) == [("p", [4, 2]), ("w", [2, 2])]
            for step in range(3):  # max_to_keep=2 from the file's SaverDef
                saver.save(sess, str(tmp_path / "sh"), global_step=step)
            assert [os.path.basename(p) for p in saver.last_checkpoints] == ["sh-1", "sh-2"]
            assert sorted(f for f in os.listdir(tmp_path) if f.startswith("sh-")) == [
                f"sh-{k}.{ext}" for k in (1, 2) for ext in
                ("data-00000-of-00002", "data-00001-of-00002", "index", "meta")]
            sess.run(tf.global_variables_initializer())
            saver.restore(sess, str(tmp_path / "sh-2"))
            assert _values(sess) == expected


def test_a_checkpoint_without_the_keys_fails_as_tensorflow_says(tmp_path):
    with tf.Graph().as_default():
        saver = tf.train.import_meta_graph(PLAIN + ".meta")
        with tf.Session() as sess, pytest.raises(errors.NotFoundError) as e:
            saver.restore(sess, SHARDED)
    assert str(e.value).startswith(
        "Restoring from checkpoint failed. This is most likely due to a Variable name or "
        "other graph key that is missing from the checkpoint. Please ensure that you have "
        "not altered the graph expected based on the checkpoint. Original error:")


def test_import_scope_prefixes_the_saver_def(tmp_path):
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(PLAIN + ".meta", import_scope="m")
        sd = saver.saver_def
        assert (sd.filename_tensor_name, sd.restore_op_name) == ("m/save/Const:0",
                                                                 "m/save/restore_all")
        with tf.Session() as sess:
            sess.run(sd.restore_op_name, {sd.filename_tensor_name: PLAIN})
            np.testing.assert_allclose(sess.run("m/y:0", {"m/x:0": [[1.0, 1.0]]}),
                                       [[9.0, 12.0]])
        assert g.get_collection("savers") == []


def test_a_flowgraph_written_meta_is_driven_by_name_too(tmp_path, caplog):
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        p = tf.get_variable("p", [4, 2], initializer=tf.constant_initializer(1.5),
                            partitioner=tf.fixed_size_partitioner(2))
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "fg"))
        del w, p
    with caplog.at_level(logging.WARNING), tf.Graph().as_default(), tf.Session() as sess:
        sd = tf.train.import_meta_graph(path + ".meta").saver_def
        sess.run(sd.restore_op_name, {sd.filename_tensor_name: path})
        assert _values(sess) == [[1.0, 2.0], [[1.5, 1.5], [1.5, 1.5]],
                                 [[1.5, 1.5], [1.5, 1.5]]]
        # SaveV2 writes the two parts of `p` as two slices of one entry
        sess.run(sd.save_tensor_name, {sd.filename_tensor_name: str(tmp_path / "again")})
        assert tf.train.list_variables(str(tmp_path / "again")) == [("p", [4, 2]),
                                                                    ("w", [2])]
    assert not [r for r in caplog.records if "left out" in r.getMessage()]


def test_saver_from_a_saver_def_adopts_the_graph_ops():
    with tf.Graph().as_default():
        mg = tf.train.import_meta_graph(PLAIN + ".meta").to_proto()
        again = tf.train.Saver(saver_def=mg)
        assert again._by_name is not None
        assert again.saver_def.restore_op_name == "save/restore_all"
        with tf.Session() as sess:
            again.restore(sess, PLAIN)
            assert _values(sess) == [[[1.0, 2.0], [3.0, 4.0]], [5.0, 6.0]]

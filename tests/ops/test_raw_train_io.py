"""Behaviour of the saver ops (``SaveV2``, ``MergeV2Checkpoints``, ``ShardedFilename``,
``ShardedFilespec``, the V1 format's ``Save``/``SaveSlices``/``Restore``/``RestoreSlice``),
the warm-start remapping ops and ``SdcaOptimizerV2`` (`flowgraph/ops/io_ops.py`,
`flowgraph/ops/training_raw_ops.py`), checked against TensorFlow 2.15's values (inline,
from the oracle) and files TensorFlow wrote (tests/data/tf_formats/raw_train/)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.framework.checkpoint_file import CheckpointReader
from flowgraph.saved_model.assets import confine_graph_files
from flowgraph.saved_model.format import SavedModelFormatError

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_train")

def test_tf_saver_subgraph_runs_by_name(tmp_path):
    """TF's own saver nodes (save/SaveV2, save/control_dependency, save/RestoreV2,
    save/restore_all) imported as a graph and driven by name, as TF1 code does."""
    from flowgraph.framework.tf_formats.meta_graph import read_meta_graph_file

    mg = read_meta_graph_file(os.path.join(DATA, "keras_sgd.meta"))
    sd = mg.saver_def
    with tf.Graph().as_default():
        tf.import_graph_def(mg.graph_def, name="")
        w = tf.get_default_graph().get_tensor_by_name("w/Read/ReadVariableOp:0")
        with tf.Session() as sess:
            sess.run(sd.restore_op_name, {sd.filename_tensor_name: os.path.join(
                DATA, "model.ckpt-2")})
            restored = sess.run(w)
            prefix = str(tmp_path / "again" / "model")
            assert sess.run(sd.save_tensor_name, {sd.filename_tensor_name: prefix}) == \
                prefix.encode()
    assert sorted(os.listdir(tmp_path / "again")) == ["model.data-00000-of-00001",
                                                       "model.index"]
    with CheckpointReader(prefix) as saved, \
            CheckpointReader(os.path.join(DATA, "model.ckpt-2")) as tf_ckpt:
        assert saved.get_variable_to_shape_map() == tf_ckpt.get_variable_to_shape_map()
        for key in tf_ckpt.get_variable_to_shape_map():
            np.testing.assert_array_equal(saved.get_tensor(key), tf_ckpt.get_tensor(key))
    np.testing.assert_array_equal(restored, tf_ckpt_value("w"))


def tf_ckpt_value(key: str) -> np.ndarray:
    with CheckpointReader(os.path.join(DATA, "model.ckpt-2")) as reader:
        return reader.get_tensor(key)


# -- saver ops -----------------------------------------------------------------------------


def test_sharded_save_and_merge(tmp_path):
    """TF's sharded-saver pattern: ShardedFilename, one SaveV2 per shard (one of them a
    slice), MergeV2Checkpoints into one prefix, the temporary directory removed."""
    base = str(tmp_path / "tmp" / "part")
    with tf.Graph().as_default():
        names = [tf.raw_ops.ShardedFilename(basename=base, shard=k, num_shards=2)
                 for k in (0, 1)]
        spec = tf.raw_ops.ShardedFilespec(basename="m", num_shards=7)
        a = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
        s0 = tf.raw_ops.SaveV2(prefix=names[0], tensor_names=["a", "b"],
                               shape_and_slices=["", ""], tensors=[a, tf.constant([b"x", b"yz"])])
        s1 = tf.raw_ops.SaveV2(prefix=names[1], tensor_names=["c"],
                               shape_and_slices=["3 2 1,1:-"],
                               tensors=[tf.constant([[1, 2]], tf.int64)])
        with tf.control_dependencies([s0, s1]):
            merge = tf.raw_ops.MergeV2Checkpoints(checkpoint_prefixes=names,
                                                  destination_prefix=str(tmp_path / "model"))
        restore = tf.raw_ops.RestoreV2(prefix=str(tmp_path / "model"),
                                       tensor_names=["c", "a"],
                                       shape_and_slices=["3 2 1,1:-", ""],
                                       dtypes=[tf.int64, tf.float32])
        with tf.Session() as sess:
            first, pattern = sess.run([names[0], spec])
            sess.run(merge)
            c, a_value = sess.run(restore)
    assert first == f"{base}-00000-of-00002".encode() and pattern == b"m-?????-of-00007"
    # TF: the merged shards keep their numbers, the sources and their directory are gone
    assert sorted(os.listdir(tmp_path)) == ["model.data-00000-of-00002",
                                            "model.data-00001-of-00002", "model.index"]
    assert c.tolist() == [[1, 2]] and a_value.tolist() == [[0, 1, 2], [3, 4, 5]]
    with CheckpointReader(str(tmp_path / "model")) as reader:
        assert reader.get_variable_to_shape_map() == {"a": [2, 3], "b": [2], "c": [3, 2]}
        assert reader.get_tensor("b").tolist() == [b"x", b"yz"]


def test_saver_op_errors(tmp_path):
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="SaveV2"):
            tf.raw_ops.SaveV2(prefix="p", tensor_names=["a"], shape_and_slices=["", ""],
                              tensors=[tf.constant(1.0)])
        missing = tf.raw_ops.MergeV2Checkpoints(checkpoint_prefixes=[str(tmp_path / "x")],
                                                destination_prefix=str(tmp_path / "m"))
        allowed = tf.raw_ops.MergeV2Checkpoints(checkpoint_prefixes=[str(tmp_path / "x")],
                                                destination_prefix=str(tmp_path / "m"),
                                                allow_missing_files=True)
        twice = tf.raw_ops.SaveV2(prefix=str(tmp_path / "t"), tensor_names=["a", "a"],
                                  shape_and_slices=["", ""],
                                  tensors=[tf.constant(1.0), tf.constant(2.0)])
        with tf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError,
                               match="allow_missing_files was set to false"):
                sess.run(missing)
            with pytest.raises(errors.InvalidArgumentError,
                               match="At least one prefix checkpoint file must exist"):
                sess.run(allowed)
            with pytest.raises(errors.InvalidArgumentError, match="duplicate key"):
                sess.run(twice)
    assert os.listdir(tmp_path) == []  # nothing half-written


def test_saved_model_refuses_file_writing_ops():
    mg = SimpleNamespace(asset_file_def=[], graph_def={"node": [
        {"name": "s", "op": "SaveV2", "input": []}]})
    with pytest.raises(SavedModelFormatError, match="SaveV2"):
        confine_graph_files(mg, "/nowhere")


# -- the V1 format ----------------------------------------------------------------------


def test_tf_written_v1_checkpoint_restores():
    """A checkpoint TF's Saver(write_version=V1) wrote (SaveSlices, a partitioned
    variable): read by tf.train.load_checkpoint, Saver.restore and the Restore ops."""
    path = os.path.join(DATA, "model_v1.ckpt")
    expected = np.load(os.path.join(DATA, "expected.npz"))
    reader = tf.train.load_checkpoint(path)
    assert reader.get_variable_to_shape_map() == {"names": [2], "p": [4, 2], "w": [1, 3]}
    assert reader.get_tensor("names").tolist() == [b"ab", b"c"]
    with tf.Graph().as_default():
        w = tf.Variable(np.zeros((1, 3), np.float32), name="w")
        p = tf.get_variable("p", [4, 2], partitioner=tf.fixed_size_partitioner(2))
        half = tf.raw_ops.RestoreSlice(file_pattern=path, tensor_name="p",
                                       shape_and_slice="4 2 1,2:-", dt=tf.float32)
        whole = tf.raw_ops.Restore(file_pattern=path, tensor_name="names", dt=tf.string)
        assert half.shape.as_list() == [2, 2]
        saver = tf.train.Saver([w, p])
        with tf.Session() as sess:
            saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run(w), expected["v1_w"])
            np.testing.assert_array_equal(sess.run(p.as_tensor()), expected["v1_p"])
            np.testing.assert_array_equal(sess.run(half), expected["v1_p"][1:3])
            assert sess.run(whole).tolist() == [b"ab", b"c"]


def test_v1_save_and_restore_ops(tmp_path):
    """Save/SaveSlices write what Restore/RestoreSlice read, across shard files by glob;
    TF's errors for a wrong dtype, a missing name and no matching file."""
    a, b = str(tmp_path / "a.ckpt"), str(tmp_path / "b")
    with tf.Graph().as_default():
        saves = [
            tf.raw_ops.Save(filename=a, tensor_names=["f", "s", "d", "h"], data=[
                tf.constant([[1.5, 2.0]]), tf.constant([b"x", b"yz"]),
                tf.constant([1.0, -2.5], tf.float64), tf.constant([0.5], tf.float16)]),
            tf.raw_ops.SaveSlices(filename=b + "-00000-of-00002", tensor_names=["p"],
                                  shapes_and_slices=["4 2 0,2:-"],
                                  data=[tf.constant([[1.0, 2.0], [3.0, 4.0]])]),
            tf.raw_ops.SaveSlices(filename=b + "-00001-of-00002", tensor_names=["p"],
                                  shapes_and_slices=["4 2 2,2:-"],
                                  data=[tf.constant([[5.0, 6.0], [7.0, 8.0]])])]
        pattern = b + "-?????-of-00002"
        reads = [tf.raw_ops.Restore(file_pattern=a, tensor_name="s", dt=tf.string),
                 tf.raw_ops.Restore(file_pattern=a, tensor_name="h", dt=tf.float16),
                 tf.raw_ops.Restore(file_pattern=pattern, tensor_name="p", dt=tf.float32),
                 tf.raw_ops.RestoreSlice(file_pattern=pattern, tensor_name="p",
                                         shape_and_slice="4 2 1,2:-", dt=tf.float32)]
        bad = [(tf.raw_ops.Restore(file_pattern=a, tensor_name="f", dt=tf.float64),
                errors.InvalidArgumentError, "Expected to restore a tensor of type float64"),
               (tf.raw_ops.Restore(file_pattern=a, tensor_name="zz", dt=tf.float32),
                errors.NotFoundError, 'Tensor name "zz" not found'),
               (tf.raw_ops.Restore(file_pattern=b + "x*", tensor_name="p", dt=tf.float32),
                errors.NotFoundError, "Failed to find any matching files"),
               (tf.raw_ops.RestoreSlice(file_pattern=b + "-00000-of-00002", tensor_name="p",
                                        shape_and_slice="4 2 1,2:-", dt=tf.float32),
                errors.InvalidArgumentError, "do not cover the region 1,2:0,2")]
        with tf.Session() as sess:
            sess.run(saves)
            s, h, p, half = sess.run(reads)
            for t, kind, message in bad:
                with pytest.raises(kind, match=message):
                    sess.run(t)
    assert s.tolist() == [b"x", b"yz"] and h.dtype == np.float16 and h.tolist() == [0.5]
    assert p.tolist() == [[1, 2], [3, 4], [5, 6], [7, 8]]
    assert half.tolist() == [[3, 4], [5, 6]]
    assert sorted(os.listdir(tmp_path)) == ["a.ckpt", "b-00000-of-00002", "b-00001-of-00002"]


# -- warm-start remapping and SdcaOptimizerV2 ----------------------------------------------


def _vocab(tmp_path, name: str, words: str) -> str:
    path = tmp_path / name
    path.write_text(words)
    return str(path)


def test_generate_vocab_remapping(tmp_path):
    old = _vocab(tmp_path, "old.txt", "a\nb\nc\nd\n")
    new = _vocab(tmp_path, "new.txt", "x\nc\na\nq\nd\n")
    dup = _vocab(tmp_path, "dup.txt", "a\nb\na\n")
    with tf.Graph().as_default():
        run = tf.raw_ops.GenerateVocabRemapping
        full = run(new_vocab_file=new, old_vocab_file=old, new_vocab_offset=0, num_new_vocab=5)
        part = run(new_vocab_file=new, old_vocab_file=old, new_vocab_offset=1, num_new_vocab=3)
        short = run(new_vocab_file=new, old_vocab_file=old, new_vocab_offset=0,
                    num_new_vocab=5, old_vocab_size=2)
        past = run(new_vocab_file=new, old_vocab_file=old, new_vocab_offset=3,
                   num_new_vocab=4)
        twice = run(new_vocab_file=new, old_vocab_file=dup, new_vocab_offset=0,
                    num_new_vocab=5)
        assert full[0].shape.as_list() == [5] and full[1].dtype == tf.int32
        with tf.Session() as sess:
            # TF 2.15's values
            assert [v.tolist() for v in sess.run(full)] == [[-1, 2, 0, -1, 3], 3]
            assert [v.tolist() for v in sess.run(part)] == [[2, 0, -1], 2]
            assert [v.tolist() for v in sess.run(short)] == [[-1, -1, 0, -1, -1], 1]
            with pytest.raises(errors.InvalidArgumentError, match="lookup table size"):
                sess.run(past)
            with pytest.raises(errors.FailedPreconditionError, match="Key a has 0"):
                sess.run(twice)


def test_load_and_remap_matrix(tmp_path):
    prefix = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        save = tf.raw_ops.SaveV2(prefix=prefix, tensor_names=["emb"], shape_and_slices=[""],
                                 tensors=[tf.constant(np.arange(12, dtype=np.float32)
                                                      .reshape(4, 3))])

        def remap(rows, cols, init, num_cols, **kw):
            return tf.raw_ops.LoadAndRemapMatrix(
                ckpt_path=prefix, old_tensor_name="emb",
                row_remapping=tf.constant(rows, tf.int64),
                col_remapping=tf.constant(cols, tf.int64), initializing_values=init,
                num_rows=len(rows), num_cols=num_cols, **kw)

        rows_only = remap([3, -1, 0], [], [-1.0, -2.0, -3.0], 3)
        both = remap([3, -1, 0], [2, -1], [-1.0, -2.0, -3.0, -4.0], 2, max_rows_in_memory=1)
        few = remap([3, -1, 0], [2, -1], [-1.0], 2)
        dup = remap([0, 1, 0], [], [], 3)
        assert both.shape.as_list() == [3, 2]
        with tf.Session() as sess:
            sess.run(save)
            # TF 2.15's values
            assert sess.run(rows_only).tolist() == [[9, 10, 11], [-1, -2, -3], [0, 1, 2]]
            assert sess.run(both).tolist() == [[11, -1], [-2, -3], [2, -4]]
            with pytest.raises(errors.InvalidArgumentError,
                               match="initializing_values contained 1 elements"):
                sess.run(few)
            with pytest.raises(errors.UnimplementedError,
                               match="Old ID 0 is mapped to both new ID 0 and 2"):
                sess.run(dup)


def test_sdca_optimizer_v2_is_sdca_optimizer():
    from flowgraph.ops.op_util import make_op

    with tf.Graph().as_default():
        i64 = tf.int64
        inputs = [tf.constant([0, 1], i64), tf.constant([1, 0], i64), tf.constant([1.0, 2.0]),
                  tf.constant([[0.5], [1.5]]), tf.constant([1.0, 2.0]),
                  tf.constant([1.0, 0.0]), tf.constant([7, 9], i64),
                  tf.constant([0.1, 0.2]), tf.constant([0.3]), tf.zeros([2, 4])]
        attrs = {"loss_type": "logistic_loss", "num_sparse_features": 1,
                 "num_sparse_features_with_values": 1, "num_dense_features": 1, "l1": 0.0,
                 "l2": 1.0, "num_loss_partitions": 1, "num_inner_iterations": 1}
        v1 = make_op("SdcaOptimizer", inputs, {**attrs, "adaptative": False})
        v2 = make_op("SdcaOptimizerV2", inputs, {**attrs, "adaptive": False})
        with tf.Session() as sess:
            for a, b in zip(*sess.run([v1.outputs, v2.outputs])):
                np.testing.assert_array_equal(a, b)

"""tf.train.Saver, the checkpoint state file, and the checkpoint readers."""

from __future__ import annotations

import os
import zipfile

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework import errors
from flowgraph.train import checkpoint_state as cs
from flowgraph.train.checkpoint_utils import (
    NewCheckpointReader,
    init_from_checkpoint,
    list_variables,
    load_variable,
    write_checkpoint,
)
from flowgraph.train.saver import Saver


def _model():
    with tf.name_scope("dense"):
        k = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="kernel")
        b = tf.Variable(np.array([1.0, 2.0, 3.0], np.float32), name="bias")
    return k, b


def _init(sess):
    sess.run(tf.global_variables_initializer())


# -- save / restore -----------------------------------------------------------------------------
def test_save_returns_prefix_and_restore_roundtrips(sess, tmp_path):
    k, b = _model()
    saver = Saver()
    _init(sess)
    path = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=200)
    assert path == str(tmp_path / "model.ckpt-200")
    # TensorFlow's layout by default: PREFIX.index + PREFIX.data-00000-of-00001 + .meta
    assert sorted(n for n in os.listdir(tmp_path) if n.startswith("model.ckpt-200")) == [
        "model.ckpt-200.data-00000-of-00001", "model.ckpt-200.index", "model.ckpt-200.meta"]
    assert not os.path.exists(path) and tf.train.checkpoint_exists(path)
    sess.run([k.assign(np.zeros((2, 3), np.float32)), b.assign([0.0, 0.0, 0.0])])
    saver.restore(sess, path)
    np.testing.assert_array_equal(sess.run(k), np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(sess.run(b), [1.0, 2.0, 3.0])


def test_file_is_plain_npz_without_pickle(sess, tmp_path):
    k, _ = _model()
    tf.Variable(["héllo", "", "x\x00"], name="s")
    saver = Saver(format="flowgraph")  # the one-file format, on request
    _init(sess)
    path = saver.save(sess, str(tmp_path / "m"))
    with np.load(path, allow_pickle=False) as npz:
        assert "dense/kernel" in npz.files and "dense/bias" in npz.files
        np.testing.assert_array_equal(npz["dense/kernel"], sess.run(k))
        assert all(npz[f].dtype != object for f in npz.files)
    restored = load_variable(path, "s")
    assert restored.dtype == object
    assert restored.tolist() == ["héllo".encode(), b"", b"x\x00"]


@pytest.mark.parametrize("dtype", [np.float16, np.float64, np.int32, np.int64, np.uint8,
                                   np.bool_, np.complex64])
def test_dtypes_roundtrip(tmp_path, dtype):
    scalar = tf.Variable(np.array(3, dtype), name="scalar")
    value = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    v = tf.Variable(value, name="v")
    saver = Saver()
    with tf.Session() as sess:
        sess.run([v.initializer, scalar.initializer])
        path = saver.save(sess, str(tmp_path / "m"), global_step=1)
    with tf.Session() as sess:  # restore works in a fresh session of the graph
        saver.restore(sess, path)
        out, out_scalar = sess.run([v, scalar])
    assert out_scalar.shape == () and out_scalar == np.array(3, dtype)
    assert list_variables(path) == [("scalar", []), ("v", [3, 4])]
    assert out.dtype == value.dtype
    np.testing.assert_array_equal(out, value)


def test_op_names_and_saver_def():
    _model()
    saver = Saver()
    names = {op.name for op in tf.get_default_graph().get_operations()}
    assert {"save/Const", "save/restore_all", "save/Assign", "save/Assign_1"} <= names
    sd = saver.as_saver_def()
    assert sd.filename_tensor_name == "save/Const:0"
    assert sd.restore_op_name == "save/restore_all"
    assert sd.save_tensor_name.startswith("save/")
    assert tf.get_default_graph().get_operation_by_name("save/Assign").type == "Assign"
    saver2 = Saver()
    assert saver2.as_saver_def().restore_op_name == "save_1/restore_all"


def test_var_list_forms(sess, tmp_path):
    k, b = _model()
    _init(sess)
    p1 = Saver([k]).save(sess, str(tmp_path / "a"))
    assert [n for n, _ in list_variables(p1)] == ["dense/kernel"]
    p2 = Saver({"renamed": b}).save(sess, str(tmp_path / "b"))
    assert list_variables(p2) == [("renamed", [3])]
    saver = Saver({"renamed": k})  # shape [2, 3] vs [3]
    with pytest.raises(errors.InvalidArgumentError) as e:
        saver.restore(sess, p2)
    msg = str(e.value)
    assert "dense/kernel" in msg and "(2, 3)" in msg and "[3]" in msg and p2 in msg


def test_global_step_as_variable_or_tensor_and_padding(sess, tmp_path):
    _model()
    step = tf.Variable(42, name="global_step", trainable=False)
    saver = Saver(pad_step_number=True)
    _init(sess)
    assert saver.save(sess, str(tmp_path / "m"), global_step=step).endswith("m-00000042")
    saver2 = Saver()
    assert saver2.save(sess, str(tmp_path / "m"), global_step=step + 1).endswith("m-43")
    assert saver2.save(sess, str(tmp_path / "m"), global_step=np.int64(7)).endswith("m-7")


def test_max_to_keep_deletes_oldest_and_state_file(sess, tmp_path):
    _model()
    saver = Saver(max_to_keep=2)
    _init(sess)
    paths = [saver.save(sess, str(tmp_path / "model.ckpt"), global_step=i) for i in range(4)]
    assert saver.last_checkpoints == paths[2:]
    # every file of a dropped checkpoint goes: index, data shards, meta
    assert sorted(os.listdir(tmp_path)) == sorted(
        ["checkpoint"] + [p.rsplit("/", 1)[1] + suffix for p in paths[2:]
                          for suffix in (".index", ".data-00000-of-00001", ".meta")])
    assert not cs.checkpoint_exists(paths[0]) and not cs.checkpoint_exists(paths[1])
    assert cs.checkpoint_exists(paths[2]) and cs.checkpoint_exists(paths[3])
    text = (tmp_path / "checkpoint").read_text()
    # As TensorFlow's Saver (save_relative_paths=False): the paths as they were saved.
    assert f'model_checkpoint_path: "{paths[3]}"' in text.splitlines()
    assert f'all_model_checkpoint_paths: "{paths[2]}"' in text.splitlines()
    state = tf.train.get_checkpoint_state(str(tmp_path)) if hasattr(
        tf.train, "get_checkpoint_state") else cs.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[3]
    assert state.all_model_checkpoint_paths == paths[2:]
    assert cs.latest_checkpoint(str(tmp_path)) == paths[3]
    assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]


def test_max_to_keep_none_keeps_everything(sess, tmp_path):
    _model()
    saver = Saver(max_to_keep=None)
    _init(sess)
    paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(7)]
    assert all(cs.checkpoint_exists(p) for p in paths)
    assert cs.latest_checkpoint(str(tmp_path)) == paths[-1]


def test_keep_checkpoint_every_n_hours(sess, tmp_path):
    _model()
    saver = Saver(max_to_keep=1, keep_checkpoint_every_n_hours=1e-9)
    _init(sess)
    paths = [saver.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    assert all(cs.checkpoint_exists(p) for p in paths)  # each was old enough to be kept
    assert saver.last_checkpoints == paths[-1:]


def test_recover_and_set_last_checkpoints(sess, tmp_path):
    _model()
    _init(sess)
    first = Saver(max_to_keep=10)
    paths = [first.save(sess, str(tmp_path / "m"), global_step=i) for i in range(3)]
    saver = Saver(max_to_keep=2)
    recorded = cs.get_checkpoint_state(str(tmp_path)).all_model_checkpoint_paths
    saver.recover_last_checkpoints([*recorded, str(tmp_path / "gone")])
    assert saver.last_checkpoints == paths
    new = saver.save(sess, str(tmp_path / "m"), global_step=3)
    assert saver.last_checkpoints == [paths[2], new]
    assert not os.path.exists(paths[0]) and not os.path.exists(paths[1])
    saver.set_last_checkpoints_with_time([(paths[2], 1.0)])
    assert saver.last_checkpoints == [paths[2]]
    with pytest.raises(TypeError):
        saver.set_last_checkpoints_with_time(paths[2])


def test_write_state_false_and_latest_filename(sess, tmp_path):
    _model()
    saver = Saver()
    _init(sess)
    saver.save(sess, str(tmp_path / "m"), global_step=1, write_state=False)
    assert not (tmp_path / "checkpoint").exists()
    p = saver.save(sess, str(tmp_path / "m"), global_step=2, latest_filename="mystate")
    assert cs.latest_checkpoint(str(tmp_path), "mystate") == p
    assert cs.latest_checkpoint(str(tmp_path)) is None
    with pytest.raises(ValueError, match="path components"):
        saver.save(sess, str(tmp_path / "m"), latest_filename="a/b")
    with pytest.raises(ValueError, match="collides"):
        saver.save(sess, str(tmp_path / "checkpoint"))


def test_relative_save_path(sess, tmp_path, monkeypatch):
    _model()
    saver = Saver()
    _init(sess)
    monkeypatch.chdir(tmp_path)
    os.mkdir("ck")
    p = saver.save(sess, "ck/model.ckpt", global_step=5)
    assert p == "ck/model.ckpt-5"
    assert 'model_checkpoint_path: "model.ckpt-5"' in open("ck/checkpoint").read()
    assert cs.latest_checkpoint("ck") == os.path.join("ck", "model.ckpt-5")
    saver.restore(sess, cs.latest_checkpoint("ck"))


def test_save_errors(sess, tmp_path):
    with pytest.raises(ValueError, match="No variables to save"):
        Saver()
    assert Saver(allow_empty=True).save(sess, str(tmp_path / "m")) is None
    k, _ = _model()
    with pytest.raises(ValueError, match="Parent directory"):  # TF makes one level only
        Saver().save(sess, str(tmp_path / "missing" / "deeper" / "m"))
    with pytest.raises(ValueError, match="same name"):  # as TensorFlow
        Saver([k, k._ref()])
    with pytest.raises(ValueError, match="deferred"):
        Saver([k], defer_build=True)
    deferred = Saver(defer_build=True)
    with pytest.raises(RuntimeError, match="build"):
        deferred.save(sess, str(tmp_path / "m"))
    with pytest.raises(TypeError, match="not a variable"):
        Saver({"c": tf.constant(1.0)})


def test_duplicate_names_in_dict_are_rejected():
    k, b = _model()
    with pytest.raises(ValueError, match="same name: dense/kernel"):
        Saver([k, tf.Variable(0.0, name="x")._ref(), _FakeName(b, "dense/kernel")])


class _FakeName:
    """A variable-like object whose op name collides with another variable's."""

    def __init__(self, var, name):
        self._var, self.op = var, type("Op", (), {"name": name})()
        self.initializer = var.initializer

    def _ref(self):
        return self._var._ref()


def test_uninitialized_variable_fails_save(sess, tmp_path):
    _model()
    with pytest.raises(errors.FailedPreconditionError):
        Saver().save(sess, str(tmp_path / "m"))


# -- restore errors ------------------------------------------------------------------------------
def test_restore_missing_file(sess, tmp_path):
    _model()
    saver = Saver()
    missing = str(tmp_path / "model.ckpt-9")
    with pytest.raises(errors.NotFoundError) as e:
        saver.restore(sess, missing)
    assert "Failed to find any matching files for" in str(e.value) and missing in str(e.value)
    with pytest.raises(ValueError):  # TensorFlow raises ValueError here
        saver.restore(sess, missing)
    with pytest.raises(ValueError, match="None"):
        saver.restore(sess, None)


def test_restore_missing_variable(sess, tmp_path):
    k, _b = _model()
    _init(sess)
    path = Saver([k]).save(sess, str(tmp_path / "m"))
    with pytest.raises(errors.NotFoundError) as e:
        Saver().restore(sess, path)
    assert "Key dense/bias not found in checkpoint" in str(e.value) and path in str(e.value)


def test_restore_dtype_mismatch(sess, tmp_path):
    write_checkpoint(str(tmp_path / "m"), {"dense/kernel": np.zeros((2, 3), np.int32),
                                          "dense/bias": np.zeros(3, np.float32)})
    _model()
    with pytest.raises(errors.InvalidArgumentError, match=r"dense/kernel.*int32.*float32"):
        Saver().restore(sess, str(tmp_path / "m"))


def test_restore_reshape(sess, tmp_path):
    write_checkpoint(str(tmp_path / "m"), {"dense/kernel": np.arange(6, dtype=np.float32),
                                          "dense/bias": np.zeros(3, np.float32)})
    k, _ = _model()
    with pytest.raises(errors.InvalidArgumentError, match="shape"):
        Saver().restore(sess, str(tmp_path / "m"))
    Saver(reshape=True).restore(sess, str(tmp_path / "m"))
    np.testing.assert_array_equal(sess.run(k), np.arange(6).reshape(2, 3))


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip"])
def test_corrupt_checkpoint_is_data_loss(sess, tmp_path, damage):
    _k, _ = _model()
    _init(sess)
    saver = Saver(format="flowgraph")
    path = saver.save(sess, str(tmp_path / "m"), global_step=1)
    data = bytearray(open(path, "rb").read())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "garbage":
        data = bytearray(b"not a zip file at all" * 10)
    else:
        # flip a byte inside the kernel's array data: the zip CRC catches it
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("dense/kernel.npy")
        data[info.header_offset + 30 + len(info.filename) + 100] ^= 0xFF
    open(path, "wb").write(bytes(data))
    with pytest.raises(errors.DataLossError) as e:
        saver.restore(sess, path)
    assert path in str(e.value)


@pytest.mark.parametrize("damage", ["truncate_data", "garbage_index", "flip_data",
                                    "missing_data"])
def test_corrupt_tensorflow_format_checkpoint_is_data_loss(sess, tmp_path, damage):
    _model()
    _init(sess)
    saver = Saver()
    path = saver.save(sess, str(tmp_path / "m"), global_step=1)
    data_path, index_path = path + ".data-00000-of-00001", path + ".index"
    data = bytearray(open(data_path, "rb").read())
    if damage == "truncate_data":
        open(data_path, "wb").write(bytes(data[: len(data) // 2]))
    elif damage == "flip_data":
        data[5] ^= 0xFF  # the entry's CRC32C catches it
        open(data_path, "wb").write(bytes(data))
    elif damage == "garbage_index":
        open(index_path, "wb").write(b"not a table" * 10)
    else:
        os.remove(data_path)
    expected = errors.NotFoundError if damage == "missing_data" else errors.DataLossError
    with pytest.raises(expected) as e:
        saver.restore(sess, path)
    assert path in str(e.value)


# -- state file ------------------------------------------------------------------------------------
def test_state_text_roundtrip_with_escapes():
    state = cs.CheckpointState('we"ird\\name\n', ["a", 'we"ird\\name\n'], [1.5, 2.0], 0.25)
    assert cs.CheckpointState.from_text(state.to_text()) == state
    parsed = cs.CheckpointState.from_text(
        'model_checkpoint_path: "/abs/m-1" all_model_checkpoint_paths: "/abs/m-1"\n')
    assert parsed.model_checkpoint_path == "/abs/m-1"


def test_state_file_edge_cases(tmp_path, caplog):
    d = str(tmp_path)
    assert cs.latest_checkpoint(d) is None
    (tmp_path / "checkpoint").write_text("garbage {{{")
    assert cs.get_checkpoint_state(d) is None
    cs.update_checkpoint_state(d, os.path.join(d, "m-1"))
    assert cs.get_checkpoint_state(d).model_checkpoint_path == os.path.join(d, "m-1")
    assert cs.latest_checkpoint(d) is None  # state names a file that does not exist
    (tmp_path / "m-1").write_bytes(b"")
    assert cs.latest_checkpoint(d) == os.path.join(d, "m-1")
    cs.update_checkpoint_state(d, "/elsewhere/m-2")  # outside the directory: kept absolute
    assert '"/elsewhere/m-2"' in (tmp_path / "checkpoint").read_text()
    with pytest.raises(RuntimeError, match="conflicts"):
        cs.update_checkpoint_state(d, os.path.join(d, "checkpoint"))


def test_stale_temp_files_are_removed(sess, tmp_path):
    _model()
    _init(sess)
    stale = tmp_path / ".m-1.tmp-999999999-deadbeef"  # a pid that cannot exist
    stale.write_bytes(b"partial")
    Saver().save(sess, str(tmp_path / "m"), global_step=2)
    assert not stale.exists()


# -- readers ---------------------------------------------------------------------------------------
def test_reader_and_list_variables(sess, tmp_path):
    _k, _b = _model()
    _init(sess)
    path = Saver().save(sess, str(tmp_path / "model.ckpt"), global_step=3)
    assert list_variables(path) == [("dense/bias", [3]), ("dense/kernel", [2, 3])]
    assert list_variables(str(tmp_path)) == list_variables(path)  # a directory works too
    np.testing.assert_array_equal(load_variable(str(tmp_path), "dense/bias:0"), [1, 2, 3])
    reader = NewCheckpointReader(path)
    assert reader.has_tensor("dense/kernel") and not reader.has_tensor("nope")
    assert reader.get_variable_to_shape_map() == {"dense/bias": [3], "dense/kernel": [2, 3]}
    assert reader.get_variable_to_dtype_map()["dense/kernel"] == tf.float32
    assert b"dense/kernel (DT_FLOAT) [2,3]\n" in reader.debug_string()  # as TensorFlow
    with pytest.raises(errors.NotFoundError, match="Key nope not found in checkpoint"):
        reader.get_tensor("nope")
    with pytest.raises(errors.NotFoundError, match="Failed to find any matching files"):
        NewCheckpointReader(str(tmp_path / "missing"))
    os.mkdir(tmp_path / "empty_dir")
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        list_variables(str(tmp_path / "empty_dir"))


# -- init_from_checkpoint -------------------------------------------------------------------------
def _write_old(tmp_path):
    path = str(tmp_path / "old.ckpt")
    write_checkpoint(path, {"old/w": np.full((2, 3), 7.0, np.float32),
                            "old/b": np.full(3, 8.0, np.float32),
                            "top": np.array(5, np.int32)})
    return path


def test_init_from_checkpoint_scope_mapping(tmp_path):
    path = _write_old(tmp_path)
    with tf.variable_scope("new") if hasattr(tf, "variable_scope") else tf.name_scope("new"):
        w = tf.Variable(tf.zeros([2, 3]), name="w")
        b = tf.Variable(tf.zeros([3]), name="b")
    other = tf.Variable(1.0, name="other")
    init_from_checkpoint(path, {"old/": "new/"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(w), np.full((2, 3), 7.0))
        np.testing.assert_array_equal(sess.run(b), np.full(3, 8.0))
        assert sess.run(other) == 1.0
    assert w.initializer.op.type == "Assign"  # as TF: the Assign output tensor


def test_init_from_checkpoint_single_names_objects_and_root(tmp_path):
    path = _write_old(tmp_path)
    w = tf.Variable(tf.zeros([2, 3]), name="a/w")
    b = tf.Variable(tf.zeros([3]), name="c/b")
    t = tf.Variable(0, name="s/top")
    init_from_checkpoint(str(tmp_path / "old.ckpt"), {"old/w": "a/w", "old/b": b})
    init_from_checkpoint(path, {"/": "s/"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(w)[0, 0] == 7.0 and sess.run(b)[0] == 8.0 and sess.run(t) == 5


def test_init_from_checkpoint_errors(tmp_path):
    path = _write_old(tmp_path)
    tf.Variable(tf.zeros([4]), name="new/w")
    tf.Variable(tf.zeros([3]), name="x/b")
    with pytest.raises(ValueError, match="Shape of variable new/w"):
        init_from_checkpoint(path, {"old/w": "new/w"})
    with pytest.raises(ValueError, match="Tensor old/zz is not found"):
        init_from_checkpoint(path, {"old/zz": "new/w"})
    with pytest.raises(ValueError, match="scope only"):
        init_from_checkpoint(path, {"old/w": "nothing/"})
    with pytest.raises(ValueError, match="not found"):
        init_from_checkpoint(path, {"old/": "x/", "nope/": "new/"})

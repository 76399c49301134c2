"""TensorFlow's checkpoint format (tensor bundle): reading checkpoints written by real
TensorFlow (fixtures in tests/data/tf_formats, made once with the tf-oracle by
TensorFlow 2.15's tf.compat.v1) and writing ones TensorFlow reads."""

import json
import os
import shutil

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.tf_formats.bundle import BundleReader, write_bundle
from flowgraph.framework.tf_formats.table import read_table, write_table

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats")
MODEL = os.path.join(DATA, "model", "model.ckpt-7")
EXPECTED = json.load(open(os.path.join(DATA, "expected.json")))


def test_list_and_load_variables_of_a_tensorflow_checkpoint():
    assert tf.train.list_variables(os.path.join(DATA, "model")) == [
        ("counts", [2, 2]), ("d", [2]), ("dense/bias", [2]), ("dense/kernel", [3, 2]),
        ("flag", [2]), ("global_step", []), ("words", [3])]
    reader = tf.train.NewCheckpointReader(MODEL)
    assert reader.get_tensor("words").tolist() == [b"ab", b"", b"xyz"]
    assert reader.get_tensor("counts").dtype == np.int64
    assert reader.get_tensor("counts").tolist() == [[1, 2], [3, 4]]
    assert reader.get_tensor("flag").tolist() == [True, False]
    assert reader.get_tensor("d").tolist() == [1.5, -2.0]
    assert reader.get_tensor("global_step") == 7
    assert reader.get_variable_to_dtype_map()["words"] == tf.string
    kernel = np.arange(6, dtype=np.float32).reshape(3, 2) / np.float32(7.0) - np.float32(0.3)
    np.testing.assert_array_equal(tf.train.load_variable(MODEL, "dense/kernel:0"), kernel)
    with pytest.raises(tf.errors.NotFoundError, match="nope"):
        reader.get_tensor("nope")


def _dense_model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.variable_scope("dense"):
        w = tf.get_variable("kernel", [3, 2])
        b = tf.get_variable("bias", [2])
    return x, tf.nn.relu(tf.matmul(x, w) + b), [w, b]


def test_saver_restores_a_tensorflow_checkpoint_to_tensorflows_predictions():
    with tf.Graph().as_default():
        x, y, variables = _dense_model()
        saver = tf.train.Saver(variables)
        with tf.Session() as sess:
            path = tf.train.latest_checkpoint(os.path.join(DATA, "model"))
            assert path.endswith("model.ckpt-7")
            saver.restore(sess, path)
            np.testing.assert_allclose(sess.run(y, {x: EXPECTED["x"]}), EXPECTED["y"],
                                       rtol=1e-6)


def test_init_from_checkpoint_reads_a_tensorflow_checkpoint():
    with tf.Graph().as_default():
        x, y, _ = _dense_model()
        tf.train.init_from_checkpoint(os.path.join(DATA, "model"), {"dense/": "dense/"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(y, {x: EXPECTED["x"]}), EXPECTED["y"],
                                       rtol=1e-6)


def test_tensorflow_checkpoint_warm_starts_a_linear_regressor(tmp_path):
    xs = np.array(EXPECTED["linear_x"], np.float32)
    columns = [tf.feature_column.numeric_column("x", shape=[2])]
    est = tf.estimator.LinearRegressor(
        columns, model_dir=str(tmp_path), warm_start_from=os.path.join(DATA, "linear"),
        optimizer=tf.train.GradientDescentOptimizer(0.0))
    est.train(tf.estimator.inputs.numpy_input_fn(
        {"x": xs}, np.zeros((4, 1), np.float32), batch_size=4, num_epochs=None,
        shuffle=False), steps=1)
    predict = tf.estimator.inputs.numpy_input_fn({"x": xs}, batch_size=4, num_epochs=1,
                                                 shuffle=False)
    pred = [p["predictions"] for p in est.predict(predict)]
    np.testing.assert_allclose(np.array(pred), EXPECTED["linear_pred"], rtol=1e-5)


def test_written_bundle_matches_tensorflows_bytes(tmp_path):
    reader = BundleReader(MODEL)
    tensors = {n: reader.get_tensor(n) for n in reader.get_variable_to_shape_map()}
    prefix = str(tmp_path / "copy")
    write_bundle(prefix, tensors)
    with open(prefix + ".data-00000-of-00001", "rb") as f, \
            open(MODEL + ".data-00000-of-00001", "rb") as g:
        assert f.read() == g.read()
    # Same entries (TensorFlow's index block names a shorter separator key than ours).
    with open(prefix + ".index", "rb") as f, open(MODEL + ".index", "rb") as g:
        assert read_table(f.read()) == read_table(g.read())


def test_saver_writes_tensorflow_format_and_keeps_max_to_keep(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([[1.0, 2.0]], name="v")
        s = tf.Variable([b"a", b"bc"], name="s")
        saver = tf.train.Saver(format="tensorflow", max_to_keep=1)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in (1, 2):
                path = saver.save(sess, str(tmp_path / "m"), global_step=step)
            assert sorted(os.listdir(tmp_path)) == [
                "checkpoint", "m-2.data-00000-of-00001", "m-2.index", "m-2.meta"]
            assert tf.train.latest_checkpoint(str(tmp_path)) == path
            sess.run([v.assign([[0.0, 0.0]]), s.assign([b"", b""])])
            saver.restore(sess, path)
            assert sess.run(v).tolist() == [[1.0, 2.0]]
            assert sess.run(s).tolist() == [b"a", b"bc"]
    with pytest.raises(ValueError, match="format"):
        tf.train.Saver([v], format="onnx")


def test_table_round_trip_with_shared_prefixes_and_restarts():
    items = [(f"layer/{i:03d}/w".encode(), bytes([i]) * i) for i in range(40)]
    assert read_table(write_table(items)) == sorted(items)
    assert read_table(write_table([])) == []


@pytest.mark.parametrize("damage", ["truncate_index", "flip_data", "bad_magic", "flip_index"])
def test_malformed_tensorflow_checkpoint_is_a_data_loss_error(tmp_path, damage):
    for name in os.listdir(os.path.join(DATA, "model")):
        shutil.copy(os.path.join(DATA, "model", name), tmp_path / name)
    prefix = str(tmp_path / "model.ckpt-7")
    index, data = prefix + ".index", prefix + ".data-00000-of-00001"
    target = data if damage == "flip_data" else index
    raw = bytearray(open(target, "rb").read())
    if damage == "truncate_index":
        raw = raw[:-10]
    elif damage == "bad_magic":
        raw[-1] ^= 0xFF
    else:
        raw[20] ^= 0x55
    with open(target, "wb") as f:
        f.write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match=os.path.basename(target)):
        reader = tf.train.NewCheckpointReader(prefix)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)


def test_missing_data_shard_is_not_found(tmp_path):
    prefix = str(tmp_path / "m")
    write_bundle(prefix, {"a": np.ones(2, np.float32)})
    os.remove(prefix + ".data-00000-of-00001")
    with pytest.raises(tf.errors.NotFoundError, match="data-00000-of-00001"):
        tf.train.load_variable(prefix, "a")


@pytest.mark.parametrize("size", [0, 9, (1 << 16) - 1, 1 << 16, (1 << 16) + 12345, 1 << 20])
def test_vectorized_crc32c_matches_the_bytewise_one(size):
    # checkpoint files use checksum.crc32c; the vectorized lanes must match the table
    from flowgraph.framework.checksum import crc32c, crc32c_numpy, crc32c_python

    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    assert crc32c_numpy(data) == crc32c_python(data) == crc32c(data)


def test_large_tensors_round_trip(tmp_path):
    big = np.random.default_rng(0).standard_normal((700, 300)).astype(np.float32)
    long = np.array([b"x" * 70000, b"y"], object)
    write_bundle(str(tmp_path / "m"), {"big": big, "s": long})
    reader = tf.train.NewCheckpointReader(str(tmp_path / "m"))
    np.testing.assert_array_equal(reader.get_tensor("big"), big)
    assert reader.get_tensor("s").tolist() == long.tolist()


@pytest.mark.parametrize("field,value", [("size", 10 ** 15), ("offset", 10 ** 12)])
def test_entry_pointing_past_the_data_file_is_a_data_loss_error(tmp_path, field, value):
    from flowgraph.framework.tf_formats.bundle import BundleEntryProto

    prefix = str(tmp_path / "m")
    write_bundle(prefix, {"a": np.ones(4, np.float32), "s": np.array([b"x"], object)})
    items = dict(read_table(open(prefix + ".index", "rb").read()))
    for key in (b"a", b"s"):
        entry = BundleEntryProto.FromString(items[key])  # drops the CRC: none is checked
        setattr(entry, field, value)
        items[key] = entry.SerializeToString()
    with open(prefix + ".index", "wb") as f:
        f.write(write_table(items.items()))
    for name in ("a", "s"):
        with pytest.raises(tf.errors.DataLossError, match="data-00000-of-00001"):
            tf.train.load_variable(prefix, name)

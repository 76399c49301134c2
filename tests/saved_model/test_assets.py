"""Assets: exports copy every file the graph reads into assets/ and record relative
names; loaders read assets only as regular files inside the export (each refused case).
"""

from __future__ import annotations

import json
import os
import shutil
import stat

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.framework import asset_file, errors


@pytest.fixture(autouse=True)
def _flowgraph_format():
    # These tests edit or check saved_model.json on purpose: they test flowgraph's own
    # format (the default export is TensorFlow's, which test_tf_export*.py cover).
    with sm.export_format("flowgraph"):
        yield


def _doc(d):
    with open(os.path.join(d, "saved_model.json")) as f:
        return json.load(f)


def _write_doc(d, doc):
    with open(os.path.join(d, "saved_model.json"), "w") as f:
        json.dump(doc, f)


def _export_vocab_column(tmp_path):
    """A string feature mapped through categorical_column_with_vocabulary_file."""
    vocab = tmp_path / "src" / "colors.txt"
    vocab.parent.mkdir()
    vocab.write_text("red\ngreen\nblue\n")
    d = str(tmp_path / "export" / "1")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [None], name="color")
        col = tf.feature_column.categorical_column_with_vocabulary_file(
            "color", str(vocab), num_oov_buckets=1)
        ids = tf.feature_column.input_layer(
            {"color": x}, [tf.feature_column.indicator_column(col)])
        y = tf.identity(ids, name="y")
        with tf.Session() as sess:
            sm.simple_save(sess, d, {"color": x}, {"y": y})
    return d, vocab


def _export_table(tmp_path, assets_collection="graph"):
    vocab = tmp_path / "src" / "words.txt"
    vocab.parent.mkdir(exist_ok=True)
    vocab.write_text("the\ncat\nsat\n")
    d = str(tmp_path / "export" / "2")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.string, [None], name="word")
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(vocab), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), -1)
        y = tf.identity(table.lookup(x), name="y")
        with tf.Session() as sess:
            builder = sm.builder.SavedModelBuilder(d)
            builder.add_meta_graph_and_variables(
                sess, ["serve"],
                signature_def_map={"serving_default": sm.predict_signature_def({"w": x},
                                                                               {"y": y})},
                assets_collection=(tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS)
                                   if assets_collection == "graph" else None),
                main_op=tf.tables_initializer())
            builder.save()
    return d, vocab


def _moved(d, tmp_path, vocab):
    """Move the export and delete the source vocabulary: the export must not need it."""
    os.remove(vocab)
    new = str(tmp_path / "moved")
    shutil.move(d, new)
    return new


def test_vocabulary_file_column_is_copied_and_recorded_by_name(tmp_path):
    d, vocab = _export_vocab_column(tmp_path)
    assert os.listdir(os.path.join(d, "assets")) == ["colors.txt"]
    text = open(os.path.join(d, "saved_model.json")).read()
    assert str(tmp_path) not in text  # no absolute path of the source left in the export
    d = _moved(d, tmp_path, vocab)
    out = sm.load(d).signatures["serving_default"](color=["blue", "pink", "red"])["y"]
    np.testing.assert_array_equal(out, [[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0]])


@pytest.mark.parametrize("assets_collection", ["graph", None])
def test_text_file_table_is_an_asset_even_without_assets_collection(tmp_path,
                                                                     assets_collection):
    d, vocab = _export_table(tmp_path, assets_collection)
    mg = _doc(d)["meta_graphs"][0]
    assert [a["filename"] for a in mg["asset_file_def"]] == ["words.txt"]
    assert str(tmp_path) not in json.dumps(mg["graph_def"])
    d = _moved(d, tmp_path, vocab)
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = sm.loader.load(sess, ["serve"], d)
        sig = meta.signature_def["serving_default"]
        out = sess.run(sig.outputs["y"].name, {sig.inputs["w"].name: ["sat", "dog", "the"]})
    np.testing.assert_array_equal(out, [2, -1, 0])


def _set_vocab_attr(d, value):
    doc = _doc(d)
    node = next(n for n in doc["meta_graphs"][0]["graph_def"]["node"]
                if n["op"] == "VocabLookup")
    node["attr"]["vocabulary_file"] = value
    _write_doc(d, doc)


def _refused(d, *needles):
    for attempt in ("loader", "predictor"):
        with tf.Graph().as_default(), tf.Session() as sess:
            with pytest.raises(sm.SavedModelFormatError) as info:
                if attempt == "loader":
                    sm.loader.load(sess, ["serve"], d)
                else:
                    sm.load(d)
        for needle in needles:
            assert needle in str(info.value), str(info.value)


@pytest.mark.parametrize("value", ["/etc/passwd", "../../../etc/passwd", "..", "sub/x.txt"])
def test_vocabulary_attr_with_a_path_is_refused(tmp_path, value):
    d, _ = _export_vocab_column(tmp_path)
    _set_vocab_attr(d, value)
    _refused(d, repr(value), "plain file name")


def test_symlink_leaving_the_directory_is_refused(tmp_path):
    d, _ = _export_vocab_column(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2\n")
    os.symlink(secret, os.path.join(d, "assets", "leak.txt"))
    _set_vocab_attr(d, "leak.txt")
    _refused(d, "'leak.txt'", "outside the export directory")


def test_symlink_inside_the_directory_is_allowed(tmp_path):
    d, _ = _export_vocab_column(tmp_path)
    os.symlink("colors.txt", os.path.join(d, "assets", "alias.txt"))
    _set_vocab_attr(d, "alias.txt")
    out = sm.load(d).signatures["serving_default"](color=["green"])["y"]
    np.testing.assert_array_equal(out, [[0, 1, 0, 0]])


def test_fifo_is_refused_without_blocking(tmp_path):
    d, _ = _export_vocab_column(tmp_path)
    os.mkfifo(os.path.join(d, "assets", "pipe.txt"))
    _set_vocab_attr(d, "pipe.txt")
    _refused(d, "'pipe.txt'", "a FIFO, not a regular file")


def test_device_is_refused(tmp_path):
    d, _ = _export_vocab_column(tmp_path)
    try:
        os.mknod(os.path.join(d, "assets", "zero.txt"), stat.S_IFCHR | 0o600,
                 os.makedev(1, 5))
    except (PermissionError, OSError):
        pytest.skip("cannot create a device node here")
    _set_vocab_attr(d, "zero.txt")
    _refused(d, "'zero.txt'", "a character device, not a regular file")


def test_directory_is_refused(tmp_path):
    d, _ = _export_vocab_column(tmp_path)
    os.mkdir(os.path.join(d, "assets", "dir.txt"))
    _set_vocab_attr(d, "dir.txt")
    _refused(d, "'dir.txt'", "a directory, not a regular file")


def test_oversized_asset_is_refused(tmp_path, monkeypatch):
    d, _ = _export_vocab_column(tmp_path)
    monkeypatch.setattr(asset_file, "MAX_ASSET_BYTES", 8)
    _refused(d, "'colors.txt'", "more than the limit of 8")


def test_table_reading_a_non_asset_file_is_refused(tmp_path):
    d, _ = _export_table(tmp_path)
    doc = _doc(d)
    mg = doc["meta_graphs"][0]
    mg["asset_file_def"] = []
    for n in mg["graph_def"]["node"]:
        if n["op"] == "Const" and n["attr"]["value"].get("strings") == ["words.txt"]:
            n["attr"]["value"]["strings"] = ["/etc/passwd"]
    _write_doc(d, doc)
    _refused(d, "InitializeTableFromTextFileV2", "not an asset of the SavedModel")


@pytest.mark.parametrize("node", [
    {"op": "RestoreV2", "input": ["p", "p", "p"], "attr": {"dtypes": {"list": []}}},
    {"op": "PrintV2", "input": [], "attr": {"output_stream": "file:///tmp/x.log"}},
])
def test_ops_touching_arbitrary_files_are_refused(tmp_path, node):
    d, _ = _export_table(tmp_path)
    doc = _doc(d)
    nodes = doc["meta_graphs"][0]["graph_def"]["node"]
    nodes.append({"name": "p", "op": "Const", "input": [], "device": "", "attr": {
        "value": {"strings": ["/elsewhere"], "shape": [], "bytes": True},
        "dtype": {"dtype": "string"}}})
    nodes.append({"name": "evil", "device": "", **node})
    _write_doc(d, doc)
    _refused(d, "'evil'", node["op"])


def test_kernels_refuse_fifos_and_devices_directly(tmp_path):
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    with pytest.raises(errors.InvalidArgumentError, match="a FIFO"):
        asset_file.read_text_lines(fifo, "VocabLookup")
    with pytest.raises(errors.InvalidArgumentError, match="a character device"):
        asset_file.read_text_lines("/dev/zero", "VocabLookup")
    ids = tf.feature_column.categorical_column_with_vocabulary_file(
        "c", "/dev/zero", vocabulary_size=2)
    x = tf.constant(["a"])
    out = tf.feature_column.input_layer({"c": x}, [tf.feature_column.indicator_column(ids)])
    with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError,
                                             match="character device"):
        sess.run(out)

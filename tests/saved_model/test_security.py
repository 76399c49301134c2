"""Tampered SavedModels are rejected before anything runs.

Each payload would create a marker file if it were executed (unpickled, imported,
called); every test asserts both that loading fails with an error naming the problem
and that the marker does not exist.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import pickle
import zipfile

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.framework import errors


@pytest.fixture(autouse=True)
def _flowgraph_format():
    # These tests edit or check saved_model.json on purpose: they test flowgraph's own
    # format (the default export is TensorFlow's, which test_tf_export*.py cover).
    with sm.export_format("flowgraph"):
        yield


class _Evil:
    """Unpickling this creates the marker file."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (builtins.open, (self.marker, "w"))


@pytest.fixture
def export(tmp_path):
    d = str(tmp_path / "1")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.Variable(np.ones((2, 1), np.float32), name="w")
        y = tf.matmul(x, w, name="y")
        with tf.Session() as sess:
            sess.run(w.initializer)
            sm.simple_save(sess, d, {"x": x}, {"y": y})
    return d


@pytest.fixture
def marker(tmp_path):
    path = str(tmp_path / "PWNED")
    yield path
    assert not os.path.exists(path), "a payload from the SavedModel was executed"


def _load_both_ways(d):
    """Try the TF1 loader and the predictor; both must raise the same kind of error."""
    excs = []
    for attempt in ("loader", "predictor"):
        with tf.Graph().as_default(), tf.Session() as sess:
            with pytest.raises(Exception) as info:
                if attempt == "loader":
                    sm.loader.load(sess, ["serve"], d)
                else:
                    sm.load(d)
            excs.append(info.value)
    return excs


def _doc(d):
    return json.loads(open(os.path.join(d, "saved_model.json")).read())


def _write_doc(d, doc):
    with open(os.path.join(d, "saved_model.json"), "w") as f:
        json.dump(doc, f)


def test_pickle_file_as_variables_is_not_unpickled(export, marker):
    path = os.path.join(export, "variables", "variables")
    with open(path, "wb") as f:
        pickle.dump(_Evil(marker), f)
    for e in _load_both_ways(export):
        assert isinstance(e, errors.DataLossError)
        assert path in str(e)


def test_pickle_named_variables_npz_is_ignored_and_not_unpickled(export, marker):
    with open(os.path.join(export, "variables", "variables.npz"), "wb") as f:
        pickle.dump(_Evil(marker), f)
    with open(os.path.join(export, "variables", "variables"), "wb") as f:
        pickle.dump(_Evil(marker), f)
    for e in _load_both_ways(export):
        assert isinstance(e, errors.DataLossError)


def test_npz_with_object_array_is_rejected(export, marker):
    buf = io.BytesIO()
    arr = np.empty(1, dtype=object)
    arr[0] = _Evil(marker)
    np.save(buf, arr, allow_pickle=True)
    path = os.path.join(export, "variables", "variables")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("w.npy", buf.getvalue())
    for e in _load_both_ways(export):
        assert isinstance(e, errors.DataLossError)
        assert "allow_pickle" in str(e) or "Object arrays" in str(e)


@pytest.mark.parametrize("op_type", ["PyFunc", "__import__", "EagerPyFunc", "os.system"])
def test_unregistered_or_python_op_types_are_rejected(export, marker, op_type):
    doc = _doc(export)
    doc["meta_graphs"][0]["graph_def"]["node"].append({
        "name": "evil", "op": op_type, "input": [], "device": "",
        "attr": {"token": f"open({marker!r}, 'w')"}})
    _write_doc(export, doc)
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "saved_model.json" in str(e) and repr(op_type) in str(e)


@pytest.mark.parametrize("where", ["top", "meta_graph", "node", "attr", "signature"])
def test_reduce_style_payloads_are_rejected(export, marker, where):
    payload = {"py/reduce": [{"py/function": "builtins.open"}, {"py/tuple": [marker, "w"]}]}
    doc = _doc(export)
    mg = doc["meta_graphs"][0]
    if where == "top":
        doc["__reduce__"] = payload
    elif where == "meta_graph":
        mg["__class__"] = payload
    elif where == "node":
        mg["graph_def"]["node"][0]["__reduce__"] = payload
    elif where == "attr":
        mg["graph_def"]["node"][0]["attr"]["dtype"] = payload
    else:
        mg["signature_def"]["serving_default"]["inputs"]["x"]["__reduce__"] = payload
    _write_doc(export, doc)
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "saved_model.json" in str(e)


def test_object_dtype_array_in_graph_attr_is_rejected(export, marker):
    doc = _doc(export)
    blob = pickle.dumps(_Evil(marker))
    import base64

    doc["meta_graphs"][0]["graph_def"]["node"].append({
        "name": "c2", "op": "Const", "input": [], "device": "",
        "attr": {"value": {"array": base64.b64encode(blob).decode(), "dtype": "|O",
                           "shape": [1]}, "dtype": {"dtype": "float32"}}})
    _write_doc(export, doc)
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "not numeric" in str(e)


def test_pickle_as_saved_model_json_is_rejected(export, marker):
    with open(os.path.join(export, "saved_model.json"), "wb") as f:
        pickle.dump(_Evil(marker), f)
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "saved_model.json" in str(e)


def test_duplicate_keys_and_unknown_schema_version_are_rejected(export, marker):
    path = os.path.join(export, "saved_model.json")
    text = open(path).read()
    with open(path, "w") as f:
        f.write(text[:-1] + ', "format": "flowgraph.saved_model"}')
    for e in _load_both_ways(export):
        assert "duplicate key" in str(e)
    doc = json.loads(text)
    doc["saved_model_schema_version"] = 99
    _write_doc(export, doc)
    for e in _load_both_ways(export):
        assert "not supported" in str(e)


def _with_asset(export, filename):
    doc = _doc(export)
    mg = doc["meta_graphs"][0]
    mg["graph_def"]["node"].append({"name": "asset_path", "op": "Const", "input": [],
                                    "device": "", "attr": {
                                        "value": {"strings": ["x"], "shape": [],
                                                  "bytes": True},
                                        "dtype": {"dtype": "string"}}})
    mg["asset_file_def"] = [{"tensor_info": {"name": "asset_path:0", "dtype": "string",
                                             "tensor_shape": {"dim": [],
                                                              "unknown_rank": False}},
                             "filename": filename}]
    _write_doc(export, doc)


def test_symlinked_asset_escaping_the_directory_is_rejected(export, tmp_path, marker):
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    os.makedirs(os.path.join(export, "assets"))
    os.symlink(secret, os.path.join(export, "assets", "vocab.txt"))
    _with_asset(export, "vocab.txt")
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "outside the export directory" in str(e)


@pytest.mark.parametrize("filename", ["../../etc/passwd", "/etc/passwd", "..", "a/b"])
def test_asset_filenames_with_paths_are_rejected(export, marker, filename):
    _with_asset(export, filename)
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "plain file name" in str(e)


@pytest.mark.parametrize("name", ["variables.index", "variables.data-00000-of-00001"])
def test_symlinked_variables_file_escaping_the_directory_is_rejected(export, tmp_path, name):
    outside = tmp_path / "elsewhere"
    os.replace(os.path.join(export, "variables", name), outside)
    os.symlink(outside, os.path.join(export, "variables", name))
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "outside the export directory" in str(e)


def test_signature_naming_a_missing_tensor_is_rejected(export):
    doc = _doc(export)
    doc["meta_graphs"][0]["signature_def"]["serving_default"]["outputs"]["y"]["name"] = \
        "nowhere:0"
    _write_doc(export, doc)
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "'nowhere:0' is not a tensor of the graph" in str(e)


def test_variable_with_wrong_dtype_in_file_is_rejected(export):
    from flowgraph.train.checkpoint_utils import write_checkpoint

    write_checkpoint(os.path.join(export, "variables", "variables"),
                     {"w": np.ones((2, 1), np.float64)})
    for e in _load_both_ways(export):
        assert isinstance(e, sm.SavedModelFormatError)
        assert "float64" in str(e) and "float32" in str(e)


def test_a_variable_naming_an_invalid_device_is_a_format_error(export):
    """(Found by the slow fuzz campaign: a ValueError escaped the TF1 loader while it
    rebuilt TensorFlow's saver rows.)"""
    doc = _doc(export)
    node = next(n for n in doc["meta_graphs"][0]["graph_def"]["node"] if n["name"] == "w")
    node["device"] = "x"
    _write_doc(export, doc)
    for e in _load_both_ways(export):
        assert isinstance(e, (sm.SavedModelFormatError, errors.OpError,
                              tf.errors.InvalidArgumentError, ValueError))
        assert "'x'" in str(e) and "device" in str(e)
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(sm.SavedModelFormatError, match="variable node 'w'"):
            sm.loader.load(sess, ["serve"], export)

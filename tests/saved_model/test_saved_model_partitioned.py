"""SavedModels holding partitioned variables (``get_variable(partitioner=...)``), in both
formats: TensorFlow's stores each one whole under its full name and restores each part
from its slice (`RestoreEntry.slice`, read from the saver's ``shape_and_slices``);
flowgraph's stores each part under its own name.

The fixture tests/data/tf_formats/partitioned_saved_model was written by TensorFlow 2.15
(its ``write_fixture.py``): ``emb`` [10, 3] in 3 parts, ``b`` [3],
``y = embedding_lookup(emb, ids) + b`` and ``s = sum(concat(emb) * 2)``, TensorFlow's
outputs kept in expected.npz.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.saved_model.format import SavedModelFormatError
from flowgraph.saved_model.tf_saved_model import read_tf_saved_model

TF_FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats",
                          "partitioned_saved_model")
IDS = np.array([0, 4, 9, 5, 4], np.int64)
FORMATS = ("flowgraph", "tensorflow")


def _model(ids):
    emb = tf.get_variable("emb", [10, 3], initializer=tf.random_uniform_initializer(seed=2),
                          partitioner=tf.fixed_size_partitioner(3))
    b = tf.get_variable("b", [3], initializer=tf.constant_initializer([0.5, -1.0, 2.0]))
    return tf.add(tf.nn.embedding_lookup(emb, ids), b, name="y")


def _simple_save(export_dir: str, format: str) -> np.ndarray:
    """Export the model with `simple_save`; returns its output for IDS."""
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int64, [None], name="ids")
        y = _model(ids)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, export_dir, {"ids": ids}, {"y": y},
                                       format=format)
            return sess.run(y, {ids: IDS})


def _load_and_run(export_dir: str, outputs=("y",)) -> list[np.ndarray]:
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        sig = meta.signature_def["serving_default"]
        return sess.run([sig.outputs[k].name for k in outputs],
                        {sig.inputs["ids"].name: IDS})


@pytest.mark.parametrize("format", FORMATS)
def test_simple_save_of_a_partitioned_embedding_loads_with_the_same_outputs(tmp_path, format):
    export_dir = str(tmp_path / "1")
    expected = _simple_save(export_dir, format)
    np.testing.assert_array_equal(_load_and_run(export_dir)[0], expected)


def test_tensorflow_format_stores_the_whole_variable_and_restores_parts_by_slice(tmp_path):
    export_dir = str(tmp_path / "1")
    _simple_save(export_dir, "tensorflow")
    assert tf.train.list_variables(os.path.join(export_dir, "variables", "variables")) == [
        ("b", [3]), ("emb", [10, 3])]
    entries = read_tf_saved_model(export_dir).meta_graphs[0].saver_def.entries
    assert sorted((e.variable, e.key, e.slice) for e in entries) == [
        ("b:0", "b", ""), ("emb/part_0:0", "emb", "10 3 0,4:0,3"),
        ("emb/part_1:0", "emb", "10 3 4,3:0,3"), ("emb/part_2:0", "emb", "10 3 7,3:0,3")]


def test_a_partitioned_saved_model_written_by_tensorflow_gives_its_outputs():
    expected = np.load(os.path.join(TF_FIXTURE, "expected.npz"))
    np.testing.assert_array_equal(expected["ids"], IDS)
    y, s = _load_and_run(os.path.join(TF_FIXTURE, "1"), outputs=("y", "s"))
    np.testing.assert_allclose(y, expected["y"], rtol=1e-6)
    np.testing.assert_allclose(s, expected["s"], rtol=1e-6)


@pytest.mark.parametrize("source", ["flowgraph", "tensorflow", "written by tensorflow"])
def test_loaded_parts_know_their_slice_and_save_under_the_full_name(tmp_path, source):
    """The VariableDefs carry each part's place (TensorFlow's save_slice_info_def), so a
    Saver made after loading writes the partitioned variable as TensorFlow does."""
    export_dir = os.path.join(TF_FIXTURE, "1")
    if source != "written by tensorflow":
        export_dir = str(tmp_path / "1")
        _simple_save(export_dir, source)
    with tf.Graph().as_default(), tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        parts = {v.op.name: v for v in tf.global_variables()}
        assert parts["emb/part_1"]._save_slice_info.spec == "10 3 4,3:0,3"
        assert parts["b"]._save_slice_info is None
        prefix = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    assert tf.train.list_variables(prefix) == [("b", [3]), ("emb", [10, 3])]


def test_a_save_slice_info_that_does_not_fit_is_refused(tmp_path):
    export_dir = str(tmp_path / "1")
    _simple_save(export_dir, "flowgraph")
    path = os.path.join(export_dir, "saved_model.json")
    with open(path) as f:
        doc = json.load(f)
    variables = doc["meta_graphs"][0]["variables"]
    part = next(v for v in variables if v["variable_name"] == "emb/part_2:0")
    assert part["save_slice_info_def"] == {"full_name": "emb", "full_shape": [10, 3],
                                           "var_offset": [7, 0], "var_shape": [3, 3]}
    assert "save_slice_info_def" not in next(v for v in variables if v["variable_name"] == "b:0")
    part["save_slice_info_def"]["var_offset"] = [8, 0]
    with open(path, "w") as f:
        json.dump(doc, f)
    with pytest.raises(SavedModelFormatError, match=r"save_slice_info_def.*does not fit"):
        _load_and_run(export_dir)


def _json_entries(export_dir: str):
    path = os.path.join(export_dir, "saved_model.json")
    with open(path) as f:
        doc = json.load(f)
    return path, doc, doc["meta_graphs"][0]["saver"]["entries"]


def test_flowgraph_format_writes_no_slice_field_and_refuses_a_bad_one(tmp_path):
    export_dir = str(tmp_path / "1")
    _simple_save(export_dir, "flowgraph")
    path, doc, entries = _json_entries(export_dir)
    assert all("slice" not in e for e in entries)  # each part under its own key
    part = next(e for e in entries if e["key"] == "emb/part_0")
    part["slice"] = "10 3 0,4:9,3"  # does not fit the full shape
    with open(path, "w") as f:
        json.dump(doc, f)
    with pytest.raises(SavedModelFormatError, match=r"slice.*does not fit"):
        _load_and_run(export_dir)


def test_a_slice_whose_full_shape_is_not_the_stored_one_is_refused(tmp_path):
    export_dir = str(tmp_path / "1")
    _simple_save(export_dir, "flowgraph")
    path, doc, entries = _json_entries(export_dir)
    next(e for e in entries if e["key"] == "emb/part_0")["slice"] = "10 3 0,4:0,3"
    with open(path, "w") as f:
        json.dump(doc, f)
    # the part is stored under its own key with shape [4, 3], not the full [10, 3]
    with pytest.raises(SavedModelFormatError, match=r"emb/part_0.*\[4, 3\].*full shape"):
        _load_and_run(export_dir)


def _estimator_model_fn(features, labels, mode):
    y = _model(features["ids"])
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": y})
    loss = tf.reduce_mean(tf.square(tf.reduce_sum(y, axis=1) - labels))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def _serving_input_fn():
    ids = tf.placeholder(tf.int64, [None], name="ids")
    return tf.estimator.export.ServingInputReceiver({"ids": ids}, {"ids": ids})


def test_estimator_and_simple_save_exports_serve_the_same_in_a_fresh_process(tmp_path):
    """Both formats, an Estimator export and a `simple_save` one, loaded by
    `tf.saved_model.load` in another process: what a model server does."""
    est = tf.estimator.Estimator(_estimator_model_fn, model_dir=str(tmp_path / "model"))
    est.train(tf.estimator.inputs.numpy_input_fn(
        {"ids": np.arange(10, dtype=np.int64)}, np.ones(10, np.float32), batch_size=5,
        num_epochs=2, shuffle=False))
    predicted = np.stack([p["y"] for p in est.predict(tf.estimator.inputs.numpy_input_fn(
        {"ids": IDS}, batch_size=5, shuffle=False))])
    expected, exports = {}, {}
    for format in FORMATS:
        exports[f"est_{format}"] = os.fsdecode(est.export_saved_model(
            str(tmp_path / f"est_{format}"), _serving_input_fn, format=format))
        expected[f"est_{format}"] = predicted
        exports[f"simple_{format}"] = str(tmp_path / f"simple_{format}" / "1")
        expected[f"simple_{format}"] = _simple_save(exports[f"simple_{format}"], format)
    script = (
        "import json, sys, numpy as np, flowgraph as tf\n"
        "out = {}\n"
        "for name, path in json.loads(sys.argv[1]).items():\n"
        "    model = tf.saved_model.load(path)\n"
        "    out[name] = model.signatures['serving_default'](ids=np.load(sys.argv[2]))['y']\n"
        "    model.close()\n"
        "np.savez(sys.argv[3], **out)\n")
    np.save(tmp_path / "ids.npy", IDS)
    subprocess.run([sys.executable, "-c", script, json.dumps(exports),
                    str(tmp_path / "ids.npy"), str(tmp_path / "out.npz")],
                   check=True, timeout=120)
    served = np.load(tmp_path / "out.npz")
    assert sorted(served.files) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(served[name], value, rtol=1e-6, err_msg=name)
    assert not np.allclose(expected["est_tensorflow"], expected["simple_tensorflow"])  # trained

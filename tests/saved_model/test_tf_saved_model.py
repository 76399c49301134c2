"""Loading a TensorFlow 1.x SavedModel (saved_model.pb + variables/ in TensorFlow's
checkpoint format), written once by TensorFlow 2.15's tf.compat.v1 simple_save with the
tf-oracle (tests/data/tf_formats/saved_model)."""

import json
import os
import shutil

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.saved_model.loader import maybe_saved_model_directory

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_formats")
EXPORT = os.path.join(DATA, "saved_model")
EXPECTED = json.load(open(os.path.join(DATA, "expected.json")))


def test_tensorflow_saved_model_loads_and_predicts_as_tensorflow():
    assert maybe_saved_model_directory(EXPORT)
    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], EXPORT)
        sig = meta.signature_def["serving_default"]
        assert sig.method_name == "tensorflow/serving/predict"
        assert sig.inputs["x"].name == "x:0" and sig.inputs["x"].dtype == 1
        y = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: EXPECTED["x"]})
        np.testing.assert_allclose(y, EXPECTED["y"], rtol=1e-6)
        assert sess.run("words:0").tolist() == [b"ab", b"", b"xyz"]
        names = sorted(v.op.name for v in tf.trainable_variables())
        assert names == ["counts", "d", "dense/bias", "dense/kernel", "flag", "words"]
        assert [v.op.name for v in tf.get_collection(tf.GraphKeys.GLOBAL_STEP)] == \
            ["global_step"]


def test_wrong_tags_are_refused():
    with tf.Session(graph=tf.Graph()) as sess, pytest.raises(RuntimeError):
        tf.saved_model.loader.load(sess, ["train"], EXPORT)


def test_corrupt_saved_model_pb_is_a_data_loss_error_naming_it(tmp_path):
    export = tmp_path / "sm"
    shutil.copytree(EXPORT, export)
    pb = export / "saved_model.pb"
    pb.write_bytes(pb.read_bytes()[:-700])
    with tf.Session(graph=tf.Graph()) as sess, \
            pytest.raises(tf.errors.DataLossError, match=r"saved_model\.pb"):
        tf.saved_model.loader.load(sess, ["serve"], str(export))


def test_corrupt_variables_are_a_data_loss_error_naming_the_file(tmp_path):
    export = tmp_path / "sm"
    shutil.copytree(EXPORT, export)
    data = export / "variables" / "variables.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[3] ^= 0xFF
    data.write_bytes(bytes(raw))
    with tf.Session(graph=tf.Graph()) as sess, \
            pytest.raises(tf.errors.DataLossError, match=r"variables\.data-00000-of-00001"):
        tf.saved_model.loader.load(sess, ["serve"], str(export))


def test_the_model_server_serves_a_tensorflow_saved_model(tmp_path):
    """A TF1 export in a version directory is served like a flowgraph one."""
    import http.client
    import json
    import shutil

    from flowgraph.serving import ModelServer

    shutil.copytree(EXPORT, tmp_path / "base" / "1")
    server = ModelServer(str(tmp_path / "base"), model_name="tfm", port=0,
                         poll_interval=0.1, server="dev").start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        conn.request("POST", "/v1/models/tfm:predict",
                     body=json.dumps({"inputs": {"x": EXPECTED["x"]}}),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = json.loads(resp.read())
        conn.close()
    finally:
        server.stop()
    assert resp.status == 200, body
    np.testing.assert_allclose(body["outputs"]["y"] if isinstance(body["outputs"], dict)
                               else body["outputs"], EXPECTED["y"], rtol=1e-6)

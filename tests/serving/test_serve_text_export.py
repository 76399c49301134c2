"""``flowgraph serve`` finds a TensorFlow-format SavedModel written in text form
(``saved_model.pbtxt``, ``SavedModelBuilder.save(as_text=True)``), as its loader reads it."""

from __future__ import annotations

import http.client
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.serving.models import VersionManager

W = np.array([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]], np.float32)
B = np.array([0.25, -0.5], np.float32)


def _export_text(base, version):
    path = os.path.join(base, str(version))
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.add(tf.matmul(x, tf.Variable(W, name="w")), tf.Variable(B, name="b"), name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = sm.builder.SavedModelBuilder(path, format="tensorflow")
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                "serving_default": sm.predict_signature_def({"x": x}, {"y": y})})
            builder.save(as_text=True)
    assert sorted(os.listdir(path)) == ["saved_model.pbtxt", "variables"]
    return path


def test_version_manager_finds_a_text_export(tmp_path):
    base = str(tmp_path / "export")
    _export_text(base, 2)
    manager = VersionManager(base)
    manager.poll()
    assert [v for v, _ in manager._versions()] == [2]
    assert manager._current is not None and manager._current.version == 2


def test_cli_serves_a_text_export(tmp_path):
    base = str(tmp_path / "export")
    _export_text(base, 4)
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowgraph", "serve", "--model_dir", base, "--port", "0",
         "--model_name", "txt"], stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.time() + 30
        while time.time() < deadline and url is None:
            m = re.search(r"at (http://127\.0\.0\.1:\d+)", proc.stderr.readline())
            url = m.group(1) if m else None
        assert url, "the CLI did not report its address"
        host, port = url[len("http://"):].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        x = [[1.0, 2.0, 3.0]]
        conn.request("POST", "/v1/models/txt:predict", body=json.dumps({"instances": x}),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        body = json.loads(resp.read().decode())
        conn.close()
        assert resp.status == 200, body
        np.testing.assert_allclose(body["predictions"], np.array(x) @ W + B, rtol=1e-6)
    finally:
        proc.terminate()
        proc.wait(timeout=10)

"""The REST prediction server, driven over real HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
import http.client
import json
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.serving import ModelServer, encode_example

W1 = np.array([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]], np.float32)
B1 = np.array([0.25, -0.5], np.float32)
W2 = W1 * 3.0 + 1.0
B2 = B1 - 2.0


def _export(base, version, w, b):
    """Version `version` of a linear model with predict, classify and regress signatures."""
    from flowgraph.ops import parsing_ops

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        wv = tf.Variable(w, name="w")
        bv = tf.Variable(b, name="b")
        y = tf.add(tf.matmul(x, wv), bv, name="y")
        a = tf.placeholder(tf.float32, [None, 2], name="a")
        c = tf.placeholder(tf.float32, [None, 2], name="c")
        text = tf.placeholder(tf.string, [None], name="text")
        examples = tf.placeholder(tf.string, [None], name="examples")
        parsed = parsing_ops.parse_example(
            examples, {"x": parsing_ops.FixedLenFeature([3], tf.float32)})
        logits = tf.matmul(parsed["x"], wv) + bv
        scores = tf.nn.softmax(logits)
        classes = tf.tile(tf.constant([["neg", "pos"]]), [tf.shape(examples)[0], 1])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            builder = sm.builder.SavedModelBuilder(os.path.join(base, str(version)))
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                "serving_default": sm.predict_signature_def({"x": x}, {"y": y}),
                "two": sm.predict_signature_def({"a": a, "c": c},
                                                {"sum": a + c, "prod": a * c}),
                "echo": sm.predict_signature_def({"text": text},
                                                 {"text": tf.identity(text),
                                                  "text_bytes": tf.identity(text)}),
                "classify": sm.classification_signature_def(examples, classes, scores),
                "regress": sm.regression_signature_def(examples, logits[:, 0]),
            })
            builder.save()


def _request(url, method, path, body=None, raw=None):
    host, port = url[len("http://"):].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json"} if data is not None else {}
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    payload = json.loads(resp.read().decode())
    conn.close()
    return resp.status, payload


@pytest.fixture(params=["waitress", "dev"])
def served(tmp_path, request):
    if request.param == "waitress":
        pytest.importorskip("waitress")
    base = str(tmp_path / "export")
    _export(base, 1, W1, B1)
    server = ModelServer(base, model_name="lin", port=0, poll_interval=0.1,
                         server=request.param).start()
    yield server, base
    server.stop()


def test_status_and_metadata(served):
    server, _ = served
    status, body = _request(server.url, "GET", "/v1/models/lin")
    assert status == 200
    assert body == {"model_version_status": [{"version": "1", "state": "AVAILABLE",
                                              "status": {"error_code": "OK",
                                                         "error_message": ""}}]}
    status, body = _request(server.url, "GET", "/v1/models/lin/versions/1/metadata")
    assert status == 200
    assert body["model_spec"] == {"name": "lin", "signature_name": "", "version": "1"}
    sigs = body["metadata"]["signature_def"]["signature_def"]
    assert sorted(sigs) == ["classify", "echo", "regress", "serving_default", "two"]
    x = sigs["serving_default"]["inputs"]["x"]
    assert x["dtype"] == "DT_FLOAT" and x["name"] == "x:0"
    assert x["tensor_shape"]["dim"] == [{"size": "-1", "name": ""}, {"size": "3", "name": ""}]
    assert sigs["classify"]["method_name"] == "tensorflow/serving/classify"


def test_predict_row_and_columnar_formats(served):
    server, _ = served
    xs = [[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]]
    want = (np.array(xs, np.float32) @ W1 + B1).tolist()
    status, body = _request(server.url, "POST", "/v1/models/lin:predict", {"instances": xs})
    assert status == 200
    np.testing.assert_allclose(body["predictions"], want, rtol=1e-6)
    status, body = _request(server.url, "POST", "/v1/models/lin:predict",
                            {"instances": [{"x": x} for x in xs]})
    np.testing.assert_allclose(body["predictions"], want, rtol=1e-6)
    status, body = _request(server.url, "POST", "/v1/models/lin:predict", {"inputs": xs})
    assert status == 200
    np.testing.assert_allclose(body["outputs"], want, rtol=1e-6)
    # several inputs and outputs
    req = {"signature_name": "two", "instances": [{"a": [1, 2], "c": [3, 4]},
                                                  {"a": [5, 6], "c": [7, 8]}]}
    status, body = _request(server.url, "POST", "/v1/models/lin:predict", req)
    assert status == 200
    assert body["predictions"] == [{"sum": [4.0, 6.0], "prod": [3.0, 8.0]},
                                   {"sum": [12.0, 14.0], "prod": [35.0, 48.0]}]
    req = {"signature_name": "two", "inputs": {"a": [[1, 2]], "c": [[3, 4]]}}
    status, body = _request(server.url, "POST", "/v1/models/lin/versions/1:predict", req)
    assert body == {"outputs": {"sum": [[4.0, 6.0]], "prod": [[3.0, 8.0]]}}


def test_binary_strings_round_trip_as_b64(served):
    server, _ = served
    blob = b"\xff\x00hi"
    req = {"signature_name": "echo",
           "instances": [{"b64": base64.b64encode(blob).decode()}, "plain"]}
    status, body = _request(server.url, "POST", "/v1/models/lin:predict", req)
    assert status == 200
    first, second = body["predictions"]
    assert first["text"] == {"b64": base64.b64encode(blob).decode()}  # not UTF-8
    assert second == {"text": "plain", "text_bytes": {"b64": base64.b64encode(b"plain")
                                                      .decode()}}


def test_classify_and_regress(served):
    server, _ = served
    xs = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]], np.float32)
    logits = xs @ W1 + B1
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    req = {"signature_name": "classify", "context": {"x": [1.0, 2.0, 3.0]},
           "examples": [{}]}
    status, body = _request(server.url, "POST", "/v1/models/lin:classify", req)
    assert status == 200, body
    (row,) = body["result"]
    assert [label for label, _ in row] == ["neg", "pos"]
    np.testing.assert_allclose([s for _, s in row], probs[0], rtol=1e-5)
    req = {"signature_name": "regress", "examples": [{"x": list(map(float, x))} for x in xs]}
    status, body = _request(server.url, "POST", "/v1/models/lin:regress", req)
    assert status == 200, body
    np.testing.assert_allclose(body["result"], logits[:, 0], rtol=1e-5)


def test_bad_requests_get_400_naming_the_problem(served):
    server, _ = served
    url, path = server.url, "/v1/models/lin:predict"
    cases = [
        (dict(raw=b"{not json"), "Malformed JSON"),
        (dict(body={"instances": [{"z": [1, 2, 3]}]}), "unknown input name(s) ['z']"),
        (dict(body={"instances": [[1.0, 2.0]]}), "shape [1, 2]"),
        (dict(body={"instances": [[1, 2, 3]], "signature_name": "nope"}),
         'signature name: "nope" not found'),
        (dict(body={"instances": [[1, 2, 3]], "inputs": [[1, 2, 3]]}), "exactly one of"),
        (dict(body={}), "exactly one of"),
        (dict(body={"instances": [[1, 2, 3], [1, 2]]}), "rectangular"),
        (dict(body={"instances": [["a", "b", "c"]]}), "expects float32"),
        (dict(body={"signature_name": "two", "instances": [{"a": [1, 2]}]}),
         "missing input(s) ['c']"),
        (dict(body={"instances": []}), "non-empty"),
    ]
    for kwargs, needle in cases:
        status, body = _request(url, "POST", path, **kwargs)
        assert status == 400, (kwargs, body)
        assert needle in body["error"], (needle, body)
    status, body = _request(url, "POST", "/v1/models/lin:classify",
                            {"examples": [{"x": [1.0, 2.0, 3.0]}]})
    assert status == 400 and "method_name to be tensorflow/serving/classify" in body["error"]
    status, body = _request(url, "POST", "/v1/models/lin:regress",
                            {"signature_name": "regress", "examples": [{"x": [1, "a"]}]})
    assert status == 400 and "mixes types" in body["error"]
    status, body = _request(url, "GET", "/v1/models/other")
    assert status == 404 and "Latest(other)" in body["error"]
    status, body = _request(url, "GET", "/v1/models/lin/versions/7")
    assert status == 404 and "Specific(lin, 7)" in body["error"]
    status, body = _request(url, "GET", "/v1/models/lin:predict")
    assert status == 405


def test_concurrent_load_and_hot_swap_to_a_new_version(served):
    """8 threads x 50 requests with distinct inputs while version 2 is exported: every
    response is its own input's prediction by version 1 or 2, and once the server
    reports version 2 every response is version 2's."""
    server, base = served
    wrong, versions_seen = [], set()
    lock = threading.Lock()

    def work(k):
        for i in range(50):
            xs = np.array([[k, i, (k * i) % 7], [i, -k, 1.0]], np.float32)
            status, body = _request(server.url, "POST", "/v1/models/lin:predict",
                                    {"instances": xs.tolist()})
            got = np.array(body.get("predictions"), np.float32) if status == 200 else None
            with lock:
                if got is not None and np.allclose(got, xs @ W1 + B1, rtol=1e-5):
                    versions_seen.add(1)
                elif got is not None and np.allclose(got, xs @ W2 + B2, rtol=1e-5):
                    versions_seen.add(2)
                else:
                    wrong.append((k, i, status, body))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    _export(base, 2, W2, B2)
    for t in threads:
        t.join()
    assert wrong == []
    deadline = time.time() + 10
    while time.time() < deadline:
        _, body = _request(server.url, "GET", "/v1/models/lin")
        if body["model_version_status"][0]["version"] == "2":
            break
        time.sleep(0.05)
    else:
        pytest.fail("the server did not pick up version 2")
    xs = [[1.0, 1.0, 1.0]]
    _, body = _request(server.url, "POST", "/v1/models/lin:predict", {"instances": xs})
    np.testing.assert_allclose(body["predictions"], np.array(xs) @ W2 + B2, rtol=1e-5)
    assert 1 in versions_seen


def test_broken_new_version_keeps_the_old_one_serving(served):
    server, base = served
    os.makedirs(os.path.join(base, "5"))
    with open(os.path.join(base, "5", "saved_model.json"), "w") as f:
        f.write("{broken")
    server.manager.poll()
    _, body = _request(server.url, "GET", "/v1/models/lin")
    assert body["model_version_status"][0]["version"] == "1"


def test_encode_example_wire_format():
    # Example{features{feature{key:"a" value{int64_list{value:[1]}}}}}
    assert encode_example({"a": 1}) == bytes.fromhex("0a0c0a0a0a016112051a030a0101")
    assert encode_example({"s": "hi"})[-2:] == b"hi"


def test_cli_serves_until_terminated(tmp_path):
    from flowgraph.cli import main

    base = str(tmp_path / "export")
    _export(base, 3, W1, B1)
    assert main([]) == 2
    with pytest.raises(SystemExit):
        main(["serve", "--model_dir", str(tmp_path / "missing")])
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowgraph", "serve", "--model_dir", base, "--port", "0",
         "--model_name", "cli"], stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.time() + 30
        while time.time() < deadline and url is None:
            line = proc.stderr.readline()
            m = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
            url = m.group(1) if m else None
        assert url, "the CLI did not report its address"
        status, body = _request(url, "GET", "/v1/models/cli")
        assert status == 200 and body["model_version_status"][0]["version"] == "3"
    finally:
        proc.terminate()
        proc.wait(timeout=10)

"""Every canned estimator's export loads and serves in a fresh process.

One fresh interpreter trains and exports (`canned_export.py`); another one per export runs
``python -m flowgraph serve`` and answers REST ``predict``, ``classify`` (classifiers) and
``regress`` (regressors) requests, as TensorFlow Serving does. Neither process shares
imports with this one, so an op type declared outside `flowgraph/ops/` (imported only
by the code that builds it) makes the server fail to load the model.

All eight estimators train and export in one process (about a second); each export
is then served by its own server process (under a second each).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

from flowgraph.serving import encode_example

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ESTIMATORS = ("LinearClassifier", "LinearRegressor", "DNNClassifier", "DNNRegressor",
              "DNNLinearCombinedClassifier", "DNNLinearCombinedRegressor",
              "BaselineClassifier", "BaselineRegressor")
ROWS = [[0.5, -0.25], [-1.0, 0.75], [0.0, 0.0]]


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _export(base: pathlib.Path, names) -> None:
    proc = subprocess.run([sys.executable, str(HERE / "canned_export.py"), str(base), *names],
                          cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"export failed:\n{proc.stdout}\n{proc.stderr[-3000:]}"


@contextlib.contextmanager
def _serve(model_dir: pathlib.Path, name: str):
    """A ``flowgraph serve`` process on a free port of 127.0.0.1; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowgraph", "serve", "--model_dir", str(model_dir),
         "--host", "127.0.0.1", "--port", "0", "--model_name", name],
        cwd=ROOT, env=_env(), stderr=subprocess.PIPE, text=True)
    log: list[str] = []
    found = threading.Event()
    url: list[str] = []

    def read_log():  # always drained, so that the server never blocks on a full pipe
        for line in proc.stderr:
            log.append(line)
            m = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
            if m and not url:
                url.append(m.group(1))
                found.set()
        found.set()  # the server exited

    threading.Thread(target=read_log, daemon=True).start()
    try:
        found.wait(timeout=60)
        assert url, f"flowgraph serve did not report its address:\n{''.join(log)}"
        yield url[0], log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _post(url: str, path: str, body: dict) -> tuple[int, dict]:
    host, port = url[len("http://"):].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("POST", path, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read().decode())
    finally:
        conn.close()


def _finite(values) -> bool:
    return all(math.isfinite(v) for v in np.asarray(values, dtype=np.float64).ravel())


def _check_serves(base: pathlib.Path, name: str) -> None:
    with _serve(base / name, name) as (url, log):
        status, body = _post(url, f"/v1/models/{name}:predict", {
            "signature_name": "predict",
            "instances": [{"b64": base64.b64encode(encode_example({"x": row})).decode()}
                          for row in ROWS]})
        assert status == 200, f"{name} predict: {body}\n{''.join(log)}"
        rows = body["predictions"]
        assert len(rows) == len(ROWS)
        if name.endswith("Classifier"):
            assert {"logits", "probabilities", "class_ids", "classes"} <= set(rows[0])
            for r in rows:
                assert _finite(r["probabilities"]) and abs(sum(r["probabilities"]) - 1) < 1e-5
        else:  # one output ("predictions"): each row is its value
            assert _finite(rows) and np.shape(rows) == (len(ROWS), 1)

        examples = {"examples": [{"x": row} for row in ROWS]}
        verb = "classify" if name.endswith("Classifier") else "regress"
        status, body = _post(url, f"/v1/models/{name}:{verb}", examples)
        assert status == 200, f"{name} {verb}: {body}\n{''.join(log)}"
        result = body["result"]
        assert len(result) == len(ROWS)
        if verb == "classify":
            for row in result:
                assert [label for label, _ in row] == ["0", "1"]
                assert _finite([score for _, score in row])
        else:
            assert _finite(result)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    base = tmp_path_factory.mktemp("canned_exports")
    _export(base, ESTIMATORS)
    return base


@pytest.mark.parametrize("name", ESTIMATORS)
def test_canned_estimator_export_serves_in_a_fresh_process(exports, name):
    _check_serves(exports, name)

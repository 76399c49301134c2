"""The production side of the server: limits, timeouts, 503s, disconnects, batching,
metrics, several models and the TensorFlow Serving command line, over real sockets."""

from __future__ import annotations

import http.client
import json
import logging
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import saved_model as sm
from flowgraph.serving import BatchingParameters, Limits, ModelServer
from flowgraph.serving.body import NumericText, materialize, parse_body
from flowgraph.serving.models import read_model_config_text

W = np.array([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]], np.float32)
SERVERS = ["waitress", "dev"]


def _export(base, version, w=W):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.matmul(x, tf.constant(w), name="y")
        with tf.Session() as sess:
            sm.simple_save(sess, os.path.join(base, str(version)), inputs={"x": x},
                           outputs={"y": y})


@pytest.fixture(scope="module")
def export_base(tmp_path_factory):
    base = str(tmp_path_factory.mktemp("export"))
    _export(base, 1)
    return base


def _serve(base, kind, **kwargs):
    if kind == "waitress":
        pytest.importorskip("waitress")
    limits = Limits(**kwargs.pop("limits", {}))
    return ModelServer(base, model_name="lin", port=0, server=kind, limits=limits,
                       **kwargs).start()


def _conn(server, timeout=10):
    return http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)


def _call(conn, method, path, body=None, headers=None):
    data = None if body is None else (body if isinstance(body, bytes) else
                                      json.dumps(body).encode())
    conn.request(method, path, body=data, headers=headers or {})
    resp = conn.getresponse()
    raw = resp.read()
    return resp, raw


def _predict(server, rows):
    conn = _conn(server)
    try:
        resp, raw = _call(conn, "POST", "/v1/models/lin:predict", {"instances": rows})
        return resp.status, json.loads(raw)
    finally:
        conn.close()


def _slow(server, seconds):
    """Make every inference of `lin` take `seconds` longer."""
    protocol = server.app.models["lin"][1]
    fast = protocol.runner

    def slow(fn, columns):
        time.sleep(seconds)
        return fast(fn, columns)

    protocol.runner = slow


# -- request bodies -------------------------------------------------------------------------------
def test_numeric_bodies_parse_to_arrays_like_json():
    rng = np.random.default_rng(0)
    for shape in [(300,), (200, 3), (20, 4, 5), (7, 3, 2, 9)]:
        x = np.round(rng.normal(size=shape) * 100, 3)
        body = json.dumps({"signature_name": "s", "instances": x.tolist()}).encode()
        parsed = parse_body(body)
        assert isinstance(parsed["instances"], NumericText), shape
        assert parsed["signature_name"] == "s"
        np.testing.assert_array_equal(materialize(parsed["instances"], np.float64), x)
        assert materialize(parsed["instances"], np.float32).dtype == np.float32
    ints = json.dumps({"inputs": {"a": list(range(-400, 400))}}).encode()
    a = materialize(parse_body(ints)["inputs"]["a"], np.int64)
    assert a.dtype == np.int64 and a.tolist() == list(range(-400, 400))
    # floats for an int input fall back to lists (the signature then names the error)
    floats = json.dumps({"instances": [1.5] * 400}).encode()
    assert materialize(parse_body(floats)["instances"], np.int32) == [1.5] * 400


def _plain(value):
    if isinstance(value, NumericText):
        return value.to_list()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return [_plain(v) for v in value] if isinstance(value, list) else value


def test_irregular_or_quoted_numbers_fall_back_to_json():
    pad = " " * 1100
    cases = [
        '{"a": [[1, 2], [3]' + pad + "]}",  # ragged
        '{"a": [1, 2], "b": [3, 4' + pad + "]}",  # rectangular: parsed fast, same values
        '{"s": "[1, 2, 3' + pad + ']"}',  # numbers inside a string
        '{"a": [[1, 2], "x", [3, 4]' + pad + "]}",
    ]
    for text in cases:
        assert _plain(parse_body(text.encode())) == json.loads(text), text
    # shapes whose skeleton would be huge, or very deep nesting, are not trusted
    lopsided = "[[" + ",".join(["1"] * 3000) + "]" + ",[]" * 3000 + "]"
    assert parse_body(('{"a": ' + lopsided + "}").encode())["a"][1] == []
    deep = "[" * 2000 + "1" + "]" * 2000
    with pytest.raises(RecursionError):
        parse_body(('{"a": ' + deep + "}").encode())
    for bad in ['{"a": [1,, 2' + pad + "]}", '{"a": [1, 2' + pad + "]"]:
        with pytest.raises(ValueError):
            value = parse_body(bad.encode())
            materialize(value["a"], np.float32)


def test_numeric_body_memory_stays_under_4x_the_body():
    x = np.random.default_rng(1).random((20_000, 10)).astype(np.float32)
    body = json.dumps({"instances": x.tolist()}).encode()
    tracemalloc.start()
    try:
        arr = materialize(parse_body(body)["instances"], np.float32)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(arr, x)
    assert peak <= 3 * len(body), (peak, len(body))  # + the body itself: under 4x


# -- limits and errors ----------------------------------------------------------------------------
@pytest.mark.parametrize("kind", SERVERS)
def test_large_numeric_request_and_limits(export_base, kind):
    server = _serve(export_base, kind, limits={"max_body_bytes": 200_000,
                                               "max_instances_per_request": 1000})
    try:
        x = np.random.default_rng(2).random((600, 3)).astype(np.float32)
        status, body = _predict(server, x.tolist())
        assert status == 200
        np.testing.assert_allclose(body["predictions"], x @ W, rtol=1e-5)
        status, body = _predict(server, np.ones((1001, 3)).tolist())
        assert status == 400 and "at most 1000 per request" in body["error"]
        status, body = _predict(server, np.ones((20_000, 3)).tolist())
        assert status == 413 and "exceeds" in body["error"].lower()
        conn = _conn(server)
        resp, raw = _call(conn, "POST", "/v1/models/lin:predict",
                          headers={"Content-Length": "999999999"})
        assert resp.status == 413 and "error" in json.loads(raw)
        assert resp.getheader("Content-Type") == "application/json"
        conn.close()
    finally:
        server.stop()


def test_chunked_request_body(export_base):
    server = _serve(export_base, "waitress")
    try:
        conn = _conn(server)
        body = json.dumps({"instances": [[1.0, 2.0, 3.0]] * 500}).encode()
        conn.request("POST", "/v1/models/lin:predict", body=iter([body[:700], body[700:]]),
                     encode_chunked=True, headers={"Transfer-Encoding": "chunked"})
        resp = conn.getresponse()
        assert resp.status == 200
        assert json.loads(resp.read())["predictions"] == [[2.0, 6.0]] * 500
        conn.close()
    finally:
        server.stop()


def test_full_server_answers_503_at_once(export_base):
    server = _serve(export_base, "waitress", limits={"max_concurrent_requests": 1})
    _slow(server, 1.0)
    try:
        first = threading.Thread(target=_predict, args=(server, [[1.0, 2.0, 3.0]]))
        first.start()
        time.sleep(0.3)
        t0 = time.perf_counter()
        conn = _conn(server)
        resp, raw = _call(conn, "POST", "/v1/models/lin:predict",
                          {"instances": [[1.0, 2.0, 3.0]]})
        elapsed = time.perf_counter() - t0
        assert resp.status == 503 and "busy" in json.loads(raw)["error"]
        assert resp.getheader("Retry-After") == "1"
        assert elapsed < 0.5
        resp, raw = _call(conn, "GET", "/v1/models/lin")  # status is still answered
        assert resp.status == 200
        conn.close()
        first.join()
    finally:
        server.stop()


# -- slow clients, timeouts and disconnects -------------------------------------------------------
def _closed_within(sock, seconds) -> bool:
    """True if the server closes `sock` (recv gives b"" or a reset) within `seconds`."""
    sock.settimeout(seconds)
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


def test_partial_and_slow_requests_are_closed_after_the_timeouts(export_base):
    server = _serve(export_base, "waitress",
                    limits={"request_timeout": 0.6, "idle_timeout": 1.0})
    try:
        addr = ("127.0.0.1", server.port)
        partial = socket.create_connection(addr)
        partial.sendall(b"GET /v1/models/lin HTTP/1.1\r\nHost: x\r\n")  # no blank line
        trickle = socket.create_connection(addr)
        idle = socket.create_connection(addr)
        t0 = time.perf_counter()
        for ch in b"POST /v1/models/lin:predict HTTP/1.1\r\nHost: x\r\n":
            try:
                trickle.sendall(bytes([ch]))
            except OSError:
                break
            time.sleep(0.05)
            if time.perf_counter() - t0 > 2.0:
                break
        assert _closed_within(partial, 2.0)
        assert _closed_within(trickle, 2.0)  # active, but the request took too long
        assert _closed_within(idle, 2.0)
        assert time.perf_counter() - t0 < 4.0
        status, _ = _predict(server, [[1.0, 2.0, 3.0]])  # the server is fine
        assert status == 200
        for s in (partial, trickle, idle):
            s.close()
    finally:
        server.stop()


def test_stalled_clients_cost_no_threads(export_base):
    server = _serve(export_base, "waitress", limits={"max_concurrent_requests": 2})
    try:
        threads_before = threading.active_count()
        stalled = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(60)]
        for s in stalled:
            s.sendall(b"POST /v1/models/lin:predict HTTP/1.1\r\nContent-Length: 10\r\n\r\n{")
        time.sleep(0.2)
        t0 = time.perf_counter()
        assert _predict(server, [[1.0, 2.0, 3.0]])[0] == 200
        assert time.perf_counter() - t0 < 1.0
        assert threading.active_count() <= threads_before + 1
        for s in stalled:
            s.close()
    finally:
        server.stop()


def test_dev_server_closes_silent_connections(export_base):
    server = _serve(export_base, "dev", limits={"idle_timeout": 0.5})
    try:
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"GET /v1/models/lin HTTP/1.1\r\n")
        assert _closed_within(sock, 3.0)
        sock.close()
    finally:
        server.stop()


@pytest.mark.parametrize("kind", SERVERS)
def test_client_disconnect_is_one_log_line(export_base, kind, caplog):
    server = _serve(export_base, kind)
    _slow(server, 0.4)
    try:
        body = json.dumps({"instances": [[1.0, 2.0, 3.0]] * 4000}).encode()
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        # waitress logs on "waitress"; an earlier test may have raised flowgraph's level
        with caplog.at_level(logging.INFO), \
                caplog.at_level(logging.INFO, logger="flowgraph.serving"):
            sock.sendall(b"POST /v1/models/lin:predict HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
            time.sleep(0.1)
            sock.close()  # reset: the answer has nowhere to go
            deadline = time.time() + 5
            while time.time() < deadline and not [
                    r for r in caplog.records if "disconnected" in r.getMessage()]:
                time.sleep(0.05)
        lines = [r for r in caplog.records if "disconnected" in r.getMessage().lower()]
        assert len(lines) == 1, [r.getMessage() for r in caplog.records]
        assert lines[0].exc_info is None and lines[0].levelno == logging.INFO
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert _predict(server, [[1.0, 2.0, 3.0]])[0] == 200
    finally:
        server.stop()


@pytest.mark.parametrize("kind", SERVERS)
def test_keep_alive_requests_do_not_stall(export_base, kind):
    """Each answer goes out in one write with Nagle off: no 40 ms delayed-ACK stall."""
    server = _serve(export_base, kind)
    try:
        conn = _conn(server)
        times = []
        for _ in range(15):
            t0 = time.perf_counter()
            resp, _ = _call(conn, "POST", "/v1/models/lin:predict",
                            {"instances": [[1.0, 2.0, 3.0]]})
            times.append(time.perf_counter() - t0)
            assert resp.status == 200
        conn.close()
        assert statistics.median(times) < 0.035, times  # a stall is 40 ms
    finally:
        server.stop()


# -- batching, metrics, metadata, several models --------------------------------------------------
def test_concurrent_requests_are_batched_into_one_run(export_base):
    params = BatchingParameters(max_batch_size=8, batch_timeout_micros=1_500_000,
                                num_batch_threads=1)
    server = _serve(export_base, "waitress", batching=params)
    servable = server.manager.acquire()
    runs = []
    real_run = servable.model._run

    def counting_run(fetches, feed):
        runs.append({k: np.shape(v) for k, v in feed.items()})
        return real_run(fetches, feed)

    servable.model._run = counting_run
    server.manager.release(servable)
    try:
        rows = [[[k, 1.0, 2.0]] * (1 + k % 2) for k in range(6)]  # 9 rows in 6 requests
        results = [None] * 6

        def work(k):
            results[k] = _predict(server, rows[k])

        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k, (status, body) in enumerate(results):
            assert status == 200
            np.testing.assert_allclose(body["predictions"], np.array(rows[k]) @ W, rtol=1e-6)
        assert len(runs) < 6 and sum(next(iter(r.values()))[0] for r in runs) == 9
        assert max(next(iter(r.values()))[0] for r in runs) > 2  # several requests per run
        text = _get_metrics(server)
        batches = _metric(text, ":tensorflow:serving:batching_session:processed_batch_size_count")
        assert batches == len(runs)
    finally:
        server.stop()


def _get_metrics(server) -> str:
    conn = _conn(server)
    resp, raw = _call(conn, "GET", "/monitoring/prometheus/metrics")
    conn.close()
    assert resp.status == 200 and resp.getheader("Content-Type").startswith("text/plain")
    return raw.decode()


def _metric(text: str, name: str, **labels) -> float:
    total = 0.0
    for line in text.splitlines():
        m = re.fullmatch(r"(\S+?)(\{(.*)\})? (\S+)", line)
        if line.startswith("#") or m is None or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(3) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            total += float(m.group(4))
    return total


def test_prometheus_metrics_count_requests_and_latencies(export_base):
    server = _serve(export_base, "waitress")
    try:
        for _ in range(3):
            assert _predict(server, [[1.0, 2.0, 3.0]])[0] == 200
        assert _predict(server, [[1.0, 2.0]])[0] == 400
        text = _get_metrics(server)
        count = ":tensorflow:serving:request_count"
        assert _metric(text, count, model_name="lin", API="predict", status="200") == 3
        assert _metric(text, count, model_name="lin", API="predict", status="400") == 1
        latency = ":tensorflow:serving:request_latency"
        assert _metric(text, latency + "_count", model_name="lin", API="predict") == 4
        assert _metric(text, latency + "_bucket", model_name="lin", API="predict",
                       le="+Inf") == 4
        assert "# TYPE :tensorflow:serving:request_latency histogram" in text
    finally:
        server.stop()


def test_several_models_from_a_config_file(tmp_path, export_base):
    other = str(tmp_path / "other")
    _export(other, 4, W * 2)
    config = tmp_path / "models.config"
    config.write_text("model_config_list {\n"
                      f"  config {{ name: 'lin' base_path: '{export_base}' }}\n"
                      "  config {\n    name: \"double\"\n    base_path: \"other\"\n"
                      "    model_platform: \"tensorflow\"\n  }\n}\n")
    from flowgraph.serving.models import read_model_config

    models = read_model_config(config)
    assert models == [("lin", export_base), ("double", other)]
    server = ModelServer(models=models, port=0).start()
    try:
        conn = _conn(server)
        resp, raw = _call(conn, "GET", "/v1/models/double/metadata")
        meta = json.loads(raw)
        assert resp.status == 200
        assert meta["model_spec"] == {"name": "double", "signature_name": "", "version": "4"}
        assert "x" in meta["metadata"]["signature_def"]["signature_def"]["serving_default"][
            "inputs"]
        resp, raw = _call(conn, "POST", "/v1/models/double:predict",
                          {"instances": [[1.0, 0.0, 0.0]]})
        assert json.loads(raw)["predictions"] == [[2.0, -2.0]]
        resp, raw = _call(conn, "POST", "/v1/models/lin:predict",
                          {"instances": [[1.0, 0.0, 0.0]]})
        assert json.loads(raw)["predictions"] == [[1.0, -1.0]]
        conn.close()
    finally:
        server.stop()


def test_model_config_errors_name_the_problem():
    assert read_model_config_text('{"model_config_list": {"config": [{"name": "a", '
                                  '"base_path": "/m"}]}}') == [("a", "/m")]
    for text, needle in [
        ("model_config_list { config { name: 'a' base_path: '/m' "
         "model_platform: 'onnx' } }", "model_platform"),
        ("model_config_list { config { name: 'a' } }", "base_path"),
        ("model_config_list { config { name: 'a' base_path: '/m' version: '1' } }",
         "unsupported field"),
        ("config { }", "model_config_list"),
    ]:
        with pytest.raises(ValueError, match=needle):
            read_model_config_text(text)


def test_batching_parameters_file():
    p = BatchingParameters.from_text("# tuned\nmax_batch_size { value: 64 }\n"
                                     "batch_timeout_micros { value: 0 }\n")
    assert (p.max_batch_size, p.batch_timeout_micros, p.num_batch_threads) == (64, 0, 4)
    with pytest.raises(ValueError, match="unsupported field 'pad_variable_length_inputs'"):
        BatchingParameters.from_text("pad_variable_length_inputs { value: 1 }")
    with pytest.raises(ValueError, match="max_batch_size must be"):
        BatchingParameters(max_batch_size=0)


# -- the command line -----------------------------------------------------------------------------
def test_command_line_flags_and_aliases(tmp_path):
    import argparse

    from flowgraph.serving import cli

    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    new = parser.parse_args(["--rest_api_port=9000", "--model_base_path=/m",
                             "--file_system_poll_wait_seconds=5", "--rest_api_num_threads=3",
                             "--rest_api_timeout_in_ms=1500"])
    old = parser.parse_args(["--port", "9000", "--model_dir", "/m", "--poll_interval", "5",
                             "--max_concurrent_requests", "3", "--request_timeout", "1.5"])
    for args in (new, old):
        assert (args.rest_api_port, args.model_base_path, args.poll_interval) == (9000, "/m",
                                                                                5.0)
        limits = cli.limits(args)
        assert (limits.max_concurrent_requests, limits.request_timeout) == (3, 1.5)
        assert cli.batching_parameters(args) is None
    params_file = tmp_path / "batching.txt"
    params_file.write_text("max_batch_size { value: 16 }\nnum_batch_threads { value: 2 }\n")
    args = parser.parse_args(["--model_dir", "/m", "--batching_parameters_file",
                              str(params_file), "--num_batch_threads", "3"])
    assert cli.batching_parameters(args) == BatchingParameters(max_batch_size=16,
                                                               num_batch_threads=3)
    with pytest.raises(SystemExit):
        cli.main(["--rest_api_port", "0"])  # no model
    with pytest.raises(SystemExit):
        cli.main(["--model_base_path", str(tmp_path / "missing")])


def test_command_line_serves_a_model_config_with_batching(tmp_path, export_base):
    pytest.importorskip("waitress")
    config = tmp_path / "models.json"
    config.write_text(json.dumps({"model_config_list": {"config": [
        {"name": "lin", "base_path": export_base}]}}))
    proc = subprocess.Popen(
        [sys.executable, "-m", "flowgraph.serving", "--rest_api_port=0",
         f"--model_config_file={config}", "--enable_batching", "--max_batch_size=4",
         "--batch_timeout_micros=0"], stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.time() + 60
        while time.time() < deadline and port is None:
            m = re.search(r"at http://127\.0\.0\.1:(\d+) \(waitress server, batching\)",
                          proc.stderr.readline())
            port = int(m.group(1)) if m else None
        assert port, "the server did not report its address"
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        resp, raw = _call(conn, "POST", "/v1/models/lin:predict",
                          {"instances": [[1.0, 2.0, 3.0]]})
        assert resp.status == 200 and json.loads(raw)["predictions"] == [[2.0, 6.0]]
        conn.close()
    finally:
        proc.terminate()  # SIGTERM stops it cleanly
        assert proc.wait(timeout=30) == 0

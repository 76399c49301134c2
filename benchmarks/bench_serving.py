"""Serving latency, throughput and request memory, against a real server process.

    python benchmarks/bench_serving.py [--requests 2000] [--seconds 5] [--body-mb 20]
                                       [--servers waitress,dev]

A small model (16 inputs, a 16x32 ReLU layer, 4 outputs) is exported to a temporary
directory and served by ``python -m flowgraph.serving`` in a separate process, so the
server's time and memory are its own. One JSON line per measurement:

- ``serving_latency``: p50/p99 milliseconds of a one-instance predict, on a new
  connection per request and on one reused (keep-alive) connection; targets p50 <= 2 ms
  new and <= 1 ms reused.
- ``serving_throughput``: predicts per second with 1, 4 and 16 concurrent clients
  (threads here, each with its own keep-alive connection), with and without
  ``--enable_batching``.
- ``serving_request_rss``: the server's peak RSS growth while it answers one numeric
  request of ``--body-mb`` megabytes (rows of 16 float32 values), as a multiple of the
  body; target <= 4.

Client threads share this process's interpreter, so throughput with many clients is
partly bounded by the client side; compare runs on the same machine only.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
PATH = "/v1/models/bench:predict"


def export_model(base: str) -> None:
    import flowgraph as tf
    from flowgraph import saved_model as sm

    rng = np.random.default_rng(0)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 16], name="x")
        h = tf.nn.relu(tf.matmul(x, tf.constant(rng.normal(size=(16, 32)).astype(np.float32))))
        y = tf.matmul(h, tf.constant(rng.normal(size=(32, 4)).astype(np.float32)), name="y")
        with tf.Session() as sess:
            sm.simple_save(sess, os.path.join(base, "1"), inputs={"x": x}, outputs={"y": y})


@contextlib.contextmanager
def server_process(base: str, kind: str, batching: bool, max_body_mb: int):
    """A ``python -m flowgraph.serving`` process; yields (port, pid)."""
    cmd = [sys.executable, "-m", "flowgraph.serving", "--rest_api_port=0",
           f"--model_base_path={base}", "--model_name=bench", f"--server={kind}",
           f"--max_body_bytes={max_body_mb << 20}", "--max_instances_per_request=10000000",
           "--max_concurrent_requests=64"]
    if batching:
        cmd += ["--enable_batching", "--max_batch_size=64", "--batch_timeout_micros=500"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
    try:
        port, deadline = None, time.time() + 120
        while port is None and time.time() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"the server exited with code {proc.returncode}")
            m = re.search(r"at http://127\.0\.0\.1:(\d+)", line)
            port = int(m.group(1)) if m else None
        if port is None:
            raise RuntimeError("the server did not report its address")
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain its log
        yield port, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def predict(conn: http.client.HTTPConnection, body: bytes) -> None:
    conn.request("POST", PATH, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {data[:200]!r}")


def one_instance() -> bytes:
    return json.dumps({"instances": [[0.5] * 16]}).encode()


def latency(port: int, n: int, reuse: bool) -> dict:
    body, times = one_instance(), []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    predict(conn, body)  # warm up
    for _ in range(n):
        if not reuse:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        t0 = time.perf_counter()
        predict(conn, body)
        times.append(time.perf_counter() - t0)
    conn.close()
    ms = np.array(times) * 1e3
    return {"p50_ms": round(float(np.percentile(ms, 50)), 3),
            "p99_ms": round(float(np.percentile(ms, 99)), 3), "requests": n}


def throughput(port: int, clients: int, seconds: float) -> dict:
    """Predicts per second over `seconds`, after a warm-up of a fifth of that (the
    server's threads run their first calls)."""
    body, counts, stop = one_instance(), [0] * clients, threading.Event()
    counting = threading.Event()
    errors: list[str] = []

    def work(i):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            while not stop.is_set():
                predict(conn, body)
                counts[i] += counting.is_set()
        except Exception as e:  # reported, not raised: the other clients go on
            errors.append(str(e))
        finally:
            conn.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    time.sleep(seconds / 5)
    counting.set()
    t0 = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    return {"requests_per_s": round(sum(counts) / elapsed, 1), "requests": sum(counts),
            "errors": len(errors)}


def peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def request_rss(port: int, pid: int, body_mb: float) -> dict:
    rows = max(1, int(body_mb * (1 << 20) / (16 * 21)))  # ~21 bytes per random float
    x = np.random.default_rng(1).random((rows, 16)).astype(np.float32)
    body = json.dumps({"instances": x.tolist()}).encode()
    del x
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    predict(conn, one_instance())
    before = peak_rss_kb(pid)
    t0 = time.perf_counter()
    predict(conn, body)
    seconds = time.perf_counter() - t0
    conn.close()
    grown = (peak_rss_kb(pid) - before) * 1024
    return {"body_mb": round(len(body) / 2**20, 2), "rows": rows,
            "peak_rss_growth_mb": round(grown / 2**20, 1),
            "ratio_to_body": round(grown / len(body), 2), "seconds": round(seconds, 3)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="latency samples")
    parser.add_argument("--seconds", type=float, default=5.0, help="per throughput run")
    parser.add_argument("--body-mb", type=float, default=20.0, help="large request size")
    parser.add_argument("--clients", default="1,4,16")
    parser.add_argument("--servers", default="waitress,dev")
    args = parser.parse_args(argv)
    clients = [int(c) for c in args.clients.split(",")]
    max_body_mb = int(args.body_mb * 2) + 8
    with tempfile.TemporaryDirectory() as base:
        export_model(base)
        for kind in args.servers.split(","):
            with server_process(base, kind, False, max_body_mb) as (port, pid):
                for reuse in (False, True):
                    print(json.dumps({"bench": "serving_latency", "server": kind,
                                      "connection": "reused" if reuse else "new",
                                      **latency(port, args.requests, reuse)}), flush=True)
                for c in clients:
                    print(json.dumps({"bench": "serving_throughput", "server": kind,
                                      "batching": False, "clients": c,
                                      **throughput(port, c, args.seconds)}), flush=True)
                print(json.dumps({"bench": "serving_request_rss", "server": kind,
                                  **request_rss(port, pid, args.body_mb)}), flush=True)
            with server_process(base, kind, True, max_body_mb) as (port, _):
                for c in clients:
                    print(json.dumps({"bench": "serving_throughput", "server": kind,
                                      "batching": True, "clients": c,
                                      **throughput(port, c, args.seconds)}), flush=True)


if __name__ == "__main__":
    main()

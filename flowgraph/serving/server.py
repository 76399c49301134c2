"""A prediction server speaking TensorFlow Serving's REST protocol.

State. The server watches one model directory (an Estimator's ``export_dir_base``)
whose numeric subdirectories are versions. A poller thread rescans it every
`poll_interval` seconds and keeps exactly one *servable*: the highest version that
holds a ``saved_model.json`` and loads. A new servable is loaded completely (its own
graph and session) before it replaces the old one, so requests never wait for a load.

Invariant. Every request takes a reference to the current servable when it starts
and drops it when it ends; a replaced servable is closed only when its last reference
is dropped. A request is therefore answered entirely by one version::

    t ──────────────────────────────────────────────>
    poller:   load v2 ........ swap(v1 -> v2)
    request A:   [acquire v1 ............ release v1]   -> v1 closes here
    request B:                    [acquire v2 .. release v2]

Endpoints (``NAME`` is `model_name`; ``/versions/N`` may follow it):

- ``GET /v1/models/NAME``: ``{"model_version_status": [...]}``
- ``GET /v1/models/NAME/metadata``: ``{"model_spec": ..., "metadata": {"signature_def":
  ...}}``
- ``POST /v1/models/NAME:predict`` with ``{"instances": [...]}`` (rows) or
  ``{"inputs": ...}`` (columns), optionally ``"signature_name"``: ``{"predictions":
  [...]}`` or ``{"outputs": ...}``
- ``POST /v1/models/NAME:classify`` with ``{"examples": [{feature: value}, ...],
  "context": {...}}``: ``{"result": [[[label, score], ...], ...]}``
- ``POST /v1/models/NAME:regress``, same body: ``{"result": [value, ...]}``

Binary strings travel as ``{"b64": "..."}`` both ways (outputs whose key ends in
``_bytes``, or that are not UTF-8). A bad request gets HTTP 400 and ``{"error": "..."}``
naming the problem; an unknown model or version gets 404.

Example
-------
>>> server = ModelServer("/path/to/export_base", model_name="m", port=0)  # doctest: +SKIP
>>> server.start(); server.url                                            # doctest: +SKIP
'http://127.0.0.1:40123'
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import re
import struct
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.saved_model import constants as sc

__all__ = ["ModelServer", "encode_example"]

logger = logging.getLogger("flowgraph.serving")

MAX_BODY_BYTES = 64 << 20


class HTTPError(Exception):
    """An error answered as ``{"error": message}`` with an HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def bad_request(message: str) -> HTTPError:
    return HTTPError(HTTPStatus.BAD_REQUEST, message)


# -- tf.train.Example encoding (protobuf wire format) ---------------------------------------------
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _feature(name: str, value) -> bytes:
    items = value if isinstance(value, list) else [value]
    items = [base64.b64decode(_b64(v, name)) if isinstance(v, dict) else v for v in items]
    if all(isinstance(v, bytes | str) for v in items):
        data = b"".join(_field(1, v.encode("utf-8") if isinstance(v, str) else v)
                        for v in items)
        return _field(1, data)  # bytes_list
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in items):
        raise bad_request(f"Feature '{name}' mixes types or holds values that are not "
                          "numbers or strings; each feature needs a list of all numbers or "
                          "all strings")
    if all(isinstance(v, int) for v in items):
        return _field(3, _field(1, b"".join(_varint(v) for v in items)))  # int64_list
    return _field(2, _field(1, struct.pack(f"<{len(items)}f", *items)))  # float_list


def encode_example(features: dict) -> bytes:
    """Serialize ``{feature_name: value or list}`` as a ``tf.train.Example``: ints become
    an int64 list, numbers with any float a float list, strings (or ``{"b64": ...}``) a
    bytes list."""
    if not isinstance(features, dict):
        raise bad_request(f"Each example must be a JSON object of feature name -> value; "
                          f"got {type(features).__name__}")
    body = b"".join(_field(1, _field(1, k.encode("utf-8")) + _field(2, _feature(k, v)))
                    for k, v in sorted(features.items()))
    return _field(1, body)


# -- JSON <-> arrays ------------------------------------------------------------------------------
def _b64(value: dict, what: str) -> str:
    if set(value) != {"b64"} or not isinstance(value["b64"], str):
        raise bad_request(f"{what}: a JSON object inside a value must be {{\"b64\": "
                          f"\"<base64>\"}}; got keys {sorted(value)}")
    return value["b64"]


def _decode_b64(value, what: str):
    """Replace ``{"b64": ...}`` objects by bytes, recursively."""
    if isinstance(value, dict):
        try:
            return base64.b64decode(_b64(value, what), validate=True)
        except (binascii.Error, ValueError):
            raise bad_request(f"{what}: invalid base64 data") from None
    if isinstance(value, list):
        return [_decode_b64(v, what) for v in value]
    return value


def _is_b64(value) -> bool:
    return isinstance(value, dict) and set(value) == {"b64"}


def _jsonable(value, key: str):
    if isinstance(value, np.ndarray):
        if value.dtype != object and value.dtype.kind not in "SU":
            return value.tolist()
        return _jsonable(value.tolist(), key)
    if isinstance(value, list):
        return [_jsonable(v, key) for v in value]
    if isinstance(value, bytes):
        if key.endswith("_bytes"):
            return {"b64": base64.b64encode(value).decode("ascii")}
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _dt_name(enum: int) -> str:
    name = _dtypes.as_dtype(enum).base_dtype.name
    return {"float32": "DT_FLOAT", "float64": "DT_DOUBLE",
            "float16": "DT_HALF"}.get(name, "DT_" + name.upper())


def _signature_json(sig) -> dict:
    def info(t):
        return {"dtype": _dt_name(t.dtype), "name": t.name, "tensor_shape": {
            "dim": [{"size": str(d.size), "name": d.name} for d in t.tensor_shape.dim],
            "unknown_rank": t.tensor_shape.unknown_rank}}

    return {"inputs": {k: info(v) for k, v in sig.inputs.items()},
            "outputs": {k: info(v) for k, v in sig.outputs.items()},
            "method_name": sig.method_name}


# -- versions -------------------------------------------------------------------------------------
class _Servable:
    def __init__(self, version: int, path: str, model) -> None:
        self.version = version
        self.path = path
        self.model = model
        self.refs = 0
        self.retired = False


class VersionManager:
    """Keeps the highest loadable version of `model_dir` loaded (see the module essay)."""

    def __init__(self, model_dir: str, tags=(sc.SERVING,)) -> None:
        self.model_dir = model_dir
        self.tags = tuple(tags)
        self._lock = threading.Lock()
        self._current: _Servable | None = None
        self._failed: dict[int, float] = {}  # version -> mtime of the file that failed

    def _versions(self) -> list[tuple[int, str]]:
        try:
            names = os.listdir(self.model_dir)
        except OSError:
            return []
        found = []
        for n in names:
            path = os.path.join(self.model_dir, n)
            if n.isdigit() and os.path.isfile(os.path.join(path, sc.SAVED_MODEL_FILENAME_JSON)):
                found.append((int(n), path))
        return sorted(found, reverse=True)

    def poll(self) -> None:
        """Load the newest loadable version if it is not the one being served."""
        from flowgraph.saved_model.predictor import LoadedModel

        for version, path in self._versions():
            current = self._current
            if current is not None and current.version == version:
                return
            mtime = os.path.getmtime(os.path.join(path, sc.SAVED_MODEL_FILENAME_JSON))
            if self._failed.get(version) == mtime:
                continue
            try:
                model = LoadedModel(path, tags=self.tags)
            except Exception as e:  # a bad export must not stop the server
                logger.error("Could not load version %d from %s: %s", version, path, e)
                self._failed[version] = mtime
                continue
            self._swap(_Servable(version, path, model))
            logger.info("Serving version %d from %s", version, path)
            return

    def _swap(self, new: _Servable | None) -> None:
        with self._lock:
            old, self._current = self._current, new
            if old is not None:
                old.retired = True
                close = old.refs == 0
        if old is not None and close:
            old.model.close()

    def acquire(self) -> _Servable | None:
        with self._lock:
            s = self._current
            if s is not None:
                s.refs += 1
            return s

    def release(self, s: _Servable) -> None:
        with self._lock:
            s.refs -= 1
            close = s.retired and s.refs == 0
        if close:
            s.model.close()

    def close(self) -> None:
        self._swap(None)


# -- request handling -----------------------------------------------------------------------------
_ROUTE = re.compile(r"^/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>[^/:]+)|"
                    r"/labels/(?P<label>[^/:]+))?(?P<verb>/metadata|:predict|:classify|"
                    r":regress)?/?$")


class _Handler(BaseHTTPRequestHandler):
    server_version = "flowgraph-serving"
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):
        logger.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status != HTTPStatus.OK:
            # The request body may be unread: do not reuse this connection.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise HTTPError(HTTPStatus.LENGTH_REQUIRED, "A Content-Length header is required")
        if int(length) > MAX_BODY_BYTES:
            raise HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                            f"Request body of {length} bytes exceeds {MAX_BODY_BYTES}")
        raw = self.rfile.read(int(length))
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise bad_request(f"Malformed JSON in request body: {e}") from None
        if not isinstance(body, dict):
            raise bad_request("The request body must be a JSON object")
        return body

    def _dispatch(self, method: str) -> None:
        app = self.server.app
        servable = None
        try:
            m = _ROUTE.match(self.path.split("?", 1)[0])
            if m is None or m["name"] != app.model_name:
                if m is not None:
                    raise HTTPError(HTTPStatus.NOT_FOUND, f"Servable not found for request: "
                                                          f"Latest({m['name']})")
                raise HTTPError(HTTPStatus.NOT_FOUND, f"Malformed request: {method} "
                                                      f"{self.path}")
            verb = m["verb"] or ""
            wants_post = verb.startswith(":")
            if (method == "POST") != wants_post:
                raise HTTPError(HTTPStatus.METHOD_NOT_ALLOWED,
                                f"{method} is not supported for {self.path}")
            body = self._body() if method == "POST" else None
            servable = app.manager.acquire()
            self._check_version(servable, m)
            if verb == "":
                payload = app.status(servable)
            elif verb == "/metadata":
                payload = app.metadata(servable)
            elif verb == ":predict":
                payload = app.predict(servable, body)
            else:
                payload = app.classify_or_regress(servable, body, verb[1:])
            self._send(HTTPStatus.OK, payload)
        except HTTPError as e:
            self._send(e.status, {"error": str(e)})
        except Exception as e:
            logger.exception("Internal error serving %s", self.path)
            self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(e).__name__}: {e}"})
        finally:
            if servable is not None:
                app.manager.release(servable)

    def _check_version(self, servable, m) -> None:
        name = m["name"]
        if m["label"] is not None:
            raise HTTPError(HTTPStatus.NOT_FOUND, f"Unrecognized servable version label: "
                                                  f"{m['label']}")
        if servable is None:
            what = f"Specific({name}, {m['version']})" if m["version"] else f"Latest({name})"
            raise HTTPError(HTTPStatus.NOT_FOUND, f"Servable not found for request: {what}")
        if m["version"] is not None:
            if not m["version"].isdigit():
                raise bad_request(f"Invalid version in URL: {m['version']!r}")
            if int(m["version"]) != servable.version:
                raise HTTPError(HTTPStatus.NOT_FOUND, f"Servable not found for request: "
                                                      f"Specific({name}, {m['version']})")


class _App:
    """The protocol: turns request bodies into signature calls and answers."""

    def __init__(self, model_name: str, manager: VersionManager) -> None:
        self.model_name = model_name
        self.manager = manager

    def status(self, s: _Servable) -> dict:
        return {"model_version_status": [{"version": str(s.version), "state": "AVAILABLE",
                                          "status": {"error_code": "OK",
                                                     "error_message": ""}}]}

    def metadata(self, s: _Servable) -> dict:
        sigs = s.model.meta_graph_def.signature_def
        return {"model_spec": {"name": self.model_name, "signature_name": "",
                               "version": str(s.version)},
                "metadata": {"signature_def": {"signature_def": {
                    k: _signature_json(v) for k, v in sigs.items()}}}}

    @staticmethod
    def _signature(s: _Servable, body: dict):
        name = body.get("signature_name", sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY)
        if not isinstance(name, str):
            raise bad_request("'signature_name' must be a string")
        if name not in s.model.signatures:
            raise bad_request(f"Serving signature name: \"{name}\" not found in signature def "
                              f"(the model has {sorted(s.model.signatures)})")
        return s.model.signatures[name]

    @staticmethod
    def _run(fn, columns: dict) -> dict:
        try:
            return fn(**columns)
        except (TypeError, ValueError) as e:
            raise bad_request(str(e)) from None
        except (errors.InvalidArgumentError, errors.OutOfRangeError) as e:
            raise bad_request(f"{type(e).__name__}: {e}") from None

    @staticmethod
    def _named(fn, named: dict, where: str) -> dict:
        unknown = sorted(k for k in named if k not in fn.inputs)
        if unknown:
            raise bad_request(f"{where}: unknown input name(s) {unknown}; signature "
                              f"'{fn.name}' takes {sorted(fn.inputs)}")
        missing = sorted(k for k in fn.inputs if k not in named)
        if missing:
            raise bad_request(f"{where}: missing input(s) {missing} of signature '{fn.name}'")
        return named

    def predict(self, s: _Servable, body: dict) -> dict:
        fn = self._signature(s, body)
        if ("instances" in body) == ("inputs" in body):
            raise bad_request("The request must have exactly one of 'instances' (row format) "
                              "or 'inputs' (columnar format)")
        if "inputs" in body:
            inputs = body["inputs"]
            if isinstance(inputs, dict) and not _is_b64(inputs):
                columns = self._named(fn, inputs, "'inputs'")
            elif len(fn.inputs) == 1:
                columns = {next(iter(fn.inputs)): inputs}
            else:
                raise bad_request(f"Signature '{fn.name}' has inputs {sorted(fn.inputs)}: "
                                  "'inputs' must be an object naming each")
            columns = {k: _decode_b64(v, f"input '{k}'") for k, v in columns.items()}
            out = self._run(fn, columns)
            if len(out) == 1:
                ((key, value),) = out.items()
                return {"outputs": _jsonable(value, key)}
            return {"outputs": {k: _jsonable(v, k) for k, v in out.items()}}
        instances = body["instances"]
        if not isinstance(instances, list) or not instances:
            raise bad_request("'instances' must be a non-empty list")
        named = [isinstance(i, dict) and not _is_b64(i) for i in instances]
        if len(fn.inputs) == 1 and not any(named):
            columns = {next(iter(fn.inputs)): instances}
        elif all(named):
            for i, inst in enumerate(instances):
                self._named(fn, inst, f"instance {i}")
            columns = {k: [inst[k] for inst in instances] for k in fn.inputs}
        else:
            raise bad_request(f"Signature '{fn.name}' has inputs {sorted(fn.inputs)}: every "
                              "instance must be an object naming each input")
        columns = {k: _decode_b64(v, f"input '{k}'") for k, v in columns.items()}
        out = self._run(fn, columns)
        n = len(instances)
        for key, value in out.items():
            if value.ndim == 0 or value.shape[0] != n:
                raise bad_request(
                    f"Output '{key}' has shape {list(value.shape)}, not one row per instance "
                    f"({n}); use the columnar 'inputs' format for this signature")
        if len(out) == 1:
            ((key, value),) = out.items()
            return {"predictions": [_jsonable(value[i], key) for i in range(n)]}
        return {"predictions": [{k: _jsonable(v[i], k) for k, v in out.items()}
                                for i in range(n)]}

    def classify_or_regress(self, s: _Servable, body: dict, verb: str) -> dict:
        fn = self._signature(s, body)
        method = sc.CLASSIFY_METHOD_NAME if verb == "classify" else sc.REGRESS_METHOD_NAME
        if fn.method_name != method:
            raise bad_request(f"Expected {verb} signature method_name to be {method}. Was: "
                              f"{fn.method_name}")
        examples = body.get("examples")
        if not isinstance(examples, list) or not examples:
            raise bad_request("'examples' must be a non-empty list of JSON objects")
        context = body.get("context", {})
        if not isinstance(context, dict):
            raise bad_request("'context' must be a JSON object")
        serialized = []
        for i, ex in enumerate(examples):
            if not isinstance(ex, dict):
                raise bad_request(f"example {i} must be a JSON object")
            clash = sorted(set(ex) & set(context))
            if clash:
                raise bad_request(f"example {i}: features {clash} also appear in 'context'")
            serialized.append(encode_example({**context, **ex}))
        arr = np.empty(len(serialized), dtype=object)
        arr[:] = serialized
        out = self._run(fn, {next(iter(fn.inputs)): arr})
        n = len(examples)
        if verb == "regress":
            values = np.asarray(out[sc.REGRESS_OUTPUTS]).reshape(n, -1)
            if values.shape[1] != 1:
                raise bad_request(f"Regression output has shape {list(values.shape)}; expected "
                                  "one value per example")
            return {"result": [float(v) for v in values[:, 0]]}
        classes = out.get(sc.CLASSIFY_OUTPUT_CLASSES)
        scores = out.get(sc.CLASSIFY_OUTPUT_SCORES)
        ref = scores if scores is not None else classes
        width = int(np.asarray(ref).size // n) if n else 0
        classes = None if classes is None else np.asarray(classes).reshape(n, width)
        scores = None if scores is None else np.asarray(scores).reshape(n, width)
        result = []
        for i in range(n):
            row = []
            for j in range(width):
                label = "" if classes is None else _jsonable(classes[i, j], "classes")
                row.append([label, 0.0 if scores is None else float(scores[i, j])])
            result.append(row)
        return {"result": result}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True


class ModelServer:
    """Serve the newest SavedModel version under `model_dir` over HTTP.

    Parameters
    ----------
    model_dir : str
        The export base: version subdirectories ``1``, ``2``, ... or timestamps.
    model_name : str
        The ``NAME`` in ``/v1/models/NAME``.
    host, port : str, int
        Where to listen (default 127.0.0.1:8501); port 0 picks a free port (`port`).
    poll_interval : float
        Seconds between scans of `model_dir` for new versions.
    """

    def __init__(self, model_dir, model_name: str = "default", host: str = "127.0.0.1",
                 port: int = 8501, poll_interval: float = 2.0, tags=(sc.SERVING,)) -> None:
        self.model_dir = os.fsdecode(os.fspath(model_dir))
        self.model_name = model_name
        self.host = host
        self.poll_interval = float(poll_interval)
        self.manager = VersionManager(self.model_dir, tags)
        self._requested_port = int(port)
        self._httpd: _HTTPServer | None = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    @property
    def port(self) -> int:
        if self._httpd is None:
            return self._requested_port
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ModelServer:
        """Load the newest version, bind, and serve from background threads."""
        if self._httpd is not None:
            raise RuntimeError("ModelServer already started")
        self.manager.poll()
        first = self.manager.acquire()
        if first is None:
            logger.warning("No loadable version under %s yet; polling every %.1fs",
                           self.model_dir, self.poll_interval)
        else:
            self.manager.release(first)
        self._httpd = _HTTPServer((self.host, self._requested_port), _Handler)
        self._httpd.app = _App(self.model_name, self.manager)
        self._stop.clear()
        self._threads = [threading.Thread(target=self._httpd.serve_forever, kwargs={
                             "poll_interval": 0.1}, name="flowgraph-serving-http",
                             daemon=True),
                         threading.Thread(target=self._poll_loop, name="flowgraph-serving-poll",
                                          daemon=True)]
        for t in self._threads:
            t.start()
        logger.info("Serving model '%s' from %s at %s", self.model_name, self.model_dir,
                    self.url)
        return self

    def _poll_loop(self) -> None:
        while not self._stop.wait(self.poll_interval):
            try:
                self.manager.poll()
            except Exception:
                logger.exception("Polling %s failed", self.model_dir)

    def serve_forever(self) -> None:
        """`start`, then block until `stop` or Ctrl-C."""
        self.start()
        try:
            while not self._stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop serving and close the loaded model."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        for t in self._threads:
            t.join(timeout=5)
        self._threads = []
        self._httpd = None
        self.manager.close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

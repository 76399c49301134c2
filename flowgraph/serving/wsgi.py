"""The REST API as a WSGI application, with limits, admission control and metrics.

`RestApp` routes TensorFlow Serving's URLs to each model's `Protocol`, reads request
bodies up to `Limits.max_body_bytes`, admits at most `Limits.max_concurrent_requests`
inference requests at once (the rest get 503 at once, with ``Retry-After``, rather than
waiting in a queue), records `Metrics`, and answers every error as ``{"error": ...}``.
Any WSGI server can host it; `flowgraph.serving.http` holds the two we use.

Example
-------
>>> app = RestApp({}, Limits())  # models: name -> (VersionManager, Protocol)
>>> Limits().max_body_bytes
67108864
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import threading
import time
from http import HTTPStatus

from flowgraph.serving.batching import QueueFullError
from flowgraph.serving.body import parse_body
from flowgraph.serving.metrics import CONTENT_TYPE, Metrics
from flowgraph.serving.protocol import HTTPError, bad_request

__all__ = ["METRICS_PATH", "Limits", "RestApp"]

logger = logging.getLogger("flowgraph.serving")

METRICS_PATH = "/monitoring/prometheus/metrics"
_ROUTE = re.compile(r"^/v1/models/(?P<name>[^/:]+)(?:/versions/(?P<version>[^/:]+)|"
                    r"/labels/(?P<label>[^/:]+))?(?P<verb>/metadata|:predict|:classify|"
                    r":regress)?/?$")


@dataclasses.dataclass
class Limits:
    """What one server accepts; every field has a ``flowgraph serve`` flag of its name.

    max_body_bytes : largest request body (413 above it).
    max_instances_per_request : most rows (instances, examples, or first dimension of
        an input) per request (400 above it).
    max_concurrent_requests : inference requests served at once (503 beyond).
    connection_limit : open connections; more wait in the listen backlog.
    request_timeout : seconds a client may take to send one whole request.
    idle_timeout : seconds a connection may stay silent between requests.
    """

    max_body_bytes: int = 64 << 20
    max_instances_per_request: int = 100_000
    max_concurrent_requests: int = 16
    connection_limit: int = 100
    request_timeout: float = 30.0
    idle_timeout: float = 60.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"Server limit {f.name} must be a positive number; got "
                                 f"{value!r}")


class RestApp:
    """WSGI application serving `models` (name -> (VersionManager, Protocol))."""

    def __init__(self, models: dict, limits: Limits, metrics: Metrics | None = None) -> None:
        self.models = models
        self.limits = limits
        self.metrics = metrics or Metrics()
        self._slots = threading.BoundedSemaphore(limits.max_concurrent_requests)

    def __call__(self, environ, start_response):
        start = time.perf_counter()
        method = environ.get("REQUEST_METHOD", "GET")
        path = environ.get("PATH_INFO", "") or "/"
        if path == METRICS_PATH and method == "GET":
            data = self.metrics.render().encode("utf-8")
            start_response("200 OK", [("Content-Type", CONTENT_TYPE),
                                      ("Content-Length", str(len(data)))])
            return [data]
        route, extra = {}, []  # route: the model and API, once known
        try:
            payload = self._handle(environ, method, path, route)
            status = HTTPStatus.OK
        except HTTPError as e:
            status, payload = HTTPStatus(e.status), {"error": str(e)}
            if status == HTTPStatus.SERVICE_UNAVAILABLE:
                extra = [("Retry-After", "1")]
        except Exception as e:
            logger.exception("Internal error serving %s %s", method, path)
            status = HTTPStatus.INTERNAL_SERVER_ERROR
            payload = {"error": f"{type(e).__name__}: {e}"}
        data = json.dumps(payload).encode("utf-8")
        start_response(f"{status.value} {status.phrase}",
                       [("Content-Type", "application/json"),
                        ("Content-Length", str(len(data))), *extra])
        if route:
            self.metrics.observe_request(route["model"], route["api"], status.value,
                                         time.perf_counter() - start)
        return [data]

    def _handle(self, environ, method: str, path: str, route: dict) -> dict:
        m = _ROUTE.match(path)
        if m is None:
            raise HTTPError(HTTPStatus.NOT_FOUND, f"Malformed request: {method} {path}")
        name = m["name"]
        if name not in self.models:
            raise HTTPError(HTTPStatus.NOT_FOUND, f"Servable not found for request: "
                                                  f"Latest({name})")
        verb = m["verb"] or ""
        route.update(model=name, api={"": "status", "/metadata": "metadata"}.get(verb, verb[1:]))
        if (method == "POST") != verb.startswith(":"):
            raise HTTPError(HTTPStatus.METHOD_NOT_ALLOWED, f"{method} is not supported for "
                                                            f"{path}")
        manager, protocol = self.models[name]
        if method != "POST":
            return self._answer(manager, protocol, m, verb, None)
        if not self._slots.acquire(blocking=False):
            raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE,
                            f"The server is busy: {self.limits.max_concurrent_requests} "
                            "requests are being served (max_concurrent_requests); retry later")
        try:
            body = self._body(environ)
            gone = environ.get("waitress.client_disconnected")
            if gone is not None and gone():
                raise HTTPError(HTTPStatus.BAD_REQUEST, "The client disconnected")
            return self._answer(manager, protocol, m, verb, body)
        finally:
            self._slots.release()

    def _body(self, environ) -> dict:
        length = environ.get("CONTENT_LENGTH") or ""
        if not length.isdigit():
            raise HTTPError(HTTPStatus.LENGTH_REQUIRED, "A Content-Length header is required")
        if int(length) > self.limits.max_body_bytes:
            raise HTTPError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                            f"Request body of {length} bytes exceeds the limit of "
                            f"{self.limits.max_body_bytes} (max_body_bytes)")
        raw = environ["wsgi.input"].read(int(length))
        try:
            body = parse_body(raw)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            raise bad_request(f"Malformed JSON in request body: {e}") from None
        if not isinstance(body, dict):
            raise bad_request("The request body must be a JSON object")
        return body

    @staticmethod
    def _answer(manager, protocol, m, verb: str, body) -> dict:
        servable = manager.acquire()
        try:
            _check_version(servable, m)
            if verb == "":
                return protocol.status(servable)
            if verb == "/metadata":
                return protocol.metadata(servable)
            try:
                if verb == ":predict":
                    return protocol.predict(servable, body)
                return protocol.classify_or_regress(servable, body, verb[1:])
            except QueueFullError as e:
                raise HTTPError(HTTPStatus.SERVICE_UNAVAILABLE, str(e)) from None
        finally:
            if servable is not None:
                manager.release(servable)


def _check_version(servable, m) -> None:
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

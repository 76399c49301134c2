"""A prediction server speaking TensorFlow Serving's REST protocol.

`ModelServer` ties the pieces together: one `VersionManager` per model (which version
is served, hot swaps; `flowgraph.serving.models`), one `Protocol` per model (bodies to
signature calls; `flowgraph.serving.protocol`), an optional `Batcher` per model
(`flowgraph.serving.batching`), the WSGI `RestApp` with its `Limits` and `Metrics`
(`flowgraph.serving.wsgi`), and the HTTP server hosting it (`flowgraph.serving.httpd`:
waitress in production, the standard library's ``http.server`` for development).

Endpoints (``NAME`` is a model name; ``/versions/N`` may follow it):

- ``GET /v1/models/NAME``: ``{"model_version_status": [...]}``
- ``GET /v1/models/NAME/metadata``: ``{"model_spec": ..., "metadata": {"signature_def":
  ...}}``
- ``POST /v1/models/NAME:predict`` with ``{"instances": [...]}`` (rows) or
  ``{"inputs": ...}`` (columns), optionally ``"signature_name"``: ``{"predictions":
  [...]}`` or ``{"outputs": ...}``
- ``POST /v1/models/NAME:classify`` with ``{"examples": [{feature: value}, ...],
  "context": {...}}``: ``{"result": [[[label, score], ...], ...]}``
- ``POST /v1/models/NAME:regress``, same body: ``{"result": [value, ...]}``
- ``GET /monitoring/prometheus/metrics``: request counts, latencies, batch sizes.

Binary strings travel as ``{"b64": "..."}`` both ways. Errors are ``{"error": "..."}``
with 400 (bad request), 404 (unknown model or version), 413 (body too large), 503
(busy: retry later) or 500.

Example
-------
>>> server = ModelServer("/path/to/export_base", model_name="m", port=0)  # doctest: +SKIP
>>> server.start(); server.url                                            # doctest: +SKIP
'http://127.0.0.1:40123'
"""

from __future__ import annotations

import logging
import os
import threading

from flowgraph.saved_model import constants as sc
from flowgraph.serving.batching import Batcher, BatchingParameters
from flowgraph.serving.httpd import make_server
from flowgraph.serving.metrics import Metrics
from flowgraph.serving.models import VersionManager
from flowgraph.serving.protocol import Protocol, encode_example
from flowgraph.serving.wsgi import Limits, RestApp

__all__ = ["ModelServer", "default_server_kind", "encode_example"]

logger = logging.getLogger("flowgraph.serving")


def default_server_kind() -> str:
    """'waitress' when it is installed, else 'dev' (with a warning when serving)."""
    try:
        import waitress  # noqa: F401
    except ImportError:
        return "dev"
    return "waitress"


class ModelServer:
    """Serve the newest SavedModel version of one or several models over HTTP.

    Parameters
    ----------
    model_dir : str
        The export base of the one model: version subdirectories ``1``, ``2``, ... or
        timestamps. Give `models` instead for several models.
    model_name : str
        The ``NAME`` in ``/v1/models/NAME`` for `model_dir`.
    host, port : str, int
        Where to listen (default 127.0.0.1:8501); port 0 picks a free port (`port`).
    poll_interval : float
        Seconds between scans of the model directories for new versions.
    models : list of (name, base_path), optional
        Several models (e.g. from `flowgraph.serving.models.read_model_config`).
    server : {"waitress", "dev"}, optional
        The HTTP server (default: waitress if installed). "dev" is the standard
        library's, for development only.
    limits : Limits, optional
        Body size, instances per request, concurrency, connections and timeouts.
    batching : BatchingParameters, optional
        Batch concurrent requests to one model into one ``Session.run``.
    """

    def __init__(self, model_dir=None, model_name: str = "default", host: str = "127.0.0.1",
                 port: int = 8501, poll_interval: float = 2.0, tags=(sc.SERVING,), *,
                 models=None, server: str | None = None, limits: Limits | None = None,
                 batching: BatchingParameters | None = None) -> None:
        if (model_dir is None) == (models is None):
            raise ValueError("ModelServer needs exactly one of model_dir (one model) or "
                             "models (a list of (name, base_path))")
        if models is None:
            models = [(model_name, model_dir)]
        self.models = [(name, os.fsdecode(os.fspath(path))) for name, path in models]
        self.model_name = self.models[0][0]
        self.model_dir = self.models[0][1]
        self.host = host
        self.poll_interval = float(poll_interval)
        self.server_kind = server or default_server_kind()
        self.limits = limits or Limits()
        self.batching = batching
        self.metrics = Metrics()
        self.managers = {name: VersionManager(path, tags) for name, path in self.models}
        self.manager = self.managers[self.model_name]
        self._batchers: dict[str, Batcher] = {}
        self.app: RestApp | None = None
        self._requested_port = int(port)
        self._httpd = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    @property
    def port(self) -> int:
        return self._requested_port if self._httpd is None else self._httpd.port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _protocol(self, name: str) -> Protocol:
        run = None
        if self.batching is not None:
            batcher = Batcher(self.batching,
                              on_batch=lambda rows: self.metrics.observe_batch(name, rows))
            self._batchers[name] = batcher
            run = batcher.run
        return Protocol(name, run=run, max_instances=self.limits.max_instances_per_request)

    def start(self) -> ModelServer:
        """Load the newest versions, bind, and serve from background threads."""
        if self._httpd is not None:
            raise RuntimeError("ModelServer already started")
        for name, manager in self.managers.items():
            manager.poll()
            first = manager.acquire()
            if first is None:
                logger.warning("No loadable version of '%s' under %s yet; polling every "
                               "%.1fs", name, manager.model_dir, self.poll_interval)
            else:
                manager.release(first)
        if self.server_kind == "dev":
            logger.warning("Using the development HTTP server (no worker pool, connection "
                           "cap or request timeout); install waitress for production")
        self.app = app = RestApp(
            {name: (m, self._protocol(name)) for name, m in self.managers.items()},
            self.limits, self.metrics)
        try:
            self._httpd = make_server(self.server_kind, app, self.host, self._requested_port,
                                      self.limits)
        except BaseException:
            self._close_batchers()
            raise
        self._stop.clear()
        self._threads = [threading.Thread(target=self._httpd.serve_forever,
                                          name="flowgraph-serving-http", daemon=True),
                         threading.Thread(target=self._poll_loop, name="flowgraph-serving-poll",
                                          daemon=True)]
        for t in self._threads:
            t.start()
        names = ", ".join(f"'{n}' from {p}" for n, p in self.models)
        logger.info("Serving model %s at %s (%s server%s)", names, self.url, self.server_kind,
                    ", batching" if self.batching else "")
        return self

    def _poll_loop(self) -> None:
        while not self._stop.wait(self.poll_interval):
            for manager in self.managers.values():
                try:
                    manager.poll()
                except Exception:
                    logger.exception("Polling %s failed", manager.model_dir)

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

    def _close_batchers(self) -> None:
        for batcher in self._batchers.values():
            batcher.close()
        self._batchers = {}

    def stop(self) -> None:
        """Stop serving and close the loaded models."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
        for t in self._threads:
            t.join(timeout=10)
        self._threads = []
        self._httpd = None
        self._close_batchers()
        for manager in self.managers.values():
            manager.close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

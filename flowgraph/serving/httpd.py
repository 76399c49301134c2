"""The HTTP servers that host `flowgraph.serving.wsgi.RestApp`.

``waitress`` (the production server, the ``serving`` extra) reads requests on one
event-loop thread and runs complete requests on a fixed pool of worker threads, so
slow or partial clients cost a socket, never a thread. We configure it as follows:

- workers: ``max_concurrent_requests + 2``; the app admits `max_concurrent_requests`
  inference requests, so a spare worker is always free to answer 503 (and status,
  metadata and metrics) at once. A request waits in waitress's queue only while the
  workers are busy answering: the queue holds at most one request per connection.
- `connection_limit` open connections; beyond it, new ones wait in the listen backlog.
- `idle_timeout` closes silent connections; `request_timeout` closes a connection
  whose request (line, headers and body) is not complete that long after its first
  byte (slowloris, a request line without its blank line).
- bodies above `max_body_bytes` are refused before they are read; errors waitress
  answers itself are JSON ``{"error": ...}`` too.
- a client that disconnects before its answer is sent is logged as one INFO line.

``dev`` is a standard-library ``http.server`` for development only: a thread per
connection (no pool, no connection cap), `idle_timeout` as the socket timeout. It
writes each answer in one ``send`` with Nagle's algorithm off, so keep-alive clients
do not wait for a delayed ACK.

Example
-------
>>> make_server("nope", None, "127.0.0.1", 0, None)
Traceback (most recent call last):
ValueError: Unknown server 'nope'; use 'waitress' (production) or 'dev' (development only)
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["SERVERS", "make_server"]

logger = logging.getLogger("flowgraph.serving")

SERVERS = ("waitress", "dev")


def make_server(kind: str, app, host: str, port: int, limits):
    """A started-but-not-running server for `app` on host:port: an object with
    ``port``, ``serve_forever()`` and ``shutdown()``."""
    if kind == "waitress":
        return _WaitressServer(app, host, port, limits)
    if kind == "dev":
        return _DevServer(app, host, port, limits)
    raise ValueError(f"Unknown server {kind!r}; use 'waitress' (production) or 'dev' "
                     "(development only)")


# -- waitress -------------------------------------------------------------------------------------
def _waitress_classes():
    try:
        from waitress.adjustments import Adjustments
        from waitress.channel import HTTPChannel
        from waitress.server import TcpWSGIServer
        from waitress.task import ErrorTask
    except ImportError:
        raise ImportError("flowgraph serve needs the 'waitress' package for its production "
                          "server: pip install 'flowgraph[serving]' (or pass --server=dev "
                          "for the development server)") from None

    class JSONErrorTask(ErrorTask):
        """Errors waitress answers itself (413, 400 bad framing) as JSON."""

        def execute(self):
            e = self.request.error
            body = json.dumps({"error": f"{e.reason}: {e.body}"}).encode("utf-8")
            self.status = f"{e.code} {e.reason}"
            self.response_headers.append(("Content-Type", "application/json"))
            self.set_close_on_finish()
            self.content_length = len(body)
            self.write(body)

    class Channel(HTTPChannel):
        error_task_class = JSONErrorTask
        request_started = 0.0

        def received(self, data):
            if self.request is None and data:
                self.request_started = time.time()
            return super().received(data)

    class Server(TcpWSGIServer):
        channel_class = Channel
        request_timeout = 30.0

        def maintenance(self, now):
            idle_cutoff = now - self.adj.channel_timeout
            for channel in list(self.active_channels.values()):
                if channel.requests:
                    continue  # being answered: the app's own time is not limited here
                partial = channel.request is not None
                if channel.last_activity < idle_cutoff or (
                        partial and now - channel.request_started > self.request_timeout):
                    channel.will_close = True

    return Adjustments, Server


class _WaitressServer:
    def __init__(self, app, host: str, port: int, limits) -> None:
        adjustments, server_class = _waitress_classes()
        adj = adjustments(host=host, port=port,
                          threads=limits.max_concurrent_requests + 2,
                          connection_limit=limits.connection_limit,
                          max_request_body_size=limits.max_body_bytes,
                          channel_request_lookahead=1,  # notices clients that hang up
                          log_socket_errors=False, ident="flowgraph-serving")
        # Checked by `maintenance` a few times per timeout.
        tick = max(0.05, min(limits.idle_timeout, limits.request_timeout, 4.0) / 4)
        adj.channel_timeout = limits.idle_timeout
        adj.cleanup_interval = tick
        adj.asyncore_loop_timeout = tick
        self._map: dict = {}
        self._server = server_class(app, map=self._map, adj=adj)
        self._server.request_timeout = limits.request_timeout
        self._stopped = threading.Event()

    @property
    def port(self) -> int:
        return self._server.effective_port

    def serve_forever(self) -> None:
        from waitress import wasyncore

        try:
            while not self._stopped.is_set():
                wasyncore.loop(timeout=self._server.adj.asyncore_loop_timeout,
                               map=self._map, count=1)
        finally:
            wasyncore.close_all(self._map)
            self._server.task_dispatcher.shutdown(timeout=5)

    def shutdown(self) -> None:
        """Make `serve_forever` close every connection and return (soon)."""
        self._stopped.set()
        try:
            self._server.pull_trigger()
        except OSError:  # already closed: the loop has ended
            pass


# -- the development server -----------------------------------------------------------------------
class _DevHandler(BaseHTTPRequestHandler):
    server_version = "flowgraph-serving-dev"
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def setup(self):
        self.timeout = self.server.limits.idle_timeout
        super().setup()

    def log_message(self, format, *args):
        logger.debug("%s - %s", self.address_string(), format % args)

    def do_GET(self):
        self._call()

    def do_POST(self):
        self._call()

    def _call(self):
        path, _, query = self.path.partition("?")
        length = self.headers.get("Content-Length")
        environ = {"REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
                   "CONTENT_LENGTH": length or "", "wsgi.input": self.rfile,
                   "CONTENT_TYPE": self.headers.get("Content-Type", "")}
        answer = {}

        def start_response(status, headers, exc_info=None):
            answer["status"], answer["headers"] = status, headers

        body = b"".join(self.server.app(environ, start_response))
        code = int(answer["status"].split()[0])
        lines = [f"HTTP/1.1 {answer['status']}", f"Server: {self.server_version}",
                 f"Date: {self.date_time_string()}"]
        lines += [f"{k}: {v}" for k, v in answer["headers"]]
        if code != 200:
            lines.append("Connection: close")  # the body may be unread
            self.close_connection = True
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        try:
            self.wfile.write(head + body)  # one write: no Nagle / delayed-ACK stall
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            logger.info("Client %s disconnected before the answer to %s %s was sent",
                        self.address_string(), self.command, path)
            self.close_connection = True

    def handle(self):
        try:
            super().handle()
        except TimeoutError:
            self.close_connection = True
        except (ConnectionResetError, BrokenPipeError):
            # reset while its request was still being read (on a loaded machine the
            # answer-side case above may never be reached): one line as well
            logger.info("Client %s disconnected before its request was read",
                        self.address_string())
            self.close_connection = True


class _DevHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True


class _DevServer:
    def __init__(self, app, host: str, port: int, limits) -> None:
        self._httpd = _DevHTTPServer((host, port), _DevHandler)
        self._httpd.app, self._httpd.limits = app, limits
        self._httpd.socket.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.1)

    def shutdown(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

"""The data plane: a step's calls over plain TCP connections beside gRPC.

Why: a parameter-server training step makes two calls that carry every parameter and
every gradient, and through grpcio each call costs Python and thread hand-offs: measured
alone on 2 cores, the small MLP with 1 worker + ps runs 537 steps/s through grpcio and
965 over this module's plain sockets (`bench_distributed.py --transport grpc|direct`).

What goes where: gRPC stays the control plane (``GetStatus``, ``RegisterGraph``, health
pings, TLS). A server whose settings allow it (`enabled`: no TLS, and
``FLOWGRAPH_RPC_TRANSPORT`` is not ``grpc``) also listens on a second port of its own
host (`DirectServer`) and reports it as ``data_port`` in ``GetStatus``; a client
(`flowgraph.distributed.rpc.TaskClient`) sends the step methods (`METHODS`) there.

State and invariants:

* a connection carries one call at a time; a `DirectPeer` keeps a pool of idle
  connections to its task, so concurrent calls (a step's stages, a ``CancelStep`` while
  a stage blocks) each have their own;
* a connection whose call failed in transport (deadline, reset, a hung peer) is closed,
  never reused: a late reply can never be read as the answer to another call;
* the first frame of a connection carries the cluster's token; the server checks it
  (constant time) before reading anything else and closes the connection on a mismatch
  (logged, as over gRPC).

Frames (little endian)::

    request:  length (u64) | method index (u8) | 7 zero bytes | wire message
    reply:    length (u64) | status (u8: 0 ok, 1 error) | 7 zero bytes | wire message
              or error JSON
    hello:    length (u64) | JSON {"token": ...}    answered by   length | b"ok"

(length: the bytes after it.) A frame goes out in one ``sendmsg`` written from the
tensors' own buffers (no join) and comes in with one ``recv_into`` when it is no larger
than the last frame of its kind on that connection (the buffer is sized from it, and
not zeroed first: the read writes every byte): the decoded arrays view that buffer,
where the 16-byte head keeps the message aligned (`flowgraph.distributed.wire.ALIGN`),
with no copy beyond the socket read. A step's
header part that every step repeats travels as a `wire.Base`, encoded once.
Deadlines are the kernel's (``SO_RCVTIMEO``/``SO_SNDTIMEO`` on a blocking socket): a
socket with a Python timeout would ``poll`` before every read and write.

A server on a loopback address also listens on an abstract Unix socket
(``local_name``, Linux), which clients of a loopback address use instead of its port:
the same frames, about half the kernel's CPU per round trip.

A task whose data port cannot be reached at all (the first connection fails: a
firewall that opens only the cluster spec's ports) is called through gRPC instead, with
a warning; once reached, a failed connection is the task's failure (`UnavailableError`).

Health: a call that waits longer than ``ping_after_s`` for its reply pings the task over
gRPC (whose keepalive notices a hung or cut-off peer); a failed ping fails the call with
`UnavailableError` at once instead of at its deadline. A refused or reset connection is
`UnavailableError` too; the client then asks ``GetStatus`` for the port again (a
restarted task listens on a new one).

Example
-------
>>> import numpy as np
>>> class Echo:
...     def RunStage(self, header, tensors):
...         return {"seen": header["x"]}, {"y": tensors["t"] * 2}
>>> server = DirectServer(Echo(), "localhost", token="")
>>> peer = DirectPeer("localhost", server.port, "/job:demo/task:0", token="")
>>> header, out = peer.call("RunStage", {"x": 1}, {"t": np.arange(3.0)}, timeout_s=5)
>>> header["seen"], out["y"].tolist()
(1, [0.0, 2.0, 4.0])
>>> peer.close(); server.stop()
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import socket
import struct
import sys
import threading
import time
import uuid

import numpy as np

from flowgraph.distributed import wire
from flowgraph.framework import errors

__all__ = ["METHODS", "DirectPeer", "DirectServer", "Unreachable", "enabled", "error_class"]

logger = logging.getLogger("tensorflow")

METHODS = ("RunStage", "RecvTensor", "CleanupStep", "CancelStep")
TRANSPORT_ENV = "FLOWGRAPH_RPC_TRANSPORT"
_LEN = struct.Struct("<Q")
_HEAD = struct.Struct("<QB7x")  # a frame's length and kind, padded to wire.ALIGN
_KIND_BYTES = _HEAD.size - _LEN.size  # the kind and its padding (counted in the length)
_OK, _ERROR = 0, 1
_MAX_PARTS = 512  # buffers per sendmsg (the kernel takes up to IOV_MAX = 1024)
# Deadlines as the kernel's socket timeouts (a timeval: two C longs) where it has them.
_KERNEL_TIMEOUTS = sys.platform.startswith("linux") and hasattr(socket, "SO_RCVTIMEO")
_TIMEVAL = struct.Struct("@ll")
# A server on a loopback address also listens on an abstract Unix socket (Linux), which
# its clients on the same machine use: a round trip costs about half the CPU of TCP's.
_LOCAL_SOCKETS = sys.platform.startswith("linux") and hasattr(socket, "AF_UNIX")


def _is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
_HELLO_LIMIT = 1 << 16
_EAGER_BYTES = 64 << 20  # a frame's buffer is allocated whole up to this size
_CONNECT_S = 3.0  # loopback and LAN connections take well under a millisecond


class Unreachable(Exception):
    """The data port was never reached (a firewall that opens only the cluster's ports,
    say): the caller should use gRPC for this task instead."""


def enabled(security) -> bool:
    """Whether the data plane may be used with these settings: not under TLS (its
    sockets are not encrypted) and not switched off with ``FLOWGRAPH_RPC_TRANSPORT=grpc``.

    >>> enabled(None) == (os.environ.get("FLOWGRAPH_RPC_TRANSPORT", "") != "grpc")
    True
    """
    return not getattr(security, "tls", False) and os.environ.get(TRANSPORT_ENV, "") != "grpc"


def error_class(name: str):
    """The flowgraph error class named `name` (`UnknownError` for anything else)."""
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.OpError):
        return cls
    return errors.UnknownError


def _fill(sock, buf, got: int, n: int, wait=None) -> tuple:
    """Receive into `buf` (a bytearray, or a uint8 array: `_buffer`) from offset `got`
    until it holds at least `n` bytes; returns ``(buf, how many it holds)``, `buf` being
    a larger one when it had to grow (a read takes what fits in `buf`). `wait()` is
    called whenever the socket times out (it raises to give up). EOFError when the peer
    closed the connection.

    `buf` grows with what arrives (up to twice it, beyond its first size), so a frame
    that declares a huge size but never sends it cannot make this task allocate that
    size."""
    while got < n:
        if got == len(buf):
            more = min(len(buf), n - len(buf))
            if type(buf) is bytearray:
                buf.extend(bytes(more))
            else:
                grown = _buffer(len(buf) + more)
                grown[:got] = buf
                buf = grown
        view = memoryview(buf)
        try:
            k = sock.recv_into(view[got:])
        except (TimeoutError, BlockingIOError):  # a Python or a kernel timeout
            if wait is None:
                raise
            wait()
            continue
        finally:
            view.release()
        if not k:
            raise EOFError("connection closed by the peer")
        got += k
    return buf, got


def _buffer(n: int) -> np.ndarray:
    """`n` writable bytes for a frame, not zeroed: the socket's read overwrites them (a
    bytearray would first be zeroed, a pass over every page of a large frame)."""
    return np.empty(n, np.uint8)


def _recv_exact(sock, n: int, wait=None) -> bytearray:
    """`n` bytes from `sock` (see `_fill`: a declared size is not trusted)."""
    return _fill(sock, bytearray(min(n, _EAGER_BYTES)), 0, n, wait)[0]


def _send_parts(sock, parts: list, size: int = -1, wait=None) -> None:
    """All of `parts` (bytes-like) in order, `size` bytes in all (-1: unknown), in one
    ``sendmsg`` when the kernel takes them at once. `wait()` as in `_fill`."""
    sent = 0
    if len(parts) <= _MAX_PARTS:
        sent = _sendmsg(sock, parts, wait)
        if sent == size:
            return
    views = [v for v in (memoryview(p).cast("B") for p in parts) if len(v)]
    while views:
        while sent:  # drop what the last call sent
            if sent >= len(views[0]):
                sent -= len(views.pop(0))
            else:
                views[0], sent = views[0][sent:], 0
        if views:
            sent = _sendmsg(sock, views[:_MAX_PARTS], wait)


def _sendmsg(sock, parts: list, wait) -> int:
    while True:
        try:
            return sock.sendmsg(parts)
        except (TimeoutError, BlockingIOError):
            if wait is None:
                raise
            wait()


def _frame(kind: int, message_parts: list, size: int) -> tuple[list, int]:
    """A frame's parts and size around a message of `size` bytes."""
    return [_HEAD.pack(_KIND_BYTES + size, kind), *message_parts], _HEAD.size + size


def _read_frame(sock, wait=None, hint: int = 0) -> tuple[int, memoryview, int]:
    """``(kind, message, frame size)`` of the next frame: the message is a read-only view
    of a buffer of its own. `hint`: the frame's likely size (the last one of its kind),
    so that one read takes it whole."""
    buf = _buffer(min(max(hint, _HEAD.size), _EAGER_BYTES))
    buf, got = _fill(sock, buf, 0, _LEN.size, wait)
    (size,) = _LEN.unpack_from(buf)
    if size < _KIND_BYTES:
        raise EOFError("a frame without its kind byte")
    total = _LEN.size + size
    buf, got = _fill(sock, buf, got, total, wait)
    if got > total:
        raise EOFError("more bytes than the frame declares (two frames at once)")
    return int(buf[_LEN.size]), memoryview(buf)[_HEAD.size:total].toreadonly(), total


def _set_timeout(sock, seconds: float) -> None:
    """Reads and writes of `sock` time out after `seconds` (> 0)."""
    if _KERNEL_TIMEOUTS:
        whole = int(seconds)
        tv = _TIMEVAL.pack(whole, max(int((seconds - whole) * 1e6), 1 if not whole else 0))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)
    else:
        sock.settimeout(seconds)


class _Conn:
    """A pooled connection and the timeout its socket has now."""

    __slots__ = ("sock", "timeout")

    def __init__(self, sock) -> None:
        self.sock, self.timeout = sock, None

    def time_out_after(self, seconds: float) -> None:
        if seconds != self.timeout:
            _set_timeout(self.sock, seconds)
            self.timeout = seconds


class DirectServer:
    """Serves `service`'s `METHODS` on ``(host, port)`` (port 0: a free one), one thread
    per connection. `count(method, bytes_in, bytes_out)` records traffic."""

    def __init__(self, service, host: str, token: str = "", port: int = 0,
                 where: str = "this task", count=None) -> None:
        self._service, self._where, self._count = service, where, count
        self._expected = token.encode()
        self._listener = socket.create_server((host.strip("[]"), port))
        self.port = self._listener.getsockname()[1]
        self._local = None  # the same-machine listener (`local_name`)
        self.local_name = None
        if _LOCAL_SOCKETS and _is_loopback(host):
            name = f"flowgraph-data-{uuid.uuid4().hex}"
            try:
                self._local = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self._local.bind("\0" + name)  # abstract: no file, gone with the process
                self._local.listen()
                self.local_name = name
            except OSError:
                self._local = None
        self._lock = threading.Lock()
        self._conns: set = set()
        self._stopped = False
        for listener in (self._listener, self._local):
            if listener is not None:
                threading.Thread(target=self._accept, args=(listener,), daemon=True,
                                 name=f"fg-direct-{self.port}").start()

    def _accept(self, listener) -> None:
        while not self._stopped:
            try:
                conn, peer = listener.accept()
            except OSError:
                return
            if conn.family != socket.AF_UNIX:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                # A client machine that vanishes must not hold its connection's thread.
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            else:
                peer = "this machine"
            with self._lock:
                if self._stopped:
                    conn.close()
                    return
                self._conns.add(conn)
            threading.Thread(target=self._serve, args=(conn, peer), daemon=True,
                             name=f"fg-direct-{self.port}-conn").start()

    def _hello(self, conn, peer) -> bool:
        conn.settimeout(10.0)
        (size,) = _LEN.unpack(_recv_exact(conn, _LEN.size))
        if size > _HELLO_LIMIT:
            return False
        hello = json.loads(bytes(_recv_exact(conn, size)))
        sent = str(hello.get("token", "") if isinstance(hello, dict) else "").encode()
        if self._expected and not hmac.compare_digest(sent, self._expected):
            reason = "no token" if not sent else "a wrong token"
            logger.warning("flowgraph.distributed: refused a data connection from %s on %s: "
                           "%s.", peer, self._where, reason)
            if self._count is not None:
                self._count("Refused", 0, 0)
            conn.sendall(_LEN.pack(2) + b"no")
            return False
        conn.settimeout(None)
        conn.sendall(_LEN.pack(2) + b"ok")
        return True

    def _serve(self, conn, peer) -> None:
        try:
            if not self._hello(conn, peer):
                return
            hint = 0  # the last request's size: the next is likely the same
            while True:
                method_index, body, hint = _read_frame(conn, hint=hint)
                _send_parts(conn, *self._handle(method_index, body))
        except Exception:  # (the service's own errors are answered by _handle)
            pass  # the client went away or spoke garbage: drop the connection
        finally:
            with self._lock:
                self._conns.discard(conn)
            conn.close()

    def _handle(self, method_index: int, body: memoryview) -> tuple[list, int]:
        try:
            method = METHODS[method_index]
            header, tensors = wire.decode(body)
            reply, values = getattr(self._service, method)(header, tensors)
            parts, size = wire.encode_message(reply, values,
                                              bfloat16=bool(header.get("reply_bfloat16")))
        except Exception as e:
            name = type(e).__name__ if isinstance(e, errors.OpError) else "InternalError"
            text = str(e) if isinstance(e, errors.OpError) else f"{type(e).__name__}: {e}"
            error = json.dumps({"error": name, "message": text}).encode()
            return _frame(_ERROR, [error], len(error))
        if self._count is not None:
            self._count(method, len(body), size)
        return _frame(_OK, parts, size)

    def stop(self) -> None:
        """Stop listening and close every connection (calls in flight fail)."""
        with self._lock:
            self._stopped = True
            conns, self._conns = list(self._conns), set()
        for listener in (self._listener, self._local):
            if listener is None:
                continue
            try:  # wakes the thread blocked in accept(), which close() alone does not
                listener.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            listener.close()
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()


class DirectPeer:
    """Calls one task's `DirectServer`. `ping(timeout_s)` (raising `OpError` when the task
    does not answer) is called while a reply takes longer than `ping_after_s`."""

    def __init__(self, host: str, port: int, task_name: str, token: str = "",
                 ping=None, ping_after_s: float = 2.0, local_name: str | None = None) -> None:
        self.host, self.port, self.task_name = host.strip("[]"), int(port), task_name
        # The server's same-machine socket (`DirectServer.local_name`), for a loopback host
        self._local_name = local_name if _LOCAL_SOCKETS and _is_loopback(host) else None
        self._token, self._ping, self._ping_after_s = token, ping, ping_after_s
        self._idle: list = []  # [_Conn]
        self._lock = threading.Lock()
        self._hints: dict = {}  # method -> the size of its last reply frame
        self.reached = False  # whether a connection ever succeeded

    @property
    def where(self) -> str:
        return f"{self.task_name} ({self.host}:{self.port}, data plane)"

    def _connect(self, timeout_s: float):
        if self._local_name:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.settimeout(timeout_s)
                sock.connect("\0" + self._local_name)
            except BaseException:
                sock.close()
                raise
        else:
            sock = socket.create_connection((self.host, self.port), timeout=timeout_s)
        try:
            if sock.family != socket.AF_UNIX:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            hello = json.dumps({"token": self._token}).encode()
            sock.sendall(_LEN.pack(len(hello)) + hello)
            (size,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
            answer = bytes(_recv_exact(sock, min(size, 2)))
        except BaseException:
            sock.close()
            raise
        if answer != b"ok":
            sock.close()
            raise errors.UnauthenticatedError(
                None, None, f"Task {self.where} refused the connection: its token differs "
                "from this client's. Every task and client of the cluster needs the same "
                "rpc_options.auth_token (or $FLOWGRAPH_AUTH_TOKEN).")
        self.reached = True
        if _KERNEL_TIMEOUTS:
            sock.settimeout(None)  # blocking: the kernel times reads and writes out
        return sock

    def call(self, method: str, header: dict, tensors: dict | None,
             timeout_s: float, base: wire.Base | None = None) -> tuple[dict, dict]:
        """``(header, tensors)`` of the task's reply; the task's error raised again with
        its name in front; `UnavailableError`/`DeadlineExceededError` for transport
        failures. With `base`, the request's header is ``base.data`` updated with
        `header` (`flowgraph.distributed.wire.Base`)."""
        deadline = time.monotonic() + timeout_s
        parts, size = _frame(METHODS.index(method),
                             *wire.encode_message(header, tensors, base=base))
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None and not self.reached:
            try:
                conn = _Conn(self._connect(max(min(timeout_s, _CONNECT_S), 0.01)))
            except (OSError, EOFError) as e:
                raise Unreachable(f"{self.where}: {e}") from None
        sock = None
        try:
            if conn is None:
                conn = _Conn(self._connect(max(min(timeout_s, _CONNECT_S), 0.01)))
            sock = conn.sock
            conn.time_out_after(max(min(self._ping_after_s, timeout_s), 0.01))
            last_ping = [time.monotonic()]

            def wait():
                now = time.monotonic()
                if now >= deadline:
                    raise TimeoutError
                if self._ping is not None and now - last_ping[0] >= self._ping_after_s:
                    self._ping(3.0)
                    last_ping[0] = time.monotonic()
                conn.time_out_after(max(min(self._ping_after_s, deadline - now), 0.01))

            _send_parts(sock, parts, size, wait)
            status, body, self._hints[method] = _read_frame(sock, wait,
                                                            self._hints.get(method, 0))
        except TimeoutError:
            self._discard(sock)
            raise errors.DeadlineExceededError(
                None, None, f"{method} on task {self.where} did not finish within "
                f"{timeout_s:g} s (ConfigProto(operation_timeout_in_ms=...) sets the "
                "deadline).") from None
        except errors.OpError as e:  # a failed health ping or a refused hello
            self._discard(sock)
            if isinstance(e, errors.UnauthenticatedError):
                raise
            raise errors.UnavailableError(
                None, None, f"Task {self.where} is unavailable ({method}): it stopped "
                f"answering health-check pings (hung, or cut off): {e}") from None
        except (OSError, EOFError) as e:
            self._discard(sock)
            raise errors.UnavailableError(
                None, None, f"Task {self.where} is unavailable ({method}: {e}). Check that "
                "its tf.train.Server is running and that the cluster spec names the right "
                "host:port.") from None
        with self._lock:
            self._idle.append(conn)
        if status != _OK:
            info = json.loads(bytes(body))
            raise error_class(info.get("error", ""))(
                None, None, f"[{self.task_name} ({self.host}:{self.port})] "
                f"{info.get('message', '')}")
        return wire.decode(body)

    def _discard(self, sock) -> None:
        if sock is not None:
            sock.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.sock.close()

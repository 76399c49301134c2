"""gRPC plumbing: the task service's methods, error codes both ways, a client stub.

The service ``flowgraph.Task`` has unary methods whose request and response bodies are
`flowgraph.distributed.wire` messages (raw bytes; grpcio's generic handlers, no protobuf
schema). A flowgraph error raised by a handler travels as a gRPC status whose details are
``{"error": class name, "message": text}``; the client raises the same class again, with
the task's name in front of the message. Transport failures map to TensorFlow's errors:
an unreachable peer is `UnavailableError`, an expired deadline `DeadlineExceededError`.
Every call has a deadline.

Example
-------
>>> to_grpc_address("grpc://localhost:2222")
'localhost:2222'
"""

from __future__ import annotations

import json
import threading
import time
import uuid

from flowgraph.distributed import wire
from flowgraph.framework import errors

__all__ = ["CHANNEL_OPTIONS", "CHUNK_BYTES", "METHODS", "TaskClient", "chunks", "import_grpc",
           "method_handlers", "to_grpc_address"]

SERVICE = "flowgraph.Task"
METHODS = ("GetStatus", "RegisterGraph", "RunStage", "RecvTensor", "CleanupStep",
           "CancelStep")
DEFAULT_TIMEOUT_S = 60.0
# Messages above CHUNK_BYTES travel as a stream of chunks of that size, so no single gRPC
# message exceeds MAX_MESSAGE_BYTES (gRPC's own default limit) whatever the tensor size.
CHUNK_BYTES = 1 << 20
MAX_MESSAGE_BYTES = 4 << 20
_TICKET = "_reply_ticket"
CHANNEL_OPTIONS = [("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                   ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]


def import_grpc():
    """The grpc module, or an ImportError that says how to install it."""
    try:
        import grpc
    except ImportError as e:
        raise ImportError(
            "Distributed execution needs grpcio: pip install 'flowgraph[distributed]' "
            f"(or pip install grpcio). ({e})") from None
    return grpc


def to_grpc_address(target: str) -> str:
    return target[len("grpc://"):] if target.startswith("grpc://") else target


_BY_CODE_NAME = {
    "CANCELLED": errors.CancelledError, "INVALID_ARGUMENT": errors.InvalidArgumentError,
    "DEADLINE_EXCEEDED": errors.DeadlineExceededError, "NOT_FOUND": errors.NotFoundError,
    "ALREADY_EXISTS": errors.AlreadyExistsError,
    "PERMISSION_DENIED": errors.PermissionDeniedError,
    "RESOURCE_EXHAUSTED": errors.ResourceExhaustedError,
    "FAILED_PRECONDITION": errors.FailedPreconditionError, "ABORTED": errors.AbortedError,
    "OUT_OF_RANGE": errors.OutOfRangeError, "UNIMPLEMENTED": errors.UnimplementedError,
    "INTERNAL": errors.InternalError, "UNAVAILABLE": errors.UnavailableError,
    "DATA_LOSS": errors.DataLossError, "UNAUTHENTICATED": errors.UnauthenticatedError,
}


def _error_class(name: str):
    cls = getattr(errors, name, None)
    if isinstance(cls, type) and issubclass(cls, errors.OpError):
        return cls
    return errors.UnknownError


class _Outbox:
    """Large replies of unary calls, kept until the client streams them (`TakeReply`)."""

    TTL_S = 120.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blobs: dict[str, tuple[float, bytes]] = {}

    def put(self, blob: bytes) -> str:
        ticket, now = uuid.uuid4().hex, time.monotonic()
        with self._lock:
            for old in [k for k, (t, _) in self._blobs.items() if now - t > self.TTL_S]:
                del self._blobs[old]
            self._blobs[ticket] = (now, blob)
        return ticket

    def take(self, ticket: str) -> bytes:
        with self._lock:
            entry = self._blobs.pop(ticket, None)
        if entry is None:
            raise errors.NotFoundError(None, None, f"No pending reply {ticket!r} (it expired "
                                       f"after {self.TTL_S:g} s or was already taken)")
        return entry[1]


def chunks(blob: bytes, size: int | None = None):
    """`blob` in pieces of at most `size` bytes (default `CHUNK_BYTES`)."""
    size = size or CHUNK_BYTES
    view = memoryview(blob)
    for start in range(0, max(len(view), 1), size):
        yield bytes(view[start:start + size])


def method_handlers(service) -> object:
    """A grpc generic handler calling ``service.<method>(header, tensors)`` for each
    method; each returns ``(header, tensors)``. Every method also has a streaming form
    ``<method>Chunks`` (requests above `CHUNK_BYTES`), and a unary reply above
    `CHUNK_BYTES` is replaced by a ticket the client redeems with ``TakeReply``."""
    grpc = import_grpc()
    outbox = _Outbox()

    def abort(context, e: Exception):
        if isinstance(e, errors.OpError):
            code = getattr(grpc.StatusCode, _code_name(type(e)), grpc.StatusCode.UNKNOWN)
            context.abort(code, json.dumps({"error": type(e).__name__, "message": str(e)}))
        context.abort(grpc.StatusCode.INTERNAL, json.dumps(  # a bug or a plain exception
            {"error": "InternalError", "message": f"{type(e).__name__}: {e}"}))

    def wrap(fn):
        def handle(request: bytes, context) -> bytes:
            try:
                header, tensors = wire.decode(request)
                blob = wire.encode(*fn(header, tensors))
            except Exception as e:
                abort(context, e)
            if len(blob) > CHUNK_BYTES:
                return wire.encode({_TICKET: outbox.put(blob)})
            return blob

        def handle_chunks(request_chunks, context):
            try:
                header, tensors = wire.decode(b"".join(request_chunks))
                blob = wire.encode(*fn(header, tensors))
            except Exception as e:
                abort(context, e)
            yield from chunks(blob)

        return handle, handle_chunks

    def take_reply(request: bytes, context):
        try:
            header, _ = wire.decode(request)
            blob = outbox.take(header["ticket"])
        except Exception as e:
            abort(context, e)
        yield from chunks(blob)

    handlers = {"TakeReply": grpc.unary_stream_rpc_method_handler(take_reply)}
    for name in METHODS:
        unary, streamed = wrap(getattr(service, name))
        handlers[name] = grpc.unary_unary_rpc_method_handler(unary)
        handlers[name + "Chunks"] = grpc.stream_stream_rpc_method_handler(streamed)
    return grpc.method_handlers_generic_handler(SERVICE, handlers)


def _code_name(cls) -> str:
    for name, known in _BY_CODE_NAME.items():
        if issubclass(cls, known):
            return name
    return "UNKNOWN"


class TaskClient:
    """Calls one task's service; `call` returns ``(header, tensors)`` or raises the
    task's error.

    Example
    -------
    >>> client = TaskClient("localhost:1", "/job:worker/task:0")  # connects lazily
    >>> client.address
    'localhost:1'
    """

    def __init__(self, address: str, task_name: str,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.address = to_grpc_address(address)
        self.task_name = task_name
        self.timeout_s = timeout_s
        self._channel = None
        self._stubs: dict = {}

    def _stub(self, method: str, kind: str = "unary_unary"):
        stub = self._stubs.get((method, kind))
        if stub is None:
            grpc = import_grpc()
            if self._channel is None:
                self._channel = grpc.insecure_channel(self.address, options=CHANNEL_OPTIONS)
            stub = self._stubs[(method, kind)] = getattr(self._channel, kind)(
                f"/{SERVICE}/{method}")
        return stub

    def call(self, method: str, header: dict, tensors: dict | None = None,
             timeout_s: float | None = None) -> tuple[dict, dict]:
        grpc = import_grpc()
        timeout = self.timeout_s if timeout_s is None else timeout_s
        blob = wire.encode(header, tensors)
        try:
            if len(blob) > CHUNK_BYTES:
                stream = self._stub(method + "Chunks", "stream_stream")
                return wire.decode(b"".join(stream(chunks(blob), timeout=timeout)))
            reply = wire.decode(self._stub(method)(blob, timeout=timeout))
            if _TICKET in reply[0]:  # a large reply: stream it
                take = self._stub("TakeReply", "unary_stream")
                parts = take(wire.encode({"ticket": reply[0][_TICKET]}), timeout=timeout)
                reply = wire.decode(b"".join(parts))
        except grpc.RpcError as e:
            raise self._translate(e, method, timeout) from None
        return reply

    def _translate(self, e, method: str, timeout: float) -> errors.OpError:
        code, details = e.code(), e.details() or ""
        where = f"{self.task_name} ({self.address})"
        try:
            info = json.loads(details)
            cls, message = _error_class(info["error"]), info["message"]
            return cls(None, None, f"[{where}] {message}")
        except (ValueError, KeyError, TypeError):
            pass
        cls = _BY_CODE_NAME.get(code.name, errors.UnknownError)
        if cls is errors.UnavailableError:
            return cls(None, None,
                       f"Task {where} is unavailable ({method}: {details}). Check that its "
                       "tf.train.Server is running and that the cluster spec names the "
                       "right host:port.")
        if cls is errors.DeadlineExceededError:
            return cls(None, None,
                       f"{method} on task {where} did not finish within {timeout:g} s "
                       "(ConfigProto(operation_timeout_in_ms=...) sets the deadline).")
        return cls(None, None, f"{method} on task {where} failed: {code.name}: {details}")

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None
            self._stubs.clear()

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

from flowgraph.distributed import wire
from flowgraph.framework import errors

__all__ = ["METHODS", "TaskClient", "import_grpc", "method_handlers", "to_grpc_address"]

SERVICE = "flowgraph.Task"
METHODS = ("GetStatus", "RegisterGraph", "RunStage", "RecvTensor", "CleanupStep")
DEFAULT_TIMEOUT_S = 60.0
_CHANNEL_OPTIONS = [("grpc.max_send_message_length", -1),
                    ("grpc.max_receive_message_length", -1)]


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


def method_handlers(service) -> object:
    """A grpc generic handler calling ``service.<method>(header, tensors)`` for each
    method; each returns ``(header, tensors)``."""
    grpc = import_grpc()

    def wrap(fn):
        def handle(request: bytes, context) -> bytes:
            try:
                header, tensors = wire.decode(request)
                out_header, out_tensors = fn(header, tensors)
                return wire.encode(out_header, out_tensors)
            except errors.OpError as e:
                code = getattr(grpc.StatusCode, _code_name(type(e)), grpc.StatusCode.UNKNOWN)
                context.abort(code, json.dumps({"error": type(e).__name__,
                                                "message": str(e)}))
            except Exception as e:  # a bug or a kernel's plain exception
                context.abort(grpc.StatusCode.INTERNAL, json.dumps(
                    {"error": "InternalError", "message": f"{type(e).__name__}: {e}"}))
        return grpc.unary_unary_rpc_method_handler(handle)

    return grpc.method_handlers_generic_handler(
        SERVICE, {name: wrap(getattr(service, name)) for name in METHODS})


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

    def _stub(self, method: str):
        stub = self._stubs.get(method)
        if stub is None:
            grpc = import_grpc()
            if self._channel is None:
                self._channel = grpc.insecure_channel(self.address, options=_CHANNEL_OPTIONS)
            stub = self._stubs[method] = self._channel.unary_unary(f"/{SERVICE}/{method}")
        return stub

    def call(self, method: str, header: dict, tensors: dict | None = None,
             timeout_s: float | None = None) -> tuple[dict, dict]:
        grpc = import_grpc()
        timeout = self.timeout_s if timeout_s is None else timeout_s
        try:
            reply = self._stub(method)(wire.encode(header, tensors), timeout=timeout)
        except grpc.RpcError as e:
            raise self._translate(e, method, timeout) from None
        return wire.decode(reply)

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

"""gRPC plumbing: the task service's methods, error codes both ways, a client stub.

The service ``flowgraph.Task`` has unary methods whose request and response bodies are
`flowgraph.distributed.wire` messages (raw bytes; grpcio's generic handlers, no protobuf
schema). A flowgraph error raised by a handler travels as a gRPC status whose details are
``{"error": class name, "message": text}``; the client raises the same class again, with
the task's name in front of the message. Transport failures map to TensorFlow's errors:
an unreachable peer is `UnavailableError`, an expired deadline `DeadlineExceededError`.
Every call has a deadline.

Health: every channel pings its peer (gRPC keepalive, every `KEEPALIVE_S` s): a peer
that stops answering (killed, hung, cut off) fails the calls in flight with
`UnavailableError` within ``KEEPALIVE_S + KEEPALIVE_TIMEOUT_S`` seconds instead of at
their deadline, and a channel to a restarted peer reconnects within
`MAX_RECONNECT_BACKOFF_S`.

Security (`Security`, docs/distributed.md "Faults and security"): a shared token that
every call carries (``authorization`` metadata) and every handler checks before reading
the request, refusing a missing or wrong one with `UnauthenticatedError` and a log line;
and TLS from PEM files (server and channel credentials, mutual when the server has a
CA). Settings come from ``ConfigProto(rpc_options={...})``, else the ``FLOWGRAPH_*``
environment variables (for launchers), else, for a session, the server of this process
that it targets.

The data plane: a step's calls (``RunStage``, ``RecvTensor``, ``CleanupStep``,
``CancelStep``) go to the task's plain TCP port (`flowgraph.distributed.direct`), which
``GetStatus`` reports as ``data_port``; gRPC carries the rest, and everything under TLS,
with ``FLOWGRAPH_RPC_TRANSPORT=grpc``, or to a task whose data port cannot be reached.

In-process calls: a server registers its service under its address
(`register_in_process`); a client made with ``in_process=True`` (a session's client for
its tasks) calls a service of its own process directly, without gRPC or serialization,
when it carries the server's token. Errors read the same as over gRPC.

Example
-------
>>> to_grpc_address("grpc://localhost:2222")
'localhost:2222'
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import logging
import os
import threading
import time
import uuid

from flowgraph.distributed import direct, wire
from flowgraph.framework import errors

__all__ = ["CHANNEL_OPTIONS", "CHUNK_BYTES", "METHODS", "SERVER_OPTIONS", "Security",
           "TaskClient", "chunks", "import_grpc", "local_security", "method_handlers",
           "register_in_process", "register_local_security", "to_grpc_address",
           "traffic_counter"]

logger = logging.getLogger("tensorflow")

SERVICE = "flowgraph.Task"
METHODS = ("GetStatus", "RegisterGraph", "RunStage", "RecvTensor", "CleanupStep",
           "CancelStep")
DEFAULT_TIMEOUT_S = 60.0
# Messages above CHUNK_BYTES travel as a stream of chunks of that size, so no single gRPC
# message exceeds MAX_MESSAGE_BYTES (gRPC's own default limit) whatever the tensor size.
CHUNK_BYTES = 1 << 20
MAX_MESSAGE_BYTES = 4 << 20
_TICKET = "_reply_ticket"
KEEPALIVE_S = 2.0
KEEPALIVE_TIMEOUT_S = 3.0
MAX_RECONNECT_BACKOFF_S = 1.0
_MESSAGE_SIZES = [("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                  ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
_KEEPALIVE = [("grpc.keepalive_time_ms", int(KEEPALIVE_S * 1000)),
              ("grpc.keepalive_timeout_ms", int(KEEPALIVE_TIMEOUT_S * 1000)),
              # Recent gRPC cores time a keepalive ping out after this (default 1 min).
              ("grpc.http2.ping_timeout_ms", int(KEEPALIVE_TIMEOUT_S * 1000)),
              ("grpc.keepalive_permit_without_calls", 1)]
CHANNEL_OPTIONS = [*_MESSAGE_SIZES, *_KEEPALIVE,
                   ("grpc.http2.max_pings_without_data", 0),  # ping idle channels too
                   # gRPC's default backoff grows to 120 s: a restarted peer would stay
                   # unreachable that long. (Not grpc.min_reconnect_backoff_ms: gRPC uses it
                   # as the connect timeout, and a busy peer may take longer to answer.)
                   ("grpc.initial_reconnect_backoff_ms", 100),
                   ("grpc.max_reconnect_backoff_ms", int(MAX_RECONNECT_BACKOFF_S * 1000)),
                   # A connection per channel: by default channels share one per address,
                   # and a new session to a task that just restarted would inherit the
                   # failed connection's backoff instead of connecting at once.
                   ("grpc.use_local_subchannel_pool", 1)]
SERVER_OPTIONS = [*_MESSAGE_SIZES, *_KEEPALIVE,
                  ("grpc.so_reuseport", 0),  # a second server on a port must fail
                  # Accept the clients' keepalive pings (by default a server answers pings
                  # more often than every 5 min with GOAWAY).
                  ("grpc.http2.min_recv_ping_interval_without_data_ms",
                   int(KEEPALIVE_S * 500)),
                  ("grpc.http2.max_ping_strikes", 0)]


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


# rpc_options fields of TensorFlow's RPCOptions (accepted, not used) and flowgraph's own.
_TF_RPC_FIELDS = frozenset({"use_rpc_for_inprocess_master", "compression_algorithm",
                            "compression_level", "cache_rpc_response",
                            "disable_session_connection_sharing", "num_channels_per_target"})
ENV_VARS = {"auth_token": "FLOWGRAPH_AUTH_TOKEN", "tls_cert_file": "FLOWGRAPH_TLS_CERT_FILE",
            "tls_key_file": "FLOWGRAPH_TLS_KEY_FILE", "tls_ca_file": "FLOWGRAPH_TLS_CA_FILE"}
_TOKEN_KEY = "authorization"
_TOKEN_PREFIX = "Bearer "


def _read_pem(field: str, path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise errors.InvalidArgumentError(
            None, None, f"rpc_options.{field} (or ${ENV_VARS[field]}) names {path!r}, which "
            f"cannot be read: {e}. Give the path of a PEM file.") from None


@dataclasses.dataclass(frozen=True)
class Security:
    """How the tasks of a cluster authenticate each other.

    Attributes
    ----------
    auth_token : str
        A shared secret every call carries and every server checks ("": no check).
    tls_cert_file, tls_key_file : str
        PEM certificate chain and private key: a server with both serves TLS only; a
        client with both presents them (for servers that require client certificates).
    tls_ca_file : str
        PEM CA certificates: a client verifies servers with them (default: the
        certificate itself, for one self-signed certificate shared by the cluster); a
        server with them requires client certificates they signed (mutual TLS).

    Example
    -------
    >>> sec = Security.from_config({"auth_token": "s3cret"}, environ={})
    >>> sec.auth_token, sec.tls
    ('s3cret', False)
    """

    auth_token: str = ""
    tls_cert_file: str = ""
    tls_key_file: str = ""
    tls_ca_file: str = ""

    @classmethod
    def from_config(cls, config=None, fallback: Security | None = None,
                    environ=None) -> Security:
        """Settings from `config` (a ConfigProto whose ``rpc_options`` is a dict or an
        object with these fields, or such a dict itself), then the environment, then
        `fallback`."""
        rpc = getattr(config, "rpc_options", config)
        if isinstance(rpc, dict):
            unknown = set(rpc) - _TF_RPC_FIELDS - set(ENV_VARS)
            if unknown:
                raise TypeError(f"ConfigProto.rpc_options has no field(s) {sorted(unknown)}; "
                                f"known: {sorted(ENV_VARS)} and TensorFlow's "
                                f"{sorted(_TF_RPC_FIELDS)}")
            get = rpc.get
        else:
            def get(name):
                return getattr(rpc, name, None)
        environ = os.environ if environ is None else environ
        values = {}
        for name, env in ENV_VARS.items():
            value = get(name) or environ.get(env) or (getattr(fallback, name) if fallback
                                                      else "")
            if not isinstance(value, str):
                raise TypeError(f"ConfigProto.rpc_options.{name} must be a str, not "
                                f"{type(value).__name__}")
            values[name] = value
        return cls(**values)

    @property
    def tls(self) -> bool:
        return bool(self.tls_cert_file or self.tls_ca_file)

    def server_credentials(self, grpc, where: str):
        """grpc server credentials, or None to serve without TLS."""
        if not (self.tls_cert_file or self.tls_key_file):
            if self.tls_ca_file:
                raise errors.InvalidArgumentError(
                    None, None, f"{where}: rpc_options.tls_ca_file is set but a server needs "
                    "tls_cert_file and tls_key_file to serve TLS.")
            return None
        if not (self.tls_cert_file and self.tls_key_file):
            raise errors.InvalidArgumentError(
                None, None, f"{where}: TLS needs both rpc_options.tls_cert_file and "
                "tls_key_file (PEM files); one of them is missing.")
        pair = (_read_pem("tls_key_file", self.tls_key_file),
                _read_pem("tls_cert_file", self.tls_cert_file))
        ca = _read_pem("tls_ca_file", self.tls_ca_file) if self.tls_ca_file else None
        return grpc.ssl_server_credentials([pair], root_certificates=ca,
                                           require_client_auth=ca is not None)

    def channel(self, grpc, address: str):
        if not self.tls:
            return grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        root = _read_pem("tls_ca_file" if self.tls_ca_file else "tls_cert_file",
                         self.tls_ca_file or self.tls_cert_file)
        key = cert = None
        if self.tls_cert_file and self.tls_key_file:
            key = _read_pem("tls_key_file", self.tls_key_file)
            cert = _read_pem("tls_cert_file", self.tls_cert_file)
        credentials = grpc.ssl_channel_credentials(root_certificates=root, private_key=key,
                                                   certificate_chain=cert)
        return grpc.secure_channel(address, credentials, options=CHANNEL_OPTIONS)

    @property
    def metadata(self) -> tuple | None:
        return ((_TOKEN_KEY, _TOKEN_PREFIX + self.auth_token),) if self.auth_token else None


_LOCAL_SECURITY: dict[str, Security] = {}


def register_local_security(address: str, security: Security | None) -> None:
    """Remember (None: forget) the settings of a server of this process, so that a
    session targeting it without settings of its own uses them."""
    if security is None:
        _LOCAL_SECURITY.pop(address, None)
    else:
        _LOCAL_SECURITY[address] = security


def local_security(address: str) -> Security | None:
    return _LOCAL_SECURITY.get(to_grpc_address(address))


_IN_PROCESS: dict[str, tuple] = {}  # address -> (service, Security)


def register_in_process(address: str, service, security: Security | None,
                        forget: bool = False) -> None:
    """Let clients of this process call `service` (serving `address`) directly; with
    `forget`, stop that (a stopped server: only its own entry goes)."""
    if forget:
        if _IN_PROCESS.get(address, (None,))[0] is service:
            del _IN_PROCESS[address]
    else:
        _IN_PROCESS[address] = (service, security or Security())


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


_error_class = direct.error_class


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


def traffic_counter(service):
    """``count(method, bytes_in, bytes_out)``: adds a call to ``service.traffic`` (a dict
    of ``method -> (calls, bytes in, bytes out)``), shared by the gRPC handlers and the
    data plane; a no-op for a service without one."""
    traffic = getattr(service, "traffic", None)
    lock = getattr(service, "_traffic_lock", None) or threading.Lock()
    if traffic is not None:
        service._traffic_lock = lock

    def count(method: str, bytes_in: int, bytes_out: int) -> None:
        if traffic is not None:
            with lock:
                calls, ins, outs = traffic.get(method, (0, 0, 0))
                traffic[method] = (calls + 1, ins + bytes_in, outs + bytes_out)

    return count


def method_handlers(service, security: Security | None = None,
                    where: str = "this task") -> object:
    """A grpc generic handler calling ``service.<method>(header, tensors)`` for each
    method; each returns ``(header, tensors)``. Every method also has a streaming form
    ``<method>Chunks`` (requests above `CHUNK_BYTES`), and a unary reply above
    `CHUNK_BYTES` is replaced by a ticket the client redeems with ``TakeReply``.

    With ``security.auth_token``, a call without that token is refused before its
    request is read. A request header ``"reply_bfloat16": true`` asks for float32 reply
    tensors truncated to bfloat16. Bytes and calls per method are counted in
    ``service.traffic`` (a dict) when the service has one."""
    grpc = import_grpc()
    outbox = _Outbox()
    expected = (_TOKEN_PREFIX + security.auth_token).encode() if (
        security and security.auth_token) else None
    count = traffic_counter(service)

    def abort(context, e: Exception):
        if isinstance(e, errors.OpError):
            code = getattr(grpc.StatusCode, _code_name(type(e)), grpc.StatusCode.UNKNOWN)
            context.abort(code, json.dumps({"error": type(e).__name__, "message": str(e)}))
        context.abort(grpc.StatusCode.INTERNAL, json.dumps(  # a bug or a plain exception
            {"error": "InternalError", "message": f"{type(e).__name__}: {e}"}))

    def authenticate(context, method: str) -> None:
        if expected is None:
            return
        sent = next((v for k, v in context.invocation_metadata() if k == _TOKEN_KEY), None)
        if sent is not None and hmac.compare_digest(
                sent.encode() if isinstance(sent, str) else sent, expected):
            return
        reason = "no token" if sent is None else "a wrong token"
        logger.warning("flowgraph.distributed: refused %s from %s on %s: %s.", method,
                       context.peer(), where, reason)
        count("Refused", 0, 0)
        context.abort(grpc.StatusCode.UNAUTHENTICATED, json.dumps({
            "error": "UnauthenticatedError",
            "message": f"{method} refused: the call carried {reason}. Every task and client "
                       "of the cluster needs the same rpc_options.auth_token (or "
                       f"${ENV_VARS['auth_token']})."}))

    def wrap(name, fn):
        def reply(request, context) -> bytes:
            try:
                if not isinstance(request, bytes):  # a client stream's chunks
                    request = b"".join(request)
                header, tensors = wire.decode(request)
                bf16 = bool(header.get("reply_bfloat16"))
                blob = wire.encode(*fn(header, tensors), bfloat16=bf16)
            except Exception as e:
                abort(context, e)
            count(name, len(request), len(blob))
            return blob

        def handle(request: bytes, context) -> bytes:
            authenticate(context, name)
            blob = reply(request, context)
            if len(blob) > CHUNK_BYTES:
                return wire.encode({_TICKET: outbox.put(blob)})
            return blob

        def handle_chunks(request_chunks, context):
            authenticate(context, name)
            yield from chunks(reply(request_chunks, context))

        return handle, handle_chunks

    def take_reply(request: bytes, context):
        authenticate(context, "TakeReply")
        try:
            header, _ = wire.decode(request)
            blob = outbox.take(header["ticket"])
        except Exception as e:
            abort(context, e)
        yield from chunks(blob)

    handlers = {"TakeReply": grpc.unary_stream_rpc_method_handler(take_reply)}
    for name in METHODS:
        unary, streamed = wrap(name, getattr(service, name))
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
                 timeout_s: float = DEFAULT_TIMEOUT_S, security: Security | None = None,
                 in_process: bool = False) -> None:
        self.address = to_grpc_address(address)
        self.in_process = in_process
        self.task_name = task_name
        self.timeout_s = timeout_s
        # No settings given: those of the environment (a launcher's FLOWGRAPH_* vars).
        self.security = security if security is not None else Security.from_config(None)
        self._metadata = self.security.metadata
        self._channel = None
        self._stubs: dict = {}
        self._direct = None  # DirectPeer, False (not offered), None (not asked yet)
        self._direct_lock = threading.Lock()

    def _stub(self, method: str, kind: str = "unary_unary"):
        stub = self._stubs.get((method, kind))
        if stub is None:
            grpc = import_grpc()
            if self._channel is None:
                self._channel = self.security.channel(grpc, self.address)
            stub = self._stubs[(method, kind)] = getattr(self._channel, kind)(
                f"/{SERVICE}/{method}")
        return stub

    def call(self, method: str, header: dict, tensors: dict | None = None,
             timeout_s: float | None = None,
             base: wire.Base | None = None) -> tuple[dict, dict]:
        """Call `method` of the task; with `base`, the request's header is ``base.data``
        updated with `header` (a fixed part that travels encoded once, `wire.Base`)."""
        service = self._local_service()
        if service is not None:
            if base is not None:
                header = {**base.data, **header}
            return self._call_in_process(service, method, header, tensors)
        timeout = self.timeout_s if timeout_s is None else timeout_s
        if method in direct.METHODS:
            peer = self._direct_peer(timeout)
            if peer is not None:
                try:
                    return peer.call(method, header, tensors, timeout, base)
                except direct.Unreachable as e:
                    logger.warning("flowgraph.distributed: cannot reach the data port of "
                                   "%s; its step calls go through gRPC.", e)
                    self._direct = False
                except errors.UnavailableError:
                    self._direct = None  # a restarted task listens on a new data port
                    raise
        if base is not None:
            header = {**base.data, **header}
        return self._call_grpc(method, header, tensors, timeout)

    def _direct_peer(self, timeout: float):
        """The task's data plane (`flowgraph.distributed.direct`), asked for once; None
        where it offers none or TLS is on (every call then goes through gRPC)."""
        if self._direct is None:
            with self._direct_lock:
                if self._direct is None:
                    port = status = None
                    if direct.enabled(self.security):
                        status, _ = self._call_grpc("GetStatus", {}, None,
                                                    min(timeout, 10.0))
                        port = status.get("data_port")
                    self._direct = direct.DirectPeer(
                        self.address.rsplit(":", 1)[0], port, self.task_name,
                        self.security.auth_token, ping=self._ping,
                        ping_after_s=KEEPALIVE_S,
                        local_name=status.get("data_local")) if port else False
        return self._direct or None

    def _ping(self, timeout_s: float) -> None:
        self._call_grpc("GetStatus", {}, None, timeout_s)

    def _call_grpc(self, method: str, header: dict, tensors: dict | None,
                   timeout: float) -> tuple[dict, dict]:
        grpc = import_grpc()
        blob = wire.encode(header, tensors)
        try:
            meta = self._metadata
            if len(blob) > CHUNK_BYTES:
                stream = self._stub(method + "Chunks", "stream_stream")
                return wire.decode(b"".join(stream(chunks(blob), timeout=timeout,
                                                   metadata=meta)))
            reply = wire.decode(self._stub(method)(blob, timeout=timeout, metadata=meta))
            if _TICKET in reply[0]:  # a large reply: stream it
                take = self._stub("TakeReply", "unary_stream")
                parts = take(wire.encode({"ticket": reply[0][_TICKET]}), timeout=timeout,
                             metadata=meta)
                reply = wire.decode(b"".join(parts))
        except grpc.RpcError as e:
            raise self._translate(e, method, timeout) from None
        return reply

    def is_in_process(self) -> bool:
        """Whether `call` reaches the task directly (a server of this process)."""
        return self._local_service() is not None

    def _local_service(self):
        local = _IN_PROCESS.get(self.address) if self.in_process else None
        if local is None or not hmac.compare_digest(local[1].auth_token,
                                                    self.security.auth_token):
            return None
        if self.task_name.startswith("/job:") and getattr(
                local[0], "task_name", self.task_name) != self.task_name:
            return None  # another cluster's task on this address: go through gRPC
        return local[0]

    def _call_in_process(self, service, method: str, header: dict,
                         tensors: dict | None) -> tuple[dict, dict]:
        """`method` of a service of this process, called in this thread; errors carry
        the task's name as over gRPC. (Tasks' deadlines are enforced by the task.)"""
        try:
            reply, values = getattr(service, method)(header, tensors or {})
        except errors.OpError as e:
            cls = type(e)  # (a subclass with its own signature: its class in errors)
            if getattr(errors, cls.__name__, None) is not cls:
                cls = next(c for c in cls.__mro__ if getattr(errors, c.__name__, None) is c)
            raise cls(None, None, f"[{self.task_name} ({self.address})] {e}") from None
        except Exception as e:  # a bug or a plain exception, as the gRPC handler does
            raise errors.InternalError(
                None, None, f"[{self.task_name} ({self.address})] {type(e).__name__}: {e}"
            ) from None
        if header.get("reply_bfloat16"):
            values = wire.decode(wire.encode({}, values, bfloat16=True))[1]
        return reply, values

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
            hint = ("Check that its tf.train.Server is running and that the cluster spec "
                    "names the right host:port.")
            if self.security.tls:
                hint += (" This client uses TLS: the task must serve TLS with a certificate "
                         "that names its host and that rpc_options.tls_ca_file signed.")
            elif "ping timeout" in details:
                hint = "It stopped answering health-check pings (hung, or cut off)."
            else:
                hint += (" If the task serves TLS (rpc_options.tls_cert_file), this client "
                         "needs rpc_options.tls_ca_file too.")
            return cls(None, None, f"Task {where} is unavailable ({method}: {details}). {hint}")
        if cls is errors.DeadlineExceededError:
            return cls(None, None,
                       f"{method} on task {where} did not finish within {timeout:g} s "
                       "(ConfigProto(operation_timeout_in_ms=...) sets the deadline).")
        return cls(None, None, f"{method} on task {where} failed: {code.name}: {details}")

    def close(self) -> None:
        if self._direct:
            self._direct.close()
        self._direct = None
        if self._channel is not None:
            self._channel.close()
            self._channel = None
            self._stubs.clear()

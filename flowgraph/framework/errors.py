"""Exception classes raised by graph execution, with TensorFlow's error codes.

Every error is an `OpError` carrying the failing node (if known) and a canonical status
code; each code has its own subclass, so callers can catch e.g. `OutOfRangeError` only.

Example
-------
>>> try:
...     raise NotFoundError(None, None, "no such file")
... except OpError as e:
...     print(e.error_code, e)
5 no such file
"""

from __future__ import annotations

import contextlib
from types import MappingProxyType
from typing import Any

__all__ = [
    "ABORTED",
    "ALREADY_EXISTS",
    "CANCELLED",
    "CODE_TO_EXCEPTION_CLASS",
    "DATA_LOSS",
    "DEADLINE_EXCEEDED",
    "FAILED_PRECONDITION",
    "INTERNAL",
    "INVALID_ARGUMENT",
    "NOT_FOUND",
    "OK",
    "OUT_OF_RANGE",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "UNAUTHENTICATED",
    "UNAVAILABLE",
    "UNIMPLEMENTED",
    "UNKNOWN",
    "AbortedError",
    "AlreadyExistsError",
    "CancelledError",
    "DataLossError",
    "DeadlineExceededError",
    "FailedPreconditionError",
    "InternalError",
    "InvalidArgumentError",
    "NotFoundError",
    "OpError",
    "OutOfRangeError",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "UnauthenticatedError",
    "UnavailableError",
    "UnimplementedError",
    "UnknownError",
    "error_code_from_exception_type",
    "exception_type_from_error_code",
    "raise_exception_on_not_ok_status",
]

# Canonical status codes (the same numbers TensorFlow uses).
OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


#: Pass as `node_def` to take the failing op's `NodeDef` when it is first read.
_NODE_DEF_OF_OP = object()


class OpError(Exception):
    """Base class of errors raised while building or running a graph.

    Parameters
    ----------
    node_def : object or None
        Description of the failing node, if known.
    op : Operation or None
        The failing operation, if known.
    message : str
        Human-readable description; this is also ``str(error)``.
    error_code : int, optional
        One of the status-code constants of this module.

    Example
    -------
    >>> e = OpError(None, None, "boom", UNKNOWN)
    >>> (str(e), e.error_code, e.op)
    ('boom', 2, None)
    """

    def __init__(
        self, node_def: Any, op: Any, message: str, error_code: int | None = None
    ) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def node_def(self) -> Any:
        """Description of the node that failed (or None)."""
        if self._node_def is _NODE_DEF_OF_OP:  # built on first use: errors are often unread
            self._node_def = self._op.node_def if self._op is not None else None
        return self._node_def

    @property
    def op(self) -> Any:
        """The operation that failed (or None)."""
        return self._op

    @property
    def message(self) -> str:
        """The error message."""
        return self._message

    @property
    def error_code(self) -> int | None:
        """The integer status code of this error."""
        return self._error_code

    @property
    def experimental_payloads(self) -> dict:
        """Extra key/value details of the status (none are attached here: ``{}``)."""
        return {}

    def __str__(self) -> str:
        return str(self._message)

    def __reduce__(self):
        # Operations are not picklable: keep only the message (and the code for OpError).
        if type(self) is OpError:
            return OpError, (None, None, self._message, self._error_code)
        return type(self), (None, None, self._message)


class CancelledError(OpError):
    """The operation or step was cancelled (e.g. a queue was closed)."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, CANCELLED)


class UnknownError(OpError):
    """An error that fits no other category."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, UNKNOWN)


class InvalidArgumentError(OpError):
    """An input, attribute or fed value is not valid for the operation."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, INVALID_ARGUMENT)


class DeadlineExceededError(OpError):
    """A deadline (e.g. a run timeout) expired before the operation finished."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, DEADLINE_EXCEEDED)


class NotFoundError(OpError):
    """A requested entity (file, variable, resource) does not exist."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, NOT_FOUND)


class AlreadyExistsError(OpError):
    """An entity that was to be created already exists."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, ALREADY_EXISTS)


class PermissionDeniedError(OpError):
    """The caller is not allowed to run the operation."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, PERMISSION_DENIED)


class ResourceExhaustedError(OpError):
    """A resource such as memory or a quota ran out."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, RESOURCE_EXHAUSTED)


class FailedPreconditionError(OpError):
    """The system is not in a state that allows the operation (e.g. uninitialized variable)."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, FAILED_PRECONDITION)


class AbortedError(OpError):
    """The operation was aborted, typically because of a concurrent action."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, ABORTED)


class OutOfRangeError(OpError):
    """Iteration or reading went past the valid range (e.g. an exhausted queue)."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, OUT_OF_RANGE)


class UnimplementedError(OpError):
    """The operation is not implemented or not supported here."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, UNIMPLEMENTED)


class InternalError(OpError):
    """An internal invariant of the runtime was broken."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, INTERNAL)


class UnavailableError(OpError):
    """A service needed by the operation is currently unavailable."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, UNAVAILABLE)


class DataLossError(OpError):
    """Data was lost or corrupted beyond recovery."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, DATA_LOSS)


class UnauthenticatedError(OpError):
    """The request does not carry valid credentials."""

    def __init__(self, node_def: Any, op: Any, message: str) -> None:
        super().__init__(node_def, op, message, UNAUTHENTICATED)


#: Read-only mapping from status code to the `OpError` subclass for it.
CODE_TO_EXCEPTION_CLASS: MappingProxyType[int, type[OpError]] = MappingProxyType({
    CANCELLED: CancelledError,
    UNKNOWN: UnknownError,
    INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError,
    NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError,
    PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError,
    FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError,
    OUT_OF_RANGE: OutOfRangeError,
    UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError,
    UNAVAILABLE: UnavailableError,
    DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
})
_CLASS_TO_CODE = {cls: code for code, cls in CODE_TO_EXCEPTION_CLASS.items()}


def exception_type_from_error_code(error_code: int) -> type[OpError]:
    """The `OpError` subclass for a status code (KeyError for OK or unknown codes).

    Example
    -------
    >>> exception_type_from_error_code(INVALID_ARGUMENT).__name__
    'InvalidArgumentError'
    """
    return CODE_TO_EXCEPTION_CLASS[error_code]


def error_code_from_exception_type(cls: type) -> int:
    """The status code for an exception class; subclasses map like their parent.

    Classes outside this hierarchy (and `OpError` itself) map to `UNKNOWN`.

    Example
    -------
    >>> error_code_from_exception_type(NotFoundError)
    5
    """
    for klass in getattr(cls, "__mro__", ()):
        code = _CLASS_TO_CODE.get(klass)
        if code is not None:
            return code
    return UNKNOWN


class _Status:
    """A mutable status (code and message) for `raise_exception_on_not_ok_status`."""

    __slots__ = ("code", "message")

    def __init__(self) -> None:
        self.code = OK
        self.message = ""


@contextlib.contextmanager
def raise_exception_on_not_ok_status():
    """Yield a status whose ``code``/``message`` the body may set; a code other than `OK`
    is raised on exit as the `OpError` subclass for it.

    Example
    -------
    >>> try:
    ...     with raise_exception_on_not_ok_status() as status:
    ...         status.code, status.message = NOT_FOUND, "no such file"
    ... except NotFoundError as e:
    ...     print(e.error_code, e)
    5 no such file
    """
    status = _Status()
    yield status
    if status.code != OK:
        cls = CODE_TO_EXCEPTION_CLASS.get(status.code, UnknownError)
        raise cls(None, None, status.message)

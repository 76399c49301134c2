"""TensorFlow's exception classes and error codes.

Example
-------
>>> try:
...     raise NotFoundError(None, None, "no such file")
... except OpError as e:
...     print(e.error_code, e)
5 no such file
"""

from __future__ import annotations

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


class OpError(Exception):
    """An error raised while running a graph; `op` is the failing operation (or None)."""

    def __init__(self, node_def, op, message: str, error_code: int | None = None) -> None:
        super().__init__(message)
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code

    @property
    def node_def(self):
        return self._node_def

    @property
    def op(self):
        return self._op

    @property
    def message(self) -> str:
        return self._message

    @property
    def error_code(self) -> int | None:
        return self._error_code

    def __str__(self) -> str:
        return self._message

    def __reduce__(self):
        return type(self), (None, None, self._message)


def _make(name: str, code: int, doc: str) -> type:
    def __init__(self, node_def, op, message, *args, **kwargs):
        OpError.__init__(self, node_def, op, message, code)

    cls = type(name, (OpError,), {"__init__": __init__, "__doc__": doc,
                                 "__module__": __name__})
    return cls


CancelledError = _make("CancelledError", CANCELLED, "The operation was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An argument (input, attribute or feed) is invalid.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED,
                              "A deadline expired before the operation finished.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS,
                           "An entity that we tried to create already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED,
                              "The caller may not run the operation.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED,
                               "A resource (memory, quota) is exhausted.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state to run the operation.")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE,
                        "An iteration or read went past the valid range.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED,
                           "The operation is not implemented or supported.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "The service is unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED,
                             "The request lacks valid credentials.")

_CODE_TO_CLASS = {
    CANCELLED: CancelledError, UNKNOWN: UnknownError, INVALID_ARGUMENT: InvalidArgumentError,
    DEADLINE_EXCEEDED: DeadlineExceededError, NOT_FOUND: NotFoundError,
    ALREADY_EXISTS: AlreadyExistsError, PERMISSION_DENIED: PermissionDeniedError,
    RESOURCE_EXHAUSTED: ResourceExhaustedError, FAILED_PRECONDITION: FailedPreconditionError,
    ABORTED: AbortedError, OUT_OF_RANGE: OutOfRangeError, UNIMPLEMENTED: UnimplementedError,
    INTERNAL: InternalError, UNAVAILABLE: UnavailableError, DATA_LOSS: DataLossError,
    UNAUTHENTICATED: UnauthenticatedError,
}


def exception_type_from_error_code(error_code: int) -> type:
    """The OpError subclass for a TensorFlow error code."""
    return _CODE_TO_CLASS[error_code]


def error_code_from_exception_type(cls: type) -> int:
    for code, c in _CODE_TO_CLASS.items():
        if c is cls:
            return code
    return UNKNOWN

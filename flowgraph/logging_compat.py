"""`tf.logging`: TensorFlow 1.x's logging functions over Python's ``"tensorflow"`` logger.

Everything flowgraph logs (Estimator progress such as ``loss = 0.12, step = 100``,
checkpoint saves, queue runner errors) goes to the ``logging.getLogger("tensorflow")``
logger, so ``tf.logging.set_verbosity(tf.logging.INFO)`` shows it, exactly like the
TF1 idiom. The levels are Python's: ``DEBUG=10, INFO=20, WARN=30, ERROR=40,
FATAL=50``. ``import flowgraph`` gives the logger a standard-error handler printing
``INFO:tensorflow:message``, as importing TensorFlow does, unless the logger or the root
logger already has handlers (a program that configures `logging` itself keeps its setup).
Unlike TensorFlow's `fatal`, which aborts in C++, `fatal` here only logs at FATAL. The
logger has TensorFlow's name, so a program that configures ``logging.getLogger(
"tensorflow")`` (its level, its handlers, ``propagate``) configures flowgraph's output.

Example
-------
>>> import flowgraph as tf
>>> tf.logging.set_verbosity(tf.logging.ERROR)
>>> tf.logging.get_verbosity() == tf.logging.ERROR
True
>>> tf.logging.info("not shown: below the verbosity")
"""

from __future__ import annotations

import logging as _logging
import sys
import threading

__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "TaskLevelStatusMessage",
    "debug",
    "error",
    "fatal",
    "flush",
    "get_logger",
    "get_verbosity",
    "info",
    "log",
    "log_every_n",
    "log_first_n",
    "log_if",
    "set_verbosity",
    "use_root_handlers",
    "vlog",
    "warn",
    "warning",
]

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_LOGGER_NAME = "tensorflow"
_lock = threading.Lock()
_handler_added = False
_counts: dict[tuple[str, int], int] = {}


class _StderrHandler(_logging.StreamHandler):
    """Writes to whatever `sys.stderr` is at the time of the record (test capture works)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def _from_caller(kwargs: dict) -> dict:
    """Attribute a record to the program line that called `tf.logging`, not to this module."""
    kwargs.setdefault("stacklevel", 2)
    return kwargs


def get_logger() -> _logging.Logger:
    """The ``"tensorflow"`` logger (given a stderr handler on first use; see module doc).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.get_logger().name
    'tensorflow'
    """
    global _handler_added
    logger = _logging.getLogger(_LOGGER_NAME)
    if not _handler_added:
        with _lock:
            if not _handler_added:
                _handler_added = True
                if not logger.handlers and not _logging.getLogger().handlers:
                    handler = _StderrHandler()
                    handler.setFormatter(_logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
                    logger.addHandler(handler)
    return logger


def use_root_handlers() -> None:
    """Drop the standard-error handler `import flowgraph` gave the "tensorflow" logger,
    so a program that configures the root logger after importing flowgraph (as the
    command-line tools do with ``logging.basicConfig``) prints each record once, in its
    own format.

    Example
    -------
    >>> import logging
    >>> import flowgraph as tf
    >>> tf.logging.use_root_handlers()
    >>> logging.getLogger("tensorflow").handlers
    []
    """
    logger = _logging.getLogger(_LOGGER_NAME)
    for handler in list(logger.handlers):
        if isinstance(handler, _StderrHandler):
            logger.removeHandler(handler)


def set_verbosity(v: int) -> None:
    """Show messages at level `v` (``tf.logging.INFO``, ...) and above.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.set_verbosity(tf.logging.WARN)
    """
    get_logger().setLevel(v)


def get_verbosity() -> int:
    """The effective level of the ``"tensorflow"`` logger.

    Example
    -------
    >>> import flowgraph as tf
    >>> isinstance(tf.logging.get_verbosity(), int)
    True
    """
    return get_logger().getEffectiveLevel()


def log(level: int, msg, *args, **kwargs) -> None:
    """Log `msg % args` at `level`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.log(tf.logging.DEBUG, "value %d", 3)
    """
    get_logger().log(level, msg, *args, **_from_caller(kwargs))


def debug(msg, *args, **kwargs) -> None:
    """Log at DEBUG.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.debug("shape %s", [2, 3])
    """
    get_logger().debug(msg, *args, **_from_caller(kwargs))


def info(msg, *args, **kwargs) -> None:
    """Log at INFO.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.info("step %d", 10)
    """
    get_logger().info(msg, *args, **_from_caller(kwargs))


def warning(msg, *args, **kwargs) -> None:
    """Log at WARN.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.set_verbosity(tf.logging.ERROR)
    >>> tf.logging.warning("ignored at ERROR verbosity")
    """
    get_logger().warning(msg, *args, **_from_caller(kwargs))


warn = warning


def error(msg, *args, **kwargs) -> None:
    """Log at ERROR.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.set_verbosity(tf.logging.FATAL)
    >>> tf.logging.error("ignored at FATAL verbosity")
    """
    get_logger().error(msg, *args, **_from_caller(kwargs))


def fatal(msg, *args, **kwargs) -> None:
    """Log at FATAL (the program continues; TensorFlow's C++ would abort).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.set_verbosity(tf.logging.FATAL + 1)
    >>> tf.logging.fatal("ignored above FATAL verbosity")
    """
    get_logger().critical(msg, *args, **_from_caller(kwargs))


def vlog(level: int, msg, *args, **kwargs) -> None:
    """Log at `level` (TensorFlow's verbose logging; the same as `log`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.vlog(tf.logging.DEBUG, "detail")
    """
    get_logger().log(level, msg, *args, **_from_caller(kwargs))


def log_if(level: int, msg, condition, *args) -> None:
    """Log `msg % args` at `level` if `condition` is true.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.log_if(tf.logging.DEBUG, "x=%d", False, 3)
    """
    if condition:
        get_logger().log(level, msg, *args, stacklevel=2)


def _next_count() -> int:
    """How many times the calling line (two frames up) has asked before; thread-safe."""
    frame = sys._getframe(2)
    key = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        n = _counts.get(key, 0)
        _counts[key] = n + 1
    return n


def log_every_n(level: int, msg, n: int, *args) -> None:
    """Log `msg % args` at `level` on the 1st, (n+1)th, (2n+1)th... call from this line.

    Example
    -------
    >>> import flowgraph as tf
    >>> for step in range(5):
    ...     tf.logging.log_every_n(tf.logging.DEBUG, "step %d", 2, step)
    """
    count = _next_count()
    if count % max(int(n), 1) == 0:
        get_logger().log(level, msg, *args, stacklevel=2)


def log_first_n(level: int, msg, n: int, *args) -> None:
    """Log `msg % args` at `level` only for the first `n` calls from this line.

    Example
    -------
    >>> import flowgraph as tf
    >>> for step in range(5):
    ...     tf.logging.log_first_n(tf.logging.DEBUG, "step %d", 2, step)
    """
    count = _next_count()
    if count < n:
        get_logger().log(level, msg, *args, stacklevel=2)


def flush() -> None:
    """Flush the handlers of the ``"tensorflow"`` logger.

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.flush()
    """
    for handler in get_logger().handlers:
        handler.flush()


def TaskLevelStatusMessage(msg) -> None:
    """Log `msg` at ERROR (TensorFlow's task status message).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.logging.set_verbosity(tf.logging.FATAL)
    >>> tf.logging.TaskLevelStatusMessage("ignored at FATAL verbosity")
    """
    get_logger().error(msg, stacklevel=2)

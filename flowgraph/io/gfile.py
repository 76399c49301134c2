"""`tf.io.gfile` (and TF1's `tf.gfile`): file-system helpers, local file system only.

Names follow TensorFlow: the ``tf.io.gfile`` spelling (`exists`, `glob`, `makedirs`,
`GFile`, ...) and TF1's capitalized ``tf.gfile`` aliases (`Exists`, `Glob`, `MakeDirs`,
`Open`, ...). Errors are TensorFlow's: a missing file is `NotFoundError`, an existing
destination `AlreadyExistsError`. Paths may be str, bytes or path-like; a ``file://``
prefix is accepted; other schemes (``gs://``, ``hdfs://``) are `UnimplementedError`.

Example
-------
>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> with GFile(os.path.join(d, "a.txt"), "w") as f:
...     _ = f.write("one\\ntwo\\n")
>>> with GFile(os.path.join(d, "a.txt")) as f:
...     print([line for line in f])
['one\\n', 'two\\n']
>>> [os.path.basename(p) for p in glob(os.path.join(d, "*.txt"))]
['a.txt']
"""

from __future__ import annotations

import errno
import glob as _glob
import os
import posixpath
import shutil
from typing import NamedTuple

from flowgraph.framework import errors

__all__ = [
    "GFile",
    "Open",
    "copy",
    "exists",
    "get_registered_schemes",
    "glob",
    "isdir",
    "join",
    "listdir",
    "makedirs",
    "mkdir",
    "remove",
    "rename",
    "rmtree",
    "stat",
    "walk",
]


def _path(path) -> str:
    if isinstance(path, bytes):
        path = path.decode("utf-8")
    path = os.fspath(path)
    if "://" in path:
        scheme, rest = path.split("://", 1)
        if scheme != "file":
            raise errors.UnimplementedError(
                None, None, f"File system scheme '{scheme}' not implemented (file: '{path}'). "
                "flowgraph's gfile supports the local file system only.")
        path = rest
    return path


def join(path, *paths) -> str:
    """Join path components with ``/``; a URL (``scheme://...``) is joined after its
    scheme, so ``join("gs://bucket", "x")`` is ``'gs://bucket/x'``.

    >>> import flowgraph as tf
    >>> tf.io.gfile.join("logs", "run1", "events")
    'logs/run1/events'
    """
    path = path.decode("utf-8") if isinstance(path, bytes) else os.fspath(path)
    rest = [p.decode("utf-8") if isinstance(p, bytes) else os.fspath(p) for p in paths]
    if "://" in path[1:]:
        scheme, tail = path.split("://", 1)
        return f"{scheme}://{posixpath.join(tail, *rest)}"
    return os.path.join(path, *rest)


def get_registered_schemes() -> list[str]:
    """The URL schemes gfile opens: ``''`` (plain paths) and ``file``."""
    return ["", "file"]


def _os_error(e: OSError, path: str):
    """The TensorFlow error for an OSError on `path`."""
    text = f"{path}; {e.strerror or e}"
    if e.errno == errno.ENOENT:
        return errors.NotFoundError(None, None, text)
    if e.errno == errno.EEXIST:
        return errors.AlreadyExistsError(None, None, text)
    if e.errno in (errno.EACCES, errno.EPERM):
        return errors.PermissionDeniedError(None, None, text)
    if e.errno in (errno.ENOTDIR, errno.EISDIR, errno.ENOTEMPTY):
        return errors.FailedPreconditionError(None, None, text)
    return errors.UnknownError(None, None, text)


class _Guard:
    """Turns OSErrors raised inside the block into TensorFlow errors naming `path`."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is not None and isinstance(exc, OSError) and not isinstance(exc, errors.OpError):
            raise _os_error(exc, self.path) from exc
        return False


# -- queries ----------------------------------------------------------------------------------
def exists(path) -> bool:
    """True if `path` (a file or directory) exists."""
    return os.path.exists(_path(path))


def isdir(path) -> bool:
    """True if `path` is a directory."""
    return os.path.isdir(_path(path))


def glob(pattern) -> list[str]:
    """The paths matching `pattern` (a string or a list of patterns), sorted."""
    if isinstance(pattern, list | tuple):
        return sorted({p for pat in pattern for p in glob(pat)})
    return sorted(_glob.glob(_path(pattern)))


def listdir(path) -> list[str]:
    """The names (not paths) of the entries of directory `path`, sorted."""
    p = _path(path)
    if not os.path.isdir(p):
        raise errors.NotFoundError(None, None, f"Could not find directory {p}")
    with _Guard(p):
        return sorted(os.listdir(p))


def walk(top, topdown: bool = True, onerror=None):
    """Yield ``(dirname, subdirs, files)`` for each directory under `top`, like os.walk."""
    top = _path(top)
    if not os.path.isdir(top):
        return
    yield from os.walk(top, topdown=topdown, onerror=onerror)


class FileStatistics(NamedTuple):
    """`stat` result: ``length`` in bytes, ``mtime_nsec``, ``is_directory``."""

    length: int
    mtime_nsec: int
    is_directory: bool


def stat(path) -> FileStatistics:
    """Size, modification time (ns) and directory flag of `path`."""
    p = _path(path)
    with _Guard(p):
        st = os.stat(p)
    return FileStatistics(st.st_size, st.st_mtime_ns, os.path.isdir(p))


# -- changes -------------------------------------------------------------------------------
def makedirs(path) -> None:
    """Create directory `path` and its missing parents; no error if it exists."""
    p = _path(path)
    with _Guard(p):
        os.makedirs(p, exist_ok=True)


def mkdir(path) -> None:
    """Create directory `path`; its parent must exist (`NotFoundError`). A `path` that
    exists already is no error, as in TensorFlow 2.15."""
    p = _path(path)
    if os.path.exists(p):
        return
    with _Guard(p):
        os.mkdir(p)


def remove(path) -> None:
    """Delete file `path` (`NotFoundError` if missing)."""
    p = _path(path)
    with _Guard(p):
        os.remove(p)


def rmtree(path) -> None:
    """Delete directory `path` and everything under it (`NotFoundError` if missing)."""
    p = _path(path)
    if not os.path.exists(p):
        raise errors.NotFoundError(None, None, f"{p}; No such file or directory")
    with _Guard(p):
        shutil.rmtree(p)


def rename(oldname, newname, overwrite: bool = False) -> None:
    """Rename `oldname` to `newname`; an existing `newname` needs ``overwrite=True``."""
    old, new = _path(oldname), _path(newname)
    if not overwrite and os.path.exists(new):
        raise errors.AlreadyExistsError(None, None, f"{new}; File already exists")
    with _Guard(old):
        os.replace(old, new)


def copy(oldpath, newpath, overwrite: bool = False) -> None:
    """Copy file `oldpath` to `newpath`; an existing `newpath` needs ``overwrite=True``."""
    old, new = _path(oldpath), _path(newpath)
    if not overwrite and os.path.exists(new):
        raise errors.AlreadyExistsError(None, None, f"{new}; File already exists")
    with _Guard(old):
        shutil.copyfile(old, new)


# -- files --------------------------------------------------------------------------------------
class GFile:
    """A file object: ``GFile(name, mode='r')`` with read/write/readline/iteration.

    Text modes return `str`, binary modes (``'rb'``, ``'wb'``) `bytes`. Opening a missing
    file for reading is `NotFoundError`. Use it as a context manager.

    Example
    -------
    >>> import os, tempfile
    >>> name = os.path.join(tempfile.mkdtemp(), "b.bin")
    >>> with GFile(name, "wb") as f:
    ...     _ = f.write(b"xyz")
    >>> GFile(name, "rb").read(2)
    b'xy'
    """

    def __init__(self, name, mode: str = "r") -> None:
        if not isinstance(mode, str) or mode.replace("b", "").replace("+", "") not in (
                "r", "w", "a", "x"):
            raise errors.InvalidArgumentError(None, None, f"Unsupported file mode {mode!r}")
        self._name = _path(name)
        self._mode = mode
        self._binary = "b" in mode
        self._file = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def mode(self) -> str:
        return self._mode

    def _f(self):
        if self._file is None:
            with _Guard(self._name):
                if "r" in self._mode and os.path.isdir(self._name):
                    raise errors.FailedPreconditionError(None, None,
                                                         f"{self._name}; Is a directory")
                self._file = open(
                    self._name, self._mode, **({} if self._binary else {"encoding": "utf-8",
                                                                          "newline": ""}))
        return self._file

    def read(self, n: int = -1):
        """Read `n` characters/bytes (everything if -1)."""
        return self._f().read(n)

    def readline(self):
        """The next line including its newline ('' / b'' at the end)."""
        return self._f().readline()

    def readlines(self) -> list:
        return self._f().readlines()

    def write(self, data) -> None:
        """Write `data` (str or bytes); text is encoded as UTF-8 in binary mode. Returns
        None, as TensorFlow's (not the count of a Python file's write)."""
        f = self._f()
        if self._binary and isinstance(data, str):
            data = data.encode("utf-8")
        elif not self._binary and isinstance(data, bytes):
            data = data.decode("utf-8")
        f.write(data)

    def seek(self, offset: int, whence: int = 0):
        return self._f().seek(offset, whence)

    def tell(self) -> int:
        return self._f().tell()

    def size(self) -> int:
        return os.path.getsize(self._name)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __iter__(self):
        return self

    def __next__(self):
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def next(self):
        return self.__next__()

    def __enter__(self) -> GFile:
        self._f()
        return self

    def __exit__(self, *exc) -> None:
        self.close()


Open = GFile
FastGFile = GFile

# TF1 ``tf.gfile`` spellings.
Copy = copy
DeleteRecursively = rmtree
Exists = exists
Glob = glob
IsDirectory = isdir
ListDirectory = listdir
MakeDirs = makedirs
MkDir = mkdir


def Walk(top, in_order: bool = True):
    """TF 1.x's ``tf.gfile.Walk``: `walk` with ``topdown=in_order``."""
    return walk(top, topdown=in_order)


Remove = remove
Rename = rename
Stat = stat

"""Opening the text files that ops read at run time (vocabularies, table initializers).

`read_text_lines` opens the file without blocking (a FIFO would otherwise wait for a
writer forever), checks on the open descriptor that it is a regular file (not a FIFO,
a device such as ``/dev/zero``, a socket or a directory) and that it holds at most
`MAX_ASSET_BYTES`, and only then reads it. The checks run on the descriptor, so a file
swapped after a SavedModel loader validated its path is still caught.

Example
-------
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
>>> _ = open(path, "w").write("a\\nb\\r\\n")
>>> read_text_lines(path, "VocabLookup")
['a', 'b']
"""

from __future__ import annotations

import io
import os
import stat

from flowgraph.framework import errors

__all__ = ["MAX_ASSET_BYTES", "file_kind", "read_text_lines"]

# The largest file an op reads as a vocabulary or table (the whole file becomes Python
# strings, several times its size in memory). Raise it for larger vocabularies.
MAX_ASSET_BYTES = 256 << 20


def file_kind(mode: int) -> str:
    """'a FIFO', 'a character device', ... for a `st_mode`."""
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def read_text_lines(path: str, what: str, limit: int | None = None) -> list[str]:
    """The lines of the UTF-8 text file `path` (newlines stripped), for op `what`.

    Raises NotFoundError when it does not exist and InvalidArgumentError when it is not
    a regular file, is larger than `limit` (default `MAX_ASSET_BYTES`) or not UTF-8.
    """
    if limit is None:
        limit = MAX_ASSET_BYTES
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{what}: {path}; No such file or "
                                   "directory") from None
    except OSError as e:
        raise errors.InvalidArgumentError(None, None, f"{what}: cannot open {path}: "
                                          f"{e.strerror}") from None
    with os.fdopen(fd, "rb") as raw:
        st = os.fstat(raw.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise errors.InvalidArgumentError(
                None, None, f"{what}: {path} is {file_kind(st.st_mode)}; only regular files "
                "are read as vocabularies and tables")
        if st.st_size > limit:
            raise errors.InvalidArgumentError(
                None, None, f"{what}: {path} holds {st.st_size} bytes, more than the limit "
                f"of {limit} (flowgraph.framework.asset_file.MAX_ASSET_BYTES)")
        data = raw.read(limit + 1)
    if len(data) > limit:
        raise errors.InvalidArgumentError(None, None, f"{what}: {path} grew past the limit "
                                          f"of {limit} bytes while being read")
    try:
        text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        return [line.rstrip("\n").rstrip("\r") for line in text]
    except UnicodeDecodeError as e:
        raise errors.InvalidArgumentError(None, None, f"{what}: {path} is not UTF-8 text "
                                          f"({e})") from None

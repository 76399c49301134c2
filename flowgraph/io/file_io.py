"""TensorFlow's ``file_io`` functions (``tensorflow.python.lib.io.file_io``), on the same
file layer as `tf.gfile` (`flowgraph.io.gfile`): its errors, its handling of ``~`` and
path-like arguments.

Example
-------
>>> import tempfile, os
>>> from flowgraph.io import file_io
>>> path = os.path.join(tempfile.mkdtemp(), "a", "b.txt")
>>> file_io.recursive_create_dir(os.path.dirname(path))
>>> file_io.write_string_to_file(path, "hello")
>>> file_io.file_exists(path), file_io.read_file_to_string(path)
(True, 'hello')
>>> file_io.read_file_to_string(path, binary_mode=True)
b'hello'
"""

from __future__ import annotations

import os
import tempfile

from flowgraph.io import gfile

__all__ = ["FileIO", "atomic_write_string_to_file", "copy", "create_dir", "delete_file",
           "delete_recursively", "file_exists", "get_matching_files", "is_directory",
           "list_directory", "read_file_to_string", "recursive_create_dir", "rename",
           "stat", "walk", "write_string_to_file"]

FileIO = gfile.GFile
file_exists = gfile.exists
get_matching_files = gfile.glob
is_directory = gfile.isdir
list_directory = gfile.listdir
create_dir = gfile.mkdir
recursive_create_dir = gfile.makedirs
delete_file = gfile.remove
delete_recursively = gfile.rmtree
stat = gfile.stat
walk = gfile.walk


def rename(oldname, newname, overwrite: bool = False) -> None:
    """Rename `oldname` to `newname` (`AlreadyExistsError` unless `overwrite`)."""
    gfile.rename(oldname, newname, overwrite=overwrite)


def copy(oldpath, newpath, overwrite: bool = False) -> None:
    """Copy `oldpath` to `newpath` (`AlreadyExistsError` unless `overwrite`)."""
    gfile.copy(oldpath, newpath, overwrite=overwrite)


def read_file_to_string(filename, binary_mode: bool = False):
    """The whole file: text, or bytes with `binary_mode`."""
    with gfile.GFile(filename, "rb" if binary_mode else "r") as f:
        return f.read()


def write_string_to_file(filename, file_content) -> None:
    """Write `file_content` (str or bytes) to `filename`, replacing it."""
    mode = "wb" if isinstance(file_content, bytes) else "w"
    with gfile.GFile(filename, mode) as f:
        f.write(file_content)


def atomic_write_string_to_file(filename, contents, overwrite: bool = True) -> None:
    """Write `contents` to a temporary file beside `filename`, then rename it over
    `filename`: a reader sees the old file or the new one, never a part."""
    path = os.fspath(filename)
    folder = os.path.dirname(os.path.abspath(path))
    handle, temp = tempfile.mkstemp(dir=folder, prefix=".tmp_", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as f:
            f.write(contents if isinstance(contents, bytes) else contents.encode())
            f.flush()
            os.fsync(f.fileno())
        gfile.rename(temp, path, overwrite=overwrite)
    except BaseException:
        if os.path.exists(temp):
            os.remove(temp)
        raise

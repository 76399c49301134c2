"""``tf.resource_loader``: paths of data files shipped beside a program's modules.

Example
-------
>>> import os
>>> import flowgraph as tf
>>> here = tf.resource_loader.get_data_files_path()
>>> os.path.isdir(here)
True
"""

from __future__ import annotations

import inspect
import os

__all__ = ["get_data_files_path", "get_path_to_datafile", "get_root_dir_with_all_resources",
           "load_resource", "readahead_file_path"]


def _caller_dir(depth: int = 2) -> str:
    frame = inspect.stack()[depth]
    return os.path.dirname(os.path.abspath(frame.filename))


def get_data_files_path() -> str:
    """The directory of the calling module's source file."""
    return _caller_dir()


def get_path_to_datafile(path: str) -> str:
    """`path` relative to the calling module's directory."""
    return os.path.join(_caller_dir(), path)


def get_root_dir_with_all_resources() -> str:
    """The directory that resource paths are resolved against: the calling module's."""
    return _caller_dir()


def load_resource(path: str) -> bytes:
    """The bytes of the data file at `path`, relative to the calling module's directory
    (an absolute path is used as it is); a missing file is an IOError naming it."""
    full = path if os.path.isabs(path) else os.path.join(_caller_dir(), path)
    with open(full, "rb") as f:
        return f.read()


def readahead_file_path(path: str, readahead: str = "128M") -> str:
    """`path` itself: flowgraph reads local files directly, with no readahead cache."""
    del readahead
    return path

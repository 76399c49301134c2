"""The ``checkpoint`` state file and crash-safe file writes.

A checkpoint directory holds checkpoints (``model.ckpt-STEP.index`` + ``.data-*`` in
TensorFlow's format, or one file ``model.ckpt-STEP`` in flowgraph's; both end in
``.meta``) and one small text file, ``checkpoint``, in TensorFlow's text format::

    model_checkpoint_path: "model.ckpt-200"
    all_model_checkpoint_paths: "model.ckpt-100"
    all_model_checkpoint_paths: "model.ckpt-200"

Paths inside the directory are written relative to it, so a directory can be moved;
readers join them with the directory again.

Every file is written by `atomic_write`: into a hidden temporary file in the same
directory, flushed and fsynced, renamed over the target with `os.replace`, and then the
directory itself is fsynced. A crash at any moment leaves either the old file or the
new one, never a torn one; the state file is renamed only after the checkpoint it names
is durable, and old checkpoints are deleted only after that.

A save writes several files into one directory: `write_durably` writes all their
temporaries (the state file's too), fsyncs them concurrently, renames the checkpoint's
files and fsyncs the directory, then renames the state file and fsyncs the directory
again: three serial waits on the disk, whatever the number of files. (Inside
`deferred_directory_syncs`, `atomic_write`'s directory fsyncs are likewise done once
per directory when the block ends.) Files this process made durable and finds unchanged
(same inode, size and times) are not fsynced again (`make_durable`).

Example
-------
>>> import os, tempfile
>>> d = tempfile.mkdtemp()
>>> open(os.path.join(d, "model.ckpt-5"), "wb").close()
>>> update_checkpoint_state(d, os.path.join(d, "model.ckpt-5"))
>>> os.path.basename(latest_checkpoint(d))
'model.ckpt-5'
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait

from flowgraph.framework.tf_formats.bundle import bundle_data_files, index_file, is_bundle

__all__ = [
    "CheckpointState",
    "checkpoint_exists",
    "generate_checkpoint_state_proto",
    "get_checkpoint_mtimes",
    "get_checkpoint_state",
    "latest_checkpoint",
    "remove_checkpoint",
    "update_checkpoint_state",
]

logger = logging.getLogger("tensorflow")

_TMP_MARK = ".tmp-"


# -- atomic writes ----------------------------------------------------------------------------
_local = threading.local()  # .pending: {directory: [paths renamed there]} inside a batch
_durable: dict[str, tuple] = {}  # path -> identity when this process made it durable
_MAX_DURABLE = 512


def _identity(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _mark_durable(paths) -> None:
    if len(_durable) > _MAX_DURABLE:
        _durable.clear()
    for path in paths:
        ident = _identity(path)
        if ident is not None:
            _durable[os.path.abspath(path)] = ident


def _known_durable(path: str) -> bool:
    ident = _durable.get(os.path.abspath(path))
    return ident is not None and ident == _identity(path)


@contextlib.contextmanager
def deferred_directory_syncs():
    """Inside the block, the directory fsyncs of `atomic_write`, `make_durable` and
    `note_renamed` are put off and done once per directory when the block ends, making
    every rename in it durable with one fsync. Nothing is synced if the block raises.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with deferred_directory_syncs():
    ...     atomic_write(os.path.join(d, "a"), lambda f: f.write(b"1"))
    ...     atomic_write(os.path.join(d, "b"), lambda f: f.write(b"2"))
    >>> sorted(os.listdir(d))
    ['a', 'b']
    """
    outer = getattr(_local, "pending", None)
    if outer is not None:  # nested: the outermost block syncs
        yield
        return
    _local.pending = {}
    try:
        yield
        pending = _local.pending
    finally:
        _local.pending = None
    for directory, paths in pending.items():
        fsync_directory(directory)
        _mark_durable(paths)


def note_renamed(path: str) -> None:
    """Record that `path` (its data already fsynced) was just renamed into place: its
    directory is fsynced now, or when the enclosing `deferred_directory_syncs` ends."""
    directory = os.path.dirname(path)
    pending = getattr(_local, "pending", None)
    if pending is None:
        fsync_directory(directory)
        _mark_durable([path])
    else:
        pending.setdefault(directory, []).append(path)


def fsync_directory(directory: str) -> None:
    """Make renames inside `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def make_durable(path: str, fsync_dir: bool = True) -> None:
    """fsync the existing file `path` (and its directory): a file kept instead of written
    again is as durable as `atomic_write` leaves a new one. A file this process already
    made durable, unchanged since, is left alone (an fsync of a clean file still flushes
    the disk's cache)."""
    if _known_durable(path):
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    if fsync_dir:
        note_renamed(path)


def same_bytes_on_disk(path: str, data: bytes) -> bool:
    """Whether the file `path` exists and holds exactly `data`."""
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False


def temp_path_for(path: str) -> str:
    """A hidden temporary name next to `path`, tagged with our pid (see `remove_stale_temps`)."""
    directory, base = os.path.split(path)
    return os.path.join(directory, f".{base}{_TMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}")


def atomic_write(path: str, write: Callable, fsync_dir: bool = True) -> None:
    """Call ``write(fileobj)`` on a temporary file, fsync it and rename it to `path`."""
    tmp = temp_path_for(path)
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    if fsync_dir:
        note_renamed(path)


# -- a save's files, fsynced together ------------------------------------------------------------
_pool: tuple[int, ThreadPoolExecutor] | None = None  # (pid that made it, pool)
_pool_lock = threading.Lock()


def _fsync_all(fds: list[int]) -> None:
    """fsync every descriptor in `fds` at once: fsync releases the GIL, and concurrent
    fsyncs on one file system share a journal commit instead of waiting in line."""
    if len(fds) <= 1:
        for fd in fds:
            os.fsync(fd)
        return
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            # (a forked child inherits the pool without its threads: it makes its own)
            _pool = (os.getpid(), ThreadPoolExecutor(max_workers=4,
                                                     thread_name_prefix="flowgraph-fsync"))
    futures = [_pool[1].submit(os.fsync, fd) for fd in fds]
    wait(futures)  # all done before the caller closes any descriptor
    for future in futures:
        future.result()  # re-raises the first failure


def _write_all(fd: int, data) -> None:
    view = memoryview(data).cast("B")
    while view:
        view = view[os.write(fd, view):]


def write_durably(files, then=()) -> None:
    """Write `files` and then `then` (each a list of ``(path, bytes)``) crash-safely, with
    the fewest serial waits on the disk.

    The order of operations (the guarantee is `atomic_write`'s: a crash at any point
    leaves every target either old or new, and a `then` file never names a `files` file
    that is not durable):

    1. every temporary file is written, `files`' and `then`'s alike;
    2. all of them are fsynced at once (`_fsync_all`), with any target already holding
       the same bytes that this process has not yet made durable;
    3. `files`' temporaries are renamed into place and their directories fsynced;
    4. `then`'s temporaries are renamed and their directories fsynced.

    ``bytes`` of None keeps an existing target as it is (made durable like the others).
    On an error before step 3 the temporaries are removed and no target changes.

    Example
    -------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> write_durably([(os.path.join(d, "data"), b"1")], then=[(os.path.join(d, "st"), b"2")])
    >>> sorted(os.listdir(d))
    ['data', 'st']
    """
    staged: list[tuple[str | None, str, int]] = []  # (temporary or None, target, group)
    fds: list[int] = []
    try:
        for group, items in enumerate((files, then)):
            for path, data in items:
                if data is None or same_bytes_on_disk(path, data):
                    if not _known_durable(path):
                        fds.append(os.open(path, os.O_RDONLY))
                    staged.append((None, path, group))
                    continue
                tmp = temp_path_for(path)
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                staged.append((tmp, path, group))
                fds.append(fd)
                _write_all(fd, data)
        _fsync_all(fds)
    except BaseException:
        for tmp, _, _ in staged:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.remove(tmp)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    for group in (0, 1):
        directories = {}
        for tmp, path, g in staged:
            if g != group:
                continue
            if tmp is not None:
                os.replace(tmp, path)
            if tmp is not None or not _known_durable(path):
                directories[os.path.dirname(path)] = True
        for directory in directories:
            fsync_directory(directory)
        _mark_durable([path for _, path, g in staged if g == group])


def remove_stale_temps(directory: str) -> None:
    """Delete temporary files left in `directory` by processes that no longer run."""
    pattern = re.compile(r"^\..*" + re.escape(_TMP_MARK) + r"(\d+)-[0-9a-f]+$")
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return
    for name in names:
        m = pattern.match(name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _pid_alive(pid):
            continue
        with contextlib.suppress(OSError):
            os.remove(os.path.join(directory, name))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


# -- the state "proto" --------------------------------------------------------------------------
class CheckpointState:
    """The contents of a ``checkpoint`` file (TensorFlow's CheckpointState message)."""

    def __init__(self, model_checkpoint_path: str = "", all_model_checkpoint_paths=None,
                 all_model_checkpoint_timestamps=None,
                 last_preserved_timestamp: float | None = None) -> None:
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths or [])
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps or [])
        self.last_preserved_timestamp = last_preserved_timestamp

    def to_text(self) -> str:
        lines = [f"model_checkpoint_path: {_quote(self.model_checkpoint_path)}"]
        lines += [f"all_model_checkpoint_paths: {_quote(p)}"
                  for p in self.all_model_checkpoint_paths]
        lines += [f"all_model_checkpoint_timestamps: {t!r}"
                  for t in self.all_model_checkpoint_timestamps]
        if self.last_preserved_timestamp is not None:
            lines.append(f"last_preserved_timestamp: {self.last_preserved_timestamp!r}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_text(cls, text: str) -> CheckpointState:
        state = cls()
        pos = 0
        text = text.strip()
        while pos < len(text):
            m = _FIELD.match(text, pos)
            if m is None:
                raise ValueError(f"cannot parse checkpoint state near: {text[pos:pos + 40]!r}")
            key, raw = m.group(1), m.group(2)
            pos = m.end()
            if key == "model_checkpoint_path":
                state.model_checkpoint_path = _unquote(raw)
            elif key == "all_model_checkpoint_paths":
                state.all_model_checkpoint_paths.append(_unquote(raw))
            elif key == "all_model_checkpoint_timestamps":
                state.all_model_checkpoint_timestamps.append(float(raw))
            elif key == "last_preserved_timestamp":
                state.last_preserved_timestamp = float(raw)
            else:
                raise ValueError(f"unknown field '{key}' in checkpoint state")
        return state

    def __eq__(self, other) -> bool:
        return isinstance(other, CheckpointState) and vars(self) == vars(other)

    def __str__(self) -> str:
        return self.to_text()

    __repr__ = __str__


_FIELD = re.compile(r'\s*(\w+)\s*:\s*("(?:[^"\\\n]|\\.)*"|[^\s"]+)\s*')
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "'": "\\'"}


def _quote(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _unquote(raw: str) -> str:
    if len(raw) < 2 or raw[0] != '"' or raw[-1] != '"':
        raise ValueError(f"expected a quoted string, got {raw!r}")
    body = raw[1:-1].encode("utf-8")
    out = bytearray()
    i = 0
    simple = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("\\"): 92, ord('"'): 34,
              ord("'"): 39, ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("v"): 11}
    while i < len(body):
        c = body[i]
        if c != 92:
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in simple:
            out.append(simple[nxt])
            i += 2
        elif 48 <= nxt <= 55:
            digits = re.match(rb"[0-7]{1,3}", body[i + 1:i + 4]).group(0)
            out.append(int(digits, 8) & 0xFF)
            i += 1 + len(digits)
        elif nxt in (ord("x"), ord("X")):
            digits = re.match(rb"[0-9a-fA-F]{1,2}", body[i + 2:i + 4]).group(0)
            out.append(int(digits, 16))
            i += 2 + len(digits)
        else:
            raise ValueError(f"invalid escape in {raw!r}")
    return out.decode("utf-8", "surrogateescape")


# -- reading and writing the state file -----------------------------------------------------------
def _state_path(checkpoint_dir: str, latest_filename: str | None) -> str:
    return os.path.join(checkpoint_dir, latest_filename or "checkpoint")


def _state_entry(save_dir: str, path: str, save_relative_paths: bool) -> str:
    """How TensorFlow writes `path` into the state file of `save_dir`: a relative path
    relative to a relative `save_dir`; an absolute one relative to `save_dir` only with
    `save_relative_paths` (the object-based checkpoints' way), else as given."""
    if os.path.isabs(path):
        return os.path.relpath(path, save_dir) if save_relative_paths else path
    if not os.path.isabs(save_dir):
        return os.path.relpath(path, save_dir)
    return path


def generate_checkpoint_state_proto(save_dir: str, model_checkpoint_path: str,
                                    all_model_checkpoint_paths=None,
                                    all_model_checkpoint_timestamps=None,
                                    last_preserved_timestamp=None,
                                    save_relative_paths: bool = False) -> CheckpointState:
    """A `CheckpointState` whose list ends with `model_checkpoint_path`. Paths are
    written as TensorFlow writes them (`_state_entry`): absolute ones as given unless
    `save_relative_paths`."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    stamps = list(all_model_checkpoint_timestamps or [])
    if stamps and len(stamps) != len(paths):
        raise ValueError(
            f"Checkpoint timestamps, if provided, must match checkpoint paths (got "
            f"paths {paths} and timestamps {stamps})")
    return CheckpointState(
        model_checkpoint_path=_state_entry(save_dir, model_checkpoint_path,
                                           save_relative_paths),
        all_model_checkpoint_paths=[_state_entry(save_dir, p, save_relative_paths)
                                    for p in paths],
        all_model_checkpoint_timestamps=stamps,
        last_preserved_timestamp=last_preserved_timestamp)


def update_checkpoint_state(save_dir: str, model_checkpoint_path: str,
                            all_model_checkpoint_paths=None, latest_filename: str | None = None,
                            all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None) -> None:
    """Atomically (re)write the state file of `save_dir`; paths are written as given
    (TensorFlow's public function; ``Saver(save_relative_paths=True)`` and the
    object-based checkpoints write them relative to `save_dir`).

    Example
    -------
    >>> import tempfile
    >>> d = tempfile.mkdtemp()
    >>> update_checkpoint_state(d, "model.ckpt-1")
    >>> print(open(d + "/checkpoint").read().splitlines()[0])
    model_checkpoint_path: "model.ckpt-1"
    """
    update_checkpoint_state_internal(
        save_dir, model_checkpoint_path, all_model_checkpoint_paths, latest_filename,
        all_model_checkpoint_timestamps=all_model_checkpoint_timestamps,
        last_preserved_timestamp=last_preserved_timestamp)


def update_checkpoint_state_internal(save_dir: str, model_checkpoint_path: str,
                                     all_model_checkpoint_paths=None,
                                     latest_filename: str | None = None,
                                     save_relative_paths: bool = False,
                                     all_model_checkpoint_timestamps=None,
                                     last_preserved_timestamp=None) -> None:
    """`update_checkpoint_state` with TensorFlow's `save_relative_paths` switch (what
    ``CheckpointManager`` uses, with True)."""
    path, data = checkpoint_state_file(
        save_dir, model_checkpoint_path, all_model_checkpoint_paths, latest_filename,
        all_model_checkpoint_timestamps, last_preserved_timestamp,
        save_relative_paths=save_relative_paths)
    atomic_write(path, lambda f: f.write(data))


def checkpoint_state_file(save_dir: str, model_checkpoint_path: str,
                          all_model_checkpoint_paths=None, latest_filename: str | None = None,
                          all_model_checkpoint_timestamps=None,
                          last_preserved_timestamp=None,
                          save_relative_paths: bool = True) -> tuple[str, bytes]:
    """``(path, bytes)`` of the state file `update_checkpoint_state` writes (`Saver.save`
    writes it with `write_durably`, after the checkpoint's files). Relative paths by
    default, as object-based checkpoints write them; the Saver passes its own setting."""
    path = _state_path(save_dir, latest_filename)
    if os.path.abspath(path) == os.path.abspath(model_checkpoint_path):
        raise RuntimeError(
            f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint "
            "state. Please use a different save path.")
    state = generate_checkpoint_state_proto(
        save_dir, model_checkpoint_path, all_model_checkpoint_paths,
        all_model_checkpoint_timestamps, last_preserved_timestamp,
        save_relative_paths=save_relative_paths)
    return path, state.to_text().encode("utf-8")


def get_checkpoint_state(checkpoint_dir: str,
                         latest_filename: str | None = None) -> CheckpointState | None:
    """The parsed state file of `checkpoint_dir` with relative paths joined to it, or
    None if there is none (or it cannot be parsed; a warning is logged).

    Example
    -------
    >>> import tempfile
    >>> get_checkpoint_state(tempfile.mkdtemp()) is None
    True
    """
    path = _state_path(checkpoint_dir, latest_filename)
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        logger.warning("%s: %s; checkpoint state ignored", path, e)
        return None
    try:
        state = CheckpointState.from_text(text)
        if not state.model_checkpoint_path:
            raise ValueError("model_checkpoint_path is missing")
    except (ValueError, AttributeError, IndexError) as e:
        logger.warning("%s: invalid checkpoint state (%s); checkpoint ignored", path, e)
        return None

    def full(p: str) -> str:
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)

    state.model_checkpoint_path = full(state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [full(p) for p in state.all_model_checkpoint_paths]
    return state


def latest_checkpoint(checkpoint_dir: str, latest_filename: str | None = None) -> str | None:
    """The prefix of the newest checkpoint in `checkpoint_dir` (what `Saver.save`
    returned), or None when there is none or its file is missing."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None:
        return None
    if checkpoint_exists(state.model_checkpoint_path):
        return state.model_checkpoint_path
    logger.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


# -- checkpoint files ---------------------------------------------------------------------------
def checkpoint_file_path(prefix: str) -> str:
    """The file holding checkpoint `prefix`: the prefix itself (``model.ckpt-200``), or
    ``prefix.index`` for a checkpoint in TensorFlow's format."""
    return index_file(prefix) if is_bundle(prefix) else prefix


def checkpoint_exists(checkpoint_prefix: str) -> bool:
    """Whether a checkpoint file exists for `checkpoint_prefix`."""
    return os.path.isfile(checkpoint_file_path(checkpoint_prefix))


def get_checkpoint_mtimes(checkpoint_prefixes) -> list[float]:
    """Modification times of the checkpoints that exist among `checkpoint_prefixes`."""
    out = []
    for prefix in checkpoint_prefixes:
        with contextlib.suppress(OSError):
            out.append(os.stat(checkpoint_file_path(prefix)).st_mtime)
    return out


def remove_checkpoint(checkpoint_prefix: str, checkpoint_format_version=None,
                      meta_graph_suffix: str = "meta") -> None:
    """Delete the files of checkpoint `checkpoint_prefix` (missing ones are ignored)."""
    for path in (checkpoint_file_path(checkpoint_prefix),
                 f"{checkpoint_prefix}.{meta_graph_suffix}", *bundle_data_files(checkpoint_prefix)):
        _durable.pop(os.path.abspath(path), None)
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)

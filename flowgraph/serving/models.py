"""The models a server serves and their versions.

State. Each served model has a `VersionManager` watching its base directory (an
Estimator's ``export_dir_base``) whose numeric subdirectories are versions. A poller
rescans it every ``poll_interval`` seconds and keeps exactly one *servable*: the
highest version that holds a ``saved_model.json`` (or TensorFlow's ``saved_model.pb``
or ``saved_model.pbtxt``) and loads. A new servable is loaded
completely (its own graph and session) before it replaces the old one, so requests
never wait for a load.

Invariant. Every request takes a reference to the current servable when it starts
and drops it when it ends; a replaced servable is closed only when its last reference
is dropped. A request is therefore answered entirely by one version::

    t ──────────────────────────────────────────────>
    poller:   load v2 ........ swap(v1 -> v2)
    request A:   [acquire v1 ............ release v1]   -> v1 closes here
    request B:                    [acquire v2 .. release v2]

Several models come from a model config file (`read_model_config`): TensorFlow
Serving's text format restricted to ``name``, ``base_path`` and ``model_platform``, or
the same structure as JSON.

Example
-------
>>> read_model_config_text('model_config_list { config { name: "a" base_path: "/m/a" } }')
[('a', '/m/a')]
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading

from flowgraph.saved_model import constants as sc

__all__ = ["VersionManager", "read_model_config", "read_model_config_text"]

logger = logging.getLogger("flowgraph.serving")


def _model_file(version_dir: str) -> str | None:
    """The file that makes `version_dir` a SavedModel: flowgraph's ``saved_model.json``,
    or TensorFlow's ``saved_model.pb`` or its text form ``saved_model.pbtxt`` (a TF1
    export, loaded by `flowgraph.saved_model.tf_saved_model`), else None."""
    for name in (sc.SAVED_MODEL_FILENAME_JSON, sc.SAVED_MODEL_FILENAME_PB,
                 sc.SAVED_MODEL_FILENAME_PBTXT):
        path = os.path.join(version_dir, name)
        if os.path.isfile(path):
            return path
    return None


class _Servable:
    def __init__(self, version: int, path: str, model) -> None:
        self.version = version
        self.path = path
        self.model = model
        self.refs = 0
        self.retired = False


class VersionManager:
    """Keeps the highest loadable version of `model_dir` loaded (see the module essay)."""

    def __init__(self, model_dir: str, tags=(sc.SERVING,)) -> None:
        self.model_dir = model_dir
        self.tags = tuple(tags)
        self._lock = threading.Lock()
        self._current: _Servable | None = None
        self._failed: dict[int, float] = {}  # version -> mtime of the file that failed

    def _versions(self) -> list[tuple[int, str]]:
        try:
            names = os.listdir(self.model_dir)
        except OSError:
            return []
        found = []
        for n in names:
            path = os.path.join(self.model_dir, n)
            if n.isdigit() and _model_file(path) is not None:
                found.append((int(n), path))
        return sorted(found, reverse=True)

    def poll(self) -> None:
        """Load the newest loadable version if it is not the one being served."""
        from flowgraph.saved_model.predictor import LoadedModel

        for version, path in self._versions():
            current = self._current
            if current is not None and current.version == version:
                return
            marker = _model_file(path)
            if marker is None:
                continue
            mtime = os.path.getmtime(marker)
            if self._failed.get(version) == mtime:
                continue
            try:
                model = LoadedModel(path, tags=self.tags)
            except Exception as e:  # a bad export must not stop the server
                logger.error("Could not load version %d from %s: %s", version, path, e)
                self._failed[version] = mtime
                continue
            self._swap(_Servable(version, path, model))
            logger.info("Serving version %d from %s", version, path)
            return

    def _swap(self, new: _Servable | None) -> None:
        with self._lock:
            old, self._current = self._current, new
            if old is not None:
                old.retired = True
                close = old.refs == 0
        if old is not None and close:
            old.model.close()

    def acquire(self) -> _Servable | None:
        with self._lock:
            s = self._current
            if s is not None:
                s.refs += 1
            return s

    def release(self, s: _Servable) -> None:
        with self._lock:
            s.refs -= 1
            close = s.retired and s.refs == 0
        if close:
            s.model.close()

    def close(self) -> None:
        self._swap(None)


# -- model config files ---------------------------------------------------------------------------
_CONFIG = re.compile(r"\bconfig\s*:?\s*\{([^{}]*)\}")
_FIELD = re.compile(r"\s*(\w+)\s*:\s*(\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|[^\s\"']+)\s*")
_KNOWN = {"name", "base_path", "model_platform"}


def _config_error(path: str, message: str) -> ValueError:
    return ValueError(f"Model config {path}: {message}. The supported subset is "
                      "model_config_list { config { name: '...' base_path: '...' "
                      "model_platform: 'tensorflow' } ... } (or the same as JSON)")


def _check_entries(entries: list[dict], path: str) -> list[tuple[str, str]]:
    models = []
    for i, entry in enumerate(entries):
        unknown = sorted(set(entry) - _KNOWN)
        if unknown:
            raise _config_error(path, f"config {i} has unsupported field(s) {unknown}")
        name, base = entry.get("name"), entry.get("base_path")
        if not isinstance(name, str) or not name or not isinstance(base, str) or not base:
            raise _config_error(path, f"config {i} needs a non-empty name and base_path")
        if entry.get("model_platform", "tensorflow") != "tensorflow":
            raise _config_error(path, f"config {i} ({name}): model_platform must be "
                                      f"'tensorflow', not {entry['model_platform']!r}")
        if any(name == n for n, _ in models):
            raise _config_error(path, f"model name {name!r} appears twice")
        models.append((name, base))
    if not models:
        raise _config_error(path, "no model config entries found")
    return models


def read_model_config_text(text: str, path: str = "<text>") -> list[tuple[str, str]]:
    """``[(name, base_path), ...]`` from a model config in TensorFlow Serving's text
    format (``model_config_list { config { name: ... base_path: ... } ... }``) or JSON
    (``{"model_config_list": {"config": [{"name": ..., "base_path": ...}]}}``)."""
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError as e:
            raise _config_error(path, f"malformed JSON ({e})") from None
        if isinstance(data, dict):
            data = data.get("model_config_list", {})
            data = data.get("config", []) if isinstance(data, dict) else None
        if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
            raise _config_error(path, "expected a list of config objects")
        return _check_entries(data, path)
    text = re.sub(r"#[^\n]*", "", text)
    body = re.fullmatch(r"\s*model_config_list\s*:?\s*\{(.*)\}\s*", text, re.S)
    if body is None:
        raise _config_error(path, "expected one model_config_list { ... } block")
    entries, rest = [], _CONFIG.sub("", body.group(1))
    if rest.strip():
        raise _config_error(path, f"unexpected text {rest.strip()[:40]!r}")
    for block in _CONFIG.findall(body.group(1)):
        entry, pos = {}, 0
        for m in _FIELD.finditer(block):
            if m.start() != pos:
                break
            value = m.group(2)
            if value[0] in "\"'":
                value = value[1:-1].encode().decode("unicode_escape")
            entry[m.group(1)] = value
            pos = m.end()
        if block[pos:].strip():
            raise _config_error(path, f"cannot parse {block[pos:].strip()[:40]!r}")
        entries.append(entry)
    return _check_entries(entries, path)


def read_model_config(path) -> list[tuple[str, str]]:
    """`read_model_config_text` of file `path`; relative base paths are taken relative
    to the file's directory."""
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        models = read_model_config_text(f.read(), path)
    here = os.path.dirname(os.path.abspath(path))
    return [(name, os.path.join(here, base)) for name, base in models]

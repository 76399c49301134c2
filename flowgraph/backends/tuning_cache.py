"""A small JSON file of measurements kept between processes (GEMM tiles, device profiles).

Entries are keyed by a string naming what was measured (a device, its driver, the kernel
version); a reader validates what it gets and measures again when an entry is missing or
malformed, so a damaged or foreign file costs a measurement, never a wrong answer.
Writes are atomic (a temporary file renamed over the old one) and a read-only home only
means measuring again in the next process.

Example
-------
>>> import tempfile, os
>>> os.environ["FLOWGRAPH_CACHE_DIR"] = tempfile.mkdtemp()
>>> store("example.json", "device-1", {"rate": 2.0})
>>> load("example.json", "device-1")
{'rate': 2.0}
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time


def cache_dir() -> str:
    """``$FLOWGRAPH_CACHE_DIR``, else ``flowgraph`` under ``$XDG_CACHE_HOME`` or
    ``~/.cache``."""
    base = os.environ.get("FLOWGRAPH_CACHE_DIR")
    if base:
        return base
    return os.path.join(os.environ.get("XDG_CACHE_HOME")
                        or os.path.join(os.path.expanduser("~"), ".cache"), "flowgraph")


def _read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load(filename: str, key: str):
    """The entry `key` of cache file `filename`, or None."""
    return _read(os.path.join(cache_dir(), filename)).get(key)


def store(filename: str, key: str, value) -> None:
    """Set entry `key` of cache file `filename` to `value` (JSON-serialisable)."""
    path = os.path.join(cache_dir(), filename)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = _read(path)
        data[key] = value
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=f".{filename}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def best_time(fn, number: int, sync, repeat: int = 3) -> float:
    """Seconds per call of `fn`: one warm-up call, then the best of `repeat` batches of
    `number` calls, each batch ended by `sync()` (a device's queue finish, or nothing)."""
    fn()
    sync()
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / number)
    return best

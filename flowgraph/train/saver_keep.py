"""Which checkpoints a `tf.train.Saver` keeps: ``max_to_keep`` and
``keep_checkpoint_every_n_hours``.

State: the recent checkpoints, oldest first, as ``(prefix, time saved)``; those pushed
out of the ``max_to_keep`` most recent and waiting to be deleted; the time after which
the next pushed-out checkpoint is kept for good (one per ``keep_checkpoint_every_n_hours``).
Invariant: at most ``max_to_keep`` recent checkpoints (none are tracked when it is 0 or
None: every checkpoint is kept). With ``max_to_keep=2``::

    record a   recent [a]
    record b   recent [a, b]
    record c   recent [b, c]   to delete [a]   -> `delete_old` removes a's files
    record c   recent [b, c]                    (saved again: moved to the end)

Deleting comes after the state file naming the recent ones is durable (the Saver's
order of operations), so a crash never leaves a state file naming a deleted checkpoint.

Example
-------
>>> keeper = CheckpointKeeper(max_to_keep=2, keep_every_n_hours=10000.0)
>>> for prefix in ("m-1", "m-2", "m-3"):
...     keeper.record(prefix)
>>> keeper.paths, [p for p, _ in keeper.to_delete]
(['m-2', 'm-3'], ['m-1'])
"""

from __future__ import annotations

import logging
import time

import numpy as np

from flowgraph.train import checkpoint_state as _state

__all__ = ["CheckpointKeeper"]

logger = logging.getLogger("tensorflow")


class CheckpointKeeper:
    """The recent checkpoints of one Saver and the ones to delete (see the module)."""

    def __init__(self, max_to_keep: int | None, keep_every_n_hours: float) -> None:
        self.max_to_keep = max_to_keep
        self.keep_every_n_hours = keep_every_n_hours
        self.recent: list[tuple[str, float]] = []
        self.to_delete: list[tuple[str, float]] = []
        self.next_keep_time = time.time() + keep_every_n_hours * 3600
        self.last_preserved_timestamp = time.time()

    @property
    def paths(self) -> list[str]:
        """The prefixes of the recent checkpoints, oldest first."""
        return [p for p, _ in self.recent]

    @property
    def timestamps(self) -> list[float]:
        """The times the recent checkpoints were saved (those known), oldest first."""
        return [t for _, t in self.recent if np.isfinite(t)]

    def set_paths(self, paths: list[str]) -> None:
        """Track `paths`, times unknown (`Saver.set_last_checkpoints`)."""
        if not isinstance(paths, list):
            raise TypeError(f"last_checkpoints must be a list, got {type(paths)}")
        self.recent = [(p, np.inf) for p in paths]

    def set_paths_with_time(self, paths_with_time) -> None:
        """Track ``(prefix, timestamp)`` pairs (`Saver.set_last_checkpoints_with_time`)."""
        if not isinstance(paths_with_time, list):
            raise TypeError("last_checkpoints_with_time must be a list of (path, time)")
        self.recent = [(p, float(t)) for p, t in paths_with_time]

    def record(self, path: str) -> None:
        """`path` was just saved: it becomes the most recent; the oldest beyond
        ``max_to_keep`` move to `to_delete`."""
        if not self.max_to_keep:
            return
        self.recent = [(p, t) for p, t in self.recent if p != path]
        self.recent.append((path, time.time()))
        while len(self.recent) > self.max_to_keep:
            self.to_delete.append(self.recent.pop(0))

    def delete_old(self, meta_graph_suffix: str) -> None:
        """Delete the files of the checkpoints in `to_delete`, except one per
        ``keep_every_n_hours`` (kept for good); a failed delete is logged."""
        while self.to_delete:
            path, stamp = self.to_delete.pop(0)
            if stamp > self.next_keep_time:
                # keep_checkpoint_every_n_hours: this one is kept for good.
                self.next_keep_time += self.keep_every_n_hours * 3600
                self.last_preserved_timestamp = stamp
                continue
            try:
                _state.remove_checkpoint(path, meta_graph_suffix=meta_graph_suffix)
            except OSError as e:
                logger.warning("Ignoring: could not delete old checkpoint %s: %s", path, e)

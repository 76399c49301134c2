"""`tf.train.CheckpointManager`: numbered `tf.train.Checkpoint` saves in one directory,
keeping the newest `max_to_keep` (plus one every `keep_checkpoint_every_n_hours`).

State: `checkpoints`, the kept prefixes oldest first with their save times, and the
directory's ``checkpoint`` state file, rewritten atomically after every save (once before
deleting old checkpoints, once after), so `tf.train.latest_checkpoint(directory)` and a
new manager on the same directory both see the newest checkpoint, even after a crash in
between. A new manager takes the kept list over from that file.

Example
-------
>>> import os, tempfile, flowgraph as tf
>>> d = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     ckpt = tf.train.Checkpoint(w=tf.Variable(1.0, name="w"))
...     manager = tf.train.CheckpointManager(ckpt, d, max_to_keep=2)
...     with tf.Session() as sess:
...         sess.run(tf.global_variables_initializer())
...         for _ in range(3):
...             _ = manager.save(session=sess)
...     print([os.path.basename(p) for p in manager.checkpoints])
['ckpt-2', 'ckpt-3']
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from flowgraph.train import checkpoint_state as _state
from flowgraph.train.checkpoint_object import session_for

__all__ = ["CheckpointManager"]

logger = logging.getLogger("tensorflow")


class CheckpointManager:
    """Saves `checkpoint` as ``directory/checkpoint_name-N`` and deletes old saves.

    Parameters
    ----------
    checkpoint : tf.train.Checkpoint
        What to save.
    directory : str
        Where (created if missing); its ``checkpoint`` file lists the kept saves.
    max_to_keep : int or None
        How many recent checkpoints to keep; None keeps all.
    keep_checkpoint_every_n_hours : float, optional
        Also keep one checkpoint per this many hours, for good.
    checkpoint_name : str
        The files' prefix (``ckpt``).
    step_counter, checkpoint_interval
        With both, `save` writes only when `step_counter` (a variable) advanced by at
        least `checkpoint_interval` since the last save.
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name: str = "ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None) -> None:
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"CheckpointManager: max_to_keep must be positive or None, got "
                             f"{max_to_keep}")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("CheckpointManager: checkpoint_interval needs step_counter")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_step = None
        self._latest = None
        self._kept: list[tuple[str, float]] = []  # (prefix, save time), oldest first
        self._last_preserved = time.time()
        state = _state.get_checkpoint_state(self._directory)
        if state is not None:
            times = list(state.all_model_checkpoint_timestamps)
            paths = list(state.all_model_checkpoint_paths)
            if len(times) != len(paths):
                times = _state.get_checkpoint_mtimes(paths) if paths else []
            if len(times) == len(paths):
                self._kept = [(p, t) for p, t in zip(paths, times)
                              if _state.checkpoint_exists(p)]
            if state.last_preserved_timestamp is not None:
                self._last_preserved = state.last_preserved_timestamp
            if _state.checkpoint_exists(state.model_checkpoint_path):
                self._latest = state.model_checkpoint_path

    @property
    def directory(self) -> str:
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def latest_checkpoint(self) -> str | None:
        """The prefix of the newest checkpoint, or None."""
        return self._latest

    @property
    def checkpoints(self) -> list[str]:
        """The kept checkpoints' prefixes, oldest first."""
        return [p for p, _ in self._kept]

    def restore_or_initialize(self, session=None):
        """Restore the latest checkpoint into `session` and return its path, or, when
        there is none, call `init_fn` (if given) and return None."""
        if self._latest is not None:
            sess = session_for(session, "CheckpointManager.restore_or_initialize")
            self._checkpoint.restore(self._latest).run_restore_ops(sess)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None

    def _interval_passed(self, sess) -> bool:
        if self._interval is None:
            return True
        step = int(np.asarray(sess.run(self._step_counter)))
        if self._last_step is not None and step - self._last_step < self._interval:
            return False
        self._last_step = step
        return True

    def save(self, checkpoint_number=None, check_interval: bool = True, session=None):
        """Save a new checkpoint and delete the ones no longer kept; returns its prefix
        (None when `check_interval` and the step interval has not passed).

        `checkpoint_number` (an int or an integer variable) numbers the file; by default
        the checkpoint's `save_counter` after adding one. `session` is a flowgraph
        extension for graph mode (TensorFlow uses the default session).
        """
        sess = session_for(session, "CheckpointManager.save")
        if check_interval and not self._interval_passed(sess):
            return None
        counted = self._checkpoint._next_save_number(sess)
        if checkpoint_number is None:
            checkpoint_number = counted
        elif not isinstance(checkpoint_number, int | np.integer):
            checkpoint_number = int(np.asarray(sess.run(checkpoint_number)))
        os.makedirs(self._directory, exist_ok=True)
        path = self._checkpoint.write(f"{self._prefix}-{int(checkpoint_number)}", session=sess)
        self._kept = [(p, t) for p, t in self._kept if p != path] + [(path, time.time())]
        self._latest = path
        self._record_state()
        self._sweep()
        self._record_state()
        return path

    def _sweep(self) -> None:
        if self._max_to_keep is None:
            return
        while len(self._kept) > self._max_to_keep:
            path, stamp = self._kept.pop(0)
            if (self._keep_hours is not None
                    and stamp - self._keep_hours * 3600 >= self._last_preserved):
                self._last_preserved = stamp
                continue  # kept for good, no longer managed
            try:
                _state.remove_checkpoint(path)
            except OSError as e:
                logger.warning("CheckpointManager: could not delete %s: %s", path, e)

    def _record_state(self) -> None:
        _state.update_checkpoint_state_internal(
            self._directory, self._latest, save_relative_paths=True,
            all_model_checkpoint_paths=self.checkpoints,
            all_model_checkpoint_timestamps=[t for _, t in self._kept],
            last_preserved_timestamp=self._last_preserved)

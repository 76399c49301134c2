"""Periodic checkpoints: `CheckpointSaverHook` and its `CheckpointSaverListener`s.

Right after each session is created, the hook writes ``graph.pbtxt``
(`flowgraph.train.graph_pbtxt`) and saves once (the state at the current global step);
then it saves whenever its timer fires, and once more at `end` unless the last save
already was at the final step. Each save writes ``model.ckpt-STEP`` through the Saver
(atomic files, see docs/checkpoints.md) and a ``SessionLog.CHECKPOINT`` event to the
directory's event file. Listeners run around each save; a listener whose `after_save`
returns True stops training.

Example
-------
>>> import tempfile, flowgraph as tf
>>> ckpt_dir = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     train = step.assign_add(1)
...     hooks = [tf.train.CheckpointSaverHook(ckpt_dir, save_steps=2),
...              tf.train.StopAtStepHook(last_step=5)]
...     with tf.train.SingularMonitoredSession(hooks=hooks) as sess:
...         while not sess.should_stop():
...             _ = sess.run(train)
>>> tf.train.latest_checkpoint(ckpt_dir).endswith("model.ckpt-5")
True
"""

from __future__ import annotations

import logging
import os

from flowgraph.train.basic_hooks_timers import (
    SecondOrStepTimer,
    after_wake,
    global_step_read,
    summary_writer_for,
)
from flowgraph.train.graph_pbtxt import write_graph_pbtxt
from flowgraph.train.hook_schedule import FixedRequest
from flowgraph.train.meta_graph_export import meta_graph_bytes
from flowgraph.train.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = ["CheckpointSaverHook", "CheckpointSaverListener"]

logger = logging.getLogger("tensorflow")


class CheckpointSaverListener:
    """Callbacks around the saves of a `CheckpointSaverHook` (all no-ops by default).

    Example
    -------
    >>> import flowgraph as tf
    >>> class StopAfterFirstSave(tf.train.CheckpointSaverListener):
    ...     def after_save(self, session, global_step_value):
    ...         return True  # request a stop
    """

    def begin(self) -> None:
        """Called from the hook's `begin` (the graph can still be changed)."""

    def before_save(self, session, global_step_value) -> None:
        """Called before each save."""

    def after_save(self, session, global_step_value) -> bool | None:
        """Called after each save; return True to request that training stop."""
        return None

    def end(self, session, global_step_value) -> None:
        """Called at the end of training, after the final save."""


class CheckpointSaverHook(FixedRequest, SessionRunHook):
    """Saves checkpoints every `save_secs` seconds or every `save_steps` steps.

    Parameters
    ----------
    checkpoint_dir : str
        Directory of the checkpoints (and of the event file with the CHECKPOINT logs).
    save_secs, save_steps : int, optional
        Exactly one of them.
    saver : Saver, optional
        The saver; default: the scaffold's, else the single one of the ``SAVERS``
        collection.
    checkpoint_basename : str
        Checkpoint file prefix inside `checkpoint_dir`.
    scaffold : Scaffold, optional
        Source of the saver (not together with `saver`).
    listeners : list of CheckpointSaverListener, optional
    save_graph_def : bool
        Accepted for compatibility; the graph goes to the event file through the
        directory's cached FileWriter.
    """

    def __init__(self, checkpoint_dir: str, save_secs: int | None = None,
                 save_steps: int | None = None, saver=None,
                 checkpoint_basename: str = "model.ckpt", scaffold=None, listeners=None,
                 save_graph_def: bool = True) -> None:
        logger.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._steps_per_run = 1
        self._save_graph_def = save_graph_def

    def _set_steps_per_run(self, steps_per_run: int) -> None:
        self._steps_per_run = steps_per_run

    def begin(self) -> None:
        self._summary_writer = summary_writer_for(self._checkpoint_dir)
        self._global_step_tensor = global_step_read("CheckpointSaverHook")
        self._args = SessionRunArgs(self._global_step_tensor)
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord) -> None:
        global_step = session.run(self._global_step_tensor)
        if self._save_graph_def:
            # As TensorFlow: the finished graph, as text, beside the checkpoints.
            write_graph_pbtxt(session.graph, self._checkpoint_dir)
        # As TensorFlow (whatever save_graph_def says): the graph and a meta graph holding
        # the saver's def go to the event file again, after those its FileWriter began with.
        saver = self._get_saver(session.graph)
        self._summary_writer.add_graph(session.graph)
        self._summary_writer.add_meta_graph(
            meta_graph_bytes(session.graph, saver.saver_def if saver is not None else None))
        # The state right after (re)creation: a restart resumes from here at worst.
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def before_run(self, run_context) -> SessionRunArgs:
        return self._args

    def after_run(self, run_context, run_values) -> None:
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            # The read may predate this step's increment: check the current value.
            global_step = run_context.session.run(self._global_step_tensor)
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    # Schedule (flowgraph.train.hook_schedule): acts when its timer fires.
    def _wake(self):
        return after_wake(self._timer, self._steps_per_run)

    def end(self, session) -> None:
        last_step = session.run(self._global_step_tensor)
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step) -> bool:
        """Save a checkpoint at `step`; True when a listener requests a stop."""
        from flowgraph.summary.event_format import SessionLog

        step = int(step)
        logger.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        logger.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver(session.graph).save(session, self._save_path, global_step=step,
                               write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        logger.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                logger.info("A CheckpointSaverListener requested that training be stopped. "
                            "listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self, graph=None):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from flowgraph.framework.graph import GraphKeys, get_default_graph

        savers = (graph or get_default_graph()).get_collection(GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {GraphKeys.SAVERS}. Please add a saver to the "
                "collection or provide a saver or scaffold.")
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {GraphKeys.SAVERS}. Please indicate "
                "which one to use by passing it to the constructor.")
        self._saver = savers[0]
        return self._saver

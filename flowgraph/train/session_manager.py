"""`SessionManager`: create a session whose model is ready to run.

A model is *ready* when its `ready_op` returns an empty list of uninitialized
variables. Three ways to get there:

    prepare_session   (chief)   restore the latest checkpoint if there is one, else
                                run init_op / init_fn; then local_init_op; check ready
    recover_session             restore only; report whether it worked
    wait_for_session  (worker)  create sessions until another task (the chief) has
                                initialized the shared variables; then local_init_op

`local_init_op` (local variables, tables) runs on every new session, but only once
`ready_for_local_init_op` reports nothing missing (the global variables it may read).

The session creators of monitored sessions live here too: `ChiefSessionCreator`
(finalize the scaffold, then `prepare_session`) and `WorkerSessionCreator` (finalize,
then `wait_for_session`).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     v = tf.Variable(3.0, name="v")
...     sm = tf.train.SessionManager(ready_op=tf.report_uninitialized_variables())
...     sess = sm.prepare_session("", init_op=tf.global_variables_initializer())
...     print(sess.run(v))
...     sess.close()
3.0
"""

from __future__ import annotations

import logging
import time

import numpy as np

__all__ = ["ChiefSessionCreator", "SessionCreator", "SessionManager", "WorkerSessionCreator"]

logger = logging.getLogger("tensorflow")


def _maybe_name(obj) -> str:
    if obj is None:
        return "None"
    return getattr(obj, "name", None) or f"<no name for {type(obj).__name__}>"


def _ready(op, sess, msg: str):
    """``(True, None)`` when `op` is None or reports nothing uninitialized, else
    ``(False, "Variables not initialized: a, b")``."""
    if op is None:
        return True, None
    from flowgraph.framework import errors

    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            logger.warning("%s : error [%s]", msg, e)
            raise
        return False, str(e)
    value = np.asarray(value) if value is not None else None
    if value is None or value.dtype == np.int32 or value.size == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v)
                      for v in value.ravel())
    return False, "Variables not initialized: " + names


class SessionManager:
    """Creates sessions for training, from checkpoints or initializers.

    Parameters
    ----------
    local_init_op : Operation, optional
        Run on every new session once `ready_for_local_init_op` passes.
    ready_op : Tensor, optional
        1-D string tensor of uninitialized variable names (empty when ready).
    ready_for_local_init_op : Tensor, optional
        Checked before `local_init_op` (requires `local_init_op`).
    graph : Graph, optional
        Default: the default graph.
    recovery_wait_secs : float
        Pause between checks while waiting for a checkpoint or a ready model.
    local_init_run_options : RunOptions, optional
    local_init_feed_dict : dict, optional
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None,
                 graph=None, recovery_wait_secs: float = 30, local_init_run_options=None,
                 local_init_feed_dict=None) -> None:
        if graph is None:
            from flowgraph.framework.graph import get_default_graph

            graph = get_default_graph()
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError("If you pass a ready_for_local_init_op you must also pass a "
                             f"local_init_op , ready_for_local_init_op [{ready_for_local_init_op}]")
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph
        self._recovery_wait_secs = recovery_wait_secs
        self._target = None
        self._local_init_run_options = local_init_run_options

    # -- restoring -------------------------------------------------------------------------------
    def _restore_checkpoint(self, master: str, saver=None, checkpoint_dir=None,
                            checkpoint_filename_with_path=None,
                            wait_for_checkpoint: bool = False, max_wait_secs: float = 7200,
                            config=None):
        """A new session and whether a checkpoint was restored into it."""
        from flowgraph.runtime.session import Session
        from flowgraph.train.checkpoint_state import get_checkpoint_state

        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and "
                             "checkpoint_filename_with_path.")
        self._target = master
        sess = Session(master, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        try:
            if checkpoint_filename_with_path:
                saver.restore(sess, checkpoint_filename_with_path)
                return sess, True
            waited = 0.0
            ckpt = get_checkpoint_state(checkpoint_dir)
            while not ckpt or not ckpt.model_checkpoint_path:
                if not (wait_for_checkpoint and waited < max_wait_secs):
                    return sess, False
                logger.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                ckpt = get_checkpoint_state(checkpoint_dir)
            saver.restore(sess, ckpt.model_checkpoint_path)
            saver.recover_last_checkpoints(ckpt.all_model_checkpoint_paths)
        except BaseException:
            sess.close()
            raise
        return sess, True

    def prepare_session(self, master: str, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint: bool = False,
                        max_wait_secs: float = 7200, config=None, init_feed_dict=None,
                        init_fn=None):
        """A session with the model restored from the latest checkpoint of
        `checkpoint_dir` (or from `checkpoint_filename_with_path`) if there is one, else
        initialized with `init_op` and `init_fn(sess)`; then `local_init_op` is run and
        readiness checked.

        Raises
        ------
        RuntimeError
            Nothing can initialize the model, or after initialization `ready_op` still
            reports uninitialized variables (the message names them).
        """
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        try:
            if not restored:
                if init_op is None and not init_fn and self._local_init_op is None:
                    raise RuntimeError("Model is not initialized and no init_op or init_fn "
                                       "or local_init_op was given")
                if init_op is not None:
                    sess.run(init_op, feed_dict=init_feed_dict)
                if init_fn:
                    init_fn(sess)
            ok, msg = self._try_run_local_init_op(sess)
            if not ok:
                raise RuntimeError(
                    "Init operations did not make model ready for local_init.  Init op: "
                    f"{_maybe_name(init_op)}, init fn: {init_fn}, error: {msg}")
            ok, msg = self._model_ready(sess)
            if not ok:
                raise RuntimeError(
                    f"Init operations did not make model ready.  Init op: "
                    f"{_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                    f"{_maybe_name(self._local_init_op)}, error: {msg}")
        except BaseException:
            sess.close()
            raise
        return sess

    def recover_session(self, master: str, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint: bool = False,
                        max_wait_secs: float = 7200, config=None):
        """``(sess, True)`` when a checkpoint was restored and the model is ready;
        ``(sess, False)`` otherwise (the session is still usable, e.g. to initialize)."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs,
            config=config)
        local_ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not local_ok:
            logger.info("Restoring model from %s did not make model ready for local init: %s",
                        source, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            logger.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        logger.info("Restored model from %s", source)
        return sess, True

    def wait_for_session(self, master: str, config=None, max_wait_secs: float = float("Inf")):
        """Create sessions until the model is ready (initialized by another task), every
        `recovery_wait_secs`; DeadlineExceededError after `max_wait_secs`."""
        from flowgraph.framework import errors
        from flowgraph.runtime.session import Session

        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = Session(master, graph=self._graph, config=config)
            not_ready_msg = None
            local_ok, not_ready_local_msg = self._try_run_local_init_op(sess)
            if local_ok:
                ready, not_ready_msg = self._model_ready(sess)
                if ready:
                    return sess
            self._safe_close(sess)
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None,
                    f"Session was not ready after waiting {int(max_wait_secs)} secs. Ready for "
                    f"local init: {not_ready_local_msg}; ready: {not_ready_msg}.")
            logger.info("Waiting for model to be ready.  Ready_for_local_init_op:  %s, "
                        "ready: %s", not_ready_local_msg, not_ready_msg)
            time.sleep(self._recovery_wait_secs)

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _safe_close(sess) -> None:
        try:
            sess.close()
        except Exception:  # closing a half-made session is best effort
            pass

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        if self._local_init_op is None:
            return True, None
        ok, msg = self._model_ready_for_local_init(sess)
        if not ok:
            return False, msg
        logger.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict,
                 options=self._local_init_run_options)
        logger.info("Done running local_init_op.")
        return True, None


# -- session creators ----------------------------------------------------------------------------
class SessionCreator:
    """Creates a `Session` (the interface of the creators below)."""

    def create_session(self):
        raise NotImplementedError("create_session is not implemented for "
                                  f"{type(self).__name__}.")


class ChiefSessionCreator(SessionCreator):
    """Creates a session that restores the latest checkpoint of `checkpoint_dir` (or
    `checkpoint_filename_with_path`) or else initializes the model, as a chief does.

    Parameters
    ----------
    scaffold : Scaffold, optional
    master : str
        Session target.
    config : ConfigProto, optional
    checkpoint_dir : str, optional
    checkpoint_filename_with_path : str, optional
    """

    _recovery_wait_secs = 30  # the SessionManager's wait between readiness checks

    def __init__(self, scaffold=None, master: str = "", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None) -> None:
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        if scaffold is None:
            from flowgraph.train.scaffold import Scaffold

            scaffold = Scaffold()
        self._scaffold = scaffold
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self):
        from flowgraph.framework.graph import get_default_graph

        if self._session_manager is None:
            s = self._scaffold
            self._session_manager = SessionManager(
                local_init_op=s.local_init_op, local_init_feed_dict=s.local_init_feed_dict,
                ready_op=s.ready_op, ready_for_local_init_op=s.ready_for_local_init_op,
                graph=get_default_graph(), recovery_wait_secs=self._recovery_wait_secs)
        return self._session_manager

    def create_session(self):
        s = self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master, saver=s.saver, checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config, init_op=s.init_op, init_feed_dict=s.init_feed_dict,
            init_fn=s.init_fn)


class WorkerSessionCreator(ChiefSessionCreator):
    """Creates a session that waits (up to `max_wait_secs`) until the chief has
    initialized the model, then runs the local init op."""

    def __init__(self, scaffold=None, master: str = "", config=None,
                 max_wait_secs: float = 30 * 60) -> None:
        super().__init__(scaffold=scaffold, master=master, config=config)
        self._max_wait_secs = max_wait_secs

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs)

"""`tf.train.Supervisor`: TensorFlow 1.x's pre-`MonitoredSession` training helper.

A Supervisor builds the standard pieces once (init, ready and local-init ops, a `Saver`,
the merged summary op, a summary writer when there is a `logdir`), hands out sessions
prepared by a `SessionManager` (restored from the latest checkpoint in `logdir` or
initialized), and runs the standard services on a `Coordinator`: queue runners, a
checkpoint every `save_model_secs` and summaries every `save_summaries_secs`, each
first when the session starts. Stopping (`stop`, or leaving `managed_session`) joins
those threads; as in TensorFlow, it saves no final checkpoint (call
``sv.saver.save(sess, sv.save_path, global_step=sv.global_step)`` for one).

Example
-------
>>> import tempfile
>>> import flowgraph as tf
>>> logdir = tempfile.mkdtemp()
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     train = tf.assign_add(step, 1)
...     sv = tf.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
...     with sv.managed_session() as sess:
...         while not sv.should_stop() and sess.run(step) < 3:
...             _ = sess.run(train)
...         path = sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
>>> tf.train.latest_checkpoint(logdir).endswith("model.ckpt-3")
True
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.ops.variables import global_variables
from flowgraph.train.coordinator import Coordinator, LooperThread
from flowgraph.train.queue_runner import start_queue_runners
from flowgraph.train.scaffold import Scaffold
from flowgraph.train.session_manager import SessionManager
from flowgraph.train.training_util import get_global_step, global_step

__all__ = ["Supervisor"]

logger = logging.getLogger("tensorflow")


class _StepCounterThread(LooperThread):
    """Every `save_summaries_secs`, the global steps per second since the last call, as
    the summary ``<global step op>/sec`` (TensorFlow's ``SVStepCounterThread``)."""

    def __init__(self, sv: Supervisor, sess) -> None:
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv, self._sess = sv, sess
        self._tag = f"{sv.global_step.op.name}/sec"

    def start_loop(self) -> None:
        self._last_time = time.time()
        self._last_step = global_step(self._sess, self._sv.global_step)

    def run_loop(self) -> None:
        from flowgraph.summary.event_format import Summary

        step = global_step(self._sess, self._sv.global_step)
        now = time.time()
        added, elapsed = step - self._last_step, now - self._last_time
        self._last_step, self._last_time = step, now
        rate = added / elapsed if elapsed > 0 else float("inf")
        self._sv.summary_writer.add_summary(
            Summary(value=[Summary.Value(tag=self._tag, simple_value=rate)]), step)


_VARIABLE_OPS = ("Variable", "VariableV2", "VarHandleOp")


def _check_variables_placed(graph) -> None:
    """A non-chief Supervisor (a replica) needs every variable on a device, as in
    TensorFlow: one left unplaced would be private to each replica's own task."""
    for op in graph.get_operations():
        if op.type in _VARIABLE_OPS and not op.device:
            raise ValueError(
                "When using replicas, all Variables must have their device set: "
                f"{op.name!r} ({op.type}) has none. Build the model under "
                "tf.device(tf.train.replica_device_setter(...)) or pass is_chief=True.")


class Supervisor:
    """Session preparation, checkpoints, summaries and stop coordination for a training
    loop (TensorFlow 1.x's signature). Arguments left at `USE_DEFAULT` are built from the
    graph: ``init_op`` initializes the global variables, ``local_init_op`` the local ones
    and the tables, ``ready_op`` reports uninitialized variables, ``saver`` is a `Saver`
    of all variables, ``summary_op`` merges the graph's summaries, ``global_step`` is the
    graph's global step. Pass None to disable a piece (``saver=None``: no checkpoints).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0)
    ...     sv = tf.train.Supervisor(logdir=None)
    ...     sess = sv.prepare_or_wait_for_session()
    ...     print(float(sess.run(v)), sv.should_stop())
    ...     sv.stop()
    ...     sess.close()
    1.0 False
    """

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        self._graph = graph if graph is not None else get_default_graph()
        with self._graph.as_default():
            savers = self._graph.get_collection(GraphKeys.SAVERS)
            has_variables = bool(global_variables())
            scaffold = Scaffold(
                init_op=self._given(init_op), ready_op=self._given(ready_op),
                ready_for_local_init_op=self._given(ready_for_local_init_op),
                local_init_op=self._given(local_init_op),
                summary_op=self._given(summary_op), saver=self._given(saver))
            scaffold.finalize()  # builds the defaults and finalizes the graph
            pick = self._pick
            self._init_op = pick(init_op, scaffold.init_op)
            self._ready_op = pick(ready_op, scaffold.ready_op)
            self._ready_for_local_init_op = pick(ready_for_local_init_op,
                                                 scaffold.ready_for_local_init_op)
            self._local_init_op = pick(local_init_op, scaffold.local_init_op)
            self._summary_op = pick(summary_op, scaffold.summary_op)
            if saver is self.USE_DEFAULT:  # as TensorFlow: none without global variables
                saver = savers[0] if savers else (
                    scaffold.saver if has_variables else None)
            self._saver = saver
            self._global_step = pick(global_step, None) if global_step is not \
                self.USE_DEFAULT else get_global_step(self._graph)
        self._is_chief = is_chief
        if not is_chief:
            _check_variables_placed(self._graph)
        self._init_feed_dict = init_feed_dict
        self._init_fn = init_fn
        self._logdir = logdir
        self._save_summaries_secs = save_summaries_secs
        self._save_model_secs = save_model_secs
        self._stop_grace_secs = stop_grace_secs
        self._save_path = (os.path.join(logdir, checkpoint_basename) if logdir else None)
        if summary_writer is self.USE_DEFAULT:
            summary_writer = None
            if logdir and is_chief:
                from flowgraph.summary.writer import FileWriter

                # (the graph goes to it once a session is prepared, as in TensorFlow)
                summary_writer = FileWriter(logdir)
        self._summary_writer = summary_writer
        self._graph_added_to_summary = False
        self._session_manager = session_manager or SessionManager(
            local_init_op=self._local_init_op, ready_op=self._ready_op,
            ready_for_local_init_op=self._ready_for_local_init_op, graph=self._graph,
            recovery_wait_secs=recovery_wait_secs,
            local_init_run_options=local_init_run_options)
        self._coord = Coordinator()
        self._threads: list = []

    def _given(self, value):
        """What Scaffold should use: None (build the default) for USE_DEFAULT or None."""
        return None if value is self.USE_DEFAULT else value

    def _pick(self, value, default):
        return default if value is self.USE_DEFAULT else value

    # -- properties (TensorFlow's names) ---------------------------------------------------
    is_chief = property(lambda self: self._is_chief)
    session_manager = property(lambda self: self._session_manager)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    ready_for_local_init_op = property(lambda self: self._ready_for_local_init_op)
    summary_writer = property(lambda self: self._summary_writer)
    summary_op = property(lambda self: self._summary_op)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)
    global_step = property(lambda self: self._global_step)
    saver = property(lambda self: self._saver)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_path = property(lambda self: self._save_path)

    # -- sessions --------------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """A session ready to train: the chief restores the latest checkpoint of
        `logdir` or initializes the model; other tasks wait until it is ready. With
        `start_standard_services`, the chief also starts the checkpoint and summary
        threads, and every task starts the queue runners."""
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self._init_op, saver=self._saver,
                checkpoint_dir=self._logdir, wait_for_checkpoint=wait_for_checkpoint,
                max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn)
            self._write_graph()
            if start_standard_services:
                logger.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config,
                                                          max_wait_secs=max_wait_secs)
        if start_standard_services:
            self.start_queue_runners(sess)
        return sess

    def _write_graph(self) -> None:
        """As TensorFlow's chief once its session is prepared: ``logdir/graph.pbtxt``, and
        the graph and a meta graph holding the saver's def in the event file (once)."""
        if self._logdir:
            from flowgraph.train.graph_pbtxt import write_graph_pbtxt

            write_graph_pbtxt(self._graph, self._logdir)
        if self._summary_writer is not None and not self._graph_added_to_summary:
            from flowgraph.train.meta_graph_export import meta_graph_bytes

            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(meta_graph_bytes(
                self._graph, self._saver.saver_def if self._saver is not None else None))
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Start the services, each first right away: a checkpoint every
        `save_model_secs` (with a saver), and with a writer every `save_summaries_secs`
        the summary op's value and the global steps per second. As in TensorFlow, a
        ``SessionLog.START`` at the current global step goes to the event file first;
        without a `logdir` nothing starts (a warning says so)."""
        from flowgraph.summary.event_format import SessionLog

        if not self._is_chief:
            raise RuntimeError("Only the chief Supervisor can start the standard services "
                               "(they write checkpoints and events); start them on the "
                               "chief, or call start_queue_runners on other tasks")
        if not self._logdir:
            logger.warning("Standard services need a 'logdir' passed to the SessionManager")
            return None
        if self._global_step is not None and self._summary_writer is not None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 self._step(sess))
        threads = []
        if self._save_summaries_secs and self._summary_writer is not None:
            if self._summary_op is not None:
                threads.append(LooperThread(self._coord, self._save_summaries_secs,
                                            target=self.summary_computed_now, args=(sess,)))
            if self._global_step is not None:
                threads.append(_StepCounterThread(self, sess))
        if self._saver is not None and self._save_model_secs:
            threads.append(LooperThread(self._coord, self._save_model_secs,
                                        target=self._save, args=(sess,)))
        for t in threads:
            t.start()
        self._threads.extend(threads)
        return threads

    def start_queue_runners(self, sess, queue_runners=None):
        """Start the graph's queue runners (or `queue_runners`) on this Supervisor's
        coordinator; returns their threads."""
        if queue_runners is None:
            threads = start_queue_runners(sess, coord=self._coord, daemon=True, start=True)
        else:
            threads = []
            for qr in queue_runners:
                threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True,
                                                 start=True))
        self._threads.extend(threads)
        return threads

    def _step(self, sess):
        return global_step(sess, self._global_step) if self._global_step is not None else None

    def _save(self, sess):
        from flowgraph.summary.event_format import SessionLog

        logger.info("Saving checkpoint to path %s", self._save_path)
        self._saver.save(sess, self._save_path, global_step=self._global_step)
        if self._summary_writer is not None and self._global_step is not None:
            self._summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path),
                self._step(sess))

    def summary_computed_now(self, sess):
        summary = sess.run(self._summary_op)
        self.summary_computed(sess, summary)

    def summary_computed(self, sess, summary, global_step=None):
        """Write a computed summary (serialized or a `Summary`) at `global_step` (default:
        the current global step)."""
        if self._summary_writer is None:
            raise RuntimeError("Supervisor.summary_computed: this Supervisor writes no "
                               "summaries (it has no logdir or summary_writer)")
        if global_step is None:
            global_step = self._step(sess)
        self._summary_writer.add_summary(summary, global_step)

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Run ``target(*args, **kwargs)`` every `timer_interval_secs` on a thread of this
        Supervisor's coordinator; returns the started thread."""
        t = LooperThread(self._coord, timer_interval_secs, target=target, args=args,
                         kwargs=kwargs)
        t.start()
        self._threads.append(t)
        return t

    # -- stopping --------------------------------------------------------------------------
    def should_stop(self):
        return self._coord.should_stop()

    def request_stop(self, ex=None):
        self._coord.request_stop(ex)

    def stop_on_exception(self):
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        self._coord.wait_for_stop()

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Request a stop, join the service and queue-runner threads (re-raising an
        exception one of them reported) and close the summary writer."""
        self._coord.request_stop()
        try:
            self._coord.join(self._threads + list(threads or ()),
                             stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            self._threads = []
            if close_summary_writer and self._summary_writer is not None:
                from flowgraph.summary.event_format import SessionLog

                # As TensorFlow: a STOP without a step (the session may be gone)
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """A context manager yielding a prepared session. On exit the Supervisor stops
        its services and the session closes (no final checkpoint, as in TensorFlow). An
        `OutOfRangeError` inside the block ends it cleanly (input exhausted); other
        exceptions are re-raised after stopping."""
        sess = self.prepare_or_wait_for_session(
            master, config=config, start_standard_services=start_standard_services)
        try:
            yield sess
        except Exception as e:  # handed to the coordinator, which filters clean stops
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()

    # TensorFlow's CamelCase names of the same methods
    PrepareSession = prepare_or_wait_for_session
    StartStandardServices = start_standard_services
    StartQueueRunners = start_queue_runners
    SummaryComputed = summary_computed
    Loop = loop
    ShouldStop = should_stop
    RequestStop = request_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    Stop = stop

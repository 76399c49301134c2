"""`tf.train.QueueRunner`: threads that keep running enqueue ops to fill a queue.

`create_threads(sess, coord)` starts one thread per enqueue op, each running it in a
loop until the coordinator stops or the queue closes; with a coordinator, one more
thread waits for the stop request and runs the queue's cancel op (close with
``cancel_pending_enqueues=True``), which wakes every blocked enqueue, so the threads end
promptly. When the last enqueue thread sees the queue closed (an exception of
`queue_closed_exception_types`, e.g. its input is exhausted), the runner closes the
queue, so consumers drain it and then get `OutOfRangeError`.

Example
-------
>>> import flowgraph as tf
>>> q = tf.FIFOQueue(10, tf.float32, shapes=[()])
>>> qr = tf.train.QueueRunner(q, [q.enqueue(1.0)] * 2)
>>> tf.train.add_queue_runner(qr)
>>> with tf.Session() as sess:
...     coord = tf.train.Coordinator()
...     threads = tf.train.start_queue_runners(sess, coord)
...     print(sess.run(q.dequeue_many(4)))
...     coord.request_stop()
...     coord.join(threads)
[1. 1. 1. 1.]
"""

from __future__ import annotations

import logging
import threading
import weakref

from flowgraph.framework import errors
from flowgraph.framework.graph import (
    GraphKeys,
    add_to_collection,
    get_default_graph,
    get_default_session,
)
from flowgraph.framework.tf_formats.meta_graph_messages import QueueRunnerDefProto

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

logger = logging.getLogger("tensorflow")


class QueueRunner:
    """Holds a queue and the enqueue ops that threads run to fill it.

    Parameters
    ----------
    queue : QueueBase
        The queue being filled.
    enqueue_ops : list of Operation
        One thread per entry runs it in a loop (repeat an op to run it in parallel).
    close_op : Operation, optional
        Run when every enqueue thread has seen the queue closed (default:
        ``queue.close()``).
    cancel_op : Operation, optional
        Run when the coordinator requests a stop (default:
        ``queue.close(cancel_pending_enqueues=True)``).
    queue_closed_exception_types : tuple of exception types, optional
        Errors meaning "the input is exhausted" (default: ``(tf.errors.OutOfRangeError,)``).
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None,
                 import_scope=None) -> None:
        if queue_runner_def is not None:
            if queue is not None or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            queue, enqueue_ops, close_op, cancel_op, queue_closed_exception_types = (
                _from_def(queue_runner_def, import_scope))
        if queue is None or not enqueue_ops:
            raise ValueError("Must provide a queue and one or more enqueue_ops to QueueRunner")
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError,)
        types = tuple(queue_closed_exception_types)
        if not types or not all(isinstance(t, type) and issubclass(t, errors.OpError)
                                for t in types):
            raise TypeError(
                "queue_closed_exception_types, when provided, must be a non-empty tuple of "
                f"tf.errors.OpError subclasses, got {queue_closed_exception_types!r}")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = (cancel_op if cancel_op is not None
                           else queue.close(cancel_pending_enqueues=True))
        self._queue_closed_exception_types = types
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised: list = []

    # -- properties ---------------------------------------------------------------------
    @property
    def queue(self):
        return self._queue

    @property
    def enqueue_ops(self) -> list:
        return self._enqueue_ops

    @property
    def close_op(self):
        return self._close_op

    @property
    def cancel_op(self):
        return self._cancel_op

    @property
    def queue_closed_exception_types(self) -> tuple:
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self) -> list:
        """Exceptions the threads raised while running without a coordinator."""
        return self._exceptions_raised

    @property
    def name(self) -> str:
        """The name of the queue."""
        return self._queue.name

    # -- QueueRunnerDef ---------------------------------------------------------------------
    def to_proto(self, export_scope: str | None = None):
        """This runner's ``QueueRunnerDef`` (what a ``.meta`` file records in its
        ``queue_runners`` collection); with `export_scope`, the names relative to it, or
        None when the queue lies outside it.

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     q = tf.FIFOQueue(2, tf.float32, name="q")
        ...     qr = tf.train.QueueRunner(q, [q.enqueue([1.0])])
        ...     print(qr.to_proto().queue_name, list(qr.to_proto().enqueue_op_name))
        q ['q_enqueue']
        """
        names = [self._queue.name, *(op.name for op in self._enqueue_ops),
                 self._close_op.name, self._cancel_op.name]
        if export_scope:
            prefix = export_scope.rstrip("/") + "/"
            if not self._queue.name.startswith(prefix):
                return None
            names = [n[len(prefix):] if n.startswith(prefix) else n for n in names]
        return QueueRunnerDefProto(
            queue_name=names[0], enqueue_op_name=names[1:-2], close_op_name=names[-2],
            cancel_op_name=names[-1],
            queue_closed_exception_types=[errors.error_code_from_exception_type(t)
                                          for t in self._queue_closed_exception_types])

    @staticmethod
    def from_proto(queue_runner_def, import_scope: str | None = None) -> QueueRunner:
        """A runner over the default graph's queue and ops that `queue_runner_def` (a
        ``QueueRunnerDef``, `to_proto`) names, under `import_scope`."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    # -- threads ------------------------------------------------------------------------
    def _run(self, sess, enqueue_op, coord) -> None:
        """One enqueue thread: run `enqueue_op` until stopped or the queue closes."""
        decremented = False
        try:
            run = sess.make_callable(enqueue_op)
            while not (coord is not None and coord.should_stop()):
                try:
                    run()
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception as e:  # closing is best effort
                            logger.debug("QueueRunner %s: ignored error closing: %s",
                                         self.name, e)
                    return
        except Exception as e:
            if coord is not None:
                coord.request_stop(e)
            else:
                logger.error("Exception in QueueRunner %s: %s", self.name, e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord) -> None:
        """Wait for a stop request, then cancel the queue so blocked enqueues end."""
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # the session may be closing; nothing to cancel then
            logger.debug("QueueRunner %s: ignored error cancelling: %s", self.name, e)

    def create_threads(self, sess, coord=None, daemon: bool = False,
                       start: bool = False) -> list[threading.Thread]:
        """Create (and optionally start) the threads that run the enqueue ops in `sess`.

        Returns no threads if this runner's threads are already running in `sess`.
        With a `coord`, the threads are registered with it and one extra thread runs
        the cancel op when a stop is requested.
        """
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [threading.Thread(target=self._run, args=(sess, op, coord),
                                    name=f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop,
                                            args=(sess, self._cancel_op, coord),
                                            name=f"QueueRunnerThread-{self.name}-close"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            if daemon:
                t.daemon = True
            if start:
                t.start()
        return threads


def _from_def(queue_runner_def, import_scope):
    """(queue op, enqueue ops, close op, cancel op, exception types) from a
    ``QueueRunnerDef``, found in the default graph."""
    graph = get_default_graph()
    prefix = import_scope.rstrip("/") + "/" if import_scope else ""

    def element(name: str):
        return graph.as_graph_element(prefix + name)

    codes = list(queue_runner_def.queue_closed_exception_types)
    types = tuple(errors.exception_type_from_error_code(c) for c in codes) or None
    return (element(queue_runner_def.queue_name),
            [element(n) for n in queue_runner_def.enqueue_op_name],
            element(queue_runner_def.close_op_name), element(queue_runner_def.cancel_op_name),
            types)


def add_queue_runner(qr: QueueRunner, collection: str = GraphKeys.QUEUE_RUNNERS) -> None:
    """Add `qr` to the graph collection `collection` (started by `start_queue_runners`)."""
    add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon: bool = True, start: bool = True,
                        collection: str = GraphKeys.QUEUE_RUNNERS) -> list[threading.Thread]:
    """Start the threads of every queue runner in the graph collection `collection`.

    Parameters
    ----------
    sess : Session, optional
        Where the enqueue ops run (default: the default session).
    coord : Coordinator, optional
        Stops the threads and collects their exceptions.

    Returns
    -------
    list of threading.Thread
    """
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: no default session is registered. Use "
                "`with sess.as_default()` or pass an explicit session to "
                "tf.train.start_queue_runners(sess=sess)")
    if not hasattr(sess, "run") or not hasattr(sess, "graph"):
        raise TypeError(f"sess must be a tf.Session, got {type(sess).__name__}")
    threads: list[threading.Thread] = []
    with sess.graph.as_default():
        for qr in sess.graph.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads

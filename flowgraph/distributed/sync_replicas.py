"""`tf.train.SyncReplicasOptimizer`: synchronous data-parallel training on ps variables.

Every worker computes gradients on its own batch; the fresh gradients of one step are
summed on the parameter servers and, once `replicas_to_aggregate` of them arrived, their
mean is applied with the wrapped optimizer (one global step per aggregation) and tokens
let the workers start their next step.

The state, all created by `apply_gradients`:

* per variable, an **accumulator** variable beside it (same ps task) holding the sum of
  the fresh gradients of the current step;
* on the global step's task, a **token queue** (one element per allowed worker step,
  holding the global step it was issued at);
* per worker, a **local step** (a local variable): the global step its current gradient
  is computed at. It lives beside the global step, under a name of its own
  (``sync_rep_local_step_worker_1``), when the worker's device names its task (as
  ``replica_device_setter(worker_device=...)`` does), so that the whole push runs on the
  ps; otherwise, where the worker's graph cannot tell its task apart, on the worker.

A gradient computed at an older global step than the current one (*stale*) is dropped.
How the gradients are aggregated depends on where the state lives:

* **on one task** (one ps, or one process): the push that completes an aggregation
  applies it in its own run, under a lock that also makes the staleness check exact
  (`flowgraph.distributed.sync_inline`); the chief runs no loop.
* **across tasks** (variables on several ps tasks): a worker's train op adds its
  gradients to the accumulators (zeros when stale), enqueues one element in a **ready
  queue** on the global step's task if it was fresh, then blocks on a token and makes it
  its new local step. The chief's hook (`make_session_run_hook`) runs the aggregation in
  a loop, one run each: it dequeues `replicas_to_aggregate` ready elements (with a short
  deadline, so the loop can stop; a timed-out dequeue gives its elements back), applies
  the accumulators' mean, zeroes them and enqueues ``max(total_num_replicas,
  replicas_to_aggregate)`` tokens carrying the new global step. The staleness check and
  the addition are two ops there, not one as in TensorFlow's ``ConditionalAccumulator``:
  with backup workers a gradient found fresh just before an aggregation may land in the
  next one (with ``replicas_to_aggregate == total_num_replicas`` and no initial tokens,
  every worker waits for a token after each gradient, so that cannot happen).

Either way a worker's step on a grpc:// session costs one call to its ps once running:
the push's call also reads the variables after the token, for the next step
(`flowgraph.distributed.sync_prefetch`).

`flowgraph.distributed` sits below `flowgraph.train` in the layering, so the class is
built by `sync_replicas_optimizer_class` from the `Optimizer` and `SessionRunHook` base
classes that ``flowgraph/train/__init__.py`` passes in.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     step = tf.train.get_or_create_global_step()
...     w = tf.Variable([1.0, 2.0])
...     opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.5),
...                                          replicas_to_aggregate=1)
...     train = opt.minimize(tf.reduce_sum(w * w), global_step=step)
...     hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
...     with tf.train.MonitoredTrainingSession(hooks=[hook]) as sess:
...         for _ in range(3):
...             _ = sess.run(train)
...         final_w, final_step = sess.run([w, step])
>>> print(final_w, int(final_step))
[0. 0.] 3
"""

from __future__ import annotations

import logging
import threading

from flowgraph.distributed.sync_inline import add_if_fresh, inline_push
from flowgraph.distributed.sync_prefetch import TOKEN_WAITS
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.graph import GraphKeys
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import math_ops, state_ops
from flowgraph.ops.array_index_ops import where
from flowgraph.ops.array_shape_ops import fill, reshape, shape, zeros, zeros_like
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.control_flow_ops import group, no_op
from flowgraph.ops.data_flow_ops import FIFOQueue
from flowgraph.ops.variables import Variable, global_variables, report_uninitialized_variables

__all__ = ["sync_replicas_optimizer_class"]

logger = logging.getLogger("tensorflow")

# How long one run of the chief's aggregation op waits for gradients before it checks
# whether the hook was asked to stop (a timed-out dequeue gives its elements back).
_POLL_MS = 500


def _task_of(device: str) -> tuple:
    spec = DeviceSpec.from_string(device or "")
    return spec.job, spec.task


class _SyncReplicasOptimizer:
    """Mixin holding the optimizer's logic; see `sync_replicas_optimizer_class`."""

    _hook_class = None  # set by sync_replicas_optimizer_class

    def __init__(self, opt, replicas_to_aggregate: int, total_num_replicas: int | None = None,
                 variable_averages=None, variables_to_average=None, use_locking: bool = False,
                 name: str = "sync_replicas") -> None:
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        if int(replicas_to_aggregate) < 1 or int(total_num_replicas) < 1:
            raise ValueError(f"SyncReplicasOptimizer: replicas_to_aggregate and "
                             f"total_num_replicas must be >= 1; got {replicas_to_aggregate} "
                             f"and {total_num_replicas}")
        super().__init__(use_locking, name)
        logger.info("SyncReplicasOptimizer: replicas_to_aggregate=%s; total_num_replicas=%s",
                    replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas)
        self._tokens_per_step = max(self._total_num_replicas, self._replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = self._ready_queue = None
        self._accumulators: list = []
        self._chief_sync_op = self._chief_take_op = None
        self._counter_init_op = None
        self._local_step = None
        self.local_step_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients (the aggregation happens in
        `apply_gradients`)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None):
        """The worker's train op: accumulate this worker's gradients on the ps (and, on
        one task, aggregate if they complete the step), then wait for the next token.
        With the state on several tasks, also builds the chief's aggregation op.

        Raises ValueError without gradients or without `global_step` (staleness is judged
        by it).
        """
        grads_and_vars = [(g, v) for g, v in grads_and_vars]
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[str(v) for _, v in grads_and_vars]}.")
        self._global_step = global_step
        graph = global_step.graph
        step_dtype = global_step.dtype.base_dtype
        with graph.name_scope(name or self._name):
            with graph.control_dependencies(None):
                anchor = no_op(name="local_anchor")  # on this worker's device
                self._local_step = self._make_local_step(graph, anchor, step_dtype)
                accumulators = []
                for _, var in pairs:
                    # In no collection, as TF's accumulators are no variables: a
                    # checkpoint holds the model only (TF's checkpoints restore into
                    # this graph); the chief's init tokens op initializes them.
                    with graph.device(var.device), graph.colocate_with(var.op):
                        accumulators.append(Variable(
                            zeros(var.shape, var.dtype.base_dtype), trainable=False,
                            name=f"{var.op.name}/sync_accumulator", collections=[]))
                self._accumulators = accumulators
                with graph.device(global_step.device), graph.colocate_with(global_step.op):
                    tokens = FIFOQueue(-1, [step_dtype], shapes=[[]],
                                       shared_name=f"{self._name}_token_q",
                                       name="sync_token_q")
            self._sync_token_queue = tokens
            self.local_step_init_op = state_ops.assign(self._local_step, global_step)
            grads = [convert_to_tensor(g) if isinstance(g, IndexedSlices) else g
                     for g, _ in pairs]
            homes = {_task_of(acc.device) for acc in accumulators}
            homes |= {_task_of(global_step.device), _task_of(self._local_step.device)}
            if len(homes) == 1:  # one task holds it all: the last push aggregates
                train_op, self._counter_init_op = inline_push(self, pairs, grads,
                                                              accumulators, tokens)
            else:
                with graph.control_dependencies(None), graph.device(global_step.device), \
                        graph.colocate_with(global_step.op):
                    ready = FIFOQueue(-1, [_dtypes.int32], shapes=[[]],
                                      shared_name=f"{self._name}_ready_q",
                                      name="sync_ready_q")
                self._ready_queue = ready
                train_op = self._worker_op(grads, accumulators, ready, tokens)
                self._chief_sync_op = self._chief_op(pairs, accumulators, ready, tokens)
            # (TF's names for the manual set-up: Supervisor(local_init_op=...,
            # ready_for_local_init_op=...), chief_init_op, get_chief_queue_runner)
            with graph.control_dependencies(None):
                self.ready_for_local_init_op = report_uninitialized_variables(
                    global_variables())
                self.chief_init_op = group(self.local_step_init_op)
        self._gradients_applied = True
        return train_op

    def get_chief_queue_runner(self):
        """What the chief starts (``Supervisor.start_queue_runners(sess, [qr])`` or
        ``qr.create_threads(sess, coord, start=True)``) in TF1's manual set-up without
        `make_session_run_hook`: the aggregation loop when the state is on several tasks;
        nothing to run when the pushes aggregate (one task), so no thread then."""
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return _ChiefQueueRunner(self)

    def _make_local_step(self, graph, anchor, step_dtype):
        """This worker's local step, beside the global step when the worker's device
        names its task (a name of its own there: every worker's graph makes one), else on
        the worker (see the module docstring)."""
        home, steps_at = _task_of(anchor.device), _task_of(self._global_step.device)
        name = "sync_rep_local_step"
        if home == steps_at or None not in home:
            if home != steps_at:
                name = f"{name}_{home[0]}_{home[1]}"
            place, coloc = self._global_step.device, self._global_step.op
        else:
            place, coloc = anchor.device, anchor
        with graph.device(place), graph.colocate_with(coloc):
            return Variable(zeros([], step_dtype), trainable=False, name=name,
                            collections=[GraphKeys.LOCAL_VARIABLES])

    def _worker_op(self, grads, accumulators, ready, tokens):
        """The train op when the state spans tasks: add (if fresh), signal the chief's
        loop through the ready queue, wait for a token."""
        graph = self._global_step.graph
        local = self._local_step
        with graph.device(local.device), graph.colocate_with(local.op):
            if _task_of(local.device) == _task_of(self._global_step.device):
                # The global step as the gradient arrives (a ConditionalAccumulator's
                # check), not as the step began.
                now = self._global_step.read_value()
            else:
                now = self._global_step
            fresh = math_ops.greater_equal(local, now, name="is_fresh")
        beside = {_task_of(acc.device) for acc in accumulators} == {_task_of(local.device)}
        if beside:
            count = add_if_fresh(graph, fresh, grads, accumulators)
        else:
            adds = self._add_masked(graph, fresh, grads, accumulators)
            with graph.device(self._global_step.device), graph.control_dependencies(adds):
                count = math_ops.cast(fresh, _dtypes.int32)
        with graph.device(self._global_step.device):
            signal = ready.enqueue_many([fill(reshape(count, [1]), 0)], name="signal_ready")
        with graph.device(self._global_step.device), graph.control_dependencies([signal]):
            token = tokens.dequeue(name="wait_for_token")
        graph.add_to_collection(TOKEN_WAITS, token.op)
        return state_ops.assign(local, token, name="train_op")

    @staticmethod
    def _add_masked(graph, fresh, grads, accumulators):
        """The accumulators on several tasks: each adds the gradient, or zeros when it is
        stale (a `cond` would send dead tensors across tasks); returns the additions."""
        adds = []
        for grad, acc in zip(grads, accumulators):
            kept = where(fill(shape(grad), fresh), grad, zeros_like(grad))
            with graph.colocate_with(acc.op):
                adds.append(state_ops.assign_add(acc, kept, use_locking=True))
        return adds

    def _chief_op(self, pairs, accumulators, ready, tokens):
        """The chief's one op per aggregation: wait for `replicas_to_aggregate` fresh
        gradients, then apply their mean and issue the next tokens. Only the wait has the
        short poll deadline (the dequeue's own ``timeout_ms``; a timed-out wait gives its
        elements back and nothing else runs), so one run, one call to the ps, does both."""
        graph = self._global_step.graph
        with graph.device(self._global_step.device):
            taken = ready._dequeue_op("QueueDequeueManyV2", self._replicas_to_aggregate,
                                      "take_gradients", "DequeueMany", timeout_ms=_POLL_MS)
        self._chief_take_op = taken
        averaged = []
        for (_, var), acc in zip(pairs, accumulators):
            # The sums are read once the wait is over, when every taken gradient is in.
            with graph.colocate_with(acc.op), graph.control_dependencies([taken]):
                mean = acc.read_value() * (1.0 / self._replicas_to_aggregate)
            averaged.append((mean, var))
        update = self._opt.apply_gradients(averaged, global_step=self._global_step)
        after = [update]
        if self._variable_averages is not None:
            with graph.control_dependencies([update]):
                after = [self._variable_averages.apply(self._variables_to_average)]
        resets = []
        with graph.control_dependencies(after):
            for acc in accumulators:
                # On the accumulator's task: made anywhere else, the zeros would travel
                # there (and the accumulator's value to them) on every aggregation.
                with graph.colocate_with(acc.op):
                    resets.append(state_ops.assign(acc, zeros_like(acc)))
        with graph.device(self._global_step.device), graph.control_dependencies(resets):
            step_now = self._global_step.read_value()
            return tokens.enqueue_many([fill([self._tokens_per_step], step_now)],
                                       name="issue_tokens")

    def get_init_tokens_op(self, num_tokens: int = -1):
        """An op putting `num_tokens` tokens (default `replicas_to_aggregate`) in the
        token queue, letting workers take that many steps before the first aggregation;
        run once by the chief. Where the pushes aggregate (`flowgraph.distributed.
        sync_inline`), it also puts their counter, once per ps (even with no tokens)."""
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {needed} (needed)")
        counter = self._counter_init_op  # the pushes aggregate: their lock, put once
        if counter is None:  # the chief loop aggregates: accumulators made once
            graph = self._global_step.graph
            with graph.control_dependencies(None):
                counter = group(*[_initialize_once(acc) for acc in self._accumulators],
                                name="init_accumulators")
        if num_tokens <= 0:
            return counter
        graph = self._global_step.graph
        with graph.device(self._global_step.device):
            tokens = self._sync_token_queue.enqueue_many(
                [fill([num_tokens], self._global_step.read_value())], name="init_tokens")
        return tokens if counter is None else group(counter, tokens, name="init_tokens_op")

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1):
        """The hook every worker needs: it sets the local step when the session is
        created and, on the chief, adds the initial tokens and runs the aggregation loop
        in a thread until the session ends."""
        return self._hook_class(self, is_chief, num_tokens)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()


class _SyncReplicasHook:
    """Mixin of the hook `make_session_run_hook` returns."""

    def __init__(self, sync_optimizer, is_chief: bool, num_tokens: int) -> None:
        self._opt = sync_optimizer
        self._is_chief = bool(is_chief)
        self._num_tokens = num_tokens
        self._thread = None
        self._stop = threading.Event()

    def begin(self) -> None:
        opt = self._opt
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradients should be called before "
                             "using the hook.")
        self._init_tokens_op = None
        self._release_op = None
        if self._is_chief:
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
            # At the end, workers blocked on a token must not wait for an aggregation
            # that will never come: give each enough tokens to see the final global step.
            graph = opt._global_step.graph
            with graph.device(opt._global_step.device):
                self._release_op = opt._sync_token_queue.enqueue_many(
                    [fill([2 * opt._tokens_per_step], opt._global_step.read_value())],
                    name="release_tokens")

    def after_create_session(self, session, coord) -> None:
        session.run(self._opt.local_step_init_op)
        if not self._is_chief:
            return
        self._stop_thread()  # a recreated session: the old loop's session is gone
        session.run(self._init_tokens_op)
        if self._opt._chief_sync_op is None:  # the pushes aggregate (sync_inline.py)
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._aggregate, args=(session, coord),
                                        name="sync-replicas-chief", daemon=True)
        self._thread.start()

    def _aggregate(self, session, coord) -> None:
        _aggregate(session, self._opt._chief_sync_op, self._stop, coord)

    def end(self, session) -> None:
        self._stop_thread()
        if self._release_op is not None:
            session.run(self._release_op)

    def _stop_thread(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * _POLL_MS / 1000 + 5)
            self._thread = None


def _initialize_once(var):
    """`var`'s initializer, run only while `var` is uninitialized (a restarted chief
    keeps the workers' partial sums, as TF's accumulators outlive it)."""
    graph = var.graph
    with graph.colocate_with(var.op), graph.device(var.device):
        # (the assign is built inside the branch, so that the cond gates it)
        return cond(state_ops.is_variable_initialized(var), no_op,
                    lambda: state_ops.assign(var, zeros(var.shape, var.dtype.base_dtype)).op,
                    name="init_once").op


def _aggregate(session, sync_op, stop: threading.Event, coord) -> None:
    """The chief's aggregation loop: run `sync_op` until `stop` is set (or `coord` asks
    to stop); a failure stops the coordinator, so that training learns no step will
    come."""
    while not stop.is_set() and not (coord is not None and coord.should_stop()):
        try:
            try:
                session.run(sync_op)
            except errors.DeadlineExceededError:  # no gradients within _POLL_MS
                continue
        except Exception as e:
            if stop.is_set():
                return
            logger.error("SyncReplicasOptimizer: the chief's aggregation failed: %s", e)
            if coord is not None:
                coord.request_stop(e)
            return


class _ChiefQueueRunner:
    """`SyncReplicasOptimizer.get_chief_queue_runner`'s runner (the parts of
    ``tf.train.QueueRunner`` that ``Supervisor.start_queue_runners`` and
    ``tf.train.start_queue_runners`` use)."""

    def __init__(self, optimizer) -> None:
        self._opt = optimizer
        self.queue = optimizer._sync_token_queue
        sync_op = optimizer._chief_sync_op
        self.enqueue_ops = [sync_op] if sync_op is not None else []
        self.close_op = self.cancel_op = None
        self.queue_closed_exception_types = (errors.OutOfRangeError,)
        self.exceptions_raised: list = []
        self._stop = threading.Event()

    @property
    def name(self) -> str:
        return self.queue.name

    def create_threads(self, sess, coord=None, daemon: bool = False,
                       start: bool = False) -> list:
        """The aggregation thread (none when the pushes aggregate), started with
        `start`; it ends when `coord` asks to stop."""
        if not self.enqueue_ops:
            return []
        thread = threading.Thread(target=_aggregate,
                                  args=(sess, self.enqueue_ops[0], self._stop, coord),
                                  name="sync-replicas-chief", daemon=daemon)
        if coord is not None:
            coord.register_thread(thread)
        if start:
            thread.start()
        return [thread]


_CLASSES: dict = {}


def sync_replicas_optimizer_class(optimizer_base: type, hook_base: type) -> type:
    """`tf.train.SyncReplicasOptimizer` built on the given ``Optimizer`` and
    ``SessionRunHook`` base classes (``flowgraph/train/__init__.py`` passes
    ``tf.train``'s own, so the optimizer and its hook pass isinstance checks).

    >>> class Base:
    ...     def __init__(self, use_locking, name):
    ...         self._name = name
    >>> cls = sync_replicas_optimizer_class(Base, object)
    >>> cls.__name__, issubclass(cls, Base)
    ('SyncReplicasOptimizer', True)
    """
    key = (optimizer_base, hook_base)
    if key not in _CLASSES:
        hook = type("_SyncReplicasOptimizerHook", (_SyncReplicasHook, hook_base),
                    {"__module__": __name__})
        _CLASSES[key] = type(
            "SyncReplicasOptimizer", (_SyncReplicasOptimizer, optimizer_base),
            {"__module__": __name__, "__doc__": _DOC, "_hook_class": hook})
    return _CLASSES[key]


_DOC = """Wraps an optimizer so that workers train synchronously (TF 1.x
`tf.train.SyncReplicasOptimizer`; see `flowgraph.distributed.sync_replicas`).

Parameters
----------
opt : Optimizer
    Applies the averaged gradients (its slots live beside the variables).
replicas_to_aggregate : int
    Gradients averaged per global step.
total_num_replicas : int, optional
    Workers taking part (default `replicas_to_aggregate`); more than
    `replicas_to_aggregate` gives backup workers whose late gradients are dropped.
variable_averages : ExponentialMovingAverage, optional
    Updated by the chief after each aggregation, for `variables_to_average`.
use_locking : bool
name : str

Every worker builds the same graph, trains with ``opt.minimize(loss, global_step)`` and
passes ``opt.make_session_run_hook(is_chief)`` to its `MonitoredTrainingSession`.
"""

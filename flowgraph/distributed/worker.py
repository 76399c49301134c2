"""The task side: what one `tf.train.Server` does when the master calls it.

State of a task:

* **registered graphs**: stage graphs (graph defs, `flowgraph.distributed.master`) by
  handle, the SHA-256 of their JSON, each a `flowgraph.distributed.stage_graph.StageGraph`:
  its own `Graph` run by local sessions (one per concurrent call). Registering the same
  graph again returns the same handle, so many clients share the work of compiling it;
  each registration names its session's scope, and a graph goes when the last session
  that registered it closes (`release_session`, with the resources scoped to it).
* **write epoch**: how many stage runs that may change state started and finished; a
  read-only stage run while none is in flight reads values current at an epoch, which
  an apply call can require (`flowgraph.distributed.prefetch`).
* **input pipelines**: a stage graph's iterator ops name their tf.data pipeline (a
  Python object, which no graph def carries) by a key of this process's table
  (`stage_graph.share_dataset`, filled by the master); registering the graph registers those
  pipelines with its `Graph`. A task therefore runs the pipelines of sessions in its own
  process only (the master refuses the others when it plans the step).
* **resources**: every local session of the task uses the target
  ``local://flowgraph-task/<job>/<task>/<id>``, so variables, queues and tables live once
  per task and are shared by all graphs and all clients, as a TensorFlow server's
  resource manager is (two workers' graphs both naming ``w`` on ``/job:ps/task:0`` update
  one variable). A stage's sessions run on the threads its cost calls for, chosen on its
  first call (`flowgraph.distributed.stage_cost`: light stages inline, GEMM-heavy ones
  on every core), or on the server config's ``inter_op_parallelism_threads``.
* **fast runs**: a repeated stage call runs through a `FastRun` per fed-shape signature
  (`stage_graph.run_stage`), also for a batch of a size its graph leaves unknown and for
  a stage that may block, which keeps its deadline (`Session` keeps a `FastRun` for
  neither).
* **push counters**: a stage run that fails while holding a synchronous push's counter
  puts it back (`flowgraph.distributed.sync_inline.CounterLock`); each run of a stage
  with pushes feeds them an id of this task's (`_run_ids`), by which the counter's lock
  state names its holder.
* **step stores** (the remote rendezvous): per step id, the tensors this task produced for
  later stages, under the producing tensor's name. A consumer task pulls them with
  ``RecvTensor``, one call per producing task and stage. The master drops them when the
  step ends: with the ``"cleanup"`` list of step ids that its next ``RunStage`` to this
  task carries (no call of its own), with ``CleanupStep`` after a failed step or when the
  session closes; stores a dead client abandoned are swept after `STEP_TTL_S`. A call
  whose header says ``"no_store"`` (the master knows no later stage pulls its values:
  they all come back in the reply, `flowgraph.distributed.prefetch`) stores nothing.
  A ``RecvTensor`` may carry a stage to run first (``"run"``: a ``RunStage`` header):
  the master hands a producing stage to its only consumer that way (`master.delegate`),
  so the consumer's pull starts it and no call of the master's waits for it.
* **incarnation**: a random id drawn when the service starts. The master sends the
  incarnation it registered its graphs with in every ``RunStage``; a task that restarted
  since (its variables are gone, maybe another client re-registered the same graphs)
  answers `AbortedError`, a preemption error that `MonitoredSession` recovers from.
* **traffic**: calls and bytes in and out per method, over gRPC and the data plane alike
  (`rpc.traffic_counter` counts them; ``GetStatus`` reports them, and the data plane's
  port as ``data_port`` when the server opened one).
* **running stages** by step id: ``CancelStep`` (sent by the master when another stage
  of the step failed) cancels them, so a stage blocked on a queue or a lock does not
  wait for its deadline. A stage that cannot block runs without ``RunOptions``; its
  deadline is kept with it, and one watchdog alarm per task, set for the earliest
  deadline among running stages, cancels those past theirs when it fires (a call with a
  later deadline than the alarm's costs no watchdog entry of its own).

Example
-------
>>> service = TaskService({"worker": ["localhost:1"]}, "worker", 0)
>>> service.GetStatus({}, {})[0]["task"]
0
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import threading
import time
import uuid

import numpy as np

from flowgraph.backends import get_backends
from flowgraph.distributed.cluster_spec import ClusterSpec
from flowgraph.distributed.rpc import Security, TaskClient
from flowgraph.distributed.stage_graph import StageGraph, run_stage, share_dataset
from flowgraph.distributed.trace import stage_trace, trace_fields, traced_reply
from flowgraph.framework import errors
from flowgraph.framework.resources import manager_for_target
from flowgraph.runtime.config import RunOptions
from flowgraph.runtime.session import Session
from flowgraph.runtime.step import watchdog

__all__ = ["TaskService", "graph_handle", "share_dataset"]  # (share_dataset: stage_graph)

logger = logging.getLogger("tensorflow")

STEP_TTL_S = 600.0
# Between an op's name and its session's scope in the shared_name of a per-session
# resource (`flowgraph.distributed.master`); `TaskService.release_session` drops
# ``*@<scope>`` when the session closes.
SCOPE_MARK = "@"
_RUN_GRACE_S = 2.0


def graph_handle(graph_def: dict) -> str:
    """The registration handle of a stage graph def: a hash of its canonical JSON."""
    text = json.dumps(graph_def, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class _Call:
    """One stage run in a local session, cancellable until it ends (and never after:
    the session may run another call's stage by then). `deadline` (monotonic seconds):
    when the task's alarm cancels it, for a stage run without `RunOptions`."""

    __slots__ = ("deadline", "done", "lock", "options", "session", "step_id", "timeout_ms")

    def __init__(self, session: Session, options, step_id: int = 0,
                 timeout_ms: int = 0) -> None:
        self.session, self.options = session, options
        self.step_id, self.timeout_ms = step_id, timeout_ms
        self.deadline = time.monotonic() + timeout_ms / 1000.0 if (
            timeout_ms > 0 and options is None) else None
        self.lock = threading.Lock()
        self.done = False

    def cancel(self, error) -> int:
        with self.lock:
            if self.done:
                return 0
            for context in list(self.session._live_steps):
                context.cancel(error)
            return 1

    def finish(self) -> None:
        with self.lock:
            self.done = True


class TaskService:
    """The methods of the ``flowgraph.Task`` gRPC service for one task."""

    def __init__(self, cluster, job_name: str, task_index: int,
                 security: Security | None = None, threads: int = 0,
                 pinned: bool = False) -> None:
        self.cluster = ClusterSpec(cluster)
        self.security = security
        # The task's share of threads for a stage run (inter-op; 0: the sessions'
        # default), and whether the server's config chose it (then every stage gets it;
        # else each gets threads by its cost, `flowgraph.distributed.stage_cost`)
        self.threads, self.pinned = threads, pinned
        self.incarnation = uuid.uuid4().hex[:16]
        self.traffic: dict = {}
        self.data_port = 0  # the server's data plane (flowgraph.distributed.direct), if any
        self.data_local = None  # and its same-machine socket's name
        self.job_name, self.task_index = job_name, int(task_index)
        self.task_name = f"/job:{job_name}/replica:0/task:{self.task_index}"
        self.resource_target = (f"local://flowgraph-task/{job_name}/{self.task_index}/"
                                f"{uuid.uuid4().hex}")
        self._lock = threading.Lock()
        self._graphs: dict[str, StageGraph] = {}
        self._users: dict[str, set] = {}  # handle -> scopes of the sessions using it
        # Stage runs that may write state: [started, finished] (flowgraph/distributed/
        # prefetch.py: values read while equal, and equal to `started` later, are current).
        self._writes = [0, 0]
        self._run_ids = itertools.count(1)  # ids of push stage runs (sync_inline.PUSH_ID)
        self._steps: dict[int, tuple[float, dict]] = {}
        self._peers: dict[str, TaskClient] = {}
        self._running: dict[int, list] = {}  # step id -> [_Call]
        # One watchdog alarm for the earliest deadline among running stages (`_arm`), not
        # one per stage run: set again only for an earlier deadline, or when it fires.
        self._alarm = None
        self._alarm_at: float | None = None
        self._cancelled: dict[int, tuple] = {}  # step id -> (time, CancelledError)
        # Load the CPU kernel table now: a task's first stage run needs it, and this
        # (while the chief still builds its graph) is off the first step's path. Other
        # backends (OpenCL: ~0.3 s of discovery and kernel builds) load on first use, as
        # in a local session (`Backend.ensure_loaded` lets one thread load, others wait).
        cpu = get_backends().get("CPU")
        if cpu is not None:
            cpu.ensure_loaded()

    # -- rpc methods -------------------------------------------------------------------
    def GetStatus(self, header: dict, tensors: dict) -> tuple[dict, dict]:
        status = {"cluster": self.cluster.as_dict(), "job": self.job_name,
                  "task": self.task_index, "incarnation": self.incarnation,
                  "traffic": dict(self.traffic),
                  "process_cpu_s": time.process_time()}  # (what benchmarks sample)
        if self.data_port:
            status["data_port"] = self.data_port
            if self.data_local:
                status["data_local"] = self.data_local
        return status, {}

    def RegisterGraph(self, header: dict, tensors: dict) -> tuple[dict, dict]:
        graph_def = header.get("graph_def")
        if not isinstance(graph_def, dict):
            raise errors.InvalidArgumentError(
                None, None, "RegisterGraph needs a 'graph_def' object (Graph.as_graph_def())")
        handle = graph_handle(graph_def)
        session = header.get("session")
        with self._lock:
            if handle not in self._graphs:
                self._graphs[handle] = StageGraph(graph_def, self.resource_target,
                                                   self.threads, self.pinned)
            if session:
                self._users.setdefault(handle, set()).add(session)
            else:  # a client that never releases: the graph stays
                self._users.setdefault(handle, set()).add(None)
        return {"handle": handle, "incarnation": self.incarnation}, {}

    def RunStage(self, header: dict, tensors: dict) -> tuple[dict, dict]:
        """Run a stage; with ``"then"``, run that (read-only) stage header after it and
        return its values too, with the write epoch they were read at; with
        ``"read_epoch"``, answer the write epoch at which the run's values are current
        (a stage that writes and then reads, `prefetch.merged_graph`), if they are; with
        ``"expect_epoch"``, run only if no write started since that epoch, else answer
        ``"stale"`` (`flowgraph.distributed.prefetch`)."""
        then = header.get("then")
        if then is None:
            return self._run_stage(header, tensors, header.get("expect_epoch"))
        reply, values = self._run_stage(header, tensors, header.get("expect_epoch"))
        if reply.get("stale"):
            return reply, values
        with self._lock:
            start = self._writes[0] if self._writes[0] == self._writes[1] else None
        # (a "then" without a step or a deadline of its own runs in its caller's: the
        # master sends it as a fixed part, `wire.Base`)
        _, read = self._run_stage(then, {}, None, header)
        with self._lock:
            if start is not None and self._writes[0] == start:
                reply["epoch"] = start
        values.update(read)
        return reply, values

    def _run_stage(self, header: dict, tensors: dict, expect,
                   outer: dict | None = None) -> tuple[dict, dict]:
        stage = self._graphs.get(header["handle"])
        seen = header.get("incarnation")
        if stage is None or (seen is not None and seen != self.incarnation):
            raise errors.AbortedError(
                None, None,
                f"Task {self.task_name} restarted since the session registered its graphs "
                "(its variables and queues are new); create a new session "
                "(MonitoredSession does so by itself and restores the last checkpoint).")
        timing = header if outer is None or "step_id" in header else outer
        step_id = int(timing["step_id"])
        timeout_ms = int(timing.get("timeout_ms", 0))
        layout = stage.layout(header)
        feed_dict = {tensor: tensors[name] for name, tensor in layout.feeds}
        run_id = 0  # a push's id, with which its lock is put back if it fails holding it
        if stage.locks:
            run_id = next(self._run_ids)
            ident = np.array(run_id, np.int64)
            for lock in stage.locks:
                feed_dict[lock.push_id] = ident
        recvs = header.get("recvs")
        pulled: dict = {}
        handed_traces: list = []  # traced stages the pulls ran (master.delegate)
        if recvs:
            pulled = self._pull_all(step_id, recvs, header, timeout_ms, stage, feed_dict,
                                    handed_traces)
        session = stage.acquire(feed_dict)
        traced = stage_trace(header, timeout_ms)
        call = _Call(session, traced[0] if traced is not None else
                     RunOptions(timeout_in_ms=timeout_ms) if stage.may_block else None,
                     step_id, timeout_ms)
        writes = not stage.read_only
        finished = header.get("cleanup")
        clean = None  # with "read_epoch": the write count if none was in flight at start
        with self._lock:
            if finished:
                for sid in finished:
                    self._steps.pop(int(sid), None)
            cancelled = self._cancelled.get(step_id) if self._cancelled else None
            stale = expect is not None and self._writes[0] != expect
            if cancelled is None and not stale:
                running = self._running.get(step_id)
                if running is None:
                    self._running[step_id] = [call]
                else:
                    running.append(call)
                if self._writes[0] == self._writes[1] and header.get("read_epoch"):
                    clean = self._writes[0] + writes
                self._writes[0] += writes
                deadline = call.deadline
                if deadline is not None and (self._alarm_at is None
                                             or deadline < self._alarm_at):
                    self._arm(deadline)
        if cancelled is not None or stale:
            stage.release(session)
            if stale:
                return {"stale": True}, {}
            raise cancelled[1]
        lost = False  # the run failed and may have held a push's counter
        try:
            if traced is None:
                values = run_stage(session, layout, feed_dict, call.options)
            else:
                values = session.run(layout.fetches, feed_dict=feed_dict,
                                     options=call.options, run_metadata=traced[1])
        except Exception:
            lost = bool(run_id)
            raise
        finally:
            call.finish()
            with self._lock:
                if clean is not None and self._writes[0] != clean:
                    clean = None  # another write started meanwhile: not consistent
                self._writes[1] += writes
                mine = self._running.get(step_id)
                if mine is not None:
                    if call in mine:
                        mine.remove(call)
                    if not mine:
                        del self._running[step_id]
            stage.release(session)
            if lost:
                self._put_back_counters(stage, run_id)
        reply = {} if clean is None else {"epoch": clean}
        if traced is not None:
            reply.update(traced_reply(traced[1], bool(header.get("partitions")),
                                      self.task_name))
            if handed_traces:
                reply["handed"] = handed_traces
        if header.get("no_store"):  # (set where no later stage pulls these values)
            if layout.produced_returns is not None:
                return reply, {key: values[i] for key, i in layout.produced_returns}
            produced = dict(zip(layout.keys, values))
        else:
            produced = dict(zip(layout.keys, values))
            self._store(step_id).update(produced)
        return reply, {key: produced[key] if key in produced else pulled[key]
                       for key in layout.returns}

    def _pull_all(self, step_id: int, recvs: list, header: dict, timeout_ms: int, stage,
                  feed_dict: dict, traces: list) -> dict:
        """The values a stage's ``recvs`` name, pulled from their tasks (one call per
        task; ``runs``: stages those tasks run first, whose trace replies, if traced, go
        to `traces`); the placeholders' go into `feed_dict`."""
        timeout_s = timeout_ms / 1000.0 or None
        bf16 = bool(header.get("bfloat16"))
        by_source: dict = {}
        for placeholder, key, address, task in recvs:
            by_source.setdefault((address, task), []).append((placeholder, key))
        runs = header.get("runs") or {}
        pulled: dict = {}
        for (address, task), wanted in by_source.items():
            values = self._pull(step_id, [key for _, key in wanted], address, task,
                                timeout_s, bf16, runs.get(task), traces)
            pulled.update(values)
            for placeholder, key in wanted:
                if placeholder is not None:  # None: only returned (a delegated fetch)
                    feed_dict[stage.feed(placeholder)] = values[key]
        return pulled

    def RecvTensor(self, header: dict, tensors: dict) -> tuple[dict, dict]:
        step_id = int(header["step_id"])
        reply: dict = {}
        if header.get("run"):  # a stage handed to this pull (master.delegate)
            reply = trace_fields(self.RunStage(header["run"], {})[0])
        return reply, {key: self._local_value(step_id, key) for key in header["keys"]}

    def CleanupStep(self, header: dict, tensors: dict) -> tuple[dict, dict]:
        """Drop the stores of ``step_id`` and of the ids in ``step_ids``; with
        ``release`` (a closing session's scope), what that session registered: see
        `release_session`; with ``reset`` (a list of container names, all when empty),
        clear those resource containers (`RemoteSession.reset`)."""
        ids = [header["step_id"]] if "step_id" in header else []
        with self._lock:
            for sid in ids + list(header.get("step_ids", [])):
                self._steps.pop(int(sid), None)
        if "reset" in header:  # `tf.Session.reset(target, containers)`: a write
            with self._lock:
                self._writes[0] += 1
            try:
                manager_for_target(self.resource_target).clear(
                    [str(c) for c in header["reset"]] or None)
            finally:
                with self._lock:
                    self._writes[1] += 1
            return {}, {}
        if header.get("release"):
            return {"released": self.release_session(str(header["release"]))}, {}
        return {}, {}

    def release_session(self, session: str) -> int:
        """Forget a closed session: the stage graphs no other session registered (their
        local sessions closed) and the resources scoped to it (queues, readers, tables
        and iterators without a ``shared_name``, named ``<op>@<session>`` by the master),
        closed so that nothing waits on them. Returns how many graphs went."""
        dropped = []
        with self._lock:
            for handle, users in list(self._users.items()):
                if session in users:
                    users.discard(session)
                    if not users:
                        del self._users[handle]
                        dropped.append(self._graphs.pop(handle, None))
        for stage in dropped:
            if stage is not None:
                stage.close()
        resources = manager_for_target(self.resource_target)
        suffix = SCOPE_MARK + session
        for container, name in resources.names():
            if name.endswith(suffix):
                resource = resources.lookup(container, name)
                resources.delete(container, name)
                close = getattr(resource, "close_resource", None)
                if close is not None:
                    close()
        return len(dropped)

    def CancelStep(self, header: dict, tensors: dict) -> tuple[dict, dict]:
        """End this task's stages of a step (another stage of it failed): they raise
        `CancelledError`, and stages of the step that arrive later fail at once."""
        step_id = int(header["step_id"])
        error = errors.CancelledError(
            None, None, f"Step {step_id} was cancelled on {self.task_name}: "
            f"{header.get('reason') or 'the master cancelled it'}")
        now = time.monotonic()
        with self._lock:
            for sid in [s for s, (t, _) in self._cancelled.items() if now - t > STEP_TTL_S]:
                del self._cancelled[sid]
            self._cancelled[step_id] = (now, error)
            running = list(self._running.get(step_id, []))
        for call in running:
            call.cancel(error)
        return {"cancelled": len(running)}, {}

    # -- helpers -----------------------------------------------------------------------
    def _put_back_counters(self, stage: StageGraph, run_id: int) -> None:
        """After stage run `run_id` failed: put back each push counter it held (see
        `flowgraph.distributed.sync_inline`), so that the next pushes proceed."""
        session = stage.acquire()
        try:
            resources = manager_for_target(self.resource_target)
            for lock in stage.locks:
                if lock.restore(session, resources, run_id):
                    logger.warning(
                        "flowgraph.distributed: a synchronous push failed on %s while "
                        "holding its counter '%s'; the counter was put back.",
                        self.task_name, lock.queue_name)
        except Exception as e:  # (the run's own error is the one to report)
            logger.error("flowgraph.distributed: could not put back the counter of a "
                         "failed push on %s: %r", self.task_name, e)
        finally:
            stage.release(session)

    def _arm(self, at: float) -> None:
        """(Holding ``self._lock``.) The task's alarm fires `_expire` at `at` (monotonic
        seconds) instead of when it was set to."""
        if self._alarm is not None:
            watchdog.cancel(self._alarm)
        self._alarm_at = at
        self._alarm = watchdog.schedule(max(at - time.monotonic(), 0.0), self._expire, None)

    def _expire(self, _=None) -> None:
        """The alarm: cancel the running stages past their deadline, and set the alarm
        again for the earliest deadline still ahead, if any."""
        now = time.monotonic()
        due = []
        with self._lock:
            self._alarm = self._alarm_at = None
            later = None
            for calls in self._running.values():
                for call in calls:
                    deadline = call.deadline
                    if deadline is None:
                        continue
                    if deadline <= now:
                        call.deadline = None  # (cancelled once)
                        due.append(call)
                    elif later is None or deadline < later:
                        later = deadline
            if later is not None:
                self._arm(later)
        for call in due:
            call.cancel(errors.DeadlineExceededError(
                None, None, f"Timed out after {call.timeout_ms} ms waiting for a stage of "
                f"step {call.step_id} on {self.task_name} to finish (RunOptions."
                "timeout_in_ms or ConfigProto.operation_timeout_in_ms)"))

    def _store(self, step_id: int) -> dict:
        now = time.monotonic()
        with self._lock:
            entry = self._steps.get(step_id)
            if entry is None:
                for sid in [s for s, (t, _) in self._steps.items() if now - t > STEP_TTL_S]:
                    del self._steps[sid]
                entry = self._steps[step_id] = (now, {})
            return entry[1]

    def _local_value(self, step_id: int, key: str):
        with self._lock:
            entry = self._steps.get(step_id)
        if entry is None:
            raise errors.AbortedError(
                None, None,
                f"Task {self.task_name} holds nothing for step {step_id}: it restarted since "
                "the step began, or the step was cleaned up; run the step again in a new "
                "session.")
        if key not in entry[1]:
            raise errors.InternalError(
                None, None,
                f"Task {self.task_name} holds no tensor '{key}' for step {step_id}: the "
                "stage that produces it has not run on this task (a master bug) or the step "
                "was cleaned up.")
        return entry[1][key]

    def _pull(self, step_id: int, keys: list, address: str, task: str,
              timeout_s: float | None = None, bfloat16: bool = False,
              run: dict | None = None, traces: list | None = None) -> dict:
        """The tensors `keys` of step `step_id` from `task` (one call per source), within
        the stage's deadline; with `bfloat16`, float32 tensors travel truncated. `run`:
        a stage header that `task` runs first (its trace, if traced, goes to `traces`)."""
        if run:
            # The stage stops itself at the deadline (naming its op); the call's own
            # deadline, a little later, covers a task that hangs.
            timeout_s = (timeout_s or 0) + _RUN_GRACE_S if timeout_s else None
        if task == self.task_name:
            if run:
                traced = trace_fields(self.RunStage(run, {})[0])
                if traced and traces is not None:
                    traces.append(traced)
            return {key: self._local_value(step_id, key) for key in keys}
        with self._lock:
            peer = self._peers.get(address)
            if peer is None:
                peer = self._peers[address] = TaskClient(address, task,
                                                         security=self.security)
        header = {"step_id": step_id, "keys": keys}
        if run:
            header["run"] = run
        if bfloat16:
            header["reply_bfloat16"] = True
        reply, values = peer.call("RecvTensor", header, timeout_s=timeout_s)
        if run and traces is not None:
            traced = trace_fields(reply)
            if traced:
                traces.append(traced)
        return values

    def close(self) -> None:
        with self._lock:
            if self._alarm is not None:
                watchdog.cancel(self._alarm)
                self._alarm = self._alarm_at = None
            for stage in self._graphs.values():
                stage.close()
            self._graphs.clear()
            self._users.clear()
            for peer in self._peers.values():
                peer.close()
            self._peers.clear()

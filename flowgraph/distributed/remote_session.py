"""`tf.Session('grpc://host:port')`: the master in the client process.

`flowgraph.runtime.session.Session` hands targets starting with ``grpc://`` to this
class. The session asks the target task for its cluster, plans each run signature once
(`flowgraph.distributed.master.plan_run`), registers each stage graph with its task once,
and runs a step as a sequence of levels: the stages of a level run in parallel, one
``RunStage`` call each (a level of one stage runs in the calling thread), and tasks pull
the tensors a stage needs straight from the producing task. Fetched values come back
with the stage that produced them. A task of this process (the server the session
targets, typically) is called directly, without gRPC (`flowgraph.distributed.rpc`),
and tensors to or from such a task are relayed by the master or pulled by a pull that
runs their stage (`master.relay_through_master`, `master.delegate`): a worker + ps
training step costs two calls to the ps, and one once the apply call of each step also
reads the variables for the next (`flowgraph.distributed.prefetch`).
Closing the session tells each task it used (with the ``CleanupStep`` that drops its
last step stores): the task releases the stage graphs only this session registered and
the resources scoped to it (queues, readers, tables and iterators without a
``shared_name``).
When a step ends, the ids of its tasks' step stores ride on the next ``RunStage`` to each
task, which drops them (a failed step, and `close`, drop them with ``CleanupStep``).

Every call has a deadline: ``RunOptions(timeout_in_ms=...)`` for one run, else
``ConfigProto(operation_timeout_in_ms=...)``, else 60 s; the task stops a stage that
runs past it (`DeadlineExceededError` naming the blocked op). A task that is down fails
the step with `UnavailableError` naming it; one that restarted since the session
registered its graphs (its incarnation changed) fails it with `AbortedError`.

``ConfigProto(graph_options=GraphOptions(enable_bfloat16_sendrecv=True))`` makes tasks
send each other float32 tensors truncated to bfloat16 (the whitepaper's lossy
compression); feeds and fetched values stay exact. ``ConfigProto(rpc_options=...)``
sets the token and TLS files (`flowgraph.distributed.rpc.Security`).

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.distributed import Server
>>> server = Server.create_local_server()
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [2])
...     y = x * 2.0
...     with tf.Session(server.target) as sess:
...         print(sess.run(y, {x: [1.0, 2.0]}))
[2. 4.]
>>> server.stop()
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import contextvars
import logging
import random
import threading
import time
import uuid

import numpy as np

from flowgraph.distributed import wire
from flowgraph.distributed.cluster_spec import filtered_cluster
from flowgraph.distributed.master import (
    check_input_pipelines,
    delegate,
    mark_stores,
    placement_log,
    plan_run,
    relay_through_master,
    report_parts,
    task_name,
)
from flowgraph.distributed.prefetch import Prefetch, merged_graph, plan_prefetch
from flowgraph.distributed.rpc import (
    DEFAULT_TIMEOUT_S,
    Security,
    TaskClient,
    local_security,
    to_grpc_address,
)
from flowgraph.distributed.sync_prefetch import sync_aware
from flowgraph.distributed.trace import TraceRequest
from flowgraph.distributed.worker import graph_handle
from flowgraph.framework import errors
from flowgraph.framework.graph import Graph, get_default_graph
from flowgraph.framework.operation import Tensor
from flowgraph.runtime.config import ConfigProto
from flowgraph.runtime.fetch import FetchMapper, fetch_key
from flowgraph.runtime.session import Session

__all__ = ["RemoteSession", "no_start_wait"]

logger = logging.getLogger("tensorflow")

# TF's ``_DeviceAttributes`` of a grpc session: its four fields (the incarnation is
# derived from the name, as a local session's `DeviceAttributes` does).
_RemoteDevice = collections.namedtuple("_RemoteDevice",
                                       ["name", "device_type", "memory_limit_bytes",
                                        "incarnation"])
_STATUS_TIMEOUT_S = 10.0
_RPC_GRACE_S = 2.0
_CLOSE_WAIT_S = 1.0
_START_POLL_S = (0.05, 1.0)  # first and longest pause between tries of a task not up yet
_START_LOG_S = 10.0  # how often the wait for such a task is logged
# How a call to a task that is not up yet fails (nothing listens on its port, or its
# host name does not resolve yet); any other failure (TLS, a refused token) is final.
_NOT_STARTED = ("Connection refused", "DNS resolution failed", "Name or service not known")
# Whether a session waits for tasks that are not up yet (`no_start_wait`).
_START_WAIT = contextvars.ContextVar("flowgraph_start_wait", default=True)


@contextlib.contextmanager
def no_start_wait():
    """Sessions created or run inside fail at once with `UnavailableError` when a task
    they need is not up yet, instead of waiting for it (up to the operation deadline):
    for callers that retry on their own, such as `MonitoredSession` with its
    ``max_wait_secs``.

    >>> with no_start_wait():
    ...     _START_WAIT.get()
    False
    """
    token = _START_WAIT.set(False)
    try:
        yield
    finally:
        _START_WAIT.reset(token)


class RemoteSession(Session):
    """A session whose ops run on the tasks of a cluster (see the module docstring)."""

    def __init__(self, target: str = "", graph: Graph | None = None,
                 config: ConfigProto | None = None) -> None:
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(graph).__name__}")
        if config is not None and not isinstance(config, ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, but got {type(config).__name__}")
        self._target = target.decode() if isinstance(target, bytes) else target
        self._graph = graph if graph is not None else get_default_graph()
        self._config = config or ConfigProto()
        self._context_stack: list = []
        self._closed = False
        self._pool = None
        ms = int(getattr(self._config, "operation_timeout_in_ms", 0) or 0)
        self._timeout_s = ms / 1000.0 if ms > 0 else DEFAULT_TIMEOUT_S
        address = to_grpc_address(self._target)
        self._security = Security.from_config(self._config,
                                              fallback=local_security(address))
        graph_options = getattr(self._config, "graph_options", None)
        self._bfloat16 = bool(getattr(graph_options, "enable_bfloat16_sendrecv", False))
        master = TaskClient(address, self._target, self._timeout_s, self._security,
                            in_process=True)
        # Tasks not reached yet may still be starting: as TensorFlow's session creation,
        # calls to them are tried again until the operation deadline (`_until_started`).
        self._reached: set = set()
        status, _ = self._until_started(
            self._target, lambda: master.call(
                "GetStatus", {}, timeout_s=min(self._timeout_s, _STATUS_TIMEOUT_S)))
        # ConfigProto(device_filters=...): the tasks this session may use (TF's sessions
        # list and place on the matching devices only).
        self._cluster = filtered_cluster(status["cluster"],
                                         list(getattr(self._config, "device_filters", ())))
        self._master_task = master.task_name = task_name(status["job"], int(status["task"]))
        self._clients = {self._master_task: master}
        # The incarnation of each task when this session first registered a graph there.
        self._incarnations = {self._master_task: status.get("incarnation")}
        self._registered: dict = {}
        self._plans: dict = {}
        self._mappers: dict = {}  # fetch_key -> FetchMapper
        self._signatures: dict = {}  # (mapper, *fed tensors) -> (tensors, reports, plan key)
        self._accepted: dict = {}  # fed Tensor -> (dtype, shape) of the last value it took
        self._scope = uuid.uuid4().hex[:12]  # names this session's iterators on the tasks
        self._logged: set = set()  # ops whose placement log_device_placement printed
        self._finished: dict = {}  # task -> ids of ended steps whose store it still holds
        self._finished_lock = threading.Lock()
        self._threads = concurrent.futures.ThreadPoolExecutor(
            8, thread_name_prefix="fg-master")

    # -- devices -----------------------------------------------------------------------
    def list_devices(self) -> list:
        """One CPU device per task of the cluster (names only; no memory limit known)."""
        out = []
        for job, tasks in sorted(self._cluster.items()):
            indices = range(len(tasks)) if isinstance(tasks, list) else sorted(
                int(i) for i in tasks)
            for i in indices:
                name = f"{task_name(job, i)}/device:CPU:0"
                out.append(_RemoteDevice(name, "CPU", 0, abs(hash(name)) % (1 << 62)))
        return out

    def _client(self, task: str) -> TaskClient:
        client = self._clients.get(task)
        if client is None:
            job, index = task.split("/")[1][4:], int(task.rsplit(":", 1)[1])
            tasks = self._cluster[job]
            address = tasks[index] if isinstance(tasks, list) else (
                tasks.get(index) or tasks.get(str(index)))
            client = self._clients[task] = TaskClient(address, task, self._timeout_s,
                                                      self._security, in_process=True)
        return client

    # -- run ---------------------------------------------------------------------------
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Run `fetches` on the cluster, feeding `feed_dict` (as `Session.run`)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        fetched = fetch_key(fetches)
        mapper = self._mappers.get(fetched) if fetched is not None else None
        if mapper is None:
            mapper = FetchMapper.build(self._graph, fetches)
            if fetched is not None:
                self._mappers[fetched] = mapper
        feeds = self._feeds(feed_dict) if feed_dict else {}
        timeout_ms = int(getattr(options, "timeout_in_ms", 0) or 0)
        timeout_s = timeout_ms / 1000.0 if timeout_ms > 0 else self._timeout_s
        returned: dict = {}
        signature = (mapper, *feeds)  # (what a repeated run looks up once)
        found = self._signatures.get(signature) if fetched is not None else None
        if found is None:
            tensors = [t for t in mapper.unique_tensors
                       if t in feeds or not self._report_parts(t)]
            reports = [t for t in mapper.unique_tensors if t not in tensors]
            found = (tensors, reports,
                     (tuple(tensors), tuple(mapper.unique_ops), frozenset(feeds)))
            if fetched is not None:
                self._signatures[signature] = found
        tensors, reports, key = found
        for t in reports:
            returned[t.name] = self._run_report(self._report_parts(t), timeout_s)
        plan = self._plans.get(key)
        if plan is None:
            plan = plan_run(self._graph, tensors, mapper.unique_ops, feeds,
                            self._master_task, self._cluster, scope=self._scope)
            local = [t for t in plan.tasks if self._client(t).is_in_process()]
            in_process = set(local)
            if self._client(self._master_task).is_in_process():
                in_process.add(self._master_task)
            check_input_pipelines(plan, in_process, self._master_task)
            if getattr(self._config, "log_device_placement", False):
                for line in placement_log(plan, self._logged):
                    print(line)
            if not self._bfloat16:  # (bfloat16 transfers keep the task-to-task pulls)
                relay_through_master(plan, local)
            delegate(plan, local, with_returns=not self._bfloat16)
            mark_stores(plan)
            if not self._bfloat16:
                plan.prefetch = self._prefetch_for(plan, local)
            self._plans[key] = plan
        self._register(plan)
        step_id = random.getrandbits(62)
        ok = False
        prefetch = plan.prefetch
        trace = TraceRequest.of(options, run_metadata)
        if trace is not None and prefetch is not None:  # every stage runs with its own call
            prefetch.drop()
            prefetch = None
        try:
            if prefetch is not None and self._run_prefetched(prefetch, step_id, feeds,
                                                             timeout_s, returned):
                # (its calls stored nothing on the tasks: no cleanup to send, unless the
                # apply stage could not be merged with the read)
                ok = None if prefetch.unstored else True
                return self._fetched(mapper, feeds, returned)
            for level in plan.levels:
                if len(level) == 1:  # nothing to overlap with: no hand-off to the pool
                    stage = level[0]
                    if prefetch is not None and stage is prefetch.apply:
                        returned.update(self._apply(prefetch, step_id, feeds, timeout_s,
                                                    returned, None))
                        continue
                    returned.update(self._run_stage(stage, step_id, feeds, timeout_s,
                                                    returned, trace))
                    continue
                earlier = dict(returned)
                calls = {self._threads.submit(self._run_stage, stage, step_id, feeds,
                                              timeout_s, earlier, trace): stage
                         for stage in level}
                try:
                    for call in concurrent.futures.as_completed(calls):
                        returned.update(call.result())
                except errors.OpError as e:
                    self._cancel(plan, step_id, calls, e)
                    raise
            ok = True
        except BaseException:
            if prefetch is not None:
                prefetch.drop()
            raise
        finally:
            self._cleanup(plan, step_id, ok)
        return self._fetched(mapper, feeds, returned)

    def _prefetch_for(self, plan, local):
        """The plan's `Prefetch`, if any: none for asynchronous steps in a cluster of
        several trainers (chief and workers), whose updates interleave on the ps, so
        that prefetched values are mostly stale and each stale answer wastes the worker
        stage's run (alone, 2 workers: heavy MLP 34-44 steps/s with it, 53-56 without;
        small MLP 1,130-2,100 with it, 2,040-2,050 without). Synchronous steps keep
        theirs: a token orders them."""
        found = sync_aware(plan_prefetch(plan, local))
        if type(found) is Prefetch:
            trainers = sum(len(self._cluster.get(job, ())) for job in ("chief", "worker"))
            if trainers > 1:
                return None
        return found

    @staticmethod
    def _fetched(mapper, feeds: dict, returned: dict):
        values = [feeds[t] if t in feeds else returned[t.name] for t in mapper.unique_tensors]
        return mapper.rebuild(values)

    def _run_prefetched(self, prefetch, step_id: int, feeds: dict, timeout_s: float,
                        returned: dict) -> bool:
        """The step from the values the last apply call read (`flowgraph.distributed.
        prefetch`): the worker stage fed with them, then the apply call, which the ps
        runs only if nothing wrote to it since. False (nothing applied) when there were
        no values or the ps answered that they are stale: run the step the ordinary way."""
        values, epoch = prefetch.take()
        if values is None:
            return False
        stage = prefetch.worker
        base = prefetch.bases.get("worker")
        if base is None:  # the worker stage fed the values instead of pulling them
            # (its values go to the apply call in its request: nothing pulls them)
            base = prefetch.bases["worker"] = wire.Base({
                **self._fixed(stage), "recvs": [], "return": prefetch.worker_returns,
                "feeds": [*stage.feeds, *(p for p, _ in prefetch.recv_feeds)],
                "no_store": True})
        tensors = {p: feeds[t] for p, t in stage.feeds.items()}
        for p, key in prefetch.recv_feeds:
            tensors[p] = values[key]
        _, out = self._client(stage.task).call(
            "RunStage", self._step_part(stage, step_id, timeout_s, runs=False), tensors,
            timeout_s=timeout_s + _RPC_GRACE_S, base=base)
        mine = {**returned, **out} if returned else out
        applied = self._apply(prefetch, step_id, feeds, timeout_s, mine, epoch)
        prefetch.applied(stale=applied is None)
        if applied is None:
            return False
        returned.update(out)
        returned.update(applied)
        for key in prefetch.client_keys:
            returned[key] = values[key]
        return True

    def _apply(self, prefetch, step_id: int, feeds: dict, timeout_s: float,
               returned: dict, epoch) -> dict | None:
        """The apply stage's call, which also runs the read stage after it for the next
        step (`Prefetch.keep`); with `epoch`, only if the ps saw no write since (None
        when it did: nothing was applied)."""
        stage = prefetch.apply
        then = epoch is not None or prefetch.wants_values()
        base = prefetch.bases.get(then)
        if base is None:
            base = prefetch.bases[then] = wire.Base(self._apply_fixed(prefetch, then))
        header = self._step_part(stage, step_id, timeout_s)
        if epoch is not None:
            header["expect_epoch"] = epoch
        tensors = {p: returned[key] for p, key in stage.relays}
        reply, values = self._client(stage.task).call(
            "RunStage", header, tensors, timeout_s=timeout_s + _RPC_GRACE_S, base=base)
        prefetch.keep(reply, values)
        if reply.get("stale"):
            return None
        return {key: values[key] for key in stage.returns}

    def _apply_fixed(self, prefetch, then: bool) -> dict:
        """The fixed header of the apply call; with `then`, of the call that also reads
        the next step's values: A and R as one stage graph (`prefetch.merged_graph`),
        else R as the ``"then"`` of A's call (run in its step, under its deadline)."""
        stage, read = prefetch.apply, prefetch.read
        fixed = self._fixed(stage)
        if not then:
            return fixed
        merged = merged_graph(stage, read)
        if merged is None:
            prefetch.unstored = False
            return {**fixed, "then": {**self._fixed(read), "return": prefetch.keys}}
        fetches = [*stage.fetches, *read.fetches]
        returns = [*stage.returns, *(k for k in prefetch.keys if k not in stage.returns)]
        # When every value it fetches comes back in the reply, nothing pulls them later
        # (the apply stage is the step's last): the ps need not keep them.
        unstored = {key for _, key in fetches} <= set(returns)
        prefetch.unstored = unstored
        return {**fixed, "handle": self._register_graph(stage.task, merged),
                "fetches": fetches, "read_epoch": True, "return": returns,
                **({"no_store": True} if unstored else {})}

    def _report_parts(self, t):
        """Per-task graphs for a fetched ``report_uninitialized_variables`` whose variables
        live on several tasks (see `master.report_parts`), else None."""
        if t.op.type != "ReportUninitializedVariables":
            return None
        key = ("report", t)
        if key not in self._plans:
            self._plans[key] = report_parts(t.op, self._master_task, self._cluster)
        return self._plans[key]

    def _run_report(self, parts, timeout_s: float) -> np.ndarray:
        """Each task reports its own uninitialized variables; the result keeps the op's
        order of names."""
        step_id = random.getrandbits(62)
        calls = []
        for task, graph_def, _ in parts:
            name = graph_def["node"][-1]["name"] + ":0"
            header = {"handle": self._register_graph(task, graph_def), "step_id": step_id,
                      "feeds": [], "recvs": [], "fetches": [[name, "report"]], "targets": [],
                      "return": ["report"], "timeout_ms": int(timeout_s * 1000),
                      "incarnation": self._incarnations.get(task)}
            calls.append(self._threads.submit(self._client(task).call, "RunStage", header,
                                              None, timeout_s + _RPC_GRACE_S))
        try:
            missing = set()
            for call in calls:
                missing.update(call.result()[1]["report"].tolist())
        finally:
            for task, _, _ in parts:
                self._threads.submit(self._quiet_call, self._client(task), "CleanupStep",
                                     {"step_id": step_id})
        order = [n.encode() if isinstance(n, str) else n for _, _, names in parts
                 for n in names]
        out = np.empty(len([n for n in order if n in missing]), dtype=object)
        out[:] = [n for n in order if n in missing]
        return out

    def _feeds(self, feed_dict) -> dict:
        out = {}
        accepted = self._accepted
        for key, value in feed_dict.items():
            t = key if type(key) is Tensor else self._graph.as_graph_element(key)
            if type(value) is np.ndarray and accepted.get(t) == (value.dtype, value.shape):
                out[t] = value  # what this tensor accepted before: no check again
                continue
            if not isinstance(t, Tensor):
                raise TypeError(f"Session.run: cannot feed {key!r}: it is not a Tensor")
            dtype = t.dtype.base_dtype
            arr = np.asarray(value, dtype=None if dtype.name == "string"
                             else dtype.as_numpy_dtype)
            if not t.shape.is_compatible_with(arr.shape):
                raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor "
                                 f"'{t.name}', which has shape '{t.shape}'")
            if arr.dtype.kind in "biufc":
                accepted[t] = (arr.dtype, arr.shape)
            out[t] = arr
        return out

    def _register(self, plan) -> None:
        for stage in plan.stages:
            if not stage.handle:
                stage.handle = self._register_graph(stage.task, stage.graph_def)

    def _register_graph(self, task: str, graph_def: dict) -> str:
        """The task's handle for `graph_def`, registering it once per session."""
        handle = graph_handle(graph_def)
        if (task, handle) not in self._registered:
            client = self._client(task)
            reply, _ = self._until_started(task, lambda: client.call(
                "RegisterGraph", {"graph_def": graph_def, "session": self._scope}))
            known = self._incarnations.setdefault(task, reply.get("incarnation"))
            if known != reply.get("incarnation"):
                raise errors.AbortedError(
                    None, None, f"Task {task} restarted since this session first reached it "
                    "(its variables and queues are new); create a new session "
                    "(MonitoredSession does so by itself).")
            self._registered[(task, handle)] = reply["handle"]
        return self._registered[(task, handle)]

    def _until_started(self, task: str, call):
        """``call()``, the first call of this session to `task`; while the task is
        not started yet (connections refused, its name not resolved), tried again with
        growing pauses until the session's operation deadline
        (``ConfigProto(operation_timeout_in_ms=)``, else 60 s), as TensorFlow's session
        creation waits for the cluster's tasks (it waits forever; this gives up with
        the last `UnavailableError`, saying how long it waited). A task reached once
        fails its later calls at once: a task that went down mid-training is an error for
        the step, not something to wait for. Inside `no_start_wait`, no wait."""
        if task in self._reached:
            return call()
        pause, logged, began = _START_POLL_S[0], time.monotonic(), time.monotonic()
        tries, give_up = 0, began + self._timeout_s
        while True:
            try:
                result = call()
            except errors.UnavailableError as e:
                now = time.monotonic()
                if (not _START_WAIT.get() or now >= give_up
                        or not any(sign in e.message for sign in _NOT_STARTED)):
                    if tries:
                        raise errors.UnavailableError(
                            None, None, f"{e.message} (waited {now - began:.1f} s for it to "
                            "start)") from None
                    raise
                tries += 1
                if now - logged >= _START_LOG_S:
                    logger.info("Still waiting for task %s to start (%.0f s so far; the "
                                "session gives up after %.0f s)", task, now - began,
                                self._timeout_s)
                    logged = now
                time.sleep(min(pause, give_up - now))
                pause = min(2 * pause, _START_POLL_S[1])
                continue
            self._reached.add(task)
            return result

    def _fixed(self, stage) -> dict:
        """The parts of `stage`'s RunStage header that every step repeats, made once (and
        kept encoded as ``stage.base``, a `wire.Base`)."""
        header = stage.header
        if header is None:
            recvs = [[p, key, self._client(task).address, task]
                     for p, key, task in stage.recvs]
            for handed in stage.delegated:  # its client fetches come back with this stage
                recvs += [[None, key, self._client(handed.task).address, handed.task]
                          for key in handed.returns]
            header = {
                "handle": stage.handle, "feeds": [*stage.feeds, *(p for p, _ in stage.relays)],
                "recvs": recvs, "fetches": stage.fetches, "targets": stage.targets,
                "return": stage.returns, "incarnation": self._incarnations.get(stage.task)}
            if not stage.stores:  # nothing pulls its values (master.mark_stores)
                header["no_store"] = True
            if self._bfloat16 and recvs:
                header["bfloat16"] = True
            stage.base = wire.Base(header)
            stage.header = header
        return header

    def _step_part(self, stage, step_id: int, timeout_s: float, runs: bool = True) -> dict:
        """What `stage`'s RunStage header says for this step alone: the step, its deadline,
        the ended steps whose stores the task may drop and, with `runs`, the full headers
        of the stages it was handed (`master.delegate`), which its pulls run."""
        part = {"step_id": step_id, "timeout_ms": int(timeout_s * 1000)}
        if stage.delegated and runs:
            part["runs"] = {handed.task: self._stage_header(handed, step_id, timeout_s)
                            for handed in stage.delegated}
        if self._finished:  # (read without the lock: empty after prefetched steps)
            with self._finished_lock:
                finished = self._finished.pop(stage.task, None)
            if finished:
                part["cleanup"] = finished
        return part

    def _stage_header(self, stage, step_id: int, timeout_s: float,
                      runs: bool = True) -> dict:
        """`stage`'s whole RunStage header for one step (`_fixed` and `_step_part`)."""
        return {**self._fixed(stage), **self._step_part(stage, step_id, timeout_s, runs)}

    def _run_stage(self, stage, step_id: int, feeds: dict, timeout_s: float,
                   returned: dict, trace: TraceRequest | None = None) -> dict:
        tensors = {p: feeds[t] for p, t in stage.feeds.items()}
        for p, key in stage.relays:  # produced by an earlier level (master.py, relays)
            tensors[p] = returned[key]
        # The task stops the stage at the deadline itself (its error names the op that
        # was blocked); the RPC's own deadline, a little later, covers a task that hangs.
        self._fixed(stage)
        header = self._step_part(stage, step_id, timeout_s)
        if trace is not None:
            header.update(trace.header_fields())
            for handed in header.get("runs", {}).values():  # (fresh dicts: `_stage_header`)
                handed.update(trace.header_fields())
        try:
            reply, values = self._client(stage.task).call(
                "RunStage", header, tensors,
                timeout_s=timeout_s + _RPC_GRACE_S * (1 + bool(stage.delegated)),
                base=stage.base)
        except errors.OpError as e:
            if stage.delegated:  # a stage it handed on may still run (e.g. blocked)
                self._cancel_tasks({d.task for d in stage.delegated}, step_id, e)
            raise
        if trace is not None:
            trace.merge(reply)
        return values

    def _cancel(self, plan, step_id: int, calls: dict, error) -> None:
        """A stage failed: cancel the step's stages still running on other tasks (they
        may be blocked, e.g. on a queue) and wait briefly for them to end."""
        pending = [c for c in calls if not c.done()]
        if not pending:
            return
        tasks = {calls[c].task for c in pending}
        tasks |= {d.task for c in pending for d in calls[c].delegated}
        self._cancel_tasks(tasks, step_id, error)
        concurrent.futures.wait(pending, timeout=_RPC_GRACE_S)

    def _cancel_tasks(self, tasks, step_id: int, error) -> None:
        reason = f"{type(error).__name__} in another stage: {str(error)[:200]}"
        for task in sorted(tasks):  # not via the pool: it may be full of blocked stages
            self._quiet_call(self._client(task), "CancelStep",
                             {"step_id": step_id, "reason": reason})

    def _cleanup(self, plan, step_id: int, ok: bool | None) -> None:
        """After a step: `ok` True (the tasks drop its stores with their next call),
        False (it failed: tell them now) or None (it left no stores)."""
        if ok is None:
            return
        if ok:  # the next RunStage to each task carries the id (no call of its own)
            storing = plan.tasks if plan.storing is None else plan.storing
            if storing:
                with self._finished_lock:
                    for task in storing:
                        self._finished.setdefault(task, []).append(step_id)
            return
        # Not awaited: the step's result does not depend on it, and a task that is down
        # has no step state left to drop (its error is ignored).
        for task in plan.tasks:
            self._threads.submit(self._quiet_call, self._client(task), "CleanupStep",
                                 {"step_id": step_id})

    def _release(self) -> None:
        """Tell every task this session used that it ended: each drops the stores of
        its ended steps, the stage graphs only this session registered and the
        resources scoped to it (`TaskService.release_session`); briefly waited for."""
        with self._finished_lock:
            finished, self._finished = self._finished, {}
        tasks = set(finished) | {task for task, _ in self._registered}
        calls = [self._threads.submit(self._quiet_call, self._client(task), "CleanupStep",
                                      {"step_ids": finished.get(task, []),
                                       "release": self._scope}, _CLOSE_WAIT_S)
                 for task in sorted(tasks)]
        concurrent.futures.wait(calls, timeout=_CLOSE_WAIT_S)

    def _quiet_call(self, client: TaskClient, method: str, header: dict,
                    timeout_s: float = 5.0) -> None:
        try:
            client.call(method, header, None, min(self._timeout_s, timeout_s))
        except errors.OpError:
            pass

    @staticmethod
    def reset(target, containers=None, config=None) -> None:
        """Clear the resource containers (variables, queues, tables...) of every task of
        `target`'s cluster, all of them when `containers` is None (``tf.Session.reset``);
        a session that runs later sees its variables uninitialized.

        >>> import flowgraph as tf
        >>> from flowgraph.distributed import Server
        >>> server = Server.create_local_server()
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0)
        ...     with tf.Session(server.target) as sess:
        ...         sess.run(v.initializer)
        ...     tf.Session.reset(server.target)
        ...     with tf.Session(server.target) as sess:
        ...         print(sess.run(tf.is_variable_initialized(v)))
        False
        >>> server.stop()
        """
        text = target.decode() if isinstance(target, bytes) else target
        config = config or ConfigProto()
        address = to_grpc_address(text)
        security = Security.from_config(config, fallback=local_security(address))
        client = TaskClient(address, text, DEFAULT_TIMEOUT_S, security, in_process=True)
        try:
            status, _ = client.call("GetStatus", {}, timeout_s=_STATUS_TIMEOUT_S)
        finally:
            client.close()
        for job, tasks in sorted(status["cluster"].items()):
            indices = (range(len(tasks)) if isinstance(tasks, list)
                       else sorted(int(i) for i in tasks))
            for i in indices:
                where = tasks[i] if isinstance(tasks, list) else (
                    tasks.get(i) or tasks.get(str(i)))
                peer = TaskClient(where, task_name(job, i), DEFAULT_TIMEOUT_S, security,
                                  in_process=True)
                try:
                    peer.call("CleanupStep", {"reset": list(containers or [])},
                              timeout_s=_STATUS_TIMEOUT_S)
                finally:
                    peer.close()

    # -- unsupported parts of Session --------------------------------------------------
    def partial_run_setup(self, fetches, feeds=None) -> str:
        raise errors.UnimplementedError(
            None, None, "partial_run is not supported on grpc:// sessions yet; use run.")

    def partial_run(self, handle, fetches, feed_dict=None):
        return self.partial_run_setup(fetches)

    def close(self) -> None:
        """Close the connections; the tasks keep their variables (as TF's servers do)."""
        if self._closed:
            return
        self._closed = True
        self._release()
        self._threads.shutdown(wait=False)
        for client in self._clients.values():
            client.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

"""Optimistic variable reads: a training step that costs one call to its ps, not two.

A worker + ps training step (`flowgraph.distributed.master`, step 5) makes two calls to
the ps: the pull that reads the variables (the *read* stage R, delegated to the worker's
pull) and the ``RunStage`` that applies the gradients (the *apply* stage A). The values R
reads at the start of step N+1 are the values A left at the end of step N, unless some
other run wrote to the ps in between. So the apply call of step N also runs R (its
header's ``"then"``) and returns the values; step N+1 computes its worker stage W from
them and sends its apply call with the ps's *write epoch* those values were read at
(``"expect_epoch"``). The ps applies only if no write started on it since; otherwise it
answers ``"stale"`` (without applying) and the step runs again the ordinary way, pull
first. A step thus returns exactly what the ordinary path would have returned had its
pull run at the moment the apply began.

State and invariants:

* the ps counts writes (`flowgraph.distributed.worker.TaskService`): ``started`` and
  ``finished``, raised around every stage run that may change state (any stateful op
  other than a variable's handle); a read is *consistent* at epoch E when no write was in
  flight as it began (started == finished == E) and none started before it ended;
* values travel with their epoch only when consistent; an apply call carrying
  ``expect_epoch=E`` runs only while ``started == E``, checked and raised in one locked
  step, so no write slips between the check and the apply;
* stale answers, and values read while another write ran, back off: after one, the
  plan's next steps read the ordinary way (and their apply calls read nothing for later)
  for 1, 2, 4, ... up to `MAX_BACKOFF` steps before the values are fetched again for a
  try; a step that applies from them resets it. Two workers on one ps, whose updates
  always interleave, thus cost the ordinary two calls per step, not three (and a
  session of a cluster with several trainers does not prefetch asynchronous steps at
  all: `RemoteSession._prefetch_for`);
* the apply call that reads runs A and R as *one* stage graph on the ps
  (`merged_graph`: R's reads wait, by control edges, for every op of A), one run
  instead of two; its values are consistent at epoch E + 1 when no write was in flight
  as it began (started == finished == E, its own write then raises started to E + 1) and
  none other started before it ended (started still E + 1);
* W is re-run after a stale answer, so it must be pure: no stateful op (no variable,
  queue, iterator or random op), no asynchronous kernel. R must only read (variables,
  stateless ops). `plan_prefetch` refuses any other plan shape, which then runs as before.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.distributed.master import delegate, plan_run, relay_through_master
>>> worker = "/job:worker/replica:0/task:0"
>>> with tf.Graph().as_default() as g:
...     with tf.device("/job:ps/task:0"):
...         w = tf.Variable(1.0, name="w")
...     x = tf.placeholder(tf.float32, [])
...     (grad,) = tf.gradients(tf.square(w * x), [w])
...     with tf.device("/job:ps/task:0"):
...         train = tf.assign_sub(w, 0.1 * grad)
>>> plan = plan_run(g, [], [train.op], {x: 1}, worker, {"ps": ["h:1"], "worker": ["h:2"]})
>>> relay_through_master(plan, [worker]), delegate(plan, [worker])
(1, 1)
>>> found = plan_prefetch(plan, [worker])
>>> found.worker.task, found.apply.task, found.keys
('/job:worker/replica:0/task:0', '/job:ps/replica:0/task:0', ['w/read:0'])
"""

from __future__ import annotations

import os
import threading

from flowgraph.framework.registry import OpCost

__all__ = ["MAX_BACKOFF", "SWITCH", "Prefetch", "merged_graph", "plan_prefetch",
           "read_only"]

MAX_BACKOFF = 64  # steps read the ordinary way after stale answers, at most
SWITCH = "FLOWGRAPH_PREFETCH"  # "0" in a client's environment: every step pulls (A/B runs)


def _pure(op) -> bool:
    return not op.op_def.stateful and op.op_def.cost is not OpCost.ASYNC


# stateful, yet write nothing
_READS = frozenset({"VariableV2", "Variable", "ReadVariableOrDefault"})


def read_only(ops) -> bool:
    """Whether running `ops` changes no state: stateless ops, variable handles and
    ``ReadVariableOrDefault`` (the global step's shared read, which hooks fetch) only.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     v = tf.Variable(1.0)
    ...     r = tf.identity(v)
    >>> read_only([v.op, r.op]), read_only(g.get_operations())
    (True, False)
    """
    return all(not op.op_def.stateful or op.type in _READS for op in ops)


class Prefetch:
    """The three stages of an eligible plan and the last values R read, with their
    epoch (None when there are none to use)."""

    def __init__(self, worker, read, apply) -> None:
        self.worker, self.read, self.apply = worker, read, apply
        self.keys = [key for _, key in read.fetches]  # what R's "then" run returns
        self.recv_feeds = [(p, key) for p, key, _ in worker.recvs]
        self.client_keys = list(read.returns)  # R's values the client fetches
        own = set(self.client_keys)
        self.worker_returns = [k for k in worker.returns if k not in own]
        # The master's fixed header parts of the calls (flowgraph.distributed.wire.Base):
        # "worker", and the apply call's with (True) and without (False) the read.
        self.bases: dict = {}
        # Whether a step that applied from the values left no step store on any task
        # (its apply call runs A and R merged, with "no_store"); set by the session.
        self.unstored = True
        self._lock = threading.Lock()
        self._values: dict | None = None
        self._epoch = None
        self._backoff = 0  # ordinary steps after the next stale answer
        self._skip = 0  # ordinary steps still to run before the values are read again

    def take(self) -> tuple[dict | None, int | None]:
        """The prefetched values and their epoch, once (a concurrent run of the same
        plan reads the ordinary way)."""
        with self._lock:
            values, self._values = self._values, None
            return (None if self._skip else values), self._epoch

    def wants_values(self) -> bool:
        """Whether an ordinary step's apply call should read the values for the next
        step (not while backing off after stale answers)."""
        with self._lock:
            if self._skip > 1:
                self._skip -= 1
                return False
            self._skip = 0
            return True

    def applied(self, stale: bool) -> None:
        """Record how a step that used the values ended."""
        with self._lock:
            if stale:
                self._back_off()
            else:
                self._backoff = 0

    def _back_off(self) -> None:
        self._backoff = min(max(2 * self._backoff, 1), MAX_BACKOFF)
        self._skip = self._backoff

    def keep(self, reply: dict, values: dict) -> None:
        """Keep R's values from an apply call's reply, if the ps read them consistently;
        values read while another write ran back off as a stale answer does (the other
        writer will likely interleave again: reading them cost a transfer for nothing)."""
        epoch = reply.get("epoch")
        with self._lock:
            if epoch is None:
                self._values = None
                if not reply.get("stale") and self.keys and self.keys[0] in values:
                    self._back_off()  # read, but not consistently
            else:
                self._values = {key: values[key] for key in self.keys}
                self._epoch = epoch

    def drop(self) -> None:
        with self._lock:
            self._values = None


def plan_prefetch(plan, local_tasks) -> Prefetch | None:
    """A `Prefetch` for `plan` when it is one pure local worker stage W (level 1) whose
    pull runs a read-only stage R of one remote task, then one apply stage A of that task
    fed only by W (relayed); else None (see the module docstring)."""
    if os.environ.get(SWITCH, "1") == "0":
        return None
    local = set(local_tasks)
    if len(plan.levels) != 2 or len(plan.levels[0]) != 1 or len(plan.levels[1]) != 1:
        return None
    (worker,), (apply,) = plan.levels
    if worker.task not in local or apply.task in local or len(worker.delegated) != 1:
        return None
    (read,) = worker.delegated
    if (read.task != apply.task or read.delegated or read.recvs or read.relays
            or read.feeds or apply.recvs or apply.feeds or apply.delegated):
        return None
    if any(task != read.task for _, _, task in worker.recvs) or not worker.recvs:
        return None
    if not all(_pure(op) for op in worker.ops) or not read_only(read.ops):
        return None
    return Prefetch(worker, read, apply)


def merged_graph(apply, read) -> dict | None:
    """One stage graph def that runs `apply` (A) and then `read` (R) in one run: R's nodes
    join A's, each of R's own ops waiting (control edges) for every op of A that nothing
    in A waits for, so R reads what A left. Nodes both hold (variables copied into each
    stage) appear once. None when the two disagree on a node of the same name.

    >>> a = {"node": [{"name": "w", "op": "VariableV2", "input": []},
    ...               {"name": "up", "op": "AssignAdd", "input": ["w", "g"]}]}
    >>> r = {"node": [{"name": "w", "op": "VariableV2", "input": []},
    ...               {"name": "w/read", "op": "Identity", "input": ["w"]}]}
    >>> class Stage: pass
    >>> A, R = Stage(), Stage()
    >>> A.graph_def, A.targets, A.fetches, R.graph_def = a, ["up"], [], r
    >>> [n["input"] for n in merged_graph(A, R)["node"]]
    [[], ['w', 'g'], ['w', '^up']]
    """
    nodes = list(apply.graph_def["node"])
    known = {node["name"]: node for node in nodes}
    waits = [f"^{name}" for name in dict.fromkeys(
        [*apply.targets, *(t.rsplit(":", 1)[0] for t, _ in apply.fetches)])]
    for node in read.graph_def["node"]:
        same = known.get(node["name"])
        if same is not None:
            if same != node:
                return None
            continue
        if node["op"] not in ("VariableV2", "VarHandleOp", "Const"):
            node = {**node, "input": [*node.get("input", []), *waits]}
        nodes.append(node)
    return {**apply.graph_def, "node": nodes}

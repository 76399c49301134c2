"""The master's planning: place a run's ops on tasks and cut it into stage graphs.

A `RemoteSession` plans each distinct run signature (fetches, targets, fed tensors) once:

1. **prune**: the ops the fetches and targets need, cut at fed tensors (the project's one
   walk, `flowgraph.framework.graph_walk.depth_first_order`, loop back edges marked).
2. **place on tasks**: an op that takes a variable by reference, or the handle of a
   resource (a queue, a lookup table, a reader, a tf.data iterator: the output of an op
   that creates one, possibly through ``Identity``), runs on the task that holds it,
   whatever its own device says, as in TensorFlow (a worker's ``dequeue`` of a queue on
   the ps runs on the ps, and only the dequeued values travel); otherwise its task comes
   from its device's job and task fields, where an op in
   a colocation group takes the device of the group's op (so a variable's initializer,
   optimizer slots and updates go with it). Unset fields take the master's job
   and task (a job without a task means task 0). Device types and indices (``/cpu:0``)
   are left to the task's own placement. Two moves save a stage (a round trip) without
   changing any value: a ``NoOp`` whose control inputs all run on one task runs there
   (an optimizer's ``update`` group after the ps applied the gradients), and a ``Const``
   (or a stateless expression of constants, e.g. ``tf.zeros([])``) whose readers all run
   on one other task runs beside them (a learning rate, the global step's initial value
   that an Estimator's step read falls back to).
3. **stages**: an op's *level* is the largest level among its inputs (data and control),
   plus one for an input from another task; then an op whose consumers are all on its
   task moves up to the lowest level among them (a constant joins its reader's stage).
   Ops of one task and one level form a *stage*. Every edge between stages goes to a
   strictly higher level or stays on one task, so running levels in order respects
   every dependency, and the stages of one level (on different tasks) run in parallel.
   A ps + worker training step has three: ps (read variables) -> worker (forward,
   backward) -> ps (apply updates).
4. **stage graphs**: each stage becomes a graph def of its own (flowgraph's graph JSON).
   A tensor from another stage becomes a ``Placeholder`` that the task feeds with the
   tensor pulled (``RecvTensor``) from the producing task's step store, keyed by the
   tensor's name; control edges from other stages are dropped (the level order already
   enforces them). A variable or resource op without inputs (a ``VariableV2``, a queue)
   used in a later stage of the same task is copied into that stage: it names the same
   variable or queue in the task's shared resources. A queue, reader, lookup table or
   iterator without a ``shared_name`` gets one scoped to the session
   (``<op name>@<session scope>``), so every stage graph of the session finds the same
   resource and another session another one, as TensorFlow's servers scope such
   kernels; the task releases them when the session closes (variables stay shared by
   name). The ``dataset_id`` of an iterator op names its tf.data
   pipeline, a Python object that no graph def carries, in this process's table
   (`flowgraph.distributed.stage_graph.share_dataset`), so only a task of this process
   can run it (`check_input_pipelines` says so at planning).

5. **fewer round trips** (applied by the session, which knows which tasks live in its
   own process and cost no RPC: the *local* tasks):

   * `relay_through_master`: a tensor a local task sends to another task goes with the
     consumer's ``RunStage`` call (the master has it for free) instead of a pull;
   * `delegate`: a remote stage whose outputs only a local stage of the next level reads
     (and that needs no feed, no transfer and orders nothing else) is not called by the
     master: the local stage's pull carries it, and the remote task runs it and answers
     the pull.

   A worker + ps training step from the worker's process then costs two calls, both
   to the ps: the pull of the variables (which runs the read stage) and the apply stage,
   with the gradients in its request. TensorFlow's costs four (two ``RunGraph``, two
   ``RecvTensor``). The session then drops the pull too, reading each step's variables
   with the previous step's apply call (`flowgraph.distributed.prefetch`).

A while loop must stay within one stage (its ``NextIteration`` -> ``Merge`` edge would
otherwise go backwards between stages); planning says so if it does not.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     with tf.device("/job:ps/task:0"):
...         a = tf.square(tf.random_uniform([], name="c"), name="a")
...     b = tf.add(a, 2.0, name="b")
>>> plan = plan_run(g, [b], [], {}, "/job:worker/replica:0/task:0",
...                 {"ps": ["h:1"], "worker": ["h:2"]})
>>> for s in plan.stages:
...     print(s.task, s.level, [op.name for op in s.ops])
/job:ps/replica:0/task:0 0 ['c/shape', 'c/RandomUniform', 'a']
/job:worker/replica:0/task:0 1 ['b/y', 'b']
"""

from __future__ import annotations

import dataclasses

from flowgraph.distributed.cluster_spec import ClusterSpec
from flowgraph.distributed.stage_graph import share_dataset
from flowgraph.distributed.worker import SCOPE_MARK
from flowgraph.framework import errors
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.graph_walk import depth_first_order
from flowgraph.framework.serialization import GRAPH_DEF_VERSION, encode_attr, node_to_dict
from flowgraph.ops.iterator_ops import lookup_dataset

__all__ = ["Stage", "StepPlan", "check_input_pipelines", "delegate", "mark_stores",
           "placement_log", "plan_run", "relay_through_master", "report_parts", "task_name"]

# Ops whose output 0 is a handle to a resource of their task that no shared_name attr
# marks: its value is a Python object in the task's resource container and never travels.
_HANDLE_MAKERS = frozenset({"IteratorFromStringHandleV2", "TensorArrayV3",
                            "TensorArrayGradV3", "StackV2",
                            # their TF1 forms (flowgraph/ops/state_v1_ops.py, ...)
                            "TensorArray", "TensorArrayV2", "TensorArrayGrad",
                            "TensorArrayGradV2", "TensorArrayGradWithShape", "Stack"})
# Resource ops without a shared_name that name their resource by op name, so every
# session of a task sees the same one (TensorFlow's variables).
_SHARED_BY_NAME = frozenset({"VariableV2", "Variable", "VarHandleOp"})


def task_name(job: str, task: int) -> str:
    return f"/job:{job}/replica:0/task:{task}"


@dataclasses.dataclass(eq=False)
class Stage:
    """One task's share of one level of a step."""

    task: str
    level: int
    ops: list
    graph_def: dict = dataclasses.field(default_factory=dict)
    feeds: dict = dataclasses.field(default_factory=dict)  # placeholder -> fed Tensor
    recvs: list = dataclasses.field(default_factory=list)  # [placeholder, key, task]
    relays: list = dataclasses.field(default_factory=list)  # [placeholder, key]: master feeds
    delegated: list = dataclasses.field(default_factory=list)  # stages its pulls run first
    fetches: list = dataclasses.field(default_factory=list)  # [tensor name, key]
    targets: list = dataclasses.field(default_factory=list)
    returns: list = dataclasses.field(default_factory=list)  # keys sent back to the client
    handle: str = ""  # set when registered with the task
    stores: bool = True  # whether another stage pulls from its step store (mark_stores)
    header: dict | None = None  # the parts of its RunStage header that every step repeats
    base: object = None  # header as a flowgraph.distributed.wire.Base (encoded once)


@dataclasses.dataclass
class StepPlan:
    stages: list
    levels: list  # list of lists of stages, in run order
    tasks: list  # every task the step touches
    prefetch: object = None  # a flowgraph.distributed.prefetch.Prefetch, when eligible
    storing: list | None = None  # the tasks that keep a step store (mark_stores); None: all


def _is_back_edge(op, dep) -> bool:
    return op.op_def.control_flow == "merge" and dep.op_def.control_flow == "next_iteration"


def _makes_resource(op) -> bool:
    """Whether `op` creates (or looks up) a resource and outputs its handle first."""
    op_def = op.op_def
    return op_def.stateful and ("shared_name" in (op_def.attrs or {})
                                or op.type in _HANDLE_MAKERS)


def _is_handle_op(op) -> bool:
    outs = op._outputs
    if op._inputs or not outs:
        return False
    return _makes_resource(op) or all(
        t.dtype.is_ref_dtype or t.dtype.name == "resource" for t in outs)


def _resource_source(t):
    """The op that made the resource `t` is a handle of (through ``Identity`` ops), or
    None when `t` is a value (a variable's ref output counts as a value here)."""
    while t.op.type == "Identity" and t.op._inputs:
        t = t.op._inputs[0]
    if t.value_index != 0 or t.dtype.is_ref_dtype or not _makes_resource(t.op):
        return None
    return t.op


def _prune(fetch_tensors, target_ops, fed) -> list:
    roots = [t.op for t in fetch_tensors if t not in fed] + list(target_ops)

    def deps(op):
        return [t.op for t in op._inputs if t not in fed] + list(op._control_inputs)

    return depth_first_order(roots, deps, _is_back_edge)


class _Placer:
    def __init__(self, graph, default_task: str, cluster: ClusterSpec) -> None:
        self.graph, self.cluster = graph, cluster
        spec = DeviceSpec.from_string(default_task)
        self.default_job, self.default_index = spec.job, spec.task or 0

    def device_of(self, op) -> str:
        for name in op._colocation or ():
            try:
                return self.graph.get_operation_by_name(name).device
            except (KeyError, ValueError):
                continue
        return op.device

    def task_of(self, op, placed: dict) -> str:
        holders: dict = {}  # task -> names of the variables and resources op takes there
        for k, t in enumerate(op._inputs):
            if t.dtype.is_ref_dtype and op.op_def.is_ref_input(k):
                source = t.op
            else:
                source = _resource_source(t)
            if source is not None and source in placed:
                holders.setdefault(placed[source], []).append(source.name)
        if len(holders) == 1:  # an op taking a variable or a resource runs beside it
            return next(iter(holders))
        if len(holders) > 1:
            where = "; ".join(f"{', '.join(repr(n) for n in names)} on {task}"
                              for task, names in sorted(holders.items()))
            raise errors.UnimplementedError(
                None, op,
                f"Operation '{op.name}' ({op.type}) takes variables or resources (queues, "
                f"tables, iterators) that live on several tasks: {where}. An op that "
                "changes or reads a resource runs on the resource's task, so they must "
                "share one: create them under one tf.device('/job:ps/task:N'), or use one "
                "op per task.")
        spec = DeviceSpec.from_string(self.device_of(op))
        job = spec.job or self.default_job
        index = spec.task if spec.task is not None else (
            self.default_index if job == self.default_job else 0)
        if job not in self.cluster.jobs or index not in self.cluster.task_indices(job):
            raise errors.InvalidArgumentError(
                None, op,
                f"Cannot assign a device for operation '{op.name}' ({op.type}): it asks for "
                f"'/job:{job}/task:{index}', which is not a task of the cluster "
                f"{self.cluster.as_dict()}. Fix the op's device or the ClusterSpec.")
        return task_name(job, index)


def _session_scoped(op, attrs: dict) -> bool:
    """Whether `op` makes a resource that lives per session: a queue, reader, lookup
    table or iterator without a ``shared_name`` (a table's ``use_node_name_sharing``
    shares it by op name instead). Variables are shared by name across sessions."""
    op_def = op.op_def
    return (op_def.stateful and "shared_name" in (op_def.attrs or {})
            and op.type not in _SHARED_BY_NAME and not attrs.get("shared_name")
            and not attrs.get("use_node_name_sharing"))


def _local_device(device: str) -> str:
    spec = DeviceSpec.from_string(device)
    return DeviceSpec(device_type=spec.device_type,
                      device_index=spec.device_index).to_string()


def _node(op, inputs: list, colocation_ok, scope: str = "") -> dict:
    node = node_to_dict(op)
    node["input"] = inputs
    node["device"] = _local_device(op.device)
    attrs = node.get("attr", {})
    if _session_scoped(op, attrs):
        # One resource for every stage graph of the session, as one kernel would be, and
        # another for every other session (TensorFlow's worker scopes such a kernel to
        # its session); the task drops it when the session closes.
        attrs["shared_name"] = f"{op.name}{SCOPE_MARK}{scope or format(id(op.graph), 'x')}"
    if attrs.get("dataset_id"):
        attrs["dataset_id"] = share_dataset(lookup_dataset(op, attrs["dataset_id"]))
    coloc = [c for c in node.pop("colocation", []) if colocation_ok(c)]
    if coloc:
        node["colocation"] = coloc
    node["output_shapes"] = [encode_attr(t.shape) for t in op._outputs]
    node["output_dtypes"] = [t.dtype.base_dtype.name for t in op._outputs]
    return node


def _placeholder(name: str, tensor) -> dict:
    dtype = tensor.dtype.base_dtype
    return {"name": name, "op": "Placeholder", "input": [], "device": "",
            "attr": {"dtype": encode_attr(dtype), "shape": encode_attr(tensor.shape)},
            "output_shapes": [encode_attr(tensor.shape)], "output_dtypes": [dtype.name]}


def _consumers(order, fed) -> dict:
    consumers: dict = {}
    for op in order:
        for p in [t.op for t in op._inputs if t not in fed] + list(op._control_inputs):
            consumers.setdefault(p, []).append(op)
    return consumers


def _constant_valued(order, fed) -> set:
    """Ops whose value is a function of constants alone: ``Const``, and stateless ops
    without control inputs whose inputs are all such ops (``tf.zeros([])`` is a ``Fill``
    of two constants)."""
    found: set = set()
    for op in order:
        if op._control_inputs or op.op_def.stateful or op.op_def.control_flow:
            continue
        if op.type == "Const" or (op._inputs and all(
                t not in fed and t.op in found for t in op._inputs)):
            found.add(op)
    return found


def _move_constants(order, task, fed, keep) -> None:
    """A constant, or a value computed from constants alone, read only on one other task
    is computed there: it needs no transfer (nor a stage) of its own. Consumers first,
    so a whole constant expression follows its reader (the global step's initial value
    goes to the ps with the read that falls back to it)."""
    consumers = _consumers(order, fed)
    movable = _constant_valued(order, fed)
    for op in reversed(order):
        users = consumers.get(op)
        if op not in movable or op in keep or not users:
            continue
        where = {task[u] for u in users}
        if len(where) == 1:
            task[op] = where.pop()


def _levels(order, task, fed, keep) -> dict:
    level: dict = {}
    for op in order:
        best = 0
        for t in op._inputs:
            p = t.op
            if t in fed or p not in level or (_is_handle_op(p) and task[p] == task[op]):
                continue
            best = max(best, level[p] + (task[p] != task[op]))
        for c in op._control_inputs:
            if c in level:
                best = max(best, level[c] + (task[c] != task[op]))
        level[op] = best
    # Then as late as possible for ops whose consumers are all on their task: a constant
    # joins the stage that reads it instead of costing a stage (an RPC) of its own.
    consumers = _consumers(order, fed)
    for op in reversed(order):
        users = consumers.get(op)
        if users and op not in keep and all(task[u] == task[op] for u in users):
            level[op] = max(level[op], min(level[u] for u in users))
    return level


def _check_loops(order, stage_of) -> None:
    for op in order:
        if op.op_def.control_flow != "merge":
            continue
        for t in op._inputs:
            p = t.op
            if p.op_def.control_flow == "next_iteration" and stage_of.get(p) != stage_of[op]:
                raise errors.UnimplementedError(
                    None, op,
                    f"The while loop of '{op.name}' spans tasks (or reads a value another "
                    "task computes inside the loop); distributed runs need each while loop "
                    "on one task. Put the loop's ops under one tf.device('/job:.../task:N').")


def plan_run(graph, fetch_tensors, target_ops, fed: dict, default_task: str,
             cluster, scope: str = "") -> StepPlan:
    """The stages of a run: see the module docstring. `fed` maps fed Tensors to anything
    (only membership counts); `scope` names the iterators without a ``shared_name`` (one
    per session; default: one per graph)."""
    cluster = ClusterSpec(cluster)
    order = _prune(fetch_tensors, target_ops, fed)
    placer = _Placer(graph, default_task, cluster)
    task: dict = {}
    for op in order:
        task[op] = placer.task_of(op, task)
        if op.type == "NoOp" and not op._inputs:
            sources = {task[c] for c in op._control_inputs if c in task}
            if len(sources) == 1:
                task[op] = sources.pop()
    keep = set(target_ops) | {t.op for t in fetch_tensors}
    _move_constants(order, task, fed, keep)
    level = _levels(order, task, fed, keep)
    stages: dict = {}
    for op in order:
        key = (level[op], task[op])
        if key not in stages:
            stages[key] = Stage(task[op], level[op], [])
        stages[key].ops.append(op)
    stage_of = {op: stages[(level[op], task[op])] for op in order}
    _check_loops(order, stage_of)
    wanted = {t for t in fetch_tensors if t not in fed}
    sent = {t for op in order for t in op._inputs
            if t not in fed and stage_of[t.op] is not stage_of[op]
            and not (_is_handle_op(t.op) and task[t.op] == task[op])}
    for stage in stages.values():
        _build_stage(stage, task, fed, wanted, sent, target_ops, scope)
    ordered = sorted(stages.values(), key=lambda s: (s.level, s.task))
    levels: dict = {}
    for stage in ordered:
        levels.setdefault(stage.level, []).append(stage)
    return StepPlan(ordered, [levels[k] for k in sorted(levels)],
                    sorted({s.task for s in ordered}))


def _build_stage(stage: Stage, task: dict, fed: dict, wanted: set, sent: set,
                 target_ops, scope: str) -> None:
    members = set(stage.ops)
    copies: dict = {}  # variable ops copied in from an earlier stage of this task
    placeholders: dict = {}  # Tensor -> placeholder name
    consumed: set = set()
    nodes = []

    def placeholder_for(t, from_feed: bool) -> str:
        name = placeholders.get(t)
        if name is None:
            name = placeholders[t] = f".fg_{'feed' if from_feed else 'recv'}/{len(placeholders)}"
            nodes.append(_placeholder(name, t))
            if from_feed:
                stage.feeds[name] = t
            else:
                stage.recvs.append([name, t.name, task[t.op]])
        return name

    for op in stage.ops:
        inputs = []
        for k, t in enumerate(op._inputs):
            p = t.op
            if t in fed:
                inputs.append(placeholder_for(t, True) + ":0")
            elif p in members:
                inputs.append(t.name)
                consumed.add(p)
            elif _is_handle_op(p) and task[p] == stage.task:
                copies[p] = None
                inputs.append(t.name)
            elif op.op_def.is_ref_input(k) and t.dtype.is_ref_dtype:
                raise errors.InvalidArgumentError(
                    None, op,
                    f"Operation '{op.name}' ({op.type}) on {stage.task} updates '{t.name}', "
                    f"which lives on {task[p]}; an op that changes a variable must be on "
                    f"the variable's task (colocate it: tf.colocate_with(variable)).")
            else:
                inputs.append(placeholder_for(t, False) + ":0")
        for c in op._control_inputs:
            if c in members:
                inputs.append(f"^{c.name}")
                consumed.add(c)
        nodes.append(_node(op, inputs, lambda name: True, scope))
    names = {op.name for op in stage.ops} | {op.name for op in copies}
    for node in nodes:
        if "colocation" in node:
            node["colocation"] = [c for c in node["colocation"] if c in names]
            if not node["colocation"]:
                del node["colocation"]
    copied = [_node(op, [], lambda name: name in names, scope) for op in copies]
    stage.graph_def = {"versions": {"producer": GRAPH_DEF_VERSION}, "node": copied + nodes}
    outgoing = {t for op in stage.ops for t in op._outputs if t in wanted or t in sent}
    stage.fetches = sorted([t.name, t.name] for t in outgoing)
    stage.returns = sorted(t.name for t in outgoing if t in wanted)
    stage.targets = [op.name for op in stage.ops
                     if op not in consumed or op in target_ops]


def relay_through_master(plan: StepPlan, local_tasks) -> int:
    """Turn the pulls from a task of `local_tasks` (tasks the master calls in its own
    process) by another task into relays: the producer returns the tensor to the master
    (no copy, no RPC), which sends it with the consumer's ``RunStage``, saving the
    consumer's round trip. Returns how many it turned.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     a = tf.square(tf.random_uniform([]), name="a")
    ...     with tf.device("/job:ps/task:0"):
    ...         b = tf.add(a, 2.0, name="b")
    >>> plan = plan_run(g, [b], [], {}, "/job:worker/replica:0/task:0",
    ...                 {"ps": ["h:1"], "worker": ["h:2"]})
    >>> relay_through_master(plan, {"/job:worker/replica:0/task:0"})
    1
    >>> plan.stages[0].returns, plan.stages[1].relays, plan.stages[1].recvs
    (['a:0'], [['.fg_recv/0', 'a:0']], [])
    """
    local = set(local_tasks)
    producer = {(stage.task, key): stage for stage in plan.stages for _, key in stage.fetches}
    turned = 0
    for stage in plan.stages:
        pulls = []
        for placeholder, key, source in stage.recvs:
            if source not in local or stage.task in local:
                pulls.append([placeholder, key, source])
                continue
            made = producer[(source, key)]
            if key not in made.returns:
                made.returns.append(key)
            stage.relays.append([placeholder, key])
            turned += 1
        stage.recvs = pulls
    return turned


def delegate(plan: StepPlan, local_tasks, with_returns: bool = True) -> int:
    """Hand remote stages to the pulls of the local stages that alone read them (see the
    module docstring, step 5) and drop them from `plan.levels`; returns how many. A
    handed stage runs after its own level and before its reader, so after every stage it
    ran after before. Without `with_returns`, a stage whose values the client fetches
    keeps its call (the pull may truncate values to bfloat16; fetches stay exact).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     with tf.device("/job:ps/task:0"):
    ...         a = tf.square(tf.random_uniform([]), name="a")
    ...     b = tf.add(a, 2.0, name="b")
    >>> plan = plan_run(g, [b], [], {}, "/job:worker/replica:0/task:0",
    ...                 {"ps": ["h:1"], "worker": ["h:2"]})
    >>> delegate(plan, {"/job:worker/replica:0/task:0"})
    1
    >>> [[s.task for s in level] for level in plan.levels], len(plan.levels[0][0].delegated)
    ([['/job:worker/replica:0/task:0']], 1)
    """
    local = set(local_tasks)
    readers: dict = {}  # (task, key) -> stages pulling it
    for stage in plan.stages:
        for _, key, source in stage.recvs:
            readers.setdefault((source, key), set()).add(stage)
    handed = 0
    for stage in plan.stages:
        if (stage.task in local or stage.recvs or stage.relays or stage.feeds
                or (stage.returns and not with_returns)):
            continue
        users = set()
        for _, key in stage.fetches:
            users |= readers.get((stage.task, key), set())
        if len(users) != 1:
            continue
        (user,) = users
        if user.task not in local or user.level != stage.level + 1:
            continue
        if any(o.task == stage.task and o.level == user.level for o in plan.stages):
            continue  # it would run beside its task's next stage instead of before it
        mine = set(stage.ops)
        if any(c in mine for other in plan.stages if other is not stage and other is not user
               for op in other.ops for c in op._control_inputs):
            continue  # another stage waits for this one: it keeps its level
        user.delegated.append(stage)
        user.returns.extend(k for k in stage.returns if k not in user.returns)
        handed += 1
    kept = [[s for s in level if not any(s in u.delegated for u in plan.stages)]
            for level in plan.levels]
    plan.levels[:] = [level for level in kept if level]
    return handed


def mark_stores(plan: StepPlan) -> list:
    """Mark the stages whose values some stage pulls from their task's step store
    (``stage.stores``; the others' calls say ``"no_store"``: their values go back in
    the reply, or nowhere), after `relay_through_master` and `delegate` changed the
    pulls; returns the tasks that keep a store, also kept as ``plan.storing`` (the
    session sends the ids of ended steps to those only).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     with tf.device("/job:ps/task:0"):
    ...         a = tf.square(tf.random_uniform([]), name="a")
    ...     b = tf.add(a, 2.0, name="b")
    >>> plan = plan_run(g, [b], [], {}, "/job:worker/replica:0/task:0",
    ...                 {"ps": ["h:1"], "worker": ["h:2"]})
    >>> mark_stores(plan), [s.stores for s in plan.stages]
    (['/job:ps/replica:0/task:0'], [True, False])
    """
    pulled = {(source, key) for stage in plan.stages for _, key, source in stage.recvs}
    for stage in plan.stages:
        stage.stores = any((stage.task, key) in pulled for _, key in stage.fetches)
    plan.storing = sorted({stage.task for stage in plan.stages if stage.stores})
    return plan.storing


def report_parts(op, default_task: str, cluster) -> list | None:
    """Split a ``ReportUninitializedVariables`` op whose variables live on several tasks
    (the default ``ready_op`` once a worker has local variables) into one graph def per
    task: ``[(task, graph_def, names)]``, each graph reporting its own variables under
    the op's name. None if the op reads one task's variables (the plan handles it) or
    takes something other than variable ops."""
    placer = _Placer(op.graph, default_task, ClusterSpec(cluster))
    by_task: dict = {}
    for t, name in zip(op._inputs, op.attrs["names"]):
        if not _is_handle_op(t.op):
            return None
        by_task.setdefault(placer.task_of(t.op, {}), []).append((t, name))
    if len(by_task) < 2:
        return None
    parts = []
    for task, items in sorted(by_task.items()):
        variables = list(dict.fromkeys(t.op for t, _ in items))
        nodes = [_node(v, [], lambda name: False) for v in variables]
        node = _node(op, [t.name for t, _ in items], lambda name: False)
        node["attr"]["names"] = encode_attr([name for _, name in items])
        parts.append((task, {"versions": {"producer": GRAPH_DEF_VERSION},
                             "node": [*nodes, node]}, [name for _, name in items]))
    return parts


def check_input_pipelines(plan: StepPlan, local_tasks, master_task: str) -> None:
    """Refuse a plan that runs a tf.data pipeline, or the NumPy arrays of a
    `numpy_input_fn`, on a task outside this process: both are Python objects of the
    process that built the graph, which no graph def carries (TensorFlow ships a pipeline
    as graph functions, and feeds `numpy_input_fn`'s arrays from the client). Raises
    `UnimplementedError` naming the op, its task and the fix.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     with tf.device("/job:ps/task:0"):
    ...         it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(3))
    ...     x = it.get_next()
    >>> worker = "/job:worker/replica:0/task:0"
    >>> plan = plan_run(g, [x], [], {}, worker, {"ps": ["h:1"], "worker": ["h:2"]})
    >>> check_input_pipelines(plan, [worker], worker)
    Traceback (most recent call last):
    ...
    flowgraph.framework.errors.UnimplementedError: Operation 'OneShotIterator' ...
    """
    local = set(local_tasks)
    for stage in plan.stages:
        if stage.task in local:
            continue
        for op in stage.ops:
            if op.type == "NumpyBatchSource":
                what = ("reads the NumPy arrays of a numpy_input_fn",
                        "these arrays (held by this process)", "the input_fn's ops")
            elif "dataset_id" in (op.op_def.attrs or {}):
                what = ("starts a tf.data pipeline", "tf.data pipelines (Python objects "
                        "here)", "the dataset and its iterator")
            else:
                continue
            if master_task in local:
                fix = (f"build {what[2]} under tf.device('"
                       f"{master_task.replace('/replica:0', '')}') (the worker that runs "
                       "this session and consumes the elements)")
            else:
                fix = ("start this process's own tf.train.Server and open the session on "
                       "its target, with the input pipeline on that task, or feed the "
                       "data through placeholders")
            raise errors.UnimplementedError(
                None, op,
                f"Operation '{op.name}' ({op.type}) {what[0]} on "
                f"{stage.task}, a task in another process than this session's master "
                f"({master_task}): a graph def does not carry {what[1]}, so they are read "
                f"only on tasks of the session's process. To fix it, {fix}.")


def placement_log(plan: StepPlan, seen: set) -> list:
    """Lines ``name: (type): device`` for the ops of `plan` not in `seen` (added to it),
    what ``ConfigProto(log_device_placement=True)`` prints: the task the master chose and
    the device the op asks for within it (the CPU when it asks for none).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     with tf.device("/job:ps/task:0"):
    ...         a = tf.square(tf.constant(2.0, name="c"), name="a")
    >>> plan = plan_run(g, [a], [], {}, "/job:worker/replica:0/task:0",
    ...                 {"ps": ["h:1"], "worker": ["h:2"]})
    >>> for line in placement_log(plan, set()):
    ...     print(line)
    c: (Const): /job:ps/replica:0/task:0/device:CPU:0
    a: (Square): /job:ps/replica:0/task:0/device:CPU:0
    """
    lines = []
    for stage in plan.stages:
        for op in stage.ops:
            if op in seen:
                continue
            seen.add(op)
            spec = DeviceSpec.from_string(op.device)
            device = f"/device:{spec.device_type or 'CPU'}:{spec.device_index or 0}"
            lines.append(f"{op.name}: ({op.type}): {stage.task}{device}")
    return lines

"""Run-plan compilation: from (fetches, targets, feeds) to an executor `Plan`.

`compile_plan` is a sequence of passes, each a function of its own module with explicit
inputs and outputs:

1. prune (`prune.py`): the ops the run needs, producers first;
2. rewrite (`rewrite.py`): merge common subexpressions, fold constants; then prune
   again, with folded tensors as sources;
3. place (`placement.py`): a device per op;
4. lay out slots (`layout.py`): a `NodeTable`, one node per op, one slot per value;
5. partition (`partition.py`): `_Send`/`_Recv` pairs across devices;
6. bind kernels (`bind.py`): each node's kernel and calling-convention flags; then
   chains of unary math ops become one node (`rewrite_arith.compose_unary_chains`);
   then fusion (`fusion.py`): groups of elementwise nodes become one fused node;
7. schedule (`schedule.py`): control edges, use counts, which nodes may change thread;
   then, with a memory budget, the memory schedule (`memory_schedule.py`): control
   edges that keep each device's live bytes within it;
8. in place (`in_place.py`): kernel variants that overwrite a dead input;
9. frames (`frames.py`, plans with loops): each node's while-loop frame;

and `emit` hands the finished table to the Cython executor. A new pass (a memory
schedule, fusion, distributed partitioning) reads and extends the `NodeTable` between
two of these. The session caches a compiled plan per run signature, so a repeated `run`
does no graph analysis.

>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     x = tf.placeholder(tf.float32, name="x")
...     y = tf.negative(x, name="y")
...     with tf.Session() as sess:
...         cp = compile_plan(sess._compile_env, [y], [], [x])
>>> [n.name for n in cp.nodes]
['y']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flowgraph.backends.base import Device
from flowgraph.framework.graph import Graph, InaccessibleTensorError
from flowgraph.framework.graph_release import release_with
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.runtime import _executor, plan_cache
from flowgraph.runtime.bind import KernelCache, bind_kernels
from flowgraph.runtime.cost_model import CostModel
from flowgraph.runtime.frames import assign_frames
from flowgraph.runtime.fusion import fuse_elementwise, fusion_enabled
from flowgraph.runtime.in_place import bind_in_place
from flowgraph.runtime.layout import lay_out_slots
from flowgraph.runtime.memory_schedule import MemorySchedule, default_budgets, memory_schedule
from flowgraph.runtime.node_table import NodeInfo, NodeTable
from flowgraph.runtime.op_errors import describe_error
from flowgraph.runtime.partition import fetches_to_host, has_transfers, partition
from flowgraph.runtime.placement import check_local_task, place
from flowgraph.runtime.prune import needed_ops
from flowgraph.runtime.rewrite import rewrite
from flowgraph.runtime.rewrite_arith import compose_unary_chains
from flowgraph.runtime.schedule import schedule

__all__ = ["CompileEnv", "CompiledPlan", "NodeInfo", "compile_plan"]


@dataclass
class CompileEnv:
    """What compiling a plan needs from its session: the graph, the devices, the
    session's config and its kernel cache."""

    graph: Graph
    devices: list[Device]
    config: object  # ConfigProto
    kernels: KernelCache
    costs: CostModel | None = None  # for placement by cost (`cost_model.py`)
    # Where the session's state lives: colocation name -> device name (`placement.py`)
    kept: dict = field(default_factory=dict)


class CompiledPlan:
    """An executable plan plus what the session needs to feed, fetch and trace it."""

    def __init__(self) -> None:
        self.plan: _executor.Plan | None = None
        self.feed_slots: dict[Tensor, int] = {}
        self.fetch_slots: list[int] = []
        self.deref_fetch: list[bool] = []
        # fetches of a quantized type computed by the plan: returned as plain integers
        self.plain_quantized: list[int] = []
        self.fetch_to_host: list[tuple[int, Device]] = []  # fetches held on a device
        self.nodes: list[NodeInfo] = []
        self.devices: list[Device] = []
        self.async_devices: list[Device] = []  # synchronized at the end of each step
        self.partition_graphs: list[dict] = []
        self.needs_rendezvous = False
        # For step statistics (read only when tracing): per node its input slots and
        # (first output slot, output count); per slot its initial use count and device.
        self.node_inputs: list[list[int]] = []
        self.node_outputs: list[tuple[int, int]] = []
        self.slot_uses: list[int] = []
        self.slot_device: list[str] = []
        self.source_slots: list[int] = []
        self.memory_schedule: MemorySchedule | None = None  # with a memory budget
        # Set after a run measured the sizes the schedule could not tell: the session
        # then compiles the plan again with them (`memory_schedule.measure_sizes`).
        self.measured_sizes: dict | None = None


def compile_plan(env: CompileEnv, fetch_tensors: list[Tensor], target_ops: list[Operation],
                 feed_tensors: list[Tensor], done_ops: set[Operation] | None = None,
                 memory_budget=0, feed_shapes: dict | None = None,
                 shape_specialized: bool = False,
                 measured_sizes: dict | None = None) -> CompiledPlan:
    """Compile the plan computing `fetch_tensors` and running `target_ops`.

    `feed_tensors` are supplied at run time (their producers are cut off); ops in
    `done_ops` count as already run (partial runs) and never run again.
    `memory_budget` (`RunOptions.memory_budget_bytes`), when set, replaces the config's
    ``memory_budget_bytes``. `feed_shapes` (tensor -> shape of this run's fed value)
    sizes what the graph left unknown, for placement by cost, and, when
    `shape_specialized` (the session keys the plan by the fed shapes: a budget is set),
    for the memory schedule; `measured_sizes` (`memory_schedule.measure_sizes` of an
    earlier run of this plan) sizes what shapes cannot tell.
    """
    fed = set(feed_tensors)
    check_feeds_and_fetches(env.graph, fetch_tensors, target_ops, feed_tensors)
    ops = needed_ops(fetch_tensors, target_ops, fed, done=done_ops)
    check_local_task(ops, env.devices)  # (before folding hides a constant's request)
    host = next((d for d in env.devices if d.device_type == "CPU"), None)
    if env.costs is not None:
        env.costs.set_feed_shapes(feed_shapes or {})
    # Passes 1-4 replay from the process-wide cache for a graph that fingerprints the same
    key = plan_cache.plan_key(env, fetch_tensors, target_ops, feed_tensors, ops,
                              done_ops=done_ops, memory_budget=memory_budget,
                              shape_specialized=shape_specialized, measured_sizes=measured_sizes,
                              feed_shapes=feed_shapes)
    front = plan_cache.restore(key, env)
    if front is None:
        front = _front_passes(env, fetch_tensors, target_ops, feed_tensors, fed, ops, host,
                              done_ops, feed_shapes, shape_specialized)
        plan_cache.store(key, env.graph, front)
    ops, rewrites, placement, table = front.ops, front.rewrites, front.placement, front.table
    partition_graphs = partition(table)
    bind_kernels(table, env.kernels, host)
    if fusion_enabled(env.config):
        fuse_elementwise(table, fetch_tensors)
    if rewrites.compose_unary:  # unary chains fusion left (other dtypes, devices)
        compose_unary_chains(table, fetch_tensors)
    fetch_slots = schedule(table, fetch_tensors, feed_shapes)
    frames = None
    if any(op.op_def.control_flow for op in ops):
        frames = assign_frames(table, fetch_slots)
    budget = memory_budget or getattr(env.config, "memory_budget_bytes", 0)
    defaults = default_budgets(env.devices)
    mem = None
    if budget or defaults:
        mem = memory_schedule(
            table, fetch_slots, budget, defaults=defaults,
            pooled={d.name for d in env.devices if d.backend.buffer_pool() is not None},
            feed_shapes=feed_shapes if shape_specialized else None,
            measured=measured_sizes if budget else {}, frames=frames)
    bind_in_place(table)
    cp = emit(table, fetch_slots, frames)
    release_with(cp, rewrites.plan_ops)  # the rewrites' own ops die with the plan
    cp.deref_fetch = [t.dtype.is_ref_dtype for t in fetch_tensors]
    cp.fetch_to_host = fetches_to_host(table, fetch_slots)
    cp.partition_graphs = partition_graphs
    cp.memory_schedule = mem
    cp.devices = sorted(set(placement.values()), key=lambda d: d.name)
    cp.async_devices = [d for d in cp.devices if not d.backend.host_memory]
    _describe_slots(cp, table, (placement[ops[0]] if ops else env.devices[0]).name)
    return cp


def _front_passes(env: CompileEnv, fetch_tensors, target_ops, feed_tensors, fed, ops, host,
                  done_ops, feed_shapes, shape_specialized) -> plan_cache.Front:
    """Passes 2-4 (rewrite, prune again, place, lay out slots) on the pruned `ops`.

    `plan_cache` replays their result for a graph that fingerprints the same (the ops,
    feeds, fetches, devices and options its module docstring lists): a pass that reads
    anything else (fed values, measured sizes) must run after them, or make the plan
    uncacheable in `plan_cache.plan_key`."""
    rewrites = rewrite(ops, fed, env.config.graph_options.optimizer_options,
                       lambda op: None if host is None else env.kernels.host_kernel(host, op),
                       env.config.graph_options.rewrite_options,
                       feed_shapes if shape_specialized else None)
    ops = needed_ops(fetch_tensors, target_ops, fed, cut=set(rewrites.known),
                     done=done_ops, replace=rewrites.replace)
    placement = place(ops, env.devices, env.config.allow_soft_placement,
                      log=env.config.log_device_placement, costs=env.costs, kept=env.kept)
    table = lay_out_slots(ops, feed_tensors, rewrites, placement)
    return plan_cache.Front(ops, rewrites, placement, table)


def check_feeds_and_fetches(graph: Graph, fetch_tensors, target_ops, feed_tensors) -> None:
    """Refuse a feed the graph marked not feedable or a fetch marked not fetchable (also
    for a plan that skips `compile_plan`: a finished plan from the plan cache)."""
    for t in feed_tensors:
        if not graph.is_feedable(t):
            raise ValueError(f"Tensor {t.name} may not be fed.")
    for op in [t.op for t in fetch_tensors] + list(target_ops):
        if not graph.is_fetchable(op):
            raise InaccessibleTensorError(
                f"Operation {op.name} has been marked as not fetchable. Typically this "
                "happens when it is defined in another function or code block. Use return "
                "values, explicit Python locals or TensorFlow collections to access it.")


def emit(table: NodeTable, fetch_slots: list[int], frames) -> CompiledPlan:
    """The executor `Plan` for a finished `table` (`frames`: `FrameTables` or None)."""
    nodes = table.nodes
    plan = _executor.Plan(
        table.num_slots, [n.kernel for n in nodes], [n.input_slots for n in nodes],
        [n.out_base for n in nodes], [n.n_out for n in nodes], [n.flags for n in nodes],
        table.uses, table.initial, [n.name for n in nodes],
        lambda node, exc, args: describe_error(nodes[node], exc, args))
    plan.add_control_edges(table.control_edges)
    if frames is not None:
        plan.set_frames(*frames.as_args())
    plan.finish()
    cp = CompiledPlan()
    cp.plan = plan
    cp.nodes = nodes
    cp.feed_slots = table.feed_slots
    cp.fetch_slots = fetch_slots
    cp.needs_rendezvous = has_transfers(table)
    return cp


def _describe_slots(cp: CompiledPlan, table: NodeTable, default_device: str) -> None:
    """The per-node and per-slot tables that step statistics replay (see session)."""
    cp.node_inputs = [n.input_slots for n in table.nodes]
    cp.node_outputs = [(n.out_base, n.n_out) for n in table.nodes]
    cp.slot_uses = table.uses
    slot_device = [default_device] * table.num_slots
    produced = set()
    for n in table.nodes:
        for k in range(n.n_out):
            slot_device[n.out_base + k] = n.device
            produced.add(n.out_base + k)
    for n in table.nodes:  # sources (feeds, constants) live where consumed
        for s in n.input_slots:
            if s not in produced:
                slot_device[s] = n.device
    cp.slot_device = slot_device
    cp.source_slots = [s for s in range(table.num_slots) if s not in produced]

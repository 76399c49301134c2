"""`tf.profiler`: parameter and floating-point-operation counts of a graph (tfprof's
``scope`` view), the two reports TF 1.x programs ask it for.

`profile(graph, options=ProfileOptionBuilder.float_operation())` counts each op's flops
from its static shapes with TensorFlow's per-op rules (``2*m*k*n`` for MatMul, ``2 *
output elements * kernel height * width * input channels`` for Conv2D, the output size for
elementwise ops, ``(n-1) * size`` for AddN, ``5 * size`` for Softmax, kernel area times
output size for pooling, input minus output size for sums, ...; the rules are the
``flops`` statistics of `flowgraph.framework.op_statistics`, where programs register
their own with ``ops.RegisterStatistics``); ops without a rule (Relu, Reshape, ...)
count 0, as in TensorFlow. With `ProfileOptionBuilder.trainable_variables_parameter()`
it counts the elements of the trainable variables instead. The result is a
`GraphNodeProto` tree by name scope (`total_float_ops`, `total_parameters`,
`children`); nodes below the options' minimums are left out and their children lifted
(time and bytes compare a node's subtree, as tfprof does). With ``run_meta`` (one traced
step's `RunMetadata`, or the steps given to `Profiler.add_step`) each op also gets its
time (``exec_micros``, split into ``cpu_``/``accelerator_exec_micros``), its outputs'
bytes (``requested_bytes``...) and ``run_count``, averaged over the steps.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     y = tf.matmul(tf.ones([8, 4]), tf.ones([4, 3]))
>>> opts = tf.profiler.ProfileOptionBuilder(
...     tf.profiler.ProfileOptionBuilder.float_operation()).with_empty_output().build()
>>> tf.profiler.profile(g, options=opts).total_float_ops
192
"""

from __future__ import annotations

import copy
import os
import re
import sys

from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.framework.op_statistics import flops_of
from flowgraph.framework.op_statistics import op_flops as op_flops  # re-exported

__all__ = ["AdviceProto", "GraphNodeProto", "MultiGraphNodeProto", "OpLogProto",
           "ProfileOptionBuilder", "Profiler", "advise", "profile", "write_op_log"]

_BASE = {"max_depth": 10000, "min_bytes": 0, "min_micros": 0, "min_params": 0,
         "min_float_ops": 0, "min_occurrence": 0, "order_by": "name",
         "account_type_regexes": [".*"], "start_name_regexes": [".*"],
         "trim_name_regexes": [], "show_name_regexes": [".*"], "hide_name_regexes": [],
         "account_displayed_op_only": True, "select": ["micros"], "step": -1,
         "output": "stdout"}


class ProfileOptionBuilder:
    """Builds the options dict of `profile` (TensorFlow's keys and presets)."""

    def __init__(self, options: dict | None = None) -> None:
        # TensorFlow's starting point: depth 100, every op accounted
        self._options = copy.deepcopy(options) if options is not None else {
            **copy.deepcopy(_BASE), "max_depth": 100, "account_displayed_op_only": False}

    @staticmethod
    def trainable_variables_parameter() -> dict:
        return {**copy.deepcopy(_BASE), "order_by": "name",
                "account_type_regexes": ["_trainable_variables"], "select": ["params"]}

    @staticmethod
    def float_operation() -> dict:
        return {**copy.deepcopy(_BASE), "min_float_ops": 1, "order_by": "float_ops",
                "select": ["float_ops"]}

    @staticmethod
    def time_and_memory(min_micros=1, min_bytes=1, min_accelerator_micros=0,
                        min_cpu_micros=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0) -> dict:
        return {"max_depth": 10000, "min_bytes": min_bytes, "min_peak_bytes": min_peak_bytes,
                "min_residual_bytes": min_residual_bytes, "min_output_bytes": min_output_bytes,
                "min_micros": min_micros, "min_accelerator_micros": min_accelerator_micros,
                "min_cpu_micros": min_cpu_micros, "min_params": 0, "min_float_ops": 0,
                "min_occurrence": 0, "order_by": "micros", "account_type_regexes": [".*"],
                "start_name_regexes": [".*"], "trim_name_regexes": [],
                "show_name_regexes": [".*"], "hide_name_regexes": [],
                "account_displayed_op_only": True, "select": ["micros", "bytes"],
                "step": -1, "output": "stdout"}

    def build(self) -> dict:
        return copy.deepcopy(self._options)

    def _set(self, **kw) -> ProfileOptionBuilder:
        self._options.update(kw)
        return self

    def with_max_depth(self, max_depth):
        return self._set(max_depth=max_depth)

    def with_min_memory(self, min_bytes=0, min_peak_bytes=0, min_residual_bytes=0,
                        min_output_bytes=0):
        return self._set(min_bytes=min_bytes, min_peak_bytes=min_peak_bytes,
                         min_residual_bytes=min_residual_bytes,
                         min_output_bytes=min_output_bytes)

    def with_min_execution_time(self, min_micros=0, min_accelerator_micros=0,
                                min_cpu_micros=0):
        return self._set(min_micros=min_micros, min_accelerator_micros=min_accelerator_micros,
                         min_cpu_micros=min_cpu_micros)

    def with_min_parameters(self, min_params):
        return self._set(min_params=min_params)

    def with_min_occurrence(self, min_occurrence):
        return self._set(min_occurrence=min_occurrence)

    def with_min_float_operations(self, min_float_ops):
        return self._set(min_float_ops=min_float_ops)

    def with_accounted_types(self, account_type_regexes):
        return self._set(account_type_regexes=list(account_type_regexes))

    def with_node_names(self, start_name_regexes=None, show_name_regexes=None,
                        hide_name_regexes=None, trim_name_regexes=None):
        for key, value in (("start_name_regexes", start_name_regexes),
                           ("show_name_regexes", show_name_regexes),
                           ("hide_name_regexes", hide_name_regexes),
                           ("trim_name_regexes", trim_name_regexes)):
            if value is not None:
                self._options[key] = list(value)
        return self

    def account_displayed_op_only(self, is_true):
        return self._set(account_displayed_op_only=bool(is_true))

    def with_empty_output(self):
        return self._set(output="none")

    def with_stdout_output(self):
        return self._set(output="stdout")

    def with_file_output(self, outfile):
        return self._set(output=f"file:outfile={outfile}")

    def with_timeline_output(self, timeline_file):
        return self._set(output=f"timeline:outfile={timeline_file}")

    def with_pprof_output(self, pprof_file):
        return self._set(output=f"pprof:outfile={pprof_file}")

    def order_by(self, attribute):
        return self._set(order_by=attribute)

    def select(self, attributes):
        return self._set(select=list(attributes))

    def with_step(self, step):
        return self._set(step=step)


# run-time counters a profile node holds, each also as ``total_<name>`` (its subtree)
_RUN_FIELDS = ("exec_micros", "accelerator_exec_micros", "cpu_exec_micros",
               "requested_bytes", "peak_bytes", "residual_bytes", "output_bytes",
               "run_count")


class GraphNodeProto:
    """One node of a profile: its own and its subtree's counts, and its children."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.float_ops = 0
        self.total_float_ops = 0
        self.parameters = 0
        self.total_parameters = 0
        for field in _RUN_FIELDS:
            setattr(self, field, 0)
            setattr(self, "total_" + field, 0)
        self.total_definition_count = 0
        self.devices: list[str] = []
        self.children: list[GraphNodeProto] = []
        self.shapes: list = []
        self.input_shapes: dict = {}
        self.tensor_value = None

    def __repr__(self) -> str:
        return (f"GraphNodeProto(name={self.name!r}, total_float_ops={self.total_float_ops}, "
                f"total_parameters={self.total_parameters}, children={len(self.children)})")


class MultiGraphNodeProto(GraphNodeProto):
    """A profile node of the code / op views (same counters): in the op view, one op type,
    its ops in `graph_nodes`."""

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        self.graph_nodes: list[GraphNodeProto] = []


class OpLogProto:
    """Extra per-op information (op types, float ops) for `write_op_log`."""

    def __init__(self) -> None:
        self.log_entries: list = []
        self.id_to_string: dict = {}


class AdviceProto:
    """The advisor's report: ``checkers[name].reports``."""

    class Checker:
        def __init__(self) -> None:
            self.reports: list[str] = []

    def __init__(self) -> None:
        self.checkers: dict[str, AdviceProto.Checker] = {}


# -- the scope tree --------------------------------------------------------------------
def _accounted(graph, options) -> list[tuple]:
    """``(name, float_ops, parameters, shape, type)`` of each accounted op."""
    regexes = options.get("account_type_regexes", [".*"])
    trainable = {v.op.name for v in graph.get_collection(GraphKeys.TRAINABLE_VARIABLES)}
    out = []
    for op in graph.get_operations():
        types = [op.type] + (["_trainable_variables"] if op.name in trainable else [])
        if not any(re.fullmatch(r, ty) for r in regexes for ty in types):
            continue
        params, shape = 0, None
        if op.name in trainable:
            params = op.outputs[0].shape.num_elements() or 0
            shape = op.outputs[0].shape.as_list() if op.outputs[0].shape.ndims else None
        out.append((op.name, flops_of(op), params, shape, op.type))
    return out


def _run_stats(run_metas) -> dict[str, dict]:
    """Per op name, its run-time counters from traced steps' `RunMetadata` (times and
    bytes averaged over the steps the op ran in, as tfprof reports all steps)."""
    sums: dict[str, dict] = {}
    for md in run_metas:
        for dev in md.step_stats.dev_stats:
            for ns in dev.node_stats:
                if ns.node_name == "_SOURCE":
                    continue
                micros = max(ns.op_end_rel_micros - ns.op_start_rel_micros, 1)
                nbytes = sum(o.tensor_description.allocation_description.requested_bytes
                             for o in ns.output)
                st = sums.setdefault(ns.node_name, dict.fromkeys(_RUN_FIELDS, 0))
                gpu = "GPU" in dev.device.upper()
                st["exec_micros"] += micros
                st["accelerator_exec_micros" if gpu else "cpu_exec_micros"] += micros
                for key in ("requested_bytes", "peak_bytes", "output_bytes"):
                    st[key] += nbytes
                st["run_count"] += 1
    for st in sums.values():
        steps = st["run_count"]
        for key in _RUN_FIELDS[:-1]:
            st[key] //= steps
        st["run_count"] = 1
    return sums


def _set_run_stats(node: GraphNodeProto, stats: dict) -> None:
    st = stats.get(node.name)
    if st:
        for key, value in st.items():
            setattr(node, key, value)


def _build(entries, stats: dict | None = None) -> GraphNodeProto:
    root = GraphNodeProto("_TFProfRoot")
    nodes = {"": root}
    for name, flops, params, shape, _type in entries:
        parts = name.split("/")
        for i in range(1, len(parts) + 1):
            path = "/".join(parts[:i])
            if path not in nodes:
                node = GraphNodeProto(path)
                nodes["/".join(parts[:i - 1])].children.append(node)
                nodes[path] = node
        nodes[name].float_ops += flops
        nodes[name].parameters += params
        _set_run_stats(nodes[name], stats or {})
        if shape is not None:
            nodes[name].shapes = [shape]
    return root


def _op_view(entries, options, stats: dict | None = None) -> MultiGraphNodeProto:
    """tfprof's op view: a `MultiGraphNodeProto` per op type (its ops in `graph_nodes`),
    in the options' order; as TensorFlow, each type is the child of the one before, so a
    type's totals count the types after it, and the options' minimums apply to those."""
    root = MultiGraphNodeProto("_TFProfRoot")
    types: dict[str, MultiGraphNodeProto] = {}
    for name, flops, params, _shape, op_type in entries:
        node = types.get(op_type)
        if node is None:
            node = types[op_type] = MultiGraphNodeProto(op_type)
        member = GraphNodeProto(name)
        member.float_ops = member.total_float_ops = flops
        member.parameters = member.total_parameters = params
        _set_run_stats(member, stats or {})
        for key in _RUN_FIELDS:
            value = getattr(member, key)
            setattr(member, "total_" + key, value)
            setattr(node, key, getattr(node, key) + value)
        node.graph_nodes.append(member)
        node.float_ops += flops
        node.parameters += params
    for node in types.values():
        node.graph_nodes.sort(key=lambda n: n.name)
    order = sorted(types.values(), key=lambda n: n.name)
    key = options.get("order_by", "name")
    if key == "float_ops":
        order.sort(key=lambda n: -n.float_ops)
    elif key == "params":
        order.sort(key=lambda n: -n.parameters)
    elif key in ("micros", "bytes"):
        field = "exec_micros" if key == "micros" else "requested_bytes"
        order.sort(key=lambda n: -getattr(n, field))
    total_flops = total_params = 0
    totals = dict.fromkeys(_RUN_FIELDS, 0)
    for node in reversed(order):
        total_flops += node.float_ops
        total_params += node.parameters
        node.total_float_ops, node.total_parameters = total_flops, total_params
        for k in _RUN_FIELDS:
            totals[k] += getattr(node, k)
            setattr(node, "total_" + k, totals[k])
    root.total_float_ops, root.total_parameters = total_flops, total_params
    for k in _RUN_FIELDS:
        setattr(root, "total_" + k, totals[k])
    shown = [n for n in order
             if n.total_float_ops >= options.get("min_float_ops", 0)
             and n.total_parameters >= options.get("min_params", 0)
             and n.total_exec_micros >= options.get("min_micros", 0)
             and n.total_requested_bytes >= options.get("min_bytes", 0)]
    parent = root
    for node in shown[:options.get("max_depth", 10000)]:
        parent.children = [node]
        parent = node
    return root


def _op_report_lines(root: MultiGraphNodeProto, select: list[str]) -> list[str]:
    """One line per op type: ``Conv2D                   34.56k float_ops (100.00%, 94.24%)``
    (the share of everything of this type and those after it, then of this type)."""
    lines = []
    node = root.children[0] if root.children else None
    while node is not None:
        parts = []
        for s in select:
            own, total, whole, unit = (
                (node.parameters, node.total_parameters, root.total_parameters, "params")
                if s == "params" else
                (node.float_ops, node.total_float_ops, root.total_float_ops, "float_ops"))
            cum, mine = (100.0 * total / whole, 100.0 * own / whole) if whole else (0.0, 0.0)
            parts.append(f"{format_number(own):>5} {unit} ({cum:.2f}%, {mine:.2f}%)")
        lines.append(f"{node.name:<25}{', '.join(parts)}")
        node = node.children[0] if node.children else None
    return lines


def _total(node: GraphNodeProto) -> None:
    for child in node.children:
        _total(child)
    node.total_float_ops = node.float_ops + sum(c.total_float_ops for c in node.children)
    node.total_parameters = node.parameters + sum(c.total_parameters for c in node.children)
    for key in _RUN_FIELDS:
        setattr(node, "total_" + key, getattr(node, key) + sum(
            getattr(c, "total_" + key) for c in node.children))


def _total_displayed(node: GraphNodeProto) -> None:
    """The run-time totals and definition counts of the displayed tree only (tfprof's
    ``account_displayed_op_only``): each node counts itself and its shown descendants."""
    for child in node.children:
        _total_displayed(child)
    for key in _RUN_FIELDS:
        setattr(node, "total_" + key, getattr(node, key) + sum(
            getattr(c, "total_" + key) for c in node.children))
    node.total_definition_count = 1 + sum(c.total_definition_count for c in node.children)


def _shown(node: GraphNodeProto, options) -> bool:
    return (node.float_ops >= options.get("min_float_ops", 0)
            and node.parameters >= options.get("min_params", 0)
            # tfprof compares time and bytes of the whole subtree
            and node.total_exec_micros >= options.get("min_micros", 0)
            and node.total_requested_bytes >= options.get("min_bytes", 0)
            and (node.float_ops or node.parameters or not (
                options.get("min_float_ops", 0) or options.get("min_params", 0))))


def _prune(node: GraphNodeProto, options, depth: int) -> list[GraphNodeProto]:
    kept = []
    for child in node.children:
        lifted = _prune(child, options, depth + 1)
        if _shown(child, options) and depth < options.get("max_depth", 10000):
            child.children = lifted
            kept.append(child)
        else:
            kept.extend(lifted)
    key = options.get("order_by", "name")
    # ties keep tfprof's name order
    sort = {"float_ops": lambda c: (-c.total_float_ops, c.name),
            "params": lambda c: (-c.total_parameters, c.name),
            "micros": lambda c: (-c.total_exec_micros, c.name),
            "bytes": lambda c: (-c.total_requested_bytes, c.name)}
    kept.sort(key=sort.get(key, lambda c: c.name))
    return kept


# The report's option listing, in tfprof's order (keys a preset leaves out are listed
# with tfprof's defaults).
_OPTION_ORDER = (
    ("max_depth", 10000), ("min_bytes", 0), ("min_peak_bytes", 0), ("min_residual_bytes", 0),
    ("min_output_bytes", 0), ("min_micros", 0), ("min_accelerator_micros", 0),
    ("min_cpu_micros", 0), ("min_params", 0), ("min_float_ops", 0), ("min_occurrence", 0),
    ("step", -1), ("order_by", "name"), ("account_type_regexes", [".*"]),
    ("start_name_regexes", [".*"]), ("trim_name_regexes", []), ("show_name_regexes", [".*"]),
    ("hide_name_regexes", []), ("account_displayed_op_only", False), ("select", ["micros"]),
    ("output", "stdout"))

_VIEW_DOC = {
    "scope": "scope: The nodes in the model graph are organized by their names, which is "
             "hierarchical like filesystem.",
    "graph": "graph: The nodes in the model graph are organized by their operation "
             "input and output.",
    "op": "op: The nodes are operation kernel type, such as MatMul, Conv2D. Graph nodes "
          "belonging to the same type are aggregated together.",
    "code": "code: The nodes are python codes that create graph nodes.",
}


def _option_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def format_number(n: int) -> str:
    """tfprof's counts: ``999``, ``35.62k``, ``1.18m``, ``2.00b``.

    >>> format_number(35616), format_number(999), format_number(1_180_000)
    ('35.62k', '999', '1.18m')
    """
    n = int(n)
    for limit, unit in ((1_000_000_000, "b"), (1_000_000, "m"), (1_000, "k")):
        if n >= limit:
            return f"{n / limit:.2f}{unit}"
    return str(n)


def _report(root: GraphNodeProto, options, cmd: str = "scope", banners: bool = True) -> str:
    """The text tfprof prints: the options, a doc line per view and count, and the tree
    (``name (self/total flops)``; a variable's shape first with ``params``; ``--`` for the
    root's own count)."""
    select = [s for s in ("params", "float_ops") if s in options.get("select", [])] or \
        ["float_ops"]
    listing = []
    for key, default in _OPTION_ORDER:
        value = _option_text(options.get(key, default))
        if key == "output":
            value = value if ":" in value else value + ":"
        listing.append(f"{'-' + key:<28}{value}")
    doc = [_VIEW_DOC.get(cmd, _VIEW_DOC["scope"])]
    if "float_ops" in select:
        doc.append("flops: Number of float operations. Note: Please read the implementation "
                   "for the math behind it.")
    if "params" in select:
        doc.append("param: Number of parameters (in the Variable).")
    header = "node name | " + " | ".join(
        "# parameters" if s == "params" else "# float_ops" for s in select)

    def line(node, depth):
        parts = []
        if node.shapes and "params" in select and node.parameters:
            parts.append("x".join(str(d) for d in node.shapes[0]))
        for s in select:
            own, total, unit = ((node.parameters, node.total_parameters, "params")
                                if s == "params" else
                                (node.float_ops, node.total_float_ops, "flops"))
            mine = "--" if depth == 0 else format_number(own)
            parts.append(f"{mine}/{format_number(total)} {unit}")
        out = [f"{'  ' * depth}{node.name} ({', '.join(parts)})"]
        for child in node.children:
            out += line(child, depth + 1)
        return out

    body = ["Doc:", *doc, "", "Profile:", header,
            *(_op_report_lines(root, select) if cmd == "op" else line(root, 0))]
    if not banners:  # a file report: the analysis alone
        return "\n".join(["", *body]) + "\n"
    return "\n".join([
        "", "=========================Options=============================", *listing, "",
        "==================Model Analysis Report======================", "", *body, "",
        "======================End of Report=========================="]) + "\n"


def profile(graph=None, run_meta=None, op_log=None, cmd: str = "scope", options=None):
    """Profile `graph` (the default graph if None) by name scope; see the module
    docstring. Returns the root `GraphNodeProto` and writes the report to the options'
    ``output`` (``stdout``, ``file:outfile=PATH`` or ``none``)."""
    if cmd not in ("scope", "graph", "op", "code"):
        raise ValueError(f"tf.profiler.profile: unknown cmd {cmd!r}; expected 'scope', "
                         "'graph', 'op' or 'code'")
    graph = graph if graph is not None else get_default_graph()
    if options is None or (isinstance(options, int) and options == 0):
        # TensorFlow's default argument (0): the trainable variables' parameters
        options = ProfileOptionBuilder.trainable_variables_parameter()
    stats = _run_stats([run_meta] if not isinstance(run_meta, list | tuple)
                       else run_meta) if run_meta is not None else {}
    if cmd == "op":
        root = _op_view(_accounted(graph, options), options, stats)
    else:
        root = _build(_accounted(graph, options), stats)
        _total(root)
        root.children = _prune(root, options, 1)
        _total_displayed(root)
    output = options.get("output", "stdout")
    if output == "stdout":
        sys.stdout.write(_report(root, options, cmd))
    elif output.startswith("file:outfile="):
        with open(output.split("=", 1)[1], "w") as f:
            f.write(_report(root, options, cmd, banners=False))
    return root


_ALL_ADVICE = {"ExpensiveOperationChecker": {}, "AcceleratorUtilizationChecker": {},
               "JobChecker": {}, "OperationChecker": {}}


def advise(graph=None, run_meta=None, options=None) -> AdviceProto:
    """The advisor (its checks are not implemented): an `AdviceProto` with an empty checker
    per checker `options` names (default: all; ``JobChecker`` is left out, as TensorFlow's
    open-source advisor does)."""
    advice = AdviceProto()
    for name in _ALL_ADVICE if options is None else options:
        if name != "JobChecker":
            advice.checkers[name] = AdviceProto.Checker()
    return advice


def write_op_log(graph, log_dir, op_log=None, run_meta=None, add_trace=True) -> None:
    """Write the graph's op types and flops as text to ``log_dir/tfprof_log`` (the file
    TensorFlow's profiler UI reads is a binary proto; this one is for people)."""
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, "tfprof_log"), "w") as f:
        for op in graph.get_operations():
            f.write(f"{op.name}\t{op.type}\t{flops_of(op)}\n")


class Profiler:
    """A profiler bound to a graph: `profile_name_scope`, `profile_operations`,
    `profile_graph` give `profile`'s result for the given options."""

    def __init__(self, graph=None, op_log=None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._steps: list = []
        self._run_metas: list = []

    def add_step(self, step, run_meta) -> None:
        """Add a traced step: its run-time statistics join the profiles' times and bytes."""
        self._steps.append(step)
        self._run_metas.append(run_meta)

    def _profile(self, cmd, options):
        return profile(self._graph, run_meta=self._run_metas or None, cmd=cmd,
                       options=options)

    def profile_name_scope(self, options):
        return self._profile("scope", options)

    def profile_graph(self, options):
        return self._profile("graph", options)

    def profile_operations(self, options):
        return self._profile("op", options)

    def profile_python(self, options):
        return self._profile("code", options)

    def advise(self, options) -> AdviceProto:
        return advise(self._graph, options=options)

    def serialize_to_string(self) -> bytes:
        return b""


def __dir__():
    return list(__all__)

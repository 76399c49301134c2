"""`tf.profiler`: parameter and floating-point-operation counts of a graph (tfprof's
``scope`` view), the two reports TF 1.x programs ask it for.

`profile(graph, options=ProfileOptionBuilder.float_operation())` counts each op's flops
from its static shapes with TensorFlow's per-op rules (``2*m*k*n`` for MatMul, ``2 *
output elements * kernel height * width * input channels`` for Conv2D, the output size for
elementwise ops, ``(n-1) * size`` for AddN, ``5 * size`` for Softmax, kernel area times
output size for pooling, input minus output size for sums, ...); ops without a rule
(Relu, Reshape, ...) count 0, as in TensorFlow. With
`ProfileOptionBuilder.trainable_variables_parameter()` it counts the elements of the
trainable variables instead. The result is a `GraphNodeProto` tree by name scope
(`total_float_ops`, `total_parameters`, `children`); nodes below the options' minimums
are left out and their children lifted. Run-time statistics (``run_meta``: time,
memory) are not collected: those options report zeros.

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
import math
import os
import re
import sys

from flowgraph.framework.graph import GraphKeys, get_default_graph

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


class GraphNodeProto:
    """One node of a profile: its own and its subtree's counts, and its children."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.float_ops = 0
        self.total_float_ops = 0
        self.parameters = 0
        self.total_parameters = 0
        self.exec_micros = self.total_exec_micros = 0
        self.requested_bytes = self.total_requested_bytes = 0
        self.run_count = self.total_run_count = 0
        self.children: list[GraphNodeProto] = []
        self.shapes: list = []

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


# -- flops rules -----------------------------------------------------------------------
def _n(shape) -> int | None:
    if shape.ndims is None or not shape.is_fully_defined():
        return None
    return math.prod(shape.as_list())


_UNARY = {"Reciprocal", "Square", "Rsqrt", "Log", "Neg", "AssignSub", "AssignAdd"}
_BINARY = {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow",
           "RsqrtGrad", "GreaterEqual", "Greater", "LessEqual", "Less", "Equal", "NotEqual",
           "FloorMod", "FloorDiv", "BiasAdd"}
_REDUCE = {"Sum": 0, "ArgMax": 0, "ArgMin": 0, "BiasAddGrad": 0, "Mean": 1}


def _reduction_flops(op, finalize: int) -> int | None:
    n_in, n_out = _n(op.inputs[0].shape), _n(op.outputs[0].shape)
    if n_in is None or n_out is None:
        return None
    return n_in + n_out * (finalize - 1)


def op_flops(op) -> int | None:
    """The float operations TensorFlow's statistics give `op` (None: no rule, or shapes
    not fully known)."""
    t = op.type
    if t in _UNARY or t in _BINARY:
        return _n(op.outputs[0].shape)
    if t == "SquaredDifference":
        n = _n(op.outputs[0].shape)
        return None if n is None else 2 * n
    if t == "L2Loss":
        n = _n(op.inputs[0].shape)
        return None if n is None else 3 * n - 1
    if t == "Softmax":
        n = _n(op.outputs[0].shape)
        return None if n is None else 5 * n
    if t == "AddN":
        n = _n(op.outputs[0].shape)
        return None if n is None else (len(op.inputs) - 1) * n
    if t in _REDUCE:
        return _reduction_flops(op, _REDUCE[t])
    if t == "MatMul":
        a = op.inputs[0].shape
        out = _n(op.outputs[0].shape)
        if out is None or a.ndims != 2 or not a.is_fully_defined():
            return None
        k = a.as_list()[0 if op.get_attr("transpose_a") else 1]
        return 2 * out * k
    if t in ("AvgPool", "MaxPool"):
        out = _n(op.outputs[0].shape)
        ksize = op.get_attr("ksize")
        return None if out is None else out * math.prod(ksize)
    if t in ("Conv2D", "DepthwiseConv2dNative"):
        out, f = _n(op.outputs[0].shape), op.inputs[1].shape
        if out is None or not f.is_fully_defined():
            return None
        dims = f.as_list()
        per = dims[0] * dims[1] * (dims[2] if t == "Conv2D" else 1)
        return 2 * out * per
    return None


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
            params = _n(op.outputs[0].shape) or 0
            shape = op.outputs[0].shape.as_list() if op.outputs[0].shape.ndims else None
        out.append((op.name, op_flops(op) or 0, params, shape, op.type))
    return out


def _build(entries) -> GraphNodeProto:
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
        if shape is not None:
            nodes[name].shapes = [shape]
    return root


def _op_view(entries, options) -> MultiGraphNodeProto:
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
    total_flops = total_params = 0
    for node in reversed(order):
        total_flops += node.float_ops
        total_params += node.parameters
        node.total_float_ops, node.total_parameters = total_flops, total_params
    root.total_float_ops, root.total_parameters = total_flops, total_params
    shown = [n for n in order
             if n.total_float_ops >= options.get("min_float_ops", 0)
             and n.total_parameters >= options.get("min_params", 0)]
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


def _shown(node: GraphNodeProto, options) -> bool:
    return (node.float_ops >= options.get("min_float_ops", 0)
            and node.parameters >= options.get("min_params", 0)
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
    sort = {"float_ops": lambda c: -c.total_float_ops, "params": lambda c: -c.total_parameters}
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


def _report(root: GraphNodeProto, options, cmd: str = "scope") -> str:
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

    return "\n".join([
        "", "=========================Options=============================", *listing, "",
        "==================Model Analysis Report======================", "", "Doc:", *doc,
        "", "Profile:", header,
        *(_op_report_lines(root, select) if cmd == "op" else line(root, 0)), "",
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
    if cmd == "op":
        root = _op_view(_accounted(graph, options), options)
    else:
        root = _build(_accounted(graph, options))
        _total(root)
        root.children = _prune(root, options, 1)
    output = options.get("output", "stdout")
    if output == "stdout":
        sys.stdout.write(_report(root, options, cmd))
    elif output.startswith("file:outfile="):
        with open(output.split("=", 1)[1], "w") as f:
            f.write(_report(root, options, cmd))
    return root


def advise(graph=None, run_meta=None, options=None) -> AdviceProto:
    """The advisor (its checkers need run metadata flowgraph does not record): an
    `AdviceProto` with the accelerator-utilization and operation checkers, empty."""
    advice = AdviceProto()
    for name in ("AcceleratorUtilizationChecker", "OperationChecker"):
        advice.checkers[name] = AdviceProto.Checker()
    return advice


def write_op_log(graph, log_dir, op_log=None, run_meta=None, add_trace=True) -> None:
    """Write the graph's op types and flops as text to ``log_dir/tfprof_log`` (the file
    TensorFlow's profiler UI reads is a binary proto; this one is for people)."""
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, "tfprof_log"), "w") as f:
        for op in graph.get_operations():
            f.write(f"{op.name}\t{op.type}\t{op_flops(op) or 0}\n")


class Profiler:
    """A profiler bound to a graph: `profile_name_scope`, `profile_operations`,
    `profile_graph` give `profile`'s result for the given options."""

    def __init__(self, graph=None, op_log=None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._steps: list = []

    def add_step(self, step, run_meta) -> None:
        self._steps.append(step)

    def profile_name_scope(self, options):
        return profile(self._graph, cmd="scope", options=options)

    profile_graph = profile_name_scope

    def profile_operations(self, options):
        return profile(self._graph, cmd="op", options=options)

    def profile_python(self, options):
        return profile(self._graph, cmd="code", options=options)

    def advise(self, options=None) -> AdviceProto:
        return advise(self._graph, options=options)

    def serialize_to_string(self) -> bytes:
        return b""


def __dir__():
    return list(__all__)

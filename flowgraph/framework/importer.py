"""`import_graph_def`: rebuild the ops of a graph def (see `serialization`) in the default
graph; never pickle.

A `tf.while_loop` makes the one kind of cycle a graph def may hold: each loop's
``Merge`` reads its ``NextIteration``. Nodes are built in dependency order with those
back edges walked last, so a ``Merge`` comes before the ``NextIteration`` feeding it:
it is built with its first input (the ``Enter``) in that place and rewired once the
``NextIteration`` exists. Any other cycle is refused.

Example
-------
>>> import flowgraph as tf, json
>>> g = tf.Graph()
>>> with g.as_default():
...     x = tf.constant([1.0, 2.0], name="x")
>>> g2 = tf.Graph()
>>> with g2.as_default():
...     _ = tf.import_graph_def(json.loads(json.dumps(g.as_graph_def())), name="")
>>> g2.get_tensor_by_name("x:0").shape.as_list()
[2]
"""

from __future__ import annotations

import json

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.gradient_override import apply_gradient_override
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.graph_walk import GraphCycleError, depth_first_order
from flowgraph.framework.import_checks import ATTR_DECODE_ERRORS, check_node_against_op_def
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.serialization import decode_attr
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats import graph_util as _graph_util
from flowgraph.framework.tf_formats.graph_def import as_graph_def_dict

__all__ = ["ImportGraphDefError", "UnregisteredOpError", "graph_def_from_json",
           "import_graph_def"]


class ImportGraphDefError(errors.InvalidArgumentError, ValueError):
    """A graph def that cannot be imported (TensorFlow raises ValueError here; this is
    both, so ``except ValueError`` and ``except tf.errors.InvalidArgumentError`` work)."""

    def __init__(self, message: str) -> None:
        super().__init__(None, None, message)


class UnregisteredOpError(errors.NotFoundError, ValueError):
    """A graph def node of an op type no library registered: TensorFlow's NotFoundError,
    and a ValueError like the other import failures."""


def graph_def_from_json(data) -> dict:
    """The graph def dict of JSON text or bytes (``json.dumps(g.as_graph_def())``).

    Raises `ImportGraphDefError` for anything that is not a JSON object.

    Example
    -------
    >>> graph_def_from_json(b'{"node": []}')
    {'node': []}
    """
    try:
        if isinstance(data, bytes | bytearray):
            data = bytes(data).decode("utf-8")
        doc = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise ImportGraphDefError(f"import_graph_def: not a JSON graph def ({e})") from None
    if not isinstance(doc, dict):
        raise ImportGraphDefError(
            f"import_graph_def: a JSON graph def is an object, found {type(doc).__name__}")
    return doc


def import_graph_def(graph_def: dict, input_map: dict | None = None,
                     return_elements: list | None = None, name: str | None = None,
                     op_dict=None, producer_op_list=None):
    """Import a graph def (from `Graph.as_graph_def()`) into the default graph.

    Every imported op is named ``<name>/<original name>``; `name` defaults to
    ``"import"`` and is made unique (``import_1``, ...) under the current name scope.
    With ``name=""`` the original names are kept (suffixed ``_1``... on collision).
    `input_map` maps tensor names of `graph_def` (``"x:0"``, or ``"x"`` for output 0;
    ``"^x"`` for an op used as a control input) to tensors of the default graph that
    replace them. Returns the `return_elements` (tensor names give Tensors, op names
    give Operations) or None.

    Example
    -------
    >>> import flowgraph as tf
    >>> g = tf.Graph()
    >>> with g.as_default():
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     y = tf.add(x, x, name="y")
    >>> with tf.Graph().as_default():
    ...     x2 = tf.constant([1.0, 2.0])
    ...     (y2,) = tf.import_graph_def(g.as_graph_def(), input_map={"x:0": x2},
    ...                                 return_elements=["y:0"], name="net")
    ...     print(y2.name, y2.shape.as_list())
    net/y:0 [2]
    """
    # Recorded output shapes are checked as TensorFlow checks ``_output_shapes`` where
    # they stand for that attribute: a GraphDef message's, or ``as_graph_def(add_shapes=
    # True)``'s. flowgraph's own dicts and files record every node's shapes for round
    # trips (as TF's graphs without that attribute do not); an input_map may change
    # those, and inference then wins, as it did before.
    check_shapes = (getattr(graph_def, "_add_shapes", False)
                    or not isinstance(graph_def, dict))
    graph_def = as_graph_def_dict(graph_def)  # TensorFlow's GraphDef message -> dict
    if not isinstance(graph_def, dict):
        raise TypeError(
            "import_graph_def: `graph_def` must be a graph def dict as produced by "
            f"Graph.as_graph_def() (or json.load of one); got {type(graph_def).__name__}"
        )
    node_list = graph_def.get("node")
    if not isinstance(node_list, list):
        raise ImportGraphDefError(
            "import_graph_def: malformed graph def: it needs a 'node' list (as produced by "
            f"Graph.as_graph_def()); found keys {sorted(map(str, graph_def))}"
        )
    input_map = dict(input_map or {})
    # an input_map may bind inputs whose node the graph def lacks (the
    # ``$unbound_inputs_`` of a scoped export)
    bound = {("^" + k[1:]) if k.startswith("^") else _split_ref(k)[0] for k in input_map
             if isinstance(k, str)}
    nodes = _validate_nodes(node_list, bound)
    graph = get_default_graph()
    data_map: dict[str, Tensor] = {}
    control_map: dict[str, Operation] = {}
    for key, value in input_map.items():
        if not isinstance(key, str):
            raise TypeError(f"import_graph_def: input_map keys must be strings, got {key!r}")
        if key.startswith("^"):
            op = graph.as_graph_element(value, allow_tensor=True, allow_operation=True)
            control_map[key[1:]] = op.op if isinstance(op, Tensor) else op
            continue
        ref = key if ":" in key else f"{key}:0"
        data_map[ref] = convert_to_tensor(value)
        if data_map[ref].graph is not graph:
            raise ImportGraphDefError(
                f"import_graph_def: input_map value for '{key}' is not from the default graph"
            )
    order = _topological_node_order(node_list, nodes)
    created: dict[str, Operation] = {}
    back_edges: list[tuple[Operation, int, str, str]] = []  # Merge, input index, ref

    def resolve(ref: str, consumer: str):
        if ref in data_map:
            return data_map[ref]
        op_name, idx = _split_ref(ref)
        op = created.get(op_name)
        if op is None and op_name in nodes:
            raise ImportGraphDefError(
                f"import_graph_def: node '{consumer}' has input '{ref}', which is not "
                "built yet: a cycle that does not pass through a loop's NextIteration -> "
                "Merge edge")
        if op is None:
            raise ImportGraphDefError(
                f"import_graph_def: node '{consumer}' has input '{ref}', which refers to a "
                "node missing from the graph def"
            )
        if idx >= len(op._outputs):
            raise ImportGraphDefError(
                f"import_graph_def: node '{consumer}' has input '{ref}', but node "
                f"'{op_name}' has only {len(op._outputs)} output(s)"
            )
        return op._outputs[idx]

    with graph.as_default(), _import_scope(graph, name) as prefix:
        # A mapped input of the wrong dtype fails before anything is built, leaving the
        # graph as it was (as in TensorFlow, whose failed import still takes its scope
        # name; a missing return element fails after the import).
        used = {r for n in nodes.values() for r in n.get("input", [])}
        used |= {f"{r}:0" for r in used if ":" not in r}
        missing = sorted(k for k in data_map if _split_ref(k)[0] not in nodes
                         and k not in used)
        missing += sorted(f"^{k}" for k in control_map if k not in nodes
                          and f"^{k}" not in used)
        if missing:
            raise ImportGraphDefError("Attempted to map inputs that were not found in "
                                      f"graph_def: [{', '.join(missing)}]")
        for node in nodes.values():
            for i, ref in enumerate(node.get("input", [])):
                if ref in data_map:
                    _check_mapped_input(node, i, data_map[ref], nodes, prefix)
        for node_name in order:
            node = nodes[node_name]
            inputs = node.get("input", [])
            refs = [r for r in inputs if not r.startswith("^")]
            later = _loop_back_inputs(node, refs, nodes, created) if node["op"] in \
                _MERGE_OPS else []
            # A Merge is built before the NextIteration feeding it (the loop's back
            # edge): that input starts as the Merge's first one and is rewired below.
            data = [resolve(refs[0] if i in later else r, node_name)
                    for i, r in enumerate(refs)]
            ctrl = [control_map.get(r[1:]) or created[r[1:]] for r in inputs
                    if r.startswith("^")]
            try:
                attrs = {k: decode_attr(v) for k, v in node.get("attr", {}).items()}
            except ATTR_DECODE_ERRORS as e:
                raise ImportGraphDefError(
                    f"import_graph_def: node '{node_name}' has a malformed attribute: {e}"
                ) from None
            problem = check_node_against_op_def(node["op"], data, attrs)
            if problem and problem.startswith("unknown op type"):  # TF: NotFoundError
                raise UnregisteredOpError(
                    None, None, f"Op type not registered '{node['op']}': import_graph_def: "
                    f"node '{node_name}' ({node['op']}): {problem}")
            if problem:
                raise ImportGraphDefError(
                    f"import_graph_def: node '{node_name}' ({node['op']}): {problem}")
            full = f"{prefix}{node_name}"
            if not prefix and (full.lower() in graph._names_in_use or full in graph):
                with graph.name_scope(None):
                    full = graph.unique_name(full)
            with graph.control_dependencies(None), graph.colocate_with(
                    None, ignore_existing=True), graph.control_dependencies(ctrl):
                try:
                    op = graph.create_op(node["op"], data, attrs, name=f"{full}/")
                except errors.OpError:
                    raise
                except (TypeError, ValueError, IndexError, KeyError, AttributeError,
                        ZeroDivisionError, OverflowError, AssertionError) as e:
                    # What the checks above cannot see (a value out of an op's range):
                    # reported as an import error naming the node, the cause chained.
                    raise ImportGraphDefError(
                        f"import_graph_def: node '{node_name}' ({node['op']}) cannot be "
                        f"built: {type(e).__name__}: {e}") from e
            device = node.get("device", "") or ""
            if device:
                try:
                    DeviceSpec.from_string(device)
                except ValueError as e:
                    raise ImportGraphDefError(
                        f"import_graph_def: node '{node_name}': {e}") from None
            op._device = device
            if node.get("colocation"):
                op._colocation = sorted(f"{prefix}{c}" for c in node["colocation"])
            if node.get("gradient_op_type"):
                apply_gradient_override(op, str(node["gradient_op_type"]))
            if not all(isinstance(t.dtype, _dtypes.DType) for t in op._outputs):
                raise ImportGraphDefError(
                    f"import_graph_def: node '{node_name}' ({node['op']}): the dtypes of its "
                    f"outputs are unknown ({[t.dtype for t in op._outputs]}); a required "
                    "attribute such as 'dtype' is missing")
            if later:  # its value's shape may change from one iteration to the next
                op._outputs[0]._shape = TensorShape(None)
            _merge_output_shapes(op, node.get("output_shapes"), check_shapes)
            created[node_name] = op
            back_edges.extend((op, i, refs[i], node_name) for i in later)
        for op, i, ref, consumer in back_edges:
            _rewire_input(op, i, resolve(ref, consumer))
    if return_elements is None:
        return None
    _check_return_elements(return_elements, nodes)
    out = []
    for ref in return_elements:
        if ":" in ref:
            op_name, idx = _split_ref(ref)
            if op_name not in nodes:
                raise ImportGraphDefError(f"Requested return tensor '{ref}' not found in graph def")
            op = created[op_name]
            if idx >= len(op._outputs):
                raise ImportGraphDefError(
                    f"Invalid return output {idx} of node '{op_name}', which has "
                    f"{len(op._outputs)} output(s)"
                )
            out.append(data_map.get(ref, op._outputs[idx]))
        else:
            if ref not in nodes:
                raise ImportGraphDefError(f"Requested return node '{ref}' not found in graph def")
            out.append(created[ref])
    return out


# TensorFlow's ``tf.graph_util.import_graph_def`` is this same function.
_graph_util.import_graph_def = import_graph_def


def _check_return_elements(return_elements, nodes: dict) -> None:
    for ref in return_elements or ():
        if not isinstance(ref, str):
            raise TypeError(f"import_graph_def: return_elements must be names (strings), "
                            f"got {ref!r}")
        if ":" in ref and _split_ref(ref)[0] not in nodes:
            raise ImportGraphDefError(f"Requested return tensor '{ref}' not found in graph def")
        if ":" not in ref and ref not in nodes:
            raise ImportGraphDefError(f"Requested return node '{ref}' not found in graph def")


def _validate_nodes(node_list: list, bound: set = frozenset()) -> dict[str, dict]:
    nodes: dict[str, dict] = {}
    for i, n in enumerate(node_list):
        if not isinstance(n, dict):
            raise ImportGraphDefError(
                f"import_graph_def: node {i} of the graph def is not a dict: {n!r:.80}")
        name, op = n.get("name"), n.get("op")
        if not isinstance(name, str) or not name or not isinstance(op, str) or not op:
            raise ImportGraphDefError(
                f"import_graph_def: node {i} of the graph def needs string 'name' and 'op' "
                f"fields; got name={name!r}, op={op!r}"
            )
        inputs = n.get("input", [])
        if not isinstance(inputs, list) or not all(isinstance(r, str) for r in inputs):
            raise ImportGraphDefError(
                f"import_graph_def: node '{name}': 'input' must be a list of tensor names, "
                f"got {inputs!r}"
            )
        if not isinstance(n.get("attr", {}), dict):
            raise ImportGraphDefError(f"import_graph_def: node '{name}': 'attr' must be a dict")
        for key, kind in (("device", str), ("colocation", list), ("output_shapes", list),
                          ("output_dtypes", list)):
            if key in n and not isinstance(n[key], kind):
                raise ImportGraphDefError(
                    f"import_graph_def: node '{name}': '{key}' must be a {kind.__name__}, "
                    f"found {type(n[key]).__name__}")
        if not all(isinstance(c, str) for c in n.get("colocation", [])):
            raise ImportGraphDefError(
                f"import_graph_def: node '{name}': 'colocation' must list node names")
        if name in nodes:
            raise ImportGraphDefError(
                f"import_graph_def: the graph def has two nodes named '{name}'")
        nodes[name] = n
    for name, n in nodes.items():
        for r in n.get("input", []):
            src = r[1:] if r.startswith("^") else _split_ref(r, name)[0]
            if src not in nodes and (r if r.startswith("^") else src) not in bound:
                raise ImportGraphDefError(
                    f"import_graph_def: node '{name}' has input '{r}', which refers to a "
                    "node missing from the graph def"
                )
    return nodes


def _split_ref(ref: str, consumer: str | None = None) -> tuple[str, int]:
    op_name, sep, idx = ref.rpartition(":")
    if not sep:
        return ref, 0
    if not idx.isdigit():
        where = f" (input of node '{consumer}')" if consumer else ""
        raise ImportGraphDefError(f"import_graph_def: malformed tensor name '{ref}'{where}")
    return op_name, int(idx)


def _check_mapped_input(node: dict, i: int, t, nodes: dict, prefix: str = "") -> None:
    """The dtype of a mapped tensor must match the one the graph def recorded."""
    src_name, idx = _split_ref(node["input"][i])
    if src_name not in nodes:
        return  # an unbound input: the graph def records nothing of it
    recorded = nodes[src_name].get("output_dtypes")
    if isinstance(recorded, list) and idx < len(recorded):
        try:
            want = _dtypes.as_dtype(recorded[idx])
        except TypeError:
            raise ImportGraphDefError(
                f"import_graph_def: node '{src_name}' records an unknown dtype "
                f"{recorded[idx]!r}") from None
        if t.dtype.base_dtype != want.base_dtype:
            raise ImportGraphDefError(
                f"Input {i} of node {prefix}{node['name']} was passed {_tf_name(t.dtype)} from "
                f"{t.name} incompatible with expected {_tf_name(want)}."
            )


def _tf_name(dtype) -> str:
    """TensorFlow's short name of a dtype in messages (``float``, ``double``, ``int32``)."""
    from flowgraph.framework.tf_formats.text_format import datatype_name

    return datatype_name(dtype.base_dtype.as_datatype_enum)[len("DT_"):].lower()


def _merge_output_shapes(op, shapes, check: bool = True) -> None:
    """Refine `op`'s output shapes with the node's ``_output_shapes`` attribute (what
    ``as_graph_def(add_shapes=True)`` records), checked as TensorFlow's importer checks
    it: a shape per output (more are tolerated), each compatible with the one inferred.
    Without `check`, a shape that conflicts with inference is left out."""
    if not shapes:
        return
    outputs = op._outputs
    if check and len(shapes) < len(outputs):
        raise ImportGraphDefError(
            f"Node '{op.name}' has {len(outputs)} outputs but the _output_shapes attribute "
            f"specifies shapes for {len(shapes)} outputs")
    for i, (t, encoded) in enumerate(zip(outputs, shapes)):
        try:
            recorded = decode_attr(encoded)
        except ATTR_DECODE_ERRORS as e:
            recorded = e
        if not isinstance(recorded, TensorShape):
            raise ImportGraphDefError(
                f"Node '{op.name}' ({op.type}) has an invalid _output_shapes attribute "
                f"(shape #{i}): {recorded!r} is not a shape") from None
        conflict = _shape_conflict(t._shape, recorded)
        if conflict and not check:
            continue  # an input_map changed the shape: keep what inference found
        if conflict and _handle_output(op, t):
            continue  # a handle flowgraph represents otherwise (a TensorArray's: a scalar)
        if conflict:
            raise ImportGraphDefError(
                f"Node '{op.name}' has an _output_shapes attribute inconsistent with the "
                f"GraphDef for output #{i}: {conflict}")
        t._shape = t._shape.merge_with(recorded)


_PASS_THROUGH = ("Enter", "RefEnter", "Exit", "RefExit", "Identity", "RefIdentity", "Switch",
                 "RefSwitch", "Merge", "RefMerge", "NextIteration", "RefNextIteration")


def _handle_output(op, tensor) -> bool:
    """Whether `tensor` is a handle whose shape flowgraph gives differently from TensorFlow
    (resource and variant values; TensorArray and stack handles, scalars in flowgraph,
    also as they pass through a loop's Enter / Switch / Merge / Identity)."""
    for _ in range(64):
        if tensor.dtype.base_dtype in (_dtypes.resource, _dtypes.variant) or \
                op.type.startswith(("TensorArray", "Stack")):
            return True
        if op.type not in _PASS_THROUGH or not op._inputs:
            return False
        tensor = op._inputs[0]
        op = tensor.op
    return False


def _shape_conflict(inferred: TensorShape, recorded: TensorShape) -> str:
    """Why shapes `inferred` and `recorded` cannot both hold (TF's words), or ''."""
    if inferred.ndims is None or recorded.ndims is None:
        return ""
    if inferred.ndims != recorded.ndims:
        return (f"Shapes must be equal rank, but are {inferred.ndims} and "
                f"{recorded.ndims}")
    for d, (a, b) in enumerate(zip(inferred.as_list(), recorded.as_list(), strict=True)):
        if a is not None and b is not None and a != b:
            def text(shape):
                return "[" + ",".join("?" if x is None else str(x)
                                      for x in shape.as_list()) + "]"

            return (f"Dimension {d} in both shapes must be equal, but are {a} and {b}. "
                    f"Shapes are {text(inferred)} and {text(recorded)}.")
    return ""


class _import_scope:
    """The prefix ('name/' or '') of an import: a unique scope for a non-empty name."""

    def __init__(self, graph, name: str | None) -> None:
        self._graph = graph
        self._name = "import" if name is None else name
        self._cm = None

    def __enter__(self) -> str:
        if not self._name:
            return ""
        self._cm = self._graph.name_scope(self._name)
        return self._cm.__enter__()

    def __exit__(self, *exc):
        if self._cm is not None:
            return self._cm.__exit__(*exc)
        return False


_MERGE_OPS = ("Merge", "RefMerge")
_NEXT_ITERATION_OPS = ("NextIteration", "RefNextIteration")


def _is_loop_back_edge(nodes: dict, consumer: str, producer: str) -> bool:
    # The only cycles TensorFlow's graphs may hold: Merge <- NextIteration of a loop.
    return (nodes[consumer]["op"] in _MERGE_OPS
            and nodes[producer]["op"] in _NEXT_ITERATION_OPS)


def _loop_back_inputs(node: dict, refs: list, nodes: dict, created: dict) -> list[int]:
    """Indices of `node`'s (a Merge's) data inputs from a NextIteration not built yet."""
    later = []
    for i, ref in enumerate(refs):
        producer = _split_ref(ref)[0]
        if i and producer in nodes and producer not in created and \
                nodes[producer]["op"] in _NEXT_ITERATION_OPS:
            later.append(i)
    return later


def _rewire_input(op: Operation, index: int, tensor: Tensor) -> None:
    old = op._inputs[index]
    if old.dtype.base_dtype != tensor.dtype.base_dtype:
        raise ImportGraphDefError(
            f"import_graph_def: node '{op.name}' ({op.type}): its loop input {index} is "
            f"{tensor.dtype.name} ('{tensor.name}'), but its input 0 is {old.dtype.name}; "
            "a Merge's inputs must have one dtype")
    op._inputs[index] = tensor
    if op in old._consumers:
        old._consumers.remove(op)
    tensor._consumers.append(op)
    op._graph._version += 1


def _topological_node_order(nodes: list[dict], by_name: dict | None = None) -> list[str]:
    deps = {}
    for n in nodes:
        deps[n["name"]] = [r[1:] if r.startswith("^") else r.rpartition(":")[0] or r
                           for r in n.get("input", [])]
    by_name = by_name if by_name is not None else {n["name"]: n for n in nodes}
    try:
        return depth_first_order(deps, lambda name: (d for d in deps[name] if d in deps),
                                 lambda node, dep: _is_loop_back_edge(by_name, node, dep))
    except GraphCycleError as e:
        raise ImportGraphDefError(
            f"import_graph_def: the graph def has a cycle through '{e.node}'") from None

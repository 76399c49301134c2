"""The object graph of `tf.train.Checkpoint`: which variables an object-based checkpoint
holds, and under which keys.

A checkpoint names a variable by the path of attribute names that leads to it from the
root `Checkpoint`, not by the variable's graph name::

    Checkpoint(model=dense, optimizer=adam)
      model ── kernel        ->  model/kernel/.ATTRIBUTES/VARIABLE_VALUE
            └─ bias          ->  model/bias/.ATTRIBUTES/VARIABLE_VALUE
      optimizer ── beta1_power  ->  optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE
      (Adam's slot "m" of the kernel)
                 ->  model/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE

The walk is breadth first from the root, children in a fixed order, so an object reachable
along several paths gets the shortest (the first found): the same keys TensorFlow writes,
so checkpoints move between the two. What counts as a node (`children`):

- a `Checkpoint`: its keyword arguments (sorted by name) and attributes set later;
- a `tf.train.Optimizer`: its non-slot variables (``beta1_power``); its slots are keyed
  through the variables they belong to;
- a Keras layer: its weights by their own names (``kernel``), then public attributes
  holding trackables; a Sequential or functional model: ``layer_with_weights-N`` (its
  layers that have weights) and ``layer-N`` (all its layers) instead of weights; a
  subclassed model: its own weights, then its attributes (``d1``, ``bn``);
- a `tf.Module` or any other object passed in: its public attributes that hold
  variables or trackables; a list or dict of them is a node whose children are named by
  index or key;
- a variable is a leaf: its value is saved.

`serialize_object_graph` writes TensorFlow's ``TrackableObjectGraph`` message (stored
under ``_CHECKPOINTABLE_OBJECT_GRAPH``), which TensorFlow's ``Checkpoint.restore`` needs.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     ckpt = tf.train.Checkpoint(v=tf.Variable(1.0, name="v"))
...     print([k for k, _ in variable_keys(build_object_graph(ckpt))])
['v/.ATTRIBUTES/VARIABLE_VALUE']
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from flowgraph.framework.event_format import Message
from flowgraph.ops.module import Module
from flowgraph.ops.variables import Variable
from flowgraph.train.optimizer import Optimizer

__all__ = ["ObjectGraph", "build_object_graph", "children", "is_trackable",
           "serialize_object_graph", "variable_keys"]

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VALUE = "/.ATTRIBUTES/VARIABLE_VALUE"


def _is_keras_layer(obj) -> bool:
    # Keras sits above this layer of the package: recognized by its interface
    return hasattr(obj, "add_weight") and hasattr(obj, "weights")


def is_trackable(obj) -> bool:
    """Whether `obj` can be a node of a checkpoint's object graph."""
    return (isinstance(obj, Variable | Optimizer | Module) or _is_keras_layer(obj)
            or hasattr(obj, "_checkpoint_children"))


def _holds_trackables(value) -> bool:
    if isinstance(value, list | tuple):
        return any(is_trackable(v) or _holds_trackables(v) for v in value)
    if isinstance(value, dict):
        return any(is_trackable(v) or _holds_trackables(v) for v in value.values())
    return False


class _Container:
    """A list or dict of trackables, seen as one node (TensorFlow's list wrappers)."""

    def __init__(self, value) -> None:
        self.value = value


def _attribute_children(obj) -> list[tuple[str, object]]:
    out = []
    for name, value in vars(obj).items():
        if name.startswith("_"):
            continue
        if is_trackable(value):
            out.append((name, value))
        elif _holds_trackables(value):
            out.append((name, _Container(value)))
    return out


def _weight_name(layer, var) -> str:
    name = var.op.name
    scope = getattr(layer, "name", None)
    if scope and name.startswith(scope + "/"):
        name = name[len(scope) + 1:]
    return name.rsplit("/", 1)[-1]


def _optimizer_children(opt) -> list[tuple[str, object]]:
    non_slot = getattr(opt, "_non_slot_dict", {})
    return [(name, var) for (name, _graph), var in sorted(non_slot.items(),
                                                           key=lambda kv: kv[0][0])]


def children(obj) -> list[tuple[str, object]]:
    """The named children of node `obj`, in the order the walk visits them."""
    if isinstance(obj, Variable):
        return []
    if isinstance(obj, _Container):
        items = (obj.value.items() if isinstance(obj.value, dict)
                 else ((str(i), v) for i, v in enumerate(obj.value)))
        return [(str(k), v if is_trackable(v) else _Container(v)) for k, v in items
                if is_trackable(v) or _holds_trackables(v)]
    if hasattr(obj, "_checkpoint_children"):  # a Checkpoint
        return obj._checkpoint_children()
    if isinstance(obj, Optimizer):
        return _optimizer_children(obj)
    if _is_keras_layer(obj) and getattr(obj, "_subclassed", None) is True:
        # a subclassed model: weights of its own, then its attributes (``d1``, ``bn``)
        own = [*obj._trainable_weights, *obj._non_trainable_weights]
        out = [(_weight_name(obj, w), w) for w in own]
        listed = {id(w) for w in own}
        return out + [(n, o) for n, o in _attribute_children(obj) if id(o) not in listed]
    if _is_keras_layer(obj):
        layers = getattr(obj, "layers", None)
        if isinstance(layers, list) and layers:  # a model: its weights are its layers'
            with_weights = [la for la in layers if la.weights]
            out = [(f"layer_with_weights-{i}", la) for i, la in enumerate(with_weights)]
            out += [(f"layer-{i}", la) for i, la in enumerate(layers)]
        else:
            out = [(_weight_name(obj, w), w) for w in obj.weights]
        listed = {id(o) for _, o in out}
        # ``self.kernel`` is the weight "kernel" again: one edge per object
        return out + [(n, o) for n, o in _attribute_children(obj) if id(o) not in listed]
    return _attribute_children(obj)


def escape(name: str) -> str:
    """A local name as it appears in a key ("/" and "." escaped as TensorFlow does)."""
    return name.replace(".", "..").replace("/", ".S")


@dataclass
class ObjectGraph:
    """The result of the walk: `nodes` (root first), each node's path of local names,
    each node's `(name, child node id)` edges, and the slot variables per optimizer."""

    nodes: list = field(default_factory=list)
    paths: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    # optimizer node id -> [(original variable node id, slot name, slot variable node id)]
    slots: dict = field(default_factory=dict)

    def key(self, node_id: int) -> str:
        return "/".join(escape(p) for p in self.paths[node_id])

    def slot_key(self, var_id: int, opt_id: int, slot_name: str) -> str:
        return (f"{self.key(var_id)}/.OPTIMIZER_SLOT/{self.key(opt_id)}/"
                f"{escape(slot_name)}{_VALUE}")


def build_object_graph(root) -> ObjectGraph:
    """Walk the objects reachable from `root` breadth first (see the module docstring)."""
    graph = ObjectGraph()
    ids: dict[int, int] = {}

    def add(obj, path):
        ids[id(obj)] = len(graph.nodes)
        graph.nodes.append(obj)
        graph.paths.append(path)
        graph.edges.append([])
        return ids[id(obj)]

    add(root, [])
    queue = collections.deque([0])
    while queue:
        node = queue.popleft()
        for name, child in children(graph.nodes[node]):
            known = ids.get(id(child))
            if known is None:
                known = add(child, [*graph.paths[node], name])
                queue.append(known)
            graph.edges[node].append((name, known))
    variables = [i for i, n in enumerate(graph.nodes) if isinstance(n, Variable)]
    for opt_id, opt in enumerate(list(graph.nodes)):
        if not isinstance(opt, Optimizer):
            continue
        refs = []
        for slot_name in opt.get_slot_names():
            for var_id in variables:
                slot = opt.get_slot(graph.nodes[var_id], slot_name)
                if slot is None:
                    continue
                slot_id = ids.get(id(slot))
                if slot_id is None:
                    slot_id = add(slot, None)
                refs.append((var_id, slot_name, slot_id))
        if refs:
            graph.slots[opt_id] = refs
    return graph


def variable_keys(graph: ObjectGraph) -> list[tuple[str, Variable]]:
    """``(checkpoint key, variable)`` for every variable of `graph`, slots included."""
    out = [(graph.key(i) + _VALUE, n) for i, n in enumerate(graph.nodes)
           if isinstance(n, Variable) and graph.paths[i] is not None]
    for opt_id, refs in graph.slots.items():
        for var_id, slot_name, slot_id in refs:
            out.append((graph.slot_key(var_id, opt_id, slot_name), graph.nodes[slot_id]))
    return out


# -- TensorFlow's TrackableObjectGraph message ------------------------------------------------

class _ObjectReference(Message):
    FIELDS = ((1, "node_id", "int32", False), (2, "local_name", "string", False))


class _SerializedTensor(Message):
    FIELDS = ((1, "name", "string", False), (2, "full_name", "string", False),
              (3, "checkpoint_key", "string", False))


class _SlotVariableReference(Message):
    FIELDS = ((1, "original_variable_node_id", "int32", False),
              (2, "slot_name", "string", False), (3, "slot_variable_node_id", "int32", False))


class _BoolValue(Message):
    FIELDS = ((1, "value", "bool", False),)


class _TrackableObject(Message):
    FIELDS = ((1, "children", _ObjectReference, True), (2, "attributes", _SerializedTensor, True),
              (3, "slot_variables", _SlotVariableReference, True),
              (5, "has_checkpoint_values", _BoolValue, False))


class _TrackableObjectGraph(Message):
    FIELDS = ((1, "nodes", _TrackableObject, True),)


def serialize_object_graph(graph: ObjectGraph) -> bytes:
    """`graph` as TensorFlow's serialized ``TrackableObjectGraph``."""
    slot_keys = {slot_id: graph.slot_key(var_id, opt_id, name)
                 for opt_id, refs in graph.slots.items()
                 for var_id, name, slot_id in refs}
    nodes = []
    for i, obj in enumerate(graph.nodes):
        node = _TrackableObject(
            children=[_ObjectReference(node_id=c, local_name=name)
                      for name, c in graph.edges[i]])
        if isinstance(obj, Variable):
            key = slot_keys.get(i) or graph.key(i) + _VALUE
            node.attributes = [_SerializedTensor(name="VARIABLE_VALUE", full_name=obj.op.name,
                                                 checkpoint_key=key)]
        if i in graph.slots:
            node.slot_variables = [
                _SlotVariableReference(original_variable_node_id=v, slot_name=name,
                                       slot_variable_node_id=s)
                for v, name, s in graph.slots[i]]
        node.has_checkpoint_values = _BoolValue(value=_has_values(graph, i, slot_keys))
        nodes.append(node)
    return _TrackableObjectGraph(nodes=nodes).SerializeToString()


def _has_values(graph: ObjectGraph, node: int, slot_keys: dict) -> bool:
    seen, stack = set(), [node]
    while stack:
        i = stack.pop()
        if i in seen:
            continue
        seen.add(i)
        if isinstance(graph.nodes[i], Variable) or i in graph.slots:
            return True
        stack.extend(c for _, c in graph.edges[i])
    return False

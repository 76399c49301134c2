"""TensorFlow's GraphDef message and flowgraph's JSON graph def, converted both ways.

flowgraph's graph def (`serialization.graph_to_dict`) is a JSON-compatible dict whose
attributes carry flowgraph's tagged encoding. TensorFlow's is a ``GraphDef`` protobuf
message (`event_format.GraphDef`): nodes with ``name``, ``op``, ``input`` (output 0 of
``x`` written ``x``, control inputs ``^x``), ``device`` and an ``attr`` map of
``AttrValue`` messages. The two differ in three ways handled here:

- TensorFlow's nodes carry type and count attributes (``T``, ``Tidx``, ``N``, ...)
  that flowgraph derives from the input tensors, and every attribute's default value.
  Export fills them in from TensorFlow's OpDefs (`tf_op_defs`, recorded from TensorFlow)
  and the recorded dtypes of inputs and outputs, and leaves out flowgraph-only
  attributes at their default; import drops any attribute the flowgraph op does not
  declare, so the op is rebuilt with flowgraph's own defaults.
- Constants follow TensorFlow's rule: numeric arrays of more than one element as raw
  ``tensor_content``, a single value (and booleans) in the typed ``*_val`` field.
- Colocation is the ``_class`` attribute (``loc:@name``), recorded output shapes the
  ``_output_shapes`` one.

`GraphDefDict`, what ``Graph.as_graph_def()`` returns, is the JSON dict with the
message's API on top (``node``, ``versions``, ``SerializeToString``), so both JSON
programs and TensorFlow programs can use it.

Example
-------
>>> d = {"versions": {"producer": 1}, "node": [
...     {"name": "c", "op": "Const", "input": [], "attr": {
...         "dtype": {"dtype": "float32"},
...         "value": {"array": "AACAPw==", "dtype": "<f4", "shape": []}}}]}
>>> msg = graph_def_from_dict(d)
>>> msg.node[0].attr["value"].tensor.float_val
[1.0]
>>> graph_def_to_dict(msg)["node"][0]["attr"]["dtype"]
{'dtype': 'float32'}
"""

from __future__ import annotations

import json

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import registry
from flowgraph.framework.event_format import (
    AttrValue,
    GraphDef,
    NameAttrList,
    NodeDef,
    TensorProto,
    VersionDef,
)
from flowgraph.framework.serialization import decode_attr, encode_attr, node_to_dict
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.framework.tf_formats.function_inline import inline_functions
from flowgraph.framework.tf_formats.op_rewrites import (
    ATTR_ALIASES,
    expand_tf_ops,
    from_tf_node,
    rewrite_for_tf,
)
from flowgraph.framework.tf_formats.parse_example import (
    is_flowgraph_parse_example,
    is_tf_parse_example,
    parse_example_from_tf,
    parse_example_to_tf,
)
from flowgraph.framework.tf_formats.resource_variables import resource_ops_as_refs
from flowgraph.framework.tf_formats.tf_op_defs import OP_DEFS

__all__ = ["GraphDefDict", "as_graph_def_dict", "graph_def_from_dict", "graph_def_to_dict",
           "node_def_of_op", "tensor_proto", "tensor_value"]

# The GraphDef version of the TensorFlow release (2.15) whose op semantics flowgraph
# follows; TensorFlow reads a GraphDef of this producer without conversions.
TF_PRODUCER = 1645

# TensorFlow's attributes that flowgraph keeps in other fields of its node dicts.
_SPECIAL = ("_class", "_output_shapes", "_gradient_op_type")
_CONTENT_KINDS = "fiucb"
# A string attribute holding flowgraph's JSON encoding of a value that no AttrValue
# field can hold (a list of lists, a list with None items); only flowgraph reads it.
_JSON_MARK = b"\x00flowgraph-json:"


# -- tensors ---------------------------------------------------------------------------
_VAL_FIELD = {
    "float32": "float_val", "float64": "double_val", "int32": "int_val", "int16": "int_val",
    "int8": "int_val", "uint8": "int_val", "uint16": "int_val", "int64": "int64_val",
    "bool": "bool_val", "float16": "half_val",
}


def tensor_proto(value) -> TensorProto:
    """A TensorProto as TensorFlow's ``make_tensor_proto`` lays it out.

    >>> tensor_proto(np.float32(2.0)).float_val
    [2.0]
    >>> len(tensor_proto(np.zeros(3, np.int32)).tensor_content)
    12
    """
    from flowgraph.framework.event_format import make_tensor_proto, shape_proto

    arr = np.asarray(value)
    compact = compact_tensor_proto(arr)
    if compact is not None:
        return compact
    if (arr.dtype == object or arr.dtype.kind in "SU"
            or (arr.size > 1 and arr.dtype != np.bool_)):  # TF lists booleans in bool_val
        return make_tensor_proto(arr)
    out = TensorProto(dtype=_dtypes.as_dtype(arr.dtype).as_datatype_enum,
                      tensor_shape=shape_proto(arr.shape))
    field = _VAL_FIELD.get(arr.dtype.name)
    if field is None:
        out.tensor_content = np.ascontiguousarray(arr).tobytes()
    elif field == "half_val":
        out.half_val.extend(arr.reshape(-1).view(np.uint16).tolist())
    else:
        getattr(out, field).extend(arr.reshape(-1).tolist())
    return out


def compact_tensor_proto(arr: np.ndarray) -> TensorProto | None:
    """TF's compact form (one value and a shape) of an array that is one value broadcast
    over more than one element (``constant(0.1, shape=...)``); None for any other array.

    >>> list(compact_tensor_proto(np.broadcast_to(np.float32(0.1), (9, 9))).float_val)
    [0.10000000149011612]
    """
    from flowgraph.framework.event_format import shape_proto

    if arr.size <= 1 or any(arr.strides) or arr.dtype.name not in _VAL_FIELD:
        return None
    out = TensorProto(dtype=_dtypes.as_dtype(arr.dtype).as_datatype_enum,
                      tensor_shape=shape_proto(arr.shape))
    one = arr.reshape(-1)[:1]
    field = _VAL_FIELD[arr.dtype.name]
    getattr(out, field).extend(one.view(np.uint16).tolist() if field == "half_val"
                               else one.tolist())
    return out


def tensor_value(proto: TensorProto) -> np.ndarray:
    """The NumPy value of a TensorProto; a short ``*_val`` list repeats its last element
    over the shape, as TensorFlow reads it.

    >>> tensor_value(tensor_proto(np.arange(4.0).reshape(2, 2))).tolist()
    [[0.0, 1.0], [2.0, 3.0]]
    """
    dtype = _dtypes.as_dtype(int(proto.dtype))
    shape = [int(d.size) for d in proto.tensor_shape.dim]
    if any(s < 0 for s in shape) or proto.tensor_shape.unknown_rank:
        raise ValueError(f"a constant tensor needs a fully known shape, got {shape}")
    size = int(np.prod(shape, dtype=np.int64))
    if dtype == _dtypes.string:
        items = list(proto.string_val)
        np_dtype = None
    else:
        np_dtype = np.dtype(dtype.as_numpy_dtype)
        if proto.tensor_content:
            flat = np.frombuffer(proto.tensor_content, dtype=np_dtype.newbyteorder("<"))
            if flat.size != size:
                raise ValueError(f"tensor_content holds {flat.size} values for shape {shape}")
            return flat.astype(np_dtype).reshape(shape)
        field = _VAL_FIELD.get(np_dtype.name, "int_val")
        items = list(getattr(proto, field))
        if field == "half_val":
            items = np.array(items, np.uint16).view(np.float16).tolist()
    if size and not items:
        items = [b"" if np_dtype is None else 0]
    if np_dtype is not None and len(items) == 1 and size > 1:
        return np.broadcast_to(np.array(items[0], dtype=np_dtype), shape)  # no copy per item
    if len(items) < size:
        items = items + [items[-1]] * (size - len(items))
    if np_dtype is None:
        out = np.empty(size, dtype=object)
        out[:] = items[:size]
        return out.reshape(shape)
    return np.array(items[:size], dtype=np_dtype).reshape(shape)


# -- attributes ------------------------------------------------------------------------
def _shape_proto(shape: TensorShape):
    from flowgraph.framework.event_format import shape_proto

    return shape_proto(None if shape.ndims is None else [d.value for d in shape.dims])


def _attr_proto(value) -> AttrValue | None:
    if isinstance(value, _dtypes.DType):
        return AttrValue(type=value.as_datatype_enum)
    if isinstance(value, TensorShape):
        return AttrValue(shape=_shape_proto(value))
    if isinstance(value, bool | np.bool_):
        return AttrValue(b=bool(value))
    if isinstance(value, int | np.integer):
        return AttrValue(i=int(value))
    if isinstance(value, float | np.floating):
        return AttrValue(f=float(value))
    if isinstance(value, str | bytes):  # bytes, as protobuf reads TensorFlow's back
        return AttrValue(s=value.encode("utf-8") if isinstance(value, str) else value)
    if isinstance(value, np.ndarray):
        return AttrValue(tensor=tensor_proto(value))
    if isinstance(value, list | tuple):
        lv = AttrValue.ListValue
        items = list(value)
        if all(isinstance(x, _dtypes.DType) for x in items):
            return AttrValue(list=lv(type=[x.as_datatype_enum for x in items]))
        if all(isinstance(x, TensorShape) for x in items):
            return AttrValue(list=lv(shape=[_shape_proto(x) for x in items]))
        if all(isinstance(x, bool | np.bool_) for x in items):
            return AttrValue(list=lv(b=[bool(x) for x in items]))
        if all(isinstance(x, int | np.integer) for x in items):
            return AttrValue(list=lv(i=[int(x) for x in items]))
        if all(isinstance(x, int | float | np.number) for x in items):
            return AttrValue(list=lv(f=[float(x) for x in items]))
        if all(isinstance(x, str | bytes) for x in items):
            return AttrValue(list=lv(s=[x.encode("utf-8") if isinstance(x, str) else x
                                        for x in items]))
    try:  # nested lists, None items, dicts: flowgraph's own encoding, kept as a string
        return AttrValue(s=_JSON_MARK + json.dumps(encode_attr(value)).encode("utf-8"))
    except (TypeError, ValueError):
        return None  # no serializable form (a callable): left out


def _shape_value(proto) -> TensorShape:
    if proto.unknown_rank:
        return TensorShape(None)
    return TensorShape([None if d.size < 0 else int(d.size) for d in proto.dim])


def _text(raw: bytes | str):
    if isinstance(raw, str):  # a message built in memory, not parsed
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return bytes(raw)


def attr_value(proto: AttrValue):
    """The Python value of an AttrValue (the member of its oneof that is set)."""
    fields = proto.__dict__
    if "list" in fields:
        lv = proto.list
        if lv.type:
            return [_dtypes.as_dtype(int(t)) for t in lv.type]
        if lv.shape:
            return [_shape_value(s) for s in lv.shape]
        if lv.tensor:
            return [tensor_value(t) for t in lv.tensor]
        for name in ("s", "i", "f", "b"):
            items = getattr(lv, name)
            if items:
                return [_text(x) for x in items] if name == "s" else list(items)
        return []
    if "type" in fields:
        return _dtypes.as_dtype(int(proto.type))
    if "shape" in fields:
        return _shape_value(proto.shape)
    if "tensor" in fields:
        return tensor_value(proto.tensor)
    if "s" in fields:
        raw = proto.s
        if isinstance(raw, bytes | bytearray) and raw.startswith(_JSON_MARK):
            return decode_attr(json.loads(bytes(raw)[len(_JSON_MARK):]))
        return _text(proto.s)
    for name in ("i", "f", "b"):
        if name in fields:
            return fields[name]
    if "placeholder" in fields:
        raise ValueError(f"attribute placeholder '{proto.placeholder}' (a function "
                         "body) is not supported")
    if "func" in fields:
        function = NameAttrList.FromString(proto.func).name
        raise ValueError(f"a function-valued attribute ('{function}'): "
                         "flowgraph inlines function calls (PartitionedCall, If, While) but "
                         "runs no op that takes a function")
    raise ValueError("an AttrValue with no value set")


# -- dict -> message -------------------------------------------------------------------
def _input_name(ref: str) -> str:
    return ref[:-2] if ref.endswith(":0") and not ref.startswith("^") else ref


def _source_dtype(ref: str, by_name: dict):
    op_name, _, index = ref.rpartition(":")
    node = by_name.get(op_name)
    recorded = node.get("output_dtypes") if node else None
    if recorded and index.isdigit() and int(index) < len(recorded):
        return _dtypes.as_dtype(recorded[int(index)])
    return None


def _assign_args(args, dtypes: list, out: dict) -> None:
    # A list argument (number_attr / type_list_attr) takes what the others leave.
    lists = [i for i, a in enumerate(args) if a[1] or a[2]]
    extra = len(dtypes) - (len(args) - len(lists))
    if len(lists) > 1 or extra < 0:
        return
    pos = 0
    for i, (type_attr, number_attr, list_attr, _) in enumerate(args):
        n = extra if i in lists else 1
        chunk, pos = dtypes[pos:pos + n], pos + n
        if number_attr:
            out.setdefault(number_attr, AttrValue(i=n))
        if list_attr and None not in chunk:
            out.setdefault(list_attr, AttrValue(list=AttrValue.ListValue(
                type=[d.as_datatype_enum for d in chunk])))
        if type_attr and chunk and chunk[0] is not None:
            out.setdefault(type_attr, AttrValue(type=chunk[0].as_datatype_enum))


def _tf_attrs(node: dict, by_name: dict) -> tuple[dict, frozenset | None]:
    """TensorFlow's attributes of `node` that flowgraph does not store (type and count
    attributes from the inputs' and outputs' dtypes, then TensorFlow's defaults), and the
    names of all of TensorFlow's attributes of the op (None for flowgraph's own ops)."""
    spec = OP_DEFS.get(node["op"])
    if spec is None:
        return {}, None
    inputs, outputs, attrs = spec
    out: dict = {}
    data = [r for r in node.get("input", []) if not r.startswith("^")]
    _assign_args(inputs, [_source_dtype(r, by_name) for r in data], out)
    recorded = [_dtypes.as_dtype(d) for d in node.get("output_dtypes", [])]
    _assign_args(outputs, recorded, out)
    own = node.get("attr", {})
    for name, default in attrs:
        if name not in out and name not in own and default is not None:
            out[name] = AttrValue.FromString(bytes.fromhex(default))
    return out, frozenset(name for name, _ in attrs)


def _flowgraph_only_default(op: str, key: str, value) -> bool:
    # An attribute TensorFlow's op lacks, at flowgraph's default (Softmax's axis=-1):
    # leaving it out gives TensorFlow's node with the same meaning.
    if not registry.has_op_def(op):
        return False
    declared = registry.get_op_def(op).attrs
    try:
        return key in declared and bool(np.all(declared[key] == value))
    except (TypeError, ValueError):
        return False


def graph_def_from_dict(graph_def: dict, add_shapes: bool = False) -> GraphDef:
    """TensorFlow's GraphDef message of a flowgraph graph def dict; with `add_shapes`,
    each node's recorded output shapes as its ``_output_shapes`` attribute."""
    graph_def = rewrite_for_tf(graph_def)
    by_name = {n["name"]: n for n in graph_def.get("node", [])}
    out = GraphDef(versions=VersionDef(producer=TF_PRODUCER))
    for node in graph_def.get("node", []):
        if is_flowgraph_parse_example(node):
            out.node.extend(parse_example_to_tf(node))
            continue
        message = _node_message(node, by_name)
        if add_shapes and node.get("output_shapes"):  # none for an op without outputs
            message.attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(
                shape=[_shape_proto(decode_attr(s)) for s in node["output_shapes"]]))
        out.node.append(message)
    return out


def node_def_of_op(op) -> NodeDef:
    """TensorFlow's NodeDef of a flowgraph `Operation` (what ``op.node_def`` gives): inputs
    without ``:0``, type attributes (``T``) and TensorFlow's defaults filled in. Built on
    each call from the op alone and its inputs' ops, never from the whole graph.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, name="x")
    ...     nd = node_def_of_op(tf.identity(x, name="y").op)
    >>> nd.name, list(nd.input), nd.attr["T"].type
    ('y', ['x'], 1)
    """
    def as_dict(o) -> dict:
        node = node_to_dict(o)
        node["output_dtypes"] = [t.dtype.base_dtype.name for t in o._outputs]
        return node

    nodes = {}
    for source in [t.op for t in op._inputs] + [op]:
        nodes.setdefault(source.name, source)
    graph_def = rewrite_for_tf({"node": [as_dict(o) for o in nodes.values()]})
    mine = [n for n in graph_def["node"] if n["name"] == op.name]
    if mine and is_flowgraph_parse_example(mine[-1]):
        return next(n for n in parse_example_to_tf(mine[-1]) if n.name == op.name)
    by_name = {n["name"]: n for n in graph_def["node"]}
    return _node_message(mine[-1] if mine else as_dict(op), by_name)


def _node_message(node: dict, by_name: dict) -> NodeDef:
    """The NodeDef message of one node dict; `by_name` gives its inputs' node dicts."""
    attrs, tf_names = _tf_attrs(node, by_name)
    for key, raw in node.get("tf_attr", {}).items():  # kept from a TensorFlow file
        proto = _attr_proto(decode_attr(raw))
        if proto is not None:
            attrs[key] = proto
    aliases = ATTR_ALIASES.get(node["op"], {})
    for key, raw in node.get("attr", {}).items():
        if aliases.get(key) in attrs:
            continue
        value = decode_attr(raw)
        if tf_names is not None and key not in tf_names and \
                _flowgraph_only_default(node["op"], key, value):
            continue
        proto = _attr_proto(value)
        if proto is not None:
            attrs[key] = proto
    if node.get("colocation"):
        attrs["_class"] = AttrValue(list=AttrValue.ListValue(
            s=[f"loc:@{c}".encode() for c in node["colocation"]]))
    if node.get("gradient_op_type"):
        attrs["_gradient_op_type"] = AttrValue(s=node["gradient_op_type"].encode())
    return NodeDef(
        name=node["name"], op=node["op"],
        input=[_input_name(r) for r in node.get("input", [])],
        device=node.get("device") or None, attr=dict(sorted(attrs.items())))


# -- message -> dict -------------------------------------------------------------------
def _tf_defaults_for_required(op: str, declared: dict, attrs: dict) -> dict:
    # A SavedModel written with strip_default_attrs (estimators' exports) leaves out the
    # attributes at TensorFlow's default; where flowgraph's op has no default of its own
    # (ComplexAbs's Tout), TensorFlow's is the value meant.
    spec = OP_DEFS.get(op)
    if spec is None:
        return {}
    return {name: encode_attr(attr_value(AttrValue.FromString(bytes.fromhex(default))))
            for name, default in spec[2]
            if default is not None and name not in attrs and declared.get(name, 0) is None}


def _node_dict(node: NodeDef) -> dict:
    declared = registry.get_op_def(node.op).attrs if registry.has_op_def(node.op) else None
    attrs, extra = {}, {}
    for key, proto in node.attr.items():
        if key in _SPECIAL:
            extra[key] = proto
            continue
        if declared is not None and key not in declared:
            # A type attribute flowgraph derives from the inputs: kept aside, so that
            # writing this graph def back gives TensorFlow's node again.
            extra.setdefault("tf_attr", {})[key] = proto
            continue
        try:
            attrs[key] = encode_attr(attr_value(proto))
        except (ValueError, TypeError, KeyError) as e:
            raise ValueError(f"node '{node.name}' ({node.op}): attribute '{key}': {e}") \
                from None
    if declared is not None:
        attrs.update(_tf_defaults_for_required(node.op, declared, attrs))
    out = {"name": node.name, "op": node.op,
           "input": [r if r.startswith("^") or ":" in r else f"{r}:0" for r in node.input],
           "device": node.device, "attr": attrs}
    if "_class" in extra:
        out["colocation"] = [_text(s)[len("loc:@"):] for s in extra["_class"].list.s
                             if _text(s).startswith("loc:@")]
    if "_gradient_op_type" in extra:
        out["gradient_op_type"] = _text(extra["_gradient_op_type"].s)
    if "tf_attr" in extra:
        out["tf_attr"] = {k: encode_attr(attr_value(v)) for k, v in extra["tf_attr"].items()}
    if "_output_shapes" in extra:
        out["output_shapes"] = [encode_attr(_shape_value(s))
                                for s in extra["_output_shapes"].list.shape]
    return out


def graph_def_to_dict(message) -> dict:
    """flowgraph's graph def dict of a TensorFlow GraphDef (this module's message, or
    any object with ``SerializeToString``, such as protobuf's own GraphDef). Resource
    variables become reference variables (`tf_formats.resource_variables`)."""
    if not isinstance(message, GraphDef):
        message = GraphDef.FromString(message.SerializeToString())
    message = inline_functions(message)  # graph functions become plain nodes
    nodes = resource_ops_as_refs(message.node)  # flowgraph's variables are references
    parsers = {n.name for n in nodes if is_tf_parse_example(n)}
    constants = _parser_constants(message, parsers) if parsers else {}
    return expand_tf_ops({"versions": {"producer": int(message.versions.producer)},
                          "node": [parse_example_from_tf(n, constants) if n.name in parsers
                                   else from_tf_node(_node_dict(n)) for n in nodes]})


def _parser_constants(message: GraphDef, parsers: set) -> dict:
    """The values of the constants feeding TensorFlow's parsing nodes (keys, defaults),
    through the ``Reshape``/``Identity`` nodes TensorFlow puts on defaults."""
    by_name = {n.name: n for n in message.node}
    out = {}
    for name in parsers:
        for ref in by_name[name].input[1:]:
            source = ref.rpartition(":")[0] if ":" in ref else ref
            node = by_name.get(source)
            while node is not None and node.op in ("Reshape", "Identity") and node.input:
                node = by_name.get(node.input[0].rpartition(":")[0] or node.input[0])
            if node is not None and node.op == "Const" and "value" in node.attr:
                out[source] = tensor_value(node.attr["value"].tensor)
    return out


def parse_graph_def(data: bytes, source: str = "<bytes>") -> GraphDef:
    """A GraphDef message from serialized bytes; ValueError naming `source` when the
    bytes are not a GraphDef."""
    try:
        return GraphDef.FromString(bytes(data))
    except (ValueError, UnicodeDecodeError, TypeError) as e:
        raise ValueError(f"{source} is not a serialized GraphDef: {e}") from None


def as_graph_def_dict(graph_def) -> dict:
    """`graph_def` as flowgraph's dict: a dict is returned as is, a message converted."""
    if isinstance(graph_def, GraphDefDict) and graph_def.message_changed():
        return graph_def_to_dict(graph_def.message())  # its NodeDefs were edited
    if isinstance(graph_def, dict):
        return graph_def
    if hasattr(graph_def, "SerializeToString"):
        return graph_def_to_dict(graph_def)
    return graph_def


class GraphDefDict(dict, GraphDef):
    """flowgraph's JSON graph def that is also TensorFlow's GraphDef message.

    It is a dict (``json.dump`` it, index it as before) and an instance of
    ``tf.GraphDef`` (``isinstance(gd, tf.GraphDef)``) with the message's API: ``node``
    (NodeDef messages: ``add()``, ``extend``, ``del gd.node[i]``), ``versions``,
    ``SerializeToString()`` giving TensorFlow's binary form, ``CopyFrom``, ``MergeFrom``,
    ``Clear``, comparison with a GraphDef by content; ``str()`` and ``print`` give the
    text format, and ``google.protobuf.text_format`` prints it. With ``add_shapes=True``
    each node carries ``_output_shapes``. The message view is computed once, when first
    used; when it is then edited (``node.device = ""``, ``del gd.node[0]``),
    `import_graph_def`, `write_graph` and ``SerializeToString`` use the edited message.

    Example
    -------
    >>> import flowgraph as tf
    >>> g = tf.Graph()
    >>> with g.as_default():
    ...     x = tf.placeholder(tf.float32, [None, 2], name="x")
    ...     y = tf.identity(x, name="y")
    >>> gd = g.as_graph_def()
    >>> isinstance(gd, tf.GraphDef), [(n.name, n.op, list(n.input)) for n in gd.node]
    (True, [('x', 'Placeholder', []), ('y', 'Identity', ['x'])])
    >>> gd["node"][1]["input"]
    ['x:0']
    """

    def __init__(self, *args, add_shapes: bool = False, **kwargs) -> None:
        dict.__init__(self, *args, **kwargs)
        self.__dict__["_add_shapes"] = add_shapes  # `Graph.as_graph_def(add_shapes=True)`

    def message(self) -> GraphDef:
        """The GraphDef message view (made on first use, then kept)."""
        cached = self.__dict__.get("_proto")
        if cached is None:
            cached = self.__dict__["_proto"] = graph_def_from_dict(
                self, add_shapes=self.__dict__.get("_add_shapes", False))
            self.__dict__["_proto_bytes"] = cached.SerializeToString()
        return cached

    def message_changed(self) -> bool:
        """Whether the message view was edited since it was made."""
        cached = self.__dict__.get("_proto")
        return cached is not None and \
            cached.SerializeToString() != self.__dict__["_proto_bytes"]

    # The message's fields and methods act on the message view.
    def __getattr__(self, name):
        if name in GraphDef._BY_NAME:
            return getattr(self.message(), name)
        raise AttributeError(f"GraphDef has no field named '{name}'")

    def __setattr__(self, name, value) -> None:
        setattr(self.message(), name, value)

    @property
    def node(self):
        return self.message().node

    @property
    def versions(self):
        return self.message().versions

    def SerializeToString(self, deterministic: bool = True) -> bytes:
        return self.message().SerializeToString()

    SerializePartialToString = SerializeToString

    def ByteSize(self) -> int:
        return len(self.SerializeToString())

    def HasField(self, name: str) -> bool:
        return self.message().HasField(name)

    def ClearField(self, name: str) -> None:
        self.message().ClearField(name)

    def WhichOneof(self, group: str):
        return self.message().WhichOneof(group)

    def CopyFrom(self, other) -> None:
        self.message().CopyFrom(other)

    def MergeFrom(self, other) -> None:
        self.message().MergeFrom(other)

    def MergeFromString(self, data: bytes) -> int:
        return self.message().MergeFromString(data)

    def ParseFromString(self, data: bytes) -> int:
        return self.message().ParseFromString(data)

    def Clear(self) -> None:
        self.message().Clear()

    def to_protobuf(self):
        return self.message().to_protobuf()

    def __eq__(self, other) -> bool:
        if isinstance(other, GraphDef) and not isinstance(other, dict):
            return self.SerializeToString() == other.SerializeToString()
        if isinstance(other, GraphDefDict) and (self.message_changed()
                                                or other.message_changed()):
            return self.SerializeToString() == other.SerializeToString()
        return dict.__eq__(self, other)

    def __ne__(self, other) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # a mutable message, as protobuf's

    # protobuf's printer (``text_format.MessageToString(graph_def)``) reads a message
    # through these two; the protobuf view (`protobuf_engine`) answers them.
    @property
    def DESCRIPTOR(self):
        return self.message().to_protobuf().DESCRIPTOR

    def ListFields(self) -> list:
        return self.message().to_protobuf().ListFields()

    def __str__(self) -> str:
        """The message in protobuf's text format, as ``print(graph_def)`` shows it."""
        from flowgraph.framework.tf_formats.text_format import message_to_text

        return message_to_text(self.message())

    __repr__ = __str__

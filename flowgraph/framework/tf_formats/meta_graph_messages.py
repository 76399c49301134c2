"""TensorFlow's ``MetaGraphDef`` family of messages (``meta_graph.proto``,
``saver.proto``, ``saved_model.proto``, ``op_def.proto``), with TensorFlow's field
numbers, on flowgraph's hand-written wire code (`flowgraph.framework.event_format`).

A ``.meta`` file is one serialized `MetaGraphDefProto`; a ``saved_model.pb`` is a
`SavedModelProto` holding several. Fields flowgraph does not use (``any_info``,
``object_graph_def``, ``function_aliases``) are not declared and are skipped on read.

Example
-------
>>> from flowgraph.framework.event_format import GraphDef, NodeDef
>>> mg = MetaGraphDefProto(graph_def=GraphDef(node=[NodeDef(name="x", op="NoOp")]),
...                        saver_def=SaverDefProto(restore_op_name="save/restore_all"))
>>> back = MetaGraphDefProto.FromString(mg.SerializeToString())
>>> back.graph_def.node[0].name, back.saver_def.restore_op_name, back.saver_def.version
('x', 'save/restore_all', 0)
"""

from __future__ import annotations

from flowgraph.framework.event_format import (
    AttrValue,
    GraphDef,
    Message,
    NodeDef,
    TensorShapeProto,
)

__all__ = [
    "AssetFileDefProto",
    "CollectionDefProto",
    "CondContextDefProto",
    "ControlFlowContextDefProto",
    "FunctionDefProto",
    "MetaGraphDefProto",
    "MetaInfoDefProto",
    "OpDefProto",
    "OpListProto",
    "QueueRunnerDefProto",
    "SavedModelProto",
    "SaverDefProto",
    "SignatureDefProto",
    "TensorInfoProto",
    "ValuesDefProto",
    "VariableDefProto",
    "WhileContextDefProto",
]


class TensorInfoProto(Message):
    """A tensor of a signature: ``name``, ``dtype`` (DataType number), ``tensor_shape``."""

    PROTO_NAME = "tensorflow.TensorInfo"
    FIELDS = ((1, "name", "string", False), (2, "dtype", "enum", False),
              (3, "tensor_shape", TensorShapeProto, False))


class SignatureDefProto(Message):
    PROTO_NAME = "tensorflow.SignatureDef"
    FIELDS = ((1, "inputs", ("map", "string", TensorInfoProto), True),
              (2, "outputs", ("map", "string", TensorInfoProto), True),
              (3, "method_name", "string", False))


class _ArgDef(Message):
    FIELDS = ((1, "name", "string", False), (2, "description", "string", False),
              (3, "type", "enum", False), (4, "type_attr", "string", False),
              (5, "number_attr", "string", False), (6, "type_list_attr", "string", False),
              (16, "is_ref", "bool", False))


class _AttrDef(Message):
    FIELDS = ((1, "name", "string", False), (2, "type", "string", False),
              (3, "default_value", AttrValue, False), (4, "description", "string", False),
              (5, "has_minimum", "bool", False), (6, "minimum", "int64", False),
              (7, "allowed_values", AttrValue, False))


class OpDefProto(Message):
    """An op's signature as TensorFlow records it in ``stripped_op_list``."""

    PROTO_NAME = "tensorflow.OpDef"
    ArgDef = _ArgDef
    AttrDef = _AttrDef
    FIELDS = ((1, "name", "string", False), (2, "input_arg", _ArgDef, True),
              (3, "output_arg", _ArgDef, True), (4, "attr", _AttrDef, True),
              (5, "summary", "string", False), (6, "description", "string", False),
              (16, "is_aggregate", "bool", False), (17, "is_stateful", "bool", False),
              (18, "is_commutative", "bool", False),
              (19, "allows_uninitialized_input", "bool", False),
              (20, "control_output", "string", True))


class FunctionDefProto(Message):
    """A graph function: its signature (an OpDef), body nodes, and which body tensor each
    output returns (``ret``: output name -> ``"node:output_arg:index"``)."""

    PROTO_NAME = "tensorflow.FunctionDef"
    FIELDS = ((1, "signature", OpDefProto, False), (3, "node_def", NodeDef, True),
              (4, "ret", ("map", "string", "string"), True),
              (5, "attr", ("map", "string", AttrValue), True),
              (6, "control_ret", ("map", "string", "string"), True))


class OpListProto(Message):
    PROTO_NAME = "tensorflow.OpList"
    FIELDS = ((1, "op", OpDefProto, True),)


class MetaInfoDefProto(Message):
    FIELDS = ((1, "meta_graph_version", "string", False),
              (2, "stripped_op_list", OpListProto, False), (4, "tags", "string", True),
              (5, "tensorflow_version", "string", False),
              (6, "tensorflow_git_version", "string", False),
              (7, "stripped_default_attrs", "bool", False))


class SaverDefProto(Message):
    """The names of a Saver's graph elements; ``version`` 1 (V1) or 2 (V2, the
    tensor-bundle format)."""

    PROTO_NAME = "tensorflow.SaverDef"
    LEGACY, V1, V2 = 0, 1, 2
    FIELDS = ((1, "filename_tensor_name", "string", False),
              (2, "save_tensor_name", "string", False),
              (3, "restore_op_name", "string", False), (4, "max_to_keep", "int32", False),
              (5, "sharded", "bool", False),
              (6, "keep_checkpoint_every_n_hours", "float", False),
              (7, "version", "enum", False))


class QueueRunnerDefProto(Message):
    """A queue runner by the names of its queue and ops; ``queue_closed_exception_types``
    holds error codes (``errors.OUT_OF_RANGE`` = 11, ...)."""

    PROTO_NAME = "tensorflow.QueueRunnerDef"
    FIELDS = ((1, "queue_name", "string", False), (2, "enqueue_op_name", "string", True),
              (3, "close_op_name", "string", False), (4, "cancel_op_name", "string", False),
              (5, "queue_closed_exception_types", "enum", True))


class _BytesList(Message):
    FIELDS = ((1, "value", "bytes", True),)


class _NodeList(Message):
    FIELDS = ((1, "value", "string", True),)


class _Int64List(Message):
    FIELDS = ((1, "value", "int64", True),)


class _FloatList(Message):
    FIELDS = ((1, "value", "float", True),)


class _Any(Message):
    """``google.protobuf.Any``: a type URL and the serialized message it names."""

    PROTO_NAME = "google.protobuf.Any"
    FIELDS = ((1, "type_url", "string", False), (2, "value", "bytes", False))


_Any.__name__ = _Any.__qualname__ = "Any"  # as protobuf's class prints


class _AnyList(Message):
    FIELDS = ((1, "value", _Any, True),)


class CollectionDefProto(Message):
    """One named collection: node names, serialized messages, integers, floats or
    ``Any`` messages (TF1's SavedModelBuilder keeps its assets in such a list)."""

    PROTO_NAME = "tensorflow.CollectionDef"
    NodeList = _NodeList
    BytesList = _BytesList
    Int64List = _Int64List
    FloatList = _FloatList
    AnyList = _AnyList
    Any = _Any  # an item of `any_list`
    FIELDS = ((1, "node_list", _NodeList, False), (2, "bytes_list", _BytesList, False),
              (3, "int64_list", _Int64List, False), (4, "float_list", _FloatList, False),
              (5, "any_list", _AnyList, False))


class SaveSliceInfoDefProto(Message):
    """Where a part of a partitioned variable sits in the whole one."""

    PROTO_NAME = "tensorflow.SaveSliceInfoDef"
    FIELDS = ((1, "full_name", "string", False), (2, "full_shape", "int64", True),
              (3, "var_offset", "int64", True), (4, "var_shape", "int64", True))


class VariableDefProto(Message):
    PROTO_NAME = "tensorflow.VariableDef"
    FIELDS = ((1, "variable_name", "string", False), (2, "initializer_name", "string", False),
              (3, "snapshot_name", "string", False),
              (4, "save_slice_info_def", SaveSliceInfoDefProto, False),
              (5, "is_resource", "bool", False),
              (6, "initial_value_name", "string", False), (7, "trainable", "bool", False),
              (8, "synchronization", "enum", False), (9, "aggregation", "enum", False))


class AssetFileDefProto(Message):
    PROTO_NAME = "tensorflow.AssetFileDef"
    FIELDS = ((1, "tensor_info", TensorInfoProto, False), (2, "filename", "string", False))


class ValuesDefProto(Message):
    """The tensors of a control-flow context (``values``) and, for each tensor from
    outside that it uses, the tensor standing for it inside (``external_values``)."""

    PROTO_NAME = "tensorflow.ValuesDef"
    FIELDS = ((1, "values", "string", True),
              (2, "external_values", ("map", "string", "string"), True))


class CondContextDefProto(Message):
    """One branch of a ``tf.cond`` (collection ``cond_context``). ``nested_contexts``
    holds serialized `ControlFlowContextDefProto` messages."""

    PROTO_NAME = "tensorflow.CondContextDef"
    FIELDS = ((1, "context_name", "string", False), (2, "pred_name", "string", False),
              (3, "pivot_name", "string", False), (4, "branch", "int32", False),
              (5, "values_def", ValuesDefProto, False),
              (6, "nested_contexts", "bytes", True))


class WhileContextDefProto(Message):
    """One ``tf.while_loop`` (collection ``while_context``). ``nested_contexts`` holds
    serialized `ControlFlowContextDefProto` messages."""

    PROTO_NAME = "tensorflow.WhileContextDef"
    FIELDS = ((1, "context_name", "string", False), (2, "parallel_iterations", "int32", False),
              (3, "back_prop", "bool", False), (4, "swap_memory", "bool", False),
              (5, "pivot_name", "string", False), (6, "pivot_for_pred_name", "string", False),
              (7, "pivot_for_body_name", "string", False),
              (8, "loop_exit_names", "string", True),
              (9, "values_def", ValuesDefProto, False),
              (10, "loop_enter_names", "string", True),
              (11, "maximum_iterations_name", "string", False),
              (12, "nested_contexts", "bytes", True))


class ControlFlowContextDefProto(Message):
    """A nested context: ``cond_ctxt`` or ``while_ctxt``."""

    PROTO_NAME = "tensorflow.ControlFlowContextDef"
    FIELDS = ((1, "cond_ctxt", CondContextDefProto, False),
              (2, "while_ctxt", WhileContextDefProto, False))
    ONEOFS = {"ctxt": ("cond_ctxt", "while_ctxt")}


class MetaGraphDefProto(Message):
    """A graph with what is needed to use it again: ``meta_info_def``, ``graph_def``,
    ``saver_def``, ``collection_def``, ``signature_def`` and ``asset_file_def``."""

    PROTO_NAME = "tensorflow.MetaGraphDef"
    MetaInfoDef = MetaInfoDefProto
    FIELDS = ((1, "meta_info_def", MetaInfoDefProto, False), (2, "graph_def", GraphDef, False),
              (3, "saver_def", SaverDefProto, False),
              (4, "collection_def", ("map", "string", CollectionDefProto), True),
              (5, "signature_def", ("map", "string", SignatureDefProto), True),
              (6, "asset_file_def", AssetFileDefProto, True))


class SavedModelProto(Message):
    PROTO_NAME = "tensorflow.SavedModel"
    FIELDS = ((1, "saved_model_schema_version", "int64", False),
              (2, "meta_graphs", MetaGraphDefProto, True))


# Nested as in meta_graph.proto: the protobuf engine then declares MetaInfoDefProto as the
# nested type "tensorflow.MetaGraphDef.MetaInfoDef" (a dotted PROTO_NAME on a top-level
# class would give a message of a package "tensorflow.MetaGraphDef" instead).
for _cls, _name in ((MetaInfoDefProto, "MetaGraphDefProto.MetaInfoDef"),
                    (_ArgDef, "OpDefProto.ArgDef"), (_AttrDef, "OpDefProto.AttrDef"),
                    (_BytesList, "CollectionDefProto.BytesList"),
                    (_NodeList, "CollectionDefProto.NodeList"),
                    (_Int64List, "CollectionDefProto.Int64List"),
                    (_FloatList, "CollectionDefProto.FloatList"),
                    (_AnyList, "CollectionDefProto.AnyList")):
    _cls.__name__ = _name.rpartition(".")[2]
    _cls.__qualname__ = _name

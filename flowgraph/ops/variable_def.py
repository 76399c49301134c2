"""``VariableDef`` messages of variables: what ``tf.Variable.to_proto`` writes and
``tf.Variable.from_proto`` reads back, as the ``variables`` collections of a MetaGraphDef
hold them (`flowgraph.train.meta_graph_export` and `flowgraph.train.meta_graph_import`
use the same two functions).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     v = tf.Variable([1.0, 2.0], name="v")
...     proto = v.to_proto()
...     again = tf.Variable.from_proto(proto)
>>> proto.snapshot_name, again.name, again.initializer.name
('v/read:0', 'v:0', 'v/Assign')
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.tensor_shape import as_shape
from flowgraph.framework.tf_formats.meta_graph_messages import (
    SaveSliceInfoDefProto,
    VariableDefProto,
)
from flowgraph.ops.partitioned_variables import SaveSliceInfo
from flowgraph.ops.resource_variables import ResourceVariable
from flowgraph.ops.variables import Variable

__all__ = ["rebuild_variable", "variable_def_proto"]


def _strip_scope(export_scope):
    """A function removing a leading ``export_scope/`` from a name (as TensorFlow: a
    name outside the scope is kept)."""
    if not export_scope:
        return lambda name: name
    prefix = export_scope.rstrip("/") + "/"
    return lambda name: name[len(prefix):] if name.startswith(prefix) else name


def _add_scope(import_scope):
    if not import_scope:
        return lambda name: name
    prefix = import_scope.rstrip("/") + "/"
    return lambda name: prefix + name


def variable_def_proto(var, strip):
    """The ``VariableDef`` message of `var`, its names passed through `strip`."""
    vd = VariableDefProto(
        variable_name=strip(var.name), initializer_name=strip(var.initializer.name),
        # A resource variable's snapshot is its `Read/ReadVariableOp` (value() would
        # add a new read).
        snapshot_name=strip(getattr(var, "_graph_element", None).name
                            if hasattr(var, "handle") else var.value().name),
        initial_value_name=strip(var.initial_value.name),
        trainable=bool(var.trainable))
    if hasattr(var, "handle"):  # a resource variable (left unset otherwise, as TF writes)
        vd.is_resource = True
    info = getattr(var, "_save_slice_info", None)
    if info is not None:  # a part of a partitioned variable: where it sits in the whole
        vd.save_slice_info_def = SaveSliceInfoDefProto(
            full_name=strip(info.full_name), full_shape=[int(d) for d in info.full_shape],
            var_offset=[int(d) for d in info.var_offset],
            var_shape=[int(d) for d in info.var_shape])
    return vd


def rebuild_variable(graph, vd, scoped):
    """A Python `Variable` over the imported ops that `vd` (a VariableDef) names.

    `scoped` maps a saved name to its name in `graph` (the import scope). Shared by
    `import_meta_graph` and the SavedModel loader. Raises KeyError/ValueError when an
    op or tensor `vd` names is not in `graph`.
    """
    if getattr(vd, "is_resource", False):
        return _rebuild_resource_variable(graph, vd, scoped)
    var = object.__new__(Variable)
    var._variable = graph.get_tensor_by_name(scoped(vd.variable_name))
    var._initializer_op = graph.get_operation_by_name(scoped(vd.initializer_name))
    var._snapshot = graph.get_tensor_by_name(scoped(vd.snapshot_name))
    var._initial_value = (graph.get_tensor_by_name(scoped(vd.initial_value_name))
                          if vd.initial_value_name else var._snapshot)
    var._trainable = bool(vd.trainable)
    var._constraint = var._caching_device = var._save_slice_info = None
    info = getattr(vd, "save_slice_info_def", None)
    if info is not None and info.full_name:  # a part of a partitioned variable
        var._save_slice_info = SaveSliceInfo(
            scoped(info.full_name), [int(d) for d in info.full_shape],
            [int(d) for d in info.var_offset], [int(d) for d in info.var_shape])
    graph.__dict__.setdefault("_deref_cache", {})[var._variable] = var._snapshot
    return var


def _rebuild_resource_variable(graph, vd, scoped):
    """A `ResourceVariable` over the imported ``VarHandleOp`` and its ops."""
    var = object.__new__(ResourceVariable)
    handle = graph.get_tensor_by_name(scoped(vd.variable_name))
    if handle.op.type != "VarHandleOp":
        raise ValueError(f"'{vd.variable_name}' is a {handle.op.type}, not a VarHandleOp")
    var._handle = var._variable = handle
    var._dtype = _dtypes.as_dtype(handle.op.attrs["dtype"]).base_dtype
    var._shape = as_shape(handle.op.attrs["shape"])
    var._initializer_op = graph.get_operation_by_name(scoped(vd.initializer_name))
    var._graph_element = var._snapshot = graph.get_tensor_by_name(scoped(vd.snapshot_name))
    var._initial_value = (graph.get_tensor_by_name(scoped(vd.initial_value_name))
                          if vd.initial_value_name else var._snapshot)
    var._trainable = bool(vd.trainable)
    var._constraint = var._caching_device = var._save_slice_info = None
    var._parent_op = var._is_initialized_op = None
    info = getattr(vd, "save_slice_info_def", None)
    if info is not None and info.full_name:
        var._save_slice_info = SaveSliceInfo(
            scoped(info.full_name), [int(d) for d in info.full_shape],
            [int(d) for d in info.var_offset], [int(d) for d in info.var_shape])
    return var


def _to_proto(self, export_scope=None):
    """This variable's ``VariableDef`` message, its names relative to `export_scope`
    (None when the variable lies outside it)."""
    # As TensorFlow: None unless the variable's name starts with `export_scope`
    if export_scope and not self.name.startswith(export_scope):
        return None
    return variable_def_proto(self, _strip_scope(export_scope))


def _from_proto(variable_def, import_scope=None):
    """The variable a ``VariableDef`` message names, over the ops already in the default
    graph (under `import_scope`); a resource variable when ``is_resource`` is set."""
    if not isinstance(variable_def, VariableDefProto):
        raise TypeError(f"Variable.from_proto: expected a VariableDef message, got "
                        f"{type(variable_def).__name__}.")
    return rebuild_variable(get_default_graph(), variable_def, _add_scope(import_scope))


def _slice_info_to_proto(self, export_scope=None):
    """This slice's ``SaveSliceInfoDef`` message (None when its full name lies outside
    `export_scope`)."""
    if export_scope and not self.full_name.startswith(export_scope):
        return None
    return SaveSliceInfoDefProto(
        full_name=_strip_scope(export_scope)(self.full_name),
        full_shape=[int(d) for d in self.full_shape],
        var_offset=[int(d) for d in self.var_offset],
        var_shape=[int(d) for d in self.var_shape])


Variable.to_proto = _to_proto
Variable.from_proto = staticmethod(_from_proto)
SaveSliceInfo.to_proto = _slice_info_to_proto
Variable.SaveSliceInfo = SaveSliceInfo

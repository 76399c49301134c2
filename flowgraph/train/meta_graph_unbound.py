"""Unbound inputs of a scoped ``MetaGraphDef``.

``export_meta_graph(export_scope=...)`` writes an input coming from outside the scope as
``$unbound_inputs_<name>`` and lists those names in the ``unbound_inputs`` collection;
``import_meta_graph`` then needs an ``input_map`` binding exactly those names (as in
TensorFlow), and does not import the collection itself.

Example
-------
>>> from flowgraph.framework.tf_formats.meta_graph_messages import MetaGraphDefProto
>>> mg = MetaGraphDefProto()
>>> mg.collection_def["unbound_inputs"].bytes_list.value.append(b"$unbound_inputs_x")
>>> check_unbound_inputs(mg, {"$unbound_inputs_x": 0})
>>> try:
...     check_unbound_inputs(mg, None)
... except ValueError as e:
...     print(str(e)[:49])
Graph contains unbound inputs: $unbound_inputs_x.
"""

from __future__ import annotations

__all__ = ["UNBOUND_INPUTS_KEY", "UNBOUND_INPUT_PREFIX", "check_unbound_inputs"]

UNBOUND_INPUT_PREFIX = "$unbound_inputs_"
UNBOUND_INPUTS_KEY = "unbound_inputs"


def _text(value) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def check_unbound_inputs(meta_graph, input_map, key: str | None = UNBOUND_INPUTS_KEY) -> None:
    """Raise ValueError unless `input_map` binds exactly the unbound inputs the
    collection `key` of `meta_graph` lists (nothing to check when it lists none)."""
    if not key or key not in meta_graph.collection_def:
        return
    col = meta_graph.collection_def[key]
    values = []
    for kind in ("node_list", "bytes_list"):
        if col.HasField(kind):
            values = [_text(v) for v in getattr(col, kind).value]
    if values and (not input_map or sorted(values) != sorted(input_map)):
        raise ValueError(f"Graph contains unbound inputs: {','.join(values)}. Must "
                         "provide these inputs through input_map.")

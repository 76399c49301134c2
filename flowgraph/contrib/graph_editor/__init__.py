"""`tf.contrib.graph_editor`: select, copy and rewire parts of a graph in place.

TensorFlow 1.x's graph editor on flowgraph's graph: `select` (filters, regexes, graph
walks), `subgraph` (`SubGraphView`), `reroute` (rewiring tensors and control inputs),
`edit` (detach, connect, bypass), `transform` (copying subgraphs: `copy`,
`copy_with_input_replacements`, `graph_replace`) and `util`. Edits change the graph
sessions run: a session recompiles at its next run after one. Aliases: `sgv`
(`make_view`), `sgv_scope` (`make_view_from_scope`), `ph` (a placeholder).

Example
-------
>>> import flowgraph as tf
>>> ge = tf.contrib.graph_editor
>>> with tf.Graph().as_default():
...     a = tf.constant(3.0, name="a")
...     b = tf.constant(5.0, name="b")
...     y = tf.square(a, name="y")
...     with tf.Session() as sess:
...         before = sess.run(y)
...         _ = ge.reroute_ts([b], [a])
...         after = sess.run(y)
>>> float(before), float(after)
(9.0, 25.0)
"""

from flowgraph.contrib.graph_editor import edit, reroute, select, subgraph, transform, util
from flowgraph.contrib.graph_editor.edit import (
    bypass,
    connect,
    detach,
    detach_control_inputs,
    detach_control_outputs,
    detach_inputs,
    detach_outputs,
)
from flowgraph.contrib.graph_editor.reroute import (
    add_control_inputs,
    remove_control_inputs,
    reroute_inputs,
    reroute_ios,
    reroute_outputs,
    reroute_ts,
    swap_inputs,
    swap_ios,
    swap_outputs,
    swap_ts,
)
from flowgraph.contrib.graph_editor.select import (
    check_cios,
    compute_boundary_ts,
    filter_ops,
    filter_ops_from_regex,
    filter_ts,
    filter_ts_from_regex,
    get_backward_walk_ops,
    get_forward_walk_ops,
    get_name_scope_ops,
    get_ops_ios,
    get_walks_intersection_ops,
    get_walks_union_ops,
    get_within_boundary_ops,
    select_ops,
    select_ops_and_ts,
    select_ts,
)
from flowgraph.contrib.graph_editor.subgraph import (
    SubGraphView,
    make_view,
    make_view_from_scope,
)
from flowgraph.contrib.graph_editor.transform import (
    Transformer,
    TransformerInfo,
    assign_renamed_collections_handler,
    copy,
    copy_op_handler,
    copy_with_input_replacements,
    graph_replace,
    keep_t_if_possible_handler,
    replace_t_with_placeholder_handler,
    transform_op_if_inside_handler,
)
from flowgraph.contrib.graph_editor.util import (
    ControlOutputs,
    check_graphs,
    concatenate_unique,
    flatten_tree,
    get_consuming_ops,
    get_generating_ops,
    get_predefined_collection_names,
    get_tensors,
    get_unique_graph,
    is_iterable,
    make_list_of_op,
    make_list_of_t,
    make_placeholder_from_dtype_and_shape,
    make_placeholder_from_tensor,
    make_regex,
    placeholder_name,
    scope_basename,
    scope_dirname,
    scope_finalize,
    transform_tree,
)

ph = make_placeholder_from_dtype_and_shape
sgv = make_view
sgv_scope = make_view_from_scope

__all__ = [
    "ControlOutputs", "SubGraphView", "Transformer", "TransformerInfo",
    "add_control_inputs", "assign_renamed_collections_handler", "bypass", "check_cios",
    "check_graphs", "compute_boundary_ts", "concatenate_unique", "connect", "copy",
    "copy_op_handler", "copy_with_input_replacements", "detach", "detach_control_inputs",
    "detach_control_outputs", "detach_inputs", "detach_outputs", "edit", "filter_ops",
    "filter_ops_from_regex", "filter_ts", "filter_ts_from_regex", "flatten_tree",
    "get_backward_walk_ops", "get_consuming_ops", "get_forward_walk_ops",
    "get_generating_ops", "get_name_scope_ops", "get_ops_ios",
    "get_predefined_collection_names", "get_tensors", "get_unique_graph",
    "get_walks_intersection_ops", "get_walks_union_ops", "get_within_boundary_ops",
    "graph_replace", "is_iterable", "keep_t_if_possible_handler", "make_list_of_op",
    "make_list_of_t", "make_placeholder_from_dtype_and_shape",
    "make_placeholder_from_tensor", "make_regex", "make_view", "make_view_from_scope", "ph",
    "placeholder_name", "remove_control_inputs", "replace_t_with_placeholder_handler",
    "reroute", "reroute_inputs", "reroute_ios", "reroute_outputs", "reroute_ts", "scope_basename",
    "scope_dirname", "scope_finalize", "select", "select_ops", "select_ops_and_ts",
    "select_ts", "sgv", "sgv_scope", "subgraph", "swap_inputs", "swap_ios", "swap_outputs",
    "swap_ts", "transform", "transform_op_if_inside_handler", "transform_tree", "util",
]

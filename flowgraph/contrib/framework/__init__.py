"""`tf.contrib.framework`: TF1's `arg_scope` and variable helpers (see `arg_scope.py` and
`variables.py`), plus contrib's aliases of core functions (`nest`, checkpoint readers,
`smart_cond`, ...).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     with tf.contrib.framework.arg_scope([tf.contrib.framework.model_variable],
...                                         initializer=tf.zeros_initializer()):
...         w = tf.contrib.framework.model_variable("w", [2])
...     print(w.op.name, [v.op.name for v in tf.contrib.framework.get_model_variables()])
w ['w']
"""

from flowgraph.contrib.framework import variables as _variables_module
from flowgraph.contrib.framework.arg_scope import (
    add_arg_scope,
    arg_scope,
    arg_scope_func_key,
    arg_scoped_arguments,
    current_arg_scope,
    has_arg_scope,
)
from flowgraph.contrib.framework.variables import *  # its __all__, re-exported
from flowgraph.framework import nest
from flowgraph.framework.graph import get_default_graph
from flowgraph.ops.control_flow_cond import smart_cond
from flowgraph.ops.sort_ops import argsort, sort
from flowgraph.ops.tensor_compat import convert_to_tensor_or_sparse_tensor, is_tensor
from flowgraph.train.checkpoint_utils import (
    init_from_checkpoint,
    list_variables,
    load_checkpoint,
    load_variable,
)


def get_name_scope() -> str:
    """The default graph's current name scope (``''`` at the root)."""
    return get_default_graph().get_name_scope()


__all__ = sorted([
    *_variables_module.__all__,
    "add_arg_scope",
    "arg_scope",
    "argsort",
    "arg_scope_func_key",
    "arg_scoped_arguments",
    "current_arg_scope",
    "has_arg_scope",
    "convert_to_tensor_or_sparse_tensor",
    "get_name_scope",
    "init_from_checkpoint",
    "is_tensor",
    "list_variables",
    "load_checkpoint",
    "load_variable",
    "nest",
    "smart_cond",
    "sort",
])

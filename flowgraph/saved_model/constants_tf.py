"""TensorFlow 1.x's remaining ``tf.saved_model`` constants and `main_op_with_restore`.

The constants name the parts of TensorFlow's own SavedModel layout (the ``saved_model.pb``
protobuf, collection keys of its MetaGraphDef); flowgraph's loader reads that layout
(`flowgraph.saved_model.tf_saved_model`), and its own export writes
``saved_model.json`` (``SAVED_MODEL_FILENAME_JSON``).

Example
-------
>>> import flowgraph as tf
>>> tf.saved_model.SAVED_MODEL_FILENAME_PB, tf.saved_model.MAIN_OP_KEY
('saved_model.pb', 'saved_model_main_op')
"""

from __future__ import annotations

__all__ = ["ASSETS_KEY", "DEBUG_DIRECTORY", "DEBUG_INFO_FILENAME_PB", "LEGACY_INIT_OP_KEY",
           "MAIN_OP_KEY", "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT",
           "SAVED_MODEL_SCHEMA_VERSION", "main_op_with_restore"]

from flowgraph.saved_model.constants import SAVED_MODEL_SCHEMA_VERSION

ASSETS_KEY = "saved_model_assets"  # collection of the asset file tensors
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
TRAIN_OP_KEY = "saved_model_train_op"  # the train op of a TRAIN-mode export


def main_op_with_restore(restore_op_name):
    """The standard main op (local variables and lookup tables initialized) followed by
    the restore op `restore_op_name` (a Saver's restore op, or its name).

    Example
    -------
    >>> import flowgraph as tf
    >>> v = tf.Variable(1.0)
    >>> saver = tf.train.Saver()
    >>> op = tf.saved_model.main_op_with_restore(saver.saver_def.restore_op_name)
    >>> op.type
    'NoOp'
    """
    from flowgraph.framework.graph import GraphKeys, control_dependencies, get_default_graph
    from flowgraph.ops import variables
    from flowgraph.ops.control_flow_ops import group

    graph = get_default_graph()
    if isinstance(restore_op_name, str):
        restore_op_name = graph.as_graph_element(restore_op_name)
    tables = graph.get_collection(GraphKeys.TABLE_INITIALIZERS)
    with control_dependencies([group(variables.local_variables_initializer(), *tables)]):
        return group(restore_op_name)

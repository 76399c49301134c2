"""`tf.tables_initializer`: one op that runs every table initializer of the graph.

Lookup tables (and anything else that needs a one-time setup run, like the tables
behind vocabulary feature columns) add their initializer ops to the
``GraphKeys.TABLE_INITIALIZERS`` collection; TF1 programs run
``tf.tables_initializer()`` next to ``tf.global_variables_initializer()``.

Example
-------
>>> import flowgraph as tf
>>> init = tf.tables_initializer()
>>> init.type, init.name
('NoOp', 'init_all_tables')
"""

from __future__ import annotations

import warnings

from flowgraph.framework.graph import GraphKeys, get_default_graph
from flowgraph.framework.operation import Operation
from flowgraph.ops.control_flow_ops import group, no_op

__all__ = ["initialize_all_tables", "tables_initializer"]


def tables_initializer(name: str = "init_all_tables") -> Operation:
    """An op running all ops of the ``TABLE_INITIALIZERS`` collection (a no-op if none).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
    [None, None]
    """
    initializers = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    if initializers:
        return group(*initializers, name=name)
    return no_op(name=name)


def initialize_all_tables(name: str = "init_all_tables") -> Operation:
    """Deprecated name of `tables_initializer`.

    Example
    -------
    >>> import flowgraph as tf
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     op = tf.initialize_all_tables()
    >>> op.type
    'NoOp'
    """
    warnings.warn("tf.initialize_all_tables is deprecated; use tf.tables_initializer",
                  DeprecationWarning, stacklevel=2)
    return tables_initializer(name)

"""`Scaffold`: the ops a monitored session needs to initialize, check and save a model.

`finalize()` fills every piece left as None, preferring an item the user put in the
graph collection of that name, then TF's default, and finally makes the graph
read-only (`graph.finalize()`):

| piece | collection | default |
| --- | --- | --- |
| init_op | ``init_op`` | ``global_variables_initializer()`` |
| ready_op | ``ready_op`` | ``report_uninitialized_variables()`` (global + local) |
| ready_for_local_init_op | ``ready_for_local_init_op`` | uninitialized *global* variables |
| local_init_op | ``local_init_op`` | ``group(local_variables_initializer(), table initializers)`` |
| summary_op | ``summary_op`` | ``tf.summary.merge_all()`` (None without summaries) |
| saver | ``savers`` | ``Saver(sharded=True, allow_empty=True)`` (added to the collection) |

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     v = tf.Variable(1.0, name="v")
...     scaffold = tf.train.Scaffold().finalize()
...     print(scaffold.init_op.type, g.finalized)
...     g._unsafe_unfinalize()
NoOp True
"""

from __future__ import annotations

import logging

__all__ = ["Scaffold"]

logger = logging.getLogger("tensorflow")


def _coalesce(a, b):
    return a if a is not None else b


class Scaffold:
    """Initialization, readiness, summary and saving pieces of a monitored session.

    Parameters
    ----------
    init_op : Operation, optional
        Initializes the model when it is not restored from a checkpoint.
    init_feed_dict : dict, optional
        Fed when running `init_op`.
    init_fn : callable, optional
        ``init_fn(scaffold, session)``, run after `init_op` (e.g. warm-starting).
    ready_op : Tensor, optional
        1-D string tensor of what is still uninitialized; empty means ready.
    ready_for_local_init_op : Tensor, optional
        Like `ready_op`, checked before running `local_init_op`.
    local_init_op : Operation, optional
        Initializes per-session state (local variables, tables); runs on every
        session, restored or not.
    summary_op : Tensor, optional
    saver : Saver, optional
    copy_from_scaffold : Scaffold, optional
        Take every piece not given here from this scaffold.
    local_init_feed_dict : dict, optional
        Fed when running `local_init_op`.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None, local_init_feed_dict=None) -> None:
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            src = copy_from_scaffold
            init_op = _coalesce(init_op, src.init_op)
            init_feed_dict = _coalesce(init_feed_dict, src._init_feed_dict)
            init_fn = _coalesce(init_fn, src._user_init_fn)
            ready_op = _coalesce(ready_op, src.ready_op)
            ready_for_local_init_op = _coalesce(ready_for_local_init_op,
                                                src.ready_for_local_init_op)
            local_init_op = _coalesce(local_init_op, src.local_init_op)
            local_init_feed_dict = _coalesce(local_init_feed_dict, src._local_init_feed_dict)
            summary_op = _coalesce(summary_op, src.summary_op)
            saver = _coalesce(saver, src.saver)
        # init_fn gets the scaffold too, so that it can reach the saver.
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self) -> Scaffold:
        """Create the missing pieces (see the module table) and finalize the graph."""
        from flowgraph.framework.graph import GraphKeys, get_default_graph
        from flowgraph.ops import variables
        from flowgraph.summary.summary_ops import merge_all

        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP, variables.global_variables_initializer)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, variables.report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(
                    variables.global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default(
                "summary_op", GraphKeys.SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = _get_saver_or_default()
        self._saver.build()
        get_default_graph().finalize()
        logger.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name: str, collection_key: str, default_constructor):
        """The single item of `collection_key`, else ``default_constructor()`` (added
        to the collection unless None); RuntimeError if the collection holds several."""
        from flowgraph.framework.graph import get_default_graph

        graph = get_default_graph()
        elements = graph.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f'More than one item in the collection "{collection_key}". Please '
                    "indicate which one to use by passing it to the tf.Scaffold "
                    f"constructor as:  tf.Scaffold({arg_name}=item to use)")
            return elements[0]
        op = default_constructor()
        if op is not None:
            graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """``group(local_variables_initializer(), <table initializers>)``."""
        from flowgraph.framework.graph import GraphKeys, get_default_graph
        from flowgraph.ops import variables
        from flowgraph.ops.control_flow_ops import group

        tables = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
        return group(variables.local_variables_initializer(), *tables)


def _get_saver_or_default():
    """The single Saver of the ``savers`` collection, else a new one over every global
    variable (allowed to be empty), added to the collection."""
    from flowgraph.framework.graph import GraphKeys, get_default_graph
    from flowgraph.train.saver import Saver

    graph = get_default_graph()
    savers = graph.get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {GraphKeys.SAVERS}. Please indicate "
                "which one to use by passing it to the constructor.")
        return savers[0]
    saver = Saver(sharded=True, allow_empty=True)
    graph.add_to_collection(GraphKeys.SAVERS, saver)
    return saver

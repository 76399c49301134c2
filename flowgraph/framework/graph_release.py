"""Release a graph that will not run again, so that reference counting alone frees it.

A graph is a web of reference cycles: the graph lists its ops and each op names its
graph; an op lists its output tensors and each tensor names its op; a tensor lists the
ops consuming it, which list it among their inputs; control edges are kept both ways;
collections, variable stores and caches in the graph's ``__dict__`` hold Python objects
(variables, layers, savers) that point back into it. Python frees such cycles only in a
garbage collection, and a full (generation 2) collection walks every live object of the
process: a program that builds and discards one graph per call (each `Estimator.train`,
`evaluate` and `predict`) pays for that walk again and again.

`release_graph` cuts the back edges of a graph whose owner knows nobody will build on it
or run it again, keeping every handle that might still be held usable for what it is:

    kept                                    cut
    --------------------------------------  ---------------------------------------
    tensor -> op, op -> graph               graph -> ops, names, collections, caches
    tensor name, dtype, shape, index        op -> outputs, tensor -> consumers
    op name, type, attrs, device, inputs,   op -> control outputs, a loop's Merge ->
    control inputs                          its inputs (the NextIteration back edge),
                                            attributes other modules attached to ops
                                            and tensors (loop and cond contexts)

What is left is a forest of references from consumers to producers and from everything
to the graph, which has no cycle. Ops a planner makes for one plan (its rewrites' stand-ins,
outside the graph's op list) have the same op <-> tensor cycles and name the graph:
`release_with` cuts them when the plan that runs them is freed. The graph stays
finalized and empty: ``t.name``, ``t.op.type`` and ``t.graph`` still work, a lookup by
name does not.

Example
-------
>>> import gc, weakref
>>> import flowgraph as tf
>>> def build():
...     g = tf.Graph()
...     with g.as_default():
...         tf.matmul(tf.ones([2, 3]), tf.ones([3, 4]))
...     release_graph(g)
...     return weakref.ref(g)
>>> gc.disable()
>>> build()() is None  # freed by reference counting, without a collection
True
>>> gc.enable()
"""

from __future__ import annotations

import weakref

__all__ = ["release_graph", "release_ops", "release_with"]

# Graph attributes set in Graph.__init__ that hold no Python objects of the graph.
_SCALAR_FIELDS = ("_lock", "_finalized", "_version", "_edits", "_op_counter", "_seed",
                  "_last_op_seed", "_building_function", "_stacks_thread_local")
# What Operation.__init__ and Tensor.__init__ set; anything else is dropped.
_OP_FIELDS = frozenset(("_graph", "_op_def", "_name", "_inputs", "_attrs", "_control_inputs",
                        "_device", "_outputs", "_colocation", "_source", "_id",
                        "_control_outputs"))
_TENSOR_FIELDS = frozenset(("_op", "_value_index", "_dtype", "_shape", "_consumers"))


def release_graph(graph) -> None:
    """Break the reference cycles of `graph`, which its owner will not run or extend.

    Parameters
    ----------
    graph : Graph
        A graph nobody builds on or runs any more (its sessions are closed). Afterwards
        it is finalized and empty; tensors and ops still held keep their names, types,
        dtypes, shapes and inputs (see the module docstring for what is cut).

    Example
    -------
    >>> import flowgraph as tf
    >>> g = tf.Graph()
    >>> with g.as_default():
    ...     y = tf.add(tf.constant(1.0), 2.0, name="y")
    >>> release_graph(g)
    >>> y.name, y.op.type, y.graph is g, g.get_operations()
    ('y:0', 'AddV2', True, [])
    """
    with graph._lock:
        ops = graph._ops
        state_type, stacks_type = type(graph._thread_state), type(graph._shared_stacks)
        for key in [k for k in graph.__dict__ if k not in _SCALAR_FIELDS]:
            del graph.__dict__[key]
        graph._ops = []
        graph._ops_by_name = {}
        graph._names_in_use = {}
        graph._collections = {}
        graph._thread_state = state_type()
        graph._shared_stacks = stacks_type()
        graph._finalized = True
        for op in ops:
            if op._op_def.control_flow == "merge":
                op._inputs = []
        release_ops(ops)


def release_ops(ops) -> None:
    """Break the op <-> tensor cycles of `ops` that belong to no graph's op list (ops a
    planner made for one plan): they name their graph, and would keep it alive.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     c = tf.constant(1.0, name="c")
    >>> release_ops([c.op])
    >>> c.op.outputs, c.name
    ([], 'c:0')
    """
    for op in ops:
        for t in op._outputs:
            t._consumers = []
            _drop_extras(t, _TENSOR_FIELDS)
        op._outputs = []
        op._control_outputs = []
        _drop_extras(op, _OP_FIELDS)


def release_with(owner, ops) -> None:
    """Release `ops` (see `release_ops`) when `owner`, the plan that runs them, is freed.

    Until then they stay whole; afterwards nothing of them keeps their graph in a cycle.

    Example
    -------
    >>> import flowgraph as tf
    >>> class Plan:
    ...     pass
    >>> with tf.Graph().as_default():
    ...     c = tf.constant(1.0, name="c")
    >>> plan = Plan()
    >>> release_with(plan, [c.op])
    >>> len(c.op.outputs)
    1
    >>> del plan
    >>> c.op.outputs
    []
    """
    if ops:
        # no call at exit: the process frees everything then anyway
        weakref.finalize(owner, release_ops, list(ops)).atexit = False


def _drop_extras(obj, keep: frozenset) -> None:
    # Attributes other modules attach (a loop's or cond's context, Keras history) hold
    # structures that point back into the graph.
    for key in [k for k in obj.__dict__ if k not in keep]:
        del obj.__dict__[key]

"""Helpers of `tf.contrib.graph_editor`: lists of ops and tensors, scopes, placeholders.

Example
-------
>>> import flowgraph as tf
>>> from flowgraph.contrib.graph_editor import util
>>> with tf.Graph().as_default():
...     a = tf.constant(1.0, name="a")
...     b = tf.identity(a, name="b")
>>> [op.name for op in util.get_consuming_ops([a])], util.placeholder_name(b)
(['b'], 'geph__b_0')
"""

from __future__ import annotations

import collections.abc
import re

from flowgraph.framework.graph import Graph, GraphKeys
from flowgraph.framework.operation import Operation, Tensor

__all__ = [
    "ControlOutputs", "check_graphs", "concatenate_unique", "flatten_tree",
    "get_consuming_ops", "get_generating_ops", "get_predefined_collection_names",
    "get_tensors", "get_unique_graph", "is_iterable", "make_list_of_op",
    "make_list_of_t", "make_placeholder_from_dtype_and_shape",
    "make_placeholder_from_tensor", "placeholder_name", "scope_basename",
    "scope_dirname", "scope_finalize", "transform_tree",
]

_PLACEHOLDER_PREFIX = "geph"


def is_iterable(obj) -> bool:
    """Whether `obj` can be iterated (a tensor cannot)."""
    if isinstance(obj, Tensor):
        return False
    try:
        iter(obj)
    except TypeError:
        return False
    return True


def concatenate_unique(la: list, lb) -> list:
    """Append to `la` (in place) the items of `lb` it does not hold yet; returns `la`."""
    seen = set(la)
    for item in lb:
        if item not in seen:
            la.append(item)
            seen.add(item)
    return la


def flatten_tree(tree, leaves=None) -> list:
    """The leaves of a nest of lists, tuples and dicts (dicts in key order)."""
    leaves = [] if leaves is None else leaves
    if isinstance(tree, dict):
        for _, child in sorted(tree.items(), key=lambda kv: str(kv[0])):
            flatten_tree(child, leaves)
    elif is_iterable(tree) and not isinstance(tree, str | bytes):
        for child in tree:
            flatten_tree(child, leaves)
    else:
        leaves.append(tree)
    return leaves


def transform_tree(tree, fn, iterable_type=tuple):
    """`tree` with `fn` applied to every leaf; lists, tuples and dicts keep their type."""
    if isinstance(tree, dict):
        return type(tree)((k, transform_tree(v, fn, iterable_type)) for k, v in tree.items())
    if isinstance(tree, list | tuple):
        items = [transform_tree(child, fn, iterable_type) for child in tree]
        if hasattr(tree, "_fields"):  # a namedtuple
            return type(tree)(*items)
        return type(tree)(items)
    if is_iterable(tree) and not isinstance(tree, str | bytes):
        return iterable_type(transform_tree(child, fn, iterable_type) for child in tree)
    return fn(tree)


def get_unique_graph(tops, check_types=None, none_if_empty: bool = False):
    """The one graph of the ops/tensors `tops` (ValueError if several, TypeError if a
    member is not of `check_types`)."""
    if isinstance(tops, Graph):
        return tops
    if not is_iterable(tops):
        raise TypeError(f"graph_editor: expected an iterable of ops or tensors, got "
                        f"{type(tops).__name__}")
    if check_types is None:
        check_types = (Operation, Tensor)
    elif not is_iterable(check_types):
        check_types = (check_types,)
    check_types = tuple(check_types)
    graph = None
    for top in tops:
        if not isinstance(top, check_types):
            names = ", ".join(t.__name__ for t in check_types)
            raise TypeError(f"graph_editor: expected a type in ({names}), got "
                            f"{type(top).__name__}: {top!r}")
        if graph is None:
            graph = top.graph
        elif graph is not top.graph:
            raise ValueError(f"graph_editor: operation {top!r} does not belong to the "
                             "graph of the others")
    if graph is None and not none_if_empty:
        raise ValueError("graph_editor: cannot find the graph of an empty list")
    return graph


def check_graphs(*args) -> None:
    """ValueError unless every argument that has a graph (op, tensor, view) has the
    same one."""
    graph = None
    for i, sgv in enumerate(args):
        g = getattr(sgv, "graph", None)
        if g is None:
            continue
        if graph is None:
            graph = g
        elif g is not graph:
            raise ValueError(f"graph_editor: argument {i} is from another graph than "
                             "the arguments before it")


def make_list_of_op(ops, check_graph: bool = True, allow_graph: bool = True,
                    ignore_ts: bool = False) -> list:
    """`ops` (an op, a list of ops, a graph or a subgraph view) as a list of ops.

    Tensors are a TypeError unless `ignore_ts`, which drops them.
    """
    if isinstance(ops, Graph):
        if allow_graph:
            return ops.get_operations()
        raise TypeError("allow_graph is False: cannot convert a tf.Graph.")
    if hasattr(ops, "ops") and hasattr(ops, "passthroughs"):  # a SubGraphView
        return list(ops.ops)
    if not is_iterable(ops):
        ops = [ops]
    ops = list(ops)
    if not ops:
        return []
    if check_graph:
        get_unique_graph(ops, check_types=None if ignore_ts else Operation)
    return [op for op in ops if isinstance(op, Operation)]


def get_tensors(graph: Graph) -> list:
    """Every output tensor of every op of `graph`, ops in creation order."""
    if not isinstance(graph, Graph):
        raise TypeError(f"graph_editor.get_tensors: expected a tf.Graph, got "
                        f"{type(graph).__name__}")
    return [t for op in graph.get_operations() for t in op.outputs]


def make_list_of_t(ts, check_graph: bool = True, allow_graph: bool = True,
                   ignore_ops: bool = False) -> list:
    """`ts` (a tensor, a list of tensors or a graph) as a list of tensors.

    Operations are a TypeError unless `ignore_ops`, which drops them.
    """
    if isinstance(ts, Graph):
        if allow_graph:
            return get_tensors(ts)
        raise TypeError("allow_graph is False: cannot convert a tf.Graph.")
    if not is_iterable(ts):
        ts = [ts]
    ts = list(ts)
    if not ts:
        return []
    if check_graph:
        get_unique_graph(ts, check_types=None if ignore_ops else Tensor)
    return [t for t in ts if isinstance(t, Tensor)]


def get_generating_ops(ts) -> list:
    """The ops producing the tensors `ts`, one per tensor."""
    return [t.op for t in make_list_of_t(ts, allow_graph=False)]


def get_consuming_ops(ts) -> list:
    """The ops consuming any of the tensors `ts`, each once, in order of discovery."""
    ops: list = []
    for t in make_list_of_t(ts, allow_graph=False):
        concatenate_unique(ops, t.consumers())
    return ops


class ControlOutputs:
    """The control outputs of every op of a graph: ``get(op)`` gives the ops that have
    `op` as a control input.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default() as g:
    ...     a = tf.no_op(name="a")
    ...     with tf.control_dependencies([a]):
    ...         b = tf.no_op(name="b")
    >>> [op.name for op in ControlOutputs(g).get(a)]
    ['b']
    """

    def __init__(self, graph: Graph) -> None:
        if not isinstance(graph, Graph):
            raise TypeError(f"ControlOutputs: expected a tf.Graph, got "
                            f"{type(graph).__name__}")
        self._graph = graph
        self._version = None
        self._control_outputs: dict = {}
        self._build()

    def _build(self) -> None:
        outputs: dict = {}
        for op in self._graph.get_operations():
            for cop in op.control_inputs:
                outputs.setdefault(cop, [])
                if op not in outputs[cop]:
                    outputs[cop].append(op)
        self._control_outputs = outputs
        self._version = self._graph.version

    def update(self) -> ControlOutputs:
        """Rebuild the mapping if the graph changed since; returns self."""
        if self._version != self._graph.version:
            self._build()
        return self

    def get_all(self) -> dict:
        return self._control_outputs

    def get(self, op) -> tuple:
        """The control outputs of `op` (a tuple, empty if none)."""
        return tuple(self._control_outputs.get(op, ()))

    @property
    def graph(self) -> Graph:
        return self._graph


def scope_finalize(scope: str) -> str:
    """`scope` ending in '/' (an empty scope stays empty)."""
    if scope and not scope.endswith("/"):
        scope += "/"
    return scope


def scope_dirname(scope: str) -> str:
    """The part of `scope` up to and including its last '/'."""
    slash = scope.rfind("/")
    return "" if slash == -1 else scope[:slash + 1]


def scope_basename(scope: str) -> str:
    """The part of `scope` after its last '/'."""
    return scope[scope.rfind("/") + 1:]


def placeholder_name(t=None, scope=None, prefix: str = _PLACEHOLDER_PREFIX) -> str:
    """The name the graph editor gives a placeholder standing for tensor `t`:
    ``<scope>geph__<op base name>_<output index>`` (scope: the op's own by default)."""
    if scope is not None:
        scope = scope_finalize(scope)
    if t is None:
        return f"{scope or ''}{prefix}"
    if not isinstance(t, Tensor):
        raise TypeError(f"placeholder_name: expected a tf.Tensor, got {type(t).__name__}")
    base = scope_basename(t.op.name)
    if scope is None:
        scope = scope_dirname(t.op.name)
    if base.startswith(f"{prefix}__"):
        return scope + base
    return f"{scope}{prefix}__{base}_{t.value_index}"


def make_placeholder_from_tensor(t: Tensor, scope=None, prefix: str = _PLACEHOLDER_PREFIX):
    """A placeholder of `t`'s dtype and static shape in the default graph, named by
    `placeholder_name`."""
    from flowgraph.ops.array_ops import placeholder

    return placeholder(t.dtype.base_dtype, shape=t.shape,
                       name=placeholder_name(t, scope=scope, prefix=prefix))


def make_placeholder_from_dtype_and_shape(dtype, shape=None, scope=None,
                                          prefix: str = _PLACEHOLDER_PREFIX):
    """A placeholder of `dtype` and `shape` in the default graph, named ``<scope>geph``."""
    from flowgraph.ops.array_ops import placeholder

    return placeholder(dtype, shape=shape, name=placeholder_name(scope=scope, prefix=prefix))


_PREDEFINED = None


def get_predefined_collection_names() -> frozenset:
    """The names of TensorFlow's standard collections (`tf.GraphKeys`)."""
    global _PREDEFINED
    if _PREDEFINED is None:
        _PREDEFINED = frozenset(
            v for k, v in vars(GraphKeys).items()
            if not k.startswith("__") and isinstance(v, str))
    return _PREDEFINED


def make_regex(obj):
    """A compiled regex from a string (or the compiled regex itself)."""
    if isinstance(obj, re.Pattern):
        return obj
    if isinstance(obj, str):
        return re.compile(obj)
    raise TypeError(f"graph_editor: expected a string or a compiled regex, got "
                    f"{type(obj).__name__}")


def is_sequence(obj) -> bool:
    return isinstance(obj, collections.abc.Sequence) and not isinstance(obj, str | bytes)

"""Merging the fetches of a hooked `run` with its hooks' requests: one flat list of
unique graph elements for `Session.run`, and a getter per part that picks that part's
result out of the flat values.

A getter is an int (the position of one tensor in the flat values), None (an
operation, or no fetches: the result is None) or a function rebuilding a structure.
`structure_key` identifies a fetch structure by its elements' identities, so the
merge can be cached per structure.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default() as g:
...     a, b = tf.constant(1.0), tf.constant(2.0)
...     flat, index = [], {}
...     get_pair = part_getter(g, (a, b), flat, index)
...     get_b = part_getter(g, b, flat, index)
>>> len(flat), get_pair([10.0, 20.0]), get_b
(2, (10.0, 20.0), 1)
"""

from __future__ import annotations

from operator import itemgetter

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.runtime.fetch import FetchMapper
from flowgraph.train.session_run_hook import SessionRunArgs

__all__ = ["NOTHING", "is_flat_tuple", "merge_run_options", "new_args", "part_getter",
           "raise_if_feeds_intersect", "structure_key"]


def structure_key(obj):
    """A hashable key identifying a fetch structure, or None. Tensors and operations
    count by id (they live as long as their graph, which outlives the cache)."""
    kind = type(obj)
    if kind is Tensor or kind is Operation:
        return id(obj)
    if kind is str:
        return obj
    if kind is dict:
        items = [dict]
        for name, value in obj.items():
            k = structure_key(value)
            if k is None:
                return None
            items.append((name, k))
        return tuple(items)
    if isinstance(obj, list | tuple):
        parts = [kind]
        for x in obj:
            k = structure_key(x)
            if k is None:
                return None
            parts.append(k)
        return tuple(parts)
    if hasattr(obj, "_as_graph_element") and getattr(kind, "__hash__", None):
        return (kind, obj)  # e.g. a Variable: resolves to the same tensor every time
    return None


NOTHING = object()  # matches no fetches


def is_flat_tuple(obj) -> bool:
    return type(obj) is tuple and all(type(x) is Tensor or type(x) is Operation for x in obj)


def part_getter(graph, part, flat: list, index: dict):
    """How to get `part`'s result from the values of `flat` (extended with the graph
    elements `part` needs): an int (one tensor), None (one op) or a callable."""
    if type(part) is Tensor or type(part) is Operation:
        element = part
    elif (type(part) is tuple or type(part) is list) and part and all(
            type(x) is Tensor or type(x) is Operation for x in part):
        # A flat tuple or list (the Estimator's ``(train_op, loss)``): pick the values
        # straight from `flat`, None for an operation.
        FetchMapper.build(graph, part)  # raises the usual errors for foreign elements
        # An operation's value in `flat` is None, as its result here.
        picks = [_position(x, flat, index) for x in part]
        if len(picks) == 1:
            (j,) = picks
            return (lambda values: (values[j],)) if type(part) is tuple else (
                lambda values: [values[j]])
        pick = itemgetter(*picks)
        return pick if type(part) is tuple else (lambda values: list(pick(values)))
    else:
        mapper = FetchMapper.build(graph, part)
        positions = [_position(t, flat, index) for t in mapper.unique_tensors]
        for op in mapper.unique_ops:
            _position(op, flat, index)
        rebuild = mapper.rebuild
        return lambda values: rebuild([values[j] for j in positions])
    if element.graph is not graph:
        FetchMapper.build(graph, element)  # raises the usual "not an element" error
    position = _position(element, flat, index)
    return None if type(element) is Operation else position


def _position(element, flat: list, index: dict) -> int:
    position = index.get(element)
    if position is None:
        position = index[element] = len(flat)
        flat.append(element)
    return position


def new_args(fields: tuple) -> SessionRunArgs:
    return tuple.__new__(SessionRunArgs, fields)


def raise_if_feeds_intersect(feeds1, feeds2, message: str) -> None:
    common = set(feeds1) & set(feeds2)
    if common:
        raise RuntimeError(f"{message} Conflict(s): {list(common)}")


def merge_run_options(options, incoming) -> None:
    """Merge `incoming` into `options` (the larger value of each field wins)."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool,
                                       incoming.inter_op_thread_pool)
    options.output_partition_graphs = (options.output_partition_graphs
                                       or incoming.output_partition_graphs)
    options.report_tensor_allocations_upon_oom = (
        options.report_tensor_allocations_upon_oom
        or incoming.report_tensor_allocations_upon_oom)
    if options.debug_options is None:
        options.debug_options = incoming.debug_options

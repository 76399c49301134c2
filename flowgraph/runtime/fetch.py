"""Fetch structures: flatten any nesting of lists, tuples, dicts and namedtuples of
tensors, operations and names into unique graph elements, and rebuild the results;
and the feed-side helpers TensorFlow's rules need (nested feed keys, Python ints).

Example
-------
>>> import flowgraph as tf
>>> a = tf.constant(1)
>>> m = FetchMapper.build(tf.get_default_graph(), {"x": [a, a.op]})
>>> len(m.unique_tensors), len(m.unique_ops)
(1, 1)
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from flowgraph.framework.nest import flatten, is_nested
from flowgraph.framework.operation import Operation, Tensor


class FetchMapper:
    """A flattened fetch structure and the function that rebuilds it from values."""

    __slots__ = ("_rebuild", "unique_ops", "unique_tensors")

    def __init__(self) -> None:
        self.unique_tensors: list[Tensor] = []
        self.unique_ops: list[Operation] = []
        self._rebuild = None

    @classmethod
    def build(cls, graph, fetches) -> FetchMapper:
        mapper = cls()
        tensor_index: dict[Tensor, int] = {}
        op_set: dict[Operation, None] = {}

        def element(obj):
            el = _resolve(graph, obj)
            if isinstance(el, Operation):
                op_set.setdefault(el)
                return lambda values: None
            idx = tensor_index.get(el)
            if idx is None:
                idx = tensor_index[el] = len(mapper.unique_tensors)
                mapper.unique_tensors.append(el)
            return lambda values, i=idx: values[i]

        def walk(obj):
            if obj is None:
                raise TypeError(
                    "Fetch argument None has invalid type <class 'NoneType'>: a fetch must "
                    "be a Tensor, an Operation, a name string, or a (nested) list, tuple, "
                    "dict or namedtuple of them"
                )
            if hasattr(obj, "_fetch_components"):  # a composite such as a SparseTensor
                components, build = obj._fetch_components()
                parts = [walk(c) for c in components]
                return lambda values: build([p(values) for p in parts])
            if isinstance(obj, Tensor | Operation | str) or hasattr(obj, "_as_graph_element"):
                return element(obj)
            if _is_namedtuple(obj):
                parts = [walk(v) for v in obj]
                return lambda values: type(obj)(*[p(values) for p in parts])
            fields = getattr(type(obj), "__attrs_attrs__", None)
            if fields is not None:  # an attrs class: rebuilt from its fields, in order
                parts = [walk(getattr(obj, f.name)) for f in fields]
                return lambda values: type(obj)(*[p(values) for p in parts])
            if isinstance(obj, list | tuple):
                parts = [walk(v) for v in obj]
                kind = type(obj)
                if kind is list:
                    return lambda values: [p(values) for p in parts]
                if kind is tuple:
                    return lambda values: tuple(p(values) for p in parts)
                return lambda values: kind(p(values) for p in parts)
            if isinstance(obj, Mapping):
                parts = [(k, walk(v)) for k, v in obj.items()]
                kind = type(obj)
                if kind is dict:
                    return lambda values: {k: p(values) for k, p in parts}
                if isinstance(obj, collections.defaultdict):  # keeps its default factory
                    factory = obj.default_factory
                    return lambda values: kind(factory, ((k, p(values)) for k, p in parts))
                return lambda values: kind((k, p(values)) for k, p in parts)
            return element(obj)

        mapper._rebuild = walk(fetches)
        walk = None  # empty its cell: the recursive closure would be a cycle holding the graph
        mapper.unique_ops = list(op_set)
        return mapper

    def rebuild(self, values: list) -> Any:
        return self._rebuild(values)


def _is_namedtuple(obj) -> bool:
    return isinstance(obj, tuple) and hasattr(type(obj), "_fields")


def _resolve(graph, obj):
    try:
        return graph.as_graph_element(obj)
    except (TypeError, ValueError, KeyError) as e:
        # As in TensorFlow: a wrong kind of object is a TypeError; a name or element that
        # does not exist in this graph is a ValueError.
        cls = TypeError if isinstance(e, TypeError) else ValueError
        detail = e.args[0] if e.args else e
        raise cls(
            f"Fetch argument {obj!r} cannot be interpreted as a Tensor or Operation. "
            f"({detail})"
        ) from None


def _keyable(kind) -> bool:
    # A Variable (`_fetch_by_identity`) always stands for the same graph element, so a
    # structure holding it is keyed and cached like one holding that element.
    return (kind is Tensor or kind is Operation or kind is str
            or getattr(kind, "_fetch_by_identity", False))


def fetch_key(fetches):
    """A hashable key for common fetch structures, or None (then no caching)."""
    kind = type(fetches)
    if kind is Tensor or kind is Operation or kind is str:
        return fetches
    if kind is list or kind is tuple:
        for f in fetches:
            k = type(f)  # (inline for Tensor and Operation: this runs on every run)
            if k is not Tensor and k is not Operation and not _keyable(k):
                return None
        return (kind, *fetches)
    if kind is dict:
        try:
            items = tuple(fetches.items())
            for _, v in items:
                k = type(v)
                if k is not Tensor and k is not Operation and not _keyable(k):
                    return None
            return (dict, items)
        except TypeError:
            return None
    if _keyable(kind):
        return fetches
    return None


# -- feeds -------------------------------------------------------------------------------
def int_fits(value: int, np_dtype) -> bool:
    """Whether a Python int keeps its value in `np_dtype` (TensorFlow refuses the feed
    otherwise: 2**24 + 1 into float32 as 300 into uint8)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return bool(np_dtype(value) == value)
    except OverflowError:
        return False
    except (TypeError, ValueError):  # structured (quantized) types: asarray decides
        return True


def wrapped_ints(value, np_dtype, t: Tensor) -> np.ndarray:
    """A list of Python ints out of `np_dtype`'s range, wrapped around as TensorFlow's
    feed conversion (NumPy 1.x) does, with NumPy's overflow warning."""
    try:
        wide = np.asarray(value)
        if wide.dtype.kind not in "iub":
            raise OverflowError
        warnings.warn(f"overflow encountered in cast: feeding {t.name} "
                      f"({np.dtype(np_dtype).name})", RuntimeWarning, stacklevel=6)
        return wide.astype(np_dtype)
    except (OverflowError, TypeError, ValueError):
        raise TypeError(
            f"Type of feed value {value!r} is not compatible with Tensor '{t.name}' of "
            f"dtype {np.dtype(np_dtype).name}: it does not fit.") from None


def flatten_feed_dict(feed_dict) -> dict:
    """`feed_dict` with nested keys (tuples, lists, namedtuples of tensors or names)
    paired leaf by leaf with their flattened values, as TensorFlow's ``Session.run``
    does (so ``{(x, y): (vx, vy)}`` feeds ``x`` and ``y``; a list value is itself
    flattened, leaf by leaf).

    >>> flatten_feed_dict({("a:0", "b:0"): (1, 2)})
    {'a:0': 1, 'b:0': 2}
    """
    flat: dict = {}

    def put(k, v):
        if k in flat:
            raise ValueError(f"Cannot flatten dict because this key is not unique: {k}")
        flat[k] = v

    for key, value in feed_dict.items():
        if hasattr(key, "_feed_components"):  # a composite such as a RaggedTensor
            for k, v in key._feed_components(value):
                put(k, v)
            continue
        if type(key) is Tensor or not is_nested(key):
            put(key, value)
            continue
        keys, values = flatten(key), flatten(value)
        if len(keys) != len(values):
            raise ValueError(
                f"Could not flatten dictionary. Key had {len(keys)} elements, but value had "
                f"{len(values)} elements. Key: {keys}, value: {values}. A nested feed key "
                "needs a value of the same structure.")
        for k, v in zip(keys, values):
            put(k, v)
    return flat

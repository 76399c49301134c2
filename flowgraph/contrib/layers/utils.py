"""``tf.contrib.layers.utils`` (``slim.utils``): output collections with aliases, the
end-points dict slim networks return, and small argument helpers.

A layer called with ``outputs_collections=`` files its output in those collections and
records the layer's scope as the output's alias (``tensor.aliases``);
`convert_collection_to_dict` turns such a collection into ``{alias: tensor}``.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = collect_named_outputs("end_points", "net/conv1/", tf.zeros([1]))
...     print(convert_collection_to_dict("end_points"))  # doctest: +ELLIPSIS
OrderedDict([('net/conv1', <tf.Tensor 'zeros:0' shape=(1,) dtype=float32>)])
"""

from __future__ import annotations

from collections import OrderedDict

from flowgraph.framework.graph import add_to_collections, get_collection
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.control_flow_cond import smart_cond

__all__ = [
    "append_tensor_alias",
    "collect_named_outputs",
    "convert_collection_to_dict",
    "gather_tensors_aliases",
    "get_tensor_alias",
    "get_tensor_aliases",
    "get_variable_collections",
    "last_dimension",
    "n_positive_integers",
    "smart_cond",
    "two_element_tuple",
]


def append_tensor_alias(tensor, alias: str):
    """Add `alias` (less a trailing ``/``) to ``tensor.aliases``; returns `tensor`."""
    if alias.endswith("/"):
        alias = alias[:-1]
    if hasattr(tensor, "aliases"):
        tensor.aliases.append(alias)
    else:
        tensor.aliases = [alias]
    return tensor


def collect_named_outputs(collections, alias: str, outputs):
    """File `outputs` under `collections` (a name or a list; nothing when empty) with the
    alias `alias`; returns `outputs`."""
    if collections:
        append_tensor_alias(outputs, alias)
        add_to_collections([collections] if isinstance(collections, str)
                           else list(collections), outputs)
    return outputs


def get_tensor_aliases(tensor) -> list:
    """The aliases of `tensor` (its op's name when it has none)."""
    if hasattr(tensor, "aliases"):
        return list(tensor.aliases)
    name = tensor.name
    return [name[:-2] if name.endswith(":0") else name]


def get_tensor_alias(tensor) -> str:
    """The last alias of `tensor`."""
    return get_tensor_aliases(tensor)[-1]


def gather_tensors_aliases(tensors) -> list:
    """The aliases of each tensor, flattened."""
    return [alias for t in tensors for alias in get_tensor_aliases(t)]


def convert_collection_to_dict(collection, clear_collection: bool = False) -> OrderedDict:
    """``{alias: tensor}`` for every alias of every tensor in `collection` (slim's
    ``end_points``), in collection order."""
    from flowgraph.framework.graph import get_collection_ref

    out = OrderedDict()
    for tensor in get_collection(collection):
        for alias in get_tensor_aliases(tensor):
            out[alias] = tensor
    if clear_collection:
        del get_collection_ref(collection)[:]
    return out


def get_variable_collections(variables_collections, name) -> list | None:
    """The collections for variable kind `name`: ``variables_collections[name]`` for a
    dict, else `variables_collections` itself."""
    if isinstance(variables_collections, dict):
        return variables_collections.get(name, None)
    return variables_collections


def last_dimension(shape, min_rank: int = 1) -> int:
    """The last dimension of `shape`, checked to be known, with a rank of at least
    `min_rank`."""
    dims = TensorShape(shape).dims
    if dims is None:
        raise ValueError("dims of shape must be known but is None")
    if len(dims) < min_rank:
        raise ValueError(f"rank of shape must be at least {min_rank} not: {len(dims)}")
    value = dims[-1].value
    if value is None:
        raise ValueError("last dimension shape must be known but is None")
    return value


def two_element_tuple(int_or_tuple) -> tuple:
    """``(n, n)`` for an int, the pair itself for a pair (a `TensorShape` of two known
    dimensions too)."""
    if isinstance(int_or_tuple, list | tuple):
        if len(int_or_tuple) != 2:
            raise ValueError(f"Must be a list with 2 elements: {int_or_tuple}")
        return int(int_or_tuple[0]), int(int_or_tuple[1])
    if isinstance(int_or_tuple, int):
        return int(int_or_tuple), int(int_or_tuple)
    if isinstance(int_or_tuple, TensorShape):
        if len(int_or_tuple) == 2:
            return int_or_tuple[0].value, int_or_tuple[1].value
    raise ValueError("Must be an int, a list with 2 elements or a TensorShape of length 2")


def n_positive_integers(n: int, value) -> tuple:
    """`value` (an int or `n` ints, each >= 0) as a tuple of `n` ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value >= 0:
            return (value,) * n
    elif isinstance(value, list | tuple) and len(value) == n \
            and all(isinstance(v, int) and v >= 0 for v in value):
        return tuple(value)
    raise ValueError(f"Expected an integer or a list/tuple of {n} non-negative integers, "
                     f"but received {value!r}")

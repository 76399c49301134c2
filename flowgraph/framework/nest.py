"""``tf.nest``: nested structures (lists, tuples, namedtuples, dicts) of leaves, as
TensorFlow treats them: dicts are visited in sorted key order; strings, arrays, tensors
and None are leaves.

Example
-------
>>> import flowgraph as tf
>>> tf.nest.flatten({"b": [1, 2], "a": (3,)})
[3, 1, 2]
>>> tf.nest.map_structure(lambda x: x * 10, {"a": 1, "b": (2, 3)})
{'a': 10, 'b': (20, 30)}
"""

from __future__ import annotations

import collections.abc

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure",
           "pack_sequence_as"]


def is_nested(structure) -> bool:
    """Whether `structure` is a list, tuple (or namedtuple) or mapping, not a leaf."""
    return isinstance(structure, list | tuple | collections.abc.Mapping)


def _children(structure):
    if isinstance(structure, collections.abc.Mapping):
        return [structure[k] for k in sorted(structure)]
    return list(structure)


def flatten(structure, expand_composites=False) -> list:
    """The leaves of `structure`, depth first (a leaf alone gives ``[leaf]``)."""
    del expand_composites
    if not is_nested(structure):
        return [structure]
    out = []
    for child in _children(structure):
        out.extend(flatten(child))
    return out


def _rebuild(structure, children):
    if isinstance(structure, collections.abc.Mapping):
        keys = sorted(structure)
        values = dict(zip(keys, children))
        return type(structure)((k, values[k]) for k in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*children)
    return type(structure)(children)


def _pack(structure, leaves, pos):
    if not is_nested(structure):
        return leaves[pos], pos + 1
    children = []
    for child in _children(structure):
        value, pos = _pack(child, leaves, pos)
        children.append(value)
    return _rebuild(structure, children), pos


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`flat_sequence` arranged like `structure` (the inverse of `flatten`).

    Example
    -------
    >>> import flowgraph as tf
    >>> tf.nest.pack_sequence_as({"a": 0, "b": [0, 0]}, [1, 2, 3])
    {'a': 1, 'b': [2, 3]}
    """
    del expand_composites
    leaves = list(flat_sequence)
    want = len(flatten(structure))
    if len(leaves) != want:
        raise ValueError(f"Could not pack sequence. Structure had {want} elements, but "
                         f"flat_sequence had {len(leaves)} elements.")
    value, _ = _pack(structure, leaves, 0)
    return value


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raise ValueError (TypeError for differing sequence types with `check_types`) unless
    the two structures nest the same way."""
    del expand_composites
    if is_nested(nest1) != is_nested(nest2):
        raise ValueError(f"The two structures don't have the same nested structure: "
                         f"{nest1!r} and {nest2!r}")
    if not is_nested(nest1):
        return
    if check_types and type(nest1) is not type(nest2):
        raise TypeError(f"The two structures don't have the same sequence type: "
                        f"{type(nest1).__name__} and {type(nest2).__name__}")
    if isinstance(nest1, collections.abc.Mapping) and sorted(nest1) != sorted(nest2):
        raise ValueError(f"The two dictionaries don't have the same set of keys: "
                         f"{sorted(nest1)} and {sorted(nest2)}")
    a, b = _children(nest1), _children(nest2)
    if len(a) != len(b):
        raise ValueError(f"The two structures don't have the same number of elements: "
                         f"{len(a)} and {len(b)}")
    for x, y in zip(a, b):
        assert_same_structure(x, y, check_types)


def map_structure(func, *structure, check_types=True, expand_composites=False):
    """`func` applied to the corresponding leaves of the structures, in the first's
    structure."""
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types)
    flat = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flat)])

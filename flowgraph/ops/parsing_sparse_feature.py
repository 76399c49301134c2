"""`tf.io.SparseFeature`: a sparse tensor stored in an Example as an index feature (or
one per dimension) and a value feature, rebuilt by `parse_example`.

`parse_example` reads the index and value keys as `VarLenFeature`s under the hood and
`sparse_from_parts` joins them: entry ``j`` of example ``b`` is at ``[b, index[j]]`` with
``value[j]`` in a tensor of dense shape ``[batch, size]`` (no batch dimension for
`parse_single_example`), entries sorted by index unless `already_sorted`.

Example
-------
>>> import flowgraph as tf
>>> ex = tf.train.Example(features=tf.train.Features(feature={
...     "i": tf.train.Feature(int64_list=tf.train.Int64List(value=[3, 0])),
...     "v": tf.train.Feature(float_list=tf.train.FloatList(value=[9.0, 8.0]))}))
>>> sp = tf.io.parse_single_example(ex.SerializeToString(),
...                                 {"s": tf.io.SparseFeature("i", "v", tf.float32, 5)})["s"]
>>> r = tf.Session().run(sp)
>>> r.indices.tolist(), r.values.tolist(), r.dense_shape.tolist()
([[0], [3]], [8.0, 9.0], [5])
"""

from __future__ import annotations

from collections import namedtuple

from flowgraph.framework.sparse_tensor import SparseTensor
from flowgraph.ops.sparse_extra_ops import sparse_merge

__all__ = ["SparseFeature", "sparse_from_parts"]


class SparseFeature(namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A sparse feature kept as index feature(s) `index_key` (a name, or a list of names
    for several dimensions) and a value feature `value_key`; `size` is the dense size
    (an int, or a list matching `index_key`)."""

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)

    @property
    def index_keys(self) -> list:
        return [self.index_key] if isinstance(self.index_key, str) else list(self.index_key)

    @property
    def sizes(self) -> list:
        size = self.size
        return [int(size)] if not isinstance(size, list | tuple) else [int(s) for s in size]


def check_sparse_feature(key: str, feature: SparseFeature) -> None:
    """ValueError for a SparseFeature whose keys and sizes do not match."""
    if len(feature.index_keys) != len(feature.sizes):
        raise ValueError(f"Feature '{key}': SparseFeature has {len(feature.index_keys)} "
                         f"index keys but {len(feature.sizes)} sizes; give one size per "
                         "index key")
    if not feature.index_keys or not feature.value_key:
        raise ValueError(f"Feature '{key}': SparseFeature needs index_key and value_key")


def sparse_from_parts(feature: SparseFeature, indices: list, values: SparseTensor):
    """The SparseTensor of `feature` from its parsed index and value `VarLenFeature`s."""
    ids = indices[0] if isinstance(feature.index_key, str) else list(indices)
    sizes = feature.sizes[0] if isinstance(feature.index_key, str) else list(feature.sizes)
    return sparse_merge(ids, values, sizes, already_sorted=feature.already_sorted)

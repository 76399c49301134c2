"""`tf.random_index_shuffle`: where an index lands in a seeded random permutation.

``RandomIndexShuffle(index, seed, max_index)`` maps each index in ``[0, max_index]`` to
its position in a permutation of that range chosen by the 3-word `seed`, without
materializing the permutation: the kernel
(`flowgraph/backends/cpu/kernels_random_index_shuffle.py`) encrypts the index with a
small Feistel block cipher and re-encrypts until the result falls in range, so for a
fixed seed and `max_index` the map is a bijection. The values equal TensorFlow's.

Example
-------
>>> import flowgraph as tf
>>> perm = tf.random_index_shuffle(tf.range(5), [1, 2, 3], 4)
>>> sorted(tf.Session().run(perm).tolist())
[0, 1, 2, 3, 4]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.op_util import make_tensor

__all__ = ["random_index_shuffle"]

_INDEX_TYPES = (_dtypes.int32, _dtypes.int64, _dtypes.uint32, _dtypes.uint64)


@register_op("RandomIndexShuffle", attrs={"rounds": 4, "dtype": None, "Tseed": None})
def _shape(op, index, seed, max_index):
    if seed.ndims is not None and (seed.ndims not in (1, 2) or seed[-1].value not in (3, None)):
        raise op.shape_error(f"Seed must have shape [3] or [n, 3] but got {seed}")
    if index.ndims == 0 and seed.ndims == 1 and max_index.ndims == 0:
        return [TensorShape([])]
    n = None
    for s, per_row in ((index, 1), (max_index, 1), (seed, 3)):
        if s.ndims == 1 and per_row == 1 and s[0].value is not None:
            n = s[0].value
        if s.ndims == 2 and s[0].value is not None:
            n = s[0].value
    return [TensorShape([n])]


not_differentiable("RandomIndexShuffle")


def random_index_shuffle(index, seed, max_index, rounds: int = 4, name=None):
    """The position of `index` in the permutation of ``[0, max_index]`` that `seed` (3
    integers, or one row of 3 per index) picks. Scalars give a scalar, vectors a vector.

    `rounds` (even, at least 4; checked when the op runs) is the cipher's round count:
    more mixes small ranges better. The op is stateless and has no gradient.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.random_index_shuffle(tf.constant(3, tf.int64), [1, 2, 3], 9)
    >>> x.dtype.name, x.shape.as_list()
    ('int64', [])
    """
    index = convert_to_tensor(index, name="index")
    if index.dtype.base_dtype not in _INDEX_TYPES:
        raise TypeError(f"tf.random_index_shuffle: index must be int32, int64, uint32 or "
                        f"uint64, got {index.dtype.base_dtype.name}")
    dtype = index.dtype.base_dtype
    seed = convert_to_tensor(seed, name="seed")
    max_index = convert_to_tensor(max_index, dtype=dtype, name="max_index")
    return make_tensor("RandomIndexShuffle", [index, seed, max_index],
                       {"rounds": int(rounds), "dtype": dtype, "Tseed": seed.dtype.base_dtype},
                       name=name or "RandomIndexShuffle")

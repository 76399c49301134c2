"""`tf.meshgrid`: coordinate grids from 1-D tensors, built as TensorFlow builds them
(each input reshaped onto its own axis, then multiplied by ``ones`` of the grid).

Example
-------
>>> import flowgraph as tf
>>> X, Y = tf.Session().run(tf.meshgrid([1, 2, 3], [4, 5]))
>>> X.tolist(), Y.tolist()
([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
"""

from __future__ import annotations

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.ops.array_shape_ops import ones as _ones
from flowgraph.ops.array_shape_ops import reshape
from flowgraph.ops.array_shape_ops import size as _size_of

__all__ = ["meshgrid"]


def meshgrid(*args, **kwargs):
    """Coordinate grids from 1-D `args` (``indexing="xy"`` swaps the first two axes).

    Example
    -------
    >>> import flowgraph as tf
    >>> X, Y = tf.Session().run(tf.meshgrid([1, 2, 3], [4, 5]))
    >>> X.tolist(), Y.tolist()
    ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        key = next(iter(kwargs))
        raise TypeError(f"'{key}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError("tf.meshgrid: indexing parameter must be either 'xy' or 'ij', "
                         f"got {indexing!r}")
    with name_scope(name, "meshgrid", list(args)):
        ndim = len(args)
        if not ndim:
            return []
        # As TensorFlow builds it: each input reshaped to its axis, then multiplied by
        # ones of the full grid shape (``meshgrid/ones``, ``meshgrid/mul``).
        args = [convert_to_tensor(a) for a in args]
        out = [reshape(a, [1] * i + [-1] + [1] * (ndim - i - 1)) for i, a in enumerate(args)]
        sizes = [_size_of(a) for a in args]
        if indexing == "xy" and ndim > 1:
            out[0] = reshape(out[0], [1, -1] + [1] * (ndim - 2))
            out[1] = reshape(out[1], [-1, 1] + [1] * (ndim - 2))
            sizes[0], sizes[1] = sizes[1], sizes[0]
        grid = _ones(sizes, args[0].dtype.base_dtype)
        return [x * grid for x in out]

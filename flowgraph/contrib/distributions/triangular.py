"""`tf.contrib.distributions.fill_triangular`: a vector of ``n (n + 1) / 2`` numbers
as an ``n x n`` triangular matrix, in TensorFlow's order (the vector's tail fills the
first rows, its head, reversed, the last)."""

from __future__ import annotations

import math

from flowgraph.distributions import _ops as o
from flowgraph.ops.array_join_ops import reverse_v2
from flowgraph.ops.linalg_diag_ops import matrix_band_part

__all__ = ["fill_triangular"]


def fill_triangular(x, upper=False, name=None):
    """The lower (or `upper`) triangular matrix of the last axis of `x`.

    Example
    -------
    >>> import flowgraph as tf
    >>> tri = tf.contrib.distributions.fill_triangular([1, 2, 3, 4, 5, 6])
    >>> tf.Session().run(tri).tolist()
    [[4, 0, 0], [6, 5, 0], [3, 2, 1]]
    """
    with o.name_scope(name, "fill_triangular", values=[x]):
        x = o.convert_to_tensor(x, name="x")
        n = x.shape[-1].value
        if n is None:
            raise NotImplementedError("fill_triangular: the last dimension must be known "
                                      "when the graph is built")
        m = int(math.sqrt(0.25 + 2.0 * n) - 0.5)
        if m * (m + 1) // 2 != n:
            raise ValueError(f"Input right-most shape ({n}) does not correspond to a "
                             "triangular matrix.")
        if upper:
            parts = [x, reverse_v2(x[..., m:], [-1])]
        else:
            parts = [x[..., m:], reverse_v2(x, [-1])]
        square = o.reshape(o.concat(parts, -1),
                           o.concat([o.shape(x)[:-1], [m, m]], 0))
        square.set_shape(x.shape[:-1].concatenate([m, m]))
        return matrix_band_part(square, 0 if upper else -1, -1 if upper else 0)

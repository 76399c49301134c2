"""Checks that kernels of every backend share, so that their errors read the same.

>>> reduction_axes((2, 3), [-1, 0])
(0, 1)
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.errors import InvalidArgumentError


def reduction_axes(shape: tuple[int, ...], axes) -> tuple[int, ...]:
    """`axes` (any nesting of ints, negatives allowed) as sorted distinct non-negative
    dimensions of an input of `shape`; an out-of-range axis is InvalidArgumentError."""
    rank = len(shape)
    out = set()
    for a in np.reshape(axes, -1).tolist():
        if not -rank <= a < rank:
            raise InvalidArgumentError(
                None, None, f"Invalid reduction dimension {a} for input with {rank} "
                f"dimensions (shape {list(shape)})")
        out.add(a % rank)
    return tuple(sorted(out))

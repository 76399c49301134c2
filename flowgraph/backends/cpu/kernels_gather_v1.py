"""CPU kernel of ``Gather`` (`flowgraph/ops/gather_v1_ops.py`), NumPy (large gathers on
the kernel threads, through `kernels_array_index.take`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_array_index import take
from flowgraph.framework.errors import InvalidArgumentError


@cpu_kernel("Gather")
def gather(params, indices, *, validate_indices):
    indices = np.asarray(indices)
    n = params.shape[0]
    bad = (indices < 0) | (indices >= n)
    if np.any(bad):
        pos = tuple(int(v) for v in np.argwhere(bad)[0])
        raise InvalidArgumentError(None, None, f"Gather: indices{list(pos)} = "
                                   f"{int(indices[pos])} is not in [0, {n})")
    return take(params, indices, 0)

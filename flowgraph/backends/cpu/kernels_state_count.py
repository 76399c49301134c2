"""CPU kernel of ``CountUpTo`` (`flowgraph/ops/state_count_ops.py`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework.errors import OutOfRangeError


@cpu_kernel("CountUpTo", fresh=True)
def count_up_to(ref, *, limit, op):
    with ref.lock:
        current = np.asarray(ref.read(op.name))
        if current >= limit:
            raise OutOfRangeError(None, None, f"Reached limit of {limit}")
        ref.value = np.asarray(current + 1, dtype=current.dtype)
    return np.array(current, dtype=current.dtype)

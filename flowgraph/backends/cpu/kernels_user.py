"""CPU kernel of ``Fact``, TensorFlow's example user op (`flowgraph/ops/user_ops.py`)."""

from __future__ import annotations

import numpy as np

from flowgraph.backends.cpu import cpu_kernel


@cpu_kernel("Fact")
def fact():
    return np.array(b"0! == 1", dtype=object)

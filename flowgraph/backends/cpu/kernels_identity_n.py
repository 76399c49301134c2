"""CPU kernel of ``IdentityN`` (`flowgraph/ops/gradient_compat.py`): its inputs, as they
are (the values are immutable, so no copy is needed)."""

from __future__ import annotations

from flowgraph.backends.cpu import cpu_kernel


@cpu_kernel("IdentityN")
def identity_n(*inputs):
    return list(inputs)

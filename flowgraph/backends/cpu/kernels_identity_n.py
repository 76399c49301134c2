"""CPU kernel of ``IdentityN`` (`flowgraph/ops/gradient_compat.py`): its inputs, as they
are (the values are immutable, so no copy is needed)."""

from __future__ import annotations

from flowgraph.backends.cpu import cpu_kernel


@cpu_kernel("IdentityN")
def identity_n(*inputs):
    # a kernel with one output returns that value, not a list of one
    return inputs[0] if len(inputs) == 1 else list(inputs)

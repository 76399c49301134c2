"""CPU kernels for grouping and control-flow ops."""

from __future__ import annotations

from flowgraph.backends.cpu import cpu_kernel


@cpu_kernel("NoOp")
def no_op():
    return None


@cpu_kernel("ControlTrigger")
def control_trigger(*_dead):
    # run even when a control predecessor is dead (called then with no inputs)
    return None

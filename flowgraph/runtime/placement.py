"""Pass 3, place: choose a device for every op of a plan.

State and invariants
--------------------
Ops are grouped by union-find: ops sharing a colocation group (``colocate_with``) and
ops that consume a ref (a variable) as a ref input end up in one group, and every op of
a group gets the same device. A group's candidate devices are those whose backend has a
kernel for every op in it (for the op's dtype) and that match every op's requested
device; an empty candidate set is an error listing the devices that do have kernels,
unless soft placement is on, in which case requests are dropped before kernels are::

    v = Variable  ─┐ (ref)          group {v, Assign}:  request '/device:CPU:1' from v
    Assign(v, x) ──┘                 -> both on CPU:1; x may be elsewhere (Send/Recv)

Among candidates the first device that matches the request wins; with no request, the
first CPU device (small ops stay on the host). With ``log_device_placement`` each op's
device is printed and logged.
"""

from __future__ import annotations

import logging

from flowgraph.backends.base import Device
from flowgraph.framework import errors
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.operation import Operation

logger = logging.getLogger("flowgraph")


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict = {}

    def find(self, x):
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def kernel_dtype(op: Operation):
    """The dtype that selects `op`'s kernel: its ``T`` attribute, else its first input's
    or first output's dtype."""
    if "T" in op.attrs and op.attrs["T"] is not None:
        return op.attrs["T"]
    if op._inputs:
        return op._inputs[0].dtype.base_dtype
    if op._outputs:
        return op._outputs[0].dtype.base_dtype
    return None


def _matches(spec: DeviceSpec, device: Device) -> bool:
    # Job/task are resolved by the distributed runtime; locally only the device counts.
    if spec.device_type is not None and spec.device_type != device.device_type:
        return False
    return spec.device_index is None or spec.device_index == device.index


def place(ops: list[Operation], devices: list[Device], allow_soft_placement: bool,
          log: bool = False) -> dict[Operation, Device]:
    """Return op -> device for `ops` (see the module docstring for the rules).

    >>> import flowgraph as tf
    >>> from flowgraph.backends import list_devices
    >>> with tf.Graph().as_default():
    ...     a = tf.constant(1.0, name="a")
    ...     place([a.op], list_devices(), False)[a.op].short_name
    '/device:CPU:0'
    """
    uf = _UnionFind()
    for op in ops:
        uf.find(op)
        # An op is always a member of its own colocation group (`loc:@name`), so ops
        # created under `colocate_with(a)` join `a` itself.
        for name in op._colocation or (op.name,):
            uf.union(("loc", name), op)
        for idx, t in enumerate(op._inputs):
            if t.dtype.is_ref_dtype and op.op_def.is_ref_input(idx):
                uf.union(t.op, op)
    groups: dict = {}
    for op in ops:
        groups.setdefault(uf.find(op), []).append(op)
    placement: dict[Operation, Device] = {}
    for members in groups.values():
        device = _place_group(members, devices, allow_soft_placement)
        for op in members:
            placement[op] = device
    if log:
        for op in ops:
            logger.info("%s: (%s): %s", op.name, op.type, placement[op].name)
            print(f"{op.name}: ({op.type}): {placement[op].name}")
    return placement


def _place_group(members: list[Operation], devices: list[Device], soft: bool) -> Device:
    requests = [(op, DeviceSpec.from_string(op.device)) for op in members if op.device]
    capable = []
    for d in devices:
        if all(d.backend.find_kernel(op.type, kernel_dtype(op)) is not None for op in members):
            capable.append(d)
    wanted = [d for d in capable if all(_matches(spec, d) for _, spec in requests)]
    if wanted:
        if requests:
            return wanted[0]
        cpu = [d for d in wanted if d.device_type == "CPU"]
        return (cpu or wanted)[0]
    if capable and soft:
        # Keep what can be kept of the request (its device type), else use the host.
        same_type = [d for d in capable
                     if all(s.device_type in (None, d.device_type) for _, s in requests)]
        cpu = [d for d in capable if d.device_type == "CPU"]
        return (same_type or cpu or capable)[0]
    missing = [op for op in members
               if not any(d.backend.find_kernel(op.type, kernel_dtype(op)) for d in devices)]
    if missing:
        op = missing[0]
        having = sorted({
            d.device_type for d in devices
            if d.backend.find_kernel(op.type, None) is not None
        })
        dtype = kernel_dtype(op)
        raise errors.InvalidArgumentError(
            None, op,
            f"No kernel for op '{op.name}' ({op.type}) with dtype "
            f"{getattr(dtype, 'name', dtype)} on any available device "
            f"({', '.join(d.short_name for d in devices)}). Device types with a kernel for "
            f"{op.type} (any dtype): {having or 'none'}. "
            + _where(op),
        )
    op, _spec = requests[0]
    raise errors.InvalidArgumentError(
        None, op,
        f"Cannot assign a device for operation '{op.name}' ({op.type}): it was explicitly "
        f"assigned to '{op.device}' but no matching device can run it (and every op "
        f"colocated with it: {', '.join(m.name for m in members)}). Devices that can: "
        f"{', '.join(d.short_name for d in capable) or 'none'}. Pass "
        "ConfigProto(allow_soft_placement=True) or device_count to create the device. "
        + _where(op),
    )


def _where(op: Operation) -> str:
    line = op.source_line()
    return f"The op was created at {line}" if line else ""

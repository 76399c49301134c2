"""Pass 5, partition: cut the plan at device boundaries with `_Send`/`_Recv` pairs.

Where a node reads a value produced on another device, the pass adds a `_Send` node on
the producer's device and a `_Recv` node on the consumer's, which meet in the step's
`Rendezvous` under a key naming the tensor and both devices; the consumer then reads the
`_Recv`'s slot. One pair serves every consumer of that tensor on that device. Ref inputs
(variables) are never cut: placement keeps a variable and the ops updating it together.
A ref that an op on another device reads as a *value* (``SaveV2`` on the CPU saving a
variable that lives on a GPU) gets a pair whose `_Send` dereferences the variable; a
consumer with control inputs gets a pair of its own, and its `_Send` waits for them, so
that ``with tf.control_dependencies([update]): read`` reads the updated value::

    CPU:0  a ──> _Send ─ ─ ─ ┐
    GPU:0                    └─> _Recv ──> b       (a on CPU:0, b on GPU:0)

Feeds and plan constants are host arrays: a node on a device with memory of its own
(`Backend.host_memory` false) reads them through a `_ToDevice` node on that device. So
does a ``Const`` node on the host that must wait for control inputs (a folded shape
anchored to its source, such as the loss gradient's ``ExpandDims`` in a training step):
its `_ToDevice` runs after it and uploads the value on the first step only, where a
`_Send`/`_Recv` pair would copy it every step.

It also describes each device's partition as GraphDef-like dicts, for
``RunOptions.output_partition_graphs``.
"""

from __future__ import annotations

import numpy as np

from flowgraph.backends.base import Device
from flowgraph.framework.dead import DEAD
from flowgraph.framework.resources import VariableState
from flowgraph.runtime import _executor
from flowgraph.runtime.bind import SMALL_ON_HOST, readonly, upload_once
from flowgraph.runtime.node_table import NodeInfo, NodeTable
from flowgraph.runtime.placement import kernel_dtype


def partition(table: NodeTable) -> list[dict]:
    """Add `_Send`/`_Recv` pairs to `table` for every cross-device input; return the
    partition graphs (one ``{"device": name, "node": [...]}`` per device)."""
    producer = table.producers()
    pairs: dict[tuple[int, str], int] = {}  # (slot, consumer device) -> the _Recv's slot
    partitions: dict[str, list[dict]] = {}
    for _, node in list(table.op_nodes()):
        dev = node.placed_on
        host_inputs = _host_inputs(node)
        for k, t in enumerate(node.op._inputs):
            slot = node.input_slots[k]
            p = producer.get(slot)
            reads_ref = t.dtype.is_ref_dtype
            if p is None or (reads_ref and node.op.op_def.is_ref_input(k)):
                continue
            src_dev = table.nodes[p].placed_on
            if src_dev is dev:
                continue
            keep_host = k in host_inputs
            if _host_constant(table.nodes[p]) and not dev.backend.host_memory:
                if not keep_host:  # keep_host: the kernel reads the host array itself
                    key = (slot, dev.name, "upload")
                    if key not in pairs:
                        pairs[key] = _add_upload(table, slot, t.name, dev, partitions)
                    node.input_slots[k] = pairs[key]
                continue
            after = None
            key = (slot, dev.name, keep_host)
            if reads_ref and node.op._control_inputs:
                after = [table.node_of[c] for c in node.op._control_inputs
                         if c in table.node_of]
                key = (slot, dev.name, keep_host, node.op.name)
            if key not in pairs:
                pairs[key] = _add_pair(table, slot, t.name, src_dev, dev, partitions,
                                       deref=node.op.name if reads_ref else None,
                                       after=after, keep_host=keep_host)
            node.input_slots[k] = pairs[key]
    _move_sources_to_devices(table, partitions)
    for _, node in table.op_nodes():
        op = node.op
        partitions.setdefault(node.device, []).append(
            {"name": op.name, "op": op.type,
             "input": [t.name for t in op._inputs] + [f"^{c.name}" for c in op._control_inputs]})
    return [{"device": d, "node": n} for d, n in sorted(partitions.items())]


def _move_sources_to_devices(table: NodeTable, partitions: dict[str, list[dict]]) -> None:
    """Feeds and plan constants are host arrays: a node on a device with memory of its
    own reads them through a `_ToDevice` node there (one per value and device)."""
    producer = table.producers()
    moved: dict[tuple[int, str], int] = {}
    for _, node in list(table.op_nodes()):
        dev = node.placed_on
        if dev.backend.host_memory:
            continue
        host_inputs = _host_inputs(node)
        for k, t in enumerate(node.op._inputs):
            slot = node.input_slots[k]
            if slot in producer or t.dtype.is_ref_dtype or k in host_inputs:
                continue
            key = (slot, dev.name)
            if key not in moved:
                mover = NodeInfo(f"_to_device_{t.name}_on_{dev.short_name}", "_ToDevice",
                                 dev.name, None, [t.name], placed_on=dev, input_slots=[slot],
                                 n_out=1, kernel=_make_to_device(dev))
                table.add_node(mover)
                moved[key] = mover.out_base
                partitions.setdefault(dev.name, []).append(
                    {"name": mover.name, "op": "_ToDevice", "input": [t.name]})
            node.input_slots[k] = moved[key]


def _host_constant(node: NodeInfo) -> bool:
    """Whether `node` is a ``Const`` running on a device with host memory: a constant
    that must wait for its control inputs (a folded shape anchored to its source, a
    constant inside a branch), so it stayed a node instead of a plan constant."""
    return (node.op is not None and node.op.type == "Const" and not node.op._inputs
            and node.placed_on.backend.host_memory)


def _add_upload(table: NodeTable, slot: int, tensor_name: str, dev: Device,
                partitions: dict[str, list[dict]]) -> int:
    """A `_ToDevice` node on `dev` reading the host constant in `slot` (a ``Const`` node's
    output), uploaded on its first step only; returns its slot. A `_Send`/`_Recv` pair
    would copy the same value to the device every step."""
    mover = NodeInfo(f"_to_device_{tensor_name}_on_{dev.short_name}", "_ToDevice", dev.name,
                     None, [tensor_name], placed_on=dev, input_slots=[slot], n_out=1,
                     kernel=_make_to_device(dev, once=True))
    table.add_node(mover)
    partitions.setdefault(dev.name, []).append(
        {"name": mover.name, "op": "_ToDevice", "input": [tensor_name]})
    return mover.out_base


def _host_inputs(node: NodeInfo) -> tuple[int, ...]:
    """The inputs `node`'s kernel reads as host arrays (`KernelDef.host_inputs`)."""
    dev = node.placed_on
    if dev.backend.host_memory:
        return ()
    kdef = dev.backend.find_kernel(node.op.type, kernel_dtype(node.op))
    return kdef.host_inputs if kdef is not None else ()


def _make_to_device(device: Device, once: bool = False):
    """The kernel of a `_ToDevice` node on `device`. With `once` (the value is a ``Const``
    node's, the same object every step), the device array of the first call serves every
    later call with that same value: nothing writes into it (a `_ToDevice` result is never
    fresh, so no in-place kernel takes it; variables copy what they are assigned)."""
    backend = device.backend

    def to_device(value):  # a feed or a constant: nothing changes it during the step
        if (isinstance(value, np.ndarray | np.generic) and value.dtype.kind in "biu"
                and value.size <= SMALL_ON_HOST):
            # small integers stay on the host (shape arithmetic runs there: bind.py);
            # a device kernel uploads them itself
            return value
        return backend.wrap_host(value, device)

    return upload_once(to_device) if once else to_device


def fetches_to_host(table: NodeTable, fetch_slots: list[int]) -> list[tuple[int, Device]]:
    """(fetch position, device) for each fetched value that lives on a device with memory
    of its own: the session copies those back to the host."""
    producer = table.producers()
    out = []
    for i, s in enumerate(fetch_slots):
        p = producer.get(s)
        if p is not None and not table.nodes[p].placed_on.backend.host_memory:
            out.append((i, table.nodes[p].placed_on))
    return out


def _add_pair(table: NodeTable, slot: int, tensor_name: str, src: Device, dst: Device,
              partitions: dict[str, list[dict]], deref: str | None = None,
              after: list[int] | None = None, keep_host: bool = False) -> int:
    """Add a `_Send`/`_Recv` pair for `slot`; return the `_Recv`'s slot. With `deref`
    (the name of the op reading a ref as a value), the `_Send` sends the variable's value;
    with `after` (node indices), the pair is that op's own and its `_Send` runs after
    those nodes; with `keep_host`, the `_Recv` hands on the host array (a kernel's host
    input)."""
    suffix = (f"_for_{deref}" if after is not None else "") + ("_host" if keep_host else "")
    key = f"{tensor_name};{src.name};{dst.name}{suffix}"
    send = NodeInfo(f"_send_{tensor_name}_to_{dst.short_name}{suffix}", "_Send", src.name,
                    None, [tensor_name], placed_on=src, input_slots=[slot], n_out=0,
                    kernel=_make_send(key, src, deref),
                    # FLAG_TRANSFER: called with DEAD when dead (a dead input or control
                    # predecessor), so the untaken side of a tf.cond reaches its _Recv as
                    # DEAD instead of leaving the _Recv waiting for ever
                    flags=_executor.FLAG_NEEDS_STEP | _executor.FLAG_TRANSFER)
    recv = NodeInfo(f"_recv_{tensor_name}_on_{dst.short_name}{suffix}", "_Recv", dst.name,
                    None, [tensor_name], placed_on=dst, n_out=1,
                    kernel=_make_recv(key, dst, keep_host), flags=_executor.FLAG_ASYNC)
    sender = table.add_node(send)
    table.add_node(recv)
    table.control_edges.extend((j, sender) for j in after or ())
    partitions.setdefault(src.name, []).append(
        {"name": send.name, "op": "_Send", "input": [tensor_name],
         "attr": {"tensor_name": tensor_name, "recv_device": dst.name}})
    partitions.setdefault(dst.name, []).append(
        {"name": recv.name, "op": "_Recv", "input": [],
         "attr": {"tensor_name": tensor_name, "send_device": src.name}})
    return recv.out_base


def _make_send(key: str, device: Device, deref: str | None = None):
    backend = device.backend

    def send(step, value):
        if value is DEAD:
            step.rendezvous.send(key, DEAD)
            return DEAD  # still a dead node: its control successors stay dead
        if deref is not None and isinstance(value, VariableState):
            value = readonly(value.read(deref))
        # Returns at once where copies are asynchronous (OpenCL): the value reaches the
        # rendezvous from the device's completion thread.
        backend.to_host_async(value, device, lambda host: step.rendezvous.send(key, host),
                              step.cancel)

    return send


def _make_recv(key: str, device: Device, keep_host: bool = False):
    backend = device.backend

    if keep_host:
        def recv_host(step, done):
            step.rendezvous.recv(key, done)

        return recv_host

    def recv(step, done):
        def arrived(value):
            if value is DEAD:
                done(DEAD)
                return
            # Runs on the sender's thread: a failed copy to the device (out of memory)
            # is this _Recv's error, not the _Send's.
            try:
                value = backend.from_host(value, device)
            except Exception as e:
                done(None, e)
                return
            done(value)

        step.rendezvous.recv(key, arrived)

    return recv


def has_transfers(table: NodeTable) -> bool:
    """Whether the plan has `_Send`/`_Recv` pairs (its steps then need a rendezvous)."""
    return any(n.op_type == "_Send" for n in table.nodes)

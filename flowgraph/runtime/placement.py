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

A group with a request goes to the first candidate matching it. A group without one
goes to the host when the host is its only candidate that takes part in automatic
placement (`Device.auto_place`: CPU-type OpenCL devices such as PoCL share the host's
cores and take ops only when asked). Otherwise the whitepaper's greedy simulation
decides (§3.2.1): groups are visited in topological order (a group at its first
member), and for each candidate device the pass simulates the group's ops there, each
starting when the device is free and its inputs have arrived (a copy costs time when the
producer sits elsewhere), plus the copies its outputs need to consumers already placed on
other devices; the group goes where that ends first. Two sweeps, so that the second sees
where the first put each group's consumers. Times come from
`flowgraph.runtime.cost_model`. With ``log_device_placement`` each op's device is printed
and logged, with the reason: its request, the group member it is colocated with, the only
capable device, the host by default, or the cost comparison.

State stays where it was first put. Each plan is placed on its own, but a variable,
queue, table or other op that holds state between runs (`holds_state`) must keep one
device for the whole session: its storage lives there. The session passes a `kept` map
(colocation name -> device name); the first plan that places such an op records
its device there, and every later plan puts the op's group on that device ("kept where
an earlier run put it"). So that the first choice suits every plan, a group holding state
is checked for kernels together with all the ops of the graph that use that state (its
ref and resource consumers), not only those of the first plan.
"""

from __future__ import annotations

import logging

from flowgraph.backends.base import Device
from flowgraph.framework import dtypes, errors
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.operation import Operation
from flowgraph.runtime.cost_model import CostModel

logger = logging.getLogger("tensorflow")


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
    (its first floating input's when the first is an integer shape or size and a
    floating one follows), else its first output's dtype."""
    if "T" in op.attrs and op.attrs["T"] is not None:
        return op.attrs["T"]
    if op._inputs:
        first = op._inputs[0].dtype.base_dtype
        if first.is_integer:  # a shape first (Conv2DBackpropInput, AvgPoolGrad, Fill)?
            for t in op._inputs[1:]:
                if t.dtype.base_dtype.is_floating:
                    return t.dtype.base_dtype
        return first
    if op._outputs:
        return op._outputs[0].dtype.base_dtype
    return None


def _matches(spec: DeviceSpec, device: Device) -> bool:
    # Job/task are resolved by the distributed runtime; locally only the device counts.
    if spec.device_type is not None and spec.device_type != device.device_type:
        return False
    return spec.device_index is None or spec.device_index == device.index


def holds_state(op: Operation) -> bool:
    """Whether `op` creates state that outlives a run (a variable, a resource handle's
    owner, a queue or table by ref): a stateful op with a ref or resource output.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0)
    ...     holds_state(v.op), holds_state(v.read_value().op)
    (True, False)
    """
    if not op.op_def.stateful:
        return False
    return any(t.dtype.is_ref_dtype or t.dtype.base_dtype == dtypes.resource
               for t in op._outputs)


def _state_users(op: Operation) -> list[Operation]:
    """The graph's ops that use `op`'s state where it lives: consumers taking one of its
    outputs as a ref input, or any consumer of its resource handle."""
    users = []
    for t in op._outputs:
        resource = t.dtype.base_dtype == dtypes.resource
        for c in t._consumers:
            if resource or any(i is t and c.op_def.is_ref_input(k)
                               for k, i in enumerate(c._inputs)):
                users.append(c)
    return users


def place(ops: list[Operation], devices: list[Device], allow_soft_placement: bool,
          log: bool = False, costs: CostModel | None = None,
          kept: dict | None = None) -> dict[Operation, Device]:
    """Return op -> device for `ops` (see the module docstring for the rules).

    `kept` (the session's; updated here) maps the colocation names of groups holding
    state to the device an earlier plan put them on.

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
            elif t.op.type == "VarHandleOp":  # a resource variable's ops stay with it
                uf.union(t.op, op)
    groups: dict = {}
    for op in ops:
        groups.setdefault(uf.find(op), []).append(op)
    placement: dict[Operation, Device] = {}
    reasons: dict[Operation, str] = {}
    undecided: dict = {}  # group root -> candidate devices, for the cost model
    by_name = {d.name: d for d in devices}
    for root, members in groups.items():
        earlier = _kept_device(members, kept, by_name) if kept else None
        if earlier is not None:
            _check_kept(members, earlier, allow_soft_placement)
            first = next((m for m in members if m.device), None)
            for op in members:
                placement[op] = earlier
                reasons[op] = (
                    f"requested '{op.device}'" if op.device and
                    _matches(DeviceSpec.from_string(op.device), earlier) else
                    f"soft placement: kept with the state an earlier run put on "
                    f"{earlier.short_name}, not on '{op.device}'" if op.device else
                    f"colocated with '{first.name}', which requested '{first.device}'"
                    if first is not None else
                    "kept where an earlier run of this session put its state")
            continue
        device, why, choices = _place_group(members, devices, allow_soft_placement)
        if choices is not None and len(choices) > 1 and costs is not None:
            undecided[root] = choices
        for op in members:
            placement[op] = device
            reasons[op] = why(op)
    if undecided:
        host = next((d for d in devices if d.backend.host_memory), devices[0])
        _simulate(ops, groups, undecided, placement, reasons, costs, uf, host)
    if kept is not None:
        _keep(groups, placement, kept)
    if log:
        for op in ops:
            logger.info("%s: (%s): %s (%s)", op.name, op.type, placement[op].name, reasons[op])
            print(f"{op.name}: ({op.type}): {placement[op].name}  ({reasons[op]})")
    return placement


def check_local_task(ops: list[Operation], devices: list[Device]) -> None:
    """A session of this process is TensorFlow's ``/job:localhost/replica:0/task:0``: an
    op that asks for another job, replica or task (``/job:ps/task:0`` outside a
    ``grpc://`` session) cannot be placed, soft placement or not, as in TensorFlow. Run on
    the ops a run needs before constant folding, which would hide a constant's request.

    >>> import flowgraph as tf
    >>> from flowgraph.backends import list_devices
    >>> with tf.Graph().as_default():
    ...     with tf.device("/job:ps/task:0"):
    ...         c = tf.constant(1.0, name="c")
    ...     try:
    ...         check_local_task([c.op], list_devices()[:1])
    ...     except tf.errors.InvalidArgumentError as e:
    ...         print(e.message[:74])
    Cannot assign a device for operation c: {{node c}} was explicitly assigned
    """
    for op in ops:
        if not op.device:
            continue
        spec = DeviceSpec.from_string(op.device)
        if spec.job in (None, "localhost") and spec.replica in (None, 0) and \
                spec.task in (None, 0):
            continue
        names = ", ".join(f"/job:localhost/replica:0/task:0{d.short_name}" for d in devices)
        raise errors.InvalidArgumentError(
            None, op,
            f"Cannot assign a device for operation {op.name}: {{{{node {op.name}}}}} was "
            f"explicitly assigned to {op.device} but available devices are [ {names} ]. "
            "Make sure the device specification refers to a valid device. (A session of "
            "this process runs only /job:localhost/replica:0/task:0; run a graph placed "
            "on a cluster's tasks in tf.Session(server.target).)")


def _names(op: Operation):
    """The colocation names of `op`'s group (as `place` unions them): `kept`'s keys."""
    return (("loc", op.name), *(("loc", n) for n in op._colocation or ()))


def _kept_device(members, kept: dict, by_name: dict) -> Device | None:
    for op in members:
        for name in _names(op):
            device = by_name.get(kept.get(name))
            if device is not None:
                return device
    return None


def _keep(groups, placement, kept: dict) -> None:
    """Record the device of every group that holds state, under all its names."""
    for members in groups.values():
        if any(holds_state(op) for op in members):
            device = placement[members[0]].name
            for op in members:
                for name in _names(op):
                    kept.setdefault(name, device)


def _check_kept(members, device: Device, soft: bool) -> None:
    """Refuse a group member that cannot run where the group's state already lives, or
    (without soft placement) one that asks for another device."""
    holder = next((m for m in members if holds_state(m)), members[0])
    where = (f"uses the state of '{holder.name}', which an earlier run of this session put "
             f"on {device.short_name}")
    for op in members:
        if op.device and not soft and not _matches(DeviceSpec.from_string(op.device), device):
            problem = (f"it asks for '{op.device}' but {where}. Create '{holder.name}' under "
                       "the same tf.device() or pass ConfigProto(allow_soft_placement=True).")
        elif device.backend.find_kernel(op.type, kernel_dtype(op)) is None:
            problem = (f"it {where}, which has no kernel for {op.type} with dtype "
                       f"{getattr(kernel_dtype(op), 'name', None)}. Put '{holder.name}' on a "
                       "device that can run it with tf.device() where it is created.")
        else:
            continue
        raise errors.InvalidArgumentError(
            None, op, f"Cannot assign a device for operation '{op.name}' ({op.type}): "
            f"{problem} " + _where(op))


def _simulate(ops, groups, undecided, placement, reasons, costs: CostModel, uf,
              host: Device) -> None:
    """The greedy simulation of the module docstring, over the `undecided` groups.
    Fed values and the plan's constants start on `host`."""
    position = {op: i for i, op in enumerate(ops)}
    order = sorted(groups, key=lambda root: min(position[op] for op in groups[root]))
    consumers: dict[Operation, list[Operation]] = {}
    for op in ops:
        for t in op._inputs:
            if t.op in position:
                consumers.setdefault(t.op, []).append(op)
    estimates: dict = {}
    for _sweep in range(2):
        free: dict[Device, float] = {}
        ready: dict[Operation, float] = {}
        for root in order:
            members = sorted(groups[root], key=position.__getitem__)
            choices = undecided.get(root)
            if choices is None:
                _run_group(members, placement[members[0]], free, ready, placement, costs, host)
                continue
            scored = []
            for d in choices:
                trial_free, trial_ready = dict(free), dict(ready)
                end = _run_group(members, d, trial_free, trial_ready, placement, costs,
                                 host)
                later = sum(costs.copy_time(t, d, placement[c])
                            for op in members for t in op._outputs
                            for c in consumers.get(op, ()) if uf.find(c) != root
                            and any(i is t for i in c._inputs) and placement[c] is not d)
                scored.append((end + later, d))
            best = min(scored, key=lambda sd: sd[0])[1]
            _run_group(members, best, free, ready, placement, costs, host)
            for op in members:
                placement[op] = best
            estimates[root] = scored
    for root, scored in estimates.items():
        why = "cost: " + ", ".join(f"{d.short_name} {t * 1e3:.3g} ms" for t, d in
                                   sorted(scored, key=lambda sd: sd[0]))
        for op in groups[root]:
            reasons[op] = why


def _run_group(members, device: Device, free, ready, placement, costs: CostModel,
               host: Device) -> float:
    """Simulate `members` (topological order) on `device`; returns when the last ends."""
    end = 0.0
    for op in members:
        start = free.get(device, 0.0)
        for t in op._inputs:
            p = t.op
            if p in members:
                start = max(start, ready.get(p, 0.0))
                continue
            src = placement.get(p, host)  # not placed: fed, or a constant of the plan
            arrive = ready.get(p, 0.0)
            if src is not device and not t.dtype.is_ref_dtype:
                arrive += costs.copy_time(t, src, device)
            start = max(start, arrive)
        end = start + costs.op_time(op, device)
        free[device] = end
        ready[op] = end
    return end


def _place_group(members: list[Operation], devices: list[Device], soft: bool):
    """(device, op -> reason, the candidates the cost model may choose among or None)."""
    # State stays where it is first put: every user of it in the graph must run there,
    # and a device one of them asks for holds it (as if the whole graph were placed).
    needs = list(members) + [u for op in members if holds_state(op) for u in _state_users(op)
                             if u not in members]
    requests = [(op, DeviceSpec.from_string(op.device)) for op in needs if op.device]
    capable = []
    for d in devices:
        if all(d.backend.find_kernel(op.type, kernel_dtype(op)) is not None for op in needs):
            capable.append(d)
    wanted = [d for d in capable if all(_matches(spec, d) for _, spec in requests)]

    def requested(device):
        first = requests[0][0]
        return lambda op: (f"requested '{op.device}'" if op.device else
                           f"colocated with '{first.name}', which requested '{first.device}'")

    if wanted:
        if requests:
            return wanted[0], requested(wanted[0]), None
        auto = [d for d in wanted if d.auto_place]
        cpu = [d for d in auto if d.device_type == "CPU"]
        device = (cpu or auto or wanted)[0]
        if len(auto) > 1:
            return device, lambda op: "host by default", auto
        only = len(capable) == 1
        return device, lambda op: ("the only device with a kernel" if only
                                   else "host by default"), None
    if capable and soft:
        # Keep what can be kept of the request (its device type), else use the host.
        same_type = [d for d in capable
                     if all(s.device_type in (None, d.device_type) for _, s in requests)]
        cpu = [d for d in capable if d.device_type == "CPU"]
        device = (same_type or cpu or capable)[0]
        return device, lambda op: (f"soft placement: no device matching "
                                   f"'{requests[0][1].to_string()}' can run the group of "
                                   f"'{requests[0][0].name}'"), None
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

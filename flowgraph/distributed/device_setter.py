"""`tf.train.replica_device_setter`: variables on ps tasks, everything else on a worker.

Between-graph replication builds the same graph in every worker process under
``tf.device(replica_device_setter(...))``: variable ops go to ``/job:ps/task:i`` (tasks
chosen round-robin, or by a strategy function), all other ops to the worker device. Ops
in a colocation group (a variable's initializer, its optimizer updates and slots) follow
the group's variable when the master places the graph, whatever device they got here.
A device an op already has (from an inner ``tf.device``) wins over the setter's fields.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     with tf.device(replica_device_setter(ps_tasks=2)):
...         v0 = tf.Variable(1.0, name="v0")
...         v1 = tf.Variable(2.0, name="v1")
...         y = v0 + v1
>>> v0.op.device, v1.op.device, y.op.device
('/job:ps/task:0', '/job:ps/task:1', '/job:worker')
"""

from __future__ import annotations

import hashlib

from flowgraph.distributed.cluster_spec import ClusterSpec
from flowgraph.framework import dtypes
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.tensor_shape import TensorShape

__all__ = ["STANDARD_PS_OPS", "GreedyLoadBalancingStrategy", "RandomStrategy",
           "byte_size_load_fn", "replica_device_setter"]

STANDARD_PS_OPS = ("Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
                   "MutableHashTableV2", "MutableHashTableOfTensors",
                   "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
                   "MutableDenseHashTableV2", "VarHandleOp")


class _RoundRobinStrategy:
    """Task 0, 1, ..., n-1, 0, ... for successive ps ops."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks, self._next = num_tasks, 0

    def __call__(self, op) -> int:
        task = self._next
        self._next = (self._next + 1) % self._num_tasks
        return task


def byte_size_load_fn(op) -> int:
    """The bytes of `op`'s first output (a variable's size), 0 when its shape is not
    fully known: the load function TensorFlow's contrib training module offers.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(tf.zeros([10, 4]))
    >>> byte_size_load_fn(v.op)
    160
    """
    try:  # a variable op's own attrs: a device function sees the op before its outputs
        shape, dtype = TensorShape(op.get_attr("shape")), dtypes.as_dtype(op.get_attr("dtype"))
    except (KeyError, ValueError, TypeError):
        if not op.outputs:
            return 0
        shape, dtype = op.outputs[0].shape, op.outputs[0].dtype
    if not shape.is_fully_defined():
        return 0
    count = 1
    for d in shape.as_list():
        count *= d
    return count * dtype.base_dtype.size


class GreedyLoadBalancingStrategy:
    """A `ps_strategy` that puts each ps op on the task with the least load so far, the
    load of an op being ``load_fn(op)`` (default: its bytes, `byte_size_load_fn`).

    >>> import flowgraph as tf
    >>> strategy = GreedyLoadBalancingStrategy(2)
    >>> with tf.Graph().as_default(), tf.device(replica_device_setter(
    ...         ps_tasks=2, ps_strategy=strategy)):
    ...     big = tf.Variable(tf.zeros([100]), name="big")
    ...     small = [tf.Variable(tf.zeros([10])) for _ in range(3)]
    >>> big.op.device, sorted({v.op.device for v in small})
    ('/job:ps/task:0', ['/job:ps/task:1'])
    """

    def __init__(self, num_tasks: int, load_fn=None) -> None:
        if int(num_tasks) < 1:
            raise ValueError(f"GreedyLoadBalancingStrategy: num_tasks must be >= 1; got "
                             f"{num_tasks}")
        self._num_tasks = int(num_tasks)
        self._load_fn = load_fn or byte_size_load_fn
        self._loads = [0] * self._num_tasks

    def __call__(self, op) -> int:
        task = min(range(self._num_tasks), key=self._loads.__getitem__)
        self._loads[task] += self._load_fn(op)
        return task


class RandomStrategy:
    """A `ps_strategy` that hashes each ps op's name (with `seed`) to a task: the same op
    name always gets the same task, whatever order the graph creates its variables in
    (TF1's ``tf.contrib.training.RandomStrategy``: the MD5 of ``"<name>_<seed>"`` modulo
    the task count).

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default(), tf.device(replica_device_setter(
    ...         ps_tasks=3, ps_strategy=RandomStrategy(3, seed=0))):
    ...     v = tf.Variable(1.0, name="var")
    >>> v.op.device
    '/job:ps/task:1'
    """

    def __init__(self, num_ps_replicas: int, seed: int = 0) -> None:
        if int(num_ps_replicas) < 1:
            raise ValueError(f"RandomStrategy: num_ps_replicas must be >= 1; got "
                             f"{num_ps_replicas}")
        self._num_ps_replicas, self._seed = int(num_ps_replicas), int(seed)

    def __call__(self, op) -> int:
        key = f"{op.name}_{self._seed}".encode()
        return int(hashlib.md5(key).hexdigest(), 16) % self._num_ps_replicas


class _ReplicaDeviceChooser:
    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                 ps_strategy) -> None:
        self._ps_tasks, self._ps_device = ps_tasks, ps_device
        self._worker_device, self._merge = worker_device, merge_devices
        self._ps_ops, self._strategy = set(ps_ops), ps_strategy

    def device_function(self, op) -> str:
        current = DeviceSpec.from_string(op.device or "")
        if not self._merge and op.device:
            return op.device
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            if ps.job and (not current.job or current.job == ps.job):
                ps = ps.replace(task=self._strategy(op))
            return ps.make_merged_spec(current).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


def replica_device_setter(ps_tasks: int = 0, ps_device: str = "/job:ps",
                          worker_device: str = "/job:worker", merge_devices: bool = True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for ``tf.device`` that puts variables on ps tasks.

    Parameters
    ----------
    ps_tasks : int
        Number of ps tasks (taken from `cluster`'s ``ps`` job when `cluster` is given).
    ps_device, worker_device : str
        Where ps ops and all other ops go (``worker_device`` is usually
        ``"/job:worker/task:%d" % task_index``).
    merge_devices : bool
        Merge with the device an op already has (its set fields win); if False, an op
        with a device keeps it unchanged.
    cluster : ClusterSpec or dict, optional
    ps_ops : list of str, optional
        Op types placed on ps tasks (default `STANDARD_PS_OPS`).
    ps_strategy : callable, optional
        ``op -> ps task index`` (default round-robin).

    Returns None when there are no ps tasks (so ``tf.device(None)`` leaves ops as they
    are).

    >>> replica_device_setter(cluster={"worker": ["h:1"]}) is None
    True
    """
    if cluster is not None:
        spec = ClusterSpec(cluster)
        ps_job = DeviceSpec.from_string(ps_device).job or "ps"
        ps_tasks = spec.num_tasks(ps_job) if ps_job in spec.jobs else 0
    if ps_tasks is None or int(ps_tasks) < 0:
        raise ValueError(f"replica_device_setter: ps_tasks must be >= 0; got {ps_tasks!r}")
    if not ps_tasks:
        return None
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(int(ps_tasks))
    elif not callable(ps_strategy):
        raise TypeError(f"replica_device_setter: ps_strategy must be callable (op -> task "
                        f"index); got {ps_strategy!r}")
    chooser = _ReplicaDeviceChooser(int(ps_tasks), ps_device, worker_device, merge_devices,
                                    ps_ops if ps_ops is not None else STANDARD_PS_OPS,
                                    ps_strategy)
    return chooser.device_function

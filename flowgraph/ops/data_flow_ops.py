"""Queues: `FIFOQueue`, `PaddingFIFOQueue`, `RandomShuffleQueue`, `PriorityQueue`.

A queue op (``FIFOQueueV2`` ...) outputs a handle to a queue that lives in the session's
resource container, shared by ``shared_name`` (default: the op's name) among the sessions
on one target. Enqueue and dequeue ops take the handle as input 0; their kernels are
asynchronous, so a blocked dequeue holds no executor thread (see
`flowgraph/backends/cpu/kernels_data_flow.py`).

Example
-------
>>> import flowgraph as tf
>>> q = tf.FIFOQueue(3, tf.float32, shapes=[()])
>>> with tf.Session() as sess:
...     sess.run(q.enqueue_many([[1.0, 2.0]]))
...     print(sess.run(q.dequeue()), sess.run(q.size()))
1.0 1
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import get_default_graph, get_seed, name_scope
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import Dimension, TensorShape, as_shape
from flowgraph.ops.op_util import fixed_dtype, make_op

__all__ = [
    "FIFOQueue",
    "PaddingFIFOQueue",
    "PriorityQueue",
    "QueueBase",
    "RandomShuffleQueue",
]

_QUEUE_TYPES = ("FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2")


# -- op registrations --------------------------------------------------------------------
def _handle_shape(op):
    return [TensorShape([])]


_QUEUE_ATTRS = {"component_types": None, "shapes": [], "capacity": -1, "container": "",
                "shared_name": ""}
for _name in ("FIFOQueueV2", "PaddingFIFOQueueV2", "PriorityQueueV2"):
    register_op(_name, attrs=_QUEUE_ATTRS, dtype_fn=fixed_dtype(_dtypes.string),
                stateful=True)(_handle_shape)
register_op("RandomShuffleQueueV2",
            attrs={**_QUEUE_ATTRS, "min_after_dequeue": 0, "seed": 0, "seed2": 0},
            dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(_handle_shape)


def _no_outputs(op, *shapes):
    return []


for _name in ("QueueEnqueueV2", "QueueEnqueueManyV2"):
    register_op(_name, attrs={"Tcomponents": None, "timeout_ms": -1}, num_outputs=0,
                dtype_fn=lambda op: [], stateful=True)(_no_outputs)
register_op("QueueCloseV2", attrs={"cancel_pending_enqueues": False}, num_outputs=0,
            dtype_fn=lambda op: [], stateful=True)(_no_outputs)


def _component_shapes(op) -> list[TensorShape]:
    """The static shapes of the elements of the queue feeding `op` (unknown if unknown)."""
    n = len(op.attrs["component_types"])
    producer = op.inputs[0].op
    shapes = producer.attrs.get("shapes") if producer.type in _QUEUE_TYPES else None
    if not shapes:
        return [TensorShape(None)] * n
    shapes = [as_shape(s) for s in shapes]
    if producer.type == "PriorityQueueV2":
        shapes = [TensorShape([]), *shapes]
    return shapes if len(shapes) == n else [TensorShape(None)] * n


def _dequeue_dtypes(op):
    return [_dtypes.as_dtype(d) for d in op.attrs["component_types"]]


def _num_components(op) -> int:
    return len(op.attrs["component_types"])


@register_op("QueueDequeueV2", attrs={"component_types": None, "timeout_ms": -1},
             num_outputs=_num_components, dtype_fn=_dequeue_dtypes, stateful=True)
def _dequeue_shape(op, handle):
    return _component_shapes(op)


def _batched_shape(op, handle, n, up_to: bool):
    value = constant_value(op.inputs[1])
    if value is not None and int(value) < 0:
        raise op.shape_error(f"the number of elements n must be >= 0, got {int(value)}")
    batch = None if value is None or up_to else int(value)
    return [TensorShape([batch]).concatenate(s) if s.ndims is not None else TensorShape(None)
            for s in _component_shapes(op)]


register_op("QueueDequeueManyV2", attrs={"component_types": None, "timeout_ms": -1},
            num_outputs=_num_components, dtype_fn=_dequeue_dtypes, stateful=True)(
    lambda op, handle, n: _batched_shape(op, handle, n, False))
register_op("QueueDequeueUpToV2", attrs={"component_types": None, "timeout_ms": -1},
            num_outputs=_num_components, dtype_fn=_dequeue_dtypes, stateful=True)(
    lambda op, handle, n: _batched_shape(op, handle, n, True))
register_op("QueueSizeV2", dtype_fn=fixed_dtype(_dtypes.int32), stateful=True)(
    lambda op, handle: [TensorShape([])])
register_op("QueueIsClosedV2", dtype_fn=fixed_dtype(_dtypes.bool), stateful=True)(
    lambda op, handle: [TensorShape([])])

not_differentiable(*_QUEUE_TYPES, "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueCloseV2",
                   "QueueDequeueV2", "QueueDequeueManyV2", "QueueDequeueUpToV2",
                   "QueueSizeV2", "QueueIsClosedV2")


# -- argument normalization --------------------------------------------------------------
def _as_type_list(dtypes) -> list:
    if isinstance(dtypes, list | tuple):
        return [_dtypes.as_dtype(d).base_dtype for d in dtypes]
    return [_dtypes.as_dtype(dtypes).base_dtype]


def _as_shape_list(shapes, dtypes, *, partial: bool = False) -> list[TensorShape]:
    if partial and (not isinstance(shapes, list | tuple) or not shapes
                    or any(s is None or isinstance(s, int) for s in shapes)):
        raise ValueError(
            "When providing partial shapes, a list of shapes must be provided (one per "
            f"component, e.g. [[None, 3]]); got {shapes!r}")
    if shapes is None:
        return []
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, list | tuple):
        raise TypeError(
            f"shapes must be a TensorShape or a list/tuple of shapes, got {type(shapes)}")
    if all(s is None or isinstance(s, int | Dimension) for s in shapes):
        shapes = [shapes]  # one shape, given as a list of dimensions
    shapes = [as_shape(s) for s in shapes]
    for s in shapes:
        if s.ndims is None:
            raise ValueError(f"All shapes must have a defined rank: {shapes}")
        if not partial and not s.is_fully_defined():
            raise ValueError(
                f"All shapes must be fully defined: {shapes}. Use tf.PaddingFIFOQueue for "
                "elements whose dimensions vary")
    if len(shapes) != len(dtypes):
        raise ValueError(
            f"Queue shapes must have the same length as dtypes: {len(shapes)} shapes for "
            f"{len(dtypes)} dtypes")
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, list | tuple):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError(
            f"Queue names must have the same length as dtypes: {len(names)} names for "
            f"{len(dtypes)} dtypes")
    return list(names)


def _common_shape(shapes) -> TensorShape:
    """The most specific shape every one of `shapes` has."""
    first = shapes[0]
    if any(s.ndims != first.ndims for s in shapes) or first.ndims is None:
        return TensorShape(None)
    return TensorShape([d[0].value if all(x.value == d[0].value for x in d) else None
                        for d in zip(*(s.dims for s in shapes))])


class QueueBase:
    """The queue interface: enqueue/dequeue ops on a queue handle.

    Subclasses (`FIFOQueue`, `RandomShuffleQueue`, `PaddingFIFOQueue`, `PriorityQueue`)
    create the handle; all ops built here run in any session of the graph.
    """

    def __init__(self, dtypes, shapes, names, queue_ref: Tensor) -> None:
        self._dtypes = list(dtypes)
        self._shapes = list(shapes) if shapes else [TensorShape(None)] * len(self._dtypes)
        self._names = names
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index, queues) -> QueueBase:
        """A queue whose ops act on ``queues[index]`` (`index` a scalar int32 tensor,
        chosen at run time); the queues must agree on component dtypes and names."""
        from flowgraph.ops.array_index_ops import gather
        from flowgraph.ops.array_join_ops import stack

        if not queues or not all(isinstance(q, QueueBase) for q in queues):
            raise TypeError("A list of queues expected")
        dtypes = queues[0].dtypes
        if any(q.dtypes != dtypes for q in queues[1:]):
            raise TypeError("Queues do not have matching component dtypes.")
        names = queues[0].names
        if any(q.names != names for q in queues[1:]):
            raise TypeError("Queues do not have matching component names.")
        shapes = [_common_shape(group) for group in zip(*(q.shapes for q in queues))]
        queue_ref = gather(stack([q.queue_ref for q in queues]), index)
        return QueueBase(dtypes, shapes, names, queue_ref)

    # -- properties ---------------------------------------------------------------------
    @property
    def queue_ref(self) -> Tensor:
        """The handle tensor of the underlying queue."""
        return self._queue_ref

    @property
    def name(self) -> str:
        """The name of the queue op."""
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list:
        return list(self._dtypes)

    @property
    def shapes(self) -> list:
        return list(self._shapes)

    @property
    def names(self):
        return None if self._names is None else list(self._names)

    # -- helpers ------------------------------------------------------------------------
    def _components(self, vals, what: str) -> list:
        if isinstance(vals, dict):
            if self._names is None:
                raise ValueError(
                    f"Queue '{self.name}' has no names; it cannot {what} a dictionary. "
                    "Create the queue with names=[...] or pass a list of tensors")
            if set(vals) != set(self._names):
                raise ValueError(
                    f"Keys in the dictionary to {what} ({sorted(vals, key=str)}) do not "
                    f"match the names of queue '{self.name}' ({sorted(self._names, key=str)})")
            return [vals[k] for k in self._names]
        if self._names is not None:
            raise ValueError(
                f"Queue '{self.name}' has names {self._names}: {what} a dictionary keyed by "
                "them")
        if not isinstance(vals, list | tuple):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(
                f"Cannot {what} {len(vals)} components to queue '{self.name}', which has "
                f"{len(self._dtypes)} components of dtypes {[d.name for d in self._dtypes]}")
        return list(vals)

    def _convert(self, vals, what: str, many: bool) -> list[Tensor]:
        tensors = []
        batch = Dimension(None)
        for i, (v, dt, shape) in enumerate(zip(self._components(vals, what), self._dtypes,
                                               self._shapes)):
            label = f"component {i}" + (f" ('{self._names[i]}')" if self._names else "")
            if isinstance(v, Tensor) and v.dtype.base_dtype != dt:
                raise ValueError(
                    f"Cannot {what} {label} of queue '{self.name}': the queue holds "
                    f"{dt.name} but '{v.name}' is {v.dtype.base_dtype.name}. Cast it with "
                    "tf.cast first")
            try:
                t = convert_to_tensor(v, dtype=dt, name=f"component_{i}")
            except (TypeError, ValueError) as e:
                raise TypeError(
                    f"Cannot {what} {label} of queue '{self.name}': the queue holds "
                    f"{dt.name} but the value {v!r} does not convert to it ({e})") from None
            got = t.shape
            if many:
                if got.ndims == 0:
                    raise ValueError(
                        f"Cannot {what} {label} of queue '{self.name}': enqueue_many needs a "
                        f"leading batch dimension, but '{t.name}' is a scalar")
                if got.ndims is not None:
                    if not batch.is_compatible_with(got[0]):
                        raise ValueError(
                            f"Cannot {what} to queue '{self.name}': the components' batch "
                            f"sizes differ ({batch} vs {got[0]} for {label})")
                    batch = batch.merge_with(got[0])
                    got = got[1:]
            if not got.is_compatible_with(shape):
                raise ValueError(
                    f"Cannot {what} {label} of queue '{self.name}': the queue expects shape "
                    f"{shape}{' per element' if many else ''} but '{t.name}' has shape "
                    f"{t.shape}")
            tensors.append(t)
        return tensors

    def _scoped(self, name, default: str, values=()):
        return name_scope(name, f"{self._name}_{default}", [self._queue_ref, *values])

    def _result(self, op: Operation):
        outs = list(op.outputs)
        if self._names is not None:
            return dict(zip(self._names, outs))
        return outs[0] if len(outs) == 1 else outs

    # -- ops -----------------------------------------------------------------------------
    def enqueue(self, vals, name: str | None = None) -> Operation:
        """An op adding one element (a tensor, a list/tuple, or a dict keyed by `names`).

        Blocks while the queue is full; fails with `CancelledError` once it is closed.
        """
        with self._scoped(name, "enqueue") as scope:
            tensors = self._convert(vals, "enqueue", many=False)
            return make_op("QueueEnqueueV2", [self._queue_ref, *tensors],
                           {"Tcomponents": list(self._dtypes)}, name=scope)

    def enqueue_many(self, vals, name: str | None = None) -> Operation:
        """An op adding the elements of `vals` sliced along dimension 0."""
        with self._scoped(name, "EnqueueMany") as scope:
            tensors = self._convert(vals, "enqueue_many", many=True)
            return make_op("QueueEnqueueManyV2", [self._queue_ref, *tensors],
                           {"Tcomponents": list(self._dtypes)}, name=scope)

    def _dequeue_op(self, op_type: str, n, name: str | None, default: str,
                    timeout_ms: int = -1):
        inputs = [self._queue_ref]
        if n is not None:
            inputs.append(convert_to_tensor(n, dtype=_dtypes.int32, name="n"))
        attrs = {"component_types": list(self._dtypes)}
        if timeout_ms >= 0:
            attrs["timeout_ms"] = int(timeout_ms)
        return make_op(op_type, inputs, attrs, name=name or f"{self._name}_{default}")

    def dequeue(self, name: str | None = None):
        """One element: a tensor, a list of tensors, or a dict when the queue has names.

        Blocks until an element is available; `OutOfRangeError` if the queue is closed
        and empty.
        """
        return self._result(self._dequeue_op("QueueDequeueV2", None, name, "Dequeue"))

    def dequeue_many(self, n, name: str | None = None):
        """`n` elements concatenated along a new dimension 0 (blocks until there are `n`)."""
        return self._result(self._dequeue_op("QueueDequeueManyV2", n, name, "DequeueMany"))

    def dequeue_up_to(self, n, name: str | None = None):
        """Like `dequeue_many`, but a closed queue returns its last (< `n`) elements."""
        return self._result(self._dequeue_op("QueueDequeueUpToV2", n, name, "DequeueUpTo"))

    def close(self, cancel_pending_enqueues: bool = False, name: str | None = None):
        """An op closing the queue; pending enqueues are cancelled if asked."""
        return make_op("QueueCloseV2", [self._queue_ref],
                       {"cancel_pending_enqueues": bool(cancel_pending_enqueues)},
                       name=name or f"{self._name}_Close")

    def is_closed(self, name: str | None = None) -> Tensor:
        """A scalar bool tensor: has the queue been closed?"""
        return make_op("QueueIsClosedV2", [self._queue_ref],
                       name=name or f"{self._name}_IsClosed").outputs[0]

    def size(self, name: str | None = None) -> Tensor:
        """A scalar int32 tensor: the number of elements in the queue."""
        return make_op("QueueSizeV2", [self._queue_ref],
                       name=name or f"{self._name}_Size").outputs[0]


def _queue_op(op_type: str, dtypes, shapes, capacity, shared_name, name, **extra) -> Tensor:
    attrs = {"component_types": list(dtypes), "shapes": list(shapes),
             "capacity": int(capacity), "shared_name": shared_name or "", **extra}
    return make_op(op_type, [], attrs, name=name).outputs[0]


class FIFOQueue(QueueBase):
    """A queue that hands out elements in the order they were enqueued.

    Parameters
    ----------
    capacity : int
        Upper bound on the number of elements; enqueues block while it is reached.
    dtypes : DType or list of DType
        The component types of an element.
    shapes : list of shapes, optional
        Fully defined shapes of the components (needed by `dequeue_many`).
    names : list of str, optional
        Component names: elements are then dicts.
    shared_name : str, optional
        Share the queue under this name among sessions on one target.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.FIFOQueue(4, [tf.int32, tf.float32], shapes=[[], [2]])
    >>> x, y = q.dequeue()
    >>> x.shape.as_list(), y.shape.as_list()
    ([], [2])
    """

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None,
                 name: str = "fifo_queue") -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        # As TF's: made outside any control dependencies and pinned to a CPU of the
        # enclosing device ('/job:ps/task:0' gives '/job:ps/task:0/device:CPU:*').
        graph = get_default_graph()
        with graph.control_dependencies(None), graph.device("CPU"):
            ref = _queue_op("FIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFO queue whose `dequeue_many` pads components to a common shape.

    `shapes` is required and may contain ``None`` dimensions; a batch pads each such
    dimension with zeros (empty strings for strings) to the largest size in the batch.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.PaddingFIFOQueue(4, tf.int32, shapes=[[None]])
    >>> q.dequeue_many(2).shape.as_list()
    [2, None]
    """

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None,
                 name: str = "padding_fifo_queue") -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, partial=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError(
                f"Shapes must be provided for all components, but received {len(dtypes)} "
                f"dtypes and {len(shapes)} shapes.")
        ref = _queue_op("PaddingFIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that hands out a random element, keeping `min_after_dequeue` for mixing.

    A dequeue blocks while the queue holds `min_after_dequeue` elements or fewer, unless
    the queue is closed.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.RandomShuffleQueue(10, 2, tf.float32, shapes=[()], seed=1)
    >>> q.dequeue_many(3).shape.as_list()
    [3]
    """

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None,
                 seed=None, shared_name=None, name: str = "random_shuffle_queue") -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            seed2 = 0  # one seed for every graph sharing the queue
        ref = _queue_op("RandomShuffleQueueV2", dtypes, shapes, capacity, shared_name, name,
                        min_after_dequeue=int(min_after_dequeue), seed=int(seed1),
                        seed2=int(seed2))
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """A queue that hands out the element with the smallest int64 priority first.

    Elements are ``(priority, *components)``: `types` and `shapes` describe the
    components after the priority, which is a scalar int64.

    Example
    -------
    >>> import flowgraph as tf
    >>> q = tf.PriorityQueue(4, [tf.string], shapes=[[]])
    >>> [d.name for d in q.dtypes]
    ['int64', 'string']
    """

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None,
                 name: str = "priority_queue") -> None:
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes, types)
        ref = _queue_op("PriorityQueueV2", types, shapes, capacity, shared_name, name)
        dtypes = [_dtypes.int64, *types]
        shapes = [TensorShape([]), *shapes] if shapes else []
        names = _as_name_list(names, dtypes)
        super().__init__(dtypes, shapes, names, ref)

"""`tf.contrib.staging`: `StagingArea`, a named buffer of tensor tuples for overlapping
input transfer with compute (put this step's batch, get the previous one).

Each method adds one op naming the area by its ``shared_name`` (``Stage``, ``Unstage``,
``StagePeek``, ``StageSize``, ``StageClear``: `flowgraph/ops/staging_ops.py`); the area
itself lives in the session's resource container, so two `StagingArea` objects with
one `shared_name` share it.

Example
-------
>>> import flowgraph as tf
>>> area = tf.contrib.staging.StagingArea([tf.float32], shapes=[[2]])
>>> put = area.put([tf.constant([1.0, 2.0])])
>>> got = area.get()
>>> with tf.Session() as sess:
...     sess.run(put)
...     print(sess.run(got))
[array([1., 2.], dtype=float32)]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import colocate_with, get_default_graph, name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.control_flow_ops import no_op
from flowgraph.ops.op_util import make_op

__all__ = ["StagingArea"]


class StagingArea:
    """A staging area: elements are tuples of tensors with fixed dtypes (and optionally
    shapes), taken out in the order they were put in.

    Parameters
    ----------
    dtypes : list of DType
        One dtype per component of an element.
    shapes : list of shapes, optional
        One shape per component; `put` checks values against them and `get`/`peek`
        results carry them.
    names : list of str, optional
        Component names: `put` then takes a dict and `get`/`peek` return one.
    shared_name : str, optional
        The area's name in the session; a fresh graph-unique ``"StagingArea"`` name
        by default.
    capacity, memory_limit : int
        Bounds on the element count and on the bytes held (0: unbounded); `put`
        blocks while a bound would be exceeded.

    Example
    -------
    >>> import flowgraph as tf
    >>> area = tf.contrib.staging.StagingArea([tf.int32, tf.float32], names=["id", "x"])
    >>> put = area.put({"id": tf.constant(7), "x": tf.constant(0.5)})
    >>> with tf.Session() as sess:
    ...     sess.run(put)
    ...     print(sorted((k, v.item()) for k, v in sess.run(area.get()).items()))
    [('id', 7), ('x', 0.5)]
    """

    def __init__(self, dtypes, shapes=None, names=None, shared_name=None, capacity=0,
                 memory_limit=0):
        if shared_name is None:
            shared_name = get_default_graph().unique_name(type(self).__name__)
        elif not isinstance(shared_name, str):
            raise ValueError(f"StagingArea: shared_name must be a string, got "
                             f"{shared_name!r}")
        self._name = shared_name
        self._dtypes = list(dtypes)
        if shapes is not None and len(shapes) != len(self._dtypes):
            raise ValueError(f"StagingArea shapes must be the same length as dtypes: "
                             f"{len(shapes)} shapes for {len(self._dtypes)} dtypes")
        self._shapes = ([TensorShape(s) for s in shapes] if shapes is not None
                        else [TensorShape(None) for _ in self._dtypes])
        if names is not None and len(names) != len(self._dtypes):
            raise ValueError(f"StagingArea names must be the same length as dtypes: "
                             f"{len(names)} names for {len(self._dtypes)} dtypes")
        self._names = list(names) if names is not None else None
        self._capacity = capacity
        self._memory_limit = memory_limit
        with name_scope(f"{self._name}_root"):
            self._coloc_op = no_op()

    name = property(lambda self: self._name, doc="The area's shared name.")
    dtypes = property(lambda self: self._dtypes, doc="The component dtypes.")
    shapes = property(lambda self: self._shapes, doc="The component shapes.")
    names = property(lambda self: self._names, doc="The component names, or None.")
    capacity = property(lambda self: self._capacity, doc="The element bound (0: none).")
    memory_limit = property(lambda self: self._memory_limit,
                            doc="The byte bound (0: none).")

    def _attrs(self) -> dict:
        return {"capacity": int(self._capacity), "memory_limit": int(self._memory_limit),
                "dtypes": [_dtypes.as_dtype(d) for d in self._dtypes], "container": "",
                "shared_name": self._name}

    def _put_values(self, values) -> list[Tensor]:
        if isinstance(values, dict):
            if not self._names:
                raise ValueError("Staging areas must have names to enqueue a dictionary")
            if not set(values).issubset(self._names):
                raise ValueError(f"Keys in dictionary to put do not match names of staging "
                                 f"area. Dictionary: {sorted(values)} Queue: "
                                 f"{sorted(self._names)}")
            pairs = [(values[k], i) for i, k in enumerate(self._names) if k in values]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a staging area with names")
            if not isinstance(values, list | tuple):
                values = [values]
            pairs = [(v, i) for i, v in enumerate(values)]
        if len(pairs) > len(self._dtypes):
            raise ValueError(f"Unexpected number of inputs {len(pairs)} vs "
                             f"{len(self._dtypes)}")
        tensors = []
        for value, i in pairs:
            dtype = _dtypes.as_dtype(self._dtypes[i])
            if not isinstance(value, Tensor):
                value = convert_to_tensor(value, dtype=dtype, name=f"component_{i}")
            if value.dtype != dtype:
                raise ValueError(f"Datatypes do not match. Received val.dtype {value.dtype} "
                                 f"and dtype {dtype}")
            value.shape.assert_is_compatible_with(self._shapes[i])
            tensors.append(value)
        return tensors

    def put(self, values, name=None):
        """An op putting one element (a tensor, list/tuple of tensors, or dict by name);
        it blocks while the area is full."""
        scope_values = (list(values.values()) if isinstance(values, dict)
                        else list(values) if isinstance(values, list | tuple) else [values])
        with name_scope(name, f"{self._name}_put", scope_values) as scope:
            tensors = self._put_values(values)
            with colocate_with(self._coloc_op):
                # The op's dtypes are those of the values put (a put may stage fewer
                # components than the area has, as TensorFlow allows).
                attrs = {**self._attrs(), "dtypes": [t.dtype for t in tensors]}
                return make_op("Stage", tensors, attrs, name=scope)

    def _result(self, op):
        outputs = list(op.outputs)
        for t, shape in zip(outputs, self._shapes):
            t.set_shape(shape)
        if self._names:
            return dict(zip(self._names, outputs))
        return outputs

    def get(self, name=None):
        """The oldest element, removed from the area (blocks while it is empty): a list
        of tensors, or a dict when the area has names."""
        with colocate_with(self._coloc_op):
            op = make_op("Unstage", [], self._attrs(), name=name or f"{self._name}_get")
        return self._result(op)

    def peek(self, index, name=None):
        """The element at `index` (0: the oldest), left in place; blocks until it exists."""
        with colocate_with(self._coloc_op):
            index = convert_to_tensor(index, dtype=_dtypes.int32)
            op = make_op("StagePeek", [index], self._attrs(),
                         name=name or f"{self._name}_peek")
        return self._result(op)

    def size(self, name=None) -> Tensor:
        """A scalar int32 tensor: the number of elements in the area."""
        return make_op("StageSize", [], self._attrs(),
                       name=name or f"{self._name}_size").outputs[0]

    def clear(self, name=None):
        """An op removing every element."""
        return make_op("StageClear", [], self._attrs(), name=name or f"{self._name}_clear")

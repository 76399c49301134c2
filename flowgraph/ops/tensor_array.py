"""`tf.TensorArray`: a list of tensors written and read by index inside a graph.

Each method that changes the array (``write``, ``scatter``, ``unstack``, ``split``)
returns a *new* `TensorArray` object with the same handle and a new ``flow``; use the
returned object (in a `tf.while_loop`, carry its ``flow`` as a loop variable and rebuild
the array with ``TensorArray(dtype, handle=..., flow=...)``, which is what `tf.map_fn`,
`tf.scan` and `tf.nn.dynamic_rnn` do). With ``infer_shape=True`` (the default) the
arrays derived from one another share their static element shape, learned from the
first write and checked on every later one; reads then have that static shape.

The ops and their run-time semantics are described in ``tensor_array_ops.py``.

Example
-------
>>> import flowgraph as tf
>>> ta = tf.TensorArray(tf.float32, size=3).unstack([1.0, 2.0, 3.0])
>>> with tf.Session() as sess:
...     print(sess.run(ta.read(2)))
3.0
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant_value, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import array_gen_ops, array_shape_ops
from flowgraph.ops import tensor_array_ops as _ops

__all__ = ["TensorArray"]


class TensorArray:
    """A graph-side array of tensors of one dtype, indexed by an int32 scalar.

    Arguments follow TensorFlow 1.x: `size` (the initial number of elements),
    `dynamic_size` (let writes past the end grow it), `clear_after_read` (default True:
    an element can be read once, freeing it), `infer_shape` (check that every element
    has one shape and give reads that static shape), `element_shape` (the shape known
    in advance). `handle` and `flow` wrap an existing array instead of creating one.

    Example
    -------
    >>> import flowgraph as tf
    >>> ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    >>> ta = ta.write(0, [1, 2]).write(1, [3, 4])
    >>> with tf.Session() as sess:
    ...     n, flat = sess.run([ta.size(), ta.concat()])
    >>> print(n, flat.tolist())
    2 [1, 2, 3, 4]
    """

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape: bool = True,
                 element_shape=None, colocate_with_first_write_call: bool = True,
                 name=None) -> None:
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._dynamic_size = bool(dynamic_size)
        self._clear_after_read = True if clear_after_read is None else bool(clear_after_read)
        self._infer_shape = bool(infer_shape)
        shape = as_shape(element_shape)
        self._element_shape = [shape]  # shared with the arrays derived from this one
        self._static_size = None
        self._size_arg = size  # what `size()` returns for a fixed-size array, as TF does
        if handle is not None:
            if size is not None:
                raise ValueError("TensorArray: give either `handle` (wrap an existing "
                                 "array) or `size` (make a new one), not both.")
            if flow is None:
                raise ValueError("TensorArray: wrapping an existing array with `handle` "
                                 "needs its `flow` too.")
            self._handle = handle
            self._flow = flow
            return
        if size is None:
            raise ValueError("TensorArray: `size` must be given when creating a new array "
                             "(use size=0 with dynamic_size=True for an array that grows).")
        if flow is not None:
            raise ValueError("TensorArray: `flow` may only be given together with `handle`.")
        with name_scope(name, "TensorArray", [size]) as scope:
            size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
            known = constant_value(size)
            self._static_size = None if known is None else int(known)
            self._handle, self._flow = _ops.tensor_array_v3(
                size, self._dtype, element_shape=shape, dynamic_size=self._dynamic_size,
                clear_after_read=self._clear_after_read,
                identical_element_shapes=self._infer_shape,
                tensor_array_name=tensor_array_name or scope[:-1], name=scope)

    # -- properties ---------------------------------------------------------------------
    @property
    def dtype(self):
        """The dtype of the elements."""
        return self._dtype

    @property
    def handle(self) -> Tensor:
        """The string scalar naming the array (its run-time value is the array)."""
        return self._handle

    @property
    def flow(self) -> Tensor:
        """A float32 scalar that orders the ops on the array; carry it through loops."""
        return self._flow

    @property
    def element_shape(self) -> TensorShape:
        """The static shape of the elements known so far."""
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        return self._dynamic_size

    def _derive(self, flow: Tensor) -> TensorArray:
        ta = TensorArray(self._dtype, handle=self._handle, flow=flow,
                         infer_shape=self._infer_shape)
        ta._element_shape = self._element_shape
        ta._dynamic_size = self._dynamic_size
        ta._clear_after_read = self._clear_after_read
        ta._static_size = self._static_size
        ta._size_arg = self._size_arg
        return ta

    def _merge_element_shape(self, shape: TensorShape) -> None:
        if not self._infer_shape:
            return
        current = self._element_shape[0]
        if not current.is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {shape} but expected {current} "
                             f"(TensorArray {self._handle.op.name}: every element must have "
                             "one shape; create it with infer_shape=False otherwise)")
        self._element_shape[0] = current.merge_with(shape)

    def _check_dtype(self, value: Tensor, what: str) -> None:
        if value.dtype.base_dtype != self._dtype:
            raise TypeError(f"TensorArray {self._handle.op.name} holds "
                            f"{self._dtype.name} but {what} got a "
                            f"{value.dtype.base_dtype.name} value ({value.name}).")

    # -- methods ------------------------------------------------------------------------
    def identity(self) -> TensorArray:
        """A new TensorArray object on the same array whose flow passes `tf.identity`
        (so reads of it wait for the control dependencies in force here)."""
        from flowgraph.ops.array_identity_ops import identity

        return self._derive(identity(self._flow))

    def grad(self, source: str, flow=None, name=None) -> TensorArray:
        """The gradient array of this one for gradient pass `source`."""
        flow = self._flow if flow is None else flow
        with name_scope(name, "TensorArrayGrad", [self._handle]):
            g_handle, g_flow = _ops.tensor_array_grad_v3(self._handle, flow, source)
        g = TensorArray(self._dtype, handle=g_handle, flow=g_flow,
                        infer_shape=self._infer_shape)
        g._element_shape = self._element_shape
        return g

    def read(self, index, name=None) -> Tensor:
        """The element at `index` (an int32 scalar)."""
        value = _ops.tensor_array_read_v3(self._handle, index, self._flow, self._dtype,
                                          name=name)
        if self._infer_shape:
            value.set_shape(self._element_shape[0])
        return value

    def write(self, index, value, name=None) -> TensorArray:
        """Write `value` at `index`; returns the array to use from now on."""
        with name_scope(name, "TensorArrayWrite", [self._handle, index, value]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value, "write")
            self._merge_element_shape(value.shape)
            flow = _ops.tensor_array_write_v3(self._handle, index, value, self._flow)
        return self._derive(flow)

    def gather(self, indices, name=None) -> Tensor:
        """The elements at `indices`, stacked along a new first axis."""
        elem = self._element_shape[0] if self._infer_shape else TensorShape(None)
        value = _ops.tensor_array_gather_v3(self._handle, indices, self._flow, self._dtype,
                                            elem, name=name)
        if elem.ndims is not None:
            value.set_shape(TensorShape([None]).concatenate(elem))
        return value

    def stack(self, name=None) -> Tensor:
        """All elements stacked along a new first axis."""
        with name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(array_gen_ops.range(0, self.size()), name=name)
        elem = self._element_shape[0]
        if self._infer_shape and elem.ndims is not None and not self._dynamic_size \
                and self._static_size is not None:
            value.set_shape(TensorShape([self._static_size]).concatenate(elem))
        return value

    def concat(self, name=None) -> Tensor:
        """All elements concatenated along their first axis."""
        elem = self._element_shape[0]
        rest = elem[1:] if self._infer_shape and elem.ndims else TensorShape(None)
        value, _ = _ops.tensor_array_concat_v3(self._handle, self._flow, self._dtype, rest,
                                               name=name)
        if elem.ndims:
            # as TF: the size is asked for (a Const, or a TensorArraySizeV3 op) to size dim 0
            dim0 = None
            if self._infer_shape:
                n = constant_value(self.size())
                if n is not None and elem[0].value is not None:
                    dim0 = int(n) * elem[0].value
            value.set_shape(TensorShape([dim0]).concatenate(elem[1:]))
        return value

    def scatter(self, indices, value, name=None) -> TensorArray:
        """Write row k of `value` at ``indices[k]``."""
        with name_scope(name, "TensorArrayScatter", [self._handle, value, indices]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value, "scatter")
            if value.shape.ndims:
                self._merge_element_shape(value.shape[1:])
            flow = _ops.tensor_array_scatter_v3(self._handle, indices, value, self._flow)
        return self._derive(flow)

    def unstack(self, value, name=None) -> TensorArray:
        """Write row i of `value` at index i."""
        with name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            count = array_shape_ops.shape(value)[0]
            return self.scatter(array_gen_ops.range(0, count), value)

    def split(self, value, lengths, name=None) -> TensorArray:
        """Write consecutive slices of `value` (along axis 0), of the given `lengths`."""
        with name_scope(name, "TensorArraySplit", [self._handle, value, lengths]):
            value = convert_to_tensor(value, preferred_dtype=self._dtype, name="value")
            self._check_dtype(value, "split")
            lengths = convert_to_tensor(lengths, dtype=_dtypes.int64, name="lengths")
            known = constant_value(lengths)
            if value.shape.ndims and known is not None and len(set(known.tolist())) == 1:
                self._merge_element_shape(
                    TensorShape([int(known[0])]).concatenate(value.shape[1:]))
            flow = _ops.tensor_array_split_v3(self._handle, value, lengths, self._flow)
        return self._derive(flow)

    def size(self, name=None) -> Tensor:
        """The number of elements (an int32 scalar); for a fixed-size array, the size it
        was created with (no op reads the array)."""
        if not self._dynamic_size and self._size_arg is not None:
            return convert_to_tensor(self._size_arg, dtype=_dtypes.int32)
        return _ops.tensor_array_size_v3(self._handle, self._flow, name=name)

    def close(self, name=None) -> Operation:
        """Drop every element."""
        return _ops.tensor_array_close_v3(self._handle, name=name)

    def __repr__(self) -> str:
        return (f"<tf.TensorArray '{self._handle.op.name}' dtype={self._dtype.name} "
                f"element_shape={self._element_shape[0]}>")


# -- TensorArrays as loop variables ---------------------------------------------------------
def arrays_to_flows(leaves: list) -> tuple[list, list]:
    """Replace each TensorArray in `leaves` (flattened loop variables) by its flow;
    returns ``(values, templates)`` where ``templates[k]`` is the array at position k or
    None. `tf.while_loop` carries the flows and rebuilds the arrays with
    `flows_to_arrays`, as TensorFlow 1.x does for TensorArrays in ``loop_vars``.

    Example
    -------
    >>> import flowgraph as tf
    >>> ta = tf.TensorArray(tf.float32, size=2)
    >>> values, templates = arrays_to_flows([tf.constant(0), ta])
    >>> values[1] is ta.flow, templates[1] is ta
    (True, True)
    """
    templates = [leaf if isinstance(leaf, TensorArray) else None for leaf in leaves]
    return [leaf.flow if t is not None else leaf for leaf, t in zip(leaves, templates)], \
        templates


def flows_to_arrays(values: list, templates: list) -> list:
    """The inverse of `arrays_to_flows`: flows at the templates' positions become
    TensorArrays on the same handles (sharing their element shapes).

    Example
    -------
    >>> import flowgraph as tf
    >>> ta = tf.TensorArray(tf.float32, size=2)
    >>> flows_to_arrays([ta.flow], [ta])[0].handle is ta.handle
    True
    """
    return [t._derive(v) if t is not None and not isinstance(v, TensorArray) else v
            for v, t in zip(values, templates)]

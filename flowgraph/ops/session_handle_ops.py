"""Session tensor handles: keep a computed value in the session between runs.

`get_session_handle(t)` is a string tensor; fetching it stores ``t``'s value in the
session and returns a `TensorHandle` naming it. A later run reads the value back through
`get_session_tensor` (feed the handle to its placeholder, or feed the `TensorHandle`
object straight to a tensor of the value's type), and `delete_session_tensor` or
`TensorHandle.delete` frees it. Values live until deleted, until the `TensorHandle`
object is garbage collected, or until the session is (kernels:
`flowgraph/backends/cpu/kernels_session_handle.py`).

Example
-------
>>> import flowgraph as tf
>>> x = tf.constant([1.0, 2.0]) * 3.0
>>> with tf.Session() as sess:
...     h = sess.run(tf.get_session_handle(x))
...     holder, value = tf.get_session_tensor(h.handle, tf.float32)
...     print(sess.run(value + 1.0, feed_dict={holder: h.handle}))
[4. 7.]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.graph import colocate_with
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops.array_ops import placeholder
from flowgraph.ops.op_util import fixed_dtype, make_op

__all__ = ["TensorHandle", "delete_session_tensor", "get_session_handle",
           "get_session_tensor"]

register_op("GetSessionHandle", dtype_fn=fixed_dtype(_dtypes.string), stateful=True)(
    lambda op, value: [TensorShape([])])
register_op("GetSessionTensor", attrs={"dtype": None},
            dtype_fn=lambda op: [_dtypes.as_dtype(op.attrs["dtype"])], stateful=True)(
    lambda op, handle: [TensorShape(None)])
register_op("DeleteSessionTensor", num_outputs=0, dtype_fn=lambda op: [], stateful=True)(
    lambda op, handle: [])
not_differentiable("GetSessionHandle", "GetSessionTensor", "DeleteSessionTensor")


class TensorHandle:
    """A value kept in a session, as returned by fetching a `get_session_handle` tensor.

    Feed it to a tensor of its dtype to use the value in a later run, `eval()` it to get
    the value back, `delete()` it to free the value.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     h = sess.run(tf.get_session_handle(tf.constant(7)))
    ...     print(h.eval())
    ...     h.delete()
    7
    """

    def __init__(self, handle: str, dtype, session, store: dict) -> None:
        self._handle = handle
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._session = session
        self._store = store

    @property
    def handle(self) -> str:
        """The handle string naming the value in its session."""
        return self._handle

    def get_raw_handle(self) -> str:
        """The handle string (TensorFlow's spelling)."""
        return self._handle

    def __str__(self) -> str:
        return self._handle

    def __del__(self) -> None:
        # As in TensorFlow, the value goes with the last TensorHandle object naming it.
        store = getattr(self, "_store", None)
        if store is not None:
            store.pop(self._handle, None)

    def _value(self):
        try:
            return self._store[self._handle]
        except KeyError:
            raise TypeError(
                f"Persistent tensor {self._handle} may have already been deleted (by "
                "TensorHandle.delete() or tf.delete_session_tensor).") from None

    def __array__(self, dtype=None, copy=None):
        value = self._value()
        return np.asarray(value, dtype=dtype) if dtype is not None else np.asarray(value)

    def eval(self):
        """The stored value, read back by a run of its session."""
        self._value()
        graph = self._session.graph
        holder, reader = _cached(graph, ("reader", self._dtype),
                                 lambda: get_session_tensor(self._handle, self._dtype))
        return self._session.run(reader, feed_dict={holder: self._handle})

    def to_numpy_array(self):
        """The stored value as a NumPy array, without running a step."""
        return np.asarray(self._value())

    def delete(self) -> None:
        """Free the stored value (a run of its session)."""
        self._value()
        graph = self._session.graph
        holder, deleter = _cached(graph, ("deleter",),
                                  lambda: delete_session_tensor(self._handle))
        self._session.run(deleter, feed_dict={holder: self._handle})


def _cached(graph, key, build):
    cache = graph.__dict__.setdefault("_session_handle_ops", {})
    if key not in cache:
        with graph.as_default():
            cache[key] = build()
    return cache[key]


def get_session_handle(data: Tensor, name: str | None = None) -> Tensor:
    """A scalar string tensor: fetching it keeps `data`'s value in the session and
    returns a `TensorHandle`.

    Example
    -------
    >>> import flowgraph as tf
    >>> h = tf.get_session_handle(tf.constant(1.0))
    >>> h.op.type, h.dtype.name
    ('GetSessionHandle', 'string')
    """
    if not isinstance(data, Tensor):
        raise TypeError(f"`data` must be of type Tensor, got {type(data).__name__}: "
                        f"{data!r:.60}. Convert it with tf.convert_to_tensor first.")
    with colocate_with(data):
        return make_op("GetSessionHandle", [data], name=name or "GetSessionHandle").outputs[0]


def get_session_tensor(handle, dtype, name: str | None = None) -> tuple[Tensor, Tensor]:
    """``(holder, tensor)``: feed a handle string to the string placeholder `holder` and
    `tensor` is the stored value, of type `dtype`.

    Example
    -------
    >>> import flowgraph as tf
    >>> holder, value = tf.get_session_tensor("h", tf.float32)
    >>> holder.dtype.name, value.op.type
    ('string', 'GetSessionTensor')
    """
    dtype = _dtypes.as_dtype(dtype).base_dtype
    holder = placeholder(_dtypes.string)
    tensor = make_op("GetSessionTensor", [holder], {"dtype": dtype},
                     name=name or "GetSessionTensor").outputs[0]
    return holder, tensor


def delete_session_tensor(handle, name: str | None = None) -> tuple[Tensor, Operation]:
    """``(holder, deleter)``: running `deleter` with a handle string fed to `holder`
    frees the stored value.

    Example
    -------
    >>> import flowgraph as tf
    >>> holder, deleter = tf.delete_session_tensor("h")
    >>> deleter.type
    'DeleteSessionTensor'
    """
    holder = placeholder(_dtypes.string)
    deleter = make_op("DeleteSessionTensor", [holder], name=name or "DeleteSessionTensor")
    return holder, deleter

"""`Operation` (a node of the graph) and `Tensor` (one output of a node, ``"op:port"``).

Neither holds data: a `Tensor` is a symbolic handle whose value exists only while a
`Session.run` step executes. Arithmetic operators, indexing and iteration on tensors are
installed by `flowgraph.ops` (see `install_tensor_operator`) so this layer never imports
the op library (``tests/test_layering.py`` checks it).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.session_stack import get_default_session
from flowgraph.framework.tensor_shape import TensorShape, as_shape

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_source_location() -> tuple[str, int, str] | None:
    """The innermost stack frame outside the flowgraph package: (file, line, code)."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) or "/tests/" in filename:
            if not filename.startswith("<frozen"):
                return (filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


class OperatorNotAllowedInGraphError(TypeError):
    """A Python operator that needs a tensor's value (``bool(t)``, ``for x in t``) was
    used on a symbolic tensor; TensorFlow's graph mode raises this TypeError subclass.

    >>> issubclass(OperatorNotAllowedInGraphError, TypeError)
    True
    """


class Operation:
    """A node in a `Graph`: an op type applied to input tensors, with attributes.

    Example
    -------
    >>> import flowgraph as tf
    >>> c = tf.constant(1.0, name="c")
    >>> c.op.name, c.op.type
    ('c', 'Const')
    """

    def __init__(self, graph, op_def, name: str, inputs, attrs: dict[str, Any],
                 control_inputs, device: str):
        self._graph = graph
        self._op_def = op_def
        self._name = name
        self._inputs = list(inputs)
        self._attrs = attrs
        self._control_inputs = list(control_inputs)
        self._device = device
        self._outputs: list[Tensor] = []
        self._colocation: list[str] = []
        self._source = user_source_location()
        self._id = graph._next_op_id()
        self._control_outputs: list[Operation] = []

    # -- identity -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._op_def.name

    @property
    def op_def(self):
        return self._op_def

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        """The op's input tensors (a tuple, as TensorFlow 2.15 returns them)."""
        return tuple(self._inputs)

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    @property
    def _input_types(self) -> list:
        """The dtypes of the inputs (TensorFlow's private property, read by tools)."""
        return [t.dtype for t in self._inputs]

    @property
    def _output_types(self) -> list[int]:
        """The DataType enums of the outputs (TensorFlow gives enums here, not dtypes)."""
        return [t.dtype.as_datatype_enum for t in self._outputs]

    def values(self) -> tuple:
        return tuple(self._outputs)

    @property
    def control_inputs(self) -> list[Operation]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        return self._device

    def _set_device(self, device: str) -> None:
        self._device = device

    @property
    def node_def(self):
        """This node as TensorFlow's ``NodeDef`` message, built on each access: ``.name``,
        ``.op``, ``.input`` (``"x"`` for output 0, ``"^x"`` for a control input),
        ``.device`` and ``.attr`` (``AttrValue`` messages, type attributes such as ``T``
        included); ``str()`` gives the text format.

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     y = tf.identity(tf.constant(1.0, name="c"), name="y")
        >>> nd = y.op.node_def
        >>> nd.op, list(nd.input), nd.attr["T"].type
        ('Identity', ['c'], 1)
        """
        from flowgraph.framework.tf_formats.graph_def import node_def_of_op

        return node_def_of_op(self)

    def colocation_groups(self) -> list[bytes]:
        """The colocation groups (``b'loc:@op_name'``) of this op, as in TensorFlow.

        An op is always in its own group; ops created inside ``tf.colocate_with(x)`` are
        in the groups of ``x`` instead.
        """
        return [f"loc:@{n}".encode() for n in (self._colocation or (self._name,))]

    def get_attr(self, name: str):
        """The value of attribute `name` (ValueError if the op has no such attribute), of
        the Python type TensorFlow's ``get_attr`` gives: ``bytes`` for strings
        (``b"SAME"``), `DType` for types, ``TensorShapeProto`` for shapes, ``TensorProto``
        for tensors (``Const``'s ``value``), floats rounded to float32, lists of these.

        ``'_class'`` gives the colocation groups set by ``tf.colocate_with``. A type or
        count attribute that flowgraph derives from the inputs (``T``, ``Tshape``,
        ``Index``, ...) is read from the op's `node_def`, as TensorFlow stores it.
        """
        try:
            value = self._attrs[name]
        except KeyError:
            pass
        else:
            return _tf_attr_value(value)
        if name == "_class" and self._colocation:
            return [f"loc:@{n}".encode() for n in self._colocation]
        if name == "_gradient_op_type" and hasattr(self, "_gradient_override_name"):
            return self._gradient_override_name.encode()  # set by gradient_override_map
        if name == "T" and not self._inputs and self._outputs:
            return self._outputs[0].dtype.base_dtype
        from flowgraph.framework.tf_formats.graph_def import node_def_of_op

        try:
            attr = node_def_of_op(self).attr
        except (ValueError, TypeError, KeyError):  # no TensorFlow form: nothing derived
            attr = {}
        if name in attr:
            return _attr_value_as_tf(attr[name])
        if name == "T" and self._inputs:
            return self._inputs[0].dtype.base_dtype
        raise ValueError(
            f"Operation '{self._name}' ({self.type}) has no attr named '{name}'; its "
            f"attrs are {sorted(self._attrs)}."
        )

    @property
    def traceback(self) -> list[tuple[str, int, str, str]]:
        """Where the op was created: ``[(filename, lineno, function, source line)]``."""
        if not self._source:
            return []
        import linecache

        filename, lineno, func = self._source
        return [(filename, lineno, func, linecache.getline(filename, lineno).strip())]

    @property
    def attrs(self) -> dict[str, Any]:
        return self._attrs

    def _add_control_input(self, op: Operation) -> None:
        if op not in self._control_inputs:
            self._control_inputs.append(op)
            op._control_outputs.append(self)
            self._graph._version += 1

    def _add_control_inputs(self, ops) -> None:
        for op in ops:
            self._add_control_input(op)

    def _remove_all_control_inputs(self) -> None:
        """Drop every control input of this op (a graph edit: plans are recompiled)."""
        for op in self._control_inputs:
            if self in op._control_outputs:
                op._control_outputs.remove(self)
        self._control_inputs = []
        self._graph._note_edit()

    def _update_input(self, index: int, tensor: Tensor) -> None:
        """Make `tensor` input `index` of this op, in place (TensorFlow's private method,
        used by graph editors); sessions recompile the plans they made before.

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     a, b = tf.constant(1.0, name="a"), tf.constant(2.0, name="b")
        ...     y = tf.identity(a, name="y")
        ...     y.op._update_input(0, b)
        >>> [t.name for t in y.op.inputs], [op.name for op in b.consumers()]
        (['b:0'], ['y'])
        """
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Operation '{self._name}': _update_input expects a Tensor, "
                            f"got {type(tensor).__name__}")
        if tensor._op._graph is not self._graph:
            raise ValueError(f"Operation '{self._name}': tensor '{tensor.name}' is from "
                             "another graph")
        old = self._inputs[index]
        if old._dtype.base_dtype != tensor._dtype.base_dtype:
            raise TypeError(
                f"Operation '{self._name}' ({self.type}): input {index} expects "
                f"{old._dtype.base_dtype.name}, but '{tensor.name}' is "
                f"{tensor._dtype.base_dtype.name}")
        self._inputs[index] = tensor
        if self in old._consumers:  # one entry per input slot, as create_op adds them
            old._consumers.remove(self)
        tensor._consumers.append(self)
        self._graph._note_edit()

    def run(self, feed_dict=None, session=None) -> None:
        """Run this op in `session` (default: the default session)."""
        sess = _session_for(self._graph, session, "execute operation", "run()")
        sess.run(self, feed_dict=feed_dict)

    # -- messages -----------------------------------------------------------------------
    def source_line(self) -> str:
        """Where the user created this op, as ``file:line`` with the code, or ''."""
        if not self._source:
            return ""
        filename, lineno, _ = self._source
        code = ""
        try:
            import linecache

            code = linecache.getline(filename, lineno).strip()
        except Exception:  # pragma: no cover - best effort only
            code = ""
        where = f"{os.path.basename(filename)}:{lineno}"
        return f"{where}:  {code}" if code else where

    def describe_inputs(self) -> str:
        return ", ".join(
            f"{t.name}={t.shape} {t.dtype.name}" for t in self._inputs
        )

    def shape_error(self, message: str) -> ValueError:
        """A ValueError for a shape/dtype problem found while building this op."""
        where = self.source_line()
        text = (
            f"Incompatible shapes for op '{self._name}' ({self.type}): "
            f"{self.describe_inputs() or 'no inputs'}: {message}."
        )
        if where:
            text += f" The op was created at {where}"
        return ValueError(text)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self.type}>"

    def __str__(self) -> str:
        return str(self.node_def)  # the NodeDef's text format, as TensorFlow prints an op


class Tensor:
    """A symbolic handle to output `value_index` of operation `op`.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.placeholder(tf.float32, [None, 3], name="x")
    >>> x.name, x.shape.as_list()
    ('x:0', [None, 3])
    """

    # Make NumPy defer to our reflected operators (ndarray + Tensor -> Tensor.__radd__).
    __array_priority__ = 100
    __array_ufunc__ = None

    def __init__(self, op: Operation, value_index: int, dtype, shape: TensorShape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._consumers: list[Operation] = []

    @property
    def op(self) -> Operation:
        return self._op

    @property
    def graph(self):
        return self._op._graph

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def name(self) -> str:
        return f"{self._op._name}:{self._value_index}"

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self) -> str:
        return self._op._device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    @property
    def ndim(self) -> int:
        """The static rank, -1 when unknown (as TensorFlow's graph tensors)."""
        rank = self._shape.rank
        return -1 if rank is None else rank

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        """Merge `shape` into this tensor's static shape (ValueError if incompatible).

        Example
        -------
        >>> import flowgraph as tf
        >>> x = tf.placeholder(tf.float32, [None, 3])
        >>> x.set_shape([2, None])
        >>> x.shape.as_list()
        [2, 3]
        """
        shape = as_shape(shape)
        try:
            merged = self._shape.merge_with(shape)
        except ValueError as e:
            raise ValueError(
                f"Tensor '{self.name}' has static shape {self._shape}, which is not "
                f"compatible with the requested shape {shape} ({e})"
            ) from None
        if merged != self._shape:  # an unchanged shape keeps its object (graph-def snapshots)
            self._shape = merged

    def consumers(self) -> list[Operation]:
        return list(self._consumers)

    def eval(self, feed_dict=None, session=None):
        """The value of this tensor in `session` (default: the default session)."""
        sess = _session_for(self._op._graph, session, "evaluate tensor", "eval()")
        return sess.run(self, feed_dict=feed_dict)

    def ref(self) -> Reference:
        """A hashable reference to this tensor (``t.ref().deref() is t``)."""
        return Reference(self)

    experimental_ref = ref

    # -- Python protocol ----------------------------------------------------------------
    # Equality and hashing are object identity (TF1 semantics, so tensors can key dicts);
    # inheriting object's C implementations keeps dict lookups in Session.run fast.

    def __bool__(self) -> bool:
        raise OperatorNotAllowedInGraphError(
            f"Using a flowgraph Tensor ('{self.name}') as a Python bool is not allowed: "
            "its value exists only inside Session.run. Use tf.cond to branch on it."
        )

    def __iter__(self):
        # Replaced by `flowgraph.ops.array_join_ops` (with a message naming tf.unstack).
        raise OperatorNotAllowedInGraphError(
            f"Iterating over a symbolic Tensor ('{self.name}') is not allowed in graph mode.")

    def __len__(self) -> int:
        raise TypeError(
            f"len is not well defined for a symbolic Tensor ('{self.name}'). Use "
            "`x.shape` for the static shape or tf.shape(x) for the dynamic one."
        )

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(
            f"Cannot convert a symbolic Tensor ('{self.name}') to a NumPy array: its value "
            "exists only inside Session.run. Fetch it with sess.run() first, or use "
            "flowgraph ops instead of NumPy functions on it."
        )

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self) -> str:
        # as TensorFlow, an unknown rank leaves the shape out
        shape = f", shape={self._shape}" if self._shape.rank is not None else ""
        return f'Tensor("{self.name}"{shape}, dtype={self._dtype.name})'

    def _as_ref(self) -> bool:
        return self._dtype.is_ref_dtype


class Reference:
    """A hashable, identity-compared wrapper of a `Tensor` (what ``t.ref()`` returns)."""

    __slots__ = ("_obj",)

    def __init__(self, obj) -> None:
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self) -> int:
        return id(self._obj)

    def __eq__(self, other) -> bool:
        return isinstance(other, Reference) and other._obj is self._obj

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._obj!r}>"


def _session_for(graph, session, what: str, call: str):
    """The session to run `what` in: `session`, else the default one, on `graph`."""
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(
                f"Cannot {what} using `{call}`: no default session is registered. Use "
                f"`with sess.as_default():` or pass an explicit session to "
                f"`{call[:-1]}session=sess)`."
            )
        which = "the default session"
    else:
        which = "the given session"
    if getattr(session, "graph", graph) is not graph:
        raise ValueError(
            f"Cannot use {which} to {what}: the tensor's graph is different from the "
            "session's graph. Pass a session built on this graph (tf.Session(graph=g))."
        )
    return session


def install_tensor_operator(name: str, fn) -> None:
    """Install ``Tensor.<name> = fn``; used by `flowgraph.ops` to add arithmetic."""
    setattr(Tensor, name, fn)


def is_dtype_ref(dtype) -> bool:
    return _dtypes.as_dtype(dtype).is_ref_dtype


def _tf_attr_value(value):
    """An attribute value as TensorFlow's ``Operation.get_attr`` returns it (from the
    ``AttrValue`` it stores): bytes, float32-rounded floats, TensorShapeProto, TensorProto."""
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, float | np.floating):
        return float(np.float32(value))
    if isinstance(value, TensorShape):
        return value.as_proto()
    if isinstance(value, np.ndarray):
        from flowgraph.framework.tf_formats.graph_def import tensor_proto

        return tensor_proto(value)
    if isinstance(value, list | tuple) and value:
        if all(isinstance(v, str | float | np.floating | TensorShape | np.ndarray)
               and not isinstance(v, bool) for v in value):
            return [_tf_attr_value(v) for v in value]
    return value


def _attr_value_as_tf(proto):
    """The Python value of an ``AttrValue`` message, as TensorFlow's ``get_attr``."""
    from flowgraph.framework import dtypes

    field = proto.WhichOneof("value")
    if field is None:
        return []
    if field == "list":
        lv = proto.list
        for name in ("s", "i", "f", "b", "type", "shape", "tensor"):
            items = list(getattr(lv, name))
            if items:
                return [dtypes.as_dtype(int(t)) for t in items] if name == "type" else items
        return []
    if field == "type":
        return dtypes.as_dtype(int(proto.type))
    return getattr(proto, field)

"""`ResourceVariable`: a variable reached through a handle, as TensorFlow 2's ``compat.v1``
builds with ``use_resource=True`` or after ``tf.enable_resource_variables()``.

Its graph (for ``tf.Variable([1.0, 2.0], name="v", use_resource=True)``)::

    v/Initializer/initial_value   Const
    v                             VarHandleOp        (v.handle, dtype resource)
    v/IsInitialized/VarIsInitializedOp
    v/Assign                      AssignVariableOp   (v.initializer)
    v/Read/ReadVariableOp         ReadVariableOp     (what sess.run(v) fetches)

``v.dtype`` is the value's dtype (``float32``, no ``_ref``); ``v.value()`` adds a new
``ReadVariableOp`` where it is called (so it obeys the enclosing control dependencies);
``assign*`` and ``scatter_*`` return the updated variable as a lazily read
`_UnreadVariable` (or the op with ``read_value=False``); ``sparse_read`` and
``tf.gather``/``tf.nn.embedding_lookup`` on the variable are ``ResourceGather``, whose
gradient is an `IndexedSlices`. The storage is the session's `VariableState` of the
variable's name, the one a reference variable of that name would use.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
...     up = v.assign_add([1.0, 1.0])
...     print(type(v).__name__, v.dtype.name, v.op.type, v.handle.dtype.name)
...     with tf.Session() as sess:
...         sess.run(v.initializer)
...         print(sess.run(up))
ResourceVariable float32 VarHandleOp resource
[2. 3.]
"""

from __future__ import annotations

import numpy as np

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph, get_default_session
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import resource_variable_ops as _rv
from flowgraph.ops import variables as _variables
from flowgraph.ops.variables import Variable, checked_arguments, checked_distribution

__all__ = ["ResourceVariable", "is_resource_variable"]


def is_resource_variable(var) -> bool:
    """True for a `ResourceVariable` (or a value that behaves as one)."""
    return isinstance(var, ResourceVariable) or hasattr(var, "_should_act_as_resource_variable")


class ResourceVariable(Variable):
    """A variable whose ops take its handle (``VarHandleOp``); see the module docstring.

    Made by ``tf.Variable(..., use_resource=True)``, ``tf.get_variable(...,
    use_resource=True)``, a ``variable_scope(use_resource=True)``, and by every variable
    after ``tf.enable_resource_variables()``. The constructor takes `tf.Variable`'s
    arguments.
    """

    def __init__(self, initial_value=None, trainable: bool | None = None,
                 collections: list[str] | None = None, validate_shape: bool = True,
                 caching_device=None, name: str | None = None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None,
                 shape=None) -> None:
        self._synchronization, self._aggregation, trainable = checked_distribution(
            synchronization, aggregation, trainable, name)
        trainable, collections = checked_arguments(initial_value, trainable, collections,
                                                   constraint)
        graph = get_default_graph()
        init_from_fn = callable(initial_value)
        with graph.control_dependencies(None), graph.name_scope(name or "Variable") as scope:
            var_name = scope[:-1]
            with graph.name_scope("Initializer"), graph.device(None):
                value = initial_value() if init_from_fn else initial_value
                initial = convert_to_tensor(value, dtype=dtype, name="initial_value")
            # As TensorFlow: the initial value's static shape (partly known is fine),
            # with or without validate_shape, unless `shape` is given.
            var_shape = as_shape(shape) if shape is not None else initial.shape
            self._dtype = initial.dtype.base_dtype
            self._shape = var_shape
            self._handle = _rv.var_handle_op(self._dtype, var_shape, shared_name=var_name,
                                             name=scope)
            # Placement keeps every op taking the handle on the handle's device; the
            # initializer and the read carry its device too, as in TensorFlow.
            with graph.name_scope("IsInitialized"):
                self._is_initialized_op = _rv.var_is_initialized_op(self._handle)
            with graph.name_scope("Assign") as assign_scope, \
                    graph.device(self._handle.device):
                self._initializer_op = _rv.assign_variable_op(
                    self._handle, initial, name=assign_scope, validate_shape=validate_shape)
            with graph.name_scope("Read"), graph.device(self._handle.device):
                self._graph_element = self._read()
        self._variable = self._handle
        self._snapshot = self._graph_element
        self._initial_value = initial
        self._trainable = trainable
        self._constraint = constraint
        self._caching_device = caching_device
        self._save_slice_info = None
        self._parent_op = None
        graph.add_to_collections(collections, self)

    # -- reads ------------------------------------------------------------------------
    def _read(self, name=None) -> Tensor:
        return _rv.read_variable_op(self._handle, self._dtype, name=name)

    def _read_after_parent(self) -> Tensor:
        if self._parent_op is None:
            return self._read()
        with self.graph.control_dependencies([self._parent_op]):
            return self._read()

    def _as_graph_element(self) -> Tensor:
        return self._graph_element

    def _ref(self) -> Tensor:
        """The handle: what `tf.gradients` differentiates with respect to."""
        return self._handle

    @property
    def handle(self) -> Tensor:
        """The scalar ``resource`` tensor of the ``VarHandleOp``."""
        return self._handle

    def value(self) -> Tensor:
        """A new ``ReadVariableOp`` of the variable, made here."""
        return self._read_after_parent()

    def read_value(self) -> Tensor:
        """``Read/ReadVariableOp`` and its ``Identity``, made here."""
        from flowgraph.ops.array_ops import identity

        with self.graph.name_scope("Read"):
            value = self._read_after_parent()
        return identity(value)

    def sparse_read(self, indices, name=None) -> Tensor:
        """Rows `indices` of the variable: ``ResourceGather`` named ``Gather``."""
        with self.graph.name_scope(name or "Gather") as scope:
            return _rv.resource_gather(self._handle, indices, self._dtype, name=scope)

    def gather_nd(self, indices, name=None) -> Tensor:
        """Slices addressed by `indices`' last dimension: ``ResourceGatherNd`` (as TF)."""
        from flowgraph.framework import dtypes as _dtypes
        from flowgraph.ops.op_util import make_tensor

        with self.graph.name_scope(name or "GatherNd") as scope:
            idx = convert_to_tensor(indices, preferred_dtype=_dtypes.int32, name="indices")
            return make_tensor("ResourceGatherNd", [self._handle, idx], {
                "dtype": self._dtype, "Tindices": idx.dtype.base_dtype}, name=scope)

    def initialized_value(self):
        """Not available for resource variables, as in TensorFlow 2.15 (use
        `read_value`, with the initializer run first)."""
        raise NotImplementedError(
            f"ResourceVariable.initialized_value ('{self.op.name}'): TensorFlow 2 does not "
            "provide it for resource variables; run the initializer and use "
            "read_value() (or initial_value) instead")

    def is_initialized(self, name=None) -> Tensor:
        return _rv.var_is_initialized_op(self._handle, name=name)

    # -- attributes -------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape) -> None:
        self._shape = self._shape.merge_with(as_shape(shape))

    @property
    def create(self) -> Operation:
        return self._initializer_op

    def __repr__(self) -> str:
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    # -- writes -----------------------------------------------------------------------
    def _lazy_read(self, op: Operation, read_value: bool):
        return _UnreadVariable(self, op) if read_value else op

    def _write(self, op_type: str, value, use_locking, name, read_value):
        with self.graph.as_default():
            op = _rv.assign_variable_op(self._handle, value, name=name, op_type=op_type,
                                        dtype=self._dtype)
        return self._lazy_read(op, read_value)

    def assign(self, value, use_locking: bool = False, name=None, read_value: bool = True):
        return self._write("AssignVariableOp", value, use_locking, name, read_value)

    def assign_add(self, delta, use_locking: bool = False, name=None, read_value: bool = True):
        return self._write("AssignAddVariableOp", delta, use_locking, name, read_value)

    def assign_sub(self, delta, use_locking: bool = False, name=None, read_value: bool = True):
        return self._write("AssignSubVariableOp", delta, use_locking, name, read_value)

    def _scatter(self, kind: str, sparse_delta, use_locking, name):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r} (variable "
                            f"'{self.op.name}')")
        with self.graph.as_default():
            op = _rv.resource_scatter(kind, self._handle, sparse_delta.indices,
                                      sparse_delta.values, self._dtype, name=name)
        return _UnreadVariable(self, op)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("Add", sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("Sub", sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("Mul", sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("Div", sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("Min", sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("Max", sparse_delta, use_locking, name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("Update", sparse_delta, use_locking, name)

    def _scatter_nd(self, kind: str, indices, updates, name):
        with self.graph.as_default():
            op = _rv.resource_scatter_nd(kind, self._handle, indices, updates, self._dtype,
                                         name=name)
        return _UnreadVariable(self, op)

    def scatter_nd_update(self, indices, updates, name=None):
        """``ResourceScatterNdUpdate``: write `updates` at the index tuples `indices`."""
        return self._scatter_nd("Update", indices, updates, name)

    def scatter_nd_add(self, indices, updates, name=None):
        """``ResourceScatterNdAdd``: add `updates` at the index tuples `indices`."""
        return self._scatter_nd("Add", indices, updates, name)

    def scatter_nd_sub(self, indices, updates, name=None):
        """``ResourceScatterNdSub``: subtract `updates` at the index tuples `indices`."""
        return self._scatter_nd("Sub", indices, updates, name)

    def scatter_nd_max(self, indices, updates, name=None):
        """``ResourceScatterNdMax``: the maximum with `updates` at the tuples `indices`."""
        return self._scatter_nd("Max", indices, updates, name)

    def scatter_nd_min(self, indices, updates, name=None):
        """``ResourceScatterNdMin``: the minimum with `updates` at the tuples `indices`."""
        return self._scatter_nd("Min", indices, updates, name)

    def count_up_to(self, limit: int):
        """``ResourceCountUpTo``: add 1 and return the value from before, until `limit`."""
        with self.graph.as_default():
            return _rv.resource_count_up_to(self._handle, limit, self._dtype)

    # -- session helpers --------------------------------------------------------------
    def eval(self, session=None):
        """The variable's current value in `session` (default: the default session)."""
        return self._graph_element.eval(session=session)

    def load(self, value, session=None) -> None:
        """Write `value` into the variable in `session` by running its initializer with
        the initial value fed."""
        if session is None:
            session = get_default_session()
            if session is None:
                raise ValueError(
                    f"Variable.load({self.op.name}): no default session is registered. Use "
                    "`with sess.as_default():` or pass the session.")
        arr = np.asarray(value, dtype=self._dtype.as_numpy_dtype)
        if self.shape.ndims is not None and not self.shape.is_compatible_with(arr.shape):
            raise ValueError(f"Variable.load: value of shape {arr.shape} does not match "
                             f"variable '{self.op.name}' of shape {self.shape}")
        session.run(self._initializer_op, feed_dict={self._initial_value: arr})


class _UnreadVariable(ResourceVariable):
    """What `assign*` and `scatter_*` return: the variable, read after the update ran.

    Fetching it, or converting it to a tensor, reads the variable with a control
    dependency on the update op (its name is the op's, as in TensorFlow)."""

    def __init__(self, parent: ResourceVariable, op: Operation) -> None:
        self._parent = parent
        self._handle = self._variable = parent._handle
        self._dtype, self._shape = parent._dtype, parent._shape
        self._parent_op = op
        self._initializer_op = parent._initializer_op
        self._initial_value = parent._initial_value
        self._trainable = parent._trainable
        self._constraint = parent._constraint
        self._caching_device = parent._caching_device
        self._save_slice_info = None
        self._is_initialized_op = parent._is_initialized_op
        with parent.graph.as_default():
            self._graph_element = self._read_after_parent()
        self._snapshot = self._graph_element

    @property
    def name(self) -> str:
        return self._parent_op.name

    @property
    def op(self) -> Operation:
        return self._parent_op

    def _write(self, op_type, value, use_locking, name, read_value):
        with self.graph.control_dependencies([self._parent_op]):
            return self._parent._write(op_type, value, use_locking, name, read_value)

    def _scatter(self, kind, sparse_delta, use_locking, name):
        with self.graph.control_dependencies([self._parent_op]):
            return self._parent._scatter(kind, sparse_delta, use_locking, name)

    def _scatter_nd(self, kind, indices, updates, name):
        with self.graph.control_dependencies([self._parent_op]):
            return self._parent._scatter_nd(kind, indices, updates, name)


_variables.register_resource_variable_class(ResourceVariable)

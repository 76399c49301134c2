"""`tf.Variable` and the variable initializers and collections.

A variable is three ops under one name scope, as in TensorFlow 1.x: the `VariableV2`
op itself (``v``, a ref), its initializer ``v/Assign``, and the snapshot ``v/read``
that consumers use.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     v = tf.Variable([1.0, 2.0], name="v")
...     inc = v.assign_add([1.0, 1.0])
>>> with tf.Session(graph=g) as sess:
...     sess.run(v.initializer)
...     print(sess.run(inc))
[2. 3.]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    convert_to_tensor,
    register_tensor_conversion_function,
)
from flowgraph.framework.graph import (
    GraphKeys,
    get_collection,
    get_default_graph,
    get_default_session_or_raise,
)
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import state_ops
from flowgraph.ops.array_ops import identity
from flowgraph.ops.control_flow_ops import group, no_op
from flowgraph.ops.op_util import fixed_dtype, make_tensor


class Variable:
    """A tensor whose value persists across `Session.run` calls.

    Parameters follow TensorFlow 1.x: `initial_value` (a tensor, a value, or a callable
    returning one), `trainable` (added to ``TRAINABLE_VARIABLES``), `collections`
    (default ``[GLOBAL_VARIABLES]``), `validate_shape`, `name`, `dtype`.
    """

    def __init__(self, initial_value=None, trainable: bool | None = None,
                 collections: list[str] | None = None, validate_shape: bool = True,
                 caching_device=None, name: str | None = None, variable_def=None,
                 dtype=None, expected_shape=None, import_scope=None, constraint=None,
                 use_resource=None, synchronization=None, aggregation=None,
                 shape=None) -> None:
        if initial_value is None:
            raise ValueError("initial_value must be specified for a Variable.")
        trainable = True if trainable is None else bool(trainable)
        collections = list(collections) if collections is not None else [
            GraphKeys.GLOBAL_VARIABLES]
        if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        graph = get_default_graph()
        init_from_fn = callable(initial_value)
        with graph.control_dependencies(None), graph.name_scope(name or "Variable") as scope:
            if init_from_fn:
                with graph.name_scope("Initializer"), graph.device(None):
                    value = initial_value()
                    if isinstance(value, Tensor):
                        initial = value
                    else:
                        initial = convert_to_tensor(value, dtype=dtype, name="initial_value")
            else:
                initial = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            if dtype is not None and initial.dtype.base_dtype != _dtypes.as_dtype(dtype):
                raise ValueError(
                    f"Variable '{scope[:-1]}': initial value has dtype "
                    f"{initial.dtype.base_dtype.name} but dtype={_dtypes.as_dtype(dtype).name}"
                )
            var_shape = initial.shape if validate_shape else TensorShape(None)
            if shape is not None:
                var_shape = as_shape(shape)
            if validate_shape and not var_shape.is_fully_defined():
                raise ValueError(
                    f"initial_value of Variable '{scope[:-1]}' must have a fully defined shape "
                    f"when validate_shape=True; got {initial.shape}. Pass validate_shape=False "
                    "or a shape."
                )
            self._variable = state_ops.variable_op_v2(var_shape, initial.dtype.base_dtype,
                                                      name=scope)
            with graph.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(
                    self._variable, initial, validate_shape=validate_shape, name="Assign").op
                self._snapshot = identity(self._variable, name="read")
        self._initial_value = initial
        self._trainable = trainable
        self._constraint = constraint
        self._save_slice_info = None
        graph.add_to_collections(collections, self)
        graph.__dict__.setdefault("_deref_cache", {})[self._variable] = self._snapshot

    # -- graph elements ----------------------------------------------------------------
    def _as_graph_element(self) -> Tensor:
        return self._variable

    def _ref(self) -> Tensor:
        return self._variable

    def value(self) -> Tensor:
        """The snapshot tensor ``v/read``."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A fresh read of the variable (an Identity of the ref)."""
        return identity(self._variable, name="read")

    def initialized_value(self) -> Tensor:
        """The value, initializing the variable first if needed (uses `tf.cond`)."""
        from flowgraph.ops import control_flow_ops

        cond = getattr(control_flow_ops, "cond", None)
        if cond is None:
            with get_default_graph().control_dependencies([self._initializer_op]):
                return identity(self._initial_value)
        return cond(is_variable_initialized(self), self.read_value,
                    lambda: self._initial_value)

    @property
    def name(self) -> str:
        return self._variable.name

    @property
    def op(self) -> Operation:
        return self._variable.op

    @property
    def graph(self):
        return self._variable.graph

    @property
    def device(self) -> str:
        return self._variable.device

    @property
    def dtype(self):
        return self._variable.dtype

    @property
    def shape(self) -> TensorShape:
        return self._variable.shape

    def get_shape(self) -> TensorShape:
        return self._variable.shape

    @property
    def initializer(self) -> Operation:
        return self._initializer_op

    @property
    def initial_value(self) -> Tensor:
        return self._initial_value

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    # -- state -------------------------------------------------------------------------
    def eval(self, session=None):
        """The variable's current value in `session` (default: the default session)."""
        sess = session or get_default_session_or_raise(self.name)
        return sess.run(self._variable)

    def assign(self, value, use_locking: bool = False, name=None, read_value: bool = True):
        """An op storing `value`; returns the new value's ref (or the op)."""
        t = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_add(self, delta, use_locking: bool = False, name=None, read_value: bool = True):
        t = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_sub(self, delta, use_locking: bool = False, name=None, read_value: bool = True):
        t = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def load(self, value, session=None) -> None:
        """Write `value` into the variable in `session` without adding graph ops."""
        sess = session or get_default_session_or_raise(self.name)
        arr = np.asarray(value, dtype=self.dtype.base_dtype.as_numpy_dtype)
        if self.shape.ndims is not None and not self.shape.is_compatible_with(arr.shape):
            raise ValueError(
                f"Variable.load: value of shape {arr.shape} does not match variable "
                f"'{self.op.name}' of shape {self.shape}"
            )
        sess.run(self._initializer_op, feed_dict={self._initial_value: arr})

    def set_shape(self, shape) -> None:
        self._variable.set_shape(shape)
        self._snapshot.set_shape(shape)

    def __repr__(self) -> str:
        return (f"<flowgraph.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError(f"Using Variable '{self.name}' as a Python bool is not allowed.")

    def __iter__(self):
        return iter(self._snapshot)

    def __getitem__(self, item):
        return self._snapshot[item]


def _convert_variable(var: Variable, dtype=None, name=None, as_ref=False):
    if dtype is not None and not _dtypes.as_dtype(dtype).base_dtype == var.dtype.base_dtype:
        raise ValueError(
            f"Incompatible type conversion requested to type {_dtypes.as_dtype(dtype).name} "
            f"for variable of type {var.dtype.base_dtype.name}: {var.name}"
        )
    return var._ref() if as_ref else var.value()


register_tensor_conversion_function(Variable, _convert_variable)


def _forward_operator(name: str):
    def op(self, *args):
        return getattr(self._snapshot, name)(*args)

    op.__name__ = name
    return op


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__matmul__", "__rmatmul__", "__neg__",
              "__abs__", "__lt__", "__le__", "__gt__", "__ge__", "__and__", "__rand__",
              "__or__", "__ror__", "__xor__", "__rxor__", "__invert__"):
    setattr(Variable, _name, _forward_operator(_name))


# -- collections and initializers -------------------------------------------------------
def global_variables(scope: str | None = None) -> list[Variable]:
    return get_collection(GraphKeys.GLOBAL_VARIABLES, scope)


def trainable_variables(scope: str | None = None) -> list[Variable]:
    return get_collection(GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope: str | None = None) -> list[Variable]:
    return get_collection(GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope: str | None = None) -> list[Variable]:
    return get_collection(GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope: str | None = None) -> list[Variable]:
    return get_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name: str = "init") -> Operation:
    """An op running the initializers of `var_list` (a no-op when it is empty).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0)
    ...     print(tf.variables_initializer([v]).type)
    NoOp
    """
    var_list = list(var_list)
    if not var_list:
        return no_op(name=name)
    return group(*[v.initializer for v in var_list], name=name)


def global_variables_initializer() -> Operation:
    return variables_initializer(global_variables(), name="init")


def local_variables_initializer() -> Operation:
    return variables_initializer(local_variables(), name="init")


def initialize_all_variables() -> Operation:
    return global_variables_initializer()


def is_variable_initialized(variable) -> Tensor:
    return state_ops.is_variable_initialized(variable)


@register_op("ReportUninitializedVariables", attrs={"names": ()},
             num_outputs=1, dtype_fn=fixed_dtype(_dtypes.string),
             ref_inputs="all", stateful=True)
def _report_shape(op, *refs):
    return [TensorShape([None])]


not_differentiable("ReportUninitializedVariables")


def report_uninitialized_variables(var_list=None,
                                   name: str = "report_uninitialized_variables") -> Tensor:
    """A 1-D string tensor with the names of the variables not yet initialized."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    var_list = list(var_list)
    refs = [v._ref() if isinstance(v, Variable) else v for v in var_list]
    names = [r.op.name for r in refs]
    return make_tensor("ReportUninitializedVariables", refs, {"names": names}, name=name)


def assert_variables_initialized(var_list=None) -> Any:
    raise NotImplementedError("assert_variables_initialized is deprecated; use "
                              "report_uninitialized_variables")

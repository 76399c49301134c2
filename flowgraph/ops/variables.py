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

import enum
from typing import Any

import numpy as np

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import (
    constant,
    convert_to_tensor,
    register_tensor_conversion_function,
)
from flowgraph.framework.graph import (
    GraphKeys,
    get_collection,
    get_default_graph,
    get_default_session,
)
from flowgraph.framework.operation import Operation, Reference, Tensor
from flowgraph.framework.registry import not_differentiable, register_op
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.ops import state_ops
from flowgraph.ops.control_flow_ops import group, no_op
from flowgraph.ops.op_util import fixed_dtype, make_tensor
from flowgraph.ops.variable_updates import RefScatterMethods


class _CreatorScopes(type):
    """Routes ``Variable(...)`` through the creators of `variable_creator_scope`.

    The innermost creator is called first with ``next_creator`` and every constructor
    argument as a keyword; the last ``next_creator`` builds the variable."""

    def __call__(cls, *args, **kwargs):
        if kwargs.get("variable_def") is not None:  # the variable over existing ops
            if (args and args[0] is not None) or kwargs.get("initial_value") is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            return cls.from_proto(kwargs["variable_def"],
                                  import_scope=kwargs.get("import_scope"))
        stack = get_default_graph().__dict__.get("_variable_creator_stack")
        if cls is not Variable:
            return super().__call__(*args, **kwargs)
        if not stack:
            return type.__call__(_variable_class(_use_resource_arg(args, kwargs)),
                                 *args, **kwargs)
        import inspect

        bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        bound.apply_defaults()
        full = dict(bound.arguments)
        full.pop("self")
        full["experimental_enable_variable_lifting"] = True  # TF 2.15 passes it too

        def base(**kw):
            kw.pop("experimental_enable_variable_lifting", None)
            return type.__call__(_variable_class(kw.get("use_resource")), **kw)

        creator = base
        for outer in stack:
            creator = _chain(outer, creator)
        return creator(**full)


_USE_RESOURCE_AT = 11  # `use_resource`'s position among Variable's arguments
_RESOURCE_CLASS: list[type] = []  # filled by flowgraph/ops/resource_variables.py


def register_resource_variable_class(cls: type) -> None:
    """Record the class `tf.Variable(..., use_resource=True)` builds."""
    _RESOURCE_CLASS[:] = [cls]


def _use_resource_arg(args, kwargs):
    if "use_resource" in kwargs:
        return kwargs["use_resource"]
    return args[_USE_RESOURCE_AT] if len(args) > _USE_RESOURCE_AT else None


def _variable_class(use_resource) -> type:
    """`ResourceVariable` for ``use_resource=True``, or for None once resource
    variables are enabled (`tf.enable_resource_variables`); else `Variable`."""
    from flowgraph.framework.build_info import resource_variables_enabled

    if use_resource is None:
        use_resource = resource_variables_enabled()
    if use_resource and _RESOURCE_CLASS:
        return _RESOURCE_CLASS[0]
    return Variable


def _chain(creator, next_creator):
    return lambda **kw: creator(next_creator, **kw)


def checked_arguments(initial_value, trainable, collections, constraint):
    """`tf.Variable`'s checks of its arguments (TensorFlow's errors), and the
    ``(trainable, collections)`` it takes: the global collection by default, plus the
    trainable one when `trainable` (True unless given)."""
    if initial_value is None:
        raise ValueError("initial_value must be specified.")
    if constraint is not None and not callable(constraint):
        raise ValueError(f"Variable: the `constraint` argument must be a callable (a "
                         f"function of the variable's value), got {constraint!r}.")
    if collections is not None and not isinstance(collections, list | tuple | set):
        raise ValueError(
            "collections argument to Variable constructor must be a list, tuple, or "
            f"set. Got {collections!r} of type {type(collections).__name__}")
    trainable = True if trainable is None else bool(trainable)
    collections = list(collections) if collections is not None else [
        GraphKeys.GLOBAL_VARIABLES]
    if trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
        collections.append(GraphKeys.TRAINABLE_VARIABLES)
    return trainable, collections


class VariableSynchronization(enum.Enum):
    """When a distributed variable is aggregated (accepted by `tf.get_variable`;
    flowgraph's variables live on one device, so only AUTO/NONE behaviour exists)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How updates of replicas of a variable combine (accepted by `tf.get_variable`)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


def _enum_member(enum, value, default, what: str, name):
    if value is None:
        return default
    if isinstance(value, enum):
        return value
    try:
        return enum(value)
    except ValueError:
        raise ValueError(f"Invalid variable {what} mode: {value} for variable: "
                         f"{name}") from None


def checked_distribution(synchronization, aggregation, trainable, name):
    """A variable's ``(synchronization, aggregation, trainable)``: the enums from their
    values (AUTO and NONE by default; an unknown value is a ValueError naming the
    variable), and `trainable` False by default for an ``ON_READ`` variable."""
    aggregation = _enum_member(VariableAggregation, aggregation, VariableAggregation.NONE,
                               "aggregation", name)
    synchronization = _enum_member(VariableSynchronization, synchronization,
                                   VariableSynchronization.AUTO, "synchronization", name)
    if trainable is None:
        trainable = synchronization != VariableSynchronization.ON_READ
    return synchronization, aggregation, trainable


def variable_shape(initial, validate_shape: bool, shape, var_name: str) -> TensorShape:
    """A new variable's static shape: `shape` if given, else its initial value's (unknown
    without `validate_shape`); a validated shape must be fully known."""
    var_shape = initial.shape if validate_shape else TensorShape(None)
    if shape is not None:
        var_shape = as_shape(shape)
    if validate_shape and not var_shape.is_fully_defined():
        raise ValueError(
            f"initial_value must have a shape specified: {initial} (Variable "
            f"'{var_name}'). Pass validate_shape=False to allow a value whose shape "
            "is known only at run time, or give shape=.")
    return var_shape


class Variable(RefScatterMethods, metaclass=_CreatorScopes):
    """A tensor whose value persists across `Session.run` calls.

    Parameters follow TensorFlow 1.x: `initial_value` (a tensor, a value, or a callable
    returning one), `trainable` (added to ``TRAINABLE_VARIABLES``), `collections`
    (default ``[GLOBAL_VARIABLES]``), `validate_shape`, `name`, `dtype`.

    The graph gets ``name/initial_value`` (for a value), ``name`` (the ``VariableV2``
    op), ``name/Assign`` (`initializer`) and ``name/read`` (`value()`). Reading it before
    its initializer ran raises ``FailedPreconditionError`` naming it.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     with tf.name_scope("layer"):
    ...         w = tf.Variable([[1.0, 2.0, 3.0]], name="w")
    ...     print(w.name, w.initializer.name, w.value().name)
    layer/w:0 layer/w/Assign layer/w/read:0
    """

    # NumPy defers to our reflected operators (ndarray + Variable -> Variable.__radd__).
    __array_priority__ = 100
    __array_ufunc__ = None

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
            if init_from_fn:
                with graph.name_scope("Initializer"), graph.device(None):
                    initial = convert_to_tensor(initial_value(), dtype=dtype,
                                                name="initial_value")
            else:
                initial = convert_to_tensor(initial_value, dtype=dtype, name="initial_value")
            var_shape = variable_shape(initial, validate_shape, shape, var_name)
            self._variable = state_ops.variable_op_v2(var_shape, initial.dtype.base_dtype,
                                                      name=scope)
            with graph.colocate_with(self._variable.op):
                self._initializer_op = state_ops.assign(
                    self._variable, initial, validate_shape=validate_shape, name="Assign").op
            # the snapshot ``v/read`` lives on `caching_device` when one is given (as
            # TensorFlow), else with the variable
            with graph.device(caching_device) if caching_device is not None else \
                    graph.colocate_with(self._variable.op):
                self._snapshot = make_tensor("Identity", [self._variable], name="read")
        self._initial_value = initial
        self._trainable = trainable
        self._constraint = constraint
        self._caching_device = caching_device
        self._save_slice_info = None
        graph.add_to_collections(collections, self)
        graph.__dict__.setdefault("_deref_cache", {})[self._variable] = self._snapshot

    # -- graph elements ----------------------------------------------------------------
    def _as_graph_element(self) -> Tensor:
        return self._variable

    def ref(self) -> Reference:
        """A hashable reference to this variable (``v.ref().deref() is v``): equal
        references wrap the same variable, so they key dicts and sets."""
        return Reference(self)

    experimental_ref = ref

    def _resource_only(method: str, instead: str):
        # As TensorFlow: only resource variables read rows this way. A property raising
        # AttributeError, so ``hasattr(v, "sparse_read")`` tells the kinds apart.
        def fail(self):
            raise AttributeError(
                f"Variable '{self.name}' is a reference variable, which has no {method}; "
                f"create it with use_resource=True (a ResourceVariable), or use "
                f"{instead}.")
        return property(fail)

    sparse_read = _resource_only("sparse_read", "tf.gather(v, indices)")
    gather_nd = _resource_only("gather_nd", "tf.gather_nd(v, indices)")
    del _resource_only

    def _ref(self) -> Tensor:
        return self._variable

    def value(self) -> Tensor:
        """The snapshot tensor ``v/read``."""
        return self._snapshot

    def read_value(self) -> Tensor:
        """A new read of the variable: an Identity of the ref created here, so it obeys
        the enclosing ``control_dependencies`` (unlike `value()`, made with the variable).
        """
        return make_tensor("Identity", [self._variable], name="read")

    def initialized_value(self) -> Tensor:
        """The variable's value if it is initialized, else its initial value (a
        ``tf.cond`` on `is_variable_initialized`, as TensorFlow: ``cond/Merge``).

        Use it to initialize another variable from this one.
        """
        from flowgraph.ops.control_flow_cond import cond

        graph = self.graph
        with graph.as_default(), graph.control_dependencies(None):
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

    @property
    def synchronization(self):
        """When replicas of the variable synchronize (a `tf.VariableSynchronization`)."""
        return self._synchronization

    @property
    def aggregation(self):
        """How replicas' updates combine (a `tf.VariableAggregation`)."""
        return self._aggregation

    # -- state -------------------------------------------------------------------------
    def eval(self, session=None):
        """The variable's current value in `session` (default: the default session)."""
        return self._variable.eval(session=session)

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
        if session is None:
            session = get_default_session()
            if session is None:
                raise ValueError(
                    f"Variable.load({self.op.name}): no default session is registered. Use "
                    "`with sess.as_default():` or pass the session."
                )
        sess = session
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
        return (f"<tf.Variable '{self.name}' shape={self.shape} "
                f"dtype={self.dtype.name}>")

    # A fetch of a Variable always means its ref tensor: `Session.run` keys and caches
    # fetch structures holding one (runtime/fetch.py), as the Estimator's global step.
    _fetch_by_identity = True

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other) -> bool:
        return self is other

    def __ne__(self, other) -> bool:
        return self is not other

    def __iter__(self):
        # Defined so that Python does not try to iterate with __getitem__ forever.
        raise TypeError(f"'Variable' object is not iterable ('{self.name}').")

    def __getitem__(self, item):
        # The value's StridedSlice, with `.assign` writing that slice of the variable.
        from flowgraph.ops.slice_assign_ops import sliced

        return sliced(self, item)


def _convert_variable(var: Variable, dtype=None, name=None, as_ref=False):
    if dtype is not None and not _dtypes.as_dtype(dtype).base_dtype == var.dtype.base_dtype:
        raise ValueError(
            f"Incompatible type conversion requested to type "
            f"'{_dtypes.as_dtype(dtype).base_dtype.name}' for variable of type "
            f"'{var.dtype.name}' ({var.name})"
        )
    return var._ref() if as_ref else var.value()


register_tensor_conversion_function(Variable, _convert_variable)


def _forward_operator(name: str):
    def op(self, *args):
        args = [a.value() if isinstance(a, Variable) else a for a in args]
        return getattr(self.value(), name)(*args)

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
    """A 1-D string tensor with the op names of the variables of `var_list` (default:
    global and local variables) that are not initialized yet.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0, name="v")
    ...     report = tf.report_uninitialized_variables()
    ...     with tf.Session() as sess:
    ...         print(sess.run(report))
    [b'v']
    """
    if var_list is None:
        var_list = global_variables() + local_variables()
    var_list = list(var_list)
    refs = [v._ref() if isinstance(v, Variable) else v for v in var_list]
    for r in refs:
        if not isinstance(r, Tensor) or not (r.dtype.is_ref_dtype or
                                             r.dtype.base_dtype == _dtypes.resource):
            raise TypeError(
                f"report_uninitialized_variables expects variables, got {r!r}"
            )
    graph = refs[0].graph if refs else get_default_graph()
    with graph.as_default(), graph.name_scope(name) as scope:
        if not refs:
            return constant(np.array([], dtype=object), dtype=_dtypes.string, name=scope)
        names = [r.op.name for r in refs]
        return make_tensor("ReportUninitializedVariables", refs, {"names": names},
                           name=scope)


def assert_variables_initialized(var_list=None) -> Any:
    raise NotImplementedError("assert_variables_initialized is deprecated; use "
                              "report_uninitialized_variables")

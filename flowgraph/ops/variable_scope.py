"""`tf.get_variable` and `tf.variable_scope`: variables shared by name.

State, per graph:

* the **variable store** -- a dict from full variable name (``"layer/kernel"``) to the
  `Variable` created by `get_variable`. Names depend on *variable* scopes only, never on
  name scopes: `get_variable` creates its variable at the root name scope.
* the **scope store** (per thread) -- the current `VariableScope` and, for every
  variable-scope name, how many times it is open. `variable_scope(None,
  default_name="dense")` picks the first of ``dense``, ``dense_1``, ... whose count is 0;
  leaving a named scope resets the counts of its sub-scopes, so re-entering it (to reuse
  variables) finds ``dense`` free again.

Entering a variable scope also opens a *name scope* for the ops created inside, made
unique like any name scope. Re-entering a variable scope therefore puts ops under a new
name scope while variables stay under the old name::

    with variable_scope("s"):               # name scope s/   variables s/...
    with variable_scope("s", reuse=True):   # name scope s_1/ variables s/... (shared)

`reuse` is False (create; an existing name is an error), True (share; a missing name is
an error) or `AUTO_REUSE` (share if it exists, else create). A scope inherits `reuse`,
`initializer`, `regularizer`, `dtype`, `partitioner` and `custom_getter` from its parent
unless given; once reuse is True it cannot be turned off in a sub-scope.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     with tf.variable_scope("layer"):
...         w = tf.get_variable("w", [3, 2])
...     with tf.variable_scope("layer", reuse=True):
...         w2 = tf.get_variable("w")
...     print(w.name, w2 is w)
layer/w:0 True
"""

from __future__ import annotations

import contextlib
import enum
import functools
import inspect
import threading
import traceback

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import (
    Graph,
    GraphKeys,
    add_to_collection,
    get_collection,
    get_default_graph,
)
from flowgraph.framework.tensor_shape import as_shape
from flowgraph.ops import init_ops
from flowgraph.ops.partitioned_variables import PartitionedVariable, create_partitioned
from flowgraph.ops.variables import Variable, checked_distribution

__all__ = [
    "AUTO_REUSE",
    "VariableScope",
    "get_local_variable",
    "get_variable",
    "get_variable_scope",
    "no_regularizer",
    "variable_scope",
]


class _ReuseMode(enum.Enum):
    """Reuse modes besides True/False."""

    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def no_regularizer(_):
    """A regularizer that adds no loss: use it to turn off a scope's regularizer.

    Example
    -------
    >>> no_regularizer(None) is None
    True
    """
    return None


# -- per-graph state -------------------------------------------------------------------
class _ScopeStore(threading.local):
    """Per thread: the current variable scope and how often each scope name is open."""

    def __init__(self) -> None:
        self.current_scope = VariableScope(False)
        self.counts: dict[str, int] = {}

    def open_scope(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def close_subscopes(self, name: str) -> None:
        for key in self.counts:
            if key.startswith(name + "/"):
                self.counts[key] = 0

    def count(self, name: str) -> int:
        return self.counts.get(name, 0)


def _scope_store(graph: Graph | None = None) -> _ScopeStore:
    graph = graph or get_default_graph()
    store = graph.__dict__.get("_variable_scope_store")
    if store is None:
        store = graph.__dict__.setdefault("_variable_scope_store", _ScopeStore())
    return store


def _var_store(graph: Graph | None = None) -> _VariableStore:
    graph = graph or get_default_graph()
    store = graph.__dict__.get("_variable_store")
    if store is None:
        store = graph.__dict__.setdefault("_variable_store", _VariableStore())
    return store


def get_variable_scope() -> VariableScope:
    """The current `VariableScope` (the root scope has name '').

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default(), tf.variable_scope("a"):
    ...     print(tf.get_variable_scope().name)
    a
    """
    return _scope_store().current_scope


# -- the variable store ------------------------------------------------------------------
def _accepts_constraint(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "constraint" or p.kind is p.VAR_KEYWORD for p in params)


def _takes_no_required_args(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in params)


class _VariableStore:
    """The variables created by `get_variable` in one graph, by full name."""

    def __init__(self) -> None:
        self._vars: dict[str, Variable] = {}
        self._lock = threading.RLock()

    def get_variable(self, name, shape=None, dtype=_dtypes.float32, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=None, aggregation=None):
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        dtype = getattr(dtype, "base_dtype", dtype)
        synchronization, aggregation, trainable = checked_distribution(
            synchronization, aggregation, trainable, name)

        def true_getter(name, shape=None, dtype=_dtypes.float32, initializer=None,
                        regularizer=None, reuse=None, trainable=None, collections=None,
                        caching_device=None, partitioner=None, validate_shape=True,
                        use_resource=None, constraint=None, synchronization=None,
                        aggregation=None):
            return self._get_single_variable(
                name, shape, dtype, initializer, regularizer, reuse,
                True if trainable is None else trainable, collections, caching_device,
                partitioner, validate_shape, constraint, use_resource,
                (synchronization, aggregation))

        kwargs = {"name": name, "shape": shape, "dtype": dtype, "initializer": initializer,
                  "regularizer": regularizer, "reuse": reuse, "trainable": trainable,
                  "collections": collections, "caching_device": caching_device,
                  "partitioner": partitioner, "validate_shape": validate_shape,
                  "use_resource": use_resource, "synchronization": synchronization,
                  "aggregation": aggregation}
        if custom_getter is None:
            return true_getter(constraint=constraint, **kwargs)
        if _accepts_constraint(custom_getter):
            kwargs["constraint"] = constraint
        return custom_getter(getter=true_getter, **kwargs)

    def _get_single_variable(self, name, shape, dtype, initializer, regularizer, reuse,
                             trainable, collections, caching_device, partitioner,
                             validate_shape, constraint, use_resource=None,
                             distribution=(None, None)):
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError(f"If initializer is a constant, do not specify shape "
                             f"(variable {name}).")
        shape_given = shape is not None
        dtype = _dtypes.as_dtype(dtype)
        shape = as_shape(shape)
        partitioned = partitioner is not None and shape.ndims not in (None, 0)
        if partitioned and _in_strategy():
            partitioned = False  # a tf.distribute strategy's variables are not partitioned
        with self._lock:
            if name in self._vars:
                if partitioned and reuse is not False and \
                        not isinstance(self._vars[name], PartitionedVariable):
                    raise ValueError(
                        f"A partitioner was provided, but an unpartitioned version of the "
                        f"variable was found: {name}. Perhaps a variable of the same name "
                        "was already created without partitioning?")
                return self._existing(name, shape, dtype, reuse)
            if reuse is True and partitioned:
                raise ValueError(f"PartitionedVariable {name} does not exist, or was not "
                                 "created with tf.get_variable(). Did you mean to set "
                                 "reuse=False or reuse=tf.AUTO_REUSE in VarScope?")
            if reuse is True:
                raise ValueError(f"Variable {name} does not exist, or was not created with "
                                 "tf.get_variable(). Did you mean to set "
                                 "reuse=tf.AUTO_REUSE in VarScope?")
            if partitioned:
                if from_value:
                    raise ValueError(f"Variable {name}: a partitioned variable needs an "
                                     "initializer callable, not a value.")

                def make_part(part_name, part_shape, partition_info):
                    part = self._create(part_name, part_shape, True, dtype, initializer,
                                        False, trainable, collections, caching_device,
                                        validate_shape, constraint, use_resource,
                                        partition_info, distribution)
                    self._vars[part_name] = part
                    return part

                var = create_partitioned(name, shape, dtype, partitioner, make_part)
            else:
                var = self._create(name, shape, shape_given, dtype, initializer, from_value,
                                   trainable, collections, caching_device, validate_shape,
                                   constraint, use_resource, distribution=distribution)
            self._vars[name] = var
        if regularizer:
            for part in (var if partitioned else [var]):
                self._regularize(part, regularizer)
        return var

    @staticmethod
    def _regularize(var, regularizer) -> None:
        graph = var.graph
        with graph.colocate_with(var.op), graph.control_dependencies(None), \
                graph.name_scope(var.op.name + "/Regularizer/"):
            loss = regularizer(var)
        if loss is not None:
            add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def _existing(self, name, shape, dtype, reuse) -> Variable:
        found = self._vars[name]
        if reuse is False and isinstance(found, PartitionedVariable):
            raise ValueError(f"Partitioned variable with name {name} already exists. Did you "
                             "mean to set reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
        if reuse is False:
            msg = (f"Variable {name} already exists, disallowed. Did you mean to set "
                   "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            where = [tuple(x) for x in found.op.traceback]
            if where:
                msg += " Originally defined at:\n\n" + "".join(traceback.format_list(where))
            raise ValueError(msg)
        # TensorFlow's words: "reuse partitioned variable", "share variable".
        verb = "reuse partitioned" if isinstance(found, PartitionedVariable) else "share"
        if not shape.is_compatible_with(found.shape):
            raise ValueError(f"Trying to {verb} variable {name}, but specified shape "
                             f"{shape} and found shape {found.shape}.")
        if not dtype.is_compatible_with(found.dtype):
            raise ValueError(f"Trying to {verb} variable {name}, but specified dtype "
                             f"{dtype.name} and found dtype {found.dtype.name}.")
        return found

    @staticmethod
    def _create(name, shape, shape_given, dtype, initializer, from_value, trainable,
                collections, caching_device, validate_shape, constraint, use_resource=None,
                partition_info=None, distribution=(None, None)):
        if initializer is None:
            if not shape_given:
                raise ValueError(f"Variable {name} did not get an initializer, so its "
                                 "`shape` argument must be specified.")
            if dtype.is_floating:
                initializer = init_ops.GlorotUniform()
            elif dtype.is_integer or dtype.is_bool or dtype == _dtypes.string or \
                    getattr(dtype, "is_unsigned", False):
                initializer = init_ops.Zeros()
            else:
                raise ValueError(f"An initializer for variable {name} of "
                                 f"{dtype.base_dtype} is required")
        if from_value:
            init_val, var_dtype = initializer, None
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape.is_fully_defined():
                dims = shape.as_list()

                def init_val():
                    return initializer(dims, dtype=dtype, partition_info=partition_info)

                var_dtype = dtype.base_dtype
            elif _takes_no_required_args(initializer):
                init_val, var_dtype = initializer, None
            else:
                raise ValueError(
                    f"The initializer passed is not valid (variable {name}, shape {shape}). "
                    "It should be a callable with no arguments and the shape should not be "
                    "provided, or an initializer object and `shape` should be fully "
                    "defined.")
        return Variable(initial_value=init_val, name=name, trainable=trainable,
                        collections=collections, caching_device=caching_device,
                        dtype=var_dtype, validate_shape=validate_shape,
                        constraint=constraint, use_resource=use_resource,
                        synchronization=distribution[0], aggregation=distribution[1])


# -- VariableScope -------------------------------------------------------------------------
class VariableScope:
    """The settings `get_variable` uses inside a `variable_scope`: its name, reuse mode,
    and defaults (initializer, regularizer, dtype, partitioner, custom getter, ...).

    Get the current one with `tf.get_variable_scope()`; pass one to `variable_scope` to
    re-enter it. `original_name_scope` is the name scope opened when the scope was
    first entered (ending in '/').

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default(), tf.variable_scope("s") as scope:
    ...     scope.reuse_variables()
    ...     print(scope.name, scope.original_name_scope, scope.reuse)
    s s/ True
    """

    def __init__(self, reuse, name: str = "", initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None,
                 name_scope: str = "", dtype=_dtypes.float32, use_resource=None,
                 constraint=None) -> None:
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = _dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)
    reuse = property(lambda self: self._reuse)
    initializer = property(lambda self: self._initializer)
    regularizer = property(lambda self: self._regularizer)
    dtype = property(lambda self: self._dtype)
    use_resource = property(lambda self: self._use_resource)
    caching_device = property(lambda self: self._caching_device)
    partitioner = property(lambda self: self._partitioner)
    custom_getter = property(lambda self: self._custom_getter)
    constraint = property(lambda self: self._constraint)

    def reuse_variables(self) -> None:
        """Share variables from now on in this scope (reuse=True)."""
        self._reuse = True

    def set_initializer(self, initializer) -> None:
        self._initializer = initializer

    def set_regularizer(self, regularizer) -> None:
        self._regularizer = regularizer

    def set_dtype(self, dtype) -> None:
        self._dtype = _dtypes.as_dtype(dtype)

    def set_use_resource(self, use_resource) -> None:
        self._use_resource = use_resource

    def set_caching_device(self, caching_device) -> None:
        self._caching_device = caching_device

    def set_partitioner(self, partitioner) -> None:
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter) -> None:
        self._custom_getter = custom_getter

    def get_collection(self, name: str) -> list:
        """The items of collection `name` whose names start with this scope."""
        return get_collection(name, self._name + "/" if self._name else "")

    def trainable_variables(self) -> list:
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self) -> list:
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self) -> list:
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None,
                     regularizer=None, reuse=None, trainable=None, collections=None,
                     caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=None, aggregation=None):
        """`get_variable` with this scope's defaults filled in."""
        regularizer = self._regularizer if regularizer is None else regularizer
        caching_device = self._caching_device if caching_device is None else caching_device
        partitioner = self._partitioner if partitioner is None else partitioner
        custom_getter = self._custom_getter if custom_getter is None else custom_getter
        reuse = self._reuse if reuse is None else reuse
        use_resource = self._use_resource if use_resource is None else use_resource
        full_name = f"{self._name}/{name}" if self._name else name
        graph = get_default_graph()
        # Variable names depend on the variable scope only, so create at the root.
        with graph.name_scope(None):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = convert_to_tensor(initializer).dtype.base_dtype
                want = _dtypes.as_dtype(dtype).base_dtype
                if init_dtype != want:
                    raise ValueError(f"Initializer type '<dtype: {init_dtype.name!r}>' and "
                                     f"explicit dtype '<dtype: {want.name!r}>' don't match.")
            initializer = self._initializer if initializer is None else initializer
            constraint = self._constraint if constraint is None else constraint
            dtype = self._dtype if dtype is None else dtype
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer,
                regularizer=regularizer, reuse=reuse, trainable=trainable,
                collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape,
                use_resource=use_resource, custom_getter=custom_getter,
                constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)

    def __repr__(self) -> str:
        return f"<VariableScope '{self._name}' reuse={self._reuse}>"


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                 trainable=None, collections=None, caching_device=None, partitioner=None,
                 validate_shape=True, use_resource=None, custom_getter=None, constraint=None,
                 synchronization=None, aggregation=None):
    """Get the variable ``<scope>/name`` or create it (TF1's `tf.get_variable`).

    In a scope with reuse=False it is created (an existing name is a ValueError); with
    reuse=True the existing one is returned (a missing one is a ValueError, as is a
    different `shape` or `dtype`); with `tf.AUTO_REUSE` either.

    Parameters
    ----------
    name : str
        Name relative to the current variable scope.
    shape : list of int or TensorShape
        Required unless `initializer` is a value (a tensor, array or list), which gives
        the shape itself.
    dtype : DType
        Default: the scope's dtype (float32).
    initializer : initializer, value or tensor
        Default: the scope's initializer, else `glorot_uniform_initializer` for floats
        and zeros for integers, booleans and strings.
    regularizer : callable
        ``regularizer(variable) -> loss``; the loss (if not None) is added to
        ``GraphKeys.REGULARIZATION_LOSSES``. Default: the scope's.
    trainable : bool
        Default True: also add the variable to ``TRAINABLE_VARIABLES``.
    collections : list of str
        Default ``[GLOBAL_VARIABLES]``; e.g. add ``GraphKeys.MODEL_VARIABLES``.
    partitioner : callable
        Accepted for compatibility; flowgraph always creates one unpartitioned variable.
    custom_getter : callable
        ``custom_getter(getter, name, *args, **kwargs)`` called instead of the default
        getter, which it may call (``getter(name, *args, **kwargs)``) and wrap.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     with tf.variable_scope("net", reuse=tf.AUTO_REUSE):
    ...         a = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
    ...         b = tf.get_variable("b", [2])
    ...     print(a.name, a is b)
    net/b:0 True
    """
    return get_variable_scope().get_variable(
        _var_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections,
        caching_device=caching_device, partitioner=partitioner,
        validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint,
        synchronization=synchronization, aggregation=aggregation)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None,
                       trainable=False, collections=None, caching_device=None,
                       partitioner=None, validate_shape=True, use_resource=None,
                       custom_getter=None, constraint=None, synchronization=None,
                       aggregation=None):
    """`get_variable` for a non-trainable variable in ``LOCAL_VARIABLES`` (plus
    `collections`).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.get_local_variable("count", [], dtype=tf.int64)
    ...     print(v in tf.local_variables(), v in tf.global_variables())
    True False
    """
    collections = [*(collections or []), GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape, dtype, initializer, regularizer, trainable, collections,
                        caching_device, partitioner, validate_shape, use_resource,
                        custom_getter, constraint, synchronization, aggregation)


# -- entering scopes ---------------------------------------------------------------------
def _wrap_custom_getter(custom_getter, old_getter):
    """A getter calling `custom_getter` with `old_getter` (wrapping the real getter)."""
    if old_getter is None:
        return custom_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped


class _PureVariableScope:
    """Switches the current `VariableScope` (no name scope); see `variable_scope`."""

    def __init__(self, name_or_scope, reuse=None, initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None,
                 old_name_scope=None, dtype=None, use_resource=None, constraint=None):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._settings = {"initializer": initializer, "regularizer": regularizer,
                          "caching_device": caching_device, "partitioner": partitioner,
                          "dtype": dtype, "use_resource": use_resource}
        self._custom_getter = custom_getter
        self._old_name_scope = old_name_scope
        self._constraint = constraint
        self._store = _scope_store()
        self._entered = False

    def _apply_settings(self, scope: VariableScope, old_getter) -> None:
        for key, value in self._settings.items():
            if value is not None:
                getattr(scope, f"set_{key}")(value)
        if self._custom_getter is not None:
            scope.set_custom_getter(_wrap_custom_getter(self._custom_getter, old_getter))

    def __enter__(self) -> VariableScope:
        if self._entered:
            raise ValueError("A variable_scope context manager cannot be entered twice at "
                             "once; create a new variable_scope(...) instead.")
        self._entered = True
        store = self._store
        self._old = old = store.current_scope
        nos = self._name_or_scope
        if isinstance(nos, VariableScope):
            self._new_name = nos.name
            scope = VariableScope(
                nos.reuse if not self._reuse else self._reuse, name=nos.name,
                initializer=nos.initializer, regularizer=nos.regularizer,
                caching_device=nos.caching_device, partitioner=nos.partitioner,
                custom_getter=nos.custom_getter, name_scope=nos.original_name_scope,
                dtype=nos.dtype, use_resource=nos.use_resource, constraint=self._constraint)
            self._apply_settings(scope, nos.custom_getter)
            store.open_scope(self._new_name)
            self._old_counts = dict(store.counts)
        else:
            self._new_name = f"{old.name}/{nos}" if old.name else nos
            reuse = self._reuse or old.reuse  # reuse is inherited by sub-scopes
            scope = VariableScope(
                reuse, name=self._new_name, initializer=old.initializer,
                regularizer=old.regularizer, caching_device=old.caching_device,
                partitioner=old.partitioner, custom_getter=old.custom_getter,
                name_scope=nos if self._old_name_scope is None else self._old_name_scope,
                dtype=old.dtype, use_resource=old.use_resource, constraint=self._constraint)
            self._apply_settings(scope, old.custom_getter)
            store.open_scope(self._new_name)
        store.current_scope = self._scope = scope
        return scope

    def __exit__(self, *exc) -> None:
        store = self._store
        if store.current_scope is not self._scope:
            raise RuntimeError("Improper nesting of variable_scope: scopes must be exited "
                               "in the reverse order they were entered.")
        if isinstance(self._name_or_scope, VariableScope):
            store.counts = self._old_counts
        else:
            store.close_subscopes(self._new_name)
        store.current_scope = self._old


def _unique_variable_scope(prefix: str) -> str:
    """`prefix`, or `prefix_N` for the first N whose scope is not open here."""
    store = _scope_store()
    current = store.current_scope.name
    name = f"{current}/{prefix}" if current else prefix
    if store.count(name) == 0:
        return prefix
    idx = 1
    while store.count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


class variable_scope:
    """Context manager opening a variable scope (and a name scope) for `get_variable`.

    Parameters
    ----------
    name_or_scope : str, VariableScope or None
        The scope's name, relative to the current variable scope, or a `VariableScope`
        to re-enter (its absolute name is kept). None uses `default_name`.
    default_name : str
        With ``name_or_scope=None``: made unique (``dense``, ``dense_1``, ...) among the
        scopes open in the current scope.
    values : list of tensors
        Ops go into the graph of these tensors.
    initializer, regularizer, dtype, partitioner, caching_device, constraint
        Defaults for `get_variable` inside; inherited by sub-scopes.
    custom_getter : callable
        Wraps the parent scope's custom getter, if any.
    reuse : True, False/None (inherit) or `tf.AUTO_REUSE`
        See the module docstring.
    auxiliary_name_scope : bool
        False re-enters the current name scope instead of opening a new one.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     with tf.variable_scope("s"):
    ...         v = tf.get_variable("v", [1])
    ...     with tf.variable_scope("s", reuse=True) as scope:
    ...         c = tf.constant(1.0, name="c")
    ...     print(v.name, c.name, scope.original_name_scope)
    s/v:0 s_1/c:0 s_1/
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None,
                 regularizer=None, caching_device=None, partitioner=None, custom_getter=None,
                 reuse=None, dtype=None, use_resource=None, constraint=None,
                 auxiliary_name_scope: bool = True) -> None:
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if name_or_scope is not None and not isinstance(name_or_scope, str | VariableScope):
            raise TypeError(f"VariableScope: name_or_scope must be a string or "
                            f"VariableScope, got {name_or_scope!r}.")
        if reuse is False:
            reuse = None  # False means "inherit": a sub-scope cannot stop reusing
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError(f"The reuse parameter must be True or False or None, got "
                             f"{reuse!r}.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(f"The auxiliary_name_scope must be `True` or `False`, while "
                            f"get {auxiliary_name_scope!r}")
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = list(values) if values is not None else []
        self._settings = {"initializer": initializer, "regularizer": regularizer,
                          "caching_device": caching_device, "partitioner": partitioner,
                          "custom_getter": custom_getter, "dtype": dtype,
                          "use_resource": use_resource, "constraint": constraint}
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope
        self._exits: list[contextlib.ExitStack] = []

    def _graph(self) -> Graph:
        for v in self._values:
            g = getattr(v, "graph", None)
            if isinstance(g, Graph):
                return g
        return get_default_graph()

    def __enter__(self) -> VariableScope:
        stack = contextlib.ExitStack()
        try:
            graph = self._graph()
            if graph is not get_default_graph():
                stack.enter_context(graph.as_default())
            scope = self._enter(stack, graph)
        except BaseException:
            stack.close()
            raise
        self._exits.append(stack)
        return scope

    def _enter(self, stack: contextlib.ExitStack, graph: Graph) -> VariableScope:
        current_ns = None  # None: open a new name scope; a string: re-enter it
        if not self._auxiliary_name_scope:
            ns = graph.get_name_scope()
            current_ns = f"{ns}/" if ns else ""
        nos = self._name_or_scope
        if nos is not None:
            ns_name = nos if isinstance(nos, str) else nos.name.split("/")[-1]
            old_name_scope = None
            if ns_name or current_ns is not None:
                opened = stack.enter_context(graph.name_scope(
                    current_ns if current_ns is not None else ns_name))
                old_name_scope = opened if isinstance(nos, str) else nos.original_name_scope
            pure = _PureVariableScope(nos, reuse=self._reuse, old_name_scope=old_name_scope,
                                      **self._settings)
            return stack.enter_context(pure)
        if self._reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        opened = stack.enter_context(graph.name_scope(
            current_ns if current_ns is not None else self._default_name))
        pure = _PureVariableScope(_unique_variable_scope(self._default_name),
                                  old_name_scope=opened, **self._settings)
        return stack.enter_context(pure)

    def __exit__(self, *exc) -> None:
        self._exits.pop().close()


def _in_strategy() -> bool:
    """Whether a `tf.distribute` strategy's scope or replica is building (TF then ignores
    partitioners)."""
    from flowgraph.framework import distribute_context

    return (distribute_context.current_strategy() is not None
            or distribute_context.current_replica() is not None)

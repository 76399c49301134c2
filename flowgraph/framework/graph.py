"""`Graph`: the container of operations, with scopes, collections and the default stacks.

A graph only grows: ops are never removed, so a `Session` can cache run plans keyed by
what is fetched and fed. `finalize()` makes it read-only.

Example
-------
>>> import flowgraph as tf
>>> g = tf.Graph()
>>> with g.as_default():
...     a = tf.constant(2.0, name="a")
...     with tf.name_scope("block"):
...         b = tf.add(a, a)
>>> b.name
'block/Add:0'
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from flowgraph.framework import registry
from flowgraph.framework.device_spec import DeviceSpec
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape


class GraphKeys:
    """Standard collection names."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """A dataflow graph: operations connected by tensors."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._ops: list[Operation] = []
        self._ops_by_name: dict[str, Operation] = {}
        self._names_in_use: dict[str, int] = {}
        self._collections: dict[str, list] = {}
        self._finalized = False
        self._version = 0
        self._op_counter = 0
        self.seed: int | None = None
        self._last_op_seed = 0
        self._thread_state = threading.local()
        self._building_function = False

    # -- per-thread construction state ------------------------------------------------
    def _state(self):
        st = self._thread_state
        if not hasattr(st, "name_stack"):
            st.name_stack = ""
            st.control_stack = []  # list of lists of Operation, or None to clear
            st.device_stack = []  # list of str or callable
            st.colocation_stack = []  # list of Operation
            st.attr_scope = {}
        return st

    def _next_op_id(self) -> int:
        self._op_counter += 1
        return self._op_counter

    # -- default graph ----------------------------------------------------------------
    @contextlib.contextmanager
    def as_default(self) -> Iterator[Graph]:
        """Make this graph the default graph of the current thread inside the block."""
        stack = _default_graph_stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    # -- finalization -----------------------------------------------------------------
    def finalize(self) -> None:
        """Make the graph read-only: adding an op afterwards raises RuntimeError."""
        self._finalized = True

    @property
    def finalized(self) -> bool:
        return self._finalized

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    def _check_not_finalized(self) -> None:
        if self._finalized:
            raise RuntimeError(
                "Graph is finalized and cannot be modified. Create new ops before "
                "finalize() (or before a MonitoredSession starts), or build a new Graph."
            )

    @property
    def version(self) -> int:
        return self._version

    # -- names ------------------------------------------------------------------------
    def get_name_scope(self) -> str:
        return self._state().name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """`name` under the current name scope, suffixed ``_N`` if already used."""
        scope = self._state().name_stack
        if scope:
            name = f"{scope}/{name}"
        key = name.lower()
        count = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = count + 1
        if count == 0:
            return name
        base_key, base = key, name
        candidate_key = f"{base_key}_{count}"
        while candidate_key in self._names_in_use:
            count += 1
            candidate_key = f"{base_key}_{count}"
        if mark_as_used:
            self._names_in_use[candidate_key] = 1
        return f"{base}_{count}"

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Push a name scope; yields the scope string ending in '/' (or '')."""
        state = self._state()
        old = state.name_stack
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
        else:
            new = self.unique_name(name)
        state.name_stack = new
        try:
            yield f"{new}/" if new else ""
        finally:
            state.name_stack = old

    # -- control dependencies ---------------------------------------------------------
    @contextlib.contextmanager
    def control_dependencies(self, control_inputs) -> Iterator[None]:
        """Ops created inside run only after `control_inputs`; `None` clears them."""
        state = self._state()
        if control_inputs is None:
            saved = state.control_stack
            state.control_stack = []
            try:
                yield
            finally:
                state.control_stack = saved
            return
        ops = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element"):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(
                    f"Control input must be an Operation or a Tensor, got {type(c).__name__}: "
                    f"{c!r}"
                )
            if c.graph is not self:
                raise ValueError(f"Control input '{c.name}' belongs to a different graph")
            ops.append(c)
        state.control_stack.append(ops)
        try:
            yield
        finally:
            state.control_stack.pop()

    def _current_control_inputs(self) -> list[Operation]:
        out: list[Operation] = []
        for level in self._state().control_stack:
            for op in level:
                if op not in out:
                    out.append(op)
        return out

    # -- devices ----------------------------------------------------------------------
    @contextlib.contextmanager
    def device(self, device_name_or_function: str | Callable | None) -> Iterator[None]:
        """Place ops created inside on a device (a string, a function of the op, or None)."""
        state = self._state()
        if isinstance(device_name_or_function, str):
            DeviceSpec.from_string(device_name_or_function)  # validate early
        elif device_name_or_function is not None and not callable(device_name_or_function):
            spec = getattr(device_name_or_function, "to_string", None)
            if spec is None:
                raise TypeError(
                    f"device() expects a string, a DeviceSpec, a function or None; got "
                    f"{device_name_or_function!r}"
                )
            device_name_or_function = spec()
        state.device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            state.device_stack.pop()

    def _apply_device_stack(self, op: Operation) -> None:
        spec = DeviceSpec()
        for entry in self._state().device_stack:
            if entry is None:
                spec = DeviceSpec()
                continue
            if callable(entry):
                op._set_device(spec.to_string())
                value = entry(op)
                if hasattr(value, "to_string"):
                    value = value.to_string()
                new = DeviceSpec.from_string(value or "")
                spec = spec.merge_from(new)
            else:
                spec = spec.merge_from(DeviceSpec.from_string(entry))
        op._set_device(spec.to_string())

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False) -> Iterator[None]:
        """Ops created inside are placed on the same device as `op`."""
        if hasattr(op, "_as_graph_element"):
            op = op._as_graph_element()
        if isinstance(op, Tensor):
            op = op.op
        state = self._state()
        saved = state.colocation_stack
        if ignore_existing:
            state.colocation_stack = []
        if op is not None:
            state.colocation_stack = [*state.colocation_stack, op]
        saved_devices = state.device_stack
        if op is not None:
            # Colocation overrides enclosing device scopes, as in TensorFlow.
            state.device_stack = []
        try:
            yield
        finally:
            state.colocation_stack = saved
            state.device_stack = saved_devices

    # -- ops --------------------------------------------------------------------------
    def create_op(
        self,
        op_type: str,
        inputs: list[Tensor] | tuple = (),
        attrs: dict[str, Any] | None = None,
        name: str | None = None,
        dtypes: list | None = None,
    ) -> Operation:
        """Add a node of `op_type` to the graph and infer its outputs' shapes and dtypes."""
        with self._lock:
            self._check_not_finalized()
            op_def = registry.get_op_def(op_type)
            full_attrs = dict(op_def.attrs)
            if attrs:
                full_attrs.update(attrs)
            inputs = list(inputs)
            for i, t in enumerate(inputs):
                if not isinstance(t, Tensor):
                    raise TypeError(
                        f"Input {i} of op {op_type} must be a Tensor, got {type(t).__name__}"
                    )
                if t.graph is not self:
                    raise ValueError(
                        f"Tensor '{t.name}' must be from the same graph as the op being "
                        f"created ({op_type}); it belongs to another Graph"
                    )
            if name and name.endswith("/"):
                # A name scope string ("scope/") names the op exactly, as in TensorFlow.
                op_name = name[:-1]
                if op_name in self._ops_by_name:
                    raise ValueError(f"Duplicate op name '{op_name}'")
            else:
                op_name = self.unique_name(name or op_type)
            control = [c for c in self._current_control_inputs()]
            op = Operation(self, op_def, op_name, inputs, full_attrs, control, "")
            for c in control:
                c._control_outputs.append(op)
            self._apply_device_stack(op)
            colocation = self._state().colocation_stack
            if colocation:
                target = colocation[-1]
                op._colocation = list(target._colocation or [target.name])
                op._set_device(target.device)
            # shapes and dtypes
            n_out = op_def.output_count(op)
            if dtypes is None:
                if op_def.dtype_fn is not None:
                    dtypes = list(op_def.dtype_fn(op))
                elif inputs:
                    dtypes = [inputs[0].dtype.base_dtype] * n_out
                else:
                    dtypes = [full_attrs["dtype"]] * n_out
            shapes = op_def.shape_fn(op, *[t.shape for t in inputs])
            if shapes is None:
                shapes = [TensorShape(None)] * n_out
            if len(shapes) != n_out or len(dtypes) != n_out:
                raise AssertionError(
                    f"op {op_type}: shape/dtype functions returned {len(shapes)}/{len(dtypes)} "
                    f"results for {n_out} outputs"
                )
            for idx in op_def.ref_outputs:
                dtypes[idx] = dtypes[idx]._as_ref
            op._outputs = [
                Tensor(op, i, dt, as_shape(sh)) for i, (dt, sh) in enumerate(zip(dtypes, shapes))
            ]
            for t in inputs:
                t._consumers.append(op)
            self._ops.append(op)
            self._ops_by_name[op_name] = op
            self._version += 1
            return op

    def get_operations(self) -> list[Operation]:
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings, got {type(name).__name__}")
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(
                f"The name '{name}' refers to an Operation not in the graph."
            ) from None

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings, got {type(name).__name__}")
        op_name, sep, index = name.rpartition(":")
        if not sep or not index.isdigit():
            raise ValueError(
                f"The name '{name}' looks like an Operation name, not a Tensor name; "
                f"tensor names look like '<op_name>:<output_index>'."
            )
        op = self.get_operation_by_name(op_name)
        idx = int(index)
        if idx >= len(op._outputs):
            raise KeyError(
                f"The name '{name}' refers to a Tensor which does not exist: operation "
                f"'{op_name}' has {len(op._outputs)} outputs."
            )
        return op._outputs[idx]

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolve a Tensor, Operation, or name string to a graph element of this graph."""
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, str):
            if ":" in obj:
                if not allow_tensor:
                    raise ValueError(f"Name '{obj}' names a Tensor; an Operation is expected")
                return self.get_tensor_by_name(obj)
            if not allow_operation:
                raise ValueError(
                    f"Name '{obj}' appears to refer to an Operation, not a Tensor; did you "
                    f"mean '{obj}:0'?"
                )
            return self.get_operation_by_name(obj)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name} is not an element of this graph.")
            return obj
        raise TypeError(
            f"Can not convert a {type(obj).__name__} into a graph element: {obj!r}"
        )

    # -- collections ------------------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        self._check_not_finalized()
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list:
        return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: str | None = None) -> list:
        items = self._collections.get(name, [])
        if scope is None:
            return list(items)
        import re

        pattern = re.compile(scope)
        return [
            item for item in items
            if hasattr(item, "name") and pattern.match(item.name)
        ]

    def get_all_collection_keys(self) -> list[str]:
        return [k for k, v in self._collections.items() if v]

    def clear_collection(self, name: str) -> None:
        self._collections.pop(name, None)

    # -- feeding and fetching ---------------------------------------------------------
    def prevent_feeding(self, tensor: Tensor) -> None:
        self.__dict__.setdefault("_unfeedable", set()).add(tensor)

    def prevent_fetching(self, op: Operation) -> None:
        self.__dict__.setdefault("_unfetchable", set()).add(op)

    def is_feedable(self, tensor: Tensor) -> bool:
        return tensor not in self.__dict__.get("_unfeedable", ())

    def is_fetchable(self, tensor_or_op) -> bool:
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self.__dict__.get("_unfetchable", ())

    # -- seeds ------------------------------------------------------------------------
    def _next_op_seed(self) -> int:
        self._last_op_seed += 1
        return self._last_op_seed

    # -- serialization ----------------------------------------------------------------
    def as_graph_def(self, add_shapes: bool = False) -> dict:
        """The graph as a JSON-compatible dict (see `flowgraph.framework.serialization`)."""
        from flowgraph.framework.serialization import graph_to_dict

        return graph_to_dict(self, add_shapes=add_shapes)

    def __contains__(self, name: str) -> bool:
        return name in self._ops_by_name

    def __repr__(self) -> str:
        return f"<flowgraph.Graph with {len(self._ops)} ops>"


# -- default graph and session stacks (per thread, over a process-wide default) ---------
_global_default_graph: Graph | None = None
_stacks = threading.local()


def _default_graph_stack() -> list[Graph]:
    if not hasattr(_stacks, "graphs"):
        _stacks.graphs = []
    return _stacks.graphs


def get_default_graph() -> Graph:
    """The graph new ops go into: the innermost `as_default()` graph, else a global one."""
    stack = _default_graph_stack()
    if stack:
        return stack[-1]
    global _global_default_graph
    if _global_default_graph is None:
        _global_default_graph = Graph()
    return _global_default_graph


def reset_default_graph() -> None:
    """Replace the global default graph with a new, empty one."""
    if _default_graph_stack():
        raise AssertionError(
            "Do not use tf.reset_default_graph() inside a `with graph.as_default()` block "
            "or a session context; exit the block first."
        )
    global _global_default_graph
    _global_default_graph = Graph()


def _default_session_stack() -> list:
    if not hasattr(_stacks, "sessions"):
        _stacks.sessions = []
    return _stacks.sessions


def get_default_session():
    """The innermost session entered with ``with sess.as_default()`` (or None)."""
    stack = _default_session_stack()
    return stack[-1] if stack else None


def get_default_session_or_raise(what: str):
    sess = get_default_session()
    if sess is None:
        raise ValueError(
            f"Cannot evaluate '{what}' using eval()/run(): no default session is registered. "
            "Use `with sess.as_default():` or pass session=sess."
        )
    return sess


def get_collection(key: str, scope: str | None = None) -> list:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list:
    return get_default_graph().get_collection_ref(key)


def add_to_collection(name: str, value) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value) -> None:
    get_default_graph().add_to_collections(names, value)


def control_dependencies(control_inputs):
    """Context manager: ops created inside depend on `control_inputs` (None clears)."""
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    """Context manager placing ops created inside on a device."""
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing: bool = False):
    return get_default_graph().colocate_with(op, ignore_existing=ignore_existing)


def get_seed(op_seed: int | None) -> tuple[int | None, int | None]:
    """TensorFlow's seeding rule: (graph seed, op seed) for a random op.

    No seeds -> (None, None): nondeterministic. Graph seed only -> the op seed is a
    counter, so the sequence of random ops is reproducible. Op seed only -> a fixed
    default graph seed is used.
    """
    graph = get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = graph._next_op_seed()
        return graph_seed, op_seed
    if op_seed is not None:
        return 87654321, op_seed
    return None, None


def set_random_seed(seed: int | None) -> None:
    """Set the graph-level random seed of the default graph."""
    get_default_graph().seed = seed


@contextlib.contextmanager
def name_scope(name: str | None, default_name: str | None = None, values=None):
    """TF1 ``tf.name_scope(name, default_name=None, values=None)``.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default(), tf.name_scope("layer") as scope:
    ...     print(scope)
    layer/
    """
    graph = get_default_graph()
    if values:
        for v in values:
            g = getattr(v, "graph", None)
            if isinstance(g, Graph):
                graph = g
                break
    if name is None and default_name is None and values is not None:
        raise ValueError("At least one of name (None) and default_name (None) must be set")
    scope_name = name if name is not None else default_name
    if name is None and default_name is not None:
        scope_name = default_name
    with graph.as_default(), graph.name_scope(scope_name) as scope:
        yield scope

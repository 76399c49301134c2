"""`Graph`: the container of operations, with scopes, collections and the default stacks.

A graph only grows: ops are never removed, so a `Session` can cache run plans keyed by
what is fetched and fed. `finalize()` makes it read-only.

Construction state (name scope, control-dependency controllers, device and colocation
stacks) is per thread and per graph, as in TensorFlow. Creating an op consults it once:

* **name** -- ``unique_name``: ``scope/name``, then ``_1``, ``_2``, ... on collision;
  names are compared case-insensitively. A name ending in ``/`` is used verbatim.
* **control inputs** -- every enclosing ``control_dependencies`` controller adds its ops,
  unless one of the new op's inputs was itself created inside that controller (it
  already waits for them) or the op is one of the inputs.
* **device** -- device scopes are applied innermost first: a string fills the fields
  that are still unset, a function sees the op and replaces its device, ``None`` stops.
* **colocation** -- inside ``colocate_with(x)`` the op joins x's colocation groups and
  takes x's device; enclosing device scopes are ignored.

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
import re
import threading
from collections.abc import Iterator
from typing import Any

from flowgraph.framework import registry
from flowgraph.framework.device_spec import device_string, merge_device
from flowgraph.framework.event_messages import VersionDef
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.serialization import graph_to_dict
from flowgraph.framework.session_stack import (  # re-exported: tf.get_default_session
    _default_session_stack as _default_session_stack,
)
from flowgraph.framework.session_stack import get_default_session as get_default_session
from flowgraph.framework.session_stack import (
    get_default_session_or_raise as get_default_session_or_raise,
)
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.framework.tf_formats.graph_def import TF_PRODUCER, GraphDefDict

# TensorFlow's rules: an op name (and a scope opened at the root) starts with a letter,
# digit or '.'; a scope nested in another may also start with '_', '-', '/', '>'.
_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")


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
    _SUMMARY_COLLECTION = "_SUMMARY_V2"
    _STREAMING_MODEL_PORTS = "streaming_model_ports"
    _VARIABLE_COLLECTIONS = [
        GLOBAL_VARIABLES, LOCAL_VARIABLES, METRIC_VARIABLES, MODEL_VARIABLES,
        TRAINABLE_VARIABLES, MOVING_AVERAGE_VARIABLES, CONCATENATED_VARIABLES,
        TRAINABLE_RESOURCE_VARIABLES,
    ]
    VARIABLES = GLOBAL_VARIABLES


class InaccessibleTensorError(ValueError):
    """A fetch of an op its graph marked not fetchable (`Graph.prevent_fetching`), raised
    by ``Session.run``. TensorFlow keeps it out of ``tf.errors``; its internal paths
    ``tensorflow.python.framework.errors``/``errors_impl`` hold it, and so do
    flowgraph's views of them."""


class _ControlDependencies:
    """What ``graph.control_dependencies(...)`` returns (validated when created).

    `ops` is None for ``control_dependencies(None)``, which hides every enclosing
    controller. `seen` holds the ops created inside this block: a new op with an input
    among them already depends on `ops` and gets no control edges from this controller.
    """

    __slots__ = ("_graph", "_saved", "ops", "seen", "written")

    def __init__(self, graph: Graph, ops: list[Operation] | None) -> None:
        self._graph = graph
        self.ops = ops
        self.seen: set[Operation] = set()
        self._saved = None
        self.written: frozenset | None = None  # refs `ops` may write (`_refs_written`)

    def __enter__(self) -> None:
        state = self._graph._state()
        if self.ops is None:
            self._saved = state.control_stack
            state.control_stack = []
        else:
            state.control_stack.append(self)

    def __exit__(self, *exc) -> None:
        state = self._graph._state()
        if self.ops is None:
            state.control_stack = self._saved
        elif state.control_stack and state.control_stack[-1] is self:
            state.control_stack.pop()
        return None


_WALK_LIMIT = 100_000  # ops visited per control-dependency context, at most


def _refs_written(controller: _ControlDependencies) -> frozenset:
    """The ref tensors (variables) an op among `controller.ops`, or an op they depend
    on, takes as a ref input: what running them may update. Cached on the controller."""
    if controller.written is None:
        written, seen = set(), set()
        todo = [op for op in controller.ops if isinstance(op, Operation)]
        while todo and len(seen) < _WALK_LIMIT:
            op = todo.pop()
            if op in seen:
                continue
            seen.add(op)
            op_def = op.op_def
            for k, t in enumerate(op._inputs):
                if t.dtype.is_ref_dtype and op_def.is_ref_input(k):
                    written.add(t)
                todo.append(t._op)
            todo.extend(op._control_inputs)
        controller.written = frozenset(written)
    return controller.written


class _Stacks:
    """A graph's control-dependency, device and colocation stacks."""

    __slots__ = ("colocation_stack", "control_stack", "device_stack")

    def __init__(self, template: _Stacks | None = None) -> None:
        self.control_stack = list(template.control_stack) if template else []
        # entries: ("s", canonical str) | ("f", fn) | None
        self.device_stack = list(template.device_stack) if template else []
        self.colocation_stack = list(template.colocation_stack) if template else []


class _ThreadState(threading.local):
    """A thread's construction state of one graph: its name scope and attribute scope,
    and the stacks it uses (the graph's shared `_Stacks` or its own)."""

    def __init__(self) -> None:
        self.name_stack = ""
        self.attr_scope = {}
        self.stacks: _Stacks | None = None

    control_stack = property(lambda self: self.stacks.control_stack,
                             lambda self, v: setattr(self.stacks, "control_stack", v))
    device_stack = property(lambda self: self.stacks.device_stack,
                            lambda self, v: setattr(self.stacks, "device_stack", v))
    colocation_stack = property(lambda self: self.stacks.colocation_stack,
                                lambda self, v: setattr(self.stacks, "colocation_stack", v))


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
        # Counts edits of existing ops (rewired inputs, removed control inputs): a
        # session drops the plans it compiled before one (tf.contrib.graph_editor).
        self._edits = 0
        self._op_counter = 0
        self._seed: int | None = None
        self._last_op_seed = 0
        self._thread_state = _ThreadState()
        # The control-dependency, device and colocation stacks: one set for the whole
        # graph (as TensorFlow), each thread's own after `switch_to_thread_local`.
        self._shared_stacks = _Stacks()
        self._stacks_thread_local = False
        self._building_function = False

    @property
    def seed(self) -> int | None:
        """The graph-level random seed (`tf.set_random_seed` sets it; None: unset)."""
        return self._seed

    @seed.setter
    def seed(self, seed: int | None) -> None:
        self._seed = seed

    # -- per-thread construction state ------------------------------------------------
    def _state(self):
        st = self._thread_state
        stacks = st.stacks
        if stacks is None or (self._stacks_thread_local and stacks is self._shared_stacks):
            shared = self._shared_stacks
            st.stacks = _Stacks(shared) if self._stacks_thread_local else shared
        return st

    def switch_to_thread_local(self) -> None:
        """Give each thread its own control-dependency, device and colocation stacks
        from now on (by default threads building this graph share them; name scopes are
        always per thread). Each thread starts from the graph's stacks as they were."""
        if not self._stacks_thread_local:
            self._state()  # the calling thread's stacks become the graph's template
            self._stacks_thread_local = True

    def num_operations(self) -> int:
        """How many ops the graph holds."""
        return len(self._ops)

    def get(self) -> Graph:
        """The graph itself (TensorFlow's graphs answer the weak-reference protocol)."""
        return self

    def _note_edit(self) -> None:
        """Record that an existing op changed: sessions recompile their plans."""
        self._version += 1
        self._edits += 1

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
            if stack and stack[-1] is self:
                stack.pop()
            elif any(g is self for g in stack):  # exited before a graph entered after it
                raise AssertionError(
                    "Nesting violated for default stack of Graph objects: a graph's "
                    "as_default() block was exited while a graph entered after it was "
                    "still the default. Exit `with` blocks in the reverse order.")

    @property
    def building_function(self) -> bool:
        return self._building_function

    @property
    def graph_def_versions(self) -> VersionDef:
        """A ``VersionDef`` message (``tensorflow.core.framework.versions_pb2``): the
        producer version that ``as_graph_def()`` writes, TensorFlow 2.15's."""
        return VersionDef(producer=TF_PRODUCER)

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
        """The current name scope, without a trailing '/' ('' at the root)."""
        return self._state().name_stack

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        """`name` under the current name scope, suffixed ``_N`` if already used.

        Names are compared case-insensitively (``foo`` and ``Foo`` collide), as in
        TensorFlow, so graphs stay valid on case-insensitive file systems.
        """
        scope = self._state().name_stack
        if scope:
            name = f"{scope}/{name}"
        key = name.lower()
        names = self._names_in_use
        count = names.get(key, 0)
        if mark_as_used:
            names[key] = count + 1
        if count == 0:
            return name
        candidate = f"{key}_{count}"
        while candidate in names:
            count += 1
            candidate = f"{key}_{count}"
        if mark_as_used:
            names[candidate] = 1
        return f"{name}_{count}"

    @contextlib.contextmanager
    def name_scope(self, name: str | None) -> Iterator[str]:
        """Push a name scope; yields the scope string ending in '/' (or '').

        ``None`` or ``''`` return to the root scope; a name ending in '/' re-enters that
        exact scope; any other name is made unique (``scope``, ``scope_1``, ...).
        """
        state = self._state()
        old = state.name_stack
        if name:
            if isinstance(name, bytes):
                name = name.decode("utf-8")
            pattern = _VALID_SCOPE_NAME if old else _VALID_OP_NAME
            if not pattern.match(name):
                where = "scope name" if old else "root scope name"
                raise ValueError(
                    f"'{name}' is not a valid {where}. It must match {pattern.pattern}"
                    + ("" if old else " (start with a letter, digit or '.')")
                )
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
    def control_dependencies(self, control_inputs) -> _ControlDependencies:
        """Ops created inside run only after `control_inputs`; `None` clears them.

        `control_inputs` may hold Operations, Tensors (their ops), Variables, or names.
        """
        if control_inputs is None:
            return _ControlDependencies(self, None)
        current = set(self._current_control_inputs())
        ops = []
        for c in control_inputs:
            c = self.as_graph_element(c)
            if isinstance(c, Tensor):
                c = c.op
            if c not in current:
                ops.append(c)
                current.add(c)
        return _ControlDependencies(self, ops)

    def _current_control_inputs(self) -> list[Operation]:
        out: list[Operation] = []
        for controller in self._state().control_stack:
            out.extend(op for op in controller.ops if op not in out)
        return out

    def _record_op_seen_by_control_dependencies(self, op: Operation) -> None:
        for controller in self._state().control_stack:
            controller.seen.add(op)

    def _control_inputs_for(self, stack, inputs) -> list[Operation]:
        input_ops = {t._op for t in inputs}
        out: list[Operation] = []
        for controller in stack:
            if not input_ops.isdisjoint(controller.seen):
                continue  # an input already waits for this controller's ops
            for c in controller.ops:
                if c not in input_ops and c not in out:
                    out.append(c)
        return out

    # -- devices ----------------------------------------------------------------------
    def device(self, device_name_or_function) -> contextlib.AbstractContextManager:
        """Place ops created inside on a device: a string (``'/cpu:0'``,
        ``'/job:ps/task:0'``), a `DeviceSpec`, a function ``op -> device``, or None.

        Nested string scopes merge field by field, the inner one winning.
        """
        if device_name_or_function is None:
            entry = None
        elif callable(device_name_or_function) and not isinstance(
                device_name_or_function, str) and not hasattr(
                device_name_or_function, "to_string"):
            entry = ("f", device_name_or_function)
        else:
            entry = ("s", device_string(device_name_or_function))
        return self._push_device(entry)

    @contextlib.contextmanager
    def _push_device(self, entry) -> Iterator[None]:
        state = self._state()
        state.device_stack.append(entry)
        try:
            yield
        finally:
            state.device_stack.pop()

    def _apply_device_functions(self, op: Operation, stack) -> None:
        device = ""
        for entry in reversed(stack):
            if entry is None:
                break
            kind, value = entry
            if kind == "s":
                if value:
                    device = merge_device(value, device)
            else:
                op._device = device
                requested = value(op)
                device = device_string(requested)  # validates
                if isinstance(requested, str | bytes) and device:
                    # TensorFlow keeps a function's string as written ('/cpu:0');
                    # string scopes around it merge it into canonical form.
                    device = requested.decode() if isinstance(requested, bytes) else requested
        op._device = device

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing: bool = False) -> Iterator[None]:
        """Ops created inside join `op`'s colocation group and take its device.

        Enclosing ``tf.device`` scopes do not apply inside (device scopes opened inside
        do, when `op` has no device). ``colocate_with(None, ignore_existing=True)``
        clears the colocation stack.
        """
        if op is None and not ignore_existing:
            raise ValueError("Trying to reset colocation (op is None) but "
                             "ignore_existing is not True")
        if op is not None:
            op = self.as_graph_element(op)
            if isinstance(op, Tensor):
                op = op.op
        state = self._state()
        saved_colocation = state.colocation_stack
        saved_devices = state.device_stack
        state.device_stack = []
        if ignore_existing:
            state.colocation_stack = []
        if op is not None:
            state.colocation_stack = [*state.colocation_stack, op]
        try:
            yield
        finally:
            state.colocation_stack = saved_colocation
            state.device_stack = saved_devices

    def gradient_override_map(self, op_type_map: dict):
        """Ops of the mapped types created inside use the ``tf.RegisterGradient`` names.

        Example: ``with g.gradient_override_map({"PyFunc": "MySquareGrad"}): ...``;
        see flowgraph/framework/gradient_override.py.
        """
        from flowgraph.framework.gradient_override import override_gradients

        return override_gradients(self, op_type_map)

    @contextlib.contextmanager
    def container(self, container_name: str) -> Iterator[str]:
        """Stateful ops created inside (variables, queues, accumulators) keep their state
        in resource container `container_name` (``Session.reset`` clears one by name)."""
        saved = self.__dict__.get("_container", "")
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = saved

    # -- ops --------------------------------------------------------------------------
    def create_op(
        self,
        op_type: str,
        inputs: list[Tensor] | tuple = (),
        attrs: dict[str, Any] | None = None,
        name: str | None = None,
        dtypes: list | None = None,
    ) -> Operation:
        """Add a node of `op_type` to the graph and infer its outputs' shapes and dtypes.

        `name` defaults to `op_type` and is made unique under the current name scope; a
        name ending in '/' (a scope string) names the op exactly.
        """
        inputs = list(inputs)
        for i, t in enumerate(inputs):
            if type(t) is not Tensor and not isinstance(t, Tensor):
                raise TypeError(
                    f"Input {i} of op {op_type} must be a Tensor, got {type(t).__name__}"
                )
            if t._op._graph is not self:
                raise ValueError(
                    f"Tensor '{t.name}' must be from the same graph as the op being "
                    f"created ({op_type} in {self!r}); it belongs to another Graph."
                )
        op_def = registry.get_op_def(op_type)
        with self._lock:
            self._check_not_finalized()
            full_attrs = dict(op_def.attrs)
            if attrs:
                full_attrs.update(attrs)
            if full_attrs.get("container") == "" and self.__dict__.get("_container"):
                full_attrs["container"] = self._container
            op_name = self._op_name(name or op_type)
            state = self._state()
            stack = state.control_stack
            control = self._control_inputs_for(stack, inputs) if stack else []
            if stack:
                # Also when an input made in the context already waits for the updates
                # (no control input then): a snapshot taken before them would be stale.
                inputs = self._reread_updated_variables(stack, inputs)
            op = Operation(self, op_def, op_name, inputs, full_attrs, control, "")
            for c in control:
                c._control_outputs.append(op)
            if state.device_stack:
                self._apply_device_functions(op, state.device_stack)
            colocation = state.colocation_stack
            if colocation:
                self._apply_colocation(op, colocation)
            # shapes and dtypes
            n_out = op_def.output_count(op)
            if dtypes is None:
                if op_def.dtype_fn is not None:
                    dtypes = list(op_def.dtype_fn(op))
                elif inputs:
                    dtypes = [inputs[0].dtype.base_dtype] * n_out
                else:
                    dtypes = [full_attrs["dtype"]] * n_out
            else:
                dtypes = list(dtypes)
            shapes = op_def.shape_fn(op, *[t._shape for t in inputs])
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
                Tensor(op, i, dt, sh if isinstance(sh, TensorShape) else as_shape(sh))
                for i, (dt, sh) in enumerate(zip(dtypes, shapes))
            ]
            for t in inputs:
                t._consumers.append(op)
            self._ops.append(op)
            self._ops_by_name[op_name] = op
            self._version += 1
            if stack:
                for controller in stack:
                    controller.seen.add(op)
            return op

    def _reread_updated_variables(self, stack, inputs: list) -> list:
        """`inputs` with each variable snapshot (``v/read``, made with the variable) whose
        variable the active control dependencies may update replaced by a fresh read
        made here, which waits for them. In TensorFlow the snapshot aliases the
        variable's buffer, so an op made inside ``control_dependencies([update])`` reads
        the updated value (``tf.cast(global_step)`` after its increment, an
        ExponentialMovingAverage's ``num_updates``); flowgraph's snapshot is a value
        taken when it runs, which may be before the update."""
        cache = self.__dict__.get("_deref_cache")
        if not cache:
            return inputs
        out = inputs
        for k, t in enumerate(inputs):
            op = t._op
            if op.type != "Identity" or not op._inputs:
                continue
            ref = op._inputs[0]
            if cache.get(ref) is not t or not any(ref in _refs_written(c) for c in stack):
                continue
            if out is inputs:
                out = list(inputs)
            out[k] = self.create_op("Identity", [ref], name="read").outputs[0]
        return out

    def _op_name(self, name: str) -> str:
        if name[-1:] == "/":
            # A scope string ("scope/") names the op exactly, as in TensorFlow.
            exact = name[:-1]
            if not _VALID_OP_NAME.match(exact):
                raise ValueError(_bad_op_name(exact))
            if exact in self._ops_by_name:
                raise ValueError(
                    f"Duplicate node name in graph: '{exact}'. A name ending in '/' names "
                    "the op exactly; pick another name or drop the trailing '/'."
                )
            # Unlike TensorFlow, mark the name used so a later op of the same name gets
            # a suffix instead of a duplicate-name error.
            self._names_in_use.setdefault(exact.lower(), 1)
            return exact
        if not _VALID_OP_NAME.match(name):
            raise ValueError(_bad_op_name(name))
        op_name = self.unique_name(name)
        while op_name in self._ops_by_name:  # only after an exact-name op took it
            op_name = self.unique_name(name)
        return op_name

    @staticmethod
    def _apply_colocation(op: Operation, colocation: list[Operation]) -> None:
        groups: set[str] = set()
        device = None
        for target in reversed(colocation):  # innermost first
            groups.update(target._colocation or (target._name,))
            if device is None and target._device:
                device = target._device
        op._colocation = sorted(groups)
        if device is not None:
            op._device = device

    def get_operations(self) -> list[Operation]:
        """All ops, in creation order (a new list)."""
        return list(self._ops)

    def get_operation_by_name(self, name: str) -> Operation:
        """The op named `name` (KeyError if none; ValueError for a tensor name)."""
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not "
                            f"{type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def get_tensor_by_name(self, name: str) -> Tensor:
        """The tensor named ``'op_name:index'`` (KeyError if none; ValueError for an op
        name)."""
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not "
                            f"{type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor: bool = True, allow_operation: bool = True):
        """Resolve a Tensor, Operation, Variable or name string to an element of this graph."""
        if not allow_tensor and not allow_operation:
            raise ValueError("allow_tensor and allow_operation can't both be False.")
        if allow_tensor and allow_operation:
            types_str = "Tensor or Operation"
        elif allow_tensor:
            types_str = "Tensor"
        else:
            types_str = "Operation"
        conv = getattr(obj, "_as_graph_element", None)
        if conv is not None and not isinstance(obj, Tensor | Operation):
            obj = conv()
        if isinstance(obj, str):
            return self._element_by_name(obj, allow_tensor, allow_operation)
        if isinstance(obj, bytes):  # names may come as bytes (e.g. from a proto), as in TF
            return self._element_by_name(obj.decode(), allow_tensor, allow_operation)
        if isinstance(obj, Tensor) and allow_tensor:
            if obj._op._graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj._graph is not self:
                raise ValueError(f"Operation {obj!r} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {types_str}.")

    def _element_by_name(self, name: str, allow_tensor: bool, allow_operation: bool):
        if ":" in name:
            if not allow_tensor:
                raise ValueError(
                    f"Name '{name}' appears to refer to a Tensor, not an Operation.")
            parts = name.split(":")
            try:
                if len(parts) != 2:
                    raise ValueError
                op_name, idx = parts[0], int(parts[1])  # as TF: 'x:-1' is x's last output
            except ValueError:
                raise ValueError(
                    f"The name '{name}' looks like a Tensor name, but is not a valid one. "
                    "Tensor names must be of the form \"<op_name>:<output_index>\"."
                ) from None
            op = self._ops_by_name.get(op_name)
            if op is None:
                raise KeyError(
                    f"The name '{name}' refers to a Tensor which does not exist. The "
                    f"operation, '{op_name}', does not exist in the graph."
                )
            if not -len(op._outputs) <= idx < len(op._outputs):
                raise KeyError(
                    f"The name '{name}' refers to a Tensor which does not exist. The "
                    f"operation, '{op_name}', exists but only has {len(op._outputs)} "
                    "outputs."
                )
            return op._outputs[idx]
        if not allow_operation:
            if name in self._ops_by_name:
                raise ValueError(
                    f"The name '{name}' refers to an Operation, not a Tensor. Tensor names "
                    f"must be of the form \"<op_name>:<output_index>\" (e.g. '{name}:0')."
                )
            raise ValueError(
                f"The name '{name}' looks like an (invalid) Operation name, not a Tensor. "
                "Tensor names must be of the form \"<op_name>:<output_index>\"."
            )
        op = self._ops_by_name.get(name)
        if op is None:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.")
        return op

    # -- collections ------------------------------------------------------------------
    def add_to_collection(self, name: str, value) -> None:
        """Append `value` to collection `name`."""
        self._check_not_finalized()
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value) -> None:
        """Add `value` to each collection in `names` (a string or an iterable; each
        collection at most once)."""
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list:
        """The collection list itself (created if missing): changes to it are kept."""
        with self._lock:
            coll = self._collections.get(name)
            if coll is None:
                coll = self._collections[name] = []
            return coll

    def get_collection(self, name: str, scope: str | None = None) -> list:
        """A copy of collection `name`; with `scope`, only items whose ``name`` matches
        the regular expression `scope` at its start (``re.match``)."""
        with self._lock:
            items = self._collections.get(name)
            if items is None:
                return []
            if scope is None:
                return list(items)
            pattern = re.compile(scope)
            return [
                item for item in items
                if isinstance(getattr(item, "name", None), str) and pattern.match(item.name)
            ]

    def get_all_collection_keys(self) -> list[str]:
        """The names of the collections (string keys only)."""
        with self._lock:
            return [k for k in self._collections if isinstance(k, str)]

    @property
    def collections(self) -> list:
        """The collection keys of this graph."""
        return list(self._collections)

    def clear_collection(self, name: str) -> None:
        with self._lock:
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
        # As TF 2.15: the graph's seedless random ops take 0, 1, 2, ... in creation order
        seed = self._last_op_seed
        self._last_op_seed += 1
        return seed

    # -- serialization ----------------------------------------------------------------
    def as_graph_def(self, from_version: int | None = None, add_shapes: bool = False) -> dict:
        """The graph as a JSON-compatible dict (see `flowgraph.framework.serialization`)
        that is also TensorFlow's GraphDef message (`tf_formats.graph_def.GraphDefDict`)."""
        return GraphDefDict(graph_to_dict(self, add_shapes=add_shapes), add_shapes=add_shapes)

    def __contains__(self, name: str) -> bool:
        return name in self._ops_by_name

    def __repr__(self) -> str:
        return f"<flowgraph.Graph with {len(self._ops)} ops at {id(self):#x}>"


def _bad_op_name(name: str) -> str:
    return (
        f"'{name}' is not a valid op name: names must match {_VALID_OP_NAME.pattern} "
        "(start with a letter, digit or '.'; then letters, digits and '_.-/>\\')."
    )


# -- default graph stack (per thread, over a process-wide default); the session stack
# -- is in session_stack.py ----------------------------------------------------------
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
            "Do not use tf.reset_default_graph() to clear nested graphs: it was called "
            "inside a `with graph.as_default()` block or a session context. Exit the "
            "nesting first, or create a new tf.Graph()."
        )
    global _global_default_graph
    _global_default_graph = Graph()


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
    """Context manager: ops created inside are colocated with `op` (see `Graph`)."""
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
        seeds = _truncate_seed(graph_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = 87654321, _truncate_seed(op_seed)
    else:
        return None, None
    # (0, 0) would mean "unseeded" to the kernels: TF keeps the pair deterministic
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


_MAXINT32 = 2**31 - 1


def _truncate_seed(seed: int) -> int:
    """A seed folded into [0, 2**31 - 1), as TensorFlow folds it."""
    return int(seed) % _MAXINT32


def set_random_seed(seed: int | None) -> None:
    """Set the graph-level random seed of the default graph."""
    get_default_graph().seed = seed


def graph_for(values) -> Graph:
    """The graph that ops reading `values` go to: the default graph while it builds a
    function (a ``tf.data`` function's graph, which captures tensors of other graphs),
    else the graph of the first value that has one, else the default graph."""
    graph = get_default_graph()
    if graph.building_function:
        return graph
    for v in values:
        g = getattr(v, "graph", None)
        if isinstance(g, Graph):
            return g
    return graph


class name_scope:
    """TF1 ``tf.name_scope(name, default_name=None, values=None)``: a context manager
    that opens a name scope and yields it as a string ending in '/'.

    `name` is used if given, else `default_name` (made unique: ``dense``, ``dense_1``).
    ``name_scope(None)`` returns to the root scope; a name ending in '/' re-enters an
    existing scope exactly. With `values`, ops go into the graph of those tensors.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default(), tf.name_scope("layer") as scope:
    ...     print(scope)
    layer/
    """

    __slots__ = ("_default_name", "_exits", "_name", "_values")

    def __init__(self, name: str | None, default_name: str | None = None,
                 values=None) -> None:
        self._name = default_name if name is None else name
        self._default_name = default_name
        self._values = values
        self._exits: list = []

    @property
    def name(self) -> str | None:
        return self._name

    def __enter__(self) -> str:
        if self._name is None and self._values is not None:
            raise ValueError(
                f"At least one of name ({self._name}) and default_name "
                f"({self._default_name}) must be provided."
            )
        graph = graph_for(self._values or ())
        stack = contextlib.ExitStack()
        try:
            if graph is not get_default_graph():
                stack.enter_context(graph.as_default())
            scope = stack.enter_context(graph.name_scope(self._name))
        except BaseException:
            stack.close()
            raise
        self._exits.append(stack)
        return scope

    def __exit__(self, *exc) -> None:
        self._exits.pop().close()

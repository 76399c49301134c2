"""`Optimizer`: the base class of TF1's ``tf.train.*Optimizer``.

``minimize(loss)`` is ``compute_gradients`` (symbolic gradients, `tf.gradients`) followed
by ``apply_gradients``, which builds, per variable with a gradient, one fused update op
(``ApplyAdam``, ``SparseApplyMomentum``, ...; see `flowgraph/ops/training_ops.py`) that
changes the variable and its slots in place. A subclass supplies:

    _create_slots(var_list)   make the slot variables (`_zeros_slot`, `_get_or_make_slot`)
    _prepare()                turn hyperparameters into tensors (once per apply_gradients)
    _apply_dense(grad, var)   the update op for a dense gradient
    _apply_sparse(grad, var)  the update op for an `IndexedSlices` gradient: the kernel
                              updates only the indexed rows (duplicates add up), nothing
                              is densified
    _finish(update_ops, name) a final op (Adam advances its beta powers here)

As in TF, resource variables go to ``_resource_apply_dense(grad, var)`` and
``_resource_apply_sparse(values, var, indices)`` (the rows of repeated indices summed
first, as for a program's own ``_apply_sparse``); flowgraph's optimizers serve both kinds
of variable from their ``_apply_*`` methods, so only a program's direct subclass of
`Optimizer` must define the resource methods.

The graph has TF1's names: ``Adam/update_w/ApplyAdam``, slots ``w/Adam`` and
``w/Adam_1``, and with a `global_step` the returned op is the step's ``AssignAdd`` named
after the optimizer (``Adam``), run after every update. The op is added to the
``TRAIN_OP`` collection.

Example
-------
>>> import flowgraph as tf
>>> w = tf.Variable(5.0, name="w")
>>> step = tf.train.get_or_create_global_step()
>>> train = tf.train.GradientDescentOptimizer(0.25).minimize(w * w, global_step=step)
>>> with tf.Session() as sess:
...     sess.run(tf.global_variables_initializer())
...     sess.run(train)
...     print(sess.run(w), sess.run(step))
2.5 1
"""

from __future__ import annotations

from flowgraph.framework import distribute_context
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import GraphKeys, get_collection, get_default_graph
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.operation import Operation, Tensor
from flowgraph.ops import init_ops, math_ops
from flowgraph.ops.control_flow_ops import group
from flowgraph.ops.variables import Variable, trainable_variables
from flowgraph.train import slot_creator

__all__ = ["Optimizer"]

_VALID_DTYPES = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _var_key(var):
    """Slots are keyed by (graph, variable op name): a Variable or its ref both work."""
    return (var.op.graph, var.op.name)


def _as_gradient(g):
    if g is None or isinstance(g, Tensor | IndexedSlices):
        return g
    try:
        return convert_to_tensor(g)
    except (TypeError, ValueError):
        raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or "
                        f"None: {g!r}") from None


def _flatten(items) -> list:
    if isinstance(items, list | tuple | set):
        out = []
        for x in items:
            out.extend(_flatten(x))
        return out
    if isinstance(items, dict):
        return _flatten(list(items.values()))
    return [items]


def check_some_gradients(grads_and_vars, loss) -> None:
    """Raise ValueError, as `minimize` does, when no variable of `grads_and_vars` has a
    gradient with respect to `loss`."""
    if not any(g is not None for g, _ in grads_and_vars):
        raise ValueError(
            "No gradients provided for any variable, check your graph for ops that do "
            f"not support gradients, between variables {[str(v) for _, v in grads_and_vars]}"
            f" and loss {loss}.")


class Optimizer:
    """Base class: subclasses implement the update rule; see the module docstring.

    Parameters
    ----------
    use_locking : bool
        Hold each variable's lock during its update (otherwise updates may race, as in
        TensorFlow, which is fine for most training).
    name : str
        Name scope of the update ops and suffix of the slot variables.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots: dict[str, dict] = {}
        self._non_slot_dict: dict = {}

    def get_name(self) -> str:
        return self._name

    # -- the public API ----------------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP,
                 aggregation_method=None, colocate_gradients_with_ops: bool = False,
                 name: str | None = None, grad_loss=None):
        """Add ops minimizing `loss`: `compute_gradients` then `apply_gradients`.

        Returns the training op (the `global_step` increment when a step is given).

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.Variable([1.0, -2.0])
        ...     op = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(x * x))
        ...     print(op.type, op.name)
        NoOp Adam
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        check_some_gradients(grads_and_vars, loss)
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP,
                          aggregation_method=None, colocate_gradients_with_ops: bool = False,
                          grad_loss=None) -> list:
        """``[(gradient, variable)]`` of `loss` for `var_list` (default: the trainable
        variables and ``TRAINABLE_RESOURCE_VARIABLES``). A gradient is a Tensor, an
        `IndexedSlices` (e.g. through `tf.gather`), or None when the variable does not
        affect `loss`.

        `gate_gradients`: ``GATE_OP`` (default) makes each op's input gradients available
        together, so an in-place update cannot change a variable another gradient still
        reads; ``GATE_GRAPH`` waits for all gradients; ``GATE_NONE`` does not gate.

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.Variable(3.0, name="w")
        ...     u = tf.Variable(1.0, name="u")
        ...     opt = tf.train.GradientDescentOptimizer(0.1)
        ...     print([(g is not None, v.op.name) for g, v in opt.compute_gradients(2.0 * w)])
        [(True, 'w'), (False, 'u')]
        """
        from flowgraph.ops.gradients import gradients

        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP,
                                  Optimizer.GATE_GRAPH):
            raise ValueError("gate_gradients must be one of: Optimizer.GATE_NONE, "
                             f"Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  Not {gate_gradients}")
        loss = convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        loss = self._scale_loss(loss)
        if grad_loss is not None:
            grad_loss = convert_to_tensor(grad_loss)
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = trainable_variables() + get_collection(
                GraphKeys.TRAINABLE_RESOURCE_VARIABLES)
        else:
            var_list = _flatten(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            self._check_updatable(v)
        grads = gradients(loss, list(var_list), grad_ys=grad_loss,
                          gate_gradients=gate_gradients == Optimizer.GATE_OP,
                          aggregation_method=aggregation_method,
                          colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _gate_all(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name: str | None = None):
        """The op applying ``[(gradient, variable)]`` (None gradients are skipped) and,
        after all updates, incrementing `global_step` by one if given.

        Raises ValueError when the list is empty or no variable has a gradient.

        Example
        -------
        >>> import flowgraph as tf
        >>> tf.reset_default_graph()
        >>> v = tf.Variable([1.0, 2.0], name="v")
        >>> op = tf.train.MomentumOptimizer(0.1, 0.9).apply_gradients(
        ...     [(tf.constant([1.0, 1.0]), v)])
        >>> with tf.Session() as sess:
        ...     sess.run(tf.global_variables_initializer())
        ...     sess.run(op)
        ...     print(sess.run(v))
        [0.9 1.9]
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        replica = distribute_context.current_replica()
        if replica is not None and hasattr(replica[0].extended, "apply_gradients"):
            # One replica of a multi-replica strategy: the gradients of all replicas are
            # summed and applied to every copy, once, in cross-replica context.
            def merge(strategy, per_replica_grads_and_vars):
                return strategy.extended.apply_gradients(
                    self, per_replica_grads_and_vars, global_step, name)

            return replica[2].merge_call(merge, args=(list(grads_and_vars),))
        converted = []
        for g, v in grads_and_vars:
            g = _as_gradient(g)
            self._check_updatable(v)
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError("No gradients provided for any variable: "
                             f"{[str(v) for _, v in converted]}.")
        graph = var_list[0].op.graph
        with graph.as_default():
            with graph.control_dependencies(None):
                self._create_slots(var_list)
            update_ops = []
            with graph.name_scope(name or self._name) as scope:
                self._prepare()
                # Every update waits for all the gradients it is given: the in-place update
                # of one variable must not run while the backward pass still reads it (the
                # lower layers' gradients read the upper layers' weights). `tf.gradients`
                # does not gate, so without this an update could overtake those reads.
                gate = _gradient_ops(converted)
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph.name_scope("update_" + var.op.name), \
                            graph.colocate_with(var.op), graph.control_dependencies(gate):
                        update_ops.append(self._update_op(grad, var))
                if global_step is None:
                    apply_updates = self._finish(update_ops, scope)
                else:
                    with graph.control_dependencies([self._finish(update_ops, "update")]):
                        step_op = global_step.op
                        with graph.colocate_with(step_op):
                            from flowgraph.ops.state_ops import assign_add

                            apply_updates = assign_add(global_step, 1, name=scope)
            if isinstance(apply_updates, Tensor):
                apply_updates = apply_updates.op
            train_ops = graph.get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    @staticmethod
    def _scale_loss(loss):
        """In an Estimator's multi-replica training, a mean loss divided by the number of
        replicas (the summed gradients are then those of the mean), as TF1 does."""
        replica = distribute_context.current_replica()
        if replica is None or not getattr(replica[0], "_scale_loss_for_estimator", False):
            return loss
        graph = loss.graph
        graph.__dict__["_is_loss_scaled_by_optimizer"] = False
        n = replica[0].num_replicas_in_sync
        last = graph.__dict__.get("_last_loss_reduction")
        if n > 1 and last not in ("weighted_sum", "sum"):
            graph.__dict__["_is_loss_scaled_by_optimizer"] = True
            return loss * (1.0 / n)
        return loss

    def _alias_mirrored_slots(self, var_list) -> None:
        """Key each copy of a mirrored variable to the same copy of its mirrored slots,
        so that `_apply_dense(grad, copy)` finds them (`flowgraph/strategies/`)."""
        for named in self._slots.values():
            for var in var_list:
                slot = named.get(_var_key(var))
                copies = getattr(var, "components", None)
                if slot is None or copies is None:
                    continue
                slot_copies = getattr(slot, "components", (slot,) * len(copies))
                for copy, slot_copy in zip(copies[1:], slot_copies[1:], strict=True):
                    named[_var_key(copy)] = slot_copy

    def get_slot(self, var, name: str):
        """The slot `name` ('m', 'momentum', ...) made for `var`, or None.

        Example
        -------
        >>> import flowgraph as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable([1.0], name="v")
        ...     opt = tf.train.AdamOptimizer()
        ...     _ = opt.minimize(tf.reduce_sum(v))
        ...     print(opt.get_slot(v, "m").op.name, opt.get_slot(v, "nope"))
        v/Adam None
        """
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(_var_key(var))

    def get_slot_names(self) -> list[str]:
        """The sorted names of this optimizer's slots ('m', 'v' for Adam)."""
        return sorted(self._slots)

    def variables(self) -> list[Variable]:
        """The optimizer's variables (slots and e.g. Adam's beta powers) in the default
        graph, sorted by name."""
        graph = get_default_graph()
        out = [v for v in self._non_slot_dict.values() if v.op.graph is graph]
        for named in self._slots.values():
            out.extend(v for v in named.values() if v.op.graph is graph)
        return sorted(out, key=lambda v: v.name)

    # -- for subclasses ----------------------------------------------------------------
    def _create_slots(self, var_list) -> None:
        """Create the slots of each variable in `var_list` (default: none)."""

    def _prepare(self) -> None:
        """Convert hyperparameters to tensors; called once per `apply_gradients`."""

    def _apply_dense(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_dense")

    def _apply_sparse(self, grad, var):
        raise NotImplementedError(
            f"{type(self).__name__} does not implement _apply_sparse: it cannot apply the "
            f"IndexedSlices gradient of '{var.op.name}'")

    def _apply_sparse_duplicate_indices(self, grad, var):
        """Apply an IndexedSlices `grad` whose indices may repeat: the rows of a repeated
        index are summed first (``Unique`` + ``UnsortedSegmentSum`` in the update's
        scope), then `_apply_sparse` runs on unique indices, as in TF. The sparse kernels
        of `tf.train`'s own optimizers sum repeated rows themselves (the same values) and
        get the rows as they are: the two extra ops per sparse variable cost a wide & deep
        model 20-30 % of its training throughput (session 23)."""
        if not _sums_repeated_rows(self):
            values, indices = _deduplicate(grad.values, grad.indices)
            grad = IndexedSlices(values, indices, grad.dense_shape)
        return self._apply_sparse(grad, var)

    def _resource_apply_dense(self, grad, handle):
        """The update of resource variable `handle` for a dense gradient. flowgraph's
        optimizers share `_apply_dense` for both kinds of variable; a program's subclass
        of `Optimizer` must override this, as in TF."""
        impl = _library_method(self, "_apply_dense")
        if impl is None:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement _resource_apply_dense: it cannot "
                f"update the resource variable '{handle.op.name}'")
        return impl(grad, handle)

    def _resource_apply_sparse(self, grad, handle, indices):
        """The update of resource variable `handle` for gradient rows `grad` at the
        unique `indices`; a program's subclass of `Optimizer` must override this."""
        impl = _library_method(self, "_apply_sparse")
        if impl is None:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement _resource_apply_sparse: it "
                f"cannot apply the IndexedSlices gradient of '{handle.op.name}'")
        from flowgraph.ops.array_shape_ops import shape

        return impl(IndexedSlices(grad, indices, shape(handle, out_type=indices.dtype)), handle)

    def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices):
        """Sum the rows of repeated `indices`, then `_resource_apply_sparse`."""
        values, unique = _deduplicate(grad, indices)
        return self._resource_apply_sparse(values, handle, unique)

    def _finish(self, update_ops, name_scope):
        return group(*update_ops, name=name_scope)

    def _call_if_callable(self, param):
        return param() if callable(param) else param

    def _cast(self, t, var):
        """Hyperparameter tensor `t` in `var`'s dtype."""
        return math_ops.cast(t, var.dtype.base_dtype)

    def _update_op(self, grad, var) -> Operation:
        constraint = getattr(var, "constraint", None)
        resource = _is_resource(var)
        if isinstance(grad, IndexedSlices):
            if constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            if resource and (_program_override(self, "_resource_apply_sparse")
                             or _program_override(self,
                                                  "_resource_apply_sparse_duplicate_indices")):
                out = self._resource_apply_sparse_duplicate_indices(grad.values, var,
                                                                    grad.indices)
            else:
                out = self._apply_sparse_duplicate_indices(grad, var)
        else:
            out = self._resource_apply_dense(grad, var) if resource else \
                self._apply_dense(grad, var)
            if constraint is not None:
                graph = var.op.graph
                with graph.control_dependencies([out]):
                    out = var.assign(constraint(var))
        return out.op if isinstance(out, Tensor) else out

    # -- slots -------------------------------------------------------------------------
    def _slot_dict(self, slot_name: str) -> dict:
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot(self, var, val, slot_name: str, op_name: str):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = slot_creator.create_slot(var, val, op_name)
        return named[key]

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype,
                                           slot_name: str, op_name: str):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = slot_creator.create_slot_with_initializer(
                var, initializer, shape, dtype, op_name)
        return named[key]

    def _constant_slot(self, var, value: float, slot_name: str, op_name: str):
        """A slot of `var`'s shape and dtype filled with `value` (Adagrad's and FTRL's
        accumulators, RMSProp's ``rms``)."""
        dtype = var.dtype.base_dtype
        return self._get_or_make_slot_with_initializer(
            var, init_ops.constant_initializer(value, dtype=dtype), var.shape, dtype,
            slot_name, op_name)

    def _zeros_slot(self, var, slot_name: str, op_name: str):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = slot_creator.create_zeros_slot(var, op_name)
        return named[key]

    def _create_non_slot_variable(self, initial_value, name: str, colocate_with):
        """A variable of this optimizer not tied to one variable (Adam's beta powers),
        created once per graph, in the current name scope, colocated with
        `colocate_with`."""
        graph = colocate_with.op.graph
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), graph.colocate_with(colocate_with.op):
                v = Variable(initial_value, name=name, trainable=False,
                             use_resource=colocate_with.op.type == "VarHandleOp")
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name: str, graph=None):
        return self._non_slot_dict.get((name, graph or get_default_graph()))

    def _non_slot_variables(self):
        return self._non_slot_dict.values()

    # -- checks ------------------------------------------------------------------------
    def _valid_dtypes(self):
        return set(_VALID_DTYPES)

    def _assert_valid_dtypes(self, tensors) -> None:
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError(f"Invalid type {dtype!r} for {t.name}, expected: "
                                 f"{[v for v in _VALID_DTYPES if v in valid]}.")

    @staticmethod
    def _check_updatable(v) -> None:
        if isinstance(v, Variable):
            return
        if isinstance(v, Tensor) and v.dtype.is_ref_dtype:
            return
        raise NotImplementedError(f"Trying to update a Tensor {v!r}: only variables can be "
                                  "optimized (pass tf.Variable objects in var_list)")


def _is_resource(var) -> bool:
    v = getattr(var, "_variable", None)
    return v is not None and v.dtype.base_dtype == _dtypes.resource


def _defining_class(obj, name: str):
    for cls in type(obj).__mro__:
        if name in cls.__dict__:
            return cls
    return None


def _program_override(obj, name: str) -> bool:
    """Whether method `name` of `obj` comes from a class outside flowgraph (a program's
    own subclass)."""
    cls = _defining_class(obj, name)
    return cls is not None and not cls.__module__.startswith("flowgraph.")


def _sums_repeated_rows(obj) -> bool:
    """Whether `obj`'s `_apply_sparse` is one of `tf.train`'s own, whose fused sparse
    kernels sum the rows of repeated indices."""
    cls = _defining_class(obj, "_apply_sparse")
    return cls is not None and cls.__module__.startswith("flowgraph.train.")


def _library_method(obj, name: str):
    """`obj`'s method `name` as the nearest flowgraph optimizer class (not the base)
    defines it, or None: flowgraph's optimizers update both kinds of variable in one
    method, which TF splits in two."""
    for cls in type(obj).__mro__:
        if cls is Optimizer:
            return None
        if cls.__module__.startswith("flowgraph.") and name in cls.__dict__:
            return cls.__dict__[name].__get__(obj, type(obj))
    return None


def _deduplicate(values, indices):
    """(summed rows, unique indices) of IndexedSlices parts that may repeat indices.

    Unlike TF, the ops are not colocated with the variable being updated: placement
    puts them where they run (an OpenCL device has no ``Unique`` kernel; a ps
    variable's repeated rows are summed before they are sent)."""
    from flowgraph.framework.graph import colocate_with
    from flowgraph.ops.array_gen_ops import unique
    from flowgraph.ops.array_shape_ops import shape
    from flowgraph.ops.segment_ops import unsorted_segment_sum

    with colocate_with(None, ignore_existing=True):
        unique_indices, positions = unique(indices)
        summed = unsorted_segment_sum(values, positions, shape(unique_indices)[0])
    return summed, unique_indices


def _gradient_ops(grads_and_vars) -> list:
    """The ops producing the gradients of `grads_and_vars` (each once, in order)."""
    ops: dict = {}
    for g, _ in grads_and_vars:
        parts = (g.values, g.indices) if isinstance(g, IndexedSlices) else (g,)
        for t in parts:
            if isinstance(t, Tensor):
                ops.setdefault(t.op, None)
    return list(ops)


def _gate_all(grads: list) -> list:
    """GATE_GRAPH: every gradient is available only once all of them are computed."""
    from flowgraph.ops.control_flow_ops import tuple_

    dense = [g.values if isinstance(g, IndexedSlices) else g for g in grads]
    if not any(d is not None for d in dense):
        return grads
    gated = tuple_(dense)  # keeps None entries in place
    return [IndexedSlices(v, g.indices, g.dense_shape) if isinstance(g, IndexedSlices) else v
            for g, v in zip(grads, gated)]

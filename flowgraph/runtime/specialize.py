"""Shape-specialized plans: shapes known at `Session.run`, folded into the plan.

A graph built with ``tf.placeholder(tf.float32, [None, 784])`` leaves the batch size
unknown, so its plan computes ``Shape``, ``Size`` and ``Rank`` of fed tensors at every
step, and everything derived from them: the gradients' ``BroadcastGradientArgs``, the
``Reshape`` targets and the loss's ``Cast(Size(...))`` divisors. Once a run's feeds are
known, their shapes are too; a plan *specialized* to them infers every tensor's shape
from the fed ones (`infer_shapes`, the ops' own shape functions) and lets constant
folding (`rewrite.fold_constants`) turn those ops and their arithmetic into constants::

    x (fed [32, 784]) ─> Shape ─> StridedSlice ─> Cast ─> RealDiv(loss, .)
                                  (three nodes fewer: 32.0 is a constant of the plan)

The session keeps the generic plan of a run signature and, when that plan still runs
shape ops, up to `MAX_SHAPE_VARIANTS` specialized plans of it, one per tuple of fed
shapes (`ShapeVariants`); further shapes run the generic plan. The switch is
``RewriterConfig.shape_optimization`` (with constant folding on); plans keyed by shape
anyway (a memory budget, docs/memory.md) are specialized as they are compiled.

The first run of such a plan compiles only the variant for its shapes (`first_plan`):
the generic plan is a `DeferredPlan`, compiled when a run needs it (more shapes than
variants kept) or something reads it.
"""

from __future__ import annotations

import math

import numpy as np

from flowgraph.framework.operation import Operation, Tensor
from flowgraph.framework.tensor_shape import TensorShape, as_shape
from flowgraph.runtime.config import switches
from flowgraph.runtime.prune import needed_ops

__all__ = ["MAX_SHAPE_VARIANTS", "SHAPE_OPS", "DeferredPlan", "ShapeVariants", "first_plan",
           "infer_shapes", "refine_outputs", "shape_value", "wants_variants"]

SHAPE_OPS = frozenset({"Shape", "ShapeN", "Size", "Rank", "ZerosLike", "OnesLike"})
MAX_FILLED_ELEMENTS = 1 << 16  # ZerosLike/OnesLike become constants up to this size
# Specialized plans kept per generic plan (per fetch set and feed set): a model fed a
# few batch sizes (training, a last partial batch, evaluation) fits, a stream of
# ever-changing shapes does not grow the cache without bound.
MAX_SHAPE_VARIANTS = 8


def infer_shapes(ops: list[Operation], feed_shapes: dict) -> dict[Tensor, TensorShape]:
    """Static shapes of `ops`' outputs refined by `feed_shapes` (tensor -> fed shape).

    Each op whose inputs got more precise shapes runs its shape function again with
    them; a function that fails keeps the graph's shapes.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3])
    ...     y = tf.sin(x)
    ...     infer_shapes([y.op], {x: (5, 3)})[y].as_list()
    [5, 3]
    """
    shapes: dict[Tensor, TensorShape] = {
        t: TensorShape(list(s)) for t, s in feed_shapes.items()}
    for op in ops:
        if op.op_def.control_flow or not op._inputs:
            continue
        if not any(t in shapes for t in op._inputs):
            continue
        for k, merged in refine_outputs(op, [shapes.get(t, t._shape) for t in op._inputs],
                                        feed_shapes):
            shapes[op._outputs[k]] = merged
    return shapes


def refine_outputs(op: Operation, input_shapes: list, skip=()) -> list[tuple[int, TensorShape]]:
    """``(index, shape)`` per output of `op` (not in `skip`) whose static shape its shape
    function makes more precise when run on `input_shapes` (`TensorShape`s); none when
    the function fails or disagrees with the graph. `infer_shapes` and
    `memory_schedule.infer_fed_shapes` both refine shapes through this.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     y = tf.sin(tf.placeholder(tf.float32, [None, 3]))
    ...     [(k, s.as_list()) for k, s in refine_outputs(y.op, [TensorShape([5, 3])])]
    [(0, [5, 3])]
    """
    try:
        outs = op.op_def.shape_fn(op, *input_shapes)
    except Exception:  # a shape function may reject what it cannot size
        return []
    refined = []
    for k, (t, shape) in enumerate(zip(op._outputs, outs or ())):
        if t in skip:
            continue
        try:
            merged = t._shape.merge_with(as_shape(shape))
        except (ValueError, TypeError):
            continue
        if merged != t._shape:
            refined.append((k, merged))
    return refined


def shape_value(op: Operation, shape_of) -> list | None:
    """The outputs of shape op `op` (`SHAPE_OPS`) when `shape_of(tensor)` tells enough
    (a `TensorShape`), else None. ``ZerosLike``/``OnesLike`` count as shape ops: their
    value is their input's shape, filled (small ones only)."""
    out_type = op.attrs.get("out_type")
    np_type = out_type.as_numpy_dtype if out_type is not None else np.int32
    if op.type == "Rank":
        s = shape_of(op._inputs[0])
        return None if s.ndims is None else [np.asarray(s.ndims, dtype=np.int32)]
    if op.type in ("ZerosLike", "OnesLike"):
        s = shape_of(op._inputs[0])
        dtype = op._outputs[0].dtype.base_dtype
        if not s.is_fully_defined() or math.prod(s.as_list()) > MAX_FILLED_ELEMENTS or \
                not (dtype.is_floating or dtype.is_integer or dtype.is_bool):
            return None
        fill = np.zeros if op.type == "ZerosLike" else np.ones
        return [fill(s.as_list(), dtype=dtype.as_numpy_dtype)]
    values = []
    for t in (op._inputs if op.type == "ShapeN" else op._inputs[:1]):
        s = shape_of(t)
        if not s.is_fully_defined():
            return None
        dims = s.as_list()
        values.append(np.asarray(math.prod(dims) if op.type == "Size" else dims,
                                 dtype=np_type))
    return values


class ShapeVariants:
    """Specialized plans of one generic plan, by the fed values' shapes.

    >>> variants = ShapeVariants(limit=1)
    >>> variants.pick("generic", [np.zeros((2, 3))], lambda: "for (2, 3)")
    'for (2, 3)'
    >>> variants.pick("generic", [np.zeros((4, 3))], lambda: "for (4, 3)")
    'generic'
    """

    def __init__(self, limit: int = MAX_SHAPE_VARIANTS) -> None:
        self.limit = limit
        self.plans: dict[tuple, object] = {}

    def pick(self, generic, feed_values, compile_variant):
        """The plan for these `feed_values`: a specialized one (compiled by
        `compile_variant()` on first sight of their shapes while fewer than `limit` are
        kept), else `generic`."""
        key = tuple(map(np.shape, feed_values))
        plan = self.plans.get(key)
        if plan is None:
            if len(self.plans) >= self.limit:
                return generic.compiled() if isinstance(generic, DeferredPlan) else generic
            plan = self.plans[key] = compile_variant()
        return plan


def wants_variants(plan_nodes, feed_tensors, rewrite_options, optimizer_options) -> bool:
    """Whether a generic plan gains from specialized variants: it runs shape ops, has
    feeds and no control flow (shapes of values behind a ``Switch`` or inside a loop
    never fold), and ``shape_optimization`` and constant folding are on."""
    if not feed_tensors or not any(n.op_type in SHAPE_OPS for n in plan_nodes):
        return False
    if any(n.op is not None and n.op.op_def.control_flow for n in plan_nodes):
        return False
    on = switches(optimizer_options, rewrite_options)
    return on.shapes and on.fold


class DeferredPlan:
    """A generic plan compiled on first need: `compiled()`, or reading any attribute of a
    `CompiledPlan` it does not set itself. Its `shape_variants` already hold the variant
    that the first run compiled.

    >>> deferred = DeferredPlan(lambda: "generic", ShapeVariants(limit=0))
    >>> deferred.measured_sizes is None, deferred.compiled()
    (True, 'generic')
    """

    def __init__(self, compile_generic, variants: ShapeVariants) -> None:
        self._compile_generic = compile_generic
        self._plan = None
        self.shape_variants = variants

    def compiled(self):
        """The generic plan, compiled now if it was not yet."""
        if self._plan is None:
            self._plan = self._compile_generic()
            self._compile_generic = None
        return self._plan

    @property
    def measured_sizes(self):
        # Sizes measured by a run of the generic plan; none before it is compiled.
        return None if self._plan is None else self._plan.measured_sizes

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)


def first_plan(compile_fn, mapper, feed_tensors, budget, feed_values, keyed, measured,
               config):
    """The plan of a run signature seen for the first time (`Session._compile`'s
    arguments, `compile_fn` being it): when the plan will want shape variants
    (`wants_variants`, judged from the pruned ops), only the variant for these feeds is
    compiled now, and the generic plan is a `DeferredPlan` holding it.

    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 3], name="x")
    ...     n = tf.size(x, name="n")
    ...     with tf.Session() as sess:
    ...         value = sess.run(n, {x: np.ones((2, 3))})
    ...         (plan,) = set(sess._plans.values())
    >>> int(value), type(plan).__name__, len(plan.shape_variants.plans)
    (6, 'DeferredPlan', 1)
    """
    if keyed or measured or not _will_want_variants(mapper, feed_tensors, config):
        return compile_fn(mapper, feed_tensors, budget, feed_values, keyed, measured)
    variants = ShapeVariants()
    variants.plans[tuple(map(np.shape, feed_values))] = compile_fn(
        mapper, feed_tensors, budget, feed_values, True)
    return DeferredPlan(
        lambda: compile_fn(mapper, feed_tensors, budget, feed_values, False), variants)


def _will_want_variants(mapper, feed_tensors, config) -> bool:
    """`wants_variants` before compiling: a pruned shape op reads a tensor whose static
    shape is not fully known (the generic plan's folding leaves it), no control flow."""
    options = config.graph_options
    on = switches(options.optimizer_options, options.rewrite_options)
    if not feed_tensors or not (on.shapes and on.fold):
        return False
    try:
        ops = needed_ops(mapper.unique_tensors, mapper.unique_ops, set(feed_tensors))
    except Exception:
        return False  # the generic compile reports it, as for any other plan
    found = False
    for op in ops:
        if op.op_def.control_flow:
            return False
        if not found and op.type in SHAPE_OPS:
            reads = op._inputs if op.type == "ShapeN" else op._inputs[:1]
            found = any(not t._shape.is_fully_defined() for t in reads)
    return found

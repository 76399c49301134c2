"""`tf.contrib.layers.recompute_grad`: trade compute for memory in the backward pass.

A function wrapped with `recompute_grad` runs forward as usual, but its gradient does not
read the activations it made: the backward pass builds the function a second time (same
variables, same `arg_scope`), after the gradients of its outputs exist, and
differentiates that copy. The executor frees the first copy's intermediate values as
soon as the forward pass has used them, so a deep stack of wrapped blocks keeps only the
blocks' inputs alive between the passes (the memory-bounding scheduler can then hold a
larger batch).

The gradients equal those of the unwrapped function (the same ops on the same values).
Random ops inside the function draw again in the second copy: give them a fixed seed
if the two copies must agree (dropout, as in TF 1.x).

Example
-------
>>> import flowgraph as tf
>>> @tf.contrib.layers.recompute_grad
... def block(x):
...     return tf.layers.dense(x, 3, activation=tf.nn.relu, name="dense")
>>> with tf.Graph().as_default():
...     x = tf.ones([2, 4])
...     y = tf.reduce_sum(block(x))
...     [grad] = tf.gradients(y, [x])
...     print(grad.shape.as_list())
[2, 4]
"""

from __future__ import annotations

import functools
import itertools

from flowgraph.contrib.framework.arg_scope import arg_scope, current_arg_scope
from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.gradient_override import RegisterGradient
from flowgraph.framework.graph import GraphKeys, control_dependencies, get_default_graph
from flowgraph.framework.graph import name_scope as _name_scope
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.control_flow_ops import tuple_ as _group_tuple
from flowgraph.ops.gradient_compat import _flatten, identity_n, variables_read
from flowgraph.ops.gradients import gradients
from flowgraph.ops.variable_scope import get_variable_scope, variable_scope

__all__ = ["recompute_grad"]

_ids = itertools.count()


def recompute_grad(fn, use_data_dep=None, tupleize_grads: bool = False):
    """`fn` (tensors in, a tensor or a list/tuple of tensors out) with a gradient that
    rebuilds `fn` in the backward pass instead of keeping its activations.

    `use_data_dep` is accepted for TF 1.x's signature: the second copy always waits for
    the output gradients through control dependencies. With `tupleize_grads`, the
    gradients of the inputs and variables are grouped (`tf.tuple`) so none is used before
    all are computed.

    Example
    -------
    >>> import flowgraph as tf
    >>> square = tf.contrib.layers.recompute_grad(lambda x: x * x)
    >>> with tf.Graph().as_default():
    ...     x = tf.constant(3.0)
    ...     print(tf.Session().run(tf.gradients(square(x), x)[0]))
    6.0
    """
    del use_data_dep  # the second copy is ordered by control dependencies either way

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        if kwargs:
            raise ValueError(f"recompute_grad({getattr(fn, '__name__', fn)}): pass the "
                             f"function's tensors positionally (got keyword arguments "
                             f"{sorted(kwargs)})")
        return _with_recomputed_gradient(fn, args, tupleize_grads)

    return wrapped


def _with_recomputed_gradient(fn, args, tupleize_grads):
    inputs = [convert_to_tensor(a) for a in args]
    graph = get_default_graph()
    first_new = len(graph.get_operations())
    scope, scoped_args = get_variable_scope(), current_arg_scope()
    result = fn(*inputs)
    flat, kind = _flatten(result)
    flat = [convert_to_tensor(t) for t in flat]
    variables, reads = variables_read(graph, graph.get_operations()[first_new:])
    who = getattr(fn, "__name__", repr(fn))
    name = f"RecomputeGrad-{next(_ids)}"

    @RegisterGradient(name)
    def _grad(op, *grads):
        output_grads = list(grads[:len(flat)])
        waited = [g for g in output_grads if g is not None]
        with _name_scope("recompute"):
            with control_dependencies(waited):
                replay_inputs = [identity(x) for x in inputs]
            before = set(graph.get_collection(GraphKeys.GLOBAL_VARIABLES))
            with variable_scope(scope, reuse=True, auxiliary_name_scope=False), \
                    arg_scope(scoped_args):
                replay, _ = _flatten(fn(*replay_inputs))
            created = [v.name for v in graph.get_collection(GraphKeys.GLOBAL_VARIABLES)
                       if v not in before]
            if created:
                raise ValueError(f"recompute_grad({who}): rebuilding the function created "
                                 f"new variables {created}; make its variables with "
                                 f"tf.get_variable (or tf.layers), which the second copy "
                                 f"reuses")
            replay = [convert_to_tensor(t) for t in replay]
            pairs = [(y, g) for y, g in zip(replay, output_grads, strict=True) if g is not None]
            ys, grad_ys = [p[0] for p in pairs], [p[1] for p in pairs]
            found = gradients(ys, replay_inputs + variables, grad_ys=grad_ys) if ys else \
                [None] * (len(inputs) + len(variables))
        if tupleize_grads:
            present = [g for g in found if g is not None]
            grouped = iter(_group_tuple(present))
            found = [next(grouped) if g is not None else None for g in found]
        return [None] * len(flat) + list(found)

    # Gradients reach the inputs and the variables' reads only through this IdentityN,
    # whose gradient is `_grad`: nothing flows back through the first copy's ops.
    with graph.gradient_override_map({"IdentityN": name}):
        outs = identity_n(flat + inputs + reads)
    outs = outs[:len(flat)]
    return kind(outs) if kind is not None else outs[0]

"""`tfgan.features`: `clip_variables` (WGAN's weight clipping as an optimizer wrapper)
and `tensor_pool` (a pool of past generated batches the discriminator may see instead
of the current one).

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     w = tf.Variable([2.0, -0.5])
...     opt = clip_variables(tf.train.GradientDescentOptimizer(0.0), [w], 1.0)
...     train = opt.minimize(tf.reduce_sum(w))
...     with tf.Session() as sess:
...         sess.run(w.initializer)
...         _ = sess.run(train)
...         sess.run(w).tolist()
[1.0, -0.5]
"""

from __future__ import annotations

from flowgraph.contrib.opt.variable_clipping import VariableClippingOptimizer
from flowgraph.framework import dtypes, nest
from flowgraph.framework.graph import control_dependencies, name_scope
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.control_flow_cond import cond
from flowgraph.ops.data_flow_ops import RandomShuffleQueue
from flowgraph.ops.random_ops import random_uniform

__all__ = ["clip_variables", "tensor_pool"]


def clip_variables(optimizer, variables, weight_clip):
    """`optimizer` wrapped so that each of `variables` is clipped elementwise to
    ``[-weight_clip, weight_clip]`` after every update (`optimizer` itself when
    `weight_clip` is None)."""
    if weight_clip is None:
        return optimizer
    return VariableClippingOptimizer(optimizer, {var: [] for var in variables},
                                     max_norm=weight_clip, use_locking=True,
                                     colocate_clip_ops_with_vars=True)


def _as_list(values):
    return list(values) if isinstance(values, (list, tuple)) else [values]


def tensor_pool(input_values, pool_size=50, pooling_probability=0.5, name="tensor_pool"):
    """`input_values` (a tensor or a nest of them), or with probability
    `pooling_probability` once the pool holds `pool_size` entries, a random earlier
    entry; each call's values enter the pool. ``pool_size <= 0`` returns the input."""
    original = input_values
    flat = nest.flatten(input_values)
    if pool_size <= 0:
        return original
    with name_scope(f"{name}_pool_queue", values=[*flat, pooling_probability]):
        queue = RandomShuffleQueue(capacity=pool_size, min_after_dequeue=0,
                                   dtypes=[v.dtype for v in flat], shapes=None)

        def pooled_input():
            with control_dependencies([queue.enqueue(flat)]):
                return [identity(v) for v in flat]

        def maybe_from_pool():
            old = _as_list(queue.dequeue())
            with control_dependencies(old):
                with control_dependencies([queue.enqueue(flat)]):
                    take = random_uniform((), dtype=dtypes.float32) < pooling_probability
                    return _as_list(cond(take, lambda: old, lambda: flat))

        outputs = _as_list(cond(queue.size() < pool_size, pooled_input, maybe_from_pool))
        for value, out in zip(flat, outputs):
            out.set_shape(value.shape)
    return nest.pack_sequence_as(original, outputs)

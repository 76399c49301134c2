"""Gradient clipping: `clip_by_norm`, `global_norm`, `clip_by_global_norm`.

(`tf.clip_by_value` lives in `math_ops`.) Each accepts `IndexedSlices` wherever TF does,
clipping the slices' values and keeping their indices: no dense tensor is built. The
norms of `IndexedSlices` are those of their values (duplicate rows are not summed first),
as in TensorFlow.

Example
-------
>>> import flowgraph as tf
>>> (a, b), norm = clip_by_global_norm([tf.constant([3.0]), tf.constant([4.0])], 1.0)
>>> with tf.Session() as sess:
...     print(sess.run(a), sess.run(b), sess.run(norm))
[0.6] [0.8] 5.0
"""

from __future__ import annotations

from collections.abc import Sequence

from flowgraph.framework.constant_op import convert_to_tensor
from flowgraph.framework.graph import get_default_graph
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.ops import array_ops, math_ops, math_reduce

__all__ = ["clip_by_global_norm", "clip_by_norm", "global_norm"]


def _values(t):
    return t.values if isinstance(t, IndexedSlices) else convert_to_tensor(t)


def _like(t, values):
    if isinstance(t, IndexedSlices):
        return IndexedSlices(values, t.indices, t.dense_shape)
    return values


def _check_list(t_list) -> list:
    if not isinstance(t_list, Sequence) or isinstance(t_list, str | bytes):
        raise TypeError(f"t_list should be a sequence (list or tuple) of tensors, got "
                        f"{type(t_list).__name__}")
    return list(t_list)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t * clip_norm / max(l2norm(t, axes), clip_norm)``: `t` rescaled so that its L2
    norm (over `axes`, default all) is at most `clip_norm`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(clip_by_norm(tf.constant([[3.0, 4.0], [0.3, 0.4]]), 1.0, axes=[1])))
    [[0.6 0.8]
     [0.3 0.4]]
    """
    with get_default_graph().name_scope(name or "clip_by_norm") as scope:
        values = _values(t)
        # `clip_norm` is converted by each op that uses it (`mul_1/y`, `Maximum/y`), as in TF
        l2sum = math_reduce.reduce_sum(values * values, axes, keepdims=True)
        positive = math_ops.greater(l2sum, 0)
        safe = array_ops.where(positive, l2sum, array_ops.ones_like(l2sum))
        l2norm = array_ops.where(positive, math_ops.sqrt(safe), l2sum)
        clipped = array_ops.identity(
            values * clip_norm / math_ops.maximum(l2norm, clip_norm), name=scope)
        return _like(t, clipped)


def global_norm(t_list, name=None):
    """``sqrt(sum(l2norm(t)**2 for t in t_list))``; None entries are ignored (0.0 if all
    are None).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(global_norm([tf.constant([3.0]), None, tf.constant([4.0])])))
    5.0
    """
    from flowgraph.ops.array_join_ops import stack
    from flowgraph.ops.nn_loss_ops import l2_loss

    t_list = _check_list(t_list)
    with get_default_graph().name_scope(name or "global_norm") as scope:
        values = [None if t is None else _values(t) for t in t_list]
        present = [v for v in values if v is not None]
        if not present:
            return convert_to_tensor(0.0, name=scope)
        dtypes = {v.dtype.base_dtype for v in present}
        if len(dtypes) > 1:
            raise TypeError(f"global_norm: all tensors must have one dtype, got "
                            f"{sorted(d.name for d in dtypes)}; cast them first")
        # TensorFlow's graph: an L2Loss (half the squared norm) per tensor, stacked and
        # summed, times 2, square root
        half_squared = math_reduce.reduce_sum(stack([l2_loss(v) for v in present]))
        two = convert_to_tensor(2.0, dtype=half_squared.dtype.base_dtype)
        return math_ops.sqrt(half_squared * two, name="global_norm")


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """Scale every tensor of `t_list` by ``clip_norm / max(global_norm, clip_norm)``.

    Returns ``(list_clipped, global_norm)``; None entries stay None and `IndexedSlices`
    stay `IndexedSlices`. `use_norm` supplies a precomputed global norm. If the global
    norm is infinite or NaN, every clipped value is NaN (TensorFlow's behaviour).

    Example
    -------
    >>> import flowgraph as tf
    >>> grads = [tf.constant([6.0, 8.0]), None]
    >>> clipped, norm = clip_by_global_norm(grads, 5.0)
    >>> with tf.Session() as sess:
    ...     print(sess.run(clipped[0]), clipped[1], sess.run(norm))
    [3. 4.] None 10.0
    """
    t_list = _check_list(t_list)
    if use_norm is None:
        use_norm = global_norm(t_list, name)
    use_norm = convert_to_tensor(use_norm)
    graph = get_default_graph()
    with graph.name_scope(name or "clip_by_global_norm") as scope:
        dtype = use_norm.dtype.base_dtype
        if type(clip_norm) in (int, float):
            clip = clip_norm  # converted by each op that uses it (`mul/x`), as in TF
        else:
            clip = convert_to_tensor(clip_norm, dtype_hint=dtype)
            if clip.dtype.base_dtype != dtype:
                clip = math_ops.cast(clip, dtype)
        inverse = 1.0 / use_norm  # made before `one`: TensorFlow's order of names
        one = convert_to_tensor(1.0, dtype=dtype)
        scale_finite = clip * math_ops.minimum(inverse, one / clip)
        scale = scale_finite + (use_norm - use_norm)  # NaN when the norm is inf or NaN
        out = []
        for i, t in enumerate(t_list):
            if t is None:
                out.append(None)
                continue
            v = _values(t)
            with graph.colocate_with(v.op):
                # TF names these "<scope>/<scope>/_<i>" (the scope string + "_<i>")
                clipped = array_ops.identity(v * math_ops.cast(scale, v.dtype.base_dtype),
                                             name=f"{scope}_{i}")
            out.append(_like(t, clipped))
        return out, use_norm

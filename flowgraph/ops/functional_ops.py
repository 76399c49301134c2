"""Higher-order functions over the first axis of tensors: `tf.map_fn`, `tf.scan`,
`tf.foldl`, `tf.foldr`.

Each is one `tf.while_loop` over the elements: the inputs are unstacked into
TensorArrays before the loop and read by index in the body; per-element results are
written to TensorArrays whose flows are loop variables, and stacked after the loop. So
they run for a length known only at run time, overlap iterations up to
`parallel_iterations`, and are differentiable (``back_prop=False`` stops gradients).
`elems` may be a nested structure of tensors (lists, tuples, namedtuples, dicts) with
one first dimension; `fn` then receives the same structure of slices.

Example
-------
>>> import flowgraph as tf
>>> squares = tf.map_fn(lambda x: x * x, tf.constant([1, 2, 3]))
>>> sums = tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]))
>>> with tf.Session() as sess:
...     print(sess.run([squares, sums]))
[array([1, 4, 9], dtype=int32), array([1, 3, 6], dtype=int32)]
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_shape_ops, math_ops
from flowgraph.ops.control_flow_cond import nest_assert_same_structure, nest_flatten, nest_pack
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.tensor_array import TensorArray

__all__ = ["foldl", "foldr", "map_fn", "scan"]


def _elems(elems, what: str) -> tuple[list[Tensor], Tensor, int | None]:
    """`elems` flattened to tensors, their common length (a tensor) and its static value."""
    flat = [convert_to_tensor(e, name="elem") for e in nest_flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must hold at least one tensor, got {elems!r}.")
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError(f"{what}: elements in elems must be tensors of rank >= 1 (the "
                             f"function is applied along axis 0), got the scalar {e.name}.")
    statics = {e.shape[0].value for e in flat if e.shape.ndims is not None} - {None}
    if len(statics) > 1:
        raise ValueError(f"{what}: the tensors in elems have different first dimensions "
                         f"{sorted(statics)}; they must have one length.")
    n_static = statics.pop() if statics else None
    n = constant(n_static, dtype=_dtypes.int32, name="n") if n_static is not None else \
        array_shape_ops.shape(flat[0], out_type=_dtypes.int32)[0]
    return flat, n, n_static


def _unstacked(flat: list[Tensor], n) -> list[TensorArray]:
    return [TensorArray(e.dtype, size=n, dynamic_size=False, infer_shape=True,
                        element_shape=e.shape[1:] if e.shape.ndims else None).unstack(e)
            for e in flat]


def _stacked(tas: list[TensorArray], flows, n_static) -> list[Tensor]:
    out = []
    for ta, flow in zip(tas, flows):
        value = ta._derive(flow).stack()
        elem = ta.element_shape
        if elem.ndims is not None:
            value.set_shape(TensorShape([n_static]).concatenate(elem))
        out.append(value)
    return out


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop: bool = True,
           swap_memory: bool = False, infer_shape: bool = True, name=None,
           fn_output_signature=None):
    """Apply `fn` to each element of `elems` (slices along axis 0) and stack the results.

    `dtype` (or its TF 2 name `fn_output_signature`: dtypes or `tf.TensorSpec`s) gives
    the structure and dtypes of `fn`'s result when they differ from those of `elems`.
    `parallel_iterations` defaults to 10.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> total, neg = tf.map_fn(lambda r: (tf.reduce_sum(r), -r), x,
    ...                        dtype=(tf.float32, tf.float32))
    >>> with tf.Session() as sess:
    ...     print(sess.run(total).tolist(), sess.run(neg).tolist())
    [3.0, 7.0] [[-1.0, -2.0], [-3.0, -4.0]]
    """
    if not callable(fn):
        raise TypeError(f"map_fn: fn must be callable, got {fn!r}.")
    if fn_output_signature is not None:
        if dtype is not None:
            raise ValueError("Cannot specify both 'fn_output_signature' and 'dtype'")
        specs = nest_flatten(fn_output_signature)
        dtype = nest_pack(fn_output_signature, [getattr(s, "dtype", s) for s in specs])
    parallel_iterations = 10 if parallel_iterations is None else parallel_iterations
    with name_scope(name, "map", nest_flatten(elems)):
        flat, n, n_static = _elems(elems, "map_fn")
        out_structure = elems if dtype is None else dtype
        out_dtypes = [e.dtype.base_dtype for e in flat] if dtype is None else \
            [_dtypes.as_dtype(d).base_dtype for d in nest_flatten(dtype)]
        inputs = _unstacked(flat, n)
        accs = [TensorArray(d, size=n, dynamic_size=False, infer_shape=infer_shape)
                for d in out_dtypes]

        def body(i, *flows):
            packed = nest_pack(elems, [ta.read(i) for ta in inputs])
            result = fn(packed)
            nest_assert_same_structure(out_structure, result, "the output structure "
                                       "(dtype, or elems when dtype is None)",
                                       "fn returned", "map_fn")
            values = nest_flatten(result)
            new = []
            for k, (acc, flow, v) in enumerate(zip(accs, flows, values)):
                v = convert_to_tensor(v)
                if v.dtype.base_dtype != acc.dtype:
                    raise TypeError(
                        f"map_fn: output {k} of fn has dtype {v.dtype.base_dtype.name} but "
                        f"{acc.dtype.name} was expected; pass dtype= with fn's output "
                        "dtypes when they differ from those of elems.")
                new.append(acc._derive(flow).write(i, v).flow)
            return (i + 1, *new)

        results = while_loop(lambda i, *_: math_ops.less(i, n), body,
                             (constant(0, name="i"), *[a.flow for a in accs]),
                             parallel_iterations=parallel_iterations, back_prop=back_prop,
                             swap_memory=swap_memory, maximum_iterations=n)
        return nest_pack(out_structure, _stacked(accs, results[1:], n_static))


def scan(fn, elems, initializer=None, parallel_iterations: int = 10, back_prop: bool = True,
         swap_memory: bool = False, infer_shape: bool = True, reverse: bool = False,
         name=None):
    """The successive values of ``a = fn(a, x)`` over the elements `x` of `elems`.

    `a` starts as `initializer` (its structure is that of the output), or, when it is
    None, as the first element (which is then also the first output). With
    `reverse=True` the elements are visited from last to first and the outputs are
    stored at their elements' positions.

    Example
    -------
    >>> import flowgraph as tf
    >>> x = tf.constant([1.0, 2.0, 3.0])
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.scan(lambda a, v: a * v, x, initializer=2.0,
    ...                            reverse=True)).tolist())
    [12.0, 12.0, 6.0]
    """
    if not callable(fn):
        raise TypeError(f"scan: fn must be callable, got {fn!r}.")
    with name_scope(name, "scan", nest_flatten(elems)):
        flat, n, n_static = _elems(elems, "scan")
        inputs = _unstacked(flat, n)
        last = math_ops.subtract(n, 1)

        def position(i):
            return math_ops.subtract(last, i) if reverse else i

        if initializer is None:
            structure = elems
            first = last if reverse else constant(0)
            init = [ta.read(first) for ta in inputs]
            start = 1
        else:
            structure = initializer
            init = [convert_to_tensor(v, name="initializer")
                    for v in nest_flatten(initializer)]
            start = 0
        accs = [TensorArray(a.dtype, size=n, dynamic_size=False, infer_shape=infer_shape,
                            element_shape=a.shape if infer_shape else None)
                for a in init]
        if initializer is None:
            accs = [acc.write(first, a) for acc, a in zip(accs, init)]
        k = len(init)

        def body(i, *state):
            a = nest_pack(structure, list(state[:k]))
            x = nest_pack(elems, [ta.read(position(i)) for ta in inputs])
            result = fn(a, x)
            nest_assert_same_structure(structure, result, "the accumulator "
                                       "(initializer, or elems when it is None)",
                                       "fn returned", "scan")
            values = [convert_to_tensor(v) for v in nest_flatten(result)]
            flows = [acc._derive(f).write(position(i), v).flow
                     for acc, f, v in zip(accs, state[k:], values)]
            return (i + 1, *values, *flows)

        results = while_loop(lambda i, *_: math_ops.less(i, n), body,
                             (constant(start, name="i"), *init, *[a.flow for a in accs]),
                             parallel_iterations=parallel_iterations, back_prop=back_prop,
                             swap_memory=swap_memory, maximum_iterations=n)
        return nest_pack(structure, _stacked(accs, results[1 + k:], n_static))


def _fold(what: str, fn, elems, initializer, parallel_iterations, back_prop, swap_memory,
          name, reverse: bool):
    if not callable(fn):
        raise TypeError(f"{what}: fn must be callable, got {fn!r}.")
    with name_scope(name, what, nest_flatten(elems)):
        flat, n, _ = _elems(elems, what)
        inputs = _unstacked(flat, n)
        last = math_ops.subtract(n, 1)

        def position(i):
            return math_ops.subtract(last, i) if reverse else i

        if initializer is None:
            structure = elems
            init = [ta.read(last if reverse else constant(0)) for ta in inputs]
            start = 1
        else:
            structure = initializer
            init = [convert_to_tensor(v, name="initializer")
                    for v in nest_flatten(initializer)]
            start = 0

        def body(i, *state):
            a = nest_pack(structure, list(state))
            x = nest_pack(elems, [ta.read(position(i)) for ta in inputs])
            result = fn(a, x)
            nest_assert_same_structure(structure, result, "the accumulator "
                                       "(initializer, or elems when it is None)",
                                       "fn returned", what)
            return (i + 1, *[convert_to_tensor(v) for v in nest_flatten(result)])

        results = while_loop(lambda i, *_: math_ops.less(i, n), body,
                             (constant(start, name="i"), *init),
                             parallel_iterations=parallel_iterations, back_prop=back_prop,
                             swap_memory=swap_memory, maximum_iterations=n)
        return nest_pack(structure, list(results[1:]))


def foldl(fn, elems, initializer=None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name=None):
    """Reduce `elems` from the first element to the last: ``a = fn(a, x)``; returns the
    final `a` (which starts as `initializer`, or the first element when it is None).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.foldl(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))))
    123
    """
    return _fold("foldl", fn, elems, initializer, parallel_iterations, back_prop,
                 swap_memory, name, reverse=False)


def foldr(fn, elems, initializer=None, parallel_iterations: int = 10, back_prop: bool = True,
          swap_memory: bool = False, name=None):
    """Reduce `elems` from the last element to the first: ``a = fn(a, x)``; returns the
    final `a` (which starts as `initializer`, or the last element when it is None).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Session() as sess:
    ...     print(sess.run(tf.foldr(lambda a, x: a * 10 + x, tf.constant([1, 2, 3]))))
    321
    """
    return _fold("foldr", fn, elems, initializer, parallel_iterations, back_prop,
                 swap_memory, name, reverse=True)

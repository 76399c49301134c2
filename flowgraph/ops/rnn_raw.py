"""`raw_rnn`, the RNN loop driven by a user function, and `static_state_saving_rnn`.

`raw_rnn` runs ``cell`` inside one `while_loop`; each step asks ``loop_fn`` for the next
input, state, emitted value and loop state, so the caller decides how inputs are read
(e.g. feeding back the previous output in a decoder) and when each batch element is
done. Finished elements keep their last state and emit zeros; the loop stops when every
element is finished. `static_state_saving_rnn` is `static_rnn` with its initial state
read from, and its final state written to, a state saver (``state(name)`` /
``save_state(name, value)``), as a truncated-backprop input pipeline provides.
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, constant_value, convert_to_tensor
from flowgraph.framework.graph import control_dependencies
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, array_shape_ops, math_ops, math_reduce
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_identity_ops import identity
from flowgraph.ops.control_flow_cond import nest_flatten, nest_pack
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.rnn import _check_cell, static_rnn
from flowgraph.ops.tensor_array import TensorArray

__all__ = ["raw_rnn", "static_state_saving_rnn"]


def _same_structure(a, b, what: str) -> None:
    if len(nest_flatten(a)) != len(nest_flatten(b)):
        raise ValueError(f"raw_rnn: {what} must have the same nested structure; got "
                         f"{a!r} and {b!r}")


def _emit_spec(emit_structure, cell, state_dtype):
    """Flat ``(sizes, dtypes)`` of the emitted values: from `emit_structure` (tensors
    whose shapes, or run-time shapes, give the per-element size) or the cell's output
    size."""
    if emit_structure is None:
        sizes = nest_flatten(cell.output_size)
        return cell.output_size, sizes, [state_dtype] * len(sizes)
    flat = [convert_to_tensor(e) for e in nest_flatten(emit_structure)]
    sizes = [e.shape if e.shape.is_fully_defined() else array_shape_ops.shape(e)
             for e in flat]
    return emit_structure, sizes, [e.dtype.base_dtype for e in flat]


def _static_size(size) -> TensorShape:
    if isinstance(size, TensorShape):
        return size
    if isinstance(size, int):
        return TensorShape([size])
    known = constant_value(size) if hasattr(size, "op") else None
    if known is not None:
        return TensorShape([int(d) for d in known])
    rank = size.shape[0].value if hasattr(size, "shape") and size.shape.ndims else None
    return TensorShape(None if rank is None else [None] * rank)


def _batch_then(batch, size):
    """``[batch] + size`` as a shape for `zeros` (a tensor when either is dynamic)."""
    if isinstance(size, int):
        size = TensorShape([size])
    if isinstance(size, TensorShape):
        if isinstance(batch, int):
            return [batch, *size.as_list()]
        size = constant(size.as_list(), _dtypes.int32)
    b = array_shape_ops.reshape(convert_to_tensor(batch, dtype=_dtypes.int32), [1])
    from flowgraph.ops.array_join_ops import concat

    return concat([b, math_ops.cast(size, _dtypes.int32)], 0)


def raw_rnn(cell, loop_fn, parallel_iterations=None, swap_memory=False, scope=None):
    """Run `cell` in a loop whose inputs, states and outputs `loop_fn` controls.

    ``loop_fn(time, cell_output, cell_state, loop_state)`` returns
    ``(finished, next_input, next_cell_state, emit_output, next_loop_state)``. It is first
    called with ``time = 0`` and ``None`` for the rest, where it returns the initial
    input and state, an `emit_output` structure (or None: the cell's output size) and the
    initial loop state. Returns ``(emit_ta, final_state, final_loop_state)``: TensorArrays
    of the emitted values (time-major), the state at the end, and the last loop state
    (None when `loop_fn` started with None).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.ones([4, 2, 3])                       # [time, batch, depth]
    ...     cell = tf.nn.rnn_cell.BasicRNNCell(5)
    ...     def loop_fn(time, out, state, loop_state):
    ...         done = time >= 4
    ...         nxt = tf.cond(done, lambda: tf.zeros([2, 3]), lambda: x[tf.minimum(time, 3)])
    ...         state = cell.zero_state(2, tf.float32) if out is None else state
    ...         return tf.fill([2], done), nxt, state, out, None
    ...     ta, state, _ = tf.nn.raw_rnn(cell, loop_fn)
    ...     print(ta.stack().shape)
    (?, 2, 5)
    """
    _check_cell(cell, "raw_rnn")
    if not callable(loop_fn):
        raise TypeError("raw_rnn: loop_fn must be a callable")
    parallel_iterations = parallel_iterations or 32
    with vs.variable_scope(scope or "rnn"):
        time = constant(0, dtype=_dtypes.int32)
        finished, next_input, state, emit_structure, init_loop_state = loop_fn(
            time, None, None, None)
        loop_state = init_loop_state if init_loop_state is not None else constant(
            0, dtype=_dtypes.int32)
        flat_input = [convert_to_tensor(t) for t in nest_flatten(next_input)]
        next_input = nest_pack(next_input, flat_input)
        static_batch = flat_input[0].shape[0] if flat_input[0].shape.ndims else None
        for t in flat_input[1:]:
            other = t.shape[0] if t.shape.ndims else None
            if static_batch is not None and other is not None:
                static_batch.assert_is_compatible_with(other)
        const_batch = None if static_batch is None else static_batch.value
        batch = const_batch if const_batch is not None else \
            array_shape_ops.shape(flat_input[0])[0]
        _same_structure(state, cell.state_size, "the initial state and cell.state_size")
        flat_state = [convert_to_tensor(s) for s in nest_flatten(state)]
        state = nest_pack(state, flat_state)
        emit_structure, sizes, emit_dtypes = _emit_spec(emit_structure, cell,
                                                        flat_state[0].dtype.base_dtype)
        flat_ta = [TensorArray(dtype=d, size=0, dynamic_size=True,
                               element_shape=TensorShape([const_batch]).concatenate(
                                   _static_size(s)),
                               name=f"rnn_output_{i}")
                   for i, (d, s) in enumerate(zip(emit_dtypes, sizes))]
        emit_ta = nest_pack(emit_structure, flat_ta)
        zero_emit = nest_pack(emit_structure, [
            array_shape_ops.zeros(_batch_then(batch, s), d) for s, d in zip(sizes, emit_dtypes)])
        finished = convert_to_tensor(finished, dtype=_dtypes.bool)

        def keep_finished(done, current, candidate):
            def pick(cur, cand):
                if isinstance(cur, TensorArray):
                    return cand
                cand = convert_to_tensor(cand)
                if cur.shape.ndims == 0:
                    return cand
                return array_ops.where(done, cur, cand)

            return nest_pack(current, [pick(a, b) for a, b in zip(nest_flatten(current),
                                                                  nest_flatten(candidate))])

        def cond(_time, done, *_rest):
            return math_ops.logical_not(math_reduce.reduce_all(done))

        def body(time, done, current_input, emit_ta, state, loop_state):
            output, cell_state = cell(current_input, state)
            _same_structure(state, cell_state, "the cell's state and its new state")
            next_time = time + 1
            (next_done, nxt, next_state, emit, next_loop_state) = loop_fn(
                next_time, output, cell_state, loop_state)
            _same_structure(state, next_state, "the state and loop_fn's next state")
            _same_structure(current_input, nxt, "the input and loop_fn's next input")
            _same_structure(emit_ta, emit, "the emit structure and loop_fn's emit output")
            if next_loop_state is None:
                next_loop_state = loop_state
            emit = keep_finished(done, zero_emit, emit)
            next_state = keep_finished(done, state, next_state)
            emit_ta = nest_pack(emit_ta, [ta.write(time, e) for ta, e in zip(
                nest_flatten(emit_ta), nest_flatten(emit))])
            done = math_ops.logical_or(done, next_done)
            return next_time, done, nxt, emit_ta, next_state, next_loop_state

        result = while_loop(cond, body,
                            [time, finished, next_input, emit_ta, state, loop_state],
                            parallel_iterations=parallel_iterations,
                            swap_memory=swap_memory)
        emit_ta, final_state, final_loop_state = result[-3:]
        return emit_ta, final_state, (None if init_loop_state is None else final_loop_state)


def static_state_saving_rnn(cell, inputs, state_saver, state_name, sequence_length=None,
                            scope=None):
    """`static_rnn` whose initial state is ``state_saver.state(state_name)`` and whose
    final state is saved with ``state_saver.save_state`` before the last output and the
    state are returned. `state_name` has the structure of ``cell.state_size``.

    Example
    -------
    >>> import flowgraph as tf
    >>> class Saver:
    ...     def __init__(self): self.v = tf.Variable(tf.zeros([2, 4]), trainable=False)
    ...     def state(self, name): return self.v
    ...     def save_state(self, name, value): return tf.assign(self.v, value)
    >>> with tf.Graph().as_default():
    ...     saver = Saver()
    ...     outs, st = tf.nn.static_state_saving_rnn(
    ...         tf.nn.rnn_cell.BasicRNNCell(4), [tf.ones([2, 3])] * 3, saver, "h")
    ...     print(len(outs), st.shape)
    3 (2, 4)
    """
    state_size = cell.state_size
    nested_size = isinstance(state_size, list | tuple | dict)
    nested_name = isinstance(state_name, list | tuple | dict)
    if nested_size != nested_name:
        raise ValueError("Argument `state_name` should be the same type as "
                         f"`cell.state_size`. Received: state_name={state_name!s}, "
                         f"cell.state_size={state_size!s}.")
    if nested_size:
        names = nest_flatten(state_name)
        n_sizes = len(nest_flatten(state_size))
        if len(names) != n_sizes:
            raise ValueError("Number of elements in argument `state_name` and "
                             "`cell.state_size` are mismatched. Received "
                             f"state_name={state_name} with {len(names)} elements and "
                             f"cell.state_size={state_size} with {n_sizes} elements.")
        initial_state = nest_pack(state_size, [state_saver.state(n) for n in names])
    else:
        names = [state_name]
        initial_state = state_saver.state(state_name)
    outputs, state = static_rnn(cell, inputs, initial_state=initial_state,
                                sequence_length=sequence_length, scope=scope)
    flat_state = nest_flatten(state)
    saves = [state_saver.save_state(n, s) for n, s in zip(names, flat_state)]
    with control_dependencies(saves):
        last = outputs[-1]
        outputs[-1] = nest_pack(last, [identity(o) for o in nest_flatten(last)])
        state = nest_pack(state, [identity(s) for s in flat_state]) if nested_size \
            else identity(state)
    return outputs, state



"""Running a cell over a sequence: `tf.nn.dynamic_rnn`, `tf.nn.bidirectional_dynamic_rnn`,
`tf.nn.static_rnn`, `tf.nn.static_bidirectional_rnn`.

`dynamic_rnn` is one `tf.while_loop` over time: the inputs are unstacked into
TensorArrays (time-major) before the loop, the cell is called once in the loop body
(so its variables are made once, in ``<scope>/<cell name>``), each step's output is
written to a TensorArray whose flow is a loop variable, and the outputs are stacked
after the loop. The length of the sequence may be known only at run time.

With `sequence_length` (one length per batch entry) step ``t`` of an entry with
length ``L <= t`` outputs zeros and passes the state through unchanged, so the final
state of each entry is its state after its last valid step; the loop stops after the
longest sequence (outputs after that are zeros too). Gradients flow through the loop
(`tf.gradients` builds the backward loop) and are zero for the masked steps.

Example
-------
>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [None, None, 3])  # batch, time, features
...     out, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), x, dtype=tf.float32)
...     print(out.shape, state.shape, tf.global_variables()[0].name)
(?, ?, 4) (?, 4) rnn/gru_cell/gates/kernel:0
"""

from __future__ import annotations

from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework.constant_op import constant, convert_to_tensor
from flowgraph.framework.graph import name_scope
from flowgraph.framework.operation import Tensor
from flowgraph.framework.tensor_shape import TensorShape
from flowgraph.ops import array_ops, math_ops, math_reduce
from flowgraph.ops import variable_scope as vs
from flowgraph.ops.array_gen_ops import range as _range
from flowgraph.ops.control_flow_cond import nest_flatten, nest_pack
from flowgraph.ops.control_flow_loops import while_loop
from flowgraph.ops.rnn_cell_impl import RNNCell, size_shape, zeros_for_size
from flowgraph.ops.tensor_array import TensorArray

__all__ = ["bidirectional_dynamic_rnn", "dynamic_rnn", "static_bidirectional_rnn",
           "static_rnn"]


def _check_cell(cell, what: str) -> None:
    if not isinstance(cell, RNNCell) and not (hasattr(cell, "state_size")
                                              and hasattr(cell, "output_size")
                                              and callable(cell)):
        raise TypeError(f"{what}: cell must be an instance of RNNCell, got {cell!r}.")


def _transpose_batch_time(x: Tensor) -> Tensor:
    """Swap the first two axes of `x` (rank >= 2)."""
    rank = x.shape.ndims
    if rank is None:
        r = array_ops.rank(x)
        perm = array_ops.concat([[1, 0], _range(2, r)], 0)
        return array_ops.transpose(x, perm)
    if rank < 2:
        raise ValueError(f"Expected input tensor {x.name} to have rank at least 2, got "
                         f"shape {x.shape}.")
    out = array_ops.transpose(x, [1, 0, *range(2, rank)])
    out.set_shape(TensorShape([x.shape[1], x.shape[0]]).concatenate(x.shape[2:]))
    return out


def _state_dtype(dtype, state):
    if dtype is not None:
        return _dtypes.as_dtype(dtype)
    leaves = nest_flatten(state)
    if not leaves:
        raise ValueError("Unable to infer dtype from empty state.")
    return leaves[0].dtype.base_dtype


def _check_sequence_length(sequence_length) -> Tensor:
    seq = math_ops.cast(convert_to_tensor(sequence_length), _dtypes.int32)
    if seq.shape.ndims not in (None, 1):
        raise ValueError(f"sequence_length must be a vector of length batch_size, but "
                         f"saw shape: {seq.shape}")
    return array_ops.identity(seq, name="sequence_length")


def _mask_step(time, sequence_length, zero_output, state, output, new_state):
    """Past an entry's length: zero output, state copied through."""
    done = math_ops.greater_equal(time, sequence_length)  # [batch]

    def pick(old, new):
        new = convert_to_tensor(new)
        if new.shape.ndims == 0:
            return new  # TF passes scalars through
        # TF's Select with a vector condition: the batch size of `sequence_length` does
        # not leak into the outputs' static shapes.
        out = array_ops.where(done, old, new)
        out.set_shape(new.shape)
        return out

    out = [pick(z, o) for z, o in zip(nest_flatten(zero_output), nest_flatten(output))]
    st = [pick(s, n) for s, n in zip(nest_flatten(state), nest_flatten(new_state))]
    return nest_pack(output, out), nest_pack(new_state, st)


def _static_step(time: int, lengths, min_len, max_len, zero_output, state, call_cell):
    """One step of `static_rnn` with a `sequence_length`, built as TensorFlow builds it:
    ``cond(time >= max_len, zeros and state, cond(time < min_len, cell, masked cell))``,
    so the cell runs inside the outer cond (step outputs are ``rnn/cond_k/Merge``)."""
    from flowgraph.ops.control_flow_cond import cond

    flat_state = nest_flatten(state)
    flat_zero = nest_flatten(zero_output)
    copy_cond = time >= lengths

    def copy_one(old, new):
        new = convert_to_tensor(new)
        if new.shape.ndims == 0:
            return new
        return array_ops.where(copy_cond, old, new)

    def run_cell():
        output, new_state = call_cell()
        flat_out, flat_new = nest_flatten(output), nest_flatten(new_state)
        return cond(time < min_len, lambda: flat_out + flat_new,
                    lambda: [copy_one(z, o) for z, o in zip(flat_zero, flat_out)]
                    + [copy_one(s, n) for s, n in zip(flat_state, flat_new)])

    result = cond(time >= max_len, lambda: flat_zero + flat_state, run_cell)
    outputs, states = result[:len(flat_zero)], result[len(flat_zero):]
    for t, like in zip(outputs + states, flat_zero + flat_state):
        t.set_shape(like.shape)
    return nest_pack(zero_output, outputs), nest_pack(state, states)


def _batch_size(flat_inputs: list[Tensor], batch_axis: int):
    for x in flat_inputs:
        if x.shape.ndims is not None and x.shape[batch_axis].value is not None:
            return x.shape[batch_axis].value
    return array_ops.shape(flat_inputs[0])[batch_axis]


def _initial_state(cell, initial_state, dtype, batch_size):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If no initial_state is provided, argument `dtype` must be specified")
    return cell.zero_state(batch_size, dtype)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory: bool = False,
                time_major: bool = False, scope=None):
    """Run `cell` over the time steps of `inputs` in a `tf.while_loop`.

    `inputs` is ``[batch, time, ...]`` (``[time, batch, ...]`` with `time_major`), or a
    nested structure of such tensors. Returns ``(outputs, state)``: the outputs of every
    step in the same layout, and the final state. Give `initial_state` or the `dtype`
    of the zero state. Variables live in variable scope `scope` (default ``"rnn"``).

    Example
    -------
    >>> import flowgraph as tf
    >>> import numpy as np
    >>> with tf.Graph().as_default():
    ...     x = tf.constant(np.ones([2, 4, 3], np.float32))
    ...     cell = tf.nn.rnn_cell.BasicLSTMCell(5)
    ...     out, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[4, 2],
    ...                                    dtype=tf.float32)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         o = sess.run(out)
    ...     print(o.shape, np.abs(o[1, 2:]).max())
    (2, 4, 5) 0.0
    """
    _check_cell(cell, "dynamic_rnn")
    with vs.variable_scope(scope or "rnn") as varscope:
        flat = [convert_to_tensor(x, name="input") for x in nest_flatten(inputs)]
        if not flat:
            raise ValueError("dynamic_rnn: inputs must hold at least one tensor.")
        if not time_major:
            flat = [_transpose_batch_time(x) for x in flat]
        parallel_iterations = parallel_iterations or 32
        if sequence_length is not None:
            sequence_length = _check_sequence_length(sequence_length)
        batch_size = _batch_size(flat, 1)
        state = _initial_state(cell, initial_state, dtype, batch_size)
        outputs, final_state = _dynamic_rnn_loop(
            cell, nest_pack(inputs, flat), flat, state, parallel_iterations, swap_memory,
            sequence_length, _state_dtype(dtype, state), varscope)
        if not time_major:
            outputs = nest_pack(outputs, [_transpose_batch_time(o)
                                          for o in nest_flatten(outputs)])
        return outputs, final_state


def _dynamic_rnn_loop(cell, inputs, flat, state, parallel_iterations, swap_memory,
                      sequence_length, dtype, varscope):
    first = flat[0]
    t_static = first.shape[0].value if first.shape.ndims else None
    b_static = first.shape[1].value if first.shape.ndims else None
    time_steps = constant(t_static, _dtypes.int32) if t_static is not None else \
        array_ops.shape(first)[0]
    batch = b_static if b_static is not None else array_ops.shape(first)[1]
    for x in flat:
        if x.shape.ndims is not None and x.shape.ndims < 3:
            raise ValueError(f"dynamic_rnn: inputs must have rank >= 3 ([batch, time, "
                             f"depth] or [time, batch, depth]), got {x.name} of shape "
                             f"{TensorShape([x.shape[1], x.shape[0]]).concatenate(x.shape[2:])}.")
    out_sizes = [size_shape(s) for s in nest_flatten(cell.output_size)]
    zero_output = zeros_for_size(cell.output_size, batch, dtype)
    with name_scope("dynamic_rnn") as scope:
        base = scope[:-1]
        input_tas = [TensorArray(x.dtype, size=time_steps, element_shape=x.shape[1:],
                                 tensor_array_name=f"{base}/input_{k}").unstack(x)
                     for k, x in enumerate(flat)]
        output_tas = [TensorArray(dtype, size=time_steps, tensor_array_name=f"{base}/output_{k}",
                                  element_shape=TensorShape([b_static]).concatenate(s))
                      for k, s in enumerate(out_sizes)]
        if sequence_length is not None:
            max_len = math_reduce.reduce_max(sequence_length)
            loop_bound = math_ops.minimum(time_steps, math_ops.maximum(1, max_len))
        else:
            loop_bound = time_steps
        time = constant(0, dtype=_dtypes.int32, name="time")

    n_out = len(output_tas)

    def body(t, *rest):
        flows, st = rest[:n_out], nest_pack(state, list(rest[n_out:]))
        xs = []
        for ta, x in zip(input_tas, flat):
            v = ta.read(t)
            v.set_shape(x.shape[1:])
            xs.append(v)
        step_input = nest_pack(inputs, xs)
        output, new_state = cell(step_input, st)
        nest_flatten(new_state)  # the cell must return the state's structure
        if sequence_length is not None:
            output, new_state = _mask_step(t, sequence_length, zero_output, st, output,
                                           new_state)
        new_flows = [ta._derive(f).write(t, o).flow
                     for ta, f, o in zip(output_tas, flows, nest_flatten(output))]
        return (t + 1, *new_flows, *nest_flatten(new_state))

    results = while_loop(lambda t, *_: math_ops.less(t, loop_bound), body,
                         (time, *[ta.flow for ta in output_tas], *nest_flatten(state)),
                         parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                         maximum_iterations=time_steps)
    final_flows, final_state = results[1:1 + n_out], results[1 + n_out:]
    outputs = []
    for ta, f, s in zip(output_tas, final_flows, out_sizes):
        o = ta._derive(f).stack()
        o.set_shape(TensorShape([t_static, b_static]).concatenate(s))
        outputs.append(o)
    return nest_pack(cell.output_size, outputs), nest_pack(state, list(final_state))


def _reverse(x: Tensor, sequence_length, seq_axis: int, batch_axis: int) -> Tensor:
    if sequence_length is None:
        return array_ops.reverse_v2(x, [seq_axis])
    out = array_ops.reverse_sequence(x, sequence_length, seq_axis=seq_axis,
                                     batch_axis=batch_axis)
    shape = x.shape
    lengths = sequence_length.shape
    if shape.ndims is not None and lengths.ndims == 1:
        # ReverseSequence's shape function in TF merges the batch size with the
        # number of lengths.
        dims = list(shape.dims)
        dims[batch_axis] = dims[batch_axis].merge_with(lengths[0])
        shape = TensorShape(dims)
    out.set_shape(shape)
    return out


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory: bool = False,
                              time_major: bool = False, scope=None):
    """A forward and a backward `dynamic_rnn` over `inputs`: returns
    ``((output_fw, output_bw), (state_fw, state_bw))``, both outputs in input order.
    The backward pass reads each sequence reversed within its `sequence_length`.
    Variables live in ``<scope>/fw`` and ``<scope>/bw`` (default scope
    ``"bidirectional_rnn"``).

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.zeros([2, 5, 3])
    ...     (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(
    ...         tf.nn.rnn_cell.GRUCell(4), tf.nn.rnn_cell.GRUCell(6), x, dtype=tf.float32)
    ...     print(fw.shape, bw.shape)
    (2, 5, 4) (2, 5, 6)
    """
    _check_cell(cell_fw, "bidirectional_dynamic_rnn")
    _check_cell(cell_bw, "bidirectional_dynamic_rnn")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length=sequence_length,
                initial_state=initial_state_fw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=fw_scope)
        seq_axis, batch_axis = (0, 1) if time_major else (1, 0)
        if sequence_length is not None:
            sequence_length = math_ops.cast(convert_to_tensor(sequence_length),
                                            _dtypes.int32)

        def rev(structure):
            return nest_pack(structure, [_reverse(convert_to_tensor(x), sequence_length,
                                                  seq_axis, batch_axis)
                                         for x in nest_flatten(structure)])

        with vs.variable_scope("bw") as bw_scope:
            reversed_out, state_bw = dynamic_rnn(
                cell_bw, rev(inputs), sequence_length=sequence_length,
                initial_state=initial_state_bw, dtype=dtype,
                parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                time_major=time_major, scope=bw_scope)
    output_bw = rev(reversed_out)  # outside the scope, as in TF: "<outer>/ReverseSequence"
    return (output_fw, output_bw), (state_fw, state_bw)


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None,
               scope=None):
    """Run `cell` over a Python list of ``[batch, ...]`` inputs, one call per step (the
    graph holds every step). Returns ``(outputs, state)``: a list of outputs and the
    final state; `sequence_length` masks as in `dynamic_rnn`.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     xs = [tf.ones([2, 3]) for _ in range(4)]
    ...     outs, state = tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(5), xs,
    ...                                    dtype=tf.float32)
    ...     print(len(outs), outs[-1].shape, len(tf.global_variables()))
    4 (2, 5) 2
    """
    _check_cell(cell, "static_rnn")
    if not isinstance(inputs, list | tuple):
        raise TypeError("static_rnn: inputs must be a sequence (a list of tensors, one per "
                        "time step).")
    if not inputs:
        raise ValueError("static_rnn: inputs must not be empty.")
    with vs.variable_scope(scope or "rnn") as varscope:
        first = [convert_to_tensor(x) for x in nest_flatten(inputs[0])]
        batch_size = _batch_size(first, 0)
        state = _initial_state(cell, initial_state, dtype, batch_size)
        if sequence_length is not None:
            sequence_length = _check_sequence_length(sequence_length)
            zero_output = zeros_for_size(cell.output_size, batch_size,
                                         _state_dtype(dtype, state))
            min_len = math_reduce.reduce_min(sequence_length)
            max_len = math_reduce.reduce_max(sequence_length)
        outputs = []
        for time, step_input in enumerate(inputs):
            if time > 0:
                varscope.reuse_variables()
            if sequence_length is None:
                output, state = cell(step_input, state)
            else:
                output, state = _static_step(
                    time, sequence_length, min_len, max_len, zero_output, state,
                    lambda x=step_input, st=state: cell(x, st))
            outputs.append(output)
        return outputs, state


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """`static_rnn` forward and backward over a list of inputs: returns ``(outputs,
    state_fw, state_bw)`` with each step's forward and backward outputs concatenated.

    Example
    -------
    >>> import flowgraph as tf
    >>> with tf.Graph().as_default():
    ...     xs = [tf.ones([2, 3]) for _ in range(3)]
    ...     outs, _, _ = tf.nn.static_bidirectional_rnn(
    ...         tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(4), xs, dtype=tf.float32)
    ...     print(outs[0].shape)
    (2, 6)
    """
    if not isinstance(inputs, list | tuple) or not inputs:
        raise TypeError("static_bidirectional_rnn: inputs must be a non-empty list.")
    with vs.variable_scope(scope or "bidirectional_rnn"):
        with vs.variable_scope("fw") as fw_scope:
            out_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                          sequence_length, scope=fw_scope)
        with vs.variable_scope("bw") as bw_scope:
            rev_inputs = _reverse_list(inputs, sequence_length)
            tmp, state_bw = static_rnn(cell_bw, rev_inputs, initial_state_bw, dtype,
                                       sequence_length, scope=bw_scope)
    out_bw = _reverse_list(tmp, sequence_length)
    outputs = [array_ops.concat([f, b], 1) for f, b in zip(out_fw, out_bw)]
    return outputs, state_fw, state_bw


def _reverse_list(xs, sequence_length):
    if sequence_length is None:
        return list(reversed(xs))
    seq = math_ops.cast(convert_to_tensor(sequence_length), _dtypes.int64)
    stacked = array_ops.stack([convert_to_tensor(x) for x in xs])
    rev = array_ops.reverse_sequence(stacked, seq, seq_axis=0, batch_axis=1)
    return [r for r in array_ops.unstack(rev, num=len(xs))]

"""`MultiRNNCell` and the wrappers (rnn_cell_wrappers.py): names as in TensorFlow 1.x
programs (the PTB tutorial's manual unrolling, contrib's projection wrappers), values
against NumPy, dropout with a fed keep probability."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

R = np.random.RandomState(21)


def test_manual_unrolling_with_reuse_variables_and_fed_state(sess):
    keep = tf.placeholder_with_default(1.0, [])
    cell = tf.nn.rnn_cell.MultiRNNCell([
        tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), output_keep_prob=keep)
        for _ in range(2)])
    x = tf.placeholder(tf.float32, [3, 5, 2])
    initial = cell.zero_state(3, tf.float32)
    state, outs = initial, []
    with tf.variable_scope("RNN"):
        for t in range(5):
            if t > 0:
                tf.get_variable_scope().reuse_variables()
            out, state = cell(x[:, t, :], state)
            outs.append(out)
    assert [v.name for v in tf.global_variables()] == [
        f"RNN/multi_rnn_cell/cell_{k}/basic_lstm_cell/{p}:0" for k in (0, 1)
        for p in ("kernel", "bias")]
    with tf.variable_scope("RNN", reuse=True):
        dyn, dyn_state = tf.nn.dynamic_rnn(cell, x, initial_state=initial,
                                           scope=tf.get_variable_scope())
    sess.run(tf.global_variables_initializer())
    X = R.normal(size=(3, 5, 2)).astype(np.float32)
    start = sess.run(initial)
    feed = {x: X}
    for layer, values in zip(initial, start):
        feed[layer.c], feed[layer.h] = values.c + 0.5, values.h - 0.5
    o, d, s, ds = sess.run([outs, dyn, state, dyn_state], feed)
    np.testing.assert_allclose(np.stack(o, 1), d, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s[1].c, ds[1].c, rtol=1e-5, atol=1e-6)
    feed[keep] = 0.5
    assert (sess.run(outs[0], feed) == 0).any()  # a fed keep probability drops units


def test_output_projection_wrapper_names_and_values(sess):
    cell = tf.contrib.rnn.OutputProjectionWrapper(
        tf.contrib.rnn.BasicRNNCell(4, activation=tf.identity), output_size=1)
    x = tf.placeholder(tf.float32, [2, 3, 2])
    out, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    assert out.shape.as_list() == [2, 3, 1] and state.shape.as_list() == [2, 4]
    assert [v.name for v in tf.global_variables()] == [
        "rnn/output_projection_wrapper/basic_rnn_cell/kernel:0",
        "rnn/output_projection_wrapper/basic_rnn_cell/bias:0",
        "rnn/output_projection_wrapper/kernel:0", "rnn/output_projection_wrapper/bias:0"]
    sess.run(tf.global_variables_initializer())
    k, b, pk, pb = sess.run(tf.global_variables())
    X = R.normal(size=(2, 3, 2)).astype(np.float32)
    h = np.zeros((2, 4), np.float32)
    want = []
    for t in range(3):
        h = np.concatenate([X[:, t], h], 1) @ k + b
        want.append(h @ pk + pb)
    np.testing.assert_allclose(sess.run(out, {x: X}), np.stack(want, 1), rtol=1e-4,
                               atol=1e-5)


def test_input_projection_wrapper(sess):
    cell = tf.contrib.rnn.InputProjectionWrapper(tf.nn.rnn_cell.GRUCell(3), num_proj=5)
    out, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 4, 7]), dtype=tf.float32)
    shapes = {v.name: v.shape.as_list() for v in tf.global_variables()}
    assert shapes["rnn/input_projection_wrapper/kernel:0"] == [7, 5]
    assert shapes["rnn/input_projection_wrapper/gru_cell/gates/kernel:0"] == [8, 6]
    sess.run(tf.global_variables_initializer())
    assert sess.run(out).shape == (2, 4, 3)
    with pytest.raises(ValueError, match="positive integer"):
        tf.contrib.rnn.OutputProjectionWrapper(tf.nn.rnn_cell.GRUCell(3), 0)


def test_wrappers_keep_the_wrapped_cells_names():
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.ResidualWrapper(
        tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(4), "/cpu:0")),
        output_keep_prob=0.5)
    tf.nn.dynamic_rnn(cell, tf.zeros([2, 3, 4]), dtype=tf.float32, scope="res")
    assert [v.name for v in tf.global_variables()] == ["res/basic_rnn_cell/kernel:0",
                                                       "res/basic_rnn_cell/bias:0"]
    assert len(cell.variables) == 2


def test_tensor_arrays_as_loop_variables_round_trip(sess):
    from flowgraph.ops.tensor_array import arrays_to_flows, flows_to_arrays

    ta = tf.TensorArray(tf.float32, size=2)
    values, templates = arrays_to_flows([tf.constant(1), ta])
    rebuilt = flows_to_arrays(values, templates)
    assert values[0] is rebuilt[0] and rebuilt[1].handle is ta.handle
    assert sess.run(rebuilt[1].write(0, 1.0).write(1, 2.0).stack()).tolist() == [1.0, 2.0]


def test_contrib_lstm_block_cell_is_an_lstm_cell(sess):
    x = tf.constant(R.normal(size=(2, 3, 2)).astype(np.float32))
    block, _ = tf.nn.dynamic_rnn(tf.contrib.rnn.LSTMBlockCell(3, use_peephole=True), x,
                                 dtype=tf.float32, scope="a")
    plain, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True), x,
                                 dtype=tf.float32, scope="b")
    names = [v.name for v in tf.global_variables()]
    # contrib's block cell creates its peepholes in the order i, f, o; LSTMCell f, i, o
    block_order = ("kernel", "bias", "w_i_diag", "w_f_diag", "w_o_diag")
    plain_order = ("kernel", "bias", "w_f_diag", "w_i_diag", "w_o_diag")
    assert names == [f"a/lstm_cell/{p}:0" for p in block_order] + [
        f"b/lstm_cell/{p}:0" for p in plain_order]
    assert "LSTMBlockCell" in {op.type for op in tf.get_default_graph().get_operations()}
    sess.run(tf.global_variables_initializer())
    by_name = {v.name: v for v in tf.global_variables()}
    for p in block_order:
        sess.run(tf.assign(by_name[f"b/lstm_cell/{p}:0"], by_name[f"a/lstm_cell/{p}:0"]))
    a, b = sess.run([block, plain])
    np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("module", [
    "flowgraph.ops.tensor_array", "flowgraph.ops.tensor_array_ops",
    "flowgraph.ops.functional_ops", "flowgraph.ops.rnn", "flowgraph.ops.rnn_cell_impl",
    "flowgraph.ops.rnn_cell_wrappers", "flowgraph.contrib.rnn"])
def test_docstring_examples(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0

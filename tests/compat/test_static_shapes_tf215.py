"""Static shapes as TensorFlow 2.15 (`tf.compat.v1`, graph mode) infers them.

Every expectation is the string TF printed for ``t.get_shape()`` on the same program
(run through the oracle). Flowgraph must match in both directions: knowing less breaks
`tf.layers.dense` and `as_list()`, knowing more changes `set_shape` and printed output.
"""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _ph(shape, dtype=tf.float32):
    return tf.placeholder(dtype, shape)


def _s(t) -> str:
    return str(t.get_shape())


# name -> (builder, what TF 2.15 printed); builders get a dict of shared placeholders
CASES = {
    # reshape: at most one unknown target entry is inferred; shape(x)[i] counts as unknown
    "reshape_shape_entry_and_minus1": (lambda v: tf.reshape(
        v["xb"], [tf.shape(v["xb"])[0], -1, 5, 4]), "(?, ?, 5, 4)"),
    "reshape_minus1": (lambda v: tf.reshape(v["xb"], [-1, 2, 5, 4]), "(?, 2, 5, 4)"),
    "reshape_stack": (lambda v: tf.reshape(
        v["xb"], tf.stack([tf.shape(v["xb"])[0], 2, 5, 4])), "(?, 2, 5, 4)"),
    "reshape_stack_minus1": (lambda v: tf.reshape(
        v["x"], tf.stack([tf.shape(v["x"])[0], -1])), "(?, ?)"),
    "reshape_two_shape_entries": (lambda v: tf.reshape(
        v["p3"], [tf.shape(v["p3"])[0], tf.shape(v["p3"])[1], -1, 2]), "(?, 3, ?, 2)"),
    "reshape_shape_entry_known_rest": (lambda v: tf.reshape(
        v["p3"], [tf.shape(v["p3"])[0], 12]), "(?, 12)"),
    "reshape_scalar_tensor_entry": (lambda v: tf.reshape(v["x"], [v["n"], 10]), "(?, 10)"),
    "reshape_known_input_infers_tensor_entry": (lambda v: tf.reshape(
        _ph([6, 4]), [v["n"], 12]), "(2, 12)"),
    "reshape_known_input_two_unknown": (lambda v: tf.reshape(
        _ph([6, 4]), [v["n"], -1]), "(?, ?)"),
    "reshape_two_unknown_inputs": (lambda v: tf.reshape(
        _ph([None, None, 4]), [3, 5]), "(3, 5)"),
    "reshape_cast_shape": (lambda v: tf.reshape(
        v["x"], tf.cast(tf.shape(v["x"]), tf.int64)), "(?, 10)"),
    "reshape_floordiv_entry": (lambda v: tf.reshape(
        v["x"], [-1, 2, tf.shape(v["x"])[1] // 2]), "(?, 2, 5)"),
    # slice: a -1 size resolves only when begin and size are both constant
    "slice_tensor_size": (lambda v: tf.slice(v["x"], [0, 2], [v["n"], -1]), "(?, ?)"),
    "slice_tensor_begin": (lambda v: tf.slice(v["x"], [0, v["n"]], [2, -1]), "(2, ?)"),
    "slice_constant": (lambda v: tf.slice(v["x"], [0, 2], [-1, 3]), "(?, 3)"),
    # split with partly known size_splits: the split axis is unknown for every part
    "splitv_partial_sizes": (lambda v: tf.split(
        v["x"], tf.stack([v["n"], 4]), 1, num=2), ["(?, ?)", "(?, ?)"]),
    "splitv_constant": (lambda v: tf.split(v["x"], [3, -1], 1), ["(?, 3)", "(?, 7)"]),
    # pad: Python-list rows of plain ints fix their dimension
    "pad_partly_tensor_rows": (lambda v: tf.pad(v["x"], [[v["n"], 1], [2, 2]]), "(?, 14)"),
    "pad_tensor_in_known_row": (lambda v: tf.pad(v["x"], [[1, 1], [v["n"], v["n"]]]),
                                "(?, ?)"),
    "pad_stacked": (lambda v: tf.pad(v["x"], tf.stack([[1, 1], [v["n"], 3]])), "(?, ?)"),
    # shape tensors read through stack/concat/cast/shape_n/unstack, not identity/slice
    "zeros_unstacked_shape": (lambda v: tf.zeros(tf.unstack(tf.shape(v["x"]))), "(?, 10)"),
    "zeros_shape_n": (lambda v: tf.zeros(tf.shape_n([v["x"], v["x3"]])[1]), "(?, ?, 3)"),
    "zeros_identity_shape": (lambda v: tf.zeros(tf.identity(tf.shape(v["x"]))), "(?, ?)"),
    "zeros_slice_of_shape": (lambda v: tf.zeros(tf.slice(tf.shape(v["x3"]), [1], [2])),
                             "(?, ?)"),
    "zeros_strided_slice_of_shape": (lambda v: tf.zeros(tf.shape(v["x3"])[1:]), "(?, 3)"),
    "zeros_vector_slice_times_2": (lambda v: tf.zeros(tf.shape(v["x"])[1:2] * 2), "(?,)"),
    "zeros_reduce_prod_slice": (lambda v: tf.zeros(
        [tf.reduce_prod(tf.shape(v["x"])[1:])]), "(?,)"),
    "range_scalar_dim_times_2": (lambda v: tf.range(tf.shape(v["x"])[1] * 2), "(20,)"),
    "broadcast_to_dynamic_shape": (lambda v: tf.broadcast_to(
        v["x"], tf.broadcast_dynamic_shape(tf.shape(v["x"]), [4, 1])), "(?, 10)"),
    # image resize with a partly constant size
    "resize_images_partial_size": (lambda v: tf.image.resize_images(
        v["img"], tf.stack([v["n"], 7])), "(?, ?, 7, 3)"),
    "resize_bilinear_partial_size": (lambda v: tf.image.resize_bilinear(
        v["img"], tf.stack([v["n"], 7])), "(?, ?, ?, 3)"),
    "resize_images_3d_partial_size": (lambda v: tf.image.resize_images(
        _ph([None, None, 3]), tf.stack([v["n"], 7])), "(?, 7, 3)"),
    # sorting values of unknown rank along the last axis
    "argsort_unknown_rank": (lambda v: tf.argsort(v["u"]), "<unknown>"),
    # gather_nd with batch dimensions
    "gather_nd_batch_dims": (lambda v: tf.gather_nd(
        _ph([None, 6, None, 3]), _ph([None, 5, 1], tf.int32), batch_dims=1),
        "(?, 5, ?, 3)"),
    # ops that already matched TF in the sweep, kept as guards
    "tile_tensor_multiple": (lambda v: tf.tile(v["x"], [v["n"], 3]), "(?, 30)"),
    "strided_slice_new_axis": (lambda v: v["x"][..., tf.newaxis, 2], "(?, 1)"),
    "strided_slice_tensor_end_shrink": (lambda v: v["x"][:v["n"], 3], "(?,)"),
    "gather_tensor_axis": (lambda v: tf.gather(v["x"], v["iv"], axis=v["n"]), "(?, ?)"),
    "concat_tensor_axis": (lambda v: tf.concat([v["x"], v["x"]], v["n"]), "(?, ?)"),
    "concat_merges_other_dims": (lambda v: tf.concat(
        [v["x3"], _ph([2, None, 3])], 1), "(2, ?, 3)"),
    "expand_dims_tensor_axis": (lambda v: tf.expand_dims(v["x"], v["n"]), "<unknown>"),
    "transpose_tensor_perm": (lambda v: tf.transpose(v["x"], v["iv"]), "(?, ?)"),
    "batch_matmul_broadcast": (lambda v: tf.matmul(
        _ph([2, 1, 4, 3]), _ph([5, 3, 6])), "(2, 5, 4, 6)"),
    "einsum_ellipsis": (lambda v: tf.einsum("...j,jk->...k", v["x3"], _ph([3, 5])),
                        "(?, ?, 5)"),
    "reduce_sum_tensor_axis_keepdims": (lambda v: tf.reduce_sum(
        v["x"], v["n"], keepdims=True), "(?, ?)"),
    "reduce_sum_axes_of_length_1": (lambda v: tf.reduce_sum(
        v["x"], _ph([1], tf.int32)), "<unknown>"),
    "argmax_tensor_axis": (lambda v: tf.argmax(v["x"], v["n"]), "(?,)"),
    "one_hot_tensor_depth": (lambda v: tf.one_hot(v["iv"], v["n"]), "(?, ?)"),
    "conv2d_same_stride2": (lambda v: tf.nn.conv2d(
        v["img"], _ph([3, 3, 3, 8]), [1, 2, 2, 1], "SAME"), "(?, 16, ?, 8)"),
    "conv2d_valid_stride2": (lambda v: tf.nn.conv2d(
        v["img"], _ph([3, 3, 3, 8]), [1, 2, 2, 1], "VALID"), "(?, 15, ?, 8)"),
    "avg_pool_valid": (lambda v: tf.nn.avg_pool(
        v["img"], [1, 3, 3, 1], [1, 2, 2, 1], "VALID"), "(?, 15, ?, 3)"),
    "conv2d_transpose_stacked_shape": (lambda v: tf.nn.conv2d_transpose(
        v["img"], _ph([3, 3, 5, 3]), tf.stack([v["n"], v["n"], 20, 5]), [1, 2, 2, 1]),
        "(?, ?, 20, 5)"),
    "boolean_mask_2d_mask": (lambda v: tf.boolean_mask(
        v["x3"], _ph([None, None], tf.bool)), "(?, 3)"),
    "where_one_arg": (lambda v: tf.where(_ph([None, 10], tf.bool)), "(?, 2)"),
    "where_three_args_merge": (lambda v: tf.where(
        _ph([None, 10], tf.bool), v["x"], _ph([5, None])), "(5, 10)"),
    "top_k_tensor_k": (lambda v: list(tf.nn.top_k(v["x"], v["n"])), ["(?, ?)", "(?, ?)"]),
    "linspace_tensor_num": (lambda v: tf.linspace(0.0, 1.0, v["n"]), "(?,)"),
    "zeros_list_with_tensor": (lambda v: tf.zeros([v["n"], 3]), "(?, 3)"),
    "sequence_mask_2d": (lambda v: tf.sequence_mask(_ph([None, 4], tf.int32), 6),
                         "(?, 4, 6)"),
    "dynamic_stitch": (lambda v: tf.dynamic_stitch([v["iv"], v["iv"]], [v["x"], v["x"]]),
                       "(?, 10)"),
    "broadcast_add_unknown": (lambda v: _ph([None, 3]) + _ph([4, 1]), "(4, 3)"),
    "broadcast_rank_mismatch": (lambda v: _ph([None]) * _ph([2, None]), "(2, ?)"),
    "broadcast_to_stacked": (lambda v: tf.broadcast_to(
        v["x"], tf.stack([v["n"], 4, 10])), "(?, 4, 10)"),
    "unsorted_segment_sum_2d_ids": (lambda v: tf.unsorted_segment_sum(
        v["x"], _ph([None, 10], tf.int32), 7), "(7,)"),
}


@pytest.fixture
def v():
    return {"x": _ph([None, 10]), "xb": _ph([None, 40]), "x3": _ph([None, None, 3]),
            "p3": _ph([None, 3, 4]), "u": _ph(None), "n": _ph([], tf.int32),
            "img": _ph([None, 32, None, 3]), "iv": _ph([None], tf.int32)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_static_shape_matches_tf(name, v):
    build, want = CASES[name]
    got = build(v)
    assert ([_s(t) for t in got] if isinstance(got, list) else _s(got)) == want


def test_tensor_array_gather_uses_the_created_element_shape():
    y5 = _ph([5, 10])
    ta = tf.TensorArray(tf.float32, size=3)
    ta = ta.write(0, y5).write(1, y5).write(2, y5)
    # TF 2.15: ['(3, 5, 10)', '(?, 5, 10)', '(5, 10)', '(15, 10)']
    assert [_s(t) for t in (ta.stack(), ta.gather([0, 1]), ta.read(0), ta.concat())] == \
        ["(3, 5, 10)", "(?, 5, 10)", "(5, 10)", "(15, 10)"]
    ta2 = tf.TensorArray(tf.float32, size=_ph([], tf.int32),
                         element_shape=tf.TensorShape([None, 10]))
    # TF 2.15: ['(?, ?, 10)', '(?, 10)', '(2, ?, 10)', '(?, 10)']
    assert [_s(t) for t in (ta2.stack(), ta2.read(0), ta2.gather(tf.range(2)),
                            ta2.concat())] == ["(?, ?, 10)", "(?, 10)", "(2, ?, 10)",
                                               "(?, 10)"]


def test_sparse_to_dense_index_types_must_match():
    idx = _ph([None, 2], tf.int64)
    n = _ph([], tf.int32)
    with pytest.raises(TypeError, match="does not match type int64"):
        tf.sparse_to_dense(idx, tf.stack([n, 5]), 1.0)  # TF 2.15: TypeError
    assert _s(tf.sparse_to_dense(idx, [4, 5], 1.0)) == "(4, 5)"
    assert _s(tf.sparse_to_dense([[0]], tf.stack([n]), [1.0])) == "(?,)"


def test_zeros_like_builds_what_tf_builds():
    # TF 2.15: Const [] (5, 10) / ZerosLike ['Placeholder'] (?, 10) / Const [] (5, 10) int32
    a = tf.zeros_like(_ph([5, 10]))
    b = tf.zeros_like(_ph([None, 10]))
    c = tf.zeros_like(_ph([5, 10]), dtype=tf.int32)
    d = tf.zeros_like(tf.constant([1, 2]))
    assert [(t.op.type, len(t.op.inputs), _s(t), t.dtype.name) for t in (a, b, c, d)] == [
        ("Const", 0, "(5, 10)", "float32"), ("ZerosLike", 1, "(?, 10)", "float32"),
        ("Const", 0, "(5, 10)", "int32"), ("Const", 0, "(2,)", "int32")]
    assert a.op.name == "zeros_like"
    kept = tf.zeros_like(_ph([5, 10]), optimize=False)
    assert kept.op.type == "ZerosLike" and _s(kept) == "(5, 10)"


def test_gradient_zeros_stay_zeros_like_ops(sess):
    v, w = _ph([3]), _ph([3])
    g = tf.gradients(tf.reduce_sum(v * 2), [v, w], unconnected_gradients="zero")
    # TF 2.15: the unconnected zero is a constant made outside the gradients scope
    assert (g[1].op.type, g[1].op.name) == ("Const", "zeros_like")
    a, _ = tf.split(v, [1, 2])
    ga = tf.gradients(a, v)[0]
    # TF 2.15: ConcatV2 ['Fill', 'ZerosLike', 'Const'] -- the missing part stays ZerosLike
    assert [i.op.type for i in ga.op.inputs][1] == "ZerosLike"
    np.testing.assert_array_equal(sess.run(ga, {v: [1.0, 2.0, 3.0]}), [1.0, 0.0, 0.0])


def test_cond_gradient_with_static_shapes_runs(sess):
    # The zero for the untaken branch must be dead with it (a ZerosLike, not a constant).
    p, x = _ph([], tf.bool), _ph([2, 3])
    y = tf.cond(p, lambda: tf.reduce_sum(x * 3.0), lambda: tf.reduce_sum(tf.sin(x)))
    g = tf.gradients(y, x)[0]
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(sess.run(g, {p: True, x: xv}), np.full((2, 3), 3.0))
    np.testing.assert_allclose(sess.run(g, {p: False, x: xv}), np.cos(xv), rtol=1e-6)


def test_gather_nd_batch_dims_values_and_gradient(sess):
    from tests.ops.gradient_checker import check_gradient

    rng = np.random.default_rng(3)
    params = rng.normal(size=(2, 3, 4, 5))
    idx = rng.integers(0, 4, size=(2, 3, 6, 1)).astype(np.int32)
    p = _ph([None, 3, None, 5], tf.float64)
    i = _ph([None, 3, 6, 1], tf.int32)
    y = tf.gather_nd(p, i, batch_dims=2)
    assert _s(y) == "(?, 3, 6, 5)"
    want = np.stack([np.stack([params[a, b][idx[a, b, :, 0]] for b in range(3)])
                     for a in range(2)])
    np.testing.assert_array_equal(sess.run(y, {p: params, i: idx}), want)
    check_gradient(lambda t: tf.gather_nd(t, idx, batch_dims=2), [params])
    # TF 2.15 builds the batched gather for indices of unknown rank too (rank via Rank)
    u = tf.gather_nd(p, _ph(None, tf.int32), batch_dims=1)
    assert _s(u) == "<unknown>"


def test_sort_of_unknown_rank_along_any_axis(sess):
    u = _ph(None)
    x = np.random.default_rng(4).normal(size=(3, 4, 2)).astype(np.float32)
    for axis in (0, 1, -2, -1):
        a, s = tf.argsort(u, axis=axis), tf.sort(u, axis=axis, direction="DESCENDING")
        assert _s(a) == _s(s) == "<unknown>"  # TF 2.15
        got_a, got_s = sess.run([a, s], {u: x})
        np.testing.assert_array_equal(got_a, np.argsort(x, axis=axis, kind="stable"))
        np.testing.assert_array_equal(got_s, -np.sort(-x, axis=axis))


def test_conv2d_transpose_takes_its_batch_from_the_gradient():
    # TF 2.15: Conv2DBackpropInput's static batch is the gradient's, not output_shape's.
    f = tf.zeros([3, 3, 5, 3])
    x = tf.placeholder(tf.float32, [None, 32, 10, 3])
    assert str(tf.nn.conv2d_transpose(x, f, [4, 64, 20, 5], [1, 2, 2, 1]).get_shape()) == \
        "(?, 64, 20, 5)"
    x2 = tf.placeholder(tf.float32, [2, 32, 10, 3])
    assert str(tf.nn.conv2d_transpose(x2, f, [2, 64, 20, 5], [1, 2, 2, 1]).get_shape()) == \
        "(2, 64, 20, 5)"
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 4 and 2"):
        tf.nn.conv2d_transpose(x2, f, [4, 64, 20, 5], [1, 2, 2, 1])
    sizes = tf.placeholder(tf.int32, [4])
    assert str(tf.nn.conv2d_transpose(x2, f, sizes, [1, 2, 2, 1]).get_shape()) == \
        "(2, ?, ?, ?)"
    # the depthwise op keeps input_sizes' batch, as in TF
    dw = tf.nn.depthwise_conv2d_native_backprop_input(
        [4, 32, 10, 3], tf.zeros([3, 3, 3, 1]), x, [1, 1, 1, 1], "SAME")
    assert str(dw.get_shape()) == "(4, 32, 10, 3)"

"""`tf.gradients`: the algorithm (paths, stops, grad_ys, multi-output ops, names, errors),
IndexedSlices, Variables, and second derivatives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gradient_checker import check_gradient

import flowgraph as tf
from flowgraph.framework.indexed_slices import IndexedSlices
from flowgraph.framework.registry import has_op_def, register_op
from flowgraph.ops import array_grad, math_grad, nn_grad  # noqa: F401
from flowgraph.ops.gradients import gradients
from flowgraph.ops.op_util import make_tensor

if not has_op_def("TestNoGradient"):
    register_op("TestNoGradient")(lambda op, x: [x])


def run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


# -- paths ------------------------------------------------------------------------------
def test_contributions_of_several_paths_are_summed_with_add_n():
    x = tf.constant([1.0, -2.0])
    y = x * x + 3.0 * x + tf.sin(x)
    g, = gradients(y, x)
    np.testing.assert_allclose(run(g)[0], 2 * np.array([1.0, -2.0]) + 3 + np.cos([1.0, -2.0]),
                               rtol=1e-6)
    assert g.op.type == "AddN" and len(g.op.inputs) == 4  # x * x contributes twice


def test_several_ys_are_summed():
    x = tf.constant(2.0)
    g, = gradients([x * x, 5.0 * x], x)
    assert run(g) == [9.0]


def test_unconnected_xs_get_none():
    x, z = tf.constant(1.0), tf.constant(2.0)
    y = x * 3.0
    assert gradients(y, [x, z])[1] is None
    assert gradients(z, x) == [None]


def test_gradient_of_y_with_respect_to_itself_is_grad_y():
    y = tf.constant([1.0, 2.0])
    g, = gradients(y, y, grad_ys=tf.constant([3.0, 4.0]))
    np.testing.assert_array_equal(run(g)[0], [3.0, 4.0])


def test_stop_gradient_blocks_the_path():
    x = tf.constant(3.0)
    y = tf.stop_gradient(x * x) * x
    assert run(gradients(y, x)[0]) == [9.0]
    assert gradients(tf.stop_gradient(x), x) == [None]


def test_stop_gradients_argument_treats_tensors_as_constants():
    a = tf.constant(0.0)
    b = 2.0 * a
    ga, gb = gradients(a + b, [a, b], stop_gradients=[a, b])
    assert run(ga, gb) == [1.0, 1.0]
    ga_full, = gradients(a + b, a)
    assert run(ga_full) == [3.0]


def test_grad_ys_weights_the_outputs():
    x = tf.constant([1.0, 2.0, 3.0])
    g, = gradients(x * x, x, grad_ys=tf.constant([1.0, 0.0, -1.0]))
    np.testing.assert_array_equal(run(g)[0], [2.0, 0.0, -6.0])


def test_grad_ys_must_match_ys():
    x = tf.constant([1.0, 2.0])
    with pytest.raises(ValueError, match="grad_ys has 2 entries"):
        gradients(x, x, grad_ys=[[1.0, 1.0], [1.0, 1.0]][:1] * 2)
    with pytest.raises(ValueError, match="not compatible"):
        gradients(x, x, grad_ys=tf.constant([1.0, 2.0, 3.0]))


def test_complex_ys_need_grad_ys():
    z = tf.constant([1 + 2j])
    with pytest.raises(TypeError, match="complex"):
        gradients(z * z, z)


def test_integer_tensors_get_no_gradient():
    n = tf.constant([1, 2])
    x = tf.constant([1.0, 2.0])
    assert gradients(tf.cast(n, tf.float32) * 2.0, n) == [None]
    assert gradients(n * 2, n) == [None]
    y = x * tf.cast(n, tf.float32)
    gx, gn = gradients(y, [x, n])
    assert gn is None
    np.testing.assert_array_equal(run(gx)[0], [1.0, 2.0])


def test_non_differentiable_ops_stop_the_flow():
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.cast(tf.shape(x), tf.float32) * tf.reduce_sum(x)
    assert gradients(tf.cast(tf.argmax(x, 1), tf.float32), x) == [None]
    g, = gradients(y, x)
    out = run(g, feed={x: np.ones((2, 3))})[0]
    np.testing.assert_array_equal(out, np.full((2, 3), 5.0))


def test_op_without_gradient_is_a_lookup_error():
    x = tf.constant([1.0])
    y = make_tensor("TestNoGradient", [x * 2.0], name="mystery")
    with pytest.raises(LookupError, match=r"No gradient defined for operation 'mystery' "
                                          r"\(op type: TestNoGradient\)"):
        gradients(y, x)
    # Off the path from xs to ys it does not matter.
    z = tf.constant([2.0])
    assert gradients(y + z, z) is not None


# -- multi-output ops -------------------------------------------------------------------
def test_unused_outputs_of_split_get_zeros():
    x = tf.constant(np.arange(6.0).reshape(2, 3))
    _, b, _ = tf.split(x, 3, axis=1)
    g, = gradients(b * 2.0, x)
    np.testing.assert_array_equal(run(g)[0], [[0, 2, 0], [0, 2, 0]])


def test_unused_outputs_of_unstack():
    x = tf.constant(np.arange(6.0).reshape(3, 2))
    parts = tf.unstack(x)
    g, = gradients(parts[0] + parts[2], x)
    np.testing.assert_array_equal(run(g)[0], [[1, 1], [0, 0], [1, 1]])


# -- IndexedSlices ----------------------------------------------------------------------
def test_gather_gradient_is_indexed_slices():
    params = tf.constant(np.arange(12.0).reshape(4, 3))
    idx = tf.constant([[2, 0], [2, 3]])
    y = tf.gather(params, idx) * 10.0
    g, = gradients(y, params)
    assert isinstance(g, IndexedSlices)
    assert g.dtype == tf.float64 and g.values.shape.as_list() == [4, 3]
    values, indices, shape, dense = run(g.values, g.indices, g.dense_shape,
                                        tf.convert_to_tensor(g))
    np.testing.assert_array_equal(values, np.full((4, 3), 10.0))
    np.testing.assert_array_equal(indices, [2, 0, 2, 3])
    np.testing.assert_array_equal(shape, [4, 3])
    np.testing.assert_array_equal(dense, [[10] * 3, [0] * 3, [20] * 3, [10] * 3])


def test_indexed_slices_aggregate_by_concatenation():
    params = tf.constant(np.ones((5, 2)))
    y = tf.reduce_sum(tf.gather(params, [1, 2])) + tf.reduce_sum(tf.gather(params, [2]))
    g, = gradients(y, params)
    assert isinstance(g, IndexedSlices)
    indices, dense = run(g.indices, tf.convert_to_tensor(g))
    np.testing.assert_array_equal(sorted(indices), [1, 2, 2])
    np.testing.assert_array_equal(dense[:, 0], [0, 1, 2, 0, 0])


def test_indexed_slices_mixed_with_dense_are_densified():
    params = tf.constant(np.ones((4, 2)))
    y = tf.reduce_sum(tf.gather(params, [3])) + tf.reduce_sum(params * 2.0)
    g, = gradients(y, params)
    assert isinstance(g, tf.Tensor)
    np.testing.assert_array_equal(run(g)[0][:, 1], [2, 2, 2, 3])


def test_indexed_slices_properties_and_conversion_errors():
    s = IndexedSlices(tf.ones([2, 3], name="vals"), tf.constant([0, 4]))
    assert s.name == "vals:0" and s.op is s.values.op
    assert s.graph is tf.get_default_graph() and s.device == ""
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(s)
    with pytest.raises(TypeError, match="int32 or int64"):
        IndexedSlices(tf.ones([2]), tf.ones([2]))


def test_dense_conversion_warns_for_huge_shapes_only():
    values = tf.ones([1, 2])
    # TensorFlow 2.15 no longer warns for an unknown shape (TF 1.x did).
    unknown = IndexedSlices(values, tf.constant([0]), tf.shape(tf.placeholder(tf.float32)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dense = tf.convert_to_tensor(unknown)
    assert dense.op.type == "UnsortedSegmentSum"
    huge = IndexedSlices(values, tf.constant([0]), tf.constant([100_000_000, 2]))
    with pytest.warns(UserWarning, match="200000000 elements"):
        tf.convert_to_tensor(huge)
    small = IndexedSlices(values, tf.constant([0]), tf.constant([3, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tf.convert_to_tensor(small)


# -- Variables --------------------------------------------------------------------------
def test_variables_as_xs():
    v = tf.Variable([1.0, 2.0], name="v")
    w = tf.Variable(3.0, name="w")
    y = tf.reduce_sum(v * v) * w + tf.identity(v.read_value())[0]
    gv, gw = gradients(y, [v, w])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out_v, out_w = sess.run([gv, gw])
    np.testing.assert_array_equal(out_v, [7.0, 12.0])
    assert out_w == 5.0


def test_gather_from_a_variable_gives_indexed_slices():
    emb = tf.Variable(np.zeros((5, 2), np.float32), name="emb")
    y = tf.reduce_sum(tf.gather(emb, [4, 1]))
    g, = gradients(y, emb)
    assert isinstance(g, IndexedSlices)
    with tf.Session() as sess:
        sess.run(emb.initializer)
        np.testing.assert_array_equal(sess.run(g.indices), [4, 1])


# -- names --------------------------------------------------------------------------------
def test_gradient_ops_live_under_the_gradients_scope():
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    with tf.name_scope("layer"):
        y = tf.tanh(tf.matmul(x, tf.ones([3, 4])), name="act")
    g, = gradients(y, x)
    new = [op.name for op in tf.get_default_graph().get_operations()
           if op.name.startswith("gradients")]
    assert "gradients/grad_ys_0" in new
    assert any(n.startswith("gradients/layer/act_grad/") for n in new)
    assert g.op.name.startswith("gradients/layer/MatMul_grad/")
    g2, = gradients(y, x, name="second")
    assert g2.op.name.startswith("second/layer/MatMul_grad/")
    g3, = gradients(y, x)
    assert g3.op.name.startswith("gradients_1/")


def test_gate_and_colocate_options_keep_the_values():
    x = tf.constant([1.0, 2.0])
    y = tf.constant([3.0, 4.0])
    z = x * y
    plain = gradients(z, [x, y])
    gated = gradients(z, [x, y], gate_gradients=True, colocate_gradients_with_ops=True,
                      aggregation_method=0)
    a, b, c, d = run(*plain, *gated)
    np.testing.assert_array_equal(a, c)
    np.testing.assert_array_equal(b, d)


def test_gating_leaves_out_gradients_that_reach_no_x():
    """Gated, an op's input gradients run together; the gradient of an input off every
    path from the xs (a dense layer's data) is not gated, so the session never runs it."""
    x = tf.placeholder(tf.float32, [2, 3], name="data")
    w = tf.Variable(np.full((3, 4), 0.5, np.float32), name="w")
    y = tf.reduce_sum(tf.matmul(x, w, name="mm"))
    gw, = gradients(y, [w], gate_gradients=True)
    gx_both, gw_both = gradients(y, [x, w], gate_gradients=True, name="both")
    options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)

    def ran_matmuls(fetches, scope):
        meta = tf.RunMetadata()
        with tf.Session() as sess:
            sess.run(w.initializer)
            out = sess.run(fetches, {x: np.ones((2, 3), np.float32)}, options=options,
                           run_metadata=meta)
        names = {ns.node_name for d in meta.step_stats.dev_stats for ns in d.node_stats}
        graph = tf.get_default_graph()
        return out, sorted(op.name for op in graph.get_operations()
                           if op.type == "MatMul" and op.name.startswith(scope)
                           and op.name in names)

    out, ran = ran_matmuls(gw, "gradients/")
    np.testing.assert_array_equal(out, np.full((3, 4), 2.0))
    assert ran == ["gradients/mm_grad/MatMul_1"]  # the product for w only
    (dx, dw), ran = ran_matmuls([gx_both, gw_both], "both/")
    np.testing.assert_array_equal(dx, np.full((2, 3), 2.0))
    np.testing.assert_array_equal(dw, np.full((3, 4), 2.0))
    assert ran == ["both/mm_grad/MatMul", "both/mm_grad/MatMul_1"]


# -- second derivatives ----------------------------------------------------------------
def test_second_derivative_of_tanh():
    x = tf.constant([0.5, -1.0])
    g, = gradients(tf.tanh(x), x)
    gg, = gradients(g, x)
    t = np.tanh([0.5, -1.0])
    np.testing.assert_allclose(run(gg)[0], -2 * t * (1 - t * t), rtol=1e-6)


def test_second_derivative_of_mul():
    x = tf.constant(2.0)
    g, = gradients(x * x * x, x)
    gg, = gradients(g, x)
    ggg, = gradients(gg, x)
    assert run(g, gg, ggg) == [12.0, 12.0, 6.0]


@pytest.mark.parametrize("fn", [
    lambda a, b: gradients(tf.reduce_sum(tf.tanh(a) * b), a)[0],
    lambda a, b: gradients(tf.reduce_sum(a * a * b), [a, b]),
    lambda a, b: gradients(tf.reduce_sum(tf.sin(tf.matmul(a, b, transpose_b=True))), a)[0],
    lambda a, b: gradients(tf.reduce_sum(tf.nn.softplus(a) * b), a)[0],
    lambda a, b: gradients(tf.reduce_sum(tf.nn.relu(a) * b * b), [a, b]),
], ids=["tanh", "mul", "matmul", "softplus", "relu"])
def test_gradient_of_gradient_matches_finite_differences(fn):
    rng = np.random.RandomState(3)
    check_gradient(fn, [rng.uniform(0.2, 1.5, (2, 3)), rng.uniform(-1, 1, (2, 3))])


def test_float32_gradients_within_float32_tolerance():
    rng = np.random.RandomState(0)
    check_gradient(lambda a, b: tf.matmul(a, b), [rng.normal(size=(3, 4)),
                                                  rng.normal(size=(4, 2))], dtype=np.float32)
    check_gradient(lambda x, f: tf.nn.conv2d(x, f, 1, "SAME"),
                   [rng.normal(size=(2, 5, 4, 3)), rng.normal(size=(3, 2, 3, 2))],
                   dtype=np.float32)


# -- errors from gradient functions ---------------------------------------------------
def test_gradient_functions_must_return_one_gradient_per_input():
    from flowgraph.framework.registry import register_gradient

    if not has_op_def("TestWrongGradient"):
        register_op("TestWrongGradient")(lambda op, x: [x])
        register_gradient("TestWrongGradient")(lambda op, grad: [grad, grad])
    x = tf.constant(1.0)
    y = make_tensor("TestWrongGradient", [x])
    with pytest.raises(ValueError, match=r"returned 2 gradients .* which has 1 inputs"):
        gradients(y, x)


def test_xs_must_be_tensors():
    # A value becomes a new constant nothing depends on (TF 2.15: [None]); an object
    # that is no tensor value is a TypeError.
    assert gradients(tf.constant(1.0), [1.0]) == [None]
    with pytest.raises(TypeError, match="xs must be Tensors or Variables"):
        gradients(tf.constant(1.0), [object()])


# -- docstring examples ---------------------------------------------------------------
@pytest.mark.parametrize("module", ["gradients", "math_grad", "array_grad", "nn_grad",
                                    "indexed_slices"])
def test_docstring_examples(module, monkeypatch):
    import doctest
    import importlib

    from flowgraph.ops import gradients as gradients_module

    # Until flowgraph/__init__.py exports them (tf.gradients, tf.IndexedSlices).
    monkeypatch.setattr(tf, "gradients", gradients_module.gradients, raising=False)
    monkeypatch.setattr(tf, "IndexedSlices", IndexedSlices, raising=False)
    package = "flowgraph.framework" if module == "indexed_slices" else "flowgraph.ops"
    mod = importlib.import_module(f"{package}.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0

"""The graph's op layout as TensorFlow 2.15 (``tf.compat.v1``, graph mode) builds it, part
2: ``tf.tensordot`` and 3-D dense layers (reshapes around one ``MatMul``),
``atrous_conv2d_transpose`` through ``SpaceToBatchND``/``BatchToSpaceND``,
``switch_case``'s ``Identity`` outputs, ``add_check_numerics_ops``' chain,
``graph_def_versions`` and ``InaccessibleTensorError``. Every expected value was printed
by TensorFlow 2.15 running the same code (/tmp/s15/lay2/t*.py)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops.math_ops import fused_tensordot


def _layout(g, prefix: str = "") -> list[tuple[str, str]]:
    return [(o.name, o.type) for o in g.get_operations() if o.name.startswith(prefix)]


def _shapes(g, prefix: str) -> dict[str, str]:
    return {o.name: str(o.outputs[0].shape) for o in g.get_operations()
            if o.name.startswith(prefix) and o.outputs}


# -- tensordot: transposes/reshapes around one MatMul ---------------------------------------
_DENSE_PARTIAL = [  # TF 2.15: tf.layers.dense(x [?, 5, 3], 4)
    ("dense/Tensordot/axes", "Const"), ("dense/Tensordot/free", "Const"),
    ("dense/Tensordot/Shape", "Shape"), ("dense/Tensordot/GatherV2/axis", "Const"),
    ("dense/Tensordot/GatherV2", "GatherV2"), ("dense/Tensordot/GatherV2_1/axis", "Const"),
    ("dense/Tensordot/GatherV2_1", "GatherV2"), ("dense/Tensordot/Const", "Const"),
    ("dense/Tensordot/Prod", "Prod"), ("dense/Tensordot/Const_1", "Const"),
    ("dense/Tensordot/Prod_1", "Prod"), ("dense/Tensordot/concat/axis", "Const"),
    ("dense/Tensordot/concat", "ConcatV2"), ("dense/Tensordot/stack", "Pack"),
    ("dense/Tensordot/transpose", "Transpose"), ("dense/Tensordot/Reshape", "Reshape"),
    ("dense/Tensordot/MatMul", "MatMul"), ("dense/Tensordot/Const_2", "Const"),
    ("dense/Tensordot/concat_1/axis", "Const"), ("dense/Tensordot/concat_1", "ConcatV2"),
    ("dense/Tensordot", "Reshape")]


def test_dense_on_a_rank3_input_builds_tensorflows_tensordot():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 5, 3], name="x")
        y = tf.layers.dense(x, 4)
        assert _layout(g, "dense/Tensordot") == _DENSE_PARTIAL
        shapes = _shapes(g, "dense/Tensordot")
        assert (y.name, str(y.shape)) == ("dense/BiasAdd:0", "(?, 5, 4)")
        assert [shapes[n] for n in ("dense/Tensordot/GatherV2", "dense/Tensordot/transpose",
                                    "dense/Tensordot/Reshape", "dense/Tensordot/MatMul",
                                    "dense/Tensordot")] == \
            ["(2,)", "(?, 5, 3)", "(?, ?)", "(?, 4)", "(?, 5, 4)"]
        assert g.get_operation_by_name("dense/BiasAdd").inputs[0].name == "dense/Tensordot:0"
        xv = np.random.RandomState(0).rand(7, 5, 3).astype(np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, kernel, bias = sess.run([y, "dense/kernel:0", "dense/bias:0"], {x: xv})
    np.testing.assert_allclose(got, xv @ kernel + bias, rtol=1e-5)
    g = tf.Graph()
    with g.as_default():  # a fully known shape: constants only
        x = tf.placeholder(tf.float32, [2, 5, 3], name="x")
        y = tf.layers.dense(x, 4, activation=tf.nn.relu, use_bias=False)
        assert _layout(g, "dense/Tensordot") == [
            ("dense/Tensordot/Reshape/shape", "Const"), ("dense/Tensordot/Reshape", "Reshape"),
            ("dense/Tensordot/MatMul", "MatMul"), ("dense/Tensordot/shape", "Const"),
            ("dense/Tensordot", "Reshape")]
        assert (y.name, str(y.shape)) == ("dense/Relu:0", "(2, 5, 4)")
        assert _shapes(g, "dense/Tensordot/MatMul") == {"dense/Tensordot/MatMul": "(10, 4)"}


def test_tensordot_names_types_and_static_shapes():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2, 3, 4], name="a")
        c = tf.placeholder(tf.float32, [4, 3, 5], name="c")
        p = tf.placeholder(tf.float32, [None, 3, None], name="p")
        outs = [tf.tensordot(a, c, [[1, 2], [1, 0]]), tf.tensordot(a, c, 0, name="outer"),
                tf.tensordot(a, c, [[-1], [0]]), tf.tensordot(a, c, [2, 0]),
                tf.tensordot(a, c, tf.constant([[2], [0]])), tf.tensordot(p, c, [[1], [1]]),
                tf.tensordot(p, c, 1),
                tf.tensordot(tf.ones([3, 4]), [[1.0], [2.0], [3.0], [4.0]], 1)]
        # TF 2.15
        assert [(t.name, t.op.type, str(t.shape)) for t in outs] == [
            ("Tensordot/MatMul:0", "MatMul", "(2, 5)"),
            ("outer:0", "Reshape", "(2, 3, 4, 4, 3, 5)"),
            ("Tensordot_1:0", "Reshape", "(2, 3, 3, 5)"),
            ("Tensordot_2:0", "Reshape", "(2, 3, 3, 5)"),
            ("Tensordot_3:0", "Reshape", "(2, 3, 3, 5)"),
            ("Tensordot_4:0", "Reshape", "(?, ?, 4, 5)"),
            ("Tensordot_5:0", "Reshape", "(?, 3, 3, 5)"),
            ("Tensordot_6/MatMul:0", "MatMul", "(3, 1)")]
        assert _layout(g, "outer") == [
            ("outer/Reshape/shape", "Const"), ("outer/Reshape", "Reshape"),
            ("outer/Reshape_1/shape", "Const"), ("outer/Reshape_1", "Reshape"),
            ("outer/MatMul", "MatMul"), ("outer/shape", "Const"), ("outer", "Reshape")]
        assert _layout(g, "Tensordot_6/") == [("Tensordot_6/b", "Const"),
                                              ("Tensordot_6/MatMul", "MatMul")]
        # a known rank with a partly known shape: a constant transpose for `c`
        assert [n for n, _ in _layout(g, "Tensordot_4/")][14:20] == [
            "Tensordot_4/transpose", "Tensordot_4/Reshape", "Tensordot_4/transpose_1/perm",
            "Tensordot_4/transpose_1", "Tensordot_4/Reshape_1/shape", "Tensordot_4/Reshape_1"]
        # axes as a tensor: wrapped negative axes and ListDiff, shapes still inferred
        td3 = _layout(g, "Tensordot_3/")
        assert [t for _, t in td3].count("ListDiff") == 2 and \
            [t for _, t in td3].count("Select") == 2
        assert _shapes(g, "Tensordot_3/transpose_1") == {"Tensordot_3/transpose_1": "(4, 3, 5)"}
        av = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        cv = np.arange(60, dtype=np.float32).reshape(4, 3, 5)
        with tf.Session() as sess:
            got = sess.run(outs[:7], {a: av, c: cv, p: av})
    for value, axes in zip(got, [[[1, 2], [1, 0]], 0, [[2], [0]], [[2], [0]], [[2], [0]],
                                 [[1], [1]], [[2], [0]]]):
        np.testing.assert_allclose(value, np.tensordot(av, cv, axes), rtol=1e-6)


def test_tensordot_of_an_unknown_rank_computes_the_axes_in_the_graph():
    g = tf.Graph()
    with g.as_default():
        u = tf.placeholder(tf.float32, None, name="u")
        b = tf.placeholder(tf.float32, [3, 4], name="b")
        out = tf.tensordot(u, b, 1)
        types = [t for _, t in _layout(g, "Tensordot/")]
        # TF 2.15: 58 ops; Rank/Range for the axes, ListDiff for the free axes
        assert len(types) == 58 and types[:4] == ["Rank", "Const", "Sub", "Const"]
        assert (out.name, out.op.type, str(out.shape)) == ("Tensordot:0", "Reshape", "<unknown>")
        # TensorFlow's shape inference evaluates b's constant permutation and sizes
        assert [_shapes(g, n)[n] for n in ("Tensordot/transpose_1", "Tensordot/Reshape_1",
                                          "Tensordot/MatMul")] == ["(3, 4)", "(3, 4)", "(?, 4)"]
        uv = np.random.RandomState(1).rand(2, 3).astype(np.float32)
        bv = np.random.RandomState(2).rand(3, 4).astype(np.float32)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out, {u: uv, b: bv}), uv @ bv, rtol=1e-6)


def test_tensordot_errors_and_gradients():
    with tf.Graph().as_default():
        ones = tf.ones([2, 3])
        # TF 2.15: ValueError from the MatMul's shapes, ValueErrors naming `axes`, a TypeError
        with pytest.raises(ValueError, match="inner dimensions differ"):
            tf.tensordot(ones, tf.ones([4, 5]), 1)
        with pytest.raises(ValueError, match="different number of contraction axes"):
            tf.tensordot(ones, tf.ones([3, 5]), [[1], [0, 1]])
        with pytest.raises(ValueError, match="must not be larger than the number of dim"):
            tf.tensordot(ones, tf.ones([3, 5]), 3)
        with pytest.raises(ValueError, match="at least 0"):
            tf.tensordot(ones, tf.ones([3, 5]), -1)
        with pytest.raises(ValueError, match="pair"):
            tf.tensordot(ones, tf.ones([3, 5]), [1, 2, 3])
        with pytest.raises(TypeError):
            tf.tensordot(ones, tf.ones([3, 5], tf.int32), 1)
    with tf.Graph().as_default(), tf.Session():
        rs = np.random.RandomState(3)
        av, cv = rs.randn(2, 3, 4), rs.randn(4, 3, 5)
        a, c = tf.constant(av), tf.constant(cv)
        for axes in ([[1, 2], [1, 0]], 1, [[1], [1]]):
            y = tf.tensordot(a, c, axes)
            err = tf.test.compute_gradient_error([a, c], [[2, 3, 4], [4, 3, 5]], y,
                                                 y.shape.as_list())
            assert err < 1e-6, axes
    # the one-op form stays for graphs that hold it
    with tf.Graph().as_default():
        assert fused_tensordot(tf.ones([2, 3]), tf.ones([3, 4]), 1).op.type == "Tensordot"


# -- atrous_conv2d_transpose: SpaceToBatchND / Conv2DBackpropInput / BatchToSpaceND ---------
def test_atrous_conv2d_transpose_goes_through_space_to_batch():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 5, 5, 2], name="x")
        f = tf.placeholder(tf.float32, [3, 3, 4, 2], name="f")
        y = tf.nn.atrous_conv2d_transpose(x, f, [1, 9, 9, 4], 2, "SAME")
        y3 = tf.nn.atrous_conv2d_transpose(x, f, [1, 5, 5, 4], 1, "SAME")
        # TF 2.15
        assert _layout(g, "atrous_conv2d_transpose/") == [
            ("atrous_conv2d_transpose/output_shape", "Const"),
            ("atrous_conv2d_transpose/SpaceToBatchND/block_shape", "Const"),
            ("atrous_conv2d_transpose/SpaceToBatchND/paddings", "Const"),
            ("atrous_conv2d_transpose/SpaceToBatchND", "SpaceToBatchND"),
            ("atrous_conv2d_transpose/Conv2DBackpropInput/input_sizes", "Const"),
            ("atrous_conv2d_transpose/Conv2DBackpropInput", "Conv2DBackpropInput"),
            ("atrous_conv2d_transpose/BatchToSpaceND/block_shape", "Const"),
            ("atrous_conv2d_transpose/BatchToSpaceND/crops", "Const"),
            ("atrous_conv2d_transpose/BatchToSpaceND", "BatchToSpaceND")]
        assert _shapes(g, "atrous_conv2d_transpose/") == {
            "atrous_conv2d_transpose/output_shape": "(4,)",
            "atrous_conv2d_transpose/SpaceToBatchND/block_shape": "(2,)",
            "atrous_conv2d_transpose/SpaceToBatchND/paddings": "(2, 2)",
            "atrous_conv2d_transpose/SpaceToBatchND": "(4, 3, 3, 2)",
            "atrous_conv2d_transpose/Conv2DBackpropInput/input_sizes": "(4,)",
            "atrous_conv2d_transpose/Conv2DBackpropInput": "(4, 7, 7, 4)",
            "atrous_conv2d_transpose/BatchToSpaceND/block_shape": "(2,)",
            "atrous_conv2d_transpose/BatchToSpaceND/crops": "(2, 2)",
            "atrous_conv2d_transpose/BatchToSpaceND": "(1, 9, 9, 4)"}
        s2b = g.get_operation_by_name("atrous_conv2d_transpose/SpaceToBatchND")
        assert (s2b.get_attr("Tblock_shape"), s2b.get_attr("Tpaddings")) == \
            (tf.int64, tf.int32)
        assert (y.name, y3.name, y3.op.type) == (
            "atrous_conv2d_transpose/BatchToSpaceND:0",
            "atrous_conv2d_transpose_1/conv2d_transpose:0", "Conv2DBackpropInput")
        assert y3.op.inputs[0].name == "atrous_conv2d_transpose_1/conv2d_transpose/input_sizes:0"
        # a filter of unknown width: TensorFlow's padding arithmetic in the graph
        fu = tf.placeholder(tf.float32, [3, None, 4, 2], name="fu")
        yu = tf.nn.atrous_conv2d_transpose(x, fu, [1, 9, 9, 4], 2, "SAME")
        types = [t for _, t in _layout(g, "atrous_conv2d_transpose_2/")]
        assert (len(types), types.count("FloorMod"), types.count("Pack")) == (72, 4, 7)
        assert str(yu.shape) == "(1, ?, ?, 4)"


def test_atrous_conv2d_transpose_values_and_gradients_are_tensorflows():
    rs = np.random.RandomState(0)
    xv = rs.randn(2, 5, 6, 2).astype(np.float32)
    fv = rs.randn(3, 2, 4, 2).astype(np.float32)
    with tf.Graph().as_default():
        x, f = tf.constant(xv), tf.constant(fv)
        outs = [tf.nn.atrous_conv2d_transpose(x, f, [2, 5, 6, 4], 2, "SAME"),
                tf.nn.atrous_conv2d_transpose(x, f, [2, 9, 8, 4], 2, "VALID"),
                tf.nn.atrous_conv2d_transpose(x[:, :, :3], f, [2, 5, 3, 4], 1, "SAME")]
        grads = tf.gradients(tf.reduce_sum(outs[0] * outs[0]), [x, f]) + \
            tf.gradients(tf.reduce_sum(outs[1] * outs[1]), [x, f])
        with tf.Session() as sess:
            values = sess.run(outs + grads)
    got = [round(float(np.sum(v * np.arange(v.size).reshape(v.shape) % 7)), 2)
           for v in values]
    # TF 2.15 (the same weighted sums of its outputs)
    assert got == pytest.approx([812.61, 2020.99, 431.47, 431.31, 180.4, 383.65, 171.47],
                                abs=0.02)
    assert [v.shape for v in values[:3]] == [(2, 5, 6, 4), (2, 9, 8, 4), (2, 5, 3, 4)]


def test_conv2d_transpose_and_backprop_input_name_their_sizes_input_sizes():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 5, 5, 2], name="x")
        f = tf.placeholder(tf.float32, [3, 3, 4, 2], name="f")
        tf.nn.conv2d_transpose(x, f, [1, 5, 5, 4], [1, 1, 1, 1], "SAME")
        tf.nn.conv2d_backprop_input([1, 5, 5, 4], f, x, [1, 1, 1, 1], "SAME")
    assert _layout(g)[2:] == [  # TF 2.15
        ("conv2d_transpose/input_sizes", "Const"), ("conv2d_transpose", "Conv2DBackpropInput"),
        ("Conv2DBackpropInput/input_sizes", "Const"),
        ("Conv2DBackpropInput", "Conv2DBackpropInput")]


# -- switch_case: Identity outputs under <scope>/indexed_case --------------------------------
def test_switch_case_outputs_are_identities_named_as_tensorflows():
    with tf.Graph().as_default():
        i = tf.placeholder(tf.int32, [], name="i")
        x = tf.placeholder(tf.float32, [2], name="x")
        s = tf.switch_case(i, [lambda: x * 2.0, lambda: x + 1.0])
        s2 = tf.switch_case(i, {0: lambda: x * 2.0, 1: lambda: x - 1.0}, default=lambda: x,
                            name="sw")
        s3 = tf.switch_case(i, [lambda: (x, x * 2.0), lambda: (x + 1.0, x)])
        c = tf.case([(i > 0, lambda: x * 2.0)], default=lambda: x)
        d = tf.cond(i > 0, lambda: x * 2.0, lambda: x)
        # TF 2.15 (its StatelessCase op itself is "switch_case/indexed_case")
        assert [(t.name, t.op.type, str(t.shape)) for t in (s, s2)] == [
            ("switch_case/indexed_case/Identity:0", "Identity", "(2,)"),
            ("sw/indexed_case/Identity:0", "Identity", "(2,)")]
        assert isinstance(s3, tuple) and [t.name for t in s3] == [
            "switch_case_1/indexed_case/Identity:0", "switch_case_1/indexed_case/Identity_1:0"]
        assert (c.name, d.name) == ("case/cond/Merge:0", "cond/Merge:0")
        with tf.Session() as sess:
            feeds = {x: [1.0, 2.0]}
            assert sess.run(s, {i: 0, **feeds}).tolist() == [2.0, 4.0]
            assert sess.run(s, {i: 1, **feeds}).tolist() == [2.0, 3.0]
            assert sess.run(s2, {i: 5, **feeds}).tolist() == [1.0, 2.0]
            assert [v.tolist() for v in sess.run(s3, {i: 1, **feeds})] == [[2.0, 3.0],
                                                                          [1.0, 2.0]]


# -- graph_def_versions, InaccessibleTensorError ---------------------------------------------
def test_graph_def_versions_is_a_version_def_message():
    v = tf.Graph().graph_def_versions
    from flowgraph.core.framework import versions_pb2

    # TF 2.15: a VersionDef with TF 2.15's producer, as as_graph_def() writes
    assert type(v).__name__ == "VersionDef" and isinstance(v, versions_pb2.VersionDef)
    assert (v.producer, v.min_consumer, list(v.bad_consumers)) == (1645, 0, [])
    assert str(v).strip() == "producer: 1645"
    assert tf.Graph().as_graph_def().versions.producer == v.producer


def test_fetching_an_unfetchable_op_raises_inaccessible_tensor_error():
    errors_impl = importlib.import_module("flowgraph.python.framework.errors_impl")
    errors = importlib.import_module("flowgraph.python.framework.errors")
    error = errors_impl.InaccessibleTensorError
    # TF 2.15: a ValueError, in errors/errors_impl but not in tf.errors
    assert errors.InaccessibleTensorError is error and issubclass(error, ValueError)
    assert not hasattr(tf.errors, "InaccessibleTensorError")
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = x * 2.0
        z = y + 1.0
        w = tf.placeholder(tf.float32, [2], name="w")
        g.prevent_fetching(y.op)
        g.prevent_feeding(w)
        with tf.Session() as sess:
            for fetch in (y, y.op, [z, [y]]):
                with pytest.raises(error) as info:
                    sess.run(fetch, {x: [1.0, 2.0]})
                assert str(info.value) == (
                    "Operation mul has been marked as not fetchable. Typically this happens "
                    "when it is defined in another function or code block. Use return "
                    "values, explicit Python locals or TensorFlow collections to access it.")
            assert sess.run(z, {x: [1.0, 2.0]}).tolist() == [3.0, 5.0]
            with pytest.raises(ValueError, match=r"Tensor w:0 may not be fed\."):
                sess.run(w + 1.0, {w: [1.0, 2.0]})


# -- add_check_numerics_ops: a chain of CheckNumerics ---------------------------------------
def test_add_check_numerics_ops_chains_its_checks():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        i = tf.placeholder(tf.int32, [2], name="i")
        y = tf.log(x) * 2.0
        tf.cast(i, tf.float64) + 1.0
        n0 = len(g.get_operations())
        check = tf.add_check_numerics_ops()
        made = [(o.name, o.type, [t.name for t in o.inputs], [c.name for c in o.control_inputs],
                 o.get_attr("message") if o.type == "CheckNumerics" else None)
                for o in g.get_operations()[n0:]]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Log:0 : Tensor had NaN values") as info:
                sess.run([y, check], {x: [1.0, -1.0], i: [1, 2]})
            sess.run(check, {x: [1.0, 2.0], i: [1, 2]})
    assert info.value.op.name == "CheckNumerics_1"  # TF 2.15: the first in the chain
    assert made == [  # TF 2.15
        ("CheckNumerics", "CheckNumerics", ["x:0"], [], b"x:0"),
        ("CheckNumerics_1", "CheckNumerics", ["Log:0"], ["CheckNumerics"], b"Log:0"),
        ("CheckNumerics_2", "CheckNumerics", ["mul/y:0"], ["CheckNumerics_1"], b"mul/y:0"),
        ("CheckNumerics_3", "CheckNumerics", ["mul:0"], ["CheckNumerics_2"], b"mul:0"),
        ("CheckNumerics_4", "CheckNumerics", ["Cast:0"], ["CheckNumerics_3"], b"Cast:0"),
        ("CheckNumerics_5", "CheckNumerics", ["add/y:0"], ["CheckNumerics_4"], b"add/y:0"),
        ("CheckNumerics_6", "CheckNumerics", ["add:0"], ["CheckNumerics_5"], b"add:0"),
        ("group_deps", "NoOp", [], ["CheckNumerics_6"], None)]


# -- common subgraphs, part 2 (TF 2.15's layouts of /tmp/s15/lay2/s6.py) -------------------
def _built(fn) -> list[tuple[str, str]]:
    g = tf.Graph()
    with g.as_default():
        fn()
    return _layout(g)


def test_l2_normalize_is_square_sum_maximum_rsqrt_mul():
    def build():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        a = tf.nn.l2_normalize(x, 1)
        b = tf.nn.l2_normalize(x, [0, 1], epsilon=1e-6)
        assert [str(a.shape), str(b.shape)] == ["(?, 3)", "(?, 3)"]
        with tf.Session() as sess:
            xv = np.array([[3.0, 4.0], [0.0, 0.0]], np.float32)[:, [0, 1, 1]]
            got = sess.run(a, {x: xv})
        np.testing.assert_allclose(got, xv / np.maximum(np.linalg.norm(xv, axis=1,
                                                                       keepdims=True),
                                                        1e-6), rtol=1e-6)
    one = [("l2_normalize/Square", "Square"), ("l2_normalize/Sum/reduction_indices", "Const"),
           ("l2_normalize/Sum", "Sum"), ("l2_normalize/Maximum/y", "Const"),
           ("l2_normalize/Maximum", "Maximum"), ("l2_normalize/Rsqrt", "Rsqrt"),
           ("l2_normalize", "Mul")]
    two = [(n.replace("l2_normalize", "l2_normalize_1", 1), t) for n, t in one]
    assert _built(build) == [("x", "Placeholder"), *one, *two]


def test_global_norm_sums_l2_losses():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [3], name="a")
        b = tf.placeholder(tf.float32, [2, 2], name="b")
        clipped, norm = tf.clip_by_global_norm([a, b, None], 1.0)
        assert _layout(g, "global_norm/") == [  # TF 2.15
            ("global_norm/L2Loss", "L2Loss"), ("global_norm/L2Loss_1", "L2Loss"),
            ("global_norm/stack", "Pack"), ("global_norm/Const", "Const"),
            ("global_norm/Sum", "Sum"), ("global_norm/Const_1", "Const"),
            ("global_norm/mul", "Mul"), ("global_norm/global_norm", "Sqrt")]
        with tf.Session() as sess:
            n, ca = sess.run([norm, clipped[0]], {a: [3.0, 0.0, 0.0], b: [[4.0, 0], [0, 0]]})
    assert n == pytest.approx(5.0) and ca.tolist() == pytest.approx([0.6, 0.0, 0.0])
    assert clipped[2] is None


def test_one_hot_given_values_are_unnamed_constants():
    def build():
        i = tf.placeholder(tf.int32, [None], name="i")
        tf.one_hot(i, 5)
        tf.one_hot(i, 5, on_value=2.0, off_value=-1.0, axis=0)
        tf.one_hot([1, 2], 3, dtype=tf.int64)
    assert _built(build) == [  # TF 2.15
        ("i", "Placeholder"), ("one_hot/on_value", "Const"), ("one_hot/off_value", "Const"),
        ("one_hot/depth", "Const"), ("one_hot", "OneHot"), ("one_hot_1/Const", "Const"),
        ("one_hot_1/Const_1", "Const"), ("one_hot_1/depth", "Const"), ("one_hot_1", "OneHot"),
        ("one_hot_2/on_value", "Const"), ("one_hot_2/off_value", "Const"),
        ("one_hot_2/indices", "Const"), ("one_hot_2/depth", "Const"), ("one_hot_2", "OneHot")]


def test_embedding_lookup_sparse_reduces_from_the_table_with_int64_segments():
    g = tf.Graph()
    with g.as_default():
        p = tf.constant(np.arange(12, dtype=np.float32).reshape(6, 2), name="p")
        sp = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 5], tf.int64),
                             [3, 2])
        out = tf.nn.embedding_lookup_sparse(p, sp, None, combiner="mean")
        assert _layout(g, "embedding_lookup_sparse")[-2:] == [  # TF 2.15
            ("embedding_lookup_sparse/strided_slice", "StridedSlice"),
            ("embedding_lookup_sparse", "SparseSegmentMean")]
        assert out.name == "embedding_lookup_sparse:0"
        with tf.Session() as sess:
            assert sess.run(out).tolist() == [[4.0, 5.0], [0.0, 0.0], [10.0, 11.0]]


def test_dropout_layer_and_batch_normalization_layouts():
    def build():
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        tf.nn.dropout(x, keep_prob=0.7)
        tf.layers.dropout(x, 0.3, training=True)
        tf.nn.batch_normalization(x, 0.0, 1.0, 0.1, 2.0, 1e-3)
    drop = ["Const", "Mul", "Shape", "random_uniform/RandomUniform", "GreaterEqual/y",
            "GreaterEqual", "Const_1", "SelectV2"]
    assert [n for n, _ in _built(build)] == [  # TF 2.15
        "x", *[f"dropout/{n}" for n in drop], *[f"dropout_1/dropout/{n}" for n in drop],
        "batchnorm/Rsqrt/x", "batchnorm/Rsqrt", "batchnorm/mul/y", "batchnorm/mul",
        "batchnorm/mul_1", "batchnorm/mul_2/x", "batchnorm/mul_2", "batchnorm/sub/x",
        "batchnorm/sub", "batchnorm/add"]
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 3.0]])
        mean, var, offset, scale = (tf.constant(v) for v in ([1.0, 2.0], [4.0, 1.0],
                                                             [0.5, 0.0], [2.0, 1.0]))
        y = tf.nn.batch_normalization(x, mean, var, offset, scale, 0.0)
        with tf.Session() as sess:
            assert sess.run(y).tolist() == [[0.5, 1.0]]


def test_softmax_over_another_axis_transposes_and_logsumexp_masks_infinities():
    def build():
        x = tf.placeholder(tf.float32, [None, 5], name="x")
        tf.nn.log_softmax(x)
        tf.nn.softmax(x, axis=0)
        tf.nn.top_k(x, 2)
        tf.nn.in_top_k(x, tf.placeholder(tf.int32, [None]), 2)
        tf.argmax(x, 1)
        tf.reduce_logsumexp(x, 1)
    got = _built(build)
    assert [t for _, t in got[2:33]].count("Range") == 4 and got[17:19] == [
        ("transpose", "Transpose"), ("Softmax", "Softmax")]
    assert got[33:] == [  # TF 2.15
        ("TopKV2/k", "Const"), ("TopKV2", "TopKV2"), ("Placeholder", "Placeholder"),
        ("in_top_k/InTopKV2/k", "Const"), ("in_top_k/InTopKV2", "InTopKV2"),
        ("ArgMax/dimension", "Const"), ("ArgMax", "ArgMax"),
        ("ReduceLogSumExp/Max/reduction_indices", "Const"), ("ReduceLogSumExp/Max", "Max"),
        ("ReduceLogSumExp/IsFinite", "IsFinite"), ("ReduceLogSumExp/ZerosLike", "ZerosLike"),
        ("ReduceLogSumExp/Select", "Select"), ("ReduceLogSumExp/StopGradient", "StopGradient"),
        ("ReduceLogSumExp/Sub", "Sub"), ("ReduceLogSumExp/Exp", "Exp"),
        ("ReduceLogSumExp/Sum/reduction_indices", "Const"), ("ReduceLogSumExp/Sum", "Sum"),
        ("ReduceLogSumExp/Log", "Log"), ("ReduceLogSumExp/Shape", "Shape"),
        ("ReduceLogSumExp/Reshape", "Reshape"), ("ReduceLogSumExp", "AddV2")]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3, 4], name="x")
        a, b = tf.nn.softmax(x, axis=-2, name="sm"), tf.nn.log_softmax(x, 1)
        (grad,) = tf.gradients(tf.reduce_sum(a * a), x)
        assert [(t.name, str(t.shape)) for t in (a, b)] == [("sm:0", "(2, 3, 4)"),
                                                          ("transpose_2:0", "(2, 3, 4)")]
        lse = tf.reduce_logsumexp(tf.constant([[-np.inf, -np.inf], [np.inf, 1.0]]), 1)
        xv = np.random.RandomState(0).randn(2, 3, 4).astype(np.float32)
        with tf.Session() as sess:
            got = sess.run([a, b, grad, lse], {x: xv})
    weighted = [round(float(np.sum(v * np.arange(v.size).reshape(v.shape))), 3)
                for v in got[:3]]
    assert weighted == pytest.approx([86.773, -403.434, -1.33], abs=2e-3)  # TF 2.15
    assert got[3].tolist() == [-np.inf, np.inf]


def test_resize_image_with_crop_or_pad_keeps_tensorflows_checks():
    def build():
        x = tf.placeholder(tf.float32, [None, 8, 8, 3], name="x")
        tf.image.resize_image_with_crop_or_pad(x, 6, 10)
    prefix = "resize_image_with_crop_or_pad/"
    crop, pad = prefix + "crop_to_bounding_box/", prefix + "pad_to_bounding_box/"
    names = [n for n, _ in _built(build)]
    assert names == ["x", prefix + "control_dependency", prefix + "Shape", prefix + "unstack",
                     crop + "Shape", crop + "unstack", crop + "control_dependency",
                     crop + "stack", crop + "Shape_1", *[crop + f"strided_slice/stack{s}"
                                                          for s in ("", "_1", "_2")],
                     crop + "strided_slice", crop + "Shape_2",
                     *[crop + f"strided_slice_1/stack{s}" for s in ("", "_1", "_2")],
                     crop + "strided_slice_1", crop + "stack_1/1", crop + "stack_1/2",
                     crop + "stack_1", crop + "Slice", pad + "Shape", pad + "unstack",
                     pad + "control_dependency", pad + "stack", pad + "Reshape/shape",
                     pad + "Reshape", pad + "Pad", prefix + "Shape_1", prefix + "unstack_1",
                     prefix + "control_dependency_1"]  # TF 2.15
    g = tf.Graph()
    with g.as_default():  # unknown sizes: run-time checks, TensorFlow's assert layout
        u = tf.placeholder(tf.float32, [None, None, None, 3], name="u")
        out = tf.image.crop_to_bounding_box(u, 1, 1, 3, 3)
        got = _layout(g, "crop_to_bounding_box/")
        with tf.Session() as sess:
            assert sess.run(out, {u: np.ones((2, 5, 5, 3))}).shape == (2, 3, 3, 3)
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(out, {u: np.ones((2, 3, 5, 3))})  # height < target + offset
    assert [n for n, _ in got][:12] == [
        "crop_to_bounding_box/Shape", "crop_to_bounding_box/strided_slice/stack",
        "crop_to_bounding_box/strided_slice/stack_1",
        "crop_to_bounding_box/strided_slice/stack_2", "crop_to_bounding_box/strided_slice",
        "crop_to_bounding_box/assert_positive/Const",
        "crop_to_bounding_box/assert_positive/assert_less/Less",
        "crop_to_bounding_box/assert_positive/assert_less/Const",
        "crop_to_bounding_box/assert_positive/assert_less/All",
        "crop_to_bounding_box/assert_positive/assert_less/Assert/Const",
        "crop_to_bounding_box/assert_positive/assert_less/Assert/Assert/data_0",
        "crop_to_bounding_box/assert_positive/assert_less/Assert/Assert"]
    # a scalar reduced over all axes: Rank and range, as TensorFlow's fast path skips rank 0
    assert [n for n, _ in got][12:19] == [
        "crop_to_bounding_box/Rank", "crop_to_bounding_box/assert_greater_equal/y",
        "crop_to_bounding_box/assert_greater_equal/GreaterEqual",
        "crop_to_bounding_box/assert_greater_equal/Rank",
        "crop_to_bounding_box/assert_greater_equal/range/start",
        "crop_to_bounding_box/assert_greater_equal/range/delta",
        "crop_to_bounding_box/assert_greater_equal/range"]


def test_cast_to_the_same_dtype_leaves_the_scope_name_free():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        assert tf.cast(x, tf.float32) is x
        tf.metrics.mean(x)
        # TF 2.15: mean's cast of its float32 values opens no scope: its count is "mean/Cast"
        assert g.get_operation_by_name("mean/Cast").inputs[0].name == "mean/Size:0"
        assert "mean/Cast_1" not in g


def test_weighted_cross_entropy_with_logits_follows_tensorflows_expression():
    def build():
        labels = tf.placeholder(tf.float32, [None, 3], name="l")
        logits = tf.placeholder(tf.float32, [None, 3], name="p")
        tf.nn.weighted_cross_entropy_with_logits(labels=labels, logits=logits, pos_weight=2.0)
    assert [n for n, _ in _built(build)][2:] == [  # TF 2.15
        "logistic_loss/mul/x", "logistic_loss/mul", "logistic_loss/add/x", "logistic_loss/add",
        "logistic_loss/sub/x", "logistic_loss/sub", "logistic_loss/mul_1",
        "logistic_loss/Abs", "logistic_loss/Neg", "logistic_loss/Exp", "logistic_loss/Log1p",
        "logistic_loss/Neg_1", "logistic_loss/Relu", "logistic_loss/add_1",
        "logistic_loss/mul_2", "logistic_loss"]
    with tf.Graph().as_default():
        z, x = np.array([[1.0, 0.0]]), np.array([[0.3, -2.0]])
        got = tf.Session().run(tf.nn.weighted_cross_entropy_with_logits(
            labels=z, logits=x, pos_weight=3.0))
    want = (1 - z) * x + (1 + 2 * z) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    np.testing.assert_allclose(got, want)


# -- tf.cond's switches and tf.Assert's guard -------------------------------------------------
def test_cond_names_a_captured_switch_after_its_consumer():
    g = tf.Graph()
    with g.as_default():
        i = tf.placeholder(tf.int32, [], name="i")
        x = tf.placeholder(tf.float32, [2], name="x")
        d = tf.cond(i > 0, lambda: x * 2.0, lambda: x)
        # TF 2.15: the switch feeding "cond/mul" is "cond/mul/Switch"; a returned outside
        # tensor gets "cond/Switch_1"
        assert [t.name for t in g.get_operation_by_name("cond/mul").inputs] == [
            "cond/mul/Switch:1", "cond/mul/y:0"]
        assert [t.name for t in d.op.inputs] == ["cond/Switch_1:0", "cond/mul:0"]
        with tf.Session() as sess:
            assert sess.run(d, {i: 1, x: [1.0, 2.0]}).tolist() == [2.0, 4.0]
            assert sess.run(d, {i: 0, x: [1.0, 2.0]}).tolist() == [1.0, 2.0]


def test_assert_with_float_data_is_guarded_by_a_cond():
    g = tf.Graph()
    with g.as_default():
        i = tf.placeholder(tf.int32, [], name="i")
        x = tf.placeholder(tf.float32, [2], name="x")
        a = tf.Assert(tf.reduce_all(x > 0), ["x must be positive", x])
        b = tf.Assert(i > 0, ["i", i])
        # TF 2.15: float data -> a cond "AssertGuard" (its Merge is returned); strings and
        # int32 only -> the Assert op itself
        assert (a.name, a.type, b.name, b.type) == (
            "Assert/AssertGuard/Merge", "Merge", "Assert_1/Assert", "Assert")
        assert sorted(n for n, _ in _layout(g, "Assert/")) == sorted([
            "Assert/Const", "Assert/AssertGuard/Switch", "Assert/AssertGuard/switch_t",
            "Assert/AssertGuard/switch_f", "Assert/AssertGuard/pred_id",
            "Assert/AssertGuard/NoOp", "Assert/AssertGuard/control_dependency",
            "Assert/AssertGuard/Assert/data_0", "Assert/AssertGuard/Assert",
            "Assert/AssertGuard/Assert/Switch", "Assert/AssertGuard/Assert/Switch_1",
            "Assert/AssertGuard/control_dependency_1", "Assert/AssertGuard/Merge"])
        assert [t.name for t in g.get_operation_by_name("Assert_1/Assert").inputs] == [
            "Greater_1:0", "Assert_1/Assert/data_0:0", "i:0"]
        with tf.Session() as sess:
            sess.run(a, {x: [1.0, 2.0]})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="x must be positive") as info:
                sess.run(a, {x: [-1.0, 2.0]})
    assert info.value.op.name == "Assert/AssertGuard/Assert"  # TF 2.15

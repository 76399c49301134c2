"""Op types as TensorFlow 2.15's `tf.compat.v1` builds them: `AddV2` for numeric `+`,
the `*Grad` backward ops (`TanhGrad`, `SigmoidGrad`, `SqrtGrad`, `RsqrtGrad`,
`ReciprocalGrad`), `BroadcastTo`, and `Fill` for `ones_like`.

Expected names, types and values were printed by TF 2.15 (tf-oracle, programs
/tmp/s13/wild/O01..O08) and are written inline. Kernels of the new ops are checked
bitwise against the composite NumPy forms they replace, fused and unfused.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.registry import get_op_def
from flowgraph.ops.op_util import make_tensor

GRAD_OPS = ("TanhGrad", "SigmoidGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad")


def _sig(t):
    return t.op.name, t.op.type, [i.name for i in t.op.inputs]


# -- AddV2 ------------------------------------------------------------------------------
def test_add_builds_add_v2_for_numbers_and_add_for_strings():
    with tf.Graph().as_default():
        a, b = tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])
        got = [_sig(t) for t in (a + b, tf.add(a, b), tf.math.add(a, b), 1.0 + a,
                                 tf.add(tf.constant("x"), "y"), tf.add(1, 2),
                                 tf.add(a, b, name="foo"))]
    assert got == [  # TF 2.15
        ("add", "AddV2", ["Const:0", "Const_1:0"]),
        ("Add_1", "AddV2", ["Const:0", "Const_1:0"]),
        ("Add_2", "AddV2", ["Const:0", "Const_1:0"]),
        ("add_3", "AddV2", ["add_3/x:0", "Const:0"]),
        ("Add_4", "Add", ["Const_2:0", "Add_4/y:0"]),
        ("Add_5", "AddV2", ["Add_5/x:0", "Add_5/y:0"]),
        ("foo", "AddV2", ["Const:0", "Const_1:0"]),
    ]


def test_add_values_errors_and_cost():
    with tf.Session() as sess:
        assert sess.run(tf.add(tf.constant(["a"]), "b")).tolist() == [b"ab"]
        assert sess.run(tf.constant([1, 2]) + 10).tolist() == [11, 12]
    with pytest.raises(TypeError, match="'AddV2' has DataType bool"):
        tf.add(tf.constant([True]), True)
    assert get_op_def("AddV2").cost is get_op_def("Add").cost


def test_graphs_holding_add_still_run_and_differentiate():
    """`Add` stays registered: graphs saved before keep loading and running."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 3])
        y = make_tensor("Add", [x, tf.constant([1.0, 2.0, 3.0], tf.float64)])
        g = tf.gradients(tf.reduce_sum(y * y), x)[0]
        gd = tf.get_default_graph().as_graph_def()
    assert [n.op for n in gd.node if n.name == y.op.name] == ["Add"]
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        graph = tf.get_default_graph()
        with tf.Session() as sess:
            out = sess.run(graph.get_tensor_by_name(y.name),
                           {graph.get_tensor_by_name(x.name): np.ones((2, 3))})
    np.testing.assert_array_equal(out, [[2.0, 3.0, 4.0]] * 2)
    assert g.op.type in ("Mul", "AddN", "Reshape", "Identity")


def test_mlp_with_adam_counts_ops_as_tf():
    """TF 2.15's counts (program O01) of the types this module is about."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.int32, [None])
        w1 = tf.Variable(tf.random_normal([4, 8]))
        b1 = tf.Variable(tf.zeros([8]))
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        h2 = tf.tanh(h) + tf.sigmoid(h)
        w2 = tf.Variable(tf.random_normal([8, 3]))
        b2 = tf.Variable(tf.zeros([3]))
        logits = tf.matmul(h2, w2) + b2
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        tf.train.AdamOptimizer(0.01).minimize(loss)
    counts = collections.Counter(op.type for op in g.get_operations())
    assert {k: counts[k] for k in ("Add", "AddV2", "TanhGrad", "SigmoidGrad", "ReluGrad",
                                   "Sub", "Mul")} == {
        "Add": 0, "AddV2": 6, "TanhGrad": 1, "SigmoidGrad": 1, "ReluGrad": 1, "Sub": 0,
        "Mul": 5}


# -- *Grad ops ---------------------------------------------------------------------------
_FORWARD = {"TanhGrad": tf.tanh, "SigmoidGrad": tf.sigmoid, "SqrtGrad": tf.sqrt,
            "RsqrtGrad": tf.rsqrt, "ReciprocalGrad": tf.reciprocal}
# TF 2.15, x = [0.3, 0.7, 1.2] (float64), grad_ys = [1, 2, -1.5]: first and second order
_TF_VALUES = {
    "TanhGrad": ([0.9151, 1.2695, -0.4575], [-0.5332, -1.5345, 0.7628]),
    "SigmoidGrad": ([0.2445, 0.4434, -0.2668], [-0.0364, -0.1492, 0.1433]),
    "SqrtGrad": ([0.9129, 1.1952, -0.6847], [-1.5215, -0.8537, 0.2853]),
    "RsqrtGrad": ([-3.0429, -1.7075, 0.5705], [15.2145, 3.6589, -0.7132]),
    "ReciprocalGrad": ([-11.1111, -4.0816, 1.0417], [74.0741, 11.6618, -1.7361]),
}


@pytest.mark.parametrize("op_type", GRAD_OPS)
def test_gradients_build_the_backward_op_with_tf_names_and_values(op_type):
    with tf.Graph().as_default():
        x = tf.constant([0.3, 0.7, 1.2], tf.float64)
        y = _FORWARD[op_type](x)
        g1 = tf.gradients(y, x, grad_ys=tf.constant([1.0, 2.0, -1.5], tf.float64))[0]
        g2 = tf.gradients(g1, x)[0]
        fwd = y.op.name
        assert g1.op.name == f"gradients/{fwd}_grad/{op_type}"
        assert g1.op.type == op_type and g1.op.inputs[0] is y
        assert g1.op.control_inputs == []
        assert any(op.type == op_type for op in tf.get_default_graph().get_operations()
                   if op.name.startswith("gradients_1/"))  # second order uses it again
        with tf.Session() as sess:
            v1, v2 = sess.run([g1, g2])
    first, second = _TF_VALUES[op_type]
    np.testing.assert_allclose(v1, first, atol=1e-4)
    np.testing.assert_allclose(v2, second, atol=1e-4)


def _composite(op_type, y, dy):
    """The NumPy form of each backward op (the former gradient graphs, in their order)."""
    one = y.dtype.type(1)
    return {
        "TanhGrad": lambda: dy * (one - y * y),
        "SigmoidGrad": lambda: dy * (y * (one - y)),
        "SqrtGrad": lambda: dy * y.dtype.type(0.5) / y,
        "RsqrtGrad": lambda: dy * (y.dtype.type(-0.5) * y * y * y),
        "ReciprocalGrad": lambda: np.negative(dy) * (y * y),
    }[op_type]()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op_type", GRAD_OPS)
def test_kernels_are_bitwise_the_composite_form_fused_or_not(op_type, dtype):
    rng = np.random.RandomState(3)
    y_val = rng.uniform(0.1, 0.95, (70, 1100)).astype(dtype)  # large: fused alone too
    dy_val = rng.uniform(-2, 2, (70, 1100)).astype(dtype)
    want = _composite(op_type, y_val, dy_val)
    with tf.Graph().as_default():
        y = tf.placeholder(dtype, [None, 1100])
        dy = tf.placeholder(dtype, [None, 1100])
        out = make_tensor(op_type, [y, dy])
        chained = tf.nn.relu(make_tensor(op_type, [y, dy]) * 2.0)  # in a fused group
        feed = {y: y_val, dy: dy_val}
        off = tf.ConfigProto()
        off.graph_options.rewrite_options.remapping = 2  # RewriterConfig.OFF
        for config in (None, off):
            with tf.Session(config=config) as sess:
                got, got_chained = sess.run([out, chained], feed)
                groups = [[op.type for op in n.fused] for cp in sess._plans.values()
                          for n in cp.nodes if n.fused]
            assert (op_type in {t for g in groups for t in g}) == (config is None), groups
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(got_chained, np.maximum(want * dtype(2), 0))


def test_backward_ops_reject_mismatched_shapes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="TanhGrad"):
            make_tensor("TanhGrad", [tf.zeros([2, 3]), tf.zeros([3, 2])])
        y, dy = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
        out = make_tensor("SqrtGrad", [y, dy])
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                                 match=r"SqrtGrad.*one shape"):
            sess.run(out, {y: np.ones(3), dy: np.ones(2)})


def test_complex_backward_ops_follow_the_conjugate_convention():
    """Gradients of a real loss w.r.t. complex x: grad * conj(f'(x))."""
    z = np.array([0.4 + 0.3j, -0.2 + 0.9j])
    with tf.Graph().as_default():
        x = tf.constant(z)
        grads = {k: tf.gradients(f(x), x, grad_ys=tf.constant(np.ones(2, complex)))[0]
                 for k, f in _FORWARD.items()}
        with tf.Session() as sess:
            got = sess.run(grads)
    deriv = {"TanhGrad": 1 - np.tanh(z) ** 2,
             "SigmoidGrad": np.exp(-z) / (1 + np.exp(-z)) ** 2,
             "SqrtGrad": 0.5 / np.sqrt(z), "RsqrtGrad": -0.5 * z ** -1.5,
             "ReciprocalGrad": -1 / z ** 2}
    for k, d in deriv.items():
        np.testing.assert_allclose(got[k], np.conj(d), rtol=1e-12, err_msg=k)


# -- BroadcastTo --------------------------------------------------------------------------
def test_broadcast_to_builds_one_op_with_shapes_values_and_gradient():
    with tf.Graph().as_default():
        a = tf.constant([1.0, 2.0])
        b = tf.broadcast_to(a, [2, 2])
        assert _sig(b) == ("BroadcastTo", "BroadcastTo", ["Const:0", "BroadcastTo/shape:0"])
        node = [n for n in tf.get_default_graph().as_graph_def().node if n.op == "BroadcastTo"]
        assert sorted(node[0].attr.keys()) == ["T", "Tidx"]  # TF 2.15
        p = tf.placeholder(tf.float32, [None, 1])
        c = tf.broadcast_to(p, [2, 3])
        assert c.shape.as_list() == [2, 3]
        assert tf.broadcast_to(p, tf.shape(tf.zeros([4, 2, 3]))).shape.as_list() == [4, 2, 3]
        gc = tf.gradients(c, p, grad_ys=tf.reshape(tf.range(6.0), [2, 3]))[0]
        ga = tf.gradients(tf.broadcast_to(a, [3, 2]), a)[0]
        assert ga.op.type == "Reshape"
        with tf.Session() as sess:
            feed = {p: [[1.0], [2.0]]}
            assert sess.run(c, feed).tolist() == [[1.0] * 3, [2.0] * 3]  # TF 2.15
            assert sess.run(gc, feed).tolist() == [[3.0], [12.0]]
            assert sess.run(ga).tolist() == [3.0, 3.0]
            with pytest.raises(tf.errors.InvalidArgumentError, match="BroadcastTo"):
                sess.run(c, {p: np.zeros((3, 1), np.float32)})


def test_broadcast_to_static_errors_are_value_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="dimension 3 vs 2"):
            tf.broadcast_to(tf.zeros([3]), [2, 2])
        with pytest.raises(ValueError, match="rank 2"):
            tf.broadcast_to(tf.zeros([2, 3]), [3])
        with pytest.raises(TypeError, match="int32 or int64"):
            tf.broadcast_to(tf.zeros([2]), tf.constant([2.0]))


# -- ones_like / zeros_like ----------------------------------------------------------------
def test_ones_like_and_zeros_like_build_what_tf_builds():
    with tf.Graph().as_default() as g:
        a = tf.constant([[1.0, 2.0]])
        p = tf.placeholder(tf.float32, [None, 2])
        got = [(t.op.name, t.op.type, [(i.name, i.op.type) for i in t.op.inputs])
               for t in (tf.ones_like(a), tf.ones_like(p), tf.zeros_like(a), tf.zeros_like(p),
                         tf.ones_like(a, dtype=tf.int32), tf.zeros_like(tf.zeros([100, 100])))]
    assert got == [  # TF 2.15 (program O07)
        ("ones_like", "Fill", [("ones_like/Shape/shape_as_tensor:0", "Const"),
                               ("ones_like/Const:0", "Const")]),
        ("ones_like_1", "Fill", [("ones_like_1/Shape:0", "Shape"),
                                 ("ones_like_1/Const:0", "Const")]),
        ("zeros_like", "Const", []),  # a static shape: a constant
        ("zeros_like_1", "ZerosLike", [("Placeholder:0", "Placeholder")]),
        ("ones_like_2", "Fill", [("ones_like_2/Shape/shape_as_tensor:0", "Const"),
                                 ("ones_like_2/Const:0", "Const")]),
        ("zeros_like_2", "Fill", [("zeros_like_2/shape_as_tensor:0", "Const"),
                                  ("zeros_like_2/Const:0", "Const")]),
    ]
    with tf.Session(graph=g) as sess:
        ones = g.get_tensor_by_name("ones_like_1:0")
        assert ones.shape.as_list() == [None, 2]
        assert sess.run(ones, {p: np.zeros((3, 2))}).tolist() == [[1.0, 1.0]] * 3
        assert sess.run(g.get_tensor_by_name("ones_like_2:0")).dtype == np.int32

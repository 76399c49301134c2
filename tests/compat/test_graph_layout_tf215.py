"""The graph's op layout as TensorFlow 2.15 (``tf.compat.v1``, graph mode) builds it: folded
shape queries, the concat gradient's ``ConcatOffset``, ``as_graph_def()`` as a
``tf.GraphDef``, ``Operation.get_attr`` types, ``top_k(sorted=False)``'s order. Every
expected value was printed by TensorFlow 2.15 running the same code
(/tmp/s14/layout/L01..L08)."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf


def _types(g, prefix: str) -> list[tuple[str, str]]:
    return [(o.name, o.type) for o in g.get_operations() if o.name.startswith(prefix)]


# -- tf.shape / tf.size / tf.rank of a static shape: a Const (TF's optimize=True) ----------
def test_shape_size_rank_fold_what_the_static_shape_knows():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        u = tf.placeholder(tf.float32, [None, 3], name="u")
        r = tf.placeholder(tf.float32, None, name="r")
        got = [(t.op.type, t.op.name, t.dtype, str(t.get_shape())) for t in [
            tf.shape(x), tf.shape(u), tf.shape(x, out_type=tf.int64), tf.size(x), tf.size(u),
            tf.rank(x), tf.rank(r), tf.rank(u), tf.shape_n([x, u])[0],
            tf.size(x, out_type=tf.int64), tf.shape(x, name="myshape")]]
        with tf.name_scope("sc"):
            scoped = tf.shape(x)
        zero = tf.size(tf.placeholder(tf.float32, [None, 0]))
        with tf.Session() as sess:
            values = sess.run([tf.shape(x), tf.size(x), tf.rank(x), zero])
    # TF 2.15
    assert got == [
        ("Const", "Shape", tf.int32, "(2,)"), ("Shape", "Shape_1", tf.int32, "(2,)"),
        ("Const", "Shape_2", tf.int64, "(2,)"), ("Const", "Size", tf.int32, "()"),
        ("Size", "Size_1", tf.int32, "()"), ("Const", "Rank", tf.int32, "()"),
        ("Rank", "Rank_1", tf.int32, "()"), ("Const", "Rank_2", tf.int32, "()"),
        ("ShapeN", "ShapeN", tf.int32, "(2,)"), ("Const", "Size_2", tf.int64, "()"),
        ("Const", "myshape", tf.int32, "(2,)")]
    assert (scoped.op.name, scoped.op.type, scoped.op.get_attr("dtype")) == \
        ("sc/Shape", "Const", tf.int32)
    assert zero.op.type == "Const"  # a zero dimension: size 0 whatever the rest
    assert [np.asarray(v).tolist() for v in values] == [[2, 3], 6, 2, 0]


def test_shape_queries_keep_their_ops_with_optimize_false_and_on_sparse_tensors():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 3])
        assert [tf.shape(x, optimize=False).op.type, tf.size(x, optimize=False).op.type,
                tf.rank(x, optimize=False).op.type] == ["Shape", "Size", "Rank"]
    with tf.Graph().as_default():
        sp = tf.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [4, 5])
        s, n, r = tf.shape(sp), tf.size(sp), tf.rank(sp)
        # TF 2.15: Cast of dense_shape, Prod of it, Size of it
        assert [(t.op.type, t.op.name) for t in (s, n, r)] == [
            ("Cast", "Shape/Cast"), ("Prod", "Size"), ("Size", "Rank")]
        with tf.Session() as sess:
            assert [np.asarray(v).tolist() for v in sess.run([s, n, r])] == [[4, 5], 20, 2]


def test_gradients_keep_the_shape_op_of_y_and_train_from_the_loss_before_the_update():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [2, 3], name="x")
        y = tf.reduce_mean(x * 2.0)
        (dx,) = tf.gradients(y, x)
        w = tf.Variable([3.0, -2.0])
        loss = tf.reduce_sum(tf.square(w))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first, _ = sess.run([loss, train])
            grad = sess.run(dx, {x: np.ones((2, 3), np.float32)})
    # TF builds gradients/Shape as a Const here; flowgraph keeps the Shape op of y so
    # that a training step's updates wait for the loss (documented in gradients.py).
    assert g.get_operation_by_name("gradients/Shape").type == "Shape"
    assert [t for n, t in _types(g, "gradients/mul_grad/")][:2] == ["Mul", "Mul"]
    assert first == pytest.approx(13.0)
    np.testing.assert_allclose(grad, np.full((2, 3), 1 / 3), rtol=1e-6)


def test_metrics_mean_count_waits_for_its_values():
    # TF 2.15's mean: the count's AssignAdd has a control input on the values, so a
    # constant count (the size of a static shape) still counts only batches that ran.
    with tf.Graph().as_default() as g:
        v = tf.placeholder(tf.float32, [2], name="v")
        _, update = tf.metrics.mean(v)
        add = g.get_operation_by_name("mean/AssignAdd_1")
        assert [c.name for c in add.control_inputs] == ["v"]  # TF 2.15
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            sess.run(update, {v: [1.0, 3.0]})
            assert sess.run(update, {v: [5.0, 7.0]}) == pytest.approx(4.0)


# -- the concat gradient: ConcatOffset + Slice ---------------------------------------------
def test_concat_gradient_is_concat_offset_and_slices():
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2, 3], name="a")
        b = tf.placeholder(tf.float32, [2, 4], name="b")
        c = tf.concat([a, b], 1, name="c")
        ga, gb = tf.gradients(tf.reduce_sum(c * c), [a, b])
        u = tf.placeholder(tf.float32, [None, 3], name="u")
        v = tf.placeholder(tf.float32, [None, None], name="v")
        gu, gv = tf.gradients(tf.concat([u, v], axis=-1, name="w"), [u, v])
        with tf.Session() as sess:
            got = sess.run([ga, gb, gu, gv], {a: np.ones((2, 3)), b: 2 * np.ones((2, 4)),
                                              u: np.ones((2, 3)), v: np.ones((2, 2))})
    # TF 2.15
    assert _types(g, "gradients/c_grad/") == [
        ("gradients/c_grad/Rank", "Const"), ("gradients/c_grad/mod", "FloorMod"),
        ("gradients/c_grad/Shape", "Const"), ("gradients/c_grad/Shape_1", "Const"),
        ("gradients/c_grad/ConcatOffset", "ConcatOffset"), ("gradients/c_grad/Slice", "Slice"),
        ("gradients/c_grad/Slice_1", "Slice")]
    assert _types(g, "gradients_1/w_grad/") == [
        ("gradients_1/w_grad/Rank", "Const"), ("gradients_1/w_grad/mod", "FloorMod"),
        ("gradients_1/w_grad/Shape", "Shape"), ("gradients_1/w_grad/ShapeN", "ShapeN"),
        ("gradients_1/w_grad/ConcatOffset", "ConcatOffset"),
        ("gradients_1/w_grad/Slice", "Slice"), ("gradients_1/w_grad/Slice_1", "Slice")]
    off = g.get_operation_by_name("gradients/c_grad/ConcatOffset")
    assert [i.name for i in off.inputs] == ["gradients/c_grad/mod:0", "gradients/c_grad/Shape:0",
                                            "gradients/c_grad/Shape_1:0"]
    assert [str(t.get_shape()) for t in g.get_operation_by_name(
        "gradients_1/w_grad/Slice_1").outputs] == ["(?, ?)"]
    np.testing.assert_allclose(got[0], np.full((2, 3), 2.0))
    np.testing.assert_allclose(got[1], np.full((2, 4), 4.0))
    np.testing.assert_allclose(got[3], np.ones((2, 2)))


def test_concat_offset_kernel_values_and_errors():
    with tf.Graph().as_default():
        def offsets(axis, *shapes):
            return tf.raw_ops.ConcatOffset(concat_dim=axis, shape=[
                tf.placeholder_with_default(np.array(s, np.int32), [None]) for s in shapes])
        ok = [offsets(1, [2, 3], [2, 4]), offsets(-1, [2, 3], [2, 4]),
              offsets(0, [2, 3], [5, 3], [1, 3])]
        o64 = tf.raw_ops.ConcatOffset(concat_dim=0, shape=[tf.constant([2], tf.int64),
                                                            tf.constant([3], tf.int64)])
        with tf.Session() as sess:
            got = sess.run(ok)
            assert [[o.tolist() for o in out] for out in got] == [
                [[0, 0], [0, 3]], [[0, 0], [0, 3]], [[0, 0], [2, 0], [7, 0]]]  # TF 2.15
            assert [o.dtype for o in sess.run(o64)] == [np.int64, np.int64]
            for bad, message in [
                    (offsets(2, [2, 3], [2, 4]), "Concat dim is out of range: 2 vs. 2"),
                    (offsets(1, [2, 3], [3, 4]), r"All dimensions except 1 must match. Input 1 "
                                                 r"has shape \[3 4\] and doesn't match input 0 "
                                                 r"with shape \[2 3\]."),
                    (offsets(1, [2, 3], [2, 4, 5]), "input 1 should contain 2 elements, but "
                                                    "got 3")]:
                with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                    sess.run(bad)


def test_concat_gradient_of_many_inputs_and_in_a_training_step():
    with tf.Graph().as_default():
        parts = [tf.Variable(np.full([2, 1], float(i), np.float32)) for i in range(18)]
        y = tf.concat(parts, 1)
        grads = tf.gradients(tf.reduce_sum(y * tf.range(18, dtype=tf.float32)), parts)
        assert {g.op.type for g in grads} == {"SplitV"}  # TF: more than 16 inputs split
        assert [o.name for o in tf.get_default_graph().get_operations()
                if o.name.startswith(("gradients/concat_grad/Sh", "gradients/concat_grad/Sl"))
                ][-5:] == [
            "gradients/concat_grad/Shape_17", "gradients/concat_grad/Slice/begin/1",
            "gradients/concat_grad/Slice/begin", "gradients/concat_grad/Slice/size",
            "gradients/concat_grad/Slice"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(grads)
    assert [float(g[0, 0]) for g in got] == [float(i) for i in range(18)]


# -- Graph.as_graph_def() is a tf.GraphDef --------------------------------------------------
def _train_graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="input")
        w = tf.Variable([[1.0], [2.0]], name="w")
        y = tf.identity(tf.matmul(x, w), name="output")
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y))
    return g


def test_as_graph_def_is_a_graph_def_message_for_freeze_and_strip_scripts(tmp_path):
    g = _train_graph()
    gd = g.as_graph_def()
    assert isinstance(gd, tf.GraphDef) and isinstance(gd, dict)  # still flowgraph's dict
    count = len(gd.node)
    n = gd.node.add()
    n.name, n.op = "extra", "NoOp"
    assert (len(gd.node), gd.node[-1].name) == (count + 1, "extra")
    del gd.node[-1]
    data = gd.SerializeToString()
    back = tf.GraphDef.FromString(data)
    assert type(back).__name__ == "GraphDef" and back == gd and gd == back
    copied = tf.GraphDef()
    copied.CopyFrom(gd)
    merged = tf.GraphDef()
    merged.MergeFrom(gd)
    assert copied == gd and len(merged.node) == count
    some = tf.GraphDef()
    some.node.extend([nd for nd in gd.node if not nd.name.startswith("gradients")])
    assert len(some.node) == 12  # TF 2.15 (its gated gradients add 3 more to the rest)
    for i in reversed(range(len(gd.node))):  # strip nodes in place
        if gd.node[i].op == "ApplyGradientDescent":
            del gd.node[i]
    assert "ApplyGradientDescent" not in {nd.op for nd in gd.node}
    const = next(nd for nd in gd.node if nd.op == "Const")
    assert (const.name, type(const.attr["value"].tensor).__name__,
            const.attr["value"].tensor.dtype) == ("w/initial_value", "TensorProto", 1)
    assert gd.versions.producer > 0 and not gd.HasField("library") and gd.library is not None
    for nd in gd.node:
        nd.ClearField("device")
    assert str(gd).startswith('node {\n  name: "input"\n  op: "Placeholder"')
    gd.Clear()
    assert len(gd.node) == 0 and gd.IsInitialized()
    fresh = g.as_graph_def()
    tf.io.write_graph(fresh, str(tmp_path), "g.pb", as_text=False)
    read = tf.GraphDef()
    read.ParseFromString((tmp_path / "g.pb").read_bytes())
    assert len(read.node) == len(fresh.node)
    sub = tf.graph_util.extract_sub_graph(fresh, ["output"])
    assert isinstance(sub, tf.GraphDef)
    assert [n.name for n in sub.node] == ["input", "w", "w/read", "MatMul", "output"]
    assert fresh["node"][0]["name"] == "input"  # the dict view is unchanged
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(fresh, name="")
        assert len(g2.get_operations()) == len(fresh.node)


def test_graph_def_library_bytes_round_trip():
    fdef = b"\n\x05\n\x03fun"  # a FunctionDef, kept opaque
    data = b"\x12\x09\x0a\x07" + fdef  # GraphDef{library{function: fdef}}
    gd = tf.GraphDef.FromString(data)
    assert gd.HasField("library") and list(gd.library.function) == [fdef]
    assert gd.SerializeToString() == data


# -- Operation.get_attr types -----------------------------------------------------------------
def test_get_attr_returns_tensorflows_types():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        xr = tf.placeholder(tf.int64, None)
        c = tf.constant([[1.0, 2.0]], name="c")
        r = tf.reshape(x, [-1])
        q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[], [2]])
        lr = tf.nn.leaky_relu(x, 0.3)
        sp = tf.split(x, [1, 2], 1)[0]
        ss = x[:, 1]
    shape = x.op.get_attr("shape")
    assert type(shape).__name__ == "TensorShapeProto"  # TF 2.15
    assert [d.size for d in shape.dim] == [-1, 3] and xr.op.get_attr("shape").unknown_rank
    assert tf.TensorShape(shape).as_list() == [None, 3]
    value = c.op.get_attr("value")
    assert type(value).__name__ == "TensorProto" and value.dtype == 1
    assert tf.make_ndarray(value).tolist() == [[1.0, 2.0]]
    assert c.op.get_attr("dtype") == tf.float32
    assert [list(d.size for d in s.dim) for s in q.queue_ref.op.get_attr("shapes")] == [[], [2]]
    assert lr.op.get_attr("alpha") == 0.30000001192092896  # float32, as TF stores it
    # type attributes TF stores and flowgraph derives from the inputs
    assert (r.op.get_attr("Tshape"), sp.op.get_attr("Tlen"), ss.op.get_attr("Index")) == \
        (tf.int32, tf.int32, tf.int32)
    assert ss.op.get_attr("shrink_axis_mask") == 2
    with pytest.raises(ValueError, match="no attr named 'seed'"):
        r.op.get_attr("seed")


# -- top_k(sorted=False): TF's heap order -------------------------------------------------
def test_top_k_unsorted_order_is_tensorflows():
    rng = np.random.RandomState(1)
    row = [0.9, -0.68, -0.12, -0.94, -0.27, 0.53, -0.69, -0.4, -0.69, -0.85, -0.67, -0.01]
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run([
            tf.nn.top_k(tf.constant([[3.0, 1.0, 4.0, 1.5, 5.0, 9.0, 2.0, 6.0]]), 4,
                        sorted=False),
            tf.nn.top_k(tf.constant([1.0, 5.0, 3.0, 5.0, 2.0, 0.0, 7.0]), 3, sorted=False),
            tf.nn.top_k(tf.constant(row, tf.float32), 3, sorted=False),
            tf.nn.top_k(tf.constant([5.0, 4, 3, 2, 1, 0]), 4, sorted=False),
            tf.nn.top_k(tf.constant([[1.0, np.nan, 3.0, np.nan, 0.5, 7.0]]), 3, sorted=False),
            tf.nn.top_k(tf.constant(rng.randn(2, 5000).astype(np.float32)), 7, sorted=False),
            tf.nn.top_k(tf.constant([4.0, 2.0, 9.0]), 3, sorted=False)])
    # TF 2.15
    assert got[0].values.tolist() == [[4.0, 5.0, 9.0, 6.0]]
    assert got[0].indices.tolist() == [[2, 4, 5, 7]]
    assert got[1].indices.tolist() == [3, 1, 6]
    assert got[2].indices.tolist() == [11, 0, 5]
    assert got[3].indices.tolist() == [3, 1, 2, 0]
    assert got[4].indices.tolist() == [[2, 1, 5]]
    top7 = np.sort(np.argsort(-rng.__class__(1).randn(2, 5000).astype(np.float32))[:, :7])
    assert (np.sort(got[5].indices) == top7).all()
    assert got[6].indices.tolist() == [2, 0, 1]  # k == n: sorted


# -- max_pool_with_argmax: one MaxPoolWithArgmax op --------------------------------------
def test_max_pool_with_argmax_is_one_op_with_pool_shapes_and_tensorflows_indices():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4, None, 2], name="x")
        out, am = tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")
        r = tf.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID",
                                       include_batch_in_index=True, output_dtype=tf.int32)
        (gx,) = tf.gradients(tf.reduce_sum(out * out), x)
        with pytest.raises(LookupError, match="MaxPoolGradWithArgmax"):
            tf.gradients(tf.reduce_sum(gx), x)  # TF registers no second derivative
        xv = np.random.RandomState(0).randint(0, 3, (2, 4, 5, 2)).astype(np.float32)
        with tf.Session() as sess:
            o, a, a2, gv = sess.run([out, am, r.argmax, gx], {x: xv})
    # TF 2.15
    assert (out.name, am.name, am.dtype, str(out.get_shape()), str(am.get_shape())) == (
        "MaxPoolWithArgmax:0", "MaxPoolWithArgmax:1", tf.int64, "(?, 2, ?, 2)", "(?, 2, ?, 2)")
    assert (type(r).__name__, r.argmax.dtype, str(r.output.get_shape())) == \
        ("MaxPoolWithArgmax", tf.int32, "(?, 1, ?, 2)")
    assert sorted(r.output.op.node_def.attr) == [
        "T", "Targmax", "include_batch_in_index", "ksize", "padding", "strides"]
    assert g.get_operation_by_name(
        "gradients/MaxPoolWithArgmax_grad/MaxPoolGradWithArgmax").type == "MaxPoolGradWithArgmax"
    assert a.ravel().tolist()[:12] == [12, 11, 14, 5, 18, 19, 30, 31, 24, 25, 28, 39]
    assert a2.ravel().tolist() == [14, 5, 14, 5, 40, 55, 48, 55]
    # ties go to the first maximum in row-major order; the gradient lands there
    flat = gv.reshape(2, -1)
    for b in range(2):
        np.testing.assert_allclose(flat[b][a[b].ravel()], 2 * o[b].ravel())
    with pytest.raises(ValueError, match="values other  than 'NHWC'"):
        tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME", data_format="NCHW")


# -- dilated convolutions: SpaceToBatchND, the convolution, BatchToSpaceND ----------------
def test_atrous_conv2d_is_space_to_batch_as_tensorflow_builds_it():
    g = tf.Graph()
    with g.as_default():
        img = tf.placeholder(tf.float32, [None, 10, 12, 3], name="img")
        k = tf.constant(np.ones([3, 3, 3, 4], np.float32), name="k")
        y = tf.nn.atrous_conv2d(img, k, 2, "SAME")
        names = [(o.name, o.type) for o in g.get_operations() if o.name.startswith("conv")]
        dw = tf.nn.depthwise_conv2d(img, tf.ones([3, 3, 3, 2]), [1, 1, 1, 1], "VALID",
                                    rate=[2, 2])
        u = tf.placeholder(tf.float32, [2, 10, None, 3])
        dyn = tf.nn.atrous_conv2d(u, k, 2, "SAME")
        xv = np.random.RandomState(0).rand(2, 10, 12, 3).astype(np.float32)
        (gx,) = tf.gradients(tf.reduce_sum(y), img)
        with tf.Session() as sess:
            got, got_dyn, grad = sess.run([y, dyn, gx], {img: xv, u: xv})
    # TF 2.15
    assert names == [
        ("convolution/dilation_rate", "Const"), ("convolution/filter_shape", "Const"),
        ("convolution/stack", "Const"),
        ("convolution/required_space_to_batch_paddings/input_shape", "Const"),
        ("convolution/required_space_to_batch_paddings/paddings", "Const"),
        ("convolution/required_space_to_batch_paddings/crops", "Const"),
        ("convolution/SpaceToBatchND/block_shape", "Const"),
        ("convolution/SpaceToBatchND/paddings", "Const"),
        ("convolution/SpaceToBatchND", "SpaceToBatchND"), ("convolution", "Conv2D"),
        ("convolution/BatchToSpaceND/block_shape", "Const"),
        ("convolution/BatchToSpaceND/crops", "Const"),
        ("convolution/BatchToSpaceND", "BatchToSpaceND")]
    assert (y.name, str(y.get_shape())) == ("convolution/BatchToSpaceND:0", "(?, 10, 12, 4)")
    assert str(g.get_operation_by_name("convolution").outputs[0].get_shape()) == \
        "(?, 5, 6, 4)"
    assert (dw.name, str(dw.get_shape()), dw.op.inputs[0].op.type) == (
        "depthwise/BatchToSpaceND:0", "(?, 6, 8, 6)", "DepthwiseConv2dNative")
    assert g.get_operation_by_name("depthwise/Shape").type == "Const"
    assert str(dyn.get_shape()) == "(2, ?, ?, 4)"
    assert round(float(got.sum()), 3) == 9892.295  # TF 2.15
    ref = np.zeros((2, 10, 12, 4), np.float32)
    padded = np.pad(xv, ((0, 0), (2, 2), (2, 2), (0, 0)))
    for i in range(3):
        for j in range(3):
            ref += padded[:, 2 * i:2 * i + 10, 2 * j:2 * j + 12].sum(-1, keepdims=True)
    np.testing.assert_allclose(got, ref, rtol=1e-5)
    np.testing.assert_allclose(got_dyn, ref, rtol=1e-5)
    assert grad.shape == (2, 10, 12, 3) and grad[0, 5, 6, 0] == 36.0


def test_conv1d_and_convolution_names():
    with tf.Graph().as_default() as g:
        seq = tf.placeholder(tf.float32, [None, 20, 4], name="seq")
        y = tf.nn.conv1d(seq, tf.ones([3, 4, 6]), 1, "SAME")
        types = [(o.name, o.type) for o in g.get_operations()]
        y2 = tf.nn.conv1d(seq, tf.ones([3, 4, 6]), 2, "VALID", name="c1")
        y3 = tf.nn.convolution(seq, tf.ones([3, 4, 6]), "SAME")
        y4 = tf.nn.convolution(tf.placeholder(tf.float32, [None, 8, 8, 3]),
                               tf.ones([3, 3, 3, 2]), "SAME")
    # TF 2.15
    assert types[-2:] == [("conv1d", "Conv2D"), ("conv1d/Squeeze", "Squeeze")]
    assert [y.name, y2.name, y3.name, y4.name, y4.op.type] == [
        "conv1d/Squeeze:0", "c1/Squeeze:0", "convolution/Squeeze:0", "convolution_1:0",
        "Conv2D"]


# -- image boxes with int or tensor arguments ---------------------------------------------
def test_image_box_functions_static_shapes_with_ints_tensors_and_unknown_sizes():
    with tf.Graph().as_default():
        img = tf.placeholder(tf.float32, [None, 10, 12, 3])
        im3 = tf.placeholder(tf.float32, [10, 12, 3])
        imu = tf.placeholder(tf.float32, [None, None, None, 3])
        im3u = tf.placeholder(tf.float32, [None, None, 3])
        n = tf.placeholder(tf.int32, [])
        crop, pad = tf.image.crop_to_bounding_box, tf.image.pad_to_bounding_box
        rcp = tf.image.resize_image_with_crop_or_pad
        got = [(str(t.get_shape()), t.op.type) for t in [
            crop(img, 1, 2, 5, 6), crop(im3, 1, 2, 5, 6), crop(img, n, 2, 5, 6),
            crop(img, 1, 2, n, 6), crop(imu, 1, 2, 5, 6), crop(im3u, 1, 2, 5, 6),
            pad(img, 1, 2, 14, 16), pad(im3, 1, 2, 14, 16), pad(img, n, 2, 14, 16),
            pad(img, 1, 2, n, 16), pad(imu, 1, 2, 14, 16), pad(im3u, 1, 2, 14, 16),
            rcp(img, 8, 14), rcp(im3, 8, 14), rcp(img, n, 14), rcp(imu, 8, 14),
            rcp(im3u, 8, 14), rcp(im3u, n, 14), rcp(im3, 10, 12)]]
        for call, message in [(lambda: crop(im3, -1, 0, 2, 2), "offset_height must be >= 0."),
                              (lambda: crop(im3, 9, 0, 2, 2), r"height must be >= target \+ "
                                                              r"offset."),
                              (lambda: pad(im3, 0, 0, 5, 20), "height must be <= target - "
                                                              "offset"),
                              (lambda: rcp(im3, 5, 0), "target_width must be > 0."),
                              (lambda: crop(tf.zeros([2, 3]), 0, 0, 1, 1),
                               r"'image' \(shape \(2, 3\)\) must have either 3 or 4 "
                               r"dimensions.")]:
            with pytest.raises(ValueError, match=message):
                call()
        xv = np.arange(30, dtype=np.float32).reshape(5, 6, 1)
        u1 = tf.placeholder(tf.float32, [None, None, 1])
        with tf.Session() as sess:
            values = sess.run([crop(u1, n, 1, 2, 3), pad(u1, 1, n, 8, 9), rcp(u1, n, 4)],
                              {u1: xv, n: 2})
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="height must be >= target"):
                sess.run(crop(u1, n, 1, 4, 3), {u1: xv, n: 2})
    # TF 2.15
    assert got == [
        ("(?, 5, 6, 3)", "Slice"), ("(5, 6, 3)", "Squeeze"), ("(?, 5, 6, 3)", "Slice"),
        ("(?, ?, 6, 3)", "Slice"), ("(?, 5, 6, 3)", "Slice"), ("(5, 6, 3)", "Squeeze"),
        ("(?, 14, 16, 3)", "Pad"), ("(14, 16, 3)", "Squeeze"), ("(?, 14, 16, 3)", "Pad"),
        ("(?, ?, 16, 3)", "Pad"), ("(?, 14, 16, 3)", "Pad"), ("(14, 16, 3)", "Squeeze"),
        ("(?, 8, 14, 3)", "Identity"), ("(8, 14, 3)", "Squeeze"), ("(?, ?, 14, 3)", "Identity"),
        ("(?, 8, 14, 3)", "Identity"), ("(8, 14, 3)", "Squeeze"), ("(?, 14, 3)", "Squeeze"),
        ("(10, 12, 3)", "Squeeze")]
    assert values[0][..., 0].tolist() == [[13.0, 14.0, 15.0], [19.0, 20.0, 21.0]]
    assert values[1].shape == (8, 9, 1) and values[1][1, 2, 0] == 0.0 == values[1][0, 2, 0]
    assert values[1][1:6, 2:8, 0].tolist() == xv[..., 0].tolist()
    assert values[2][..., 0].tolist() == [[7.0, 8.0, 9.0, 10.0], [13.0, 14.0, 15.0, 16.0]]


def test_depthwise_and_separable_build_tensorflows_constants_and_names():
    g = tf.Graph()
    with g.as_default():
        img = tf.placeholder(tf.float32, [None, 10, 12, 3], name="img")
        dwf = tf.constant(np.ones([3, 3, 3, 2], np.float32), name="dwf")
        pwf = tf.constant(np.ones([1, 1, 6, 5], np.float32), name="pwf")
        n0 = len(g.get_operations())
        a = tf.nn.separable_conv2d(img, dwf, pwf, [1, 1, 1, 1], "SAME")
        b = tf.nn.separable_conv2d(img, dwf, pwf, [1, 1, 1, 1], "SAME", rate=[2, 2])
        c = tf.nn.depthwise_conv2d(img, dwf, [1, 2, 2, 1], "SAME")
        ops = [(o.name, o.type) for o in g.get_operations()[n0:]]
        xv = np.random.RandomState(0).rand(2, 10, 12, 3).astype(np.float32)
        with tf.Session() as sess:
            sums = [round(float(v.sum()), 1) for v in sess.run([a, b, c], {img: xv})]
    # TF 2.15
    assert ops[:4] == [("separable_conv2d/Shape", "Const"),
                       ("separable_conv2d/dilation_rate", "Const"),
                       ("separable_conv2d/depthwise", "DepthwiseConv2dNative"),
                       ("separable_conv2d", "Conv2D")]
    assert [n for n, _ in ops[4:-3]][-3:] == [
        "separable_conv2d_1/BatchToSpaceND/crops", "separable_conv2d_1/BatchToSpaceND",
        "separable_conv2d_1"]
    assert ("separable_conv2d_1/depthwise", "DepthwiseConv2dNative") in ops
    assert ops[-3:] == [("depthwise/Shape", "Const"), ("depthwise/dilation_rate", "Const"),
                        ("depthwise", "DepthwiseConv2dNative")]
    ref = xv.sum(-1)  # all-ones filters: each output sums the window over all channels
    pad = np.pad(ref, ((0, 0), (1, 1), (1, 1)))
    window = sum(pad[:, i:i + 10, j:j + 12] for i in range(3) for j in range(3))
    assert sums[0] == pytest.approx(float(window.sum()) * 2 * 5, rel=1e-5)

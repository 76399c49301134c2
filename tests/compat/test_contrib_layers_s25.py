"""TF 1.x `tf.contrib.layers` pieces TF 2.15 no longer has (so no oracle run): the
vocabulary-file and shared-embedding columns, `joint_weighted_sum_from_feature_columns`,
the column helpers (`parse_feature_columns_from_examples`, `infer_real_valued_columns`,
`make_place_holder_tensors_for_base_features`, `check_feature_columns`) and
`recompute_grad`. Checked against NumPy references written from TF 1.x's documented
behaviour, against the unwrapped computation, and against finite differences."""

import numpy as np
import pytest

import flowgraph as tf

L = tf.contrib.layers


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        return sess.run(fetches, feed)


# -- columns ------------------------------------------------------------------------------
def test_vocabulary_file_column_looks_ids_up_by_line(tmp_path):
    path = tmp_path / "colors.txt"
    path.write_text("red\ngreen\nblue\n")
    with tf.Graph().as_default():
        known = L.sparse_column_with_vocabulary_file("color", str(path), vocab_size=3)
        oov = L.sparse_column_with_vocabulary_file("color", str(path), num_oov_buckets=2)
        feats = {"color": tf.constant([["blue"], ["red"], ["pink"]])}
        one_hot = L.input_from_feature_columns(feats, [L.one_hot_column(known)])
        wide = L.input_from_feature_columns(feats, [L.one_hot_column(oov)], scope="oov")
        a, b = _run([one_hot, wide])
    np.testing.assert_array_equal(a, [[0, 0, 1], [1, 0, 0], [0, 0, 0]])
    assert known.num_buckets == 3 and oov.num_buckets == 5
    assert b.shape == (3, 5) and b[2, 3:].sum() == 1 and b[2, :3].sum() == 0
    with pytest.raises(ValueError, match=r"num_oov_buckets .* or default_value"):
        L.sparse_column_with_vocabulary_file("c", str(path), num_oov_buckets=1,
                                             default_value=0)
    with pytest.raises(ValueError, match="combiner='mean' is not supported"):
        L.sparse_column_with_vocabulary_file("c", str(path), combiner="mean")


def test_shared_embedding_columns_share_one_table():
    with tf.Graph().as_default():
        a = L.sparse_column_with_keys("a", ["x", "y", "z"])
        b = L.sparse_column_with_keys("b", ["u", "v", "w"])
        ea, eb = L.shared_embedding_columns([a, b], dimension=2,
                                            initializer=tf.constant_initializer(
                                                np.arange(6).reshape(3, 2)))
        feats = {"a": tf.constant([["y"], ["x"]]), "b": tf.constant([["w"], ["w"]])}
        dense = L.input_from_feature_columns(feats, [ea, eb])
        tables = [v for v in tf.global_variables() if "shared_embedding" in v.name]
        out = _run(dense)
    assert len(tables) == 1 and tables[0].shape.as_list() == [3, 2]
    # a's rows then b's rows of the same [[0,1],[2,3],[4,5]] table
    np.testing.assert_array_equal(out, [[2, 3, 4, 5], [0, 1, 4, 5]])
    with pytest.raises(ValueError, match="non-empty list"):
        L.shared_embedding_columns(a, dimension=2)


def test_joint_weighted_sum_equals_the_per_column_linear_model():
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        color = L.sparse_column_with_keys("color", ["r", "g", "b"])
        word = L.sparse_column_with_hash_bucket("word", 5)
        feats = {"color": tf.constant([["g", ""], ["r", "b"]]),
                 "word": tf.constant([["dog"], ["cat"]])}
        pred, [weights], bias = L.joint_weighted_sum_from_feature_columns(
            feats, [word, color], num_outputs=2)
        table = rng.randn(8, 2).astype(np.float32)
        ids = L.input_from_feature_columns(feats, [L.one_hot_column(color),
                                                   L.one_hot_column(word)])
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            sess.run([weights.assign(table), bias.assign([0.5, -1.0])])
            got, multi_hot = sess.run([pred, ids])
            names = [weights.op.name, bias.op.name]
            model_vars = {v.op.name for v in tf.model_variables()}
    # columns ordered by name: color's 3 rows first, then word's 5; "" is no id
    expected = multi_hot @ table + [0.5, -1.0]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert names == ["joint_weighted_sum_from_feature_columns/weights",
                     "joint_weighted_sum_from_feature_columns/bias_weight"]
    assert set(names) <= model_vars
    with tf.Graph().as_default():
        price = L.real_valued_column("price")
        with pytest.raises(NotImplementedError, match="'price' is not a sparse"):
            L.joint_weighted_sum_from_feature_columns({"price": tf.ones([2, 1])}, [price],
                                                      num_outputs=1)


def test_joint_weighted_sum_trains():
    with tf.Graph().as_default():
        color = L.sparse_column_with_keys("color", ["r", "g"])
        pred, _, _ = L.joint_weighted_sum_from_feature_columns(
            {"color": tf.constant([["r"], ["g"]])}, [color], num_outputs=1)
        loss = tf.reduce_mean(tf.square(pred - [[1.0], [-1.0]]))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            first = sess.run(loss)
            for _ in range(30):
                sess.run(train)
            last = sess.run(loss)
    assert first == pytest.approx(1.0) and last < 1e-3


# -- column helpers -----------------------------------------------------------------------
def _example(age, words):
    return tf.train.Example(features=tf.train.Features(feature={
        "age": tf.train.Feature(float_list=tf.train.FloatList(value=[age])),
        "words": tf.train.Feature(bytes_list=tf.train.BytesList(value=words)),
    })).SerializeToString()


def test_parse_feature_columns_from_examples():
    columns = [L.real_valued_column("age"), L.sparse_column_with_hash_bucket("words", 10)]
    with tf.Graph().as_default():
        parsed = L.parse_feature_columns_from_examples(
            tf.constant([_example(3.0, [b"a", b"b"]), _example(4.0, [b"c"])]), columns)
        age, words = _run([parsed["age"], parsed["words"]])
    np.testing.assert_array_equal(age, [[3.0], [4.0]])
    assert words.values.tolist() == [b"a", b"b", b"c"]
    assert words.indices.tolist() == [[0, 0], [0, 1], [1, 0]]
    with pytest.raises(ValueError, match="Duplicate feature column key found for column: age"):
        L.parse_feature_columns_from_examples(tf.constant([b""]), columns + columns[:1])


def test_infer_real_valued_columns():
    with tf.Graph().as_default():
        cols = L.infer_real_valued_columns({"b": tf.zeros([4, 3, 2]), "a": tf.zeros([4]),
                                            "n": tf.zeros([4, 2], tf.int64)})
        [anon] = L.infer_real_valued_columns(tf.zeros([5, 7]))
        assert [(c.key, c.shape, c.dtype) for c in cols] == [
            ("a", (1,), tf.float32), ("b", (6,), tf.float32), ("n", (2,), tf.int64)]
        assert (anon.key, anon.shape) == ("", (7,))
        with pytest.raises(ValueError, match="'s' has dtype string"):
            L.infer_real_valued_columns({"s": tf.constant([["x"]])})
        with pytest.raises(ValueError, match="values per example must be known"):
            L.infer_real_valued_columns({"u": tf.placeholder(tf.float32, [None, None])})


def test_placeholders_for_base_features_feed_the_columns():
    columns = [L.real_valued_column("age", dimension=2),
               L.sparse_column_with_keys("color", ["r", "g"])]
    with tf.Graph().as_default():
        ph = L.make_place_holder_tensors_for_base_features(columns)
        assert ph["age"].name == "Placeholder_age:0"
        assert ph["age"].shape.as_list() == [None, 2]
        assert isinstance(ph["color"], tf.SparseTensor)
        assert ph["color"].values.name == "Placeholder_color/values:0"
        dense = L.input_from_feature_columns(ph, [columns[0], L.one_hot_column(columns[1])])
        out = _run(dense, {ph["age"]: [[1.0, 2.0]],
                           ph["color"]: tf.SparseTensorValue([[0, 0]], [b"g"], [1, 1])})
    np.testing.assert_array_equal(out, [[1.0, 2.0, 0.0, 1.0]])


def test_check_feature_columns():
    age = L.real_valued_column("age")
    L.check_feature_columns([age, L.real_valued_column("height")])
    with pytest.raises(ValueError, match="Duplicate feature column key found for column: age"):
        L.check_feature_columns([age, L.real_valued_column("age", dimension=2)])


# -- recompute_grad -----------------------------------------------------------------------
def _block(x):
    h = tf.layers.dense(x, 16, activation=tf.nn.tanh, name="inner")
    return tf.layers.dense(h, 4, name="outer")


def _grads(wrap, use_resource):
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x = tf.constant(np.random.RandomState(1).randn(5, 4).astype(np.float32))
        fn = L.recompute_grad(_block) if wrap else _block
        with tf.variable_scope("net", use_resource=use_resource):
            y = fn(x)
            with tf.variable_scope("second"):
                y = fn(y)
        loss = tf.reduce_sum(tf.square(y))
        variables = tf.trainable_variables()
        grads = tf.gradients(loss, [x, *variables])
        names = [v.op.name for v in variables]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = sess.run(grads)
        ops = [op.name for op in tf.get_default_graph().get_operations()]
    return names, values, ops


@pytest.mark.parametrize("use_resource", [False, True])
def test_recompute_grad_gives_the_unwrapped_gradients(use_resource):
    names, plain, plain_ops = _grads(False, use_resource)
    wrapped_names, recomputed, ops = _grads(True, use_resource)
    assert wrapped_names == names and len(names) == 8
    for a, b in zip(plain, recomputed, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    # the backward pass built each block again (its MatMuls under .../recompute/)
    replayed = [n for n in ops if n.endswith(("recompute/inner/MatMul", "recompute/outer/MatMul"))]
    assert len(replayed) == 4
    assert not any("recompute/" in n for n in plain_ops)


def test_recompute_grad_matches_finite_differences():
    rng = np.random.RandomState(0)
    x0 = rng.randn(3, 2)
    w0 = rng.randn(2, 2)

    @L.recompute_grad
    def block(x):
        w = tf.get_variable("w", [2, 2], tf.float64, tf.constant_initializer(w0))
        return tf.sin(tf.matmul(x, w)), x * 2.0

    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [3, 2])
        a, b = block(x)
        loss = tf.reduce_sum(a * a) + tf.reduce_sum(b * a)
        [w] = tf.global_variables()
        gx, gw = tf.gradients(loss, [x, w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_x, got_w = sess.run([gx, gw], {x: x0})

    def f(xv, wv):
        s = np.sin(xv @ wv)
        return (s * s).sum() + (2 * xv * s).sum()

    eps = 1e-6
    for got, arg in ((got_x, 0), (got_w, 1)):
        num = np.zeros_like(got)
        for idx in np.ndindex(got.shape):
            args = [x0.copy(), w0.copy()]
            args[arg][idx] += eps
            hi = f(*args)
            args[arg][idx] -= 2 * eps
            num[idx] = (hi - f(*args)) / (2 * eps)
        np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-8)


def test_recompute_grad_frees_the_activations_between_passes():
    """Eight blocks with a 1 MiB hidden activation each: plainly all eight are held until
    the backward pass; recomputed, only the blocks' small outputs are."""
    def peak(wrap):
        def block(x):
            h = tf.tanh(tf.layers.dense(x, 1024, use_bias=False, name="up"))
            return tf.layers.dense(h, 16, use_bias=False, name="down")
        fn = L.recompute_grad(block) if wrap else block
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            y = tf.ones([256, 16])
            for i in range(8):
                with tf.variable_scope(f"b{i}"):
                    y = fn(y)
            grads = tf.gradients(tf.reduce_sum(y), tf.trainable_variables())
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                md = tf.RunMetadata()
                values = sess.run(grads, options=tf.RunOptions(
                    trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
        return md.step_stats.peak_bytes(), values

    plain_peak, plain = peak(False)
    recomputed_peak, recomputed = peak(True)
    for a, b in zip(plain, recomputed, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
    mib = 1 << 20
    assert plain_peak > 8 * mib
    assert recomputed_peak < plain_peak / 2  # about one block's forward and backward


def test_recompute_grad_refuses_variables_it_cannot_reuse():
    @L.recompute_grad
    def block(x):
        return x * tf.Variable(2.0, name="scale")

    with tf.Graph().as_default():
        x = tf.constant(1.0)
        y = block(x)
        with pytest.raises(ValueError, match="created new variables"):
            tf.gradients(y, x)
        with pytest.raises(ValueError, match="positionally"):
            block(x=x)


def test_recompute_grad_tupleize_grads():
    with tf.Graph().as_default():
        fn = L.recompute_grad(lambda a, b: a * b, tupleize_grads=True)
        a, b = tf.constant(3.0), tf.constant(4.0)
        ga, gb = tf.gradients(fn(a, b), [a, b])
        assert _run([ga, gb]) == [4.0, 3.0]

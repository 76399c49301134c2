"""Feature columns as TensorFlow 2.15 (`tf.compat.v1.feature_column`) shows them: class
names and reprs of the columns (TF's v2 classes), and the numbers `input_layer` gives
for hashed, crossed, vocabulary and weighted embedding columns. Every expected value
below was read from TensorFlow itself."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf

fc = tf.feature_column


def test_column_reprs_use_tensorflows_class_and_field_names():
    i = fc.categorical_column_with_identity("i", 5)
    assert repr(fc.numeric_column("n", shape=(2,), default_value=0.0)) == (
        "NumericColumn(key='n', shape=(2,), default_value=(0.0, 0.0), dtype=tf.float32, "
        "normalizer_fn=None)")
    assert repr(fc.categorical_column_with_hash_bucket("h", 10)) == \
        "HashedCategoricalColumn(key='h', hash_bucket_size=10, dtype=tf.string)"
    assert repr(i) == "IdentityCategoricalColumn(key='i', number_buckets=5, default_value=None)"
    assert i.num_buckets == 5
    assert repr(fc.weighted_categorical_column(i, "iw")) == (
        "WeightedCategoricalColumn(categorical_column=IdentityCategoricalColumn(key='i', "
        "number_buckets=5, default_value=None), weight_feature_key='iw', dtype=tf.float32)")
    b = fc.bucketized_column(fc.numeric_column("x"), [0.0, 1.0])
    assert repr(fc.crossed_column(["h", "x2"], 20)) == \
        "CrossedColumn(keys=('h', 'x2'), hash_bucket_size=20, hash_key=None)"
    assert fc.crossed_column(["h", b], 20, hash_key=7).hash_key == 7
    assert repr(fc.indicator_column(fc.categorical_column_with_vocabulary_list(
        "vl", ["a", "b"]))) == (
        "IndicatorColumn(categorical_column=VocabularyListCategoricalColumn(key='vl', "
        "vocabulary_list=('a', 'b'), dtype=tf.string, default_value=-1, num_oov_buckets=0))")
    e = fc.embedding_column(i, 4)
    assert type(e).__name__ == "EmbeddingColumn" and e.use_safe_embedding_lookup is True
    assert repr(fc.sequence_categorical_column_with_identity("sq", 3)) == (
        "SequenceCategoricalColumn(categorical_column=IdentityCategoricalColumn(key='sq', "
        "number_buckets=3, default_value=None))")
    assert repr(fc.sequence_numeric_column("sn")) == (
        "SequenceNumericColumn(key='sn', shape=(1,), default_value=0.0, dtype=tf.float32, "
        "normalizer_fn=None)")
    s1, _ = fc.shared_embedding_columns(
        [fc.categorical_column_with_vocabulary_list("a", ["x"]),
         fc.categorical_column_with_vocabulary_list("b", ["x"])], 3)
    assert type(s1).__name__ == "_SharedEmbeddingColumn"  # still v1's class in TF 2.15


def test_vocabulary_file_column_repr_has_default_minus_one_and_file_format(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("a\nb\n")
    c = fc.categorical_column_with_vocabulary_file("vf", str(path))
    assert repr(c) == (
        f"VocabularyFileCategoricalColumn(key='vf', vocabulary_file='{path}', "
        "vocabulary_size=2, num_oov_buckets=0, dtype=tf.string, default_value=-1, "
        "file_format=None)")


def test_hashed_and_crossed_ids_match_tensorflows_fingerprints():
    # categorical_column_with_hash_bucket (Fingerprint64 % n) and crossed_column
    # (FingerprintCat64 with hash_key 0xDECAFCAFFE), read through indicator columns.
    with tf.Graph().as_default():
        feats = {"city": tf.constant([["sf"], ["nyc"], [""], ["la"]]),
                 "zip": tf.constant([[94110], [10001], [0], [-5]], tf.int64),
                 "age": tf.constant([[23.0], [45.0], [67.0], [18.0]])}
        city = fc.categorical_column_with_hash_bucket("city", 100)
        zipc = fc.categorical_column_with_hash_bucket("zip", 50, dtype=tf.int64)
        age_b = fc.bucketized_column(fc.numeric_column("age"), [18, 30, 50])
        crosses = [fc.crossed_column(["city", "zip"], 1000),
                   fc.crossed_column([age_b, "city"], 37),
                   fc.crossed_column(["city", "zip", age_b], 10**6)]
        cols = [fc.indicator_column(c) for c in [city, zipc, *crosses]]
        outs = [fc.input_layer(feats, [c]) for c in cols]
        with tf.Session() as sess:
            ids = [[[int(k) for k in np.nonzero(r)[0]] for r in sess.run(o)] for o in outs]
    assert [c.name for c in crosses] == ["city_X_zip", "age_bucketized_X_city",
                                         "age_bucketized_X_city_X_zip"]
    assert ids == [[[86], [66], [], [10]], [[24], [26], [35], [16]],
                   [[365], [191], [600], [442]], [[22], [20], [18], [12]],
                   [[220034], [627218], [975007], [473500]]]


def test_weighted_embedding_combiners_with_fixed_table():
    with tf.Graph().as_default():
        idx = [[0, 0], [0, 1], [1, 0], [3, 2]]
        feats = {"a": tf.SparseTensor(idx, tf.constant([1, 3, 2, 1], tf.int64), [4, 3]),
                 "w": tf.SparseTensor(idx, tf.constant([0.5, 2.0, 1.0, 4.0]), [4, 3])}
        a = fc.categorical_column_with_identity("a", 4)
        wa = fc.weighted_categorical_column(a, "w")
        init = tf.constant_initializer(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
        outs = [fc.input_layer(feats, [fc.embedding_column(wa, 3, combiner=cb,
                                                           initializer=init)])
                for cb in ("mean", "sum", "sqrtn")]
        names = [v.name for v in tf.global_variables()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(outs)
    assert names == [f"input_layer{s}/a_weighted_by_w_embedding/embedding_weights:0"
                     for s in ("", "_1", "_2")]
    np.testing.assert_allclose(got[0], [[0.78, 0.88, 0.98], [0.6, 0.7, 0.8], [0, 0, 0],
                                        [0.3, 0.4, 0.5]], atol=1e-6)
    np.testing.assert_allclose(got[1], [[1.95, 2.2, 2.45], [0.6, 0.7, 0.8], [0, 0, 0],
                                        [1.2, 1.6, 2.0]], atol=1e-6)
    np.testing.assert_allclose(got[2], [[0.9459, 1.0672, 1.1884], [0.6, 0.7, 0.8],
                                        [0, 0, 0], [0.3, 0.4, 0.5]], atol=1e-4)


def test_vocabulary_columns_oov_and_default_ids():
    with tf.Graph().as_default():
        feats = {"color": tf.constant([["red", "blue"], ["pink", "red"], ["green", "green"]]),
                 "color2": tf.constant([["red"], ["pink"], ["purple"]]),
                 "w": tf.constant([[2.0, 0.5], [1.0, 3.0], [1.0, 1.0]])}
        c1 = fc.categorical_column_with_vocabulary_list(
            "color", ["red", "green", "blue"], num_oov_buckets=2)
        c2 = fc.categorical_column_with_vocabulary_list(
            "color2", ["red", "green", "blue"], default_value=7)
        outs = [fc.input_layer(feats, [fc.indicator_column(c)])
                for c in (c1, c2, fc.weighted_categorical_column(c1, "w"))]
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            got = [o.tolist() for o in sess.run(outs)]
    assert got == [[[1, 0, 1, 0, 0], [1, 0, 0, 1, 0], [0, 2, 0, 0, 0]],
                   [[1, 0, 0], [0, 0, 0], [0, 0, 0]],
                   [[2, 0, 0.5, 0, 0], [3, 0, 0, 1, 0], [0, 2, 0, 0, 0]]]


def test_bucketized_column_boundary_errors():
    x = fc.numeric_column("x")
    with pytest.raises(ValueError, match=r"^boundaries must not be empty"):
        fc.bucketized_column(x, [])
    for bad in ([1.0, 0.0], [1.0, 1.0], 3.0):
        with pytest.raises(ValueError, match=r"^boundaries must be a sorted list"):
            fc.bucketized_column(x, bad)


def test_linear_model_scopes_follow_tensorflows_layer():
    # fc.linear_model (TF's _LinearModel layer): variables under `linear_model/<col>`,
    # ops under the layer's name scope `linear_model_1/linear_model/`; a second call
    # gets `linear_model_1` and column scopes `<col>_1`.
    with tf.Graph().as_default() as g:
        feats = {"p": tf.constant([[1.0], [2.0]]), "c": tf.constant([["a"], ["b"]])}
        cols = [fc.numeric_column("p"), fc.categorical_column_with_vocabulary_list(
            "c", ["a", "b"])]
        out = fc.linear_model(feats, cols)
        out2 = fc.linear_model(feats, cols[1:])
        with tf.variable_scope("scope"):
            out3 = fc.linear_model(feats, cols[:1], units=3)
        names = [v.name for v in tf.global_variables()]
        ops = {o.name for o in g.get_operations()}
    assert out.name == "linear_model_1/linear_model/weighted_sum:0"
    assert out.op.type == "BiasAdd"
    assert out2.name == "linear_model_1_1/linear_model_1/weighted_sum:0"
    assert out3.name == "scope/linear_model_1/linear_model/weighted_sum:0"
    assert names == ["linear_model/c/weights:0", "linear_model/p/weights:0",
                     "linear_model/bias_weights:0", "linear_model_1/c_1/weights:0",
                     "linear_model_1/bias_weights:0", "scope/linear_model/p/weights:0",
                     "scope/linear_model/bias_weights:0"]
    assert {"linear_model_1/linear_model/c/weighted_sum",
            "linear_model_1/linear_model/p/weighted_sum",
            "linear_model_1/linear_model/weighted_sum_no_bias"} <= ops


def test_identity_column_without_default_does_not_check_its_ids():
    # IdentityCategoricalColumn (v2, TF 2.15): no range asserts; one_hot leaves the rows
    # of ids 7 and -3 at zero, while the embedding lookup rejects id 7.
    with tf.Graph().as_default():
        i = fc.categorical_column_with_identity("i", 5)
        feats = {"i": tf.constant([[1], [7], [-3]], tf.int64)}
        ind = fc.input_layer(feats, [fc.indicator_column(i)])
        emb = fc.input_layer(feats, [fc.embedding_column(i, 2,
                                                          initializer=tf.ones_initializer())])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(ind).tolist() == [[0, 1, 0, 0, 0], [0] * 5, [0] * 5]
            with pytest.raises(tf.errors.InvalidArgumentError, match="7"):
                sess.run(emb)


def test_dense_input_becomes_sparse_under_tensorflows_op_names():
    # _to_sparse_input_and_drop_ignore_values: to_sparse_input/{ignore_value/x, NotEqual,
    # indices, values, dense_shape}; input_layer reshapes with a packed `Reshape/shape`.
    with tf.Graph().as_default() as g:
        c = fc.indicator_column(fc.categorical_column_with_hash_bucket("c", 3))
        fc.input_layer({"c": tf.constant([["x"], ["y"]]), "b": tf.constant([[1.0], [2.0]])},
                       [c, fc.numeric_column("b")])
        ops = {o.name: o.type for o in g.get_operations()}
    for name, kind in [("ignore_value/x", "Const"), ("NotEqual", "NotEqual"),
                       ("indices", "Where"), ("values", "GatherNd"),
                       ("dense_shape", "Const")]:  # a static shape folds
        assert ops[f"input_layer/c_indicator/to_sparse_input/{name}"] == kind
    assert ops["input_layer/b/Reshape/shape"] == "Pack"
    assert ops["input_layer/b/Reshape"] == "Reshape"

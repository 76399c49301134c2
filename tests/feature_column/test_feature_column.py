"""input_layer / linear_model / make_parse_example_spec: TensorFlow parity (names, column
order, values computed by TensorFlow 2.15's tf.compat.v1.feature_column on the same
inputs and variable values), feature formats, and errors naming column and feature."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import feature_column as fc
from flowgraph.framework.sparse_tensor import SparseTensor, SparseTensorValue
from flowgraph.ops.parsing_ops import FixedLenFeature, VarLenFeature


def _columns():
    price = fc.numeric_column("price")
    vec = fc.numeric_column("vec", shape=(2,))
    bucket = fc.bucketized_column(price, [0.0, 10.0, 100.0])
    bvec = fc.bucketized_column(vec, [0.0, 1.0])
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"],
                                                       num_oov_buckets=2)
    color2 = fc.categorical_column_with_vocabulary_list("color2", ["red", "green", "blue"],
                                                        num_oov_buckets=2)
    word = fc.categorical_column_with_hash_bucket("word", 100)
    num = fc.categorical_column_with_identity("num", 5)
    numh = fc.categorical_column_with_hash_bucket("numh", 50, dtype=tf.int64)
    cross = fc.crossed_column(["word", bucket], 1000)
    cross3 = fc.crossed_column(["word", "color", "numh"], 77)
    crossb = fc.crossed_column([bvec, "color"], 31)
    wcat = fc.weighted_categorical_column(num, "numw")
    return dict(price=price, vec=vec, bucket=bucket, bvec=bvec, color=color, color2=color2,
                word=word, num=num, numh=numh, cross=cross, cross3=cross3, crossb=crossb,
                wcat=wcat)


def _features():
    return {
        "price": [[-1.0], [5.0], [500.0]],
        "vec": [[-1.0, 0.5], [2.0, 1.0], [0.0, 0.0]],
        "color": [["red"], ["purple"], ["blue"]],
        "color2": [["green"], ["red"], ["zzz"]],
        "word": SparseTensor(indices=[[0, 0], [0, 1], [2, 0]], values=["hello", "world", "foo"],
                             dense_shape=[3, 2]),
        "num": [[1], [4], [0]],
        "numw": [[0.5], [2.0], [1.0]],
        "numh": tf.constant([[7], [123456789], [-3]], tf.int64),
    }


def _sin_fill(sess):
    for v in tf.global_variables():
        n = int(np.prod(v.shape.as_list()))
        sess.run(v.assign(np.sin(np.arange(n, dtype=np.float32)).reshape(v.shape.as_list())))


def test_input_layer_matches_tensorflow(sess):
    c = _columns()
    columns = [c["price"], c["vec"], c["bucket"], c["bvec"], fc.embedding_column(c["color"], 3),
               fc.embedding_column(c["word"], 4, combiner="sqrtn"),
               fc.embedding_column(c["wcat"], 2, combiner="sum"), fc.indicator_column(c["num"]),
               fc.indicator_column(c["wcat"]), fc.indicator_column(c["cross"]),
               fc.indicator_column(c["crossb"]),
               *fc.shared_embedding_columns([c["color2"], c["color"]], 2)]
    out = fc.input_layer(_features(), columns)
    assert out.shape.as_list() == [3, 1067]
    assert [v.name for v in tf.global_variables()] == [
        "input_layer/color_color2_shared_embedding/embedding_weights:0",
        "input_layer/color_embedding/embedding_weights:0",
        "input_layer/num_weighted_by_numw_embedding/embedding_weights:0",
        "input_layer/word_embedding/embedding_weights:0"]
    sess.run(tf.global_variables_initializer())
    _sin_fill(sess)
    o = sess.run(out)
    # TensorFlow 2.15 on the same inputs and variable values:
    np.testing.assert_allclose(o.sum(1), [11.2686, 18.8901, 509.5824], atol=2e-4)
    np.testing.assert_allclose((o * np.arange(1, 1068)).sum(1), [2526.664, 5860.436, 28894.181],
                               atol=5e-3)
    assert np.nonzero(o[0, 40:])[0].tolist() == [
        3, 4, 6, 10, 11, 170, 344, 1015, 1016, 1017, 1021, 1023, 1024, 1025, 1026]
    assert np.nonzero(o[1, 40:])[0].tolist() == [2, 3, 4, 9, 10, 12, 1015, 1016, 1019, 1022]
    np.testing.assert_allclose(o[1, 33:38], [0.4121, -0.544, -1.0, -0.2794, 0.657], atol=1e-4)


def test_linear_model_matches_tensorflow(sess):
    c = _columns()
    cols = {}
    out = fc.linear_model(_features(), [c[k] for k in (
        "price", "bucket", "color", "word", "cross", "cross3", "wcat", "num", "numh", "vec",
        "crossb")], sparse_combiner="mean", cols_to_vars=cols)
    names = [(v.name, v.shape.as_list()) for v in tf.global_variables()]
    assert names == [
        ("linear_model/color/weights:0", [5, 1]),
        ("linear_model/color_X_numh_X_word/weights:0", [77, 1]),
        ("linear_model/color_X_vec_bucketized/weights:0", [31, 1]),
        ("linear_model/num/weights:0", [5, 1]),
        ("linear_model/num_weighted_by_numw/weights:0", [5, 1]),
        ("linear_model/numh/weights:0", [50, 1]),
        ("linear_model/price/weights:0", [1, 1]),
        ("linear_model/price_bucketized/weights:0", [4, 1]),
        ("linear_model/price_bucketized_X_word/weights:0", [1000, 1]),
        ("linear_model/vec/weights:0", [2, 1]),
        ("linear_model/word/weights:0", [100, 1]),
        ("linear_model/bias_weights:0", [1])]
    assert cols["bias"][0].name == "linear_model/bias_weights:0"
    assert cols[c["word"]][0].name == "linear_model/word/weights:0"
    sess.run(tf.global_variables_initializer())
    assert sess.run(out).tolist() == [[0.0], [0.0], [0.0]]  # all weights start at zero
    _sin_fill(sess)
    np.testing.assert_allclose(sess.run(out), [[2.4778], [0.1473], [-0.6714]], atol=1e-4)


def test_ids_match_tensorflow(sess):
    from flowgraph.feature_column.feature_column import _LazyBuilder

    c = _columns()
    builder = _LazyBuilder(_features())
    expected = {  # (values, dense_shape) from TensorFlow 2.15
        "color": ([0, 3, 2], [3, 1]), "word": ([96, 98, 71], [3, 2]),
        "cross": ([329, 155, 281], [3, 2]), "cross3": ([66, 68, 69], [3, 2]),
        "numh": ([38, 6, 49], [3, 1]), "num": ([1, 4, 0], [3, 1]),
        "bucket": ([0, 1, 3], [3, 1]), "bvec": ([0, 4, 2, 5, 1, 4], [3, 2])}
    for key, (values, shape) in expected.items():
        sp = c[key]._get_sparse_tensors(builder).id_tensor
        got_v, got_s = sess.run([sp.values, sp.dense_shape])
        assert got_v.tolist() == values, key
        assert got_s.tolist() == shape, key


def test_input_layer_sorts_columns_and_second_call_scopes(sess):
    a, b = fc.numeric_column("a"), fc.numeric_column("b")
    out = fc.input_layer({"a": [1.0, 2.0], "b": [[3.0], [4.0]]}, [b, a])
    assert sess.run(out).tolist() == [[1.0, 3.0], [2.0, 4.0]]
    e = fc.embedding_column(fc.categorical_column_with_identity("n", 3), 2)
    fc.input_layer({"n": [[1]]}, [e])
    fc.input_layer({"n": [[1]]}, [e])
    assert [v.name for v in tf.global_variables()] == [
        "input_layer_1/n_embedding/embedding_weights:0",
        "input_layer_2/n_embedding/embedding_weights:0"]


def test_input_layer_cols_to_vars_and_collections():
    e = fc.embedding_column(fc.categorical_column_with_identity("n", 3), 2)
    p = fc.numeric_column("p")
    cols_to_vars = {}
    fc.input_layer({"n": [[1]], "p": [[1.0]]}, [e, p], weight_collections=["mine"],
                   cols_to_vars=cols_to_vars)
    assert [v.name for v in cols_to_vars[e]] == ["input_layer/n_embedding/embedding_weights:0"]
    assert cols_to_vars[p] == []
    assert len(tf.get_collection("mine")) == 1
    assert len(tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)) == 1
    assert len(tf.trainable_variables()) == 1
    fc.input_layer({"n": [[1]]}, [fc.embedding_column(fc.categorical_column_with_identity(
        "n", 3), 2, trainable=False)])
    assert len(tf.trainable_variables()) == 1


def test_embedding_default_initializer_stddev(sess):
    e = fc.embedding_column(fc.categorical_column_with_hash_bucket("q", 4000), 16)
    fc.input_layer({"q": [["x"]]}, [e])
    sess.run(tf.global_variables_initializer())
    (table,) = tf.global_variables()
    w = sess.run(table)
    assert w.shape == (4000, 16)
    assert abs(w.std() - 0.25 * 0.88) < 0.02  # truncated normal, stddev 1/sqrt(16)
    assert np.abs(w).max() <= 0.5 + 1e-6


def test_feature_formats(sess):
    word = fc.indicator_column(fc.categorical_column_with_vocabulary_list(
        "w", ["a", "b", "c"]))
    ragged = sess.run(fc.input_layer({"w": [["a", "c"], [], ["b", "b", "a"]]}, [word]))
    assert ragged.tolist() == [[1, 0, 1], [0, 0, 0], [1, 2, 0]]
    value = SparseTensorValue(np.array([[0, 0], [1, 0]]), np.array([b"c", b"a"], object),
                              np.array([2, 1]))
    assert sess.run(fc.input_layer({"w": value}, [word])).tolist() == [[0, 0, 1], [1, 0, 0]]
    rank1 = sess.run(fc.input_layer({"w": np.array(["b", ""])}, [word]))
    assert rank1.tolist() == [[0, 1, 0], [0, 0, 0]]  # '' means missing
    ph = tf.placeholder(tf.string, [None, 2])
    fed = sess.run(fc.input_layer({"w": ph}, [word]), {ph: [["a", "b"], ["c", ""]]})
    assert fed.tolist() == [[1, 1, 0], [0, 0, 1]]
    nums = fc.numeric_column("x", shape=(2,))
    arr = sess.run(fc.input_layer({"x": np.arange(6).reshape(3, 2)}, [nums]))
    assert arr.dtype == np.float32 and arr.tolist() == [[0, 1], [2, 3], [4, 5]]


def test_errors_name_column_and_feature():
    color = fc.categorical_column_with_vocabulary_list("color", ["r", "g"])
    with pytest.raises(ValueError, match=r"key: color.*color_indicator"):
        fc.input_layer({"x": [[1.0]]}, [fc.indicator_column(color)])
    with pytest.raises(ValueError, match=r"color.*dtype"):
        fc.input_layer({"color": [[1.5]]}, [fc.indicator_column(color)])
    with pytest.raises(ValueError, match=r"key: color.*column dtype: string.*int32"):
        fc.input_layer({"color": [[1]]}, [fc.indicator_column(color)])
    with pytest.raises(ValueError, match="rank 0"):
        fc.input_layer({"p": 1.0}, [fc.numeric_column("p")])
    with pytest.raises(ValueError, match=r"SparseTensor is not supported\. key: p"):
        fc.input_layer({"p": SparseTensor([[0, 0]], [1.0], [1, 1])}, [fc.numeric_column("p")])
    with pytest.raises(ValueError, match=r"feature column 'p'.*string"):
        fc.input_layer({"p": [["a"]]}, [fc.numeric_column("p")])
    with pytest.raises(ValueError, match=r"key: w.*mixes value types"):
        fc.input_layer({"w": [["a"], [1, 2]]}, [fc.indicator_column(color)._replace(
            categorical_column=color._replace(key="w"))])
    with pytest.raises(ValueError, match="must be a _DenseColumn"):
        fc.input_layer({"color": [["r"]]}, [color])
    with pytest.raises(ValueError, match="Duplicate feature column name"):
        fc.input_layer({"p": [[1.0]]}, [fc.numeric_column("p"), fc.numeric_column("p")])
    with pytest.raises(ValueError, match="must not be empty"):
        fc.input_layer({"p": [[1.0]]}, [])
    with pytest.raises(ValueError, match="dictionary"):
        fc.input_layer([[1.0]], [fc.numeric_column("p")])
    with pytest.raises(ValueError, match="Batch size"):
        fc.input_layer({"a": [[1.0]], "b": [[1.0], [2.0]]},
                       [fc.numeric_column("a"), fc.numeric_column("b")])
    with pytest.raises(ValueError, match="sparse_combiner"):
        fc.linear_model({"a": [[1.0]]}, [fc.numeric_column("a")], sparse_combiner="max")


def test_identity_out_of_range_ids_without_default(sess):
    # TF 2.15 (v2 IdentityCategoricalColumn): unchecked; an indicator row stays zero.
    col = fc.indicator_column(fc.categorical_column_with_identity("n", 3))
    out = fc.input_layer({"n": tf.constant([[1], [7]])}, [col])
    assert sess.run(out).tolist() == [[0, 1, 0], [0, 0, 0]]
    dflt = fc.indicator_column(fc.categorical_column_with_identity("m", 3, default_value=0))
    got = sess.run(fc.input_layer({"m": tf.constant([[1], [7]])}, [dflt]))
    assert got.tolist() == [[0, 1, 0], [1, 0, 0]]


def test_make_parse_example_spec():
    c = _columns()
    spec = fc.make_parse_example_spec([
        c["price"], c["vec"], c["bucket"], c["color"], c["word"], c["cross"], c["wcat"],
        fc.embedding_column(c["color"], 3), c["numh"], fc.indicator_column(c["num"])])
    assert spec == {
        "price": FixedLenFeature((1,), tf.float32, None),
        "vec": FixedLenFeature((2,), tf.float32, None),
        "color": VarLenFeature(tf.string), "word": VarLenFeature(tf.string),
        "num": VarLenFeature(tf.int64), "numw": VarLenFeature(tf.float32),
        "numh": VarLenFeature(tf.int64)}
    with pytest.raises(ValueError, match="different parse_spec for key x"):
        fc.make_parse_example_spec([fc.numeric_column("x"), fc.numeric_column("x", shape=2)])
    with pytest.raises(ValueError, match="feature column"):
        fc.make_parse_example_spec(["x"])

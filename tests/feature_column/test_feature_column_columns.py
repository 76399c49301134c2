"""Each feature column's constructor (TF's validation and names), its transformation, and
training through feature columns."""

from __future__ import annotations

import numpy as np
import pytest

import flowgraph as tf
from flowgraph import feature_column as fc
from flowgraph.framework.errors import InvalidArgumentError
from flowgraph.framework.sparse_tensor import SparseTensor


def test_numeric_column():
    c = fc.numeric_column("x", shape=[2, 3], default_value=1.5)
    assert c.name == "x" and c.shape == (2, 3) and c.variable_shape.as_list() == [2, 3]
    assert c.default_value == ((1.5, 1.5, 1.5), (1.5, 1.5, 1.5))
    assert fc.numeric_column("y", default_value=[2]).default_value == (2.0,)
    with pytest.raises(ValueError, match="greater than 0"):
        fc.numeric_column("x", shape=[0])
    with pytest.raises(ValueError, match="convertible to float"):
        fc.numeric_column("x", dtype=tf.string)
    with pytest.raises(ValueError, match="shape of default_value"):
        fc.numeric_column("x", shape=[2], default_value=[1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="callable"):
        fc.numeric_column("x", normalizer_fn=3)


def test_numeric_normalizer_and_reshape(sess):
    c = fc.numeric_column("x", shape=(2,), normalizer_fn=lambda t: t * 2.0 - 1.0)
    out = fc.input_layer({"x": [[1.0, 2.0], [0.0, 0.5]]}, [c])
    assert sess.run(out).tolist() == [[1.0, 3.0], [-1.0, 0.0]]
    m = fc.numeric_column("m", shape=(2, 2))
    out = fc.input_layer({"m": np.arange(8, dtype=np.float32).reshape(2, 2, 2)}, [m])
    assert out.shape.as_list() == [2, 4]
    assert sess.run(out).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]


def test_bucketized_column(sess):
    src = fc.numeric_column("age")
    b = fc.bucketized_column(src, [18, 65])
    assert b.name == "age_bucketized" and b.num_buckets == 3
    assert b.variable_shape.as_list() == [1, 3]
    out = sess.run(fc.input_layer({"age": [[10.0], [18.0], [70.0]]}, [b]))
    assert out.tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    with pytest.raises(ValueError, match="numeric_column"):
        fc.bucketized_column(fc.categorical_column_with_identity("n", 2), [1])
    with pytest.raises(ValueError, match="sorted"):
        fc.bucketized_column(src, [5, 1])
    with pytest.raises(ValueError, match="one-dimensional"):
        fc.bucketized_column(fc.numeric_column("m", shape=(2, 2)), [1])


def test_hash_bucket_column(sess):
    c = fc.categorical_column_with_hash_bucket("q", 1000000)
    assert c.num_buckets == 1000000 and c.dtype == tf.string
    from flowgraph.feature_column.feature_column import _LazyBuilder

    ids = c._get_sparse_tensors(_LazyBuilder({"q": [["hello"], ["a"]]})).id_tensor
    assert sess.run(ids.values).tolist() == [800296, 363939]  # TensorFlow's bucket ids
    ints = fc.categorical_column_with_hash_bucket("n", 10, dtype=tf.int32)
    assert sess.run(ints._get_sparse_tensors(_LazyBuilder(
        {"n": tf.constant([[3], [-1]])})).id_tensor.values).shape == (1,)  # -1 is missing
    with pytest.raises(ValueError, match="at least 1"):
        fc.categorical_column_with_hash_bucket("q", 0)
    with pytest.raises(ValueError, match="string or integer"):
        fc.categorical_column_with_hash_bucket("q", 10, dtype=tf.float32)


def test_vocabulary_list_column(sess):
    c = fc.categorical_column_with_vocabulary_list("c", ["x", "y", "z"], num_oov_buckets=2)
    assert c.num_buckets == 5 and c.dtype == tf.string
    ints = fc.categorical_column_with_vocabulary_list("i", [10, 20])
    assert ints.dtype == tf.int64 and ints.num_buckets == 2
    out = sess.run(fc.input_layer({"i": tf.constant([[20], [99]])}, [fc.indicator_column(ints)]))
    assert out.tolist() == [[0, 1], [0, 0]]  # unknown -> -1 -> no bucket
    dflt = fc.categorical_column_with_vocabulary_list("d", ["x", "y"], default_value=1)
    out = sess.run(fc.input_layer({"d": [["q"]]}, [fc.indicator_column(dflt)]))
    assert out.tolist() == [[0, 1]]
    with pytest.raises(ValueError, match="Duplicate keys"):
        fc.categorical_column_with_vocabulary_list("c", ["x", "x"])
    with pytest.raises(ValueError, match="both num_oov_buckets and default_value"):
        fc.categorical_column_with_vocabulary_list("c", ["x"], default_value=0,
                                                   num_oov_buckets=1)
    with pytest.raises(ValueError, match="do not match"):
        fc.categorical_column_with_vocabulary_list("c", ["x"], dtype=tf.int64)
    with pytest.raises(ValueError, match="non-empty"):
        fc.categorical_column_with_vocabulary_list("c", [])


def test_vocabulary_file_column(sess, tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("red\ngreen\nblue\n")
    c = fc.categorical_column_with_vocabulary_file("c", str(path), num_oov_buckets=1)
    assert c.num_buckets == 4
    out = sess.run(fc.input_layer({"c": [["blue"], ["zz"]]}, [fc.indicator_column(c)]))
    assert out.tolist() == [[0, 0, 1, 0], [0, 0, 0, 1]]
    short = fc.categorical_column_with_vocabulary_file("s", str(path), vocabulary_size=2)
    assert sess.run(fc.input_layer({"s": [["blue"]]}, [fc.indicator_column(short)])).tolist() \
        == [[0, 0]]
    missing = fc.categorical_column_with_vocabulary_file("m", str(tmp_path / "no.txt"), 3)
    with pytest.raises(InvalidArgumentError, match="not found"):
        sess.run(fc.input_layer({"m": [["a"]]}, [fc.indicator_column(missing)]))
    with pytest.raises(ValueError, match="does not exist"):
        fc.categorical_column_with_vocabulary_file("m", str(tmp_path / "no.txt"))


def test_identity_and_weighted_columns(sess):
    n = fc.categorical_column_with_identity("n", 4)
    w = fc.weighted_categorical_column(n, "nw")
    assert w.name == "n_weighted_by_nw" and w.num_buckets == 4
    feats = {"n": SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 1, 3], tf.int64),
                               [2, 2]),
             "nw": SparseTensor([[0, 0], [0, 1], [1, 0]], [0.5, 2.0, 3.0], [2, 2])}
    out = sess.run(fc.input_layer(feats, [fc.indicator_column(w)]))
    assert out.tolist() == [[0, 2.5, 0, 0], [0, 0, 0, 3.0]]
    with pytest.raises(ValueError, match="not integer"):
        fc.input_layer({"n": [["a"]]}, [fc.indicator_column(n)])
    with pytest.raises(ValueError, match="num_buckets"):
        fc.categorical_column_with_identity("n", 0)
    with pytest.raises(ValueError, match="not in range"):
        fc.categorical_column_with_identity("n", 3, default_value=3)
    with pytest.raises(ValueError, match="categorical"):
        fc.weighted_categorical_column(fc.numeric_column("x"), "w")


def test_crossed_column(sess):
    b = fc.bucketized_column(fc.numeric_column("age"), [18, 65])
    x = fc.crossed_column(["city", b], 1000)
    assert x.name == "age_bucketized_X_city" and x.num_buckets == 1000
    assert x.hash_key is None  # TF 2.15 keeps None; ids are hashed with 0xDECAFCAFFE
    nested = fc.crossed_column([x, "zip"], 10)
    assert nested.name == "age_bucketized_X_city_X_zip"
    out = sess.run(fc.input_layer({"city": [["a"], ["b"]], "age": [[30.0], [5.0]],
                                   "zip": tf.constant([[94043], [10001]], tf.int64)},
                                  [fc.indicator_column(nested)]))
    assert out.shape == (2, 10) and out.sum(axis=1).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="not supported for crossing"):
        fc.crossed_column(["a", fc.categorical_column_with_hash_bucket("b", 10)], 10)
    with pytest.raises(ValueError, match="length > 1"):
        fc.crossed_column(["a"], 10)
    with pytest.raises(ValueError, match="hash_bucket_size"):
        fc.crossed_column(["a", "b"], 0)
    with pytest.raises(ValueError, match="Unsupported key type"):
        fc.crossed_column(["a", fc.numeric_column("b")], 10)
    with pytest.raises(ValueError, match="crosses need strings or integers"):
        fc.input_layer({"a": [["x"]], "b": [[1.5]]},
                       [fc.indicator_column(fc.crossed_column(["a", "b"], 10))])


def test_embedding_column_arguments():
    cat = fc.categorical_column_with_identity("n", 5)
    e = fc.embedding_column(cat, 3, combiner="sqrtn", max_norm=2.0)
    assert e.name == "n_embedding" and e.dimension == 3 and e.variable_shape.as_list() == [3]
    with pytest.raises(ValueError, match="Invalid dimension"):
        fc.embedding_column(cat, 0)
    with pytest.raises(ValueError, match="combiner"):
        fc.embedding_column(cat, 2, combiner="max")
    with pytest.raises(ValueError, match="both `ckpt_to_load_from`"):
        fc.embedding_column(cat, 2, ckpt_to_load_from="/tmp/x")
    with pytest.raises(ValueError, match="callable"):
        fc.embedding_column(cat, 2, initializer=3)
    with pytest.raises(ValueError, match="categorical"):
        fc.embedding_column(fc.numeric_column("x"), 2)


def test_shared_embedding_columns(sess):
    a = fc.categorical_column_with_identity("a", 4)
    b = fc.categorical_column_with_identity("b", 4)
    sa, sb = fc.shared_embedding_columns([b, a], 2, initializer=tf.ones_initializer())
    assert sa.name == "b_shared_embedding" and sb.name == "a_shared_embedding"
    out = fc.input_layer({"a": [[1]], "b": [[2]]}, [sa, sb])
    assert [v.name for v in tf.global_variables()] == [
        "input_layer/a_b_shared_embedding/embedding_weights:0"]
    sess.run(tf.global_variables_initializer())
    assert sess.run(out).tolist() == [[1, 1, 1, 1]]
    with pytest.raises(ValueError, match="same type"):
        fc.shared_embedding_columns([a, fc.categorical_column_with_hash_bucket("h", 4)], 2)
    with pytest.raises(ValueError, match="same number of buckets"):
        fc.shared_embedding_columns([a, fc.categorical_column_with_identity("c", 5)], 2)


def test_embedding_from_checkpoint(sess, tmp_path):
    from flowgraph.train.checkpoint_utils import write_checkpoint

    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    write_checkpoint(str(tmp_path / "m"), {"old/emb": table})
    e = fc.embedding_column(fc.categorical_column_with_identity("n", 4), 2,
                            ckpt_to_load_from=str(tmp_path / "m"), tensor_name_in_ckpt="old/emb")
    out = fc.input_layer({"n": [[3], [0]]}, [e])
    sess.run(tf.global_variables_initializer())
    assert sess.run(out).tolist() == [[6, 7], [0, 1]]


def test_training_through_feature_columns(sess):
    """A linear model on a hashed column and a cross learns a lookup table; the embedding
    and linear weights receive IndexedSlices gradients."""
    words = ["a", "b", "c", "d"]
    target = {"a": 1.0, "b": -1.0, "c": 2.0, "d": 0.5}
    q = fc.categorical_column_with_hash_bucket("q", 1000)
    feats = {"q": [[w] for w in words], "r": [["x"], ["y"], ["x"], ["y"]]}
    pred = fc.linear_model(feats, [q, fc.crossed_column(["q", "r"], 500)])
    deep = fc.input_layer(feats, [fc.embedding_column(q, 3)])
    labels = tf.constant([[target[w]] for w in words])
    loss = tf.reduce_mean(tf.square(pred - labels)) + 0.0 * tf.reduce_sum(deep)
    grads = tf.gradients(loss, tf.trainable_variables())
    kinds = {v.name: type(g).__name__ for v, g in zip(tf.trainable_variables(), grads)}
    assert kinds["linear_model/q/weights:0"] == "IndexedSlices"
    assert kinds["input_layer/q_embedding/embedding_weights:0"] == "IndexedSlices"
    train = tf.train.AdagradOptimizer(0.5).minimize(loss)
    sess.run(tf.global_variables_initializer())
    first = sess.run(loss)
    for _ in range(60):
        sess.run(train)
    assert sess.run(loss) < 0.01 * first


def test_ragged_numeric_input_names_the_column_and_the_fix():
    column = tf.feature_column.numeric_column("x", shape=[2])
    with pytest.raises(ValueError, match=r"(?s)feature column 'x'.*\[batch, 2\].*ragged.*"
                                         r"Pad every row"):
        tf.feature_column.input_layer({"x": [[1.0, 2.0], [3.0]]}, [column])

"""TF 1.x's `tf.contrib.layers` feature-column layers (TF 2.15 has no contrib, so the
values are checked against `tf.feature_column`'s layers and NumPy):
`input_from_feature_columns` (old and new columns, names sorted, its scope),
`weighted_sum_from_feature_columns` (predictions, per-column variables and the bias,
training), and `safe_embedding_lookup_sparse`'s default combiner."""

import numpy as np
import pytest

import flowgraph as tf

layers = tf.contrib.layers


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


def test_input_from_feature_columns_matches_input_layer_and_sorts_columns():
    features = {"price": tf.constant([[1.0, 2.0], [3.0, 4.0]]),
                "age": tf.constant([[20.0], [60.0]])}
    price = layers.real_valued_column("price", dimension=2)
    age = layers.bucketized_column(layers.real_valued_column("age"), [30.0, 50.0])
    dense = layers.input_from_feature_columns(features, [price, age])
    assert dense.op.name.startswith("input_from_feature_columns/")
    assert dense.shape.as_list() == [2, 5]
    with tf.Session() as sess:
        got = sess.run(dense)
    # age_bucketized sorts before price: one-hot of the bucket, then the two prices
    np.testing.assert_array_equal(got, [[1, 0, 0, 1, 2], [0, 0, 1, 3, 4]])


def test_weighted_sum_returns_predictions_variables_and_bias_and_trains():
    x = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)
    y = 3 * x + 1
    features = {"x": tf.constant(x), "color": tf.constant([["r"], ["g"], ["r"], ["b"]])}
    x_col = layers.real_valued_column("x")
    color = layers.sparse_column_with_keys("color", ["r", "g", "b"])
    predictions, column_to_variables, bias = layers.weighted_sum_from_feature_columns(
        features, [x_col, color], num_outputs=1, scope="linear")
    assert predictions.shape.as_list() == [4, 1]
    assert sorted(c.name for c in column_to_variables) == ["color", "x"]
    assert bias.op.name.startswith("linear/") and bias.shape.as_list() == [1]
    loss = tf.reduce_mean(tf.square(predictions - y))
    train = tf.train.GradientDescentOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
        assert np.all(sess.run(predictions) == 0)  # zero-initialized, as TF 1.x's
        for _ in range(300):
            sess.run(train)
        assert sess.run(loss) < 0.05


def test_safe_embedding_lookup_sparse_defaults_to_the_mean():
    weights = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    ids = tf.SparseTensor(indices=[[0, 0], [0, 1], [2, 0]], values=[1, 3, 2],
                          dense_shape=[3, 2])
    with tf.Session() as sess:
        got = sess.run(layers.safe_embedding_lookup_sparse(weights, ids))
        summed = sess.run(layers.safe_embedding_lookup_sparse(weights, ids, combiner="sum"))
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    np.testing.assert_array_equal(got, [(table[1] + table[3]) / 2, np.zeros(3), table[2]])
    np.testing.assert_array_equal(summed[0], table[1] + table[3])

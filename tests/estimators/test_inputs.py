"""numpy_input_fn / pandas_input_fn: batching across epochs, shuffling, errors."""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.estimators.inputs import numpy_input_fn, pandas_input_fn


def _drain(sess, fetches):
    out = []
    while True:
        try:
            out.append(sess.run(fetches))
        except tf.errors.OutOfRangeError:
            return out


def test_batches_cross_epoch_boundaries_like_tf(sess):
    x = {"a": np.arange(5, dtype=np.float32), "b": np.arange(10, dtype=np.int32).reshape(5, 2)}
    features, labels = numpy_input_fn(x, np.arange(5) * 10, batch_size=2, num_epochs=2,
                                      shuffle=False)()
    assert sorted(features) == ["a", "b"]
    assert features["b"].shape.as_list() == [None, 2] and labels.shape.as_list() == [None]
    assert features["a"].dtype == tf.float32 and labels.dtype == tf.int64
    batches = _drain(sess, labels)
    assert [b.tolist() for b in batches] == [[0, 10], [20, 30], [40, 0], [10, 20], [30, 40]]
    # Exhausted means exhausted (the same session keeps raising).
    with pytest.raises(tf.errors.OutOfRangeError):
        sess.run(features["a"])


def test_columns_stay_aligned_and_dtypes_exact(sess):
    x = {"a": np.arange(7, dtype=np.float64)}
    y = np.arange(7, dtype=np.int32) * 3
    features, labels = numpy_input_fn(x, y, batch_size=3, num_epochs=1, shuffle=True)()
    pairs = _drain(sess, (features["a"], labels))
    a = np.concatenate([p[0] for p in pairs])
    b = np.concatenate([p[1] for p in pairs])
    assert sorted(a.tolist()) == list(range(7)) and (b == a * 3).all()
    assert a.dtype == np.float64 and b.dtype == np.int32
    assert [len(p[0]) for p in pairs] == [3, 3, 1]


def test_array_x_gives_a_tensor_and_no_y_gives_features_only(sess):
    features = numpy_input_fn(np.ones((4, 3), np.float32), batch_size=4, shuffle=False)()
    assert isinstance(features, tf.Tensor)
    assert sess.run(features).shape == (4, 3)


def test_num_epochs_none_repeats_and_new_session_restarts():
    labels = numpy_input_fn(np.zeros(3), np.arange(3), batch_size=2, num_epochs=None,
                            shuffle=False)()[1]
    with tf.Session() as s:
        assert [s.run(labels).tolist() for _ in range(4)] == [[0, 1], [2, 0], [1, 2], [0, 1]]
    with tf.Session() as s:
        assert s.run(labels).tolist() == [0, 1]


def test_shuffle_is_seeded_by_the_graph_seed():
    def first_epoch(seed):
        with tf.Graph().as_default():
            tf.set_random_seed(seed)
            labels = numpy_input_fn(np.zeros(50), np.arange(50), batch_size=50,
                                    shuffle=True)()[1]
            with tf.Session() as s:
                return s.run(labels).tolist()

    assert first_epoch(3) == first_epoch(3) != list(range(50))
    assert first_epoch(3) != first_epoch(4)


def test_string_columns(sess):
    features = numpy_input_fn({"s": np.array(["ab", "c"])}, batch_size=2, shuffle=False)()
    assert features["s"].dtype == tf.string
    assert sess.run(features["s"]).tolist() == [b"ab", b"c"]


@pytest.mark.parametrize("kwargs, error, message", [
    ({"shuffle": None}, ValueError, "shuffle must be provided and explicitly set as boolean"),
    ({"shuffle": 1}, ValueError, "shuffle must be provided"),
    ({"shuffle": True, "batch_size": 0}, ValueError, "batch_size must be a positive"),
    ({"shuffle": True, "num_epochs": 0}, ValueError, "num_epochs must be None"),
    ({"shuffle": True, "x": {}}, ValueError, "x cannot be an empty dict"),
    ({"shuffle": True, "x": [1, 2]}, TypeError, "x must be a dict or array"),
    ({"shuffle": True, "y": {}}, ValueError, "y cannot be empty dict"),
    ({"shuffle": True, "y": {"a": np.zeros(4)}}, ValueError, "duplicate keys"),
    ({"shuffle": True, "y": np.zeros(3)}, ValueError, "Length of tensors in x and y"),
])
def test_errors(kwargs, error, message):
    args = {"x": {"a": np.zeros(4)}, "y": None}
    args.update(kwargs)
    with pytest.raises(error, match=message):
        numpy_input_fn(**args)


def test_pandas_input_fn(sess):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [4, 5, 6]}, index=[7, 8, 9])
    features, labels = pandas_input_fn(df, pd.Series([0, 1, 0], index=df.index),
                                       batch_size=2, shuffle=False)()
    assert sorted(features) == ["a", "b"]
    got = _drain(sess, (features["b"], labels))
    assert [g[0].tolist() for g in got] == [[4, 5], [6]]
    assert [g[1].tolist() for g in got] == [[0, 1], [0]]
    features, labels = pandas_input_fn(df, df[["b"]].rename(columns={"b": "t"}),
                                       batch_size=3, shuffle=False)()
    assert list(labels) == ["t"]
    with pytest.raises(ValueError, match="Index for x and y are mismatched"):
        pandas_input_fn(df, pd.Series([0, 1, 0]), shuffle=False)
    with pytest.raises(ValueError, match="shuffle must be provided"):
        pandas_input_fn(df)


def test_pandas_missing_is_a_clear_import_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pandas_input_fn needs pandas"):
        pandas_input_fn(object(), shuffle=False)


def test_unshuffled_input_takes_no_op_seed_as_tensorflows_fifo_queue():
    """TF's numpy_input_fn(shuffle=False) builds a FIFO queue (no seed drawn), so random
    ops built after it get the op seeds they would get without it; shuffle=True builds a
    RandomShuffleQueue, which draws one."""
    for shuffle, first_value in ((False, 0.8127), (True, 0.0555)):
        with tf.Graph().as_default():
            tf.set_random_seed(1)
            numpy_input_fn({"x": np.zeros(4, np.float32)}, batch_size=2, shuffle=shuffle)()
            u = tf.random_uniform([1])
            with tf.Session() as sess:
                # TensorFlow 2.15's first values (op seeds 0 and 1)
                assert round(float(sess.run(u)[0]), 4) == first_value

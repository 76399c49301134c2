"""tf.data iterators: one-shot, initializable, re-initializable (from_structure),
feedable (string handles); static specs; per-session state; errors."""

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.data  # (tf.data until flowgraph/__init__ exports it)


def test_one_shot_iterator_end_of_sequence():
    it = tf.data.make_one_shot_iterator(tf.data.Dataset.from_tensor_slices([3, 4]))
    nxt = it.get_next()
    assert nxt.op.type == "IteratorGetNext" and nxt.dtype == tf.int32
    with tf.Session() as sess:
        assert [sess.run(nxt), sess.run(nxt)] == [3, 4]
        with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
            sess.run(nxt)
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
    with pytest.raises(ValueError, match="does not have an initializer"):
        _ = it.initializer


def test_get_next_static_structure():
    ds = tf.data.Dataset.from_tensor_slices(
        {"img": np.zeros([5, 4, 3], np.float32), "label": np.arange(5)}).batch(2)
    it = ds.make_one_shot_iterator()
    assert it.output_types == {"img": tf.float32, "label": tf.int64}
    assert it.output_shapes["img"].as_list() == [None, 4, 3]
    nxt = it.get_next()
    assert set(nxt) == {"img", "label"}
    assert nxt["img"].shape.as_list() == [None, 4, 3] and nxt["label"].dtype == tf.int64
    with tf.Session() as sess:
        v = sess.run(nxt)
    assert v["img"].shape == (2, 4, 3) and v["label"].tolist() == [0, 1]


def test_one_shot_iterator_rejects_placeholders():
    x = tf.placeholder(tf.float32, [None])
    ds = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v + 1)
    with pytest.raises(ValueError, match="make_initializable_iterator"):
        ds.make_one_shot_iterator()


def test_initializer_restarts_and_reparameterizes():
    x = tf.placeholder(tf.int32, [None])
    n = tf.placeholder(tf.int64, [])
    ds = tf.data.Dataset.from_tensor_slices(x).repeat(n)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {x: [1, 2, 3], n: 1})
        assert sess.run(nxt) == 1
        sess.run(it.initializer, {x: [1, 2, 3], n: 1})
        assert [sess.run(nxt) for _ in range(3)] == [1, 2, 3]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(nxt)
        sess.run(it.initializer, {x: [9, 8], n: 2})
        assert [sess.run(nxt) for _ in range(4)] == [9, 8, 9, 8]


def test_uninitialized_iterator_fails_with_hint():
    it = tf.data.Dataset.range(3).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.FailedPreconditionError,
                                              match="initializer"):
        sess.run(nxt)


def test_each_session_has_its_own_position():
    nxt = tf.data.Dataset.range(5).make_one_shot_iterator().get_next()
    with tf.Session() as s1, tf.Session() as s2:
        assert s1.run(nxt) == 0 and s1.run(nxt) == 1
        assert s2.run(nxt) == 0
        assert s1.run(nxt) == 2


def test_reinitializable_iterator_from_structure():
    train = tf.data.Dataset.range(10).batch(4)
    val = tf.data.Dataset.range(100, 103).batch(4)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    nxt = it.get_next()
    train_init, val_init = it.make_initializer(train), it.make_initializer(val)
    with tf.Session() as sess:
        sess.run(train_init)
        assert sess.run(nxt).tolist() == [0, 1, 2, 3]
        sess.run(val_init)
        assert sess.run(nxt).tolist() == [100, 101, 102]
        sess.run(train_init)
        assert sess.run(nxt).tolist() == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="Expected output types"):
        it.make_initializer(tf.data.Dataset.from_tensors([1.0]))


def test_feedable_iterator_with_string_handles():
    handle = tf.placeholder(tf.string, [])
    train = tf.data.Dataset.range(100).make_one_shot_iterator()
    val = tf.data.Dataset.range(500, 503).make_initializable_iterator()
    it = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
    nxt = it.get_next()
    with tf.Session() as sess:
        th, vh = sess.run([train.string_handle(), val.string_handle()])
        sess.run(val.initializer)
        assert isinstance(th, bytes)
        assert sess.run(nxt, {handle: th}) == 0
        assert sess.run(nxt, {handle: vh}) == 500
        assert sess.run(nxt, {handle: th}) == 1
        with pytest.raises(tf.errors.InvalidArgumentError):  # TF: not a ResourceHandle
            sess.run(nxt, {handle: b"nope"})


def test_training_loop_over_epochs_with_model_ops():
    x = np.arange(12, dtype=np.float32).reshape(6, 2)
    ds = tf.data.Dataset.from_tensor_slices(x).batch(4).repeat(2)
    batch = ds.make_one_shot_iterator().get_next()
    total = tf.reduce_sum(batch * 2.0)
    sums = []
    with tf.Session() as sess:
        while True:
            try:
                sums.append(sess.run(total))
            except tf.errors.OutOfRangeError:
                break
    assert len(sums) == 4
    np.testing.assert_allclose(sum(sums), 2 * 2 * x.sum())


def test_two_get_next_calls_share_the_iterator():
    it = tf.data.Dataset.range(4).make_one_shot_iterator()
    a, b = it.get_next(), it.get_next()
    with tf.Session() as sess:
        assert [sess.run(a), sess.run(b), sess.run(a)] == [0, 1, 2]


def test_dataset_from_another_graph_is_rejected():
    g = tf.Graph()
    with g.as_default():
        ds = tf.data.Dataset.from_tensor_slices(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="another graph"):
        ds.make_one_shot_iterator()


def test_captured_constants_and_graph_serialization():
    ds = tf.data.Dataset.from_tensor_slices(tf.constant([4.0, 5.0])).map(lambda v: v * 2)
    it = ds.make_one_shot_iterator()
    nxt = it.get_next()
    graph_def = tf.get_default_graph().as_graph_def()  # datasets do not break serialization
    assert any(n["op"] == "OneShotIterator" for n in graph_def["node"])
    with tf.Session() as sess:
        assert [sess.run(nxt), sess.run(nxt)] == [8.0, 10.0]


def test_shared_name_across_sessions_on_one_target():
    ds = tf.data.Dataset.range(10)
    it = ds.make_initializable_iterator(shared_name="shared_it")
    nxt = it.get_next()
    target = "local://data_iterator_test"
    try:
        with tf.Session(target) as s1:
            s1.run(it.initializer)
            assert s1.run(nxt) == 0
        with tf.Session(target) as s2:
            assert s2.run(nxt) == 1
    finally:
        tf.Session.reset(target)

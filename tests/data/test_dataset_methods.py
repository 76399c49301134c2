"""The `tf.data.Dataset` methods TF 2.15's ``tf.compat.v1.data.Dataset`` has beyond TF 1.15's
(``group_by_window``, ``scan``, ``counter``, ``from_sparse_tensor_slices``, ...): each a thin
call to its ``tf.data.experimental`` function. Every expected value below was printed by
TF 2.15 (tf.compat.v1, graph mode) running the same pipeline."""

import inspect
import os

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.data

D = tf.data.Dataset


def collect(ds, limit=100):
    """The elements of `ds` through a one-shot iterator in a Session."""
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(limit):
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                break
    return out


def ints(ds, limit=100):
    return [int(v) for v in collect(ds, limit)]


def card(ds):
    return int(tf.Session().run(ds.cardinality()))


def test_signatures_match_tf():
    # TF 2.15: inspect.signature(tf.compat.v1.data.Dataset.<name>)
    expected = {
        "from_sparse_tensor_slices": "(sparse_tensor)",
        "group_by_window": "(self, key_func, reduce_func, window_size=None, "
                           "window_size_func=None, name=None)",
        "bucket_by_sequence_length": "(self, element_length_func, bucket_boundaries, "
                                     "bucket_batch_sizes, padded_shapes=None, "
                                     "padding_values=None, pad_to_bucket_boundary=False, "
                                     "no_padding=False, drop_remainder=False, name=None)",
        "scan": "(self, initial_state, scan_func, name=None)",
        "unique": "(self, name=None)",
        "ignore_errors": "(self, log_warning=False, name=None)",
        "take_while": "(self, predicate, name=None)",
        "cardinality": "(self)",
        "rejection_resample": "(self, class_func, target_dist, initial_dist=None, seed=None, "
                              "name=None)",
        "sample_from_datasets": "(datasets, weights=None, seed=None, "
                                "stop_on_empty_dataset=False, rerandomize_each_iteration=None)",
        "choose_from_datasets": "(datasets, choice_dataset, stop_on_empty_dataset=True)",
        "counter": "(start=0, step=1, dtype=tf.int64, name=None)",
        "random": "(seed=None, rerandomize_each_iteration=None, name=None)",
        "get_single_element": "(self, name=None)",
        "sparse_batch": "(self, batch_size, row_shape, name=None)",
        "snapshot": "(self, path, compression='AUTO', reader_func=None, shard_func=None, "
                    "name=None)",
        "map_with_legacy_function": "(self, map_func, num_parallel_calls=None, "
                                    "deterministic=None)",
        "filter_with_legacy_function": "(self, predicate)",
        "rebatch": "(self, batch_size, drop_remainder=False, name=None)",
        "as_numpy_iterator": "(self)",
    }
    for name, sig in expected.items():
        got = str(inspect.signature(getattr(D, name))).split(" -> ")[0]
        assert got == sig, name
    for cls in (tf.data.TextLineDataset, tf.data.TFRecordDataset,
                tf.data.FixedLengthRecordDataset):
        assert all(hasattr(cls, name) for name in expected)


def test_group_by_window_and_bucketing():
    ds = D.range(6).group_by_window(lambda x: x % 2, lambda k, w: w.batch(3), window_size=3)
    assert [v.tolist() for v in collect(ds)] == [[0, 2, 4], [1, 3, 5]]
    ds = D.from_tensor_slices([[1, 0], [1, 2], [3, 0]]).bucket_by_sequence_length(
        lambda x: tf.shape(x)[0], [2], [2, 2])
    assert [v.tolist() for v in collect(ds)] == [[[1, 0], [1, 2]], [[3, 0]]]
    # TF: ValueError "Either the `window_size` argument or the `window_size_func` ..."
    for kw in ({}, {"window_size": 2, "window_size_func": lambda k: 2}):
        with pytest.raises(ValueError, match="window_size"):
            D.range(3).group_by_window(lambda x: x, lambda k, w: w, **kw)


def test_scan_unique_take_while_ignore_errors():
    ds = D.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s * 10))
    assert ints(ds) == [0, 0, 10, 30, 60]
    assert card(ds) == 5
    with pytest.raises(TypeError, match="pair"):  # TF: TypeError, "should return a pair"
        D.range(3).scan(tf.constant(0, tf.int64), lambda s, x: s)
    ds = D.from_tensor_slices([1, 2, 1, 3, 2]).unique()
    assert ints(ds) == [1, 2, 3]
    assert card(ds) == -2
    ds = D.range(10).take_while(lambda x: x < 4)
    assert ints(ds) == [0, 1, 2, 3]
    assert card(ds) == -2
    ds = D.from_tensor_slices([1., 0., 2.]).map(
        lambda x: tf.check_numerics(1. / x, "bad")).ignore_errors()
    assert [float(v) for v in collect(ds)] == [1.0, 0.5]


def test_cardinality_and_get_single_element():
    c = D.range(5).cardinality()
    assert (c.dtype, c.op.type) == (tf.int64, "DatasetCardinality")
    with tf.Session() as sess:
        assert sess.run(c) == 5
        assert sess.run(D.range(3).repeat().cardinality()) == -1
        assert sess.run(D.range(3).filter(lambda x: True).cardinality()) == -2
    g = D.from_tensors([1, 2]).get_single_element()
    assert g.op.type == "DatasetToSingleElement"
    with tf.Session() as sess:
        assert sess.run(g).tolist() == [1, 2]
        assert sess.run(D.from_tensors({"a": 1}).get_single_element()) == {"a": 1}
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty"):
            sess.run(D.range(0).get_single_element())
        with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
            sess.run(D.range(2).get_single_element())


def test_counter_random_and_sampling():
    assert ints(D.counter(3, 2).take(3)) == [3, 5, 7]
    assert card(D.counter()) == -1
    f = D.counter(0.5, 0.25, tf.float32)
    assert (tf.data.get_output_types(f), tf.data.get_output_shapes(f).as_list()) == \
        (tf.float32, [])
    assert [float(v) for v in collect(f.take(3))] == [0.5, 0.75, 1.0]
    r = D.random(seed=4)
    assert tf.data.get_output_types(r) == tf.int64
    assert ints(r.take(3)) == [3128586565, 2023892699, 452966358]
    assert card(r) == -1
    s = D.sample_from_datasets([D.range(3), D.range(10, 12)], weights=[0.2, 0.8], seed=7)
    assert ints(s) == [10, 0, 11, 1, 2]
    assert sorted(ints(D.sample_from_datasets([D.range(3), D.range(10, 12)], seed=1))) == \
        [0, 1, 2, 10, 11]
    with pytest.raises(ValueError, match="weights"):
        D.sample_from_datasets([D.range(2), D.range(3)], weights=[1.0])
    with pytest.raises(NotImplementedError, match="rerandomize_each_iteration"):
        D.random(seed=1, rerandomize_each_iteration=True)


def test_choose_from_datasets_stops_on_empty_by_default():
    choices = D.from_tensor_slices(tf.constant([0, 1, 0, 0, 1, 1], tf.int64))
    assert ints(D.choose_from_datasets([D.range(2), D.range(10, 13)], choices)) == [0, 10, 1]
    assert ints(D.choose_from_datasets([D.range(2), D.range(10, 13)], choices,
                                       stop_on_empty_dataset=False)) == [0, 10, 1, 11, 12]
    with pytest.raises(TypeError, match="int64"):
        D.choose_from_datasets([D.range(2)], D.range(1).map(lambda x: tf.cast(x, tf.int32)))


def test_rejection_resample():
    rr = D.from_tensor_slices(tf.constant([0, 1, 0, 1])).rejection_resample(
        lambda x: x, [0.5, 0.5], seed=1)
    assert tf.data.get_output_types(rr) == (tf.int32, tf.int32)
    assert [s.as_list() for s in tf.data.get_output_shapes(rr)] == [[], []]
    out = collect(D.from_tensor_slices([0, 1, 0, 1]).repeat().rejection_resample(
        lambda x: x, [0.5, 0.5], seed=1), 20)
    assert len(out) == 20 and all(int(c) == int(e) for c, e in out)


def test_sparse_batch_and_from_sparse_tensor_slices():
    sb = D.from_tensor_slices([[1, 2], [3, 4], [5, 6]]).sparse_batch(2, [3])
    assert tf.data.get_output_classes(sb) is tf.SparseTensor
    assert tf.data.get_output_shapes(sb).as_list() == [None, 3]
    got = [(v.indices.tolist(), v.values.tolist(), v.dense_shape.tolist())
           for v in collect(sb)]
    assert got == [([[0, 0], [0, 1], [1, 0], [1, 1]], [1, 2, 3, 4], [2, 3]),
                   ([[0, 0], [0, 1]], [5, 6], [1, 3])]
    sp = tf.SparseTensor([[0, 0], [1, 2], [1, 3]], [1., 2., 3.], [3, 4])
    fs = D.from_sparse_tensor_slices(sp)
    assert tf.data.get_output_classes(fs) == (tf.Tensor, tf.Tensor, tf.Tensor)
    assert [s.as_list() for s in tf.data.get_output_shapes(fs)] == [[None, 1], [None], [1]]
    assert tf.data.get_output_types(fs) == (tf.int64, tf.float32, tf.int64)
    rows = collect(fs)
    assert [tuple(a.tolist() for a in v) for v in rows] == [
        ([[0]], [1.0], [4]), ([[2], [3]], [2.0, 3.0], [4]), ([], [], [4])]
    assert [np.shape(a) for a in rows[2]] == [(0, 1), (0,), (1,)]
    assert card(fs) == 3
    sp3 = tf.SparseTensor([[0, 1, 1], [2, 0, 0]], [5, 6], [3, 2, 2])
    assert [tuple(a.tolist() for a in v) for v in collect(D.from_sparse_tensor_slices(sp3))] \
        == [([[1, 1]], [5], [2, 2]), ([], [], [2, 2]), ([[0, 0]], [6], [2, 2])]
    with pytest.raises(TypeError, match="SparseTensor"):  # TF: TypeError
        D.from_sparse_tensor_slices([1, 2])


def test_snapshot_legacy_functions_rebatch(tmp_path):
    ds = D.range(3).snapshot(os.fspath(tmp_path / "snap"))
    assert ints(ds) == [0, 1, 2]
    assert ints(ds) == [0, 1, 2]  # read back from the snapshot
    assert card(ds) == 3
    assert ints(D.range(3).map_with_legacy_function(lambda x: x * 2)) == [0, 2, 4]
    assert ints(D.range(5).filter_with_legacy_function(lambda x: tf.equal(x % 2, 0))) == \
        [0, 2, 4]
    rb = D.range(5).batch(4).rebatch(2)
    assert [v.tolist() for v in collect(rb)] == [[0, 1], [2, 3], [4]]
    assert tf.data.get_output_shapes(rb).as_list() == [None]
    rb = D.range(8).batch(4).rebatch(3, drop_remainder=True)
    assert tf.data.get_output_shapes(rb).as_list() == [3]
    assert card(rb) == -2
    with pytest.raises(NotImplementedError, match="list of batch sizes"):
        D.range(4).batch(2).rebatch([1, 2])


def test_as_numpy_iterator_is_eager_only():
    # TF (graph mode): RuntimeError "`tf.data.Dataset.as_numpy_iterator()` is only
    # supported in eager mode."
    with pytest.raises(RuntimeError, match="only supported in eager mode"):
        D.range(3).as_numpy_iterator()

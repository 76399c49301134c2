"""tf.data.Dataset transformations through the public API (one-shot/initializable
iterators in a Session): values, order, static dtypes/shapes, end of sequence."""

import gzip
import threading
import time

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.data  # (tf.data until flowgraph/__init__ exports it)
import flowgraph.io
from flowgraph.backends.cpu import cpu_kernel
from flowgraph.framework.registry import has_op_def, register_op

# A test-only op that sleeps (the GIL is released), to make map functions slow.
if not has_op_def("DataTestSleep"):
    register_op("DataTestSleep", attrs={"ms": 5.0})(lambda op, x: [x])

    @cpu_kernel("DataTestSleep")
    def _data_test_sleep(x, *, ms):
        time.sleep(ms / 1000.0)
        return x


def _sleep(x, ms=5.0):
    from flowgraph.ops.op_util import make_tensor

    return make_tensor("DataTestSleep", [tf.convert_to_tensor(x)], {"ms": float(ms)})


def collect(ds, limit=10_000):
    """All elements of `ds` via a one-shot iterator, as NumPy structures."""
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(limit):
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out
    raise AssertionError("dataset did not end")


def ints(values):
    return [int(v) for v in values]


# -- sources ------------------------------------------------------------------------------------
def test_from_tensor_slices_array_values_and_spec():
    x = np.arange(12, dtype=np.float64).reshape(4, 3)
    ds = tf.data.Dataset.from_tensor_slices(x)
    assert ds.output_types == tf.float64
    assert ds.output_shapes.as_list() == [3]
    assert ds.output_classes is tf.Tensor
    got = collect(ds)
    assert len(got) == 4
    np.testing.assert_array_equal(np.stack(got), x)
    assert got[0].dtype == np.float64


def test_from_tensor_slices_tuple_dict_nested():
    ds = tf.data.Dataset.from_tensor_slices(
        ({"a": [1, 2], "b": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}, ["x", "y"]))
    assert ds.output_types == ({"a": tf.int32, "b": tf.float32}, tf.string)
    assert ds.output_shapes[0]["b"].as_list() == [3]
    got = collect(ds)
    assert got[1][0]["a"] == 2 and got[1][1] == b"y"
    np.testing.assert_array_equal(got[0][0]["b"], [1.0, 2.0, 3.0])


def test_from_tensor_slices_of_tensors_and_errors():
    ds = tf.data.Dataset.from_tensor_slices(tf.constant([[1, 2], [3, 4], [5, 6]]))
    assert ds.output_shapes.as_list() == [2]
    assert [g.tolist() for g in collect(ds)] == [[1, 2], [3, 4], [5, 6]]
    with pytest.raises(ValueError, match="scalar"):
        tf.data.Dataset.from_tensor_slices(3)
    with pytest.raises(ValueError, match="same size in dimension 0"):
        tf.data.Dataset.from_tensor_slices((np.zeros(2), np.zeros(3)))


def test_from_tensors_single_element():
    ds = tf.data.Dataset.from_tensors(([1, 2, 3], "s"))
    assert ds.output_shapes[0].as_list() == [3]
    got = collect(ds)
    assert len(got) == 1 and got[0][0].tolist() == [1, 2, 3] and got[0][1] == b"s"


def test_range_forms():
    assert ints(collect(tf.data.Dataset.range(4))) == [0, 1, 2, 3]
    assert ints(collect(tf.data.Dataset.range(2, 9, 3))) == [2, 5, 8]
    assert ints(collect(tf.data.Dataset.range(5, 0, -2))) == [5, 3, 1]
    assert tf.data.Dataset.range(3).output_types == tf.int64


def test_from_generator_values_args_and_shapes():
    def gen(n):
        for i in range(int(n)):
            yield i, [float(i)] * (i + 1)

    ds = tf.data.Dataset.from_generator(gen, (tf.int64, tf.float32), ([], [None]), args=(3,))
    assert ds.output_shapes[1].as_list() == [None]
    got = collect(ds)
    assert [g[0] for g in got] == [0, 1, 2]
    assert got[2][1].tolist() == [2.0, 2.0, 2.0] and got[2][1].dtype == np.float32


def test_from_generator_mismatch_errors():
    ds = tf.data.Dataset.from_generator(lambda: iter([[1, 2], [3]]), tf.int32, [2])
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt).tolist() == [1, 2]
        with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
            sess.run(nxt)
    ds = tf.data.Dataset.from_generator(lambda: iter(["a"]), tf.int32)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="int32"):
        sess.run(nxt)


def test_generator_restarts_each_epoch():
    calls = []

    def gen():
        calls.append(1)
        yield from range(2)

    got = collect(tf.data.Dataset.from_generator(gen, tf.int64).repeat(3))
    assert ints(got) == [0, 1] * 3 and len(calls) == 3


def test_text_line_dataset_with_decode_csv(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv.gz"
    a.write_text("x,label\n1.5,1\n2.5,0\r\n")
    with gzip.open(b, "wt") as f:
        f.write("x,label\n-1.0,1\n")

    def parse(line):
        x, y = tf.io.decode_csv(line, [[0.0], [0]])
        return {"x": x}, y

    plain = tf.data.TextLineDataset(str(a)).skip(1).map(parse)
    zipped = tf.data.TextLineDataset([str(b)], compression_type="GZIP").skip(1).map(parse)
    ds = plain.concatenate(zipped)
    assert ds.output_types == ({"x": tf.float32}, tf.int32)
    got = collect(ds)
    assert [float(g[0]["x"]) for g in got] == [1.5, 2.5, -1.0]
    assert [int(g[1]) for g in got] == [1, 0, 1]
    lines = collect(tf.data.TextLineDataset([str(a)]))
    assert lines == [b"x,label", b"1.5,1", b"2.5,0"]


def test_text_line_dataset_missing_file(tmp_path):
    nxt = tf.data.TextLineDataset(str(tmp_path / "nope.txt")).make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match=r"nope\.txt"):
        sess.run(nxt)


def test_list_files(tmp_path):
    for n in ("b.txt", "a.txt", "c.dat"):
        (tmp_path / n).write_text(n)
    ds = tf.data.Dataset.list_files(str(tmp_path / "*.txt"), shuffle=False)
    assert [g.decode().rsplit("/", 1)[1] for g in collect(ds)] == ["a.txt", "b.txt"]
    shuffled = collect(tf.data.Dataset.list_files(str(tmp_path / "*.txt"), seed=3))
    assert sorted(shuffled) == sorted(collect(ds))


def test_list_files_shuffle_buffer_grows_with_the_files(tmp_path):
    # list_files shuffles with a 2**31 - 1 element buffer, as TF; the ring buffer holds
    # only the elements that arrived (it was allocated whole: ~17 GB of slots).
    import tracemalloc

    for n in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / n).write_text(n)
    tracemalloc.start()
    try:
        got = collect(tf.data.Dataset.list_files(str(tmp_path / "*.txt"), seed=7))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted(g.decode().rsplit("/", 1)[1] for g in got) == ["a.txt", "b.txt", "c.txt"]
    assert peak < 64 << 20


def test_zip_and_concatenate():
    a = tf.data.Dataset.range(3)
    b = tf.data.Dataset.from_tensor_slices(np.array([10.0, 20.0, 30.0, 40.0], np.float32))
    z = tf.data.Dataset.zip((a, {"v": b}))
    assert z.output_types == (tf.int64, {"v": tf.float32})
    got = collect(z)
    assert [(int(x), float(d["v"])) for x, d in got] == [(0, 10.0), (1, 20.0), (2, 30.0)]
    c = a.concatenate(tf.data.Dataset.range(7, 9))
    assert ints(collect(c)) == [0, 1, 2, 7, 8]
    with pytest.raises(TypeError, match="same structure and dtypes"):
        a.concatenate(b)


def test_iterating_in_python_points_to_iterators():
    with pytest.raises(TypeError, match="make_one_shot_iterator"):
        iter(tf.data.Dataset.range(2))


# -- map / filter / interleave -------------------------------------------------------------------
def test_map_unpacks_tuples_and_uses_tf_ops():
    ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [0.5, 1.5, 2.5]))
    ds = ds.map(lambda i, f: {"sum": tf.cast(i, tf.float32) + f, "i": i * 2})
    assert ds.output_types == {"i": tf.int32, "sum": tf.float32}
    assert ds.output_shapes["sum"].as_list() == []
    got = collect(ds)
    assert [float(g["sum"]) for g in got] == [1.5, 3.5, 5.5]
    assert [int(g["i"]) for g in got] == [2, 4, 6]


def test_map_dict_argument_and_list_result():
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [3, 4]})
    ds = ds.map(lambda d: [d["a"] + d["b"], d["a"]])
    assert isinstance(ds.output_types, tuple)
    assert [(int(x), int(y)) for x, y in collect(ds)] == [(4, 1), (6, 2)]


def test_map_captures_a_tensor_of_the_outer_graph():
    # TF: dataset functions capture outer tensors (see tests/compat/test_tf1_programs_wild7.py)
    c = tf.constant(2)
    ds = tf.data.Dataset.range(3).map(lambda x: x * tf.cast(c, tf.int64))
    assert [int(x) for x in collect(ds)] == [0, 2, 4]


def test_parallel_map_keeps_order_and_is_faster():
    n = 40
    base = tf.data.Dataset.range(n)
    serial = base.map(lambda x: _sleep(x * 3, ms=10))
    parallel = base.map(lambda x: _sleep(x * 3, ms=10), num_parallel_calls=8)
    t0 = time.perf_counter()
    got_serial = collect(serial)
    t_serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    got_parallel = collect(parallel)
    t_parallel = time.perf_counter() - t0
    assert ints(got_serial) == ints(got_parallel) == [3 * i for i in range(n)]
    assert t_serial > n * 0.010
    assert t_parallel < t_serial * 0.6, (t_serial, t_parallel)


def test_autotune_map_and_filter():
    ds = tf.data.Dataset.range(10).map(lambda x: x + 1,
                                       num_parallel_calls=tf.data.experimental.AUTOTUNE)
    ds = ds.filter(lambda x: tf.equal(x % 3, 0))
    assert ints(collect(ds)) == [3, 6, 9]
    with pytest.raises(ValueError, match=r"scalar tf\.bool"):
        tf.data.Dataset.range(3).filter(lambda x: x)


def test_interleave_order_matches_tensorflow():
    ds = tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4)
    assert ints(collect(ds)) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4,
                                 3, 3, 4, 4, 5, 5, 5, 5, 5, 5]


def test_flat_map_and_interleave_over_files(tmp_path):
    names = []
    for k in range(3):
        p = tmp_path / f"f{k}.txt"
        p.write_text("h\n" + "".join(f"{k}{j}\n" for j in range(2)))
        names.append(str(p))
    files = tf.data.Dataset.from_tensor_slices(names)
    flat = files.flat_map(lambda f: tf.data.TextLineDataset(f).skip(1))
    assert collect(flat) == [b"00", b"01", b"10", b"11", b"20", b"21"]
    mixed = files.interleave(lambda f: tf.data.TextLineDataset(f).skip(1), cycle_length=3)
    assert collect(mixed) == [b"00", b"10", b"20", b"01", b"11", b"21"]
    with pytest.raises(TypeError, match=r"must return a tf\.data\.Dataset"):
        files.flat_map(lambda f: f)


# -- batching -----------------------------------------------------------------------------------
def test_batch_shapes_and_remainder():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(14).reshape(7, 2)).batch(3)
    assert ds.output_shapes.as_list() == [None, 2]
    got = collect(ds)
    assert [g.shape for g in got] == [(3, 2), (3, 2), (1, 2)]
    dropped = tf.data.Dataset.range(7).batch(3, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [3]
    assert [g.tolist() for g in collect(dropped)] == [[0, 1, 2], [3, 4, 5]]


def test_batch_of_different_shapes_fails():
    ds = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x)).batch(2)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError,
                                              match="different shapes"):
        sess.run(nxt)


def test_padded_batch():
    ds = tf.data.Dataset.range(1, 5).map(lambda x: (tf.fill([x], x), x))
    pb = ds.padded_batch(2, padded_shapes=([None], []), padding_values=(np.int64(-1),
                                                                         np.int64(0)))
    assert pb.output_shapes[0].as_list() == [None, None]
    got = collect(pb)
    assert got[0][0].tolist() == [[1, -1], [2, 2]]
    assert got[1][0].tolist() == [[3, 3, 3, -1], [4, 4, 4, 4]]
    fixed = ds.padded_batch(2, ([5], []), drop_remainder=True)
    assert fixed.output_shapes[0].as_list() == [2, 5]
    assert collect(fixed)[0][0].tolist() == [[1, 0, 0, 0, 0], [2, 2, 0, 0, 0]]


def test_unbatch_and_apply():
    ds = tf.data.Dataset.range(5).batch(2).unbatch()
    assert ds.output_shapes.as_list() == []
    assert ints(collect(ds)) == [0, 1, 2, 3, 4]
    ds2 = tf.data.Dataset.range(4).batch(3).apply(tf.data.experimental.unbatch())
    assert ints(collect(ds2)) == [0, 1, 2, 3]


# -- counting ----------------------------------------------------------------------------------
def test_repeat_take_skip_shard():
    base = tf.data.Dataset.range(4)
    assert ints(collect(base.repeat(2))) == [0, 1, 2, 3] * 2
    assert ints(collect(base.repeat().take(10))) == [0, 1, 2, 3] * 2 + [0, 1]
    assert ints(collect(base.skip(1).take(2))) == [1, 2]
    assert ints(collect(base.take(-1))) == [0, 1, 2, 3]
    assert collect(base.skip(-1)) == []
    assert ints(collect(tf.data.Dataset.range(10).shard(3, 1))) == [1, 4, 7]


def test_cache_replays_first_epoch():
    calls = []

    def gen():
        calls.append(1)
        yield from [5, 6]

    ds = tf.data.Dataset.from_generator(gen, tf.int64).cache().repeat(3)
    assert ints(collect(ds)) == [5, 6] * 3
    assert len(calls) == 1


# -- shuffle -----------------------------------------------------------------------------------
def _shuffled(seed=None, graph_seed=None, epochs=1, reshuffle=None, buffer=10):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        ds = tf.data.Dataset.range(10).shuffle(buffer, seed=seed,
                                               reshuffle_each_iteration=reshuffle)
        got = ints(collect(ds.repeat(epochs)))
    return [got[i * 10:(i + 1) * 10] for i in range(epochs)]


def test_shuffle_is_a_permutation_and_seeded():
    a = _shuffled(seed=7)[0]
    assert sorted(a) == list(range(10)) and a != list(range(10))
    assert _shuffled(seed=7)[0] == a
    assert _shuffled(graph_seed=3)[0] == _shuffled(graph_seed=3)[0]
    assert _shuffled(seed=7)[0] != _shuffled(seed=8)[0]


def test_shuffle_reshuffles_each_epoch_unless_disabled():
    e1, e2 = _shuffled(seed=1, epochs=2)
    assert sorted(e2) == list(range(10)) and e1 != e2
    f1, f2 = _shuffled(seed=1, epochs=2, reshuffle=False)
    assert f1 == f2


def test_small_shuffle_buffer_keeps_locality():
    got = _shuffled(seed=5, buffer=2)[0]
    assert sorted(got) == list(range(10))
    assert all(v <= i + 1 for i, v in enumerate(got))


def test_unseeded_shuffle_differs_between_runs():
    runs = {tuple(_shuffled()[0]) for _ in range(3)}
    assert len(runs) > 1


# -- prefetch ------------------------------------------------------------------------------------
def test_prefetch_overlaps_producer_and_consumer():
    n, delay = 30, 0.005

    def slow():
        for i in range(n):
            time.sleep(delay)
            yield i

    def consume(ds):
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            t0 = time.perf_counter()
            for i in range(n):
                assert sess.run(nxt) == i
                time.sleep(delay)  # the "training step"
            return time.perf_counter() - t0

    plain = consume(tf.data.Dataset.from_generator(slow, tf.int64))
    fetched = consume(tf.data.Dataset.from_generator(slow, tf.int64).prefetch(4))
    assert plain >= 2 * n * delay
    assert fetched < 0.8 * plain, (plain, fetched)


def test_prefetch_propagates_errors_in_order():
    def gen():
        yield 1
        raise RuntimeError("boom")

    ds = tf.data.Dataset.from_generator(gen, tf.int64).prefetch(2)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == 1
        with pytest.raises(tf.errors.OpError, match="boom"):
            sess.run(nxt)


def test_prefetch_thread_stops_when_session_closes():
    def forever():
        i = 0
        while True:
            yield i
            i += 1

    before = {t for t in threading.enumerate() if t.name == "flowgraph-prefetch"}
    ds = tf.data.Dataset.from_generator(forever, tf.int64).prefetch(3)
    nxt = ds.make_one_shot_iterator().get_next()
    sess = tf.Session()
    assert sess.run(nxt) == 0
    sess.close()
    deadline = time.time() + 5
    while time.time() < deadline:
        alive = {t for t in threading.enumerate()
                 if t.name == "flowgraph-prefetch" and t.is_alive()} - before
        if not alive:
            break
        time.sleep(0.02)
    assert not alive


# -- map-then-batch fusion -------------------------------------------------------------------
def test_map_batch_fusion_matches_per_element_results():
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    src = tf.data.Dataset.from_tensor_slices((x, np.arange(5)))

    def f(v, i):
        return {"a": v * 2.0 + np.float32([1.0, -1.0]), "b": tf.cast(i, tf.float32) - 0.5}

    def g(v, i):  # not elementwise (a reduction and an indexed read): no fusion
        return tf.reduce_sum(v) + tf.cast(i, tf.float32) - v[0]

    fused, plain = src.map(f).batch(2), src.map(g).batch(2)
    assert fused._fused is not None and plain._fused is None
    got = collect(fused)
    np.testing.assert_allclose(got[0]["a"], x[:2] * 2 + [1.0, -1.0])
    np.testing.assert_allclose(np.concatenate([b["b"] for b in got]), np.arange(5) - 0.5)
    assert [b["a"].shape for b in got] == [(2, 2), (2, 2), (1, 2)]
    np.testing.assert_allclose(np.concatenate(collect(plain)),
                               x.sum(1) + np.arange(5) - x[:, 0])


def test_map_batch_fusion_with_decode_csv():
    lines = [f"{i},{i / 2}" for i in range(7)]
    ds = tf.data.Dataset.from_tensor_slices(lines).map(
        lambda r: tf.io.decode_csv(r, [[0], [0.0]])).batch(3, drop_remainder=True)
    assert ds._fused is not None
    assert ds.output_shapes[0].as_list() == [3]
    got = collect(ds)
    assert [b[0].tolist() for b in got] == [[0, 1, 2], [3, 4, 5]]
    np.testing.assert_allclose(got[1][1], [1.5, 2.0, 2.5])


def test_zlib_text_lines_and_generator_args_from_placeholders(tmp_path):
    import zlib

    p = tmp_path / "z.txt"
    p.write_bytes(zlib.compress(b"a\nbb\n\nccc"))
    assert collect(tf.data.TextLineDataset(str(p), compression_type="ZLIB")) == [
        b"a", b"bb", b"", b"ccc"]
    n = tf.placeholder(tf.int64, [])
    word = tf.placeholder(tf.string, [])
    ds = tf.data.Dataset.from_generator(lambda k, w: ((w * int(k)) for _ in range(2)),
                                        tf.string, [], args=(n, word))
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {n: 3, word: "ab"})
        assert sess.run(nxt) == b"ababab"


def test_fetched_elements_do_not_alias_the_source():
    x = np.arange(6).reshape(3, 2)
    ds = tf.data.Dataset.from_tensor_slices(x).repeat(2)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        first = sess.run(nxt)
        first[:] = -1
        assert [sess.run(nxt).tolist() for _ in range(3)] == [[2, 3], [4, 5], [0, 1]]
    assert x[0].tolist() == [0, 1]

"""tf.data.experimental names added in session 16 (TF 2.15 compat.v1 gap-fill): option
enums and groups, Optional, group_by_reducer, rejection_resample, SqlDataset,
TFRecordWriter, snapshot, cardinality helpers, tables from datasets, variants, the
service module, iterator saveables and CheckpointInputPipelineHook. Expected values were
recorded from TensorFlow 2.15 (tf.compat.v1) with the tf-oracle."""

from __future__ import annotations

import doctest
import os
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import flowgraph as tf
import flowgraph.data
from flowgraph.data import (
    dataset_ops_experimental_misc,
    dataset_ops_grouping,
    dataset_ops_io,
    dataset_ops_optional,
)

E = tf.data.experimental


@pytest.mark.parametrize("module", [dataset_ops_experimental_misc, dataset_ops_grouping,
                                    dataset_ops_io, dataset_ops_optional])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0


def _all(ds, limit=1000):
    nxt = tf.data.make_one_shot_iterator(ds).get_next()
    out = []
    with tf.Session() as sess:
        try:
            for _ in range(limit):
                out.append(sess.run(nxt))
        except tf.errors.OutOfRangeError:
            pass
    return out


@pytest.fixture(autouse=True)
def _graph():
    with tf.Graph().as_default():
        yield


def test_enums_options_and_structure_names():
    assert [(m.name, m.value) for m in E.AutoShardPolicy] == [
        ("OFF", -1), ("AUTO", 0), ("FILE", 1), ("DATA", 2), ("HINT", 3)]
    assert [m.name for m in E.AutotuneAlgorithm] == [
        "DEFAULT", "HILL_CLIMB", "GRADIENT_DESCENT", "MAX_PARALLELISM", "STAGE_BASED"]
    assert [(m.name, m.value) for m in E.ExternalStatePolicy] == [
        ("WARN", 0), ("IGNORE", 1), ("FAIL", 2)]
    assert E.SHARD_HINT == -1
    opts = tf.data.Options()
    assert type(opts.experimental_distribute) is E.DistributeOptions
    assert type(opts.autotune) is E.AutotuneOptions
    assert type(opts.experimental_optimization) is E.OptimizationOptions
    assert E.ThreadingOptions is tf.data.ThreadingOptions
    assert E.AutotuneOptions().cpu_budget is None
    assert E.DatasetStructure is tf.data.DatasetSpec and E.TensorStructure is tf.TensorSpec
    assert E.SparseTensorStructure is tf.SparseTensorSpec and E.Structure is tf.TypeSpec
    assert E.RaggedTensorStructure is tf.RaggedTensorSpec
    assert repr(E.OptionalStructure(tf.TensorSpec([], tf.int32))).startswith("OptionalSpec(")
    assert E.TensorArrayStructure(tf.float32, [2], True, False) == tf.TensorArraySpec(
        [2], tf.float32, True, False)
    with pytest.raises(ValueError, match="only supported in eager mode"):
        E.enable_debug_mode()


def test_get_structure_from_list_and_cardinality():
    ds = tf.data.Dataset.from_tensor_slices(({"a": [1, 2]}, [[1.0, 2.0], [3.0, 4.0]]))
    assert E.get_structure(ds) == ({"a": tf.TensorSpec([], tf.int32)},
                                   tf.TensorSpec([2], tf.float32))
    assert tf.data.Dataset.range(3).element_spec == tf.TensorSpec([], tf.int64)
    with pytest.raises(TypeError, match=r"must be a `tf.data.Dataset` or tf.data.Iterator"):
        E.get_structure(tf.constant(1))
    fl = E.from_list([(1, "a"), (2, "b")])
    assert E.get_structure(fl) == (tf.TensorSpec([], tf.int32), tf.TensorSpec([], tf.string))
    assert [tuple(x) for x in _all(fl)] == [(1, b"a"), (2, b"b")]
    with pytest.raises(ValueError, match="should not be empty"):
        E.from_list([])
    with tf.Session() as sess:
        assert sess.run(E.cardinality(fl)) == 2
        filtered = tf.data.Dataset.range(5).filter(lambda x: x > 1)
        assert sess.run(E.cardinality(filtered.apply(E.assert_cardinality(5)))) == 5


@pytest.mark.parametrize("n, message", [
    (7, "Input dataset was expected to contain 7 elements but contained only 5 elements."),
    (3, "Input dataset was expected to contain 3 elements but contained at least 4 elements."),
])
def test_assert_cardinality_errors(n, message):
    nxt = tf.data.make_one_shot_iterator(
        tf.data.Dataset.range(5).apply(E.assert_cardinality(n))).get_next()
    with tf.Session() as sess:
        for _ in range(min(n, 5)):
            sess.run(nxt)
        with pytest.raises(tf.errors.FailedPreconditionError, match=message):
            sess.run(nxt)


def test_pad_to_cardinality():
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2]}).apply(E.pad_to_cardinality(5))
    assert ds.element_spec == {"a": tf.TensorSpec([], tf.int32),
                               "valid": tf.TensorSpec([], tf.bool)}
    got = [(int(e["a"]), bool(e["valid"])) for e in _all(ds)]
    assert got == [(1, True), (2, True), (0, False), (0, False), (0, False)]
    with pytest.raises(ValueError, match="requires its input dataset to be a dictionary"):
        tf.data.Dataset.range(2).apply(E.pad_to_cardinality(5))


def test_optional_and_get_next_as_optional():
    it = tf.data.make_initializable_iterator(tf.data.Dataset.range(2))
    opt = E.get_next_as_optional(it)
    assert isinstance(opt, E.Optional)
    assert opt.element_spec == tf.TensorSpec([], tf.int64)
    hv, gv = opt.has_value(), opt.get_value()
    assert (hv.op.type, gv.op.type) == ("OptionalHasValue", "OptionalGetValue")
    assert opt._variant_tensor.op.type == "IteratorGetNextAsOptional"
    fv = E.Optional.from_value((tf.constant(1), tf.constant([1.0, 2.0])))
    empty = E.Optional.empty(tf.TensorSpec([], tf.int32))
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert sess.run([hv, gv]) == [True, 0]
        assert sess.run([hv, gv]) == [True, 1]
        assert not sess.run(hv)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"The given optional does not have a value."):
            sess.run(gv)
        a, b = sess.run(fv.get_value())
        assert a == 1 and b.tolist() == [1.0, 2.0] and sess.run(fv.has_value())
        assert not sess.run(empty.has_value())


def test_group_by_reducer():
    r = E.Reducer(lambda k: np.int64(0), lambda s, x: s + x, lambda s: s)
    ds = tf.data.Dataset.range(10).apply(E.group_by_reducer(lambda x: x % 3, r))
    assert [int(x) for x in _all(ds)] == [18, 12, 15]  # TF's values
    r2 = E.Reducer(lambda k: (k, np.int64(0)), lambda s, x: (s[0], s[1] + 1),
                   lambda k, c: {"key": k, "count": c})
    ds = tf.data.Dataset.range(7).apply(E.group_by_reducer(lambda x: x % 2, r2))
    assert [(int(e["key"]), int(e["count"])) for e in _all(ds)] == [(0, 4), (1, 3)]
    with pytest.raises(ValueError, match=r"return a scalar tf.int64 tensor"):
        tf.data.Dataset.range(7).apply(E.group_by_reducer(lambda x: tf.cast(x, tf.int32), r2))


@pytest.mark.parametrize("initial", [[0.2, 0.8], None])
def test_rejection_resample_balances_classes(initial):
    ds = tf.data.Dataset.range(1000).map(lambda x: (x, tf.cast(x % 10 < 8, tf.int32)))
    rs = ds.apply(E.rejection_resample(lambda x, y: y, [0.5, 0.5], initial, seed=1))
    assert rs.element_spec == (tf.TensorSpec([], tf.int32),
                               (tf.TensorSpec([], tf.int64), tf.TensorSpec([], tf.int32)))
    out = _all(rs, 400)
    assert all(int(c) == int(e[1]) for c, e in out)
    counts = np.bincount([int(c) for c, _ in out], minlength=2)
    # TF drew [188 212] (with initial_dist) and [132 168] (estimated) here
    assert len(out) == 400 and abs(counts[0] - 200) < 45
    with pytest.raises(TypeError, match="not in list of allowed values"):
        ds.apply(E.rejection_resample(lambda x, y: tf.cast(y, tf.float32), [0.5, 0.5]))


def test_sql_dataset(tmp_path):
    db = str(tmp_path / "x.db")
    with sqlite3.connect(db) as c:
        c.execute("create table t (name text, age integer, h real)")
        c.executemany("insert into t values (?,?,?)", [("a", 3, 1.5), ("bb", 40, 2.25)])
    sd = E.SqlDataset("sqlite", db, "select name, age, h from t",
                      (tf.string, tf.int32, tf.float64))
    assert [tuple(r) for r in _all(sd)] == [(b"a", 3, 1.5), (b"bb", 40, 2.25)]
    assert [bool(x) for x in _all(E.SqlDataset("sqlite", db, "select age from t",
                                               tf.bool))] == [True, True]
    cases = [("mysql", "select name from t", tf.string, tf.errors.InvalidArgumentError,
              "The database type, mysql, is not supported by SqlDataset"),
             ("sqlite", "select nm from t", tf.string, tf.errors.UnknownError,
              "Prepare\\(\\) failed: \\[1\\] no such column: nm: select nm from t"),
             ("sqlite", "select name, age from t", tf.string, tf.errors.InvalidArgumentError,
              "The number of columns in query \\(2\\) must match the number of elements in "
              "output_types \\(1\\)")]
    for driver, query, dtype, err, msg in cases:
        with pytest.raises(err, match=msg):
            _all(E.SqlDataset(driver, db, query, dtype))


def test_tfrecord_writer(tmp_path):
    fn = str(tmp_path / "r.tfrecord")
    op = E.TFRecordWriter(fn).write(tf.data.Dataset.from_tensor_slices([b"ab", b"cde"]))
    assert op.type == "DatasetToTFRecord"
    with tf.Session() as sess:
        sess.run(op)
    assert _all(tf.data.TFRecordDataset(fn)) == [b"ab", b"cde"]
    gz = E.TFRecordWriter(fn + ".gz", compression_type="GZIP").write(
        tf.data.Dataset.from_tensors(b"z"))
    with tf.Session() as sess:
        sess.run(gz)
    assert _all(tf.data.TFRecordDataset(fn + ".gz", compression_type="GZIP")) == [b"z"]
    with pytest.raises(TypeError, match=r"produces scalar `tf.string` elements"):
        E.TFRecordWriter(fn).write(tf.data.Dataset.range(2))


def test_snapshot_persists_across_processes(tmp_path):
    path = str(tmp_path / "snap")
    script = textwrap.dedent(f"""
        import flowgraph as tf, numpy as np
        calls = []
        def f(x):
            return tf.py_func(lambda v: (calls.append(1), v * 3)[1], [x], tf.int64)
        ds = tf.data.Dataset.from_tensor_slices(np.arange(5)).map(f)
        ds = ds.map(lambda x: (x, tf.strings.as_string(x))).apply(
            tf.data.experimental.snapshot({path!r}))
        nxt = tf.data.make_one_shot_iterator(ds).get_next()
        with tf.Session() as s:
            out = []
            try:
                while True:
                    out.append(s.run(nxt))
            except tf.errors.OutOfRangeError:
                pass
        print([(int(a), b.decode()) for a, b in out], len(calls))
    """)
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    expected = "[(0, '0'), (3, '3'), (6, '6'), (9, '9'), (12, '12')]"
    assert first.stdout.strip() == expected + " 5", first.stderr
    assert second.stdout.strip() == expected + " 0", second.stderr  # read from disk
    assert len(os.listdir(path)) == 1


def test_tables_from_dataset():
    keys = tf.data.Dataset.from_tensor_slices([b"a", b"b", b"c"])
    tb = E.table_from_dataset(tf.data.Dataset.zip((keys, tf.data.Dataset.range(10, 13))),
                              default_value=-1)
    idx = E.index_table_from_dataset(keys, num_oov_buckets=1)
    di = E.DatasetInitializer(tf.data.Dataset.zip((keys, tf.data.Dataset.range(3))))
    assert (di.key_dtype, di.value_dtype) == (tf.string, tf.int64)
    h = tf.lookup.StaticHashTable(di, -7)
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        assert sess.run(tb.lookup(tf.constant([b"b", b"z", b"a"]))).tolist() == [11, -1, 10]
        assert sess.run(tb.size()) == 3
        assert sess.run(idx.lookup(tf.constant([b"c", b"q"]))).tolist() == [2, 3]
        assert sess.run(h.lookup(tf.constant([b"c"]))).tolist() == [2]
    with pytest.raises(TypeError, match="pairs"):
        E.DatasetInitializer(keys)


def test_variant_round_trip_and_legacy_map_and_batch():
    v = E.to_variant(tf.data.Dataset.range(3))
    assert v.dtype == tf.variant and v.op.name == "RangeDataset"
    back = E.from_variant(v, tf.TensorSpec([], tf.int64))
    assert [int(x) for x in _all(back)] == [0, 1, 2]
    out = _all(tf.data.Dataset.range(5).apply(
        E.map_and_batch_with_legacy_function(lambda x: x * 2, 2)))
    assert [x.tolist() for x in out] == [[0, 2], [4, 6], [8]]


def test_service_without_dispatcher_is_unavailable():
    ds = tf.data.Dataset.range(3).apply(
        E.service.distribute("parallel_epochs", "grpc://localhost:5050"))
    assert ds.element_spec == tf.TensorSpec([], tf.int64)
    # TensorFlow retries forever here; flowgraph, which runs no service, says so at once
    with pytest.raises(tf.errors.UnavailableError, match="dispatcher at localhost:5050"):
        _all(ds)


_SAVER_SCRIPT = """
import os, sys
import flowgraph as tf
d, phase = sys.argv[1], sys.argv[2]
ds = tf.data.Dataset.range(20).shuffle(20, seed=3).batch(3)
it = tf.data.make_initializable_iterator(ds)
nx = it.get_next()
v = tf.Variable(0, name="v")
inc = tf.assign_add(v, 1)
tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                     tf.data.experimental.make_saveable_from_iterator(it))
saver = tf.train.Saver()
with tf.Session() as s:
    s.run([tf.global_variables_initializer(), it.initializer])
    if phase == "save":
        for _ in range(2):
            print(s.run(nx).tolist(), s.run(inc))
        saver.save(s, os.path.join(d, "m"))
        print(s.run(nx).tolist())
    else:
        saver.restore(s, tf.train.latest_checkpoint(d))
        print(s.run(v), s.run(nx).tolist(), s.run(nx).tolist())
"""


def test_iterator_saveable_restores_in_a_fresh_process(tmp_path):
    script = tmp_path / "s.py"
    script.write_text(_SAVER_SCRIPT)
    run = [sys.executable, str(script), str(tmp_path)]
    saved = subprocess.run([*run, "save"], capture_output=True, text=True)
    loaded = subprocess.run([*run, "load"], capture_output=True, text=True)
    # TensorFlow 2.15 prints exactly these lines
    assert saved.stdout.split("\n")[:3] == ["[4, 16, 14] 1", "[11, 12, 18] 2", "[6, 17, 1]"], \
        saved.stderr
    assert loaded.stdout.strip() == "2 [6, 17, 1] [8, 0, 13]", loaded.stderr


def test_make_saveable_names():
    it = tf.data.make_initializable_iterator(tf.data.Dataset.range(4))
    sv = E.make_saveable_from_iterator(it)
    assert sv.name == it._handle.name and sv.specs[0].name == it._handle.name + "_STATE"
    assert sv.specs[0].tensor.op.type == "SerializeIterator"


_HOOK_SCRIPT = """
# Estimator training that checkpoints its input pipeline and resumes it in a new process.
import os, sys
import numpy as np
import flowgraph as tf

model_dir = sys.argv[1]
seen = []

def input_fn():
    xs = np.arange(40, dtype=np.float32).reshape(20, 2)
    ds = tf.data.Dataset.from_tensor_slices((xs[:, :1], xs[:, 1:]))
    ds = ds.shuffle(20, seed=7).batch(2).repeat()
    return ds

def model_fn(features, labels, mode):
    w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
    pred = tf.matmul(features, w)
    loss = tf.reduce_mean(tf.square(pred - labels))
    first = tf.identity(features[:, 0], name="first")
    train = tf.train.GradientDescentOptimizer(1e-4).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)

class Record(tf.train.SessionRunHook):
    def before_run(self, ctx):
        return tf.train.SessionRunArgs(tf.get_default_graph().get_tensor_by_name("first:0"))
    def after_run(self, ctx, values):
        seen.append(values.results.tolist())

cfg = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=3)
est = tf.estimator.Estimator(model_fn, config=cfg)
hook = tf.data.experimental.CheckpointInputPipelineHook(est)
est.train(input_fn, steps=int(sys.argv[2]), hooks=[hook, Record()])
print("batches:", seen)
print("input checkpoints:",
      sorted(f for f in os.listdir(model_dir) if f.startswith("checkpoint")))
print("step:", est.get_variable_value("global_step"))
"""


def test_checkpoint_input_pipeline_hook_resumes_in_a_fresh_process(tmp_path):
    script = tmp_path / "hook.py"
    script.write_text(_HOOK_SCRIPT)
    model_dir = str(tmp_path / "m")
    first = subprocess.run([sys.executable, str(script), model_dir, "4"], capture_output=True,
                           text=True)
    second = subprocess.run([sys.executable, str(script), model_dir, "3"],
                            capture_output=True, text=True)
    # TensorFlow 2.15's output for the same two runs
    assert "batches: [[24.0, 10.0], [16.0, 4.0], [18.0, 36.0], [20.0, 8.0]]" in first.stdout, \
        first.stderr
    assert "batches: [[0.0, 28.0], [6.0, 2.0], [30.0, 34.0]]" in second.stdout, second.stderr
    assert "input checkpoints: ['checkpoint', 'checkpoint_input']" in second.stdout
    assert "step: 7" in second.stdout

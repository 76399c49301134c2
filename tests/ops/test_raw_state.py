"""The v1 stateful and data-flow op types (flowgraph/ops/state_v1_ops.py,
tensor_array_v1_ops.py, barrier_ops.py, map_staging_ops.py): a TF 1.0-era GraphDef that
TensorFlow wrote (tests/data/tf_formats/raw_state/, made by make_raw_state.py), and each
family through ``tf.raw_ops`` with the values, shapes and errors TensorFlow 2.15 gives
(checked with the tf-oracle; quoted inline)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.framework.dtypes import float32_ref as FLOAT32_REF
from flowgraph.framework.dtypes import string_ref as STRING_REF
from flowgraph.ops.op_util import make_op

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "tf_formats", "raw_state")
r = tf.raw_ops


# -- a GraphDef TensorFlow wrote ----------------------------------------------------------
def test_tf1_input_pipeline_graph_imports_and_runs_with_tensorflows_values():
    graph_def = tf.GraphDef()
    with open(os.path.join(DATA, "graph.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    with open(os.path.join(DATA, "steps.json")) as f:
        steps = json.load(f)
    expected = np.load(os.path.join(DATA, "expected.npz"))
    files = [os.path.join(DATA, "words_a.txt"), os.path.join(DATA, "words_b.txt")]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        types = {o.type for o in g.get_operations()}
        assert {"FIFOQueue", "QueueEnqueueMany", "QueueDequeueMany", "TextLineReader",
                "ReaderRead", "HashTable", "InitializeTable", "LookupTableFind", "Variable",
                "RefMerge", "RefSelect", "TemporaryVariable", "Stack", "TensorArrayV2",
                "TensorArrayPack", "Barrier", "MapStage", "OrderedMapUnstageNoKey",
                "ConditionalAccumulator", "RefExit", "RefNextIteration"} <= types
        assert g.get_tensor_by_name("filename_queue:0").dtype == STRING_REF
        assert g.get_tensor_by_name("filename_queue:0").shape.as_list() == [2]
        checked = 0
        with tf.Session(graph=g) as sess:
            for i, (fetches, feeds) in enumerate(steps):
                feed = {k: (files if v == "$files" else v) for k, v in feeds.items()}
                out = sess.run(fetches, feed)
                for j, (name, value) in enumerate(zip(fetches, out)):
                    if ":" not in name:
                        continue
                    want = expected[f"step{i}_{j}"]
                    value = np.asarray(value)
                    if want.dtype.kind == "S":
                        assert value.astype(bytes).tolist() == want.tolist(), name
                    else:
                        assert value.dtype == want.dtype, name
                        np.testing.assert_array_equal(value, want, err_msg=name)
                    checked += 1
    assert checked == len(expected.files) == 53


def test_queue_runner_drives_the_imported_tf1_pipeline():
    from flowgraph.framework.tf_formats.meta_graph_messages import QueueRunnerDefProto

    graph_def = tf.GraphDef()
    with open(os.path.join(DATA, "graph.pb"), "rb") as f:
        graph_def.ParseFromString(f.read())
    files = [os.path.join(DATA, "words_a.txt"), os.path.join(DATA, "words_b.txt")]
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="")
        # what a TF 1.0 .meta file's queue_runners collection holds for the batch queue
        runner = tf.train.QueueRunner(queue_runner_def=QueueRunnerDefProto(
            queue_name="batch_queue", enqueue_op_name=["batch_enqueue"],
            close_op_name="batch_queue_close", cancel_op_name="batch_queue_close"))
        up_to = [g.get_tensor_by_name("batch_up_to:0"), g.get_tensor_by_name("batch_up_to:1")]
        with tf.Session(graph=g) as sess:
            sess.run("vocab_init")
            sess.run("filename_queue_enqueue", {"files:0": files})
            sess.run("filename_queue_close")
            coord = tf.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, start=True)
            lines, ids = [], []
            try:
                while True:  # the reader's OutOfRange closes the batch queue
                    a, b = sess.run(up_to)
                    lines += a.tolist()
                    ids += b.tolist()
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    assert lines == [b"apple", b"banana", b"cherry", b"banana", b"durian", b"apple"]
    assert ids == [10, 20, 30, 20, -1, 10]


# -- queues -------------------------------------------------------------------------------
def test_v1_queue_handles_are_string_refs_of_two_strings_and_dequeue_shapes_unknown():
    with tf.Graph().as_default():
        q = r.FIFOQueue(component_types=[tf.float32, tf.int32], shapes=[[2], []], capacity=5)
        assert (q.dtype, q.shape.as_list()) == (STRING_REF, [2])
        d = r.QueueDequeueMany(handle=q, n=2, component_types=[tf.float32, tf.int32])
        # TF: a v1 handle carries no element shapes
        assert [t.shape.ndims for t in d] == [None, None]
        assert [t.dtype for t in d] == [tf.float32, tf.int32]
        assert r.QueueSize(handle=q).dtype == tf.int32
        assert r.QueueIsClosed(handle=q).dtype == tf.bool
        for make in (lambda: r.PaddingFIFOQueue(component_types=[tf.float32],
                                                shapes=[[None]]),
                     lambda: r.PriorityQueue(component_types=[tf.float32], shapes=[[]]),
                     lambda: r.RandomShuffleQueue(component_types=[tf.float32])):
            h = make()
            assert (h.dtype, h.shape.as_list()) == (STRING_REF, [2])


def test_v1_queue_runs_as_tensorflows():
    with tf.Graph().as_default():
        q = r.FIFOQueue(component_types=[tf.float32, tf.int32], shapes=[[2], []], capacity=5)
        enq = r.QueueEnqueueMany(handle=q, components=[
            tf.constant([[1., 2.], [3., 4.], [5., 6.]]), tf.constant([7, 8, 9])])
        many = r.QueueDequeueMany(handle=q, n=2, component_types=[tf.float32, tf.int32])
        up_to = r.QueueDequeueUpTo(handle=q, n=5, component_types=[tf.float32, tf.int32])
        size, closed = r.QueueSize(handle=q), r.QueueIsClosed(handle=q)
        with tf.Session() as sess:
            sess.run(enq)
            assert sess.run(size) == 3
            x, y = sess.run(many)
            np.testing.assert_array_equal(x, [[1., 2.], [3., 4.]])
            np.testing.assert_array_equal(y, [7, 8])
            sess.run(r.QueueClose(handle=q))
            assert sess.run([closed, size]) == [True, 1]
            x, y = sess.run(up_to)
            np.testing.assert_array_equal(x, [[5., 6.]])
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(up_to)


# -- lookup tables ------------------------------------------------------------------------
def test_v1_hash_table_find_size_and_reinitialization():
    with tf.Graph().as_default():
        t = r.HashTable(key_dtype=tf.string, value_dtype=tf.int64)
        init = r.InitializeTable(table_handle=t, keys=tf.constant(["a", "b"]),
                                 values=tf.constant([1, 2], tf.int64))
        find = r.LookupTableFind(table_handle=t, keys=tf.constant([["a", "c"], ["b", "b"]]),
                                 default_value=tf.constant(-1, tf.int64))
        assert find.shape.ndims is None and find.dtype == tf.int64  # TF: unknown
        size = r.LookupTableSize(table_handle=t)
        same = r.InitializeTable(table_handle=t, keys=tf.constant(["b"]),
                                 values=tf.constant([2], tf.int64))
        other = r.InitializeTable(table_handle=t, keys=tf.constant(["a", "b"]),
                                  values=tf.constant([1, 3], tf.int64))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError, match="not initialized"):
                sess.run(find)
            sess.run(init)
            got, n = sess.run([find, size])
            np.testing.assert_array_equal(got, [[1, -1], [2, 2]])
            assert n == 2
            sess.run([init, same])  # TF: initializing again with the same pairs is a no-op
            with pytest.raises(tf.errors.FailedPreconditionError,
                               match="Table was already initialized with different data"):
                sess.run(other)


def test_initialize_table_v2_and_v1_mutable_tables():
    with tf.Graph().as_default():
        t = r.HashTableV2(key_dtype=tf.int64, value_dtype=tf.float32)
        init = r.InitializeTableV2(table_handle=t, keys=tf.constant([3, 4], tf.int64),
                                   values=tf.constant([0.5, 1.5]))
        m = r.MutableHashTable(key_dtype=tf.string, value_dtype=tf.float32)
        ins = r.LookupTableInsert(table_handle=m, keys=tf.constant(["x", "y"]),
                                  values=tf.constant([1.0, 2.0]))
        keys, values = r.LookupTableExport(table_handle=m, Tkeys=tf.string,
                                           Tvalues=tf.float32)
        # TF: keys [?], values unknown for the v1 export
        assert keys.shape.as_list() == [None] and values.shape.ndims is None
        d = r.MutableDenseHashTable(empty_key=tf.constant(-1, tf.int64),
                                    value_dtype=tf.float32)
        d_ins = r.LookupTableInsert(table_handle=d, keys=tf.constant([7], tf.int64),
                                    values=tf.constant([9.0]))
        d_bad = r.LookupTableInsert(table_handle=d, keys=tf.constant([-1], tf.int64),
                                    values=tf.constant([9.0]))
        with tf.Session() as sess:
            sess.run([init, ins, d_ins])
            got = sess.run(r.LookupTableFindV2(table_handle=t, keys=tf.constant([4, 9], tf.int64),
                                               default_value=tf.constant(-1.0)))
            np.testing.assert_array_equal(got, [1.5, -1.0])
            k, v = sess.run([keys, values])
            assert dict(zip(k.tolist(), v.tolist())) == {b"x": 1.0, b"y": 2.0}
            assert sess.run(r.LookupTableSize(table_handle=d)) == 1
            with pytest.raises(tf.errors.InvalidArgumentError, match="empty_key"):
                sess.run(d_bad)


def test_hash_table_of_tensors_holds_one_vector_per_key():
    with tf.Graph().as_default():
        t = r.MutableHashTableOfTensors(key_dtype=tf.int64, value_dtype=tf.float32,
                                        value_shape=[2])
        ins = r.LookupTableInsert(table_handle=t, keys=tf.constant([1, 2], tf.int64),
                                  values=tf.constant([[1., 2.], [3., 4.]]))
        bad = r.LookupTableInsert(table_handle=t, keys=tf.constant([1], tf.int64),
                                  values=tf.placeholder_with_default([[1., 2., 3.]], None))
        t2 = r.MutableHashTableOfTensorsV2(key_dtype=tf.int64, value_dtype=tf.float32,
                                           value_shape=[2])
        find = r.LookupTableFindV2(table_handle=t2, keys=tf.constant([[2, 5]], tf.int64),
                                   default_value=tf.constant([-1., -2.]))
        assert find.shape.as_list() == [1, 2, 2]  # TF: keys' shape + value_shape
        with tf.Session() as sess:
            sess.run(ins)
            k, v = sess.run(r.LookupTableExport(table_handle=t, Tkeys=tf.int64,
                                                Tvalues=tf.float32))
            assert sorted(zip(k.tolist(), v.tolist())) == [(1, [1., 2.]), (2, [3., 4.])]
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"Expected shape \[1, 2\] for value, got \[1, 3\]"):
                sess.run(bad)
            sess.run(r.LookupTableImportV2(table_handle=t2, keys=tf.constant([2], tf.int64),
                                           values=tf.constant([[3., 4.]])))
            assert sess.run(find).tolist() == [[[3., 4.], [-1., -2.]]]


# -- readers ------------------------------------------------------------------------------
def test_reader_state_serializes_as_tensorflows_reader_base_state(tmp_path):
    path = str(tmp_path / "a.txt")
    with open(path, "w") as f:
        f.write("l1\nl2\nl3\n")
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, tf.string)
        whole = r.WholeFileReaderV2()
        text = r.TextLineReaderV2()
        read = r.ReaderReadV2(reader_handle=whole, queue_handle=q.queue_ref)
        state = r.ReaderSerializeStateV2(reader_handle=whole)
        with tf.Session() as sess:
            sess.run(q.enqueue_many([[path, path]]))
            sess.run(read)
            data = sess.run(state)
            # TF's bytes: work_started 1, work_finished 1, records 1, current_work path
            assert data == b'\x08\x01\x10\x01\x18\x01"' + bytes([len(path)]) + path.encode()
            sess.run(r.ReaderResetV2(reader_handle=whole))
            sess.run(r.ReaderRestoreStateV2(reader_handle=whole, state=data))
            counts = [r.ReaderNumRecordsProducedV2(reader_handle=whole),
                      r.ReaderNumWorkUnitsCompletedV2(reader_handle=whole)]
            assert sess.run(counts) == [1, 1]
            assert sess.run(read)[1] == b"l1\nl2\nl3\n"
            with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse state"):
                sess.run(r.ReaderRestoreStateV2(reader_handle=whole, state="garbage"))
            with pytest.raises(tf.errors.UnimplementedError, match="SerializeState"):
                sess.run(r.ReaderSerializeStateV2(reader_handle=text))


def test_text_line_reader_finishes_a_file_when_a_read_finds_it_exhausted(tmp_path):
    path = str(tmp_path / "a.txt")
    with open(path, "w") as f:
        f.write("l1\nl2\n")
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, tf.string)
        reader = r.TextLineReaderV2()
        read = r.ReaderReadV2(reader_handle=reader, queue_handle=q.queue_ref)
        done = r.ReaderNumWorkUnitsCompletedV2(reader_handle=reader)
        with tf.Session() as sess:
            sess.run(q.enqueue_many([[path, path]]))
            sess.run(read)
            sess.run(read)
            assert sess.run(done) == 0  # TF: the end of the file is not seen yet
            assert sess.run(read)[1] == b"l1"
            assert sess.run(done) == 1


def test_record_input_yields_every_record_once_per_epoch(tmp_path):
    records = [b"rec%d" % i for i in range(7)]
    for k, part in enumerate((records[:4], records[4:])):
        with tf.io.TFRecordWriter(str(tmp_path / f"part-{k}.tfrecord")) as w:
            for rec in part:
                w.write(rec)
    with tf.Graph().as_default():
        batch = r.RecordInput(file_pattern=str(tmp_path / "part-*"), batch_size=3,
                              file_random_seed=5)
        assert batch.dtype == tf.string and batch.shape.ndims is None  # TF: unknown
        with tf.Session() as sess:
            got = [sess.run(batch).tolist() for _ in range(7)]  # 21 records: 3 epochs
    assert all(len(b) == 3 for b in got)
    flat = [x for b in got for x in b]
    for epoch in range(3):
        assert sorted(flat[7 * epoch:7 * epoch + 7]) == records
    assert flat[:7] != flat[7:14]  # reshuffled each epoch
    with tf.Graph().as_default():
        missing = r.RecordInput(file_pattern=str(tmp_path / "nothing-*"))
        with tf.Session() as sess, pytest.raises(tf.errors.NotFoundError, match="nothing"):
            sess.run(missing)


# -- variables and ref control flow ---------------------------------------------------------
def test_temporary_variable_accumulates_within_a_step():
    with tf.Graph().as_default():
        x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        acc = r.TemporaryVariable(shape=[2], dtype=tf.float32, var_name="acc")
        assert (acc.dtype, acc.shape.as_list()) == (FLOAT32_REF, [2])
        ref = r.Assign(ref=acc, value=tf.zeros([2]))
        ref = r.AssignAdd(ref=ref, value=x[0])
        ref = r.AssignAdd(ref=ref, value=x[1])
        total = r.DestroyTemporaryVariable(ref=ref, var_name="acc")
        assert (total.dtype, total.shape.as_list()) == (tf.float32, [2])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(total), [4.0, 6.0])
            np.testing.assert_array_equal(sess.run(total), [4.0, 6.0])  # fresh each step


def test_ref_identity_select_and_merge_keep_refs_and_gradients():
    with tf.Graph().as_default():
        v = r.Variable(shape=[2], dtype=tf.float32)
        w = r.Variable(shape=[2], dtype=tf.float32)
        ident = r.RefIdentity(input=v)
        sel = r.RefSelect(index=tf.constant(1), inputs=[v, w])
        merged, index = r.RefMerge(inputs=[v, w])
        assert [t.dtype for t in (ident, sel, merged, index)] == [
            FLOAT32_REF, FLOAT32_REF, FLOAT32_REF, tf.int32]
        assert sel.shape.as_list() == [2] and index.shape.as_list() == []
        bump = r.AssignAdd(ref=ident, value=tf.constant([1.0, 1.0]))
        x = tf.constant([2.0, 3.0])
        (g,) = tf.gradients(tf.reduce_sum(r.RefIdentity(input=x) * x), [x])
        with tf.Session() as sess:
            sess.run([r.Assign(ref=v, value=[1.0, 2.0]), r.Assign(ref=w, value=[5.0, 7.0])])
            sess.run(bump)
            np.testing.assert_array_equal(sess.run(v), [2.0, 3.0])
            np.testing.assert_array_equal(sess.run(sel), [5.0, 7.0])
            np.testing.assert_array_equal(sess.run(g), [4.0, 6.0])
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
                sess.run(r.RefSelect(index=tf.constant(2), inputs=[v, w]))


# -- stacks and TensorArrays ------------------------------------------------------------------
def test_v1_stack_is_unbounded_and_lifo():
    with tf.Graph().as_default():
        s = r.Stack(elem_type=tf.float32)
        assert (s.dtype, s.shape.as_list()) == (STRING_REF, [2])
        pushes = []
        for i in range(3):
            with tf.control_dependencies(pushes):
                pushes.append(r.StackPush(handle=s, elem=tf.fill([2], float(i))))
        with tf.control_dependencies(pushes):
            top = r.StackPop(handle=s, elem_type=tf.float32)
        assert pushes[0].shape.as_list() == [2] and top.shape.ndims is None  # as TF
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(top), [2.0, 2.0])


def _ta_v2(x, clear_after_read=False):
    h = make_op("TensorArrayV2", [tf.constant(3)], {
        "dtype": tf.float32, "clear_after_read": clear_after_read}).outputs[0]
    flow = make_op("TensorArrayScatterV2", [h, tf.constant([0, 1, 2]), x,
                                            tf.constant(0.0)]).outputs[0]
    return h, flow


def test_tensor_array_v2_ops_and_their_gradients():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    h, flow = _ta_v2(x)
    assert (h.dtype, h.shape.as_list()) == (tf.string, [2])
    gathered = make_op("TensorArrayGatherV2", [h, tf.constant([2, 0]), flow],
                       {"dtype": tf.float32}).outputs[0]
    value, lengths = make_op("TensorArrayConcatV2", [h, flow], {"dtype": tf.float32}).outputs
    c = tf.constant([[1.0, -1.0], [0.5, 2.0]])
    (g,) = tf.gradients(tf.reduce_sum(gathered * c), [x])
    with tf.Session() as sess:
        got, v, n, grad = sess.run([gathered, value, lengths, g])
    np.testing.assert_array_equal(got, [[5.0, 6.0], [1.0, 2.0]])
    np.testing.assert_array_equal(v, [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(n, [2, 2, 2])
    np.testing.assert_array_equal(grad, [[0.5, 2.0], [0.0, 0.0], [1.0, -1.0]])


def test_tensor_array_v1_pack_unpack_and_gradient_against_finite_differences():
    x0 = np.array([[1.0, 2.0], [3.0, 4.0]])
    x = tf.placeholder(tf.float64, [2, 2])
    h = make_op("TensorArray", [tf.constant(2)], {"dtype": tf.float64}).outputs[0]
    assert (h.dtype, h.shape.as_list()) == (STRING_REF, [2])
    flow = make_op("TensorArrayUnpack", [h, x, tf.constant(0.0)]).outputs[0]
    packed = make_op("TensorArrayPack", [h, flow], {"dtype": tf.float64,
                                                     "element_shape": [2]}).outputs[0]
    assert packed.shape.as_list() == [None, 2]
    y = tf.reduce_sum(tf.square(packed) * tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64))
    (g,) = tf.gradients(y, [x])
    with tf.Session() as sess:
        value, grad = sess.run([packed, g], {x: x0})
        eps, numeric = 1e-6, np.zeros_like(x0)
        for i in np.ndindex(*x0.shape):
            d = np.zeros_like(x0)
            d[i] = eps
            numeric[i] = (sess.run(y, {x: x0 + d}) - sess.run(y, {x: x0 - d})) / (2 * eps)
    np.testing.assert_array_equal(value, x0)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)


# -- barriers -------------------------------------------------------------------------------
def _take(b, n, **kw):
    out = r.BarrierTakeMany(handle=b, num_elements=n, component_types=[tf.float32, tf.int32],
                            **kw)
    return out.indices, out.keys, list(out.values)  # TF's grouping: values is a list


def test_barrier_completes_elements_and_takes_them_in_insertion_order():
    with tf.Graph().as_default():
        b = r.Barrier(component_types=[tf.float32, tf.int32], shapes=[[2], []],
                      shared_name="bb")
        assert (b.dtype, b.shape.as_list()) == (STRING_REF, [2])
        put0 = r.BarrierInsertMany(handle=b, keys=["k1", "k2", "k3"], values=tf.constant(
            [[1., 2.], [3., 4.], [5., 6.]]), component_index=0)
        put1 = r.BarrierInsertMany(handle=b, keys=["k3", "k1"], values=[30, 10],
                                   component_index=1)
        sizes = [r.BarrierReadySize(handle=b), r.BarrierIncompleteSize(handle=b)]
        index, keys, values = _take(b, 2)
        _, small_keys, small_values = _take(b, 5, allow_small_batch=True)
        with tf.Session() as sess:
            sess.run(put0)
            assert sess.run(sizes) == [0, 3]
            sess.run(put1)
            assert sess.run(sizes) == [2, 1]
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Key k2 already has a value for component 0 in barrier bb"):
                sess.run(put0)
            i, k, (x, y) = sess.run([index, keys, values])
            assert i.tolist() == [np.iinfo(np.int64).min] * 2  # TF's first insertion index
            assert k.tolist() == [b"k3", b"k1"]
            np.testing.assert_array_equal(x, [[5., 6.], [1., 2.]])
            np.testing.assert_array_equal(y, [30, 10])
            sess.run(r.BarrierClose(handle=b))
            with pytest.raises(tf.errors.CancelledError, match="brand new key: k7"):
                sess.run(r.BarrierInsertMany(handle=b, keys=["k7"], values=[0],
                                             component_index=1))
            sess.run(r.BarrierInsertMany(handle=b, keys=["k2"], values=[20],
                                         component_index=1))
            k, (x, y) = sess.run([small_keys, small_values])
            assert k.tolist() == [b"k2"] and y.tolist() == [20]
            with pytest.raises(tf.errors.OutOfRangeError,
                               match=r"closed and has insufficient elements \(requested 0, "
                                     r"total size 0\)"):
                sess.run(small_keys)


def test_barrier_needs_shapes_and_close_with_cancel_drops_incomplete_elements():
    with tf.Graph().as_default():
        no_shapes = r.Barrier(component_types=[tf.float32])
        b = r.Barrier(component_types=[tf.float32, tf.int32], shapes=[[], []])
        put = r.BarrierInsertMany(handle=b, keys=["a", "b"], values=[1.0, 2.0],
                                  component_index=0)
        done = r.BarrierInsertMany(handle=b, keys=["a"], values=[5], component_index=1)
        sizes = [r.BarrierReadySize(handle=b), r.BarrierIncompleteSize(handle=b)]
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="All of the component shapes must be specified"):
                sess.run(no_shapes)
            sess.run(put)
            sess.run(done)
            sess.run(r.BarrierClose(handle=b, cancel_pending_enqueues=True))
            assert sess.run(sizes) == [1, 0]
            with pytest.raises(tf.errors.CancelledError, match="Pending enqueues cancelled: 1"):
                sess.run(r.BarrierInsertMany(handle=b, keys=["b"], values=[5],
                                             component_index=1))
            _, keys, _ = _take(b, 1)
            assert sess.run(keys).tolist() == [b"a"]
            with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 1, total size 0"):
                sess.run(keys)


def test_barrier_take_waits_for_incomplete_elements_after_close():
    with tf.Graph().as_default():
        b = r.Barrier(component_types=[tf.float32, tf.float32], shapes=[[], []])
        put = r.BarrierInsertMany(handle=b, keys=["a", "b"], values=[1.0, 2.0],
                                  component_index=0)
        _, keys, _ = _take(b, 1)
        with tf.Session() as sess:
            sess.run(put)
            sess.run(r.BarrierClose(handle=b))
            # TF: the two incomplete elements may still complete, so the take waits
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(keys, options=tf.RunOptions(timeout_in_ms=200))


# -- keyed staging areas ------------------------------------------------------------------------
@pytest.mark.parametrize("prefix", ["", "Ordered"])
def test_map_staging_area_partial_tuples_peek_and_unstage(prefix):
    area = {"dtypes": [tf.float32, tf.int32], "shared_name": f"{prefix}m"}
    op = {n: getattr(r, f"{prefix}Map{n}") for n in ("Stage", "Unstage", "UnstageNoKey",
                                                      "Peek", "Size", "IncompleteSize",
                                                      "Clear")}

    def stage(key, indices, values):
        return op["Stage"](key=tf.constant(key, tf.int64), indices=indices, values=values,
                           **area)

    with tf.Graph().as_default():
        sizes = [op["Size"](**area), op["IncompleteSize"](**area)]
        with tf.Session() as sess:
            sess.run(stage(5, [0, 1], [tf.constant([1., 2.]), tf.constant(3)]))
            sess.run(stage(2, [0, 1], [tf.constant([4., 5.]), tf.constant(6)]))
            sess.run(stage(9, [1], [tf.constant(7)]))
            assert sess.run(sizes) == [2, 1]
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="The tensor for index '1' for key '9' was already "
                                     "initialized '2'"):
                sess.run(stage(9, [1], [tf.constant(8)]))
            peek = op["Peek"](key=tf.constant(5, tf.int64), indices=[0, 1], **area)
            x, y = sess.run(peek)
            assert x.tolist() == [1., 2.] and y == 3
            take1 = op["Unstage"](key=tf.constant(5, tf.int64), indices=[1],
                                  dtypes=[tf.int32], shared_name=area["shared_name"])
            assert sess.run(take1) == [3] and sess.run(sizes) == [2, 1]  # a list, as TF
            take0 = op["Unstage"](key=tf.constant(5, tf.int64), indices=[0],
                                  dtypes=[tf.float32], shared_name=area["shared_name"])
            assert sess.run(take0)[0].tolist() == [1., 2.] and sess.run(sizes) == [1, 1]
            sess.run(stage(9, [0], [tf.constant([0.5, 0.25])]))
            key, (x, y) = sess.run(op["UnstageNoKey"](indices=[0, 1], **area))
            # TF: the smallest key from an ordered map (its hash order otherwise)
            assert key in (2, 9) and (prefix == "" or key == 2)
            assert sess.run(sizes) == [1, 0]
            sess.run(op["Clear"](**area))
            assert sess.run(sizes) == [0, 0]
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(peek, options=tf.RunOptions(timeout_in_ms=100))


def test_map_staging_area_capacity_blocks_until_a_tuple_leaves():
    area = {"dtypes": [tf.float32], "shared_name": "cap", "capacity": 1}
    with tf.Graph().as_default():
        put = [r.OrderedMapStage(key=tf.constant(k, tf.int64), indices=[0],
                                 values=[tf.constant(float(k))], **area) for k in (1, 2)]
        take = r.OrderedMapUnstageNoKey(indices=[0], **area)
        with tf.Session() as sess:
            sess.run(put[0])
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(put[1], options=tf.RunOptions(timeout_in_ms=100))
            assert sess.run(take)[0] == 1
            sess.run(put[1])
            assert sess.run(take)[0] == 2


# -- accumulators ---------------------------------------------------------------------------
def test_v1_conditional_accumulator_averages_gradients():
    with tf.Graph().as_default():
        ca = r.ConditionalAccumulator(dtype=tf.float32, shape=[2])
        assert (ca.dtype, ca.shape.as_list()) == (STRING_REF, [2])
        apply = [r.AccumulatorApplyGradient(handle=ca, local_step=tf.constant(0, tf.int64),
                                            gradient=tf.constant(g))
                 for g in ([1.0, 2.0], [3.0, 6.0])]
        take = r.AccumulatorTakeGradient(handle=ca, num_required=2, dtype=tf.float32)
        assert take.shape.ndims is None  # TF: unknown
        with tf.Session() as sess:
            sess.run(apply)
            assert sess.run(r.AccumulatorNumAccumulated(handle=ca)) == 2
            np.testing.assert_array_equal(sess.run(take), [2.0, 4.0])

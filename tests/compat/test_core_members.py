"""Small members of core classes that TF1 programs call: `Graph`, `Tensor`,
`SparseTensor`, `Variable`, `Supervisor`, lookup tables, v1 readers and queues.
Expected values are TensorFlow 2.15's (tf.compat.v1, graph mode), printed by the oracle.
"""

import os
import threading

import numpy as np
import pytest

import flowgraph as tf


def test_graph_members():
    g = tf.Graph()
    with g.as_default():
        assert g.seed is None
        tf.set_random_seed(42)
        assert g.seed == 42
        assert g.num_operations() == 0
        tf.constant(1.0)
        assert g.num_operations() == 1
        assert g.get() is g
    assert isinstance(tf.Graph.seed, property)


def _thread_view(switch):
    g, out = tf.Graph(), {}
    with g.as_default():
        if switch:
            g.switch_to_thread_local()
        c0 = tf.constant(0.0, name="c0")
        with g.control_dependencies([c0]), g.name_scope("outer"), g.colocate_with(c0):
            def body():
                with g.as_default():
                    t = tf.constant(1.0, name="t")
                out.update(name=t.op.name, ctrl=[o.name for o in t.op.control_inputs],
                           coloc=t.op.colocation_groups())
            th = threading.Thread(target=body)
            th.start()
            th.join()
    return out


def test_switch_to_thread_local():
    # TF: threads share control dependencies and colocation until the switch; name
    # scopes are always per thread
    assert _thread_view(False) == {"name": "t", "ctrl": ["c0"], "coloc": [b"loc:@c0"]}
    assert _thread_view(True) == {"name": "t", "ctrl": [], "coloc": [b"loc:@t"]}


def test_tensor_ndim():
    with tf.Graph().as_default():
        assert tf.constant([[1.0, 2.0]]).ndim == 2
        assert tf.placeholder(tf.float32, None).ndim == -1
        assert tf.placeholder(tf.float32, [None, 3]).ndim == 2


def test_sparse_tensor_set_shape_with_values():
    with tf.Graph().as_default():
        sp = tf.sparse_placeholder(tf.float32)
        sp.set_shape([3, 4])
        assert sp.shape.as_list() == [3, 4]
        assert sp.dense_shape.shape.as_list() == [None]
        st = tf.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [3, 4])
        with pytest.raises(ValueError, match=r"Shapes \(3, 4\) and \(3, 5\) are not compatible"):
            st.set_shape([3, 5])
        st.set_shape([None, 4])
        assert st.shape.as_list() == [3, 4]
        w = st.with_values(tf.constant([5, 6]))
        assert (w.dtype, w.shape.as_list()) == (tf.int32, [3, 4])
        assert w.indices is st.indices and w.dense_shape is st.dense_shape
        with pytest.raises(ValueError, match="not compatible"):
            st.with_values(tf.constant([1, 2, 3]))
        with tf.Session() as sess:
            out = sess.run(w)
        np.testing.assert_array_equal(out.values, [5, 6])
        np.testing.assert_array_equal(out.indices, [[0, 1], [2, 3]])


@pytest.mark.parametrize("use_resource", [False, True])
def test_variable_ref(use_resource):
    with tf.Graph().as_default():
        v = tf.Variable([1, 2], name="v", use_resource=use_resource)
        w = tf.Variable([1, 2], name="w", use_resource=use_resource)
        r = v.ref()
        assert r == v.experimental_ref() and hash(r) == hash(v.ref())
        assert r != w.ref()
        assert {r: 1}[v.ref()] == 1 and r.deref() is v


def test_variable_sparse_read_gather_nd():
    with tf.Graph().as_default():
        ref = tf.Variable([[1.0, 2.0]], name="r", use_resource=False)
        with pytest.raises(AttributeError):  # TF: only resource variables have them
            ref.sparse_read([0])
        with pytest.raises(AttributeError):
            ref.gather_nd([[0, 0]])
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], name="v", use_resource=True)
        sr = v.sparse_read([2, 0], name="sr")
        assert (sr.op.type, sr.name, sr.shape.as_list()) == ("ResourceGather", "sr:0", [2, 2])
        gn = v.gather_nd([[1, 0], [2, 1]])
        assert gn.shape.as_list() == [2]
        with pytest.raises(TypeError):
            v.sparse_read([[0.5]])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            a, b = sess.run([sr, gn])
        np.testing.assert_array_equal(a, [[5.0, 6.0], [1.0, 2.0]])
        np.testing.assert_array_equal(b, [3.0, 6.0])


def test_variable_to_from_proto_ref():
    with tf.Graph().as_default():
        v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v", use_resource=False)
        proto = v.to_proto()
        assert type(proto).__name__.startswith("VariableDef")
        assert (proto.variable_name, proto.initial_value_name, proto.initializer_name,
                proto.snapshot_name, proto.trainable, proto.is_resource) == (
            "v:0", "v/initial_value:0", "v/Assign", "v/read:0", True, False)
        scoped = v.to_proto(export_scope="v")
        assert (scoped.variable_name, scoped.initializer_name, scoped.snapshot_name) == (
            "v:0", "Assign", "read:0")
        assert v.to_proto(export_scope="other") is None
        v2 = tf.Variable.from_proto(proto)
        assert v2 is not v
        assert (v2.name, v2.initializer.name, v2.dtype, v2.shape.as_list()) == (
            "v:0", "v/Assign", tf.float32._as_ref, [2, 2])
        with pytest.raises(KeyError, match="imp/v:0"):
            tf.Variable.from_proto(proto, import_scope="imp")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(v2), [[1.0, 2.0], [3.0, 4.0]])


def test_variable_to_from_proto_resource():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        proto = v.to_proto()
        assert (proto.initial_value_name, proto.snapshot_name, proto.is_resource) == (
            "v/Initializer/initial_value:0", "v/Read/ReadVariableOp:0", True)
        # TF 2.15's tf.compat.v1.Variable.from_proto rebuilds every VariableDef as a
        # reference variable (a resource one comes back broken); flowgraph gives a
        # ResourceVariable, as TF's collection loading does
        v2 = tf.Variable.from_proto(proto)
        assert (v2.name, v2.dtype, v2.shape.as_list()) == ("v:0", tf.float32, [2])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(v2.value()), [1.0, 2.0])


def test_save_slice_info():
    info = tf.Variable.SaveSliceInfo("v", [6, 2], [3, 0], [3, 2])
    assert (info.spec, info.full_name) == ("6 2 3,3:0,2", "v")
    proto = info.to_proto()
    assert (proto.full_name, list(proto.full_shape), list(proto.var_offset),
            list(proto.var_shape)) == ("v", [6, 2], [3, 0], [3, 2])
    assert info.to_proto(export_scope="x") is None
    back = tf.Variable.SaveSliceInfo(save_slice_info_def=proto, import_scope="y")
    assert vars(back) == {"full_name": "y/v", "full_shape": [6, 2], "var_offset": [3, 0],
                          "var_shape": [3, 2]}
    with pytest.raises(TypeError):
        tf.Variable.SaveSliceInfo().spec  # noqa: B018


def test_supervisor_camel_case():
    S = tf.train.Supervisor
    assert S.PrepareSession is S.prepare_or_wait_for_session
    assert S.StartStandardServices is S.start_standard_services
    assert S.StartQueueRunners is S.start_queue_runners
    assert S.SummaryComputed is S.summary_computed
    assert S.Loop is S.loop and S.Stop is S.stop
    assert S.ShouldStop is S.should_stop and S.RequestStop is S.request_stop
    assert S.StopOnException is S.stop_on_exception and S.WaitForStop is S.wait_for_stop


def test_lookup_dtypes_and_export(tmp_path):
    with tf.Graph().as_default():
        kv = tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2])
        assert (kv.key_dtype, kv.value_dtype) == (tf.string, tf.int32)
        fn = str(tmp_path / "v.txt")
        with open(fn, "w") as f:
            f.write("a\nb\n")
        tfi = tf.lookup.TextFileInitializer(fn, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                            tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER)
        assert (tfi.key_dtype, tfi.value_dtype) == (tf.string, tf.int64)
        t = tf.lookup.StaticHashTable(kv, -1)
        assert (t.key_dtype, t.value_dtype) == (tf.string, tf.int32)
        assert t.resource_handle.op.type == "HashTableV2"
        keys, values = t.export()
        assert (keys.name, values.name, values.dtype) == (
            "hash_table_Export/LookupTableExportV2:0",
            "hash_table_Export/LookupTableExportV2:1", tf.int32)
        assert [x.name for x in t.export(name="ex")] == [
            "ex/LookupTableExportV2:0", "ex/LookupTableExportV2:1"]
        vt = tf.lookup.StaticVocabularyTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b"], [0, 1], value_dtype=tf.int64), 2)
        assert (vt.key_dtype, vt.value_dtype) == (tf.string, tf.int64)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError):
                sess.run(keys)
            sess.run(tf.tables_initializer())
            k, v = sess.run([keys, values])
        assert sorted(zip(k.tolist(), v.tolist())) == [(b"a", 1), (b"b", 2)]


def test_reader_serialize_restore_state(tmp_path):
    fn = str(tmp_path / "a.txt")
    with open(fn, "w") as f:
        f.write("l1\n")
    with tf.Graph().as_default():
        assert [c().supports_serialize for c in (tf.TextLineReader, tf.WholeFileReader,
                                                 tf.IdentityReader, tf.TFRecordReader)] == [
            False, True, True, False]
        r = tf.IdentityReader()
        q = tf.FIFOQueue(10, tf.string)
        enq = q.enqueue_many([["w1", "w2", "w3"]])
        key, _ = r.read(q)
        ss = r.serialize_state(name="ss")
        assert (ss.op.type, ss.name, ss.dtype, ss.shape.as_list()) == (
            "ReaderSerializeStateV2", "ss:0", tf.string, [])
        state_in = tf.placeholder(tf.string, [])
        rs = r.restore_state(state_in, name="rs")
        assert (rs.type, rs.name) == ("ReaderRestoreStateV2", "rs")
        with pytest.raises(TypeError):
            r.restore_state(1.0)
        line = tf.TextLineReader().serialize_state()
        with tf.Session() as sess:
            sess.run(enq)
            assert sess.run(key) == b"w1"
            state = sess.run(ss)
            assert sess.run(r.num_records_produced()) == 1
            assert sess.run(key) == b"w2"
            sess.run(rs, {state_in: state})
            assert sess.run(r.num_records_produced()) == 1
            with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
                sess.run(rs, {state_in: b"junk"})
            with pytest.raises(tf.errors.UnimplementedError):
                sess.run(line)
    assert os.path.exists(fn)


def test_queue_from_list():
    with tf.Graph().as_default():
        q1 = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]], names=["a", "b"])
        q2 = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]], names=["a", "b"])
        qs = tf.QueueBase.from_list(tf.constant(1), [q1, q2])
        assert type(qs) is tf.QueueBase
        assert (qs.dtypes, [s.as_list() for s in qs.shapes], qs.names, qs.name) == (
            [tf.int32, tf.float32], [[], [2]], ["a", "b"], "GatherV2")
        assert tf.FIFOQueue.from_list is tf.QueueBase.from_list
        with pytest.raises(TypeError, match="Queues do not have matching component dtypes"):
            tf.QueueBase.from_list(0, [q1, tf.FIFOQueue(5, [tf.int32])])
        with pytest.raises(TypeError, match="A list of queues expected"):
            tf.QueueBase.from_list(0, [])
        with pytest.raises(TypeError, match="Queues do not have matching component names"):
            tf.QueueBase.from_list(0, [q1, tf.FIFOQueue(5, [tf.int32, tf.float32])])
        q4 = tf.FIFOQueue(5, [tf.int32, tf.float32])
        assert [s.ndims for s in tf.QueueBase.from_list(0, [q4, q4]).shapes] == [None, None]
        idx = tf.placeholder(tf.int32, [])
        qq = tf.QueueBase.from_list(idx, [tf.FIFOQueue(5, tf.int32, shapes=[[]]),
                                          tf.FIFOQueue(5, tf.int32, shapes=[[]])])
        enq = qq.enqueue(tf.constant(7))
        with tf.Session() as sess:
            sess.run(enq, {idx: 1})
            assert sess.run(qq.size(), {idx: 1}) == 1
            assert sess.run(qq.size(), {idx: 0}) == 0
            assert sess.run(qq.dequeue(), {idx: 1}) == 7
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"not in \[0, 2\)"):
                sess.run(qq.size(), {idx: 5})


def test_iterator_get_next_as_optional():
    with tf.Graph().as_default():
        it = tf.data.make_initializable_iterator(tf.data.Dataset.range(2))
        opt = it.get_next_as_optional()
        assert opt._variant_tensor.op.type == "IteratorGetNextAsOptional"
        assert (opt.element_spec.shape.as_list(), opt.element_spec.dtype) == ([], tf.int64)
        has, both = opt.has_value(), (opt.has_value(), opt.get_value())
        with tf.Session() as sess:
            sess.run(it.initializer)
            assert sess.run(both) == (True, 0)
            assert sess.run(has)
            assert not sess.run(has)


def test_variable_constructor_variable_def():
    with tf.Graph().as_default():
        v = tf.Variable([1.0], name="v")
        w = tf.Variable(variable_def=v.to_proto())
        assert (w is v, w.name, w.initializer.name) == (False, "v:0", "v/Assign")
        assert len(tf.global_variables()) == 1  # not collected again
        with pytest.raises(ValueError, match="variable_def and initial_value are mutually"):
            tf.Variable([2.0], variable_def=v.to_proto())
        r = tf.Variable([1.0], name="r", use_resource=True)
        r2 = tf.Variable(variable_def=r.to_proto(), use_resource=True)
        assert (type(r2).__name__, r2.name) == ("ResourceVariable", "r:0")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run([w, r2.value()]) == [[1.0], [1.0]]

"""TF 1.x top-level names: accumulators, session tensor handles, behaviour switches,
creator scopes, critical sections, containers and small helpers.

Expected values were printed by TensorFlow 2.15 (``tf.compat.v1``, graph mode) running
the same programs (/tmp/s13/wild/T01-T05).
"""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import flowgraph as tf


# -- ConditionalAccumulator ----------------------------------------------------------------
def test_accumulator_ops_and_static_checks():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2], name="acc")
        ref = acc.accumulator_ref
        assert (ref.dtype.name, ref.op.type, acc.name, acc.dtype.name) == (
            "resource", "ResourceConditionalAccumulator", "acc", "float32")
        apply = acc.apply_grad([1.0, 2.0])
        take = acc.take_grad(2)
        n = acc.num_accumulated()
        assert (apply.type, n.op.type, take.op.type, take.shape.as_list(), n.dtype.name) == (
            "ResourceAccumulatorApplyGradient", "ResourceAccumulatorNumAccumulated",
            "ResourceAccumulatorTakeGradient", [2], "int32")
        assert acc.set_global_step(5).type == "ResourceAccumulatorSetGlobalStep"
        assert (apply.name, take.name, n.name) == (
            "ResourceAccumulatorApplyGradient", "ResourceAccumulatorTakeGradient:0",
            "acc_NumAccumulated:0")
        with pytest.raises(ValueError, match=r"\(3,\) and \(2,\) are incompatible"):
            acc.apply_grad([1.0, 2.0, 3.0])
        with pytest.raises(ValueError, match="not in: \"MEAN\", \"SUM\""):
            tf.ConditionalAccumulator(tf.float32, reduction_type="MAX")
        assert tf.ConditionalAccumulator(tf.float64).take_grad(1).shape.ndims is None
        assert issubclass(tf.ConditionalAccumulator, tf.ConditionalAccumulatorBase)


def test_accumulator_mean_staleness_and_global_step():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2], name="acc")
        a1 = acc.apply_grad([1.0, 2.0], local_step=0)
        a2 = acc.apply_grad([3.0, 5.0], local_step=0)
        stale = acc.apply_grad([100.0, 100.0], local_step=-1)
        n, t = acc.num_accumulated(), acc.take_grad(2)
        with tf.Session() as s:
            s.run([a1, a2, stale])
            assert s.run(n) == 2
            np.testing.assert_allclose(s.run(t), [2.0, 3.5])
            assert s.run(n) == 0
            s.run(a1)  # the take moved the global step to 1: local step 0 is stale
            assert s.run(n) == 0
            s.run(acc.set_global_step(5))
            s.run(a1)
            assert s.run(n) == 0
            s.run(acc.apply_grad([1.0, 1.0], local_step=5))
            assert s.run(n) == 1
            s.run(acc.apply_grad([3.0, 3.0], local_step=7))
            np.testing.assert_allclose(s.run(t), [2.0, 2.0])
            assert s.run(n) == 0
            with pytest.raises(tf.errors.DeadlineExceededError):
                s.run(t, options=tf.RunOptions(timeout_in_ms=100))
            s.run(acc.set_global_step(2))  # lowering the step is allowed
            s.run(acc.apply_grad([9.0, 9.0], local_step=2))
            assert s.run(n) == 1
            with pytest.raises(tf.errors.InvalidArgumentError, match="must be positive"):
                s.run(acc.take_grad(0))


def test_accumulator_sum_shape_mismatch_and_dtype():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float64, reduction_type="SUM")
        ap, ap3 = acc.apply_grad(np.ones((2, 3))), acc.apply_grad(np.ones((3, 3)))
        with tf.Session() as s:
            s.run(ap)
            s.run(ap)
            np.testing.assert_array_equal(s.run(acc.take_grad(2)), np.full((2, 3), 2.0))
        with tf.Session() as s:
            s.run(ap)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
                s.run(ap3)
        ints = tf.ConditionalAccumulator(tf.int32)  # TF builds it, then has no kernel
        with tf.Session() as s, pytest.raises(tf.errors.InvalidArgumentError):
            s.run(ints.num_accumulated())


def test_blocked_take_completes_when_gradients_arrive():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[])
        x = tf.placeholder(tf.float32, [])
        apply = acc.apply_grad(x)
        take = acc.take_grad(2)
        with tf.Session() as s:
            out = []
            th = threading.Thread(target=lambda: out.append(s.run(take)))
            th.start()
            time.sleep(0.05)
            assert not out
            s.run(apply, {x: 1.0})
            s.run(apply, {x: 4.0})
            th.join(5)
            assert out == [2.5]


def test_shared_accumulator_across_sessions():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[], shared_name="shared_acc")
        apply, n = acc.apply_grad(1.0), acc.num_accumulated()
        with tf.Session("local://acc_test") as s1, tf.Session("local://acc_test") as s2:
            s1.run(apply)
            s2.run(apply)
            assert s1.run(n) == 2
        tf.Session.reset("local://acc_test")


def test_sparse_accumulator():
    with tf.Graph().as_default():
        sp = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
        assert tf.sparse.SparseConditionalAccumulator is tf.SparseConditionalAccumulator
        assert (sp.accumulator_ref.op.type, sp.name) == (
            "SparseConditionalAccumulator", "sparse_conditional_accumulator")
        ap1 = sp.apply_grad([0, 2], [[1.0, 1.0], [2.0, 2.0]], local_step=0)
        ap2 = sp.apply_indexed_slices_grad(tf.IndexedSlices(
            tf.constant([[3.0, 3.0], [4.0, 4.0]]), tf.constant([2, 3], tf.int64)))
        ti, tv, ts = sp.take_grad(2)
        assert ap1.type == "SparseAccumulatorApplyGradient"
        assert ti.dtype == tf.int64 and tv.shape.ndims is None
        assert sp.set_global_step(1).type == "AccumulatorSetGlobalStep"
        isl = sp.take_indexed_slices_grad(1)
        assert isinstance(isl, tf.IndexedSlices)
        with tf.Session() as s:
            s.run([ap1])
            s.run(ap2)
            idx, val, shape = s.run([ti, tv, ts])
            assert idx.tolist() == [0, 2, 3] and shape.tolist() == [4, 2]
            np.testing.assert_allclose(val, [[1.0, 1.0], [2.5, 2.5], [4.0, 4.0]])
            s.run(sp.apply_grad([1], [[1.0, 1.0]], grad_shape=[4, 2], local_step=5))
            got = s.run([isl.indices, isl.values, isl.dense_shape])
            assert got[0].tolist() == [1] and got[1].tolist() == [[1.0, 1.0]]
            assert s.run(sp.num_accumulated()) == 0
        sp2 = tf.SparseConditionalAccumulator(tf.float32)
        with tf.Session() as s:
            s.run(sp2.apply_grad([3, 1], [[1.0], [2.0]]))
            idx, val, shape = s.run(sp2.take_grad(1))
            assert idx.tolist() == [3, 1] and val.tolist() == [[1.0], [2.0]]
            assert shape.tolist() == [-1, 1]
            s.run(sp2.apply_grad([3, 1], [[1.0], [2.0]], local_step=1))
            with pytest.raises(tf.errors.InvalidArgumentError, match="Shape mismatch"):
                s.run(sp2.apply_grad([1], [[1.0, 2.0]], local_step=1))


# -- session tensor handles ----------------------------------------------------------------
def test_session_handles():
    with tf.Graph().as_default():
        c = tf.constant(10.0) * tf.constant(5.0)
        h = tf.get_session_handle(c)
        assert (h.op.type, h.dtype.name, h.shape.as_list()) == ("GetSessionHandle", "string", [])
        with tf.Session() as s:
            hv = s.run(h)
            assert type(hv).__name__ == "TensorHandle"
            assert hv.handle == "GetSessionHandle;0;/job:localhost/replica:0/task:0/device:CPU:0"
            assert hv.eval() == 50.0
            p, x = tf.get_session_tensor(hv.handle, tf.float32)
            assert (p.op.type, p.dtype.name, x.op.type, x.dtype.name) == (
                "Placeholder", "string", "GetSessionTensor", "float32")
            assert x.shape.ndims is None
            y = x * 10.0
            assert s.run(y, feed_dict={p: hv.handle}) == 500.0
            assert s.run(y, feed_dict={x: hv}) == 500.0  # a handle fed to the value
            h2 = s.run(tf.get_session_handle(y), feed_dict={p: hv.handle})
            assert h2.handle.split(";")[1] == "1" and h2.eval() == 500.0
            dh, d = tf.delete_session_tensor(hv.handle)
            assert (dh.op.type, dh.dtype.name, d.type) == (
                "Placeholder", "string", "DeleteSessionTensor")
            s.run(d, feed_dict={dh: hv.handle})
            with pytest.raises(tf.errors.InvalidArgumentError, match="not in this session"):
                s.run(y, feed_dict={p: hv.handle})
            h2.delete()
            with pytest.raises(TypeError, match="may have already been deleted"):
                h2.eval()
            hv3 = s.run(tf.get_session_handle(tf.constant([1, 2, 3])))
            assert hv3.eval().tolist() == [1, 2, 3]
            text = hv3.handle
            del hv3  # the last TensorHandle object gone: the value goes too
            gc.collect()
            with pytest.raises(tf.errors.InvalidArgumentError, match="not in this session"):
                s.run(y, feed_dict={p: text})
        with pytest.raises(TypeError, match="must be of type Tensor"):
            tf.get_session_handle([1.0])


# -- switches ------------------------------------------------------------------------------
def test_v2_tensorshape_switch():
    x = tf.placeholder(tf.float32, [None, 3])
    assert type(x.shape[1]).__name__ == "Dimension"
    tf.enable_v2_tensorshape()
    try:
        assert (x.shape[0], x.shape[1], list(x.shape)) == (None, 3, [None, 3])
        assert repr(x.shape.dims) == "[Dimension(None), Dimension(3)]"
        with tf.Graph().as_default():  # flowgraph's own code still sees Dimensions
            y = tf.placeholder(tf.float32, [None, 4])
            h = tf.layers.dense(y, 3)
            train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_mean(h * h))
            assert h.shape[1] == 3 and train.type == "NoOp"
    finally:
        tf.disable_v2_tensorshape()
    assert repr(x.shape[1]) == "Dimension(3)"


def test_other_switches_as_tf_graph_mode():
    x, y = tf.constant(1.0), tf.constant(1.0)
    tf.enable_tensor_equality()
    try:  # graph mode: identity comparison and hashing either way
        assert (x == y) is False and isinstance(hash(x), int)
    finally:
        tf.disable_tensor_equality()
    # Resource variables as TF (VarHandleOp); control flow v2 is recorded only: flowgraph
    # has no functional control flow (TF gives an If-based cond here).
    tf.enable_resource_variables()
    tf.enable_control_flow_v2()
    try:
        assert tf.Variable(1.0).op.type == "VarHandleOp"
        c = tf.cond(tf.constant(True), lambda: tf.constant(1), lambda: tf.constant(2))
        assert c.op.type == "Merge"
        assert tf.resource_variables_enabled() and not tf.control_flow_v2_enabled()
    finally:
        tf.disable_resource_variables()
        tf.disable_control_flow_v2()


# -- creators, critical sections, containers -----------------------------------------------
_TF_CREATOR_KWARGS = [
    "aggregation", "caching_device", "collections", "constraint", "dtype", "expected_shape",
    "experimental_enable_variable_lifting", "import_scope", "initial_value", "name", "shape",
    "synchronization", "trainable", "use_resource", "validate_shape", "variable_def"]


def test_variable_creator_scope():
    seen = []

    def outer(next_creator, **kw):
        seen.append(("outer", sorted(kw)))
        return next_creator(**kw)

    def inner(next_creator, **kw):
        seen.append(("inner", kw["name"], kw["trainable"]))
        kw["trainable"] = False
        return next_creator(**kw)

    with tf.Graph().as_default():
        with tf.variable_creator_scope(outer), tf.variable_creator_scope(inner):
            v = tf.Variable(2.0, name="vv")
            tf.get_variable("gw", shape=[2], initializer=tf.zeros_initializer())
        assert seen == [("inner", "vv", None), ("outer", _TF_CREATOR_KWARGS),
                        ("inner", "gw", True), ("outer", _TF_CREATOR_KWARGS)]
        assert tf.trainable_variables() == []
        tf.Variable(1.0)
        assert len(seen) == 4 and len(tf.trainable_variables()) == 1
        with tf.Session() as s:
            s.run(v.initializer)
            assert s.run(v) == 2.0


def test_critical_section_serializes():
    with tf.Graph().as_default():
        cs = tf.CriticalSection(name="cs")
        assert cs.name == "cs"
        cnt = tf.Variable(0, name="cnt")
        r = cs.execute(lambda: cnt.assign_add(1))
        assert (r.dtype.name, r.shape.as_list()) == ("int32", [])
        inside, overlaps = [0], []

        def body(x):
            inside[0] += 1
            overlaps.append(inside[0])
            time.sleep(0.02)
            inside[0] -= 1
            return x

        slow = cs.execute(lambda: tf.py_func(body, [tf.constant(1.0)], tf.float32))
        with tf.Session() as s:
            s.run(cnt.initializer)
            assert [s.run(r) for _ in range(3)] == [1, 2, 3]
            threads = [threading.Thread(target=s.run, args=(slow,)) for _ in range(4)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(10)
        assert overlaps == [1, 1, 1, 1]


def test_critical_section_released_when_its_step_fails():
    with tf.Graph().as_default():
        cs = tf.CriticalSection()
        x = tf.placeholder(tf.float32, [None])
        bad = cs.execute(lambda: tf.check_numerics(x, "bad"))
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(bad, {x: [np.nan]})
            gc.collect()
            out = []
            th = threading.Thread(target=lambda: out.append(s.run(bad, {x: [1.0]})))
            th.start()
            th.join(5)
            assert [v.tolist() for v in out] == [[1.0]]


def test_container_sets_the_attr_and_reset_clears_it():
    with tf.Graph().as_default():
        with tf.container("exp"):
            q = tf.FIFOQueue(2, tf.float32)
            v = tf.Variable(1.0, name="inexp")
        assert q.queue_ref.op.get_attr("container") == b"exp"
        assert v.op.get_attr("container") == b"exp"
        assert tf.FIFOQueue(2, tf.float32).queue_ref.op.get_attr("container") == b""
        size = q.size()
        with tf.Session("local://cont_test") as s:
            s.run(q.enqueue(1.0))
            assert s.run(size) == 1
        tf.Session.reset("local://cont_test", ["exp"])
        with tf.Session("local://cont_test") as s:
            assert s.run(size) == 0
        tf.Session.reset("local://cont_test")


# -- small helpers -------------------------------------------------------------------------
def test_function_in_graph_mode():
    with tf.Graph().as_default():
        @tf.function
        def f(x):
            return x * 2 + 1

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def f2(x):
            return x + 1

        y, y2 = f(tf.constant([1.0, 2.0])), f2([1.0, 2.0])
        with pytest.raises(TypeError):
            f2(tf.constant([[1.0]]))
        with tf.Session() as s:
            assert s.run(y).tolist() == [3.0, 5.0] and s.run(y2).tolist() == [2.0, 3.0]


def test_batch_function_bfloat16_and_libraries():
    with tf.Graph().as_default():
        @tf.nondifferentiable_batch_function(1, 4, 1000)
        def bf(x):
            return x * 3

        x = tf.constant([1.0, 2.0])
        z = bf(x)
        assert tf.gradients(z, x) == [None]
        b = tf.to_bfloat16(x)
        assert (b.dtype.name, b.op.type, b.op.name) == ("bfloat16", "Cast", "ToBFloat16")
        with tf.Session() as s:
            assert s.run(z).tolist() == [3.0, 6.0]
    with pytest.raises(tf.errors.NotFoundError, match=r"nonexist_zz\.so.*cannot load"):
        tf.load_op_library("/tmp/nonexist_zz.so")
    with pytest.raises(tf.errors.NotFoundError):
        tf.load_file_system_library("/tmp/nonexist_zz.so")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        tf.load_library("/tmp/nonexist_zz.so")


# -- N-dimensional FFTs (TF 2.15's CPU build has no kernel for them: NumPy references) ----
def test_fftnd_family_against_numpy():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7.0
    with tf.Graph().as_default():
        c = tf.constant((x + 1j * x[::-1]).astype(np.complex64))
        f = tf.fftnd(c, [3, 4], [1, 2])
        # TF's static shapes for these calls: (2, 3, 4) throughout
        assert (f.op.type, f.dtype.name, f.shape.as_list(), f.name) == (
            "FFTND", "complex64", [2, 3, 4], "FFTND:0")
        f2 = tf.fftnd(c, [2, 6], [0, 2])
        assert f2.shape.as_list() == [2, 3, 6]  # TF keeps the input's (2, 3, 4) here
        r = tf.rfftnd(tf.constant(x), [3, 4], [-2, -1])
        ir = tf.irfftnd(r, [3, 4], [-2, -1])
        assert (r.op.type, r.dtype.name, r.shape.as_list()) == ("RFFTND", "complex64",
                                                                [2, 3, 3])
        assert (ir.op.type, ir.dtype.name, ir.shape.as_list()) == ("IRFFTND", "float32",
                                                                   [2, 3, 4])
        back = tf.ifftnd(f, [3, 4], [1, 2])
        unknown = tf.fftnd(c, tf.placeholder_with_default([4], [None]), [-1])
        assert unknown.shape.as_list() == [None, None, None]
        with pytest.raises(TypeError, match="not in list of allowed values"):
            tf.fftnd(tf.constant(x), [3], [1])
        with tf.Session() as s:
            vf, vf2, vr, vir, vback = s.run([f, f2, r, ir, back])
            cv = s.run(c)
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
                s.run(tf.fftnd(c, [3], [5]))
    np.testing.assert_allclose(vf, np.fft.fftn(cv, axes=(1, 2)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(vf2, np.fft.fftn(cv, s=(2, 6), axes=(0, 2)), rtol=1e-4,
                               atol=1e-4)
    np.testing.assert_allclose(vr, np.fft.rfftn(x, axes=(1, 2)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(vir, x, atol=1e-5)
    np.testing.assert_allclose(vback, cv, atol=1e-5)


# -- mixed precision -----------------------------------------------------------------------
def test_mixed_precision_names_and_configs():
    mp = tf.mixed_precision
    assert sorted(n for n in dir(mp) if not n.startswith("_")) == [
        "DynamicLossScale", "FixedLossScale", "LossScale", "MixedPrecisionLossScaleOptimizer",
        "disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite",
        "experimental"]
    with tf.Graph().as_default():
        ls = mp.experimental.DynamicLossScale()
        assert (ls.increment_period, ls.multiplier, ls.initial_loss_scale) == (
            2000, 2.0, 32768.0)
        assert ls.get_config() == {"initial_loss_scale": 32768.0, "increment_period": 2000,
                                   "multiplier": 2.0}
        assert mp.experimental.FixedLossScale(128.0).get_config() == {
            "loss_scale_value": 128.0}
        with pytest.raises(ValueError, match='"opt" must be an instance'):
            mp.enable_mixed_precision_graph_rewrite("x")
        with pytest.raises(ValueError, match="Could not interpret loss scale identifier: bad"):
            mp.MixedPrecisionLossScaleOptimizer(tf.train.GradientDescentOptimizer(0.5), "bad")


def test_mixed_precision_dynamic_loss_scaling_as_tf():
    with tf.Graph().as_default():
        w = tf.Variable([1.0, 2.0], name="w")
        opt = tf.mixed_precision.enable_mixed_precision_graph_rewrite(
            tf.train.GradientDescentOptimizer(0.1))
        assert type(opt).__name__ == "MixedPrecisionLossScaleOptimizer"
        tf.mixed_precision.disable_mixed_precision_graph_rewrite()
        gv = opt.compute_gradients(tf.reduce_sum(w * w))
        train = opt.apply_gradients(gv)
        assert sorted(v.name for v in tf.global_variables()) == [
            "current_loss_scale:0", "good_steps:0", "w:0"]
        x = tf.placeholder(tf.float32, [])
        w2 = tf.Variable(1.0, name="w2")
        dyn = tf.mixed_precision.experimental.DynamicLossScale(
            initial_loss_scale=4.0, increment_period=2, multiplier=2.0)
        opt2 = tf.mixed_precision.MixedPrecisionLossScaleOptimizer(
            tf.train.GradientDescentOptimizer(0.5), loss_scale=dyn)
        train2 = opt2.minimize(w2 * x)
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            assert s.run(opt._loss_scale()) == 32768.0
            np.testing.assert_allclose(s.run([g for g, _ in gv])[0], [2.0, 4.0])
            s.run(train)
            np.testing.assert_allclose(s.run(w), [0.8, 1.6])
            steps = []
            for xv in [1.0, np.inf, 1.0, 1.0, 1.0]:  # inf: skipped, scale halves
                s.run(train2, {x: xv})
                steps.append([float(s.run(w2)), float(s.run(dyn()))])
    assert steps == [[0.5, 4.0], [0.5, 2.0], [0.0, 2.0], [-0.5, 4.0], [-1.0, 4.0]]


def test_accumulator_handles_and_critical_section_in_a_grpc_session():
    server = tf.train.Server.create_local_server()
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
        apply, take = acc.apply_grad([1.0, 3.0]), acc.take_grad(2)
        handle = tf.get_session_handle(tf.constant([5.0]))
        section = tf.CriticalSection().execute(lambda: tf.constant(2) * 3)
        with tf.Session(server.target) as s:
            s.run(apply)
            s.run(apply)
            assert s.run(take).tolist() == [1.0, 3.0]
            assert s.run(acc.num_accumulated()) == 0
            assert s.run(section) == 6
            assert s.run(handle).eval().tolist() == [5.0]


def test_random_index_shuffle_matches_tf():
    with tf.Graph().as_default():
        r = tf.random_index_shuffle(tf.constant(3, tf.int64), tf.constant([1, 2, 3], tf.int64),
                                    tf.constant(9, tf.int64))
        assert (r.op.type, r.dtype.name, r.shape.as_list(), r.name) == (
            "RandomIndexShuffle", "int64", [], "RandomIndexShuffle:0")
        v = tf.random_index_shuffle(tf.range(10), [4, 5, 6], 9)
        assert v.shape.as_list() == [10]
        v8 = tf.random_index_shuffle(tf.range(10), [4, 5, 6], 9, rounds=8)
        big = tf.random_index_shuffle(tf.constant([0, 1, 2, 100000, 7], tf.int64),
                                      tf.constant([[7, 8, 9]] * 5, tf.int64),
                                      tf.constant(200000, tf.int64))
        u = tf.random_index_shuffle(tf.constant([5, 6], tf.uint32),
                                    tf.constant([1, 1, 1], tf.uint32),
                                    tf.constant([10, 3000000000], tf.uint32))
        huge = tf.random_index_shuffle(tf.constant(12345, tf.int64),
                                       tf.constant([11, 22, 33], tf.int64),
                                       tf.constant(2 ** 40, tf.int64))
        with pytest.raises(ValueError, match=r"Seed must have shape \[3\] or \[n, 3\]"):
            tf.random_index_shuffle(1, [1, 2], 9)
        odd = tf.random_index_shuffle(1, [1, 2, 3], 9, rounds=3)  # TF builds it too
        with tf.Session() as s:
            assert s.run(r) == 4
            assert s.run(v).tolist() == [6, 1, 4, 7, 2, 3, 5, 9, 0, 8]
            assert s.run(v8).tolist() == [6, 2, 9, 8, 0, 4, 7, 3, 1, 5]
            assert s.run(big).tolist() == [48601, 14566, 101810, 86992, 163775]
            assert s.run(u).tolist() == [5, 26528207]
            assert s.run(tf.random_index_shuffle(0, [1, 2, 3], 0)) == 0
            assert s.run(huge) == 1076873535898
            with pytest.raises(tf.errors.InvalidArgumentError, match="rounds"):
                s.run(odd)
            perm = s.run(tf.random_index_shuffle(tf.range(1000), [9, 8, 7], 999))
    assert sorted(perm.tolist()) == list(range(1000))  # a bijection

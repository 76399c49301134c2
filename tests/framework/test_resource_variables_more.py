"""Resource variables, the remaining gaps: ``ResourceScatterNd{Update,Add,Sub}``,
``v[spec].assign`` (``ResourceStridedSliceAssign``, and ``StridedSliceAssign`` on a
reference variable), ``ResourceGather(batch_dims=)``, ``tf.shape(v)``, and the training
utilities on resource variables (moving averages, savers keyed by a dict, warm starts,
partitioned resource variables, loops and conds writing them).

Every expected value, op type and name was printed by TensorFlow 2.15 (``tf.compat.v1``)
running the same program (the tf-oracle); kernels are also checked against NumPy and
the batch gather's gradient against finite differences.
"""

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops import resource_variable_ops as rv

BASE = np.arange(12, dtype=np.float32).reshape(4, 3)


def _var(resource=True, name="v"):
    return tf.get_variable(name, initializer=BASE, use_resource=resource)


def _after(update, var):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(update)
        return sess.run(var)


# -- ResourceScatterNd* ------------------------------------------------------------------
@pytest.mark.parametrize("fn,indices,updates,at,kind", [
    (tf.scatter_nd_update, [[1], [3]], [[9.0, 9, 9], [8, 8, 8]], np.s_[[1, 3]], "Update"),
    (tf.scatter_nd_add, [[0, 1], [0, 1]], [100.0, 1.0], np.s_[0, 1], "Add"),
    (tf.scatter_nd_sub, [[2, 2]], [1.0], np.s_[2, 2], "Sub"),
])
def test_scatter_nd_on_a_resource_variable(fn, indices, updates, at, kind):
    with tf.Graph().as_default():
        v = _var()
        up = fn(v, indices, updates)
        # TF: the op is ResourceScatterNd<kind>, the result the variable read after it
        assert (up.op.type, up.dtype.name, up.shape.as_list()) == \
            (f"ResourceScatterNd{kind}", "float32", [4, 3])
        got = _after(up, v)
    want = BASE.copy()
    idx = np.asarray(indices)
    if kind == "Update":
        want[at] = updates
    else:
        np.add.at(want, tuple(idx.T), np.asarray(updates) * (1 if kind == "Add" else -1))
    np.testing.assert_array_equal(got, want)


def test_scatter_nd_methods_and_errors():
    with tf.Graph().as_default():
        v = _var()
        up = v.scatter_nd_add([[3, 0]], [5.0]).scatter_nd_update([[0, 0]], [-1.0])
        got = _after(up, v)
        with pytest.raises(ValueError, match="updates have shape"):
            tf.scatter_nd_update(v, [[0], [1]], [1.0, 2.0])
        bad = tf.scatter_nd_update(v, [[7]], [[1.0, 2, 3]])
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"index \[7\] is out of"):
                sess.run(bad)
    want = BASE.copy()
    want[3, 0] += 5
    want[0, 0] = -1
    np.testing.assert_array_equal(got, want)


# -- v[spec].assign ----------------------------------------------------------------------
@pytest.mark.parametrize("resource,op_type", [(True, "ResourceStridedSliceAssign"),
                                              (False, "StridedSliceAssign")])
def test_slice_assign(resource, op_type):
    with tf.Graph().as_default():
        v = tf.Variable(BASE, name="v", use_resource=resource)
        a = v[1:3].assign(tf.zeros([2, 3]))
        # TF: 'strided_slice/_assign', inputs v, the slice's three stacks and the value
        assert a.op.type == op_type and a.op.name == "strided_slice/_assign"
        assert [t.name for t in a.op.inputs] == [
            "v:0", "strided_slice/stack:0", "strided_slice/stack_1:0",
            "strided_slice/stack_2:0", "zeros:0"]
        assert a.dtype.base_dtype == tf.float32 and a.shape.as_list() == [4, 3]
        row = v[0].assign(5.0)  # a scalar fills the slice
        mine = v[::2, 1:].assign([[1.0, 2], [3, 4]], name="mine")
        assert mine.op.name == "mine"
        col = v[:, 1].assign([1.0, 2, 3, 4])
        bad = v[0].assign([1.0, 2.0])  # TF builds it and fails when it runs
        with tf.Session() as sess:
            results = []
            for up in (a, row, mine, col):
                sess.run(v.initializer)
                results.append(sess.run(up))
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match=r"sliced l-value shape \[3\] does not match r-value "
                                     r"shape \[2\]"):
                sess.run(bad)
    for got, key, value in zip(results, (np.s_[1:3], np.s_[0], np.s_[::2, 1:], np.s_[:, 1]),
                               (0.0, 5.0, [[1.0, 2], [3, 4]], [1.0, 2, 3, 4])):
        want = BASE.copy()
        want[key] = value
        np.testing.assert_array_equal(got, want)


def test_reference_slice_assign_has_no_gradient():
    with tf.Graph().as_default():
        v = tf.Variable(BASE, name="v")
        a = v[0:1].assign([[1.0, 2, 3]])
        # TF: LookupError "No gradient defined for operation 'strided_slice/_assign' (op
        # type: StridedSliceAssign)"
        with pytest.raises(LookupError, match="StridedSliceAssign"):
            tf.gradients(tf.reduce_sum(a), v)


def test_slice_assign_gradient_and_chaining():
    with tf.Graph().as_default():
        v = tf.Variable(BASE, name="v", use_resource=True)
        a = v[0:1].assign([[1.0, 2, 3]])
        # TF: the lazily read variable differentiates like a read: ones of v's shape
        (g,) = tf.gradients(tf.reduce_sum(a), v)
        twice = v[3].assign([0.0, 0, 0])
        with tf.control_dependencies([twice]):
            then = v[3, 0].assign(7.0)
        with tf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(g), np.ones([4, 3]))
            sess.run(v.initializer)
            assert sess.run(then)[3].tolist() == [7.0, 0.0, 0.0]


# -- ResourceGather(batch_dims=), tf.gather, tf.shape --------------------------------------
def test_gather_batch_dims():
    values = np.random.RandomState(0).normal(size=(2, 4, 3))
    idx = np.array([[0, 2, 0], [3, 3, 1]])
    with tf.Graph().as_default():
        v = tf.Variable(values, name="v", use_resource=True)
        rows = rv.resource_gather(v.handle, idx, tf.float64, batch_dims=1)
        assert rows.op.type == "ResourceGather" and rows.shape.as_list() == [2, 3, 3]
        # TF: tf.gather(v, idx, batch_dims=1) reads the variable and gathers (GatherV2)
        via_gather = tf.gather(v, idx, batch_dims=1)
        assert via_gather.op.type == "GatherV2"
        # TF's ResourceGather gradient ignores batch_dims and fails to build ("Cannot
        # reshape a tensor with 18 elements to shape [6,4,3]"); flowgraph's is the dense
        # gradient, checked against NumPy and finite differences.
        weights = tf.constant(np.random.RandomState(1).normal(size=(2, 3, 3)))
        (g,) = tf.gradients(tf.reduce_sum(rows * rows * weights), v)
        with tf.Session() as sess:
            sess.run(v.initializer)
            got, ref, grad = sess.run([rows, via_gather, tf.convert_to_tensor(g)])
    want = np.stack([values[b][idx[b]] for b in range(2)])
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ref, want)
    w = np.random.RandomState(1).normal(size=(2, 3, 3))
    expected = np.zeros_like(values)
    for b in range(2):
        np.add.at(expected[b], idx[b], 2 * want[b] * w[b])
    np.testing.assert_allclose(grad, expected, rtol=1e-12)
    # the same gradient by central differences along a random direction
    d = np.random.RandomState(2).normal(size=values.shape)

    def f(p):
        return np.sum(np.stack([p[b][idx[b]] for b in range(2)]) ** 2 * w)

    eps = 1e-6
    fd = (f(values + eps * d) - f(values - eps * d)) / (2 * eps)
    np.testing.assert_allclose(np.sum(grad * d), fd, rtol=1e-6)


def test_gather_batch_dims_errors():
    with tf.Graph().as_default():
        v = tf.Variable(np.zeros([2, 3]), name="v", use_resource=True)
        with pytest.raises(ValueError, match="batch_dims=2 must be"):
            rv.resource_gather(v.handle, [[0]] * 2, tf.float64, batch_dims=2)
        bad = rv.resource_gather(v.handle, [[5], [0]], tf.float64, batch_dims=1)
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError, match="index 5 is out of"):
                sess.run(bad)


def test_shape_of_a_resource_variable():
    with tf.Graph().as_default():
        v = tf.get_variable("w", shape=[4, 3], use_resource=True)
        # TF: Const for a fully known shape (tf.shape, tf.size, tf.rank)
        assert [tf.shape(v).op.type, tf.shape(v, out_type=tf.int64).op.type,
                tf.size(v).op.type, tf.rank(v).op.type] == ["Const"] * 4
        # TF keeps the initial value's static shape without validate_shape
        u = tf.Variable(tf.zeros([2, 3]), validate_shape=False, use_resource=True, name="u")
        assert u.shape.as_list() == [2, 3] and u.value().shape.as_list() == [2, 3]
        assert tf.shape(u).op.type == "Const"
        # TF: a partly known initial value makes a partly known variable; tf.shape reads
        p = tf.Variable(tf.placeholder_with_default(tf.zeros([2, 3]), [None, 3]),
                        use_resource=True, name="p")
        s = tf.shape(p)
        assert p.shape.as_list() == [None, 3]
        assert s.op.type == "Shape" and s.op.inputs[0].op.type == "ReadVariableOp"
        dynamic = rv.variable_shape(p.handle)
        assert dynamic.op.type == "VariableShape"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(s).tolist() == [2, 3] == sess.run(dynamic).tolist()


# -- training utilities on resource variables --------------------------------------------
def test_exponential_moving_average():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=[1.0, 2.0], use_resource=True)
        ema = tf.train.ExponentialMovingAverage(0.5)
        up = ema.apply([v])
        avg = ema.average(v)
        # TF: ('ResourceVariable', 'VarHandleOp', 'v/ExponentialMovingAverage:0', ...)
        assert (type(avg).__name__, avg.op.type, avg.name) == \
            ("ResourceVariable", "VarHandleOp", "v/ExponentialMovingAverage:0")
        assert sorted(ema.variables_to_restore()) == ["v/ExponentialMovingAverage"]
        assert [x.name for x in tf.moving_average_variables()] == ["v:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(v.assign([3.0, 6.0]))
            sess.run(up)
            assert sess.run(avg).tolist() == [2.0, 4.0]


def test_moving_average_restore_and_dict_saver(tmp_path):
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=[1.0, 2.0], use_resource=True)
        p = tf.get_variable("p", shape=[4, 2], initializer=tf.ones_initializer(),
                            partitioner=tf.fixed_size_partitioner(2), use_resource=True)
        assert [type(x).__name__ for x in p] == ["ResourceVariable"] * 2
        ema = tf.train.ExponentialMovingAverage(0.9, zero_debias=True)
        up = ema.apply([v])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(v.assign([3.0, 3.0]))
            sess.run(up)
            renamed = tf.train.Saver(var_list={"renamed": v}).save(
                sess, str(tmp_path / "renamed"))
            full = tf.train.Saver().save(sess, str(tmp_path / "full"))
    reader = tf.train.NewCheckpointReader(renamed)
    assert sorted(reader.get_variable_to_shape_map().items()) == [("renamed", [2])]
    assert ("p", [4, 2]) in tf.train.list_variables(full)
    assert tf.train.load_variable(renamed, "renamed").tolist() == [3.0, 3.0]
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=[0.0, 0.0], use_resource=True)
        restore = tf.train.ExponentialMovingAverage(0.9).variables_to_restore()
        assert sorted(restore) == ["v/ExponentialMovingAverage"]
        with tf.Session() as sess:
            tf.train.Saver(restore).restore(sess, full)
            # TF: [1.2000000476837158, 2.0999999046325684]
            np.testing.assert_allclose(sess.run(v), [1.2, 2.1], rtol=1e-6)


def test_init_from_checkpoint_and_warm_start(tmp_path):
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=[1.0, 2.0], use_resource=True)
        tf.get_variable("p", shape=[4, 2], initializer=tf.ones_initializer(),
                        partitioner=tf.fixed_size_partitioner(2), use_resource=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            full = tf.train.Saver().save(sess, str(tmp_path / "full"))
            renamed = tf.train.Saver({"renamed": v}).save(sess, str(tmp_path / "renamed"))
    with tf.Graph().as_default():
        a = tf.get_variable("a/v", initializer=[0.0, 0.0], use_resource=True)
        tf.train.init_from_checkpoint(renamed, {"renamed": "a/v"})
        # TF: the initializer becomes an AssignVariableOp of an Identity of the RestoreV2
        assert a.initializer.type == "AssignVariableOp"
        assert [(t.name, t.op.type) for t in a.initializer.inputs] == [
            ("a/v:0", "VarHandleOp"), ("Identity:0", "Identity")]
        assert a.initializer.inputs[1].op.inputs[0].op.type == "RestoreV2"
        with tf.variable_scope("q"):
            qv = tf.get_variable("v", initializer=[0.0, 0.0], use_resource=True)
            qp = tf.get_variable("p", shape=[4, 2], initializer=tf.zeros_initializer(),
                                 partitioner=tf.fixed_size_partitioner(2),
                                 use_resource=True)
        tf.train.init_from_checkpoint(full, {"/": "q/"})
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(a).tolist() == [1.0, 2.0] == sess.run(qv).tolist()
            assert sess.run(tf.convert_to_tensor(qp)).tolist() == [[1.0, 1.0]] * 4
    with tf.Graph().as_default():
        w = tf.get_variable("v", initializer=[5.0, 5.0], use_resource=True)
        tf.train.warm_start(full, vars_to_warm_start=".*")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(w).tolist() == [1.0, 2.0]


def test_partitioned_resource_variable_trains_as_tensorflow():
    with tf.Graph().as_default() as g:
        p = tf.get_variable("p", shape=[5, 2], initializer=tf.ones_initializer(),
                            partitioner=tf.fixed_size_partitioner(2), use_resource=True)
        assert [(x.name, x.shape.as_list(), x.op.type) for x in p] == [
            ("p/part_0:0", [3, 2], "VarHandleOp"), ("p/part_1:0", [2, 2], "VarHandleOp")]
        rows = tf.reduce_sum(tf.nn.embedding_lookup(p, [0, 4, 4]))
        dense = tf.reduce_sum(tf.concat(list(p), 0) * 2.0)
        train = tf.train.AdagradOptimizer(0.1).minimize(rows + dense)
        ops = {o.type for o in g.get_operations()}
        # TF: each part gathers itself (ResourceGather); the dense term's update is
        # ResourceApplyAdagrad
        assert {"ResourceGather", "ResourceApplyAdagrad"} <= ops
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            got = sess.run(tf.concat(list(p), 0))
    np.testing.assert_allclose(got[:, 0], [0.9005509614944458, 0.9012270569801331,
                                           0.9003110527992249, 0.9012270569801331,
                                           0.9012270569801331], rtol=1e-6)


def test_while_loop_and_cond_write_a_resource_variable():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=0.0, use_resource=True)

        def body(i, acc):
            with tf.control_dependencies([v.assign_add(1.0)]):
                return i + 1, acc + v.read_value()

        out = tf.while_loop(lambda i, a: i < 4, body, [tf.constant(0), tf.constant(0.0)],
                            parallel_iterations=1)
        c = tf.get_variable("c", initializer=1.0, use_resource=True)
        pred = tf.placeholder(tf.bool, [])
        picked = tf.cond(pred, lambda: c.assign(10.0).read_value(),
                         lambda: tf.identity(c.read_value()))
        bump = tf.cond(pred, lambda: tf.group(c.assign_add(5.0)), tf.no_op)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            # TF: (4, 10.0), then v == 4.0
            assert [float(x) for x in sess.run(out)] == [4.0, 10.0]
            assert sess.run(v) == 4.0
            # TF: 1.0 (false branch), 10.0 (true), then 15.0 after the two bumps
            assert sess.run(picked, {pred: False}) == 1.0
            assert sess.run(picked, {pred: True}) == 10.0
            sess.run(bump, {pred: True})
            sess.run(bump, {pred: False})
            assert sess.run(c) == 15.0

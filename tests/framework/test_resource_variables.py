"""Resource variables (`flowgraph/ops/resource_variables.py`), checked against TensorFlow
2.15's ``tf.compat.v1`` (v2 behaviour disabled): the values inline come from it."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowgraph as tf
from flowgraph.ops.resource_variables import ResourceVariable, _UnreadVariable


@pytest.fixture(autouse=True)
def _reference_variables_after():
    yield
    tf.disable_resource_variables()


def _ops(graph):
    return [(op.name, op.type) for op in graph.get_operations()]


# -- the variable and its graph -----------------------------------------------------------
def test_variable_graph_matches_tensorflow():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        # TF: type, repr, name, dtype (no _ref), op type, shape, handle
        assert type(v).__name__ == "ResourceVariable"
        assert isinstance(v, tf.Variable)
        assert repr(v) == "<tf.Variable 'v:0' shape=(2,) dtype=float32>"
        assert (v.name, v.dtype, v.op.type, v.op.name) == ("v:0", tf.float32, "VarHandleOp", "v")
        assert v.shape.as_list() == [2]
        assert (v.handle.name, v.handle.dtype, v.handle.shape.as_list()) == \
            ("v:0", tf.resource, [])
        assert v.initializer.name == "v/Assign" and v.initializer.type == "AssignVariableOp"
        assert [t.name for t in v.initializer.inputs] == ["v:0", "v/Initializer/initial_value:0"]
        assert v.initial_value.name == "v/Initializer/initial_value:0"
        assert v._as_graph_element().name == "v/Read/ReadVariableOp:0"
        assert v.value().name == "ReadVariableOp:0"
        assert v.read_value().name == "Identity:0"
    # TF 2.15's ops, in order
    assert _ops(g) == [
        ("v/Initializer/initial_value", "Const"), ("v", "VarHandleOp"),
        ("v/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp"),
        ("v/Assign", "AssignVariableOp"), ("v/Read/ReadVariableOp", "ReadVariableOp"),
        ("ReadVariableOp", "ReadVariableOp"), ("Read/ReadVariableOp", "ReadVariableOp"),
        ("Identity", "Identity")]
    vh = g.get_operation_by_name("v")
    assert vh.attrs["shared_name"] == "v" and vh.attrs["dtype"] == tf.float32


def test_assign_returns_unread_variable_as_tensorflow():
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        a = v.assign([3.0, 4.0])
        a2 = v.assign_add([1.0, 1.0])
        a3 = v.assign_sub([1.0, 1.0], read_value=False)
        # TF: _UnreadVariable named after the assign op; read_value=False: the op
        assert type(a) is _UnreadVariable
        assert repr(a) == "<tf.Variable 'AssignVariableOp' shape=(2,) dtype=float32>"
        assert repr(a2) == "<tf.Variable 'AssignAddVariableOp' shape=(2,) dtype=float32>"
        assert (a3.type, a3.name) == ("AssignSubVariableOp", "AssignSubVariableOp")
        types = [t for _, t in _ops(g)]
        assert "Assign" not in types and "AssignAdd" not in types
        with tf.Session() as sess:
            sess.run(v.initializer)
            # TF: [1. 2.] [3. 4.] [4. 5.] then [4. 5.]
            assert sess.run(v).tolist() == [1.0, 2.0]
            assert sess.run(a).tolist() == [3.0, 4.0]
            assert sess.run(a2).tolist() == [4.0, 5.0]
            assert sess.run(v).tolist() == [4.0, 5.0]
            v.load([7.0, 8.0], sess)
            assert v.eval().tolist() == [7.0, 8.0]
            up = v.scatter_add(tf.IndexedSlices(tf.constant([1.0]), tf.constant([1])))
            assert sess.run(up).tolist() == [7.0, 9.0]  # TF: [7. 9.]
            sess.run(a3)
            assert sess.run(v).tolist() == [6.0, 8.0]


def test_state_ops_dispatch_to_the_variable():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        init = tf.is_variable_initialized(v)
        assert (init.op.type, init.name) == ("VarIsInitializedOp", "VarIsInitializedOp:0")
        a = tf.assign(v, [5.0, 6.0])
        s = tf.scatter_update(v, [0], [9.0])
        assert a.op.type == "AssignVariableOp" and s.op.type == "ResourceScatterUpdate"
        report = tf.report_uninitialized_variables()
        with tf.Session() as sess:
            assert not sess.run(init)
            assert sess.run(report).tolist() == [b"v"]
            sess.run(v.initializer)
            assert sess.run(init)
            assert sess.run(report).tolist() == []
            assert sess.run(a).tolist() == [5.0, 6.0]
            assert sess.run(s).tolist() == [9.0, 6.0]


def test_reading_uninitialized_fails_as_tensorflow():
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.FailedPreconditionError) as info:
                sess.run(v)
    # TF's text (its container is 'localhost')
    assert "Could not find variable v. This could mean that the variable has been " \
        "deleted. In TF1, it can also mean the variable is uninitialized." in str(info.value)


def test_gather_sparse_read_and_embedding_lookup():
    with tf.Graph().as_default() as g:
        w = tf.get_variable("w", [2, 3], use_resource=True, initializer=tf.ones_initializer())
        assert type(w) is ResourceVariable and w.initializer.name == "w/Assign"
        assert g.get_operation_by_name("w/Initializer/ones").type == "Const"
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        sr = v.sparse_read([0])
        gt = tf.gather(w, [1])
        el = tf.nn.embedding_lookup(w, [1, 0])
        # TF: Gather (ResourceGather), Gather_1, embedding_lookup + embedding_lookup/Identity
        assert (sr.name, sr.op.type, sr.shape.as_list()) == ("Gather:0", "ResourceGather", [1])
        assert (gt.name, gt.op.type, gt.shape.as_list()) == \
            ("Gather_1:0", "ResourceGather", [1, 3])
        assert el.name == "embedding_lookup/Identity:0"
        assert el.op.inputs[0].op.type == "ResourceGather"
        assert g.get_operation_by_name("Gather/indices").type == "Const"
        s = v + 1.0
        assert s.op.type == "AddV2" and s.op.inputs[0].op.type == "ReadVariableOp"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(sr).tolist() == [1.0]
            assert sess.run(el).tolist() == [[1.0] * 3] * 2
            assert sess.run(s).tolist() == [2.0, 3.0]
            assert sess.run(v[1]) == 2.0


def test_collections_and_scopes():
    with tf.Graph().as_default():
        a = tf.Variable(1.0, name="a", use_resource=True)
        b = tf.Variable(1.0, name="b", use_resource=True, trainable=False)
        with tf.variable_scope("s", use_resource=True):
            c = tf.get_variable("c", [2])
        d = tf.get_variable("d", [2])
        assert tf.global_variables() == [a, b, c, d]
        assert tf.trainable_variables() == [a, c, d]
        assert [type(x).__name__ for x in (a, b, c, d)] == \
            ["ResourceVariable"] * 3 + ["Variable"]
        assert c.name == "s/c:0" and c.op.type == "VarHandleOp"


def test_enable_resource_variables_switch():
    # TF: False; after enable: True and every new variable is a ResourceVariable, the
    # global step included; after disable: reference variables again.
    assert tf.resource_variables_enabled() is False
    with tf.Graph().as_default():
        assert tf.train.get_or_create_global_step().op.type == "VariableV2"
        tf.enable_resource_variables()
        assert tf.resource_variables_enabled() is True
        assert type(tf.Variable(1.0)) is ResourceVariable
        assert type(tf.get_variable("q", [1])) is ResourceVariable
        assert tf.Variable(1.0, use_resource=False).op.type == "VariableV2"
    with tf.Graph().as_default():
        assert type(tf.train.create_global_step()) is ResourceVariable
        tf.disable_resource_variables()
        assert tf.resource_variables_enabled() is False
        assert tf.Variable(1.0).op.type == "VariableV2"


def test_variable_creator_scope_sees_use_resource():
    seen = []

    def creator(next_creator, **kwargs):
        seen.append(kwargs["use_resource"])
        return next_creator(**kwargs)

    with tf.Graph().as_default(), tf.variable_creator_scope(creator):
        v = tf.Variable(1.0, use_resource=True)
    assert seen == [True] and type(v) is ResourceVariable


def test_initialized_value_is_not_provided_as_in_tensorflow():
    with tf.Graph().as_default():
        v = tf.Variable(1.0, use_resource=True)
        with pytest.raises(NotImplementedError):
            v.initialized_value()


# -- gradients -----------------------------------------------------------------------------
def test_gradients_dense_and_sparse():
    with tf.Graph().as_default():
        w = tf.get_variable("w", initializer=tf.constant([[1.0, 2.0], [3.0, -1.0],
                                                          [0.5, 0.25]]), use_resource=True)
        (dense,) = tf.gradients(tf.reduce_sum(w.value() * 2.0), w)
        (sparse,) = tf.gradients(tf.reduce_sum(tf.gather(w, [1, 1])), w)
        # TF: a Tensor 'gradients/mul_1_grad/Mul:0'-like dense gradient; IndexedSlices
        assert isinstance(dense, tf.Tensor) and dense.shape.as_list() == [3, 2]
        assert isinstance(sparse, tf.IndexedSlices)
        x = tf.constant([[1.0, -1.0, 2.0]])
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w)))
        (g,) = tf.gradients(loss, w)
        with tf.Session() as sess:
            sess.run(w.initializer)
            wv = sess.run(w)
            assert sess.run(dense).tolist() == [[2.0, 2.0]] * 3
            vals, idx, shape = sess.run([sparse.values, sparse.indices, sparse.dense_shape])
            assert idx.tolist() == [1, 1] and shape.tolist() == [3, 2]
            assert vals.tolist() == [[1.0, 1.0], [1.0, 1.0]]
            got = sess.run(g)
    xv = np.array([[1.0, -1.0, 2.0]])
    np.testing.assert_allclose(got, 2 * xv.T @ (xv @ wv), rtol=1e-6)


_OPTIMIZERS = {
    "GradientDescent": lambda: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "Adam": lambda: tf.train.AdamOptimizer(0.1),
    "Adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "RMSProp": lambda: tf.train.RMSPropOptimizer(0.1),
    "CenteredRMSProp": lambda: tf.train.RMSPropOptimizer(0.1, centered=True),
    "Ftrl": lambda: tf.train.FtrlOptimizer(0.1),
    "Adadelta": lambda: tf.train.AdadeltaOptimizer(0.1),
    "ProximalGradientDescent": lambda: tf.train.ProximalGradientDescentOptimizer(
        0.1, l1_regularization_strength=0.01),
    "ProximalAdagrad": lambda: tf.train.ProximalAdagradOptimizer(0.1),
}

# TF 2.15, resource variables, 3 steps of the dense+sparse loss below
_TF_AFTER_3 = {
    "GradientDescent": [[0.448, 0.252], [2.608, -0.5], [0.864, -0.496]],
    "Momentum": [[-0.146, -0.747], [2.302, -0.509], [1.107, -0.0865]],
    "Adam": [[0.700027, 1.701156], [2.704796, -0.701936], [0.78676, -0.047802]],
    "Adagrad": [[0.77488, 1.77856], [2.791582, -0.782016], [0.692742, 0.032894]],
    "RMSProp": [[0.532742, 1.348857], [2.637, -0.425984], [0.820371, -0.339759]],
    "Adadelta": [[0.999864, 1.999864], [2.999864, -0.999864], [0.500136, 0.249864]],
}


def _train(use_resource: bool, make, sparse_only: bool):
    g = tf.Graph()
    with g.as_default():
        w = tf.get_variable("w", initializer=tf.constant([[1.0, 2.0], [3.0, -1.0],
                                                          [0.5, 0.25]]),
                            use_resource=use_resource)
        emb = tf.nn.embedding_lookup(w, [0, 2, 0])
        loss = tf.reduce_sum(emb * emb)
        if not sparse_only:
            x = tf.constant([[1.0, -1.0, 2.0]])
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w))) + loss
        opt = make()
        gs = tf.train.get_or_create_global_step()
        train = opt.minimize(loss, global_step=gs)
        types = sorted({op.type for op in g.get_operations() if "Apply" in op.type})
        slots = [type(opt.get_slot(w, s)).__name__ for s in opt.get_slot_names()]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            return sess.run(w), types, slots, sess.run(gs)


@pytest.mark.parametrize("name", sorted(_OPTIMIZERS))
@pytest.mark.parametrize("sparse_only", [False, True])
def test_optimizers_update_resource_variables_bitwise_as_reference(name, sparse_only):
    ref, ref_types, ref_slots, _ = _train(False, _OPTIMIZERS[name], sparse_only)
    res, res_types, res_slots, step = _train(True, _OPTIMIZERS[name], sparse_only)
    assert res.tobytes() == ref.tobytes()
    assert res_types == ["Resource" + t for t in ref_types]  # TF: ResourceApply<name>
    assert res_slots == ["ResourceVariable"] * len(ref_slots)  # TF: resource slots
    assert step == 3
    if not sparse_only and name in _TF_AFTER_3:
        np.testing.assert_allclose(res, _TF_AFTER_3[name], atol=2e-6)


def test_adam_beta_powers_are_resource_variables():
    with tf.Graph().as_default():
        w = tf.Variable([1.0], name="w", use_resource=True)
        tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
        # TF: beta1_power/beta2_power follow the first variable: ResourceVariable
        kinds = {v.op.name: type(v).__name__ for v in tf.global_variables()}
        assert kinds == {"w": "ResourceVariable", "beta1_power": "ResourceVariable",
                         "beta2_power": "ResourceVariable", "w/Adam": "ResourceVariable",
                         "w/Adam_1": "ResourceVariable"}


# -- moving averages and checkpoints ---------------------------------------------------------
def _ema_model(use_resource: bool):
    w = tf.get_variable("w", initializer=tf.constant([1.0, 2.0]), use_resource=use_resource)
    b = tf.get_variable("b", initializer=tf.constant(0.5), use_resource=use_resource)
    loss = tf.reduce_sum(tf.square(w * 3.0 + b))
    gs = tf.train.get_or_create_global_step()
    train = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=gs)
    ema = tf.train.ExponentialMovingAverage(0.9)
    with tf.control_dependencies([train]):
        train = ema.apply([w, b])
    return w, b, ema, train


def test_moving_average_and_saver_across_kinds(tmp_path):
    with tf.Graph().as_default():
        w, b, ema, train = _ema_model(True)
        avg = ema.average(w)
        # TF: the shadow variable is a ResourceVariable
        assert (type(avg).__name__, avg.name) == ("ResourceVariable",
                                                  "w/ExponentialMovingAverage:0")
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            wv, bv, av = sess.run([w, b, avg])
            path = saver.save(sess, os.path.join(tmp_path, "m"))
    # TF 2.15's values
    np.testing.assert_allclose(wv, [0.701936, 1.700814], atol=2e-6)
    np.testing.assert_allclose(bv, 0.201156, atol=2e-6)
    np.testing.assert_allclose(av, [0.944138, 1.944001], atol=2e-6)
    names = sorted(n for n, _ in tf.train.list_variables(path))
    assert names == ["b", "b/Adam", "b/Adam_1", "b/ExponentialMovingAverage", "beta1_power",
                     "beta2_power", "global_step", "w", "w/Adam", "w/Adam_1",
                     "w/ExponentialMovingAverage"]
    after = []
    for use_resource in (False, True):  # restore into either kind
        with tf.Graph().as_default():
            w, b, ema, train = _ema_model(use_resource)
            saver = tf.train.Saver()
            with tf.Session() as sess:
                saver.restore(sess, path)
                got = sess.run([w, b, ema.average(w)])
                assert [x.tobytes() for x in got] == [x.tobytes() for x in (wv, bv, av)]
                sess.run(train)
                after.append(sess.run(w))
    assert after[0].tobytes() == after[1].tobytes()
    np.testing.assert_allclose(after[1], [0.604852, 1.601975], atol=2e-6)  # TF


# -- Keras and v1 layers ----------------------------------------------------------------------
def test_keras_layers_make_resource_variables_v1_layers_reference_ones():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        d = tf.keras.layers.Dense(2, name="dense")
        d(x)
        # TF 2.15 compat.v1: Keras weights are ResourceVariables (float32, VarHandleOp)
        assert [(type(v).__name__, v.name, v.dtype.name, v.op.type) for v in d.weights] == [
            ("ResourceVariable", "dense/kernel:0", "float32", "VarHandleOp"),
            ("ResourceVariable", "dense/bias:0", "float32", "VarHandleOp")]
        tf.layers.dense(x, 2, name="v1dense")
        v1 = [v for v in tf.trainable_variables() if "v1dense" in v.name]
        # TF: tf.layers keeps reference variables (float32_ref, VariableV2) ...
        assert [(v.dtype.name, v.op.type) for v in v1] == [("float32_ref", "VariableV2")] * 2
        with tf.variable_scope("rs", use_resource=True):
            tf.layers.dense(x, 2)
        rs = [v for v in tf.trainable_variables() if v.name.startswith("rs")]
        # ... unless the scope asks for resource variables
        assert [(v.name, v.op.type) for v in rs] == [("rs/dense/kernel:0", "VarHandleOp"),
                                                     ("rs/dense/bias:0", "VarHandleOp")]
        kv = tf.keras.backend.variable(np.ones(2), name="kv")
        assert (type(kv).__name__, kv.op.type) == ("ResourceVariable", "VarHandleOp")  # TF


def test_keras_reads_weights_inside_the_op_scope():
    g = tf.Graph()
    with g.as_default():
        layer = tf.keras.layers.LayerNormalization(name="ln")
        layer(tf.constant(np.ones((2, 3), np.float32)))
        # TF: ln/mul/ReadVariableOp, ln/mul, ln/add/ReadVariableOp, ln/add
        tail = [(op.name, op.type) for op in g.get_operations()][-4:]
        assert tail == [("ln/mul/ReadVariableOp", "ReadVariableOp"), ("ln/mul", "Mul"),
                        ("ln/add/ReadVariableOp", "ReadVariableOp"), ("ln/add", "AddV2")]


# -- graph files ---------------------------------------------------------------------------------
def test_freezing_turns_handles_into_constants_as_tensorflow():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=tf.constant([[1.0, 2.0], [3.0, 4.0]]),
                            use_resource=True)
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        tf.identity(tf.matmul(x, v) + tf.reduce_sum(tf.gather(v, [1])), name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            gd = tf.graph_util.convert_variables_to_constants(
                sess, sess.graph.as_graph_def(), ["y"])
    # TF 2.15's frozen graph
    assert sorted((n.name, n.op) for n in gd.node) == [
        ("Const_1", "Const"), ("Gather", "GatherV2"), ("Gather/axis", "Const"),
        ("Gather/indices", "Const"), ("MatMul", "MatMul"),
        ("MatMul/ReadVariableOp", "Identity"), ("Sum", "Sum"), ("add", "AddV2"),
        ("v", "Const"), ("x", "Placeholder"), ("y", "Identity")]
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as sess:
            assert sess.run("y:0", {"x:0": [[1.0, 1.0]]}).tolist() == [[11.0, 13.0]]  # TF


def test_meta_graph_round_trip_keeps_resource_variables(tmp_path):
    path = str(tmp_path / "m.meta")
    with tf.Graph().as_default():
        with tf.variable_scope("m", use_resource=True):
            tf.get_variable("v", [2], initializer=tf.ones_initializer())
        tf.train.export_meta_graph(path)
    with tf.Graph().as_default():
        tf.train.import_meta_graph(path)
        (v,) = tf.global_variables()
        # TF: ('ResourceVariable', 'm/v:0', 'float32', 'VarHandleOp'), value [1. 1.]
        assert (type(v).__name__, v.name, v.dtype.name, v.op.type) == \
            ("ResourceVariable", "m/v:0", "float32", "VarHandleOp")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(v).tolist() == [1.0, 1.0]
            sess.run(v.assign_add([1.0, 2.0]))
            assert sess.run(v.value()).tolist() == [2.0, 3.0]


def test_ops_on_a_handle_are_placed_with_it():
    from flowgraph.backends import list_devices
    from flowgraph.runtime.placement import place

    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            v = tf.Variable([1.0], name="v", use_resource=True)
        read = v.value()
        placed = place(g.get_operations(), list_devices(), True)
        assert placed[read.op] is placed[v.op]


def test_replica_device_setter_puts_the_handle_on_a_ps_task():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
            a = tf.Variable(1.0, name="a", use_resource=True)
            b = tf.Variable(1.0, name="b", use_resource=True)
            c = a + b
    # TF: VarHandleOp is a ps op, round-robin over the tasks
    assert a.op.device == "/job:ps/task:0" and b.op.device == "/job:ps/task:1"
    assert c.op.device == "/job:worker"
    # TF: the initializer and the snapshot read carry the handle's device
    assert a.initializer.device == a._as_graph_element().device == "/job:ps/task:0"


def test_object_checkpoint_saves_and_restores_resource_variables(tmp_path):
    with tf.Graph().as_default():
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        ck = tf.train.Checkpoint(v=v)
        with tf.Session() as sess:
            sess.run(v.initializer)
            sess.run(v.assign([5.0, 6.0]))
            path = ck.save(os.path.join(tmp_path, "ck"), session=sess)
    # TF 2.15's keys
    assert sorted(n for n, _ in tf.train.list_variables(path)) == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
        "v/.ATTRIBUTES/VARIABLE_VALUE"]
    with tf.Graph().as_default():
        v = tf.Variable([0.0, 0.0], name="v", use_resource=True)
        with tf.Session() as sess:
            tf.train.Checkpoint(v=v).restore(path).run_restore_ops(sess)
            assert sess.run(v).tolist() == [5.0, 6.0]


def test_a_tf1_program_with_resource_variables_enabled():
    tf.enable_resource_variables()
    with tf.Graph().as_default():
        x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
        labels = tf.constant([0, 1, 1, 0])
        h = tf.layers.dense(x, 4, activation=tf.nn.relu,
                            kernel_initializer=tf.ones_initializer())
        h = tf.layers.batch_normalization(h, training=True)
        logits = tf.layers.dense(h, 2, kernel_initializer=tf.ones_initializer())
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        acc, acc_up = tf.metrics.accuracy(labels, tf.argmax(logits, 1))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
                loss, global_step=tf.train.get_or_create_global_step())
        kinds = {type(v).__name__ for v in tf.global_variables() + tf.local_variables()}
        assert kinds == {"ResourceVariable"}  # TF: every variable, metrics' included
        part = tf.get_variable("p", [6, 2], partitioner=tf.fixed_size_partitioner(2),
                               initializer=tf.ones_initializer())
        assert [type(v).__name__ for v in part] == ["ResourceVariable"] * 2
        rows = tf.reduce_sum(tf.nn.embedding_lookup(part, [0, 5]))
        mm = next(v for v in tf.global_variables() if "moving_mean" in v.name)
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            for _ in range(3):
                _, lv, a = sess.run([train, loss, acc_up])
            # TF 2.15: 0.69315 0.5 0.5, moving mean 0.04901 (x4), lookup 4.0
            assert round(float(lv), 5) == 0.69315 and a == 0.5 and sess.run(acc) == 0.5
            np.testing.assert_allclose(sess.run(mm), [0.04901] * 4, atol=5e-6)
            assert sess.run(rows) == 4.0


def test_a_read_keeps_its_value_across_an_in_place_update():
    """TF 2.15: a resource variable's read is a snapshot ([1. 2.]) where a reference
    variable's read_value sees the optimizer's in-place update ([0. 1.])."""
    got = []
    for use_resource in (False, True):
        with tf.Graph().as_default():
            v = tf.Variable([1.0, 2.0], name="v", use_resource=use_resource)
            r = v.read_value()
            with tf.control_dependencies([r]):
                train = tf.train.GradientDescentOptimizer(1.0).apply_gradients(
                    [(tf.constant([1.0, 1.0]), v)])
            with tf.Session() as sess:
                sess.run(v.initializer)
                got.append((sess.run([r, train])[0].tolist(), sess.run(v).tolist()))
    assert got == [([0.0, 1.0], [0.0, 1.0]), ([1.0, 2.0], [0.0, 1.0])]


def test_graph_def_round_trip_keeps_resource_ops(tmp_path):
    with tf.Graph().as_default() as g:
        v = tf.Variable([1.0, 2.0], name="v", use_resource=True)
        tf.identity(v * 3.0, name="y")
        gd = g.as_graph_def()
        tf.train.write_graph(g, str(tmp_path), "g.pb", as_text=False)
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(gd, name="imp")
        assert g2.get_operation_by_name("imp/v").type == "VarHandleOp"
        with tf.Session() as sess:
            sess.run("imp/v/Assign")
            assert sess.run("imp/y:0").tolist() == [3.0, 6.0]  # TF
    msg = tf.GraphDef()
    msg.ParseFromString(open(tmp_path / "g.pb", "rb").read())
    # TF 2.15 writes these nodes for the same program
    assert sorted((n.name, n.op) for n in msg.node) == [
        ("ReadVariableOp", "ReadVariableOp"), ("mul", "Mul"), ("mul/y", "Const"),
        ("v", "VarHandleOp"), ("v/Assign", "AssignVariableOp"),
        ("v/Initializer/initial_value", "Const"),
        ("v/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp"),
        ("v/Read/ReadVariableOp", "ReadVariableOp"), ("y", "Identity")]
    with tf.Graph().as_default() as g3:
        tf.import_graph_def(msg, name="")
        assert g3.get_operation_by_name("v").outputs[0].dtype == tf.resource
        with tf.Session() as sess:
            sess.run("v/Assign")
            assert sess.run("y:0").tolist() == [3.0, 6.0]


def test_gradients_match_finite_differences():
    rng = np.random.RandomState(3)
    w0 = rng.uniform(-1, 1, size=(4, 3))
    xv = rng.uniform(-1, 1, size=(2, 4))
    with tf.Graph().as_default():
        w = tf.Variable(w0, name="w", use_resource=True)
        x = tf.constant(xv)
        loss = tf.reduce_sum(tf.tanh(tf.matmul(x, w))) + \
            tf.reduce_sum(tf.square(tf.gather(w, [0, 2, 0])))
        (g,) = tf.gradients(loss, w)
        with tf.Session() as sess:
            sess.run(w.initializer)
            analytic = sess.run(tf.convert_to_tensor(g))
            numeric = np.zeros_like(w0)
            eps = 1e-6
            for idx in np.ndindex(*w0.shape):
                for sign in (1, -1):
                    moved = w0.copy()
                    moved[idx] += sign * eps
                    w.load(moved, sess)
                    numeric[idx] += sign * sess.run(loss) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_saved_meta_graph_has_tensorflows_saver_nodes(tmp_path):
    from flowgraph.framework.tf_formats.meta_graph import read_meta_graph_file

    with tf.Graph().as_default():
        tf.Variable(1.5, name="a", use_resource=True)
        tf.Variable([1.0, 2.0], name="b")
        tf.Variable([3.0], name="c", use_resource=True)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, os.path.join(tmp_path, "m"))
    mg = read_meta_graph_file(path + ".meta")
    nodes = [(n.name, n.op, list(n.input)) for n in mg.graph_def.node
             if n.name.startswith("save/") and n.op != "Const"]
    # TF 2.15's Saver for the same variables (and TF imports and restores this file)
    assert nodes == [
        ("save/filename", "PlaceholderWithDefault", ["save/filename/input"]),
        ("save/Const", "PlaceholderWithDefault", ["save/filename"]),
        ("save/SaveV2", "SaveV2", ["save/Const", "save/SaveV2/tensor_names",
                                   "save/SaveV2/shape_and_slices", "a/Read/ReadVariableOp",
                                   "b", "c/Read/ReadVariableOp"]),
        ("save/control_dependency", "Identity", ["save/Const", "^save/SaveV2"]),
        ("save/RestoreV2", "RestoreV2", ["save/Const", "save/RestoreV2/tensor_names",
                                         "save/RestoreV2/shape_and_slices"]),
        ("save/Identity", "Identity", ["save/RestoreV2"]),
        ("save/AssignVariableOp", "AssignVariableOp", ["a", "save/Identity"]),
        ("save/Assign", "Assign", ["b", "save/RestoreV2:1"]),
        ("save/Identity_1", "Identity", ["save/RestoreV2:2"]),
        ("save/AssignVariableOp_1", "AssignVariableOp", ["c", "save/Identity_1"]),
        ("save/restore_all", "NoOp", ["^save/Assign", "^save/AssignVariableOp",
                                      "^save/AssignVariableOp_1"])]
    with tf.Graph().as_default():
        restorer = tf.train.import_meta_graph(path + ".meta")
        with tf.Session() as sess:
            restorer.restore(sess, path)
            assert [np.asarray(v).tolist() for v in sess.run(tf.global_variables())] == \
                [1.5, [1.0, 2.0], [3.0]]


def test_count_up_to_a_resource_variable():
    with tf.Graph().as_default():
        v = tf.Variable(0, name="c", use_resource=True)
        step = tf.count_up_to(v, 2)
        assert (step.op.type, step.dtype) == ("ResourceCountUpTo", tf.int32)  # TF
        assert v.count_up_to(2).op.type == "ResourceCountUpTo"
        with tf.Session() as sess:
            sess.run(v.initializer)
            assert [sess.run(step), sess.run(step)] == [0, 1]
            with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 2"):
                sess.run(step)


def test_a_resource_variable_made_inside_a_cond_is_lifted_out_of_it():
    """As a reference variable: its handle, initializer and reads run outside the cond, so
    the global initializer works whichever branch a run takes."""
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [])

        def branch():
            v = tf.get_variable("v", [2], initializer=tf.ones_initializer(),
                                use_resource=True)
            return v.read_value() * 2.0

        out = tf.cond(p, branch, lambda: tf.zeros([2]))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run(out, {p: True}).tolist() == [2.0, 2.0]
            assert sess.run(out, {p: False}).tolist() == [0.0, 0.0]


def test_saved_resource_variables_load_and_train_in_a_fresh_process(tmp_path):
    """As users do: save a checkpoint and its .meta here, then import, restore and train
    in a new interpreter (the variables come back as resource variables)."""
    import subprocess
    import sys
    import textwrap

    prefix = str(tmp_path / "model")
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2], name="x")
        w = tf.get_variable("w", [2, 1], initializer=tf.ones_initializer(),
                            use_resource=True)
        loss = tf.reduce_sum(tf.square(tf.matmul(x, w)), name="loss")
        train = tf.train.AdamOptimizer(0.1).minimize(loss, name="train")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train, {x: [[1.0, 2.0]]})
            expected = sess.run(w)
            tf.train.Saver().save(sess, prefix)
    script = textwrap.dedent(f"""
        import numpy as np
        import flowgraph as tf
        saver = tf.train.import_meta_graph({prefix + ".meta"!r})
        (w,) = [v for v in tf.global_variables() if v.op.name == "w"]
        assert type(w).__name__ == "ResourceVariable" and w.op.type == "VarHandleOp", w
        g = tf.get_default_graph()
        with tf.Session() as sess:
            saver.restore(sess, {prefix!r})
            np.testing.assert_array_equal(sess.run(w), np.array({expected.tolist()!r},
                                                                np.float32))
            before = sess.run("loss:0", {{"x:0": [[1.0, 2.0]]}})
            sess.run(g.get_operation_by_name("train"), {{"x:0": [[1.0, 2.0]]}})
            assert sess.run("loss:0", {{"x:0": [[1.0, 2.0]]}}) < before
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
